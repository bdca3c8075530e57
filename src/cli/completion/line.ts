/**
 * Reading a command line being completed: which flags are already set (`-n`, `--context`, `--kubeconfig`, `--from`
 * decide where dynamic candidates come from), which positional words are there, and what the word under the cursor
 * is (a flag name, a flag's value, or a positional). The rules are commander's (commander 14, lib/command.js
 * `parseOptions`): `--flag value`, `--flag=value`, `-f value`, `-fvalue`, `--` ends the flags, root flags are
 * accepted after a subcommand name; and `-f=value` as kubectl (pflag) and the command read it: the value is `value`.
 *
 * Runtime-neutral: no I/O.
 * @module
 */

/** One flag of a command, as the completion needs it. */
export interface FlagSpec {
  /** Long name without the dashes, e.g. `namespace` (for `--no-color`: `no-color`). */
  long: string;
  /** Short letter without the dash, e.g. `n`. */
  short?: string;
  /** Whether the flag takes a value (`<value>` or `[value]` in commander). */
  takesValue: boolean;
  /** Whether the value is a file or directory (placeholder `<path>`, `<file>`, `<dir>`): the shell completes files. */
  isPath?: boolean;
}

/** The flags and subcommands of the program. */
export interface LineSpec {
  /** Flags of the root command. */
  flags: FlagSpec[];
  /** Subcommand name → its own flags (root flags apply too). */
  subcommands: Record<string, FlagSpec[]>;
  /** Commands whose positionals are targets (`svc/NAME`…): `""` for the root command, and e.g. `capture`. */
  targetCommands: string[];
}

/** What the word under the cursor is. */
export type Completing =
  /** A flag name (`-`, `--na`). */
  | { kind: "flag-name" }
  /** The value of the flag with this long name (`-n <TAB>`, `--namespace=<TAB>`). */
  | { kind: "flag-value"; flag: string }
  /** The positional word at this index (0-based, among the command's positionals; the subcommand name excluded). */
  | { kind: "positional"; index: number };

/** A command line being completed. */
export interface CompletionLine {
  /** The word under the cursor; for `--flag=value` only the part after `=`. Empty for a new word. */
  current: string;
  /** The subcommand the line is in (`capture`, `cleanup`, `completion`), when one was typed. */
  subcommand?: string;
  /** Long flag name → the values typed for it, in order (a boolean flag gets `"true"`). Unknown flags are kept
   * under their name as typed, without dashes. */
  flags: Record<string, string[]>;
  /** Positional words before the cursor (the subcommand name excluded). */
  positionals: string[];
  /** What the cursor word is. */
  completing: Completing;
}

/**
 * The flag a word names, in a subcommand's flags first, then the root's.
 * @param word `--long` or `-s`.
 */
export function findFlag(spec: LineSpec, sub: string | undefined, word: string): FlagSpec | undefined {
  const lists = sub !== undefined && spec.subcommands[sub] ? [spec.subcommands[sub]!, spec.flags] : [spec.flags];
  for (const list of lists) {
    for (const f of list) {
      if (word.startsWith("--") ? f.long === word.slice(2) : f.short !== undefined && f.short === word.slice(1)) return f;
    }
  }
  return undefined;
}

/**
 * Reads the words of a completion request.
 * @param words the words after the program name, the last one being the word under the cursor (`""` for a new
 *   word), exactly as kubectl passes them to `kubectl_complete-netpath` and the shell scripts to `complete --`.
 *   An empty list means completing a new first word.
 * @param spec the program's flags and subcommands.
 * @returns the line. Never throws: unknown flags are taken as boolean flags, as commander would report them only
 *   when the command runs.
 * @example
 * ```ts
 * parseCompletionLine(["-n", "kube-system", "svc/"], spec);
 * // { current: "svc/", flags: { namespace: ["kube-system"] }, positionals: [], completing: { kind: "positional", index: 0 } }
 * ```
 */
export function parseCompletionLine(words: readonly string[], spec: LineSpec): CompletionLine {
  const before = words.slice(0, -1);
  const current = words.length > 0 ? words[words.length - 1]! : "";
  const flags: Record<string, string[]> = {};
  const positionals: string[] = [];
  let subcommand: string | undefined;
  const add = (name: string, value: string) => void (flags[name] ??= []).push(value);
  let pendingFlag: FlagSpec | undefined; // a value-taking flag whose value is the next word
  let afterTerminator = false;

  const positional = (w: string) => {
    if (subcommand === undefined && positionals.length === 0 && Object.hasOwn(spec.subcommands, w)) subcommand = w;
    else positionals.push(w);
  };

  for (const w of before) {
    if (pendingFlag) {
      add(pendingFlag.long, w);
      pendingFlag = undefined;
    } else if (afterTerminator || w === "-" || !w.startsWith("-")) {
      positional(w);
    } else if (w === "--") {
      afterTerminator = true;
    } else if (w.startsWith("--")) {
      const eq = w.indexOf("=");
      const name = eq < 0 ? w : w.slice(0, eq);
      const f = findFlag(spec, subcommand, name);
      if (eq >= 0) add(f?.long ?? name.slice(2), w.slice(eq + 1));
      else if (f?.takesValue) pendingFlag = f;
      else add(f?.long ?? name.slice(2), "true");
    } else {
      // -n value, -nvalue, -n=value; a cluster of boolean letters is recorded letter by letter.
      const f = findFlag(spec, subcommand, w.slice(0, 2));
      if (f?.takesValue) {
        if (w.length > 2) add(f.long, shortGluedValue(w));
        else pendingFlag = f;
      } else {
        for (const letter of w.slice(1)) add(findFlag(spec, subcommand, `-${letter}`)?.long ?? letter, "true");
      }
    }
  }

  const line: CompletionLine = { current, flags, positionals, completing: { kind: "positional", index: positionals.length } };
  if (subcommand !== undefined) line.subcommand = subcommand;
  if (pendingFlag) {
    line.completing = { kind: "flag-value", flag: pendingFlag.long };
  } else if (!afterTerminator && current.startsWith("-")) {
    const eq = current.indexOf("=");
    // --flag=value, and -n=value (pflag's reading, as the command's)
    const name = current.startsWith("--") ? (eq > 0 ? current.slice(0, eq) : undefined) : eq === 2 ? current.slice(0, 2) : undefined;
    const f = name === undefined ? undefined : findFlag(spec, subcommand, name);
    if (f?.takesValue) {
      line.completing = { kind: "flag-value", flag: f.long };
      line.current = current.slice(eq + 1);
    } else {
      line.completing = { kind: "flag-name" };
    }
  }
  return line;
}

/**
 * The value glued to a short flag that takes one: `-nNS` → `NS`, and `-n=NS` → `NS` as kubectl reads it (pflag
 * flag.go `parseSingleShortArg`: an `=` right after the letter separates the value) and as the command does
 * (src/cli/program.ts `shortEquals`); commander alone would keep `=NS`.
 * @param w a word of at least three characters starting with `-` and a letter whose flag takes a value.
 */
function shortGluedValue(w: string): string {
  return w[2] === "=" ? w.slice(3) : w.slice(2);
}

/**
 * The words with glued flag values split (`--from=PATH` → `--from PATH`, `-nNS` and `-n=NS` → `-n NS`), for engines that only
 * read the spaced form (@bomb.sh/tab 0.0.22 takes the word after an unrecognised `--from=PATH` for that flag's
 * value). The word under the cursor and everything after `--` are left as they are.
 * @param words the words of a completion request (the last is the word under the cursor).
 * @param spec the program's flags.
 * @returns a new list; the same words when nothing is glued.
 */
export function splitGluedValues(words: readonly string[], spec: LineSpec): string[] {
  const out: string[] = [];
  let subcommand: string | undefined;
  let terminated = false;
  let valueNext = false;
  words.forEach((w, i) => {
    const isCurrent = i === words.length - 1;
    if (isCurrent || terminated || valueNext || !w.startsWith("-") || w === "-") {
      if (!isCurrent && !valueNext && !terminated && !w.startsWith("-") && subcommand === undefined && Object.hasOwn(spec.subcommands, w)) {
        subcommand = w;
      }
      valueNext = false;
      out.push(w);
      return;
    }
    if (w === "--") {
      terminated = true;
      out.push(w);
      return;
    }
    const eq = w.indexOf("=");
    if (w.startsWith("--")) {
      const f = findFlag(spec, subcommand, eq < 0 ? w : w.slice(0, eq));
      if (eq >= 0 && f?.takesValue) out.push(w.slice(0, eq), w.slice(eq + 1));
      else out.push(w);
      valueNext = eq < 0 && f?.takesValue === true;
      return;
    }
    const f = findFlag(spec, subcommand, w.slice(0, 2));
    if (f?.takesValue && w.length > 2) out.push(w.slice(0, 2), shortGluedValue(w));
    else out.push(w);
    valueNext = f?.takesValue === true && w.length === 2;
  });
  return out;
}
