/**
 * VolumeBinding's storage capacity check (kube-scheduler pkg/scheduler/framework/plugins/volumebinding/binder.go
 * `hasEnoughCapacity`, CSIStorageCapacity GA in v1.24): a claim to provision under a CSI driver that tracks capacity
 * needs a CSIStorageCapacity of its class, reachable from the node, with room for it; else the node fails VolumeBinding
 * with `node(s) did not have enough free storage`.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Node, PersistentVolumeClaim, StorageClass } from "../../model/k8s.ts";
import { labelSelectorMatches } from "../../model/label_selector.ts";
import type { PendingContext } from "../context.ts";
import { quantityValue } from "../../model/quantity.ts";

/**
 * VolumeBinding's storage capacity check for a claim to provision (binder.go `hasEnoughCapacity`, v1.24+): only for a
 * CSIDriver named like the provisioner with `storageCapacity: true`, and a claim that requests storage; sufficient
 * when a CSIStorageCapacity of the class whose `nodeTopology` matches the node has `maximumVolumeSize` (else
 * `capacity`) ≥ the request. `null` when the check does not apply.
 * @param ctx the pending context (its bundle's CSIDrivers and CSIStorageCapacities).
 * @param pvc the claim to provision.
 * @param sc its StorageClass.
 * @param node the node.
 * @returns `{sufficient, detail}`, the detail naming the capacity objects compared.
 */
export function capacityCheck(ctx: PendingContext, pvc: PersistentVolumeClaim, sc: StorageClass, node: Node): { sufficient: boolean; detail: string } | null {
  const want = pvc.spec?.resources?.requests?.storage;
  if (want === undefined) return null;
  const driver = (ctx.bundle.objects.csiDrivers ?? []).find((d) => d.metadata.name === sc.provisioner);
  if (!driver || driver.spec?.storageCapacity !== true) return null;
  // volume binder hasEnoughCapacity: quantity.Value() against limit.Value() (capacitySufficient), bytes rounded up
  const bytes = quantityValue(want);
  if (bytes === undefined) return null;
  const labels = node.metadata.labels ?? {};
  const seen: string[] = [];
  for (const c of ctx.bundle.objects.csiStorageCapacities ?? []) {
    if (c.storageClassName !== sc.metadata.name || !labelSelectorMatches(c.nodeTopology ?? null, labels, "nothing")) continue;
    const limitText = c.maximumVolumeSize ?? c.capacity;
    const limit = quantityValue(limitText) ?? -1; // unreadable: not sufficient
    seen.push(`${c.metadata.namespace ?? ""}/${c.metadata.name} ${c.maximumVolumeSize !== undefined ? "maximumVolumeSize" : "capacity"} ${limitText ?? "unset"}`);
    if (limitText !== undefined && limit >= bytes) {
      return { sufficient: true, detail: `CSIStorageCapacity ${c.metadata.namespace ?? ""}/${c.metadata.name}: ${limitText} ≥ ${want}` };
    }
  }
  return {
    sufficient: false,
    detail: seen.length === 0
      ? `CSIDriver ${sc.provisioner} tracks storage capacity and no CSIStorageCapacity of class ${sc.metadata.name} covers this node`
      : `not enough free storage for ${want}: ${seen.join(", ")}`,
  };
}

