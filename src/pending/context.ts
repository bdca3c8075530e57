/**
 * Lookups over a Bundle for the pending analysis: objects by name, nodes with their zone / readiness / taints,
 * events of an object, the claims a pod mounts, the effective StorageClass of a claim, whether the collection could list
 * the pods bound to the nodes.
 *
 * Conventions follow the API and its controllers: the PVC class is the beta annotation
 * `volume.beta.kubernetes.io/storage-class` first, then `spec.storageClassName`
 * (k8s.io/component-helpers/storage/volume GetPersistentVolumeClaimClass); the default StorageClass carries
 * `storageclass.kubernetes.io/is-default-class: "true"` (or the beta annotation); a generic ephemeral volume's claim
 * is named `<pod>-<volume>` (k8s.io/component-helpers/storage/ephemeral VolumeClaimName).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { type Bundle, PODS_NOT_LISTED_WARNING } from "../bundle/bundle.ts";
import type {
  KubeEvent,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  StorageClass,
} from "../model/k8s.ts";
import type { NodeFacts } from "./node_selector.ts";
import type { EventSummary, NodeState, ObjectRef, StorageClassSummary } from "./report.ts";
import { formatTaint } from "./taints.ts";

/**
 * Zone label keys, most specific first: GA, beta, then the CSI drivers' own topology keys (the node plugin of each
 * driver reports them in NodeGetInfo and the kubelet copies them onto the Node): Azure Disk, AWS EBS, GCE PD, Cinder,
 * vSphere (`k8s-zone`, the default zone category), Ceph RBD and CephFS (ceph-csi's `--domainlabels` re-exported under
 * the driver's prefix), Portworx.
 */
export const ZONE_KEYS = [
  "topology.kubernetes.io/zone",
  "failure-domain.beta.kubernetes.io/zone",
  "topology.disk.csi.azure.com/zone",
  "topology.ebs.csi.aws.com/zone",
  "topology.gke.io/zone",
  "topology.cinder.csi.openstack.org/zone",
  "topology.csi.vmware.com/k8s-zone",
  "topology.rbd.csi.ceph.com/zone",
  "topology.cephfs.csi.ceph.com/zone",
  "topology.portworx.io/zone",
] as const;

/** Region label keys: GA, beta, then the CSI drivers' own (vSphere, Ceph RBD and CephFS, Portworx). */
export const REGION_KEYS = [
  "topology.kubernetes.io/region",
  "failure-domain.beta.kubernetes.io/region",
  "topology.csi.vmware.com/k8s-region",
  "topology.rbd.csi.ceph.com/region",
  "topology.cephfs.csi.ceph.com/region",
  "topology.portworx.io/region",
] as const;

/**
 * Keys that pin a volume to one node: the hostname label, and the node keys of local-volume CSI drivers — TopoLVM and
 * Red Hat LVMS (`topology.topolvm.io/node`; `topology.topolvm.cybozu.com/node` before TopoLVM's rename), OpenEBS
 * LocalPV-LVM and LocalPV-ZFS (`openebs.io/nodename`; ZFS also `openebs.io/nodeid`).
 */
export const NODE_KEYS = [
  "kubernetes.io/hostname",
  "topology.topolvm.io/node",
  "topology.topolvm.cybozu.com/node",
  "openebs.io/nodename",
  "openebs.io/nodeid",
] as const;

/** The labels the VolumeZone filter compares between a PV and a node. */
export const VOLUME_ZONE_KEYS = [
  "failure-domain.beta.kubernetes.io/zone",
  "failure-domain.beta.kubernetes.io/region",
  "topology.kubernetes.io/zone",
  "topology.kubernetes.io/region",
] as const;

/** Annotation the scheduler sets on a WaitForFirstConsumer claim to ask for provisioning on a node. */
export const ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node";
/** Annotation the PV controller sets once a claim's binding is complete. */
export const ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed";
/** Provisioner name meaning "no dynamic provisioning" (local volumes, static PVs). */
export const NO_PROVISIONER = "kubernetes.io/no-provisioner";

/** Indexes over one bundle. */
export interface PendingContext {
  bundle: Bundle;
  /** Nodes sorted by name. */
  nodes: Node[];
  nodeStates: NodeState[];
  nodeByName: Map<string, Node>;
  /** Keyed `namespace/name`. */
  claims: Map<string, PersistentVolumeClaim>;
  volumes: Map<string, PersistentVolume>;
  classes: Map<string, StorageClass>;
  /** The default StorageClass (the newest one when several are annotated, as the admission plugin picks). */
  defaultClass: StorageClass | undefined;
  pods: Pod[];
  events: KubeEvent[];
  /** Node name → the non-terminal pods bound to it (spec.nodeName; phase not Succeeded/Failed), in bundle order. */
  podsByNode: Map<string, Pod[]>;
  /** Namespace name → labels, for pod affinity namespaceSelectors; `null` when the bundle holds no Namespace. */
  namespaceLabels: Map<string, Record<string, string>> | null;
}

function nsName(ns: string | undefined, name: string): string {
  return `${ns ?? ""}/${name}`;
}

/** First value among `keys` present in `labels`. */
export function firstLabel(labels: Record<string, string> | undefined, keys: readonly string[]): string | null {
  for (const k of keys) {
    if (labels && Object.prototype.hasOwnProperty.call(labels, k)) return labels[k] as string;
  }
  return null;
}

/** The node's Ready condition status. */
export function nodeReady(node: Node): "True" | "False" | "Unknown" {
  const c = node.status?.conditions?.find((x) => x.type === "Ready");
  return c?.status === "True" ? "True" : c?.status === "False" ? "False" : "Unknown";
}

/** What a selector can test on a node. */
export function nodeFacts(node: Node): NodeFacts {
  return { name: node.metadata.name, labels: node.metadata.labels ?? {} };
}

/** A node reduced to zone, region, readiness, cordon and NoSchedule/NoExecute taints. */
export function nodeState(node: Node): NodeState {
  const labels = node.metadata.labels ?? {};
  return {
    name: node.metadata.name,
    zone: firstLabel(labels, ["topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"]),
    region: firstLabel(labels, REGION_KEYS),
    ready: nodeReady(node),
    cordoned: node.spec?.unschedulable === true,
    taints: (node.spec?.taints ?? []).filter((t) => t.effect !== "PreferNoSchedule").map(formatTaint),
    kubeletVersion: node.status?.nodeInfo?.kubeletVersion ?? null,
  };
}

function isDefaultClass(sc: StorageClass): boolean {
  const a = sc.metadata.annotations ?? {};
  return a["storageclass.kubernetes.io/is-default-class"] === "true" ||
    a["storageclass.beta.kubernetes.io/is-default-class"] === "true";
}

/**
 * Builds the lookups for one bundle.
 * @param bundle the bundle (its `objects` lists may be empty).
 */
export function buildContext(bundle: Bundle): PendingContext {
  const o = bundle.objects;
  const nodes = [...(o.nodes ?? [])].sort((a, b) => cmp(a.metadata.name, b.metadata.name));
  const classes = new Map((o.storageClasses ?? []).map((c) => [c.metadata.name, c] as const));
  const defaults = [...classes.values()].filter(isDefaultClass).sort((a, b) =>
    cmp(b.metadata.creationTimestamp ?? "", a.metadata.creationTimestamp ?? "") || cmp(a.metadata.name, b.metadata.name)
  );
  return {
    bundle,
    nodes,
    nodeStates: nodes.map(nodeState),
    nodeByName: new Map(nodes.map((n) => [n.metadata.name, n] as const)),
    claims: new Map((o.persistentVolumeClaims ?? []).map((c) => [nsName(c.metadata.namespace, c.metadata.name), c] as const)),
    volumes: new Map((o.persistentVolumes ?? []).map((v) => [v.metadata.name, v] as const)),
    classes,
    defaultClass: defaults[0],
    pods: o.pods ?? [],
    events: o.events ?? [],
    podsByNode: indexPodsByNode(o.pods ?? []),
    namespaceLabels: (o.namespaces ?? []).length > 0
      ? new Map((o.namespaces ?? []).map((n) => [n.metadata.name, n.metadata.labels ?? {}] as const))
      : null,
  };
}

/**
 * The non-terminal pods bound to each node (what the scheduler's NodeInfo holds: its pod informer leaves out
 * Succeeded and Failed pods).
 * @param pods the bundle's pods.
 * @returns node name → pods, in bundle order.
 */
export function indexPodsByNode(pods: readonly Pod[]): Map<string, Pod[]> {
  const out = new Map<string, Pod[]>();
  for (const p of pods) {
    const n = p.spec?.nodeName;
    if (!n || p.status?.phase === "Succeeded" || p.status?.phase === "Failed") continue;
    const list = out.get(n);
    if (list) list.push(p);
    else out.set(n, [p]);
  }
  return out;
}

/** String comparison in code-unit order (stable across locales). */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Looks a claim up by namespace and name. */
export function getClaim(ctx: PendingContext, namespace: string, name: string): PersistentVolumeClaim | undefined {
  return ctx.claims.get(nsName(namespace, name));
}

/**
 * The claim's effective StorageClass name: the beta annotation first, then `spec.storageClassName`.
 * @returns the name; `""` when explicitly empty (static binding only); `null` when unset.
 */
export function claimClassName(pvc: PersistentVolumeClaim): string | null {
  const beta = pvc.metadata.annotations?.["volume.beta.kubernetes.io/storage-class"];
  if (beta !== undefined) return beta;
  const v = pvc.spec?.storageClassName;
  return v === undefined || v === null ? null : v;
}

/** The PV's class name: the beta annotation first, then `spec.storageClassName`; `""` when none. */
export function volumeClassName(pv: PersistentVolume): string {
  return pv.metadata.annotations?.["volume.beta.kubernetes.io/storage-class"] ?? pv.spec?.storageClassName ?? "";
}

/** A StorageClass reduced for the report. */
export function storageClassSummary(sc: StorageClass): StorageClassSummary {
  return {
    name: sc.metadata.name,
    provisioner: sc.provisioner,
    volumeBindingMode: sc.volumeBindingMode ?? "Immediate",
    parameters: { ...(sc.parameters ?? {}) },
    allowedTopologies: sc.allowedTopologies ?? [],
    isDefault: isDefaultClass(sc),
  };
}

/** The claims a pod mounts: `persistentVolumeClaim` volumes and generic ephemeral volumes (`<pod>-<volume>`). */
export function podClaimNames(pod: Pod): { volume: string; claim: string }[] {
  const out: { volume: string; claim: string }[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    if (v.persistentVolumeClaim?.claimName !== undefined) out.push({ volume: v.name, claim: v.persistentVolumeClaim.claimName });
    else if (v["ephemeral"] !== undefined && v["ephemeral"] !== null) out.push({ volume: v.name, claim: `${pod.metadata.name}-${v.name}` });
  }
  return out;
}

/** Pods in `namespace` that mount claim `name`, Pending ones first, then by name. */
export function podsUsingClaim(ctx: PendingContext, namespace: string, name: string): Pod[] {
  return ctx.pods
    .filter((p) => (p.metadata.namespace ?? "") === namespace && podClaimNames(p).some((c) => c.claim === name))
    .sort((a, b) => {
      const pa = a.status?.phase === "Pending" ? 0 : 1;
      const pb = b.status?.phase === "Pending" ? 0 : 1;
      return pa - pb || cmp(a.metadata.name, b.metadata.name);
    });
}

function eventTime(e: KubeEvent): number {
  const t = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp;
  const ms = t ? Date.parse(t) : NaN;
  return Number.isNaN(ms) ? -Infinity : ms;
}

/** An event reduced for the report. */
export function eventSummary(e: KubeEvent): EventSummary {
  const obj = e.involvedObject ?? e.regarding ?? {};
  const series = (e as { series?: { count?: number } }).series;
  const object: ObjectRef = { kind: obj.kind ?? "", name: obj.name ?? "" };
  if (obj.namespace) object.namespace = obj.namespace;
  return {
    type: e.type ?? null,
    reason: e.reason ?? "",
    message: e.message ?? e.note ?? "",
    count: e.count ?? series?.count ?? null,
    lastSeen: e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? null,
    source: e.source?.component ?? (e as { reportingController?: string }).reportingController ?? null,
    object,
  };
}

/**
 * Events about one object, oldest first (by lastTimestamp / eventTime / firstTimestamp; ties keep bundle order).
 * @param kind `Pod` or `PersistentVolumeClaim`.
 * @param uid the object's uid, when known: events naming another uid are of an earlier object of the same name.
 */
export function eventsFor(ctx: PendingContext, kind: string, namespace: string, name: string, uid?: string): EventSummary[] {
  return ctx.events
    .map((e, i) => ({ e, i }))
    .filter(({ e }) => {
      const o = e.involvedObject ?? e.regarding;
      // an event of an earlier object of the same name (a claim deleted and created again) is not this one's: kubectl
      // describe selects events by involvedObject.uid too
      return o?.kind === kind && o.name === name && (o.namespace ?? "") === namespace && (!uid || !o.uid || o.uid === uid);
    })
    .sort((a, b) => eventTime(a.e) - eventTime(b.e) || a.i - b.i)
    .map(({ e }) => eventSummary(e));
}

/** Why the pods bound to the nodes are missing from a bundle ({@link PODS_NOT_LISTED_WARNING}), in the words the report uses. */
export const PODS_UNLISTED_WHY = `list pods was forbidden`;

/**
 * The note of a pod whose verdicts were computed without the pods bound to the nodes ({@link PODS_NOT_LISTED_WARNING}):
 * the plugins that read them (kube-scheduler NodeResourcesFit, NodePorts, PodTopologySpread, InterPodAffinity) saw
 * empty nodes.
 */
export const PODS_NOT_LISTED_NOTE =
  `the pods bound to the nodes were not listed (${PODS_UNLISTED_WHY}): the resources, hostPorts, topologySpread and podAffinity verdicts count none of them, so a node shown to fit may be full, hold the port, or break a spread or anti-affinity rule; RBAC "list pods" cluster-wide decides them`;

/** Whether the bundle's collection could not list the cluster's pods ({@link PODS_NOT_LISTED_WARNING}). */
export function podsNotListed(bundle: Bundle): boolean {
  return bundle.warnings.includes(PODS_NOT_LISTED_WARNING);
}
