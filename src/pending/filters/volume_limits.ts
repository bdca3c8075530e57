/**
 * The NodeVolumeLimits filter of kube-scheduler (pkg/scheduler/framework/plugins/nodevolumelimits/csi.go `CSILimits`,
 * v1.27–v1.35): can the node attach the pod's CSI volumes without exceeding its driver's limit?
 *
 * - The limit of a driver on a node is its CSINode entry's `allocatable.count`, or the Node's
 *   `status.allocatable["attachable-volumes-csi-<driver>"]` (the older place); a driver with neither has no limit.
 *   A node without a CSINode object has only the Node's limits.
 * - A volume is counted once per node by its unique name `<driver>/<volume>` (`filterAttachableVolumes`, the same for
 *   the pod to place and for every pod already on the node):
 *   - a `persistentVolumeClaim` or generic `ephemeral` volume by its claim (`getCSIDriverInfo`): the PersistentVolume
 *     named by the claim's `spec.volumeName` (a `csi` source's driver; an in-tree awsElasticBlockStore,
 *     gcePersistentDisk, azureDisk or cinder source under the CSI driver it migrates to when the node has a CSINode,
 *     portworxVolume when the CSINode's `storage.alpha.kubernetes.io/migrated-plugins` annotation lists it; azureFile
 *     and vsphereVolume are not counted: utils.go `isCSIMigrationOn`); a claim with no `volumeName`, or whose
 *     PersistentVolume does not exist, by its StorageClass's provisioner (`getCSIDriverInfoFromSC`; an in-tree
 *     provisioner likewise; no class, or a class not found: not counted);
 *   - an inline in-tree volume (`checkAttachableInlineVolume`): gcePersistentDisk, awsElasticBlockStore, azureDisk,
 *     cinder, portworxVolume, under its CSI driver when `isCSIMigrationOn` says so for the node, by its disk's identity.
 * - An existing pod's claim the bundle does not hold (a live capture holds only the pending pod's claims) is found
 *   through the PersistentVolumes' `claimRef`; without one it cannot be counted, and the detail says so.
 * - Attached: the volumes of the pods already on the node. New: the pending pod's volumes not already attached.
 * - For each driver: attached + new > limit → `node(s) exceed max volume count`.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { CSINode, Node, PersistentVolume, PersistentVolumeClaim, Pod } from "../../model/k8s.ts";
import { claimClassName, getClaim, type PendingContext } from "../context.ts";

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

/** An inline volume's in-tree sources with the identity csi-translation-lib makes its volume handle from. */
interface InlineSources {
  gcePersistentDisk?: { pdName?: string };
  awsElasticBlockStore?: { volumeID?: string };
  azureDisk?: { diskName?: string; diskURI?: string };
  cinder?: { volumeID?: string };
  portworxVolume?: { volumeID?: string };
}

/**
 * The unique name of an inline in-tree volume counted on a node (csi.go `checkAttachableInlineVolume`), or null when
 * the scheduler does not count it there (not a migratable source, or `isCSIMigrationOn` false for the node). The
 * handle stands for the translated one (csi-translation-lib TranslateInTreeInlineVolumeToCSI): the disk's name or ID;
 * an AWS `aws://zone/vol-…` ID is the `vol-…` (KubernetesVolumeIDToEBSVolumeID).
 */
function inlineVolume(v: InlineSources, csiNode: CSINode | undefined): { key: string; driver: string } | null {
  const id: [keyof typeof IN_TREE, string | undefined][] = [
    ["gcePersistentDisk", v.gcePersistentDisk?.pdName],
    ["awsElasticBlockStore", v.awsElasticBlockStore?.volumeID?.replace(/^aws:\/\/[^/]*\//, "")],
    ["azureDisk", v.azureDisk?.diskURI ?? v.azureDisk?.diskName],
    ["cinder", v.cinder?.volumeID],
    ["portworxVolume", v.portworxVolume?.volumeID],
  ];
  for (const [source, handle] of id) {
    if (v[source as keyof InlineSources] === undefined || v[source as keyof InlineSources] === null) continue;
    const m = IN_TREE[source]!;
    return migrated(csiNode, m.plugin) ? { key: `${m.driver}/inline:${handle ?? "?"}`, driver: m.driver } : null;
  }
  return null;
}

/**
 * The driver and unique name a claim counts under on a node (csi.go `getCSIDriverInfo`): the PersistentVolume its
 * `spec.volumeName` names, else (no name, or that volume does not exist) its StorageClass's provisioner
 * (`getCSIDriverInfoFromSC`, keyed by the claim, as the scheduler's random prefix + namespace/name is).
 * @returns null when the scheduler does not count it.
 */
function claimVolume(ctx: PendingContext, pvc: PersistentVolumeClaim, csiNode: CSINode | undefined): { key: string; driver: string } | null {
  const pv = pvc.spec?.volumeName ? ctx.volumes.get(pvc.spec.volumeName) : undefined;
  if (pv) {
    const d = driverOfVolume(pv, csiNode);
    return d ? { key: `${d}/pv:${pv.metadata.name}`, driver: d } : null;
  }
  const cls = claimClassName(pvc);
  const sc = cls ? ctx.classes.get(cls) : undefined;
  if (!sc) return null;
  const inTree = IN_TREE_BY_PLUGIN.get(sc.provisioner);
  const d = inTree ? (migrated(csiNode, sc.provisioner) ? inTree : null) : sc.provisioner;
  return d ? { key: `${d}/claim:${pvc.metadata.namespace ?? ""}/${pvc.metadata.name}`, driver: d } : null;
}

/**
 * The volumes of one pod that count against a node's attach limits (csi.go `filterAttachableVolumes`), added to
 * `result` (unique name → driver). A claim the bundle does not hold is looked up through the PersistentVolumes'
 * `claimRef` (`claimToVolume`); when that fails too it is added to `unknown` (`namespace/claim`), except for the pod to
 * place, whose missing claim PreFilter rejects already.
 */
function attachableVolumes(
  ctx: PendingContext,
  pod: Pod,
  csiNode: CSINode | undefined,
  claimToVolume: ReadonlyMap<string, PersistentVolume>,
  result: Map<string, string>,
  unknown?: string[],
): void {
  const ns = pod.metadata.namespace ?? "";
  for (const v of pod.spec?.volumes ?? []) {
    const claim = v.persistentVolumeClaim?.claimName ??
      (v["ephemeral"] !== undefined && v["ephemeral"] !== null ? `${pod.metadata.name}-${v.name}` : undefined);
    if (claim === undefined) {
      const inline = inlineVolume(v as InlineSources, csiNode);
      if (inline) result.set(inline.key, inline.driver);
      continue;
    }
    const pvc = getClaim(ctx, ns, claim);
    if (pvc) {
      const c = claimVolume(ctx, pvc, csiNode);
      if (c) result.set(c.key, c.driver);
      continue;
    }
    const pv = claimToVolume.get(`${ns}/${claim}`);
    const d = pv ? driverOfVolume(pv, csiNode) : null;
    if (pv && d) result.set(`${d}/pv:${pv.metadata.name}`, d);
    else if (!pv) unknown?.push(`${ns}/${claim}`);
  }
}

/**
 * Checks one node.
 * @param ctx the pending context (claims, volumes, classes, pods by node).
 * @param pod the pending pod.
 * @param node the node.
 * @param csiNode the node's CSINode, if the bundle has it.
 * @param claimToVolume `namespace/claim` → PersistentVolume, from the volumes' claimRef (for claims not in the bundle).
 * @returns the verdict, or null when the pod has no volume counted here or the node no limit for its drivers.
 */
export function volumeLimitsCheck(
  ctx: PendingContext,
  pod: Pod,
  node: Node,
  csiNode: CSINode | undefined,
  claimToVolume: ReadonlyMap<string, PersistentVolume>,
): VolumeLimitVerdict | null {
  const newVolumes = new Map<string, string>();
  attachableVolumes(ctx, pod, csiNode, claimToVolume, newVolumes);
  if (newVolumes.size === 0) return null;
  const limits = volumeLimits(node, csiNode);
  if (limits.size === 0) return null;
  const attached = new Map<string, string>();
  const unknown: string[] = [];
  for (const p of ctx.podsByNode.get(node.metadata.name) ?? []) {
    if (p === pod) continue;
    attachableVolumes(ctx, p, csiNode, claimToVolume, attached, unknown);
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
  const undecided = unknown.length === 0 ? "" : `; not counted, as the bundle holds neither the claim nor a PersistentVolume bound to it: ${[...new Set(unknown)].sort().join(", ")} (each, if its StorageClass's driver is one of these, takes one more)`;
  return { passed, detail: parts.join("; ") + ` (${csiNode ? "CSINode" : "Node allocatable"}; attached volumes counted over the pods the bundle holds on this node${undecided})` };
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
