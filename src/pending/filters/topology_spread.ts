/**
 * The PodTopologySpread filter of kube-scheduler (pkg/scheduler/framework/plugins/podtopologyspread, filtering.go and
 * common.go, v1.27–v1.35, where minDomains, nodeAffinityPolicy/nodeTaintsPolicy and matchLabelKeys are on by
 * default): for each `whenUnsatisfiable: DoNotSchedule` constraint of the pending pod, can it land on a node without
 * the skew exceeding `maxSkew`?
 *
 * PreFilter (`calPreFilterState`), over every node of the bundle:
 * - a node counts only when it has the topologyKey of every constraint (`nodeLabelsMatchSpreadConstraints`), and, per
 *   constraint, when it passes the constraint's node inclusion policies: `nodeAffinityPolicy` (default Honor: the
 *   pod's nodeSelector and required node affinity must match the node) and `nodeTaintsPolicy` (default Ignore; Honor:
 *   the node must have no untolerated NoSchedule/NoExecute taint);
 * - the domain's count is the number of pods on its nodes in the pod's namespace, not terminating
 *   (`deletionTimestamp` unset), that the constraint's selector matches; the selector is `labelSelector` (nil matches
 *   nothing) plus, for each key of `matchLabelKeys`, the pending pod's value of that label (when it has the label);
 * - the global minimum is the smallest count among the domains, or 0 when fewer domains than `minDomains`
 *   (default 1) exist.
 *
 * Filter, per node and constraint in order: no topologyKey label → `node(s) didn't match pod topology spread
 * constraints (missing required label)` (UnschedulableAndUnresolvable); `count(domain) + selfMatch − min > maxSkew`
 * → `node(s) didn't match pod topology spread constraints`, where selfMatch is 1 when the selector matches the pending
 * pod's own labels. ScheduleAnyway constraints only score, and the scheduler's default constraints are all
 * ScheduleAnyway, so neither filters.
 *
 * The counts are over the pods the bundle holds: a live run lists the cluster's non-terminal pods once. Pods a
 * preemption nominated to the node being checked count in its domain ({@link topologySpreadFilterWithNominated}).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { LabelSelector, Node, Pod, TopologySpreadConstraint } from "../../model/k8s.ts";
import { isEmptySelector, labelSelectorMatches, selectorText } from "../../model/label_selector.ts";
import { evaluateNodeSelector, evaluateNodeSelectorMap } from "../node_selector.ts";
import { evaluateTaints } from "../taints.ts";
import { nodeFacts } from "../context.ts";

/** The scheduler's reason when the skew would exceed maxSkew (podtopologyspread ErrReasonConstraintsNotMatch). */
export const SPREAD_REASON = "node(s) didn't match pod topology spread constraints";
/** The scheduler's reason when the node lacks a topologyKey (ErrReasonNodeLabelNotMatch). */
export const SPREAD_LABEL_REASON = "node(s) didn't match pod topology spread constraints (missing required label)";

/** One DoNotSchedule constraint with its defaults applied and its domains counted. */
export interface SpreadConstraintState {
  /** Index in the pod's `topologySpreadConstraints`. */
  index: number;
  topologyKey: string;
  maxSkew: number;
  minDomains: number;
  nodeAffinityPolicy: "Honor" | "Ignore";
  nodeTaintsPolicy: "Honor" | "Ignore";
  /** labelSelector with matchLabelKeys merged in. */
  selector: LabelSelector | null;
  /** Domain (topology value) → matching pods counted in it. */
  counts: Map<string, number>;
  /** The global minimum used for the skew (0 when fewer domains than minDomains). */
  minMatch: number;
  /** Whether the pending pod's own labels match the selector (selfMatch 1). */
  selfMatch: boolean;
  /**
   * The selector is empty and non-nil (`labelSelector: {}`, no matchLabelKeys added): it matches every pod, but the
   * schedulers of v1.27 (kubernetes#116607) until kubernetes#141340 (merged 2026-08-12, in v1.38) count none for it
   * (`countPodsMatchSelector`: `if selector.Empty() { return 0 }`). "counted-none": the cluster's version is in that
   * range, its existing pods are not counted; "version-unknown": counted, and the detail says what decides it.
   */
  emptySelector?: "counted-none" | "version-unknown";
}

/**
 * How a scheduler of `version` (e.g. "v1.33.4"; undefined: unknown) counts pods for an empty, non-nil labelSelector:
 * none from v1.27 until v1.38 (kubernetes#116607, fixed by kubernetes#141340), every pod before and after.
 */
function emptySelectorCounting(version: string | undefined): "all" | "counted-none" | "version-unknown" {
  const m = /^v?(\d+)\.(\d+)/.exec(version ?? "");
  if (!m) return "version-unknown";
  const minor = Number(m[1]) === 1 ? Number(m[2]) : Infinity;
  return minor >= 27 && minor < 38 ? "counted-none" : "all";
}

/** The PreFilter state of one pod: its DoNotSchedule constraints. */
export interface SpreadState {
  constraints: SpreadConstraintState[];
}

/** The verdict of one node. */
export interface SpreadVerdict {
  passed: boolean;
  /** The scheduler's reason when it fails. */
  reason?: string;
  /** One clause per constraint checked: `zone=a: 3 matching + 1 (self) − min 1 = skew 3 > maxSkew 1`. */
  detail: string;
}

function mergedSelector(c: TopologySpreadConstraint, pod: Pod): LabelSelector | null {
  const base = c.labelSelector ?? null;
  const extra: Record<string, string> = {};
  for (const k of c.matchLabelKeys ?? []) {
    const v = pod.metadata.labels?.[k];
    if (v !== undefined) extra[k] = v;
  }
  if (Object.keys(extra).length === 0) return base;
  // mergeLabelSetWithSelector: SelectorFromSet(matchLabels) plus the selector's requirements (nil adds none)
  return { matchLabels: { ...(base?.matchLabels ?? {}), ...extra }, matchExpressions: base?.matchExpressions ?? [] };
}

function requiredNodeAffinityMatches(pod: Pod, node: Node): boolean {
  const sel = pod.spec?.nodeSelector;
  if (sel && Object.keys(sel).length > 0 && !evaluateNodeSelectorMap(sel, node.metadata.labels ?? {}).matched) return false;
  const req = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return !req || evaluateNodeSelector(req, nodeFacts(node)).matched;
}

/**
 * The PreFilter state of `pod`, or `null` when it has no DoNotSchedule constraint (the plugin skips it).
 * @param pod the pending pod.
 * @param nodes every node of the bundle.
 * @param podsByNode node name → its non-terminal pods (context.ts `indexPodsByNode`); terminating ones are skipped.
 * @param version the scheduler's release as far as the bundle tells (the newest kubelet), e.g. "v1.33.4"; it decides how
 *   an empty labelSelector counts (kubernetes#141339).
 */
export function topologySpreadState(pod: Pod, nodes: readonly Node[], podsByNode: ReadonlyMap<string, readonly Pod[]>, version?: string): SpreadState | null {
  const own = (pod.spec?.topologySpreadConstraints ?? []).map((c, index) => ({ c, index }))
    .filter(({ c }) => c.whenUnsatisfiable === "DoNotSchedule");
  if (own.length === 0) return null;
  const ns = pod.metadata.namespace ?? "";
  const constraints: SpreadConstraintState[] = own.map(({ c, index }) => {
    const selector = mergedSelector(c, pod);
    return {
      index,
      topologyKey: c.topologyKey,
      maxSkew: c.maxSkew,
      minDomains: c.minDomains ?? 1,
      nodeAffinityPolicy: c.nodeAffinityPolicy ?? "Honor",
      nodeTaintsPolicy: c.nodeTaintsPolicy ?? "Ignore",
      selector,
      counts: new Map(),
      minMatch: 0,
      selfMatch: labelSelectorMatches(selector, pod.metadata.labels, "nothing"),
      ...(isEmptySelector(selector) && emptySelectorCounting(version) !== "all" ? { emptySelector: emptySelectorCounting(version) as "counted-none" | "version-unknown" } : {}),
    };
  });
  const affinityOk = new Map<string, boolean>();
  for (const node of nodes) {
    const labels = node.metadata.labels ?? {};
    if (!constraints.every((c) => Object.prototype.hasOwnProperty.call(labels, c.topologyKey))) continue;
    const onNode = (podsByNode.get(node.metadata.name) ?? []).filter((p) => p !== pod && !p.metadata.deletionTimestamp && (p.metadata.namespace ?? "") === ns);
    for (const c of constraints) {
      if (!nodeIncluded(c, pod, node, affinityOk)) continue;
      const value = labels[c.topologyKey] as string;
      const n = c.emptySelector === "counted-none" ? 0 : onNode.filter((p) => labelSelectorMatches(c.selector, p.metadata.labels, "nothing")).length;
      c.counts.set(value, (c.counts.get(value) ?? 0) + n);
    }
  }
  for (const c of constraints) c.minMatch = minMatchOf(c);
  return { constraints };
}

/** The global minimum of a constraint: the smallest domain count, 0 with fewer domains than minDomains. */
function minMatchOf(c: SpreadConstraintState): number {
  const min = c.counts.size === 0 ? Number.MAX_SAFE_INTEGER : Math.min(...c.counts.values());
  return c.counts.size < c.minDomains ? 0 : min;
}

/**
 * Whether `node` passes a constraint's node inclusion policies for `pod` (`matchNodeInclusionPolicies`):
 * nodeAffinityPolicy Honor → the pod's nodeSelector and required node affinity match it (cached per node name in
 * `affinityOk`); nodeTaintsPolicy Honor → no untolerated NoSchedule/NoExecute taint.
 */
function nodeIncluded(c: SpreadConstraintState, pod: Pod, node: Node, affinityOk: Map<string, boolean>): boolean {
  if (c.nodeAffinityPolicy === "Honor") {
    let ok = affinityOk.get(node.metadata.name);
    if (ok === undefined) affinityOk.set(node.metadata.name, ok = requiredNodeAffinityMatches(pod, node));
    if (!ok) return false;
  }
  return !(c.nodeTaintsPolicy === "Honor" && evaluateTaints(node.spec?.taints, pod.spec?.tolerations).first);
}

/**
 * The Filter verdict of one node with the pods a preemption nominated to it counted there
 * (framework/runtime/framework.go RunFilterPluginsWithNominatedPods → addGENominatedPods → the plugin's AddPod,
 * podtopologyspread/filtering.go `updateWithPod`): a nominated pod of the pending pod's namespace, on a node with
 * every topologyKey and passing the constraint's inclusion policies, adds 1 to this node's domain when the
 * constraint's selector matches it (`Selector.Matches`: an empty selector matches it even where PreFilter's
 * `countPodsMatchSelector` counts none, kubernetes#141339), and the minimum is taken again. The scheduler then checks
 * the node without them too; adding pods never lowers a skew (the minimum rises by at most what the domain gains), so
 * the first check decides.
 * @param state from {@link topologySpreadState} (not changed).
 * @param pod the pending pod.
 * @param node the node.
 * @param nominated the pods nominated to this node with a priority no lower than `pod`'s (none: {@link topologySpreadFilter}).
 */
export function topologySpreadFilterWithNominated(state: SpreadState, pod: Pod, node: Node, nominated: readonly Pod[]): SpreadVerdict {
  const labels = node.metadata.labels ?? {};
  const ns = pod.metadata.namespace ?? "";
  const mine = nominated.filter((p) => (p.metadata.namespace ?? "") === ns);
  if (mine.length === 0 || !state.constraints.every((c) => Object.prototype.hasOwnProperty.call(labels, c.topologyKey))) {
    return topologySpreadFilter(state, node);
  }
  const affinityOk = new Map<string, boolean>();
  let added = 0;
  const constraints = state.constraints.map((c) => {
    if (!nodeIncluded(c, pod, node, affinityOk)) return c;
    const n = mine.filter((p) => labelSelectorMatches(c.selector, p.metadata.labels, "nothing")).length;
    if (n === 0) return c;
    added += n;
    const value = labels[c.topologyKey] as string;
    const counted = { ...c, counts: new Map(c.counts).set(value, (c.counts.get(value) ?? 0) + n) };
    return { ...counted, minMatch: minMatchOf(counted) };
  });
  if (added === 0) return topologySpreadFilter(state, node);
  const v = topologySpreadFilter({ constraints }, node);
  const names = mine.map((p) => `${p.metadata.namespace ?? ""}/${p.metadata.name}`).join(", ");
  return { ...v, detail: `${v.detail} (counting the pod(s) a preemption nominated to this node: ${names})` };
}

/**
 * The Filter verdict of one node.
 * @param state from {@link topologySpreadState}.
 * @param node the node.
 */
export function topologySpreadFilter(state: SpreadState, node: Node): SpreadVerdict {
  const labels = node.metadata.labels ?? {};
  const parts: string[] = [];
  for (const c of state.constraints) {
    const value = labels[c.topologyKey];
    if (value === undefined) {
      parts.push(`constraint ${c.index}: the node has no label ${c.topologyKey}`);
      return { passed: false, reason: SPREAD_LABEL_REASON, detail: parts.join("; ") };
    }
    const count = c.counts.get(value) ?? 0;
    const self = c.selfMatch ? 1 : 0;
    // no counted domain: the critical path keeps math.MaxInt32, so any skew passes
    const skew = count + self - c.minMatch;
    const minText = c.counts.size === 0
      ? "no domain counted"
      : c.counts.size < c.minDomains
      ? `min 0 (${c.counts.size} domain(s) < minDomains ${c.minDomains})`
      : `min ${c.minMatch}`;
    const skewText = c.counts.size === 0 ? "" : ` = skew ${skew}`;
    const note = c.emptySelector === "counted-none"
      ? " (an empty labelSelector: this release counts no existing pod for it, kubernetes#141339)"
      : c.emptySelector === "version-unknown"
      ? " (an empty labelSelector: counted as every pod, as v1.38+ and releases before v1.27 do; v1.27–v1.37 count none, kubernetes#141339, and the scheduler's version is not known)"
      : "";
    const clause = `${c.topologyKey}=${value}: ${count} pod(s) match [${selectorText(c.selector)}]${note} + ${self} (self) − ${minText}${skewText}`;
    if (skew > c.maxSkew) {
      parts.push(`${clause} > maxSkew ${c.maxSkew}`);
      return { passed: false, reason: SPREAD_REASON, detail: parts.join("; ") };
    }
    parts.push(`${clause} ≤ maxSkew ${c.maxSkew}`);
  }
  return { passed: true, detail: parts.join("; ") };
}

/**
 * The domains of each constraint, for the report: `topology.kubernetes.io/zone: a=2, b=0, c=1`.
 * @param state from {@link topologySpreadState}.
 */
export function spreadDomainsText(state: SpreadState): string[] {
  return state.constraints.map((c) => {
    const domains = [...c.counts].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([v, n]) => `${v}=${n}`);
    return `constraint ${c.index} (${c.topologyKey}, maxSkew ${c.maxSkew}${c.minDomains !== 1 ? `, minDomains ${c.minDomains}` : ""}): pods matching [${selectorText(c.selector)}] per domain: ${domains.length > 0 ? domains.join(", ") : "no domain"}`;
  });
}
