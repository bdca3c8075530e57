/**
 * The completion engine: @bomb.sh/tab (its commander adapter builds the tree of commands, flags and choices from the
 * program) answers in Cobra's `__complete` format. Its handlers are synchronous, so what a dynamic candidate needs
 * is fetched first (lookups.ts), then handed to the handlers, then the engine runs. Names (a lookup) are answered
 * without it, by the fast path's {@link answerLookup}, so that both filter them alike.
 *
 * Two things the engine cannot say are added after it prints (tab 0.0.22 always ends with `:4`, NoFileComp): the
 * Default directive for flags that take a path (the shell then completes files), the Error directive when a lookup
 * failed, NoSpace after a `svc/` prefix and KeepOrder for Pending-first claims. See {@link directiveFor}.
 * @module
 */
import type { Option as CommanderOption } from "@commander-js/extra-typings";
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import type { RootCommand } from "@bomb.sh/tab";
import { directiveFor, planCompletion, targetTypeCandidates } from "./candidates.ts";
import { type Candidate, formatAnswer, parseAnswer } from "./directive.ts";
import { type FlagSpec, type LineSpec, parseCompletionLine, splitGluedValues } from "./line.ts";
import type { LookupEnv } from "./lookups.ts";
import { answerLookup } from "./fast.ts";

/** Placeholders of flag values that are files or directories. */
const PATH_PLACEHOLDER = /[<[](path|file|dir|directory|bundle)(\.\.\.)?[>\]]/i;

/** Flags whose values the lookups provide (long names). */
const LOOKUP_FLAGS = ["namespace", "context", "node"];

function flagSpecs(options: readonly CommanderOption[]): FlagSpec[] {
  const specs: FlagSpec[] = [];
  for (const o of options) {
    if (!o.long && !o.short) continue;
    const f: FlagSpec = { long: (o.long ?? o.short!).replace(/^-+/, ""), takesValue: o.required || o.optional };
    if (o.short) f.short = o.short.replace(/^-/, "");
    if (f.takesValue && PATH_PLACEHOLDER.test(o.flags)) f.isPath = true;
    specs.push(f);
  }
  return specs;
}

function takesTargets(cmd: CommandUnknownOpts): boolean {
  return cmd.registeredArguments.some((a) => a.name() === "target");
}

/**
 * The flags and subcommands of a commander program, for {@link parseCompletionLine}.
 * @returns root flags; each subcommand's flags; the commands (`""` = root) whose positionals are targets (an
 *   argument named `target`).
 */
export function lineSpecOf(program: CommandUnknownOpts): LineSpec {
  const spec: LineSpec = { flags: flagSpecs(program.options), subcommands: {}, targetCommands: [] };
  if (takesTargets(program)) spec.targetCommands.push("");
  for (const sub of program.commands) {
    spec.subcommands[sub.name()] = flagSpecs(sub.options);
    for (const alias of sub.aliases()) spec.subcommands[alias] = spec.subcommands[sub.name()]!;
    if (takesTargets(sub)) spec.targetCommands.push(sub.name());
  }
  return spec;
}

/**
 * Runs `fn` with `console.log` captured (tab prints its answer and scripts with `console.log`).
 * @returns what was printed, each call one line.
 */
export function captureConsole(fn: () => void): string {
  const original = console.log;
  let out = "";
  console.log = (...args: unknown[]) => void (out += `${args.map(String).join(" ")}\n`);
  try {
    fn();
  } finally {
    console.log = original;
  }
  return out;
}

/**
 * Points the engine's handlers at this request's candidates: the `target` argument of every command emits
 * `candidates` when `slot` is `"target"` (the target types); the `--namespace`/`--context`/`--node` flags emit
 * nothing (their names are answered by {@link answerLookup}, not by tab), nor does anything else (the tab tree is a
 * process-wide singleton, so handlers from an earlier request are replaced).
 */
function installHandlers(root: RootCommand, slot: string | undefined, candidates: readonly Candidate[]): void {
  const emit = (complete: (value: string, description: string) => void) => {
    for (const c of candidates) complete(c.value, c.description);
  };
  const none = () => {};
  for (const cmd of [root, ...root.commands.values()]) {
    const target = cmd.arguments.get("target");
    if (target) target.handler = slot === "target" ? emit : none;
    for (const name of LOOKUP_FLAGS) {
      const option = cmd.options.get(name);
      if (option) option.handler = none;
    }
  }
}

/**
 * Answers one completion request.
 * @param program the commander program (its flags and subcommands decide how the line reads).
 * @param root the tab tree built from it by `@bomb.sh/tab/commander`.
 * @param words the words after the program name; the last is the word under the cursor (`""` for a new word).
 * @param e environment and current directory for the lookups.
 * @param onError receives a one-line reason when a lookup fails (the answer is then `:1`, no candidates).
 * @returns the answer in Cobra's format: `value\tdescription` lines, then `:<directive>`.
 */
export async function answerCompletion(
  program: CommandUnknownOpts,
  root: RootCommand,
  words: readonly string[],
  e: LookupEnv,
  onError: (reason: string) => void = () => {},
): Promise<string> {
  const spec = lineSpecOf(program);
  const line = parseCompletionLine(words, spec);
  const plan = planCompletion(line, spec);
  // names are filtered here, as on the fast path: tab would filter `--context team=a` on `a`
  if (plan.kind === "lookup") return await answerLookup(plan, line, e, onError);
  const candidates: Candidate[] = plan.kind === "target-types" ? targetTypeCandidates() : [];
  installHandlers(root, plan.kind === "target-types" ? "target" : undefined, candidates);
  const printed = parseAnswer(captureConsole(() => root.parse(splitGluedValues(words, spec))));
  return formatAnswer(printed.candidates, directiveFor(plan, printed.candidates.map((c) => c.value), false));
}
