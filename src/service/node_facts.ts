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
import type { Node } from "../model/k8s.ts";

/** The node's addresses when the capture has them, and why not otherwise. */
export interface NodeFacts {
  addresses?: NodeAddresses;
  /** The settings of the `sysctls` section (bridge-nf-call-iptables, hairpin_mode per bridge port, …). */
  sysctls?: NodeSysctls;
  /** A section that was there but could not be read. */
  problems: string[];
  /**
   * True when `addresses` holds only the local routes of /proc/net/fib_trie and /proc/net/ipv6_route (an image without
   * `ip`): which addresses are local is known, not which interface holds them.
   */
  noInterfaces?: true;
}

/**
 * The pod CIDRs the node controller gave a node: `spec.podCIDRs` (one per IP family; its first is `spec.podCIDR`),
 * else `spec.podCIDR` of a cluster written before dual-stack, else none.
 * @param node a Node object (undefined: none).
 * @returns CIDR strings as the object holds them, e.g. `["10.244.1.0/24", "fd00:10:244:1::/64"]`.
 */
export function nodePodCIDRs(node: Node | undefined): string[] {
  return node?.spec?.podCIDRs ?? (node?.spec?.podCIDR ? [node.spec.podCIDR] : []);
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
  const routes = node.sections["ip-route-local"];
  const routesOk = routes !== undefined && !routes.truncated && (routes.exitCode ?? 0) === 0;
  if (!addr || addr.truncated || ((addr.exitCode ?? 0) !== 0)) {
    // An image without `ip` (kube-proxy's) still gives the local routes, read from /proc/net/fib_trie and
    // /proc/net/ipv6_route: they decide `--dst-type LOCAL`; the interface of each address stays unknown.
    if (addr && routesOk && addr.exitCode === 127) {
      out.problems.push(`ip is not in the collecting image: the local addresses come from /proc/net/fib_trie and /proc/net/ipv6_route; the interface of each address is unknown`);
      out.noInterfaces = true;
    } else if (addr) {
      out.problems.push(`ip -o addr ${addr.truncated ? cutReason(addr) : `failed (exit ${addr.exitCode})`}: the node's local addresses are unknown`);
      return out;
    } else return out;
  }
  try {
    out.addresses = nodeAddresses(addr && (addr.exitCode ?? 0) === 0 && !addr.truncated ? addr.stdout : "", routesOk ? routes.stdout : undefined);
  } catch (e) {
    if (e instanceof DumpParseError) out.problems.push(e.message);
    else throw e;
  }
  return out;
}
