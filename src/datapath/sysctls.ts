/**
 * Parser of the `sysctls` section the collection script prints: `NAME=VALUE` lines, sysctl names in dotted form
 * (`net.bridge.bridge-nf-call-iptables=1`) and bridge ports as `brport.BRIDGE.PORT.hairpin_mode=0|1` (from
 * /sys/class/net/PORT/brport/hairpin_mode, PORT's master being BRIDGE).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { DumpParseError } from "./errors.ts";

/** A bridge port and its hairpin mode. */
export interface BridgePort {
  bridge: string;
  port: string;
  hairpin: boolean;
}

/** The node's settings that change verdicts. */
export interface NodeSysctls {
  /** Every `NAME=VALUE`. */
  values: Map<string, string>;
  /** Bridge ports with their hairpin mode. */
  bridgePorts: BridgePort[];
}

/**
 * Parses the section.
 * @param text `NAME=VALUE` lines (blank lines ignored).
 * @returns the values and the bridge ports.
 * @throws {DumpParseError} `sysctls line N: want NAME=VALUE` for any other line.
 */
export function parseSysctls(text: string): NodeSysctls {
  const values = new Map<string, string>();
  const bridgePorts: BridgePort[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "") return;
    const eq = line.indexOf("=");
    if (eq <= 0) throw new DumpParseError("sysctls", i + 1, "want NAME=VALUE", raw);
    const name = line.slice(0, eq);
    const value = line.slice(eq + 1);
    values.set(name, value);
    const m = /^brport\.([^.]+)\.(.+)\.hairpin_mode$/.exec(name);
    if (m) bridgePorts.push({ bridge: m[1]!, port: m[2]!, hairpin: value === "1" });
  });
  return { values, bridgePorts };
}
