/**
 * Facts of a node that change verdicts and are not rules: its local addresses (the `ip-addr` and `ip-route-local`
 * sections), which decide `--dst-type LOCAL` and so whether a packet is delivered (INPUT) or forwarded (FORWARD); and
 * its sysctls (bridge-nf-call-iptables, each bridge port's hairpin_mode), which decide whether bridged replies are
 * un-NATed and whether a pod reaches itself through its Service.
 * Without them, only the Node object's InternalIP is known to be local, and verdicts that depend on it say so.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { cutReason, type NodeCapture } from "../bundle/bundle.ts";
import { DumpParseError } from "../datapath/errors.ts";
import { nodeAddresses, type NodeAddresses } from "../datapath/ip_addr.ts";
import { type NodeSysctls, parseSysctls } from "../datapath/sysctls.ts";

/** The node's addresses when the capture has them, and why not otherwise. */
export interface NodeFacts {
  addresses?: NodeAddresses;
  /** The settings of the `sysctls` section (bridge-nf-call-iptables, hairpin_mode per bridge port, …). */
  sysctls?: NodeSysctls;
  /** A section that was there but could not be read. */
  problems: string[];
}

/**
 * Reads the node's facts from its capture.
 * @param node the capture.
 * @returns the facts; never throws for bad input (a parse error becomes a problem).
 */
export function readNodeFacts(node: NodeCapture): NodeFacts {
  const out: NodeFacts = { problems: [] };
  const sys = node.sections.sysctls;
  if (sys && !sys.truncated && (sys.exitCode ?? 0) === 0) {
    try {
      out.sysctls = parseSysctls(sys.stdout);
    } catch (e) {
      if (e instanceof DumpParseError) out.problems.push(e.message);
      else throw e;
    }
  } else if (sys) {
    out.problems.push(`the sysctls section ${sys.truncated ? cutReason(sys) : `failed (exit ${sys.exitCode})`}: bridge-nf-call-iptables and hairpin mode are unknown`);
  }
  const addr = node.sections["ip-addr"];
  if (!addr || addr.truncated || ((addr.exitCode ?? 0) !== 0)) {
    if (addr) out.problems.push(`ip -o addr ${addr.truncated ? cutReason(addr) : `failed (exit ${addr.exitCode})`}: the node's local addresses are unknown`);
    return out;
  }
  const routes = node.sections["ip-route-local"];
  try {
    out.addresses = nodeAddresses(addr.stdout, routes && !routes.truncated && (routes.exitCode ?? 0) === 0 ? routes.stdout : undefined);
  } catch (e) {
    if (e instanceof DumpParseError) out.problems.push(e.message);
    else throw e;
  }
  return out;
}
