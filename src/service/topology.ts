/**
 * Which endpoints kube-proxy on one node programs for a ServicePort: topology-aware routing (EndpointSlice hints,
 * filled by the EndpointSlice controller for `spec.trafficDistribution` and the `service.kubernetes.io/topology-mode`
 * annotation; kube-proxy itself reads only the hints and, before v1.33, the annotation, never trafficDistribution)
 * and the ready → serving-terminating fallback, as kube-proxy's pkg/proxy/topology.go `CategorizeEndpoints` decides
 * them, per kube-proxy version:
 * - v1.33+ (`topologyModeFromHints`, kubernetes/kubernetes@008b3652): the hints alone decide. Same-node
 *   (`hints.forNodes`, PreferSameNode) when every ready endpoint has a node hint and one names this node — only with
 *   feature gate PreferSameTrafficDistribution, alpha (off) in v1.33, on by default from v1.34 (GA v1.35); else
 *   same-zone (`hints.forZones`) when every ready endpoint has a zone hint and one names the node's
 *   `topology.kubernetes.io/zone` (a node without the label names none); else every endpoint.
 * - v1.30–v1.32 (`canUseTopology`, v1.30 tree): `if !Enabled(TopologyAwareHints) &&
 *   !Enabled(ServiceTrafficDistribution) return false`, then the annotation is checked only
 *   `if !Enabled(ServiceTrafficDistribution)` ("Ignore value of hintsAnnotation if the ServiceTrafficDistribution
 *   feature gate is enabled"): with that gate on (alpha, off, in v1.30; beta, on by default, from v1.31) the zone hints
 *   alone decide, whatever the annotation (even `Disabled`) and whatever TopologyAwareHints.
 * - v1.27–v1.32 with ServiceTrafficDistribution off (`canUseTopology`, kubernetes/kubernetes@803d40a5 before the gate
 *   came): zone hints are followed only when feature gate TopologyAwareHints is on (by default from v1.24) and the
 *   Service's annotation says so: the deprecated `service.kubernetes.io/topology-aware-hints` when present (even
 *   empty: it takes precedence, pkg/proxy/serviceport.go newBaseServiceInfo, kubernetes/kubernetes@78fc8e44), else
 *   `service.kubernetes.io/topology-mode`; any value but "", `disabled`, `Disabled` ("Any non-empty and non-disabled
 *   values for the hints annotation are acceptable": `auto`, `Auto`, `PreferZone` alike).
 * - Wherever zone hints are read, they count only when every ready endpoint has one (not-ready ones are skipped),
 *   the node has a non-empty zone label, and at least one ready endpoint is hinted for it; else every endpoint.
 * - v1.21–v1.26: TopologyAwareHints on (alpha/beta off before v1.24) and only `service.kubernetes.io/topology-aware-hints`,
 *   `Auto` or `auto` (`topology-mode` came in v1.27).
 * - before v1.21: never.
 * Source read: kubernetes/kubernetes pkg/proxy/topology.go at 803d40a5 (v1.27–v1.29 canUseTopology) and 008b3652
 * (topologyModeFromHints); the index holds no release-1.30–1.32 commit of it, so the v1.30 canUseTopology was read
 * in a copy of the v1.30 tree (ashierj/superdemo@86435b28, whose pkg/features/kube_features.go at that commit has
 * ServiceTrafficDistribution alpha off and TopologyAwareHints beta on) and its gate logic checked against a later
 * tree (danwinship/kubernetes@7dfae2cf: the same two gate checks, the zone-label check moved into the endpoint loop,
 * which changes only what is logged).
 * Feature gates are read from kube-proxy's configuration (`featureGates`, `--feature-gates`) where the version lets them
 * be set, else taken at the version's default, said so ({@link featureGate}). The node's kubeProxyVersion (else
 * kubeletVersion) stands for kube-proxy's; unknown → the current rules. Both are the kubelet's own version, and kube-proxy
 * may run up to three minors from it: where v1.31 (zone hints without the annotation) lies within that reach, the set
 * of the other side is kept as `alternative` and the note says what it rests on.
 * The usable set is the ready endpoints available for the topology; when none, every serving-and-terminating
 * endpoint (topology ignored). Under a Local traffic policy: this node's ready endpoints, else its serving-terminating
 * ones. The serving-terminating fallback needs feature gate ProxyTerminatingEndpoints (alpha, off, v1.22; on by default
 * from v1.26; GA v1.28), and before v1.24 applies only under a Local policy (kubernetes#108691).
 * The endpoints given are those of one address family: kube-proxy's proxier of a family reads only the EndpointSlices
 * of its addressType, so each family's hints are judged apart.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Node } from "../model/k8s.ts";
import type { EndpointInfo } from "./report.ts";
import { isLocalEndpoint } from "./resolve.ts";

/** How kube-proxy on a node filters a Service's endpoints by topology. */
export type TopologyMode = "" | "PreferSameZone" | "PreferSameNode";

/** The endpoints a node programs for one ServicePort, and why. */
export interface NodeEndpointSet {
  /** `IP:PORT` (IPv6 bracketed) strings, in the order of the input. */
  endpoints: string[];
  /** The topology filter applied (`""`: none). */
  mode: TopologyMode;
  /** Ready endpoints (true), or the serving-terminating fallback (false). */
  ready: boolean;
  /** One sentence: why this set, e.g. `hints for zone southeastasia-1: 2 of 4 ready endpoints`. */
  why: string;
  /**
   * Set when the set cannot be told from the bundle (zone hints, and the node's zone unknown: no Node object and no
   * endpoint of this node with a zone): the fact that decides it. `endpoints` then holds every usable endpoint.
   */
  undetermined?: string;
  /**
   * Set when kube-proxy's version, which the API does not hold, decides between this set and another (zone hints
   * followed without the annotation from v1.31): the other set and the sentence saying when kube-proxy programs it. A
   * node programming it is not drift (drift.ts).
   */
  alternative?: { endpoints: string[]; when: string };
}

/** The facts of the node that topology depends on. */
export interface TopologyNode {
  name: string;
  /** The node's `topology.kubernetes.io/zone` label. */
  zone?: string;
  /** The Node object is not in the bundle and no endpoint of this node carries a zone: the zone is not known. */
  zoneUnknown?: true;
  /** kube-proxy's minor version (1.x), when known. */
  minor?: number;
  /**
   * Where `minor` was read: the Node's `status.nodeInfo.kubeProxyVersion` (deprecated: the kubelet writes its own
   * version there, and no longer from v1.33, DisableNodeKubeProxyVersion) or `kubeletVersion`. kube-proxy's own
   * version is not in the API: the answers that depend on it say which was read.
   */
  versionFrom?: string;
  /**
   * Whether kube-proxy follows node hints (feature gate PreferSameTrafficDistribution), and the sentence saying
   * what decided it (see {@link preferSameNodeGate}); when absent, the version's default, kube-proxy's configuration
   * not read.
   */
  sameNodeGate?: { on: boolean; why: string };
  /**
   * kube-proxy's configured feature gates (`featureGates` of its configuration file, `--feature-gates`) and where they
   * were read; absent when its configuration sets none or was not read (see `configRead`).
   */
  gates?: { value: Record<string, boolean>; source: string };
  /** Whether kube-proxy's configuration was found in the bundle (a gate it does not set then has its default). */
  configRead?: boolean;
}

/** The feature gate behind PreferSameNode (pkg/features/kube_features.go). */
const SAME_NODE_GATE = "PreferSameTrafficDistribution";

/**
 * The feature gates that decide the endpoints kube-proxy programs, as pkg/features/kube_features.go's versioned specs
 * give them: for each stage, the first minor release (1.x) of the stage, its default, and whether it is locked to that
 * default (GA). Before the first stage the gate does not exist (the behaviour is off); after a GA gate is removed the
 * behaviour stays on.
 * - TopologyAwareHints: alpha (off) v1.21, beta off v1.23, beta on v1.24, GA locked v1.33 (kubernetes/website
 *   feature-gates/TopologyAwareHints.md stages; v1.30 kube_features.go: `{Default: true, PreRelease:
 *   featuregate.Beta}`).
 * - ServiceTrafficDistribution: alpha (off) v1.30, beta (on) v1.31, GA v1.33 (kubernetes/website
 *   feature-gates/ServiceTrafficDistribution.md stages; v1.30 kube_features.go: `{Default: false, PreRelease:
 *   featuregate.Alpha}`); kube-proxy reads it in canUseTopology (see the module comment).
 * - ProxyTerminatingEndpoints: alpha (off) v1.22, beta (on) v1.26, GA v1.28 (KEP-1669), removed in v1.30.
 * - PreferSameTrafficDistribution: alpha (off) v1.33, beta (on) v1.34, GA v1.35.
 * - LoadBalancerIPMode: alpha (off) v1.29, beta (on) v1.30, GA v1.32 (KEP-1860; whether kube-proxy skips ingress IPs
 *   with ipMode Proxy, proxy_scope.ts ipModeHonoured).
 */
const GATES: Record<string, ReadonlyArray<readonly [minor: number, on: boolean, locked: boolean]>> = {
  TopologyAwareHints: [[21, false, false], [24, true, false], [33, true, true]],
  ServiceTrafficDistribution: [[30, false, false], [31, true, false], [33, true, true]],
  ProxyTerminatingEndpoints: [[22, false, false], [26, true, false], [28, true, true]],
  [SAME_NODE_GATE]: [[33, false, false], [34, true, false], [35, true, true]],
  LoadBalancerIPMode: [[29, false, false], [30, true, false], [32, true, true]],
};

/** The state of one feature gate in kube-proxy on a node, and the clause saying what decided it. */
export interface GateState {
  on: boolean;
  /** The gate does not exist in this version (the behaviour it guards is absent). */
  absent?: true;
  /**
   * One clause: why on/off (`feature gate X is off by default in kube-proxy v1.30 (…); kube-proxy's configuration is
   * not in the bundle, so a featureGates setting there is not known`); "" when the gate is locked (nothing to say).
   */
  why: string;
}

function kubeProxyName(minor: number | undefined, versionFrom: string | undefined): string {
  return minor === undefined ? "kube-proxy" : `kube-proxy v1.${minor}${versionFrom ? ` (${versionFrom})` : ""}`;
}

/**
 * One feature gate of kube-proxy on a node: the value its configuration sets (`featureGates`, `--feature-gates`)
 * where the gate can be set, else the version's default (pkg/features/kube_features.go, see {@link GATES}), saying
 * when kube-proxy's configuration was not read. A locked gate (GA) takes its default: kube-proxy refuses to start with
 * another value (component-base featuregate: "cannot set feature gate …, feature is locked to …").
 * @param name a gate of {@link GATES}.
 * @param minor kube-proxy's minor version; undefined: not known, taken as current (every gate here on).
 * @param versionFrom where `minor` was read.
 * @param gates kube-proxy's configured feature gates and their source, when set.
 * @param configRead whether kube-proxy's configuration was found in the bundle.
 */
export function featureGate(
  name: string,
  minor: number | undefined,
  versionFrom: string | undefined,
  gates: { value: Record<string, boolean>; source: string } | undefined,
  configRead: boolean,
): GateState {
  const stages = GATES[name] ?? [];
  if (minor === undefined) return { on: true, why: `kube-proxy's version is not known: taken as current, where feature gate ${name} is on` };
  const kp = kubeProxyName(minor, versionFrom);
  const stage = [...stages].reverse().find(([m]) => minor >= m);
  if (!stage) return { on: false, absent: true, why: `${kp} has no feature gate ${name} (it came in v1.${stages[0]?.[0]})` };
  const [, def, locked] = stage;
  if (locked) return { on: def, why: "" };
  const set = gates?.value[name];
  if (set !== undefined) return { on: set, why: `feature gate ${name} is ${set ? "on" : "off"} in ${gates!.source}` };
  return {
    on: def,
    why: `feature gate ${name} is ${def ? "on" : "off"} by default in ${kp}${configRead ? " and kube-proxy's configuration does not set it" : "; kube-proxy's configuration is not in the bundle, so a featureGates setting there is not known"}`,
  };
}

/**
 * Whether kube-proxy on a node follows `hints.forNodes` (PreferSameNode): feature gate PreferSameTrafficDistribution,
 * which pkg/proxy/topology.go `topologyModeFromHints` checks before the node hints. Alpha (off) in v1.33, beta (on by
 * default) in v1.34, GA and locked on in v1.35 (pkg/features/kube_features.go); absent before v1.33. The gate as
 * kube-proxy's configuration sets it (`featureGates`, `--feature-gates`) counts in v1.33–v1.34; without it, the
 * version's default, said so.
 * @param minor kube-proxy's minor version, when known.
 * @param versionFrom where `minor` was read.
 * @param gates kube-proxy's configured feature gates and their source; undefined when not configured or not read.
 * @param configRead whether kube-proxy's configuration was found in the bundle.
 * @returns on/off and why (one clause).
 */
export function preferSameNodeGate(
  minor: number | undefined,
  versionFrom: string | undefined,
  gates: { value: Record<string, boolean>; source: string } | undefined,
  configRead: boolean,
): { on: boolean; why: string } {
  const g = featureGate(SAME_NODE_GATE, minor, versionFrom, gates, configRead);
  if (g.absent) return { on: false, why: `${kubeProxyName(minor, versionFrom)} has no PreferSameNode (feature gate ${SAME_NODE_GATE} came in v1.33)` };
  return { on: g.on, why: g.why };
}

/**
 * The zone label and version of a Node object (kubeProxyVersion, else kubeletVersion). Without the Node object
 * (a bundle made with a namespace-scoped role), the zone is that of an EndpointSlice endpoint on this node (the
 * EndpointSlice controller copies the node's zone label into `endpoint.zone`), else unknown (`zoneUnknown`).
 * @param name the node's name.
 * @param node its Node object, when the bundle has it.
 * @param endpoints the Service's endpoints (for the zone of a node the bundle has no object of).
 * @param proxyConfig kube-proxy's configuration as read (proxy_config.ts), when in the bundle: its feature gates.
 */
export function topologyNode(
  name: string,
  node: Node | undefined,
  endpoints: readonly EndpointInfo[] = [],
  proxyConfig?: { featureGates?: { value: Record<string, boolean>; source: string } },
): TopologyNode {
  const out: TopologyNode = { name };
  const zone = node
    ? node.metadata.labels?.["topology.kubernetes.io/zone"]
    : endpoints.find((e) => isLocalEndpoint(e, name) && e.zoneSource === "endpoint" && e.zone)?.zone;
  if (zone) out.zone = zone;
  else if (!node) out.zoneUnknown = true;
  const version = kubeProxyMinor(node);
  if (version) {
    out.minor = version.minor;
    out.versionFrom = version.from;
  }
  out.sameNodeGate = preferSameNodeGate(out.minor, out.versionFrom, proxyConfig?.featureGates, proxyConfig !== undefined);
  if (proxyConfig?.featureGates) out.gates = proxyConfig.featureGates;
  out.configRead = proxyConfig !== undefined;
  return out;
}

/**
 * The minor version of kube-proxy on a node, as the Node object tells it: its status.nodeInfo.kubeProxyVersion, else
 * its kubeletVersion (kube-proxy's own version is not in the API; kubeProxyVersion is the kubelet's, deprecated, and no
 * longer written from v1.33: DisableNodeKubeProxyVersion).
 * @returns `minor` (`v1.29.3-eks-…` → 29) and `from`, the clause naming the version and the field it came from;
 *   undefined when neither field holds a `v1.N.` version (no Node object, a non-standard version string).
 */
export function kubeProxyMinor(node: Node | undefined): { minor: number; from: string } | undefined {
  const proxy = node?.status?.nodeInfo?.kubeProxyVersion;
  const v = proxy || node?.status?.nodeInfo?.kubeletVersion;
  const m = /^v?1\.(\d+)\./.exec(v ?? "");
  return m ? { minor: Number(m[1]), from: `${v}, the Node's ${proxy ? "kubeProxyVersion" : "kubeletVersion"}` } : undefined;
}

const TOPOLOGY_MODE = "service.kubernetes.io/topology-mode";
const TOPOLOGY_AWARE_HINTS = "service.kubernetes.io/topology-aware-hints";

const gateOf = (name: string, node: TopologyNode) => featureGate(name, node.minor, node.versionFrom, node.gates, node.configRead === true);

/**
 * Whether kube-proxy on `node` reads zone hints at all for this Service, and the clause saying why (see the module
 * comment): v1.33+ always (`topologyModeFromHints`); v1.30–v1.32 when feature gate ServiceTrafficDistribution is on,
 * whatever the annotations and TopologyAwareHints (pkg/proxy/topology.go canUseTopology, v1.30 tree: it returns false
 * only when neither gate is on, and reads the annotation only when ServiceTrafficDistribution is off: "Ignore value of
 * hintsAnnotation if the ServiceTrafficDistribution feature gate is enabled"); else when feature gate
 * TopologyAwareHints is on (v1.27–v1.32 `canUseTopology`; before v1.24 kube-proxy does not even watch its Node without
 * it, cmd/kube-proxy/app/server.go) and the Service's annotation says so.
 * @returns `follows`, and `why`: the clause saying why not, or what it rests on when it does (a gate's default, a
 *   configured gate), "" when nothing is worth saying.
 */
export function zoneHintsGate(annotations: Record<string, string>, node: TopologyNode): { follows: boolean; why: string } {
  const minor = node.minor;
  if (minor === undefined || minor >= 33) return { follows: true, why: "" };
  const kp = kubeProxyName(minor, node.versionFrom);
  const tah = gateOf("TopologyAwareHints", node);
  const std = gateOf("ServiceTrafficDistribution", node);
  if (!tah.on && !std.on) {
    return { follows: false, why: `${kp} does not follow topology hints: ${tah.why}${std.absent ? "" : `, and ${std.why}`}` };
  }
  if (std.on) return { follows: true, why: std.why };
  // the annotation decides; with ServiceTrafficDistribution off (v1.30–v1.32) say so: it is what drops that need
  const stdClause = std.absent ? "" : ` (${std.why}; with it on, kube-proxy follows the hints without the annotation)`;
  const tahClause = tah.why && !tah.why.includes("by default") ? ` (${tah.why})` : "";
  if (minor < 27) {
    const v = annotations[TOPOLOGY_AWARE_HINTS];
    if (v === "Auto" || v === "auto") return { follows: true, why: tahClause.slice(2, -1) };
    return {
      follows: false,
      why: v === undefined
        ? `${kp} follows them only with the annotation ${TOPOLOGY_AWARE_HINTS}: Auto, which the Service lacks${annotations[TOPOLOGY_MODE] !== undefined ? ` (${TOPOLOGY_MODE}, which it has, is read from v1.27)` : ""}`
        : `${kp} follows them only with ${TOPOLOGY_AWARE_HINTS}: Auto, and the Service has ${JSON.stringify(v)}`,
    };
  }
  // the deprecated annotation, when present at all, takes precedence over topology-mode
  const key = annotations[TOPOLOGY_AWARE_HINTS] !== undefined ? TOPOLOGY_AWARE_HINTS : TOPOLOGY_MODE;
  const v = annotations[key];
  if (v !== undefined && v !== "" && v !== "disabled" && v !== "Disabled") return { follows: true, why: tahClause.slice(2, -1) };
  return {
    follows: false,
    why: v === undefined
      ? `${kp} follows them only with the annotation ${TOPOLOGY_MODE}, which the Service lacks${stdClause}`
      : `${kp} follows them only when the annotation ${key} is set and not disabled, and the Service has ${JSON.stringify(v)}${key === TOPOLOGY_AWARE_HINTS && annotations[TOPOLOGY_MODE] !== undefined ? ` (it takes precedence over ${TOPOLOGY_MODE})` : ""}${stdClause}`,
  };
}

function fmt(ip: string, port: number): string {
  return ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/**
 * The topology mode kube-proxy on `node` uses for these endpoints (see the module comment).
 * @param withPort the Service's endpoints that have the ServicePort.
 * @param annotations the Service's annotations (before v1.31 they gate the hints).
 * @param gate whether kube-proxy reads the zone hints at all ({@link zoneHintsGate}; computed when not given).
 */
export function topologyMode(
  withPort: EndpointInfo[],
  annotations: Record<string, string>,
  node: TopologyNode,
  gate: { follows: boolean; why: string } = zoneHintsGate(annotations, node),
): { mode: TopologyMode; why: string; undetermined?: string } {
  const ready = withPort.filter((e) => e.ready);
  if (ready.length === 0) return { mode: "", why: "" };
  if (!gate.follows) {
    const hinted = ready.some((e) => (e.hintsForZones ?? []).length > 0);
    return { mode: "", why: hinted ? `the slices carry zone hints, but ${gate.why}: every endpoint is used` : "" };
  }
  const rests = gate.why ? ` (${gate.why})` : "";
  const sameNode = node.sameNodeGate ?? preferSameNodeGate(node.minor, node.versionFrom, node.gates, node.configRead === true);
  const forThisNode = ready.every((e) => (e.hintsForNodes ?? []).length > 0) && ready.some((e) => e.hintsForNodes!.includes(node.name));
  // the gate decides only where node hints would: say it there (it is a guess from the version where not configured)
  if (forThisNode && sameNode.on) return { mode: "PreferSameNode", why: `hints for node ${node.name}${sameNode.why ? ` (${sameNode.why})` : ""}` };
  const ignoredNodeHints = forThisNode ? `; the slices carry hints for node ${node.name}, not followed: ${sameNode.why}` : "";
  if (ready.every((e) => (e.hintsForZones ?? []).length > 0)) {
    if (node.zone !== undefined && ready.some((e) => e.hintsForZones!.includes(node.zone!))) return { mode: "PreferSameZone", why: `hints for zone ${node.zone}${rests}${ignoredNodeHints}` };
    if (node.zoneUnknown) {
      return { mode: "", why: "", undetermined: `the endpoints carry zone hints, and ${node.name}'s zone is not known (its Node object is not in the bundle, and no endpoint on it names a zone): which endpoints it uses cannot be told; collect with a role that can get nodes` };
    }
    return {
      mode: "",
      why: node.zone === undefined
        ? `the node has no topology.kubernetes.io/zone label: zone hints are ignored, every endpoint is used${ignoredNodeHints}`
        : `no endpoint is hinted for zone ${node.zone}: hints are ignored, every endpoint is used${ignoredNodeHints}`,
    };
  }
  const some = ready.some((e) => (e.hintsForZones ?? []).length > 0);
  return { mode: "", why: some ? `not every ready endpoint has a zone hint: hints are ignored, every endpoint is used${ignoredNodeHints}` : ignoredNodeHints.slice(2) };
}

/**
 * The minor release on the other side of v1.31 (where ServiceTrafficDistribution turned on by default, so kube-proxy
 * follows zone hints without the annotation) that kube-proxy on `node` may run, when its version is not its own: the
 * Node's `kubeProxyVersion` and `kubeletVersion` are both written by the kubelet (pkg/kubelet/nodestatus VersionInfo:
 * "kube-proxy might be different version from kubelet"), and kube-proxy "may be up to three minor versions older or
 * newer than the kubelet instance it runs alongside" (kubernetes.io version skew policy). Unknown version: v1.30.
 */
function otherSideOfV131(minor: number | undefined): number | undefined {
  if (minor === undefined) return 30;
  if (minor >= 31 && minor - 3 <= 30) return 30;
  if (minor >= 28 && minor <= 30) return 31;
  return undefined;
}

/**
 * The endpoints kube-proxy on `node` programs for a ServicePort (pkg/proxy/topology.go CategorizeEndpoints).
 * @param endpoints the Service's endpoints of one address family (resolve.ts; see the module comment).
 * @param key the ServicePort's portKey.
 * @param policy the traffic policy of the traffic in question (internalTrafficPolicy for ClusterIP traffic).
 * @param annotations the Service's annotations (they gate hints before v1.31).
 * @param node the node's name, zone, kube-proxy version and configured feature gates.
 * @returns the set and why; `alternative` when kube-proxy's version, not collected, decides between two sets.
 */
export function nodeEndpoints(
  endpoints: EndpointInfo[],
  key: string,
  policy: "Cluster" | "Local",
  annotations: Record<string, string>,
  node: TopologyNode,
): NodeEndpointSet {
  const set = endpointSet(endpoints, key, policy, annotations, node, zoneHintsGate(annotations, node));
  if (policy === "Local" || set.undetermined !== undefined) return set;
  // whether the zone hints are followed without the annotation turns on kube-proxy's version (v1.31), which the API
  // does not hold: when the other reading gives another set, both are kept and the note says what decides
  const otherMinor = otherSideOfV131(node.minor);
  if (otherMinor === undefined || node.gates?.["value"]["ServiceTrafficDistribution"] !== undefined) return set;
  const primary = zoneHintsGate(annotations, node);
  const other = zoneHintsGate(annotations, { ...node, minor: otherMinor, versionFrom: undefined });
  if (other.follows === primary.follows) return set;
  const alt = endpointSet(endpoints, key, policy, annotations, node, other);
  const same = alt.endpoints.length === set.endpoints.length && alt.endpoints.every((e) => set.endpoints.includes(e));
  if (same) return set;
  const read = node.minor === undefined ? "kube-proxy's version is not known (no Node object, or no status.nodeInfo)" : `the v1.${node.minor} read is ${node.versionFrom}, which the kubelet writes, and kube-proxy may run up to three minor versions from it`;
  const followsAt = primary.follows ? "v1.31 or later" : "before v1.31";
  const when = other.follows
    ? `kube-proxy v1.31+ (feature gate ServiceTrafficDistribution on by default) follows the zone hints without the annotation: ${alt.why}`
    : `kube-proxy before v1.31 follows the zone hints only with the annotation ${TOPOLOGY_MODE}, which the Service lacks: every endpoint is used`;
  set.alternative = { endpoints: alt.endpoints, when };
  set.why = `${set.why ? `${set.why}; ` : ""}this rests on kube-proxy being ${followsAt}: ${read}; ${when}`;
  return set;
}

function endpointSet(
  endpoints: EndpointInfo[],
  key: string,
  policy: "Cluster" | "Local",
  annotations: Record<string, string>,
  node: TopologyNode,
  gate: { follows: boolean; why: string },
): NodeEndpointSet {
  const withPort = endpoints.map((e) => ({ e, p: e.ports.find((p) => p.portKey === key) })).filter((x) => x.p !== undefined);
  const out = (list: typeof withPort) => list.map((x) => fmt(x.e.address, x.p!.port));
  // ProxyTerminatingEndpoints: the serving-terminating fallback (alpha v1.22, on by default from v1.26, GA v1.28);
  // before v1.24 (kubernetes#108691, KEP-1669 "All tests updated to cover all traffic policies (not just Local)")
  // only for a Local policy
  const pte = gateOf("ProxyTerminatingEndpoints", node);
  const fallback = pte.on && (policy === "Local" || node.minor === undefined || node.minor >= 24);
  const kp = kubeProxyName(node.minor, node.versionFrom);
  const noFallback = pte.on
    ? `${kp} falls back to serving-terminating endpoints only under a Local traffic policy (before v1.24)`
    : `${kp} does not fall back to serving-terminating endpoints (${pte.why})`;
  if (policy === "Local") {
    const local = withPort.filter((x) => isLocalEndpoint(x.e, node.name));
    const ready = local.filter((x) => x.e.ready);
    if (ready.length > 0 || local.length === 0) return { endpoints: out(ready), mode: "", ready: true, why: "" };
    if (!fallback) return { endpoints: [], mode: "", ready: true, why: local.some((x) => x.e.serving && x.e.terminating) ? `no ready endpoint on this node, and ${noFallback}` : "" };
    const st = local.filter((x) => x.e.serving && x.e.terminating);
    const rests = pte.why && node.minor !== undefined ? ` (${pte.why})` : "";
    return { endpoints: out(st), mode: "", ready: false, why: st.length > 0 ? `no ready endpoint on this node: its serving-terminating endpoints are used${rests}` : "" };
  }
  const { mode, why, undetermined } = topologyMode(withPort.map((x) => x.e), annotations, node, gate);
  const available = (e: EndpointInfo) =>
    mode === "" || (mode === "PreferSameNode" ? (e.hintsForNodes ?? []).includes(node.name) : (e.hintsForZones ?? []).includes(node.zone ?? ""));
  const ready = withPort.filter((x) => x.e.ready && available(x.e));
  if (ready.length > 0) {
    const total = withPort.filter((x) => x.e.ready).length;
    const set: NodeEndpointSet = { endpoints: out(ready), mode, ready: true, why: mode === "" ? why : `${why}: ${ready.length} of ${total} ready endpoints` };
    if (undetermined !== undefined) {
      set.undetermined = undetermined;
      set.why = undetermined;
    }
    return set;
  }
  const st = withPort.filter((x) => x.e.serving && x.e.terminating);
  if (!fallback) return { endpoints: [], mode: "", ready: true, why: st.length > 0 ? `no ready endpoint anywhere, and ${noFallback}` : why };
  const rests = pte.why && node.minor !== undefined ? ` (${pte.why})` : "";
  return { endpoints: out(st), mode: "", ready: false, why: st.length > 0 ? `no ready endpoint anywhere: the serving-terminating endpoints are used${rests}` : why };
}
