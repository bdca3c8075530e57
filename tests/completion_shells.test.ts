// Completion through the real clients: kubectl (two or more versions >= 1.26) completing `kubectl netpath …` via
// kubectl_complete-netpath on PATH; bash (the generated script, and kubectl's own script), zsh (in a pty) and fish
// with the generated scripts; `kubectl plugin list` and `kubectl netpath --help`; and the import graph: static
// completions never load the Kubernetes client (esbuild metafile, and a loader hook recording what a run imports).
import { execFile, execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, sep } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { build, type Metafile } from "esbuild";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseAnswer } from "../src/cli/completion/directive.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { type FakeApi, startFakeApi } from "./fixtures/completion/fake_api.ts";
import { startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { isCi, requireThat, requireTools } from "./helpers/netns.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const IPTABLES_LAB = join(ROOT, "examples/iptables-lab");
const AZURE_ZONES = join(ROOT, "examples/azure-zones");
const SDK = "/usr/lib/google-cloud-sdk/bin";

/**
 * Runs a command without blocking the event loop (the fake API server answers from this process), with a time limit.
 * @returns exit status (null when killed), stdout, stderr.
 */
function run(cmd: string, args: string[], opts: { env?: Record<string, string>; cwd?: string; timeout?: number } = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env: opts.env ?? env(), cwd: opts.cwd ?? ROOT, timeout: opts.timeout ?? 60_000, encoding: "utf8", maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const status = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : null) : 0;
      resolve({ status, stdout, stderr });
    });
  });
}

/**
 * Bundles an entry as scripts/build.mjs does (ES modules split into chunks: a lazily imported module is a chunk of
 * its own), inside the repository so that packages resolve; packages stay external, so that the Kubernetes client
 * shows as an import in the metafile and as a specifier at run time.
 */
async function bundle(entry: string, outfile: string): Promise<Metafile> {
  const r = await build({
    entryPoints: { [basename(outfile, ".js")]: join(ROOT, entry) },
    outdir: dirname(outfile),
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    banner: { js: "#!/usr/bin/env node" },
    define: { "import.meta.main": "false" },
    logLevel: "error",
    metafile: true,
  });
  chmodSync(outfile, 0o755);
  return r.metafile;
}

/** kubectl versions >= 1.26 installed beside the SDK, oldest and newest. */
function kubectlVersions(): string[] {
  const found = existsSync(SDK)
    ? readdirSync(SDK).map((f) => /^kubectl\.1\.(\d+)$/.exec(f)).filter((m): m is RegExpExecArray => m !== null && Number(m[1]) >= 26)
    : [];
  const sorted = found.map((m) => m[0]).sort((a, b) => Number(a.split(".")[2]) - Number(b.split(".")[2]));
  return sorted.length >= 2 ? [sorted[0]!, sorted[sorted.length - 1]!] : sorted;
}

let work: string;
let bin: string;
let exe: string;
let meta: Metafile;
let api: FakeApi;
let kubeconfig: string;
let basePath: string;

function env(extra: Record<string, string> = {}): Record<string, string> {
  const e: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) e[k] = v;
  return { ...e, PATH: `${bin}:${basePath}`, HOME: work, KUBECONFIG: kubeconfig, ...extra };
}

beforeAll(async () => {
  const out = join(ROOT, ".tmp", `completion-shells-${process.pid}`);
  mkdirSync(out, { recursive: true });
  exe = join(out, "kubectl-netpath.js");
  meta = await bundle("src/cli/completion/entry_bin.ts", exe);
  work = mkdtempSync(join(tmpdir(), "netpath-shells-"));
  bin = join(work, "bin");
  mkdirSync(bin);
  // As `npm i -g` lays it out: the bundle linked as kubectl-netpath, the completion helper beside it.
  symlinkSync(exe, join(bin, "kubectl-netpath"));
  symlinkSync(join(ROOT, "completions/kubectl_complete-netpath"), join(bin, "kubectl_complete-netpath"));
  basePath = [dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(":");
  const lab = readBundle(IPTABLES_LAB).objects;
  api = await startFakeApi({ services: lab.services, persistentvolumeclaims: [], pods: lab.pods, nodes: lab.nodes });
  kubeconfig = join(work, "config");
  api.writeKubeconfig(kubeconfig);
});

afterAll(async () => {
  await api?.close();
  rmSync(dirname(exe), { recursive: true, force: true });
});

describe("import graph: the Kubernetes client only for dynamic candidates", () => {
  /**
   * The outputs that import the client, and those of them an entry reaches through static imports alone (what
   * Node loads before the entry runs: the client on every TAB, if any).
   */
  function clientImporters(m: Metafile, entryOut: string): { all: string[]; static: string[] } {
    const rel = (p: string) => relative(ROOT, p).split(sep).join("/");
    const entry = rel(entryOut);
    const all = Object.entries(m.outputs).filter(([, o]) => o.imports.some((i) => i.path.startsWith("@kubernetes/client-node"))).map(([k]) => k);
    const seen = new Set<string>([entry]);
    for (const q = [entry]; q.length > 0;) {
      for (const i of m.outputs[q.pop()!]?.imports ?? []) {
        if (i.kind === "import-statement" && !i.external && !seen.has(i.path)) {
          seen.add(i.path);
          q.push(i.path);
        }
      }
    }
    return { all, static: all.filter((o) => seen.has(o)) };
  }
  it("the completion executable reaches it through dynamic imports only", () => {
    const c = clientImporters(meta, exe);
    expect(c.all.length).toBeGreaterThan(0);
    expect(c.static).toEqual([]);
  });
  it("so does the plugin's own executable (src/cli/bin.ts)", async () => {
    const out = join(dirname(exe), "bin-check", "bin-check.js");
    const c = clientImporters(await bundle("src/cli/bin.ts", out), out);
    expect(c.all.length).toBeGreaterThan(0);
    expect(c.static).toEqual([]);
  });
  it("at run time: static and bundle candidates never load it, a live lookup does", async () => {
    const hooks = join(work, "hooks");
    mkdirSync(hooks, { recursive: true });
    writeFileSync(join(hooks, "register.mjs"), `import { register } from "node:module";\nregister(${JSON.stringify(`file://${hooks}/hooks.mjs`)});\n`);
    writeFileSync(
      join(hooks, "hooks.mjs"),
      `import { appendFileSync } from "node:fs";\nexport async function resolve(s, c, next) {\n  appendFileSync(process.env.IMPORT_LOG, s + "\\n");\n  return next(s, c);\n}\n`,
    );
    // what is checked is which modules load, not how fast: the live lookup's 2 s default, with the import hook logging
    // every specifier, ran out on a machine at load 4.5 (3 runs in 6)
    const imported = async (words: string[]) => {
      const log = join(hooks, `log-${Math.random().toString(36).slice(2)}`);
      writeFileSync(log, "");
      const r = await run(process.execPath, ["--import", join(hooks, "register.mjs"), exe, "complete", "--", ...words], { env: env({ IMPORT_LOG: log, KUBECTL_NETPATH_COMPLETION_TIMEOUT: "20s" }) });
      expect(r.status).toBe(0);
      return { answer: parseAnswer(r.stdout), specifiers: readFileSync(log, "utf8").split("\n") };
    };
    for (const words of [[""], ["-o", ""], ["--fr"], ["completion", ""], ["--from", IPTABLES_LAB, "svc/"]]) {
      const { specifiers } = await imported(words);
      expect(specifiers, words.join(" ")).toContain("@bomb.sh/tab/commander");
      expect(specifiers, words.join(" ")).not.toContain("@kubernetes/client-node");
    }
    const live = await imported(["svc/"]);
    expect(live.answer.candidates.map((c) => c.value)).toEqual(["svc/kube-dns"]);
    expect(live.specifiers).toContain("@kubernetes/client-node");
  });
});

describe("under Deno (src/cli/completion/entry_bin.ts run by deno)", () => {
  it.each([
    { name: "static", words: ["s"], want: ["svc/", "service/"], directive: 6 },
    { name: "from a bundle", words: ["--from", IPTABLES_LAB, "-n", "kube-system", "svc/"], want: ["svc/kube-dns"], directive: 4 },
    { name: "from the API server", words: ["--context", "other", "svc/"], want: ["svc/kubernetes", "svc/my-nginx-svc"], directive: 4 },
  ])("$name", async ({ words, want, directive }) => {
    const deno = join(ROOT, "node_modules/.bin/deno");
    const r = await run(deno, ["run", "-A", join(ROOT, "src/cli/completion/entry_bin.ts"), "complete", "--", ...words], { env: env({ PATH: `${dirname(deno)}:${basePath}` }) });
    expect(r.status, r.stderr).toBe(0);
    const a = parseAnswer(r.stdout);
    expect(a.candidates.map((c) => c.value)).toEqual(want);
    expect(a.directive).toBe(directive);
  });
});

const BASH = ["bash", "/usr/share/bash-completion/bash_completion"];
describe.runIf(requireThat("real kubectl", kubectlVersions().length >= 2, `two kubectl versions >= 1.26 in ${SDK} (found ${kubectlVersions().join(", ") || "none"})`) && requireTools("kubectl's bash completion", BASH))("real kubectl: `kubectl __complete netpath …` through kubectl_complete-netpath", () => {
  const versions = kubectlVersions();
  it("at least two kubectl versions >= 1.26 are installed", () => {
    expect(versions.length).toBe(2);
  });
  const cases: { name: string; words: string[]; want: string[]; directive: number }[] = [
    { name: "svc/ from a bundle", words: ["--from", IPTABLES_LAB, "svc/"], want: ["svc/kubernetes", "svc/my-nginx-svc"], directive: 4 },
    { name: "svc/ from a bundle, -n", words: ["--from", IPTABLES_LAB, "-n", "kube-system", "svc/"], want: ["svc/kube-dns"], directive: 4 },
    { name: "svc/ from a bundle, -n=NS (pflag's reading)", words: ["--from", IPTABLES_LAB, "-n=kube-system", "svc/"], want: ["svc/kube-dns"], directive: 4 },
    { name: "svc/ from the API server (context namespace kube-system)", words: ["svc/"], want: ["svc/kube-dns"], directive: 4 },
    { name: "svc/ from the API server, --context other", words: ["--context", "other", "svc/"], want: ["svc/kubernetes", "svc/my-nginx-svc"], directive: 4 },
    { name: "-n from the API server", words: ["-n", ""], want: ["default", "kube-system"], directive: 4 },
    { name: "pod/ from a bundle, Pending first", words: ["--from", AZURE_ZONES, "pod/"], want: ["pod/busybox", "pod/busybox-zoned"], directive: 36 },
    { name: "target prefixes", words: ["s"], want: ["svc/", "service/"], directive: 6 },
    { name: "-o", words: ["-o", ""], want: ["text", "wide", "json", "yaml", "mermaid", "dot"], directive: 4 },
    { name: "--from: files", words: ["--from", ""], want: [], directive: 0 },
    { name: "a missing bundle: Error", words: ["--from", "/nonexistent", "svc/"], want: [], directive: 1 },
  ];
  for (const v of versions) {
    it.each(cases)(`${v}: $name`, async ({ words, want, directive }) => {
      const r = await run(join(SDK, v), ["__complete", "netpath", ...words]);
      expect(r.status, r.stderr).toBe(0);
      const a = parseAnswer(r.stdout);
      expect(a.candidates.map((c) => c.value)).toEqual(want);
      expect(a.directive).toBe(directive);
    });
    it(`${v}: without kubectl_complete-netpath on PATH kubectl offers nothing of ours (control)`, async () => {
      const only = join(work, `only-plugin-${v}`);
      mkdirSync(only, { recursive: true });
      if (!existsSync(join(only, "kubectl-netpath"))) symlinkSync(exe, join(only, "kubectl-netpath"));
      const r = await run(join(SDK, v), ["__complete", "netpath", "--from", IPTABLES_LAB, "svc/"], { env: env({ PATH: `${only}:${basePath}` }) });
      expect(parseAnswer(r.stdout)).toEqual({ candidates: [], directive: 0 });
    });
  }
  it("against the live path's fake API server: bearer token and client certificate kubeconfigs", async () => {
    const lab = readBundle(IPTABLES_LAB).objects;
    const azure = readBundle(AZURE_ZONES).objects;
    const server = await startFakeApiServer({
      objects: { services: lab.services, pods: azure.pods, nodes: lab.nodes, persistentVolumeClaims: azure.persistentVolumeClaims },
      contextNamespace: "default",
      kubeProxyPods: false,
    });
    try {
      for (const [v, config] of [[versions[0]!, server.kubeconfig], [versions[versions.length - 1]!, server.kubeconfigCert]] as const) {
        const answer = async (words: string[]) => {
          const r = await run(join(SDK, v), ["__complete", "netpath", ...words], { env: env({ KUBECONFIG: config }) });
          expect(r.status, r.stderr).toBe(0);
          const a = parseAnswer(r.stdout);
          return { values: a.candidates.map((c) => c.value), directive: a.directive };
        };
        expect(await answer(["svc/"])).toEqual({ values: ["svc/kubernetes", "svc/my-nginx-svc"], directive: 4 });
        expect(await answer(["-n", "kube-system", "service/"])).toEqual({ values: ["service/kube-dns"], directive: 4 });
        expect(await answer(["pod/"])).toEqual({ values: ["pod/busybox", "pod/busybox-zoned"], directive: 36 });
        expect(await answer(["pvc/md"])).toEqual({ values: ["pvc/md", "pvc/md-zoned"], directive: 36 });
        expect(await answer(["--node", "k8s1", "--node", ""])).toEqual({ values: ["k8s2", "k8s3"], directive: 4 });
      }
      const lists = server.requests.filter((r) => r.method === "GET").map((r) => `${r.path}?limit=${r.query.limit}`);
      expect(lists).toContain("/api/v1/namespaces/default/services?limit=500");
      expect(lists).toContain("/api/v1/namespaces/kube-system/services?limit=500");
    } finally {
      await server.close();
    }
  });
  it("kubectl plugin list finds kubectl-netpath on PATH", async () => {
    const r = await run(join(SDK, versions[versions.length - 1]!), ["plugin", "list"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.split("\n")).toContain(join(bin, "kubectl-netpath"));
  });
  it("kubectl netpath --help is the plugin's help (golden file)", async () => {
    const r = await run(join(SDK, versions[0]!), ["netpath", "--help"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(readFileSync(join(ROOT, "tests/fixtures/completion/help/kubectl-netpath.txt"), "utf8"));
  });
  it("a Deno install (deno install -g -A -n kubectl-netpath dist/kubectl-netpath.cjs) is found by kubectl too", async () => {
    const root = join(work, "deno-root");
    const denoBin = join(ROOT, "node_modules/.bin");
    const install = await run(join(denoBin, "deno"), ["install", "-g", "-A", "-n", "kubectl-netpath", "--root", root, join(ROOT, "dist/kubectl-netpath.cjs")], {
      env: env({ PATH: `${denoBin}:${basePath}` }),
    });
    expect(install.status, install.stderr).toBe(0);
    const path = `${join(root, "bin")}:${denoBin}:${basePath}`;
    const list = await run(join(SDK, versions[versions.length - 1]!), ["plugin", "list"], { env: env({ PATH: path }) });
    expect(list.stdout.split("\n")).toContain(join(root, "bin", "kubectl-netpath"));
    const version = await run(join(SDK, versions[0]!), ["netpath", "--version"], { env: env({ PATH: path }) });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

/** Splits a command line into COMP_WORDS as bash does (spaces, and `=` / `:` as words of their own). */
function compWords(line: string): string[] {
  const words = line.split(/\s+/).filter((w) => w !== "").flatMap((w) => w.split(/([=:])/).filter((p) => p !== ""));
  if (line.endsWith(" ")) words.push("");
  return words;
}

function bashQuote(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

/** Runs completion functions in a real bash for each line; returns COMPREPLY and the compopt calls of each. */
async function bashComplete(setup: string, fn: string, lines: string[]): Promise<{ reply: string[]; compopt: string[] }[]> {
  const parts = [
    "source /usr/share/bash-completion/bash_completion",
    setup,
    // compopt works only while readline runs a completion; record what the script asks of it instead.
    'compopt() { __COMPOPT+=("$*"); }',
  ];
  for (const line of lines) {
    const words = compWords(line);
    parts.push(
      `COMP_LINE=${bashQuote(line)}; COMP_POINT=\${#COMP_LINE}; COMP_WORDS=(${words.map(bashQuote).join(" ")}); COMP_CWORD=${words.length - 1}`,
      `COMPREPLY=(); __COMPOPT=(); ${fn}`,
      `printf 'REPLY\\x1f%s\\n' "$(IFS=$'\\x1f'; echo "\${COMPREPLY[*]}")"; printf 'COMPOPT\\x1f%s\\n' "$(IFS=$'\\x1f'; echo "\${__COMPOPT[*]}")"`,
    );
  }
  const r = await run("bash", ["--norc", "--noprofile", "-c", parts.join("\n")]);
  expect(r.status, r.stderr).toBe(0);
  const out = r.stdout.split("\n").filter((l) => l.startsWith("REPLY\x1f") || l.startsWith("COMPOPT\x1f"));
  const results: { reply: string[]; compopt: string[] }[] = [];
  for (let i = 0; i < out.length; i += 2) {
    const split = (l: string) => l.split("\x1f").slice(1).filter((x) => x !== "");
    results.push({ reply: split(out[i]!), compopt: split(out[i + 1]!) });
  }
  return results;
}

describe.runIf(requireTools("real bash with bash-completion", BASH))("real bash", () => {
  it("needs bash-completion, as kubectl's script does (scripts/ci-setup.sh installs it)", () => {
    expect(existsSync("/usr/share/bash-completion/bash_completion")).toBe(true);
  });
  it("the generated script: COMPREPLY and the directives it applies", async () => {
    const cases = [
      { line: `kubectl-netpath --from ${IPTABLES_LAB} svc/`, reply: ["svc/kubernetes", "svc/my-nginx-svc"], compopt: ["+o default"] },
      { line: `kubectl-netpath --from ${IPTABLES_LAB} -n kube-system svc/k`, reply: ["svc/kube-dns"], compopt: ["+o default"] },
      { line: `kubectl-netpath --from ${IPTABLES_LAB} --namespace=kube`, reply: ["kube-system"], compopt: ["+o default"] },
      { line: "kubectl-netpath svc/", reply: ["svc/kube-dns"], compopt: ["+o default"] },
      { line: "kubectl-netpath p", reply: ["pvc/", "pod/"], compopt: ["-o nospace", "+o default"] },
      { line: `kubectl-netpath --from ${AZURE_ZONES} pod/`, reply: ["pod/busybox", "pod/busybox-zoned"], compopt: ["-o nosort", "+o default"] },
      { line: "kubectl-netpath -o ", reply: ["text", "wide", "json", "yaml", "mermaid", "dot"], compopt: ["+o default"] },
      // Default directive: no candidates and default kept on, so readline completes file names.
      { line: "kubectl-netpath --from exa", reply: [], compopt: [] },
      // Error directive: nothing at all.
      { line: "kubectl-netpath --from /nonexistent svc/", reply: [], compopt: [] },
    ];
    const got = await bashComplete("source completions/kubectl-netpath.bash", "__kubectl_netpath_complete", cases.map((c) => c.line));
    expect(got).toEqual(cases.map(({ reply, compopt }) => ({ reply, compopt })));
    const registered = await run("bash", ["--norc", "--noprofile", "-c", "source /usr/share/bash-completion/bash_completion; source completions/kubectl-netpath.bash; complete -p kubectl-netpath"]);
    expect(registered.stdout.trim()).toBe("complete -o default -F __kubectl_netpath_complete kubectl-netpath");
  });
  it.each(kubectlVersions().map((v) => ({ v })))("kubectl's own bash completion ($v) completes `kubectl netpath …`", async ({ v }) => {
    const kdir = join(work, `k-${v}`);
    mkdirSync(kdir, { recursive: true });
    if (!existsSync(join(kdir, "kubectl"))) symlinkSync(join(SDK, v), join(kdir, "kubectl"));
    const lines = [`kubectl netpath --from ${IPTABLES_LAB} svc/`, "kubectl netpath svc/", `kubectl netpath --from ${AZURE_ZONES} pvc/md-`, "kubectl netpath s"];
    const got = await bashComplete(`PATH=${kdir}:$PATH; source <(kubectl completion bash)`, "__start_kubectl", lines);
    expect(got.map((g) => g.reply)).toEqual([["svc/kubernetes", "svc/my-nginx-svc"], ["svc/kube-dns"], ["pvc/md-zoned"], ["svc/", "service/"]]);
  });
});

/** zsh driven in a pty: types the line and TAB (twice for a list), returns the screen text. */
const ZSH_DRIVER = `
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "stty columns 250; PS1='%% ' ; RPROMPT='' ; unset zle_bracketed_paste"
zpty -w z "autoload -Uz compinit && compinit -u -D"
zpty -w z "source \${(q)1}"
# The markers are printed as __READY__ / __DONE__ but echoed as typed (with quotes), so only the output matches.
zpty -w z "print __REA''DY__"
local line out=""
while zpty -r z line; do [[ $line == *__READY__* ]] && break; done
# Wait for the next prompt: keys typed before ZLE reads them would be taken in cooked mode.
zpty -r z line '*% *'
zpty -w -n z "$2"
zpty -w -n z $'\\t'
[[ $3 == 2 ]] && zpty -w -n z $'\\t'
# ^U (a key, not a signal) is read only after the completion widget has returned.
zpty -w -n z $'\\x15'
zpty -w z "print __DO''NE__"
while zpty -r z line; do
  [[ $line == *__DONE__* ]] && break
  out+="$line"
done
print -r -- "$out"
zpty -d z
`;

/**
 * bash driven in a pty (zsh's zpty): an interactive bash with bash-completion and SETUP sourced; types LINE, presses
 * TAB, then a key bound with `bind -x` prints the readline buffer as `LINE<…>`. This is what the user sees: readline
 * replaces only the text after the last COMP_WORDBREAKS character, which a call of the function alone cannot show.
 */
const BASH_PTY_DRIVER = `
zmodload zsh/zpty
zpty b bash --norc --noprofile -i
zpty -w b "PS1='\\$ '; bind 'set bell-style none'; source /usr/share/bash-completion/bash_completion; source \${(q)1}"
zpty -w b "bind -x '\\"\\\\C-x\\": printf \\"\\\\nLI\\"\\"NE<%s>\\\\n\\" \\"\\$READLINE_LINE\\"'"
zpty -w b "echo __REA''DY__"
local line
while zpty -r b line; do [[ $line == *__READY__* ]] && break; done
# Wait for the prompt: keys typed before readline reads them would be taken in cooked mode.
zpty -r b line '*[$] *'
zpty -w -n b "$2"
# TAB, then ^X: readline reads ^X only after the completion function has returned.
zpty -w -n b $'\\t'
zpty -w -n b $'\\x18'
while zpty -r b line; do
  [[ $line == *LINE\\<* ]] && { print -r -- "\${line%%$'\\r'}"; break; }
done
zpty -w -n b $'\\x15exit\\n'
zpty -d b
`;

/**
 * A directory whose name holds a space, with a copy of examples/iptables-lab (`lab`) and a kubeconfig of EKS-style
 * contexts (`k c.json`); made on first use.
 */
function spaced(): string {
  const dir = join(work, "sp ace");
  if (!existsSync(dir)) {
    cpSync(IPTABLES_LAB, join(dir, "lab"), { recursive: true });
    writeFileSync(join(dir, "k c.json"), JSON.stringify({
      apiVersion: "v1", kind: "Config", "current-context": "ok",
      clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1" } }], users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "arn:aws:eks:eu-west-1:123456789012:cluster/prod", context: { cluster: "c", user: "u" } }],
    }));
  }
  return dir;
}

/** The readline buffer after TAB at the end of `line`, in a real interactive bash with the generated script. */
async function bashLineAfterTab(line: string, cwd = ROOT): Promise<string> {
  const driver = join(work, "bash-pty-driver.zsh");
  writeFileSync(driver, BASH_PTY_DRIVER);
  const r = await run("zsh", ["-f", driver, join(ROOT, "completions/kubectl-netpath.bash"), line], { cwd, timeout: 30_000 });
  expect(r.status, r.stderr).toBe(0);
  const m = /LINE<([^]*)>/.exec(r.stdout);
  expect(m, r.stdout).not.toBeNull();
  return m![1]!;
}

describe.runIf(requireTools("real bash with bash-completion, driven in a pty by zsh", [...BASH, "zsh"]))("real bash in a pty: what TAB leaves on the line", () => {
  let kc: string;
  beforeAll(() => {
    // EKS names its contexts by the cluster's ARN; a context name may hold `=` too (kubeconfig is free text)
    kc = join(work, "arn-kubeconfig");
    writeFileSync(kc, JSON.stringify({
      apiVersion: "v1", kind: "Config", "current-context": "ok",
      clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1" } }], users: [{ name: "u", user: { token: "t" } }],
      contexts: ["arn:aws:eks:eu-west-1:123456789012:cluster/prod", "team=alpha"].map((name) => ({ name, context: { cluster: "c", user: "u" } })),
    }));
  });
  it.each([
    // readline replaces the text after the last `:`; the script must not insert the part already typed again
    { typed: "--context arn:aws:e", want: "--context arn:aws:eks:eu-west-1:123456789012:cluster/prod " },
    { typed: "--context arn:", want: "--context arn:aws:eks:eu-west-1:123456789012:cluster/prod " },
    { typed: "--context=arn:aws:eks:eu", want: "--context=arn:aws:eks:eu-west-1:123456789012:cluster/prod " },
    // and after the last `=`
    { typed: "--context=team=a", want: "--context=team=alpha " },
    { typed: "--context team=a", want: "--context team=alpha " },
  ])("a context name with `:` or `=`: $typed", async ({ typed, want }) => {
    expect(await bashLineAfterTab(`kubectl-netpath --kubeconfig ${kc} ${typed}`)).toBe(`kubectl-netpath --kubeconfig ${kc} ${want}`);
  });
  it("a plain Service name (control)", async () => {
    expect(await bashLineAfterTab(`kubectl-netpath --from ${IPTABLES_LAB} -n kube-system svc/k`)).toBe(`kubectl-netpath --from ${IPTABLES_LAB} -n kube-system svc/kube-dns `);
  });
  it("-n=NS, as the command reads it", async () => {
    expect(await bashLineAfterTab(`kubectl-netpath --from ${IPTABLES_LAB} -n=kube-system svc/k`)).toBe(`kubectl-netpath --from ${IPTABLES_LAB} -n=kube-system svc/kube-dns `);
    expect(await bashLineAfterTab(`kubectl-netpath --from ${IPTABLES_LAB} -n=kube-s`)).toBe(`kubectl-netpath --from ${IPTABLES_LAB} -n=kube-system `);
  });
  // The words before the cursor reach the command unquoted, as it will receive them when the line runs.
  it.each([
    { name: "backslash", from: (d: string) => `${d.replace(/ /g, "\\ ")}/lab` },
    { name: "single quotes", from: (d: string) => `'${d}/lab'` },
    { name: "double quotes", from: (d: string) => `"${d}/lab"` },
    { name: "--from=, backslash", from: (d: string) => `=${d.replace(/ /g, "\\ ")}/lab`, glued: true },
  ])("a --from path with a space ($name)", async ({ from, glued }) => {
    const typed = `kubectl-netpath --from${glued ? "" : " "}${from(spaced())} -n kube-system svc/k`;
    expect(await bashLineAfterTab(typed)).toBe(`${typed}ube-dns `);
  });
  it("a --kubeconfig path in quotes", async () => {
    const typed = `kubectl-netpath --kubeconfig '${spaced()}/k c.json' --context arn:aws:e`;
    expect(await bashLineAfterTab(typed)).toBe(`${typed.slice(0, -"arn:aws:e".length)}arn:aws:eks:eu-west-1:123456789012:cluster/prod `);
  });
  it("a typed $(…) or backquote before the cursor is data: unquoted, never run", async () => {
    const marker = join(work, "marker-bash-dequote");
    mkdirSync(marker, { recursive: true });
    for (const from of [`"$(touch PWNED-dq)"`, "\\$(touch PWNED-bs)", "'`touch PWNED-tick`'"]) {
      expect(await bashLineAfterTab(`kubectl-netpath --from ${from} svc/`, marker)).toBe(`kubectl-netpath --from ${from} svc/`);
    }
    expect(readdirSync(marker)).toEqual([]);
  });
});

describe.runIf(requireTools("real zsh", ["zsh"]))("real zsh (in a pty) with the generated script", () => {
  async function zshScreen(line: string, tabs: 1 | 2): Promise<string> {
    const driver = join(work, "zsh-driver.zsh");
    writeFileSync(driver, ZSH_DRIVER);
    const r = await run("zsh", ["-f", driver, join(ROOT, "completions/_kubectl-netpath"), line, String(tabs)], { timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, "").replace(/\r/g, "\n");
  }
  it("a unique Service name is inserted", async () => {
    expect(await zshScreen(`kubectl-netpath --from ${IPTABLES_LAB} -n kube-system svc/k`, 1)).toContain(`-n kube-system svc/kube-dns`);
  });
  it("several names are listed with their descriptions", async () => {
    const screen = await zshScreen(`kubectl-netpath --from ${IPTABLES_LAB} svc/`, 2);
    expect(screen).toMatch(/svc\/kubernetes +-- ClusterIP 10\.96\.0\.1\n/);
    expect(screen).toMatch(/svc\/my-nginx-svc +-- ClusterIP 10\.98\.69\.149\n/);
  });
  it.each([
    { name: "backslash", from: (d: string) => `${d.replace(/ /g, "\\ ")}/lab` },
    { name: "single quotes", from: (d: string) => `'${d}/lab'` },
    { name: "double quotes", from: (d: string) => `"${d}/lab"` },
  ])("a --from path with a space ($name): the words are kept whole and unquoted", async ({ from }) => {
    const typed = `kubectl-netpath --from ${from(spaced())} -n kube-system svc/k`;
    expect(await zshScreen(typed, 1)).toContain(`${typed}ube-dns`);
  });
  it("a --kubeconfig path in quotes", async () => {
    const typed = `kubectl-netpath --kubeconfig '${spaced()}/k c.json' --context arn:aws:e`;
    expect(await zshScreen(typed, 1)).toContain(`${typed}ks:eu-west-1:123456789012:cluster/prod`);
  });
  it("--from completes file names (Default directive)", async () => {
    expect(await zshScreen("kubectl-netpath --from exa", 1)).toContain("--from examples/");
  });
});

describe.runIf(requireTools("real fish", ["fish"]))("real fish with the generated script", () => {
  async function fish(line: string): Promise<string[]> {
    const r = await run("fish", ["--no-config", "-c", `source completions/kubectl-netpath.fish; complete --do-complete ${bashQuote(line)}`]);
    expect(r.status, r.stderr).toBe(0);
    return r.stdout.split("\n").filter((l) => l !== "");
  }
  it.each([
    { line: `kubectl-netpath --from ${IPTABLES_LAB} svc/`, want: ["svc/kubernetes\tClusterIP 10.96.0.1", "svc/my-nginx-svc\tClusterIP 10.98.69.149"] },
    { line: `kubectl-netpath --from ${AZURE_ZONES} pod/`, want: ["pod/busybox\tPending", "pod/busybox-zoned\tRunning"] },
    { line: `kubectl-netpath --from ${IPTABLES_LAB} --namespace=kube`, want: ["--namespace=kube-system"] },
    { line: "kubectl-netpath --context ", want: ["fake\tcluster fake, namespace kube-system (current)", "other\tcluster fake"] },
    { line: "kubectl-netpath --from exa", want: ["examples/"] },
    { line: "kubectl-netpath --from /nonexistent svc/", want: [] },
  ])("$line", async ({ line, want }) => {
    expect(await fish(line)).toEqual(want);
  });
  it.each([
    { name: "backslash", line: () => `kubectl-netpath --from ${spaced().replace(/ /g, "\\ ")}/lab -n kube-system svc/k`, want: ["svc/kube-dns\tClusterIP 10.96.0.10"] },
    { name: "quotes", line: () => `kubectl-netpath --from "${spaced()}/lab" -n kube-system svc/k`, want: ["svc/kube-dns\tClusterIP 10.96.0.10"] },
    { name: "--kubeconfig in quotes", line: () => `kubectl-netpath --kubeconfig '${spaced()}/k c.json' --context arn:aws:e`, want: ["arn:aws:eks:eu-west-1:123456789012:cluster/prod\tcluster c"] },
  ])("a path with a space ($name)", async ({ line, want }) => {
    expect(await fish(line())).toEqual(want);
  });
});

it.runIf(isCi())("the shells are installed (scripts/ci-setup.sh)", () => {
  for (const shell of ["bash", "zsh", "fish"]) expect(execFileSync("sh", ["-c", `command -v ${shell}`], { encoding: "utf8" }).trim()).not.toBe("");
});

// Issue 13 defect 1: candidates are data, never code. Names from a bundle or a kubeconfig that carry shell syntax
// must not run anything when TAB is pressed, in bash, zsh or fish; names that are not valid Kubernetes names are not
// offered at all (the engine drops them), and a kubeconfig context (any string is allowed there) is offered quoted.
describe("hostile names: TAB never runs them", () => {
  const HOSTILE = ["$(touch PWNED-subst)", "`touch PWNED-tick`", "a;touch PWNED-semi", "x\ntouch PWNED-nl", "q'\"$(touch PWNED-q)", "*"];
  let dir: string;
  let kc: string;
  let marker: string;
  let n = 0;
  beforeEach(() => {
    marker = join(work, `marker-${++n}`);
    mkdirSync(marker, { recursive: true });
  });
  beforeAll(() => {
    dir = join(work, "hostile-bundle");
    mkdirSync(join(dir, "nodes"), { recursive: true });
    const svc = (name: string) => ({ apiVersion: "v1", kind: "Service", metadata: { name, namespace: "default" }, spec: { type: "ClusterIP", clusterIP: "10.96.0.9", ports: [{ port: 80, protocol: "TCP" }] } });
    writeFileSync(join(dir, "services.yaml"), JSON.stringify({ apiVersion: "v1", kind: "List", items: [svc("web"), ...HOSTILE.map(svc)] }));
    kc = join(work, "hostile-kubeconfig");
    const ctx = (name: string) => ({ name, context: { cluster: "c", user: "u" } });
    writeFileSync(kc, JSON.stringify({
      apiVersion: "v1", kind: "Config", "current-context": "ok",
      clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1" } }], users: [{ name: "u", user: { token: "t" } }],
      contexts: [ctx("ok"), ctx("a;touch PWNED-ctx"), ctx("$(touch PWNED-ctxsubst)"), ctx("`touch PWNED-ctxtick`")],
    }));
  });
  const pwned = () => readdirSync(marker);

  it.runIf(requireTools("real bash with bash-completion", BASH))("bash: the script", async () => {
    const lines = [`kubectl-netpath --from ${dir} svc/`, `kubectl-netpath --from ${dir} svc/$`, `kubectl-netpath --kubeconfig ${kc} --context `, "kubectl-netpath --context a"];
    const got = await bashCompleteIn(marker, `source ${join(ROOT, "completions/kubectl-netpath.bash")}`, "__kubectl_netpath_complete", lines);
    expect(pwned()).toEqual([]);
    expect(got[0]!.reply).toEqual(["svc/web"]);
    // a context name with shell syntax is not offered at all (kubectl's own script would pass it to compgen -W)
    expect(got[2]!.reply).toEqual(["ok"]);
  });
  it.runIf(kubectlVersions().length > 0 && requireTools("kubectl's bash completion", BASH))("kubectl's own bash completion: contexts without a description never reach compgen -W", async () => {
    // kubectl's script hands candidates without a description to `compgen -W`, which expands $(…) and `…`
    const bare = join(work, "hostile-kubeconfig-bare");
    writeFileSync(bare, JSON.stringify({
      apiVersion: "v1", kind: "Config", "current-context": "ok",
      clusters: [], users: [],
      contexts: [{ name: "ok", context: {} }, { name: "$(touch PWNED-k1)", context: {} }, { name: "`touch PWNED-k2`", context: {} }, { name: "b;touch PWNED-k3", context: {} }],
    }));
    const v = kubectlVersions().at(-1)!;
    const kdir = join(work, `k-${v}`);
    mkdirSync(kdir, { recursive: true });
    if (!existsSync(join(kdir, "kubectl"))) symlinkSync(join(SDK, v), join(kdir, "kubectl"));
    const got = await bashCompleteIn(marker, `PATH=${kdir}:$PATH; source <(kubectl completion bash)`, "__start_kubectl", [`kubectl netpath --kubeconfig ${bare} --context `]);
    expect(pwned()).toEqual([]);
    expect(got[0]!.reply).toEqual(["ok"]);
  });
  it.runIf(requireTools("real zsh", ["zsh"]))("zsh: the script", async () => {
    const driver = join(work, "zsh-driver-hostile.zsh");
    writeFileSync(driver, ZSH_DRIVER);
    for (const line of [`kubectl-netpath --from ${dir} svc/`, `kubectl-netpath --kubeconfig ${kc} --context `]) {
      const r = await run("zsh", ["-f", driver, join(ROOT, "completions/_kubectl-netpath"), line, "2"], { cwd: marker, timeout: 30_000, env: env({ KUBECONFIG: kc }) });
      expect(r.status, r.stderr).toBe(0);
    }
    expect(pwned()).toEqual([]);
  });
  it.runIf(requireTools("real zsh", ["zsh"]))("zsh: a typed `--flag=` word and a context with colons are data, never evaluated", async () => {
    // zsh's own expand-or-complete (the TAB key in a pty) expands `$(…)` in the word before any completion function
    // runs, so the script is called here directly, with zsh's completion builtins as stubs that print what they get.
    // tab's (and Cobra's) script ran `eval _describe … ${flagPrefix}` with the typed `--output=…=` in flagPrefix.
    const colons = join(work, "colon-kubeconfig");
    writeFileSync(colons, JSON.stringify({
      apiVersion: "v1", kind: "Config", "current-context": "ok", clusters: [], users: [],
      contexts: [{ name: "arn:aws:eks:eu-west-1:123456789012:cluster/prod", context: {} }],
    }));
    const driver = join(work, "zsh-stubs.zsh");
    writeFileSync(driver, [
      "compdef() { :; }; compadd() { :; }; _arguments() { print -r -- \"ARGUMENTS $*\"; }",
      '_describe() { print -r -- "DESCRIBE $*"; print -rl -- "CANDIDATE "${^completions}; }',
      `source ${bashQuote(join(ROOT, "completions/_kubectl-netpath"))}`,
      "words=(kubectl-netpath '--output=$(id>PWNED-flag)='); CURRENT=2; _kubectl-netpath",
      `words=(kubectl-netpath --kubeconfig ${bashQuote(colons)} --context arn); CURRENT=5; _kubectl-netpath`,
      // the words are unquoted with (Q) before the call: one level of quoting removed, the $(…) left as text
      `words=(kubectl-netpath --from '"$(id>PWNED-q)"/lab' svc/); CURRENT=4; _kubectl-netpath`,
    ].join("\n"));
    const r = await run("zsh", ["-f", driver], { cwd: marker, timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(pwned()).toEqual([]);
    expect(r.stdout).toContain("DESCRIBE completions completions -P --output=$(id>PWNED-flag)=");
    // `:` separates a candidate from its description for _describe: the name's own colons are escaped
    expect(r.stdout).toContain("CANDIDATE arn\\:aws\\:eks\\:eu-west-1\\:123456789012\\:cluster/prod");
  });
  it.runIf(requireTools("real fish", ["fish"]))("fish: the script", async () => {
    for (const line of [`kubectl-netpath --from ${dir} svc/`, `kubectl-netpath --kubeconfig ${kc} --context `]) {
      const r = await run("fish", ["--no-config", "-c", `source ${join(ROOT, "completions/kubectl-netpath.fish")}; complete --do-complete ${bashQuote(line)}`], { cwd: marker });
      expect(r.status, r.stderr).toBe(0);
      if (line.includes("svc/")) expect(r.stdout.split("\n").filter(Boolean).map((l) => l.split("\t")[0])).toEqual(["svc/web"]);
    }
    expect(pwned()).toEqual([]);
  });
  it("the engine offers no invalid Kubernetes name and says so on stderr", async () => {
    const r = await run(join(bin, "kubectl-netpath"), ["complete", "--", "--from", dir, "svc/"]);
    const answer = parseAnswer(r.stdout);
    expect(answer.candidates.map((c) => c.value)).toEqual(["svc/web"]);
    expect(r.stderr).toMatch(/6 names? in the bundle (are|is) not (a )?valid Kubernetes names?/);
  });
});

async function bashCompleteIn(cwd: string, setup: string, fn: string, lines: string[]): Promise<{ reply: string[]; compopt: string[] }[]> {
  const parts = ["source /usr/share/bash-completion/bash_completion", setup, 'compopt() { __COMPOPT+=("$*"); }'];
  for (const line of lines) {
    const words = compWords(line);
    parts.push(
      `COMP_LINE=${bashQuote(line)}; COMP_POINT=\${#COMP_LINE}; COMP_WORDS=(${words.map(bashQuote).join(" ")}); COMP_CWORD=${words.length - 1}`,
      `COMPREPLY=(); __COMPOPT=(); ${fn}`,
      `printf 'REPLY\\x1f%s\\n' "$(IFS=$'\\x1f'; echo "\${COMPREPLY[*]}")"; printf 'COMPOPT\\x1f%s\\n' "$(IFS=$'\\x1f'; echo "\${__COMPOPT[*]}")"`,
    );
  }
  const r = await run("bash", ["--norc", "--noprofile", "-c", parts.join("\n")], { cwd });
  expect(r.status, r.stderr).toBe(0);
  const out = r.stdout.split("\n").filter((l) => l.startsWith("REPLY\x1f") || l.startsWith("COMPOPT\x1f"));
  const results: { reply: string[]; compopt: string[] }[] = [];
  for (let i = 0; i < out.length; i += 2) {
    const split = (l: string) => l.split("\x1f").slice(1).filter((x) => x !== "");
    results.push({ reply: split(out[i]!), compopt: split(out[i + 1]!) });
  }
  return results;
}
