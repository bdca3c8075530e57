/**
 * A PersistentVolumeClaim's state and the reason for it, and its PersistentVolume's node × term table.
 *
 * The reasons follow the PV controller (pkg/controller/volume/persistentvolume/pv_controller.go syncUnboundClaim)
 * and the matching rules of k8s.io/component-helpers/storage/volume FindMatchingVolume plus the controller's
 * access-mode index: a PV binds a claim statically when it is not claimed by another claim, is Available, is not being
 * deleted, has capacity >= the request, the same volumeMode (Filesystem when absent), the same class, every requested
 * access mode, and labels matching the claim's selector. Dynamic provisioning waits for a pod when the class has
 * `volumeBindingMode: WaitForFirstConsumer`; a class whose provisioner is `kubernetes.io/no-provisioner` never
 * provisions.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { LabelSelector, PersistentVolume, PersistentVolumeClaim, Pod } from "../model/k8s.ts";
import { labelSelectorMatches, selectorText } from "../model/label_selector.ts";
import { quantityValue } from "../model/quantity.ts";
import { evaluateNodeSelector, formatTerm } from "./node_selector.ts";
import {
  ANN_BIND_COMPLETED,
  ANN_SELECTED_NODE,
  claimClassName,
  cmp,
  eventsFor,
  NO_PROVISIONER,
  type PendingContext,
  storageClassSummary,
  volumeClassName,
  VOLUME_ZONE_KEYS,
  ZONE_KEYS,
  REGION_KEYS,
} from "./context.ts";
import type {
  ClaimReport,
  ClaimState,
  EventSummary,
  StaticCandidate,
  VolumeMismatch,
  VolumeReport,
} from "./report.ts";

/** A claim is fully bound when `spec.volumeName` is set and the PV controller completed the binding. */
export function isClaimFullyBound(pvc: PersistentVolumeClaim): boolean {
  const done = pvc.metadata.annotations?.[ANN_BIND_COMPLETED] !== undefined || pvc.status?.phase === "Bound";
  return !!pvc.spec?.volumeName && done;
}

function modesText(modes: string[] | undefined): string {
  return `[${(modes ?? []).join(", ")}]`;
}

/**
 * Why a PersistentVolume cannot bind a claim statically (empty when it can).
 * @param pvc the claim.
 * @param pv the volume.
 * @param asked `"find"`: the controller's or the scheduler's search (component-helpers FindMatchingVolume): a volume
 *   whose claimRef already names the claim is taken before the phase, selector and class filters; `"volumeName"`: the
 *   claim names the volume (pv_controller.go syncUnboundClaim): a volume claimed by it is bound with no check, an
 *   unclaimed one after checkVolumeSatisfyClaim alone (capacity, class, attributes class, volumeMode, access modes).
 * @returns one entry per unmet condition, in the order FindMatchingVolume tests them.
 */
export function volumeMismatches(pvc: PersistentVolumeClaim, pv: PersistentVolume, asked: "find" | "volumeName" = "find"): VolumeMismatch[] {
  const out: VolumeMismatch[] = [];
  const ref = pv.spec?.claimRef;
  const claimNs = pvc.metadata.namespace ?? "";
  const preBound = !!ref && ref.name === pvc.metadata.name && (ref.namespace ?? "") === claimNs &&
    (!ref.uid || !pvc.metadata.uid || ref.uid === pvc.metadata.uid);
  if (asked === "volumeName" && preBound) return out;
  // the filters FindMatchingVolume skips for a volume pre-bound to the claim, and checkVolumeSatisfyClaim never applies
  const filtered = asked === "find" && !preBound;
  if (ref && !preBound) {
    out.push({ field: "claimRef", want: `unclaimed or ${claimNs}/${pvc.metadata.name}`, got: `${ref.namespace ?? ""}/${ref.name ?? ""}` });
  }
  const want = pvc.spec?.resources?.requests?.storage;
  const have = pv.spec?.capacity?.storage;
  // pv_controller.go checkVolumeSatisfyClaim: volumeQty.Value() < requestedQty.Value() (both rounded up to bytes)
  const wq = quantityValue(want);
  const hq = quantityValue(have);
  if (wq !== undefined && (hq === undefined || hq < wq)) out.push({ field: "capacity", want: `>= ${want}`, got: have ?? "none" });
  const wMode = pvc.spec?.volumeMode ?? "Filesystem";
  const hMode = pv.spec?.volumeMode ?? "Filesystem";
  if (wMode !== hMode) out.push({ field: "volumeMode", want: wMode, got: hMode });
  if (pv.metadata.deletionTimestamp) out.push({ field: "deletionTimestamp", want: "not being deleted", got: pv.metadata.deletionTimestamp });
  if (filtered && (pv.status?.phase ?? "") !== "Available") {
    out.push({ field: "phase", want: "Available", got: pv.status?.phase ?? "unknown" });
  }
  if (filtered && pvc.spec?.selector && !labelSelectorMatches(pvc.spec.selector as LabelSelector, pv.metadata.labels, "everything")) {
    const labels = Object.entries(pv.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`).join(", ");
    out.push({ field: "selector", want: selectorText(pvc.spec.selector as LabelSelector), got: labels === "" ? "no labels" : labels });
  }
  const wClass = claimClassName(pvc) ?? "";
  const hClass = volumeClassName(pv);
  if (!(asked === "find" && preBound) && wClass !== hClass) out.push({ field: "storageClassName", want: JSON.stringify(wClass), got: JSON.stringify(hClass) });
  // FindMatchingVolume with VolumeAttributesClass on (beta v1.31, GA v1.34): the claim's and the volume's class must be
  // the same (both unset counts as the same); a cluster that sets either has the feature on
  const wVac = pvc.spec?.volumeAttributesClassName ?? "";
  const hVac = pv.spec?.volumeAttributesClassName ?? "";
  if (wVac !== hVac) out.push({ field: "volumeAttributesClassName", want: JSON.stringify(wVac), got: JSON.stringify(hVac) });
  const missing = (pvc.spec?.accessModes ?? []).filter((m) => !(pv.spec?.accessModes ?? []).includes(m));
  if (missing.length > 0) {
    out.push({ field: "accessModes", want: modesText(pvc.spec?.accessModes), got: modesText(pv.spec?.accessModes) });
  }
  return out;
}

/**
 * PersistentVolumes a claim could bind statically, best first (fewest mismatches, then name). Volumes bound to
 * another claim are left out; Released ones stay (their claimRef is a mismatch worth showing).
 */
export function staticCandidates(ctx: PendingContext, pvc: PersistentVolumeClaim): StaticCandidate[] {
  const ns = pvc.metadata.namespace ?? "";
  return [...ctx.volumes.values()]
    .filter((pv) => {
      const ref = pv.spec?.claimRef;
      const bound = pv.status?.phase === "Bound";
      return !(bound && ref && !(ref.name === pvc.metadata.name && (ref.namespace ?? "") === ns));
    })
    .map((pv) => ({ volume: pv.metadata.name, mismatches: volumeMismatches(pvc, pv) }))
    .sort((a, b) => a.mismatches.length - b.mismatches.length || cmp(a.volume, b.volume));
}

const NON_SOURCE_KEYS = new Set([
  "capacity",
  "accessModes",
  "volumeMode",
  "storageClassName",
  "claimRef",
  "nodeAffinity",
  "persistentVolumeReclaimPolicy",
  "mountOptions",
  "volumeAttributesClassName",
]);

function volumeSource(pv: PersistentVolume): string | null {
  const spec = pv.spec ?? {};
  const csi = spec["csi"] as { driver?: string } | undefined;
  if (csi) return `csi:${csi.driver ?? "?"}`;
  const key = Object.keys(spec).find((k) => !NON_SOURCE_KEYS.has(k) && spec[k] !== null && typeof spec[k] === "object");
  return key ?? null;
}

/**
 * A PersistentVolume with its node × term table over every node of the bundle.
 * PV node affinity is evaluated the scheduler's way: against node labels only (matchFields skipped).
 * @param ctx lookups.
 * @param name the PV name (from the claim's `spec.volumeName`).
 */
export function volumeReport(ctx: PendingContext, name: string): VolumeReport {
  const pv = ctx.volumes.get(name);
  if (!pv) {
    return {
      name,
      found: false,
      phase: null,
      storageClassName: null,
      capacity: null,
      accessModes: [],
      volumeMode: "Filesystem",
      claimRef: null,
      topologyLabels: {},
      source: null,
      nodeAffinity: null,
      terms: [],
      nodes: [],
      matchingNodes: [],
    };
  }
  const required = pv.spec?.nodeAffinity?.required ?? null;
  const labels = pv.metadata.labels ?? {};
  const topologyLabels: Record<string, string> = {};
  for (const k of [...new Set([...ZONE_KEYS, ...REGION_KEYS, ...VOLUME_ZONE_KEYS])]) {
    if (Object.prototype.hasOwnProperty.call(labels, k)) topologyLabels[k] = labels[k] as string;
  }
  const nodes = required
    ? ctx.nodes.map((n) => {
      const evaluation = evaluateNodeSelector(required, { labels: n.metadata.labels ?? {} }, { fields: false });
      return { node: n.metadata.name, matched: evaluation.matched, evaluation };
    })
    : [];
  const ref = pv.spec?.claimRef;
  return {
    name,
    found: true,
    phase: pv.status?.phase ?? null,
    storageClassName: volumeClassName(pv) || null,
    capacity: pv.spec?.capacity?.storage ?? null,
    accessModes: pv.spec?.accessModes ?? [],
    volumeMode: pv.spec?.volumeMode ?? "Filesystem",
    claimRef: ref?.name ? { kind: "PersistentVolumeClaim", ...(ref.namespace ? { namespace: ref.namespace } : {}), name: ref.name } : null,
    topologyLabels,
    source: volumeSource(pv),
    nodeAffinity: required,
    terms: (required?.nodeSelectorTerms ?? []).map(formatTerm),
    nodes,
    matchingNodes: required ? nodes.filter((r) => r.matched).map((r) => r.node) : ctx.nodes.map((n) => n.metadata.name),
  };
}

function lastEvent(events: EventSummary[], reasons: string[]): EventSummary | undefined {
  for (let i = events.length - 1; i >= 0; i--) if (reasons.includes((events[i] as EventSummary).reason)) return events[i];
  return undefined;
}

/** Formats "StorageClass "x"" for messages. */
function scName(name: string): string {
  return `StorageClass ${JSON.stringify(name)}`;
}

/**
 * Analyses one claim: its state and reason, its StorageClass, the static-binding candidates when static binding is
 * what is pending, and its volume's node × term table.
 * @param ctx lookups.
 * @param namespace the claim's namespace.
 * @param name the claim's name.
 * @param users pods that mount it (for the WaitForFirstConsumer message).
 * @returns the report; `found: false` with state `Missing/NotFound` when the claim is not in the bundle.
 */
export function analyseClaim(ctx: PendingContext, namespace: string, name: string, users: Pod[]): ClaimReport {
  const pvc = ctx.claims.get(`${namespace}/${name}`);
  const events = eventsFor(ctx, "PersistentVolumeClaim", namespace, name, pvc?.metadata.uid);
  if (!pvc) {
    return {
      namespace,
      name,
      found: false,
      phase: null,
      storageClassName: null,
      storageClass: null,
      request: { storage: null, accessModes: [], volumeMode: "Filesystem" },
      volumeName: null,
      selectedNode: null,
      state: {
        status: "Missing",
        reason: "NotFound",
        message: `persistentvolumeclaim ${JSON.stringify(name)} does not exist in namespace ${JSON.stringify(namespace)}.`,
      },
      staticCandidates: [],
      volume: null,
      events,
    };
  }
  const className = claimClassName(pvc);
  const sc = className ? ctx.classes.get(className) : undefined;
  const effectiveClass = className === null ? ctx.defaultClass : sc;
  const volumeName = pvc.spec?.volumeName || null;
  const phase = pvc.status?.phase ?? null;
  let staticList: StaticCandidate[] = [];
  let state: ClaimState;
  const withEvent = (s: ClaimState, e: EventSummary | undefined): ClaimState => (e ? { ...s, event: e } : s);

  if (phase === "Lost") {
    // pv_controller.go syncBoundClaim: a Lost claim keeps bind-completed; once its volume exists again unclaimed (or
    // claimed by this claim's uid) the controller binds them again and the claim is Bound
    const pv = volumeName ? ctx.volumes.get(volumeName) : undefined;
    const ref = pv?.spec?.claimRef;
    const rebinds = pv !== undefined && (!ref || (ref.name === name && (ref.namespace ?? "") === namespace && (!ref.uid || ref.uid === pvc.metadata.uid)));
    state = withEvent({
      status: "Lost",
      reason: "Lost",
      message: pv === undefined
        ? `Lost: its PersistentVolume ${JSON.stringify(volumeName ?? "")} no longer exists. The PV controller binds the claim again when a PersistentVolume of that name exists, unclaimed or claimed by this claim (syncBoundClaim): recreate the PersistentVolume on the same storage (if its reclaim policy kept it), or recreate the claim to provision a new, empty volume.`
        : rebinds
        ? `Lost, but its PersistentVolume ${JSON.stringify(volumeName)} exists${ref ? " claimed by this claim" : " unclaimed"}: the PV controller binds them again at its next sync (syncBoundClaim), and the claim becomes Bound.`
        : `Lost: its PersistentVolume ${JSON.stringify(volumeName)} is bound to another claim (${ref!.namespace ?? ""}/${ref!.name ?? ""}${ref!.uid ? `, uid ${ref!.uid}` : ""}); the claim cannot be used until that volume is released to it, or the claim is recreated.`,
    }, lastEvent(events, ["ClaimLost", "ClaimMisbound"]));
  } else if (volumeName && isClaimFullyBound(pvc)) {
    state = ctx.volumes.has(volumeName)
      ? { status: "Bound", reason: "Bound", message: `Bound to PersistentVolume ${JSON.stringify(volumeName)}.` }
      : {
        status: "Bound",
        reason: "VolumeMissing",
        message: `Bound to PersistentVolume ${JSON.stringify(volumeName)}, which is not in the bundle` +
          (ctx.volumes.size === 0
            ? ` (the bundle holds no PersistentVolumes at all: listing them needs "list persistentvolumes" at cluster scope).`
            : `: it was deleted, so pods using the claim cannot be scheduled.`),
      };
  } else if (volumeName) {
    const pv = ctx.volumes.get(volumeName);
    if (!pv) {
      state = {
        status: "Pending",
        reason: "VolumeMissing",
        message: `Pending: pre-bound to PersistentVolume ${JSON.stringify(volumeName)} (spec.volumeName), which does not exist.`,
      };
    } else {
      staticList = [{ volume: volumeName, mismatches: volumeMismatches(pvc, pv, "volumeName") }];
      const mm = staticList[0]?.mismatches ?? [];
      state = {
        status: "Pending",
        reason: mm.length > 0 ? "NoMatchingVolume" : "Binding",
        message: `Pending: pre-bound to PersistentVolume ${JSON.stringify(volumeName)} (spec.volumeName)` +
          (mm.length > 0 ? `, which does not satisfy it: ${mm.map((m) => `${m.field} wants ${m.want}, has ${m.got}`).join("; ")}.` : `; the PV controller has not completed the binding yet.`),
      };
    }
  } else if (className === null && !ctx.defaultClass) {
    staticList = staticCandidates(ctx, pvc);
    state = withEvent({
      status: "Pending",
      reason: "NoStorageClass",
      message: `Pending: no storageClassName and no default StorageClass, so nothing provisions it; only a PersistentVolume without a class can bind it` +
        (staticList.some((c) => c.mismatches.length === 0) ? "." : ", and none matches."),
    }, lastEvent(events, ["FailedBinding"]));
  } else if (className === "") {
    staticList = staticCandidates(ctx, pvc);
    const match = staticList.find((c) => c.mismatches.length === 0);
    state = withEvent({
      status: "Pending",
      reason: match ? "Binding" : "NoMatchingVolume",
      message: match
        ? `Pending: storageClassName is "" (static binding only); PersistentVolume ${JSON.stringify(match.volume)} matches it, so the PV controller binds them at its next sync (if the claim stays Pending, its events say why).`
        : `Pending: storageClassName is "" (static binding only) and no PersistentVolume matches.`,
    }, lastEvent(events, ["FailedBinding"]));
  } else if (!effectiveClass) {
    staticList = staticCandidates(ctx, pvc);
    state = withEvent({
      status: "Pending",
      reason: "StorageClassNotFound",
      message: `Pending: ${scName(className ?? "")} does not exist` +
        (ctx.classes.size === 0 ? ` in the bundle (it holds no StorageClasses at all: were they collected?).` : `, so nothing provisions the claim.`),
    }, lastEvent(events, ["ProvisioningFailed"]));
  } else {
    const summary = storageClassSummary(effectiveClass);
    const selected = pvc.metadata.annotations?.[ANN_SELECTED_NODE];
    const failed = lastEvent(events, ["ProvisioningFailed", "ProvisioningSucceeded"]);
    const noProvisioner = summary.provisioner === NO_PROVISIONER || summary.provisioner === "";
    if (noProvisioner) staticList = staticCandidates(ctx, pvc);
    // Only the scheduler sets volume.kubernetes.io/selected-node (VolumeBinding's PreBind, binder.go BindPodVolumes),
    // and only then does the provisioner (or, for static binding, the scheduler itself) act: a pod that sets
    // spec.nodeName never passes the scheduler, so its WaitForFirstConsumer claim waits forever (pv_controller.go
    // syncUnboundClaim delays binding until that annotation is there; the StorageClass docs warn against nodeName)
    const live = users.filter((p) => p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed");
    const placed = live.filter((p) => p.spec?.nodeName);
    if (summary.volumeBindingMode === "WaitForFirstConsumer" && !selected && placed.length > 0 && placed.length === live.length) {
      const who = placed.map((p) => `${p.metadata.name} (spec.nodeName ${p.spec!.nodeName})`).join(", ");
      state = withEvent({
        status: "Pending",
        reason: "NodeNameBypassesScheduler",
        message: `Pending, and never ${noProvisioner ? "bound" : "provisioned"} this way: ${scName(summary.name)} has volumeBindingMode WaitForFirstConsumer, ` +
          `so the claim is ${noProvisioner ? "bound" : "provisioned"} only for the node the scheduler picks for a pod that uses it (it writes ${ANN_SELECTED_NODE}), ` +
          `but every pod that uses it sets its node itself: ${who}. The scheduler never sees such a pod, so the claim waits forever and the pod with it. ` +
          `Place the pod with nodeSelector or nodeAffinity (kubernetes.io/hostname) instead of spec.nodeName, or use a StorageClass with volumeBindingMode Immediate.`,
      }, lastEvent(events, ["WaitForFirstConsumer", "WaitForPodScheduled"]));
    } else if (summary.volumeBindingMode === "WaitForFirstConsumer" && !selected) {
      state = withEvent({
        status: "Pending",
        reason: "WaitForFirstConsumer",
        message: `Pending: ${scName(summary.name)} has volumeBindingMode WaitForFirstConsumer, so the claim is ` +
          (noProvisioner ? "bound " : "provisioned ") + "only once a pod that uses it is scheduled; " +
          (users.length === 0
            ? "no pod in the bundle uses it."
            : `${users.length} pod(s) use it (${users.map((p) => p.metadata.name).join(", ")}): see why they cannot be scheduled.`),
      }, lastEvent(events, ["WaitForFirstConsumer", "WaitForPodScheduled"]));
    } else if (noProvisioner) {
      state = withEvent({
        status: "Pending",
        reason: "NoMatchingVolume",
        message: `Pending: ${scName(summary.name)} uses ${NO_PROVISIONER} (static binding only) and no PersistentVolume matches.`,
      }, lastEvent(events, ["FailedBinding"]));
    } else if (failed?.reason === "ProvisioningFailed") {
      state = {
        status: "Pending",
        reason: "ProvisioningFailed",
        message: `Pending: provisioner ${JSON.stringify(summary.provisioner)} fails: ${failed.message}`,
        event: failed,
      };
    } else {
      const waiting = lastEvent(events, ["ExternalProvisioning", "Provisioning"]);
      state = withEvent({
        status: "Pending",
        reason: "Provisioning",
        message: `Pending: waiting for provisioner ${JSON.stringify(summary.provisioner)}` +
          (selected ? ` to create the volume for node ${JSON.stringify(selected)}` : "") +
          (waiting ? `: ${waiting.message}` : "; it has reported nothing (is it running?)."),
      }, waiting);
    }
  }

  return {
    namespace,
    name,
    found: true,
    phase,
    storageClassName: className,
    storageClass: effectiveClass ? storageClassSummary(effectiveClass) : null,
    request: {
      storage: pvc.spec?.resources?.requests?.storage ?? null,
      accessModes: pvc.spec?.accessModes ?? [],
      volumeMode: pvc.spec?.volumeMode ?? "Filesystem",
    },
    volumeName,
    selectedNode: pvc.metadata.annotations?.[ANN_SELECTED_NODE] ?? null,
    state,
    staticCandidates: staticList,
    volume: volumeName ? volumeReport(ctx, volumeName) : null,
    events,
  };
}
