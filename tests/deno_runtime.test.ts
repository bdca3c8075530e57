// Deno 2 parity (the Deno audit): the CLI run from source by `deno run src/cli/main.ts`, and mod.ts used as a library
// by another program, behave as on Node: importing the library never runs the CLI, a permission Deno denies is named
// as such, and no Node deprecation warning reaches stderr.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
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
