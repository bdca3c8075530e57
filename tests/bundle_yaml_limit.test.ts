// A YAML bundle under the 256 MiB byte limit crashed with a V8 heap OOM and a native stack (a 120 MB block-style YAML
// of pods; 60 MB took 83 s and 4.3 GB): the yaml parser builds a document tree first. read_bundle.ts refuses YAML
// structure past DEFAULT_MAX_YAML_STRUCTURE_BYTES (8 MiB; block-scalar dumps not counted, they parse as plain text)
// before parsing, one line saying to give JSON or raise the limit; --max-bundle-size given is the YAML limit too.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BundleError, encodeBundle } from "../src/bundle/decode.ts";
import { DEFAULT_MAX_YAML_STRUCTURE_BYTES, readBundle, yamlStructureBytes } from "../src/io/read_bundle.ts";

const T = mkdtempSync(join(tmpdir(), "netpath-yaml-"));
afterAll(() => rmSync(T, { recursive: true, force: true }));
const lab = readBundle("examples/iptables-lab");

/** Block-style pods as `capture -o FILE.yaml` writes them, about `mb` MB of them. */
function podsYaml(mb: number): string {
  const pod = (i: number) =>
    `    - apiVersion: v1\n      kind: Pod\n      metadata:\n        name: p-${i}\n        namespace: bulk\n        labels:\n          app: bulk\n      spec:\n        nodeName: node-${i % 50}\n      status:\n        phase: Running\n`;
  const parts = ["format: kubectl-netpath/bundle\nversion: 2\nobjects:\n  pods:\n"];
  let size = 0;
  for (let i = 0; size < mb * 1e6; i++) {
    const p = pod(i);
    parts.push(p);
    size += p.length;
  }
  parts.push("nodes: []\nend: kubectl-netpath/bundle end\n");
  return parts.join("");
}

function refusal(path: string, options = {}): BundleError {
  try {
    readBundle(path, options);
  } catch (e) {
    return e as BundleError;
  }
  throw new Error(`${path} was read`);
}

describe("the YAML structure limit", () => {
  it("a 12 MB block-style YAML bundle is refused before parsing, in one line that says to use JSON", () => {
    const f = join(T, "big.yaml");
    writeFileSync(f, podsYaml(12));
    const t0 = Date.now();
    const e = refusal(f);
    expect(Date.now() - t0).toBeLessThan(3000); // not parsed: parsing would take ~8 s
    expect(e).toBeInstanceOf(BundleError);
    expect(e.message).toMatch(
      new RegExp(`^--from ${f} holds 11\\.\\d MiB of YAML structure \\(block-scalar dumps not counted\\), more than the 8 MiB a bundle may have: .*give the bundle as JSON \\(kubectl netpath capture -o FILE\\.json; kubectl get -o json\\), or raise the limit with --max-bundle-size 16Mi$`),
    );
  });

  it("an explicit --max-bundle-size is the YAML limit too (raised: read, slowly)", () => {
    const f = join(T, "nine.yaml");
    writeFileSync(f, podsYaml(9));
    expect(refusal(f).message).toMatch(/holds 8\.\d MiB of YAML structure .*--max-bundle-size 16Mi$/);
    expect(readBundle(f, { maxBytes: 16 * 1024 * 1024 }).objects.pods.length).toBeGreaterThan(40_000);
  }, 60_000);

  it("YAML object files of a directory count together", () => {
    const d = join(T, "dir");
    mkdirSync(d);
    const half = podsYaml(7).replace("format: kubectl-netpath/bundle\nversion: 2\nobjects:\n  pods:\n", "apiVersion: v1\nkind: List\nitems:\n").replace(/^ {4}/gm, "").replace(/^nodes: \[\]\nend: .*\n/m, "");
    writeFileSync(join(d, "pods-a.yaml"), half);
    writeFileSync(join(d, "pods-b.yaml"), half);
    expect(refusal(d).message).toMatch(/^--from .*dir \(its YAML files\) holds \d+(\.\d)? MiB of YAML structure/);
  });

  it("the --max-bundle-size it suggests covers the bytes read too, so following it reads the bundle", () => {
    // --max-bundle-size sets both limits: 9 MB of YAML objects beside a 30 MB dump once got "raise the limit with
    // --max-bundle-size 16Mi", and with it the next run was refused on the 16 MiB byte limit
    const d = join(T, "dump-and-yaml");
    mkdirSync(join(d, "nodes", "n1"), { recursive: true });
    const objects = podsYaml(11).replace("format: kubectl-netpath/bundle\nversion: 2\nobjects:\n  pods:\n", "apiVersion: v1\nkind: List\nitems:\n").replace(/^ {4}/gm, "").replace(/^nodes: \[\]\nend: .*\n/m, "");
    writeFileSync(join(d, "pods.yaml"), objects);
    const save = lab.nodes[0]!.sections["iptables-save"]!.stdout;
    writeFileSync(join(d, "nodes", "n1", "iptables-save.txt"), save.repeat(Math.ceil(30e6 / save.length)));
    const message = refusal(d).message;
    const suggested = /--max-bundle-size (\d+)Mi$/.exec(message);
    expect(message).toMatch(/holds \d+(\.\d)? MiB of YAML structure/);
    expect(suggested?.[1]).toBe("64");
    expect(readBundle(d, { maxBytes: Number(suggested![1]) * 1024 * 1024 }).objects.pods.length).toBeGreaterThan(40_000);
  }, 60_000);

  it("a YAML bundle that is mostly a dump in a block scalar is read (its text is not structure)", () => {
    const b = structuredClone(lab);
    const ipt = b.nodes[0]!.sections["iptables-save"]!;
    ipt.stdout = ipt.stdout.repeat(Math.ceil(12e6 / ipt.stdout.length));
    const text = encodeBundle(b, "yaml");
    expect(text.length).toBeGreaterThan(DEFAULT_MAX_YAML_STRUCTURE_BYTES);
    expect(yamlStructureBytes(text)).toBeLessThan(100_000);
    const f = join(T, "dump.yaml");
    writeFileSync(f, text);
    expect(readBundle(f).nodes[0]!.sections["iptables-save"]!.stdout).toBe(ipt.stdout);
  });

  it("counts structure, not block-scalar text, and nothing for JSON", () => {
    expect(yamlStructureBytes("a: 1\nb: |\n  x\n  y\n\nc: 2\n")).toBe("a: 1\nb: |\nc: 2\n".length);
    expect(yamlStructureBytes("- name: k\n  stdout: |-\n    text\n  exitCode: 0\n")).toBe("- name: k\n  stdout: |-\n  exitCode: 0\n".length);
    expect(yamlStructureBytes("- |\n  text\n- b\n")).toBe("- |\n- b\n".length);
    expect(yamlStructureBytes('{"a": 1}')).toBe(0);
  });
});
