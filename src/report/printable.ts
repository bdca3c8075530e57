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

import { UNSAFE_CHARS } from "../model/unsafe_chars.ts";

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

export { UNSAFE_CHARS };
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

/**
 * {@link printable} for one message on stderr (an error, a warning, a progress line) that may quote values from a
 * cluster, a bundle or a kubeconfig: a newline or carriage return inside the message is shown as its escape (`\x0a`,
 * `\x0d`), so a value holding one (a warning of a bundle, a node's error, a context name) cannot start a line of its
 * own and forge a message (`error: … run: curl … | sh`). Newlines before its first and after its last other character
 * are the writer's own layout (a message that starts on a fresh line, the line end) and are kept.
 * @param text one message, usually ending in `\n`.
 * @returns the text to write.
 * @example printableMessage("warning: a\nerror: b\n") // "warning: a\\x0aerror: b\n"
 */
export function printableMessage(text: string): string {
  const start = text.length - text.replace(/^\n+/, "").length;
  const body = text.replace(/\n+$/, "");
  if (body.length <= start) return printable(text);
  return printable(text.slice(0, start) + body.slice(start).replace(/[\n\r]/g, escape) + text.slice(body.length));
}
