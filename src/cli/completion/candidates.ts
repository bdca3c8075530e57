/**
 * What to offer for a command line being completed: the plan (which data to fetch, which directive), and the
 * candidates built from the fetched objects. Pure: the fetching is in lookups.ts, the hand-over to the completion
 * engine in engine.ts.
 *
 * Target types are kubectl's (`svc/`, `service/`, `pvc/`, `pod/`, and `svc NAME`); the type word is read with
 * {@link parseTarget}, the same parser the command uses, so completion never offers what the command refuses.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { KubeObject, Node, PersistentVolumeClaim, Pod, Service } from "../../model/k8s.ts";
import { parseTarget, TARGET_PREFIXES, type TargetKind } from "../target.ts";
import { type Candidate, Directive } from "./directive.ts";
import { type CompletionLine, findFlag, type LineSpec } from "./line.ts";

/** Lists a completion may fetch (from a bundle with `--from`, else from the cluster). */
export type LookupKind = "services" | "persistentvolumeclaims" | "pods" | "namespaces" | "nodes" | "contexts";

/** How to answer a completion request. */
export type CompletionPlan =
  /** Leave it to the engine: flag names, subcommands, `-o`/`--profile` choices, or nothing (a free value). */
  | { kind: "engine" }
  /** A file or directory (a flag whose placeholder is `<path>`, `<file>` or `<dir>`: `--from`, `--kubeconfig`): no
   * candidates, directive Default so the shell lists files. */
  | { kind: "files" }
  /** The first target word without a `/` yet: the type prefixes (the engine adds the subcommands). */
  | { kind: "target-types" }
  /** Names fetched from a list; each candidate is `prefix + name`. `namespaced` lists use the namespace in effect.
   * `exclude` names are already on the line (a repeated `--node`). */
  | { kind: "lookup"; lookup: LookupKind; prefix: string; exclude: string[] };

/** Flags whose value comes from a list. */
const LOOKUP_FLAGS: Record<string, LookupKind> = { namespace: "namespaces", context: "contexts", node: "nodes" };

const LIST_OF_KIND: Record<TargetKind, LookupKind> = { service: "services", pvc: "persistentvolumeclaims", pod: "pods" };

/** Descriptions of the target prefixes offered for the first word. */
const PREFIX_DESCRIPTIONS: Record<string, string> = {
  "svc/": "a Service: how kube-proxy balances and masquerades it on each node",
  "service/": "a Service (long form of svc/)",
  "pvc/": "a PersistentVolumeClaim: why is it Pending (--why-pending)",
  "pod/": "a Pod: why is it Pending (--why-pending)",
};

/**
 * The target kind a type word denotes (`svc`, `service`, `services` → service; `pvc` → pvc; `po` → pod), as the
 * command's own parser reads it.
 * @returns the kind, or `undefined` for a word that is not a target type.
 */
export function targetKindOf(typeWord: string): TargetKind | undefined {
  try {
    return parseTarget([`${typeWord}/x`]).kind;
  } catch {
    return undefined;
  }
}

/**
 * Decides how to answer a completion request (pure).
 * @param line the parsed line ({@link parseCompletionLine}).
 * @param spec the program's flags and subcommands (which commands take targets).
 * @returns the plan.
 * @example
 * ```ts
 * planCompletion(parseCompletionLine(["svc/"], spec), spec);
 * // { kind: "lookup", lookup: "services", prefix: "svc/", exclude: [] }
 * ```
 */
export function planCompletion(line: CompletionLine, spec: LineSpec): CompletionPlan {
  const c = line.completing;
  if (c.kind === "flag-name") return { kind: "engine" };
  if (c.kind === "flag-value") {
    if (findFlag(spec, line.subcommand, `--${c.flag}`)?.isPath) return { kind: "files" };
    const lookup = LOOKUP_FLAGS[c.flag];
    if (lookup) return { kind: "lookup", lookup, prefix: "", exclude: c.flag === "node" ? (line.flags.node ?? []) : [] };
    return { kind: "engine" };
  }
  if (!spec.targetCommands.includes(line.subcommand ?? "")) return { kind: "engine" };
  if (c.index === 0) {
    const slash = line.current.indexOf("/");
    if (slash < 0) return { kind: "target-types" };
    const kind = targetKindOf(line.current.slice(0, slash));
    if (kind === undefined) return { kind: "engine" };
    return { kind: "lookup", lookup: LIST_OF_KIND[kind], prefix: line.current.slice(0, slash + 1), exclude: [] };
  }
  if (c.index === 1 && !line.positionals[0]!.includes("/")) {
    // `svc NAME`, as kubectl accepts it.
    const kind = targetKindOf(line.positionals[0]!);
    if (kind !== undefined) return { kind: "lookup", lookup: LIST_OF_KIND[kind], prefix: "", exclude: [] };
  }
  return { kind: "engine" };
}

/** The target prefixes, with what each asks. */
export function targetTypeCandidates(): Candidate[] {
  return TARGET_PREFIXES.map((p) => ({ value: p, description: PREFIX_DESCRIPTIONS[p] ?? "" }));
}

/** A context of a kubeconfig, as offered for `--context`. */
export interface ContextInfo {
  name: string;
  cluster?: string;
  namespace?: string;
}

function byName(a: KubeObject, b: KubeObject): number {
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

function serviceDescription(s: Service): string {
  const type = s.spec?.type ?? "ClusterIP";
  if (type === "ExternalName") return `ExternalName ${s.spec?.externalName ?? ""}`.trim();
  return `${type} ${s.spec?.clusterIP ?? ""}`.trim();
}

function phaseOf(o: KubeObject): string {
  return ((o as Pod | PersistentVolumeClaim).status?.phase ?? "").trim();
}

function nodeReady(n: Node): string {
  const ready = n.status?.conditions?.find((c) => c.type === "Ready");
  if (!ready) return "";
  const state = ready.status === "True" ? "Ready" : "NotReady";
  return n.spec?.unschedulable ? `${state},SchedulingDisabled` : state;
}

/**
 * Candidates from fetched objects.
 * - services: sorted by name; description `TYPE CLUSTER-IP` (`ClusterIP 10.96.0.10`, `ExternalName db.example`).
 * - persistentvolumeclaims, pods: Pending ones first (the ones `--why-pending` is for), then by name; the phase is
 *   the description; the answer keeps this order ({@link Directive.KeepOrder}).
 * - namespaces: sorted; nodes: sorted, described `Ready` / `NotReady` (+ `,SchedulingDisabled`) as kubectl shows.
 * @param plan a lookup plan.
 * @param objects the listed objects (namespaced lists already filtered to the namespace in effect).
 * @returns the candidates, each `plan.prefix + name`, without the names in `plan.exclude`.
 */
export function objectCandidates(plan: Extract<CompletionPlan, { kind: "lookup" }>, objects: readonly KubeObject[]): Candidate[] {
  const excluded = new Set(plan.exclude);
  const list = objects.filter((o) => !excluded.has(o.metadata.name)).sort(byName);
  let describe: (o: KubeObject) => string = () => "";
  if (plan.lookup === "services") describe = (o) => serviceDescription(o as Service);
  if (plan.lookup === "nodes") describe = (o) => nodeReady(o as Node);
  if (plan.lookup === "persistentvolumeclaims" || plan.lookup === "pods") {
    describe = phaseOf;
    list.sort((a, b) => Number(phaseOf(b) === "Pending") - Number(phaseOf(a) === "Pending") || byName(a, b));
  }
  return list.map((o) => ({ value: plan.prefix + o.metadata.name, description: describe(o) }));
}

/**
 * Candidates for `--context`: the contexts in kubeconfig order, described `cluster C, namespace N` and marked
 * `(current)` for the current context.
 */
export function contextCandidates(contexts: readonly ContextInfo[], current: string | undefined): Candidate[] {
  return contexts.map((c) => {
    const parts: string[] = [];
    if (c.cluster) parts.push(`cluster ${c.cluster}`);
    if (c.namespace) parts.push(`namespace ${c.namespace}`);
    let description = parts.join(", ");
    if (c.name === current) description = description ? `${description} (current)` : "(current)";
    return { value: c.name, description };
  });
}

/**
 * The directive for an answer.
 * @param plan the plan.
 * @param values the candidate values printed (after the engine's prefix filtering).
 * @param failed whether a lookup failed (timeout, unreachable cluster, unreadable bundle).
 * @returns Error when a lookup failed; Default for files; for target types NoSpace as soon as a `…/` prefix is
 *   offered (the name follows without a space); KeepOrder for claims and pods (Pending first); NoFileComp otherwise.
 */
export function directiveFor(plan: CompletionPlan, values: readonly string[], failed: boolean): number {
  if (failed) return Directive.Error;
  if (plan.kind === "files") return Directive.Default;
  let d: number = Directive.NoFileComp;
  if (plan.kind === "target-types" && values.some((v) => v.endsWith("/"))) d |= Directive.NoSpace;
  if (plan.kind === "lookup" && (plan.lookup === "persistentvolumeclaims" || plan.lookup === "pods")) d |= Directive.KeepOrder;
  return d;
}
