/**
 * Why is a PersistentVolumeClaim or a pod Pending? `explainPending(bundle, question)` answers per node and per rule:
 * the claim's state and reason, each PersistentVolume's node × term table, each pod's node × rule table in the
 * scheduler's filter order, the verdict per node, the summary in the scheduler's own words, the reconciliation with
 * the last FailedScheduling event, and the root-cause hints the data shows.
 *
 * The per-node model follows kube-scheduler's default profile (pkg/scheduler/apis/config/v1/default_plugins.go), in
 * its filter order, a node's reasons being those of its first failing filter (the framework stops at the first
 * rejection):
 * - PreFilter NodeAffinity (`matchFields metadata.name` terms that leave no node: `pod affinity terms conflict`), then
 *   VolumeBinding: missing claim, unbound Immediate claims, and (v1.27 until v1.32.0 / v1.31.3 / v1.30.7 / v1.29.11)
 *   the nodes a bound local PersistentVolume names; the scheduler's release is taken from the newest kubelet, and the
 *   pod's `notes` say so where it decides;
 * - NodeUnschedulable, TaintToleration, NodeAffinity (nodeSelector + required node affinity);
 * - NodePorts and NodeResourcesFit (filters/resources.ts, when the bundle has the node's allocatable);
 * - VolumeRestrictions (filters/volume_restrictions.ts: inline disks mounted on the node, ReadWriteOncePod in use),
 *   NodeVolumeLimits (filters/volume_limits.ts, CSI attach limits);
 * - VolumeBinding (bound PVs' node affinity via CheckNodeAffinity on node labels; WaitForFirstConsumer claims: static
 *   match or provisioning allowed by allowedTopologies), VolumeZone (PV zone/region labels);
 * - PodTopologySpread (filters/topology_spread.ts), InterPodAffinity (filters/pod_affinity.ts);
 * - DynamicResources (filters/dra.ts): a ResourceClaim missing or being deleted rejects every node at PreFilter; claims
 *   not created or unallocated are said, not simulated; an allocated claim's node selector filters.
 * Pod counts are over the pods the bundle holds. Before the filters: `spec.schedulingGates` (SchedulingGated) and a
 * `schedulerName` no scheduler answered for; the PodScheduled condition stands in for expired FailedScheduling Events.
 * VolumeBinding checks CSIStorageCapacity for a claim to provision when the driver tracks capacity
 * (filters/volume_capacity.ts); static binding compares VolumeAttributesClass names, and a claim naming one that was not
 * found is a finding. Not modelled: DRA device availability; the reconciliation says so when an event names it.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { type Bundle, PODS_NOT_LISTED_WARNING } from "../bundle/bundle.ts";
import type { CSINode, Node, PersistentVolume, PersistentVolumeClaim, Pod, Toleration } from "../model/k8s.ts";
import { NotFoundError } from "../model/errors.ts";
import { quantityValue } from "../model/quantity.ts";
import {
  evaluateNodeSelector,
  evaluateNodeSelectorMap,
  matchTopologySelectorTerms,
  type NodeSelectorEvaluation,
} from "./node_selector.ts";
import { analyseClaim, isClaimFullyBound, volumeMismatches } from "./claim.ts";
import {
  ANN_SELECTED_NODE,
  buildContext,
  claimClassName,
  cmp,
  eventsFor,
  getClaim,
  NO_PROVISIONER,
  nodeFacts,
  type PendingContext,
  podClaimNames,
  podsUsingClaim,
} from "./context.ts";
import { pendingHints } from "./causes.ts";
import { analyseGang, GANG_PERMIT_TIMEOUT, gangPodsNotListedWarning, type GangReport } from "./gang.ts";
import { analysePodGroup, podGroupFinding, podGroupReconciliation } from "./pod_group.ts";
import {
  type ClaimReport,
  type FailedSchedulingEvent,
  type Finding,
  PENDING_REPORT_API_VERSION,
  PENDING_REPORT_KIND,
  type PendingQuestion,
  type PendingReport,
  type PodClaimUse,
  type PodNodeRow,
  type PodReport,
  type Reconciliation,
  type RuleCheck,
  type SchedulingSummary,
} from "./report.ts";
import {
  classifyReason,
  CURRENT_WORDING,
  missingResourceClaimName,
  formatSchedulerMessage,
  parseSchedulerMessage,
  permitTimeout,
  reasonText,
  type SchedulerReasonKind,
  type SchedulerWording,
  taintWordingUndetermined,
  wordingForVersion,
  wordingOfMessage,
} from "./scheduler_message.ts";
import { evaluateTaints, TAINT_NOT_READY, TAINT_UNREACHABLE, toleratesUnschedulable } from "./taints.ts";
import {
  EXTENDED_RESOURCE_CONFIG,
  fitsResources,
  requestsText,
  hostPortConflicts,
  hostPorts,
  isExtendedResourceName,
  sidecarHostPortCounting,
} from "./filters/resources.ts";
import { capacityCheck } from "./filters/volume_capacity.ts";
import { csiTranslatedAffinity } from "./filters/csi_translation.ts";
import { type SpreadState, spreadDomainsText, topologySpreadFilterWithNominated, topologySpreadState } from "./filters/topology_spread.ts";
import { DRA_NODE_REASON, draNodeCheck, draWaitText, type PodResourceClaim, podResourceClaims } from "./filters/dra.ts";
import { VOLUME_LIMIT_REASON, volumeLimitsCheck, volumesByClaim } from "./filters/volume_limits.ts";
import {
  DISK_CONFLICT_REASON,
  diskConflicts,
  hasInlineDisks,
  readWriteOncePodConflicts,
  type ReadWriteOncePodConflict,
  RWOP_REASON,
} from "./filters/volume_restrictions.ts";
import {
  AFFINITY_REASON,
  ANTI_AFFINITY_REASON,
  EXISTING_ANTI_AFFINITY_REASON,
  hasPodAffinityWork,
  podAffinityFilterWithNominated,
  podAffinityState,
  type PodAffinityState,
} from "./filters/pod_affinity.ts";

export type {
  ClaimReport,
  Finding,
  PendingQuestion,
  PendingReport,
  PodNodeRow,
  PodReport,
  RuleCheck,
  VolumeReport,
} from "./report.ts";
import { shellWord } from "../model/shell_word.ts";
export { PENDING_REPORT_API_VERSION, PENDING_REPORT_KIND } from "./report.ts";

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

/** Short words for a failed selector: `term 0: …zone "southeastasia-1" is not in [0]; term 1: …`. */
function selectorFailure(ev: NodeSelectorEvaluation): string {
  if (ev.terms.length === 0) return "no nodeSelectorTerms (matches nothing)";
  return ev.terms.map((t) => {
    if (t.empty) return `term ${t.index}: empty (matches nothing)`;
    if (t.parseErrors.length > 0) return `term ${t.index}: invalid (${t.parseErrors.join("; ")})`;
    const failed = t.requirements.filter((r) => !r.matched);
    return `term ${t.index}: ${failed.map((r) => `${r.key} ${r.reason}`).join(", ")}`;
  }).join("; ");
}

function selectorSuccess(ev: NodeSelectorEvaluation): string {
  const t = ev.terms.find((x) => x.matched);
  return t ? `term ${t.index} matches` : "matches";
}

function claimUses(ctx: PendingContext, pod: Pod): PodClaimUse[] {
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

/** A PreFilter status that rejects every node: the plugin, and its message as FailedScheduling prints it. */
interface PreFilterRejection {
  plugin: "NodeAffinity" | "VolumeRestrictions" | "VolumeBinding" | "VolumeZone" | "DynamicResources";
  message: string;
}

/**
 * NodeAffinity's PreFilter (plugins/nodeaffinity/node_affinity.go `PreFilter`): when every required term names nodes
 * with `matchFields metadata.name In` (a term's lists intersected, the terms' sets united) and that leaves no name,
 * it rejects every node with `pod affinity terms conflict` (errReasonConflict); a term without such a field lets every
 * node through.
 */
function nodeAffinityPreFilter(pod: Pod): PreFilterRejection | null {
  const names = nodeAffinityNames(pod);
  return names !== undefined && names.size === 0 ? { plugin: "NodeAffinity", message: "pod affinity terms conflict" } : null;
}

/**
 * The PreFilter message that rejects every node, or null, in the default profile's PreFilter order:
 * - NodeAffinity's conflict ({@link nodeAffinityPreFilter});
 * - VolumeRestrictions (volume_restrictions.go `readWriteOncePodPVCsForPod`, v1.27+): the first persistentVolumeClaim
 *   volume, in spec order, whose claim is not found (`persistentvolumeclaim "NAME" not found`; ephemeral volumes are
 *   not looked at);
 * - VolumeBinding (plugins/volumebinding/volume_binding.go `podHasPVCs`, each volume in order): a claim not found
 *   (for a generic ephemeral volume: `waiting for ephemeral volume controller to create the persistentvolumeclaim`),
 *   a Lost claim (`bound to non-existent persistentvolume`), a claim being deleted; then unbound Immediate claims;
 * - VolumeBinding's PreFilterResult ({@link preFilterNodes}) when it keeps no node, in the releases that have it
 *   ({@link volumeBindingNarrowing}: v1.27 until v1.32.0 / v1.31.3 / v1.30.7 / v1.29.11);
 * - VolumeZone (volume_zone.go `getPVbyPod`, a PreFilter since v1.27, kubernetes#114149): a bound claim whose
 *   PersistentVolume does not exist, `persistentvolume "NAME" not found` (before v1.27 VolumeBinding's Filter said it
 *   per node: `node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)`);
 * - DynamicResources (last: default_plugins.go applyFeatureGates puts it before DefaultPreemption): the first of the
 *   pod's ResourceClaims, in spec order, that is being deleted (`resourceclaim "NAME" is being deleted`) or does not
 *   exist ({@link resourceClaimNotFoundMessage}; a claim whose read was forbidden is left undecided, and a finding says so).
 * @param version the cluster's version (kubelet), for the v1.24+ and v1.27+ steps; unknown: current releases.
 * @returns the rejection, or the nodes the PreFilterResults keep (NodeAffinity's `metadata.name` terms from v1.24,
 *   merged with VolumeBinding's in the releases that have it; computed once, for the node rows too), and the notes
 *   that say which release the VolumeBinding step was decided for.
 */
function podPreFilter(ctx: PendingContext, pod: Pod, uses: PodClaimUse[], version: string | undefined): PreFilterOutcome {
  const reject = (rejection: PreFilterRejection): PreFilterOutcome => ({ rejection });
  const affinity = nodeAffinityPreFilter(pod);
  if (affinity) return reject(affinity);
  const ns = pod.metadata.namespace ?? "";
  const volume = (message: string): PreFilterOutcome => reject({ plugin: "VolumeBinding", message });
  const ephemeral = new Set((pod.spec?.volumes ?? []).filter((v) => v["ephemeral"] !== undefined && v["ephemeral"] !== null).map((v) => v.name));
  // VolumeRestrictions' PreFilter runs before VolumeBinding's (default_plugins.go order): readWriteOncePodPVCsForPod
  // gets the claim of every persistentVolumeClaim volume (not an ephemeral one), and a NotFound is returned
  // UnschedulableAndUnresolvable with err.Error() (volume_restrictions.go PreFilter), since ReadWriteOncePod is on by
  // default (beta v1.27, GA v1.29; before, the plugin skipped that lookup)
  const unfound = atLeast(version, 27) ? uses.find((u) => !u.found && !ephemeral.has(u.volume)) : undefined;
  if (unfound) return reject({ plugin: "VolumeRestrictions", message: `persistentvolumeclaim "${unfound.claim}" not found` });
  for (const u of uses) {
    if (!u.found) {
      return volume(ephemeral.has(u.volume) ? `waiting for ephemeral volume controller to create the persistentvolumeclaim "${u.claim}"` : `persistentvolumeclaim "${u.claim}" not found`);
    }
    const pvc = getClaim(ctx, ns, u.claim);
    if (pvc?.status?.phase === "Lost") return volume(`persistentvolumeclaim "${u.claim}" bound to non-existent persistentvolume "${pvc.spec?.volumeName ?? ""}"`);
    if (pvc?.metadata.deletionTimestamp) return volume(`persistentvolumeclaim "${u.claim}" is being deleted`);
  }
  if (uses.some((u) => u.binding === "immediate")) return volume("pod has unbound immediate PersistentVolumeClaims");
  // NodeAffinity's own PreFilterResult (v1.24+, kubernetes#108606): the nodes its `metadata.name` terms name, e.g. the
  // one node of a DaemonSet pod; the others are never filtered
  const byName = atLeast(version, 24) ? nodeAffinityNames(pod) : undefined;
  const byNameOnly = byName ? { narrowed: { names: byName, plugins: ["NodeAffinity"] } } : {};
  if (!atLeast(version, 27)) return { rejection: null, ...byNameOnly };
  const local = preFilterNodes(ctx, pod, uses);
  const era = local ? volumeBindingNarrowing(version) : undefined;
  const notes = local && era ? [volumeBindingNarrowingNote(era, version)] : [];
  const narrowed = (era?.narrows ? local : undefined) ?? byNameOnly.narrowed;
  if (narrowed && narrowed.names.size === 0) {
    // framework.go RunPreFilterPlugins: the merged PreFilterResult holds no node
    const [only] = narrowed.plugins;
    return {
      ...reject({
        plugin: "VolumeBinding",
        message: narrowed.plugins.length === 1 ? `node(s) didn't satisfy plugin ${only}` : `node(s) didn't satisfy plugin(s) [${narrowed.plugins.join(" ")}] simultaneously`,
      }),
      notes,
    };
  }
  const gone = uses.find((u) => u.volumeName && !ephemeral.has(u.volume) && !ctx.volumes.has(u.volumeName));
  if (gone) return { ...reject({ plugin: "VolumeZone", message: `persistentvolume "${gone.volumeName}" not found` }), notes };
  // DynamicResources (last in PreFilter order): the pod's claims in spec order, the first that does not exist or is
  // being deleted holds the pod on every node (dynamicresources.go PreFilter → podResourceClaims →
  // foreachPodResourceClaim, whose error is returned UnschedulableAndUnresolvable with err.Error())
  const forbidden = (name: string) => ctx.bundle.warnings.some((w) => w.startsWith("get resourceclaims is forbidden") && w.endsWith(`ResourceClaim ${name} is unknown`));
  const stop = podResourceClaims(pod, ctx.bundle.objects.resourceClaims ?? [])
    .find((c) => c.deleting || (c.state === "not-found" && !forbidden(c.claimName ?? "")));
  if (stop?.deleting) return { ...reject({ plugin: "DynamicResources", message: `resourceclaim "${stop.claimName}" is being deleted` }), notes };
  if (stop) {
    return {
      ...reject({ plugin: "DynamicResources", message: resourceClaimNotFoundMessage(ns, stop.claimName ?? "", version) }),
      notes: [...notes, resourceClaimPreEnqueueNote(stop.claimName ?? "", version)],
    };
  }
  return { rejection: null, ...(narrowed ? { narrowed } : {}), notes };
}

/**
 * DynamicResources' words for a ResourceClaim the pod names that does not exist (dynamicresources.go
 * foreachPodResourceClaim, the claim's Get error as is): v1.31+ reads claims from the scheduler's assume cache
 * (scheduler.go `assumecache.NewAssumeCache(…, "ResourceClaim", …)`; assumecache NotFoundError `could not find %v %q`,
 * keyed `namespace/name`); v1.27–v1.30 from the informer's lister (`resourceclaim.resource.k8s.io "NAME" not found`).
 * @param namespace the pod's namespace.
 * @param name the ResourceClaim's name.
 * @param version the scheduler's release as the bundle tells it (the newest kubelet); undefined: a current release.
 * @returns the message, as FailedScheduling prints it.
 */
export function resourceClaimNotFoundMessage(namespace: string, name: string, version: string | undefined): string {
  return atLeast(version, 31) ? `could not find ResourceClaim "${namespace}/${name}"` : `resourceclaim.resource.k8s.io "${name}" not found`;
}

/**
 * The note on a missing ResourceClaim: DynamicResources' PreEnqueue (v1.27+) runs the same check before the pod may
 * enter the active queue (dynamicresources.go PreEnqueue; scheduling_queue.go runPreEnqueuePlugins only logs), so while
 * the claim is missing the scheduler does not try the pod at all; PreFilter says it only when the claim vanished
 * between the two.
 */
function resourceClaimPreEnqueueNote(name: string, version: string | undefined): string {
  return `ResourceClaim ${name} does not exist: DynamicResources' PreEnqueue holds the pod back from scheduling while it is missing ` +
    `(no attempt, so no FailedScheduling event and no PodScheduled condition from the scheduler); the message above is what PreFilter says ` +
    `when the claim disappears between the two, in the words of ${version ? `the scheduler's release taken from the newest kubelet, ${version}` : "a current release (no node reports a kubelet version)"}. ` +
    `The scheduler tries the pod again once the claim is created.`;
}

/** What PreFilter decides: a rejection of every node, or else the nodes a PreFilterResult keeps (undefined: all). */
interface PreFilterOutcome {
  rejection: PreFilterRejection | null;
  narrowed?: { names: Set<string>; plugins: string[] };
  /** What the outcome rests on that the bundle does not hold (the scheduler's release), in words for the report. */
  notes?: string[];
}

/**
 * Whether VolumeBinding's PreFilter narrows the nodes to a bound local PersistentVolume's hostname values
 * (binder.go `GetEligibleNodes`, kubernetes#109877, v1.27): kubernetes#125398 removed it, because those values are
 * `kubernetes.io/hostname` LABELS taken as node NAMES (issue #125336), in v1.32.0 and the backports v1.31.3
 * (#127584), v1.30.7 (#127585), v1.29.11 (#127586) (CHANGELOG-1.31/1.30/1.29, CHANGELOG-1.32 v1.32.0-alpha.2); since,
 * every node goes through Filter, where checkBoundClaims matches the PV's node affinity against the node's labels
 * (CheckNodeAffinity). v1.27 and v1.28 were never fixed.
 * @param version the scheduler's release as far as the bundle tells (the newest kubelet, e.g. "v1.31.2"); undefined
 *   when no node reports one.
 * @returns `narrows`, and `basis`: "version" (decided by it), "no-patch" (v1.29–v1.31 without a patch release: taken
 *   as its latest patch, which does not narrow), "unknown" (no version: taken as current, which does not narrow).
 */
function volumeBindingNarrowing(version: string | undefined): { narrows: boolean; basis: "version" | "no-patch" | "unknown" } {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(version ?? "");
  if (!m) return { narrows: false, basis: "unknown" };
  const minor = Number(m[1]) > 1 ? Infinity : Number(m[2]);
  const fixedIn: Record<number, number> = { 29: 11, 30: 7, 31: 3 };
  const fix = fixedIn[minor];
  if (minor < 27 || minor >= 32) return { narrows: false, basis: "version" };
  if (fix === undefined) return { narrows: true, basis: "version" };
  if (m[3] === undefined) return { narrows: false, basis: "no-patch" };
  return { narrows: Number(m[3]) < fix, basis: "version" };
}

/** The report's words for {@link volumeBindingNarrowing}: which release decides it, and where the bundle's guess comes from. */
function volumeBindingNarrowingNote(era: { narrows: boolean; basis: "version" | "no-patch" | "unknown" }, version: string | undefined): string {
  const taken = era.basis === "unknown"
    ? "no node reports a kubelet version, so the scheduler is taken to be a current release"
    : era.basis === "no-patch"
    ? `the scheduler's release is taken to be the latest patch of ${version} (the newest kubelet's version, which has no patch number)`
    : `the scheduler's release is taken to be ${version}, the newest kubelet's version (the bundle does not hold kube-scheduler's)`;
  const fixed = "kubernetes#125398: v1.32.0, v1.31.3, v1.30.7, v1.29.11";
  return era.narrows
    ? `VolumeBinding's PreFilter keeps only the nodes NAMED by the bound local PersistentVolume's kubernetes.io/hostname values, as from v1.27 until ${fixed} (since then, Filter matches its node affinity against each node's labels); ${taken}.`
    : `VolumeBinding matches the bound local PersistentVolume's node affinity against each node's labels (Filter), as since ${fixed}; from v1.27 until then its PreFilter kept only the nodes NAMED by the PV's kubernetes.io/hostname values; ${taken}.`;
}

/** Whether a cluster version (`v1.33.1`) is at least 1.`minor`; an unknown version counts as current. */
function atLeast(version: string | undefined, minor: number): boolean {
  const m = /^v?(\d+)\.(\d+)/.exec(version ?? "");
  return !m || Number(m[1]) > 1 || Number(m[2]) >= minor;
}

/**
 * The nodes PreFilter keeps when VolumeBinding narrows them (kubernetes#109877, v1.27 until kubernetes#125398, see
 * {@link volumeBindingNarrowing}, which the caller asks): a bound claim's local
 * PersistentVolume names its nodes (volume/util `GetLocalPersistentVolumeNodeNames`: per required term, the values of
 * its `kubernetes.io/hostname In` expressions intersected; the terms' sets united), taken as node NAMES, the claims'
 * sets intersected (binder.go `GetEligibleNodes`); merged with NodeAffinity's `metadata.name` result. Nodes left out
 * are never filtered: FailedScheduling counts them as `node(s) didn't satisfy plugin(s) [VolumeBinding]`
 * (schedule_one.go, the plugins that narrowed, sorted).
 * @returns undefined when VolumeBinding does not narrow (no bound local PersistentVolume).
 */
function preFilterNodes(ctx: PendingContext, pod: Pod, uses: PodClaimUse[]): { names: Set<string>; plugins: string[] } | undefined {
  let eligible: Set<string> | undefined;
  for (const u of uses) {
    if (u.binding !== "bound" || !u.volumeName) continue;
    const terms = ctx.volumes.get(u.volumeName)?.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
    const local = new Set(terms.flatMap((t) => [...(inValues(t?.matchExpressions, "kubernetes.io/hostname") ?? [])]));
    if (local.size === 0) continue;
    eligible = eligible === undefined ? local : intersect(eligible, local);
  }
  if (eligible === undefined) return undefined;
  const byName = nodeAffinityNames(pod);
  return {
    names: byName === undefined ? eligible : intersect(eligible, byName),
    plugins: byName === undefined ? ["VolumeBinding"] : ["NodeAffinity", "VolumeBinding"],
  };
}

/** NodeAffinity's PreFilterResult: the node names its required terms allow by `metadata.name In`, or undefined. */
function nodeAffinityNames(pod: Pod): Set<string> | undefined {
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return undefined;
  const names = new Set<string>();
  for (const t of terms) {
    const termNames = inValues(t?.matchFields, "metadata.name");
    if (termNames === undefined) return undefined; // a term without it lets every node through
    for (const n of termNames) names.add(n);
  }
  return names;
}

/** The values one term's `KEY In [...]` requirements all allow (their lists intersected), or undefined when it has none. */
function inValues(reqs: readonly { key: string; operator: string; values?: string[] }[] | undefined, key: string): Set<string> | undefined {
  let out: Set<string> | undefined;
  for (const r of reqs ?? []) {
    if (r.key !== key || r.operator !== "In") continue;
    const values = new Set(r.values ?? []);
    out = out === undefined ? values : intersect(out, values);
  }
  return out;
}

function intersect(a: Set<string>, b: Set<string>): Set<string> {
  return new Set([...a].filter((x) => b.has(x)));
}

/**
 * The PersistentVolume the scheduler matches on `node` to each of the pod's delayed-binding claims not yet given a
 * node, as volumebinding/binder.go `findMatchingVolumes` does: the claims by requested size, smallest first, each
 * given the volume `FindMatchingVolume` picks (one pre-bound to it, else the smallest that satisfies it and the node)
 * among those not already chosen for another claim of the pod, so one volume never serves two claims.
 * @returns claim name → the volume, or undefined when none is left for it.
 */
function matchDelayedClaims(ctx: PendingContext, pod: Pod, node: Node, uses: readonly PodClaimUse[]): Map<string, PersistentVolume | undefined> {
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
function volumeCheck(
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
function volumeZoneCheck(ctx: PendingContext, node: Node, uses: PodClaimUse[]): RuleCheck | null {
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

function podNodeRow(
  ctx: PendingContext,
  pod: Pod,
  node: Node,
  uses: PodClaimUse[],
  wording: SchedulerWording,
  preFilter: PreFilterRejection | null,
  narrowed: { names: Set<string>; plugins: string[] } | undefined,
  pre: {
    spread: SpreadState | null;
    affinity: PodAffinityState | null;
    rwop: ReadWriteOncePodConflict[];
    dra: PodResourceClaim[];
    claimToVolume: Map<string, PersistentVolume>;
    csiNodes: Map<string, CSINode>;
    inlineDisks: boolean;
    /** NodePorts counts sidecars' host ports (filters/resources.ts sidecarHostPortCounting). */
    sidecarPorts: boolean;
  },
): PodNodeRow {
  const tolerations: Toleration[] = pod.spec?.tolerations ?? [];
  const checks: RuleCheck[] = [];
  const cordoned = node.spec?.unschedulable === true;
  const tolUnsched = toleratesUnschedulable(tolerations);
  checks.push({
    rule: "cordoned",
    plugin: "NodeUnschedulable",
    passed: !cordoned || tolUnsched,
    detail: !cordoned ? "schedulable" : tolUnsched ? "cordoned, tolerated by the pod" : "cordoned (spec.unschedulable)",
  });
  const tv = evaluateTaints(node.spec?.taints, tolerations);
  const untol = tv.taints.filter((t) => t.filtered && !t.tolerated).map((t) => t.text);
  checks.push({
    rule: "taints",
    plugin: "TaintToleration",
    passed: untol.length === 0,
    detail: untol.length > 0 ? `untolerated ${untol.join(", ")}` : tv.taints.length > 0 ? "all taints tolerated" : "no taints",
    untoleratedTaints: untol,
  });
  const nodeSel = pod.spec?.nodeSelector;
  if (nodeSel && Object.keys(nodeSel).length > 0) {
    const selector = evaluateNodeSelectorMap(nodeSel, node.metadata.labels ?? {});
    const failed = selector.requirements.filter((r) => !r.matched);
    checks.push({
      rule: "nodeSelector",
      plugin: "NodeAffinity",
      passed: selector.matched,
      detail: selector.matched ? "matches" : failed.map((r) => `${r.key}: ${r.reason}`).join(", "),
      selector,
    });
  }
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required) {
    const evaluation = evaluateNodeSelector(required, nodeFacts(node));
    checks.push({
      rule: "nodeAffinity",
      plugin: "NodeAffinity",
      passed: evaluation.matched,
      detail: evaluation.matched ? selectorSuccess(evaluation) : selectorFailure(evaluation),
      evaluation,
    });
  }
  // NodePorts and NodeResourcesFit, over the pods the bundle holds on this node (filters/resources.ts)
  // Pods nominated to this node by a preemption, of a priority no lower than this pod's, are counted as if there
  // (framework/runtime/framework.go RunFilterPluginsWithNominatedPods): the room preemption freed is theirs
  const nominated = nominatedByNode(ctx, pod).get(node.metadata.name) ?? [];
  const bound = podsCounted(ctx, pod, node);
  const counted = `counted over the ${bound.length} pod(s) the bundle holds on this node` +
    (nominated.length > 0 ? `, ${nominated.length} of them nominated to it (${nominated.map((p) => `${p.metadata.namespace ?? "default"}/${p.metadata.name}`).join(", ")}) by a preemption` : "");
  const portConflicts = hostPortConflicts(pod, bound, pre.sidecarPorts);
  if (hostPorts(pod, pre.sidecarPorts).length > 0) {
    checks.push({
      rule: "hostPorts",
      plugin: "NodePorts",
      passed: portConflicts.length === 0,
      detail: portConflicts.length === 0 ? `host ports free (${counted})` : `host port ${portConflicts.join(", ")} in use`,
    });
  }
  // checked when the bundle has the node's allocatable: the pod count for every pod (one that requests nothing
  // too, fit.go fitsRequest), then each resource the pod requests
  const hasAllocatable = (node.status as { allocatable?: unknown } | undefined)?.allocatable !== undefined;
  const fit = hasAllocatable ? fitsResources(pod, node, bound) : undefined;
  if (fit) {
    checks.push({
      rule: "resources",
      plugin: "NodeResourcesFit",
      passed: fit.reasons.length === 0,
      detail: `${fit.reasons.length > 0 ? `${fit.reasons.join(", ")}: ` : ""}${fit.detail} (${counted})`,
    });
  }
  // VolumeRestrictions: inline disks already mounted on this node, then ReadWriteOncePod (the same on every node)
  const disks = pre.inlineDisks ? diskConflicts(pod, bound) : [];
  if (pre.inlineDisks) {
    checks.push({
      rule: "volumeRestrictions",
      plugin: "VolumeRestrictions",
      passed: disks.length === 0,
      detail: disks.length > 0 ? disks.join("; ") : `no inline disk of the pod is mounted here (${counted})`,
    });
  }
  if (pre.rwop.length > 0) {
    checks.push({
      rule: "volumeRestrictions",
      plugin: "VolumeRestrictions",
      passed: false,
      detail: pre.rwop.map((c) => `claim ${c.claim} is ReadWriteOncePod and held by ${c.holders.join(", ")}`).join("; "),
    });
  }
  // NodeVolumeLimits: the node's CSI attach limits
  const csiNode = pre.csiNodes.get(node.metadata.name);
  const limits = volumeLimitsCheck(ctx, pod, node, csiNode, pre.claimToVolume);
  if (limits) checks.push({ rule: "volumeLimits", plugin: "NodeVolumeLimits", passed: limits.passed, detail: limits.detail });
  let nodeConflict = false;
  let bindConflict = false;
  let pvMissing = false;
  let storageConflict = false;
  let boundDecided = false;
  const matched = matchDelayedClaims(ctx, pod, node, uses);
  for (const u of uses) {
    const { check, conflict } = volumeCheck(ctx, pod, node, u, matched);
    checks.push(check);
    // checkBoundClaims stops at the first bound claim that fails; unbound claims are all checked.
    if (conflict === "node" && !boundDecided) {
      nodeConflict = true;
      boundDecided = true;
    } else if (conflict === "pv-missing" && !boundDecided) {
      pvMissing = true;
      boundDecided = true;
    } else if (conflict === "bind") bindConflict = true;
    else if (conflict === "storage") storageConflict = true;
  }
  const zoneCheck = volumeZoneCheck(ctx, node, uses);
  if (zoneCheck) checks.push(zoneCheck);
  // PodTopologySpread, then InterPodAffinity (after VolumeZone in the default profile's filter order), with the pods
  // nominated to this node counted as the scheduler's AddPod extensions count them, then (affinity) without them
  const spread = pre.spread ? topologySpreadFilterWithNominated(pre.spread, pod, node, nominated) : null;
  if (spread) checks.push({ rule: "topologySpread", plugin: "PodTopologySpread", passed: spread.passed, detail: spread.detail });
  const affinity = pre.affinity ? podAffinityFilterWithNominated(pre.affinity, pod, node, nominated, ctx.namespaceLabels) : null;
  if (affinity) {
    const undecided = pre.affinity!.undecided.length > 0
      ? ` (undecided, counted as no match: ${pre.affinity!.undecided.join("; ")} — the namespaceSelector needs the namespaces' labels, which the bundle does not hold)`
      : "";
    checks.push({ rule: "podAffinity", plugin: "InterPodAffinity", passed: affinity.passed, detail: affinity.detail + undecided });
  }
  // DynamicResources: allocated claims' node selectors (the last filter of the default profile)
  const dra = draNodeCheck(pre.dra, node);
  if (dra) checks.push({ rule: "dra", plugin: "DynamicResources", passed: dra.passed, detail: dra.detail });
  const ready = ctx.nodeStates.find((s) => s.name === node.metadata.name)?.ready ?? "Unknown";
  const hasReadyTaint = (node.spec?.taints ?? []).some((t) => t.key === TAINT_NOT_READY || t.key === TAINT_UNREACHABLE);
  checks.push({
    rule: "ready",
    plugin: null,
    passed: ready === "True",
    detail: ready === "True"
      ? "Ready"
      : `NotReady (Ready=${ready})` + (hasReadyTaint ? "" : "; no not-ready/unreachable taint yet, so the scheduler still considers it"),
  });

  let rejectedBy: PodNodeRow["rejectedBy"] = null;
  const failed = (rule: RuleCheck["rule"]) => checks.some((c) => c.rule === rule && !c.passed);
  if (preFilter) {
    rejectedBy = { plugin: preFilter.plugin, reasons: [preFilter.message] };
  } else if (narrowed && !narrowed.names.has(node.metadata.name)) {
    const plugins = [...narrowed.plugins].sort();
    rejectedBy = wording.preFilterResult === "uncounted"
      ? { plugin: narrowed.plugins.join(", "), reasons: [`not among the node(s) the PreFilterResult of [${plugins.join(" ")}] keeps`], uncounted: true }
      : {
        plugin: narrowed.plugins.join(", "),
        reasons: [wording.preFilterResult === "filtered-out" ? "node is filtered out by the prefilter result" : `node(s) didn't satisfy plugin(s) [${plugins.join(" ")}]`],
      };
  } else if (failed("cordoned")) {
    rejectedBy = { plugin: "NodeUnschedulable", reasons: [reasonText("unschedulable", wording) as string] };
  } else if (tv.first) {
    rejectedBy = { plugin: "TaintToleration", reasons: [reasonText("taint", wording, tv.first) as string] };
  } else if (failed("nodeSelector") || failed("nodeAffinity")) {
    rejectedBy = { plugin: "NodeAffinity", reasons: [reasonText("node-affinity", wording) as string] };
  } else if (portConflicts.length > 0) {
    rejectedBy = { plugin: "NodePorts", reasons: ["node(s) didn't have free ports for the requested pod ports"] };
  } else if (fit && fit.reasons.length > 0) {
    rejectedBy = { plugin: "NodeResourcesFit", reasons: fit.reasons };
  } else if (disks.length > 0) {
    rejectedBy = { plugin: "VolumeRestrictions", reasons: [DISK_CONFLICT_REASON] };
  } else if (pre.rwop.length > 0) {
    rejectedBy = { plugin: "VolumeRestrictions", reasons: [RWOP_REASON] };
  } else if (limits && !limits.passed) {
    rejectedBy = { plugin: "NodeVolumeLimits", reasons: [VOLUME_LIMIT_REASON] };
  } else if (nodeConflict || bindConflict || storageConflict || pvMissing) {
    // FindPodVolumes' order: node conflict, bind conflict, not enough space, PV not found
    const reasons: string[] = [];
    if (nodeConflict) reasons.push(reasonText("volume-node-affinity", wording) as string);
    if (bindConflict) reasons.push(reasonText("volume-bind", wording) as string);
    if (storageConflict) reasons.push(reasonText("not-enough-storage", wording) as string);
    if (pvMissing) reasons.push(reasonText("pv-not-exist", wording) as string);
    rejectedBy = { plugin: "VolumeBinding", reasons };
  } else if (zoneCheck && !zoneCheck.passed) {
    rejectedBy = { plugin: "VolumeZone", reasons: [reasonText("volume-zone", wording) as string] };
  } else if (spread && !spread.passed) {
    rejectedBy = { plugin: "PodTopologySpread", reasons: [spread.reason as string] };
  } else if (affinity && !affinity.passed) {
    rejectedBy = { plugin: "InterPodAffinity", reasons: [affinity.reason as string] };
  } else if (dra && !dra.passed) {
    rejectedBy = { plugin: "DynamicResources", reasons: [DRA_NODE_REASON] };
  }
  return { node: node.metadata.name, checks, fits: rejectedBy === null, rejectedBy };
}

function lastFailedScheduling(ctx: PendingContext, pod: Pod): FailedSchedulingEvent | null {
  const events = eventsFor(ctx, "Pod", pod.metadata.namespace ?? "", pod.metadata.name, pod.metadata.uid).filter((e) => e.reason === "FailedScheduling");
  let e = events[events.length - 1];
  // The scheduler writes every attempt's message, whole, into the PodScheduled condition (schedule_one.go
  // handleSchedulingFailure), while an Event keeps the first message of its series (client-go events: the key leaves
  // the message out, a repeat only counts) and is cut at 1,024 bytes (truncateMessage, " ..."): when the two differ,
  // the condition is the scheduler's last word. Events also expire (one hour by default).
  const c = (pod.status?.conditions ?? []).find((x) => x.type === "PodScheduled" && x.status === "False" && x.reason === "Unschedulable");
  if (c?.message && c.message !== e?.message) {
    e = {
      type: "Warning",
      reason: "FailedScheduling",
      message: c.message,
      count: null,
      lastSeen: (c as { lastTransitionTime?: string }).lastTransitionTime ?? null,
      source: e
        ? `PodScheduled condition (the scheduler's latest message; the Event ${e.message.endsWith(" ...") ? "is cut at 1,024 bytes" : "keeps the first message of its series"})`
        : "PodScheduled condition (the Events have expired)",
      object: { kind: "Pod", namespace: pod.metadata.namespace ?? "", name: pod.metadata.name },
    };
  }
  if (!e) return null;
  try {
    return { ...e, parsed: parseSchedulerMessage(e.message) };
  } catch (err) {
    return { ...e, parsed: null, parseError: (err as Error).message };
  }
}

/**
 * The newest kubelet version of the bundle's nodes (e.g. "v1.31.5"), compared by major, minor and patch release, which
 * stands for the scheduler's release (a kubelet is never newer than the control plane): the patch decides backported
 * behaviour (VolumeBinding's PreFilterResult, sidecar host ports, the PreFilterResult wording). A version without a
 * patch counts as below every patch of its minor. Undefined when no node reports one.
 */
function maxKubeletVersion(ctx: PendingContext): string | undefined {
  let best: [number, number, number] | undefined;
  let text: string | undefined;
  for (const s of ctx.nodeStates) {
    const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(s.kubeletVersion ?? "");
    if (!m) continue;
    const v: [number, number, number] = [Number(m[1]), Number(m[2]), m[3] === undefined ? -1 : Number(m[3])];
    if (!best || v[0] > best[0] || (v[0] === best[0] && (v[1] > best[1] || (v[1] === best[1] && v[2] > best[2])))) {
      best = v;
      text = s.kubeletVersion as string;
    }
  }
  return text;
}

function reconcile(
  summary: SchedulingSummary | null,
  ev: FailedSchedulingEvent | null,
  scheduled: boolean,
  checked: ReadonlySet<string> = new Set<string>(),
  schedulerName = "default-scheduler",
  nodes: readonly Node[] = [],
  podsUnlisted = false,
): Reconciliation {
  if (scheduled) return { status: "not-applicable", details: ["The pod is scheduled; the scheduler's verdict no longer applies."] };
  if (!ev) return { status: "no-event", details: ["No FailedScheduling event for the pod in the bundle (events expire after one hour by default)."] };
  // A failure of the binding cycle (schedule_one.go: a node was chosen, then Reserve, Permit, PreBind or Bind failed,
  // framework.go "running PreBind plugin %q: %w"; "Binding rejected: …"): no node was filtered out, nothing to compare
  const binding = /^(?:running (Reserve|Permit|PreBind|Bind) plugin "([^"]+)": |Binding rejected: )/.exec(ev.message);
  if (!ev.parsed && binding) {
    return {
      status: "not-applicable",
      details: [`The scheduler's last attempt chose a node and failed while binding the pod${binding[2] ? ` (${binding[1]} plugin ${binding[2]})` : ""}, not at filtering: "${ev.message}". The pod is retried; the nodes' verdicts above are the filters' side.`],
    };
  }
  if (!ev.parsed) return { status: "disagree", details: [`The last FailedScheduling message could not be read: ${ev.parseError ?? ""}`] };
  if (!summary) return { status: "not-applicable", details: [`No Node objects: nothing to compare the scheduler's last word with ("${ev.message}").`] };
  const details: string[] = [];
  const p = ev.parsed;
  // The framework's histogram counts exact reason strings (framework/types.go FitError): resources per resource
  // ("Insufficient cpu" is not "Insufficient memory"), the three InterPodAffinity reasons apart, a taint by key and, when
  // both sides name it, value. Other kinds are compared by kind (their wording changed across releases).
  const theirsNames = p.reasons.some((x) => x.kind === "taint" && x.taint);
  const theirsValues = p.reasons.some((x) => x.kind === "taint" && x.taint?.value !== undefined);
  const key = (kind: SchedulerReasonKind, reason: string, taint?: { key: string; value?: string }) =>
    kind === "resources" || kind === "pod-affinity"
      ? `${kind} "${reason.trim()}"`
      : kind === "taint" && theirsNames && taint
      ? `taint{${taint.key}${theirsValues && taint.value !== undefined ? `: ${taint.value}` : ""}}`
      : kind;
  // An Event's message is cut at 1,024 bytes with " ..." (schedule_one.go truncateMessage): its last reason may be
  // cut too, and the reasons after it are not shown; only those shown whole are compared.
  const cut = ev.message.length >= 1000 && /\s\.\.\.$/.test(ev.message.trimEnd());
  const shown = cut ? p.reasons.slice(0, -1) : p.reasons;
  const theirs = new Map<string, number>();
  for (const r of shown.filter((x) => x.kind !== "pod-affinity-umbrella")) theirs.set(key(r.kind, r.reason, r.taint), (theirs.get(key(r.kind, r.reason, r.taint)) ?? 0) + r.count);
  const ours = new Map<string, number>();
  for (const r of summary.reasons) {
    const k = key(r.kind, r.reason, r.kind === "taint" ? classifyReason(r.reason).taint : undefined);
    ours.set(k, (ours.get(k) ?? 0) + r.count);
  }
  if (p.total !== null && p.total !== summary.total) {
    details.push(`The event counted ${p.total} node(s); the bundle has ${summary.total}: nodes were added or removed since.`);
  }
  const unmodelled = shown.filter((r) =>
    ["node-condition", "node-name", "scheduler-enforced-affinity", "node-declared-features", "other"].includes(r.kind) ||
    // modelled only with the data: requests and the nodes' allocatable, host ports
    (r.kind === "resources" && !checked.has("resources")) || (r.kind === "ports" && !checked.has("hostPorts")) ||
    (r.kind === "volume-restrictions" && !(checked.has("volumeRestrictions") && /ReadWriteOncePod/.test(r.reason)) &&
      !(checked.has("inlineDisks") && /had no available disk/.test(r.reason))) ||
    (r.kind === "volume-limits" && !checked.has("volumeLimits")) ||
    // modelled when the bundle holds the CSIDrivers (and their CSIStorageCapacities)
    (r.kind === "not-enough-storage" && !checked.has("storageCapacity")) ||
    (r.kind === "dra" && !(checked.has("dra") && /not available on the node/.test(r.reason)) && !summary.reasons.some((o) => o.reason === r.reason || sameMissingResourceClaim(o.reason, r.reason))) ||
    (r.kind === "pod-affinity" && !checked.has("podAffinity")) || (r.kind === "topology-spread" && !checked.has("topologySpread"))
  );
  for (const r of unmodelled) {
    if (r.kind === "scheduler-enforced-affinity") {
      // NodeAffinity's Filter tests the profile's added affinity first (plugins/nodeaffinity/node_affinity.go)
      details.push(
        `The scheduler reported "${r.count} ${r.reason}": node affinity that ${schedulerName}'s profile adds to every pod it places ` +
          `(KubeSchedulerConfiguration profiles[].pluginConfig, NodeAffinity args.addedAffinity), not the pod's own. ` +
          `It is in the scheduler's configuration file, not in the API, so this bundle cannot check it: compare that addedAffinity with the nodes' labels.`,
      );
      continue;
    }
    if (r.kind === "node-declared-features") {
      details.push(declaredFeaturesDetail(r.count, r.reason, nodes));
      continue;
    }
    if (r.kind === "dra" && /^cannot fit resource$/i.test(r.reason)) {
      // DynamicResources' Filter with DRAExtendedResource (plugins/dynamicresources/dynamicresources.go)
      details.push(
        `The scheduler reported "${r.count} ${r.reason}": the pod requests an extended resource that those nodes neither advertise in status.allocatable ` +
          `(a device plugin) nor can get through a DeviceClass's spec.extendedResourceName (DynamicResources, DRAExtendedResource, v1.34+); ` +
          `which resource is not in the message (the scheduler's log names it): compare the pod's extended resource requests with the nodes' allocatable and the DeviceClasses.`,
      );
      continue;
    }
    details.push(`The scheduler reported "${r.count} ${r.reason}", a check this analysis does not model (it has no data for it).`);
  }
  const kinds = new Set([...theirs.keys(), ...(cut ? [] : ours.keys())]);
  let same = true;
  const mismatched: string[] = [];
  for (const k of [...kinds].sort(cmp)) {
    const a = theirs.get(k) ?? 0;
    const b = ours.get(k) ?? 0;
    if (a !== b) {
      same = false;
      if (!unmodelled.some((r) => key(r.kind, r.reason, r.taint) === k)) mismatched.push(k);
    }
  }
  // Extended resources the event never calls short, the only difference: the scheduler's configuration, which the
  // bundle does not hold, can tell NodeResourcesFit to skip them (noderesources/fit.go fitsRequest)
  const ignorable = mismatched.map((k) => /^resources "Insufficient (.+)"$/.exec(k)?.[1]);
  if (mismatched.length > 0 && details.length === 0 && ignorable.every((r) => r !== undefined && isExtendedResourceName(r) && (theirs.get(`resources "Insufficient ${r}"`) ?? 0) === 0)) {
    const names = ignorable.map((r) => `${r} (the bundle finds ${ours.get(`resources "Insufficient ${r}"`) ?? 0} node(s) short of it)`).join(", ");
    return {
      status: "disagree",
      details: [
        `The event agrees but for extended resource(s) it never calls short: ${names}. ${EXTENDED_RESOURCE_CONFIG}: ` +
        `check kube-scheduler's --config file (kubectl -n kube-system get configmap, or the static pod's manifest) for those settings; ` +
        `otherwise the nodes' allocatable changed since the event.`,
      ],
    };
  }
  for (const k of mismatched) details.push(`${k}: the event says ${theirs.get(k) ?? 0} node(s), the bundle gives ${ours.get(k) ?? 0}.`);
  if (same && details.length === 0) {
    return {
      status: "agree",
      details: [cut
        ? `The last FailedScheduling event, cut at 1,024 bytes, says the same in the ${shown.length} reason(s) it shows whole: "${p.raw.trim()}"`
        : `The last FailedScheduling event says the same: "${p.raw.trim()}"`],
    };
  }
  if (cut) details.push("The event's message is cut at 1,024 bytes (the Event's limit): only the reasons it shows whole were compared.");
  if (summary.feasibleNodes.length > 0) {
    details.push(
      podsUnlisted
        ? `By the rules checked here ${summary.feasibleNodes.join(", ")} would fit, but they counted no pod on the nodes (${PODS_UNLISTED_WHY}): the resources, hostPorts, topologySpread and podAffinity verdicts are not decided, which is the likely cause.`
        : `By the rules checked here ${summary.feasibleNodes.join(", ")} would fit: the cluster changed since the event, or a check not modelled here rejects them.`,
    );
  }
  if (details.length === 0) details.push("The counts differ.");
  return { status: "disagree", details };
}

/** Whether two reasons both say one ResourceClaim is missing, whatever release's words each is in ({@link missingResourceClaimName}). */
function sameMissingResourceClaim(a: string, b: string): boolean {
  const name = missingResourceClaimName(a);
  return name !== null && name === missingResourceClaimName(b);
}

/**
 * What a NodeDeclaredFeatures rejection means (plugins/nodedeclaredfeatures, v1.35+, feature gate
 * NodeDeclaredFeatures): the nodes lack features the pod needs, which the scheduler infers from the pod's spec (not
 * modelled here: component-helpers/nodedeclaredfeatures' registry changes with each release); a node declares its
 * features in status.declaredFeatures. When the message lists the features (v1.35: `… unsatisfied requirements: A, B`),
 * names the nodes of the bundle that declare each; when it does not (later releases: `node(s) didn't match Pod's
 * required features`), lists what each node of the bundle declares, so that the nodes that declare less stand out.
 * @param count the nodes the scheduler rejected so.
 * @param reason the reason as written.
 * @param nodes the bundle's nodes.
 * @returns one sentence.
 */
function declaredFeaturesDetail(count: number, reason: string, nodes: readonly Node[]): string {
  const named = /:\s*(.*)$/.exec(reason);
  const features = (named?.[1] ?? "").split(",").map((f) => f.trim()).filter((f) => f !== "");
  const lead = `The scheduler reported "${count} ${reason}": those nodes do not declare, in status.declaredFeatures, features the pod needs ` +
    `(NodeDeclaredFeatures; the scheduler infers the pod's needs from its spec, which this analysis does not model)`;
  if (!nodes.some((n) => Array.isArray(n.status?.declaredFeatures))) return `${lead}; no node of this bundle lists declaredFeatures (an older kubelet, or a bundle that does not keep them).`;
  if (features.length === 0) {
    // the message names no feature: what each node declares, fewest first
    const per = [...nodes]
      .map((n) => ({ name: n.metadata.name, declared: n.status?.declaredFeatures ?? [] }))
      .sort((a, b) => a.declared.length - b.declared.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((n) => `${n.name}: ${n.declared.length > 0 ? n.declared.join(", ") : "none"}`);
    return `${lead}. This release's message does not name the features: ` +
      `what each node declares, fewest first: ${per.join("; ")}.`;
  }
  const per = features.map((f) => {
    const having = nodes.filter((n) => (n.status?.declaredFeatures ?? []).includes(f)).map((n) => n.metadata.name);
    return `${f}: ${having.length > 0 ? `declared by ${having.join(", ")}` : "declared by no node of this bundle"}`;
  });
  return `${lead}. ${per.join("; ")}.`;
}

/**
 * The pods NodePorts and NodeResourcesFit count on `node` for `pod`: those bound to it (context.ts `indexPodsByNode`,
 * terminal ones left out) but `pod`, and those a preemption nominated to it ({@link nominatedByNode}).
 */
function podsCounted(ctx: PendingContext, pod: Pod, node: Node): Pod[] {
  const nominated = nominatedByNode(ctx, pod).get(node.metadata.name) ?? [];
  return [...(ctx.podsByNode.get(node.metadata.name) ?? []).filter((p) => p !== pod), ...nominated];
}

/**
 * The note on sidecars' host ports when they change a NodePorts verdict or the pod asks for one: whether the
 * scheduler's release counts them ({@link sidecarHostPortCounting}), and where that release was taken from.
 * @returns undefined when no sidecar host port matters.
 */
function sidecarPortNote(ctx: PendingContext, pod: Pod, version: string | undefined): string | undefined {
  const own = hostPorts(pod, true).length !== hostPorts(pod, false).length;
  const onNodes = ctx.nodes.some((n) => {
    const bound = podsCounted(ctx, pod, n);
    return hostPortConflicts(pod, bound, true).join() !== hostPortConflicts(pod, bound, false).join();
  });
  if (!own && !onNodes) return undefined;
  const counting = sidecarHostPortCounting(version);
  const what = `Host ports of sidecars (init containers with restartPolicy: Always)${own ? ", the pod's own included," : ""}`;
  const since = "kubernetes#132040: v1.34.0, and v1.33.6 by #133390";
  switch (counting) {
    case "counted":
      return `${what} are counted by NodePorts, as since ${since} (earlier releases ignore them); the scheduler's release is taken to be ${version}, the newest kubelet's version (the bundle does not hold kube-scheduler's).`;
    case "ignored":
      return `${what} are not counted by NodePorts, as before ${since}; the scheduler's release is taken to be ${version}, the newest kubelet's version (the bundle does not hold kube-scheduler's).`;
    case "undetermined":
      return `${what} are counted by NodePorts as since ${since}, but whether this scheduler counts them is undetermined: the newest kubelet's version, ${version}, has no patch number, and v1.33.0–v1.33.5 ignore them.`;
    default:
      return `${what} are counted by NodePorts as since ${since}; no node reports a kubelet version, so the scheduler is taken to be a current release (earlier ones ignore them).`;
  }
}

const NOMINATED = new WeakMap<PendingContext, WeakMap<Pod, Map<string, Pod[]>>>();

/**
 * The pods a preemption nominated to each node (`status.nominatedNodeName`, not bound, not terminal) with a priority
 * no lower than `pod`'s (framework/runtime/framework.go RunFilterPluginsWithNominatedPods), by node; read once per pod and analysis.
 */
function nominatedByNode(ctx: PendingContext, pod: Pod): Map<string, Pod[]> {
  let perPod = NOMINATED.get(ctx);
  if (!perPod) NOMINATED.set(ctx, perPod = new WeakMap());
  let m = perPod.get(pod);
  if (m) return m;
  m = new Map();
  const priority = (p: Pod) => (p.spec as { priority?: number } | undefined)?.priority ?? 0;
  for (const p of ctx.pods) {
    const to = (p.status as { nominatedNodeName?: string } | undefined)?.nominatedNodeName;
    if (!to || p === pod || p.spec?.nodeName || priority(p) < priority(pod) || p.status?.phase === "Succeeded" || p.status?.phase === "Failed") continue;
    m.set(to, [...(m.get(to) ?? []), p]);
  }
  perPod.set(pod, m);
  return m;
}

/**
 * One pod's report: the node × rule table, the summary, the reconciliation with the scheduler's last word.
 * @param withGang whether to work out GangScheduling's hold ({@link analyseGang}); false for the other pods of a gang,
 *   whose verdicts only say whether they fit.
 */
function analysePod(ctx: PendingContext, pod: Pod, withGang = true): PodReport {
  const gates = ((pod.spec as { schedulingGates?: { name: string }[] } | undefined)?.schedulingGates ?? []).map((g) => g.name);
  const uses = claimUses(ctx, pod);
  const { rejection: preFilter, narrowed, notes = [] } = podPreFilter(ctx, pod, uses, maxKubeletVersion(ctx));
  const last = lastFailedScheduling(ctx, pod);
  const wording: SchedulerWording = {
    ...(maxKubeletVersion(ctx) ? wordingForVersion(maxKubeletVersion(ctx)) : CURRENT_WORDING),
    ...(last?.parsed ? wordingOfMessage(last.parsed) : {}),
  };
  // An event that counts the filters' rejections but shows neither wording for the nodes a PreFilterResult left out
  // was written by a release that does not count them (SchedulerWording.preFilterResult): the event says so itself.
  if (narrowed && narrowed.names.size > 0 && !preFilter && last?.parsed && last.parsed.reasons.length > 0 && wordingOfMessage(last.parsed).preFilterResult === undefined) {
    wording.preFilterResult = "uncounted";
  }
  const scheduledAlready = !!pod.spec?.nodeName;
  const pre = {
    spread: scheduledAlready ? null : topologySpreadState(pod, ctx.nodes, ctx.podsByNode, maxKubeletVersion(ctx)),
    affinity: !scheduledAlready && hasPodAffinityWork(pod, ctx.pods) ? podAffinityState(pod, ctx.nodeByName, ctx.podsByNode, ctx.namespaceLabels) : null,
    rwop: scheduledAlready ? [] : readWriteOncePodConflicts(ctx, pod),
    dra: podResourceClaims(pod, ctx.bundle.objects.resourceClaims ?? []),
    claimToVolume: volumesByClaim(ctx.volumes.values()),
    csiNodes: new Map((ctx.bundle.objects.csiNodes ?? []).map((c) => [c.metadata.name, c] as const)),
    inlineDisks: hasInlineDisks(pod),
    sidecarPorts: sidecarHostPortCounting(maxKubeletVersion(ctx)) !== "ignored",
  };
  const portNote = scheduledAlready ? undefined : sidecarPortNote(ctx, pod, maxKubeletVersion(ctx));
  if (portNote) notes.push(portNote);
  // RBAC forbade listing the cluster's pods (gather_api.ts): the filters that count the pods bound to each node saw none
  const podsUnlisted = !scheduledAlready && podsNotListed(ctx.bundle);
  if (podsUnlisted) notes.push(PODS_NOT_LISTED_NOTE);
  // bound to a node the bundle's Node list does not hold: what the filters would say of the other nodes is not about
  // this pod, which can run nowhere else (spec.nodeName is not changed once set)
  const nodeMissing = nodeIsMissing(ctx, pod);
  const rows = nodeMissing ? [] : ctx.nodes.map((n) => podNodeRow(ctx, pod, n, uses, wording, preFilter, narrowed, pre));
  const scheduled = !!pod.spec?.nodeName;
  let summary: SchedulingSummary | null = null;
  if (ctx.nodes.length > 0 && !nodeMissing) {
    const total = rows.length;
    const feasible = rows.filter((r) => r.fits).map((r) => r.node);
    // the nodes the scheduler's message does not count (rejectedBy.uncounted) are left out of it here too
    const perNode = preFilter ? [] : rows.filter((r) => !r.fits && !r.rejectedBy!.uncounted).map((r) => r.rejectedBy!.reasons);
    const hist = new Map<string, number>();
    for (const reasons of perNode) for (const r of reasons) hist.set(r, (hist.get(r) ?? 0) + 1);
    const reasons = preFilter
      ? [{ count: total, reason: preFilter.message, kind: classifyReason(preFilter.message).kind }]
      : [...hist].map(([reason, count]) => ({ count, reason, kind: classifyReason(reason).kind })).sort((a, b) =>
        cmp(`${a.count} ${a.reason}`, `${b.count} ${b.reason}`)
      );
    const message = feasible.length > 0
      ? `${feasible.length}/${total} nodes fit by the rules checked here${podsUnlisted ? `, which counted no pod on the nodes (${PODS_UNLISTED_WHY})` : ""}: ${feasible.join(", ")}.`
      : formatSchedulerMessage(total, perNode, preFilter?.message);
    summary = { message, total, feasibleNodes: feasible, preFilter: preFilter?.message ?? null, reasons, wording };
    // the TaintToleration reason of the computed message in a wording only the patch release decides
    const version = maxKubeletVersion(ctx);
    if (feasible.length === 0 && reasons.some((r) => r.kind === "taint") && taintWordingUndetermined(version) && !(last?.parsed && wordingOfMessage(last.parsed).taint)) {
      notes.push(
        `the computed message writes TaintToleration's reason as v1.34.2 and later do ("node(s) had untolerated taint(s)", kubernetes#134740 by #135023); ` +
          `v1.34.0 and v1.34.1 name the taint ("node(s) had untolerated taint {key: value}"). Which one this scheduler writes is undetermined: the newest kubelet's version, ${version}, has no patch number, and the bundle does not hold kube-scheduler's`,
      );
    }
  }
  const report: PodReport = {
    namespace: pod.metadata.namespace ?? "",
    name: pod.metadata.name,
    phase: pod.status?.phase ?? null,
    nodeName: pod.spec?.nodeName ?? null,
    ...(nodeMissing ? { nodeMissing: true as const } : {}),
    schedulerName: pod.spec?.schedulerName ?? "default-scheduler",
    ...(nominatedNode(pod) && !scheduled ? { nominatedNodeName: nominatedNode(pod) } : {}),
    ...(gates.length > 0 ? { schedulingGates: gates } : {}),
    claims: uses,
    nodeSelector: { ...(pod.spec?.nodeSelector ?? {}) },
    requiredNodeAffinity: pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? null,
    tolerations: pod.spec?.tolerations ?? [],
    ...(pre.spread ? { topologySpread: spreadDomainsText(pre.spread) } : {}),
    ...(pre.dra.length > 0 ? { resourceClaims: pre.dra } : {}),
    nodes: rows,
    summary,
    ...(notes.length > 0 && !scheduled ? { notes } : {}),
    lastFailedScheduling: last,
    reconciliation: nodeMissing
      ? { status: "not-applicable", details: [`The pod is bound to node ${pod.spec!.nodeName}, which is not among the bundle's nodes: the scheduler has no verdict left to compare.`] }
      : reconcile(summary, last, scheduled, new Set([
      ...rows.flatMap((r) => r.checks.map((c) => c.rule)),
      // the ReadWriteOncePod check ran (and may have found no holder) when the pod mounts such a claim the bundle holds
      ...((ctx.bundle.objects.csiDrivers ?? []).length > 0 ? ["storageCapacity"] : []),
      ...(pre.inlineDisks ? ["inlineDisks"] : []),
      ...(uses.some((u) => (getClaim(ctx, pod.metadata.namespace ?? "", u.claim)?.spec?.accessModes ?? []).includes("ReadWriteOncePod")) ? ["volumeRestrictions" as const] : []),
    ]), pod.spec?.schedulerName ?? "default-scheduler", ctx.nodes, podsUnlisted),
  };
  if (!withGang || scheduled || (!pod.spec?.workloadRef && !pod.spec?.schedulingGroup?.podGroupName)) return report;
  // GangScheduling: spec.workloadRef (v1.35, a Workload's pod group) or spec.schedulingGroup (v1.36+, a PodGroup); the
  // other pods of the group are checked as this one is, each alone
  const common = {
    pod,
    pods: ctx.pods,
    warnings: ctx.bundle.warnings,
    version: maxKubeletVersion(ctx),
    fits: (p: Pod) => (p === pod ? podFits(report) : podFits(analysePod(ctx, p, false))),
    ...(last ? { lastMessage: last.message } : {}),
  };
  const gang = pod.spec?.schedulingGroup?.podGroupName
    ? analysePodGroup({ ...common, podGroups: ctx.bundle.objects.podGroups ?? [], podsNotListedWarning: gangPodsNotListedWarning(pod.metadata.namespace ?? "") })!
    : analyseGang({ ...common, workloads: ctx.bundle.objects.workloads ?? [] })!;
  return { ...report, gang, reconciliation: podGroupReconciliation(gang, report, last) ?? gangReconciliation(gang, report.reconciliation, last) };
}

/**
 * Whether a pod fits some node by the rules checked here, and if not why, for {@link analyseGang}: a pod held by its
 * scheduling gates never reaches Permit (SchedulingGates' PreEnqueue).
 */
function podFits(r: PodReport): { fits: boolean; why: string } {
  if (r.schedulingGates && r.schedulingGates.length > 0) return { fits: false, why: `SchedulingGated: ${r.schedulingGates.join(", ")}` };
  if (!r.summary) return { fits: false, why: "not decided: no Node objects in the bundle" };
  return r.summary.feasibleNodes.length > 0 ? { fits: true, why: "" } : { fits: false, why: r.summary.message.replace(/\.$/, "") };
}

/**
 * The reconciliation of a pod GangScheduling holds: PreEnqueue keeps it from any scheduling attempt, so no
 * FailedScheduling is expected (v1.35 writes none for a PreEnqueue rejection: scheduling_queue.go runPreEnqueuePlugins
 * only logs); a Permit timeout of the plugin (`rejected due to timeout after waiting … at plugin GangScheduling`,
 * {@link permitTimeout}) is the gang's, not the filters' word. Otherwise the pod's own reconciliation stands.
 */
function gangReconciliation(gang: GangReport, own: Reconciliation, last: FailedSchedulingEvent | null): Reconciliation {
  const timeout = last ? permitTimeout(last.message) : null;
  if (timeout) {
    return {
      status: "not-applicable",
      details: [
        `The scheduler's last attempt found the pod a node, then ${timeout.plugin} held it at Permit until the gang's deadline (${GANG_PERMIT_TIMEOUT} from the first pod that waited; ` +
        `${timeout.waited} were left when this one began to wait) and rejected it: "${last!.message}". ` +
        (gang.stage === "permit" ? `The gang still cannot reach minCount: ${gang.detail}` : `What the bundle shows now: ${gang.detail}`),
      ],
    };
  }
  if (gang.stage === "pre-enqueue" && own.status === "no-event") {
    return {
      status: "not-applicable",
      details: [`No FailedScheduling event is expected: GangScheduling's PreEnqueue keeps the pod from any scheduling attempt ("${gang.message}"), and kube-scheduler writes neither an event nor a PodScheduled condition for that.`],
    };
  }
  return own;
}

/**
 * Whether `pod`'s spec.nodeName names a node the bundle's Node objects do not include. Only decided when the bundle
 * lists nodes (a bundle without any says nothing of which exist).
 */
function nodeIsMissing(ctx: PendingContext, pod: Pod): boolean {
  const name = pod.spec?.nodeName;
  return !!name && ctx.nodes.length > 0 && !ctx.nodeByName.has(name);
}

const PODS_UNLISTED_WHY = `list pods was forbidden`;

/**
 * The note of a pod whose verdicts were computed without the pods bound to the nodes ({@link PODS_NOT_LISTED_WARNING}):
 * the plugins that read them (kube-scheduler NodeResourcesFit, NodePorts, PodTopologySpread, InterPodAffinity) saw
 * empty nodes.
 */
const PODS_NOT_LISTED_NOTE =
  `the pods bound to the nodes were not listed (${PODS_UNLISTED_WHY}): the resources, hostPorts, topologySpread and podAffinity verdicts count none of them, so a node shown to fit may be full, hold the port, or break a spread or anti-affinity rule; RBAC "list pods" cluster-wide decides them`;

/** Whether the bundle's collection could not list the cluster's pods ({@link PODS_NOT_LISTED_WARNING}). */
function podsNotListed(bundle: Bundle): boolean {
  return bundle.warnings.includes(PODS_NOT_LISTED_WARNING);
}

/** A pod's `status.nominatedNodeName`, or undefined. */
function nominatedNode(pod: Pod): string | undefined {
  return (pod.status as { nominatedNodeName?: string } | undefined)?.nominatedNodeName || undefined;
}

/** A pod's priority (`spec.priority`, set from its PriorityClass at admission; 0 without one). */
const priorityOf = (p: Pod): number => (p.spec as { priority?: number } | undefined)?.priority ?? 0;

/** A lower-priority pod terminating on the node a pending pod is nominated to. */
interface TerminatingVictim {
  /** `namespace/name`. */
  pod: string;
  priority: number;
  /** Its DisruptionTarget condition says PreemptionByScheduler: the scheduler evicted it for a preemption. */
  byPreemption: boolean;
  /** What it holds on the node, as NodeResourcesFit counts it ({@link requestsText}). */
  holds: string;
}

/**
 * The lower-priority pods terminating (`metadata.deletionTimestamp`) on the node a preemption nominated `pod` to, the
 * ones the scheduler evicted for it first (DisruptionTarget condition, reason PreemptionByScheduler:
 * default_preemption.go `podTerminatingByPreemption`). While one of those is there, `PodEligibleToPreemptOthers`
 * says `not eligible due to a terminating pod on the nominated node` and the scheduler preempts nothing more; once
 * they are gone their room is the pod's (schedule_one.go: the nominated node is tried first, evaluateNominatedNode).
 * @returns the node and its victims, or undefined when the pod is not nominated or no such pod is on that node.
 */
function terminatingVictims(ctx: PendingContext, pod: Pod): { node: string; victims: TerminatingVictim[] } | undefined {
  const node = nominatedNode(pod);
  if (!node || pod.spec?.nodeName) return undefined;
  const victims = (ctx.podsByNode.get(node) ?? [])
    .filter((p) => p !== pod && p.metadata.deletionTimestamp && priorityOf(p) < priorityOf(pod))
    .map((p): TerminatingVictim => ({
      pod: `${p.metadata.namespace ?? ""}/${p.metadata.name}`,
      priority: priorityOf(p),
      byPreemption: (p.status?.conditions ?? []).some((c) => c.type === "DisruptionTarget" && c.status === "True" && c.reason === "PreemptionByScheduler"),
      holds: requestsText(p),
    }))
    .sort((a, b) => Number(b.byPreemption) - Number(a.byPreemption) || cmp(a.pod, b.pod));
  return victims.length > 0 ? { node, victims } : undefined;
}

/** The words for one victim: `default/victim (priority 0, requests cpu 3000m)`. */
const victimText = (v: TerminatingVictim) => `${v.pod} (priority ${v.priority}, ${v.holds === "no requests" ? "no requests" : `requests ${v.holds}`})`;

/**
 * The finding for a pod nominated to a node where the pods preempted for it still terminate ({@link terminatingVictims}).
 */
function preemptionVictimsTerminating(ctx: PendingContext, p: PodReport, pod: Pod): Finding | undefined {
  const w = terminatingVictims(ctx, pod);
  const preempted = w?.victims.filter((v) => v.byPreemption) ?? [];
  if (!w || preempted.length === 0) return undefined;
  const others = w.victims.filter((v) => !v.byPreemption);
  const [ns, name] = preempted[0]!.pod.split("/") as [string, string];
  return {
    id: "preemption-victims-terminating",
    severity: "info",
    title: `Pod ${p.namespace}/${p.name} is nominated to ${w.node} by a preemption and waits for ${preempted.length} lower-priority pod(s) evicted for it to terminate: ${preempted.map(victimText).join(", ")}`,
    detail: `The scheduler preempted them for this pod (DisruptionTarget condition, reason PreemptionByScheduler) and nominated it to ${w.node}; ` +
      `once they are gone the scheduler tries it there first (schedule_one.go evaluateNominatedNode), and the node's verdict above still counts them, as the scheduler's snapshot does until they are deleted. ` +
      `Meanwhile DefaultPreemption preempts nothing more for it ("not eligible due to a terminating pod on the nominated node"). ` +
      `How long depends on their graceful termination (terminationGracePeriodSeconds, preStop hooks, finalizers).` +
      (others.length > 0
        ? ` Also terminating there, not evicted by the scheduler (no DisruptionTarget PreemptionByScheduler), which it does not wait for (PodDisruptionConditions, on by default since v1.26): ${others.map(victimText).join(", ")}.`
        : ""),
    evidence: [
      `Pod ${p.namespace}/${p.name}: status.nominatedNodeName ${w.node}, priority ${priorityOf(pod)}`,
      ...w.victims.map((v) => `Pod ${v.pod} on ${w.node}: deletionTimestamp set${v.byPreemption ? ", DisruptionTarget PreemptionByScheduler" : ""}`),
    ],
    suggestion: `Nothing to do if they finish terminating; if one hangs in Terminating: kubectl get pod -n ${shellWord(ns)} ${shellWord(name)} -o yaml (finalizers; the kubelet on ${w.node}).`,
  };
}

/**
 * Whether evicting pods from the node could lift its rejection: the filter's status is Unschedulable, not
 * UnschedulableAndUnresolvable, which DefaultPreemption skips (preemption's nodesWherePreemptionMightHelp; the
 * FailedScheduling message then says `Preemption is not helpful for scheduling`). NodeResourcesFit and NodePorts
 * reject a node for what pods hold; InterPodAffinity (plugins/interpodaffinity/filtering.go `Filter`) returns
 * Unschedulable for the anti-affinity reasons (satisfyPodAntiAffinity, satisfyExistingPodsAntiAffinity: a pod to
 * evict), but UnschedulableAndUnresolvable for `node(s) didn't match pod affinity rules` (satisfyPodAffinity: a pod
 * missing, which no eviction brings).
 */
function resolvableByPreemption(row: PodNodeRow): boolean {
  const by = row.rejectedBy;
  if (!by) return false;
  if (by.plugin === "NodeResourcesFit" || by.plugin === "NodePorts") return true;
  return by.plugin === "InterPodAffinity" && !by.reasons.includes(AFFINITY_REASON) &&
    by.reasons.some((r) => r === ANTI_AFFINITY_REASON || r === EXISTING_ANTI_AFFINITY_REASON);
}

/**
 * A pod that may not preempt (`spec.preemptionPolicy: Never`, or DefaultPreemption's PostFilter saying `not eligible
 * due to preemptionPolicy=Never`, plugins/defaultpreemption/default_preemption.go PodEligibleToPreemptOthers) while
 * some node rejects it for room ({@link resolvableByPreemption}: what evicting lower-priority pods could free): the
 * scheduler will not make that room, the pod waits until it is freed. Nodes rejected for what no eviction brings
 * (required pod affinity, taints, node affinity, …) do not count.
 */
function preemptionNever(ctx: PendingContext, p: PodReport): Finding | undefined {
  const pod = ctx.pods.find((x) => x.metadata.name === p.name && (x.metadata.namespace ?? "") === p.namespace);
  const policy = (pod?.spec as { preemptionPolicy?: string } | undefined)?.preemptionPolicy;
  const said = p.lastFailedScheduling && /not eligible due to preemptionPolicy=Never/.test(p.lastFailedScheduling.message);
  if (policy !== "Never" && !said) return undefined;
  const room = p.nodes.filter(resolvableByPreemption).map((n) => n.node);
  if (room.length === 0) return undefined;
  return {
    id: "preemption-never",
    severity: "info",
    title: `Pod ${p.namespace}/${p.name} does not preempt (preemptionPolicy: Never)`,
    detail: `${room.length} node(s) reject it for room that evicting lower-priority pods could free (${room.join(", ")}), but the scheduler evicts none for it: it stays Pending until that room is freed.`,
    evidence: [
      ...(policy === "Never" ? [`Pod ${p.namespace}/${p.name} spec.preemptionPolicy: Never`] : []),
      ...(said ? [`Event FailedScheduling: ${p.lastFailedScheduling!.message}`] : []),
    ],
    suggestion: "Free room on a node (scale the node pool, or remove pods), or use a PriorityClass with preemptionPolicy PreemptLowerPriority.",
  };
}

/**
 * The finding of a pod GangScheduling holds ({@link analyseGang}): an error when it holds it (PreEnqueue, Permit), a
 * warning when the bundle lacks what decides it; none when it lets the pod through.
 */
function gangFinding(p: PodReport): Finding | undefined {
  const g = p.gang;
  if (g?.via === "schedulingGroup") return podGroupFinding(p);
  if (!g || g.stage === "none") return undefined;
  const ref = `Workload ${p.namespace}/${g.workload}, pod group ${g.podGroup}${g.podGroupReplicaKey ? `, replica key ${g.podGroupReplicaKey}` : ""}`;
  const get = `kubectl get workloads.scheduling.k8s.io -n ${shellWord(p.namespace)} ${shellWord(g.workload ?? "")} -o yaml`;
  const title = g.stage === "undecided"
    ? `Whether GangScheduling holds pod ${p.namespace}/${p.name} is undecided (${ref})`
    : g.objectState === "not-found"
    ? `Workload ${p.namespace}/${g.workload} does not exist: GangScheduling holds pod ${p.namespace}/${p.name} before scheduling`
    : g.policy === null
    ? `Workload ${p.namespace}/${g.workload} has no pod group ${g.podGroup}: GangScheduling holds pod ${p.namespace}/${p.name} before scheduling`
    : g.stage === "pre-enqueue"
    ? `The gang of pod ${p.namespace}/${p.name} has ${g.members.length} of its minCount ${g.minCount} pods: GangScheduling holds them before scheduling`
    : `The gang of pod ${p.namespace}/${p.name} cannot place minCount ${g.minCount} pods: those that fit wait at Permit and are rejected after ${GANG_PERMIT_TIMEOUT}`;
  const suggestion = g.stage === "undecided"
    ? `${get}; and check kube-scheduler's --feature-gates (GenericWorkload, GangScheduling).`
    : g.objectState === "not-found"
    ? `Create Workload ${g.workload} in namespace ${p.namespace} with pod group ${g.podGroup} (${get} to confirm it is missing), or recreate the pod without spec.workloadRef (it is immutable).`
    : g.policy === null
    ? `Recreate Workload ${g.workload} with a pod group ${g.podGroup} (its podGroups are immutable), or recreate the pod with a workloadRef naming an existing group.`
    : g.stage === "pre-enqueue"
    ? `Create the missing ${(g.minCount ?? 0) - g.members.length} pod(s) of the group (its controller's replicas or parallelism), or lower minCount (immutable: recreate the Workload).`
    : `Make room for the pods that do not fit (see their reasons), or lower minCount (immutable: recreate the Workload).`;
  return {
    id: "gang-scheduling",
    severity: g.stage === "undecided" ? "warning" : "error",
    title,
    detail: [g.detail, ...g.notes.map((n) => `${n.charAt(0).toUpperCase()}${n.slice(1)}.`)].join(" "),
    evidence: [
      `Pod ${p.namespace}/${p.name}: spec.workloadRef ${g.workload}/${g.podGroup}${g.podGroupReplicaKey ? `/${g.podGroupReplicaKey}` : ""}`,
      ...(g.minCount !== null ? [`${ref}: gang minCount ${g.minCount}`] : []),
      ...g.members.map((m) => `Pod ${m.pod}: ${m.nodeName ? `bound to ${m.nodeName}` : m.fits ? "fits a node" : m.fits === false ? `does not fit (${m.why})` : "not checked"}`),
    ],
    suggestion,
  };
}

/**
 * DynamicResources' PreFilter when a claim's request names a DeviceClass that does not exist
 * (plugins/dynamicresources/dynamicresources.go: `request %s: device class %s does not exist`): the pod waits in the
 * unschedulable queue until that DeviceClass is created. The bundle holds no DeviceClasses: the event says it.
 */
function deviceClassMissing(p: PodReport): Finding | undefined {
  const msg = p.lastFailedScheduling?.message ?? "";
  const m = /request (\S+): device class (\S+) does not exist/.exec(msg);
  if (!m) return undefined;
  return {
    id: "device-class-missing",
    severity: "error",
    title: `DeviceClass ${m[2]} does not exist (request ${m[1]} of a ResourceClaim of pod ${p.namespace}/${p.name})`,
    detail: `The scheduler's DynamicResources plugin rejects the pod on every node until a DeviceClass of that name exists; it retries when one is created.`,
    evidence: [`Event FailedScheduling: ${msg}`],
    suggestion: `Install the DRA driver that provides DeviceClass ${m[2]}, or fix deviceClassName in the claim (or its template); kubectl get deviceclasses lists those that exist.`,
  };
}

/**
 * A ResourceClaim the pod names (spec.resourceClaims[].resourceClaimName, or the name its template's claim got in
 * status.resourceClaimStatuses) that the bundle does not hold: DynamicResources holds the pod on every node until it
 * exists (PreEnqueue, then PreFilter: dynamicresources.go foreachPodResourceClaim). When reading it was forbidden the
 * claim's state is unknown, and the finding says that instead.
 */
function resourceClaimsMissing(ctx: PendingContext, p: PodReport): Finding[] {
  return (p.resourceClaims ?? []).filter((c) => c.state === "not-found").map((c): Finding => {
    const name = c.claimName ?? "";
    const get = `kubectl get resourceclaim -n ${shellWord(p.namespace)} ${shellWord(name)}`;
    const forbidden = ctx.bundle.warnings.find((w) => w.startsWith("get resourceclaims is forbidden") && w.endsWith(`ResourceClaim ${name} is unknown`));
    if (forbidden) {
      return {
        id: "resource-claim-unknown",
        severity: "warning",
        title: `ResourceClaim ${p.namespace}/${name} (claim ${c.podClaimName} of pod ${p.namespace}/${p.name}) could not be read`,
        detail: `Whether it exists decides whether DynamicResources holds the pod on every node (a missing claim keeps the scheduler from trying the pod at all); the bundle cannot tell.`,
        evidence: [forbidden],
        suggestion: `${get}, or grant "get" on resourceclaims (resource.k8s.io) and run again.`,
      };
    }
    return {
      id: "resource-claim-missing",
      severity: "error",
      title: `ResourceClaim ${p.namespace}/${name} does not exist (claim ${c.podClaimName} of pod ${p.namespace}/${p.name})`,
      detail: `DynamicResources holds the pod until it exists: its PreEnqueue keeps the scheduler from trying the pod, and its PreFilter rejects every node if the claim disappears during an attempt. ` +
        (c.template ? `The pod's status names it as the claim made from template ${c.template}: the ResourceClaim controller of kube-controller-manager created it, and it was deleted since.` : `The pod names it in spec.resourceClaims[].resourceClaimName: nothing creates it but you.`),
      evidence: [`Pod ${p.namespace}/${p.name}: resource claim ${c.podClaimName} → ResourceClaim ${name}`],
      suggestion: c.template
        ? `${get} to confirm it is gone (and not just left out of the bundle); a pod whose generated claim was deleted does not get a new one: recreate the pod.`
        : `${get} to confirm it is gone (and not just left out of the bundle); create it, or fix resourceClaimName in the pod (immutable: recreate the pod).`,
    };
  });
}

function claimFindings(ctx: PendingContext, claims: ClaimReport[]): Finding[] {
  const out: Finding[] = [];
  for (const c of claims) {
    const ref = `PersistentVolumeClaim ${c.namespace}/${c.name}`;
    const ev = c.state.event ? [`Event ${c.state.event.reason}: ${c.state.event.message}`] : [];
    switch (c.state.reason) {
      case "NotFound": {
        // a generic ephemeral volume's claim (`<pod>-<volume>`) is created by kube-controller-manager's ephemeral
        // volume controller (pkg/controller/volume/ephemeral), not by the user
        const owner = ctx.pods.find((p) => (p.metadata.namespace ?? "") === c.namespace &&
          (p.spec?.volumes ?? []).some((v) => v["ephemeral"] !== undefined && v["ephemeral"] !== null && `${p.metadata.name}-${v.name}` === c.name));
        out.push(owner
          ? {
            id: "claim-missing",
            severity: "error",
            title: `${ref} does not exist yet: the ephemeral volume controller has not created it`,
            detail: `${c.state.message} Pod ${c.namespace}/${owner.metadata.name} asks for it with a generic ephemeral volume; kube-controller-manager's ephemeral volume controller creates it from the volume's template.`,
            evidence: [],
            suggestion: `Check kube-controller-manager (is it running; do its logs or the pod's events say why the claim was not created, e.g. a quota or an invalid template?).`,
          }
          : { id: "claim-missing", severity: "error", title: `${ref} does not exist`, detail: c.state.message, evidence: [], suggestion: `Create the claim, or fix claimName in the pod.` });
        break;
      }
      case "VolumeMissing":
        out.push({ id: "volume-missing", severity: "error", title: `${ref} is bound to PersistentVolume ${c.volumeName}, which is not in the bundle`, detail: c.state.message, evidence: ev });
        break;
      case "NoStorageClass":
        out.push({
          id: "no-storage-class",
          severity: "error",
          title: `${ref} has no StorageClass and the cluster has no default one`,
          detail: c.state.message,
          evidence: [...ev, ...c.staticCandidates.slice(0, 5).map((s) => `PersistentVolume ${s.volume}: ${s.mismatches.map((m) => `${m.field} ${m.got} (wants ${m.want})`).join(", ") || "matches"}`)],
          suggestion: `Set storageClassName, mark a StorageClass as default (storageclass.kubernetes.io/is-default-class: "true"), or create a matching PersistentVolume.`,
        });
        break;
      case "StorageClassNotFound":
        out.push({
          id: "storage-class-not-found",
          severity: "error",
          title: `${ref} names StorageClass ${JSON.stringify(c.storageClassName)}, which does not exist`,
          detail: c.state.message,
          evidence: [...ev, `Existing StorageClasses: ${[...ctx.classes.keys()].sort(cmp).join(", ") || "none in the bundle"}`],
          suggestion: `Create the StorageClass or fix storageClassName (it is immutable: recreate the claim).`,
        });
        break;
      case "ProvisioningFailed":
        out.push({
          id: "provisioning-failed",
          severity: "error",
          title: `The provisioner of ${ref} fails`,
          detail: c.state.message,
          evidence: ev,
          suggestion: `Read the provisioner's logs (${c.storageClass?.provisioner ?? "?"}); the event above is its last word.`,
        });
        break;
      case "NodeNameBypassesScheduler":
        out.push({
          id: "node-name-bypasses-scheduler",
          severity: "error",
          title: `${ref} is never ${c.storageClass?.provisioner === NO_PROVISIONER ? "bound" : "provisioned"}: it waits for its first consumer, and the pods that use it bypass the scheduler with spec.nodeName`,
          detail: c.state.message,
          evidence: [
            ...ev,
            `StorageClass ${c.storageClass?.name ?? "?"}: volumeBindingMode WaitForFirstConsumer; no ${ANN_SELECTED_NODE} annotation on the claim`,
            ...podsUsingClaim(ctx, c.namespace, c.name).filter((p) => p.spec?.nodeName).map((p) => `Pod ${c.namespace}/${p.metadata.name}: spec.nodeName ${p.spec!.nodeName}`),
          ],
          suggestion: `Recreate the pod without spec.nodeName, placed by nodeSelector (kubernetes.io/hostname: NODE) or nodeAffinity; or give the claim a StorageClass with volumeBindingMode Immediate (storageClassName is immutable: recreate the claim).`,
        });
        break;
      case "WaitForFirstConsumer":
        out.push({
          id: "wait-for-first-consumer",
          severity: "info",
          title: `${ref} waits for its first consumer`,
          detail: c.state.message,
          evidence: ev,
        });
        break;
      case "NoMatchingVolume":
        out.push({
          id: "no-matching-volume",
          severity: "error",
          title: `No PersistentVolume can bind ${ref}`,
          detail: c.state.message +
            (c.staticCandidates.length === 0 ? " There is no unbound PersistentVolume at all." : ""),
          evidence: c.staticCandidates.slice(0, 5).map((s) =>
            `PersistentVolume ${s.volume}: ${s.mismatches.map((m) => `${m.field} is ${m.got}, claim wants ${m.want}`).join("; ") || "matches"}`
          ),
          suggestion: `Create a PersistentVolume that satisfies the claim, or change the claim to match an existing one.`,
        });
        break;
    }
    // VolumeAttributesClass (beta v1.31, GA v1.34): a claim that names one that does not exist is not provisioned
    const vac = getClaim(ctx, c.namespace, c.name)?.spec?.volumeAttributesClassName;
    if (vac && !(ctx.bundle.objects.volumeAttributesClasses ?? []).some((v) => v.metadata.name === vac)) {
      const looked = ctx.bundle.warnings.find((w) => w.startsWith(`volumeattributesclass "${vac}" was not found`));
      out.push({
        id: "volume-attributes-class-missing",
        severity: looked && c.state.status !== "Bound" ? "error" : "info",
        title: looked ? `${ref} names VolumeAttributesClass ${JSON.stringify(vac)}, which was not found` : `${ref} names VolumeAttributesClass ${JSON.stringify(vac)}, which is not in the bundle`,
        detail: looked
          ? `${looked}. While it is missing the external provisioner does not create the volume (and a bound volume is not modified): the claim waits.`
          : `Whether it exists decides whether the external provisioner creates (or modifies) the volume; the bundle does not hold VolumeAttributesClasses.`,
        evidence: [`${ref}: spec.volumeAttributesClassName ${JSON.stringify(vac)}`],
        suggestion: `kubectl get volumeattributesclass ${shellWord(vac)}; create it, or fix spec.volumeAttributesClassName.`,
      });
    }
    if (c.volume?.found && !c.volume.nodeAffinity) {
      out.push({
        id: "no-node-affinity",
        severity: "info",
        title: `PersistentVolume ${c.volume.name} has no node affinity`,
        detail: `It does not restrict nodes (no spec.nodeAffinity.required), so its topology is not why a pod using claim ${c.name} is Pending.`,
        evidence: [`PersistentVolume ${c.volume.name}: source ${c.volume.source ?? "unknown"}`],
      });
    }
  }
  return out;
}

function nodesMissingFinding(ctx: PendingContext, pods: PodReport[]): Finding {
  // RBAC / list failures name the resource in the plural ("nodes"); per-node collection warnings say "node X".
  const warnings = ctx.bundle.warnings.filter((w) => /\bnodes\b/i.test(w));
  const events = pods.flatMap((p) => (p.lastFailedScheduling ? [`Pod ${p.namespace}/${p.name} last FailedScheduling: ${p.lastFailedScheduling.message}`] : []));
  return {
    id: "nodes-missing",
    severity: "warning",
    title: `The bundle has no Node objects: no per-node verdict`,
    detail: `Matching volume node affinity, taints and the pod's node rules against nodes needs "list nodes" (verb list, ` +
      `resource nodes, cluster scope). Without it this report shows the claims' state and reasons, each PersistentVolume's ` +
      `node affinity terms, and the scheduler's own last word` + (events.length ? "" : " (none in the bundle)") + `.`,
    evidence: [...warnings, ...events],
    suggestion: `Grant "list" on "nodes" (a ClusterRole; e.g. kubectl create clusterrole netpath-nodes --verb=list,get --resource=nodes) and run again.`,
  };
}

/**
 * The finding of a pod whose spec.nodeName names a node the bundle's Node objects do not include
 * ({@link PodReport.nodeMissing}). No kubelet will run it, and no scheduler places it elsewhere (spec.nodeName is not
 * changed once set). Its PodScheduled condition tells how it got there: True when a Binding set spec.nodeName
 * (pkg/registry/core/pod/storage/storage.go, the binding subresource sets PodScheduled True with the node), so the
 * node was deleted since; without it, its creator set spec.nodeName and no scheduler handled it. kube-controller-manager's
 * pod garbage collector deletes pods bound to nodes that do not exist (pkg/controller/podgc/gc_controller.go
 * `gcOrphaned`, once the node is still missing after its 40 s quarantine, checked every 20 s).
 */
function podNodeMissingFinding(ctx: PendingContext, p: PodReport, pod: Pod): Finding {
  const node = p.nodeName as string;
  const names = ctx.nodes.map((n) => n.metadata.name);
  const listed = names.slice(0, 5).join(", ") + (names.length > 5 ? ` and ${names.length - 5} more` : "");
  const bound = (pod.status?.conditions ?? []).some((c) => c.type === "PodScheduled" && c.status === "True");
  const owner = (pod.metadata.ownerReferences ?? []).find((o) => o.controller);
  return {
    id: "pod-node-missing",
    severity: "error",
    title: `Pod ${p.namespace}/${p.name} is bound to node ${node}, which does not exist`,
    detail: `spec.nodeName is ${node}, but the bundle's ${names.length} node(s) (${listed}) do not include it: no kubelet will start the pod, ` +
      `and no scheduler places it elsewhere (spec.nodeName is not changed once set). ` +
      (bound
        ? `Its PodScheduled condition is True: a scheduler bound it to ${node}, which has been deleted since. `
        : `It has no PodScheduled condition True: spec.nodeName was set when it was created, so no scheduler handled it. `) +
      `kube-controller-manager's pod garbage collector deletes pods bound to nodes that do not exist (podgc gcOrphaned, once the node is still missing after a 40 s quarantine): ` +
      `a pod still listed means ${node} went missing moments before the collection, or the pod garbage collector is not running (kube-controller-manager --controllers).`,
    evidence: [
      `Pod ${p.namespace}/${p.name}: spec.nodeName ${node}, phase ${p.phase ?? "unknown"}${bound ? ", PodScheduled True" : ""}`,
      `Nodes in the bundle: ${listed}`,
    ],
    suggestion: `Check the name (kubectl get node ${shellWord(node)}). If that node is gone for good, delete the pod (kubectl delete pod -n ${shellWord(p.namespace)} ${shellWord(p.name)})` +
      (owner ? `; its ${owner.kind} ${owner.name} creates a replacement, which the scheduler places` : `, and recreate it placed with nodeSelector or nodeAffinity rather than spec.nodeName`) + ".",
  };
}

const SEVERITY_ORDER = { error: 0, warning: 1, info: 2 } as const;

/** The pod's claims that are never provisioned because their consumers set spec.nodeName (claim.ts `NodeNameBypassesScheduler`). */
function bypassedClaims(claims: readonly ClaimReport[], p: PodReport): ClaimReport[] {
  if (!p.nodeName) return [];
  return claims.filter((c) => c.namespace === p.namespace && c.state.reason === "NodeNameBypassesScheduler" && p.claims.some((u) => u.claim === c.name));
}

function composeAnswer(q: PendingQuestion, claims: ClaimReport[], pods: PodReport[], findings: Finding[], nodesListed: boolean): string {
  const rootCause = findings.find((f) => f.severity === "error");
  const cause = rootCause ? ` Root cause: ${rootCause.title}.` : "";
  const noNodes = nodesListed ? "" : " No Node objects in the bundle, so no per-node verdict.";
  const podLine = (p: PodReport): string => {
    if (p.nodeName && p.nodeMissing) {
      return `pod ${p.namespace}/${p.name} is bound to node ${p.nodeName} (spec.nodeName), which is not among the bundle's nodes: no kubelet will run it, and no scheduler will place it elsewhere`;
    }
    const stranded = bypassedClaims(claims, p);
    if (p.nodeName && stranded.length > 0) {
      return `pod ${p.namespace}/${p.name} names node ${p.nodeName} in spec.nodeName, so the scheduler never sees it and its WaitForFirstConsumer claim(s) ${stranded.map((c) => c.name).join(", ")} are never provisioned: ` +
        `place it with nodeSelector or nodeAffinity instead, or use a StorageClass with volumeBindingMode Immediate`;
    }
    if (p.nodeName) return `pod ${p.namespace}/${p.name} is scheduled on ${p.nodeName}`;
    if (p.schedulingGates && p.schedulingGates.length > 0) {
      return `pod ${p.namespace}/${p.name} is SchedulingGated: the scheduler does not try to place it until every spec.schedulingGates entry is removed (${p.schedulingGates.join(", ")}), by whoever added it`;
    }
    // GangScheduling holds the pod before the filters (PreEnqueue) or after them (v1.35 Permit, v1.36+ the pod group cycle)
    if (p.gang && (p.gang.stage === "pre-enqueue" || p.gang.stage === "permit" || p.gang.stage === "pod-group-cycle")) {
      const head = p.gang.stage === "pre-enqueue"
        ? `pod ${p.namespace}/${p.name} is held back by kube-scheduler's GangScheduling plugin (PreEnqueue): `
        : p.gang.stage === "pod-group-cycle"
        ? `pod ${p.namespace}/${p.name} is rejected with its gang (GangScheduling, pod group scheduling cycle): `
        : `pod ${p.namespace}/${p.name} waits for its gang (GangScheduling, Permit): `;
      return head + p.gang.detail;
    }
    if (p.schedulerName !== "default-scheduler" && !p.lastFailedScheduling) {
      return `pod ${p.namespace}/${p.name} asks for scheduler "${p.schedulerName}" (spec.schedulerName) and has no FailedScheduling event or PodScheduled condition: no scheduler of that name has looked at it — is one running?`;
    }
    // the scheduler chose a node for a WaitForFirstConsumer claim and waits (VolumeBinding PreBind) for the volume
    const provisioning = claims.find((c) =>
      c.namespace === p.namespace && p.claims.some((u) => u.claim === c.name) && c.selectedNode !== null &&
      (c.state.reason === "Provisioning" || c.state.reason === "ProvisioningFailed")
    );
    if (provisioning) {
      return `pod ${p.namespace}/${p.name} waits for claim ${provisioning.name}: the scheduler chose node ${provisioning.selectedNode} ` +
        `(annotation volume.kubernetes.io/selected-node) and binds the pod once the volume exists; ` +
        (provisioning.state.reason === "ProvisioningFailed"
          ? `provisioner ${JSON.stringify(provisioning.storageClass?.provisioner ?? "?")} fails: ${provisioning.state.event?.message ?? ""}`
          : `provisioner ${JSON.stringify(provisioning.storageClass?.provisioner ?? "?")} is creating it` +
            (provisioning.state.event ? ` (${provisioning.state.event.reason}: ${provisioning.state.event.message})` : ", and has reported nothing (is it running?)")) +
        "." +
        // the scheduler's own word on it: a PreBind failure of VolumeBinding (a provisioning that failed or timed out)
        (p.lastFailedScheduling && /^running (?:Reserve|Permit|PreBind|Bind) plugin "/.test(p.lastFailedScheduling.message)
          ? ` The scheduler's last attempt failed while binding: ${p.lastFailedScheduling.message}.`
          : "");
    }
    // DRA: claims not created, missing or not allocated hold the pod where the node filters do not say why
    // a claim the PreFilter message already names as missing is not said twice
    const draText = draWaitText((p.resourceClaims ?? []).filter((c) =>
      !(c.state === "not-found" && p.summary?.preFilter && missingResourceClaimName(p.summary.preFilter) === c.claimName)
    ));
    if (draText && (!p.summary || p.summary.feasibleNodes.length > 0)) {
      return `pod ${p.namespace}/${p.name} waits for Dynamic Resource Allocation: ${draText}` +
        (p.summary ? ` (by the other rules checked here ${p.summary.feasibleNodes.length}/${p.summary.total} nodes fit)` : "") + ".";
    }
    // a preemption already made room for it on its nominated node: it waits for the victims to go
    const waiting = findings.find((f) => f.id === "preemption-victims-terminating" && f.evidence[0]?.startsWith(`Pod ${p.namespace}/${p.name}: status.nominatedNodeName `));
    if (waiting && p.nominatedNodeName) {
      return `${waiting.title.charAt(0).toLowerCase()}${waiting.title.slice(1)}; once they are gone the scheduler tries it there first` +
        (p.summary ? ` (until then: ${p.summary.message.replace(/\.$/, "")})` : "") + ".";
    }
    const gangText = p.gang?.stage === "undecided" ? ` Whether GangScheduling holds it: ${p.gang.detail}` : "";
    if (p.summary) return `pod ${p.namespace}/${p.name} cannot be scheduled: ${p.summary.message}` + (draText ? ` Also: ${draText}.` : "") + gangText;
    return `pod ${p.namespace}/${p.name} is not scheduled` + (p.lastFailedScheduling ? `; the scheduler's last word: ${p.lastFailedScheduling.message}` : "");
  };
  if (q.kind === "pod") {
    const p = pods[0] as PodReport;
    const line = podLine(p);
    const bypassed = bypassedClaims(claims, p).length > 0 && !p.nodeMissing;
    const end = p.nodeMissing ? "." : p.nodeName ? (bypassed ? "." : "; it is not waiting for the scheduler.") : "";
    return line.charAt(0).toUpperCase() + line.slice(1) + end + (p.nodeName ? "" : cause) + noNodes;
  }
  const c = claims[0] as ClaimReport;
  const head = `PersistentVolumeClaim ${c.namespace}/${c.name}: ${c.state.message}`;
  // a pod bound to a node that does not exist is stuck as much as one the scheduler cannot place
  const pending = pods.filter((p) => !p.nodeName || p.nodeMissing);
  if (c.state.status !== "Bound") {
    const lines = pending.map(podLine).join("; ");
    return head + (lines ? ` ${lines.charAt(0).toUpperCase()}${lines.slice(1)}${lines.endsWith(".") ? "" : "."}` : "") + cause + noNodes;
  }
  if (pending.length === 0) {
    return head + (pods.length ? ` Nothing is pending: ${pods.map(podLine).join("; ")}.` : " No pod uses it.") + noNodes;
  }
  const lines = pending.map(podLine).join("; ");
  return head + ` But ${lines}${lines.endsWith(".") ? "" : "."}` + cause + noNodes;
}

/**
 * Explains why a PersistentVolumeClaim or a pod is Pending, per node and per rule.
 * @param bundle the objects (PVCs, PVs, StorageClasses, Pods, Nodes, Events); Node objects may be missing (then a
 *   `nodes-missing` finding says what is lost).
 * @param q the claim or pod asked about.
 * @returns a {@link PendingReport}: plain JSON, `kind: PendingReport`, `apiVersion: netpath.kubectl.io/v1alpha1`.
 * @throws {NotFoundError} when the claim or pod is not in the bundle; the message names the namespace searched and,
 *   when an object of that name exists elsewhere, `; it exists in namespace "x": use -n x`.
 * @example
 * import { explainPending } from "./explain.ts";
 * const report = explainPending(bundle, { kind: "pvc", namespace: "default", name: "md" });
 * report.pods[0]?.summary?.message; // "0/3 nodes are available: 3 node(s) had volume node affinity conflict."
 */
export function explainPending(bundle: Bundle, q: PendingQuestion): PendingReport {
  const ctx = buildContext(bundle);
  let pods: Pod[];
  const claimOrder: string[] = [];
  if (q.kind === "pvc") {
    if (!getClaim(ctx, q.namespace, q.name)) {
      const elsewhere = [...ctx.claims.values()]
        .filter((c) => c.metadata.name === q.name).map((c) => c.metadata.namespace ?? "").sort(cmp);
      throw new NotFoundError("persistentvolumeclaim", q.name, q.namespace, elsewhere);
    }
    pods = podsUsingClaim(ctx, q.namespace, q.name);
    claimOrder.push(q.name);
  } else {
    const pod = ctx.pods.find((p) => p.metadata.name === q.name && (p.metadata.namespace ?? "") === q.namespace);
    if (!pod) {
      const elsewhere = ctx.pods.filter((p) => p.metadata.name === q.name).map((p) => p.metadata.namespace ?? "").sort(cmp);
      throw new NotFoundError("pod", q.name, q.namespace, elsewhere);
    }
    pods = [pod];
  }
  for (const p of pods) for (const c of podClaimNames(p)) if (!claimOrder.includes(c.claim)) claimOrder.push(c.claim);
  const claims = claimOrder.map((name) => analyseClaim(ctx, q.namespace, name, podsUsingClaim(ctx, q.namespace, name)));
  const podReports = pods.map((p) => analysePod(ctx, p));
  const nodesListed = ctx.nodes.length > 0;
  const findings: Finding[] = [];
  if (!nodesListed) findings.push(nodesMissingFinding(ctx, podReports));
  const unlistedFor = podReports.filter((p) => !p.nodeName);
  if (unlistedFor.length > 0 && podsNotListed(bundle)) {
    findings.push({
      id: "pods-not-listed",
      severity: "warning",
      title: `The pods bound to the nodes were not listed: resources, host ports, topology spread and pod affinity are not decided`,
      detail: `kube-scheduler's NodeResourcesFit, NodePorts, PodTopologySpread and InterPodAffinity filters count the pods already on each node; ` +
        `the collection could not list them, so every node looks empty to those checks here and may be shown to fit when it does not.`,
      evidence: [PODS_NOT_LISTED_WARNING],
      suggestion: `Grant "list" on "pods" cluster-wide (e.g. kubectl create clusterrole netpath-pods --verb=list --resource=pods) and run again.`,
    });
  }
  findings.push(...claimFindings(ctx, claims));
  findings.push(...pendingHints({ ctx, claims, pods: podReports }));
  for (const p of podReports) {
    const stranded = bypassedClaims(claims, p);
    if (p.nodeName && p.nodeMissing) {
      findings.push(podNodeMissingFinding(ctx, p, pods[podReports.indexOf(p)]!));
    }
    if (p.nodeName && stranded.length > 0 && !p.nodeMissing) {
      // spec.nodeName set by its creator: the scheduler never saw the pod, and its WaitForFirstConsumer claims, which
      // only the scheduler gives a node (volume.kubernetes.io/selected-node), are never provisioned
      findings.push({
        id: "pod-scheduled",
        severity: "error",
        title: `Pod ${p.namespace}/${p.name} names node ${p.nodeName} in spec.nodeName, so its WaitForFirstConsumer claim(s) ${stranded.map((c) => c.name).join(", ")} are never provisioned`,
        detail: `spec.nodeName is set (phase ${p.phase ?? "unknown"}) and no scheduler placed it: the kubelet on ${p.nodeName} waits for the volume(s), which are provisioned only for a node the scheduler picks ` +
          `(${ANN_SELECTED_NODE}, written by VolumeBinding while binding a pod). It stays ${p.phase ?? "Pending"} for ever.`,
        evidence: stranded.map((c) => `PersistentVolumeClaim ${c.namespace}/${c.name}: ${c.state.message.split(". ")[0]}.`),
        suggestion: `Recreate the pod without spec.nodeName, placed by nodeSelector (kubernetes.io/hostname: ${shellWord(p.nodeName)}) or nodeAffinity; or use a StorageClass with volumeBindingMode Immediate.`,
      });
    } else if (p.nodeName && !p.nodeMissing) {
      findings.push({
        id: "pod-scheduled",
        severity: "info",
        title: `Pod ${p.namespace}/${p.name} is scheduled on ${p.nodeName}`,
        detail: `spec.nodeName is set (phase ${p.phase ?? "unknown"}): the scheduler is done with it; a pod still Pending now waits for the kubelet (volume attach/mount, image pull).`,
        evidence: [],
      });
    } else if (!p.nodeName) {
      const never = preemptionNever(ctx, p);
      if (never) findings.push(never);
      const cls = deviceClassMissing(p);
      if (cls) findings.push(cls);
      findings.push(...resourceClaimsMissing(ctx, p));
      const waiting = preemptionVictimsTerminating(ctx, p, pods[podReports.indexOf(p)]!);
      if (waiting) findings.push(waiting);
      const gang = gangFinding(p);
      if (gang) findings.push(gang);
    }
    if (!p.nodeName && p.reconciliation.status === "disagree") {
      findings.push({
        id: "event-disagrees",
        severity: "warning",
        title: `The computation disagrees with the last FailedScheduling event of pod ${p.namespace}/${p.name}`,
        detail: p.reconciliation.details.join(" "),
        evidence: p.lastFailedScheduling ? [`Event FailedScheduling: ${p.lastFailedScheduling.message}`] : [],
      });
    }
  }
  const sorted = findings.map((f, i) => ({ f, i })).sort((a, b) => SEVERITY_ORDER[a.f.severity] - SEVERITY_ORDER[b.f.severity] || a.i - b.i).map((x) => x.f);
  return {
    kind: PENDING_REPORT_KIND,
    apiVersion: PENDING_REPORT_API_VERSION,
    question: { ...q },
    answer: composeAnswer(q, claims, podReports, sorted, nodesListed),
    nodesListed,
    nodes: ctx.nodeStates,
    claims,
    pods: podReports,
    findings: sorted,
    ...(bundle.warnings.length > 0 ? { warnings: [...bundle.warnings] } : {}),
  };
}
