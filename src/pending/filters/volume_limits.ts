/**
 * The NodeVolumeLimits filter of kube-scheduler (pkg/scheduler/framework/plugins/nodevolumelimits/csi.go `CSILimits`,
 * v1.27–v1.35): can the node attach the pod's CSI volumes without exceeding its driver's limit?
 *
 * - The limit of a driver on a node is its CSINode entry's `allocatable.count`, or the Node's
 *   `status.allocatable["attachable-volumes-csi-<driver>"]` (the older place); a driver with neither has no limit.
 *   A node without a CSINode object has only the Node's limits.
 * - A volume is counted once per node by its unique name `<driver>/<volume>`: a bound claim by its PersistentVolume
 *   (a `csi` source's driver; an in-tree awsElasticBlockStore, gcePersistentDisk, azureDisk or cinder source under
 *   the CSI driver it migrates to when the node has a CSINode, portworxVolume when the CSINode's
 *   `storage.alpha.kubernetes.io/migrated-plugins` annotation lists it; azureFile and vsphereVolume are not counted:
 *   utils.go `isCSIMigrationOn`), an unbound claim of the pending pod by its StorageClass's provisioner (an in-tree
 *   provisioner likewise).
 * - Attached: the volumes of the pods already on the node (their claims are found through the PersistentVolumes'
 *   `claimRef`; an unbound claim of a running pod is not counted). New: the pending pod's volumes not already attached.
 * - For each driver: attached + new > limit → `node(s) exceed max volume count`.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { CSINode, Node, PersistentVolume, Pod } from "../../model/k8s.ts";
import { claimClassName, getClaim, type PendingContext, podClaimNames } from "../context.ts";

/** The scheduler's reason (nodevolumelimits ErrReasonMaxVolumeCountExceeded). */
export const VOLUME_LIMIT_REASON = "node(s) exceed max volume count";

/** Annotation of a CSINode listing the in-tree plugins migrated to CSI on that node. */
export const ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins";

/** In-tree volume sources, the in-tree plugin name and the CSI driver they migrate to (k8s.io/csi-translation-lib). */
const IN_TREE: Record<string, { plugin: string; driver: string }> = {
  awsElasticBlockStore: { plugin: "kubernetes.io/aws-ebs", driver: "ebs.csi.aws.com" },
  gcePersistentDisk: { plugin: "kubernetes.io/gce-pd", driver: "pd.csi.storage.gke.io" },
  azureDisk: { plugin: "kubernetes.io/azure-disk", driver: "disk.csi.azure.com" },
  azureFile: { plugin: "kubernetes.io/azure-file", driver: "file.csi.azure.com" },
  cinder: { plugin: "kubernetes.io/cinder", driver: "cinder.csi.openstack.org" },
  vsphereVolume: { plugin: "kubernetes.io/vsphere-volume", driver: "csi.vsphere.vmware.com" },
  portworxVolume: { plugin: "kubernetes.io/portworx-volume", driver: "pxd.portworx.com" },
};
const IN_TREE_BY_PLUGIN = new Map(Object.values(IN_TREE).map((v) => [v.plugin, v.driver] as const));

/**
 * Whether an in-tree plugin's volumes count under its CSI driver on a node, as nodevolumelimits/utils.go
 * `isCSIMigrationOn` decides (v1.27+, the migration feature gates locked on): never without a CSINode; always for
 * aws-ebs, gce-pd, azure-disk and cinder; portworx-volume when the CSINode's migrated-plugins annotation lists it (and
 * its gate is on: default since v1.31, gone in the newest releases, which count it outright); never for the others
 * (azure-file, vsphere-volume): the scheduler does not count those volumes at all.
 */
function migrated(csiNode: CSINode | undefined, plugin: string): boolean {
  if (!csiNode) return false;
  if (ALWAYS_MIGRATED.has(plugin)) return true;
  if (plugin !== "kubernetes.io/portworx-volume") return false;
  const list = csiNode.metadata.annotations?.[ANN_MIGRATED_PLUGINS] ?? "";
  return list.split(",").map((s) => s.trim()).includes(plugin);
}

/** The in-tree plugins `isCSIMigrationOn` answers true for whatever the annotation says. */
const ALWAYS_MIGRATED = new Set(["kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk", "kubernetes.io/cinder"]);

function driverOfVolume(pv: PersistentVolume, csiNode: CSINode | undefined): string | null {
  const spec = (pv.spec ?? {}) as Record<string, unknown>;
  const csi = spec.csi as { driver?: string } | undefined;
  if (csi?.driver) return csi.driver;
  for (const [source, m] of Object.entries(IN_TREE)) if (spec[source] !== undefined && migrated(csiNode, m.plugin)) return m.driver;
  return null;
}

/** The limits of one node, by driver. */
export function volumeLimits(node: Node, csiNode: CSINode | undefined): Map<string, number> {
  const out = new Map<string, number>();
  const alloc = (node.status as { allocatable?: Record<string, string> } | undefined)?.allocatable ?? {};
  for (const [k, v] of Object.entries(alloc)) {
    if (k.startsWith("attachable-volumes-csi-") && /^\d+$/.test(String(v))) out.set(k.slice("attachable-volumes-csi-".length), Number(v));
  }
  for (const d of csiNode?.spec?.drivers ?? []) if (typeof d.allocatable?.count === "number") out.set(d.name, d.allocatable.count);
  return out;
}

/** The NodeVolumeLimits verdict of one node; `null` when the pod has no CSI volume or the node no limit for it. */
export interface VolumeLimitVerdict {
  passed: boolean;
  /** `ebs.csi.aws.com: 25 attached + 1 new of 25`. */
  detail: string;
}

/**
 * Checks one node.
 * @param ctx the pending context (claims, volumes, classes, pods by node).
 * @param pod the pending pod.
 * @param node the node.
 * @param csiNode the node's CSINode, if the bundle has it.
 * @param claimToVolume `namespace/claim` → PersistentVolume, from the volumes' claimRef.
 */
export function volumeLimitsCheck(
  ctx: PendingContext,
  pod: Pod,
  node: Node,
  csiNode: CSINode | undefined,
  claimToVolume: ReadonlyMap<string, PersistentVolume>,
): VolumeLimitVerdict | null {
  const ns = pod.metadata.namespace ?? "";
  const newVolumes = new Map<string, string>();
  for (const { claim } of podClaimNames(pod)) {
    const pvc = getClaim(ctx, ns, claim);
    if (!pvc) continue;
    const pv = pvc.spec?.volumeName ? ctx.volumes.get(pvc.spec.volumeName) : undefined;
    if (pv) {
      const d = driverOfVolume(pv, csiNode);
      if (d) newVolumes.set(`${d}/${pv.metadata.name}`, d);
      continue;
    }
    const cls = claimClassName(pvc);
    const sc = cls ? ctx.classes.get(cls) : undefined;
    if (!sc) continue;
    const inTree = IN_TREE_BY_PLUGIN.get(sc.provisioner);
    const d = inTree ? (migrated(csiNode, sc.provisioner) ? inTree : null) : sc.provisioner;
    if (d) newVolumes.set(`${d}/claim:${ns}/${claim}`, d);
  }
  if (newVolumes.size === 0) return null;
  const limits = volumeLimits(node, csiNode);
  if (limits.size === 0) return null;
  const attached = new Map<string, string>();
  for (const p of ctx.podsByNode.get(node.metadata.name) ?? []) {
    if (p === pod) continue;
    for (const { claim } of podClaimNames(p)) {
      const pv = claimToVolume.get(`${p.metadata.namespace ?? ""}/${claim}`);
      const d = pv ? driverOfVolume(pv, csiNode) : null;
      if (pv && d) attached.set(`${d}/${pv.metadata.name}`, d);
    }
  }
  for (const k of attached.keys()) newVolumes.delete(k);
  const perDriver = (m: Map<string, string>) => {
    const out = new Map<string, number>();
    for (const d of m.values()) out.set(d, (out.get(d) ?? 0) + 1);
    return out;
  };
  const want = perDriver(newVolumes);
  const have = perDriver(attached);
  const parts: string[] = [];
  let passed = true;
  for (const [d, n] of [...want].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const limit = limits.get(d);
    if (limit === undefined) continue;
    const used = have.get(d) ?? 0;
    const over = used + n > limit;
    if (over) passed = false;
    parts.push(`${d}: ${used} attached + ${n} new ${over ? ">" : "≤"} limit ${limit}`);
  }
  if (parts.length === 0) return null;
  return { passed, detail: parts.join("; ") + ` (${csiNode ? "CSINode" : "Node allocatable"}; attached volumes counted over the pods the bundle holds on this node)` };
}

/**
 * `namespace/claim` → its PersistentVolume, from the volumes' `claimRef`.
 * @param volumes the bundle's PersistentVolumes.
 */
export function volumesByClaim(volumes: Iterable<PersistentVolume>): Map<string, PersistentVolume> {
  const out = new Map<string, PersistentVolume>();
  for (const pv of volumes) {
    const ref = pv.spec?.claimRef;
    if (ref?.name) out.set(`${ref.namespace ?? ""}/${ref.name}`, pv);
  }
  return out;
}
