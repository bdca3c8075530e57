/**
 * Graphviz DOT of a path picture (`-o dot`; `dot -Tsvg` draws it). Node ids are generated (`n1`, …); labels are DOT
 * quoted strings with `"` and `\` escaped and line breaks as `\n`; clusters are `subgraph cluster_…`. Grammar:
 * https://graphviz.org/doc/info/lang.html (checked by tests/report_picture.test.ts with Graphviz itself).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { GraphCluster, GraphNode, PathGraph } from "./path_graph.ts";
import { printable } from "./printable.ts";

/** A DOT quoted string. Control characters other than the line break are shown as `\xHH`. */
function quote(text: string): string {
  return `"${
    text.replace(/[\\"]/g, (c) => `\\${c}`)
      .replace(/\n/g, "\\n")
      .replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)
  }"`;
}

const ATTRS: Record<GraphNode["kind"], string> = {
  client: "shape=oval",
  entry: "shape=box, style=bold",
  rule: "shape=box",
  endpoint: 'shape=cylinder, style=filled, fillcolor="#ddffdd"',
  drop: 'shape=hexagon, style=filled, fillcolor="#ffdddd"',
  info: "shape=note",
};

/**
 * Renders the graph as a DOT digraph.
 * @param g the picture (path_graph.ts).
 * @returns DOT source, ending in a newline.
 */
export function renderDot(g: PathGraph): string {
  const lines = [`digraph netpath {`, `  label=${quote(g.title)};`, "  labelloc=t;", "  rankdir=LR;", '  node [fontname="monospace", fontsize=10];'];
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  const placed = new Set<string>();
  const box = (id: string, indent: string) => {
    const n = byId.get(id);
    if (!n || placed.has(id)) return;
    placed.add(id);
    lines.push(`${indent}${n.id} [label=${quote(n.label)}, ${ATTRS[n.kind]}];`);
  };
  const cluster = (c: GraphCluster, indent: string) => {
    lines.push(`${indent}subgraph cluster_${c.id} {`, `${indent}  label=${quote(c.label)};`);
    for (const id of c.nodes) box(id, indent + "  ");
    for (const sub of c.clusters) cluster(sub, indent + "  ");
    lines.push(`${indent}}`);
  };
  for (const c of g.clusters) cluster(c, "  ");
  for (const n of g.nodes) box(n.id, "  ");
  for (const e of g.edges) lines.push(`  ${e.from} -> ${e.to}${e.label !== undefined ? ` [label=${quote(e.label)}]` : ""};`);
  lines.push("}");
  return printable(lines.join("\n") + "\n");
}
