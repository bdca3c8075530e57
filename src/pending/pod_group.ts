/**
 * Gang scheduling with PodGroup objects (KEP-4671 "Scheduler Changes for v1.36", KEP-5832; kube-scheduler v1.36 and
 * later): where kube-scheduler holds a pod whose `spec.schedulingGroup.podGroupName` names a PodGroup, and why. The
 * v1.35 path (`spec.workloadRef` naming a Workload's pod group) is {@link analyseGang}; the version switch is explicit:
 * v1.35 reads only workloadRef, v1.36+ only schedulingGroup (core/v1 types.go: "WorkloadRef is tombstoned … replaced
 * with the SchedulingGroup field in Kubernetes 1.36").
 *
 * As in v1.36 (pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go with scheduling.k8s.io/v1alpha2, its
 * gangscheduling_test.go TestGangSchedulingFlow; pkg/scheduler/schedule_one_podgroup.go; KEP-4671 "The Workload
 * Scheduling Cycle", "Queuing and Ordering", "Failure Handling"):
 * - The policy is the PodGroup's own `spec.schedulingPolicy` (copied from the Workload's template when the group is
 *   created; the scheduler does not read the Workload).
 * - PreEnqueue, before the group may enter the active queue (no scheduling attempt, so no FailedScheduling): the
 *   PodGroup must exist (`waiting for pods's pod group "G" to appear in scheduling queue`, sic), and for a `gang` policy
 *   the scheduler must know at least `minCount` pods of the group (`waiting for minCount pods from a gang to appear in
 *   scheduling queue`). A `basic` policy lets the pods through.
 * - The pod group scheduling cycle then tries all the group's pending pods together on one snapshot. With fewer than
 *   `minCount` placed (bound pods count) it rejects the whole group: the pods that found a node are rejected with the
 *   group's status, the others with their own filter result (FailureHandler, each a FailedScheduling event and
 *   PodScheduled condition), nominations are cleared, the group goes back to the queue with backoff, and the PodGroup's
 *   condition `PodGroupScheduled` (v1.37: `PodGroupInitiallyScheduled`) is set False with reason `Unschedulable` and
 *   the group's message (submitPodGroupAlgorithmResult, updatePodGroupCondition). No pod waits at Permit holding a node
 *   for the group. The words (v1.36, {@link POD_GROUP_REJECTED_MESSAGE}): a pod that found a node is rejected with
 *   `pod group is unschedulable, <its Permit status>`, GangScheduling's Permit saying `waiting for minCount pods from a
 *   gang to be scheduled`; the PodGroup's condition says `pod group is unschedulable`. v1.37 moved the minCount check to
 *   GangScheduling's PlacementFeasible (`minCount (N) cannot be satisfied: …`), whose path to the pod's event the
 *   sources read do not show, so {@link GangReport.message} is null there, as it is for a pod that fits nowhere (its own
 *   filters' message) and when the scheduler's release is not known.
 *
 * Gates: v1.36 needs kube-scheduler's GenericWorkload and GangScheduling (alpha, off by default); v1.37 merged
 * GangScheduling into GenericWorkload (KEP-4671 "Feature gates merge in v1.37"), beta and still off by default
 * (pkg/features/kube_features.go). Not held by the bundle: the answer says so unless the scheduler's own words (its
 * condition on the PodGroup, a gang message) show the plugin ran. A PodGroup with `parentCompositePodGroupName`
 * (v1.37, CompositePodGroup) is ready when its CompositePodGroup tree is (`waiting for composite pod group "C" tree to
 * meet quorum`): not analysed here, and said so.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { shellWord } from "../model/shell_word.ts";
import type { Pod, PodGroup } from "../model/k8s.ts";
import {
  ALONE_NOT_TOGETHER_NOTE,
  basicPolicyAnswer,
  belowMinCount,
  gangMemberReports,
  type GangMember,
  gangPlacement,
  gangPolicyFields,
  gangSchedulingFinding,
  type GangReport,
  noPolicyFields,
  nonTerminalByName,
  stuckMembersText,
} from "./gang.ts";
import type { FailedSchedulingEvent, Finding, PodReport, Reconciliation } from "./report.ts";

/**
 * The FailedScheduling message (and PodScheduled condition message) kube-scheduler v1.36 writes for a pod that found a
 * node when its pod group scheduling cycle cannot place minCount pods. Sources (kubernetes/kubernetes, v1.36 era:
 * PodGroupScheduled condition, scheduling.k8s.io/v1alpha2, stored commit 008b3652959ca58af8be3fb5b6ecfe9ae7638282):
 * pkg/scheduler/schedule_one_podgroup.go submitPodGroupAlgorithmResult rejects such a pod with
 * `fwk.NewStatus(fwk.Unschedulable, podResult.permitStatus.Message()).WithError(errPodGroupUnschedulable)`,
 * errPodGroupUnschedulable = "pod group is unschedulable"; staging/src/k8s.io/kube-scheduler/framework Status.Message
 * joins Reasons() with ", ", the error first; its Permit status is GangScheduling's Wait below minCount
 * (gangscheduling.go Permit, schedulingGroup versions: "waiting for minCount pods from a gang to be scheduled");
 * schedule_one.go handleSchedulingFailure writes status.Message() into the event and the condition.
 */
export const POD_GROUP_REJECTED_MESSAGE = "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled";

/** The plugin's PreEnqueue message when the PodGroup does not exist (gangscheduling.go PreEnqueue, v1.36 and v1.37; sic "pods's"). */
export function podGroupMissingObjectMessage(podGroup: string): string {
  return `waiting for pods's pod group "${podGroup}" to appear in scheduling queue`;
}

/**
 * The warning a live collection leaves when no version of the PodGroup API is served (every list answered 404): v1.36
 * serves scheduling.k8s.io/v1alpha2, v1.37 v1alpha3, each only with kube-apiserver's GenericWorkload gate and the
 * version enabled in --runtime-config.
 * @param namespace the pods' namespace.
 * @param versions the versions tried, newest first.
 */
export function podGroupApiNotServedWarning(namespace: string, versions: readonly string[]): string {
  return `the PodGroup API is not served: list podgroups.scheduling.k8s.io in namespace "${namespace}" answered 404 at ${versions.join(", ")}; ` +
    `it is served with kube-apiserver's feature gate GenericWorkload and --runtime-config=scheduling.k8s.io/<version>=true (v1alpha2 in v1.36, v1alpha3 in v1.37)`;
}

/** The warning a live collection leaves when RBAC forbids listing PodGroups (403). */
export function podGroupsForbiddenWarning(namespace: string, detail: string): string {
  return `not allowed to read podgroups: list podgroups.scheduling.k8s.io in namespace "${namespace}" is forbidden (403: ${detail}); whether the pods' PodGroups exist is unknown`;
}

/** The warning a live collection leaves when a PodGroup a pod names is not among those listed. */
export function podGroupNotFoundWarning(namespace: string, podGroup: string): string {
  return `podgroup "${podGroup}" was not found in namespace "${namespace}" (scheduling.k8s.io)`;
}

/**
 * The pods of `pod`'s PodGroup as GangScheduling counts them (PreEnqueue's AllPodsCount): same namespace and
 * `schedulingGroup.podGroupName`, not Succeeded or Failed, bound or not, the pod itself included; by name.
 * @returns [] when the pod names no PodGroup.
 */
export function podGroupMembers(pods: readonly Pod[], pod: Pod): Pod[] {
  const name = pod.spec?.schedulingGroup?.podGroupName;
  if (!name) return [];
  const ns = pod.metadata.namespace ?? "";
  return nonTerminalByName(pods.filter((p) => (p.metadata.namespace ?? "") === ns && p.spec?.schedulingGroup?.podGroupName === name));
}

/** Inputs of {@link analysePodGroup}. */
export interface PodGroupInput {
  /** The pod asked about; it has `spec.schedulingGroup.podGroupName`. */
  pod: Pod;
  /** Every pod of the bundle. */
  pods: readonly Pod[];
  podGroups: readonly PodGroup[];
  /** The bundle's warnings (the live collection's words on PodGroups and pods it could not read). */
  warnings: readonly string[];
  /** The scheduler's release as the bundle tells it (the newest kubelet), or undefined. */
  version: string | undefined;
  /** Whether a pod of the group fits some node by the rules checked here, alone, and if not why. */
  fits: (p: Pod) => { fits: boolean; why: string };
  /** The pod's last FailedScheduling message (event or PodScheduled condition), if any. */
  lastMessage?: string;
  /** The warning the collection leaves when the namespace's pods could not be listed (gang.ts gangPodsNotListedWarning). */
  podsNotListedWarning: string;
}

/** The minor release of a `vMAJOR.MINOR…` version, or null. */
function minorOf(version: string | undefined): number | null {
  const m = /^v?(\d+)\.(\d+)/.exec(version ?? "");
  if (!m) return null;
  return Number(m[1]) > 1 ? Infinity : Number(m[2]);
}

/** The scheduling condition kube-scheduler writes on a PodGroup (v1.36 `PodGroupScheduled`, v1.37 `PodGroupInitiallyScheduled`). */
function schedulingCondition(pg: PodGroup | undefined): GangReport["podGroupCondition"] | undefined {
  const c = (pg?.status?.conditions ?? []).find((x) => x.type === "PodGroupScheduled" || x.type === "PodGroupInitiallyScheduled");
  return c ? { type: c.type, status: c.status, ...(c.reason ? { reason: c.reason } : {}), ...(c.message ? { message: c.message } : {}) } : undefined;
}

/**
 * Where kube-scheduler (v1.36+) holds a pod with `spec.schedulingGroup`, and why (see the module comment for the steps
 * and their sources).
 * @returns undefined when the pod names no PodGroup.
 */
export function analysePodGroup(input: PodGroupInput): GangReport | undefined {
  const { pod } = input;
  const name = pod.spec?.schedulingGroup?.podGroupName;
  if (!name) return undefined;
  const ns = pod.metadata.namespace ?? "";
  const pg = input.podGroups.find((g) => (g.metadata.namespace ?? "") === ns && g.metadata.name === name);
  const condition = schedulingCondition(pg);
  const base = {
    plugin: "GangScheduling" as const,
    via: "schedulingGroup" as const,
    workload: pg?.spec?.podGroupTemplateRef?.workload?.workloadName ?? null,
    podGroup: name,
    podGroupReplicaKey: null,
    ...(condition ? { podGroupCondition: condition } : {}),
  };
  const label = `PodGroup ${ns}/${name}`;
  const membersComplete = !input.warnings.includes(input.podsNotListedWarning);
  const pods = podGroupMembers(input.pods, pod);
  const members = (): GangMember[] => gangMemberReports(pods, input.fits);
  const notes: string[] = [];
  const minor = minorOf(input.version);
  const confirmed = condition !== undefined || /from a gang|pod group|at plugin GangScheduling\b/.test(input.lastMessage ?? "");
  if (!confirmed) {
    notes.push(
      minor !== null && minor >= 37
        ? `the pod group path runs only with kube-scheduler's feature gate GenericWorkload on (beta in v1.37, off by default; GangScheduling was merged into it), which the bundle does not hold; without it the scheduler places each pod on its own`
        : `the pod group path runs only with kube-scheduler's feature gates GenericWorkload and GangScheduling on (alpha in v1.36, off by default), which the bundle does not hold; without them the scheduler places each pod on its own (turning them off does not clear spec.schedulingGroup)`,
    );
  }
  if (minor !== null && minor < 36) {
    notes.push(
      `the newest kubelet is ${input.version}: spec.schedulingGroup exists from v1.36 (so the API server is v1.36 or later), and a kube-scheduler before v1.36 ignores it; ` +
        `what holds the pod depends on kube-scheduler's own version (kubectl -n kube-system get pod -l component=kube-scheduler -o jsonpath='{..image}')`,
    );
  }
  const state = objectState(input, ns, name, pg);
  if (!pg) {
    if (state === "not-found") {
      const message = podGroupMissingObjectMessage(name);
      return {
        ...base,
        ...noPolicyFields(state, members(), membersComplete),
        stage: "pre-enqueue",
        message,
        detail: `${label} does not exist: GangScheduling's PreEnqueue keeps the pod out of the scheduling queue until it is created ("${message}"), ` +
          `and the scheduler retries when a PodGroup of that name is added; it does not try the pod meanwhile, so it writes no FailedScheduling event. ` +
          `The group's controller creates the PodGroup from its Workload's template before the pods (KEP-4671 "PodGroup Creation Ordering").`,
        notes,
      };
    }
    const why = state === "api-not-served"
      ? `the PodGroup API is not served (see the warning), so ${label} cannot exist: either kube-scheduler's gates are off too and the pod is placed on its own, ` +
        `or its GangScheduling finds no PodGroup and PreEnqueue holds the pod ("${podGroupMissingObjectMessage(name)}")`
      : state === "forbidden"
      ? `reading PodGroups was forbidden (see the warning): whether ${label} exists, and with which policy, decides whether PreEnqueue holds the pod`
      : `the bundle holds no PodGroup: whether ${label} exists, and with which policy, decides whether GangScheduling holds the pod (kubectl get podgroups.scheduling.k8s.io -n ${shellWord(ns)} ${shellWord(name)} -o yaml)`;
    return { ...base, ...noPolicyFields(state, members(), membersComplete), stage: "undecided", message: null, detail: `${why}.`, notes };
  }
  const policy = pg.spec?.schedulingPolicy;
  if (pg.spec?.parentCompositePodGroupName) {
    return {
      ...base,
      objectState: "found",
      policy: policy?.gang ? "gang" : "basic",
      minCount: policy?.gang?.minCount ?? null,
      members: members(),
      membersComplete,
      stage: "undecided",
      message: null,
      detail: `${label} belongs to CompositePodGroup ${pg.spec.parentCompositePodGroupName} (v1.37, feature gate CompositePodGroup): with that gate on, PreEnqueue waits until the ` +
        `CompositePodGroup tree meets its minGroupCount ("waiting for composite pod group … tree to meet quorum"), which this analysis does not check.`,
      notes,
    };
  }
  if (!policy?.gang) {
    return {
      ...base,
      ...basicPolicyAnswer(
        membersComplete,
        `${label} has the basic policy: GangScheduling lets the pod through (PreEnqueue acts only on a gang policy), and the pod group cycle tries as many of its pods as fit, ` +
          `without the all-or-nothing minCount check (KEP-4671 "Interaction with Basic Policy").`,
      ),
      notes,
    };
  }
  const minCount = policy.gang.minCount;
  const all = members();
  const short = belowMinCount(label, "the whole group", minCount, all, membersComplete);
  if (short) return { ...base, ...short, notes };
  const have = all.length;
  const { placed, counted, stuck } = gangPlacement(all);
  const said = condition?.status === "False" && condition.message ? ` The scheduler's last word on the group (${condition.type}=False, ${condition.reason ?? "no reason"}): "${condition.message}".` : "";
  if (placed < minCount) {
    // the group's words reach only the pods that found a node (submitPodGroupAlgorithmResult); the others keep their filters' message
    const self = `${ns}/${pod.metadata.name}`;
    const fits = all.some((m) => m.pod === self && m.fits === true);
    return {
      ...base,
      ...gangPolicyFields(minCount, all, membersComplete),
      stage: "pod-group-cycle",
      message: minor === 36 && fits ? POD_GROUP_REJECTED_MESSAGE : null,
      detail: `${label} is a gang of minCount ${minCount} with ${have} pods, of which only ${placed} can be placed (${counted}): kube-scheduler tries the group's pods together ` +
        `in one pod group scheduling cycle and, with fewer than minCount placed, rejects the whole group — the pods that found a node with the group's rejection, the others with their own ` +
        `reasons — clears their nominations and retries the group after backoff, when a cluster event may let one of them fit; the gang needs ${minCount - placed} more of: ` +
        `${stuckMembersText(stuck)}.${said}`,
      notes: [...notes, `pods that fit each alone may not fit together: the group is placed in one cycle on one snapshot, so the count assumes they do`],
    };
  }
  return {
    ...base,
    ...gangPolicyFields(minCount, all, membersComplete),
    stage: "none",
    message: null,
    detail: `${label} is a gang of minCount ${minCount} with ${have} pods, ${placed} of which can be placed (${counted}): the pod group cycle can reach its quorum, ` +
      `so GangScheduling is not what holds this pod.${said}`,
    notes: [...notes, ALONE_NOT_TOGETHER_NOTE],
  };
}

/** What the bundle tells of the PodGroup `name` in the pod's namespace. */
function objectState(input: PodGroupInput, ns: string, name: string, pg: PodGroup | undefined): GangReport["objectState"] {
  if (pg) return "found";
  if (input.warnings.includes(podGroupNotFoundWarning(ns, name))) return "not-found";
  if (input.warnings.some((w) => w.startsWith(`the PodGroup API is not served: list podgroups.scheduling.k8s.io in namespace "${ns}"`))) return "api-not-served";
  if (input.warnings.some((w) => w.startsWith(`not allowed to read podgroups: list podgroups.scheduling.k8s.io in namespace "${ns}"`))) return "forbidden";
  return "not-collected";
}

/**
 * The reconciliation of a pod the pod group cycle rejects with its gang ({@link analysePodGroup}, stage
 * `pod-group-cycle`): a pod that fits a node is rejected with the group's status, not its filters' (schedule_one_podgroup.go
 * submitPodGroupAlgorithmResult), so its FailedScheduling is the gang's word. A pod that does not fit keeps its own.
 * @returns undefined when the pod's own reconciliation stands.
 */
export function podGroupReconciliation(gang: GangReport, own: PodReport, last: FailedSchedulingEvent | null): Reconciliation | undefined {
  if (gang.via !== "schedulingGroup" || gang.stage !== "pod-group-cycle") return undefined;
  if (!own.summary || own.summary.feasibleNodes.length === 0) return undefined;
  const c = gang.podGroupCondition;
  return {
    status: "not-applicable",
    details: [
      `The pod fits a node by the rules checked here; its group cannot place minCount ${gang.minCount} pods, so kube-scheduler rejects it with the group's status rather than a filter's` +
      (last ? ` (its last FailedScheduling: "${last.message}")` : ` (no FailedScheduling event or PodScheduled condition in the bundle)`) +
      (c ? `; PodGroup ${own.namespace}/${gang.podGroup} ${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ""}${c.message ? `: "${c.message}"` : ""}` : "") + ".",
    ],
  };
}

/**
 * The finding of a pod held through its PodGroup ({@link analysePodGroup}): an error when GangScheduling holds it
 * (PreEnqueue, the pod group cycle), a warning when the bundle lacks what decides it; none when it lets the pod through.
 */
export function podGroupFinding(p: PodReport): Finding | undefined {
  const g = p.gang;
  if (!g || g.via !== "schedulingGroup" || g.stage === "none") return undefined;
  const pg = `PodGroup ${p.namespace}/${g.podGroup}`;
  const get = `kubectl get podgroups.scheduling.k8s.io -n ${shellWord(p.namespace)} ${shellWord(g.podGroup)} -o yaml`;
  const title = g.stage === "undecided"
    ? `Whether GangScheduling holds pod ${p.namespace}/${p.name} is undecided (${pg})`
    : g.objectState === "not-found"
    ? `${pg} does not exist: GangScheduling holds pod ${p.namespace}/${p.name} before scheduling`
    : g.stage === "pre-enqueue"
    ? `The gang of pod ${p.namespace}/${p.name} has ${g.members.length} of its minCount ${g.minCount} pods: GangScheduling holds them before scheduling`
    : `The gang of pod ${p.namespace}/${p.name} cannot place minCount ${g.minCount} pods: the pod group cycle rejects the whole group`;
  const suggestion = g.stage === "undecided"
    ? `${get}; and check kube-scheduler's --feature-gates (GenericWorkload; GangScheduling in v1.36).`
    : g.objectState === "not-found"
    ? `Create ${pg} (its controller does so from the Workload's pod group template; ${get} to confirm it is missing), or recreate the pod without spec.schedulingGroup (it is immutable).`
    : g.stage === "pre-enqueue"
    ? `Create the missing ${(g.minCount ?? 0) - g.members.length} pod(s) of the group (its controller's replicas or parallelism), or lower minCount (immutable in v1.36: recreate the PodGroup; mutable from v1.37).`
    : `Make room for the pods that do not fit (see their reasons), or lower minCount (immutable in v1.36: recreate the PodGroup; mutable from v1.37).`;
  const c = g.podGroupCondition;
  const evidence = [
    `Pod ${p.namespace}/${p.name}: spec.schedulingGroup.podGroupName ${g.podGroup}`,
    ...(g.minCount !== null ? [`${pg}: spec.schedulingPolicy.gang.minCount ${g.minCount}`] : g.policy === "basic" ? [`${pg}: spec.schedulingPolicy.basic`] : []),
    ...(c ? [`${pg}: status.conditions ${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ""}${c.message ? `: ${c.message}` : ""}`] : []),
  ];
  return gangSchedulingFinding(g, { title, evidence, suggestion });
}
