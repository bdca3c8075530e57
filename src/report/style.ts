/**
 * Terminal styling for the text renderers: ANSI colours only when the caller says so (the CLI decides from the TTY
 * and `NO_COLOR`, https://no-color.org), and a column aligner.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { COLOUR_MARK, colourMark } from "./printable.ts";

/** Colour functions; identity when colour is off. */
export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

// Colours are markers until printable() (printable.ts) turns them into ANSI codes, after escaping the data.
const wrap = (code: string) => (s: string) => `${colourMark(code)}${s}${colourMark("0")}`;

/**
 * @param color whether to emit ANSI escape codes.
 * @returns the style functions.
 */
export function makeStyle(color: boolean): Style {
  if (!color) {
    const id = (s: string) => s;
    return { bold: id, dim: id, red: id, green: id, yellow: id, cyan: id };
  }
  return { bold: wrap("1"), dim: wrap("2"), red: wrap("31"), green: wrap("32"), yellow: wrap("33"), cyan: wrap("36") };
}

// deno-lint-ignore no-control-regex
const SGR = /\u001b\[[0-9;]*m/g;

/**
 * Visible width of a string: colour markers (before printable.ts) and SGR colour codes (after it; data never holds
 * a raw ESC then, printable shows it as `\x1b`) take no column.
 */
export function visibleWidth(s: string): number {
  return s.replace(COLOUR_MARK, "").replace(SGR, "").length;
}

/**
 * Aligns rows into columns separated by two spaces (like kubectl's tabwriter output).
 * @param rows cells per row; cells may contain ANSI codes.
 * @param indent prefix of every line.
 * @returns the lines.
 */
export function table(rows: string[][], indent = ""): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, visibleWidth(c))));
  return rows.map((r) =>
    indent + r.map((c, i) => (i === r.length - 1 ? c : c + " ".repeat((widths[i] ?? 0) - visibleWidth(c)))).join("  ").trimEnd()
  );
}

/**
 * Wraps every line of a text to a terminal width, as kubectl's describe output stays readable in a narrow terminal:
 * a line longer than `width` visible columns is broken at spaces, and its continuation lines are indented two columns
 * deeper than the line itself. Words longer than the room are left whole (a rule text cut mid-token would mislead).
 * ANSI colour codes take no width.
 * @param text lines separated by `\n`.
 * @param width columns, e.g. 80 when stdout is not a terminal.
 * @returns the wrapped text.
 */
export function wrapText(text: string, width: number): string {
  return text.split("\n").map((line) => wrapLine(line, width)).join("\n");
}

function wrapLine(line: string, width: number): string {
  if (visibleWidth(line) <= width) return line;
  // the indent after any colour codes a line starts with (a styled line opens with its escape, then its spaces)
  const lead = /^((?:\x1b\[[0-9;]*m)*)( *)/.exec(line)!;
  const indent = lead[2]!;
  const cont = indent + "  ";
  const words = line.slice(lead[0].length).split(" ");
  const out: string[] = [];
  let cur = lead[1]! + indent;
  let curWidth = indent.length;
  let empty = true;
  for (const w of words) {
    const ww = visibleWidth(w);
    if (!empty && curWidth + 1 + ww > width) {
      out.push(cur);
      cur = cont + w;
      curWidth = cont.length + ww;
      continue;
    }
    cur += (empty ? "" : " ") + w;
    curWidth += (empty ? 0 : 1) + ww;
    empty = false;
  }
  out.push(cur);
  return out.join("\n");
}
