/**
 * The volume filters of kube-scheduler for one pending pod on one node, after PreFilter (prefilter.ts):
 * - VolumeBinding's Filter (plugins/volumebinding/binder.go `FindPodVolumes`): a bound claim's PersistentVolume node
 *   affinity against the node's labels (`checkBoundClaims`, CheckNodeAffinity; an in-tree volume migrated to CSI as
 *   csi-translation-lib rewrites it, filters/csi_translation.ts), a WaitForFirstConsumer claim's static match
 *   (`findMatchingVolumes`) or provisioning (`checkVolumeProvisions`: the class's provisioner, allowedTopologies,
 *   CSIStorageCapacity through filters/volume_capacity.ts), and the node a claim is already being provisioned for
 *   (`volume.kubernetes.io/selected-node`);
 * - VolumeZone's Filter (plugins/volumezone/volume_zone.go `getPVTopologies`, `Filter`): bound PersistentVolumes'
 *   zone/region labels against the node's.
 * The pod's claims are read as VolumeBinding reads them ({@link claimUses}: volume.IsDelayBindingMode, binder.go
 * GetPodVolumes).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from "../model/k8s.ts";
import { quantityValue } from "../model/quantity.ts";
import { evaluateNodeSelector, matchTopologySelectorTerms, selectorFailure, selectorSuccess } from "./node_selector.ts";
import { isClaimFullyBound, volumeMismatches } from "./claim.ts";
import { ANN_SELECTED_NODE, claimClassName, getClaim, NO_PROVISIONER, type PendingContext, podClaimNames } from "./context.ts";
import type { PodClaimUse, RuleCheck } from "./report.ts";
import { capacityCheck } from "./filters/volume_capacity.ts";
import { csiTranslatedAffinity } from "./filters/csi_translation.ts";

const BETA_TO_GA: Record<string, string> = {
  "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
  "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
};

const VOLUME_ZONE_LABELS = [
  "failure-domain.beta.kubernetes.io/zone",
  "failure-domain.beta.kubernetes.io/region",
  "topology.kubernetes.io/zone",
  "topology.kubernetes.io/region",
];

/**
 * The pod's claims (context.ts `podClaimNames`: persistentVolumeClaim volumes and generic ephemeral volumes' claims) as
 * VolumeBinding sees them: found or not, fully bound, and the binding mode (volume.IsDelayBindingMode: WaitForFirstConsumer
 * for a delayed claim; a claim without class, or whose class is missing, or pre-bound, counts as Immediate).
 * @returns one {@link PodClaimUse} per claim, in the pod's volume order.
 */
export function claimUses(ctx: PendingContext, pod: Pod): PodClaimUse[] {
  const ns = pod.metadata.namespace ?? "";
  return podClaimNames(pod).map(({ volume, claim }): PodClaimUse => {
    const pvc = getClaim(ctx, ns, claim);
    if (!pvc) return { volume, claim, found: false, bound: false, binding: "missing", volumeName: null };
    const bound = isClaimFullyBound(pvc);
    let binding: PodClaimUse["binding"] = "bound";
    if (!bound) {
      // volume.IsDelayBindingMode: a claim without class, or whose class is missing, binds Immediately; a pre-bound
      // claim (volumeName set) is treated as unbound Immediate (binder.go GetPodVolumes).
      const cls = claimClassName(pvc);
      const sc = cls ? ctx.classes.get(cls) : undefined;
      binding = sc?.volumeBindingMode === "WaitForFirstConsumer" && !pvc.spec?.volumeName ? "delayed" : "immediate";
    }
    return { volume, claim, found: true, bound, binding, volumeName: pvc.spec?.volumeName || null };
  });
}

/**
 * The PersistentVolume the scheduler matches on `node` to each of the pod's delayed-binding claims not yet given a
 * node, as volumebinding/binder.go `findMatchingVolumes` does: the claims by requested size, smallest first, each
 * given the volume `FindMatchingVolume` picks (one pre-bound to it, else the smallest that satisfies it and the node)
 * among those not already chosen for another claim of the pod, so one volume never serves two claims.
 * @returns claim name → the volume, or undefined when none is left for it.
 */
export function matchDelayedClaims(ctx: PendingContext, pod: Pod, node: Node, uses: readonly PodClaimUse[]): Map<string, PersistentVolume | undefined> {
  const ns = pod.metadata.namespace ?? "";
  const claims = uses
    .filter((u) => u.found && u.binding === "delayed")
    .map((u) => getClaim(ctx, ns, u.claim)!)
    .filter((pvc) => pvc.metadata.annotations?.[ANN_SELECTED_NODE] === undefined);
  const size = (pvc: PersistentVolumeClaim) => quantityValue(pvc.spec?.resources?.requests?.storage) ?? 0;
  claims.sort((a, b) => size(a) - size(b));
  const chosen = new Set<string>();
  const out = new Map<string, PersistentVolume | undefined>();
  for (const pvc of claims) {
    let best: PersistentVolume | undefined;
    for (const pv of ctx.volumes.values()) {
      if (chosen.has(pv.metadata.name) || volumeMismatches(pvc, pv).length > 0) continue;
      const req = pv.spec?.nodeAffinity?.required;
      if (req && !evaluateNodeSelector(req, { labels: node.metadata.labels ?? {} }, { fields: false }).matched) continue;
      const ref = pv.spec?.claimRef;
      if (ref && ref.name === pvc.metadata.name && (ref.namespace ?? "") === ns) {
        best = pv;
        break;
      }
      if (!best || (quantityValue(pv.spec?.capacity?.storage) ?? 0) < (quantityValue(best.spec?.capacity?.storage) ?? 0)) best = pv;
    }
    if (best) chosen.add(best.metadata.name);
    out.set(pvc.metadata.name, best);
  }
  return out;
}

/**
 * The VolumeBinding filter for one claim on one node (volumebinding/binder.go FindPodVolumes): the check, and which
 * flag of it the claim clears. A delayed claim the scheduler already chose a node for (`volume.kubernetes.io/selected-node`)
 * fails every other node and, on that node, goes straight to the provisioning checks (checkVolumeProvisions: a class
 * that provisions, its allowedTopologies, storage capacity), as one for which no volume matched does.
 */
export function volumeCheck(
  ctx: PendingContext,
  pod: Pod,
  node: Node,
  use: PodClaimUse,
  matched: ReadonlyMap<string, PersistentVolume | undefined>,
): { check: RuleCheck; conflict?: "node" | "bind" | "storage" | "pv-missing" } {
  const ns = pod.metadata.namespace ?? "";
  const base = { rule: "volume" as const, plugin: "VolumeBinding" as const, claim: use.claim };
  if (!use.found) return { check: { ...base, passed: false, detail: `claim ${use.claim} not found` } };
  const pvc = getClaim(ctx, ns, use.claim)!;
  if (use.binding === "immediate") {
    return { check: { ...base, passed: false, detail: "unbound, Immediate binding: rejected at PreFilter until the claim binds" } };
  }
  if (use.binding === "bound") {
    const name = use.volumeName as string;
    const pv = ctx.volumes.get(name);
    if (!pv) return { check: { ...base, volume: name, passed: false, detail: `PersistentVolume ${name} does not exist` }, conflict: "pv-missing" };
    // an in-tree volume whose plugin is migrated to CSI on this node is checked as csi-translation-lib rewrites it
    const translated = csiTranslatedAffinity(pv, (ctx.bundle.objects.csiNodes ?? []).find((c) => c.metadata.name === node.metadata.name));
    const required = translated ? translated.required : pv.spec?.nodeAffinity?.required;
    const how = translated
      ? ` (in-tree, migrated to CSI on this node: ${translated.plugin} in its CSINode's migrated-plugins, so the zone is checked as ${translated.key}, the key the CSI driver labels its nodes with)`
      : "";
    if (!required) return { check: { ...base, volume: name, passed: true, detail: `no node affinity${how}` } };
    const evaluation = evaluateNodeSelector(required, { labels: node.metadata.labels ?? {} }, { fields: false });
    return evaluation.matched
      ? { check: { ...base, volume: name, passed: true, detail: selectorSuccess(evaluation) + how, evaluation } }
      : { check: { ...base, volume: name, passed: false, detail: selectorFailure(evaluation) + how, evaluation }, conflict: "node" };
  }
  // Delayed binding (WaitForFirstConsumer, unbound).
  const selected = pvc.metadata.annotations?.[ANN_SELECTED_NODE];
  if (selected !== undefined && selected !== node.metadata.name) {
    return { check: { ...base, passed: false, detail: `being provisioned for node ${selected} (${ANN_SELECTED_NODE})` }, conflict: "bind" };
  }
  const fit = selected === undefined ? matched.get(use.claim) : undefined;
  if (fit) return { check: { ...base, volume: fit.metadata.name, passed: true, detail: `PersistentVolume ${fit.metadata.name} is available here` } };
  const first = selected === undefined ? "no available PersistentVolume matches on this node, and " : `provisioning for this node (${ANN_SELECTED_NODE}), but `;
  const cls = claimClassName(pvc);
  const sc = cls ? ctx.classes.get(cls) : undefined;
  if (!sc || sc.provisioner === "" || sc.provisioner === NO_PROVISIONER) {
    // (a delayed claim's class exists: without one the claim is Immediate, volumebinding IsDelayBindingMode)
    return { check: { ...base, passed: false, detail: `${first}StorageClass ${cls} cannot provision` }, conflict: "bind" };
  }
  if (!matchTopologySelectorTerms(sc.allowedTopologies, node.metadata.labels ?? {})) {
    return { check: { ...base, passed: false, detail: `${first}StorageClass ${sc.metadata.name} allowedTopologies exclude this node` }, conflict: "bind" };
  }
  const capacity = capacityCheck(ctx, pvc, sc, node);
  if (capacity && !capacity.sufficient) {
    return { check: { ...base, passed: false, detail: selected === undefined ? capacity.detail : `${first}${capacity.detail}` }, conflict: "storage" };
  }
  const done = `${sc.provisioner}${capacity ? ` (${capacity.detail})` : ""}`;
  return { check: { ...base, passed: true, detail: selected === undefined ? `can be provisioned here by ${done}` : `provisioning for this node (${ANN_SELECTED_NODE}) by ${done}` } };
}

/**
 * A PersistentVolume's zone/region label value as kube-scheduler reads it (cloud-provider volume/helpers
 * `LabelZonesToSet`, `stringToSet`): split on `__` (LabelMultiZoneDelimiter), each entry trimmed of white space.
 * @returns the set of zones, or null when an entry is empty after trimming (`""`, `a__`, `a____b`, `" "`): the
 *   helper's error ("must not contain an empty string"), for which VolumeZone ignores the label.
 */
function labelZonesToSet(value: string): Set<string> | null {
  const zones = value.split("__").map((z) => z.trim());
  return zones.some((z) => z === "") ? null : new Set(zones);
}

/**
 * VolumeZone filter (plugins/volumezone/volume_zone.go `getPVTopologies`, `Filter`): the bound PVs' zone/region labels
 * against the node's. A label whose value {@link labelZonesToSet} cannot read is ignored, as the plugin does (it logs
 * "failed to parse PV's topology label, ignoring the label"); the detail says so.
 * @returns null when no bound PV carries such a label.
 */
export function volumeZoneCheck(ctx: PendingContext, node: Node, uses: PodClaimUse[]): RuleCheck | null {
  const topo: { pv: string; key: string; values: Set<string> }[] = [];
  const ignored: string[] = [];
  for (const u of uses) {
    if (!u.volumeName) continue;
    const pv = ctx.volumes.get(u.volumeName);
    for (const key of VOLUME_ZONE_LABELS) {
      const v = pv?.metadata.labels?.[key];
      if (v === undefined) continue;
      const values = labelZonesToSet(v);
      if (values) topo.push({ pv: u.volumeName, key, values });
      else ignored.push(`PersistentVolume ${u.volumeName} label ${key}=${JSON.stringify(v)}`);
    }
  }
  if (topo.length === 0 && ignored.length === 0) return null;
  const skipped = ignored.length === 0
    ? ""
    : ` (ignored, as kube-scheduler ignores a value it cannot parse — an empty entry between "__" separators, LabelZonesToSet: ${ignored.join(", ")})`;
  const labels = node.metadata.labels ?? {};
  const base = { rule: "volumeZone" as const, plugin: "VolumeZone" as const };
  if (topo.length === 0) return { ...base, passed: true, detail: `no zone label to check${skipped}` };
  if (!VOLUME_ZONE_LABELS.some((k) => k in labels)) return { ...base, passed: true, detail: `node has no zone labels${skipped}` };
  for (const t of topo) {
    const v = labels[t.key] ?? labels[BETA_TO_GA[t.key] ?? t.key];
    if (v === undefined || !t.values.has(v)) {
      return { ...base, passed: false, detail: `PersistentVolume ${t.pv} label ${t.key}=${[...t.values].join("__")}, node has ${v === undefined ? "none" : v}${skipped}` };
    }
  }
  return { ...base, passed: true, detail: `zone labels agree${skipped}` };
}
