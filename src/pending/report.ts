/**
 * The PendingReport: the answer to `kubectl netpath pvc/NAME --why-pending` / `pod/NAME --why-pending`, a plain JSON
 * document rendered as is by `-o json|yaml` (docs in the field comments below; field names are stable within
 * `apiVersion: netpath.kubectl.io/v1alpha1`). Every `null` means "absent or unknown", never "empty string".
 *
 * Shape:
 * ```
 * kind: PendingReport
 * apiVersion: netpath.kubectl.io/v1alpha1
 * question: {kind, namespace, name}
 * answer: one sentence
 * nodesListed: bool                 # false when the bundle holds no Node objects
 * nodes: [NodeState]                # every node: zone, region, Ready, cordoned, NoSchedule/NoExecute taints
 * claims: [ClaimReport]             # the claim asked about first, then the other claims of the pods involved
 *   state: {status, reason, message, event?}
 *   staticCandidates: [{volume, mismatches: [{field, want, got}]}]
 *   volume: VolumeReport | null     # the bound PV: terms and a node × term table (`nodes`)
 * pods: [PodReport]                 # the pod asked about, or the pods that mount the claim
 *   nodes: [PodNodeRow]             # node × rule table: cordoned, taints, nodeSelector, nodeAffinity, one row
 *                                   # per claim (volume), volumeZone, ready; verdict and the scheduler's reasons
 *   summary: {message, reasons, feasibleNodes, …}   # "0/3 nodes are available: 3 node(s) had volume node …"
 *   gang?: {via, workload, podGroup, stage: pre-enqueue|permit|pod-group-cycle|none|undecided, message, members, …}  # spec.workloadRef (v1.35), spec.schedulingGroup (v1.36+)
 *   lastFailedScheduling, reconciliation: {status: agree|disagree|no-event|not-applicable, details}
 * findings: [Finding]               # root-cause hints and data gaps, each with evidence
 * ```
 *
 * Runtime-neutral: no I/O, types only.
 * @module
 */
import type { PodResourceClaim } from "./filters/dra.ts";
import type { GangReport } from "./gang.ts";
import type { NodeSelector, Toleration } from "../model/k8s.ts";
import type {
  MapSelectorEvaluation,
  NodeSelectorEvaluation,
  TopologySelectorTerm,
} from "./node_selector.ts";
import type { ParsedSchedulerMessage, SchedulerReasonKind, SchedulerWording } from "./scheduler_message.ts";

/** `apiVersion` of every PendingReport. */
export const PENDING_REPORT_API_VERSION = "netpath.kubectl.io/v1alpha1";
/** `kind` of every PendingReport. */
export const PENDING_REPORT_KIND = "PendingReport";

/** The question: which claim or pod, in which namespace. */
export interface PendingQuestion {
  kind: "pvc" | "pod";
  namespace: string;
  name: string;
}

/** A reference to an API object. `namespace` is absent for cluster-scoped objects. */
export interface ObjectRef {
  kind: string;
  namespace?: string;
  name: string;
}

/** One Event, reduced to what a report shows. */
export interface EventSummary {
  /** `Normal` / `Warning`. */
  type: string | null;
  reason: string;
  message: string;
  /** How many times it was seen (`count`, or `series.count`); `null` when the event does not say. */
  count: number | null;
  /** ISO time it was last seen (lastTimestamp, else eventTime, else firstTimestamp). */
  lastSeen: string | null;
  /** Reporting component, e.g. `default-scheduler`, `persistentvolume-controller`. */
  source: string | null;
  object: ObjectRef;
}

/** A StorageClass as far as binding and provisioning care. */
export interface StorageClassSummary {
  name: string;
  provisioner: string;
  /** `Immediate` when the field is absent (the API default). */
  volumeBindingMode: "Immediate" | "WaitForFirstConsumer";
  parameters: Record<string, string>;
  allowedTopologies: TopologySelectorTerm[];
  /** Annotated `storageclass.kubernetes.io/is-default-class: "true"` (or the beta annotation). */
  isDefault: boolean;
}

/** Why a claim is in its state. */
export type ClaimReasonCode =
  /** Bound to a PersistentVolume that is in the bundle. */
  | "Bound"
  /** Bound (or pre-bound) to a PersistentVolume the bundle does not hold. */
  | "VolumeMissing"
  /** Phase Lost: its PersistentVolume was deleted. */
  | "Lost"
  /** No storageClassName and no default StorageClass: only PVs without a class can bind it. */
  | "NoStorageClass"
  /** storageClassName names a StorageClass that does not exist. */
  | "StorageClassNotFound"
  /** volumeBindingMode WaitForFirstConsumer and no pod has been scheduled for it yet. */
  | "WaitForFirstConsumer"
  /**
   * volumeBindingMode WaitForFirstConsumer, and every pod that uses it names its node in `spec.nodeName`: the scheduler
   * never sees them, so nothing writes `volume.kubernetes.io/selected-node` and the claim is never provisioned (or bound).
   */
  | "NodeNameBypassesScheduler"
  /** The provisioner reports ProvisioningFailed. */
  | "ProvisioningFailed"
  /** Waiting for the provisioner (no failure reported). */
  | "Provisioning"
  /** Static binding: no PersistentVolume satisfies the claim (see `staticCandidates`). */
  | "NoMatchingVolume"
  /** Static binding: a PersistentVolume satisfies the claim (or is pre-bound to it); the PV controller binds them. */
  | "Binding"
  /** The claim is referenced by a pod but does not exist. */
  | "NotFound";

/** The claim's state and its reason. */
export interface ClaimState {
  status: "Bound" | "Pending" | "Lost" | "Missing";
  reason: ClaimReasonCode;
  /** One or two sentences, with the object names. */
  message: string;
  /** The event that shows the reason (ProvisioningFailed, WaitForFirstConsumer, FailedBinding …). */
  event?: EventSummary;
}

/** Why one PersistentVolume cannot bind a claim by static binding. */
export interface VolumeMismatch {
  field: "claimRef" | "phase" | "storageClassName" | "capacity" | "accessModes" | "volumeMode" | "selector" | "deletionTimestamp" | "volumeAttributesClassName";
  /** What the claim needs, e.g. `2Gi`, `[ReadWriteOnce]`. */
  want: string;
  /** What the volume has. */
  got: string;
}

/** A PersistentVolume considered for static binding and its mismatches (empty when it would bind). */
export interface StaticCandidate {
  volume: string;
  mismatches: VolumeMismatch[];
}

/** One node's row of a PersistentVolume's node × term table. */
export interface VolumeNodeRow {
  node: string;
  matched: boolean;
  /** Every nodeSelectorTerm and requirement, with the node's actual label values. */
  evaluation: NodeSelectorEvaluation;
}

/** A PersistentVolume and where it can be used. */
export interface VolumeReport {
  name: string;
  /** The PV object is in the bundle. */
  found: boolean;
  phase: string | null;
  storageClassName: string | null;
  capacity: string | null;
  accessModes: string[];
  /** `Filesystem` when absent. */
  volumeMode: string;
  claimRef: ObjectRef | null;
  /** Its zone / region labels (topology.kubernetes.io/* and failure-domain.beta.kubernetes.io/*). */
  topologyLabels: Record<string, string>;
  /** The volume source: `azureDisk`, `csi:disk.csi.azure.com`, `local`, `hostPath` … */
  source: string | null;
  /** `spec.nodeAffinity.required`; `null` when the PV has none (it can then be used on every node). */
  nodeAffinity: NodeSelector | null;
  /** Each term as `kubectl describe pv` prints it: `key in [a], key2 in [b]`. */
  terms: string[];
  /** Node × term table, one row per node (empty without Node objects or node affinity). */
  nodes: VolumeNodeRow[];
  /** Nodes whose labels satisfy the node affinity. */
  matchingNodes: string[];
}

/** A claim, its StorageClass, its state and its volume. */
export interface ClaimReport {
  namespace: string;
  name: string;
  /** The PVC object is in the bundle. */
  found: boolean;
  phase: string | null;
  /** Effective class (beta annotation `volume.beta.kubernetes.io/storage-class`, else spec); `null` when unset. */
  storageClassName: string | null;
  storageClass: StorageClassSummary | null;
  request: { storage: string | null; accessModes: string[]; volumeMode: string };
  volumeName: string | null;
  /** Annotation `volume.kubernetes.io/selected-node` (set by the scheduler for WaitForFirstConsumer). */
  selectedNode: string | null;
  state: ClaimState;
  /** PersistentVolumes considered for static binding, best first; empty unless static binding is what is pending. */
  staticCandidates: StaticCandidate[];
  volume: VolumeReport | null;
  /** Events about the claim, oldest first. */
  events: EventSummary[];
}

/** A node as the pending analysis sees it. */
export interface NodeState {
  name: string;
  /** topology.kubernetes.io/zone, else failure-domain.beta.kubernetes.io/zone. */
  zone: string | null;
  region: string | null;
  /** Ready condition status; `Unknown` when the node reports none. */
  ready: "True" | "False" | "Unknown";
  /** `spec.unschedulable` (kubectl cordon). */
  cordoned: boolean;
  /** NoSchedule / NoExecute taints, `key=value:Effect`. */
  taints: string[];
  kubeletVersion: string | null;
}

/** The rules of a pod's node × rule table, in the scheduler's filter order. */
export type RuleName =
  | "cordoned"
  | "taints"
  | "nodeSelector"
  | "nodeAffinity"
  | "hostPorts"
  | "resources"
  | "volumeRestrictions"
  | "volumeLimits"
  | "volume"
  | "volumeZone"
  | "topologySpread"
  | "podAffinity"
  | "dra"
  | "ready";

/** One cell of a pod's node × rule table. */
export interface RuleCheck {
  rule: RuleName;
  /** The scheduler plugin that enforces it; `null` for `ready`, which the scheduler does not filter on directly. */
  plugin:
    | "NodeUnschedulable"
    | "TaintToleration"
    | "NodeAffinity"
    | "NodePorts"
    | "NodeResourcesFit"
    | "VolumeRestrictions"
    | "NodeVolumeLimits"
    | "VolumeBinding"
    | "VolumeZone"
    | "PodTopologySpread"
    | "InterPodAffinity"
    | "DynamicResources"
    | null;
  passed: boolean;
  /** Words for the cell: `term 0 failed: zone "southeastasia-1" is not in [0]`. */
  detail: string;
  /** For `volume` rows: the claim and its volume. */
  claim?: string;
  volume?: string;
  /** For nodeAffinity and volume rows: the full evaluation. */
  evaluation?: NodeSelectorEvaluation;
  /** For the nodeSelector row. */
  selector?: MapSelectorEvaluation;
  /** For the taints row: untolerated NoSchedule/NoExecute taints. */
  untoleratedTaints?: string[];
}

/** One node's row of a pod's node × rule table. */
export interface PodNodeRow {
  node: string;
  checks: RuleCheck[];
  /** Passes every filter this analysis models. */
  fits: boolean;
  /** The first filter (in scheduler order) that rejects the node, with the reasons it reports; `null` if it fits. */
  rejectedBy: {
    plugin: string;
    reasons: string[];
    /**
     * The scheduler's FailedScheduling message does not count this node: a node a PreFilterResult leaves out, in the
     * releases that record no status for it (v1.24 to v1.31 but v1.30.0–v1.30.1 and three backports; see
     * SchedulerWording.preFilterResult in scheduler_message.ts).
     */
    uncounted?: true;
  } | null;
}

/** A claim as one pod uses it. */
export interface PodClaimUse {
  /** The pod's volume name. */
  volume: string;
  claim: string;
  found: boolean;
  /** Fully bound (volumeName set and bind completed). */
  bound: boolean;
  /** How the scheduler treats it: bound, delayed (WaitForFirstConsumer, unbound), immediate (unbound). */
  binding: "bound" | "delayed" | "immediate" | "missing";
  volumeName: string | null;
}

/** The scheduler's view computed from the bundle. */
export interface SchedulingSummary {
  /** In the scheduler's own words: `0/3 nodes are available: 3 node(s) had volume node affinity conflict.` */
  message: string;
  total: number;
  feasibleNodes: string[];
  /** PreFilter message that rejected every node, if any (`pod has unbound immediate PersistentVolumeClaims`). */
  preFilter: string | null;
  /** The histogram behind `message`. */
  reasons: { count: number; reason: string; kind: SchedulerReasonKind }[];
  /** The release wording used (from the event when it has one, else from the nodes' kubelet version). */
  wording: SchedulerWording;
}

/** The last FailedScheduling event of a pod, parsed. */
export interface FailedSchedulingEvent extends EventSummary {
  /** `null` when the message could not be parsed (then `parseError` says why). */
  parsed: ParsedSchedulerMessage | null;
  parseError?: string;
}

/** Whether the computation agrees with the scheduler's last word. */
export interface Reconciliation {
  status: "agree" | "disagree" | "no-event" | "not-applicable";
  details: string[];
}

/** A pod that mounts the claim (or the pod asked about) and where it can run. */
export interface PodReport {
  namespace: string;
  name: string;
  phase: string | null;
  /** `spec.nodeName`: set once scheduled. */
  nodeName: string | null;
  /**
   * `spec.nodeName` names a node that is not among the bundle's Node objects (set only when the bundle lists nodes):
   * no kubelet runs the pod, and kube-controller-manager's pod garbage collector deletes it
   * (pkg/controller/podgc/gc_controller.go `gcOrphaned`). The node × rule table and the summary are then left out
   * (finding `pod-node-missing`).
   */
  nodeMissing?: true;
  schedulerName: string;
  /**
   * `status.nominatedNodeName`, when a preemption nominated the pod to a node (DefaultPreemption's PostFilter): the
   * scheduler places it there once the lower-priority pods it preempted are gone (finding
   * `preemption-victims-terminating`).
   */
  nominatedNodeName?: string;
  /** `spec.schedulingGates` names, when any: the scheduler does not try the pod until they are gone (v1.30 GA). */
  schedulingGates?: string[];
  claims: PodClaimUse[];
  nodeSelector: Record<string, string>;
  requiredNodeAffinity: NodeSelector | null;
  tolerations: Toleration[];
  /** PodTopologySpread: each DoNotSchedule constraint's matching pods per domain (absent without one). */
  topologySpread?: string[];
  /** Dynamic Resource Allocation: the pod's ResourceClaims and their state (absent when it uses none). */
  resourceClaims?: PodResourceClaim[];
  /**
   * Gang scheduling (KEP-4671): where kube-scheduler's GangScheduling plugin holds a pod with `spec.workloadRef` (v1.35,
   * src/pending/gang.ts) or `spec.schedulingGroup` (v1.36+, src/pending/pod_group.ts); absent without either, and for
   * a pod already bound.
   */
  gang?: GangReport;
  /** Node × rule table (empty without Node objects, or when the pod is bound to a node they do not include: `nodeMissing`). */
  nodes: PodNodeRow[];
  /** `null` when the bundle has no Node objects, or when the pod is bound to a node they do not include (`nodeMissing`). */
  summary: SchedulingSummary | null;
  /**
   * What the verdicts rest on that the bundle does not hold, and which setting or fact decides it: the scheduler's
   * release where its behaviour changed (taken from the newest kubelet), its configuration (KubeSchedulerConfiguration).
   * Absent when nothing is assumed.
   */
  notes?: string[];
  lastFailedScheduling: FailedSchedulingEvent | null;
  reconciliation: Reconciliation;
}

/** Stable identifiers of findings. */
export type FindingId =
  | "nodes-missing"
  | "volume-missing"
  | "claim-missing"
  | "no-node-affinity"
  | "fault-domain-zone-values"
  | "label-key-missing"
  | "empty-zone-value"
  | "volume-nodes-unusable"
  | "volume-node-gone"
  | "claims-in-different-zones"
  | "pod-affinity-vs-volume"
  | "immediate-binding-multizone"
  | "allowed-topologies-exclude-all"
  | "no-storage-class"
  | "storage-class-not-found"
  | "provisioning-failed"
  | "wait-for-first-consumer"
  | "no-matching-volume"
  | "event-disagrees"
  | "pod-scheduled"
  /** The pod's spec.nodeName names a node the bundle's (listed) Node objects do not include. */
  | "pod-node-missing"
  | "volume-attributes-class-missing"
  | "preemption-never"
  | "device-class-missing"
  | "resource-claim-missing"
  | "resource-claim-unknown"
  | "preemption-victims-terminating"
  | "node-name-bypasses-scheduler"
  /** The collection could not list the cluster's pods (RBAC): the checks that count the pods on each node saw none. */
  | "pods-not-listed"
  /** GangScheduling holds the pod (PreEnqueue or Permit), or the bundle lacks what decides whether it does. */
  | "gang-scheduling";

/** A root-cause hint or a data gap, with the evidence that shows it. */
export interface Finding {
  id: FindingId;
  severity: "error" | "warning" | "info";
  title: string;
  detail: string;
  /** Object references and quoted rules, e.g. `PersistentVolume pvc-0a20…: failure-domain.beta.kubernetes.io/zone in [0]`. */
  evidence: string[];
  suggestion?: string;
}

/** The whole answer. */
export interface PendingReport {
  kind: typeof PENDING_REPORT_KIND;
  apiVersion: typeof PENDING_REPORT_API_VERSION;
  question: PendingQuestion;
  /** One sentence answering the question. */
  answer: string;
  /** The bundle held Node objects. */
  nodesListed: boolean;
  nodes: NodeState[];
  claims: ClaimReport[];
  pods: PodReport[];
  findings: Finding[];
  /**
   * The bundle's warnings (`Bundle.warnings`, the lines stderr prints as `warning: …`): reads the collection could not
   * make (RBAC forbade listing pods, namespaces, nodes, getting a ResourceClaim, …), objects that were gone, and files
   * or keys ignored while reading a bundle. The answer rests on what was read; those that change a verdict are also a
   * finding or a pod's note (e.g. `pods-not-listed`). Absent when there is none.
   */
  warnings?: string[];
}
