/**
 * Resolves a Service from the API objects of a bundle: its ports and policies, its endpoints from EndpointSlices
 * (ready / serving / terminating as discovery.k8s.io/v1 defines them), the pod and node behind each, and its zone.
 *
 * Zone of an endpoint, in order: EndpointSlice `endpoint.zone`; the node label `topology.kubernetes.io/zone`; the
 * deprecated `failure-domain.beta.kubernetes.io/zone` (what the EndpointSlice controller itself falls back to).
 *
 * Endpoints as kube-proxy reads them (pkg/proxy/endpointslicecache.go addEndpoints): the first address of each
 * endpoint only; slices labelled `service.kubernetes.io/headless` or `service.kubernetes.io/service-proxy-name` are
 * not seen (kube-proxy's informers select neither, cmd/kube-proxy/app/server.go); an address listed twice (an IP a
 * new pod reuses while the old pod's endpoint is still terminating) is the non-terminating one.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { BundleObjects } from "../bundle/bundle.ts";
import type { EndpointSlice, Node, Pod, Service } from "../model/k8s.ts";
import { NotFoundError } from "../model/errors.ts";
import type { EndpointInfo, ServicePortSummary, ServiceSummary, ZoneCount } from "./report.ts";
import { compareText } from "../model/order.ts";
import { canonicalAddress, isIPAddress, isIPv6 } from "../model/ip.ts";
import { BundleError } from "../bundle/decode.ts";

/** Label linking an EndpointSlice to its Service. */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";
/** GA zone label. */
export const ZONE_LABEL = "topology.kubernetes.io/zone";
/** Deprecated zone label still set by many clusters. */
export const BETA_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone";
/** Labels of EndpointSlices kube-proxy's informer leaves out (v1.IsHeadlessService, apis.LabelServiceProxyName). */
const UNWATCHED_SLICE_LABELS = ["service.kubernetes.io/headless", "service.kubernetes.io/service-proxy-name"];

/** The resolved Service with its endpoints. */
export interface ResolvedService {
  service: Service;
  summary: ServiceSummary;
  endpoints: EndpointInfo[];
  zones: ZoneCount[];
  slices: EndpointSlice[];
}

/**
 * The name kube-proxy puts in rule comments for a ServicePort: `ns/name:port`, or `ns/name` when the port has no
 * name (pkg/proxy ServicePortName.String()).
 */
export function portKey(namespace: string, name: string, portName: string | undefined): string {
  return portName ? `${namespace}/${name}:${portName}` : `${namespace}/${name}`;
}

/**
 * Finds a Service in the bundle.
 * @throws {NotFoundError} naming the namespaces where a Service of that name exists, if any.
 */
export function findService(objects: BundleObjects, namespace: string, name: string): Service {
  const svc = objects.services.find((s) => s.metadata.name === name && (s.metadata.namespace ?? "default") === namespace);
  if (svc) return svc;
  const elsewhere = objects.services.filter((s) => s.metadata.name === name).map((s) => s.metadata.namespace ?? "default");
  throw new NotFoundError("service", name, namespace, [...new Set(elsewhere)]);
}

/** Zone of a node from its labels, with the label it came from. */
export function nodeZone(node: Node | undefined): { zone: string; source: "node-label" | "node-beta-label" } | undefined {
  const labels = node?.metadata.labels ?? {};
  if (labels[ZONE_LABEL] !== undefined) return { zone: labels[ZONE_LABEL]!, source: "node-label" };
  if (labels[BETA_ZONE_LABEL] !== undefined) return { zone: labels[BETA_ZONE_LABEL]!, source: "node-beta-label" };
  return undefined;
}

/**
 * Summarises a Service object: ports with kube-proxy port keys, policies with their API defaults.
 */
export function summarizeService(svc: Service): ServiceSummary {
  const ns = svc.metadata.namespace ?? "default";
  const spec = svc.spec ?? {};
  const ports: ServicePortSummary[] = (spec.ports ?? []).map((p) => {
    const s: ServicePortSummary = {
      port: p.port,
      protocol: p.protocol ?? "TCP",
      portKey: portKey(ns, svc.metadata.name, p.name),
    };
    if (p.name) s.name = p.name;
    if (p.targetPort !== undefined) s.targetPort = p.targetPort;
    if (p.nodePort !== undefined) s.nodePort = p.nodePort;
    return s;
  });
  // IPv6 addresses in the canonical text the node's rules print (the API accepts other spellings): compared as text
  const clusterIPs = (spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : [])).map(canonicalAddress);
  const summary: ServiceSummary = {
    namespace: ns,
    name: svc.metadata.name,
    type: spec.type ?? "ClusterIP",
    clusterIPs: clusterIPs.filter((ip) => ip !== "None" && ip !== ""),
    ports,
    externalTrafficPolicy: spec.externalTrafficPolicy ?? "Cluster",
    internalTrafficPolicy: spec.internalTrafficPolicy ?? "Cluster",
    sessionAffinity: spec.sessionAffinity ?? "None",
    externalIPs: (spec.externalIPs ?? []).map(canonicalAddress),
    loadBalancerIngress: (svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip).filter((x): x is string => !!x).map(canonicalAddress),
    loadBalancerSourceRanges: spec.loadBalancerSourceRanges ?? [],
  };
  if (spec.selector) summary.selector = spec.selector;
  if (summary.sessionAffinity === "ClientIP") {
    summary.affinityTimeoutSeconds = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800;
  }
  if (spec.healthCheckNodePort !== undefined) summary.healthCheckNodePort = spec.healthCheckNodePort;
  if (spec.trafficDistribution) summary.trafficDistribution = spec.trafficDistribution;
  return summary;
}

/**
 * Resolves a Service: summary, endpoints (one per address and ports across slices, as kube-proxy keys them by
 * `IP:port`), zones.
 *
 * @param objects the bundle's API objects.
 * @param namespace the Service's namespace.
 * @param name the Service's name.
 * @returns the resolved Service.
 * @throws {NotFoundError} when the Service is not in the bundle.
 * @throws {BundleError} when the Service or one of its EndpointSlices holds a value no API server accepts
 *   ({@link checkValues}).
 */
export function resolveService(objects: BundleObjects, namespace: string, name: string): ResolvedService {
  const service = findService(objects, namespace, name);
  const slices = objects.endpointSlices.filter((s) =>
    (s.metadata.namespace ?? "default") === namespace && s.metadata.labels?.[SERVICE_NAME_LABEL] === name &&
    !UNWATCHED_SLICE_LABELS.some((l) => s.metadata.labels?.[l] !== undefined)
  );
  checkValues(service, slices);
  const summary = summarizeService(service);
  const nodes = new Map(objects.nodes.map((n) => [n.metadata.name, n]));
  const pods = new Map<string, Pod>();
  for (const p of objects.pods) pods.set(`${p.metadata.namespace ?? "default"}/${p.metadata.name}`, p);
  // Endpoints by address; one address may stand for several endpoints. kube-proxy keys a ServicePort's endpoints by
  // `IP:port` (endpointslicecache.go addEndpoints, endpointSet[endpointInfo.String()]): the same address in two slices
  // with different ports for one ServicePort (hostNetwork pods during a rollout that changes a named targetPort) is two
  // endpoints, both programmed. An endpoint merges into an earlier one of its address only where no port differs.
  const byAddress = new Map<string, EndpointInfo[]>();
  const order: EndpointInfo[] = [];
  for (const slice of slices) {
    if (slice.addressType === "FQDN") continue;
    const slicePorts: { portKey: string; port: number; protocol: string }[] = [];
    for (const sp of summary.ports) {
      const match = (slice.ports ?? []).find((p) => (p.name ?? "") === (sp.name ?? "") && (p.protocol ?? "TCP") === sp.protocol);
      if (match?.port !== undefined) slicePorts.push({ portKey: sp.portKey, port: match.port, protocol: sp.protocol });
    }
    for (const ep of slice.endpoints ?? []) {
      const cond = ep.conditions ?? {};
      // discovery.k8s.io/v1: nil ready means ready; serving defaults to ready; terminating defaults to false.
      const ready = cond.ready ?? true;
      // as kube-proxy reads them (pkg/proxy/endpointslicecache.go): serving unset is serving, whatever ready says
      const serving = cond.serving ?? true;
      const terminating = cond.terminating ?? false;
      // kube-proxy reads the first address of an endpoint only (addEndpoints: endpoint.Addresses[0])
      for (const written of ep.addresses.slice(0, 1)) {
        const address = canonicalAddress(written);
        const same = byAddress.get(address) ?? [];
        let info = same.find((i) => slicePorts.every((sp) => i.ports.every((x) => x.portKey !== sp.portKey || x.port === sp.port)));
        // the same IP:port twice: the endpoint that is not terminating wins (addEndpoints prefers the running pod
        // over a terminating one whose IP the pod network reused; before that change, either could)
        if (info && info.terminating && !terminating) {
          same.splice(same.indexOf(info), 1);
          order.splice(order.indexOf(info), 1);
          info = undefined;
        }
        if (!info) {
          info = { address, ports: [], ready, serving, terminating, slice: slice.metadata.name };
          const podName = ep.targetRef?.kind === "Pod" ? ep.targetRef.name : undefined;
          if (podName) info.pod = podName;
          const pod = podName ? pods.get(`${ep.targetRef?.namespace ?? namespace}/${podName}`) : undefined;
          const nodeName = ep.nodeName ?? pod?.spec?.nodeName;
          if (nodeName) info.node = nodeName;
          if (!ep.nodeName && nodeName) info.nodeFromPod = true;
          if (ep.zone) {
            info.zone = ep.zone;
            info.zoneSource = "endpoint";
          } else {
            const z = nodeZone(nodeName ? nodes.get(nodeName) : undefined);
            if (z) {
              info.zone = z.zone;
              info.zoneSource = z.source;
            }
          }
          if (ep.hints?.forZones) info.hintsForZones = ep.hints.forZones.map((z) => z.name);
          if (ep.hints?.forNodes) info.hintsForNodes = ep.hints.forNodes.map((z) => z.name);
          same.push(info);
          byAddress.set(address, same);
          order.push(info);
        }
        for (const sp of slicePorts) {
          if (!info.ports.some((x) => x.portKey === sp.portKey)) info.ports.push({ ...sp });
        }
      }
    }
  }
  const endpoints = order;
  // endpoints without a zone are counted under no `zone` key, as their own `zone` is absent (not a zone named so)
  const zoneMap = new Map<string | undefined, ZoneCount>();
  for (const e of endpoints) {
    const c = zoneMap.get(e.zone) ?? { ...(e.zone !== undefined ? { zone: e.zone } : {}), ready: 0, notReady: 0 };
    if (e.ready) c.ready++;
    else c.notReady++;
    zoneMap.set(e.zone, c);
  }
  const zoneKey = (z: ZoneCount) => z.zone ?? NO_ZONE;
  return { service, summary, endpoints, zones: [...zoneMap.values()].sort((a, b) => compareText(zoneKey(a), zoneKey(b))), slices };
}

/** How the text report names the endpoints without a zone (`ZoneCount` without `zone`); they sort as this text. */
export const NO_ZONE = "(no zone)";

const PROTOCOLS = new Set(["TCP", "UDP", "SCTP"]);
const isPort = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 65535;

/**
 * The values of the Service and its EndpointSlices that the analysis computes with, checked as the API server's
 * validation does (k8s.io/kubernetes pkg/apis/core/validation ValidateService, discovery/validation): ports 1–65535,
 * protocol TCP, UDP or SCTP, ClusterIPs and endpoint addresses IP addresses (`None` and "" for a headless or
 * ExternalName Service). The bundle's shape check (bundle/shape.ts) has checked their types; a value no API server
 * accepts comes from an edited or corrupt bundle, and an answer from it would be confident and wrong.
 * @throws {BundleError} naming the object, the field and the value.
 */
function checkValues(svc: Service, slices: EndpointSlice[]): void {
  const bad = (obj: string, field: string, value: unknown, want: string) =>
    new BundleError(`${obj}: ${field} is ${JSON.stringify(value)}: want ${want}; fix that object in the bundle, or export it again (kubectl get -o yaml)`);
  const ref = `Service ${svc.metadata.namespace ?? "default"}/${svc.metadata.name}`;
  for (const [i, p] of (svc.spec?.ports ?? []).entries()) {
    // 0 as well: kube-proxy's own unit tests program Services of port 0 (proxier_test.go TestEndpointSliceE2E), whose
    // dumps are fixtures here; the rules then say 0 too, so nothing is answered from a value the node does not hold
    if (!isPort(p.port) && p.port !== 0) throw bad(ref, `spec.ports[${i}].port`, p.port, "a port from 1 to 65535");
    if (p.protocol !== undefined && p.protocol !== null && !PROTOCOLS.has(p.protocol)) throw bad(ref, `spec.ports[${i}].protocol`, p.protocol, "TCP, UDP or SCTP");
    if (p.nodePort !== undefined && p.nodePort !== null && p.nodePort !== 0 && !isPort(p.nodePort)) throw bad(ref, `spec.ports[${i}].nodePort`, p.nodePort, "a port from 1 to 65535");
    if (typeof p.targetPort === "number" && !isPort(p.targetPort)) throw bad(ref, `spec.ports[${i}].targetPort`, p.targetPort, "a port from 1 to 65535, or a port name");
  }
  const ips = [svc.spec?.clusterIP, ...(svc.spec?.clusterIPs ?? [])];
  for (const ip of ips) {
    if (ip === undefined || ip === null || ip === "" || ip === "None") continue;
    if (!isIPAddress(ip)) throw bad(ref, "spec.clusterIP(s)", ip, "an IP address, or None");
  }
  for (const slice of slices) {
    const sref = `EndpointSlice ${slice.metadata.namespace ?? "default"}/${slice.metadata.name}`;
    for (const [i, p] of (slice.ports ?? []).entries()) {
      if (p.port !== undefined && p.port !== null && !isPort(p.port)) throw bad(sref, `ports[${i}].port`, p.port, "a port from 1 to 65535");
    }
    if (slice.addressType !== "IPv4" && slice.addressType !== "IPv6") continue;
    for (const [i, ep] of (slice.endpoints ?? []).entries()) {
      for (const a of ep.addresses ?? []) {
        if (!isIPAddress(a) || isIPv6(a) !== (slice.addressType === "IPv6")) throw bad(sref, `endpoints[${i}].addresses`, a, `an ${slice.addressType} address (addressType ${slice.addressType})`);
      }
    }
  }
}

/**
 * The endpoints kube-proxy uses for a port under a traffic policy, as pkg/proxy/topology.go CategorizeEndpoints:
 * ready endpoints; if none, serving-and-terminating ones. For `Local`, only endpoints on `node`.
 *
 * @returns endpoint `IP:PORT` strings.
 */
export function usableEndpoints(
  endpoints: EndpointInfo[],
  key: string,
  policy: "Cluster" | "Local",
  node: string,
): string[] {
  const withPort = endpoints
    .filter((e) => policy === "Cluster" || isLocalEndpoint(e, node))
    .map((e) => ({ e, p: e.ports.find((p) => p.portKey === key) }))
    .filter((x) => x.p !== undefined);
  const ready = withPort.filter((x) => x.e.ready);
  const chosen = ready.length > 0 ? ready : withPort.filter((x) => x.e.serving && x.e.terminating);
  return chosen.map((x) => fmt(x.e.address, x.p!.port));
}

/**
 * Whether kube-proxy on `node` counts an endpoint local (endpointslicecache.go addEndpoints: the EndpointSlice's
 * `nodeName` is this node's; the pod's node does not count when the slice names none).
 */
export function isLocalEndpoint(e: EndpointInfo, node: string): boolean {
  return e.node === node && !e.nodeFromPod;
}

function fmt(ip: string, port: number): string {
  return ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
}
