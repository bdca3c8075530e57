/**
 * The clients a Service verdict is given for, per node: which address stands for a pod on this node, a pod on another
 * node, a host-network process, an external client (allowed and denied by loadBalancerSourceRanges) and a hairpin
 * endpoint, and which hook each enters by.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Bundle } from "../bundle/bundle.ts";
import { cidrContains, hostAt, hostWithin, isIPv6 } from "../model/ip.ts";
import type { Node, Service } from "../model/k8s.ts";
import type { ResolvedService } from "./resolve.ts";
import type { ClientKind, EntryPointReport } from "./report.ts";
import { podAddresses } from "./from_pod.ts";
import { nodePodCIDRs } from "./node_facts.ts";

function internalIP(node: Node | undefined, family: 4 | 6): string | undefined {
  const addrs = node?.status?.addresses ?? [];
  const pick = (type: string) => addrs.find((a) => a.type === type && isIPv6(a.address) === (family === 6))?.address;
  return pick("InternalIP") ?? pick("ExternalIP");
}

/** The addresses that stand for each kind of client on a node. */
export interface Sources {
  clusterCIDRs: string[];
  /**
   * What `clusterCIDRs` stands for in a client's description: undefined for the cluster CIDR, `n1's pod CIDR` for a
   * detect-local-mode NodeCIDR detector (cluster_cidr.ts detectorCIDRScope).
   */
  localRange?: string;
  podSameNode?: string;
  podOtherNode?: string;
  hostNetwork?: string;
  nodeIP?: string;
  external: string;
  externalDenied?: string;
  hairpin?: string;
  notes: string[];
}


/** Documentation addresses (RFC 5737, RFC 3849) that stand for a client outside the cluster, in order of preference. */
const EXTERNAL_CANDIDATES: Record<4 | 6, string[]> = {
  4: ["203.0.113.10", "198.51.100.10", "192.0.2.10", "203.0.113.200", "198.51.100.200", "192.0.2.200"],
  6: ["2001:db8:ffff::10", "2001:db8:eeee::10", "2001:db8:dddd::10"],
};
/** Candidates for a client outside loadBalancerSourceRanges, in order of preference. */
const DENIED_CANDIDATES: Record<4 | 6, string[]> = {
  4: ["198.51.100.10", "203.0.113.130", "192.0.2.130", "198.51.100.130", "203.0.113.250"],
  6: ["2001:db8:eeee::10", "2001:db8:dddd::10", "2001:db8:cccc::10"],
};

/**
 * The addresses no packet from outside can carry as its source on this node: every Service address of the bundle
 * (ClusterIPs, externalIPs, LoadBalancer ingress IPs: kube-proxy's IPVS mode binds them to kube-ipvs0, and a
 * LoadBalancer IP may be routed to the node as its own), the node's addresses (status.addresses), and whatever the
 * node's `ip addr` shows as local. The kernel drops an arriving packet whose source is a local address as a martian
 * (net/ipv4/fib_frontend.c __fib_validate_source: a source that routes as RTN_LOCAL is refused unless accept_local),
 * so a client traced from one describes no real client.
 */
function takenAddresses(bundle: Bundle, node: Node | undefined, isLocal: ((ip: string) => boolean) | undefined): (ip: string) => boolean {
  const services = bundle.objects.services;
  const own = servicesTakingCandidates(services);
  const nodeOwn = new Set((node?.status?.addresses ?? []).map((a) => a.address));
  // a candidate from the scan made once; any other address (a host of loadBalancerSourceRanges) by a scan of its own
  const byService = (ip: string) => CANDIDATES.has(ip) ? own.has(ip) : services.some((svc) => serviceAddresses(svc).includes(ip));
  return (ip) => nodeOwn.has(ip) || byService(ip) || (isLocal?.(ip) ?? false);
}

/** A Service's own addresses: ClusterIP(s), externalIPs, loadBalancerIP, LoadBalancer ingress IPs. */
function serviceAddresses(svc: Service): (string | undefined)[] {
  const spec = svc.spec;
  return [spec?.clusterIP, ...(spec?.clusterIPs ?? []), ...(spec?.externalIPs ?? []), spec?.loadBalancerIP, ...(svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip)];
}

/** Every candidate address of an outside client, either family. */
const CANDIDATES = new Set([...EXTERNAL_CANDIDATES[4], ...EXTERNAL_CANDIDATES[6], ...DENIED_CANDIDATES[4], ...DENIED_CANDIDATES[6]]);
/** {@link servicesTakingCandidates}' answer per Services list (one scan per bundle, not per node and family). */
const takenByServices = new WeakMap<readonly Service[], Set<string>>();

/**
 * The candidate addresses ({@link EXTERNAL_CANDIDATES}, {@link DENIED_CANDIDATES}) that a Service of the bundle uses
 * as its ClusterIP(s), externalIPs, loadBalancerIP or LoadBalancer ingress IP: only those are kept, so a bundle of
 * 10,000 Services costs one pass and no set of all their addresses.
 */
function servicesTakingCandidates(services: readonly Service[]): Set<string> {
  let taken = takenByServices.get(services);
  if (taken) return taken;
  taken = new Set<string>();
  const see = (ip: string | undefined) => {
    if (ip !== undefined && CANDIDATES.has(ip)) taken!.add(ip);
  };
  for (const svc of services) {
    const spec = svc.spec;
    if (spec) {
      see(spec.clusterIP);
      if (spec.clusterIPs) for (const ip of spec.clusterIPs) see(ip);
      if (spec.externalIPs) for (const ip of spec.externalIPs) see(ip);
      see(spec.loadBalancerIP);
    }
    const ingress = svc.status?.loadBalancer?.ingress;
    if (ingress) for (const i of ingress) see(i.ip);
  }
  takenByServices.set(services, taken);
  return taken;
}

/**
 * Picks the addresses that represent each kind of client on a node: a pod of that node that is not an endpoint, a pod
 * of another node, the node itself (host network), an external client (inside, and outside, loadBalancerSourceRanges),
 * and an endpoint of that node (hairpin). Real pod IPs from the bundle first, else hosts of the pod CIDRs. The external
 * clients are documentation addresses outside the cluster CIDR that are none of the node's or the Services' own
 * addresses (a packet from one of those would be a martian); when every candidate is taken a note says so.
 * @param isLocal the node's local addresses as its `ip addr` shows them, when collected.
 */
export function chooseSources(
  bundle: Bundle,
  resolved: ResolvedService,
  nodeName: string,
  family: 4 | 6,
  clusterCIDRs: string[],
  isLocal?: (ip: string) => boolean,
): Sources {
  const objects = bundle.objects;
  const node = objects.nodes.find((n) => n.metadata.name === nodeName);
  const notes: string[] = [];
  const inCluster = (ip: string) => clusterCIDRs.some((c) => cidrContains(c, ip));
  // a dual-stack pod has an address of each family in status.podIPs (podIP is the first): the one of this family
  const ofFamily = (ip: string | undefined) => ip !== undefined && ip !== "" && isIPv6(ip) === (family === 6);
  const podIPs = objects.pods
    .filter((p) => !p.spec?.hostNetwork)
    .map((p) => ({ ip: podAddresses(p).find(ofFamily), node: p.spec?.nodeName }))
    .filter((p): p is { ip: string; node: string | undefined } => p.ip !== undefined);
  // the pod CIDR of this family (spec.podCIDRs of a dual-stack node, else spec.podCIDR)
  const podCIDR = (n: typeof node) => nodePodCIDRs(n).find((c) => ofFamily(c.split("/")[0]));
  const endpointIPs = new Set(resolved.endpoints.map((e) => e.address));
  const taken = takenAddresses(bundle, node, isLocal);
  const outsider = (ip: string) => !inCluster(ip) && !taken(ip);
  const external = EXTERNAL_CANDIDATES[family].find(outsider);
  if (external === undefined) {
    notes.push(`every address kubectl-netpath tries for a client outside the cluster (${EXTERNAL_CANDIDATES[family].join(", ")}) is in the cluster CIDR or is the node's or a Service's own address: the client from outside is traced from ${EXTERNAL_CANDIDATES[family][0]} anyway, which the node would drop as a martian source`);
  }
  const s: Sources = { clusterCIDRs, external: external ?? EXTERNAL_CANDIDATES[family][0]!, notes };
  // A pod on this node that is not an endpoint (so hairpin does not blur the verdict).
  const sameCIDR = podCIDR(node);
  // (hostWithin wraps the offset into a podCIDR longer than /24: a /26 — GKE's max-pods 32, --node-cidr-mask-size 26
  // — holds 64 addresses, and an address past its end is no pod of the node)
  s.podSameNode = podIPs.find((p) => p.node === nodeName && !endpointIPs.has(p.ip))?.ip ??
    (sameCIDR ? hostWithin(sameCIDR, 200) : undefined) ??
    (clusterCIDRs[0] ? hostWithin(clusterCIDRs[0], 200) : undefined);
  const otherCIDR = objects.nodes.filter((n) => n.metadata.name !== nodeName).map(podCIDR).find((c) => c !== undefined);
  s.podOtherNode = podIPs.find((p) => p.node !== nodeName && p.node !== undefined && !endpointIPs.has(p.ip))?.ip ??
    (otherCIDR ? hostWithin(otherCIDR, 201) : undefined) ??
    otherNodeHost(clusterCIDRs[0], sameCIDR);
  if (s.podOtherNode === undefined && s.podSameNode !== undefined && clusterCIDRs[0] !== undefined) {
    notes.push(`no address of the cluster CIDR ${clusterCIDRs[0]} lies outside ${nodeName}'s podCIDR ${sameCIDR} (no other node's podCIDR is in the bundle): the pod-on-another-node client is not traced`);
  }
  s.nodeIP = internalIP(node, family);
  s.hostNetwork = s.nodeIP;
  if (!s.nodeIP) {
    s.nodeIP = family === 6 ? "2001:db8::2" : "192.0.2.2";
    s.hostNetwork = s.nodeIP;
    notes.push(`node ${nodeName} has no InternalIP in the bundle; ${s.nodeIP} stands for its address`);
  }
  if (s.podSameNode === undefined) {
    notes.push("the cluster CIDR is unknown (no detector rule, ConfigMap clusterCIDR or node podCIDR): pod clients are not traced");
  }
  // A hairpin client is a pod endpoint of this node. A host-network endpoint (its address is the node's) sends from the
  // node itself: its packets start in nat OUTPUT as a local process's do, which the host-network client already
  // traces (kube-proxy's KUBE-EXT `--src-type LOCAL` rules send them to the Service chain, masqueraded).
  // the endpoint's pod is in the Service's namespace (an EndpointSlice's targetRef)
  const hostNetworkPods = new Set(objects.pods.filter((p) => p.spec?.hostNetwork && (p.metadata.namespace ?? "default") === resolved.summary.namespace).map((p) => p.metadata.name));
  const nodeAddresses = new Set([s.nodeIP, ...(node?.status?.addresses ?? []).map((a) => a.address)]);
  const local = resolved.endpoints.find((e) =>
    e.node === nodeName && isIPv6(e.address) === (family === 6) && !nodeAddresses.has(e.address) && !(e.pod !== undefined && hostNetworkPods.has(e.pod))
  );
  s.hairpin = local?.address;
  // External clients: outside the cluster CIDR, and outside/inside the LB source ranges.
  const ranges = resolved.summary.loadBalancerSourceRanges;
  if (ranges.length > 0) {
    const allowed = ranges.filter((r) => isIPv6(r.trim()) === (family === 6)).map((r) => r.trim());
    if (allowed.length > 0) {
      // An allowed client: a host of a source range that is neither the node nor a pod (a /32 or /31 range: its own
      // addresses).
      const a = allowed.flatMap((r) => [2, 10, 100, 1, 0].map((k) => hostAt(r, k)))
        .find((ip) => ip !== undefined && ip !== s.nodeIP && outsider(ip));
      if (a) s.external = a;
      else notes.push(`no address of loadBalancerSourceRanges (${allowed.join(", ")}) is outside the cluster CIDR and the node: the client from outside is traced from ${s.external}, outside the ranges`);
      s.externalDenied = DENIED_CANDIDATES[family].find((c) => c !== s.external && !ranges.some((r) => cidrContains(r, c)) && outsider(c));
    }
  }
  return s;
}

/**
 * A host of the cluster CIDR that is not in this node's podCIDR, to stand for a pod of another node when no other
 * node's podCIDR is known: 201 into the block of the node's podCIDR size after the first (`10.244.1.201` in a /16 of
 * /24s), else the block after that (one of two consecutive blocks is not the node's); undefined when the cluster CIDR
 * holds no other block (it is this node's podCIDR: a NodeCIDR local-traffic detector).
 */
function otherNodeHost(clusterCIDR: string | undefined, nodeCIDR: string | undefined): string | undefined {
  if (clusterCIDR === undefined) return undefined;
  const outside = (ip: string | undefined): ip is string => ip !== undefined && cidrContains(clusterCIDR, ip) && (nodeCIDR === undefined || !cidrContains(nodeCIDR, ip));
  const hostBits = nodeCIDR === undefined ? 8 : (isIPv6(nodeCIDR) ? 128 : 32) - Number(nodeCIDR.slice(nodeCIDR.indexOf("/") + 1));
  // an IPv6 node prefix (a /64) is too large a step for a number: the next /24-sized block stands in
  const block = hostBits > 30 ? 256 : 2 ** hostBits;
  for (const j of [1, 2]) {
    const ip = hostWithin(clusterCIDR, (201 % block) + j * block);
    if (outside(ip)) return ip;
  }
  return undefined;
}

/** One kind of client at one entry point: its source address and the hook its first packet enters by. */
export interface Client {
  kind: ClientKind;
  description: string;
  src: string;
  hook: "PREROUTING" | "OUTPUT";
}

/** The kinds of client asked about at an entry point of this kind. */
export function clientsFor(kind: EntryPointReport["kind"], s: Sources, node: string): Client[] {
  const out: Client[] = [];
  if (s.podSameNode) out.push({ kind: "pod-same-node", description: `pod on ${node} (${s.podSameNode})`, src: s.podSameNode, hook: "PREROUTING" });
  // A pod of another node reaches this node only at a NodePort: kube-proxy programs the ClusterIP, load-balancer IPs and
  // externalIPs on every node (nat KUBE-SERVICES, hooked in PREROUTING; pkg/proxy/iptables/proxier.go syncProxyRules
  // "Capture load-balancer ingress" / "external IP", the nftables service-ips map, IPVS kube-ipvs0), so its packet to
  // one is translated on its own node and never arrives here with that destination
  if (kind === "NodePort" && s.podOtherNode) {
    out.push({ kind: "pod-other-node", description: `pod on another node (${s.podOtherNode}), arriving at ${node}`, src: s.podOtherNode, hook: "PREROUTING" });
  }
  if (s.hostNetwork) out.push({ kind: "host-network", description: `host-network pod or process on ${node} (${s.hostNetwork})`, src: s.hostNetwork, hook: "OUTPUT" });
  out.push({
    kind: "external",
    description: kind === "ClusterIP"
      ? `client outside ${s.localRange ?? "the cluster CIDR"} routed to ${node} (${s.external})`
      : `client outside the cluster (${s.external})`,
    src: s.external,
    hook: "PREROUTING",
  });
  if (kind !== "ClusterIP" && s.externalDenied) {
    out.push({ kind: "external-denied", description: `client outside loadBalancerSourceRanges (${s.externalDenied})`, src: s.externalDenied, hook: "PREROUTING" });
  }
  if (s.hairpin) out.push({ kind: "hairpin", description: `endpoint ${s.hairpin} on ${node} reaching its own Service`, src: s.hairpin, hook: "PREROUTING" });
  return out;
}
