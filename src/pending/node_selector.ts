/**
 * The node selector matcher the scheduler uses, made explainable: for one node, every nodeSelectorTerm and every
 * requirement in it is evaluated (not short-circuited) and each result carries the node's actual value and why it
 * passed or failed, so a report can say "term 0: failure-domain.beta.kubernetes.io/zone in [0] failed: node has
 * southeastasia-1".
 *
 * Semantics follow k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go
 * (LazyErrorNodeSelector) and k8s.io/apimachinery/pkg/labels/selector.go (Requirement.Matches, NewRequirement):
 * - nodeSelectorTerms are ORed; a null or empty term (no matchExpressions and no matchFields) matches nothing;
 * - matchExpressions and matchFields inside a term are ANDed;
 * - In: the label must exist and its value be one of `values`; NotIn: passes when the label is absent or its value
 *   is not one of `values`; Exists / DoesNotExist: presence of the key;
 * - Gt / Lt: the label must exist, both the label value and the single requirement value must parse as base-10
 *   int64 (Go strconv.ParseInt), and the comparison is strict;
 * - a term whose requirements do not parse (unknown operator, wrong number of values, invalid key or value) is
 *   ignored: it matches no node (the "lazy error" selector reports the error only when nothing matched);
 * - matchFields support only `metadata.name` with In / NotIn and exactly one value; they are skipped entirely when
 *   the node carries no fields, which is the case for PersistentVolume node affinity: the scheduler's
 *   CheckNodeAffinity (k8s.io/component-helpers/storage/volume/helpers.go) builds a Node from labels only.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { NodeSelector, NodeSelectorRequirement, NodeSelectorTerm } from "../model/k8s.ts";

/** The facts about a node a selector can test: its name (for matchFields `metadata.name`) and its labels. */
export interface NodeFacts {
  /** metadata.name; `undefined` when the caller evaluates labels only (PersistentVolume node affinity). */
  name?: string;
  labels: Record<string, string>;
}

/** Which list of a NodeSelectorTerm a requirement came from. */
export type RequirementField = "matchExpressions" | "matchFields";

/** The outcome of one NodeSelectorRequirement against one node. */
export interface RequirementEvaluation {
  field: RequirementField;
  /** Index in its list (matchExpressions[i] / matchFields[i]). */
  index: number;
  key: string;
  operator: string;
  values: string[];
  /** As `kubectl describe` prints it: `failure-domain.beta.kubernetes.io/zone in [0]`, `disktype exists`. */
  text: string;
  /** The node's value for `key` (label value, or the node name for `metadata.name`); `null` when absent. */
  actual: string | null;
  matched: boolean;
  /** Why it matched or failed, in words: `label absent`, `"southeastasia-1" is not in [0]`. */
  reason: string;
  /** The requirement could not be parsed (the scheduler ignores the whole term): the error. */
  parseError?: string;
  /** matchFields were not evaluated because the node carries no fields (PersistentVolume node affinity). */
  skipped?: boolean;
}

/** The outcome of one NodeSelectorTerm against one node. */
export interface TermEvaluation {
  index: number;
  matched: boolean;
  /** A null or empty term matches no objects. */
  empty: boolean;
  /** Parse errors that make the scheduler ignore this term (it then matches nothing). */
  parseErrors: string[];
  requirements: RequirementEvaluation[];
}

/** The outcome of a whole NodeSelector (terms ORed) against one node. */
export interface NodeSelectorEvaluation {
  matched: boolean;
  terms: TermEvaluation[];
}

/** One `key: value` pair of a pod's `spec.nodeSelector` against one node. */
export interface MapRequirementEvaluation {
  key: string;
  want: string;
  actual: string | null;
  matched: boolean;
  /** `key=value` */
  text: string;
  reason: string;
}

/** A pod's `spec.nodeSelector` (every pair must equal the node's label) against one node. */
export interface MapSelectorEvaluation {
  matched: boolean;
  requirements: MapRequirementEvaluation[];
}

/** storage.k8s.io/v1 TopologySelectorTerm (StorageClass allowedTopologies). */
export interface TopologySelectorTerm {
  matchLabelExpressions?: { key: string; values: string[] }[];
}

/** Options of {@link evaluateNodeSelector}. */
export interface EvaluateOptions {
  /**
   * Evaluate matchFields against `node.name`. The scheduler's PersistentVolume check passes a node without a name,
   * which makes matchFields a no-op; pod node affinity passes the real node.
   * @default true when `node.name` is set
   */
  fields?: boolean;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Parses a string like Go's `strconv.ParseInt(s, 10, 64)`: optional sign, ASCII digits only, no spaces or
 * underscores, within int64.
 * @param s the text.
 * @returns the value, or `undefined` when Go would return an error.
 * @example parseGoInt64("-3") // -3n; parseGoInt64("1.5") // undefined
 */
export function parseGoInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v < INT64_MIN || v > INT64_MAX ? undefined : v;
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * Validates a label key as k8s.io/apimachinery/pkg/util/validation IsQualifiedName does.
 * @returns the error text, or `undefined` when valid.
 */
export function validateLabelKey(key: string): string | undefined {
  const parts = key.split("/");
  let name: string;
  if (parts.length === 1) {
    name = parts[0] as string;
  } else if (parts.length === 2) {
    const prefix = parts[0] as string;
    name = parts[1] as string;
    if (prefix.length === 0) return `invalid label key "${key}": prefix part must be non-empty`;
    if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) {
      return `invalid label key "${key}": prefix part must be a lowercase RFC 1123 subdomain`;
    }
  } else {
    return `invalid label key "${key}": a qualified name must have at most one "/"`;
  }
  if (name.length === 0) return `invalid label key "${key}": name part must be non-empty`;
  if (name.length > 63) return `invalid label key "${key}": name part must be no more than 63 characters`;
  if (!QUALIFIED_NAME_PART.test(name)) {
    return `invalid label key "${key}": name part must consist of alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  return undefined;
}

/**
 * Validates a label value as IsValidLabelValue does (empty allowed, at most 63 characters).
 * @returns the error text, or `undefined` when valid.
 */
export function validateLabelValue(value: string): string | undefined {
  if (value.length > 63) return `invalid label value "${value}": must be no more than 63 characters`;
  if (!LABEL_VALUE.test(value)) {
    return `invalid label value "${value}": must be empty or consist of alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  return undefined;
}

/**
 * Formats a requirement the way `kubectl describe` prints node affinity (printNodeSelectorTermsMultilineWithIndent):
 * `key in [a, b]`, `key notin [a]`, `key exists`, `key gt [5]`; an empty value is written `""` (kubectl prints
 * nothing for it).
 */
export function formatRequirement(req: NodeSelectorRequirement): string {
  const base = `${req.key} ${String(req.operator).toLowerCase()}`;
  return req.values && req.values.length > 0 ? `${base} ${quoteList(req.values)}` : base;
}

/** Formats a whole term: its requirements joined by `, ` (matchFields prefixed `field:`); `<empty>` when empty. */
export function formatTerm(term: NodeSelectorTerm): string {
  const parts = [
    ...(term.matchExpressions ?? []).map(formatRequirement),
    ...(term.matchFields ?? []).map((r) => "field:" + formatRequirement(r)),
  ];
  return parts.length === 0 ? "<empty>" : parts.join(", ");
}

/** An empty value is shown as `""` so that `[""]` is not mistaken for an empty list. */
function showValue(v: string): string {
  return v === "" ? '""' : v;
}

function quoteList(values: string[]): string {
  return `[${values.map(showValue).join(", ")}]`;
}

/** Parse errors of one label requirement, as labels.NewRequirement would raise them. */
function labelRequirementErrors(req: NodeSelectorRequirement): string[] {
  const errs: string[] = [];
  const values = req.values ?? [];
  const keyErr = validateLabelKey(req.key);
  if (keyErr) errs.push(keyErr);
  switch (req.operator) {
    case "In":
    case "NotIn":
      if (values.length === 0) errs.push(`for 'in', 'notin' operators, values set can't be empty`);
      break;
    case "Exists":
    case "DoesNotExist":
      if (values.length !== 0) errs.push(`values set must be empty for exists and does not exist`);
      break;
    case "Gt":
    case "Lt":
      if (values.length !== 1) errs.push(`for 'Gt', 'Lt' operators, exactly one value is required`);
      for (const v of values) {
        if (parseGoInt64(v) === undefined) errs.push(`for 'Gt', 'Lt' operators, the value must be an integer: "${v}"`);
      }
      break;
    default:
      errs.push(
        `unsupported operator "${String(req.operator)}": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"`,
      );
  }
  for (const v of values) {
    const vErr = validateLabelValue(v);
    if (vErr) errs.push(vErr);
  }
  return errs;
}

/** Parse errors of one field requirement (nodeSelectorRequirementsAsFieldSelector). */
function fieldRequirementErrors(req: NodeSelectorRequirement): string[] {
  const values = req.values ?? [];
  if (req.operator !== "In" && req.operator !== "NotIn") {
    return [`unsupported operator "${String(req.operator)}" in matchFields: supported values: "In", "NotIn"`];
  }
  if (values.length !== 1) return [`matchFields values must have one element, got ${values.length}`];
  return [];
}

/**
 * Evaluates one label requirement against a label set (labels.Requirement.Matches), with the reason.
 * Parse errors are reported in `parseError` and make the requirement fail.
 * @param req the requirement.
 * @param labels the node's labels.
 * @param index its position in matchExpressions.
 */
export function evaluateLabelRequirement(
  req: NodeSelectorRequirement,
  labels: Record<string, string>,
  index = 0,
): RequirementEvaluation {
  const values = req.values ?? [];
  const has = Object.prototype.hasOwnProperty.call(labels, req.key);
  const actual = has ? (labels[req.key] as string) : null;
  const base = {
    field: "matchExpressions" as const,
    index,
    key: req.key,
    operator: String(req.operator),
    values,
    text: formatRequirement(req),
    actual,
  };
  const errs = labelRequirementErrors(req);
  if (errs.length > 0) {
    return { ...base, matched: false, reason: `invalid requirement: ${errs.join("; ")}`, parseError: errs.join("; ") };
  }
  const shown = actual === null ? "" : JSON.stringify(actual);
  switch (req.operator) {
    case "In":
      if (actual === null) return { ...base, matched: false, reason: "label absent" };
      return values.includes(actual)
        ? { ...base, matched: true, reason: `${shown} is in ${quoteList(values)}` }
        : { ...base, matched: false, reason: `${shown} is not in ${quoteList(values)}` };
    case "NotIn":
      if (actual === null) return { ...base, matched: true, reason: "label absent (NotIn passes)" };
      return values.includes(actual)
        ? { ...base, matched: false, reason: `${shown} is in ${quoteList(values)}` }
        : { ...base, matched: true, reason: `${shown} is not in ${quoteList(values)}` };
    case "Exists":
      return actual === null
        ? { ...base, matched: false, reason: "label absent" }
        : { ...base, matched: true, reason: `label present (${shown})` };
    case "DoesNotExist":
      return actual === null
        ? { ...base, matched: true, reason: "label absent" }
        : { ...base, matched: false, reason: `label present (${shown})` };
    case "Gt":
    case "Lt": {
      if (actual === null) return { ...base, matched: false, reason: "label absent" };
      const have = parseGoInt64(actual);
      if (have === undefined) return { ...base, matched: false, reason: `${shown} is not an integer` };
      const want = parseGoInt64(values[0] as string) as bigint;
      const ok = req.operator === "Gt" ? have > want : have < want;
      const rel = req.operator === "Gt" ? ">" : "<";
      return { ...base, matched: ok, reason: ok ? `${actual} ${rel} ${want}` : `${actual} is not ${rel} ${want}` };
    }
  }
  /* c8 ignore next */
  return { ...base, matched: false, reason: "unreachable" };
}

function evaluateFieldRequirement(
  req: NodeSelectorRequirement,
  node: NodeFacts,
  index: number,
  useFields: boolean,
): RequirementEvaluation {
  const values = req.values ?? [];
  const actual = req.key === "metadata.name" && node.name !== undefined ? node.name : null;
  const base = {
    field: "matchFields" as const,
    index,
    key: req.key,
    operator: String(req.operator),
    values,
    text: formatRequirement(req),
    actual,
  };
  const errs = fieldRequirementErrors(req);
  if (errs.length > 0) {
    return { ...base, matched: false, reason: `invalid requirement: ${errs.join("; ")}`, parseError: errs.join("; ") };
  }
  if (!useFields || node.name === undefined || node.name === "") {
    return {
      ...base,
      matched: true,
      skipped: true,
      reason: "not evaluated: the scheduler checks PersistentVolume node affinity against node labels only",
    };
  }
  // fields.OneTermEqualSelector / OneTermNotEqualSelector on the node's field set {metadata.name}; any other key is
  // absent from the set: "=" fails on an absent field and "!=" passes.
  const want = values[0] as string;
  if (req.operator === "In") {
    return actual === want
      ? { ...base, matched: true, reason: `node name is ${JSON.stringify(want)}` }
      : { ...base, matched: false, reason: actual === null ? `field absent` : `node name is ${JSON.stringify(actual)}` };
  }
  return actual === want
    ? { ...base, matched: false, reason: `node name is ${JSON.stringify(want)}` }
    : { ...base, matched: true, reason: actual === null ? "field absent (NotIn passes)" : `node name is ${JSON.stringify(actual)}` };
}

/**
 * Evaluates one NodeSelectorTerm against a node: matchExpressions and matchFields ANDed; an empty term matches
 * nothing; a term with a parse error is ignored (matches nothing).
 * @param term the term.
 * @param node the node's name and labels.
 * @param index the term's position in nodeSelectorTerms.
 * @param options see {@link EvaluateOptions}.
 */
export function evaluateNodeSelectorTerm(
  term: NodeSelectorTerm,
  node: NodeFacts,
  index = 0,
  options: EvaluateOptions = {},
): TermEvaluation {
  const useFields = options.fields ?? node.name !== undefined;
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  const requirements = [
    ...exprs.map((r, i) => evaluateLabelRequirement(r, node.labels, i)),
    ...fields.map((r, i) => evaluateFieldRequirement(r, node, i, useFields)),
  ];
  const empty = exprs.length === 0 && fields.length === 0;
  const parseErrors = requirements.flatMap((r) => (r.parseError ? [`${r.field}[${r.index}]: ${r.parseError}`] : []));
  const matched = !empty && parseErrors.length === 0 && requirements.every((r) => r.matched);
  return { index, matched, empty, parseErrors, requirements };
}

/**
 * Evaluates a NodeSelector (nodeSelectorTerms ORed) against a node, every term and requirement explained.
 * @param selector the selector (PersistentVolume `spec.nodeAffinity.required` or a pod's required node affinity).
 * @param node the node's name and labels.
 * @param options see {@link EvaluateOptions}; pass `{ fields: false }` for PersistentVolume node affinity.
 * @returns `matched` plus every term's evaluation.
 * @example
 * import { evaluateNodeSelector } from "./node_selector.ts";
 * evaluateNodeSelector(
 *   { nodeSelectorTerms: [{ matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: ["a"] }] }] },
 *   { name: "n1", labels: { "topology.kubernetes.io/zone": "b" } },
 * ).matched; // false
 */
export function evaluateNodeSelector(
  selector: NodeSelector,
  node: NodeFacts,
  options: EvaluateOptions = {},
): NodeSelectorEvaluation {
  const terms = (selector.nodeSelectorTerms ?? []).map((t, i) => evaluateNodeSelectorTerm(t ?? {}, node, i, options));
  return { matched: terms.some((t) => t.matched), terms };
}

/**
 * Evaluates a pod's `spec.nodeSelector` (labels.SelectorFromSet: every key present with an equal value).
 * @param nodeSelector the map; empty or absent means "any node".
 * @param labels the node's labels.
 */
export function evaluateNodeSelectorMap(
  nodeSelector: Record<string, string> | undefined,
  labels: Record<string, string>,
): MapSelectorEvaluation {
  const requirements = Object.entries(nodeSelector ?? {}).map(([key, want]): MapRequirementEvaluation => {
    const has = Object.prototype.hasOwnProperty.call(labels, key);
    const actual = has ? (labels[key] as string) : null;
    const text = `${key}=${want}`;
    if (actual === null) return { key, want, actual, matched: false, text, reason: "label absent" };
    return actual === want
      ? { key, want, actual, matched: true, text, reason: `equals ${JSON.stringify(want)}` }
      : { key, want, actual, matched: false, text, reason: `${JSON.stringify(actual)} is not ${JSON.stringify(want)}` };
  });
  return { matched: requirements.every((r) => r.matched), requirements };
}

/**
 * StorageClass allowedTopologies against a node's labels, as v1helper.MatchTopologySelectorTerms does: no terms
 * means "everywhere"; terms are ORed; inside a term every key must be present with one of its values; an empty
 * term selects no node (component-helpers scheduling/corev1 MatchTopologySelectorTerms: "nil or empty term selects no
 * objects").
 * @param terms `allowedTopologies`.
 * @param labels the node's labels.
 */
export function matchTopologySelectorTerms(
  terms: TopologySelectorTerm[] | undefined,
  labels: Record<string, string>,
): boolean {
  if (!terms || terms.length === 0) return true;
  // an empty term (no matchLabelExpressions, which API validation allows) selects nothing
  return terms.some((term) =>
    (term.matchLabelExpressions ?? []).length > 0 && (term.matchLabelExpressions ?? []).every((e) =>
      Object.prototype.hasOwnProperty.call(labels, e.key) && e.values.includes(labels[e.key] as string)
    )
  );
}

/** The keys a NodeSelector tests (matchExpressions only), in order, deduplicated. */
export function selectorLabelKeys(selector: NodeSelector | undefined): string[] {
  const keys: string[] = [];
  for (const t of selector?.nodeSelectorTerms ?? []) {
    for (const r of t?.matchExpressions ?? []) if (!keys.includes(r.key)) keys.push(r.key);
  }
  return keys;
}

/** Short words for a failed selector: `term 0: …zone "southeastasia-1" is not in [0]; term 1: …`. */
export function selectorFailure(ev: NodeSelectorEvaluation): string {
  if (ev.terms.length === 0) return "no nodeSelectorTerms (matches nothing)";
  return ev.terms.map((t) => {
    if (t.empty) return `term ${t.index}: empty (matches nothing)`;
    if (t.parseErrors.length > 0) return `term ${t.index}: invalid (${t.parseErrors.join("; ")})`;
    const failed = t.requirements.filter((r) => !r.matched);
    return `term ${t.index}: ${failed.map((r) => `${r.key} ${r.reason}`).join(", ")}`;
  }).join("; ");
}

/** Short words for a matched selector: the first term that matches (`term 1 matches`), else `matches`. */
export function selectorSuccess(ev: NodeSelectorEvaluation): string {
  const t = ev.terms.find((x) => x.matched);
  return t ? `term ${t.index} matches` : "matches";
}
