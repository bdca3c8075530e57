/**
 * The ReadWriteOncePod half of kube-scheduler's VolumeRestrictions plugin
 * (pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go, v1.27–v1.35, where ReadWriteOncePod is
 * GA since v1.29): a claim with the `ReadWriteOncePod` access mode that a pod already scheduled to a node mounts
 * makes every node fail with `node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access
 * mode` (PreFilter counts the conflicting references, Filter rejects while the count is above zero; preemption of the
 * holder may help).
 *
 * "Already scheduled" is the scheduler's NodeInfo view: pods with `spec.nodeName` that are not terminal, in the claim's
 * namespace. The other half, per node: an inline disk of the pod that a pod on the node already mounts
 * (`isVolumeConflict`: the same GCE PD unless both read-only, the same AWS EBS volume ID, the same RBD image — a
 * shared monitor, same pool and image — unless both read-only, the same iSCSI IQN unless both read-only) makes that
 * node fail with `node(s) had no available disk` (checked before the ReadWriteOncePod test, as Filter does).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Pod } from "../../model/k8s.ts";
import { getClaim, type PendingContext } from "../context.ts";

/** The scheduler's reason (volumerestrictions ErrReasonReadWriteOncePodConflict). */
export const RWOP_REASON = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";

/** A ReadWriteOncePod claim of the pending pod and the pods that already hold it. */
export interface ReadWriteOncePodConflict {
  claim: string;
  /** `namespace/name on node`. */
  holders: string[];
}

/**
 * The claims a pod names in `persistentVolumeClaim` volumes, in spec order: the only ones VolumeRestrictions counts,
 * for the pod to place (readWriteOncePodPVCsForPod) and for the pods on the nodes (framework/types.go NodeInfo
 * updatePVCRefCounts, behind StorageInfos().IsPVCUsedByPods); a generic ephemeral volume's claim is not among them.
 */
function pvcVolumeClaims(pod: Pod): string[] {
  return (pod.spec?.volumes ?? []).flatMap((v) => v.persistentVolumeClaim?.claimName !== undefined ? [v.persistentVolumeClaim.claimName] : []);
}

/**
 * The pending pod's ReadWriteOncePod claims that scheduled pods hold (empty: no conflict), both sides counted over
 * `persistentVolumeClaim` volumes only ({@link pvcVolumeClaims}).
 * @param ctx the pending context (claims, pods by node).
 * @param pod the pending pod.
 */
export function readWriteOncePodConflicts(ctx: PendingContext, pod: Pod): ReadWriteOncePodConflict[] {
  const ns = pod.metadata.namespace ?? "";
  const out: ReadWriteOncePodConflict[] = [];
  for (const claim of new Set(pvcVolumeClaims(pod))) {
    const pvc = getClaim(ctx, ns, claim);
    if (!pvc || !(pvc.spec?.accessModes ?? []).includes("ReadWriteOncePod")) continue;
    const holders: string[] = [];
    for (const [node, pods] of ctx.podsByNode) {
      for (const p of pods) {
        if (p === pod || (p.metadata.namespace ?? "") !== ns) continue;
        if (pvcVolumeClaims(p).includes(claim)) holders.push(`${ns}/${p.metadata.name} on ${node}`);
      }
    }
    if (holders.length > 0) out.push({ claim, holders: holders.sort() });
  }
  return out;
}

/** The scheduler's reason for an inline disk already mounted on the node (volumerestrictions ErrReasonDiskConflict). */
export const DISK_CONFLICT_REASON = "node(s) had no available disk";

interface InlineVolume {
  name?: string;
  gcePersistentDisk?: { pdName?: string; readOnly?: boolean };
  awsElasticBlockStore?: { volumeID?: string };
  rbd?: { monitors?: string[]; pool?: string; image?: string; readOnly?: boolean };
  iscsi?: { iqn?: string; readOnly?: boolean };
}

const inlineVolumes = (p: Pod) => (p.spec?.volumes ?? []) as InlineVolume[];

/** A volume source VolumeRestrictions compares: GCE PD, AWS EBS, RBD or iSCSI. */
const isInlineDisk = (v: InlineVolume): boolean => !!(v.gcePersistentDisk || v.awsElasticBlockStore || v.rbd || v.iscsi);

/** Whether the pod has an inline disk VolumeRestrictions compares (`needsRestrictionsCheck`). */
export function hasInlineDisks(pod: Pod): boolean {
  return inlineVolumes(pod).some(isInlineDisk);
}

function conflictOf(v: InlineVolume, e: InlineVolume): string | undefined {
  const g = v.gcePersistentDisk, eg = e.gcePersistentDisk;
  if (g && eg && g.pdName === eg.pdName && !(g.readOnly && eg.readOnly)) return `GCE PD ${g.pdName}`;
  const a = v.awsElasticBlockStore, ea = e.awsElasticBlockStore;
  if (a && ea && a.volumeID === ea.volumeID) return `AWS EBS ${a.volumeID}`;
  const i = v.iscsi, ei = e.iscsi;
  if (i && ei && i.iqn === ei.iqn && !(i.readOnly && ei.readOnly)) return `iSCSI ${i.iqn}`;
  const r = v.rbd, er = e.rbd;
  if (r && er && (r.monitors ?? []).some((m) => (er.monitors ?? []).includes(m)) && (r.pool ?? "rbd") === (er.pool ?? "rbd") && r.image === er.image && !(r.readOnly && er.readOnly)) {
    return `RBD ${r.pool ?? "rbd"}/${r.image}`;
  }
  return undefined;
}

/**
 * The inline disks of `pod` that a pod on the node already mounts (`satisfyVolumeConflicts`), as text; empty when none.
 * @param pod the pending pod.
 * @param onNode the non-terminal pods bound to the node.
 */
export function diskConflicts(pod: Pod, onNode: readonly Pod[]): string[] {
  const out: string[] = [];
  for (const v of inlineVolumes(pod)) {
    if (!isInlineDisk(v)) continue;
    for (const other of onNode) {
      if (other === pod) continue;
      for (const e of inlineVolumes(other)) {
        const c = conflictOf(v, e);
        if (c) out.push(`${c} (volume ${v.name ?? "?"}) is mounted by pod ${other.metadata.namespace ?? ""}/${other.metadata.name}`);
      }
    }
  }
  return out;
}
