/**
 * `kubectl_complete-netpath`, generated: a POSIX sh script that answers the static completion requests itself (flag
 * names, `-o`/`--profile`/shell choices, the `svc/` `pvc/` `pod/` prefixes and subcommands, path flags) and hands
 * every other request to `kubectl-netpath complete -- WORDS` (names from a bundle or the cluster), so a TAB on a
 * static word costs a `sh`, not a Node start (issue 12 point 6).
 *
 * kubectl (>= 1.26) runs it from PATH to complete `kubectl netpath …`; the bash script calls it when it is on PATH.
 * Its answers are the engine's own (src/cli/completion/engine.ts), computed when the file is generated from the
 * program's flags: for each static state the full candidate list, which the script filters by the literal prefix of
 * the current word (`case $v in "$cur"*`: the word is a pattern-quoted string, never code), with the engine's
 * directive rule (NoFileComp, plus NoSpace when a `…/` prefix is offered; Default for path flags). A line the
 * script is not sure about (`--`, glued short flags, `--flag=value` under the cursor, a subcommand after root flags,
 * a second positional) goes to Node. tests/completion_static.test.ts checks every static state and prefix against
 * the engine.
 * @module
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import { planCompletion } from "./candidates.ts";
import { lineSpecOf } from "./engine.ts";
import { type FlagSpec, type LineSpec, parseCompletionLine } from "./line.ts";
import { parseAnswer } from "./directive.ts";
import type { CliIo } from "../io.ts";
import { buildProgram, runCli } from "../program.ts";

/** Answers one `complete -- WORDS` request in-process (the CLI's own `complete` subcommand). */
export type Answerer = (words: string[]) => Promise<string>;

/** One static state's answer: the candidate lines and how the directive is made. */
interface StaticAnswer {
  /** `value<TAB>description` lines of the answer for the empty (or `-`) word. */
  lines: string[];
  /** `filter`: filter by prefix, directive 4 (+2 with a `…/` value when `slash`); `verbatim`: print as is. */
  mode: "filter" | "verbatim";
  slash: boolean;
  /** The verbatim answer. */
  text?: string;
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function valueFlags(flags: readonly FlagSpec[]): string[] {
  return flags.filter((f) => f.takesValue).flatMap((f) => [`--${f.long}`, ...(f.short ? [`-${f.short}`] : [])]);
}

async function answerOf(answer: Answerer, words: string[]): Promise<StaticAnswer> {
  const text = await answer(words);
  const parsed = parseAnswer(text);
  const lines = text.split("\n").filter((l) => l !== "" && !l.startsWith(":"));
  if (parsed.directive === 4 || parsed.directive === 6) return { lines, mode: "filter", slash: parsed.directive === 6 };
  return { lines, mode: "verbatim", slash: false, text };
}

/**
 * Generates the script.
 * @param program the CLI's commander program (for its flags and subcommands).
 * @param answer the CLI's own answer to `complete -- WORDS`, in-process.
 * @param name the command to hand the dynamic requests to (`kubectl-netpath`); only `[A-Za-z0-9_-]`.
 * @returns the script text.
 * @throws {Error} for a name with other characters.
 */
export async function staticResponderScript(program: CommandUnknownOpts, answer: Answerer, name = "kubectl-netpath"): Promise<string> {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`staticResponderScript: "${name}" is not a command name`);
  const spec: LineSpec = lineSpecOf(program);
  const subs = Object.keys(spec.subcommands).filter((s) => s !== "complete" && /^[a-z][a-z-]*$/.test(s)).sort();
  const cases: string[] = [];
  const flagCases: string[] = [];
  for (const cmd of ["", ...subs]) {
    const pre = cmd === "" ? [] : [cmd];
    const flags = cmd === "" ? spec.flags : spec.subcommands[cmd]!;
    const vf = valueFlags(flags);
    const all = flags.flatMap((f) => [`--${f.long}`, ...(f.short ? [`-${f.short}`] : [])]);
    flagCases.push(`${q(cmd)}) case $2 in ${vf.length > 0 ? vf.join("|") : "--never--"}) return 0 ;; ${all.length > 0 ? all.join("|") : "--never--"}) return 1 ;; esac ;;`);
    const states: [string, string[]][] = [[`${cmd}|-`, [...pre, "-"]], [`${cmd}|--`, [...pre, "--"]]];
    for (const f of flags.filter((x) => x.takesValue)) {
      const words = [...pre, `--${f.long}`, ""];
      const plan = planCompletion(parseCompletionLine(words, spec), spec);
      if (plan.kind === "lookup") continue;
      states.push([`${cmd}|v|--${f.long}`, words]);
      if (f.short) states.push([`${cmd}|v|-${f.short}`, [...pre, `-${f.short}`, ""]]);
    }
    const pos = [...pre, ""];
    const plan = planCompletion(parseCompletionLine(pos, spec), spec);
    if (plan.kind !== "lookup") states.push([`${cmd}|p`, pos]);
    for (const [key, words] of states) {
      const a = await answerOf(answer, words);
      const body = a.mode === "verbatim"
        ? `printf %s ${q(a.text!)}`
        : `e ${a.slash ? 1 : 0}${a.lines.map((l) => ` ${q(l)}`).join("")}`;
      cases.push(`${q(key)}) ${body} ;;`);
    }
  }
  return `#!/bin/sh
# Completion of \`kubectl netpath …\` through kubectl (>= 1.26), and of the bash script when this is on PATH.
#
# kubectl completes a plugin by running \`kubectl_complete-<plugin>\` from PATH with the words typed after the plugin
# name, the last one being the word under the cursor ("" for a new word), and reads Cobra's __complete format:
# \`candidate<TAB>description\` lines, then \`:<directive>\`. Static words (flags, choices, the svc/ pvc/ pod/
# prefixes, subcommands) are answered here, from tables generated from ${name}'s own answers
# (src/cli/completion/static_responder.ts); names go to \`${name} complete\`.
# Install: put this file on PATH beside ${name} (npm i -g does it), executable.
dyn() { exec ${name} complete -- "$@"; }
T=$(printf '\\t')
# e SLASH LINE…: the lines whose value starts with the current word, then the directive.
e() {
  s=$1; shift; d=4
  for l do
    v=\${l%%"$T"*}
    case $v in "$cur"*) printf '%s\\n' "$l"; [ "$s" = 1 ] && case $v in */) d=6 ;; esac ;; esac
  done
  printf ':%s\\n' $d
}
# vf CMD WORD: 0 when WORD is a flag of CMD that takes a value, 1 for its other flags, 2 for a flag it lacks.
vf() {
  case $1 in
${flagCases.map((c) => `    ${c}`).join("\n")}
  esac
  return 2
}
# scan WORD…: sets cmd, key (empty: not static) and cur from the words.
scan() {
  cmd=""; key=""; want=""; pos=0
  case $1 in ${subs.join("|")}) [ $# -gt 1 ] && { cmd=$1; shift; } ;; esac
  while [ $# -gt 1 ]; do
    w=$1; shift
    if [ -n "$want" ]; then want=""; continue; fi
    case $w in
      --) return ;;
      ${subs.join("|")}) [ -z "$cmd" ] && return; pos=$((pos + 1)) ;;
      --*=*) vf "$cmd" "\${w%%=*}"; [ $? = 2 ] && return ;;
      --?*|-?) vf "$cmd" "$w"; case $? in 0) want=$w ;; 2) return ;; esac ;;
      -*) return ;;
      *) pos=$((pos + 1)) ;;
    esac
  done
  cur=$1
  if [ -n "$want" ]; then key="$cmd|v|$want"; return; fi
  case $cur in
    -*=*) return ;;
    --*) key="$cmd|--" ;;
    -*) key="$cmd|-" ;;
    */*) ;;
    *) [ $pos = 0 ] && key="$cmd|p" ;;
  esac
}
[ $# -gt 0 ] || set -- ""
scan "$@"
case $key in
${cases.map((c) => `  ${c}`).join("\n")}
  *) dyn "$@" ;;
esac
`;
}

/**
 * The `kubectl_complete-netpath` file of completions/, generated from the CLI itself (scripts/gen-completions.mjs).
 * @returns the script text.
 */
export function kubectlCompleteScript(): Promise<string> {
  const io = (out: string[]): CliIo => ({ stdout: (t) => void out.push(t), stderr: () => {}, env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: "/" });
  const program = buildProgram(io([]), { code: 0 });
  return staticResponderScript(program, async (words) => {
    const out: string[] = [];
    await runCli(["complete", "--", ...words], io(out));
    return out.join("");
  });
}

/**
 * The source of src/cli/completion/line_spec_data.ts: the program's flags and subcommands as {@link lineSpecOf}
 * reads them, for the fast completion path (fast.ts), which does not build the program.
 * @returns TypeScript source.
 */
export function lineSpecSource(): string {
  const io: CliIo = { stdout: () => {}, stderr: () => {}, env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: "/" };
  const spec = lineSpecOf(buildProgram(io, { code: 0 }));
  return `/**
 * The CLI's flags and subcommands as the completion reads them (src/cli/completion/engine.ts lineSpecOf), for the
 * fast completion path (fast.ts). Generated by scripts/gen-completions.mjs from src/cli/program.ts; do not edit.
 * @module
 */
import type { LineSpec } from "./line.ts";

/** The program's line spec (generated). */
export const LINE_SPEC: LineSpec = ${JSON.stringify(spec, null, 2)};
`;
}
