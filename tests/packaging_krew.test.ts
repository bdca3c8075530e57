// The plugin as krew installs it (issue 17): the single-executable release archive of this platform, built by
// scripts/build-sea.mjs as the release does, unpacked by the files plugins/netpath.yaml names into a store directory
// outside the repository, run with NO Node.js on PATH and no node_modules anywhere above it. What runs there must run
// on its own: --version, an offline analysis, completion through the helper krew's caveats link, a live run against
// the fake API server (the bundled Kubernetes client), and, as root with the netns harness, a live run that execs into
// a kube-proxy pod (the bundled `ws`).
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import type { ServiceReport } from "../src/service/report.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { type FakeNode, startFakeNode } from "./helpers/fake_nodes.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";
import { requireNetns } from "./helpers/netns.ts";
import { type Spawned, spawnCollect } from "./helpers/spawn.ts";

const ROOT = resolve(".");
const manifest = parse(readFileSync(join(ROOT, "plugins/netpath.yaml"), "utf8")) as {
  spec: { version: string; platforms: { selector: { matchLabels: Record<string, string> }; uri: string; files: { from: string; to: string }[]; bin: string }[] };
};
const OS = ({ linux: "linux", darwin: "darwin", win32: "windows" } as Record<string, string>)[process.platform];
const ARCH = ({ x64: "amd64", arm64: "arm64" } as Record<string, string>)[process.arch];
const web = readBundle("tests/fixtures/live/web");

/** krew's `from`: a path whose last segment may hold `*` (one segment); a matching directory moves whole. */
function krewMatches(extracted: string, from: string): string[] {
  const dir = join(extracted, dirname(from));
  const re = new RegExp(`^${basename(from).split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*")}$`);
  return existsSync(dir) ? readdirSync(dir).filter((n) => re.test(n)).map((n) => join(dir, n)) : [];
}

/** PATH of the runs: the krew bin directory only, so no `node` can be found. */
let runPath = "";

/** Runs the installed binary with only krew's bin directory on PATH. */
function exec(args: string[], cwd: string): Promise<Spawned> {
  const [cmd, ...rest] = args;
  return spawnCollect(cmd!, rest, { cwd, env: { HOME: cwd, NO_COLOR: "1", PATH: runPath } });
}

describe("the single-executable release as krew installs it (no Node.js, no node_modules)", () => {
  const work = mkdtempSync(join(tmpdir(), "knp-krew-"));
  const store = join(work, "store", "netpath", manifest.spec.version);
  const servers: FakeApiServer[] = [];
  let exe = "";
  afterAll(async () => {
    for (const s of servers) await s.close();
    rmSync(work, { recursive: true, force: true });
  });
  beforeAll(() => {
    const release = join(work, "release");
    const built = spawnSync(process.execPath, ["scripts/build-sea.mjs", "--out", release], { cwd: ROOT, encoding: "utf8" });
    expect(built.status, built.stderr).toBe(0);
    const platform = manifest.spec.platforms.find((p) => p.selector.matchLabels.os === OS && p.selector.matchLabels.arch === ARCH);
    expect(platform, `a manifest platform for ${OS}/${ARCH}`).toBeDefined();
    const archive = join(release, basename(platform!.uri));
    expect(existsSync(archive), `${archive}: the archive the manifest's uri names is what build-sea.mjs writes`).toBe(true);
    const extracted = join(work, "extracted");
    mkdirSync(extracted);
    expect(spawnSync("tar", ["-xzf", archive, "-C", extracted]).status).toBe(0);
    for (const f of platform!.files) {
      const found = krewMatches(extracted, f.from);
      expect(found.length, f.from).toBeGreaterThan(0);
      for (const m of found) cpSync(m, join(store, f.to, basename(m)), { recursive: true });
    }
    exe = join(store, platform!.bin);
    // Nothing above the store may resolve packages for it.
    for (let d = store; d !== dirname(d); d = dirname(d)) expect(existsSync(join(d, "node_modules")), d).toBe(false);
    // krew's bin directory, as the only PATH: the binary and the completion helper, linked as krew and its caveats do.
    const bin = join(work, "bin");
    mkdirSync(bin, { recursive: true });
    symlinkSync(exe, join(bin, "kubectl-netpath"));
    symlinkSync(join(store, "kubectl_complete-netpath"), join(bin, "kubectl_complete-netpath"));
    runPath = bin;
    expect(spawnSync("/bin/sh", ["-c", "command -v node"], { env: { PATH: runPath } }).status, "node must not be on PATH").not.toBe(0);
  }, 180_000);

  it("--version and an offline analysis", async () => {
    const v = await exec([exe, "--version"], work);
    expect(v.stderr).toBe("");
    expect(v.stdout.trim()).toBe(manifest.spec.version.slice(1));
    const r = await exec([exe, "svc/kube-dns", "-n", "kube-system", "--from", join(ROOT, "examples/iptables-lab")], work);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("10.244.0.5:53");
    expect(r.stdout).toContain("10.244.2.21:53");
  });

  it("linked onto PATH as krew links it, with the completion helper the caveats link: kubectl's completion works", () => {
    const r = spawnSync("kubectl_complete-netpath", ["s"], { cwd: work, env: { PATH: runPath, HOME: work }, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout.split("\n").map((l) => l.split("\t")[0])).toContain("svc/");
    expect(r.stdout.trimEnd().split("\n").pop()).toMatch(/^:\d+$/);
  });

  it("a live run (--no-exec) through the bundled Kubernetes client", async () => {
    const s = await startFakeApiServer({ objects: web.objects });
    servers.push(s);
    const r = await exec([exe, "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", "json"], work);
    expect(r.stderr).toBe("warning: the bundle holds no node state: only the API side was analysed\n");
    expect(r.status).toBe(0);
    const rep = JSON.parse(r.stdout) as ServiceReport;
    expect(rep.endpoints.map((e) => e.address).sort()).toEqual(["10.244.1.6", "10.244.2.4"]);
  });

  describe.runIf(requireNetns(["nc", "curl", "ss"]))("as root, with a node in a network namespace", () => {
    let node: FakeNode | undefined;
    afterAll(async () => {
      await node?.stop();
    });
    it("a live run that execs into the kube-proxy pod over WebSocket (the bundled ws)", async () => {
      const rules = kubeProxyRules(web.objects.services, web.objects.endpointSlices, "10.244.0.0/16");
      node = await startFakeNode("k8s-guide-worker", { rules: { text: rules, backend: "nft" }, proxyMode: "iptables" });
      const s = await startFakeApiServer({ objects: web.objects, exec: { netnsFor: (n) => (n === "k8s-guide-worker" ? node!.netns.name : undefined) } });
      servers.push(s);
      const r = await exec([exe, "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker", "-o", "json"], work);
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      const rep = JSON.parse(r.stdout) as ServiceReport;
      expect(rep.nodes.map((n) => [n.node, n.proxyMode.mode, n.error])).toEqual([["k8s-guide-worker", "iptables", undefined]]);
      const clusterIP = rep.nodes[0]!.ports[0]!.entryPoints[0]!;
      expect(clusterIP.balancing.shares.map((x) => [x.endpoint, x.share])).toEqual([["10.244.1.6:80", 0.5], ["10.244.2.4:80", 0.5]]);
      expect(s.requests.some((x) => x.kind === "exec")).toBe(true);
      expect(s.debugPods()).toEqual([]);
    });
  });
});
