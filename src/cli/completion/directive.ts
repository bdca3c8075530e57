/**
 * Cobra's shell-completion directives: the bit field printed as the last line (`:<n>`) of a `__complete` answer,
 * which kubectl (>= 1.26, for plugins through `kubectl_complete-<plugin>`) and the generated shell scripts read.
 * Values as defined by spf13/cobra completions.go (`ShellCompDirective`), and mirrored by @bomb.sh/tab.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { UNSAFE_CHARS } from "../../report/printable.ts";

/** The directive bits. `Default` (0) lets the shell fall back to file completion when there are no candidates. */
export const Directive = {
  /** Completion failed: the shell ignores the candidates and offers nothing (no file completion either). */
  Error: 1,
  /** Do not add a space after a single completion (used after `svc/`, whose name comes next). */
  NoSpace: 2,
  /** Do not fall back to file completion when there are no candidates. */
  NoFileComp: 4,
  /** The candidates are file extensions to filter file completion on. */
  FilterFileExt: 8,
  /** Complete directories only (the first candidate, when present, is the directory to start from). */
  FilterDirs: 16,
  /** Keep the candidates in the order given instead of sorting them (Pending claims first). */
  KeepOrder: 32,
  /** No bit set: the shell's default behaviour, which is file completion when no candidate is given. */
  Default: 0,
} as const;

/** One completion candidate: the word and an optional description (shown by zsh, fish and PowerShell). */
export interface Candidate {
  value: string;
  description: string;
}

/**
 * Formats an answer in Cobra's `__complete` format: one `value[\tdescription]` line per candidate, then
 * `:<directive>`.
 * @param candidates the candidates, in order.
 * @param directive the directive bits (sum of {@link Directive} values).
 * @returns the text, ending with a newline; each candidate as {@link safeCandidate} makes it.
 * @example
 * ```ts
 * formatAnswer([{ value: "svc/", description: "a Service" }], Directive.NoSpace | Directive.NoFileComp);
 * // "svc/\ta Service\n:6\n"
 * ```
 */
export function formatAnswer(candidates: readonly Candidate[], directive: number): string {
  let out = "";
  for (const c of candidates) {
    const { value, description } = safeCandidate(c);
    out += description ? `${value}\t${description}\n` : `${value}\n`;
  }
  return `${out}:${directive}\n`;
}

function escapeChar(c: string): string {
  const n = c.charCodeAt(0);
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
}

/**
 * A candidate as an answer may carry it: tabs and line breaks (which would end the `value<TAB>description` line, and
 * forge a candidate of their own) become spaces; in the description, which zsh and fish print as they get it, the
 * characters that act on a terminal or hide ({@link UNSAFE_CHARS}: controls, C1, bidi and zero-width characters) are
 * written as escapes (`\x1b`, `\u202e`). Values are names checked against Kubernetes' name rules before they get here
 * (lookups.ts); a kubeconfig context name is offered only when a shell reads it as one plain word.
 */
export function safeCandidate(c: Candidate): Candidate {
  const oneLine = (s: string) => s.replace(/[\t\r\n\u2028\u2029]+/g, " ");
  return { value: oneLine(c.value), description: oneLine(c.description).replace(UNSAFE_CHARS, escapeChar) };
}

/**
 * Parses an answer in Cobra's `__complete` format (the inverse of {@link formatAnswer}), for tests and tools.
 * @param text the whole output of a completion request.
 * @returns the candidates and the directive; lines after the directive line (cobra's debug output goes to stderr,
 *   so there should be none) are ignored.
 * @throws {Error} `completion answer has no directive line (":<n>"): "<last line>"` when the last non-empty line is
 *   not `:<digits>`.
 */
export function parseAnswer(text: string): { candidates: Candidate[]; directive: number } {
  const lines = text.split("\n");
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const last = lines.pop() ?? "";
  const m = /^:(\d+)$/.exec(last);
  if (!m) throw new Error(`completion answer has no directive line (":<n>"): "${last}"`);
  const candidates = lines.map((l) => {
    const i = l.indexOf("\t");
    return i < 0 ? { value: l, description: "" } : { value: l.slice(0, i), description: l.slice(i + 1) };
  });
  return { candidates, directive: Number(m[1]) };
}
