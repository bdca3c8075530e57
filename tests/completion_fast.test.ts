// The fast completion path (src/cli/completion/fast.ts, issue 12 point 6): a request for names is answered without
// building the program, and its answer is the full engine's byte for byte on every example bundle, every lookup kind
// (svc/, pod/, pvc/, `svc NAME`, -n, --node, --context from a kubeconfig, glued and `=` forms); requests that are not
// lookups are left to the engine. The generated line spec is the program's. Skipping the node dumps and the other
// lists' files when completing changes no candidate.
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleObjects, skipFor } from "../src/cli/completion/lookups.ts";
import { completeFast } from "../src/cli/completion/fast.ts";
import { LINE_SPEC } from "../src/cli/completion/line_spec_data.ts";
import { lineSpecSource } from "../src/cli/completion/static_responder.ts";
import type { CliIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/program.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { readFileSync } from "node:fs";

const ROOT = new URL("..", import.meta.url).pathname;
const EXAMPLES = readdirSync(join(ROOT, "examples")).map((d) => join(ROOT, "examples", d));

async function engine(words: string[], env: Record<string, string | undefined>): Promise<string> {
  const out: string[] = [];
  const io: CliIo = { stdout: (t) => void out.push(t), stderr: () => {}, env, stdoutIsTTY: false, stderrIsTTY: false, cwd: ROOT };
  await runCli(["complete", "--", ...words], io);
  return out.join("");
}

describe("fast completion path", () => {
  it("its line spec is the program's (node scripts/gen-completions.mjs regenerates it)", () => {
    expect(readFileSync(join(ROOT, "src/cli/completion/line_spec_data.ts"), "utf8")).toBe(lineSpecSource());
    expect(LINE_SPEC.targetCommands).toContain("");
  });

  it("answers every lookup as the engine does, on every example bundle", async () => {
    const dir = mkdtempSync(join(tmpdir(), "knp-fast-"));
    const kubeconfig = join(dir, "config");
    writeFileSync(kubeconfig, "apiVersion: v1\nkind: Config\ncurrent-context: prod\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts:\n- {name: prod, context: {cluster: c, user: u, namespace: web}}\n- {name: staging, context: {cluster: c, user: u}}\n- {name: team=alpha, context: {cluster: c, user: u}}\n");
    const env = { KUBECONFIG: kubeconfig, HOME: dir };
    let compared = 0;
    for (const ex of EXAMPLES) {
      const b = readBundle(ex);
      const ns = [...new Set([...b.objects.services, ...b.objects.pods].map((o) => o.metadata.namespace ?? "default"))];
      const lines: string[][] = [
        ["--from", ex, "--context", ""], ["--context", "pr"], ["--from", ex, "-n", ""], ["--from", ex, "-n", "k"], ["--from", ex, "--namespace=ku"], ["--from", ex, "-nk"],
        ["--from", ex, "-n=k"], ["--from", ex, "-n="], ["--context", "team=a"], ["--context=team=a"], ["--context", "team="],
      ];
      for (const n of ns) {
        for (const t of ["svc/", "pod/", "pvc/", "service/", "svc/a", "pod/k"]) lines.push(["--from", ex, "-n", n, t], ["--from", ex, `-n=${n}`, t]);
        lines.push(["--from", ex, "-n", n, "svc", ""], ["--from", ex, "-n", n, "svc/x", "--node", ""], ["capture", "--from", ex, "-n", n, "svc/"]);
      }
      for (const words of lines) {
        const fast = await completeFast(words, { env, cwd: ROOT }, () => {});
        const full = await engine(words, env);
        if (fast === undefined) continue;
        expect(fast, JSON.stringify(words)).toBe(full);
        compared++;
      }
    }
    console.info(`[completion-fast] ${compared} lookup answers equal to the engine's`);
    expect(compared).toBeGreaterThan(100);
  }, 120_000);

  it("-n=NS and a value holding `=` are read as the command reads them (the same answer by both paths)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "knp-fast-eq-"));
    const kubeconfig = join(dir, "config");
    writeFileSync(kubeconfig, "apiVersion: v1\nkind: Config\ncurrent-context: team=alpha\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts:\n- {name: team=alpha, context: {cluster: c, user: u}}\n- {name: gke_proj_zone_c, context: {cluster: c, user: u}}\n");
    const env = { KUBECONFIG: kubeconfig, HOME: dir };
    const lab = join(ROOT, "examples/iptables-lab");
    const cases: { words: string[]; want: string }[] = [
      { words: ["--from", lab, "-n=kube-system", "svc/"], want: "svc/kube-dns\tClusterIP 10.96.0.10\n:4\n" },
      { words: ["--from", lab, "-n=kube"], want: "kube-system\n:4\n" },
      { words: ["--from", lab, "-n="], want: "default\nkube-system\n:4\n" },
      { words: ["--context", "team=a"], want: "team=alpha\tcluster c (current)\n:4\n" },
      { words: ["--context=team=a"], want: "team=alpha\tcluster c (current)\n:4\n" },
      { words: ["--context", "team=b"], want: ":4\n" },
    ];
    for (const { words, want } of cases) {
      expect(await completeFast(words, { env, cwd: ROOT }, () => {}), JSON.stringify(words)).toBe(want);
      expect(await engine(words, env), JSON.stringify(words)).toBe(want);
    }
  });

  it.each([[["-"]], [["-o", ""]], [[""]], [["--from", ""]], [["capture", "--"]]])("%j is not a lookup: left to the engine", async (words) => {
    expect(await completeFast(words, { env: {}, cwd: ROOT }, () => {})).toBeUndefined();
  });

  it("skipping the node dumps and the other lists' files changes no candidate", () => {
    for (const ex of EXAMPLES) {
      const all = readBundle(ex);
      for (const kind of ["services", "pods", "persistentvolumeclaims", "nodes", "namespaces"] as const) {
        const lean = readBundle(ex, { skip: skipFor(kind) });
        for (const n of ["default", "kube-system", "ns1", "web", "prod"]) {
          expect(bundleObjects(lean, kind, n).map((o) => o.metadata.name), `${ex} ${kind} ${n}`).toEqual(bundleObjects(all, kind, n).map((o) => o.metadata.name));
        }
      }
    }
  });
});
