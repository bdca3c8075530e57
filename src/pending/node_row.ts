/**
 * One pending pod on one node: every filter of kube-scheduler's default profile that the bundle can decide, in the
 * profile's filter order (pkg/scheduler/apis/config/v1/default_plugins.go), and the node's verdict, which is the
 * reasons of its first failing filter (the framework stops at the first rejection, framework.go `RunFilterPlugins`),
 * after a PreFilter rejection or PreFilterResult (prefilter.ts):
 * NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts and NodeResourcesFit (filters/resources.ts, counting the
 * pods a preemption nominated to the node, framework.go `RunFilterPluginsWithNominatedPods`), VolumeRestrictions,
 * NodeVolumeLimits, VolumeBinding and VolumeZone (volume_checks.ts), PodTopologySpread, InterPodAffinity and
 * DynamicResources (filters/); the node's Ready condition is shown beside them.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { CSINode, Node, PersistentVolume, Pod, Toleration } from "../model/k8s.ts";
import { evaluateNodeSelector, evaluateNodeSelectorMap, selectorFailure, selectorSuccess } from "./node_selector.ts";
import { nodeFacts, type PendingContext } from "./context.ts";
import type { PodClaimUse, PodNodeRow, RuleCheck } from "./report.ts";
import { reasonText, type SchedulerWording } from "./scheduler_message.ts";
import { evaluateTaints, TAINT_NOT_READY, TAINT_UNREACHABLE, toleratesUnschedulable } from "./taints.ts";
import { fitsResources, hostPortConflicts, hostPorts, sidecarHostPortCounting } from "./filters/resources.ts";
import { type SpreadState, topologySpreadFilterWithNominated } from "./filters/topology_spread.ts";
import { DRA_NODE_REASON, draNodeCheck, type PodResourceClaim } from "./filters/dra.ts";
import { VOLUME_LIMIT_REASON, volumeLimitsCheck } from "./filters/volume_limits.ts";
import { DISK_CONFLICT_REASON, diskConflicts, type ReadWriteOncePodConflict, RWOP_REASON } from "./filters/volume_restrictions.ts";
import { podAffinityFilterWithNominated, type PodAffinityState } from "./filters/pod_affinity.ts";
import type { PreFilterRejection } from "./prefilter.ts";
import { matchDelayedClaims, volumeCheck, volumeZoneCheck } from "./volume_checks.ts";
import { nominatedByNode } from "./preemption.ts";

/**
 * The row of `pod` on `node`: each filter's check ({@link RuleCheck}: rule, plugin, passed, detail, in filter order;
 * a filter is left out when it has nothing to decide, e.g. no nodeSelector, no host port, no allocatable in the
 * bundle) and the verdict: `rejectedBy` the PreFilter rejection, else the PreFilterResult that leaves the node out
 * (in the release's words, {@link SchedulerWording}`.preFilterResult`), else the first failing filter with its reasons
 * as FailedScheduling writes them; null when the node fits. Readiness is shown, never a reason.
 * @param uses the pod's claims as VolumeBinding sees them (volume_checks.ts `claimUses`).
 * @param wording the scheduler release's words for the reasons.
 * @param preFilter PreFilter's rejection of every node, or null.
 * @param narrowed the nodes PreFilterResults keep and the plugins that narrowed them; undefined: all nodes.
 * @param pre what is computed once per pod for every node (spread and affinity state, ReadWriteOncePod holders,
 *   ResourceClaims, CSI volumes by claim, CSINodes, whether the pod has inline disks, whether sidecars' host ports count).
 */
export function podNodeRow(
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
export function sidecarPortNote(ctx: PendingContext, pod: Pod, version: string | undefined): string | undefined {
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
