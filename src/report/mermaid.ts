/**
 * Mermaid flowchart of a path picture (`-o mermaid`): renders on GitHub and in Markdown. Node ids are generated
 * (`n1`, …); every label is quoted, with the characters Mermaid's flowchart grammar gives meaning to written as its
 * entity codes (`#34;`, `#60;`, …), `%%` too (a `%%{init}%%` directive is read anywhere), and line breaks as `<br/>`; the title is a JSON-quoted YAML scalar. Syntax: https://mermaid.js.org/syntax/flowchart.html
 * (checked by tests/report_picture.test.ts with Mermaid's own parser).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { GraphCluster, GraphNode, PathGraph } from "./path_graph.ts";
import { printable } from "./printable.ts";

/**
 * A label as Mermaid reads it inside `["…"]`: entity codes for `"`, `<`, `>`, `#`, `&`, control characters, and a `%`
 * beside another: Mermaid reads `%%{init: …}%%` anywhere in the source as a directive that sets its configuration (an
 * unclosed `%%{` swallows the rest of the diagram), and `%%` starts a comment.
 */
function label(text: string): string {
  return text
    .replace(/[#&"<>`]|%(?=%)|(?<=%)%|[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, (ch) => `#${ch.codePointAt(0)};`)
    .replace(/\n/g, "<br/>");
}

const SHAPE: Record<GraphNode["kind"], [string, string]> = {
  client: ["([", "])"],
  entry: ["[[", "]]"],
  rule: ["[", "]"],
  endpoint: ["[(", ")]"],
  drop: ["{{", "}}"],
  info: [">", "]"],
};

/**
 * Renders the graph as a Mermaid flowchart.
 * @param g the picture (path_graph.ts).
 * @returns Mermaid source, ending in a newline.
 */
export function renderMermaid(g: PathGraph): string {
  // The title sits in YAML front matter: a JSON string is a valid YAML double-quoted scalar; control characters are
  // shown as text (`\x1b`), not passed to the page; a `%` beside another is written as a YAML escape (`\u0025`), so no
  // directive can be read in the source.
  const title = g.title.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  const lines = ["---", `title: ${JSON.stringify(title).replace(/%(?=%)|(?<=%)%/g, "\\u0025")}`, "---", "flowchart LR"];
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  const placed = new Set<string>();
  const box = (id: string, indent: string) => {
    const n = byId.get(id);
    if (!n || placed.has(id)) return;
    placed.add(id);
    const [open, close] = SHAPE[n.kind];
    lines.push(`${indent}${n.id}${open}"${label(n.label)}"${close}`);
  };
  const cluster = (c: GraphCluster, indent: string) => {
    lines.push(`${indent}subgraph ${c.id}["${label(c.label)}"]`);
    for (const id of c.nodes) box(id, indent + "  ");
    for (const sub of c.clusters) cluster(sub, indent + "  ");
    lines.push(`${indent}end`);
  };
  for (const c of g.clusters) cluster(c, "  ");
  for (const n of g.nodes) box(n.id, "  ");
  for (const e of g.edges) lines.push(`  ${e.from} -->${e.label !== undefined ? `|"${label(e.label)}"|` : ""} ${e.to}`);
  lines.push("  classDef drop fill:#fdd,stroke:#c00", "  classDef endpoint fill:#dfd,stroke:#080");
  const drops = g.nodes.filter((n) => n.kind === "drop").map((n) => n.id);
  const eps = g.nodes.filter((n) => n.kind === "endpoint").map((n) => n.id);
  if (drops.length) lines.push(`  class ${drops.join(",")} drop`);
  if (eps.length) lines.push(`  class ${eps.join(",")} endpoint`);
  return printable(lines.join("\n") + "\n");
}
