// The npm package is lean (issue 17): dist/ bundles every runtime dependency, so `npm i -g` of the packed tarball
// installs the plugin alone — no dependencies, no install scripts, no `prepare` naming files the package does not
// ship — and it runs, offline and live, without a deprecation warning on Node and on Deno.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { type Spawned, spawnCollect } from "./helpers/spawn.ts";

const ROOT = resolve(".");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  dependencies?: Record<string, string>;
  scripts: Record<string, string>;
  files: string[];
  allowScripts?: Record<string, boolean>;
  devDependencies: Record<string, string>;
};

function du(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? du(p) : statSync(p).size;
  }
  return n;
}

function exec(cmd: string, args: string[], env: Record<string, string | undefined> = {}): Promise<Spawned> {
  return spawnCollect(cmd, args, { env: { ...process.env, NO_COLOR: "1", ...env } });
}

describe("package.json", () => {
  it("has no runtime dependencies: dist/ bundles them", () => expect(pkg.dependencies ?? {}).toEqual({}));
  it("has no prepare/install script (they would run on the user's machine, naming files the package lacks)", () => {
    for (const s of ["prepare", "preinstall", "install", "postinstall"]) expect(pkg.scripts[s], s).toBeUndefined();
    expect(pkg.scripts.prepack).toBe("node scripts/build.mjs");
  });
  it("settles allowScripts for every dev dependency with an install script (deno, esbuild)", () => {
    expect(Object.keys(pkg.allowScripts ?? {}).map((k) => k.replace(/@[^@]*$/, "") || k).sort()).toEqual(["deno", "esbuild"]);
  });
});

describe("npm i -g of the packed tarball", () => {
  const work = mkdtempSync(join(tmpdir(), "knp-npm-"));
  const prefix = join(work, "prefix");
  const servers: FakeApiServer[] = [];
  let exe = "";
  let installOut = "";
  beforeAll(() => {
    expect(existsSync(join(ROOT, "dist/kubectl-netpath.cjs")), "dist/ is built by `npm test` (pretest) or `npm run build`").toBe(true);
    const pack = spawnSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: ROOT, encoding: "utf8" });
    expect(pack.status, pack.stderr).toBe(0);
    const tgz = join(work, (JSON.parse(pack.stdout) as { filename: string }[])[0]!.filename);
    const inst = spawnSync("npm", ["install", "-g", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", tgz], { cwd: work, encoding: "utf8" });
    installOut = inst.stdout + inst.stderr;
    expect(inst.status, installOut).toBe(0);
    exe = join(prefix, "bin", "kubectl-netpath");
  }, 120_000);
  afterAll(async () => {
    for (const s of servers) await s.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("installs at most 3 packages and 10 MB", () => {
    const modules = join(prefix, "lib", "node_modules");
    const packages = readdirSync(modules, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name === "package.json" && !/\/dist\//.test(join(e.parentPath ?? "", e.name)));
    const size = du(modules);
    console.log(`[packaging] npm i -g: ${packages.length} package(s), ${(size / 1e6).toFixed(1)} MB (${installOut.trim().split("\n").pop()})`);
    expect(packages.length).toBeLessThanOrEqual(3);
    expect(size).toBeLessThanOrEqual(10e6);
    expect(installOut).not.toMatch(/install-scripts|deprecated/i);
  });

  it("runs offline on Node with no warning on stderr", async () => {
    const r = await exec(exe, ["svc/kube-dns", "-n", "kube-system", "--from", join(ROOT, "examples/iptables-lab")]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("Service kube-system/kube-dns");
    expect(r.stderr).toBe("");
  });

  it("runs live (the bundled Kubernetes client) on Node and on Deno with no deprecation warning", async () => {
    const web = readBundle("tests/fixtures/live/web");
    const s = await startFakeApiServer({ objects: web.objects });
    servers.push(s);
    const args = ["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"];
    const node = await exec(exe, args);
    expect(node.status, node.stderr).toBe(0);
    expect(node.stderr).not.toMatch(/Deprecat|DEP0/);
    const deno = join(ROOT, "node_modules", ".bin", "deno");
    const lib = join(prefix, "lib", "node_modules", "kubectl-netpath", "dist", "kubectl-netpath.cjs");
    const d = await exec(deno, ["run", "-A", lib, ...args]);
    expect(d.status, d.stderr).toBe(0);
    expect(d.stdout).toContain("Service default/web");
    expect(d.stderr).not.toMatch(/Deprecat|DEP0/);
  });
});
