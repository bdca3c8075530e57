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

/** The entry points of a ServicePort on a node: each ClusterIP, the NodePort on the node's address, each LoadBalancer ingress IP, each externalIP. */
export function entryPoints(svc: ResolvedService["summary"], sp: ServicePortSummary, family: 4 | 6, nodeIP: string): { kind: EntryPointReport["kind"]; ip: string; port: number; dstLocal: boolean }[] {
  const out: { kind: EntryPointReport["kind"]; ip: string; port: number; dstLocal: boolean }[] = [];
  const fam = (ip: string) => isIPv6(ip) === (family === 6);
  for (const ip of svc.clusterIPs.filter(fam)) out.push({ kind: "ClusterIP", ip, port: sp.port, dstLocal: false });
  if (sp.nodePort && (svc.type === "NodePort" || svc.type === "LoadBalancer")) {
    out.push({ kind: "NodePort", ip: nodeIP, port: sp.nodePort, dstLocal: true });
  }
  if (svc.type === "LoadBalancer") {
    for (const ip of svc.loadBalancerIngress.filter(fam)) out.push({ kind: "LoadBalancer", ip, port: sp.port, dstLocal: false });
  }
  for (const ip of svc.externalIPs.filter(fam)) out.push({ kind: "ExternalIP", ip, port: sp.port, dstLocal: ip === nodeIP });
  return out;
}

/** `IP:PORT/proto`, IPv6 in brackets. */
export function formatDestination(ip: string, port: number, proto: string): string {
  return `${isIPv6(ip) ? `[${ip}]` : ip}:${port}/${proto.toLowerCase()}`;
}
