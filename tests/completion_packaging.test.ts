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
    expect(caveats, "the release binaries carry Node: krew users need none").not.toMatch(/node\b.*must be on PATH/i);
    expect(caveats).toContain("kubectl_complete-netpath");
    expect(caveats).toContain(`/store/netpath/${manifest.spec.version}/`);
  });
  it("platforms: os/arch selectors, the single-executable archive of this version per platform, a sha256 or none yet", () => {
    const pairs = manifest.spec.platforms.map((p) => `${p.selector.matchLabels?.os}/${p.selector.matchLabels?.arch}`);
    expect(pairs.sort()).toEqual(["darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64", "windows/arm64"]);
    for (const p of manifest.spec.platforms) {
      const { os, arch } = p.selector.matchLabels!;
      expect(p.uri).toMatch(new RegExp(`/v${pkg.version.replace(/\./g, "\\.")}/kubectl-netpath_${os}_${arch}\\.tar\\.gz$`));
      // Empty until the version is released (krew-index refuses it, so it cannot be submitted by mistake).
      expect(p.sha256).toMatch(/^([0-9a-f]{64})?$/);
    }
  });
  it("installs the files scripts/build-sea.mjs packs: the binary (its bin), the completion helper, the LICENSE", () => {
    const packer = readFileSync(join(ROOT, "scripts/build-sea.mjs"), "utf8");
    for (const p of manifest.spec.platforms) {
      const exe = p.selector.matchLabels!.os === "windows" ? "kubectl-netpath.exe" : "kubectl-netpath";
      expect(p.bin).toBe(exe);
      expect((p.files ?? []).map((f) => [f.from, f.to])).toEqual([[exe, "."], ["kubectl_complete-netpath", "."], ["LICENSE", "."]]);
    }
    expect(packer).toContain('exeName, "kubectl_complete-netpath", "LICENSE"');
  });
});

describe("npm package", () => {
  it("its bin is the plugin executable kubectl finds on PATH", () => {
    expect(pkg.bin["kubectl-netpath"]).toBe("dist/kubectl-netpath.cjs");
    expect(tarball.map((t) => t.path)).toContain("package/dist/kubectl-netpath.cjs");
  });
  it("ships the completion helper and the generated scripts", () => {
    for (const f of ["kubectl_complete-netpath", "kubectl-netpath.bash", "_kubectl-netpath", "kubectl-netpath.fish", "kubectl-netpath.ps1"]) {
      expect(tarball.map((t) => t.path)).toContain(`package/completions/${f}`);
    }
  });
  it("krew's pattern matching, as used above", () => {
    expect(matches("package/dist/*", "package/dist/kubectl-netpath.cjs")).toBe(true);
    expect(matches("package/dist/*", "package/dist/chunks/a.js")).toBe(false);
    expect(matches("package/LICENSE", "package/LICENSE.md")).toBe(false);
  });
});
