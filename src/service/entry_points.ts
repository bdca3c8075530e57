/**
 * Where a Service is entered on a node (ClusterIP, NodePort, LoadBalancer IP, externalIP) and the packet each
 * entry point is traced with.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { isIPv6 } from "../model/ip.ts";
import type { ResolvedService } from "./resolve.ts";
import type { EntryPointReport, ServicePortSummary } from "./report.ts";
import type { TracePacket } from "./trace.ts";

/** The first packet of a new connection, as the tracers take it. */
export function tracePacket(src: string, dst: string, port: number, proto: "tcp" | "udp" | "sctp", family: 4 | 6, srcLocal: boolean, dstLocal: boolean): TracePacket {
  return { family, src, dst, proto, dport: port, srcLocal, dstLocal, mark: 0, ctstate: new Set(["NEW"]) };
}

/** A ServicePort protocol in the tracers' lower case. */
export function lowerProtocol(p: string): "tcp" | "udp" | "sctp" {
  return p.toLowerCase() as "tcp" | "udp" | "sctp";
}

/** One entry point: its kind, address and port, and whether that address is local to the node (and if that is known). */
export interface EntryPoint {
  kind: EntryPointReport["kind"];
  ip: string;
  port: number;
  dstLocal: boolean;
  /** `dstLocal` was assumed, the node's addresses not being known. */
  dstLocalAssumed?: boolean;
}

/**
 * The entry points of a ServicePort on a node (with `isLocal`, the node's collected addresses decide which are local;
 * without, LoadBalancer IPs and externalIPs other than the node's are assumed not to be): each ClusterIP, the NodePort on the node's address, each LoadBalancer ingress IP, each externalIP. */
export function entryPoints(
  svc: ResolvedService["summary"],
  sp: ServicePortSummary,
  family: 4 | 6,
  nodeIP: string,
  isLocal?: (ip: string) => boolean,
): EntryPoint[] {
  const out: EntryPoint[] = [];
  if (isLocal) {
    // The node's addresses were collected: locality is a fact for every entry point.
    return entryPoints(svc, sp, family, nodeIP).map(({ dstLocalAssumed: _a, ...e }) => ({ ...e, dstLocal: e.kind === "NodePort" || isLocal(e.ip) }));
  }
  const fam = (ip: string) => isIPv6(ip) === (family === 6);
  for (const ip of svc.clusterIPs.filter(fam)) out.push({ kind: "ClusterIP", ip, port: sp.port, dstLocal: false });
  if (sp.nodePort && (svc.type === "NodePort" || svc.type === "LoadBalancer")) {
    out.push({ kind: "NodePort", ip: nodeIP, port: sp.nodePort, dstLocal: true });
  }
  // Whether a LoadBalancer ingress IP or an externalIP is bound on the node is not in the API (cloud agents add LB
  // IPs to the local routing table on some providers): without the node's addresses it is assumed not to be.
  if (svc.type === "LoadBalancer") {
    for (const ip of svc.loadBalancerIngress.filter(fam)) out.push({ kind: "LoadBalancer", ip, port: sp.port, dstLocal: false, dstLocalAssumed: true });
  }
  for (const ip of svc.externalIPs.filter(fam)) out.push({ kind: "ExternalIP", ip, port: sp.port, dstLocal: ip === nodeIP, dstLocalAssumed: ip !== nodeIP });
  return out;
}

/** `IP:PORT/proto`, IPv6 in brackets. */
export function formatDestination(ip: string, port: number, proto: string): string {
  return `${isIPv6(ip) ? `[${ip}]` : ip}:${port}/${proto.toLowerCase()}`;
}
