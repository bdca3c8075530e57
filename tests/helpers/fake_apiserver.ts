/**
 * A fake Kubernetes API server for the live path's tests: HTTPS with a throw-away CA (fake_pki.ts) written into
 * temporary kubeconfigs (one with a bearer token, one with a client certificate), serving the objects of a Bundle
 * (or a lazily generated cluster of any size) the way kube-apiserver does:
 * - get / list (label and field selectors, `limit`/`continue` pagination) / watch (newline-delimited events,
 *   `resourceVersion`, `timeoutSeconds`) of Services, EndpointSlices, Pods, Nodes, ConfigMaps, Events, PVCs, PVs,
 *   StorageClasses; create and delete of Pods; SelfSubjectAccessReview; `Status` errors (401, 403, 404, 409, 500);
 * - a pod lifecycle: created Pending, scheduled, Running after a delay (or ErrImagePull/ImagePullBackOff for a bad
 *   image), Failed with DeadlineExceeded after `activeDeadlineSeconds`; Pod Security Admission on namespaces
 *   labelled `pod-security.kubernetes.io/enforce`; RBAC denials from a deny list;
 * - exec over WebSocket (v5.channel.k8s.io and v4.channel.k8s.io; channel 1 stdout, 2 stderr, 3 Status) that runs
 *   the requested argv for real, inside the network namespace that plays the pod's node (`ip netns exec`), with
 *   faults: cut the stream after N bytes, delay, "no shell in this image".
 * It records every request, so tests can assert what the plugin asked for, and fires request listeners so tests
 * can kill the plugin at a given phase.
 *
 * Test helper. The server side of WebSocket uses the `ws` package (a dependency of @kubernetes/client-node).
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import { Buffer } from "node:buffer";
import { containerArgv } from "./fake_runtime.ts";
import { containerMemoryLimitMiB, inMemoryCgroupArgv, makeMemoryCgroup } from "./memory_cgroup.ts";
import type { BundleObjects } from "../../src/bundle/bundle.ts";
import type { KubeObject, Node, Pod } from "../../src/model/k8s.ts";
import { makePki, type FakePki } from "./fake_pki.ts";
import { findTool } from "./netns.ts";

// ------------------------------------------------------------------------------------------------------------
// types

/** A lazily generated cluster: objects exist only when asked for (so 5,000 nodes cost nothing until listed). */
export interface SyntheticCluster {
  /** Nodes `node-00000` … */
  nodes: number;
  /** Pods per node, in namespace `bulk`, named `bulk-<i>`, label app=bulk. */
  podsPerNode: number;
  /** Also a kube-proxy pod per node in kube-system (`kube-proxy-<node>`). @default true */
  kubeProxy?: boolean;
}

/** An RBAC denial: requests matching it get 403. `namespace` undefined matches every namespace. */
export interface Denial {
  verb: string;
  /** `pods`, `pods/exec`, `services`, `endpointslices`, ... */
  resource: string;
  /** Only in this namespace; `""`: only at the cluster scope (e.g. listing pods of all namespaces); absent: everywhere. */
  namespace?: string;
}

/** A fault injected before routing. */
export interface Fault {
  method?: string;
  /** Matched against the path (without query). */
  path: RegExp;
  /** Answer with this status (a Status object). */
  status?: number;
  message?: string;
  /** Wait this long first (then answer normally, or with `status`). */
  delayMs?: number;
  /** Apply only this many times. @default unlimited */
  times?: number;
  /** For pod creation: create the pod, then answer with `status` (the client cannot know it exists). */
  afterCreate?: boolean;
  /** With `status`: a `Retry-After` header of this many seconds (as API Priority and Fairness sends with its 429). */
  retryAfterSeconds?: number;
}

/** One recorded request. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string[]>;
  user?: string;
  status: number;
  kind: "rest" | "watch" | "exec";
  at: number;
  /** The request body of a POST or DELETE, as sent. */
  body?: string;
  /** An exec: when its WebSocket closed (epoch ms). */
  endedAt?: number;
  /** Bytes the server sent back: a REST response's body, or an exec's stdout/stderr/status frames. */
  bytesOut?: number;
}

/** Options of {@link startFakeApiServer}. */
export interface FakeApiOptions {
  objects?: Partial<BundleObjects>;
  synthetic?: SyntheticCluster;
  /**
   * The group/version the server serves a resource at (default: RESOURCES' apiVersion); resourceclaims,
   * volumeattributesclasses, workloads and podgroups check it (e.g. `workloads: "none"`: the Workload API is not served, 404;
   * `podgroups: "scheduling.k8s.io/v1alpha3"`: a v1.37 server).
   */
  servedVersions?: Record<string, string>;
  /** Namespace labels (Pod Security Admission reads `pod-security.kubernetes.io/enforce`). */
  namespaces?: Record<string, Record<string, string>>;
  /** Bearer token accepted (user "token-user"). @default "fake-token-0123456789" */
  token?: string;
  /** Namespace of the kubeconfig context. */
  contextNamespace?: string;
  /** Give every explicit node a Running kube-proxy pod in kube-system. @default true */
  kubeProxyPods?: boolean;
  denials?: Denial[];
  faults?: Fault[];
  pods?: {
    /** ms from create to PodScheduled. @default 20 */
    scheduleDelayMs?: number;
    /** ms from create to Running. @default 150 */
    startDelayMs?: number;
    /** Images that cannot be pulled. */
    badImages?: string[];
    /** ms per second of activeDeadlineSeconds. @default 1000 */
    msPerDeadlineSecond?: number;
  };
  exec?: {
    /** Subprotocols the server accepts, in its preference. @default v5, v4 */
    protocols?: string[];
    /** Network namespace name of a node (the exec runs there). */
    netnsFor?: (node: string) => string | undefined;
    /** Terminate the socket after sending this many stdout bytes. */
    cutAfterBytes?: number;
    /** Wait this long before running the command. */
    delayMs?: number;
    /** Pods whose image has no shell (the exec fails as runc reports it). */
    noShell?: (namespace: string, pod: string) => boolean;
    /**
     * The PATH of a pod's image (e.g. tests/helpers/userlands.ts's kube-proxy image): the exec runs with that PATH and
     * an otherwise empty environment. Undefined: the test's own.
     */
    pathFor?: (namespace: string, pod: string) => string | undefined;
    /**
     * Run each exec as a container runtime would under the container's securityContext: capabilities, no_new_privs,
     * read-only root with emptyDir mounts (fake_runtime.ts). @default false (the command runs with the test's privileges)
     */
    enforceSecurityContext?: boolean;
    /**
     * Hold each exec to a memory limit, as a pod's cgroup does (tests/helpers/memory_cgroup.ts): bytes, from the
     * container's `resources.limits.memory` in MiB (undefined when it has none); undefined: no limit.
     */
    memoryBytesFor?: (limitMiB: number | undefined, namespace: string, pod: string) => number | undefined;
  };
  /** PKI method. @default openssl when installed */
  pki?: "openssl" | "node:crypto";
}

/** The running fake server. */
export interface FakeApiServer {
  url: string;
  pki: FakePki;
  /** kubeconfig with bearer-token auth (context "fake"). */
  kubeconfig: string;
  /** kubeconfig with client-certificate auth (context "fake-cert"). */
  kubeconfigCert: string;
  /** Directory of the kubeconfigs (deleted by close). */
  dir: string;
  requests: RecordedRequest[];
  /** Calls `fn` for every request as it is recorded; returns the unsubscriber. */
  onRequest(fn: (r: RecordedRequest) => void): () => void;
  /** Resolves with the first request (recorded from now on, or already recorded) matching `pred`. */
  waitForRequest(pred: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  /**
   * Resolves as soon as a request matching `pred` ARRIVES (before it is handled; `status` is 0), for killing the
   * client while that request is in flight.
   */
  waitForArrival(pred: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  /** Pods with label app.kubernetes.io/managed-by=kubectl-netpath currently stored. */
  debugPods(): Pod[];
  /** Stores (or replaces) an object. */
  put(resource: string, obj: KubeObject): void;
  /** Reads a stored object. */
  get(resource: string, namespace: string | undefined, name: string): KubeObject | undefined;
  close(): Promise<void>;
}

// ------------------------------------------------------------------------------------------------------------
// selectors

type Obj = KubeObject & Record<string, unknown>;

/** Parses a label selector (`a=b,c!=d,e,!f,g in (x,y),h notin (z)`) into a predicate. */
export function labelSelector(sel: string | undefined): (labels: Record<string, string>) => boolean {
  if (!sel) return () => true;
  const terms: ((l: Record<string, string>) => boolean)[] = [];
  const parts = sel.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  for (const raw of parts.map((p) => p.trim()).filter((p) => p !== "")) {
    let m: RegExpExecArray | null;
    if ((m = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(raw))) {
      const [, k, op, vs] = m as unknown as [string, string, string, string];
      const set = new Set(vs.split(",").map((v) => v.trim()));
      terms.push(op === "in" ? (l) => l[k] !== undefined && set.has(l[k]!) : (l) => l[k] === undefined || !set.has(l[k]!));
    } else if ((m = /^([^!=]+)!=(.*)$/.exec(raw))) {
      const [, k, v] = m as unknown as [string, string, string];
      terms.push((l) => l[k] !== v);
    } else if ((m = /^([^!=]+)==?(.*)$/.exec(raw))) {
      const [, k, v] = m as unknown as [string, string, string];
      terms.push((l) => l[k] === v);
    } else if (raw.startsWith("!")) {
      terms.push((l) => l[raw.slice(1)] === undefined);
    } else {
      terms.push((l) => l[raw] !== undefined);
    }
  }
  return (l) => terms.every((t) => t(l));
}

function path(obj: unknown, dotted: string): unknown {
  let v: unknown = obj;
  for (const k of dotted.split(".")) v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** Parses a field selector (`a.b=c,d!=e`) into a predicate on the object. */
export function fieldSelector(sel: string | undefined): (o: unknown) => boolean {
  if (!sel) return () => true;
  const terms = sel.split(",").filter((t) => t !== "").map((t) => {
    const ne = t.indexOf("!=");
    if (ne >= 0) return (o: unknown) => String(path(o, t.slice(0, ne)) ?? "") !== t.slice(ne + 2);
    const eq = t.indexOf("=");
    const k = t.slice(0, eq);
    const v = t.slice(t[eq + 1] === "=" ? eq + 2 : eq + 1);
    return (o: unknown) => String(path(o, k) ?? "") === v;
  });
  return (o) => terms.every((t) => t(o));
}

// ------------------------------------------------------------------------------------------------------------
// store

const RESOURCES: Record<string, { kind: string; apiVersion: string; namespaced: boolean }> = {
  services: { kind: "Service", apiVersion: "v1", namespaced: true },
  endpointslices: { kind: "EndpointSlice", apiVersion: "discovery.k8s.io/v1", namespaced: true },
  pods: { kind: "Pod", apiVersion: "v1", namespaced: true },
  nodes: { kind: "Node", apiVersion: "v1", namespaced: false },
  configmaps: { kind: "ConfigMap", apiVersion: "v1", namespaced: true },
  daemonsets: { kind: "DaemonSet", apiVersion: "apps/v1", namespaced: true },
  events: { kind: "Event", apiVersion: "v1", namespaced: true },
  persistentvolumeclaims: { kind: "PersistentVolumeClaim", apiVersion: "v1", namespaced: true },
  persistentvolumes: { kind: "PersistentVolume", apiVersion: "v1", namespaced: false },
  storageclasses: { kind: "StorageClass", apiVersion: "storage.k8s.io/v1", namespaced: false },
  namespaces: { kind: "Namespace", apiVersion: "v1", namespaced: false },
  resourceclaims: { kind: "ResourceClaim", apiVersion: "resource.k8s.io/v1", namespaced: true },
  csinodes: { kind: "CSINode", apiVersion: "storage.k8s.io/v1", namespaced: false },
  csidrivers: { kind: "CSIDriver", apiVersion: "storage.k8s.io/v1", namespaced: false },
  csistoragecapacities: { kind: "CSIStorageCapacity", apiVersion: "storage.k8s.io/v1", namespaced: true },
  volumeattributesclasses: { kind: "VolumeAttributesClass", apiVersion: "storage.k8s.io/v1", namespaced: false },
  workloads: { kind: "Workload", apiVersion: "scheduling.k8s.io/v1alpha1", namespaced: true },
  podgroups: { kind: "PodGroup", apiVersion: "scheduling.k8s.io/v1alpha2", namespaced: true },
};

const LIST_KEYS: Record<string, keyof BundleObjects> = {
  services: "services",
  endpointslices: "endpointSlices",
  pods: "pods",
  nodes: "nodes",
  configmaps: "configMaps",
  daemonsets: "daemonSets",
  events: "events",
  persistentvolumeclaims: "persistentVolumeClaims",
  persistentvolumes: "persistentVolumes",
  storageclasses: "storageClasses",
  namespaces: "namespaces",
  resourceclaims: "resourceClaims",
  csinodes: "csiNodes",
  csidrivers: "csiDrivers",
  csistoragecapacities: "csiStorageCapacities",
  volumeattributesclasses: "volumeAttributesClasses",
  workloads: "workloads",
  podgroups: "podGroups",
};

function synthNodeName(i: number): string {
  return `node-${String(i).padStart(5, "0")}`;
}

function synthNode(i: number): Node {
  const name = synthNodeName(i);
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, uid: `uid-${name}`, resourceVersion: "1", labels: { "kubernetes.io/hostname": name } },
    spec: { podCIDR: `10.${64 + Math.floor(i / 256)}.${i % 256}.0/24`, podCIDRs: [`10.${64 + Math.floor(i / 256)}.${i % 256}.0/24`] },
    status: {
      addresses: [{ type: "InternalIP", address: `172.${16 + Math.floor(i / 65536)}.${Math.floor(i / 256) % 256}.${i % 256}` }, { type: "Hostname", address: name }],
      conditions: [{ type: "Ready", status: "True", reason: "KubeletReady" }],
    },
  };
}

function kubeProxyPod(node: string): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `kube-proxy-${node}`, namespace: "kube-system", uid: `uid-kp-${node}`, resourceVersion: "1", labels: { "k8s-app": "kube-proxy" } },
    spec: { nodeName: node, hostNetwork: true, containers: [{ name: "kube-proxy", image: "registry.k8s.io/kube-proxy:v1.31.0" }] },
    status: { phase: "Running", podIP: "", hostIP: "", containerStatuses: [{ name: "kube-proxy", ready: true, state: { running: { startedAt: "2024-01-01T00:00:00Z" } } }] },
  };
}

function synthPod(i: number, nodes: number): Pod {
  const node = synthNodeName(i % nodes);
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `bulk-${i}`, namespace: "bulk", uid: `uid-bulk-${i}`, resourceVersion: "1", labels: { app: "bulk" } },
    spec: { nodeName: node, containers: [{ name: "app", image: "busybox" }] },
    status: { phase: "Running", podIP: `10.${64 + Math.floor((i % nodes) / 256)}.${(i % nodes) % 256}.${10 + Math.floor(i / nodes)}` },
  };
}

class Store {
  #explicit = new Map<string, Map<string, Obj>>();
  rv = 100;
  constructor(readonly synthetic: SyntheticCluster | undefined) {}

  key(ns: string | undefined, name: string): string {
    return `${ns ?? ""}/${name}`;
  }
  map(resource: string): Map<string, Obj> {
    let m = this.#explicit.get(resource);
    if (!m) this.#explicit.set(resource, (m = new Map()));
    return m;
  }
  put(resource: string, o: Obj): Obj {
    const info = RESOURCES[resource];
    const obj = { apiVersion: info?.apiVersion, kind: info?.kind, ...o } as Obj;
    obj.metadata = { ...obj.metadata, resourceVersion: String(++this.rv) };
    this.map(resource).set(this.key(obj.metadata.namespace, obj.metadata.name), obj);
    return obj;
  }
  delete(resource: string, ns: string | undefined, name: string): Obj | undefined {
    const m = this.map(resource);
    const k = this.key(ns, name);
    const o = m.get(k);
    m.delete(k);
    return o;
  }
  get(resource: string, ns: string | undefined, name: string): Obj | undefined {
    const o = this.map(resource).get(this.key(ns, name));
    if (o) return o;
    const s = this.synthetic;
    if (!s) return undefined;
    let m: RegExpExecArray | null;
    if (resource === "nodes" && (m = /^node-(\d{5})$/.exec(name)) && Number(m[1]) < s.nodes) return synthNode(Number(m[1])) as Obj;
    if (resource === "pods" && ns === "kube-system" && (s.kubeProxy ?? true) && (m = /^kube-proxy-node-(\d{5})$/.exec(name)) && Number(m[1]) < s.nodes) {
      return kubeProxyPod(synthNodeName(Number(m[1]))) as Obj;
    }
    if (resource === "pods" && ns === "bulk" && (m = /^bulk-(\d+)$/.exec(name)) && Number(m[1]) < s.nodes * s.podsPerNode) return synthPod(Number(m[1]), s.nodes) as Obj;
    return undefined;
  }
  *iterate(resource: string, ns: string | undefined): Generator<Obj> {
    for (const o of this.map(resource).values()) if (ns === undefined || o.metadata.namespace === ns) yield o;
    const s = this.synthetic;
    if (!s) return;
    if (resource === "nodes") for (let i = 0; i < s.nodes; i++) yield synthNode(i) as Obj;
    if (resource === "pods") {
      if ((ns === undefined || ns === "kube-system") && (s.kubeProxy ?? true)) for (let i = 0; i < s.nodes; i++) yield kubeProxyPod(synthNodeName(i)) as Obj;
      if (ns === undefined || ns === "bulk") for (let i = 0; i < s.nodes * s.podsPerNode; i++) yield synthPod(i, s.nodes) as Obj;
    }
  }
}

// ------------------------------------------------------------------------------------------------------------
// server

interface Watcher {
  resource: string;
  ns: string | undefined;
  match: (o: Obj) => boolean;
  res: ServerResponse;
}

interface WsLike {
  protocol: string;
  send(data: Buffer, cb?: (e?: Error) => void): void;
  close(code?: number): void;
  terminate(): void;
  on(ev: string, fn: (...a: unknown[]) => void): void;
}
interface WssLike {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, cb: (ws: WsLike) => void): void;
  close(): void;
}

function status(code: number, reason: string, message: string, details?: Record<string, unknown>): Record<string, unknown> {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, ...(details ? { details } : {}), code };
}

const REASONS: Record<number, string> = { 400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 409: "AlreadyExists", 410: "Expired", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable" };

/**
 * Starts the fake API server on 127.0.0.1 (random port) and writes its kubeconfigs.
 * @param o objects, faults, lifecycle and exec behaviour.
 */
export async function startFakeApiServer(o: FakeApiOptions = {}): Promise<FakeApiServer> {
  const pki = makePki({ user: "cert-user", group: "system:masters" }, o.pki);
  const token = o.token ?? "fake-token-0123456789";
  const store = new Store(o.synthetic);
  for (const [resource, key] of Object.entries(LIST_KEYS)) {
    for (const obj of (o.objects?.[key] ?? []) as Obj[]) store.put(resource, structuredClone(obj));
  }
  if (o.kubeProxyPods ?? true) {
    for (const n of o.objects?.nodes ?? []) {
      if (!store.get("pods", "kube-system", `kube-proxy-${n.metadata.name}`)) store.put("pods", kubeProxyPod(n.metadata.name) as Obj);
    }
  }
  const requests: RecordedRequest[] = [];
  const listeners = new Set<(r: RecordedRequest) => void>();
  const arrivals = new Set<(r: RecordedRequest) => void>();
  const arrived = (req: IncomingMessage, kind: RecordedRequest["kind"]) => {
    const url = new URL(req.url ?? "/", "https://fake");
    const r: RecordedRequest = { method: req.method ?? "", path: url.pathname, query: queryOf(url), status: 0, kind, at: Date.now() };
    for (const l of arrivals) l(r);
  };
  const watchers = new Set<Watcher>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const children = new Set<ChildProcess>();
  /** Memory cgroups of finished execs being deleted (memoryBytesFor). */
  const cgroupRemovals: Promise<void>[] = [];
  const sockets = new Set<WsLike>();
  const faults = (o.faults ?? []).map((f) => ({ ...f, left: f.times ?? Infinity }));
  const podEvents: { rv: number; type: string; object: Obj }[] = [];

  const record = (r: RecordedRequest) => {
    requests.push(r);
    for (const l of listeners) l(r);
  };
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  const notify = (resource: string, type: string, obj: Obj) => {
    if (resource === "pods") podEvents.push({ rv: Number(obj.metadata.resourceVersion), type, object: obj });
    for (const w of watchers) {
      if (w.resource !== resource || (w.ns !== undefined && w.ns !== obj.metadata.namespace) || !w.match(obj)) continue;
      w.res.write(JSON.stringify({ type, object: obj }) + "\n");
    }
  };
  const update = (ns: string, name: string, f: (p: Obj) => void) => {
    const p = store.get("pods", ns, name);
    if (!p || !store.map("pods").has(store.key(ns, name))) return;
    const copy = structuredClone(p);
    f(copy);
    notify("pods", "MODIFIED", store.put("pods", copy));
  };

  const userOf = (req: IncomingMessage): string | undefined => {
    const auth = req.headers.authorization;
    if (auth === `Bearer ${token}`) return "token-user";
    const sock = req.socket as TLSSocket;
    if (sock.authorized) {
      const cn = sock.getPeerCertificate()?.subject?.CN;
      if (cn) return Array.isArray(cn) ? cn[0] : cn;
    }
    return undefined;
  };
  const denied = (verb: string, resource: string, ns: string | undefined) =>
    (o.denials ?? []).some((d) => (d.verb === verb || d.verb === "*") && d.resource === resource && (d.namespace === undefined || d.namespace === (ns ?? "")));
  const forbidden = (user: string, verb: string, resource: string, sub: string | undefined, ns: string | undefined, name: string | undefined, group: string) =>
    // kube-apiserver's words: NewForbidden(group resource, name, forbiddenMessage) (apiserver
    // pkg/endpoints/handlers/responsewriters/errors.go), the subresource joined to the resource with "/"
    status(403, "Forbidden", `${resource}${group ? `.${group}` : ""}${name ? ` "${name}"` : ""} is forbidden: User "${user}" cannot ${verb} resource "${resource}${sub ? `/${sub}` : ""}" in API group "${group}"${ns ? ` in the namespace "${ns}"` : " at the cluster scope"}`, { name, kind: resource });

  const psaViolation = (ns: string, pod: Obj): string | undefined => {
    const level = o.namespaces?.[ns]?.["pod-security.kubernetes.io/enforce"];
    if (level !== "baseline" && level !== "restricted") return undefined;
    const spec = (pod as unknown as Pod).spec ?? {};
    const v: string[] = [];
    const hostNs = [spec.hostNetwork ? "hostNetwork=true" : "", spec.hostPID ? "hostPID=true" : ""].filter(Boolean);
    if (hostNs.length) v.push(`host namespaces (${hostNs.join(", ")})`);
    for (const c of (spec.containers ?? []) as { name: string; securityContext?: { privileged?: boolean; capabilities?: { add?: string[] } } }[]) {
      if (c.securityContext?.privileged) v.push(`privileged (container "${c.name}" must not set securityContext.privileged=true)`);
      const add = c.securityContext?.capabilities?.add ?? [];
      if (add.length) v.push(`non-default capabilities (container "${c.name}" must not include ${add.map((a) => `"${a}"`).join(", ")} in securityContext.capabilities.add)`);
    }
    if ((spec.volumes ?? []).some((x) => (x as { hostPath?: unknown }).hostPath)) v.push("hostPath volumes");
    return v.length ? `pods "${pod.metadata.name}" is forbidden: violates PodSecurity "${level}:latest": ${v.join(", ")}` : undefined;
  };

  const startPod = (ns: string, name: string) => {
    const p = o.pods ?? {};
    const pod = store.get("pods", ns, name) as unknown as Pod;
    const image = (pod.spec?.containers?.[0]?.image as string | undefined) ?? "";
    const cname = pod.spec?.containers?.[0]?.name ?? "c";
    later(p.scheduleDelayMs ?? 20, () => update(ns, name, (x) => {
      const st = ((x as unknown as Pod).status ??= {});
      st.conditions = [{ type: "PodScheduled", status: "True" }];
      st.containerStatuses = [{ name: cname, image, ready: false, state: { waiting: { reason: "ContainerCreating" } } }];
      st.hostIP = "192.0.2.1";
    }));
    later(p.startDelayMs ?? 150, () => update(ns, name, (x) => {
      const st = ((x as unknown as Pod).status ??= {});
      if ((p.badImages ?? []).includes(image)) {
        st.containerStatuses = [{ name: cname, image, ready: false, state: { waiting: { reason: "ErrImagePull", message: `failed to pull and unpack image "docker.io/${image}:latest": failed to resolve reference: not found` } } }];
        later(50, () => update(ns, name, (y) => {
          ((y as unknown as Pod).status!).containerStatuses = [{ name: cname, image, ready: false, state: { waiting: { reason: "ImagePullBackOff", message: `Back-off pulling image "${image}"` } } }];
        }));
        return;
      }
      st.phase = "Running";
      st.conditions = [{ type: "PodScheduled", status: "True" }, { type: "Ready", status: "True" }];
      st.containerStatuses = [{ name: cname, image, ready: true, state: { running: { startedAt: new Date().toISOString() } } }];
    }));
    const deadline = pod.spec?.activeDeadlineSeconds as number | undefined;
    if (deadline !== undefined) {
      later(deadline * (p.msPerDeadlineSecond ?? 1000), () => update(ns, name, (x) => {
        const st = ((x as unknown as Pod).status ??= {});
        st.phase = "Failed";
        st.reason = "DeadlineExceeded";
        st.message = `Pod was active on the node longer than the specified deadline`;
        st.containerStatuses = [{ name: cname, image, ready: false, state: { terminated: { reason: "Error", exitCode: 137 } } }];
      }));
    }
  };

  const send = (res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(code, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...headers });
    (res as unknown as { bytesOut?: number }).bytesOut = Buffer.byteLength(text);
    res.end(text);
    return code;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<number> {
    const url = new URL(req.url ?? "/", "https://fake");
    const q = url.searchParams;
    const user = userOf(req);
    if (!user) return send(res, 401, status(401, "Unauthorized", "Unauthorized"));
    for (const f of faults) {
      if (f.left <= 0 || (f.method && f.method !== req.method) || !f.path.test(url.pathname)) continue;
      f.left--;
      if (f.delayMs) await new Promise((r) => later(f.delayMs!, () => r(undefined)));
      if (f.status !== undefined && !f.afterCreate) {
        const headers: Record<string, string> = f.retryAfterSeconds !== undefined ? { "Retry-After": String(f.retryAfterSeconds) } : {};
        return send(res, f.status, status(f.status, REASONS[f.status] ?? "Unknown", f.message ?? `fake fault on ${url.pathname}`), headers);
      }
      if (f.afterCreate) (req as unknown as { fault: typeof f }).fault = f;
    }
    if (url.pathname === "/version") return send(res, 200, { major: "1", minor: "31", gitVersion: "v1.31.0-fake" });
    const m = /^\/(?:api\/v1|apis\/([^/]+)\/([^/]+))(?:\/namespaces\/([^/]+))?\/([a-z]+)(?:\/([^/]+))?(?:\/([a-z]+))?$/.exec(url.pathname);
    if (!m) return send(res, 404, status(404, "NotFound", "the server could not find the requested resource"));
    const [, group = "", , ns, resource = "", rawName, sub] = m;
    const name = rawName !== undefined ? decodeURIComponent(rawName) : undefined;
    const body = req.method === "POST" || req.method === "DELETE"
      ? await new Promise<string>((r) => {
        const c: Buffer[] = [];
        req.on("data", (x: Buffer) => c.push(x));
        req.on("end", () => r(Buffer.concat(c).toString("utf8")));
      })
      : "";
    if (req.method === "POST" || req.method === "DELETE") (req as unknown as { sentBody?: string }).sentBody = body;

    if (resource === "selfsubjectaccessreviews" && req.method === "POST") {
      const rv = JSON.parse(body) as { spec: { resourceAttributes: { verb: string; resource: string; subresource?: string; namespace?: string } } };
      const a = rv.spec.resourceAttributes;
      const res2 = `${a.resource}${a.subresource ? `/${a.subresource}` : ""}`;
      const allowed = !denied(a.verb, res2, a.namespace);
      return send(res, 201, { ...rv, apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", status: { allowed, ...(allowed ? {} : { reason: "no RBAC policy matched" }) } });
    }
    const info = RESOURCES[resource];
    if (!info) return send(res, 404, status(404, "NotFound", "the server could not find the requested resource"));
    if ((resource === "resourceclaims" || resource === "volumeattributesclasses" || resource === "workloads" || resource === "podgroups") && `${group}/${m[2]}` !== (o.servedVersions?.[resource] ?? info.apiVersion)) {
      return send(res, 404, status(404, "NotFound", "the server could not find the requested resource"));
    }
    const watching = q.get("watch") === "1" || q.get("watch") === "true";
    const verb = req.method === "GET" ? (name ? "get" : watching ? "watch" : "list") : req.method === "POST" ? "create" : req.method === "DELETE" ? "delete" : "?";
    const rbacResource = `${resource}${sub ? `/${sub}` : ""}`;
    if (denied(verb, rbacResource, ns)) return send(res, 403, forbidden(user, verb, resource, sub, ns, name, group));

    if (req.method === "GET" && name) {
      const obj = store.get(resource, ns, name);
      if (!obj) return send(res, 404, status(404, "NotFound", `${resource} "${name}" not found`, { name, kind: resource }));
      return send(res, 200, obj);
    }
    if (req.method === "GET" && watching) {
      const match = (x: Obj) => labelSelector(q.get("labelSelector") ?? undefined)(x.metadata.labels ?? {}) && fieldSelector(q.get("fieldSelector") ?? undefined)(x);
      res.writeHead(200, { "Content-Type": "application/json", "Transfer-Encoding": "chunked" });
      const from = Number(q.get("resourceVersion") ?? "0");
      const w: Watcher = { resource, ns, match, res };
      if (resource === "pods") {
        for (const e of podEvents) if (e.rv > from && (ns === undefined || e.object.metadata.namespace === ns) && match(e.object)) res.write(JSON.stringify({ type: e.type, object: e.object }) + "\n");
      }
      watchers.add(w);
      const t = Number(q.get("timeoutSeconds") ?? "0");
      const end = () => {
        if (!watchers.delete(w)) return;
        res.end();
      };
      if (t > 0) later(t * 1000, end);
      req.on("close", () => watchers.delete(w));
      return 200;
    }
    if (req.method === "GET") {
      const lsel = labelSelector(q.get("labelSelector") ?? undefined);
      const fsel = fieldSelector(q.get("fieldSelector") ?? undefined);
      const limit = Number(q.get("limit") ?? "0");
      const offset = q.get("continue") ? Number(Buffer.from(q.get("continue")!, "base64").toString("utf8")) : 0;
      const items: Obj[] = [];
      let seen = 0;
      let more = false;
      for (const x of store.iterate(resource, ns)) {
        if (!lsel(x.metadata.labels ?? {}) || !fsel(x)) continue;
        if (seen++ < offset) continue;
        if (limit > 0 && items.length >= limit) {
          more = true;
          break;
        }
        const { apiVersion: _a, kind: _k, ...rest } = x;
        items.push(rest as Obj);
      }
      const meta: Record<string, string> = { resourceVersion: String(store.rv) };
      if (more) meta.continue = Buffer.from(String(offset + items.length)).toString("base64");
      return send(res, 200, { kind: `${info.kind}List`, apiVersion: info.apiVersion, metadata: meta, items });
    }
    if (req.method === "POST" && resource === "pods" && ns) {
      const pod = JSON.parse(body) as Obj;
      const pname = pod.metadata?.name;
      if (!pname) return send(res, 422, status(422, "Invalid", "Pod is invalid: metadata.name: Required value"));
      const psa = psaViolation(ns, pod);
      if (psa) return send(res, 403, status(403, "Forbidden", psa, { name: pname, kind: "pods" }));
      if (store.map("pods").has(store.key(ns, pname))) return send(res, 409, status(409, "AlreadyExists", `pods "${pname}" already exists`, { name: pname, kind: "pods" }));
      const created = store.put("pods", {
        ...pod,
        metadata: { ...pod.metadata, namespace: ns, uid: `uid-${pname}`, creationTimestamp: new Date().toISOString() },
        status: { phase: "Pending", qosClass: "BestEffort" },
      } as Obj);
      notify("pods", "ADDED", created);
      startPod(ns, pname);
      const f = (req as unknown as { fault?: Fault }).fault;
      if (f?.status !== undefined) return send(res, f.status, status(f.status, REASONS[f.status] ?? "Unknown", f.message ?? "fake fault after create"));
      return send(res, 201, created);
    }
    if (req.method === "DELETE" && name) {
      const gone = store.delete(resource, ns, name);
      if (!gone) return send(res, 404, status(404, "NotFound", `${resource} "${name}" not found`, { name, kind: resource }));
      const copy = { ...gone, metadata: { ...gone.metadata, resourceVersion: String(++store.rv), deletionTimestamp: new Date().toISOString() } } as Obj;
      notify(resource, "DELETED", copy);
      return send(res, 200, copy);
    }
    return send(res, 405, status(405, "MethodNotAllowed", `${req.method} is not supported here`));
  }

  const server: Server = createServer({ key: pki.serverKey, cert: pki.serverCert, ca: pki.caCert, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const url = new URL(req.url ?? "/", "https://fake");
    const started = Date.now();
    arrived(req, url.searchParams.get("watch") ? "watch" : "rest");
    handle(req, res).then((code) => {
      const watch = url.searchParams.get("watch") === "1" || url.searchParams.get("watch") === "true";
      const r: RecordedRequest = { method: req.method ?? "", path: url.pathname, query: queryOf(url), status: code, kind: watch ? "watch" : "rest", at: started };
      const sent = (req as unknown as { sentBody?: string }).sentBody;
      if (sent !== undefined) r.body = sent;
      const out = (res as unknown as { bytesOut?: number }).bytesOut;
      if (out !== undefined) r.bytesOut = out;
      const u = userOf(req);
      if (u) r.user = u;
      record(r);
    }, (e) => {
      send(res, 500, status(500, "InternalError", `fake server bug: ${(e as Error).message}`));
    });
  });

  // exec over WebSocket
  const WS = createRequire(import.meta.resolve("@kubernetes/client-node"))("ws") as { WebSocketServer: new (o: unknown) => WssLike };
  const serverProtocols = o.exec?.protocols ?? ["v5.channel.k8s.io", "v4.channel.k8s.io"];
  const wss = new WS.WebSocketServer({
    noServer: true,
    handleProtocols: (offered: Set<string>) => [...offered].find((p) => serverProtocols.includes(p)) ?? false,
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    arrived(req, "exec");
    const url = new URL(req.url ?? "/", "https://fake");
    const r: RecordedRequest = { method: req.method ?? "GET", path: url.pathname, query: queryOf(url), status: 101, kind: "exec", at: Date.now() };
    const user = userOf(req);
    if (user) r.user = user;
    const refuse = (code: number, body: unknown) => {
      const text = JSON.stringify(body);
      socket.end(`HTTP/1.1 ${code} ${REASONS[code] ?? "Error"}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
      r.status = code;
      record(r);
    };
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/.exec(url.pathname);
    if (!user) return refuse(401, status(401, "Unauthorized", "Unauthorized"));
    if (!m) return refuse(404, status(404, "NotFound", "the server could not find the requested resource"));
    const [, ns = "", podName = ""] = m;
    for (const verb of ["get", "create"]) {
      if (denied(verb, "pods/exec", ns)) return refuse(403, forbidden(user, verb, "pods", "exec", ns, podName, ""));
    }
    const pod = store.get("pods", ns, podName) as unknown as Pod | undefined;
    if (!pod) return refuse(404, status(404, "NotFound", `pods "${podName}" not found`, { name: podName, kind: "pods" }));
    if (pod.status?.phase !== "Running") return refuse(400, status(400, "BadRequest", `pod ${podName} is not running (phase ${pod.status?.phase ?? "Pending"})`));
    const container = url.searchParams.get("container") ?? pod.spec?.containers?.[0]?.name;
    if (!pod.spec?.containers?.some((c) => c.name === container)) return refuse(400, status(400, "BadRequest", `container ${container} is not valid for pod ${podName}`));
    const offered = String(req.headers["sec-websocket-protocol"] ?? "").split(",").map((s) => s.trim());
    if (!offered.some((p) => serverProtocols.includes(p))) return refuse(400, status(400, "BadRequest", "no supported stream protocol"));
    const command = url.searchParams.getAll("command");
    record(r);
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on("close", () => {
        sockets.delete(ws);
        r.endedAt = Date.now();
      });
      r.bytesOut = 0;
      const send = ws.send.bind(ws);
      ws.send = ((data: Buffer, cb?: () => void) => {
        r.bytesOut! += data.length;
        return send(data, cb);
      }) as typeof ws.send;
      runExec(ws, ns, pod, container, command, url.searchParams.get("stdin") === "true");
    });
  });

  const frame = (ch: number, data: Buffer | string) => Buffer.concat([Buffer.from([ch]), typeof data === "string" ? Buffer.from(data) : data]);
  function finish(ws: WsLike, code: number, command: string[]) {
    const st = code === 0
      ? { metadata: {}, status: "Success" }
      : { metadata: {}, status: "Failure", message: `command terminated with non-zero exit code: error executing command [${command.join(" ").slice(0, 60)}], exit code ${code}`, reason: "NonZeroExitCode", details: { causes: [{ reason: "ExitCode", message: String(code) }] } };
    ws.send(frame(3, JSON.stringify(st)), () => ws.close(1000));
  }
  function runExec(ws: WsLike, ns: string, pod: Pod, container: string | undefined, command: string[], withStdin: boolean) {
    const go = () => {
      if (o.exec?.noShell?.(ns, pod.metadata.name) && command[0] === "sh") {
        ws.send(frame(2, `OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": executable file not found in $PATH: unknown\r\n`));
        finish(ws, 126, command);
        return;
      }
      const node = pod.spec?.nodeName ?? "";
      const netns = o.exec?.netnsFor?.(node);
      if (!netns) {
        ws.send(frame(2, `fake apiserver: node ${node} has no network namespace\n`));
        finish(ws, 1, command);
        return;
      }
      const imagePath = o.exec?.pathFor?.(ns, pod.metadata.name);
      const inImage = imagePath === undefined ? command : ["env", "-i", `PATH=${imagePath}`, ...command];
      const contained = o.exec?.enforceSecurityContext ? containerArgv(pod, container, inImage) : inImage;
      const bytes = o.exec?.memoryBytesFor?.(containerMemoryLimitMiB(pod, container), ns, pod.metadata.name);
      const cgroup = bytes === undefined ? undefined : makeMemoryCgroup(bytes);
      if (bytes !== undefined && !cgroup) throw new Error("fake apiserver: memoryBytesFor needs memory cgroups (tests/helpers/memory_cgroup.ts)");
      // the cgroup is joined before `ip netns exec`, which mounts the network namespace's own /sys
      const inNetns = [findTool("ip") ?? "ip", "netns", "exec", netns, ...contained];
      const argv = cgroup ? inMemoryCgroupArgv(cgroup.dir, inNetns) : inNetns;
      const child = spawn(argv[0]!, argv.slice(1), { stdio: [withStdin ? "pipe" : "ignore", "pipe", "pipe"] });
      if (cgroup) child.on("close", () => cgroupRemovals.push(cgroup.remove()));
      children.add(child);
      if (withStdin) {
        // Channel 0 is stdin; v5's close signal for it is the frame [255, 0].
        child.stdin!.on("error", () => {});
        ws.on("message", (data: unknown) => {
          const b = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
          if (b[0] === 0) child.stdin!.write(b.subarray(1));
          else if (b[0] === 255 && b[1] === 0) child.stdin!.end();
        });
      }
      let sent = 0;
      let cut = false;
      const limit = o.exec?.cutAfterBytes;
      child.stdout!.on("data", (b: Buffer) => {
        if (cut) return;
        if (limit !== undefined && sent + b.length >= limit) {
          cut = true;
          ws.send(frame(1, b.subarray(0, Math.max(0, limit - sent))), () => ws.terminate());
          child.kill("SIGKILL");
          return;
        }
        sent += b.length;
        ws.send(frame(1, b));
      });
      child.stderr!.on("data", (b: Buffer) => {
        if (!cut) ws.send(frame(2, b));
      });
      child.on("close", (code) => {
        children.delete(child);
        if (!cut) finish(ws, code ?? 137, command);
      });
      ws.on("close", () => {
        if (child.exitCode === null) child.kill("SIGKILL");
      });
    };
    if (o.exec?.delayMs) later(o.exec.delayMs, go);
    else go();
  }

  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  const url = `https://127.0.0.1:${port}`;
  const dir = mkdtempSync(join(tmpdir(), "knp-fake-"));
  const ca = Buffer.from(pki.caCert).toString("base64");
  const ctx = (name: string, userName: string) => ({ name, context: { cluster: "fake", user: userName, ...(o.contextNamespace ? { namespace: o.contextNamespace } : {}) } });
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    "current-context": "fake",
    clusters: [{ name: "fake", cluster: { server: url, "certificate-authority-data": ca } }],
    users: [{ name: "token-user", user: { token } }],
    contexts: [ctx("fake", "token-user")],
  }, null, 2));
  const kubeconfigCert = join(dir, "kubeconfig-cert");
  writeFileSync(join(dir, "ca.crt"), pki.caCert);
  writeFileSync(join(dir, "client.crt"), pki.clientCert);
  writeFileSync(join(dir, "client.key"), pki.clientKey);
  writeFileSync(kubeconfigCert, [
    "apiVersion: v1",
    "kind: Config",
    "current-context: fake-cert",
    "clusters:",
    "- name: fake",
    "  cluster:",
    `    server: ${url}`,
    "    certificate-authority: ca.crt",
    "users:",
    "- name: cert-user",
    "  user:",
    "    client-certificate: client.crt",
    "    client-key: client.key",
    "contexts:",
    "- name: fake-cert",
    "  context:",
    "    cluster: fake",
    "    user: cert-user",
    ...(o.contextNamespace ? [`    namespace: ${o.contextNamespace}`] : []),
    "",
  ].join("\n"));

  return {
    url,
    pki,
    kubeconfig,
    kubeconfigCert,
    dir,
    requests,
    onRequest(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    waitForRequest(pred, timeoutMs = 20_000) {
      const found = requests.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => {
          listeners.delete(l);
          reject(new Error("fake apiserver: the awaited request never came"));
        }, timeoutMs);
        const l = (r: RecordedRequest) => {
          if (!pred(r)) return;
          clearTimeout(t);
          listeners.delete(l);
          resolve(r);
        };
        listeners.add(l);
      });
    },
    waitForArrival(pred, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => {
          arrivals.delete(l);
          reject(new Error("fake apiserver: the awaited request never arrived"));
        }, timeoutMs);
        const l = (r: RecordedRequest) => {
          if (!pred(r)) return;
          clearTimeout(t);
          arrivals.delete(l);
          resolve(r);
        };
        arrivals.add(l);
      });
    },
    debugPods() {
      return [...store.map("pods").values()].filter((p) => p.metadata.labels?.["app.kubernetes.io/managed-by"] === "kubectl-netpath") as unknown as Pod[];
    },
    put(resource, obj) {
      const stored = store.put(resource, obj as Obj);
      notify(resource, "MODIFIED", stored);
    },
    get(resource, ns, name) {
      return store.get(resource, ns, name);
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      for (const w of watchers) w.res.end();
      watchers.clear();
      for (const c of children) c.kill("SIGKILL");
      for (const s of sockets) s.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await Promise.all(cgroupRemovals);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function queryOf(url: URL): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) (out[k] ??= []).push(v);
  return out;
}
