/**
 * JSON and YAML that are exact and safe to print: a string from a cluster or a bundle keeps its value, but the
 * characters that would act on a terminal or hide in it ({@link UNSAFE_CHARS}: controls, C1, bidirectional and
 * zero-width characters) are written as escapes, which every JSON and YAML reader turns back into them: `\u009b` in
 * JSON; in YAML the scalar is double-quoted and the character written `\x9b` / `\u202e` (the `yaml` library quotes C1
 * controls but writes them raw, which YAML 1.2 does not allow: c-printable excludes them). Reports (`-o json|yaml`) and
 * bundles (`capture`) are written so.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { Document, visit } from "yaml";
import { UNSAFE_CHARS } from "./unsafe_chars.ts";

const UNSAFE_ONE = new RegExp(UNSAFE_CHARS.source);

function escapeJson(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

function escapeYaml(c: string): string {
  const n = c.charCodeAt(0);
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
}

/**
 * Serialises a value (a report, a bundle).
 * @param value any JSON-shaped value.
 * @param format "json" (2-space indent) or "yaml" (no line folding, no aliases).
 * @returns the text, ending with a newline; no character of {@link UNSAFE_CHARS} but newline in it raw.
 */
export function serializeExact(value: unknown, format: "json" | "yaml"): string {
  // JSON.stringify escapes C0 controls; the others are raw in its output only inside strings, where \uXXXX is exact
  if (format === "json") return JSON.stringify(value, null, 2).replace(UNSAFE_CHARS, escapeJson) + "\n";
  const doc = new Document(value, { aliasDuplicateObjects: false });
  let quoted = false;
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === "string" && UNSAFE_ONE.test(node.value)) {
        node.type = "QUOTE_DOUBLE";
        quoted = true;
      }
    },
  });
  const text = doc.toString({ lineWidth: 0 });
  // every such character is now inside a double-quoted scalar (keys included), where an escape is exact
  return quoted ? text.replace(UNSAFE_CHARS, escapeYaml) : text;
}
