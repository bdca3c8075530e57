/**
 * The NodeResourcesFit filter of kube-scheduler (pkg/scheduler/framework/plugins/noderesources/fit.go `fitsRequest`,
 * v1.29–v1.35) and NodePorts (plugins/nodeports/node_ports.go): what the pod requests against what the node has left.
 *
 * - The pod's effective request is computed as `computePodResourceRequest` does through
 *   k8s.io/component-helpers/resource `PodRequests`: the sum of the app containers' requests; each init container in
 *   order, a sidecar (`restartPolicy: Always`) adding its request to the app containers' and to the running sidecar
 *   total, a plain one needing its own request plus the sidecars started before it; the maximum of the two; plus
 *   `spec.overhead`; an app container whose status reports resources (in-place resize, v1.33+) counts the maximum of
 *   its spec request, status request and allocated resources (the status's only while the resize is infeasible; a
 *   sidecar likewise, from `initContainerStatuses`); a
 *   container's limit stands for a request it lacks (the API server's defaulting); pod-level `spec.resources`
 *   (v1.34+) replaces the containers' total of cpu, memory and hugepages.
 * - The node's room: `status.allocatable` minus the requests of the pods bound to it (`spec.nodeName`), terminal pods
 *   (Succeeded, Failed) excluded, and of the pods a preemption nominated to it (explain.ts); one more pod than
 *   `allocatable.pods` is "Too many pods", checked first, for every pod.
 * - A resource the pod does not request is not checked; every resource that does not fit is one reason:
 *   `Insufficient cpu`, `Insufficient memory`, `Insufficient ephemeral-storage`, `Insufficient <extended resource>`.
 *   kube-scheduler skips an extended resource its configuration ignores (fit.go `fitsRequest`: NodeResourcesFitArgs
 *   `ignoredResources`, `ignoredResourceGroups` by the prefix before "/", and scheduler.go `buildExtenders` adds an
 *   extender's `managedResources` marked `ignoredByScheduler`): the KubeSchedulerConfiguration is not in the bundle,
 *   so such a reason is said to rest on it ({@link EXTENDED_RESOURCE_CONFIG}).
 * - NodePorts: a `hostPort` the pod asks for that a pod on the node already holds (same protocol, and same hostIP or
 *   either one `0.0.0.0`/unset) is `node(s) didn't have free ports for the requested pod ports`. A sidecar's host
 *   ports count from kubernetes#132040 (v1.34.0, and v1.33.6 by #133390) only: {@link sidecarHostPortCounting}.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Node, Pod } from "../../model/k8s.ts";
import { quantityMilliValue, quantityValue } from "../../model/quantity.ts";
import { BundleError } from "../../bundle/decode.ts";

/** Requests by resource name, in milli-units (cpu in millicores, memory in milli-bytes, counts ×1000). */
export type Requests = Map<string, number>;

/**
 * A quantity of `resource` in the milli-units of {@link Requests}, rounded as kube-scheduler adds it
 * (framework/types.go `Resource.Add`): cpu by `MilliValue()` (`100m` → 100, `1.5` → 1500), every other resource by
 * `Value()` (bytes, pods, devices) times 1000. Rounding is per container; Kubernetes sums a pod's requests exactly
 * first, which differs only for requests finer than 1m cpu or 1 byte.
 * @throws {RangeError} for text that is not a quantity.
 */
export function requestMilli(resource: string, q: string | number): number {
  const v = resource === "cpu" ? quantityMilliValue(q) : quantityValue(q);
  if (v === undefined) throw new RangeError(`"${q}" is not a Kubernetes quantity`);
  return resource === "cpu" ? v : v * 1000;
}

interface ContainerLike {
  name?: string;
  restartPolicy?: string;
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  ports?: { containerPort: number; hostPort?: number; hostIP?: string; protocol?: string }[];
}

function containers(pod: Pod, key: "containers" | "initContainers"): ContainerLike[] {
  return ((pod.spec as Record<string, unknown> | undefined)?.[key] as ContainerLike[] | undefined) ?? [];
}

function requestsOf(c: ContainerLike, what = `container ${c.name ?? "?"} requests`): Requests {
  const out: Requests = new Map();
  for (const [k, v] of Object.entries(c.resources?.requests ?? {})) {
    try {
      out.set(k, requestMilli(k, v));
    } catch {
      throw new BundleError(`${what} ${k}: ${typeof v === "string" ? JSON.stringify(v) : String(v)} is not a Kubernetes quantity`);
    }
  }
  return out;
}

/**
 * A container's requests as the API server stores them: a resource with a limit and no request requests its limit
 * (pkg/apis/core/v1/defaults.go SetDefaults_Pod; a pod read from a cluster is already so, a hand-written one may not be).
 */
function containerRequestsOf(c: ContainerLike): Requests {
  const limits = c.resources?.limits;
  if (!limits) return requestsOf(c);
  const requests = { ...limits, ...(c.resources?.requests ?? {}) };
  return requestsOf({ ...c, resources: { requests } });
}

/** Runs `f`, naming `who` in a {@link BundleError} it throws: the object whose field is not a quantity, and what to do. */
function naming<T>(who: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof BundleError) throw new BundleError(`${who}: ${e.message}; fix that object in the bundle, or export it again (kubectl get -o yaml)`);
    throw e;
  }
}

function add(a: Requests, b: Requests): Requests {
  const out = new Map(a);
  for (const [k, v] of b) out.set(k, (out.get(k) ?? 0) + v);
  return out;
}

function max(a: Requests, b: Requests): Requests {
  const out = new Map(a);
  for (const [k, v] of b) out.set(k, Math.max(out.get(k) ?? 0, v));
  return out;
}

interface ContainerStatusLike {
  name: string;
  resources?: { requests?: Record<string, string | number> };
  allocatedResources?: Record<string, string | number>;
}

/**
 * An app container's request with in-place resize (InPlacePodVerticalScaling, beta v1.33): when its status reports
 * resources, the maximum of the spec's request, the status's `resources.requests` and `allocatedResources` — or, while
 * the resize is infeasible (condition PodResizePending, reason Infeasible), of the status's two only
 * (k8s.io/component-helpers/resource `determineContainerReqs`, as the scheduler counts the pods bound to a node).
 */
function appContainerRequests(pod: Pod, c: ContainerLike, from: "containerStatuses" | "initContainerStatuses" = "containerStatuses"): Requests {
  const statuses = (pod.status as Record<string, ContainerStatusLike[] | undefined> | undefined)?.[from] ?? [];
  const cs = statuses.find((x) => x.name === c.name);
  if (!cs?.resources) return containerRequestsOf(c);
  const fromStatus = max(
    requestsOf({ resources: { requests: cs.resources.requests ?? {} } }, `status of container ${c.name ?? "?"} requests`),
    requestsOf({ resources: { requests: cs.allocatedResources ?? {} } }, `status of container ${c.name ?? "?"} allocatedResources`),
  );
  const infeasible = (pod.status?.conditions ?? []).some((x) => x.type === "PodResizePending" && x.reason === "Infeasible");
  return infeasible ? fromStatus : max(containerRequestsOf(c), fromStatus);
}

/**
 * The pod's effective request (see the module comment).
 * @throws {BundleError} naming the pod, the container and the resource, for a request that is not a quantity.
 */
export function podRequests(pod: Pod): Requests {
  return naming(`pod ${pod.metadata.namespace ?? "default"}/${pod.metadata.name}`, () => podRequestsOf(pod));
}

function podRequestsOf(pod: Pod): Requests {
  let reqs: Requests = new Map();
  for (const c of containers(pod, "containers")) reqs = add(reqs, appContainerRequests(pod, c));
  let sidecars: Requests = new Map();
  let init: Requests = new Map();
  for (const c of containers(pod, "initContainers")) {
    // a sidecar (restartable init container) resizes in place as an app container does (initContainerStatuses, v1.33+)
    let r = c.restartPolicy === "Always" ? appContainerRequests(pod, c, "initContainerStatuses") : containerRequestsOf(c);
    if (c.restartPolicy === "Always") {
      reqs = add(reqs, r);
      sidecars = add(sidecars, r);
      r = sidecars;
    } else {
      r = add(r, sidecars);
    }
    init = max(init, r);
  }
  reqs = max(reqs, init);
  // Pod-level resources (KEP-2837; PodLevelResources alpha v1.32, beta and on from v1.34): the pod's own request of
  // cpu, memory and hugepages replaces its containers' total (component-helpers resource PodRequests; the API server
  // defaults a pod-level request from its limit and keeps spec.resources only where the gate is on)
  const level = (pod.spec as { resources?: ContainerLike["resources"] } | undefined)?.resources;
  if (level?.requests || level?.limits) {
    const own = requestsOf({ resources: { requests: { ...(level.limits ?? {}), ...(level.requests ?? {}) } } }, "spec.resources requests");
    for (const [k, v] of own) if (k === "cpu" || k === "memory" || k.startsWith("hugepages-")) reqs.set(k, v);
  }
  const overhead = (pod.spec as { overhead?: Record<string, string> } | undefined)?.overhead;
  if (overhead) reqs = add(reqs, requestsOf({ resources: { requests: overhead } }, "spec.overhead"));
  return reqs;
}

function fmt(resource: string, milli: number): string {
  if (resource === "cpu") return `${milli}m`;
  const v = milli / 1000;
  if (resource === "memory" || resource === "ephemeral-storage") return v >= 2 ** 20 ? `${Math.round((v / 2 ** 20) * 10) / 10}Mi` : `${v}`;
  return `${v}`;
}

/**
 * A pod's requests in words, resource by resource in name order (`cpu 3000m, memory 512Mi`), as NodeResourcesFit
 * counts them ({@link podRequests}); `no requests` when it has none.
 * @throws {BundleError} when a request is not a Kubernetes quantity.
 */
export function requestsText(pod: Pod): string {
  const reqs = [...podRequests(pod)].filter(([, v]) => v > 0).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return reqs.length === 0 ? "no requests" : reqs.map(([k, v]) => `${k} ${fmt(k, v)}`).join(", ");
}

/**
 * Whether kube-scheduler treats a resource name as an extended resource, which its configuration may tell it to ignore
 * (k8s.io/kubernetes pkg/apis/core/v1/helper `IsExtendedResourceName`: not native — a name with a "/" outside the
 * `kubernetes.io/` domain — and not a quota `requests.` name).
 * @param name a resource name, e.g. `example.com/fpga`.
 */
export function isExtendedResourceName(name: string): boolean {
  return name.includes("/") && !name.includes("kubernetes.io/") && !name.startsWith("requests.");
}

/** The settings of kube-scheduler's configuration that make NodeResourcesFit skip an extended resource, in words. */
export const EXTENDED_RESOURCE_CONFIG =
  "kube-scheduler skips an extended resource its KubeSchedulerConfiguration ignores (NodeResourcesFit args ignoredResources, " +
  "ignoredResourceGroups by the prefix before \"/\", or an extender's managedResources with ignoredByScheduler: true; noderesources/fit.go fitsRequest), " +
  "and from v1.34 with DRAExtendedResource leaves one a node does not advertise to DynamicResources when a DeviceClass's spec.extendedResourceName names it; " +
  "neither is in the bundle";

/** The NodeResourcesFit verdict of one node. */
export interface FitResult {
  /** `Insufficient cpu`, `Too many pods`, … (empty: fits). */
  reasons: string[];
  /** One clause per resource checked, e.g. `cpu: requests 2000m, free 1500m of 4000m`. */
  detail: string;
}

/**
 * Checks the pod against the node's allocatable minus what its pods request.
 * @param pod the pending pod.
 * @param node the node.
 * @param bound the pods bound to the node (context.ts `indexPodsByNode`), without `pod`.
 * @throws {BundleError} naming the node or pod whose allocatable or request is not a quantity.
 */
export function fitsResources(pod: Pod, node: Node, bound: readonly Pod[]): FitResult {
  const alloc = (node.status as { allocatable?: Record<string, string> } | undefined)?.allocatable;
  if (!alloc) return { reasons: [], detail: "node allocatable not in the bundle: not checked" };
  const want = podRequests(pod);
  let used: Requests = new Map();
  for (const p of bound) used = add(used, podRequests(p));
  const reasons: string[] = [];
  const parts: string[] = [];
  const allocatable = naming(`node ${node.metadata.name}`, () => requestsOf({ resources: { requests: alloc } }, "status.allocatable"));
  // NodeResourcesFit counts pods first, for every pod, one that requests nothing too (fit.go fitsRequest); a node
  // without `pods` in allocatable allows none (AllowedPodNumber 0; the kubelet always sets it)
  const podsAlloc = allocatable.has("pods") ? allocatable.get("pods")! / 1000 : 0;
  if (bound.length + 1 > podsAlloc) reasons.push("Too many pods");
  parts.push(allocatable.has("pods") ? `pods: ${bound.length} of ${podsAlloc}` : `pods: ${bound.length}, and allocatable has no pods entry, which the scheduler takes as 0 (the kubelet always sets it: is this node's status complete?)`);
  for (const [r, milli] of [...want].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (milli === 0) continue;
    const total = allocatable.get(r) ?? 0;
    const free = total - (used.get(r) ?? 0);
    const short = milli > free;
    parts.push(`${r}: requests ${fmt(r, milli)}, free ${fmt(r, free)} of ${fmt(r, total)}` +
      (short && isExtendedResourceName(r) ? ` (an extended resource: counted as short unless kube-scheduler's configuration ignores it, NodeResourcesFit ignoredResources/ignoredResourceGroups or an extender's ignoredByScheduler, which the bundle does not hold)` : ""));
    if (short) reasons.push(`Insufficient ${r}`);
  }
  return { reasons, detail: parts.join("; ") || "requests nothing" };
}

/**
 * Whether kube-scheduler's NodePorts counts the host ports of sidecars (init containers with `restartPolicy: Always`),
 * for the pending pod (node_ports.go PreFilter) and for the pods on a node (framework/types.go NodeInfo used ports):
 * kubernetes#132040 (issue #132037) made both read pkg/scheduler/util `GetHostPorts`, which adds them, in v1.34.0
 * (CHANGELOG-1.34) and, by the cherry-pick #133390, v1.33.6 (CHANGELOG-1.33); before, both read
 * `pod.Spec.Containers` only.
 * @param version the scheduler's release as far as the bundle tells (the newest kubelet, e.g. "v1.32.9"), undefined
 *   when no node reports one.
 * @returns "counted" or "ignored" as that release does; "undetermined" for v1.33 without a patch release (v1.33.0–
 *   v1.33.5 ignore them, v1.33.6+ count them); "version-unknown" without a version. Both of the last are counted, as
 *   current releases do, and the caller says what decides it.
 */
export function sidecarHostPortCounting(version: string | undefined): "counted" | "ignored" | "undetermined" | "version-unknown" {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(version ?? "");
  if (!m) return "version-unknown";
  const minor = Number(m[1]) > 1 ? Infinity : Number(m[2]);
  if (minor >= 34) return "counted";
  if (minor < 33) return "ignored";
  if (m[3] === undefined) return "undetermined";
  return Number(m[3]) >= 6 ? "counted" : "ignored";
}

/**
 * The pod's host ports as the NodePorts filter counts them: `{ port, protocol, hostIP }` of its containers and, when
 * `sidecars` is true, of its sidecars (init containers with `restartPolicy: Always`); never of its ordinary init
 * containers, which have ended before the containers start (pkg/scheduler/util GetHostPorts).
 * @param sidecars whether the scheduler's release counts sidecars' ports ({@link sidecarHostPortCounting}); default
 *   true, as current releases do.
 */
export function hostPorts(pod: Pod, sidecars = true): { port: number; protocol: string; hostIP: string }[] {
  const out: { port: number; protocol: string; hostIP: string }[] = [];
  const restartable = sidecars ? containers(pod, "initContainers").filter((c) => (c as { restartPolicy?: string }).restartPolicy === "Always") : [];
  for (const c of [...restartable, ...containers(pod, "containers")]) {
    for (const p of c.ports ?? []) if (p.hostPort) out.push({ port: p.hostPort, protocol: p.protocol ?? "TCP", hostIP: p.hostIP || "0.0.0.0" });
  }
  return out;
}

/**
 * The NodePorts filter: host ports of `pod` already used by `bound` pods.
 * @param sidecars whether sidecars' host ports count, on both sides (see {@link hostPorts}).
 * @returns the conflicts as `8080/TCP (held by pod ns/name)`, empty when none.
 */
export function hostPortConflicts(pod: Pod, bound: readonly Pod[], sidecars = true): string[] {
  const want = hostPorts(pod, sidecars);
  const out: string[] = [];
  for (const w of want) {
    for (const b of bound) {
      const hit = hostPorts(b, sidecars).find((h) => h.port === w.port && h.protocol === w.protocol && (h.hostIP === w.hostIP || h.hostIP === "0.0.0.0" || w.hostIP === "0.0.0.0"));
      if (hit) {
        out.push(`${w.port}/${w.protocol} (held by pod ${b.metadata.namespace ?? "default"}/${b.metadata.name})`);
        break;
      }
    }
  }
  return out;
}
