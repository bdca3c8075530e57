// Completion end to end in-process: `kubectl-netpath complete -- <words>` answers (static, from a bundle, from a
// live HTTPS API server with a bearer token), every failure answered `:1` with one stderr line and no candidates,
// the timeout, `completion SHELL` and the generated files in completions/, and the help texts (golden files,
// kubectl conventions). Golden files: UPDATE_GOLDEN=1 npx vitest run tests/completion_engine.test.ts
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli/io.ts";
import { buildProgram } from "../src/cli/program.ts";
import { registerCompletion } from "../src/cli/completion.ts";
import { parseAnswer } from "../src/cli/completion/directive.ts";
import { runCliWithCompletion } from "../src/cli/completion/entry.ts";
import { bashScript, completionScript, SCRIPT_FILES, SHELLS } from "../src/cli/completion/scripts.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { type FakeApi, startFakeApi } from "./fixtures/completion/fake_api.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const IPTABLES_LAB = join(ROOT, "examples/iptables-lab");
const AZURE_ZONES = join(ROOT, "examples/azure-zones");
const HELP_DIR = join(ROOT, "tests/fixtures/completion/help");

async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env, stdoutIsTTY: false, stderrIsTTY: false, cwd: ROOT };
  const code = await runCliWithCompletion(args, io);
  return { code, out, err };
}

async function complete(words: string[], env: Record<string, string> = {}) {
  const r = await run(["complete", "--", ...words], env);
  expect(r.code).toBe(0);
  const a = parseAnswer(r.out);
  return { values: a.candidates.map((c) => c.value), candidates: a.candidates, directive: a.directive, err: r.err };
}

describe("static candidates", () => {
  const cases: { name: string; input: string[]; want: string[]; directive: number }[] = [
    { name: "first word", input: [""], want: ["capture", "cleanup", "completion", "svc/", "service/", "pvc/", "pod/"], directive: 6 },
    { name: "no word at all", input: [], want: ["capture", "cleanup", "completion", "svc/", "service/", "pvc/", "pod/"], directive: 6 },
    { name: "s…", input: ["s"], want: ["svc/", "service/"], directive: 6 },
    { name: "c…: subcommands only, a space after", input: ["c"], want: ["capture", "cleanup", "completion"], directive: 4 },
    { name: "p…", input: ["p"], want: ["pvc/", "pod/"], directive: 6 },
    { name: "--fr…", input: ["--fr"], want: ["--from", "--from-pod"], directive: 4 },
    { name: "--no-…", input: ["--no-"], want: ["--no-color", "--no-exec"], directive: 4 },
    { name: "-o formats", input: ["-o", ""], want: ["text", "wide", "json", "yaml", "mermaid", "dot"], directive: 4 },
    { name: "--output=j", input: ["--output=j"], want: ["json"], directive: 4 },
    { name: "--profile", input: ["svc/x", "--profile", ""], want: ["netadmin", "sysadmin"], directive: 4 },
    { name: "completion SHELL", input: ["completion", ""], want: ["zsh", "bash", "fish", "powershell"], directive: 4 },
    { name: "--from: files", input: ["--from", ""], want: [], directive: 0 },
    { name: "--kubeconfig=: files", input: ["--kubeconfig=~/"], want: [], directive: 0 },
    { name: "a free value", input: ["--source", ""], want: [], directive: 4 },
    { name: "after a whole target", input: ["svc/web", ""], want: [], directive: 4 },
    { name: "capture TYPE/", input: ["capture", ""], want: ["svc/", "service/", "pvc/", "pod/"], directive: 6 },
    { name: "capture -o is its file (a path placeholder)", input: ["capture", "svc/x", "-o", ""], want: [], directive: 0 },
    { name: "capture's own flags", input: ["capture", "--all"], want: ["--all-nodes"], directive: 4 },
    { name: "cleanup's own flags", input: ["cleanup", "--all"], want: ["--all-namespaces"], directive: 4 },
  ];
  it.each(cases)("$name", async ({ input, want, directive }) => {
    const a = await complete(input);
    expect(a.values).toEqual(want);
    expect(a.directive).toBe(directive);
    expect(a.err).toBe("");
  });
  it("describes the target prefixes and flags", async () => {
    const a = await complete(["svc"]);
    expect(a.candidates).toEqual([{ value: "svc/", description: "a Service: how kube-proxy balances and masquerades it on each node" }]);
    expect((await complete(["--why"])).candidates).toEqual([{ value: "--why-pending", description: "pvc/NAME or pod/NAME: explain why it cannot be placed" }]);
  });
});

describe("names from a bundle (--from on the line: offline)", () => {
  const cases: { name: string; input: string[]; want: string[]; directive: number }[] = [
    { name: "svc/ in default", input: ["--from", IPTABLES_LAB, "svc/"], want: ["svc/kubernetes", "svc/my-nginx-svc"], directive: 4 },
    { name: "svc/ with -n", input: ["--from", IPTABLES_LAB, "-n", "kube-system", "svc/"], want: ["svc/kube-dns"], directive: 4 },
    { name: "-n after the target word", input: ["svc/kube", "-n", "kube-system", "--from", IPTABLES_LAB, ""], want: [], directive: 4 },
    { name: "service/my", input: ["-n", "default", "--from", IPTABLES_LAB, "service/my"], want: ["service/my-nginx-svc"], directive: 4 },
    { name: "svc NAME", input: ["--from", IPTABLES_LAB, "svc", ""], want: ["kubernetes", "my-nginx-svc"], directive: 4 },
    { name: "--from=PATH", input: [`--from=${IPTABLES_LAB}`, "--namespace=kube-system", "svc/"], want: ["svc/kube-dns"], directive: 4 },
    { name: "a relative --from", input: ["--from", "examples/iptables-lab", "svc/k"], want: ["svc/kubernetes"], directive: 4 },
    { name: "-n namespaces", input: ["--from", IPTABLES_LAB, "-n", ""], want: ["default", "kube-system"], directive: 4 },
    { name: "--namespace=kube", input: ["--from", IPTABLES_LAB, "--namespace=kube"], want: ["kube-system"], directive: 4 },
    // the bundle holds k8s1's rules only: k8s2 and k8s3 (Node objects) would be "not analysed"
    { name: "--node: the nodes the bundle holds state of", input: ["--from", IPTABLES_LAB, "--node", ""], want: ["k8s1"], directive: 4 },
    { name: "--node, the given ones left out", input: ["--from", IPTABLES_LAB, "--node", "k8s1", "--node", ""], want: [], directive: 4 },
    { name: "--node on a bundle of API objects alone: its Nodes", input: ["--from", AZURE_ZONES, "--node", ""], want: ["k8s-01", "k8s-02", "k8s-03"], directive: 4 },
    { name: "pod/: Pending first", input: ["--from", AZURE_ZONES, "pod/"], want: ["pod/busybox", "pod/busybox-zoned"], directive: 36 },
    { name: "pvc/", input: ["--from", AZURE_ZONES, "pvc/"], want: ["pvc/md", "pvc/md-zoned"], directive: 36 },
    { name: "no such namespace", input: ["--from", IPTABLES_LAB, "-n", "nope", "svc/"], want: [], directive: 4 },
  ];
  it.each(cases)("$name", async ({ input, want, directive }) => {
    const a = await complete(input);
    expect(a.values).toEqual(want);
    expect(a.directive).toBe(directive);
  });
  it("descriptions: the Service type and ClusterIP, the claim or pod phase", async () => {
    expect((await complete(["--from", IPTABLES_LAB, "-n", "kube-system", "svc/"])).candidates).toEqual([{ value: "svc/kube-dns", description: "ClusterIP 10.96.0.10" }]);
    expect((await complete(["--from", AZURE_ZONES, "pod/"])).candidates).toEqual([
      { value: "pod/busybox", description: "Pending" },
      { value: "pod/busybox-zoned", description: "Running" },
    ]);
  });
  it("a description from the data cannot forge a candidate or act on the terminal (engine and built fast path)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "knp-compl-desc-"));
    const svc = (name: string, spec: Record<string, unknown>) => ({ apiVersion: "v1", kind: "Service", metadata: { name, namespace: "default" }, spec });
    writeFileSync(join(dir, "services.json"), JSON.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [
        svc("web", { type: "ExternalName", externalName: "db\nsvc/web;touch PWNED\tforged" }),
        svc("good", { type: "ClusterIP", clusterIP: "\u001b]8;;http://evil\u0007\u001b[31m10.0.0.1\u009b\u202e\u200b" }),
      ],
    }));
    const escaped = "\\x1b]8;;http://evil\\x07\\x1b[31m10.0.0.1\\x9b\\u202e\\u200b";
    // deno-lint-ignore no-control-regex
    const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e]/;
    const engine = await run(["complete", "--", "--from", dir, "svc/"]);
    const built = existsSync(join(ROOT, "dist/kubectl-netpath.cjs"))
      ? spawnSync(process.execPath, [join(ROOT, "dist/kubectl-netpath.cjs"), "complete", "--", "--from", dir, "svc/"], { encoding: "utf8" })
      : undefined;
    for (const out of [engine.out, ...(built ? [built.stdout] : [])]) {
      expect(parseAnswer(out).candidates).toEqual([
        { value: "svc/good", description: `ClusterIP ${escaped}` },
        { value: "svc/web", description: "ExternalName db svc/web;touch PWNED forged" },
      ]);
      expect(out).not.toMatch(RAW);
    }
  });
  it.runIf(existsSync(join(ROOT, "dist/kubectl-netpath.cjs")))("the built fast path's one-line error escapes what it quotes", () => {
    const dir = mkdtempSync(join(tmpdir(), "knp-compl-err-"));
    mkdirSync(join(dir, "sub\u001b]0;OWNED\u0007\u001b[2J"));
    writeFileSync(join(dir, "services.json"), JSON.stringify({ apiVersion: "v1", kind: "List", items: [] }));
    const r = spawnSync(process.execPath, [join(ROOT, "dist/kubectl-netpath.cjs"), "complete", "--", "--from", dir, "svc/"], { encoding: "utf8" });
    expect(r.stdout).toBe(":1\n");
    expect(r.stderr).toContain("sub\\x1b]0;OWNED\\x07\\x1b[2J");
    expect(r.stderr).not.toContain("\u001b");
  });
  it.each([
    { name: "a missing bundle", input: ["--from", "/nonexistent/bundle", "svc/"], err: "completion: BundleError: --from /nonexistent/bundle: no such file or directory\n" },
    {
      name: "a directory that is not a bundle",
      input: ["--from", join(ROOT, "completions"), "svc/"],
      err: /^completion: BundleError: .*completions holds no Kubernetes objects .*\n$/,
    },
  ])("$name: no candidates, Error directive, one line on stderr", async ({ input, err }) => {
    const a = await complete(input);
    expect(a.values).toEqual([]);
    expect(a.directive).toBe(1);
    expect(a.err).toMatch(err);
    expect(a.err.split("\n")).toHaveLength(2);
  });
});

describe("names from a live API server (HTTPS, bearer token)", () => {
  let api: FakeApi;
  let dir: string;
  let kubeconfig: string;
  beforeAll(async () => {
    const lab = readBundle(IPTABLES_LAB).objects;
    const azure = readBundle(AZURE_ZONES).objects;
    api = await startFakeApi({
      services: lab.services,
      persistentvolumeclaims: azure.persistentVolumeClaims,
      pods: [...lab.pods, ...azure.pods],
      nodes: [...lab.nodes, ...azure.nodes],
    });
    dir = mkdtempSync(join(tmpdir(), "netpath-completion-"));
    kubeconfig = join(dir, "config");
    api.writeKubeconfig(kubeconfig);
  });
  afterAll(async () => {
    await api.close();
  });

  it("svc/: the Services of the context's namespace, one list request with the token", async () => {
    api.requests.length = 0;
    const a = await complete(["--kubeconfig", kubeconfig, "svc/"]);
    expect(a.candidates).toEqual([{ value: "svc/kube-dns", description: "ClusterIP 10.96.0.10" }]);
    expect(a.directive).toBe(4);
    expect(api.requests).toEqual([{ path: "/api/v1/namespaces/kube-system/services?limit=500", authorization: `Bearer ${api.token}` }]);
  });
  it("KUBECONFIG from the environment, --context, -n", async () => {
    const env = { KUBECONFIG: `${join(dir, "missing")}:${kubeconfig}` };
    expect((await complete(["svc/"], env)).values).toEqual(["svc/kube-dns"]);
    expect((await complete(["--context", "other", "svc/"], env)).values).toEqual(["svc/kubernetes", "svc/my-nginx-svc"]);
    expect((await complete(["-n", "default", "pvc/"], env))).toMatchObject({ values: ["pvc/md", "pvc/md-zoned"], directive: 36 });
    expect(await complete(["-n", "default", "pod/"], env)).toMatchObject({ values: ["pod/busybox", "pod/busybox-zoned", "pod/nginx"], directive: 36 });
  });
  it("capture svc/ and cleanup -n read the same cluster", async () => {
    expect((await complete(["--kubeconfig", kubeconfig, "capture", "svc/"])).values).toEqual(["svc/kube-dns"]);
    expect((await complete(["cleanup", "--kubeconfig", kubeconfig, "-n", "k"])).values).toEqual(["kube-system"]);
  });
  it("-n: namespaces; --node: nodes; --context: the kubeconfig's contexts", async () => {
    expect((await complete(["--kubeconfig", kubeconfig, "-n", ""])).values).toEqual(["default", "kube-system"]);
    expect((await complete(["--kubeconfig", kubeconfig, "--node", "k8s-"])).values).toEqual(["k8s-01", "k8s-02", "k8s-03"]);
    expect((await complete(["--kubeconfig", kubeconfig, "--context", ""])).candidates).toEqual([
      { value: "fake", description: "cluster fake, namespace kube-system (current)" },
      { value: "other", description: "cluster fake" },
    ]);
  });
  it("a 403: no candidates, Error directive, what RBAC must allow on one line", async () => {
    api.mode = "forbidden";
    try {
      const a = await complete(["--kubeconfig", kubeconfig, "svc/"]);
      expect(a).toMatchObject({ values: [], directive: 1 });
      expect(a.err).toBe(
        'completion: KubeApiError: not allowed to list services in namespace "kube-system" (403 Forbidden): RBAC must grant verb "list" on "services" in namespace "kube-system"\n',
      );
    } finally {
      api.mode = "ok";
    }
  });
  it("a server that never answers: Error directive after the timeout, not later", async () => {
    api.mode = "hang";
    try {
      const t0 = Date.now();
      const a = await complete(["--kubeconfig", kubeconfig, "svc/"], { KUBECTL_NETPATH_COMPLETION_TIMEOUT: "400ms" });
      const took = Date.now() - t0;
      expect(a).toMatchObject({ values: [], directive: 1, err: "completion: LookupTimeoutError: no answer within 400 ms\n" });
      expect(took).toBeGreaterThanOrEqual(400);
      expect(took).toBeLessThan(1500);
    } finally {
      api.mode = "ok";
    }
  });
  it.each([
    { name: "an unknown context", input: ["--context", "nope", "svc/"], err: /^completion: KubeconfigError: context "nope" not found in kubeconfig \S+\/config \(contexts: fake, other\)\n$/ },
    { name: "a missing --kubeconfig", input: ["--kubeconfig", "/nonexistent/config", "svc/"], err: "completion: KubeconfigError: --kubeconfig /nonexistent/config: no such file\n" },
    { name: "a missing --kubeconfig, for --context", input: ["--kubeconfig", "/nonexistent/config", "--context", ""], err: /^completion: Error: ENOENT: no such file or directory, open '\/nonexistent\/config'\n$/ },
  ])("$name: Error directive", async ({ input, err }) => {
    const a = await complete(input[0] === "--kubeconfig" ? input : ["--kubeconfig", kubeconfig, ...input]);
    expect(a).toMatchObject({ values: [], directive: 1 });
    expect(a.err).toMatch(err);
  });
  it("a cluster that refuses connections: Error directive", async () => {
    const closed = join(dir, "closed");
    writeFileSync(closed, readFileSync(kubeconfig, "utf8").replace(api.url, "https://127.0.0.1:1"));
    const a = await complete(["--kubeconfig", closed, "svc/"]);
    expect(a).toMatchObject({ values: [], directive: 1 });
    expect(a.err).toBe(
      `completion: ApiUnreachableError: cannot reach the API server https://127.0.0.1:1 (connection refused): is the cluster running and is context "fake" the right one? (kubectl --kubeconfig ${closed} --context fake cluster-info)\n`,
    );
  });
});

describe("completion SHELL and completions/", () => {
  it.each(SHELLS.map((s) => ({ shell: s })))("kubectl-netpath completion $shell prints completions/ file", async ({ shell }) => {
    const r = await run(["completion", shell]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(completionScript(shell));
    const file = join(ROOT, "completions", SCRIPT_FILES[shell]);
    expect(readFileSync(file, "utf8"), `completions/${SCRIPT_FILES[shell]} is stale: run node scripts/gen-completions.mjs`).toBe(r.out);
    expect(r.out).toMatch(/kubectl-netpath complete '?--'? /);
  });
  it("bash: registered with -o default, --flag=value filtered on the value", () => {
    const bash = completionScript("bash");
    expect(bash).toContain("\ncomplete -o default -F __kubectl_netpath_complete kubectl-netpath\n");
    expect(bash).toContain('    [[ "$cur" == -*=* ]] && cur="${cur#*=}"\n');
  });
  it("bash: candidates are data — no eval, no compgen -W, words passed as an array (issue 13)", () => {
    const bash = completionScript("bash");
    const code = bash.split("\n").filter((l) => !/^\s*#/.test(l)).join("\n");
    expect(code).not.toMatch(/\beval\b/);
    expect(code).not.toMatch(/compgen -W/);
    expect(bash).toContain('kubectl-netpath complete -- "${args[@]}"');
    // the words are unquoted without eval (tests/completion_shells.test.ts drives it in a real bash)
    expect(bash).toContain('for w in "${words[@]:1:cword}"; do __kubectl_netpath_dequote "$w"; args+=("$dq"); done');
    expect(bashScript("other-tool")).toContain("\ncomplete -o default -F __other_tool_complete other-tool\n");
    expect(() => bashScript("x;rm")).toThrow(/not a command name/);
  });
  it.each([
    { input: ["completion"], err: "error: missing required argument 'shell'\n(run with --help for usage)\n" },
    { input: ["completion", "tcsh"], err: "error: command-argument value 'tcsh' is invalid for argument 'shell'. Allowed choices are zsh, bash, fish, powershell.\n(run with --help for usage)\n" },
  ])("$input: usage error, exit 2", async ({ input, err }) => {
    const r = await run(input);
    expect(r).toEqual({ code: 2, out: "", err });
  });
  it("kubectl_complete-netpath hands every word to the completion entry", () => {
    const text = readFileSync(join(ROOT, "completions/kubectl_complete-netpath"), "utf8");
    expect(text.startsWith("#!/bin/sh\n")).toBe(true);
    // static words are answered in sh (tests/completion_static.test.ts); every other line goes to the entry as is
    expect(text).toContain('\ndyn() { exec kubectl-netpath complete -- "$@"; }\n');
    expect(text.trimEnd().split("\n").slice(-2)).toEqual(['  *) dyn "$@" ;;', "esac"]);
  });
  it("registering twice changes nothing", () => {
    const io: CliIo = { stdout: () => {}, stderr: () => {}, env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: ROOT };
    const program = buildProgram(io, { code: 0 });
    registerCompletion(program, io, { code: 0 });
    const names = program.commands.map((c) => c.name());
    registerCompletion(program, io, { code: 0 });
    expect(program.commands.map((c) => c.name())).toEqual(names);
    expect(names).toEqual(expect.arrayContaining(["completion", "complete"]));
  });
});

/**
 * kubectl's help conventions, as problems found: a `Usage:` line ending in `[flags]` or `[options]`, an `Examples:` section of `# comment` lines each
 * followed by command lines that start with `kubectl netpath` or `kubectl-netpath` (or a shell command for
 * completion), a blank line between examples.
 */
function helpProblems(text: string): string[] {
  const problems: string[] = [];
  if (!/^Usage: kubectl[- ]netpath( \S+)* \[(flags|options)\]$/m.test(text)) problems.push("no `Usage: kubectl-netpath … [flags]` line");
  const i = text.indexOf("\nExamples:\n");
  if (i < 0) return [...problems, "no Examples: section"];
  const lines = text.slice(i + "\nExamples:\n".length).split("\n");
  let expectCommand = false;
  let examples = 0;
  for (const l of lines) {
    if (l === "") {
      if (expectCommand) problems.push("a # comment without a command");
      continue;
    }
    if (l.startsWith("  # ")) {
      if (expectCommand) problems.push(`two comments in a row: ${l}`);
      expectCommand = true;
      examples++;
    } else if (l.startsWith("  ") && !l.startsWith("   ")) {
      expectCommand = false;
    } else problems.push(`not an example line: ${JSON.stringify(l)}`);
  }
  if (examples === 0) problems.push("no # comment example");
  return problems;
}

describe("help follows kubectl's conventions (golden files)", () => {
  const io: CliIo = { stdout: () => {}, stderr: () => {}, env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: ROOT };
  const program = buildProgram(io, { code: 0 });
  registerCompletion(program, io, { code: 0 });
  // Every visible subcommand (capture and cleanup too, once they exist) has its golden file.
  const visible = program.createHelp().visibleCommands(program).map((c) => c.name()).filter((n) => n !== "help");
  const cases = [{ name: "kubectl-netpath", args: ["--help"] }, ...visible.map((n) => ({ name: `kubectl-netpath_${n}`, args: [n, "--help"] }))];
  it.each(cases)("$name --help", async ({ name, args }) => {
    const r = await run(args);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain("\u001b[");
    const file = join(HELP_DIR, `${name}.txt`);
    if (process.env.UPDATE_GOLDEN === "1") {
      mkdirSync(HELP_DIR, { recursive: true });
      writeFileSync(file, r.out);
    }
    expect(existsSync(file), `${file} missing: UPDATE_GOLDEN=1 npx vitest run tests/completion_engine.test.ts`).toBe(true);
    expect(r.out).toBe(readFileSync(file, "utf8"));
    expect(helpProblems(r.out)).toEqual([]);
  });
  it("the convention check finds what is missing", () => {
    expect(helpProblems("Usage: kubectl-netpath [flags]\n\nExamples:\n  # a comment\n\n  kubectl netpath x\n")).toEqual(["a # comment without a command"]);
    expect(helpProblems("usage: x\n")).toEqual(["no `Usage: kubectl-netpath … [flags]` line", "no Examples: section"]);
    expect(helpProblems("Usage: kubectl-netpath [flags]\n\nExamples:\nplain\n")).toEqual(['not an example line: "plain"', "no # comment example"]);
  });
});
