/**
 * The fast path of `kubectl-netpath complete -- WORDS` for names (issue 12 point 6): a request whose plan is a lookup
 * (Service, claim, pod, namespace, node or context names) is answered without building the commander program or
 * loading @bomb.sh/tab — the flags come from {@link LINE_SPEC} (generated from the program by
 * scripts/gen-completions.mjs; tests/completion_fast.test.ts keeps it current) — by {@link answerLookup}, which the
 * engine uses for lookups too: the candidates of fetchCandidates, deduplicated and filtered by prefix (after `=` for
 * `--flag=value` and `-n=value`), and {@link directiveFor}. Every other request (flag names, choices, files) returns undefined
 * and goes to the full engine (the static responder answers most of those in sh before Node starts).
 * @module
 */
import { type CompletionPlan, directiveFor, planCompletion } from "./candidates.ts";
import { type Candidate, formatAnswer, safeCandidate } from "./directive.ts";
import { type CompletionLine, parseCompletionLine } from "./line.ts";
import { LINE_SPEC } from "./line_spec_data.ts";
import { printable } from "../../report/printable.ts";
import type { LookupEnv } from "./lookups.ts";

export { writeAnswer } from "./write_answer.ts";

/**
 * The candidates of a lookup (lookups.ts, loaded only then: it brings in the bundle reader and YAML), or, when the
 * lookup fails, the Error answer (`:1`) after passing its one-line reason to `onError`. Shared by the engine.
 */
export async function lookupOrError(
  plan: Extract<CompletionPlan, { kind: "lookup" }>,
  line: CompletionLine,
  e: LookupEnv,
  onError: (reason: string) => void,
): Promise<Candidate[] | string> {
  try {
    const { fetchCandidates } = await import("./lookups.ts");
    // made safe here, before either the engine's library or formatAnswer prints them
    return (await fetchCandidates(plan, line, e)).map(safeCandidate);
  } catch (err) {
    onError(err instanceof Error ? `${err.name}: ${err.message.split("\n")[0]}` : String(err));
    return formatAnswer([], directiveFor(plan, [], true));
  }
}

/**
 * Answers a lookup request, or says it is not one.
 * @param words the words after `complete --` (the last is the word under the cursor).
 * @param e environment, current directory, and where the one-line warnings go.
 * @param onError receives a failed lookup's one-line reason (the answer is then `:1`).
 * @returns the answer in Cobra's format, or undefined when the request is not a lookup.
 */
export async function completeFast(words: readonly string[], e: LookupEnv, onError: (reason: string) => void): Promise<string | undefined> {
  const line = parseCompletionLine(words, LINE_SPEC);
  const plan = planCompletion(line, LINE_SPEC);
  if (plan.kind !== "lookup") return undefined;
  // the one-line reasons quote paths and names from the line, the bundle or the kubeconfig: escaped for the terminal
  const warn = e.warn;
  const safe: LookupEnv = { ...e, ...(warn ? { warn: (l: string) => warn(printable(l)) } : {}) };
  return await answerLookup(plan, line, safe, (reason) => onError(printable(reason)));
}

/**
 * The answer to a lookup request (the fast path's, and the engine's: @bomb.sh/tab 0.0.22 filters on the text between
 * the word's first and second `=`, so `--context team=a` lost the context `team=alpha`): the candidates of
 * {@link lookupOrError}, deduplicated, those that start with the word under the cursor as the line reads it
 * (`line.current`: the value after `--flag=` or `-n=`, else the whole word), and {@link directiveFor}.
 * @returns Cobra's format; the Error answer (`:1`) when the lookup failed.
 */
export async function answerLookup(
  plan: Extract<CompletionPlan, { kind: "lookup" }>,
  line: CompletionLine,
  e: LookupEnv,
  onError: (reason: string) => void,
): Promise<string> {
  const candidates = await lookupOrError(plan, line, e, onError);
  if (typeof candidates === "string") return candidates;
  const seen = new Set<string>();
  const shown = candidates.filter((c) => !seen.has(c.value) && (seen.add(c.value), c.value.startsWith(line.current)));
  return formatAnswer(shown, directiveFor(plan, shown.map((c) => c.value), false));
}
