/**
 * The answer to one packet question (`--source IP --dest IP:PORT[/proto]`) on one node.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { InterfaceAddress, NodeAddresses } from "../datapath/ip_addr.ts";
import type { NodeSysctls } from "../datapath/sysctls.ts";
import { canonicalAddress, cidrContains, isIPv6 } from "../model/ip.ts";
import { checkBridge } from "./bridge_checks.ts";
import { checkIpvsConntrack } from "./ipvs/conntrack_sysctl.ts";
import type { PacketQuestion } from "../model/question.ts";
import { masqueradeNotKnown, sayNoLocalDetector, verdictFromTrace } from "./client_verdict.ts";
import type { NoDetectorCause } from "./local_detector.ts";
import type { Sources } from "./clients.ts";
import { formatDestination, tracePacket } from "./entry_points.ts";
import { checkReplyPath } from "./reply_path.ts";
import type { ResolvedService } from "./resolve.ts";
import type { ClientVerdict, EndpointInfo, PacketAnswer, PacketPath } from "./report.ts";
import { checkRouteLocalnet } from "./route_localnet.ts";
import type { TracePacket, TraceResult } from "./trace.ts";

/** What the node's captured facts add to a packet's answer (each optional: a check without its facts says so or is skipped). */
export interface PacketFacts {
  /** The Service's endpoints with their nodes, for the reply-path and bridge checks. */
  endpoints?: EndpointInfo[];
  /** The node's sysctls (bridge-nf-call-iptables, hairpin_mode, route_localnet); undefined when not collected. */
  sysctls?: NodeSysctls;
  /**
   * The interface holding this node's pods' gateway (local_detector.ts podGatewayInterface), which tells whether the
   * pods sit on a bridge (bridge_checks.ts podBridge); `null` when the node's addresses show none, undefined when they
   * were not collected.
   */
  podGateway?: InterfaceAddress | null;
  /** The node runs kube-proxy's IPVS mode: its net.ipv4.vs.conntrack decides the masquerade (ipvs/conntrack_sysctl.ts). */
  ipvs?: boolean;
  /**
   * The node's rules have no local-traffic detector (cluster_cidr.ts iptablesWithoutLocalDetector, nftables/datapath.ts
   * noLocalDetector), in this proxy mode, and why (local_detector.ts noDetectorCause): an unmasqueraded packet to a
   * ClusterIP is answered so (client_verdict.ts sayNoLocalDetector).
   */
  noLocalDetector?: { mode: "iptables" | "ipvs" | "nftables"; cause: NoDetectorCause };
  /** Each node's pod CIDRs (Node spec.podCIDRs): a source in this node's is a pod of this node; in another's, a pod there. */
  podCIDRs?: { node: string; cidrs: string[] }[];
  /** This node's addresses in its Node object (`status.addresses`): local, when the node's own list was not collected. */
  nodeAddresses?: string[];
  /** The other nodes' addresses in their Node objects: a source there is a host process (or hostNetwork pod) of that node. */
  otherNodeAddresses?: { node: string; address: string }[];
  /**
   * The node's local addresses as collected (`ip -o addr`, `ip route show table local`); undefined when not collected.
   * An address on an interface other than kube-ipvs0 (where IPVS mode binds Service addresses) is the node's own.
   */
  localAddresses?: NodeAddresses;
  /**
   * Where the source's `Sources.clusterCIDRs` were learnt (cluster_cidr.ts detectClusterCIDRs: "the rules
   * (local-traffic detector)", the capture info, kube-proxy's configuration, or "the nodes' podCIDRs"). Learnt from
   * anything but the Nodes' podCIDRs (which CNIs with their own IPAM, e.g. Calico, assign pod IPs outside of), they hold
   * every pod of this node: a source outside them that is not a local address is not on this node.
   */
  clusterCIDRSource?: string;
}

/**
 * The node whose Node object lists `address` among its `status.addresses` (InternalIP, ExternalIP, Hostname…), for a
 * packet addressed to another node: kube-proxy takes a NodePort only for packets addressed to the node itself
 * (pkg/proxy/iptables/proxier.go syncProxyRules, "kubernetes service nodeports": `-m addrtype --dst-type LOCAL`;
 * nftables: `fib daddr type local`, pkg/proxy/nftables/proxier.go), so such a packet leaves the source's node as it was
 * and is handled by that node's rules.
 * @param nodes the Node objects (a bundle's `objects.nodes`).
 * @param address an IP address (IPv6 compared in canonical text, RFC 5952).
 * @returns the first such node's name, or undefined when no Node lists it.
 */
export function nodeOfAddress(nodes: readonly { metadata: { name: string }; status?: { addresses?: { address: string }[] } }[], address: string): string | undefined {
  const wanted = canonicalAddress(address);
  return nodes.find((n) => (n.status?.addresses ?? []).some((a) => canonicalAddress(a.address) === wanted))?.metadata.name;
}

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
  sourcePod?: { name: string; node: string; ref?: string },
  ifaces?: { pod: string; uplink: string },
  facts: PacketFacts = {},
): PacketAnswer {
  // Without the node's addresses: its InternalIP, the other addresses its Node object lists, and loopback (always
  // local: 127.0.0.0/8 and ::1) are known local; any other address cannot be placed
  const knownLocal = (ip: string) =>
    ip === s.nodeIP || (facts.nodeAddresses ?? []).includes(ip) || ip === "::1" || (!isIPv6(ip) && cidrContains("127.0.0.0/8", ip));
  const srcLocal = isLocal ? isLocal(q.source) : knownLocal(q.source);
  // a source in this node's pod CIDR that is no Pod of the bundle (a live run keeps only the endpoints' pods) is a pod
  // of this node all the same: it arrives on the pod interface, and its replies stay on the node
  // (an endpoint of the Service whose EndpointSlice names its node is on that node, Pod object or not)
  const podNode = sourcePod?.node ??
    (facts.endpoints ?? []).find((e) => e.address === q.source && e.node !== undefined && !e.nodeFromPod)?.node ??
    (facts.podCIDRs ?? []).find((n) => n.cidrs.some((c) => isIPv6(c) === isIPv6(q.source) && cidrContains(c, q.source)))?.node;
  const podHere = podNode === node;
  const dstLocal = isLocal ? isLocal(q.destination) : knownLocal(q.destination);
  const pkt = tracePacket(q.source, q.destination, q.port, q.protocol, isIPv6(q.destination) ? 6 : 4, srcLocal, dstLocal);
  // Only the addresses above are known to be local; any other address outside the Service's ClusterIPs may be bound
  // (the Service's load-balancer IPs and externalIPs are taken as not local, as kube-proxy's rules for them assume)
  // (another node's address, from its Node object, is that node's: not local here, and not unknown)
  const dstNode = dstLocal ? undefined : (facts.otherNodeAddresses ?? []).find((x) => x.address === q.destination && x.node !== node);
  if (!isLocal && !dstLocal && !svc.clusterIPs.includes(q.destination)) {
    pkt.dstLocalAssumed = true;
    if (!svc.loadBalancerIngress.includes(q.destination) && !svc.externalIPs.includes(q.destination) && !dstNode) pkt.dstLocalUnknown = true;
  }
  // Interface-based local-traffic detection: a pod of this node arrives on the pod interface, a local process on none.
  if (ifaces) pkt.inInterface = srcLocal ? "" : podHere ? ifaces.pod : ifaces.uplink;
  const trace = tracer(pkt, srcLocal ? "OUTPUT" : "PREROUTING");
  const v = verdictFromTrace("custom", `${q.source} → ${q.destination}:${q.port}/${q.protocol}`, q.source, trace);
  if (facts.noLocalDetector && svc.clusterIPs.includes(q.destination)) sayNoLocalDetector(v, facts.noLocalDetector.mode, facts.noLocalDetector.cause.short);
  // what the rules alone do not decide, as for the report's clients (explain.ts): the reply path, the bridge, and a
  // loopback source's route out of the node
  // the source's node: this one (a local address, or a pod here), another (a pod there, or another node's address), or
  // not known — a pod address in no node's podCIDR (CNIs with their own IPAM, e.g. Calico, ignore spec.podCIDR) whose
  // Pod the bundle does not hold (a live run keeps only the endpoints' pods): the reply path then depends on it
  const otherHost = srcLocal ? undefined : (facts.otherNodeAddresses ?? []).find((x) => x.address === q.source && x.node !== node);
  // A source outside the CIDRs kube-proxy takes this node's pods to be in is no pod of this node; when the node's own
  // addresses were collected and it is not one of them, it is not on this node at all: a client from outside, whose
  // unmasqueraded reply from an endpoint elsewhere bypasses this node (pkg/proxy/ipvs/proxier.go syncEndpoint, v1.30,
  // kubernetes/kubernetes#97081: "Traffic from an external source will be routed but the reply will have the POD
  // address and will be discarded"), as explain.ts answers for the report's client from outside.
  const podRange = facts.clusterCIDRSource !== undefined && facts.clusterCIDRSource !== "the nodes' podCIDRs"
    ? s.clusterCIDRs.filter((c) => isIPv6(c.split("/")[0]!) === isIPv6(q.source))
    : [];
  const noPodHere = podNode === undefined && podRange.length > 0 && !podRange.some((c) => cidrContains(c, q.source));
  const place = srcLocal || podHere ? "this-node" : podNode !== undefined || otherHost || (noPodHere && facts.localAddresses) ? "elsewhere" : "unknown";
  if (facts.endpoints) {
    const unknownWhy = noPodHere
      ? `it lies outside ${s.localRange ?? "the cluster CIDR"} ${podRange.join(", ")} (from ${facts.clusterCIDRSource}), so it is no pod of ${node}, but ${node}'s own addresses were not collected (ip -o addr): whether it is one of them is not known`
      : "no Pod of the bundle has this address, and it is in no node's podCIDR";
    if (facts.ipvs) checkIpvsConntrack(v, node, facts.endpoints, facts.sysctls, [...svc.clusterIPs, ...svc.externalIPs, ...svc.loadBalancerIngress]);
    checkReplyPath(v, place, node, facts.endpoints, unknownWhy);
    if (podHere && !srcLocal) checkBridge(v, node, facts.endpoints, facts.sysctls, facts.podGateway);
  }
  if (ifaces && place === "unknown") {
    v.caveats.push(`traced as arriving on ${ifaces.uplink} (a client of another node): if ${q.source} is a pod of ${node}, it arrives on ${ifaces.pod} instead, which the local-traffic detector's interface rules read`);
  }
  checkRouteLocalnet(v, facts.sysctls, isLocal ?? knownLocal);
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
  if (v.notCollected) a.notCollected = v.notCollected;
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
    // not known when a rule that would masquerade it could not be told to match (client_verdict.ts masqueradeNotKnown)
    if (o.masqueraded !== undefined && !masqueradeNotKnown(o)) path.masqueraded = o.masqueraded;
    if (o.missingChain !== undefined) path.missingChain = o.missingChain;
    if (o.undecided !== undefined) path.undecided = o.undecided;
    byWay.set(key, path);
  }
  a.paths = [...byWay.values()].sort((x, y) => y.probability - x.probability);
  // a fate that rests on a fact not collected (trace.ts undecided): the outcome is not known, and says what decides it
  const live = trace.outcomes.filter((o) => o.probability > 0);
  const und = live.filter((o) => o.undecided !== undefined);
  if (und.length > 0) {
    const u = und[0]!.undecided!;
    const alike = und.length === live.length && und.every((o) => o.undecided!.fact === u.fact && o.undecided!.taken === u.taken && o.undecided!.otherwise === u.otherwise);
    const other: ClientVerdict["outcome"] = !alike ? "mixed" : u.otherwise === "drop" ? "dropped" : "not-handled";
    a.outcomeDependsOn = { fact: u.fact, notCollected: u.notCollected, ifTrue: u.taken ? a.outcome : other, ifFalse: u.taken ? other : a.outcome };
    a.outcome = "unknown";
  }
  if (trace.sharesFixed === false) a.sharesFixed = false;
  if (v.dropped) a.dropped = v.dropped;
  if (v.rejected) a.rejected = v.rejected;
  if (v.notHandled) a.notHandled = v.notHandled;
  if (v.outcome === "not-handled" && dstLocal) {
    a.caveats.push(`${q.destination} is an address of this node: no kube-proxy rule stops the packet, so it is delivered to the node itself — whatever listens on port ${q.port}/${q.protocol} there answers`);
  }
  if (srcLocal) a.caveats.push(`${q.source} is ${isLocal ? "a local address of the node" : "this node's address"}: traced as a host-network client (nat OUTPUT)`);
  // A source on another node is first handled by that node's rules, which translate a packet to any Service's ClusterIP,
  // externalIP or load-balancer IP wherever it is sent from, but a NodePort only at that node's own addresses
  // (pkg/proxy/iptables/proxier.go syncProxyRules: the "kubernetes service nodeports" rule is
  // `-m addrtype --dst-type LOCAL`, or `-d` each --nodeport-addresses IP of that node (GetNodeIPs); nftables mode: the
  // nodeport-ips set or `fib daddr type local`, pkg/proxy/nftables/proxier.go; IPVS mode: NodePort virtual servers on
  // the node's own addresses, pkg/proxy/ipvs/proxier.go syncProxyRules GetAllLocalAddressesExcept(kube-ipvs0)). So a
  // packet to this node's own address that is none of the Service's leaves the source's node untranslated (that
  // node's answer says so) and this answer is its real path here, not an "as if".
  const serviceAddress = svc.clusterIPs.includes(q.destination) || svc.externalIPs.includes(q.destination) || svc.loadBalancerIngress.includes(q.destination);
  const loopback = q.destination === "::1" || (!isIPv6(q.destination) && cidrContains("127.0.0.0/8", q.destination));
  const ownAddress = !serviceAddress && !loopback && (
    q.destination === s.nodeIP || (facts.nodeAddresses ?? []).includes(q.destination) ||
    (facts.localAddresses?.isLocal(q.destination) === true && ![undefined, "kube-ipvs0"].includes(facts.localAddresses.interfaceOf(q.destination)))
  );
  // A caveat naming another node of the packet's path: its last words depend on the rest of the report (whether that
  // node answers this packet too, or its rules were collected at all), so they are chosen in finishServiceExplain
  // (resolveNodeRefs); until then the caveat reads as if that node's rules were collected but not answered.
  const refer = (before: string, other: string, words: NodeRefWords, after = "") => {
    a.caveats.push(before + words.collected + after);
    const refs = nodeRefs.get(a) ?? [];
    refs.push({ index: a.caveats.length - 1, node: other, before, after, words });
    nodeRefs.set(a, refs);
  };
  const startsThere = (other: string, fromPod?: string): NodeRefWords => ({
    collected: ` (use --node ${other}${fromPod ? `, or --from-pod ${fromPod} without --node,` : ""} to trace it where it starts)`,
    uncollected: ` (${other}'s rules were not collected: --node ${other}${fromPod ? `, or --from-pod ${fromPod} without --node,` : ""} traces it where it starts on a live run, or on a bundle that holds ${other})`,
    answered: (where) => ` (node ${other}'s answer ${where} traces it where it starts)`,
  });
  const arrivesUntranslated = (who: string, from: string, pod: boolean) =>
    refer(
      `${who}: ${from}'s kube-proxy rules leave its packet to ${q.destination}, an address of ${node} and none of Service ${svc.namespace}/${svc.name}'s, untranslated ` +
        `(they take a NodePort only at ${from}'s own addresses), so it reaches ${node} as traced here`,
      from,
      { collected: "", uncollected: "", answered: (where) => ` (node ${from}'s answer ${where} traces it on ${from})` },
      pod ? `; rules outside kube-proxy's on ${from} that masquerade pod traffic leaving the node (a CNI's, ip-masq-agent's) would make its source ${from}'s address instead` : "",
    );
  if (!sourcePod && podNode !== undefined && podNode !== node) {
    if (ownAddress) arrivesUntranslated(`${q.source} is in the pod CIDR of node ${podNode}`, podNode, true);
    else refer(`${q.source} is in the pod CIDR of node ${podNode}: a pod's packets are first handled by ${podNode}'s rules, not ${node}'s; this answer is for the packet as if it entered ${node}`, podNode, startsThere(podNode));
  }
  if (otherHost) {
    // a host process (or hostNetwork pod) of another node: its packet to a Service address is translated in that
    // node's nat OUTPUT before it leaves, so it does not reach this node addressed to the Service
    if (ownAddress) arrivesUntranslated(`${q.source} is an address of node ${otherHost.node} (a host process or hostNetwork pod there; its nat OUTPUT)`, otherHost.node, false);
    else {
      refer(
        `${q.source} is an address of node ${otherHost.node}: a host process or hostNetwork pod there has its packets translated by ${otherHost.node}'s rules first (nat OUTPUT); this answer is for the packet as if it entered ${node} untranslated`,
        otherHost.node,
        startsThere(otherHost.node),
      );
    }
  }
  if (sourcePod && sourcePod.node !== node) {
    if (ownAddress) arrivesUntranslated(`${q.source} is pod ${sourcePod.name} on node ${sourcePod.node}`, sourcePod.node, true);
    else {
      refer(
        `${q.source} is pod ${sourcePod.name} on node ${sourcePod.node}: its packets are first handled by ${sourcePod.node}'s rules, not ${node}'s; this answer is for the packet as if it entered ${node}`,
        sourcePod.node,
        startsThere(sourcePod.node, sourcePod.ref ?? sourcePod.name),
      );
    }
  }
  // another node's address: routed to that node, and not to this node's NodePorts, which kube-proxy reaches only for
  // packets addressed to the node itself (pkg/proxy/iptables/proxier.go syncProxyRules, the "kubernetes service
  // nodeports" rule: `-m addrtype --dst-type LOCAL`, or `-d` each --nodeport-addresses IP of this node; nftables mode:
  // `fib daddr type local` before service-nodeports, pkg/proxy/nftables/proxier.go)
  const nodePort = svc.ports.find((p) => p.nodePort === q.port && p.protocol.toLowerCase() === q.protocol);
  if (dstNode) {
    const what = nodePort ? `NodePort ${q.port}/${q.protocol} of Service ${svc.namespace}/${svc.name} there` : `not an address of Service ${svc.namespace}/${svc.name}`;
    // a source on this node does start here: this answer is the first part of its path, not an "as if"; the
    // destination's node answered in this report too: pointed to, not left to --node
    const b = dstNode.node;
    if (place === "this-node") {
      refer(`${q.destination} is an address of node ${b} (${what}): ${node}'s NodePort rules take only packets addressed to ${node} itself, so the packet is routed to ${b} as this answer leaves it and handled there by its rules`, b, {
        collected: ` (use --node ${b} to trace it there)`,
        uncollected: ` (${b}'s rules were not collected: --node ${b} traces it there on a live run, or on a bundle that holds ${b})`,
        answered: (where) => `: see node ${b}'s answer ${where}`,
      });
    } else {
      refer(`${q.destination} is an address of node ${b} (${what}): the packet is routed to ${b} and handled by its rules, not ${node}'s, whose NodePort rules take only packets addressed to ${node} itself; this answer is for the packet as if it entered ${node}`, b, {
        collected: ` (use --node ${b} to trace it where it is handled)`,
        uncollected: ` (${b}'s rules were not collected: --node ${b} traces it where it is handled on a live run, or on a bundle that holds ${b})`,
        answered: (where) => ` (node ${b}'s answer ${where} traces it where it is handled)`,
      });
    }
  } else if (!serviceAddress && !dstLocal) {
    a.caveats.push(`${q.destination} is not an address of Service ${svc.namespace}/${svc.name}`);
  }
  return a;
}

/** The last words of a caveat that names another node of the packet's path, for each state of that node in the report. */
interface NodeRefWords {
  /** The node's rules were collected, but it gives no answer to this packet (the default until resolved). */
  collected: string;
  /** The bundle holds no capture of the node: `--node` works live, or on a bundle that holds it. */
  uncollected: string;
  /** The node answers the same packet in this report, `above` or `below` this answer. */
  answered?: (where: "above" | "below") => string;
}

/** The caveats of an answer that name another node ({@link resolveNodeRefs}): index, node, the words around its part. */
const nodeRefs = new WeakMap<PacketAnswer, { index: number; node: string; before: string; after: string; words: NodeRefWords }[]>();

/**
 * Finishes the caveats of {@link answerPacket} that name another node of the packet's path (the source's node, the
 * destination's node) once the whole report is known: a pointer to that node's answer when the report holds one for
 * the same packet (`see node B's answer below`); `--node B` when B's rules were collected but it gives none (its dump
 * cut, or not asked for); and, when the bundle holds no capture of B, that B's rules were not collected and where
 * `--node B` works (live, or a bundle that holds B). Answers are in report order (node by node).
 * @param answers the report's packet answers, in report order (mutated: their caveats).
 * @param collected the nodes whose capture the bundle holds.
 */
export function resolveNodeRefs(answers: PacketAnswer[], collected: ReadonlySet<string>): void {
  answers.forEach((a, i) => {
    for (const r of nodeRefs.get(a) ?? []) {
      const j = answers.findIndex((o) => o.node === r.node && o.source === a.source && o.destination === a.destination);
      const end = j !== -1 && r.words.answered ? r.words.answered(j < i ? "above" : "below") : collected.has(r.node) ? r.words.collected : r.words.uncollected;
      a.caveats[r.index] = r.before + end + r.after;
    }
  });
}
