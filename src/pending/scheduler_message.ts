/**
 * The scheduler's FailedScheduling message: parse it into counted reasons, and write one in the scheduler's own
 * words from a per-node computation, so the two can be compared.
 *
 * Format: pkg/scheduler/framework/types.go `(*FitError).Error()`:
 * `0/<N> nodes are available:` + (` <PreFilter message>.`) + (` <histogram>.`) + (` <PostFilter message>.`), the histogram
 * only when no PreFilter message is (so after a PreFilter message the rest is PostFilter text), where the
 * histogram is `"<count> <reason>"` strings sorted with Go's sort.Strings (byte order) and joined by `, `; the
 * DefaultPreemption PostFilter message is `preemption: ` + a nested FitError (so it often ends with `..`), and other
 * PostFilter plugins may put text before it (`no new claims to deallocate, preemption: …`).
 *
 * Reason wordings by release (the parser accepts all; the writer picks one with {@link SchedulerWording}):
 * - VolumeBinding: `node(s) had volume node affinity conflict` (v1.10+), `node(s) didn't match PersistentVolume's node
 *   affinity` (v1.33+); also `node(s) didn't find available persistent volumes to bind`, `node(s) did not have enough
 *   free storage`, `node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)`, and the PreFilter
 *   message `pod has unbound immediate PersistentVolumeClaims`;
 * - TaintToleration: `node(s) had taints that the pod didn't tolerate` (< v1.18), `node(s) had taint {k: v}, that the
 *   pod didn't tolerate` (v1.18, kubernetes/kubernetes#87250), `node(s) had untolerated taint {k: v}` (v1.24, #109119),
 *   `node(s) had untolerated taint(s)` (v1.35, #134740, and v1.34.2 by its cherry-pick #135023: CHANGELOG-1.34);
 * - NodeAffinity: `node(s) didn't match node selector` (old), `node(s) didn't match Pod's node affinity/selector`;
 * - NodeUnschedulable: `node(s) were unschedulable`; VolumeZone: `node(s) had no available volume zone`.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Taint } from "../model/k8s.ts";

/** What a reason is about, independent of its wording. */
export type SchedulerReasonKind =
  | "volume-node-affinity"
  | "volume-bind"
  | "volume-zone"
  | "not-enough-storage"
  | "pv-not-exist"
  | "unbound-immediate-pvc"
  | "pvc-not-found"
  | "pvc-deleting"
  | "taint"
  | "node-affinity"
  | "scheduler-enforced-affinity"
  | "prefilter-result"
  | "node-declared-features"
  | "unschedulable"
  | "node-name"
  | "resources"
  | "ports"
  | "pod-affinity"
  | "pod-affinity-umbrella"
  | "topology-spread"
  | "volume-limits"
  | "volume-restrictions"
  | "dra"
  | "node-condition"
  | "preemption-not-helpful"
  | "preemption-no-victims"
  | "no-nodes"
  | "other";

/** One counted reason of a FailedScheduling message. */
export interface SchedulerReason {
  /** Number of nodes; for a PreFilter message (no count in the text) it is the total: every node is rejected. */
  count: number;
  /** The reason text as written by the scheduler, without the count. */
  reason: string;
  kind: SchedulerReasonKind;
  /** The message came from a PreFilter plugin (rejects all nodes at once; printed without a count). */
  preFilter?: boolean;
  /** The taint named by `untolerated taint {key: value}` wordings. */
  taint?: { key: string; value: string };
}

/** A parsed FailedScheduling message. */
export interface ParsedSchedulerMessage {
  /** N of `0/N nodes are available`; `null` when the message does not say (old "running filter plugin" form). */
  total: number | null;
  reasons: SchedulerReason[];
  /** The DefaultPreemption PostFilter part (`preemption: 0/3 nodes are available: 3 Preemption is not helpful…`). */
  preemption?: { total: number | null; reasons: SchedulerReason[] };
  /** Other sentences (PostFilter notes such as `no new claims to deallocate`). */
  notes: string[];
  /** The message as given. */
  raw: string;
}

/** Thrown when a message is not a FailedScheduling "nodes are available" message. */
export class SchedulerMessageParseError extends Error {
  override name = "SchedulerMessageParseError";
  constructor(message: string) {
    super(message);
  }
}

/**
 * The ResourceClaim a DynamicResources "not found" reason names (dynamicresources.go foreachPodResourceClaim, the
 * claim's Get error), in either release's words: `could not find ResourceClaim "NAMESPACE/NAME"` (v1.31+, the
 * scheduler's assume cache) or `resourceclaim.resource.k8s.io "NAME" not found` (v1.27–v1.30, the lister).
 * @param reason one reason of a FailedScheduling message.
 * @returns the claim's name, or null when the reason is not that.
 */
export function missingResourceClaimName(reason: string): string | null {
  const m = /^could not find ResourceClaim "(?:[^"/]*\/)?([^"/]+)"$/.exec(reason.trim()) ?? /^resourceclaim\.resource\.k8s\.io "([^"]+)" not found$/.exec(reason.trim());
  return m ? m[1] as string : null;
}

/**
 * A Permit plugin's wait that timed out: the framework rejects a pod still waiting when the plugin's timeout expires,
 * `rejected due to timeout after waiting <duration> at plugin <Plugin>` (framework/runtime waiting_pods_map.go
 * newWaitingPod; WaitOnPermit returns that status as is, and schedule_one.go writes its message as the FailedScheduling
 * event and the PodScheduled condition). The duration is Go's (`4m59.99s`): what was left of the plugin's timeout when
 * the pod began to wait (GangScheduling: the group's deadline, 5 minutes from the first pod that waited).
 * @param message a FailedScheduling message.
 * @returns the plugin and the duration as written, or null when the message is not that.
 */
export function permitTimeout(message: string): { plugin: string; waited: string } | null {
  const m = /rejected due to timeout after waiting (\S+) at plugin (\S+?)\.?$/.exec(message.trim());
  return m ? { plugin: m[2] as string, waited: m[1] as string } : null;
}

interface KindRule {
  kind: SchedulerReasonKind;
  re: RegExp;
}

const KIND_RULES: KindRule[] = [
  { kind: "volume-node-affinity", re: /had volume node affinity conflict|didn't match PersistentVolume's node affinity/i },
  { kind: "volume-bind", re: /didn't find available persistent volumes to bind/i },
  { kind: "volume-zone", re: /had no available volume zone/i },
  { kind: "not-enough-storage", re: /did not have enough free storage/i },
  // VolumeBinding's Filter; its PreFilter for a Lost claim; VolumeZone's PreFilter (v1.27+) for a missing PV
  { kind: "pv-not-exist", re: /bound to non-existent pv|bound to non-existent persistentvolume "|^persistentvolume "[^"]*" not found$/i },
  { kind: "unbound-immediate-pvc", re: /pod has unbound immediate PersistentVolumeClaims/i },
  { kind: "pvc-not-found", re: /persistentvolumeclaim "[^"]*" not found|waiting for ephemeral volume controller to create the persistentvolumeclaim/i },
  { kind: "pvc-deleting", re: /persistentvolumeclaim "[^"]*" is being deleted/i },
  // `node(s) didn't satisfy plugin(s) [X]` (framework, a Filter's status without its own reason): by the plugin named
  // nodes a PreFilterResult left out (schedule_one.go), or none kept (framework.go): VolumeBinding narrows to the nodes
  // of a bound local PersistentVolume
  { kind: "volume-node-affinity", re: /didn't satisfy plugin\(s\) \[(?:NodeAffinity )?VolumeBinding\]|didn't satisfy plugin VolumeBinding$/i },
  { kind: "taint", re: /didn't satisfy plugin\(s\) \[TaintToleration\]/i },
  { kind: "resources", re: /didn't satisfy plugin\(s\) \[NodeResourcesFit\]/i },
  { kind: "ports", re: /didn't satisfy plugin\(s\) \[NodePorts\]/i },
  { kind: "pod-affinity", re: /didn't satisfy plugin\(s\) \[InterPodAffinity\]/i },
  { kind: "topology-spread", re: /didn't satisfy plugin\(s\) \[PodTopologySpread\]/i },
  // NodeAffinity's PreFilter (errReasonConflict, plugins/nodeaffinity/node_affinity.go): every required term names
  // nodes by `matchFields metadata.name In`, and no name is in all of one term's lists; not InterPodAffinity's
  { kind: "node-affinity", re: /^pod affinity terms conflict$/i },
  // before v1.22 InterPodAffinity wrote this beside each specific reason: the same nodes, counted twice
  { kind: "pod-affinity-umbrella", re: /didn't match pod affinity\/anti-affinity$/i },
  { kind: "unschedulable", re: /didn't satisfy plugin\(s\) \[NodeUnschedulable\]/i },
  // VolumeRestrictions (plugins/volumerestrictions): ErrReasonDiskConflict, ErrReasonReadWriteOncePodConflict
  { kind: "volume-restrictions", re: /had no available disk|ReadWriteOncePod access mode/i },
  // DynamicResources (plugins/dynamicresources): claims not allocatable / not yet allocated / not found; with
  // DRAExtendedResource (v1.34+), `cannot fit resource` for an extended resource the node neither advertises nor gets
  // through a DeviceClass, and `cannot schedule extended resource claim` for the claim of an earlier cycle
  { kind: "dra", re: /cannot allocate all claims|resourceclaim|resource claim|waiting for resource driver|DynamicResources|device class \S+ does not exist|timed out trying to allocate devices|^cannot fit resource$/i },
  // NodeDeclaredFeatures' Filter (plugins/nodedeclaredfeatures, v1.35+ alpha): features the pod needs (inferred from
  // its spec) that the node does not list in status.declaredFeatures. v1.35 named them (`node declared features check
  // failed - unsatisfied requirements: A, B`); later releases write errReasonUnsatisfiedRequirements, `node(s) didn't
  // match Pod's required features`, without the names (the Filter no longer computes the difference)
  { kind: "node-declared-features", re: /^node declared features check failed(?: - unsatisfied requirements)?: \S|didn't match Pod's required features$/i },
  { kind: "taint", re: /untolerated taint|had taints? .*didn't tolerate|had taints that the pod didn't tolerate/i },
  // NodeAffinity's Filter (errReasonEnforced, plugins/nodeaffinity/node_affinity.go): the node affinity the scheduler
  // profile adds to every pod (NodeAffinityArgs.addedAffinity), tested before the pod's own; not in the pod's spec
  { kind: "scheduler-enforced-affinity", re: /didn't match scheduler-enforced node affinity/i },
  // The nodes a PreFilterResult left out, as schedulers from v1.24 wrote them before naming the plugin
  // (schedule_one.go findNodesThatFitPod; now `node(s) didn't satisfy plugin(s) [X]`, classified by X above)
  { kind: "prefilter-result", re: /^node is filtered out by the prefilter result$/i },
  { kind: "node-affinity", re: /didn't match Pod's node affinity|didn't match node selector|didn't satisfy plugin\(s\) \[NodeAffinity\]/i },
  { kind: "unschedulable", re: /were unschedulable/i },
  { kind: "node-name", re: /didn't match the requested (?:node name|hostname)/i },
  { kind: "resources", re: /^Insufficient |^Too many pods/i },
  { kind: "ports", re: /free ports/i },
  { kind: "pod-affinity", re: /pod affinity|anti-affinity/i },
  { kind: "topology-spread", re: /topology spread constraints/i },
  { kind: "volume-limits", re: /max volume count/i },
  { kind: "node-condition", re: /were not ready|had (?:disk|memory|pid) pressure|were out of disk|network unavailable/i },
  { kind: "preemption-not-helpful", re: /Preemption is not helpful/i },
  { kind: "preemption-no-victims", re: /No preemption victims found/i },
];

/**
 * Classifies one reason text (without its count).
 * @param reason e.g. `node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }`.
 * @returns the kind, and the taint when the text names one.
 */
export function classifyReason(reason: string): { kind: SchedulerReasonKind; taint?: { key: string; value: string } } {
  const rule = KIND_RULES.find((r) => r.re.test(reason));
  const kind = rule?.kind ?? "other";
  if (kind === "taint") {
    const m = /\{([^{}:]+): ?([^{}]*)\}/.exec(reason);
    if (m) return { kind, taint: { key: (m[1] as string).trim(), value: (m[2] as string).trim() } };
  }
  return { kind };
}

const HEAD = /^(\d+)\/(\d+) nodes are available(?::\s*|\s*$|\.\s*$)/;
// framework.go errors: `running "X" filter plugin: …` (and the older `… for pod "p"`), `running PreFilter plugin "X": …`
const PLUGIN_FORM = /running (?:"?[A-Za-z]+"? (?:pre)?filter plugin(?: for pod "[^"]*")?|PreFilter plugin "?[A-Za-z]+"?): (.*)$/i;

function stripEnd(s: string): string {
  return s.replace(/[\s.]+$/, "");
}

function parseBody(body: string, total: number | null): { reasons: SchedulerReason[]; notes: string[] } {
  const reasons: SchedulerReason[] = [];
  const notes: string[] = [];
  const sentences = stripEnd(body).split(/\.\s+/).map((s) => s.trim()).filter((s) => s.length > 0);
  let sawCounted = false;
  let sawPreFilter = false;
  for (const sentence of sentences) {
    // FitError.Error() writes no histogram after a PreFilter message (every node has that one status): what follows
    // is PostFilter text, e.g. DynamicResources' `no new claims to deallocate`
    if (sawPreFilter) {
      notes.push(stripEnd(sentence));
      continue;
    }
    // Items start with a count; split only before "<digits> " so "had taint {k: v}, that the pod…" stays whole.
    const items = sentence.split(/,\s+(?=\d+\s)/);
    for (const item of items) {
      const m = /^(\d+)\s+(.+)$/.exec(item.trim());
      if (m) {
        sawCounted = true;
        const reason = stripEnd(m[2] as string);
        reasons.push({ count: Number(m[1]), reason, ...classifyReason(reason) });
      } else if (!sawCounted && total !== null) {
        const reason = stripEnd(item.trim());
        reasons.push({ count: total, reason, preFilter: true, ...classifyReason(reason) });
        sawPreFilter = true;
      } else {
        notes.push(stripEnd(item.trim()));
      }
    }
  }
  return { reasons, notes };
}

/**
 * Parses a FailedScheduling message (any release's wording).
 * @param message the event message, e.g. `0/3 nodes are available: 3 node(s) had volume node affinity conflict.`
 * @returns total, the counted reasons, the preemption part and other notes.
 * @throws {SchedulerMessageParseError} when the message is neither `0/N nodes are available…`, `no nodes available
 *   to schedule pods`, nor `… running "X" filter plugin …: reason`; the error quotes the message.
 * @example
 * import { parseSchedulerMessage } from "./scheduler_message.ts";
 * parseSchedulerMessage("0/3 nodes are available: 3 node(s) had volume node affinity conflict.").reasons[0];
 * // { count: 3, reason: "node(s) had volume node affinity conflict", kind: "volume-node-affinity" }
 */
export function parseSchedulerMessage(message: string): ParsedSchedulerMessage {
  const raw = message;
  const text = message.trim().replace(/^\(combined from similar events\):\s*/, "").replace(/\s+/g, " ");
  if (/^no nodes available to schedule pods/i.test(text)) {
    return { total: 0, reasons: [{ count: 0, reason: "no nodes available to schedule pods", kind: "no-nodes" }], notes: [], raw };
  }
  const head = HEAD.exec(text);
  if (!head) {
    const plugin = PLUGIN_FORM.exec(text);
    if (plugin) {
      const reason = stripEnd(plugin[1] as string);
      return { total: null, reasons: [{ count: 0, reason, preFilter: true, ...classifyReason(reason) }], notes: [], raw };
    }
    throw new SchedulerMessageParseError(`not a FailedScheduling message: "${raw}"`);
  }
  const total = Number(head[2]);
  let rest = text.slice(head[0].length);
  let preemption: ParsedSchedulerMessage["preemption"];
  const pre = /(?:^|[.,]\s*)preemption:\s*/.exec(rest);
  if (pre) {
    const tail = rest.slice(pre.index + pre[0].length);
    rest = rest.slice(0, pre.index);
    const inner = HEAD.exec(tail);
    if (inner) {
      const innerTotal = Number(inner[2]);
      preemption = { total: innerTotal, reasons: parseBody(tail.slice(inner[0].length), innerTotal).reasons };
    } else {
      const reason = stripEnd(tail);
      preemption = { total: null, reasons: [{ count: 0, reason, ...classifyReason(reason) }] };
    }
  }
  const body = parseBody(rest, total);
  return { total, reasons: body.reasons, ...(preemption ? { preemption } : {}), notes: body.notes, raw };
}

/** Which release's wording to write reasons in. */
export interface SchedulerWording {
  /** `conflict`: "had volume node affinity conflict" (< v1.33); `pv`: "didn't match PersistentVolume's node affinity". */
  volumeNodeAffinity: "conflict" | "pv";
  /**
   * `taints`: "had taints that the pod didn't tolerate" (< v1.18); `taint-that`: "had taint {k: v}, that the pod
   * didn't tolerate" (v1.18-v1.23); `untolerated`: "had untolerated taint {k: v}" (v1.24-v1.34.1);
   * `untolerated-generic`: "had untolerated taint(s)" (v1.35, and v1.34.2+: kubernetes#134740, cherry-picked to
   * release-1.34 as #135023).
   */
  taint: "taints" | "taint-that" | "untolerated" | "untolerated-generic";
  /** `selector`: "didn't match node selector" (< v1.20); `affinity`: "didn't match Pod's node affinity/selector". */
  nodeAffinity: "selector" | "affinity";
  /**
   * How FailedScheduling counts the nodes a PreFilterResult leaves out (NodeAffinity's `matchFields metadata.name`,
   * VolumeBinding's local PersistentVolume), by release (pkg/scheduler/schedule_one.go findNodesThatFitPod and
   * framework/types.go FitError.Error):
   * - `uncounted`: not at all: the nodes never reach NodeToStatusMap and the reasons add up to fewer than N
   *   (v1.24 to v1.31, but for the releases of `filtered-out`);
   * - `filtered-out`: "node is filtered out by the prefilter result" (kubernetes#119779: v1.30.0, v1.30.1, and the
   *   backports in v1.29.5, v1.28.10, v1.27.14; removed again by kubernetes#125197 for its scheduling throughput,
   *   v1.30.2, v1.29.6, v1.28.11, v1.27.15 and v1.31);
   * - `plugins`: "node(s) didn't satisfy plugin(s) [X]", NodeToStatus' status of absent nodes (kubernetes#126022,
   *   v1.32+).
   */
  preFilterResult?: "plugins" | "filtered-out" | "uncounted";
}

/** The current (v1.35) wording. */
export const CURRENT_WORDING: SchedulerWording = {
  volumeNodeAffinity: "pv",
  taint: "untolerated-generic",
  nodeAffinity: "affinity",
  preFilterResult: "plugins",
};

/**
 * The wording a scheduler of a given release writes.
 * @param version a Kubernetes version such as `v1.13.1` (kubelet or control-plane version).
 * @returns the wording; {@link CURRENT_WORDING} when the version cannot be read. Where the patch release decides and
 *   the version has none (`v1.34`: {@link taintWordingUndetermined}), the wording of most of that minor's releases.
 */
export function wordingForVersion(version: string | undefined): SchedulerWording {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(version ?? "");
  if (!m) return { ...CURRENT_WORDING };
  const minor = Number(m[1]) > 1 ? 999 : Number(m[2]);
  const patch = m[3] === undefined ? undefined : Number(m[3]);
  const w: SchedulerWording = {
    volumeNodeAffinity: minor >= 33 ? "pv" : "conflict",
    taint: taintWording(minor, patch),
    nodeAffinity: minor >= 20 ? "affinity" : "selector",
  };
  const pr = preFilterResultWording(minor, m[3] === undefined ? undefined : Number(m[3]));
  if (pr) w.preFilterResult = pr;
  return w;
}

/**
 * TaintToleration's reason by release (plugins/tainttoleration/taint_toleration.go `Filter`): the taint named from
 * v1.18, in the `untolerated taint {k: v}` form from v1.24, and no longer named from v1.35 and v1.34.2
 * (kubernetes#134740, cherry-picked to release-1.34 as #135023, CHANGELOG-1.34 v1.34.2: "Pod statuses no longer include
 * specific taint keys or values"). A v1.34 without its patch release is taken as most of 1.34's releases: v1.34.2+.
 */
function taintWording(minor: number, patch: number | undefined): SchedulerWording["taint"] {
  if (minor >= 35 || (minor === 34 && (patch === undefined || patch >= 2))) return "untolerated-generic";
  return minor >= 24 ? "untolerated" : minor >= 18 ? "taint-that" : "taints";
}

/**
 * Whether the TaintToleration wording of a release is undetermined: a v1.34 version without its patch release, where
 * v1.34.0 and v1.34.1 name the taint (`had untolerated taint {k: v}`) and v1.34.2+ do not (`had untolerated taint(s)`).
 * @param version a Kubernetes version such as `v1.34` (the newest kubelet's).
 * @returns true only for a 1.34 version without a patch number.
 */
export function taintWordingUndetermined(version: string | undefined): boolean {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(version ?? "");
  return !!m && Number(m[1]) === 1 && Number(m[2]) === 34 && m[3] === undefined;
}

/**
 * The releases of each {@link SchedulerWording.preFilterResult}; undefined before v1.24 (no PreFilterResult). A
 * version without its patch release, where the patch decides, is taken as most of that minor's releases: uncounted.
 */
function preFilterResultWording(minor: number, patch: number | undefined): SchedulerWording["preFilterResult"] {
  if (minor < 24) return undefined;
  if (minor >= 32) return "plugins";
  // the patch release that carried kubernetes#119779's "filtered out" status, and the one that removed it, per minor
  const window: Record<number, [number, number]> = { 27: [14, 15], 28: [10, 11], 29: [5, 6], 30: [0, 2] };
  const w = window[minor];
  if (!w || patch === undefined) return "uncounted";
  return patch >= w[0] && patch < w[1] ? "filtered-out" : "uncounted";
}

/**
 * The wording a message was written in, for each kind of reason it contains; kinds it does not show are left out.
 * @param parsed a parsed FailedScheduling message.
 */
export function wordingOfMessage(parsed: ParsedSchedulerMessage): Partial<SchedulerWording> {
  const w: Partial<SchedulerWording> = {};
  for (const r of parsed.reasons) {
    if (r.kind === "volume-node-affinity") w.volumeNodeAffinity = /conflict/.test(r.reason) ? "conflict" : "pv";
    if (r.kind === "taint") {
      if (/untolerated taint\(s\)/.test(r.reason)) w.taint = "untolerated-generic";
      else if (/untolerated taint \{/.test(r.reason)) w.taint = "untolerated";
      else if (/had taint \{/.test(r.reason)) w.taint = "taint-that";
      else w.taint = "taints";
    }
    if (r.kind === "node-affinity" && !/didn't satisfy plugin/.test(r.reason)) w.nodeAffinity = /node selector/.test(r.reason) ? "selector" : "affinity";
    if (r.kind === "prefilter-result") w.preFilterResult = "filtered-out";
    else if (/didn't satisfy plugin\(s\) \[/.test(r.reason)) w.preFilterResult = "plugins";
  }
  return w;
}

/**
 * Writes one reason in a given wording.
 * @param kind the reason's kind; kinds the analysis computes have exact texts, others return `undefined`.
 * @param wording which release's words.
 * @param taint the taint for `taint` wordings that name it.
 */
export function reasonText(kind: SchedulerReasonKind, wording: SchedulerWording, taint?: Taint): string | undefined {
  switch (kind) {
    case "volume-node-affinity":
      return wording.volumeNodeAffinity === "pv"
        ? "node(s) didn't match PersistentVolume's node affinity"
        : "node(s) had volume node affinity conflict";
    case "volume-bind":
      return "node(s) didn't find available persistent volumes to bind";
    case "volume-zone":
      return "node(s) had no available volume zone";
    case "not-enough-storage":
      return "node(s) did not have enough free storage";
    case "pv-not-exist":
      return "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
    case "unbound-immediate-pvc":
      return "pod has unbound immediate PersistentVolumeClaims";
    case "taint": {
      const k = taint?.key ?? "";
      const v = taint?.value ?? "";
      switch (wording.taint) {
        case "taints":
          return "node(s) had taints that the pod didn't tolerate";
        case "taint-that":
          return `node(s) had taint {${k}: ${v}}, that the pod didn't tolerate`;
        case "untolerated":
          return `node(s) had untolerated taint {${k}: ${v}}`;
        default:
          return "node(s) had untolerated taint(s)";
      }
    }
    case "node-affinity":
      return wording.nodeAffinity === "selector"
        ? "node(s) didn't match node selector"
        : "node(s) didn't match Pod's node affinity/selector";
    case "unschedulable":
      return "node(s) were unschedulable";
    default:
      return undefined;
  }
}

/**
 * Writes a FailedScheduling message the way FitError.Error() does (without the PostFilter part).
 * @param total number of nodes the scheduler considered.
 * @param perNode the reasons of every rejected node (a node may contribute several, e.g. two VolumeBinding reasons).
 * @param preFilter a PreFilter message that rejected every node (then no per-node histogram is written).
 * @returns e.g. `0/3 nodes are available: 3 node(s) had volume node affinity conflict.`
 */
export function formatSchedulerMessage(total: number, perNode: string[][], preFilter?: string): string {
  let msg = `0/${total} nodes are available:`;
  if (preFilter) msg += ` ${preFilter}.`;
  const histogram = new Map<string, number>();
  for (const reasons of perNode) for (const r of reasons) histogram.set(r, (histogram.get(r) ?? 0) + 1);
  // Go sort.Strings compares bytes; for these ASCII texts that is UTF-16 code-unit order.
  const items = [...histogram].map(([r, n]) => `${n} ${r}`).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (items.length > 0) msg += ` ${items.join(", ")}.`;
  return msg;
}
