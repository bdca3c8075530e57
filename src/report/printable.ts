/**
 * Text for a terminal from strings that came from a cluster or a bundle (names, annotations, Event messages, dump
 * lines quoted in findings): nothing in them may act on the terminal (issue 13 defect 6). Every C0 control but
 * newline and tab, DEL, every C1 control, the bidirectional marks, overrides and isolates (which reorder what is shown,
 * "Trojan Source"), the invisible zero-width characters and the line separators ({@link UNSAFE_CHARS}) are shown as
 * escapes (`\x1b`, `\u202e`); the colours
 * the renderers themselves add survive, because they are written as per-process private-use markers
 * ({@link colourMark}) and only those become ANSI codes here. JSON and YAML output never pass through this: they stay
 * exact, those characters written as their escapes (serialize.ts).
 *
 * Runtime-neutral: no I/O.
 * @module
 */

// A marker no string from outside can forge: private-use characters around a random per-process tag.
const TAG = Array.from({ length: 8 }, () => String.fromCharCode(0xe100 + Math.floor(Math.random() * 0x400))).join("");
const OPEN = `\ue000${TAG}`;
const CLOSE = "\ue001";

/**
 * The marker of an SGR colour code (`1`, `31`, `0`, …) that {@link printable} turns into `ESC [ code m`.
 * @param code the SGR parameters, digits and `;` only.
 * @throws {RangeError} for anything else.
 */
export function colourMark(code: string): string {
  if (!/^[0-9;]+$/.test(code)) throw new RangeError(`colourMark: "${code}" is not an SGR code`);
  return `${OPEN}${code}${CLOSE}`;
}

/** Matches a colour marker of this process (for widths: it takes no column). */
export const COLOUR_MARK = new RegExp(`${OPEN}[0-9;]+${CLOSE}`, "g");

/**
 * Characters from outside that must not reach a terminal or a document raw: C0 controls but newline and tab, DEL, C1
 * controls; the bidirectional marks, overrides and isolates (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069:
 * "Trojan Source", CVE-2021-42574) and the invisible ones (zero-width U+200B–U+200D, U+2060–U+2064, U+FEFF) that make
 * two different names look the same; the line and paragraph separators (U+2028, U+2029) that some terminals and
 * editors break lines at.
 */
// deno-lint-ignore no-control-regex
export const UNSAFE_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
const UNSAFE = UNSAFE_CHARS;

function escape(c: string): string {
  const n = c.charCodeAt(0);
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
}

/**
 * Makes a rendered text safe to print: controls and bidi overrides escaped, this process's colour markers turned
 * into ANSI codes.
 * @param text the renderer's output (lines separated by `\n`).
 * @returns the text to write to a terminal.
 * @example printable("svc \u001b]0;pwned\u0007") // "svc \\x1b]0;pwned\\x07"
 */
export function printable(text: string): string {
  return text.replace(UNSAFE, escape).replace(COLOUR_MARK, (m) => `\u001b[${m.slice(OPEN.length, -CLOSE.length)}m`);
}

/**
 * {@link printable} for a renderer's lines: a newline or carriage return inside one line (a name or message from a
 * bundle holding `\n`) is shown as its escape (`\x0a`), so no value can start a line of its own and forge a report
 * line (a heading, a finding, a command to run).
 * @param lines the rendered lines, without line ends.
 * @returns the text, each line ended by `\n`.
 */
export function printableLines(lines: readonly string[]): string {
  return printable(lines.map((l) => l.replace(/[\n\r]/g, escape)).join("\n") + "\n");
}
