// Deno 2 parity (the Deno audit): the CLI run from source by `deno run src/cli/main.ts`, and mod.ts used as a library
// by another program, behave as on Node: importing the library never runs the CLI, a permission Deno denies is named
// as such, and no Node deprecation warning reaches stderr.
import { spawnSync } from "node:child_process";
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { readBundle } from "../src/io/read_bundle.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { type Spawned, spawnCollect } from "./helpers/spawn.ts";

const ROOT = resolve(".");
const DENO = join(ROOT, "node_modules/.bin/deno");
const LAB = join(ROOT, "examples/iptables-lab");
const work = mkdtempSync(join(tmpdir(), "knp-deno-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** `deno run FLAGS… ARGS…` in `cwd` (default the checkout), NO_COLOR set, nothing else of the environment added. */
function deno(args: string[], o: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<Spawned> {
  return spawnCollect(DENO, args, { cwd: o.cwd ?? ROOT, env: { ...process.env, NO_COLOR: "1", ...o.env } });
}

describe("mod.ts bundled into another program (esbuild, as a library user ships it)", () => {
  it("does not run the CLI: the host's argv is not taken as netpath commands", async () => {
    const dir = mkdtempSync(join(work, "host-"));
    const src = join(dir, "host.ts");
    writeFileSync(src, `import { kernelProbability } from ${JSON.stringify(join(ROOT, "mod.ts"))};\nconsole.log(kernelProbability("0.33333333349"));\n`);
    const out = join(dir, "host.mjs");
    await build({
      entryPoints: [src],
      outfile: out,
      bundle: true,
      platform: "node",
      format: "esm",
      banner: { js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);' },
      alias: { punycode: "punycode/" },
      logLevel: "error",
    });
    // Deno sets import.meta.main for the host script, which the bundle's inlined modules read as their own.
    for (const argv of [[], ["svc/kube-dns", "-n", "kube-system", "--from", LAB]]) {
      const r = await deno(["run", "-A", out, ...argv], { cwd: dir });
      expect(r.stderr, argv.join(" ")).toBe("");
      expect(r.stdout, argv.join(" ")).toBe("0.33333333348855376\n");
      expect(r.status).toBe(0);
    }
  });

  it("imported by a Deno script with --allow-read only (no --allow-env): a node's dump is parsed and traced", async () => {
    // the library's module graph reads no environment variable when it loads (`ws` reads WS_NO_BUFFER_UTIL: it is
    // loaded with client-node, by a live exec only)
    const dir = mkdtempSync(join(work, "read-only-"));
    writeFileSync(join(dir, "main.ts"), [
      `import { parseIptablesSave, traceIptables } from ${JSON.stringify(join(ROOT, "mod.ts"))};`,
      `const dump = parseIptablesSave(Deno.readTextFileSync(${JSON.stringify(join(LAB, "nodes/k8s1/iptables-save.txt"))}));`,
      `const t = traceIptables(dump, { src: "10.0.1.5", dst: "10.96.0.10", proto: "udp", sport: 40000, dport: 53, mark: 0, ctstate: new Set(["NEW"]) }, "PREROUTING");`,
      "console.log(t.outcomes.map((o) => o.dnatTo).sort().join(' '));",
      "",
    ].join("\n"));
    const r = await deno(["run", "--allow-read", "--config", join(ROOT, "deno.json"), join(dir, "main.ts")], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^(\d+\.\d+\.\d+\.\d+:53 ?)+\n$/);
    expect(r.status).toBe(0);
  });

  it("`deno run src/cli/main.ts` still runs the CLI", async () => {
    const r = await deno(["run", "--allow-read", "--allow-env", "--allow-sys", "src/cli/main.ts", "svc/kube-dns", "-n", "kube-system", "--from", LAB]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("Service kube-system/kube-dns");
  });
});

describe("environment variables Deno does not let the run read (--allow-env=LIST without them)", () => {
  // What commander and yaml read themselves (process.env directly), so that only the CLI's own reads are left out:
  // KUBECTL_NETPATH_DEBUG, KUBECONFIG, HOME, COLUMNS, TERM, …
  const deps = "--allow-env=NO_COLOR,FORCE_COLOR,CLICOLOR_FORCE,LOG_STREAM,LOG_TOKENS,NODE_DEBUG";

  it("an error is still one line (KUBECTL_NETPATH_DEBUG unreadable is unset), not an uncaught NotCapable trace", async () => {
    const r = await deno(["run", "--allow-read", deps, "src/cli/main.ts", "svc/nope", "-n", "kube-system", "--from", LAB]);
    expect(r.stderr).toBe('error: service "nope" not found in namespace "kube-system"\n');
    expect(r.status).toBe(1);
  });

  it("--help prints the usage and exits 0", async () => {
    const r = await deno(["run", deps, "src/cli/main.ts", "--help"]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^Usage: kubectl netpath /);
    expect(r.status).toBe(0);
  });

  it("with no permission at all, --help fails in one line naming --allow-env (commander reads CLICOLOR_FORCE itself)", async () => {
    const r = await deno(["run", "src/cli/main.ts", "--help"], { env: { NO_COLOR: undefined } });
    expect(r.stderr).toMatch(/^error: Requires env access to "\w+", run again with the --allow-env flag\n$/);
    expect(r.status).toBe(1);
  });

  it("a report reads as if the variables were unset (COLUMNS, TERM: 80 columns)", async () => {
    const args = ["svc/kube-dns", "-n", "kube-system", "--from", LAB];
    const denied = await deno(["run", "--allow-read", deps, "src/cli/main.ts", ...args], { env: { COLUMNS: "200" } });
    const unset = await deno(["run", "-A", "src/cli/main.ts", ...args], { env: { COLUMNS: undefined } });
    expect(denied.stderr).toBe("");
    expect(denied.status).toBe(0);
    expect(denied.stdout).toBe(unset.stdout);
  });
});

describe("the Deno permissions docs/install.md and the deno.json netpath task list", () => {
  const servers: FakeApiServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
  });
  /** The permission flags of the `netpath` task (what docs/install.md lists): `--allow-…` between `run` and the entry. */
  const taskFlags = (): string[] => {
    const task = (JSON.parse(readFileSync(join(ROOT, "deno.json"), "utf8")) as { tasks: Record<string, string> }).tasks.netpath!;
    return task.split(/\s+/).filter((w) => w.startsWith("--allow-"));
  };
  const without = (flag: string) => taskFlags().filter((f) => f !== flag);
  const server = async () => {
    const s = await startFakeApiServer({ objects: readBundle("tests/fixtures/live/web").objects });
    servers.push(s);
    return s;
  };
  /** A copy of the server's kubeconfig whose user gets its token from an exec credential plugin (EKS, GKE, AKS style). */
  const execKubeconfig = (s: FakeApiServer, dir: string): string => {
    const plugin = join(dir, "cred.sh");
    writeFileSync(plugin, `#!/bin/sh\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"fake-token-0123456789"}}\\n'\n`);
    chmodSync(plugin, 0o755);
    const kc = parseYaml(readFileSync(s.kubeconfig, "utf8")) as { users: { name: string; user: Record<string, unknown> }[] };
    for (const u of kc.users) u.user = { exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin, interactiveMode: "Never" } };
    const file = join(dir, "kubeconfig");
    writeFileSync(file, JSON.stringify(kc));
    return file;
  };

  it("lists --allow-write and --allow-run, and docs/install.md names each flag of the task", () => {
    expect(taskFlags()).toEqual(expect.arrayContaining(["--allow-read", "--allow-env", "--allow-net", "--allow-sys", "--allow-write", "--allow-run"]));
    const install = readFileSync(join(ROOT, "docs/install.md"), "utf8");
    for (const f of taskFlags()) expect(install, f).toContain(`\`${f}\``);
  });

  it("capture -o writes the bundle with the task's flags", async () => {
    const s = await server();
    const out = join(mkdtempSync(join(work, "cap-")), "web.json");
    const r = await deno(["run", ...taskFlags(), "src/cli/main.ts", "capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", out]);
    expect(r.status, r.stderr).toBe(0);
    expect(readBundle(out).objects.services.map((o) => o.metadata.name)).toEqual(["web"]);
  });

  it("capture -o without --allow-write stops before collecting, naming the flag (not 'free space')", async () => {
    const s = await server();
    const dir = mkdtempSync(join(work, "cap-"));
    const out = join(dir, "web.json");
    const r = await deno(["run", ...without("--allow-write"), "src/cli/main.ts", "capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", out]);
    expect(r.stderr).toBe(`error: capture -o ${out}: Deno was not granted --allow-write for ${dir}: run again with --allow-write (or -A) (nothing was collected)\n`);
    expect(r.status).toBe(1);
    expect(s.requests).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });

  it("capture -o through a link into a directory --allow-write does not cover names the flag after collecting", async () => {
    const s = await server();
    const allowed = mkdtempSync(join(work, "allowed-"));
    const other = mkdtempSync(join(work, "other-"));
    const out = join(allowed, "web.json");
    symlinkSync(join(other, "web.json"), out);
    const r = await deno(["run", ...without("--allow-write"), `--allow-write=${allowed}`, "src/cli/main.ts", "capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", out]);
    expect(r.stderr).toBe(`error: cannot write the bundle to ${out}: Deno was not granted --allow-write for ${other}; nothing was written there: run again with --allow-write (or -A)\n`);
    expect(r.status).toBe(1);
    expect(readdirSync(other)).toEqual([]);
  });

  it("a live run and a live completion from source print no Node deprecation warning (punycode, DEP0040)", async () => {
    const s = await server();
    const run = await deno(["run", ...taskFlags(), "src/cli/main.ts", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain("Service default/web");
    expect(run.stderr).toBe("warning: the bundle holds no node state: only the API side was analysed\n");
    const tab = await deno(["run", ...taskFlags(), "src/cli/main.ts", "complete", "--", "--kubeconfig", s.kubeconfig, "-n", "default", "svc/"]);
    expect(tab.stderr).toBe("");
    expect(tab.stdout).toMatch(/^svc\/web\t/);
  });

  it("an exec credential plugin runs with the task's flags", async () => {
    const s = await server();
    const kc = execKubeconfig(s, mkdtempSync(join(work, "exec-")));
    const r = await deno(["run", ...taskFlags(), "src/cli/main.ts", "svc/web", "-n", "default", "--kubeconfig", kc, "--no-exec"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("Service default/web");
  });

  it("without --allow-run, the exec credential plugin error names the flag (not 'fix the plugin')", async () => {
    const s = await server();
    const dir = mkdtempSync(join(work, "exec-"));
    const kc = execKubeconfig(s, dir);
    const r = await deno(["run", ...without("--allow-run"), "src/cli/main.ts", "svc/web", "-n", "default", "--kubeconfig", kc, "--no-exec"]);
    expect(r.stderr).toBe(`error: the exec credential plugin \`${join(dir, "cred.sh")}\` of user "token-user" (context "fake") could not be run: Deno was not granted --allow-run: run again with --allow-run (or -A)\n`);
    expect(r.status).toBe(1);
  });
});

describe("stderr as on Node", () => {
  it("a write to stdout that fails (a full disk) is Node's one line and exit 1, after the warnings Node prints too", () => {
    const full = openSync("/dev/full", "w");
    try {
      const cases = [
        { args: ["svc/kube-dns", "-n", "kube-system", "--from", LAB], before: [] as RegExp[] },
        { args: ["svc/kube-dns", "-n", "kube-system", "--from", LAB, "--all-nodes"], before: [/^warning: --all-nodes on this bundle/, /^error: 2 of 3 node\(s\) not analysed, the bundle holds no capture of them: k8s2, k8s3;/] },
        { args: ["--help"], before: [] },
      ];
      for (const { args, before } of cases) {
        const r = spawnSync(DENO, ["run", "--allow-read", "--allow-env", "--allow-sys", "src/cli/main.ts", ...args], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", full, "pipe"], env: { ...process.env, NO_COLOR: "1" } });
        const lines = r.stderr.split("\n").slice(0, -1);
        expect(lines.length, r.stderr).toBe(before.length + 1);
        before.forEach((re, k) => expect(lines[k]).toMatch(re));
        expect(lines.at(-1)).toBe("error: cannot write the output: ENOSPC (no space left on the device)");
        expect(r.status).toBe(1);
      }
    } finally {
      closeSync(full);
    }
  });
});

describe("mod.ts imported from outside the checkout", () => {
  const denoJson = JSON.parse(readFileSync(join(ROOT, "deno.json"), "utf8")) as { imports?: Record<string, string> };
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> };

  it("deno.json maps every package the sources import to npm:NAME@the package.json range", () => {
    const bare = new Set<string>();
    const files = [join(ROOT, "mod.ts"), ...readdirSync(join(ROOT, "src"), { recursive: true }).map(String).filter((f) => f.endsWith(".ts")).map((f) => join(ROOT, "src", f))];
    for (const f of files) {
      const code = readFileSync(f, "utf8").replace(/^\s*\*.*$/gm, ""); // not the JSDoc examples
      for (const m of code.matchAll(/(?:\bfrom|\bimport\()\s*"(@?[a-z][\w@/.-]*)"/g)) if (!m[1]!.startsWith("node:")) bare.add(m[1]!);
    }
    expect(bare.size).toBeGreaterThan(5);
    for (const spec of bare) {
      const name = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!;
      const want = `npm:${name}@${pkg.devDependencies[name]}`;
      if (spec === name) expect(denoJson.imports?.[spec], spec).toBe(want);
      else expect(denoJson.imports?.[`${name}/`], spec).toBe(`npm:/${name}@${pkg.devDependencies[name]}/`);
    }
  });

  it("a Deno project elsewhere (its own deno.json, no node_modules) imports it and runs nothing", async (ctx) => {
    const dir = mkdtempSync(join(work, "consumer-"));
    writeFileSync(join(dir, "deno.json"), JSON.stringify({ imports: { "kubectl-netpath": join(ROOT, "mod.ts") } }));
    writeFileSync(join(dir, "main.ts"), 'import { kernelProbability } from "kubectl-netpath";\nconsole.log(kernelProbability("0.33333333349"));\n');
    // from Deno's npm cache only: a test does not fetch packages
    const r = await deno(["run", "-A", "--cached-only", "main.ts", "svc/kube-dns", "--from", LAB], { cwd: dir });
    if (/not found in cache/.test(r.stderr)) ctx.skip(`Deno's npm cache lacks the dependencies: ${r.stderr.split("\n")[0]}`);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("0.33333333348855376\n");
    expect(r.status).toBe(0);
  });
});

describe("a malformed JSON bundle: the place of the error in the project's words on every runtime", () => {
  // JSON.parse says `in JSON at position 8` on Node 20 (V8 11) and adds ` (line 1 column 9)` on Node 22+ and Deno
  // (V8 12+): the error names line and column, computed from the position, the same everywhere
  const cases = [
    { name: "missing comma", text: '{"format": "kubectl-netpath/bundle"\n  "version": 1}', want: /^error: [^\n]*: not valid JSON \(Expected ',' or '\}' after property value at line 2, column 3\); is the file complete\?$/m },
    { name: "text after the value", text: '{"format": "kubectl-netpath/bundle"} x', want: /not valid JSON \(Unexpected non-whitespace character after JSON at line 1, column 38\)/ },
    { name: "cut after an open brace", text: '{"format": "kubectl-netpath/bundle", "version": 1, "objects": {', want: /not valid JSON \(Expected property name or '\}' at line 1, column 64\)/ },
    { name: "cut after a key", text: '{"format":', want: /not valid JSON \(Unexpected end of JSON input\)/ },
  ];
  it.each(cases)("$name", async ({ name, text, want }) => {
    const file = join(work, `${name.replace(/ /g, "-")}.json`);
    writeFileSync(file, text);
    const node = spawnSync(process.execPath, [join(ROOT, "dist/kubectl-netpath.cjs"), "svc/x", "--from", file], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
    const d = await deno(["run", "--allow-read", "--allow-env", "--allow-sys", join(ROOT, "src/cli/main.ts"), "svc/x", "--from", file]);
    expect(node.status).toBe(1);
    expect(node.stderr).toMatch(want);
    expect(node.stderr).not.toMatch(/position|\(line \d/);
    expect(d.status).toBe(1);
    expect(d.stderr).toBe(node.stderr);
  });
});
