/**
 * The wire format of the node collection script (src/kube/collection_script.ts) and its parser.
 *
 * The script runs as one exec per node and prints, on stdout AND on stderr, the same marker lines around each
 * command, so each stream can be split on its own (the two are separate channels of the exec WebSocket and
 * arrive with no common order):
 * ```
 * ### kubectl-netpath:collect version=1
 * ### kubectl-netpath:begin iptables-save cmd=iptables-nft-save
 * <the command's output>
 *                                             ← one extra newline, always printed, removed by the parser
 * ### kubectl-netpath:end iptables-save exit=0 ms=31420
 * ...
 * ### kubectl-netpath:done
 * ```
 * `ms=` (optional) is how long the section took on the node; ` timeout=N` (optional) says the node stopped it at its
 * N-second limit: the section is then kept with `timedOutAfterSeconds: N` and `truncated: true`.
 * A section whose end marker never came was cut (the stream ended early): its text is kept but marked
 * `truncated: true, exitCode: null`, so no analysis mistakes it for a complete dump. When the `done` marker is
 * missing, every expected section that never began is recorded the same way (empty and truncated).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { type CommandOutput, SECTION_NAMES, type SectionName } from "./bundle.ts";

/** Prefix of every marker line. */
export const COLLECTION_MARK = "### kubectl-netpath:";
/** Version of the marker protocol the script prints and this parser reads. */
export const COLLECTION_VERSION = 1;
/** The sections the collection script prints, in its order. */
export const COLLECTED_SECTIONS: readonly SectionName[] = [
  "iptables-backend",
  "iptables-save",
  "ip6tables-save",
  "ipvsadm",
  "ipset",
  "nft-text",
  "proxy-mode",
];

/** What one exec of the collection script gave. */
export interface CollectionResult {
  /** One entry per section seen (and, when the stream was cut, per expected section never seen). */
  sections: Partial<Record<SectionName, CommandOutput>>;
  /** The `done` marker arrived: every section that began also ended. */
  complete: boolean;
  /** The script's header arrived (false: the script never ran, e.g. no `sh` in the image). */
  started: boolean;
  /** Sections cut by the end of the stream (begun without end, or never begun), or stopped at their time limit. */
  truncated: SectionName[];
  /** Sections the node stopped at their time limit (`timeout=N`; also in `truncated`). */
  timedOut: SectionName[];
  /** Protocol problems (unknown section names, version mismatch), for warnings. */
  problems: string[];
}

interface RawSection {
  text: string;
  cmd: string;
  exit: number | null;
  ended: boolean;
  /** `ms=`: how long the section took on the node. */
  ms?: number;
  /** `timeout=N`: the node stopped the section at its N-second limit. */
  timeout?: number;
}

interface Split {
  header?: string;
  sections: Map<string, RawSection>;
  order: string[];
  done: boolean;
}

const BEGIN = `${COLLECTION_MARK}begin `;
const END = `${COLLECTION_MARK}end `;
const DONE = `${COLLECTION_MARK}done`;
const HEADER = `${COLLECTION_MARK}collect `;

function lineAt(text: string, at: number): { line: string; next: number } {
  const nl = text.indexOf("\n", at);
  return nl < 0 ? { line: text.slice(at), next: text.length } : { line: text.slice(at, nl), next: nl + 1 };
}

/** Finds `marker` at the start of a line, from `from`. */
function findLineStart(text: string, marker: string, from: number): number {
  let i = text.indexOf(marker, from);
  while (i > 0 && text[i - 1] !== "\n") i = text.indexOf(marker, i + 1);
  return i;
}

/** Drops a trailing partial marker (`\n### kubectl-netpath:en`) left when the stream was cut inside it. */
function dropPartialMarker(text: string): string {
  const nl = text.lastIndexOf("\n");
  const tail = text.slice(nl + 1);
  if (tail.length > 0 && (COLLECTION_MARK.startsWith(tail) || tail.startsWith(COLLECTION_MARK))) return text.slice(0, nl + 1);
  return text;
}

function split(text: string): Split {
  const out: Split = { sections: new Map(), order: [], done: false };
  let pos = 0;
  const h = findLineStart(text, HEADER, 0);
  if (h >= 0) {
    const { line, next } = lineAt(text, h);
    out.header = line.slice(HEADER.length);
    pos = next;
  }
  for (;;) {
    const b = findLineStart(text, BEGIN, pos);
    const d = findLineStart(text, DONE, pos);
    if (d >= 0 && (b < 0 || d < b)) {
      out.done = true;
      break;
    }
    if (b < 0) break;
    const { line, next } = lineAt(text, b);
    if (next === text.length && !text.endsWith("\n")) break; // the begin line itself was cut
    const m = /^(\S+)(?: cmd=(.*))?$/.exec(line.slice(BEGIN.length));
    const name = m?.[1] ?? "";
    const cmd = m?.[2] ?? "";
    const endMarker = `\n${END}${name} exit=`;
    const e = text.indexOf(endMarker, next);
    if (e < 0) {
      out.sections.set(name, { text: dropPartialMarker(text.slice(next)), cmd, exit: null, ended: false });
      out.order.push(name);
      break;
    }
    const endLine = lineAt(text, e + 1);
    const complete = text.indexOf("\n", e + 1) >= 0; // the end line arrived whole
    // `exit=R`, then ` ms=N` (the time on the node) and ` timeout=N` (stopped at its limit) when the script printed them
    const tail = /^(\d+)(?: ms=(\d+))?(?: timeout=(\d+))?$/.exec(endLine.line.slice(`${END}${name} exit=`.length));
    const exit = complete && tail ? Number(tail[1]) : null;
    const raw: RawSection = { text: text.slice(next, Math.max(next, e)), cmd, exit, ended: exit !== null };
    if (exit !== null && tail![2] !== undefined) raw.ms = Number(tail![2]);
    if (exit !== null && tail![3] !== undefined) raw.timeout = Number(tail![3]);
    out.sections.set(name, raw);
    out.order.push(name);
    if (exit === null) break;
    pos = endLine.next;
  }
  return out;
}

/**
 * Splits the collection script's output into sections.
 * @param stdout everything the exec's stdout channel delivered.
 * @param stderr everything its stderr channel delivered (split by the same markers; text outside sections is
 *   kept in `problems` when it looks like an error of the exec itself).
 * @param expected the sections the script prints (default: the whole-node script's); when the stream was cut,
 *   those never begun are recorded as empty and truncated.
 * @returns the sections, whether the run completed, and which sections were cut.
 * @example
 * ```ts
 * const r = parseCollectionOutput("### kubectl-netpath:collect version=1\n### kubectl-netpath:begin ipset cmd=ipset list\nName: x\n\n### kubectl-netpath:end ipset exit=0\n### kubectl-netpath:done\n");
 * r.sections.ipset; // { command: "ipset list", stdout: "Name: x\n", stderr: "", exitCode: 0 }
 * ```
 */
export function parseCollectionOutput(stdout: string, stderr = "", expected: readonly SectionName[] = COLLECTED_SECTIONS): CollectionResult {
  const out = split(stdout);
  const err = split(stderr);
  const result: CollectionResult = { sections: {}, complete: out.done, started: out.header !== undefined, truncated: [], timedOut: [], problems: [] };
  if (out.header !== undefined) {
    const v = /version=(\d+)/.exec(out.header)?.[1];
    if (Number(v) !== COLLECTION_VERSION) result.problems.push(`collection script version ${v ?? "?"} (this kubectl-netpath reads version ${COLLECTION_VERSION})`);
  }
  for (const name of out.order) {
    const s = out.sections.get(name)!;
    if (!(SECTION_NAMES as readonly string[]).includes(name)) {
      result.problems.push(`unknown section "${name}" in the collection output; ignored`);
      continue;
    }
    const co: CommandOutput = { stdout: s.text, stderr: err.sections.get(name)?.text ?? "", exitCode: s.exit };
    if (s.cmd !== "") co.command = s.cmd;
    if (s.ms !== undefined) co.durationMs = s.ms;
    if (s.timeout !== undefined) {
      // stopped on the node at its limit: what it printed is a part, never analysed as whole
      co.truncated = true;
      co.timedOutAfterSeconds = s.timeout;
      result.truncated.push(name as SectionName);
      result.timedOut.push(name as SectionName);
    }
    if (!s.ended) {
      co.truncated = true;
      co.exitCode = null;
      result.truncated.push(name as SectionName);
    }
    result.sections[name as SectionName] = co;
  }
  if (!out.done) {
    for (const name of expected) {
      if (result.sections[name] === undefined) {
        result.sections[name] = { stdout: "", stderr: "", exitCode: null, truncated: true };
        result.truncated.push(name);
      }
    }
  }
  return result;
}
