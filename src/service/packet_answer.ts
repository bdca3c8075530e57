/**
 * The answer to one packet question (`--source IP --dest IP:PORT[/proto]`) on one node.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { isIPv6 } from "../model/ip.ts";
import type { PacketQuestion } from "../model/question.ts";
import { verdictFromTrace } from "./client_verdict.ts";
import type { Sources } from "./clients.ts";
import { formatDestination, tracePacket } from "./entry_points.ts";
import type { ResolvedService } from "./resolve.ts";
import type { PacketAnswer, PacketPath } from "./report.ts";
import type { TracePacket, TraceResult } from "./trace.ts";

/**
 * Answers one packet question on a node: traces it (OUTPUT when the source is the node's address, else PREROUTING)
 * and says whether the destination belongs to the Service.
 */
export function answerPacket(
  q: PacketQuestion,
  tracer: (packet: TracePacket, hook: "PREROUTING" | "OUTPUT") => TraceResult,
  node: string,
  s: Sources,
  svc: ResolvedService["summary"],
  isLocal?: (ip: string) => boolean,
  sourcePod?: { name: string; node: string },
  ifaces?: { pod: string; uplink: string },
): PacketAnswer {
  const srcLocal = isLocal ? isLocal(q.source) : q.source === s.nodeIP;
  const dstLocal = isLocal ? isLocal(q.destination) : q.destination === s.nodeIP;
  const pkt = tracePacket(q.source, q.destination, q.port, q.protocol, isIPv6(q.destination) ? 6 : 4, srcLocal, dstLocal);
  // Only the node's InternalIP is known to be local; any other address outside the Service's ClusterIPs may be bound.
  if (!isLocal && !dstLocal && !svc.clusterIPs.includes(q.destination)) pkt.dstLocalAssumed = true;
  // Interface-based local-traffic detection: a pod of this node arrives on the pod interface, a local process on none.
  if (ifaces) pkt.inInterface = srcLocal ? "" : sourcePod?.node === node ? ifaces.pod : ifaces.uplink;
  const trace = tracer(pkt, srcLocal ? "OUTPUT" : "PREROUTING");
  const v = verdictFromTrace("custom", `${q.source} → ${q.destination}:${q.port}/${q.protocol}`, q.source, trace);
  const a: PacketAnswer = {
    node,
    source: q.source,
    destination: formatDestination(q.destination, q.port, q.protocol),
    outcome: v.outcome,
    endpoints: v.endpoints,
    masquerade: v.masquerade,
    reason: v.reason,
    evidence: v.evidence,
    caveats: v.caveats,
  };
  // outcomes that end alike by the same rules are one path (IPVS branches per real server that a filter rule ended
  // before the translation mattered: one "rejected", not one per real server)
  const byWay = new Map<string, PacketPath>();
  for (const o of trace.outcomes) {
    const ended = o.verdict === "drop" || o.verdict === "reject";
    const key = JSON.stringify([o.verdict, ended ? undefined : o.dnatTo, o.masqueraded, o.missingChain, o.path.map((r) => [r.table, r.chain, r.line, r.handle])]);
    const same = byWay.get(key);
    if (same) {
      same.probability += o.probability;
      if (same.dnatTo !== o.dnatTo) delete same.dnatTo;
      continue;
    }
    const path: PacketPath = { probability: o.probability, verdict: o.verdict, rules: o.path };
    if (o.dnatTo !== undefined) path.dnatTo = o.dnatTo;
    if (o.masqueraded !== undefined) path.masqueraded = o.masqueraded;
    if (o.missingChain !== undefined) path.missingChain = o.missingChain;
    byWay.set(key, path);
  }
  a.paths = [...byWay.values()].sort((x, y) => y.probability - x.probability);
  if (trace.sharesFixed === false) a.sharesFixed = false;
  if (v.dropped) a.dropped = v.dropped;
  if (v.rejected) a.rejected = v.rejected;
  if (v.notHandled) a.notHandled = v.notHandled;
  if (v.outcome === "not-handled" && dstLocal) {
    a.caveats.push(`${q.destination} is an address of this node${isLocal ? "" : " (assumed)"}: no kube-proxy rule stops the packet, so it is delivered to the node itself — whatever listens on port ${q.port}/${q.protocol} there answers`);
  }
  if (srcLocal) a.caveats.push(`${q.source} is ${isLocal ? "a local address of the node" : "this node's address"}: traced as a host-network client (nat OUTPUT)`);
  if (sourcePod && sourcePod.node !== node) {
    a.caveats.push(
      `${q.source} is pod ${sourcePod.name} on node ${sourcePod.node}: its packets are first handled by ${sourcePod.node}'s rules, not ${node}'s; this answer is for the packet as if it entered ${node} (use --from-pod ${sourcePod.name}, or --node ${sourcePod.node}, to trace it where it starts)`,
    );
  }
  if (!svc.clusterIPs.includes(q.destination) && !dstLocal && !svc.externalIPs.includes(q.destination) && !svc.loadBalancerIngress.includes(q.destination)) {
    a.caveats.push(`${q.destination} is not an address of Service ${svc.namespace}/${svc.name}`);
  }
  return a;
}
