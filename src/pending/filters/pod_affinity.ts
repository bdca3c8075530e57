/**
 * The InterPodAffinity filter of kube-scheduler (pkg/scheduler/framework/plugins/interpodaffinity/filtering.go,
 * v1.22–v1.35): the pending pod's required pod affinity and anti-affinity, and the required anti-affinity of the pods
 * already bound.
 *
 * A term (core/v1 PodAffinityTerm) matches a pod when the pod's namespace is in the term's namespaces — `namespaces`,
 * or the owner's own namespace when `namespaces` is empty and `namespaceSelector` is nil — or the namespace's labels
 * match `namespaceSelector` (`{}`: every namespace), and the pod's labels match `labelSelector` (nil: nothing)
 * (`PodMatchesTermsNamespaceAndSelector`). `matchLabelKeys` / `mismatchLabelKeys` are merged into `labelSelector` by
 * the API server when the pod is created (KEP-3633), so the stored selector already holds them.
 *
 * PreFilter, over the non-terminal pods bound to the bundle's nodes:
 * - affinity: for each pod that matches **all** the pending pod's affinity terms, each term's (topologyKey, value of
 *   that key on the pod's node) pair is counted;
 * - anti-affinity: for each pod and each anti-affinity term it matches, the term's pair is counted;
 * - existing anti-affinity: for each bound pod with required anti-affinity, each of its terms that the pending pod
 *   matches (namespaces taken from the bound pod) counts the pair on the bound pod's node.
 *
 * Filter, per node, in this order: affinity — the node must have every term's topologyKey and a counted pair for each,
 * except when no pod matched at all and the pending pod matches all its own terms (the first of a group with affinity
 * to itself): `node(s) didn't match pod affinity rules` (UnschedulableAndUnresolvable); anti-affinity — a term whose
 * pair on this node is counted: `node(s) didn't match pod anti-affinity rules`; existing anti-affinity — any label of
 * the node forming a counted pair: `node(s) didn't satisfy existing pods anti-affinity rules`. Releases before v1.22
 * also wrote the umbrella reason `node(s) didn't match pod affinity/anti-affinity` beside each of these
 * (scheduler_message.ts classifies it apart so that it is not counted twice).
 *
 * Pods a preemption nominated to a node (of no lower priority) are counted as pods of that node when that node is
 * checked, and the node is checked again without them ({@link podAffinityFilterWithNominated}).
 *
 * A namespaceSelector other than `{}` needs the namespaces' labels: without Namespace objects in the bundle a term
 * with one is reported as undecided, with the fact that decides it.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Node, Pod, PodAffinityTerm } from "../../model/k8s.ts";
import { isEmptySelector, labelSelectorMatches, selectorText } from "../../model/label_selector.ts";

/** Scheduler reasons (interpodaffinity ErrReasonAffinityRulesNotMatch, …AntiAffinityRulesNotMatch, …Existing…). */
export const AFFINITY_REASON = "node(s) didn't match pod affinity rules";
export const ANTI_AFFINITY_REASON = "node(s) didn't match pod anti-affinity rules";
export const EXISTING_ANTI_AFFINITY_REASON = "node(s) didn't satisfy existing pods anti-affinity rules";

/** A pod that put a (topologyKey, value) pair in a count, for the report: `default/web-0 on n2`. */
export interface PairWitness {
  pod: string;
  node: string;
  /** For existing anti-affinity: the bound pod's term index. */
  term?: number;
  /** The pod is not bound but nominated to `node` by a preemption. */
  nominated?: true;
}

/** (topologyKey, value) → how many times counted and by which pods (the first few). */
type PairCounts = Map<string, { count: number; witnesses: PairWitness[] }>;

/** The PreFilter state of one pending pod. */
export interface PodAffinityState {
  affinityTerms: PodAffinityTerm[];
  antiAffinityTerms: PodAffinityTerm[];
  affinityCounts: PairCounts;
  antiAffinityCounts: PairCounts;
  existingAntiAffinityCounts: PairCounts;
  /** The pending pod matches all its own affinity terms (the first-pod exception). */
  selfMatchesAffinity: boolean;
  /** Terms whose namespaceSelector could not be evaluated (no Namespace objects), as text. */
  undecided: string[];
  /** Bound pods examined. */
  podsCounted: number;
}

/** The verdict of one node. */
export interface PodAffinityVerdict {
  passed: boolean;
  reason?: string;
  detail: string;
}

const pairKey = (key: string, value: string) => `${key}\u0000${value}`;
const pairText = (k: string) => k.replace("\u0000", "=");
const podName = (p: Pod) => `${p.metadata.namespace ?? ""}/${p.metadata.name}`;

function bump(m: PairCounts, key: string, w: PairWitness): void {
  const e = m.get(key);
  if (e) {
    e.count++;
    if (e.witnesses.length < 3) e.witnesses.push(w);
  } else m.set(key, { count: 1, witnesses: [w] });
}

/**
 * Whether a term owned by `owner` matches `target` (`PodMatchesTermsNamespaceAndSelector`).
 * @returns `undefined` when it depends on namespace labels the bundle does not hold.
 */
function termMatches(term: PodAffinityTerm, owner: Pod, target: Pod, nsLabels: ReadonlyMap<string, Record<string, string>> | null): boolean | undefined {
  const targetNs = target.metadata.namespace ?? "";
  const names = term.namespaces ?? [];
  const nsSel = term.namespaceSelector ?? null;
  let inNs: boolean | undefined;
  if (names.length === 0 && !nsSel) inNs = targetNs === (owner.metadata.namespace ?? "");
  else if (names.includes(targetNs)) inNs = true;
  else if (!nsSel) inNs = false;
  else if (isEmptySelector(nsSel)) inNs = true;
  else if (!nsLabels) inNs = undefined;
  else inNs = labelSelectorMatches(nsSel, nsLabels.get(targetNs), "nothing");
  const sel = labelSelectorMatches(term.labelSelector ?? null, target.metadata.labels, "nothing");
  if (!sel || inNs === false) return false;
  return inNs;
}

function termText(t: PodAffinityTerm, i: number): string {
  const ns = (t.namespaces ?? []).length > 0 ? ` in namespaces ${(t.namespaces ?? []).join(",")}` : "";
  const nsSel = t.namespaceSelector ? ` namespaceSelector [${selectorText(t.namespaceSelector)}]` : "";
  return `term ${i} [${selectorText(t.labelSelector)}]${ns}${nsSel} by ${t.topologyKey}`;
}

const nominatedNode = (p: Pod) => (p.status as { nominatedNodeName?: string } | undefined)?.nominatedNodeName;

/**
 * Whether InterPodAffinity has anything to check for `pod` given the bundle's pods.
 * @param pod the pending pod.
 * @param pods the bundle's pods.
 */
export function hasPodAffinityWork(pod: Pod, pods: readonly Pod[]): boolean {
  const a = pod.spec?.affinity;
  if ((a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).length > 0) return true;
  if ((a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).length > 0) return true;
  return pods.some((p) => p !== pod && (p.spec?.nodeName || nominatedNode(p)) && (p.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).length > 0);
}

/**
 * Counts one pod `other` on `node` into `s` (PreFilter's loops, and `updateWithPod` for a pod added to a node):
 * the pending pod's affinity pairs when `other` matches all its terms, its anti-affinity pairs per term `other`
 * matches, and `other`'s own required anti-affinity terms that the pending pod matches. Terms that need namespace
 * labels the bundle lacks go to `undecided` as text; `nominated`: `other` is nominated to `node`, not bound.
 */
function countPod(
  s: PodAffinityState,
  pod: Pod,
  other: Pod,
  node: Node,
  nsLabels: ReadonlyMap<string, Record<string, string>> | null,
  undecided: Set<string>,
  nominated = false,
): void {
  const labels = node.metadata.labels ?? {};
  const w: PairWitness = { pod: podName(other), node: node.metadata.name, ...(nominated ? { nominated: true as const } : {}) };
  if (s.affinityTerms.length > 0) {
    const all = s.affinityTerms.map((t) => termMatches(t, pod, other, nsLabels));
    all.forEach((m, i) => m === undefined && undecided.add(`affinity ${termText(s.affinityTerms[i]!, i)}`));
    if (all.every((m) => m === true)) {
      for (const t of s.affinityTerms) {
        const v = labels[t.topologyKey];
        if (v !== undefined) bump(s.affinityCounts, pairKey(t.topologyKey, v), w);
      }
    }
  }
  s.antiAffinityTerms.forEach((t, i) => {
    const m = termMatches(t, pod, other, nsLabels);
    if (m === undefined) undecided.add(`anti-affinity ${termText(t, i)}`);
    const v = labels[t.topologyKey];
    if (m === true && v !== undefined) bump(s.antiAffinityCounts, pairKey(t.topologyKey, v), w);
  });
  const theirs = other.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  theirs.forEach((t, i) => {
    const m = termMatches(t, other, pod, nsLabels);
    if (m === undefined) undecided.add(`anti-affinity of ${podName(other)} ${termText(t, i)}`);
    const v = labels[t.topologyKey];
    if (m === true && v !== undefined) bump(s.existingAntiAffinityCounts, pairKey(t.topologyKey, v), { ...w, term: i });
  });
}

/**
 * The PreFilter state of `pod`.
 * @param pod the pending pod.
 * @param nodeByName the bundle's nodes by name (a pod on a node the bundle does not hold is not counted).
 * @param podsByNode node name → its non-terminal pods (context.ts `indexPodsByNode`).
 * @param nsLabels namespace → labels, or `null` when the bundle holds no Namespace.
 */
export function podAffinityState(
  pod: Pod,
  nodeByName: ReadonlyMap<string, Node>,
  podsByNode: ReadonlyMap<string, readonly Pod[]>,
  nsLabels: ReadonlyMap<string, Record<string, string>> | null,
): PodAffinityState {
  const affinityTerms = pod.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  const antiAffinityTerms = pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  const s: PodAffinityState = {
    affinityTerms,
    antiAffinityTerms,
    affinityCounts: new Map(),
    antiAffinityCounts: new Map(),
    existingAntiAffinityCounts: new Map(),
    selfMatchesAffinity: affinityTerms.length > 0 && affinityTerms.every((t) => termMatches(t, pod, pod, nsLabels) === true),
    undecided: [],
    podsCounted: 0,
  };
  const undecided = new Set<string>();
  for (const [nodeName, list] of podsByNode) {
    const node = nodeByName.get(nodeName);
    if (!node) continue;
    for (const other of list) {
      if (other === pod) continue;
      s.podsCounted++;
      countPod(s, pod, other, node, nsLabels, undecided);
    }
  }
  s.undecided = [...undecided].sort();
  return s;
}

function witnesses(e: { count: number; witnesses: PairWitness[] }): string {
  const names = e.witnesses.map((w) => `${w.pod} ${w.nominated ? "nominated to" : "on"} ${w.node}${w.term !== undefined ? ` (its term ${w.term})` : ""}`);
  return e.count > names.length ? `${names.join(", ")} and ${e.count - names.length} more` : names.join(", ");
}

/**
 * The Filter verdict of one node.
 * @param state from {@link podAffinityState}.
 * @param node the node.
 */
export function podAffinityFilter(state: PodAffinityState, node: Node): PodAffinityVerdict {
  const labels = node.metadata.labels ?? {};
  const parts: string[] = [];
  // satisfyPodAffinity
  let podsExist = true;
  for (const [i, t] of state.affinityTerms.entries()) {
    const v = labels[t.topologyKey];
    if (v === undefined) {
      return { passed: false, reason: AFFINITY_REASON, detail: `affinity ${termText(t, i)}: the node has no label ${t.topologyKey}` };
    }
    const e = state.affinityCounts.get(pairKey(t.topologyKey, v));
    if (!e) {
      podsExist = false;
      parts.push(`affinity ${termText(t, i)}: no matching pod in ${t.topologyKey}=${v}`);
    } else parts.push(`affinity ${termText(t, i)}: ${witnesses(e)} in ${t.topologyKey}=${v}`);
  }
  if (!podsExist) {
    if (state.affinityCounts.size === 0 && state.selfMatchesAffinity) {
      parts.push("no pod matches anywhere and the pod matches its own terms: allowed as the first of its group");
    } else {
      return { passed: false, reason: AFFINITY_REASON, detail: parts.join("; ") };
    }
  }
  // satisfyPodAntiAffinity
  for (const [i, t] of state.antiAffinityTerms.entries()) {
    const v = labels[t.topologyKey];
    if (v === undefined) continue;
    const e = state.antiAffinityCounts.get(pairKey(t.topologyKey, v));
    if (e) {
      return { passed: false, reason: ANTI_AFFINITY_REASON, detail: `anti-affinity ${termText(t, i)}: ${witnesses(e)} in ${t.topologyKey}=${v}` };
    }
  }
  if (state.antiAffinityTerms.length > 0) parts.push("anti-affinity: no matching pod in this node's domains");
  // satisfyExistingPodsAntiAffinity
  for (const [k, v] of Object.entries(labels)) {
    const e = state.existingAntiAffinityCounts.get(pairKey(k, v));
    if (e) {
      return { passed: false, reason: EXISTING_ANTI_AFFINITY_REASON, detail: `the required anti-affinity of ${witnesses(e)} excludes this pod from ${pairText(pairKey(k, v))}` };
    }
  }
  parts.push(`no bound pod's anti-affinity excludes it (counted over ${state.podsCounted} bound pod(s))`);
  return { passed: true, detail: parts.join("; ") };
}

/**
 * The Filter verdict of one node as kube-scheduler reaches it when pods are nominated to that node
 * (framework/runtime/framework.go RunFilterPluginsWithNominatedPods): first with the nominated pods added to the node
 * (addGENominatedPods → the plugin's PreFilterExtensions AddPod → `updateWithPod`, which counts them as pods of this
 * node), then, if that passes, without them; the node fits only when both pass. A required affinity that only a
 * nominated pod satisfies therefore fails (the second pass), and a nominated pod's anti-affinity, or one that the pending
 * pod's anti-affinity matches, rejects the node (the first pass).
 * @param state from {@link podAffinityState} (not changed).
 * @param pod the pending pod.
 * @param node the node.
 * @param nominated the pods nominated to this node with a priority no lower than `pod`'s (none: {@link podAffinityFilter}).
 * @param nsLabels namespace → labels, or `null` when the bundle holds no Namespace.
 */
export function podAffinityFilterWithNominated(
  state: PodAffinityState,
  pod: Pod,
  node: Node,
  nominated: readonly Pod[],
  nsLabels: ReadonlyMap<string, Record<string, string>> | null,
): PodAffinityVerdict {
  if (nominated.length === 0) return podAffinityFilter(state, node);
  const copy = (m: PairCounts): PairCounts => new Map([...m].map(([k, e]) => [k, { count: e.count, witnesses: [...e.witnesses] }]));
  const added: PodAffinityState = {
    ...state,
    affinityCounts: copy(state.affinityCounts),
    antiAffinityCounts: copy(state.antiAffinityCounts),
    existingAntiAffinityCounts: copy(state.existingAntiAffinityCounts),
  };
  const undecided = new Set<string>();
  for (const other of nominated) countPod(added, pod, other, node, nsLabels, undecided, true);
  // a nominated pod's term that needs namespace labels the bundle lacks: said as the bound pods' are (explain.ts)
  const unsure = [...undecided].filter((u) => !state.undecided.includes(u)).sort();
  const names = nominated.map(podName).join(", ") + (unsure.length > 0 ? `; undecided, counted as no match: ${unsure.join("; ")}` : "");
  const first = podAffinityFilter(added, node);
  if (!first.passed) return { ...first, detail: `${first.detail} (counting the pod(s) a preemption nominated to this node: ${names})` };
  const second = podAffinityFilter(state, node);
  if (!second.passed) {
    return { ...second, detail: `${second.detail} (without the pod(s) a preemption nominated to this node, ${names}: the scheduler checks the node both with and without them)` };
  }
  return { passed: true, detail: `${first.detail}, counting the pod(s) a preemption nominated to this node (${names}) and without them` };
}
