/**
 * The characters from a cluster, a bundle or the user that no output may carry raw: the text renderers show them as
 * escapes (report/printable.ts), JSON and YAML write them as their escapes (exact_serialize.ts).
 *
 * Runtime-neutral: no I/O.
 * @module
 */

/**
 * Characters from outside that must not reach a terminal or a document raw: C0 controls but newline and tab, DEL, C1
 * controls; the bidirectional marks, overrides and isolates (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069:
 * "Trojan Source", CVE-2021-42574) and the invisible ones (zero-width U+200B–U+200D, U+2060–U+2064, U+FEFF) that make
 * two different names look the same; the line and paragraph separators (U+2028, U+2029) that some terminals and
 * editors break lines at.
 */
// deno-lint-ignore no-control-regex
export const UNSAFE_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
