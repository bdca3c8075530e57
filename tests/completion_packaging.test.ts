// Packaging as a kubectl plugin: the krew manifest follows krew-index's conventions and installs files the npm
// tarball really contains (executable where it must be), and the npm package ships the completion helper.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MANIFEST = join(ROOT, "plugins/netpath.yaml");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string; version: string; bin: Record<string, string> };

interface Platform {
  selector: { matchExpressions?: { key: string; operator: string; values: string[] }[]; matchLabels?: Record<string, string> };
  uri: string;
  sha256: string;
  files?: { from: string; to: string }[];
  bin: string;
}
const manifest = parse(readFileSync(MANIFEST, "utf8")) as {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { version: string; homepage: string; shortDescription: string; description: string; caveats: string; platforms: Platform[] };
};

/** Files of the tarball `npm pack` would publish, with their modes (the scripts are not run: dist/ as built). */
let tarball: { path: string; mode: number }[] = [];
beforeAll(async () => {
  const out = await new Promise<string>((resolve, reject) =>
    execFile("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, encoding: "utf8" }, (err, stdout) => (err ? reject(err) : resolve(stdout)))
  );
  tarball = (JSON.parse(out) as { files: { path: string; mode: number }[] }[])[0]!.files.map((f) => ({ path: `package/${f.path}`, mode: f.mode }));
});

/** krew's `from` patterns: `*` matches within one path segment. */
function matches(pattern: string, path: string): boolean {
  const re = new RegExp(`^${pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*")}$`);
  return re.test(path);
}

describe("krew manifest plugins/netpath.yaml (krew-index conventions)", () => {
  it("is a v1alpha2 Plugin named as its file, versioned as the package", () => {
    expect(manifest.apiVersion).toBe("krew.googlecontainertools.github.com/v1alpha2");
    expect(manifest.kind).toBe("Plugin");
    expect(`${manifest.metadata.name}.yaml`).toBe(basename(MANIFEST));
    expect(manifest.spec.version).toBe(`v${pkg.version}`);
    expect(manifest.spec.homepage).toMatch(/^https:\/\//);
  });
  it("documentation fields: a few-word tagline, a description, caveats for what it needs", () => {
    const { shortDescription, description, caveats } = manifest.spec;
    expect(shortDescription.length).toBeLessThanOrEqual(50);
    expect(shortDescription).not.toMatch(/kubectl|plugin/i);
    expect(description.trim().length).toBeGreaterThan(100);
    for (const text of [description, caveats]) for (const line of text.split("\n")) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(caveats).toContain("Node.js");
    expect(caveats).toContain("kubectl_complete-netpath");
    expect(caveats).toContain(`/store/netpath/${manifest.spec.version}/`);
  });
  it("platforms: os/arch selectors, the release archive of this version, a sha256 or none yet", () => {
    expect(manifest.spec.platforms.length).toBeGreaterThan(0);
    for (const p of manifest.spec.platforms) {
      const keys = [...(p.selector.matchExpressions ?? []).map((e) => e.key), ...Object.keys(p.selector.matchLabels ?? {})];
      expect(keys.length).toBeGreaterThan(0);
      for (const k of keys) expect(["os", "arch"]).toContain(k);
      for (const e of p.selector.matchExpressions ?? []) for (const v of e.values) expect(["linux", "darwin", "windows", "amd64", "arm64"]).toContain(v);
      expect(p.uri).toBe(`https://registry.npmjs.org/${pkg.name}/-/${pkg.name}-${pkg.version}.tgz`);
      // Empty until the version is published (krew-index refuses it, so it cannot be submitted by mistake).
      expect(p.sha256).toMatch(/^([0-9a-f]{64})?$/);
    }
  });
  it("installs files the npm tarball has: the executable (mode 755), the completion helper (755), the LICENSE", () => {
    for (const p of manifest.spec.platforms) {
      for (const f of p.files ?? []) {
        expect(tarball.some((t) => matches(f.from, t.path)), `${f.from} matches no file of the npm tarball`).toBe(true);
      }
      const exe = tarball.find((t) => t.path === `package/${p.bin}`);
      expect(exe, `bin ${p.bin}`).toBeDefined();
      expect(exe!.mode & 0o111).not.toBe(0);
      const helper = tarball.find((t) => t.path === "package/completions/kubectl_complete-netpath");
      expect(helper!.mode & 0o111).not.toBe(0);
    }
  });
});

describe("npm package", () => {
  it("its bin is the plugin executable kubectl finds on PATH", () => {
    expect(pkg.bin["kubectl-netpath"]).toBe("dist/kubectl-netpath.js");
    expect(tarball.map((t) => t.path)).toContain("package/dist/kubectl-netpath.js");
  });
  it("ships the completion helper and the generated scripts", () => {
    for (const f of ["kubectl_complete-netpath", "kubectl-netpath.bash", "_kubectl-netpath", "kubectl-netpath.fish", "kubectl-netpath.ps1"]) {
      expect(tarball.map((t) => t.path)).toContain(`package/completions/${f}`);
    }
  });
  it("krew's pattern matching, as used above", () => {
    expect(matches("package/dist/*", "package/dist/kubectl-netpath.js")).toBe(true);
    expect(matches("package/dist/*", "package/dist/chunks/a.js")).toBe(false);
    expect(matches("package/LICENSE", "package/LICENSE.md")).toBe(false);
  });
});
