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
import { Document, type ScalarTag, Schema, visit } from "yaml";
import { UNSAFE_CHARS } from "./unsafe_chars.ts";

/**
 * The tags a YAML 1.1 reader (PyYAML, go-yaml v2 and so sigs.k8s.io/yaml, js-yaml) resolves plain scalars to: the
 * `yaml` library's own `yaml-1.1` schema (bool `yes`/`no`/`on`/`off`/`y`/`n` in their YAML 1.1 spellings, ints with
 * `_`, binary and sexagesimal, floats, null and `~`, timestamps, the merge key `<<`), and the value key `=`
 * (tag:yaml.org,2002:value, https://yaml.org/type/value.html), which PyYAML's SafeLoader resolves and then cannot
 * construct. Given as the document's `compat` schema, the library quotes every string scalar one of them would take,
 * as it already does for the 1.2 core schema's: the output reads back as the same data in YAML 1.2 and 1.1, as
 * kubectl's (go-yaml) output does.
 */
const YAML_11_COMPAT = [
  ...new Schema({ schema: "yaml-1.1" }).tags,
  { tag: "tag:yaml.org,2002:value", default: true, test: /^=$/, resolve: (s: string) => s } satisfies ScalarTag,
];

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
 * @param format "json" (2-space indent) or "yaml" (no line folding, no aliases; a string a YAML 1.1 reader would
 *   take for another type quoted, {@link YAML_11_COMPAT}).
 * @returns the text, ending with a newline; no character of {@link UNSAFE_CHARS} but newline in it raw.
 */
export function serializeExact(value: unknown, format: "json" | "yaml"): string {
  // JSON.stringify escapes C0 controls; the others are raw in its output only inside strings, where \uXXXX is exact
  if (format === "json") return JSON.stringify(value, null, 2).replace(UNSAFE_CHARS, escapeJson) + "\n";
  const doc = new Document(value, { aliasDuplicateObjects: false, compat: YAML_11_COMPAT });
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
