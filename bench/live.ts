/**
 * `npm run bench -- --live` (root, network namespaces): issue 12's live rows, each figure next to its reference
 * measured in the same run.
 *
 * - For each iptables backend (nft, legacy): the bench's 10,000-Service node dump (bench/out/iptables-10000, built
 *   by `npm run bench` when missing) is loaded into a network namespace that plays node-1 (kube-proxy's jumps from
 *   the builtin chains, kubelet's KUBE-IPTABLES-HINT for the nft backend, /proxyMode answering `iptables`); the
 *   project's fake API server (tests/helpers/fake_apiserver.ts) serves every Service, EndpointSlice and Node of the
 *   bundle and runs each exec inside that namespace. Measured: `iptables-<backend>-save` alone in the namespace (the
 *   reference) and one small chain listed alone (`iptables-<backend> -t nat -S KUBE-MARK-MASQ`: the floor of any
 *   targeted read), the live `svc/NAME --node node-1` (wall, bytes the API server sent, sections truncated, and each
 *   section's time on the node from the report's `collection`), and the whole-node `capture` of that node (wall,
 *   bytes, each section's time from the bundle). Then the same question and capture where collection runs on a real
 *   cluster, in the kube-proxy pod, whose image's tools (tests/helpers/userlands.ts: no awk, gzip or ip) the execs get
 *   (debug pods get the host's, gzip included); and that capture `--via kube-proxy` (nft backend: by default the
 *   kube-proxy pod defers whole tables to a debug pod) or `--via debug-pod` (legacy backend).
 * - 16 nodes vs 1 node (measured first, while the harness process is small; printed last): 16 namespaces, each a
 *   small node (kube-proxy rules generated for one Service `spread` with one endpoint per node), `svc/spread` with the
 *   default --parallel against `--node n01`.
 *
 * Figures, not a test: the caller prints them; it throws only when the bench itself cannot run.
 * @module
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { readBundle } from "../src/io/read_bundle.ts";
import { type FakeApiServer, startFakeApiServer } from "../tests/helpers/fake_apiserver.ts";
import { kubeProxyImageUserland } from "../tests/helpers/userlands.ts";
import { type FakeNode, startFakeNode } from "../tests/helpers/fake_nodes.ts";
import { kubeProxyRules } from "../tests/helpers/fake_node_rules.ts";
import { spread } from "../tests/helpers/spread_cluster.ts";
import { findTool, type IptablesBackend, loadIptables, netnsUnavailableReason } from "../tests/helpers/netns.ts";

/** One measured live figure. */
export interface LiveRow {
  label: string;
  /** Wall seconds of the command. */
  wallS: number;
  /** Bytes the API server sent during the command (REST bodies and exec frames). */
  apiBytes: number;
  /** The reference figure and its label, e.g. `iptables-nft-save alone`. */
  reference?: { label: string; wallS: number; bytes?: number };
  /** Exit code of the command. */
  code: number;
  /** Sections the report or bundle marks truncated, and node errors (must be empty). */
  problems: string[];
  /** The target, in words, and whether it was met. */
  target: string;
  pass: boolean;
  /** More figures of the row, in words. */
  extra?: string;
  /** Per section collected on the node: its time there (ms) and output size, as the report or bundle records them. */
  sections?: { section: string; ms?: number; bytes: number; timedOutAfterSeconds?: number }[];
}

/** `iptables-save 310 ms 12 kB, …`: a row's per-section figures in words. */
export function sectionTimes(sections: NonNullable<LiveRow["sections"]>): string {
  return sections.map((s) => `${s.section} ${s.ms ?? "?"} ms ${s.bytes >= 1e6 ? `${(s.bytes / 1e6).toFixed(1)} MB` : `${(s.bytes / 1e3).toFixed(1)} kB`}${s.timedOutAfterSeconds !== undefined ? ` (timed out at ${s.timedOutAfterSeconds} s)` : ""}`).join(", ");
}

/** The per-section figures of node `node` in a `-o json` report. */
function reportSections(r: Ran, node: string): LiveRow["sections"] {
  try {
    const rep = JSON.parse(r.stdout) as { nodes?: { node: string; collection?: NonNullable<LiveRow["sections"]> }[] };
    return rep.nodes?.find((n) => n.node === node)?.collection;
  } catch {
    return undefined;
  }
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  wallS: number;
}

function runCli(cli: string, argv: string[]): Promise<Ran> {
  return new Promise((resolve) => {
    const t = process.hrtime.bigint();
    const child = spawn(process.execPath, [cli, ...argv], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.on("close", (code) => {
      resolve({ code: code ?? 1, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8"), wallS: Number(process.hrtime.bigint() - t) / 1e9 });
    });
  });
}

function timed(argv: string[]): Promise<{ wallS: number; bytes: number; code: number }> {
  return new Promise((resolve) => {
    const t = process.hrtime.bigint();
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "ignore"] });
    let bytes = 0;
    child.stdout.on("data", (b: Buffer) => (bytes += b.length));
    child.on("close", (code) => resolve({ wallS: Number(process.hrtime.bigint() - t) / 1e9, bytes, code: code ?? 1 }));
  });
}

/** `{ [key]: value }` when the value is defined, else `{}` (exactOptionalPropertyTypes). */
function optional<K extends string, V>(key: K, value: V | undefined): { [k in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [k in K]?: V };
}

function bytesSince(s: FakeApiServer, from: number): number {
  return s.requests.slice(from).reduce((n, r) => n + (r.bytesOut ?? 0), 0);
}

/** Problems a `-o json` report shows: node errors and truncation warnings. */
function reportProblems(r: Ran): string[] {
  const out: string[] = [];
  if (r.code !== 0) out.push(`exit ${r.code}: ${r.stderr.trim().split("\n").at(-1) ?? ""}`);
  for (const line of r.stderr.split("\n")) if (/truncated|did not finish|stream cut/.test(line)) out.push(line.trim());
  try {
    const rep = JSON.parse(r.stdout) as { nodes?: { node: string; error?: string }[] };
    for (const n of rep.nodes ?? []) if (n.error) out.push(`node ${n.node}: ${n.error}`);
  } catch {
    if (r.code === 0) out.push("the report is not JSON");
  }
  return out;
}

/**
 * Runs the live rows.
 * @param o `root`: the repository; `cli`: dist/kubectl-netpath.cjs; `fixture`: the 10k bundle directory (all objects);
 *   `query`: the Service asked about; `log`: progress lines.
 * @returns the rows, in order.
 * @throws {Error} when network namespaces cannot be used here (not root, tools missing).
 */
export async function liveRows(o: { cli: string; fixture: string; query: { namespace: string; name: string }; log: (s: string) => void }): Promise<LiveRow[]> {
  const why = netnsUnavailableReason(["nc", "curl", "gzip"]);
  if (why) throw new Error(`--live needs network namespaces: ${why}`);
  const rows: LiveRow[] = [];
  // The 16-node row first, while this process (which plays the API server and spawns every exec) is small: once it
  // holds the 10,000-Service bundle, each fork of an exec copies a large heap's page tables, a cost of the harness that
  // a real API server does not put on the machine that runs the plugin. Printed last, as before.
  const many = await manyNodes(o, 16);
  const bundle = readBundle(o.fixture, { maxBytes: 2 ** 32 });
  const nodeCapture = bundle.nodes[0]!;
  const dump = nodeCapture.sections["iptables-save"]!.stdout;
  const dir = mkdtempSync(join(tmpdir(), "knp-bench-live-"));
  try {
    for (const backend of ["nft", "legacy"] as IptablesBackend[]) {
      o.log(`bench --live: loading the ${bundle.objects.services.length.toLocaleString("en-US")}-Service dump into a ${backend}-backend namespace…`);
      const node = await startFakeNode(nodeCapture.name, { proxyMode: "iptables" });
      // the dump is a whole node's iptables-save (builtin chains' jumps included); one restore, no --noflush (which
      // makes iptables-nft read the ruleset back first)
      await loadIptables(node.netns, dump, { backend, family: 4, noflush: false });
      const api = await startFakeApiServer({ objects: bundle.objects, exec: { netnsFor: (n) => (n === nodeCapture.name ? node.netns.name : undefined) } });
      // kube-proxy's image tools (distroless-iptables: dash and grep, no awk, gzip or ip), for the rows of collection
      // where it runs on a real cluster
      const kp = kubeProxyImageUserland();
      try {
        if (backend === "nft") await loadIptables(node.netns, "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n", { backend, family: 4 });
        const save = await timed([findTool("ip") ?? "ip", "netns", "exec", node.netns.name, `iptables-${backend}-save`]);
        const ref = { label: `iptables-${backend}-save alone`, wallS: save.wallS, bytes: save.bytes };
        o.log(`bench --live: ${ref.label}: ${save.wallS.toFixed(2)} s, ${(save.bytes / 1e6).toFixed(1)} MB`);
        // The floor of any targeted read on this backend: one small chain listed alone. The legacy kernel interface
        // hands over (and libiptc parses) the whole table for it; the nft backend asks the kernel for that chain.
        const one = await timed([findTool("ip") ?? "ip", "netns", "exec", node.netns.name, `iptables-${backend}`, "-t", "nat", "-S", "KUBE-MARK-MASQ"]);
        const oneRatio = one.wallS / save.wallS;
        const oneChain = `one 2-rule chain alone (iptables-${backend} -t nat -S KUBE-MARK-MASQ): ${(one.wallS * 1000).toFixed(0)} ms = ` +
          `${oneRatio < 0.01 ? oneRatio.toPrecision(1) : oneRatio.toFixed(2)}× the save, the floor of any targeted read on this backend`;
        o.log(`bench --live: ${oneChain}`);
        const argv = ["svc/" + o.query.name, "-n", o.query.namespace, "--kubeconfig", api.kubeconfig, "--node", nodeCapture.name, "-o", "json"];
        await runCli(o.cli, argv); // warm-up (page cache, TLS)
        const from = api.requests.length;
        const q = await runCli(o.cli, argv);
        const qBytes = bytesSince(api, from);
        const qProblems = reportProblems(q);
        rows.push({
          label: `live svc/NAME --node, ${backend} backend`,
          wallS: q.wallS,
          apiBytes: qBytes,
          reference: ref,
          code: q.code,
          problems: qProblems,
          target: "≤ 0.1× save, ≤ 3 s, ≤ 3 MB, nothing truncated",
          pass: q.wallS <= 0.1 * save.wallS && q.wallS <= 3 && qBytes <= 3e6 && qProblems.length === 0,
          extra: oneChain,
          ...optional("sections", reportSections(q, nodeCapture.name)),
        });
        o.log(`bench --live: ${rows.at(-1)!.label}: ${q.wallS.toFixed(2)} s, ${(qBytes / 1e3).toFixed(0)} kB`);
        // The same question where collection runs on a real cluster: in the node's kube-proxy pod.
        if (kp) {
          const kpApi = await startFakeApiServer({ objects: bundle.objects, exec: { netnsFor: (n) => (n === nodeCapture.name ? node.netns.name : undefined), pathFor: () => kp.dir } });
          try {
            const kpArgv = ["svc/" + o.query.name, "-n", o.query.namespace, "--kubeconfig", kpApi.kubeconfig, "--node", nodeCapture.name, "-o", "json"];
            await runCli(o.cli, kpArgv);
            const kpFrom = kpApi.requests.length;
            const k = await runCli(o.cli, kpArgv);
            const kBytes = bytesSince(kpApi, kpFrom);
            const kProblems = reportProblems(k);
            rows.push({
              label: `  the same, kube-proxy's image tools (no awk, gzip, ip)`,
              wallS: k.wallS,
              apiBytes: kBytes,
              reference: ref,
              code: k.code,
              problems: kProblems,
              target: "≤ 0.1× save, ≤ 3 s, ≤ 3 MB, nothing truncated",
              pass: k.wallS <= 0.1 * save.wallS && k.wallS <= 3 && kBytes <= 3e6 && kProblems.length === 0,
              ...optional("sections", reportSections(k, nodeCapture.name)),
            });
            o.log(`bench --live: ${backend} backend, kube-proxy image's tools: ${k.wallS.toFixed(2)} s, ${(kBytes / 1e3).toFixed(0)} kB`);
          } finally {
            await kpApi.close();
          }
        }
        rows.push(await captureRow(o, { api, dir, backend, node: nodeCapture.name, ref, label: `capture (whole node), ${backend} backend` }));
        // The same where collection runs on a real cluster: kube-proxy's image has no gzip. On the nft backend the
        // kube-proxy pod defers whole tables to a debug pod (here with the host's tools, gzip included), and
        // `--via kube-proxy` shows what the text would cost; on the legacy backend (netshoot has no iptables-legacy)
        // the kube-proxy pod sends text, and `--via debug-pod` (an image with iptables-legacy) compresses.
        if (kp) {
          const kpApi = await startFakeApiServer({ objects: bundle.objects, exec: { netnsFor: (n) => (n === nodeCapture.name ? node.netns.name : undefined), pathFor: (_ns, pod) => (pod.startsWith("kube-proxy-") ? kp.dir : undefined) } });
          try {
            rows.push(await captureRow(o, { api: kpApi, dir, backend, node: nodeCapture.name, ref, label: "  the same, kube-proxy's image tools (no gzip)" }));
            const via = backend === "nft" ? "kube-proxy" : "debug-pod";
            rows.push(await captureRow(o, { api: kpApi, dir, backend, node: nodeCapture.name, ref, label: `  the same, --via ${via}`, extra: ["--via", via] }));
          } finally {
            await kpApi.close();
          }
        }
      } finally {
        kp?.remove();
        await api.close();
        await node.stop();
      }
    }
    rows.push(many);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/**
 * One whole-node `capture` of the bench's node as a row: wall, bytes the API server sent, each section's time and
 * size from the bundle; problems: a failed run, a truncated section, no KUBE-SVC chain. The run's uncompressed-output
 * warning, when there is one, goes into the row's note.
 */
async function captureRow(
  o: { cli: string; query: { namespace: string; name: string }; log: (s: string) => void },
  c: { api: FakeApiServer; dir: string; backend: IptablesBackend; node: string; ref: { label: string; wallS: number; bytes: number }; label: string; extra?: string[] },
): Promise<LiveRow> {
  const file = join(c.dir, `capture-${c.backend}-${Date.now()}.json`);
  const from = c.api.requests.length;
  const r = await runCli(o.cli, ["capture", "svc/" + o.query.name, "-n", o.query.namespace, "--kubeconfig", c.api.kubeconfig, "--node", c.node, "-o", file, ...(c.extra ?? [])]);
  const bytes = bytesSince(c.api, from);
  const problems: string[] = r.code === 0 ? [] : [`exit ${r.code}: ${r.stderr.trim().split("\n").at(-1) ?? ""}`];
  let sections: LiveRow["sections"];
  if (r.code === 0) {
    const captured = readBundle(file, { maxBytes: 2 ** 32 }).nodes.find((n) => n.name === c.node);
    sections = Object.entries(captured?.sections ?? {}).map(([section, x]) => ({ section, bytes: x!.stdout.length, ...optional("ms", x!.durationMs), ...optional("timedOutAfterSeconds", x!.timedOutAfterSeconds) }));
    const text = readFileSync(file, "utf8");
    if (/"truncated":\s*true/.test(text)) problems.push("a section is marked truncated");
    if (!text.includes("KUBE-SVC-")) problems.push("the capture holds no KUBE-SVC chain");
    o.log(`bench --live: capture file ${(statSync(file).size / 1e6).toFixed(1)} MB`);
    rmSync(file, { force: true });
  }
  const said = r.stderr.split("\n").find((l) => l.includes("came through the API server uncompressed"))?.replace(/^warning: /, "");
  const row: LiveRow = {
    label: c.label,
    wallS: r.wallS,
    apiBytes: bytes,
    reference: c.ref,
    code: r.code,
    problems,
    target: c.backend === "nft" ? "≤ 1.2× save, ≤ 6 MB" : "(issue's target is for the nft backend) ≤ 6 MB",
    pass: (c.backend !== "nft" || r.wallS <= 1.2 * c.ref.wallS) && bytes <= 6e6 && problems.length === 0,
    ...optional("sections", sections),
    ...optional("extra", said === undefined ? undefined : `the run said: ${said}`),
  };
  o.log(`bench --live: ${c.label.trim()}, ${c.backend}: ${r.wallS.toFixed(2)} s, ${(bytes / 1e6).toFixed(2)} MB`);
  return row;
}

/** Runs of each command in the 16-node row, whose median is the figure. */
const MANY_RUNS = 5;

/** The run of median wall time. */
function median(runs: Ran[]): Ran {
  return [...runs].sort((a, b) => a.wallS - b.wallS)[Math.floor(runs.length / 2)]!;
}

/** 16 small nodes, one Service with an endpoint on each: `svc/spread` (all its nodes) against `--node n01`. */
async function manyNodes(o: { cli: string; log: (s: string) => void }, n: number): Promise<LiveRow> {
  const { services: [svc], endpointSlices: [slice], pods, nodes } = spread(n);
  const rules = kubeProxyRules([svc!], [slice!], "10.244.0.0/16");
  o.log(`bench --live: starting ${n} small nodes…`);
  const fake = new Map<string, FakeNode>();
  let api: FakeApiServer | undefined;
  try {
    for (const x of nodes) fake.set(x.metadata.name, await startFakeNode(x.metadata.name, { rules: { text: rules, backend: "nft" }, proxyMode: "iptables" }));
    api = await startFakeApiServer({ objects: { services: [svc!], endpointSlices: [slice!], nodes, pods }, exec: { netnsFor: (name) => fake.get(name)?.netns.name } });
    const base = ["svc/spread", "-n", "default", "--kubeconfig", api.kubeconfig, "-o", "json"];
    await runCli(o.cli, [...base, "--node", "n01"]);
    const from = api.requests.length;
    const first = await runCli(o.cli, base);
    const execs = api.requests.slice(from).filter((r) => r.kind === "exec");
    const bytes = bytesSince(api, from);
    // runs of well under a second on a shared 2-core machine vary by ±10 %: the median of MANY_RUNS of each, alternated
    const ones: Ran[] = [];
    const alls: Ran[] = [first];
    for (let i = 0; i < MANY_RUNS; i++) {
      ones.push(await runCli(o.cli, [...base, "--node", "n01"]));
      if (i > 0) alls.push(await runCli(o.cli, base));
    }
    const one = median(ones);
    const all = median(alls);
    // the same nodes one at a time: what parallelism saves on this machine, whose cores run all 16 "nodes'" commands
    const seq = await runCli(o.cli, [...base, "--parallel", "1"]);
    const cores = availableParallelism();
    const problems = [...new Set([...ones, ...alls].flatMap(reportProblems))];
    if (execs.length !== n) problems.push(`${execs.length} execs for ${n} nodes`);
    return {
      label: `${n} nodes (one Service, default --parallel) vs 1 node`,
      wallS: all.wallS,
      apiBytes: bytes,
      reference: { label: "the same, --node n01", wallS: one.wallS },
      code: all.code,
      problems,
      target: "wall ≤ 2× one node",
      pass: all.wallS <= 2 * one.wallS && problems.length === 0,
      extra: `median of ${MANY_RUNS} runs each (16 nodes: ${alls.map((r) => r.wallS.toFixed(2)).join(", ")} s; one node: ${ones.map((r) => r.wallS.toFixed(2)).join(", ")} s); --parallel 1: ${seq.wallS.toFixed(2)} s, so the default --parallel runs ${(seq.wallS / all.wallS).toFixed(1)}x faster on ${cores} cores; ` +
        `each node's collection costs ${((seq.wallS - one.wallS) / (n - 1)).toFixed(2)} s here, all of it on this machine's cores (on a cluster each node runs its own)`,
    };
  } finally {
    await api?.close();
    for (const x of fake.values()) await x.stop();
  }
}
