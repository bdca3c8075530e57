/**
 * Gang scheduling with the Workload API (KEP-4671, kube-scheduler v1.35 alpha): where kube-scheduler's
 * GangScheduling plugin holds a pod whose `spec.workloadRef` names a Workload, and why.
 *
 * The plugin, as in v1.35 (pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go; the pod group state in
 * pkg/scheduler/backend/workloadmanager/podgroupinfo.go):
 * - PreEnqueue, before the pod may enter the active queue (no scheduling attempt, so no FailedScheduling event and no
 *   PodScheduled condition while it holds the pod): the Workload must exist (`waiting for pods's workload "W" to
 *   appear in scheduling queue`), hold the pod group (`pod group "G" doesn't exist for a workload "W"`), and, for a
 *   `gang` policy, the scheduler must know at least `minCount` pods of the group (`waiting for minCount pods from a gang
 *   to appear in scheduling queue`). A `basic` policy lets the pod through.
 * - Reserve marks the pod assumed; Permit lets it bind only once the group's assumed and bound pods reach `minCount`,
 *   else it waits (`waiting for minCount pods from a gang to be waiting on permit`) for the group's deadline, 5 minutes
 *   from the first pod that waits (DefaultSchedulingTimeoutDuration, podGroupInfo.SchedulingTimeout), after which the
 *   framework rejects it: `rejected due to timeout after waiting <d> at plugin GangScheduling` (framework/runtime
 *   waiting_pods_map.go newWaitingPod), the FailedScheduling message and the PodScheduled condition.
 * - The pods of a group: the non-terminal pods of the namespace with the same workloadRef (name, podGroup,
 *   podGroupReplicaKey) the scheduler's informer holds (eventhandlers.go addPod → workloadManager.AddPod, every pod
 *   whatever its schedulerName; scheduler.go newPodInformer drops Succeeded and Failed pods), bound ones included.
 *
 * The plugin runs only with the feature gates GenericWorkload and GangScheduling on in kube-scheduler (alpha in v1.35,
 * off by default: pkg/features/kube_features.go; default_plugins.go applyFeatureGates), which the bundle does not
 * hold; turning them off leaves `spec.workloadRef` set (KEP-4671 PRR), so the field alone does not show they are on.
 * v1.36 replaced `spec.workloadRef` with `spec.schedulingGroup`, naming a PodGroup object (scheduling.k8s.io/v1alpha2;
 * KEP-4671 "Associating Pod into PodGroups", KEP-5832): later schedulers do not read workloadRef, and no later API
 * server serves it, so a pod that carries it was written by a v1.35 API server. That path is src/pending/pod_group.ts.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Pod, Workload, WorkloadReference } from "../model/k8s.ts";
import type { Finding } from "./report.ts";

/** The plugin's PreEnqueue message when the Workload does not exist (gangscheduling.go PreEnqueue, v1.35; sic "pods's"). */
export function workloadMissingMessage(workload: string): string {
  return `waiting for pods's workload "${workload}" to appear in scheduling queue`;
}

/** The plugin's PreEnqueue message when the Workload has no such pod group (gangscheduling.go PreEnqueue, v1.35). */
export function podGroupMissingMessage(podGroup: string, workload: string): string {
  return `pod group "${podGroup}" doesn't exist for a workload "${workload}"`;
}

/** The plugin's PreEnqueue message while fewer than minCount pods of the group exist (gangscheduling.go PreEnqueue). */
export const MIN_COUNT_PRE_ENQUEUE_MESSAGE = "waiting for minCount pods from a gang to appear in scheduling queue";

/** The plugin's Permit (Wait) status while the group's assumed and bound pods are fewer than minCount (gangscheduling.go Permit). */
export const MIN_COUNT_PERMIT_MESSAGE = "waiting for minCount pods from a gang to be waiting on permit";

/** How long a gang waits at Permit before its waiting pods are rejected (workloadmanager DefaultSchedulingTimeoutDuration, v1.35). */
export const GANG_PERMIT_TIMEOUT = "5 minutes";

/**
 * The warning a live collection leaves when the Workload API is not served (list answered 404): it is alpha in v1.35,
 * served only with kube-apiserver's GenericWorkload feature gate and the scheduling.k8s.io/v1alpha1 API enabled.
 * @param namespace the pods' namespace.
 * @param detail the API server's words.
 */
export function workloadApiNotServedWarning(namespace: string, detail: string): string {
  return `the Workload API is not served: list workloads.scheduling.k8s.io/v1alpha1 in namespace "${namespace}" answered 404 (${detail}); ` +
    `it is alpha in v1.35, served with kube-apiserver's feature gate GenericWorkload and --runtime-config=scheduling.k8s.io/v1alpha1=true`;
}

/**
 * The warning a live collection leaves when RBAC forbids listing Workloads (403).
 * @param namespace the pods' namespace.
 * @param detail the API server's words.
 */
export function workloadsForbiddenWarning(namespace: string, detail: string): string {
  return `not allowed to read workloads: list workloads.scheduling.k8s.io in namespace "${namespace}" is forbidden (403: ${detail}); whether the pods' Workloads exist is unknown`;
}

/** The warning a live collection leaves when a Workload a pod names is not among those listed. */
export function workloadNotFoundWarning(namespace: string, workload: string): string {
  return `workload "${workload}" was not found in namespace "${namespace}" (scheduling.k8s.io/v1alpha1)`;
}

/** The warning a live collection leaves when it could list no pod of the namespace: the gang's pods were not counted. */
export function gangPodsNotListedWarning(namespace: string): string {
  return `list pods in namespace "${namespace}" is forbidden (403): the pods of the gangs there were not counted`;
}

/** One pod of a gang, as the report shows it. */
export interface GangMember {
  /** `namespace/name`. */
  pod: string;
  /** `spec.nodeName`: bound pods count towards Permit's quorum. */
  nodeName: string | null;
  /** Whether some node fits it by the rules checked here (alone; null: the pod is bound, or not checked). */
  fits: boolean | null;
  /** Why it does not fit: the computed FailedScheduling message, or what holds it before the filters. */
  why?: string;
}

/**
 * Where GangScheduling holds a pod of a group, and why: a pod with `spec.workloadRef` (v1.35, {@link analyseGang}) or
 * with `spec.schedulingGroup` (v1.36+, src/pending/pod_group.ts analysePodGroup).
 */
export interface GangReport {
  plugin: "GangScheduling";
  /** The pod field that ties it to its group: `workloadRef` (v1.35, a Workload's pod group) or `schedulingGroup` (v1.36+, a PodGroup object). */
  via: "workloadRef" | "schedulingGroup";
  /** The Workload: `workloadRef.name`; for a PodGroup, the template's Workload (`spec.podGroupTemplateRef.workload.workloadName`), null when not known. */
  workload: string | null;
  /** `workloadRef.podGroup`, or `schedulingGroup.podGroupName` (the PodGroup object's name). */
  podGroup: string;
  /** `workloadRef.podGroupReplicaKey`; null when absent, and for a PodGroup (one object per replica). */
  podGroupReplicaKey: string | null;
  /**
   * What the bundle tells of the object that holds the group's policy — the Workload (`workloadRef`) or the PodGroup
   * (`schedulingGroup`): `found`; `not-found` (looked up, absent); `api-not-served` (listing it answered 404);
   * `forbidden` (403); `not-collected` (the bundle holds none and no word of a look-up).
   */
  objectState: "found" | "not-found" | "api-not-served" | "forbidden" | "not-collected";
  /** The pod group's policy; null when the object or the group is not known. */
  policy: "gang" | "basic" | null;
  /** `gang.minCount`; null without a gang policy. */
  minCount: number | null;
  /** The group's non-terminal pods the bundle holds (the pod asked about included), by name. */
  members: GangMember[];
  /** False when the collection could not list the namespace's pods: `members` may lack some. */
  membersComplete: boolean;
  /**
   * `pre-enqueue`: PreEnqueue holds the pod (the scheduler does not try it); `permit` (v1.35): the group cannot reach
   * minCount placed pods, so those that fit wait at Permit and are rejected at the timeout; `pod-group-cycle` (v1.36+):
   * the group cannot reach minCount placed pods, so the pod group scheduling cycle rejects the whole group at once;
   * `none`: the plugin does not hold it (basic policy, quorum reachable, or a scheduler that does not read the field);
   * `undecided`: the bundle lacks what decides it (see `detail`).
   */
  stage: "pre-enqueue" | "permit" | "pod-group-cycle" | "none" | "undecided";
  /** The plugin's status message at that stage, in kube-scheduler's words; null when it lets the pod through or the words are not known. */
  message: string | null;
  /** The explanation, one or more sentences. */
  detail: string;
  /** What the answer rests on that the bundle does not hold (feature gates, the scheduler's release). */
  notes: string[];
  /** The PodGroup's scheduling condition kube-scheduler wrote (`PodGroupScheduled` v1.36, `PodGroupInitiallyScheduled` v1.37), if any. */
  podGroupCondition?: { type: string; status: string; reason?: string; message?: string };
}

/** Whether two references name the same pod group replica (gangscheduling.go matchingWorkloadReference: the structs equal). */
export function sameWorkloadRef(a: WorkloadReference, b: WorkloadReference): boolean {
  return a.name === b.name && a.podGroup === b.podGroup && (a.podGroupReplicaKey ?? "") === (b.podGroupReplicaKey ?? "");
}

/**
 * The pods of `pod`'s group as GangScheduling counts them (PreEnqueue's AllPods): same namespace and workloadRef, not
 * Succeeded or Failed (the scheduler's informer drops those), bound or not, the pod itself included; by name.
 * @returns [] when the pod has no workloadRef.
 */
export function gangMembers(pods: readonly Pod[], pod: Pod): Pod[] {
  const ref = pod.spec?.workloadRef;
  if (!ref) return [];
  const ns = pod.metadata.namespace ?? "";
  return nonTerminalByName(pods.filter((p) => (p.metadata.namespace ?? "") === ns && p.spec?.workloadRef && sameWorkloadRef(p.spec.workloadRef, ref)));
}

/**
 * The pods a group counts, of those given: not Succeeded or Failed (scheduler.go newPodInformer drops those from the
 * scheduler's informer, so the workload manager never counts them), sorted by name.
 */
export function nonTerminalByName(pods: readonly Pod[]): Pod[] {
  return pods
    .filter((p) => p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed")
    .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
}

/**
 * A group's members as the report shows them ({@link GangMember}): a bound pod with its node (it counts towards minCount
 * as it is), an unbound one with whether some node fits it alone by the rules checked here, and if not why.
 * @param pods the group's pods, as {@link gangMembers} or pod_group.ts podGroupMembers count them.
 * @param fits whether a pod fits some node alone, and if not why (the computed FailedScheduling message).
 */
export function gangMemberReports(pods: readonly Pod[], fits: (p: Pod) => { fits: boolean; why: string }): GangMember[] {
  return pods.map((p) => {
    const id = `${p.metadata.namespace ?? ""}/${p.metadata.name}`;
    if (p.spec?.nodeName) return { pod: id, nodeName: p.spec.nodeName, fits: null };
    const f = fits(p);
    return { pod: id, nodeName: null, fits: f.fits, ...(f.fits ? {} : { why: f.why }) };
  });
}

/**
 * How many of a gang's members can be placed, as GangScheduling's quorum counts them: bound pods (v1.35 Permit counts
 * assumed and bound pods, gangscheduling.go Permit; v1.36+ the pod group cycle counts bound pods, schedule_one_podgroup.go)
 * plus the unbound pods some node fits alone by the rules checked here.
 */
export interface GangPlacement {
  /** Members bound to a node. */
  bound: GangMember[];
  /** Unbound members some node fits, each alone. */
  fitting: GangMember[];
  /** Unbound members no node fits (each with its `why`). */
  stuck: GangMember[];
  /** `bound` + `fitting`, in pods. */
  placed: number;
  /** The count in words: `B bound, F fit a node by the rules checked here, each alone`. */
  counted: string;
}

/** {@link GangPlacement} of a gang's members (from {@link gangMemberReports}). */
export function gangPlacement(members: readonly GangMember[]): GangPlacement {
  const bound = members.filter((m) => m.nodeName !== null);
  const fitting = members.filter((m) => m.fits === true);
  const stuck = members.filter((m) => m.fits === false);
  return { bound, fitting, stuck, placed: bound.length + fitting.length, counted: `${bound.length} bound, ${fitting.length} fit a node by the rules checked here, each alone` };
}

/** The members no node fits, in words: `name (why); name (why)`. */
export function stuckMembersText(stuck: readonly GangMember[]): string {
  return stuck.map((m) => `${m.pod.split("/")[1]} (${m.why})`).join("; ");
}

/**
 * The group fields, stage, message and words of a gang with fewer pods than minCount (gangscheduling.go PreEnqueue, v1.35 and v1.36+:
 * the scheduler must know minCount pods of the group before any enters the active queue). When the namespace's pods
 * could not be listed (`membersComplete` false) the count may be short, so the stage is `undecided` and the words say why.
 * @param subject the group in words (`Workload ns/w's pod group g`, `PodGroup ns/g`).
 * @param held whom PreEnqueue keeps out of the queue, in words (`every pod of the group`, `the whole group`).
 * @param minCount the policy's `gang.minCount`, in pods.
 * @param members the group's members (from {@link gangMemberReports}).
 * @param membersComplete whether the namespace's pods were all listed.
 * @returns undefined when the group has minCount pods or more.
 */
export function belowMinCount(
  subject: string,
  held: string,
  minCount: number,
  members: GangMember[],
  membersComplete: boolean,
): (GangGroupFields & Pick<GangReport, "stage" | "message" | "detail">) | undefined {
  const have = members.length;
  if (have >= minCount) return undefined;
  return {
    ...gangPolicyFields(minCount, members, membersComplete),
    stage: membersComplete ? "pre-enqueue" : "undecided",
    message: membersComplete ? MIN_COUNT_PRE_ENQUEUE_MESSAGE : null,
    detail: membersComplete
      ? `${subject} is a gang of minCount ${minCount}, and only ${have} of its pods exist (not Succeeded or Failed: ${members.map((m) => m.pod.split("/")[1]).join(", ")}): ` +
        `GangScheduling's PreEnqueue keeps ${held} out of the scheduling queue until ${minCount - have} more exist ("${MIN_COUNT_PRE_ENQUEUE_MESSAGE}"); no FailedScheduling event meanwhile.`
      : `${subject} is a gang of minCount ${minCount}; the bundle holds ${have} of its pods, but the namespace's pods could not be listed (see the warning), so whether ${minCount} exist, ` +
        `which decides whether PreEnqueue holds the pod, is unknown.`,
  };
}

/** The fields of a {@link GangReport} that tell its group: the object's state, the policy, minCount and the members. */
export type GangGroupFields = Pick<GangReport, "objectState" | "policy" | "minCount" | "members" | "membersComplete">;

/**
 * The group fields of a gang whose object was found with a `gang` policy (Workload pod group v1.35, PodGroup v1.36+).
 * @param minCount the policy's `gang.minCount`, in pods.
 * @param members the group's members (from {@link gangMemberReports}).
 * @param membersComplete whether the namespace's pods were all listed.
 */
export function gangPolicyFields(minCount: number, members: GangMember[], membersComplete: boolean): GangGroupFields {
  return { objectState: "found", policy: "gang", minCount, members, membersComplete };
}

/**
 * The group fields when the group's policy is not known: the object (Workload, its pod group, or PodGroup) is missing
 * or was not read; policy and minCount are null.
 * @param objectState what the bundle tells of the object.
 * @param members the group's members (from {@link gangMemberReports}).
 * @param membersComplete whether the namespace's pods were all listed.
 */
export function noPolicyFields(objectState: GangReport["objectState"], members: GangMember[], membersComplete: boolean): GangGroupFields {
  return { objectState, policy: null, minCount: null, members, membersComplete };
}

/**
 * The answer for a group whose object was found with the `basic` policy: GangScheduling lets its pods through
 * (gangscheduling.go PreEnqueue and Permit act only on a gang policy), so no members are listed and the stage is `none`.
 * @param membersComplete whether the namespace's pods were all listed.
 * @param detail the explanation, in the words of the release's path.
 */
export function basicPolicyAnswer(membersComplete: boolean, detail: string): GangGroupFields & Pick<GangReport, "stage" | "message" | "detail"> {
  return { objectState: "found", policy: "basic", minCount: null, members: [], membersComplete, stage: "none", message: null, detail };
}

/** The note of a gang that can reach its quorum: members are checked one at a time, never together. */
export const ALONE_NOT_TOGETHER_NOTE = "pods that fit each alone may not fit together: the count assumes they do";

/** One member in a finding's evidence: `Pod ns/name: bound to N`, `fits a node`, `does not fit (why)`, or `not checked`. */
export function gangMemberEvidence(m: GangMember): string {
  return `Pod ${m.pod}: ${m.nodeName ? `bound to ${m.nodeName}` : m.fits ? "fits a node" : m.fits === false ? `does not fit (${m.why})` : "not checked"}`;
}

/**
 * The `gang-scheduling` finding of a pod GangScheduling holds, or may hold, through its group (v1.35 workloadRef,
 * findings.ts gangFinding; v1.36+ schedulingGroup, pod_group.ts podGroupFinding): an error when the plugin holds it, a
 * warning when its stage is `undecided`. Its detail is the gang's detail and notes (each a sentence); its evidence the
 * lines given, then one line per member ({@link gangMemberEvidence}).
 * @param g the pod's gang report; its stage is not `none`.
 * @param words the title, the evidence on the pod's field and the group's object, and the suggestion, in the words of
 *   the release's path.
 */
export function gangSchedulingFinding(g: GangReport, words: { title: string; evidence: string[]; suggestion: string }): Finding {
  return {
    id: "gang-scheduling",
    severity: g.stage === "undecided" ? "warning" : "error",
    title: words.title,
    detail: [g.detail, ...g.notes.map((n) => `${n.charAt(0).toUpperCase()}${n.slice(1)}.`)].join(" "),
    evidence: [...words.evidence, ...g.members.map(gangMemberEvidence)],
    suggestion: words.suggestion,
  };
}

/** The scheduler release's relation to workloadRef: `v1.35` reads it; `before` has no plugin; `after` reads spec.schedulingGroup. */
function era(version: string | undefined): "before" | "v1.35" | "after" {
  const m = /^v?(\d+)\.(\d+)/.exec(version ?? "");
  // no version: the field exists only in v1.35's API, so the API server (and most likely the scheduler) is v1.35
  if (!m) return "v1.35";
  const minor = Number(m[1]) > 1 ? Infinity : Number(m[2]);
  return minor < 35 ? "before" : minor === 35 ? "v1.35" : "after";
}

/** Inputs of {@link analyseGang}. */
export interface GangInput {
  /** The pod asked about; it has a `spec.workloadRef`. */
  pod: Pod;
  /** Every pod of the bundle. */
  pods: readonly Pod[];
  workloads: readonly Workload[];
  /** The bundle's warnings (the live collection's words on Workloads and pods it could not read). */
  warnings: readonly string[];
  /** The scheduler's release as the bundle tells it (the newest kubelet), or undefined. */
  version: string | undefined;
  /**
   * Whether a pod of the group fits some node by the rules checked here, alone, and if not why (the computed
   * FailedScheduling message, or what holds it before the filters).
   */
  fits: (p: Pod) => { fits: boolean; why: string };
  /** The pod's last FailedScheduling message (event or PodScheduled condition), if any. */
  lastMessage?: string;
}

/**
 * Where kube-scheduler's GangScheduling plugin (v1.35) holds a pod with a `spec.workloadRef`, and why (see the module
 * comment for the plugin's steps and its sources).
 * @returns undefined when the pod has no workloadRef.
 */
export function analyseGang(input: GangInput): GangReport | undefined {
  const { pod } = input;
  const ref = pod.spec?.workloadRef;
  if (!ref) return undefined;
  const ns = pod.metadata.namespace ?? "";
  const name = `Workload ${ns}/${ref.name}`;
  const group = `pod group ${ref.podGroup}${ref.podGroupReplicaKey ? ` (replica key ${ref.podGroupReplicaKey})` : ""}`;
  const base = { plugin: "GangScheduling" as const, via: "workloadRef" as const, workload: ref.name, podGroup: ref.podGroup, podGroupReplicaKey: ref.podGroupReplicaKey || null };
  const membersComplete = !input.warnings.includes(gangPodsNotListedWarning(ns));
  const pods = gangMembers(input.pods, pod);
  const members = (): GangMember[] => gangMemberReports(pods, input.fits);
  const confirmed = /at plugin GangScheduling\b/.test(input.lastMessage ?? "");
  const notes: string[] = [];
  const release = era(input.version);
  if (release === "after") {
    return {
      ...base,
      objectState: stateOf(input, ref.name),
      policy: null,
      minCount: null,
      members: [],
      membersComplete,
      stage: "none",
      message: null,
      detail: `kube-scheduler from v1.36 does not read spec.workloadRef: it was replaced by spec.schedulingGroup, which names a PodGroup object ` +
        `(scheduling.k8s.io/v1alpha2; KEP-4671, KEP-5832), so this pod is scheduled on its own; the scheduler's release is taken to be ${input.version}, the newest kubelet's version.`,
      notes,
    };
  }
  if (!confirmed) {
    notes.push(
      `GangScheduling runs only with kube-scheduler's feature gates GenericWorkload and GangScheduling on (alpha in v1.35, off by default), which the bundle does not hold; ` +
        `without them the scheduler ignores spec.workloadRef and places the pod on its own (turning the gates off does not clear the field)`,
    );
  }
  if (release === "before") {
    notes.push(
      `the newest kubelet is ${input.version}: kube-scheduler before v1.35 has no GangScheduling plugin and ignores spec.workloadRef; the pod's workloadRef shows the API server is v1.35, ` +
        `so what holds the pod depends on kube-scheduler's own version (kubectl -n kube-system get pod -l component=kube-scheduler -o jsonpath='{..image}')`,
    );
  }
  const state = stateOf(input, ref.name);
  const workload = input.workloads.find((w) => (w.metadata.namespace ?? "") === ns && w.metadata.name === ref.name);
  if (!workload) {
    if (state === "not-found") {
      return {
        ...base,
        ...noPolicyFields(state, members(), membersComplete),
        stage: "pre-enqueue",
        message: workloadMissingMessage(ref.name),
        detail: `${name} does not exist: GangScheduling's PreEnqueue keeps the pod out of the scheduling queue until it is created ("${workloadMissingMessage(ref.name)}"); ` +
          `the scheduler does not try the pod meanwhile, so it writes no FailedScheduling event.`,
        notes,
      };
    }
    const why = state === "api-not-served"
      ? `the Workload API is not served (see the warning), so ${name} cannot exist: either kube-scheduler's gates are off too and the pod is placed on its own, ` +
        `or its GangScheduling finds no Workload and PreEnqueue holds the pod ("${workloadMissingMessage(ref.name)}")`
      : state === "forbidden"
      ? `reading Workloads was forbidden (see the warning): whether ${name} exists, and with which policy for ${group}, decides whether PreEnqueue holds the pod`
      : `the bundle holds no Workload: whether ${name} exists, and with which policy for ${group}, decides whether GangScheduling holds the pod (kubectl get workloads.scheduling.k8s.io -n ${ns} ${ref.name} -o yaml)`;
    return { ...base, ...noPolicyFields(state, members(), membersComplete), stage: "undecided", message: null, detail: `${why}.`, notes };
  }
  const pg = (workload.spec?.podGroups ?? []).find((g) => g.name === ref.podGroup);
  if (!pg) {
    const names = (workload.spec?.podGroups ?? []).map((g) => g.name);
    return {
      ...base,
      ...noPolicyFields("found", members(), membersComplete),
      stage: "pre-enqueue",
      message: podGroupMissingMessage(ref.podGroup, ref.name),
      detail: `${name} has no pod group ${ref.podGroup} (it has ${names.length > 0 ? names.join(", ") : "none"}): GangScheduling's PreEnqueue keeps the pod out of the scheduling queue ` +
        `("${podGroupMissingMessage(ref.podGroup, ref.name)}"). A Workload's pod groups are immutable and so is the pod's workloadRef: the scheduler retries only when a Workload of that name is added, ` +
        `so the Workload must be recreated with that group (or the pod with another workloadRef).`,
      notes,
    };
  }
  if (!pg.policy?.gang) {
    return {
      ...base,
      ...basicPolicyAnswer(
        membersComplete,
        `${name}'s ${group} has the basic policy: GangScheduling lets the pod through (PreEnqueue and Permit act only on a gang policy), so it is scheduled on its own.`,
      ),
      notes,
    };
  }
  const minCount = pg.policy.gang.minCount;
  const all = members();
  const short = belowMinCount(`${name}'s ${group}`, "every pod of the group", minCount, all, membersComplete);
  if (short) return { ...base, ...short, notes };
  const have = all.length;
  const { placed, counted, stuck } = gangPlacement(all);
  if (placed < minCount) {
    return {
      ...base,
      ...gangPolicyFields(minCount, all, membersComplete),
      stage: "permit",
      message: MIN_COUNT_PERMIT_MESSAGE,
      detail: `${name}'s ${group} is a gang of minCount ${minCount} with ${have} pods, of which only ${placed} can be placed (${counted}): ` +
        `the pods that fit are assumed on a node and wait at Permit ("${MIN_COUNT_PERMIT_MESSAGE}") for ${GANG_PERMIT_TIMEOUT}, then are rejected ` +
        `("rejected due to timeout after waiting … at plugin GangScheduling") and retried; the gang needs ${minCount - placed} more of: ` +
        `${stuckMembersText(stuck)}.`,
      notes: [
        ...notes,
        `pods waiting at Permit hold their node's resources in the scheduler's cache (assumed, not bound), which the API does not show; and pods that fit each alone may not fit together`,
      ],
    };
  }
  return {
    ...base,
    ...gangPolicyFields(minCount, all, membersComplete),
    stage: "none",
    message: null,
    detail: `${name}'s ${group} is a gang of minCount ${minCount} with ${have} pods, ${placed} of which can be placed (${counted}): the gang can reach its quorum at Permit, ` +
      `so GangScheduling is not what holds this pod.`,
    notes: [...notes, ALONE_NOT_TOGETHER_NOTE],
  };
}

/** What the bundle tells of the Workload `name` in the pod's namespace. */
function stateOf(input: GangInput, name: string): GangReport["objectState"] {
  const ns = input.pod.metadata.namespace ?? "";
  if (input.workloads.some((w) => (w.metadata.namespace ?? "") === ns && w.metadata.name === name)) return "found";
  if (input.warnings.includes(workloadNotFoundWarning(ns, name))) return "not-found";
  if (input.warnings.some((w) => w.startsWith(`the Workload API is not served: list workloads.scheduling.k8s.io/v1alpha1 in namespace "${ns}"`))) return "api-not-served";
  if (input.warnings.some((w) => w.startsWith(`not allowed to read workloads: list workloads.scheduling.k8s.io in namespace "${ns}"`))) return "forbidden";
  return "not-collected";
}
