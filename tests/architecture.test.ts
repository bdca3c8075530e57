// The shape of the code (docs/architecture.md), read from the import graph of every file under src/:
// - the core (model, bundle, datapath parsers, the two questions service/ and pending/, report renderers) does no I/O,
//   touches no runtime, and imports neither the Kubernetes client nor the CLI library: it runs unchanged on Node and
//   Deno and is tested on plain data;
// - data flows one way: the edges (kube/, io/) never import the CLI (src/cli/), and the core never imports an edge;
// - the Service question and the Pending question are separate rooms: service/ and pending/ never import each other;
// - the folders form no cycle.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const CORE = ["src/model", "src/bundle", "src/datapath", "src/service", "src/pending", "src/report"];
const EDGE_DIRS = ["src/cli", "src/kube", "src/io", "src/runtime"];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []
  );
}

function imports(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)[^;]*?from\s+["']([^"']+)["']/g)) out.push(m[1]!);
  for (const m of text.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)) out.push(m[1]!);
  return out;
}

/** The top-level folder of src/ a file is in: `src/service/iptables/trace.ts` → `service`. */
function room(file: string): string {
  return relative("src", file).split("/")[0]!;
}

const core = CORE.flatMap(files);
const all = files("src");
/** Folder → folders it imports (relative imports only). */
const graph = new Map<string, Set<string>>();
const edges: { from: string; to: string; file: string; spec: string }[] = [];
for (const file of all) {
  for (const spec of imports(readFileSync(file, "utf8"))) {
    if (!spec.startsWith(".")) continue;
    const target = join(file, "..", spec);
    const [a, b] = [room(file), room(target)];
    if (a === b) continue;
    edges.push({ from: a, to: b, file, spec });
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
  }
}

describe("the core is pure", () => {
  it("has files to check", () => expect(core.length).toBeGreaterThan(20));
  it.each(core)("%s", (file) => {
    const text = readFileSync(file, "utf8");
    for (const spec of imports(text)) {
      expect(spec, `${file} imports ${spec}`).not.toMatch(/^node:|^@kubernetes\/client-node|^commander|^@commander-js|^@bomb\.sh|^ws$/);
      if (spec.startsWith(".")) {
        const target = join(file, "..", spec);
        for (const edge of EDGE_DIRS) expect(target.startsWith(edge), `${file} imports the edge ${target}`).toBe(false);
      }
    }
    const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
    expect(code, `${file} touches the runtime`).not.toMatch(/\bprocess\.|\bDeno\.|\brequire\(|\bfetch\(/);
  });
});

describe("folders", () => {
  it("the edges never import the CLI", () => {
    const bad = edges.filter((e) => (e.from === "kube" || e.from === "io") && e.to === "cli");
    expect(bad.map((e) => `${e.file} imports ${e.spec}`)).toEqual([]);
  });
  it("the Service question and the Pending question never import each other", () => {
    const bad = edges.filter((e) => (e.from === "service" && e.to === "pending") || (e.from === "pending" && e.to === "service"));
    expect(bad.map((e) => `${e.file} imports ${e.spec}`)).toEqual([]);
  });
  it("the parsers and the model import no analysis", () => {
    const bad = edges.filter((e) => ["model", "datapath", "bundle"].includes(e.from) && ["service", "pending", "report"].includes(e.to));
    expect(bad.map((e) => `${e.file} imports ${e.spec}`)).toEqual([]);
  });
  it("no cycle between folders", () => {
    const cycles: string[] = [];
    const visit = (n: string, path: string[]) => {
      for (const m of graph.get(n) ?? []) {
        if (path.includes(m)) cycles.push([...path.slice(path.indexOf(m)), m].join(" → "));
        else visit(m, [...path, m]);
      }
    };
    for (const n of graph.keys()) visit(n, [n]);
    expect(cycles).toEqual([]);
  });
  it("src/explain and src/completion are gone (moved to service/, pending/ and cli/completion/)", () => {
    expect(all.filter((f) => f.startsWith("src/explain/") || f.startsWith("src/completion/"))).toEqual([]);
  });
});

describe("imports carry the .ts extension (Deno resolves nothing else)", () => {
  it.each(all)("%s", (file) => {
    for (const spec of imports(readFileSync(file, "utf8"))) {
      if (spec.startsWith(".")) expect(spec, `${file}: ${spec}`).toMatch(/\.ts$/);
    }
  });
});
