/**
 * Terminal styling for the text renderers: ANSI colours only when the caller says so (the CLI decides from the TTY
 * and `NO_COLOR`, https://no-color.org), and a column aligner.
 *
 * Runtime-neutral: no I/O.
 * @module
 */

/** Colour functions; identity when colour is off. */
export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

const wrap = (code: string) => (s: string) => `\u001b[${code}m${s}\u001b[0m`;

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
const ANSI = /\u001b\[[0-9;]*m/g;

/** Visible width of a string (ANSI codes excluded). */
export function visibleWidth(s: string): number {
  return s.replace(ANSI, "").length;
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
