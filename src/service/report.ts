/**
 * The ServiceReport: what `kubectl netpath svc/NAME` answers, as a plain JSON-serialisable object. It is the stable
 * schema of `-o json` / `-o yaml` (apiVersion netpath.kubectl.io/v1alpha1, kind ServiceReport; docs/report.md).
 * Every verdict carries its evidence: the rules (table, chain, line, text) or API objects that decided it.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { RuleRef, UndecidedFate } from "./trace.ts";

/** API version of every report this tool prints. */
export const REPORT_API_VERSION = "netpath.kubectl.io/v1alpha1";

/** A ServicePort as the report shows it. */
export interface ServicePortSummary {
  name?: string;
  port: number;
  protocol: "TCP" | "UDP" | "SCTP";
  targetPort?: number | string;
  nodePort?: number;
  /** kube-proxy's name for the port in rule comments: `ns/svc:port` (or `ns/svc` when the port has no name). */
  portKey: string;
}

/** The Service, resolved from the API object. */
export interface ServiceSummary {
  namespace: string;
  name: string;
  type: string;
  clusterIPs: string[];
  ports: ServicePortSummary[];
  selector?: Record<string, string>;
  externalTrafficPolicy: "Cluster" | "Local";
  internalTrafficPolicy: "Cluster" | "Local";
  sessionAffinity: "None" | "ClientIP";
  /** ClientIP affinity timeout in seconds (default 10800). */
  affinityTimeoutSeconds?: number;
  externalIPs: string[];
  loadBalancerIngress: string[];
  loadBalancerSourceRanges: string[];
  healthCheckNodePort?: number;
  trafficDistribution?: string;
}

/** One endpoint address of the Service (from its EndpointSlices), with its pod, node and zone. */
export interface EndpointInfo {
  address: string;
  /** Ports of this endpoint by ServicePort: `{ portKey, port, protocol }`. */
  ports: { portKey: string; port: number; protocol: string }[];
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  pod?: string;
  node?: string;
  /**
   * `node` is the pod's (`spec.nodeName`): the EndpointSlice names none. kube-proxy then counts the endpoint local to no
   * node (endpointslicecache.go addEndpoints: isLocal needs endpoint.NodeName), so Local policies never pick it.
   */
  nodeFromPod?: true;
  zone?: string;
  /** Where the zone came from: EndpointSlice `endpoint.zone`, node label topology.kubernetes.io/zone, or the beta label. */
  zoneSource?: "endpoint" | "node-label" | "node-beta-label";
  /** Topology hints (`hints.forZones`). */
  hintsForZones?: string[];
  /** Same-node topology hints (`hints.forNodes`, v1.33+). */
  hintsForNodes?: string[];
  slice: string;
}

/** Endpoints per zone. */
export interface ZoneCount {
  /** The endpoints' zone (`endpoints[].zone`); absent for the count of endpoints without one. */
  zone?: string;
  ready: number;
  notReady: number;
}

/** How the proxy mode of a node was established. */
export interface ProxyModeInfo {
  /**
   * kube-proxy's mode; `cilium` when Cilium's kube-proxy replacement serves the node's Services (its service table is
   * in the bundle, or a cilium/anetd DaemonSet runs without kube-proxy), `other` for another agent (Calico eBPF,
   * kube-router, Antrea, OVN-Kubernetes); those two name the agent in `evidence` (source `datapath agent`).
   */
  mode: "iptables" | "ipvs" | "nftables" | "cilium" | "other" | "unknown";
  /**
   * `kube-proxy ConfigMap` / `kube-proxy flags`: the configuration (detail names the ConfigMap and key, or the flag);
   * `datapath agent`: the agent that serves Services instead of kube-proxy (value its name, detail what shows it).
   */
  evidence: { source: "proxyMode endpoint" | "kube-proxy ConfigMap" | "kube-proxy flags" | "rules" | "datapath agent"; value: string; detail?: string }[];
  /** Disagreements between the sources (e.g. ConfigMap says ipvs, the node serves the Service from KUBE-SVC chains). */
  conflicts: string[];
}

/** Kinds of client a verdict is given for. */
export type ClientKind = "pod-same-node" | "pod-other-node" | "host-network" | "external" | "external-denied" | "hairpin" | "custom";

/** One endpoint a client can reach, with its share and the masquerade decision on that branch. */
export interface EndpointShare {
  /** `IP:PORT`. */
  endpoint: string;
  /** Share of new connections in [0, 1]; null when it depends on live state (IPVS lc/wlc/…). */
  share: number | null;
  /**
   * Whether connections sent to it are masqueraded; absent when that is not known (a rule that would mark them for
   * masquerade, or masquerade them itself — another component's `-o eth0 -j MASQUERADE`, the output interface not
   * being collected —, could not be told to match or not; the verdict's reason names it) and for an `unknown (CHAIN not in the
   * dump)` branch.
   */
  masqueraded?: boolean;
  /** IPVS weight, when IPVS. */
  weight?: number;
  activeConn?: number;
  inactiveConn?: number;
  /** Chain that DNATs to it (KUBE-SEP-…) or the IPVS real server line. */
  via?: string;
  /**
   * Why a connection on this branch does not complete although it is forwarded:
   * - `bypasses-node`: unmasqueraded DNAT to an endpoint on another node for a client not on this node; the reply goes
   *   straight to the client and this node never reverses the DNAT (reply_path.ts);
   * - `bridge-not-filtered`: client and endpoint on the same bridge with net.bridge.bridge-nf-call-iptables 0 (or
   *   br_netfilter not loaded): the bridged reply skips conntrack's reverse NAT;
   * - `hairpin-off`: the endpoint is the client itself and its bridge port has hairpin_mode 0: the packet is never sent
   *   back out the port it came in on;
   * - `route-localnet-off`: the client's source is 127.0.0.0/8 and no interface has net.ipv4.conf.*.route_localnet 1:
   *   the kernel refuses to route the DNATed packet out of the node (route_localnet.ts);
   * - `ipvs-untracked`: IPVS mode with net.ipv4.vs.conntrack 0: the SNAT the rules ask for never happens, and the
   *   reply does not come back through IPVS (an endpoint reaching itself; a host client whose source is a Service
   *   address, to an endpoint of another node) (ipvs/conntrack_sysctl.ts).
   */
  replyFails?: "bypasses-node" | "bridge-not-filtered" | "hairpin-off" | "route-localnet-off" | "ipvs-untracked";
}

/** A piece of evidence: a rule and the role it played. */
export interface Evidence {
  rule: RuleRef;
  role: string;
}

/** The verdict for one kind of client at one entry point. */
export interface ClientVerdict {
  client: ClientKind;
  /** Human description, e.g. "pod on k8s1 (10.244.0.10)". */
  description: string;
  source: string;
  /** What happens to a new connection. `not-handled`: no kube-proxy rule took it; `unknown`: the state that decides
   * it was not captured (e.g. IPVS mode without ipvsadm output). */
  outcome: "forwarded" | "dropped" | "rejected" | "not-handled" | "mixed" | "unknown";
  endpoints: EndpointShare[];
  /** Probability the connection is dropped / rejected / not handled, when not 0. */
  dropped?: number;
  rejected?: number;
  notHandled?: number;
  /** SNAT decision: always, never, only on some branches (e.g. hairpin: only when the endpoint picks itself). */
  masquerade: "always" | "never" | "some" | "n/a";
  /** One sentence: why. */
  reason: string;
  evidence: Evidence[];
  caveats: string[];
  /**
   * nftables mode: the capture shows this client in a session-affinity set (its name, `affinity-…`): its `endpoints`
   * are the endpoint it is remembered for, so it stands neither for the entry point's shares nor for drift.
   */
  heldBySessionAffinity?: string;
  /**
   * iptables: the raw-table rule that untracked this client's packet (NOTRACK, `CT --notrack`; NodeLocal DNSCache on
   * the kube-dns ClusterIP): nat never saw it, so kube-proxy's rules say nothing of where it goes.
   */
  untrackedBy?: RuleRef;
  /**
   * Rules whose match could not be told (a match module kubectl-netpath does not model) that would change where the
   * packet goes: the answer assumes they do not match, so `endpoints` and their shares rest on that.
   */
  assumedNotMatched?: RuleRef[];
  /**
   * Facts of the node that decide whether this client's connection completes or is masqueraded and that were not
   * collected, each named once in order of first use: a sysctl (`net.bridge.bridge-nf-call-iptables`,
   * `net.ipv4.vs.conntrack`, `net.ipv4.conf.all.route_localnet`), a bridge port's `hairpin_mode`, or `the node's
   * addresses (ip -o addr)`. The verdict holds with the values kube-proxy and the CNI usually set; the caveats say which
   * value breaks it and how. Absent when the answer rests on nothing uncollected of this kind (the ipsets an IPVS answer
   * assumed, and a rule whose match is not known, are said in the reason). Helpers: {@link dependsOnNotCollected}.
   */
  notCollected?: string[];
}

/**
 * Records that verdict `v` rests on `fact`, which was not collected ({@link ClientVerdict.notCollected}); each fact
 * once.
 * @param v the verdict (mutated).
 * @param fact the setting or state, e.g. `net.bridge.bridge-nf-call-iptables`.
 */
export function dependsOnNotCollected(v: ClientVerdict, fact: string): void {
  if (!v.notCollected) v.notCollected = [fact];
  else if (!v.notCollected.includes(fact)) v.notCollected.push(fact);
}

/** How one entry point of a ServicePort is balanced and masqueraded on a node. */
export interface EntryPointReport {
  kind: "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalIP";
  /** `IP:PORT/proto`, e.g. `10.96.0.10:53/udp`. */
  destination: string;
  /**
   * The dump whose line numbers this entry point's reasons and evidence cite, when the node's rules of the two address
   * families are two dumps (iptables and IPVS modes: `iptables-save` for IPv4, `ip6tables-save` for IPv6, each
   * numbered from 1); absent when there is one.
   */
  ruleLines?: "iptables-save" | "ip6tables-save";
  balancing: {
    method: "iptables-probability-cascade" | "ipvs" | "nftables-numgen" | "none";
    /** IPVS scheduler, when IPVS. */
    /**
     * IPVS: the virtual server's scheduler and persistence; `unlisted` when the listing (`ipvsadm -Ln --stats` /
     * `--rate`) shows neither them nor the weights. `shareDependsOn`, for the hashing schedulers (sh, mh, dh): what
     * the hash that picks a real server is of, e.g. `the client's address and source port` (sh-port / mh-port flag),
     * `the client's address and its first connection's source port` (the same on a persistent virtual server).
     */
    scheduler?: { name: string; description: string; deterministicShares: boolean; persistentSeconds?: number; unlisted?: true; shareDependsOn?: string };
    /** Shares seen by a pod on this node (the common case); per-client sets are in `clients`. */
    shares: EndpointShare[];
    sessionAffinity?: string;
  };
  clients: ClientVerdict[];
}

/** One ServicePort on one node. */
export interface PortReport {
  servicePort: ServicePortSummary;
  entryPoints: EntryPointReport[];
}

/**
 * A difference between the API and a node's datapath. `kind` (docs/report.md): `service-missing` — the Service (its
 * ClusterIP of this port) is not programmed on the node at all; `entry-missing` — one entry point for clients from
 * outside (a NodePort, LoadBalancer IP or externalIP; a Cilium NodePort, LoadBalancer or ExternalIPs frontend) has no
 * rule or frontend while the Service's ClusterIP is programmed; the others as named.
 */
export interface DriftItem {
  portKey: string;
  kind:
    | "missing-on-node"
    | "stale-on-node"
    | "quiesced"
    | "weight"
    | "service-missing"
    | "entry-missing"
    | "unexpected-reject"
    | "unverifiable"
    | "ipset-missing"
    | "source-ranges-not-enforced"
    | "affinity-timeout"
    | "external-policy"
    | "stale-virtual-server"
    | "ipvs-scheduler";
  endpoint?: string;
  message: string;
  /** `ipset-missing`: the set that lacks the entry (`KUBE-LOAD-BALANCER-SOURCE-CIDR`, `KUBE-6-…`). */
  ipset?: string;
  /**
   * Cilium nodes: the frontend of the agent's service table (`cilium-dbg service list`) the item is about, so that
   * items of the same endpoint on several frontends (ClusterIP, NodePort, its internal-scope copy) can be told apart.
   */
  frontend?: CiliumFrontendRef;
  evidence?: RuleRef[];
}

/** A frontend of Cilium's service table, as a drift item names it. */
export interface CiliumFrontendRef {
  /** Cilium's frontend type (`flags.type` of `cilium-dbg service list -o json`). */
  type: "ClusterIP" | "NodePort" | "ExternalIPs" | "LoadBalancer";
  /**
   * The frontend as `IP:PORT/PROTOCOL` (`[IP]:PORT/PROTOCOL` for IPv6); a NodePort frontend, which stands for every
   * node address of its family, is `*:PORT/PROTOCOL` (IPv4) or `[::]:PORT/PROTOCOL` (IPv6).
   */
  address: string;
  /**
   * `internal`: the copy of a NodePort or LoadBalancer frontend that Cilium lists for clients inside the cluster when
   * externalTrafficPolicy and internalTrafficPolicy differ (its backends follow internalTrafficPolicy); absent for
   * the external (or only) frontend.
   */
  scope?: "internal";
}

/** Everything about one node. */
export interface NodeServiceReport {
  node: string;
  zone?: string;
  proxyMode: ProxyModeInfo;
  /** Where the node's state came from (kube-proxy pod, debug pod, file). */
  source?: string;
  /** Collection failed as a whole: why. */
  error?: string;
  /**
   * What a live collection read on the node, per section in the order collected: its time there (ms), its size
   * (bytes of output), and, when the node stopped it at its limit, `timedOutAfterSeconds`. Absent for captures
   * without timings (files, older bundles).
   */
  collection?: SectionCost[];
  ports: PortReport[];
  drift: DriftItem[];
  notes: string[];
}

/** One section of a node's collection: name, time on the node, output size. */
export interface SectionCost {
  section: string;
  /** Time on the node in ms (10 ms resolution). */
  ms?: number;
  /** Length of its output (stdout) in characters: bytes, as node state is ASCII. */
  bytes: number;
  timedOutAfterSeconds?: number;
}

/** A finding worth the operator's attention. */
export interface Finding {
  severity: "error" | "warning" | "info";
  code: string;
  message: string;
  node?: string;
  evidence?: RuleRef[];
}

/** One way a traced packet can go: the rules whose target it took, in order, and where it ended. */
export interface PacketPath {
  /** Share of new connections that take this path, in [0, 1]. */
  probability: number;
  /** How the path ends (as {@link TraceOutcome}'s verdict): `dnat`, `accept`, `no-match`, `drop`, `reject`, `unresolved`. */
  verdict: string;
  /** `IP:PORT` the connection is DNATed to, when it is. */
  dnatTo?: string;
  /**
   * Whether the packet leaves with its source rewritten; absent when dropped, or when not known (a rule that would
   * mark or masquerade it could not be told to match: the answer's reason names it).
   */
  masqueraded?: boolean;
  /** Rules whose target was taken, in order: jumps, MARK, DNAT, the filter verdict, the POSTROUTING verdict. */
  rules: RuleRef[];
  /** `unresolved`: the chain the dump does not contain. */
  missingChain?: string;
  /**
   * Set when how this path ends rests on a fact not collected (the answer's `outcome` is then `unknown`): `verdict` is
   * the end the trace took with `fact` as `taken` says, `otherwise` the end the other way (iptables layouts before
   * v1.25: kubelet's drop mark, dropped by INPUT's KUBE-FIREWALL only if the destination is local).
   */
  undecided?: UndecidedFate;
}

/** What a packet's outcome rests on when the bundle does not hold it ({@link PacketAnswer.outcomeDependsOn}). */
export interface OutcomeDependsOn {
  /** The fact, as a clause: `172.6.6.6 is a local address of the node`. */
  fact: string;
  /** What would show it, not collected: `the node's \`ip -o addr\` / local routing table`. */
  notCollected: string;
  /** The outcome if the fact is true. */
  ifTrue: ClientVerdict["outcome"];
  /** The outcome if it is not. */
  ifFalse: ClientVerdict["outcome"];
}

/** The answer to one packet question (`--source IP --dest IP:PORT[/proto]`). */
export interface PacketAnswer {
  node: string;
  source: string;
  destination: string;
  outcome: ClientVerdict["outcome"];
  endpoints: EndpointShare[];
  dropped?: number;
  rejected?: number;
  notHandled?: number;
  masquerade: ClientVerdict["masquerade"];
  reason: string;
  evidence: Evidence[];
  caveats: string[];
  /** As {@link ClientVerdict.notCollected}: the node's settings, not collected, that decide this answer. */
  notCollected?: string[];
  /**
   * Set when the packet's fate rests on a fact the bundle does not hold (`outcome` is then `unknown`): the fact
   * (`172.6.6.6 is a local address of the node`), what would show it, and the outcome if it is true and if it is not.
   * Iptables layouts before v1.25: a packet carrying kubelet's drop mark to an address whose locality is not known is
   * dropped by KUBE-FIREWALL in INPUT if the address is local, and forwarded untranslated otherwise.
   */
  outcomeDependsOn?: OutcomeDependsOn;
  /** Every path the packet can take through the node's datapath, most likely first (for the path picture). */
  paths?: PacketPath[];
  /** The dump whose line numbers the rules cite, as {@link EntryPointReport.ruleLines}. */
  ruleLines?: "iptables-save" | "ip6tables-save";
  /**
   * false when `paths` split over IPVS real servers by a scheduler that gives no fixed share (least-connection,
   * hashing): their probabilities are then an even split that only tells each real server's masquerade.
   */
  sharesFixed?: false;
}

/** The whole answer to `svc/NAME`. */
export interface ServiceReport {
  apiVersion: typeof REPORT_API_VERSION;
  kind: "ServiceReport";
  service: ServiceSummary;
  endpoints: EndpointInfo[];
  zones: ZoneCount[];
  nodes: NodeServiceReport[];
  packet?: PacketAnswer[];
  findings: Finding[];
  /** What the bundle cannot show (conntrack state, recent tables, sysctls). */
  limits: string[];
  /**
   * The bundle's warnings (`Bundle.warnings`, the lines stderr prints as `warning: …`): reads the collection
   * could not make (RBAC forbade a list or get, an exec was refused, a node section such as Cilium's service table
   * failed, an object was gone) and files or keys ignored while reading a bundle. The answers rest on what was read;
   * a warning here may be why one says less than it could. Absent when there is none.
   */
  warnings?: string[];
}
