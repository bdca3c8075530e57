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
 * This file holds the entry point and the per-pod orchestration; each stage is a file of its own: prefilter.ts
 * (PreFilter), volume_checks.ts (VolumeBinding, VolumeZone), node_row.ts (one node's filters and verdict),
 * preemption.ts (nominated pods, victims, preemptionPolicy Never), reconcile.ts (the last FailedScheduling),
 * findings.ts (claims, ResourceClaims, missing nodes, a gang's hold), answer.ts (the answer's words), gang.ts
 * (GangScheduling with v1.35's spec.workloadRef and Workloads) and pod_group.ts (v1.36+ spec.schedulingGroup and PodGroups).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { type Bundle, PODS_NOT_LISTED_WARNING } from "../bundle/bundle.ts";
import type { Pod } from "../model/k8s.ts";
import { NotFoundError } from "../model/errors.ts";
import { analyseClaim } from "./claim.ts";
import {
  ANN_SELECTED_NODE,
  buildContext,
  cmp,
  getClaim,
  type PendingContext,
  podClaimNames,
  PODS_NOT_LISTED_NOTE,
  PODS_UNLISTED_WHY,
  podsNotListed,
  podsUsingClaim,
} from "./context.ts";
import { pendingHints } from "./causes.ts";
import { analyseGang, GANG_PERMIT_TIMEOUT, gangPodsNotListedWarning, type GangReport } from "./gang.ts";
import { analysePodGroup, podGroupReconciliation } from "./pod_group.ts";
import { podPreFilter } from "./prefilter.ts";
import { claimUses } from "./volume_checks.ts";
import { nominatedNode, preemptionNever, preemptionVictimsTerminating } from "./preemption.ts";
import { podNodeRow, sidecarPortNote } from "./node_row.ts";
import { lastFailedScheduling, reconcile } from "./reconcile.ts";
import { claimFindings, deviceClassMissing, gangFinding, nodesMissingFinding, podNodeMissingFinding, resourceClaimsMissing } from "./findings.ts";
import { bypassedClaims, composeAnswer } from "./answer.ts";
import {
  type FailedSchedulingEvent,
  type Finding,
  PENDING_REPORT_API_VERSION,
  PENDING_REPORT_KIND,
  type PendingQuestion,
  type PendingReport,
  type PodReport,
  type Reconciliation,
  type SchedulingSummary,
} from "./report.ts";
import {
  classifyReason,
  CURRENT_WORDING,
  formatSchedulerMessage,
  permitTimeout,
  type SchedulerWording,
  taintWordingUndetermined,
  wordingForVersion,
  wordingOfMessage,
} from "./scheduler_message.ts";
import { sidecarHostPortCounting } from "./filters/resources.ts";
import { spreadDomainsText, topologySpreadState } from "./filters/topology_spread.ts";
import { podResourceClaims } from "./filters/dra.ts";
import { volumesByClaim } from "./filters/volume_limits.ts";
import { hasInlineDisks, readWriteOncePodConflicts } from "./filters/volume_restrictions.ts";
import { hasPodAffinityWork, podAffinityState } from "./filters/pod_affinity.ts";

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

/**
 * One pod's report: its claims, PreFilter, a row per node (none when it is bound to a node the bundle does not
 * hold), the summary in the scheduler's words, the notes on what the bundle does not hold, the last
 * FailedScheduling and its reconciliation.
 */
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

const SEVERITY_ORDER = { error: 0, warning: 1, info: 2 } as const;

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
