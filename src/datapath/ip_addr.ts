/**
 * Parsers of the node's addresses: `ip -o addr show` (one line per address) and `ip route show table local` (the
 * local routing table). Together they decide what the kernel calls a LOCAL address (`-m addrtype --dst-type LOCAL`,
 * nftables `fib daddr type local`): inet_addr_type() looks the address up in the local table, which holds a `local`
 * route for every address on every interface, and for prefixes routed locally (AnyIP).
 * Formats: iproute2's ip/ipaddress.c (`-o`: `IFINDEX: IFNAME    inet ADDR/LEN [brd B] scope S [flags] IFNAME\ …`) and
 * ip/iproute.c (`TYPE DST[/LEN] dev DEV proto P scope S src SRC`).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { cidrContains, isIPAddress, isIPv6 } from "../model/ip.ts";
import { DumpParseError } from "./errors.ts";

/** One address of an interface. */
export interface InterfaceAddress {
  ifindex: number;
  /** Interface name, e.g. `eth0`, `cni0`, `kube-ipvs0`, `veth1234@if3` shown as `veth1234`. */
  ifname: string;
  family: 4 | 6;
  address: string;
  /** Prefix length in bits. */
  prefixLength: number;
  scope?: string;
}

/** One route of the local table. */
export interface LocalRoute {
  /** `local`, `broadcast`, `anycast`, `multicast`. */
  type: string;
  /** Destination, an address or a CIDR. */
  destination: string;
  device?: string;
}

/**
 * Parses `ip -o addr show` (IPv4 and IPv6 lines; `link/` lines of `ip -o link` are skipped).
 * @param text the command's output.
 * @returns the addresses, in order.
 * @throws {DumpParseError} `ip-addr line 3: …` for an `inet`/`inet6` line without an address, or a line that is not
 *   `IFINDEX: IFNAME …`.
 */
export function parseIpAddr(text: string): InterfaceAddress[] {
  const out: InterfaceAddress[] = [];
  text.split("\n").forEach((line, i) => {
    const m = /^(\d+):\s+(\S+?)(?:@\S+)?\s+(inet6?)\s+(\S+)/.exec(line);
    if (!m) {
      if (/^\d+:\s+\S+\s+inet6?\b/.test(line)) throw new DumpParseError("ip-addr", i + 1, 'no address after "inet"', line);
      // `ip -o` prints `IFINDEX: IFNAME …` on every line (link/ lines of `ip -o link` included): anything else is not
      // this command's output, and reading past it would answer from fewer addresses than the node has
      if (line.trim() !== "" && !/^\d+:\s+\S/.test(line)) throw new DumpParseError("ip-addr", i + 1, 'not a line of "ip -o addr show" (IFINDEX: IFNAME …)', line);
      return;
    }
    const [address, len] = m[4]!.split("/");
    const family = m[3] === "inet6" ? 6 : 4;
    if (!address || !isIPAddress(address) || isIPv6(address) !== (family === 6)) {
      throw new DumpParseError("ip-addr", i + 1, `"${m[4]}" is not an IPv${family} address`, line);
    }
    const a: InterfaceAddress = { ifindex: Number(m[1]), ifname: m[2]!, family, address, prefixLength: Number(len ?? (family === 6 ? 128 : 32)) };
    const scope = / scope (\S+)/.exec(line)?.[1];
    if (scope) a.scope = scope;
    out.push(a);
  });
  return out;
}

/**
 * Parses `ip route show table local` (or `ip -6 route show table local`).
 * @param text the command's output.
 * @returns the routes.
 */
export function parseLocalRoutes(text: string): LocalRoute[] {
  const out: LocalRoute[] = [];
  for (const line of text.split("\n")) {
    const m = /^(local|broadcast|anycast|multicast)\s+(\S+)(?:.*?\sdev\s+(\S+))?/.exec(line.trim());
    if (!m) continue;
    const r: LocalRoute = { type: m[1]!, destination: m[2]! };
    if (m[3]) r.device = m[3];
    out.push(r);
  }
  return out;
}

/** What the node's addresses say: whether an address is LOCAL, and which interface holds it. */
export interface NodeAddresses {
  /** Whether `ip` is a local address of the node (as `--dst-type LOCAL` decides). */
  isLocal(ip: string): boolean;
  /** The interface an address is on, when it is one of the node's. */
  interfaceOf(ip: string): string | undefined;
  addresses: InterfaceAddress[];
  localRoutes: LocalRoute[];
}

/**
 * Combines the two sections.
 * @param addrText `ip -o addr show` output.
 * @param localRoutesText `ip route show table local` output, when collected.
 * @returns the node's addresses.
 * @throws {DumpParseError} as {@link parseIpAddr}.
 */
export function nodeAddresses(addrText: string, localRoutesText?: string): NodeAddresses {
  const addresses = parseIpAddr(addrText);
  const localRoutes = localRoutesText ? parseLocalRoutes(localRoutesText).filter((r) => r.type === "local") : [];
  const exact = new Set(addresses.map((a) => a.address));
  const prefixes = localRoutes.map((r) => r.destination).filter((d) => d.includes("/"));
  for (const r of localRoutes) if (!r.destination.includes("/")) exact.add(r.destination);
  return {
    addresses,
    localRoutes,
    isLocal: (ip) => exact.has(ip) || prefixes.some((p) => cidrContains(p, ip)),
    interfaceOf: (ip) => addresses.find((a) => a.address === ip)?.ifname,
  };
}
