/**
 * The PreFilter stage of kube-scheduler for a pending pod (framework.go `RunPreFilterPlugins`, the default profile's
 * order of pkg/scheduler/apis/config/v1/default_plugins.go): the status that rejects every node, or the nodes the
 * plugins' PreFilterResults keep.
 * - NodeAffinity (plugins/nodeaffinity/node_affinity.go `PreFilter`): `matchFields metadata.name` terms that leave no
 *   node (`pod affinity terms conflict`), and from v1.24 (kubernetes#108606) the nodes they name;
 * - VolumeRestrictions (volume_restrictions.go `readWriteOncePodPVCsForPod`, v1.27+): a claim not found;
 * - VolumeBinding (plugins/volumebinding/volume_binding.go `podHasPVCs`): missing, Lost or deleted claims, unbound
 *   Immediate claims, and (v1.27 until v1.32.0 / v1.31.3 / v1.30.7 / v1.29.11, kubernetes#109877 and #125398) the
 *   nodes a bound local PersistentVolume names (binder.go `GetEligibleNodes`), decided by the scheduler's release as
 *   the bundle tells it (the newest kubelet), with a note that says so;
 * - VolumeZone (volume_zone.go `getPVbyPod`, a PreFilter since v1.27, kubernetes#114149): a bound claim's
 *   PersistentVolume not found;
 * - DynamicResources (dynamicresources.go `PreFilter`, `foreachPodResourceClaim`; its PreEnqueue): a ResourceClaim
 *   missing or being deleted.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Pod } from "../model/k8s.ts";
import { getClaim, type PendingContext } from "./context.ts";
import type { PodClaimUse } from "./report.ts";
import { podResourceClaims } from "./filters/dra.ts";

/** A PreFilter status that rejects every node: the plugin, and its message as FailedScheduling prints it. */
export interface PreFilterRejection {
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
export function podPreFilter(ctx: PendingContext, pod: Pod, uses: PodClaimUse[], version: string | undefined): PreFilterOutcome {
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
function resourceClaimNotFoundMessage(namespace: string, name: string, version: string | undefined): string {
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
