/**
 * Which endpoints kube-proxy on one node programs for a ServicePort: topology-aware routing (EndpointSlice hints,
 * filled by the EndpointSlice controller for `spec.trafficDistribution` and the `service.kubernetes.io/topology-mode`
 * annotation) and the ready → serving-terminating fallback, as kube-proxy's pkg/proxy/topology.go
 * `CategorizeEndpoints` decides them, per kube-proxy version:
 * - v1.33+ (`topologyModeFromHints`): the hints alone decide. Same-node (`hints.forNodes`, PreferSameNode) when every
 *   ready endpoint has a node hint and one names this node — only with feature gate PreferSameTrafficDistribution,
 *   alpha (off) in v1.33, on by default from v1.34 (GA v1.35); else same-zone (`hints.forZones`) when every ready
 *   endpoint has a zone hint and one names the node's `topology.kubernetes.io/zone`; else every endpoint.
 * - v1.31–v1.32: zone hints alone decide (ServiceTrafficDistribution on by default from v1.31 makes kube-proxy
 *   follow hints without the annotation).
 * - before v1.31 (`canUseTopology`): zone hints are followed only when the Service carries the annotation
 *   `service.kubernetes.io/topology-mode` (v1.27+) or `service.kubernetes.io/topology-aware-hints`, neither empty nor
 *   `disabled`/`Disabled`.
 * The node's kubeProxyVersion (else kubeletVersion) stands for kube-proxy's; unknown → the current rules.
 * The usable set is the ready endpoints available for the topology; when none, every serving-and-terminating
 * endpoint (topology ignored). Under a Local traffic policy: this node's ready endpoints, else its serving-terminating
 * ones.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Node } from "../model/k8s.ts";
import type { EndpointInfo } from "./report.ts";

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
}

/** The facts of the node that topology depends on. */
export interface TopologyNode {
  name: string;
  /** The node's `topology.kubernetes.io/zone` label. */
  zone?: string;
  /** kube-proxy's minor version (1.x), when known. */
  minor?: number;
}

/** The zone label and version of a Node object (kubeProxyVersion, else kubeletVersion). */
export function topologyNode(name: string, node: Node | undefined): TopologyNode {
  const out: TopologyNode = { name };
  const zone = node?.metadata.labels?.["topology.kubernetes.io/zone"];
  if (zone) out.zone = zone;
  const v = node?.status?.nodeInfo?.kubeProxyVersion || node?.status?.nodeInfo?.kubeletVersion;
  const m = /^v?1\.(\d+)\./.exec(v ?? "");
  if (m) out.minor = Number(m[1]);
  return out;
}

const ANNOTATIONS = ["service.kubernetes.io/topology-mode", "service.kubernetes.io/topology-aware-hints"];

function fmt(ip: string, port: number): string {
  return ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/**
 * The topology mode kube-proxy on `node` uses for these endpoints (see the module comment).
 * @param withPort the Service's endpoints that have the ServicePort.
 * @param annotations the Service's annotations (before v1.31 they gate the hints).
 */
export function topologyMode(withPort: EndpointInfo[], annotations: Record<string, string>, node: TopologyNode): { mode: TopologyMode; why: string } {
  const ready = withPort.filter((e) => e.ready);
  if (ready.length === 0) return { mode: "", why: "" };
  if (node.minor !== undefined && node.minor < 31) {
    const a = ANNOTATIONS.map((k) => annotations[k]).find((v) => v !== undefined);
    if (a === undefined || a === "" || a === "disabled" || a === "Disabled") {
      const hinted = ready.some((e) => (e.hintsForZones ?? []).length > 0);
      return { mode: "", why: hinted ? `the slices carry zone hints, but kube-proxy v1.${node.minor} follows them only with the annotation service.kubernetes.io/topology-mode, which the Service lacks: every endpoint is used` : "" };
    }
  }
  const nodeHints = node.minor === undefined || node.minor >= 34;
  if (nodeHints && ready.every((e) => (e.hintsForNodes ?? []).length > 0)) {
    if (ready.some((e) => e.hintsForNodes!.includes(node.name))) return { mode: "PreferSameNode", why: `hints for node ${node.name}` };
  }
  if (ready.every((e) => (e.hintsForZones ?? []).length > 0)) {
    if (node.zone !== undefined && ready.some((e) => e.hintsForZones!.includes(node.zone!))) return { mode: "PreferSameZone", why: `hints for zone ${node.zone}` };
    return {
      mode: "",
      why: node.zone === undefined
        ? "the node has no topology.kubernetes.io/zone label: zone hints are ignored, every endpoint is used"
        : `no endpoint is hinted for zone ${node.zone}: hints are ignored, every endpoint is used`,
    };
  }
  const some = ready.some((e) => (e.hintsForZones ?? []).length > 0);
  return { mode: "", why: some ? "not every ready endpoint has a zone hint: hints are ignored, every endpoint is used" : "" };
}

/**
 * The endpoints kube-proxy on `node` programs for a ServicePort (pkg/proxy/topology.go CategorizeEndpoints).
 * @param endpoints the Service's endpoints (resolve.ts).
 * @param key the ServicePort's portKey.
 * @param policy the traffic policy of the traffic in question (internalTrafficPolicy for ClusterIP traffic).
 * @param annotations the Service's annotations (they gate hints before v1.31).
 * @param node the node's name, zone and kube-proxy version.
 * @returns the set and why.
 */
export function nodeEndpoints(
  endpoints: EndpointInfo[],
  key: string,
  policy: "Cluster" | "Local",
  annotations: Record<string, string>,
  node: TopologyNode,
): NodeEndpointSet {
  const withPort = endpoints.map((e) => ({ e, p: e.ports.find((p) => p.portKey === key) })).filter((x) => x.p !== undefined);
  const out = (list: typeof withPort) => list.map((x) => fmt(x.e.address, x.p!.port));
  if (policy === "Local") {
    const local = withPort.filter((x) => x.e.node === node.name);
    const ready = local.filter((x) => x.e.ready);
    if (ready.length > 0 || local.length === 0) return { endpoints: out(ready), mode: "", ready: true, why: "" };
    const st = local.filter((x) => x.e.serving && x.e.terminating);
    return { endpoints: out(st), mode: "", ready: false, why: st.length > 0 ? "no ready endpoint on this node: its serving-terminating endpoints are used" : "" };
  }
  const { mode, why } = topologyMode(withPort.map((x) => x.e), annotations, node);
  const available = (e: EndpointInfo) =>
    mode === "" || (mode === "PreferSameNode" ? (e.hintsForNodes ?? []).includes(node.name) : (e.hintsForZones ?? []).includes(node.zone ?? ""));
  const ready = withPort.filter((x) => x.e.ready && available(x.e));
  if (ready.length > 0) {
    const total = withPort.filter((x) => x.e.ready).length;
    return { endpoints: out(ready), mode, ready: true, why: mode === "" ? why : `${why}: ${ready.length} of ${total} ready endpoints` };
  }
  const st = withPort.filter((x) => x.e.serving && x.e.terminating);
  return { endpoints: out(st), mode: "", ready: false, why: st.length > 0 ? "no ready endpoint anywhere: the serving-terminating endpoints are used" : why };
}
