/**
 * Edge: reads from the API exactly what one question needs, never more (architecture.md, "API use"). For
 * `svc/NAME`:
 * 1. get the Service (on 404: one list of Services named NAME across namespaces, to say `use -n OTHER`);
 * 2. list its EndpointSlices by label `kubernetes.io/service-name=NAME` (paginated);
 * 3. get each Pod the endpoints reference (or, past {@link POD_GET_LIMIT}, list the Service's selector, paginated);
 * 4. get each Node that hosts an endpoint or was asked for (`--node`, `--from-pod`), or list all with `--all-nodes`;
 *    a packet to an address that is none of the Service's, of those Nodes or of the endpoints (`--dest` at another
 *    node, e.g. its NodePort) lists the Nodes once more to find the one it belongs to, and keeps only that one;
 * 5. get the kube-system/kube-proxy DaemonSet (only its containers' command/args/volumeMounts and ConfigMap volumes
 *    are kept) and the ConfigMap of its `--config` file, else kube-system/kube-proxy, else kube-system/kube-proxy-config
 *    (EKS) (403/404: noted, not fatal).
 * The number of requests depends on the Service (its endpoints) and the flags, never on the size of the cluster,
 * except with `--all-nodes`, whose answer is about every node, and the list (pages of 500) that finds a `--dest`'s node.
 *
 * For `pvc/NAME` and `pod/NAME` (`--why-pending`): the claim or pod, the claims a pod mounts, their PVs and
 * StorageClasses, all Nodes (placement is a question about every node), all PVs (a claim may bind any), and the
 * Events of the object.
 * @module
 */
import { pushAll } from "../model/arrays.ts";
import type { BundleObjects } from "../bundle/bundle.ts";
import { emptyObjects, PODS_NOT_LISTED_WARNING } from "../bundle/bundle.ts";
import { NotFoundError } from "../model/errors.ts";
import { compareCollated } from "../model/order.ts";
import type { ConfigMap, CSIDriver, CSINode, CSIStorageCapacity, DaemonSet, DaemonSetContainer, EndpointSlice, KubeEvent, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, ResourceClaim, Service, StorageClass, VolumeAttributesClass, PodGroup, Workload } from "../model/k8s.ts";
import { gangMembers, gangPodsNotListedWarning, workloadApiNotServedWarning, workloadNotFoundWarning, workloadsForbiddenWarning } from "../pending/gang.ts";
import { podGroupApiNotServedWarning, podGroupMembers, podGroupNotFoundWarning, podGroupsForbiddenWarning } from "../pending/pod_group.ts";
import { KubeApiError } from "./errors.ts";
import { mapLimit } from "./pool.ts";
import { type KubeRest, R } from "./rest.ts";
import { sanitizeObject } from "./sanitize.ts";
import { isEmptySelector } from "../model/label_selector.ts";
import { kubeProxyConfigFile } from "../service/proxy_config.ts";
import { fromPodRef, podAddresses } from "../service/from_pod.ts";
import { nodeOfAddress } from "../service/packet_answer.ts";
import { canonicalAddress } from "../model/ip.ts";

/** Above this many referenced pods, list by the Service's selector instead of one GET per pod. */
export const POD_GET_LIMIT = 50;

/** Parallel GETs in flight during the API phase. */
const API_PARALLEL = 8;

/** The question, for the API phase of `svc/NAME`. */
export interface ServiceQuestion {
  namespace: string;
  service: string;
  /** `--node` (repeatable). */
  nodes?: string[];
  /** `--all-nodes`. */
  allNodes?: boolean;
  /** `--from-pod` (`NAME` or `pod/NAME`, in `namespace`). */
  fromPod?: string;
  /**
   * The packet's destination address (`--dest`): when it is an address of a Node (status.addresses) other than those
   * collected, that Node is read and, unless `nodes` chose them, collected too (its rules handle the packet: the
   * source's node takes a NodePort only at its own addresses).
   */
  dest?: string;
  /**
   * Objects only (`--no-exec`, `--dry-run`): when Node objects may not be read (403, e.g. a namespace-scoped Role),
   * answer without them and say so, instead of failing. @default false
   */
  apiOnly?: boolean;
}

/** The client pod of `--from-pod`. */
export interface FromPod {
  name: string;
  namespace: string;
  /** status.podIP. */
  ip: string;
  /** Every address of the pod (status.podIPs: one per family on a dual-stack pod), podIP first. */
  ips: string[];
  node: string;
}

/** What the API phase found. */
export interface ServiceObjects {
  objects: BundleObjects;
  /** Nodes to collect from, in order (sorted by name unless chosen with --node; a `--dest`'s node last). */
  nodes: string[];
  /** Problems worth telling (unreadable ConfigMap, vanished pods): reported, never fatal. */
  warnings: string[];
  fromPod?: FromPod;
}

/** A `--node` / `--from-pod` that names nothing: a usage problem with a precise message. */
export class TargetNotFoundError extends NotFoundError {}

/** A `--from-pod` that cannot be a client yet (not scheduled, no IP). */
export class TargetStateError extends Error {
  override name = "TargetStateError";
}

function byName<T extends { metadata: { name: string } }>(a: T, b: T): number {
  return compareCollated(a.metadata.name, b.metadata.name);
}

async function serviceOrHint(rest: KubeRest, namespace: string, name: string): Promise<Service> {
  const svc = await rest.getOptional<Service>(R.services(namespace, name));
  if (svc) return svc;
  let elsewhere: string[] = [];
  try {
    const all = await rest.list<Service>({ group: "", version: "v1", resource: "services" }, { fieldSelector: `metadata.name=${name}` }, 500, 500);
    elsewhere = [...new Set(all.items.map((s) => s.metadata.namespace ?? ""))].filter((n) => n !== "" && n !== namespace).sort();
  } catch (e) {
    if (!(e instanceof KubeApiError)) throw e; // listing services cluster-wide may be forbidden: no hint then
  }
  throw new NotFoundError("service", name, namespace, elsewhere);
}

async function getNodes(rest: KubeRest, names: string[], explicit: Set<string>, warnings: string[], apiOnly = false): Promise<Node[]> {
  let got: (Node | undefined)[];
  try {
    got = await mapLimit(names, API_PARALLEL, (n) => rest.getOptional<Node>(R.nodes(n)));
  } catch (e) {
    if (!apiOnly || !(e instanceof KubeApiError) || e.status !== 403 || names.length === 0) throw e;
    warnings.push(
      `node objects could not be read (403 Forbidden: RBAC must grant get on nodes, which are cluster-scoped, e.g. with a ClusterRole): ` +
        `the report has no node zones, addresses or readiness for ${names.join(", ")}; the endpoints and the Service are complete`,
    );
    return [];
  }
  const out: Node[] = [];
  got.forEach((node, i) => {
    const n = names[i]!;
    if (node) out.push({ apiVersion: "v1", kind: "Node", ...node });
    else if (explicit.has(n)) throw new TargetNotFoundError("node", n);
    else warnings.push(`node ${n} (named by an endpoint) no longer exists`);
  });
  return out;
}

/**
 * The kube-system/kube-proxy DaemonSet, keeping only what says where kube-proxy's configuration comes from: each
 * container's name, command, args and the mounts of ConfigMap volumes, and those volumes (no env, image, hostPath
 * volume, or anything else).
 */
export function stripDaemonSet(ds: DaemonSet): DaemonSet {
  const spec = ds.spec?.template?.spec;
  const configMapVolumes = new Set((spec?.volumes ?? []).filter((v) => v.configMap?.name).map((v) => v.name));
  const containers = (spec?.containers ?? []).map((c) => {
    const out: DaemonSetContainer = { name: c.name };
    if (c.command) out.command = [...c.command];
    if (c.args) out.args = [...c.args];
    const mounts = (c.volumeMounts ?? []).filter((m) => configMapVolumes.has(m.name));
    if (mounts.length > 0) out.volumeMounts = mounts.map((m) => ({ name: m.name, mountPath: m.mountPath, ...(m.subPath ? { subPath: m.subPath } : {}) }));
    return out;
  });
  const volumes = (spec?.volumes ?? []).filter((v) => v.configMap?.name).map((v) => ({ name: v.name, configMap: { name: v.configMap!.name! } }));
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: ds.metadata.name, namespace: ds.metadata.namespace ?? "kube-system" },
    spec: { template: { spec: { containers, volumes } } },
  };
}

/**
 * kube-proxy's configuration: one GET of the kube-system/kube-proxy DaemonSet (stripped by {@link stripDaemonSet}; when
 * there is none, one list of the cluster's DaemonSets (kube-system's when RBAC allows no more), names only, to name
 * the agent that serves Services instead),
 * then the ConfigMap its `--config` file is mounted from, else kube-system/kube-proxy (kubeadm), else
 * kube-system/kube-proxy-config (EKS): at most three GETs. 403/404 are noted, not fatal.
 */
async function kubeProxyConfig(rest: KubeRest, warnings: string[]): Promise<{ configMaps: ConfigMap[]; daemonSets: DaemonSet[] }> {
  const daemonSets: DaemonSet[] = [];
  try {
    const ds = await rest.getOptional<DaemonSet>(R.daemonSets("kube-system", "kube-proxy"));
    if (ds) daemonSets.push(stripDaemonSet(ds));
    else {
      // No kube-proxy DaemonSet: which agent serves Services instead (Cilium, anetd, calico-node, …)? One list of the
      // cluster's DaemonSets (the agents live in kube-system, calico-system, ovn-kubernetes, …), of which only names and
      // namespaces are kept (src/service/service_datapath.ts reads them); kube-system's alone when RBAC allows no more.
      const all = await rest.list<DaemonSet>(R.allDaemonSets()).catch((e: unknown) => {
        if (e instanceof KubeApiError && e.status === 403) return rest.list<DaemonSet>(R.daemonSets("kube-system"));
        throw e;
      });
      for (const d of all.items) daemonSets.push({ apiVersion: "apps/v1", kind: "DaemonSet", metadata: { name: d.metadata.name, namespace: d.metadata.namespace ?? "kube-system" }, spec: { template: { spec: { containers: [] } } } });
    }
  } catch (e) {
    if (!(e instanceof KubeApiError && e.status === 403)) throw e;
    warnings.push("the kube-system/kube-proxy DaemonSet is not readable (403 Forbidden): kube-proxy's flags are not known");
  }
  // The ConfigMap of the DaemonSet's --config file; else kubeadm's name, then EKS's (its kube-proxy ConfigMap holds a
  // kubeconfig, the KubeProxyConfiguration is in kube-proxy-config).
  const file = daemonSets[0] ? kubeProxyConfigFile(daemonSets[0]) : undefined;
  const candidates = file ? [file.configMap] : ["kube-proxy", "kube-proxy-config"];
  const configMaps: ConfigMap[] = [];
  for (const name of candidates) {
    try {
      const cm = await rest.getOptional<ConfigMap>(R.configMaps("kube-system", name));
      if (!cm) continue;
      configMaps.push({ apiVersion: "v1", kind: "ConfigMap", ...cm });
      if (file || Object.values(cm.data ?? {}).some((v) => /kind:\s*KubeProxyConfiguration|^mode:/m.test(v))) break;
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 403) {
        warnings.push(`the kube-system/${name} ConfigMap is not readable (403 Forbidden): proxy mode from the nodes only`);
        return { configMaps, daemonSets };
      }
      throw e;
    }
  }
  if (configMaps.length > 0) return { configMaps, daemonSets };
  if (daemonSets.length === 0) warnings.push("no kube-system/kube-proxy ConfigMap (not a kubeadm-style cluster): proxy mode from the nodes only");
  else if (file) warnings.push(`the kube-system/${file.configMap} ConfigMap the kube-proxy DaemonSet mounts as --config ${file.path} does not exist: kube-proxy's configuration is not known`);
  return { configMaps: [], daemonSets };
}

function selectorString(sel: Record<string, string> | undefined): string | undefined {
  if (!sel || Object.keys(sel).length === 0) return undefined;
  return Object.entries(sel).map(([k, v]) => `${k}=${v}`).join(",");
}

/**
 * Reads the objects for `svc/NAME` (see the module comment for the exact requests).
 * @param rest the REST client.
 * @param q the question.
 * @returns objects (sanitized), nodes to collect, warnings.
 * @throws {NotFoundError} the Service does not exist (with the namespaces where it does).
 * @throws {TargetNotFoundError} a `--node` or `--from-pod` that does not exist.
 * @throws {TargetStateError} a `--from-pod` that is not scheduled or has no IP yet.
 * @throws {KubeApiError} / {ApiUnreachableError} for other API failures.
 */
export async function gatherServiceObjects(rest: KubeRest, q: ServiceQuestion): Promise<ServiceObjects> {
  const warnings: string[] = [];
  const objects = emptyObjects();
  const svc = await serviceOrHint(rest, q.namespace, q.service);
  objects.services.push(sanitizeObject({ apiVersion: "v1", kind: "Service", ...svc }));

  const slices = await rest.list<EndpointSlice>(R.endpointSlices(q.namespace), { labelSelector: `kubernetes.io/service-name=${q.service}` });
  pushAll(objects.endpointSlices, slices.items.map((s) => sanitizeObject(s)).sort(byName));

  // Pods referenced by endpoints (targetRef kind Pod), in the slices' namespace.
  const podNames = new Set<string>();
  const endpointNodes = new Set<string>();
  for (const s of slices.items) {
    for (const ep of s.endpoints ?? []) {
      if (ep.targetRef?.kind === "Pod" && ep.targetRef.name) podNames.add(ep.targetRef.name);
      if (ep.nodeName) endpointNodes.add(ep.nodeName);
    }
  }
  let pods: Pod[];
  const selector = selectorString(svc.spec.selector);
  if (podNames.size > POD_GET_LIMIT && selector !== undefined) {
    const listed = await rest.list<Pod>(R.pods(q.namespace), { labelSelector: selector });
    pods = listed.items.filter((p) => podNames.has(p.metadata.name));
  } else {
    const names = [...podNames].sort();
    const got = await mapLimit(names, API_PARALLEL, (n) => rest.getOptional<Pod>(R.pods(q.namespace, n)));
    pods = [];
    got.forEach((p, i) => {
      if (p) pods.push({ apiVersion: "v1", kind: "Pod", ...p });
      else warnings.push(`pod ${q.namespace}/${names[i]} (an endpoint of the Service) no longer exists`);
    });
  }
  for (const p of pods) if (p.spec?.nodeName) endpointNodes.add(p.spec.nodeName);

  // No ready endpoint: the Pods that tell why (src/service/endpoint_diagnosis.ts) — those the selector matches, else the
  // namespace's Pods (their labels show which selector was meant), and the readiness Events of matching Pods that are
  // not Ready. At most three more requests, each capped at 100 items; a refusal is a warning, not a failure.
  const readyEndpoints = slices.items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).length;
  if (selector !== undefined && readyEndpoints === 0) {
    try {
      let listed = (await rest.list<Pod>(R.pods(q.namespace), { labelSelector: selector }, 100, 100)).items;
      const matched = listed.length > 0;
      if (!matched) listed = (await rest.list<Pod>(R.pods(q.namespace), {}, 100, 100)).items;
      for (const p of listed) if (!pods.some((x) => x.metadata.name === p.metadata.name)) pods.push({ apiVersion: "v1", kind: "Pod", ...p });
      const notReady = matched ? listed.filter((p) => !p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) : [];
      if (notReady.length > 0) {
        const names = new Set(notReady.map((p) => p.metadata.name));
        const events = await rest.list<KubeEvent>(R.events(q.namespace), { fieldSelector: "involvedObject.kind=Pod,reason=Unhealthy" }, 100, 100);
        pushAll(objects.events, events.items.filter((e) => names.has(e.involvedObject?.name ?? "")).map((e) => sanitizeObject({ apiVersion: "v1", kind: "Event", ...e })));
      }
    } catch (e) {
      if (!(e instanceof KubeApiError)) throw e;
      warnings.push(`the Service has no ready endpoint, and the Pods that would say why could not be listed: ${e.message}`);
    }
  }

  let fromPod: FromPod | undefined;
  if (q.fromPod !== undefined) {
    const { namespace: podNamespace, name } = fromPodRef(q.fromPod, q.namespace);
    const p = await rest.getOptional<Pod>(R.pods(podNamespace, name));
    if (!p) throw new TargetNotFoundError("pod", name, podNamespace);
    if (!p.spec?.nodeName) throw new TargetStateError(`--from-pod ${name}: the pod is not scheduled to a node yet (phase ${p.status?.phase ?? "unknown"})`);
    const ip = p.status?.podIP;
    if (!ip) throw new TargetStateError(`--from-pod ${name}: the pod has no IP address yet (phase ${p.status?.phase ?? "unknown"})`);
    fromPod = { name, namespace: podNamespace, ip, ips: podAddresses(p), node: p.spec.nodeName };
    if (!pods.some((x) => x.metadata.name === name)) pods.push({ apiVersion: "v1", kind: "Pod", ...p });
  }
  pushAll(objects.pods, pods.map((p) => sanitizeObject(p)).sort(byName));

  let collect: string[];
  if (q.allNodes) {
    const all = await rest.list<Node>(R.nodes());
    pushAll(objects.nodes, all.items.map((n) => sanitizeObject(n)).sort(byName));
    collect = objects.nodes.map((n) => n.metadata.name);
  } else {
    const explicit = new Set(q.nodes ?? []);
    if (fromPod) explicit.add(fromPod.node);
    const wanted = [...new Set([...endpointNodes, ...explicit])].sort();
    pushAll(objects.nodes, (await getNodes(rest, wanted, explicit, warnings, q.apiOnly === true)).map((n) => sanitizeObject(n)).sort(byName));
    const present = new Set(objects.nodes.map((n) => n.metadata.name));
    collect = q.nodes ? [...q.nodes] : fromPod ? [fromPod.node] : [...endpointNodes].filter((n) => present.has(n)).sort();
  }
  // A packet to another node's address (its NodePort): the source's node routes it out unchanged, as kube-proxy takes a
  // NodePort only for packets addressed to the node itself (pkg/proxy/iptables/proxier.go syncProxyRules, the
  // "kubernetes service nodeports" rule `-m addrtype --dst-type LOCAL`; nftables `fib daddr type local`,
  // pkg/proxy/nftables/proxier.go), and that node's rules translate it: its Node is read, and it is collected after
  // the others (unless --node chose them), so the report answers on both.
  // (Nodes already refused under --no-exec: not asked again)
  if (q.dest !== undefined && !warnings.some((w) => w.startsWith("node objects could not be read"))) {
    const there = await destinationNode(rest, svc, slices.items, pods, objects.nodes, q.dest, warnings);
    if (there && !objects.nodes.some((n) => n.metadata.name === there.metadata.name)) {
      objects.nodes.push(sanitizeObject(there));
      objects.nodes.sort(byName);
    }
    if (there && !q.nodes && !q.allNodes && collect.length > 0 && !collect.includes(there.metadata.name)) collect.push(there.metadata.name);
  }
  if (collect.length === 0) {
    const unread = [...endpointNodes].sort();
    warnings.push(
      unread.length > 0 && !q.allNodes && !q.nodes
        ? `the nodes of Service ${q.namespace}/${q.service}'s endpoints (${unread.join(", ")}) could not be read (see above), so no node was chosen: pass --node NAME to see a node's rules`
        : `Service ${q.namespace}/${q.service} has no endpoint on any node, so no node was chosen: pass --node NAME to see a node's rules`,
    );
  }
  const proxyConfig = await kubeProxyConfig(rest, warnings);
  pushAll(objects.configMaps, proxyConfig.configMaps);
  pushAll(objects.daemonSets, proxyConfig.daemonSets);
  const out: ServiceObjects = { objects, nodes: collect, warnings };
  if (fromPod) out.fromPod = fromPod;
  return out;
}

/**
 * The Node a packet's destination is an address of (status.addresses, {@link nodeOfAddress}): among the Nodes read,
 * else one list of the cluster's Nodes (pages of 500), made only when the destination is none of the Service's
 * addresses (ClusterIPs, externalIPs, load-balancer ingress), of its endpoints or of their pods. A 403 on that list
 * is a warning: the answers then cannot say whose address it is.
 * @param read the Nodes already read.
 * @returns the Node, or undefined when no Node lists the address (or the list was refused).
 * @throws {KubeApiError} for failures other than 403.
 */
async function destinationNode(rest: KubeRest, svc: Service, slices: EndpointSlice[], pods: Pod[], read: Node[], dest: string, warnings: string[]): Promise<Node | undefined> {
  const known = read.find((n) => n.metadata.name === nodeOfAddress(read, dest));
  if (known) return known;
  const wanted = canonicalAddress(dest);
  const taken = [
    ...(svc.spec.clusterIPs ?? (svc.spec.clusterIP ? [svc.spec.clusterIP] : [])),
    ...(svc.spec.externalIPs ?? []),
    ...(svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? ""),
    ...slices.flatMap((s) => (s.endpoints ?? []).flatMap((e) => e.addresses ?? [])),
    ...pods.flatMap((p) => podAddresses(p)),
  ];
  if (taken.some((a) => a !== "" && canonicalAddress(a) === wanted)) return undefined;
  try {
    const all = await rest.list<Node>(R.nodes());
    const name = nodeOfAddress(all.items, dest);
    const found = all.items.find((n) => n.metadata.name === name);
    return found ? { apiVersion: "v1", kind: "Node", ...found } : undefined;
  } catch (e) {
    if (!(e instanceof KubeApiError && e.status === 403)) throw e;
    warnings.push(`list nodes is forbidden (403): whether --dest ${dest} is an address of a node (whose rules would handle the packet) is not known`);
    return undefined;
  }
}

/** Whether the cluster-wide pod list was forbidden ({@link PODS_NOT_LISTED_WARNING}). */
function podsNotListed(warnings: readonly string[]): boolean {
  return warnings.includes(PODS_NOT_LISTED_WARNING);
}

/**
 * The non-terminal pods of one namespace, for a gang's count when the cluster-wide list was forbidden; a 403 here too
 * leaves {@link gangPodsNotListedWarning} (the analysis then says the count is unknown).
 */
async function namespacePods(rest: KubeRest, namespace: string, warnings: string[]): Promise<Pod[]> {
  try {
    return (await rest.list<Pod>(R.pods(namespace), { fieldSelector: "status.phase!=Succeeded,status.phase!=Failed" })).items;
  } catch (e) {
    if (!(e instanceof KubeApiError && e.status === 403)) throw e;
    warnings.push(gangPodsNotListedWarning(namespace));
    return [];
  }
}

/**
 * The Workloads (scheduling.k8s.io/v1alpha1, v1.35 alpha) the pods' workloadRefs name: one list of the namespace's
 * Workloads. A 404 means the API is not served (a list of a served resource never answers 404), a 403 that RBAC
 * forbids it: each is a warning the analysis states ({@link workloadApiNotServedWarning},
 * {@link workloadsForbiddenWarning}), never a failure; a named Workload not in the list leaves
 * {@link workloadNotFoundWarning}.
 * @param names the Workloads named (duplicates allowed).
 * @returns the named Workloads found, reduced by the allow-list later (sanitizeObject).
 */
async function gatherWorkloads(rest: KubeRest, namespace: string, names: readonly string[], warnings: string[]): Promise<Workload[]> {
  let listed: Workload[];
  try {
    listed = (await rest.list<Workload>(R.workloads(namespace))).items;
  } catch (e) {
    if (!(e instanceof KubeApiError) || (e.status !== 404 && e.status !== 403)) throw e;
    warnings.push(e.status === 404 ? workloadApiNotServedWarning(namespace, e.serverMessage) : workloadsForbiddenWarning(namespace, e.serverMessage));
    return [];
  }
  const wanted = [...new Set(names)].sort();
  for (const n of wanted) if (!listed.some((w) => w.metadata.name === n)) warnings.push(workloadNotFoundWarning(namespace, n));
  return listed.filter((w) => wanted.includes(w.metadata.name)).map((w) => sanitizeObject({ apiVersion: "scheduling.k8s.io/v1alpha1", kind: "Workload", ...w })).sort(byName);
}

/**
 * The versions of scheduling.k8s.io that serve PodGroups, newest first: v1alpha2 (v1.36), v1alpha3 (v1.37.0-beta.0),
 * v1beta1 (the development branch after it) (k8s.io/api tags v0.36.0, v0.37.0-beta.0, master).
 */
const POD_GROUP_VERSIONS = ["v1beta1", "v1alpha3", "v1alpha2"] as const;

/**
 * The PodGroups (scheduling.k8s.io, v1.36+) the pods' `spec.schedulingGroup` names: one list of the namespace's
 * PodGroups at the newest version the server serves (a 404 tries the next; a list of a served resource never answers
 * 404). Every version answering 404 leaves {@link podGroupApiNotServedWarning}, a 403 {@link podGroupsForbiddenWarning}:
 * stated facts the analysis reads, never a failure; a named PodGroup not in the list leaves {@link podGroupNotFoundWarning}.
 * @param names the PodGroups named (duplicates allowed).
 * @returns the named PodGroups found, with the apiVersion they were read at, reduced by the allow-list.
 */
async function gatherPodGroups(rest: KubeRest, namespace: string, names: readonly string[], warnings: string[]): Promise<PodGroup[]> {
  for (const version of POD_GROUP_VERSIONS) {
    let listed: PodGroup[];
    try {
      listed = (await rest.list<PodGroup>(R.podGroups(namespace, version))).items;
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 404) continue;
      if (!(e instanceof KubeApiError) || e.status !== 403) throw e;
      warnings.push(podGroupsForbiddenWarning(namespace, e.serverMessage));
      return [];
    }
    const wanted = [...new Set(names)].sort();
    for (const n of wanted) if (!listed.some((g) => g.metadata.name === n)) warnings.push(podGroupNotFoundWarning(namespace, n));
    return listed.filter((g) => wanted.includes(g.metadata.name)).map((g) => sanitizeObject({ apiVersion: `scheduling.k8s.io/${version}`, kind: "PodGroup", ...g })).sort(byName);
  }
  warnings.push(podGroupApiNotServedWarning(namespace, POD_GROUP_VERSIONS));
  return [];
}

/** The pods of `pod`'s gang: its Workload's pod group (spec.workloadRef, v1.35) or its PodGroup (spec.schedulingGroup, v1.36+). */
function groupMembers(pods: readonly Pod[], pod: Pod): Pod[] {
  return pod.spec?.schedulingGroup?.podGroupName ? podGroupMembers(pods, pod) : gangMembers(pods, pod);
}

/**
 * Reads the objects for `pvc/NAME` or `pod/NAME --why-pending`.
 * @throws {NotFoundError} the claim or pod does not exist.
 */
export async function gatherPendingObjects(rest: KubeRest, kind: "pvc" | "pod", namespace: string, name: string): Promise<ServiceObjects> {
  const warnings: string[] = [];
  const objects = emptyObjects();
  const claimNames = new Set<string>();
  if (kind === "pod") {
    const pod = await rest.getOptional<Pod>(R.pods(namespace, name));
    if (!pod) throw new NotFoundError("pod", name, namespace);
    objects.pods.push(sanitizeObject({ apiVersion: "v1", kind: "Pod", ...pod }));
    for (const v of pod.spec?.volumes ?? []) if (v.persistentVolumeClaim?.claimName) claimNames.add(v.persistentVolumeClaim.claimName);
    // NodeResourcesFit, NodePorts, PodTopologySpread and InterPodAffinity (the bound pods' own required
    // anti-affinity applies to every pod) read the pods bound to the nodes: one list of the cluster's non-terminal
    // pods, in pages of 500, for a pod not yet scheduled.
    if (!pod.spec?.nodeName) {
      const bound = await rest.list<Pod>(R.pods(), { fieldSelector: "status.phase!=Succeeded,status.phase!=Failed" }).catch((e: unknown) => {
        if (e instanceof KubeApiError && e.status === 403) {
          warnings.push(PODS_NOT_LISTED_WARNING);
          return { items: [] as Pod[] };
        }
        throw e;
      });
      const others = bound.items.filter((p) => p.spec?.nodeName && !(p.metadata.name === name && p.metadata.namespace === namespace));
      pushAll(objects.pods, others.map((p) => sanitizeObject({ apiVersion: "v1", kind: "Pod", ...p })));
      // GangScheduling: the pod's Workload (spec.workloadRef, v1.35) or PodGroup (spec.schedulingGroup, v1.36+), and
      // the group's pods not yet bound (the bound ones are above)
      if (pod.spec?.workloadRef || pod.spec?.schedulingGroup?.podGroupName) {
        const members = podsNotListed(warnings) ? await namespacePods(rest, namespace, warnings) : bound.items;
        pushAll(objects.pods, groupMembers(members, pod).filter((p) => p.metadata.name !== name && (podsNotListed(warnings) || !p.spec?.nodeName))
          .map((p) => sanitizeObject({ apiVersion: "v1", kind: "Pod", ...p })));
        if (pod.spec.schedulingGroup?.podGroupName) pushAll(objects.podGroups, await gatherPodGroups(rest, namespace, [pod.spec.schedulingGroup.podGroupName], warnings));
        else pushAll(objects.workloads, await gatherWorkloads(rest, namespace, [pod.spec.workloadRef!.name], warnings));
      }
      // a namespaceSelector other than {} needs the namespaces' labels: one more list, names and labels kept
      const terms = [pod, ...others].flatMap((p) => [
        ...(p === pod ? p.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [] : []),
        ...(p.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
      ]);
      if (terms.some((t) => t.namespaceSelector && !isEmptySelector(t.namespaceSelector))) {
        try {
          const ns = await rest.list<Namespace>(R.namespaces());
          pushAll(objects.namespaces, ns.items.map((n) => sanitizeObject({ apiVersion: "v1", kind: "Namespace", ...n })).sort(byName));
        } catch (e) {
          if (!(e instanceof KubeApiError && e.status === 403)) throw e;
          warnings.push(`list namespaces is forbidden (403): a pod affinity term's namespaceSelector is left undecided`);
        }
      }
    }
    // DRA: the pod's ResourceClaims, at the newest resource.k8s.io version the server serves (v1 since 1.34)
    const draNames = (pod.spec?.resourceClaims ?? []).map((rc) =>
      rc.resourceClaimName ?? (pod.status?.resourceClaimStatuses ?? []).find((x) => x.name === rc.name)?.resourceClaimName
    ).filter((n): n is string => !!n);
    for (const claim of [...new Set(draNames)].sort()) {
      try {
        for (const version of ["v1", "v1beta2", "v1beta1"]) {
          const rc = await rest.getOptional<ResourceClaim>(R.resourceClaims(namespace, claim, version));
          if (rc) {
            objects.resourceClaims.push(sanitizeObject({ apiVersion: `resource.k8s.io/${version}`, kind: "ResourceClaim", ...rc }));
            break;
          }
        }
      } catch (e) {
        if (!(e instanceof KubeApiError && e.status === 403)) throw e;
        warnings.push(`get resourceclaims is forbidden (403): the state of ResourceClaim ${claim} is unknown`);
      }
    }
  } else {
    claimNames.add(name);
  }
  const claims = await mapLimit([...claimNames].sort(), API_PARALLEL, (n) => rest.getOptional<PersistentVolumeClaim>(R.pvcs(namespace, n)));
  claims.forEach((c, i) => {
    const n = [...claimNames].sort()[i]!;
    if (c) objects.persistentVolumeClaims.push(sanitizeObject({ apiVersion: "v1", kind: "PersistentVolumeClaim", ...c }));
    else if (kind === "pvc") throw new NotFoundError("persistentvolumeclaim", n, namespace);
    else warnings.push(`pod ${namespace}/${name} mounts claim "${n}", which does not exist`);
  });
  // The VolumeAttributesClasses the claims name, at the version the server serves (v1 since 1.34, v1beta1, v1alpha1)
  for (const vac of [...new Set(objects.persistentVolumeClaims.map((c) => c.spec?.volumeAttributesClassName).filter((v): v is string => !!v))].sort()) {
    try {
      let found = false;
      for (const version of ["v1", "v1beta1", "v1alpha1"]) {
        const v = await rest.getOptional<VolumeAttributesClass>(R.volumeAttributesClasses(vac, version));
        if (!v) continue;
        objects.volumeAttributesClasses.push(sanitizeObject({ apiVersion: `storage.k8s.io/${version}`, kind: "VolumeAttributesClass", ...v }));
        found = true;
        break;
      }
      if (!found) {
        warnings.push(`volumeattributesclass "${vac}" was not found at storage.k8s.io v1, v1beta1 or v1alpha1: it does not exist, or the cluster does not serve that API (off by default before v1.34)`);
      }
    } catch (e) {
      if (!(e instanceof KubeApiError && e.status === 403)) throw e;
      warnings.push(`get volumeattributesclasses is forbidden (403): whether VolumeAttributesClass ${vac} exists is unknown`);
    }
  }
  if (kind === "pvc") {
    // Pods of the namespace that mount the claim (a WaitForFirstConsumer claim waits for one).
    const pods = await rest.list<Pod>(R.pods(namespace));
    const using = pods.items.filter((p) => (p.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === name));
    pushAll(objects.pods, using.map((p) => sanitizeObject(p)));
    // GangScheduling: the Workloads (v1.35) or PodGroups (v1.36+) of the unscheduled ones in a gang, and their groups' other pods
    const ganged = using.filter((p) => (p.spec?.workloadRef || p.spec?.schedulingGroup?.podGroupName) && !p.spec.nodeName);
    if (ganged.length > 0) {
      const members = new Set(ganged.flatMap((p) => groupMembers(pods.items, p)).filter((p) => !using.includes(p)));
      pushAll(objects.pods, [...members].map((p) => sanitizeObject({ apiVersion: "v1", kind: "Pod", ...p })));
      const viaWorkload = ganged.filter((p) => !p.spec?.schedulingGroup?.podGroupName).map((p) => p.spec!.workloadRef!.name);
      const viaPodGroup = ganged.flatMap((p) => p.spec?.schedulingGroup?.podGroupName ? [p.spec.schedulingGroup.podGroupName] : []);
      if (viaWorkload.length > 0) pushAll(objects.workloads, await gatherWorkloads(rest, namespace, viaWorkload, warnings));
      if (viaPodGroup.length > 0) pushAll(objects.podGroups, await gatherPodGroups(rest, namespace, viaPodGroup, warnings));
    }
  }
  // Cluster-scoped reads a namespaced role may not grant: without them the answer is partial, not impossible. The
  // warning names the verb and resource (the pending analysis turns a missing Node list into its own finding).
  const forbiddenOk = async <T>(what: string, read: () => Promise<T[]>): Promise<T[]> => {
    try {
      return await read();
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 403) {
        warnings.push(`${what} is forbidden (403): RBAC must allow "${what}"; answered without it`);
        return [];
      }
      throw e;
    }
  };
  pushAll(objects.persistentVolumes, (await forbiddenOk("list persistentvolumes", async () => (await rest.list<PersistentVolume>(R.pvs())).items)).map((p) => sanitizeObject(p)).sort(byName));
  pushAll(objects.storageClasses, (await forbiddenOk("list storageclasses", async () => (await rest.list<StorageClass>(R.storageClasses())).items)).map((s) => sanitizeObject(s)).sort(byName));
  pushAll(objects.nodes, (await forbiddenOk("list nodes", async () => (await rest.list<Node>(R.nodes())).items)).map((n) => sanitizeObject(n)).sort(byName));
  // VolumeBinding's capacity check: a claim still to provision under a WaitForFirstConsumer class whose CSIDriver
  // tracks storage capacity needs the CSIStorageCapacities (two lists, only then)
  const toProvision = objects.persistentVolumeClaims.filter((c) => !c.spec?.volumeName).map((c) => objects.storageClasses.find((sc) => sc.metadata.name === c.spec?.storageClassName))
    .filter((sc) => sc?.volumeBindingMode === "WaitForFirstConsumer").map((sc) => sc!.provisioner);
  if (toProvision.length > 0) {
    const drivers = await forbiddenOk("list csidrivers", async () => (await rest.list<CSIDriver>(R.csiDrivers())).items);
    pushAll(objects.csiDrivers, drivers.map((d) => sanitizeObject({ apiVersion: "storage.k8s.io/v1", kind: "CSIDriver", ...d })).sort(byName));
    if (drivers.some((d) => d.spec?.storageCapacity === true && toProvision.includes(d.metadata.name))) {
      pushAll(objects.csiStorageCapacities, (await forbiddenOk("list csistoragecapacities", async () => (await rest.list<CSIStorageCapacity>(R.csiStorageCapacities())).items))
        .map((c) => sanitizeObject({ apiVersion: "storage.k8s.io/v1", kind: "CSIStorageCapacity", ...c })).sort(byName));
    }
  }
  // NodeVolumeLimits: the CSI drivers' attach limits per node, when an unscheduled pod mounts a claim or an inline
  // in-tree disk the scheduler counts under its CSI driver (nodevolumelimits/csi.go checkAttachableInlineVolume)
  const inlineDisks = (objects.pods[0]?.spec?.volumes ?? []).some((v) => ["gcePersistentDisk", "awsElasticBlockStore", "azureDisk", "cinder", "portworxVolume"].some((k) => (v as Record<string, unknown>)[k] != null));
  if (kind === "pod" && (claimNames.size > 0 || inlineDisks) && !objects.pods[0]?.spec?.nodeName) {
    pushAll(objects.csiNodes, (await forbiddenOk("list csinodes", async () => (await rest.list<CSINode>(R.csiNodes())).items))
      .map((c) => sanitizeObject({ apiVersion: "storage.k8s.io/v1", kind: "CSINode", ...c })).sort(byName));
  }
  const involved = kind === "pod" ? [{ kind: "Pod", name }, ...[...claimNames].map((c) => ({ kind: "PersistentVolumeClaim", name: c }))] : [{ kind: "PersistentVolumeClaim", name }];
  for (const inv of involved) {
    const ev = await forbiddenOk("list events", async () => (await rest.list<KubeEvent>(R.events(namespace), { fieldSelector: `involvedObject.kind=${inv.kind},involvedObject.name=${inv.name}` })).items);
    pushAll(objects.events, ev);
  }
  return { objects, nodes: [], warnings };
}
