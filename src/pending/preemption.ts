/**
 * Preemption as it bears on a pending pod: the pods a preemption nominated to each node, which the filters count as if
 * there (framework/runtime/framework.go `RunFilterPluginsWithNominatedPods`); the lower-priority pods evicted for the
 * pod that still terminate on its nominated node (plugins/defaultpreemption/default_preemption.go
 * `podTerminatingByPreemption`, `PodEligibleToPreemptOthers`; schedule_one.go `evaluateNominatedNode`); and a pod that
 * may not preempt (`preemptionPolicy: Never`) while nodes reject it for room an eviction could free (preemption's
 * `nodesWherePreemptionMightHelp`: Unschedulable, not UnschedulableAndUnresolvable).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Pod } from "../model/k8s.ts";
import { shellWord } from "../model/shell_word.ts";
import { cmp, type PendingContext } from "./context.ts";
import type { Finding, PodNodeRow, PodReport } from "./report.ts";
import { requestsText } from "./filters/resources.ts";
import { AFFINITY_REASON, ANTI_AFFINITY_REASON, EXISTING_ANTI_AFFINITY_REASON } from "./filters/pod_affinity.ts";

const NOMINATED = new WeakMap<PendingContext, WeakMap<Pod, Map<string, Pod[]>>>();

/**
 * The pods a preemption nominated to each node (`status.nominatedNodeName`, not bound, not terminal) with a priority
 * no lower than `pod`'s (framework/runtime/framework.go RunFilterPluginsWithNominatedPods), by node; read once per pod and analysis.
 */
export function nominatedByNode(ctx: PendingContext, pod: Pod): Map<string, Pod[]> {
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

/** A pod's `status.nominatedNodeName`, or undefined. */
export function nominatedNode(pod: Pod): string | undefined {
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
export function preemptionVictimsTerminating(ctx: PendingContext, p: PodReport, pod: Pod): Finding | undefined {
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
export function preemptionNever(ctx: PendingContext, p: PodReport): Finding | undefined {
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
