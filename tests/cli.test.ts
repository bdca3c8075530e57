// The CLI end to end (in-process, with captured streams), and once through the built executable: exit codes and the
// one-line messages for bad input.
import { spawnSync } from "node:child_process";
import { closeSync, cpSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/program.ts";
import { VERSION } from "../src/cli/version.ts";
import { IPTABLES_LAB } from "./helpers/bundles.ts";

async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env, stdoutIsTTY: false, stderrIsTTY: false, cwd: process.cwd() };
  const code = await runCli(args, io);
  return { code, out, err };
}

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "netpath-cli-"));
}

describe("svc/NAME --from", () => {
  it("prints the report, exit 0", async () => {
    const r = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB]);
    expect(r.code).toBe(0);
    expect(r.err).toBe("");
    expect(r.out).toContain("Service kube-system/kube-dns");
    expect(r.out).toMatch(/10\.244\.0\.5:53\s+50%/);
    expect(r.out).not.toContain("\u001b[");
  });
  it("--all-nodes on a bundle lists every node it knows of: those without a capture as not analysed, not left out", async () => {
    const r = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "--all-nodes", "-o", "json"]);
    const nodes = (JSON.parse(r.out) as { nodes: { node: string; error?: string }[] }).nodes;
    expect(nodes.map((n) => n.node)).toEqual(["k8s1", "k8s2", "k8s3"]);
    expect(nodes.slice(1).map((n) => n.error)).toEqual(["no datapath state was collected from this node", "no datapath state was collected from this node"]);
  });
  // kubectl puts no flag before the plugin's name, so `kubectl netpath --context prod cleanup` is how an operator
  // writes it: the connection flags reach the subcommand; another main-command flag there is a usage error, not dropped
  it("connection flags before `cleanup` or `capture` are the subcommand's; other main-command flags there are refused", async () => {
    const before = await run(["--kubeconfig", "/nonexistent/kc", "cleanup", "--dry-run"]);
    expect(before.code).toBe(1);
    expect(before.err).toContain("/nonexistent/kc");
    const after = await run(["--kubeconfig", "/nonexistent/kc", "cleanup", "--dry-run", "--kubeconfig", "/other/kc"]);
    expect(after.err).toContain("/other/kc");
    const wrong = await run(["-o", "json", "capture", "svc/web", "-o", "x.json"]);
    expect([wrong.code, wrong.err.split("\n")[0]]).toEqual([2, "error: --output before `capture` belongs to the main command: write it after `capture`"]);
  });
  it("-n=NS and -o=FORMAT as kubectl reads them; --node twice is one node; --dry-run with --from is a usage error", async () => {
    const eq = await run(["svc/kube-dns", "-n=kube-system", "--from", IPTABLES_LAB, "-o=json"]);
    expect([eq.code, (JSON.parse(eq.out) as { kind: string }).kind]).toEqual([0, "ServiceReport"]);
    const twice = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "--node", "k8s1", "--node", "k8s1", "-o", "json"]);
    expect((JSON.parse(twice.out) as { nodes: { node: string }[] }).nodes.map((n) => n.node)).toEqual(["k8s1"]);
    const live = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "--context", "prod", "--no-exec"]);
    expect([live.code, live.err]).toEqual([0, "warning: --context has no effect with --from: the bundle is read, no cluster is contacted\nwarning: --no-exec has no effect with --from: the bundle is read, no cluster is contacted\n"]);
    expect((await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB])).err).toBe("");
    expect((await run(["version"])).out).toBe(`${VERSION}\n`);
    expect((await run(["help"])).out).toMatch(/^Usage: kubectl netpath \[TYPE\/NAME\] \[flags\]/);
    const dry = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "--dry-run"]);
    expect([dry.code, dry.err.split("\n")[0]]).toEqual([2, "error: --dry-run shows the debug pod a live run would create; with --from nothing is created: leave out one of them"]);
  });
  it("help SUBCOMMAND prints that subcommand's help, exit 0, as `kubectl help get` does; an unknown one is a usage error", async () => {
    for (const sub of ["capture", "cleanup", "completion"]) {
      const own = await run([sub, "--help"]);
      expect(own.out, sub).toMatch(new RegExp(`^Usage: kubectl netpath ${sub} `));
      expect(await run(["help", sub]), sub).toEqual({ code: 0, out: own.out, err: "" });
    }
    expect(await run(["help", "nosuch"])).toEqual({
      code: 2,
      out: "",
      err: 'error: no subcommand "nosuch": help takes one of capture, cleanup, completion (or nothing, for the main command)\n(run with --help for usage)\n',
    });
  });
  it("accepts `service NAME` and `services/NAME`", async () => {
    expect((await run(["service", "my-nginx-svc", "--from", IPTABLES_LAB])).code).toBe(0);
    expect((await run(["services/my-nginx-svc", "--from", IPTABLES_LAB])).code).toBe(0);
  });
  it("-o json is the ServiceReport, -o yaml the same", async () => {
    const j = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "-o", "json"]);
    const report = JSON.parse(j.out);
    expect(report.kind).toBe("ServiceReport");
    expect(report.apiVersion).toBe("netpath.kubectl.io/v1alpha1");
    expect(report.nodes[0].ports[0].entryPoints[0].balancing.shares).toHaveLength(2);
    const y = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "-o", "yaml"]);
    expect(y.out).toContain("kind: ServiceReport");
  });
  it("colours only on a terminal without NO_COLOR", async () => {
    let out = "";
    const io: CliIo = { stdout: (t) => void (out += t), stderr: () => {}, env: {}, stdoutIsTTY: true, stderrIsTTY: true, cwd: "." };
    await runCli(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB], io);
    expect(out).toContain("\u001b[1m");
    out = "";
    io.env = { NO_COLOR: "1" };
    await runCli(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB], io);
    expect(out).not.toContain("\u001b[");
  });
});

describe("bad input: one clear line, exit 1; usage: exit 2", () => {
  it.each([
    { name: "missing bundle path", args: ["svc/web", "--from", "/nonexistent/bundle"], code: 1, err: "error: --from /nonexistent/bundle: no such file or directory\n" },
    { name: "unknown service", args: ["svc/nope", "--from", IPTABLES_LAB], code: 1, err: 'error: service "nope" not found in namespace "default"\n' },
    { name: "service in another namespace", args: ["svc/kube-dns", "--from", IPTABLES_LAB], code: 1, err: 'error: service "kube-dns" not found in namespace "default"; it exists in namespace "kube-system": use -n kube-system\n' },
    { name: "no target", args: ["--from", IPTABLES_LAB], code: 2, err: "error: a target is required" },
    { name: "unknown target type", args: ["deploy/web"], code: 2, err: 'error: unknown target type "deploy": use svc/NAME, pvc/NAME or pod/NAME' },
    { name: "empty name", args: ["svc/"], code: 2, err: "error: svc: a name is required" },
    { name: "--source without --dest", args: ["svc/web", "--source", "10.0.0.1"], code: 2, err: "error: --source needs --dest (the packet's destination, IP:PORT[/proto])" },
    { name: "bad --dest", args: ["svc/web", "--source", "10.0.0.1", "--dest", "10.0.0.1"], code: 2, err: 'error: --dest "10.0.0.1": want IP:PORT[/tcp|udp|sctp]' },
    { name: "bad -o", args: ["svc/web", "-o", "xml"], code: 2, err: "error: option '-o, --output <format>' argument 'xml' is invalid" },
    { name: "--why-pending on a Service", args: ["svc/web", "--why-pending"], code: 2, err: "error: --why-pending may only be used with a pvc/NAME or pod/NAME target" },
    { name: "unknown flag", args: ["svc/web", "--frobnicate"], code: 2, err: "error: unknown option '--frobnicate'" },
    { name: "unknown --node", args: ["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "--node", "k9"], code: 1, err: "error: --node k9: no such node in the bundle (nodes: k8s1); use one of those, or capture that node into a bundle" },
  ])("$name", async ({ args, code, err }) => {
    const r = await run(args);
    expect(r.code).toBe(code);
    expect(r.err.startsWith(err.trimEnd()) || r.err.includes(err.trimEnd())).toBe(true);
    expect(r.err).not.toMatch(/\n\s+at /); // never a stack trace
  });

  it.each([
    { name: "empty file", content: "", err: "is empty: expected a kubectl-netpath bundle (JSON or YAML)" },
    { name: "binary file", content: "\u0000\u0001\u0002ELF", err: "is a binary file, not a kubectl-netpath bundle" },
    { name: "truncated JSON", content: '{"format": "kubectl-netpath/bundle", "version": 1, "objects": {"serv', err: "not valid JSON" },
    { name: "newer format", content: '{"format": "kubectl-netpath/bundle", "version": 99}', err: "has bundle format version 99, newer than this kubectl-netpath understands (2); upgrade kubectl-netpath" },
    { name: "not a bundle", content: '{"hello": 1}', err: 'is not a kubectl-netpath bundle (no "format: kubectl-netpath/bundle")' },
  ])("$name", async ({ content, err }) => {
    const f = join(tmp(), "b.json");
    writeFileSync(f, content);
    const r = await run(["svc/web", "--from", f]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(err);
    expect(r.err.split("\n").filter(Boolean)).toHaveLength(1);
  });

  it("a dump cut mid-rule: the report says the node was not analysed, stderr names the line, exit 1", async () => {
    const dir = tmp();
    cpSync(IPTABLES_LAB, dir, { recursive: true });
    const dumpPath = join(dir, "nodes/k8s1/iptables-save.txt");
    const text = readFileSync(dumpPath, "utf8");
    writeFileSync(dumpPath, text.slice(0, text.indexOf("-A KUBE-SVC-TCOU7JCQXEZGVUNU") + 40));
    const r = await run(["svc/kube-dns", "-n", "kube-system", "--from", dir]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error: node k8s1: iptables-save line 171: the dump ends inside table "nat" \(opened at line \d+\) without COMMIT: it was truncated/);
    expect(r.err).toContain("fix or re-capture that node's dump");
    expect(r.out).toContain("not analysed");
  });

  it("a dump of another mode in the iptables-save slot is named for what it is", async () => {
    const dir = tmp();
    cpSync(IPTABLES_LAB, dir, { recursive: true });
    writeFileSync(join(dir, "nodes/k8s1/iptables-save.txt"), "IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n");
    const r = await run(["svc/kube-dns", "-n", "kube-system", "--from", dir]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("holds ipvsadm output (section ipvsadm), not iptables-save output");
  });
});

describe("the built executable", () => {
  it("--version and --help follow kubectl conventions", () => {
    const v = spawnSync(process.execPath, ["dist/kubectl-netpath.cjs", "--version"], { encoding: "utf8" });
    expect(v.stdout.trim()).toBe(VERSION);
    const pkg = JSON.parse(readFileSync("package.json", "utf8"));
    expect(pkg.version).toBe(VERSION);
    const h = spawnSync(process.execPath, ["dist/kubectl-netpath.cjs", "--help"], { encoding: "utf8" });
    expect(h.status).toBe(0);
    expect(h.stdout).toContain("Usage: kubectl netpath [TYPE/NAME] [flags]");
    expect(h.stdout).toMatch(/Examples:\n {2}# /);
  });
  // kubectl: `error: write /dev/stdout: no space left on device`, exit 1; a script saving a report must not lose it unseen
  it("a write to stdout that fails (a full disk) is one error line and exit 1, not exit 0", () => {
    const full = openSync("/dev/full", "w");
    try {
      for (const args of [["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "-o", "json"], ["--help"]]) {
        const r = spawnSync(process.execPath, ["dist/kubectl-netpath.cjs", ...args], { encoding: "utf8", stdio: ["ignore", full, "pipe"] });
        expect([r.status, r.stderr]).toEqual([1, "error: cannot write the output: ENOSPC (no space left on the device)\n"]);
      }
    } finally {
      closeSync(full);
    }
  });
  it("does not load node:child_process (and the net, dgram and stream modules it brings) for an offline answer", () => {
    // commander requires it at load for executable subcommands this CLI does not have: scripts/build.mjs gives it a
    // stand-in that loads the built-in on first use.
    const dir = tmp();
    const list = join(dir, "modules.txt");
    const hook = join(dir, "hook.cjs");
    writeFileSync(hook, `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join("\\n")));\n`);
    const r = spawnSync(process.execPath, ["-r", hook, "dist/kubectl-netpath.cjs", "svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB], { encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("Service kube-system/kube-dns");
    const loaded = readFileSync(list, "utf8").split("\n");
    expect(loaded).toContain("NativeModule internal/modules/esm/loader");
    expect(loaded).not.toContain("NativeModule child_process");
  });
  it("exits 1 with one line and no stack trace on a missing bundle", () => {
    const r = spawnSync(process.execPath, ["dist/kubectl-netpath.cjs", "svc/x", "--from", "/nope"], { encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("error: --from /nope: no such file or directory\n");
  });
});
