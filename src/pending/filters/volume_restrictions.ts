/**
 * The ReadWriteOncePod half of kube-scheduler's VolumeRestrictions plugin
 * (pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go, v1.27–v1.35, where ReadWriteOncePod is
 * GA since v1.29): a claim with the `ReadWriteOncePod` access mode that a pod already scheduled to a node mounts
 * makes every node fail with `node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access
 * mode` (PreFilter counts the conflicting references, Filter rejects while the count is above zero; preemption of the
 * holder may help).
 *
 * "Already scheduled" is the scheduler's NodeInfo view: pods with `spec.nodeName` that are not terminal, in the claim's
 * namespace. The other half (inline GCE PD, AWS EBS, RBD and iSCSI volumes mounted on the node by another pod:
 * `node(s) had no available disk`) needs inline volume sources, which a bundle does not keep: not checked.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Pod } from "../../model/k8s.ts";
import { getClaim, type PendingContext, podClaimNames } from "../context.ts";

/** The scheduler's reason (volumerestrictions ErrReasonReadWriteOncePodConflict). */
export const RWOP_REASON = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";

/** A ReadWriteOncePod claim of the pending pod and the pods that already hold it. */
export interface ReadWriteOncePodConflict {
  claim: string;
  /** `namespace/name on node`. */
  holders: string[];
}

/**
 * The pending pod's ReadWriteOncePod claims that scheduled pods hold (empty: no conflict).
 * @param ctx the pending context (claims, pods by node).
 * @param pod the pending pod.
 */
export function readWriteOncePodConflicts(ctx: PendingContext, pod: Pod): ReadWriteOncePodConflict[] {
  const ns = pod.metadata.namespace ?? "";
  const out: ReadWriteOncePodConflict[] = [];
  for (const { claim } of podClaimNames(pod)) {
    const pvc = getClaim(ctx, ns, claim);
    if (!pvc || !(pvc.spec?.accessModes ?? []).includes("ReadWriteOncePod")) continue;
    const holders: string[] = [];
    for (const [node, pods] of ctx.podsByNode) {
      for (const p of pods) {
        if (p === pod || (p.metadata.namespace ?? "") !== ns) continue;
        if (podClaimNames(p).some((c) => c.claim === claim)) holders.push(`${ns}/${p.metadata.name} on ${node}`);
      }
    }
    if (holders.length > 0) out.push({ claim, holders: holders.sort() });
  }
  return out;
}
