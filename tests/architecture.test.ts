// The pure core (parsers, bundle model, analyses, renderers) must not do I/O, touch the runtime, or import the
// Kubernetes client or the CLI library: that is what lets it run unchanged on Node and Deno and be tested on plain
// data. This test reads the import graph of every core file.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const CORE = ["src/model", "src/bundle", "src/datapath", "src/explain", "src/report"];
const EDGE_DIRS = ["src/cli", "src/kube", "src/io", "src/completion", "src/runtime"];

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

const core = CORE.flatMap(files);

describe("the core is pure", () => {
  it("has files to check", () => expect(core.length).toBeGreaterThan(20));
  it.each(core)("%s", (file) => {
    const text = readFileSync(file, "utf8");
    for (const spec of imports(text)) {
      expect(spec, `${file} imports ${spec}`).not.toMatch(/^node:|^@kubernetes\/client-node|^commander|^@commander-js|^@bomb\.sh/);
      if (spec.startsWith(".")) {
        const target = join(file, "..", spec);
        for (const edge of EDGE_DIRS) expect(target.startsWith(edge), `${file} imports the edge ${target}`).toBe(false);
      }
    }
    const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
    expect(code, `${file} touches the runtime`).not.toMatch(/\bprocess\.|\bDeno\.|\brequire\(|\bfetch\(/);
  });
});

describe("imports carry the .ts extension (Deno resolves nothing else)", () => {
  it.each([...core, ...EDGE_DIRS.flatMap((d) => { try { return files(d); } catch { return []; } })])("%s", (file) => {
    for (const spec of imports(readFileSync(file, "utf8"))) {
      if (spec.startsWith(".")) expect(spec, `${file}: ${spec}`).toMatch(/\.ts$/);
    }
  });
});
