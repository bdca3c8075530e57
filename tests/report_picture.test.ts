// The path picture (issue 17): the packet tree (default text of --source/--dest), and -o mermaid / -o dot for one
// packet and for svc/NAME, on every example bundle: golden files (UPDATE_GOLDEN=1 to regenerate, then read the diff),
// Mermaid checked by Mermaid's own parser (mermaid + jsdom, test-only), DOT laid out by Graphviz (@viz-js/viz, wasm).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/program.ts";
import { renderDot } from "../src/report/dot.ts";
import { renderMermaid } from "../src/report/mermaid.ts";
import type { PathGraph } from "../src/report/path_graph.ts";

const GOLDEN = "tests/fixtures/golden-picture";

async function run(args: string[], columns?: number): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: process.cwd(), ...(columns ? { columns } : {}) };
  const code = await runCli(args, io);
  return { code, out, err };
}

const PACKETS: { name: string; args: string[] }[] = [
  { name: "iptables-lab-kube-dns", args: ["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab", "--source", "10.244.1.7", "--dest", "10.96.0.10:53/udp"] },
  { name: "lb-legacy-testsvc-denied", args: ["svc/testsvc", "--from", "examples/lb-legacy", "--source", "203.0.113.9", "--dest", "172.6.6.6:443/tcp"] },
  { name: "ipvs-lab-kube-dns", args: ["svc/kube-dns", "-n", "kube-system", "--from", "examples/ipvs-lab", "--source", "10.244.1.7", "--dest", "10.0.0.10:53/udp"] },
  { name: "nftables-lab-svc4", args: ["svc/svc4", "-n", "ns4", "--from", "examples/nftables-lab", "--source", "10.0.0.2", "--dest", "172.30.0.44:80/tcp"] },
  // --from-pod without --dest: one packet per ServicePort (53/udp, 53/tcp, 9153/tcp), each answered on the pod's node
  { name: "iptables-lab-kube-dns-from-pod", args: ["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab", "--from-pod", "coredns-78fcd69978-cvpx2"] },
];
const SERVICES: { name: string; args: string[] }[] = [
  { name: "iptables-lab-kube-dns", args: ["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab"] },
  { name: "lb-legacy-testsvc", args: ["svc/testsvc", "--from", "examples/lb-legacy"] },
  { name: "ipvs-lab-kube-dns", args: ["svc/kube-dns", "-n", "kube-system", "--from", "examples/ipvs-lab"] },
  { name: "nftables-lab-svc4", args: ["svc/svc4", "-n", "ns4", "--from", "examples/nftables-lab"] },
];

function golden(file: string, text: string): void {
  const path = join(GOLDEN, file);
  if (process.env.UPDATE_GOLDEN === "1" || (!existsSync(path) && process.env.CI !== "true")) {
    mkdirSync(GOLDEN, { recursive: true });
    writeFileSync(path, text);
  }
  expect(text).toBe(readFileSync(path, "utf8"));
}

/** A picture whose title, box, edge and cluster labels are all `text` (data from the cluster, as a renderer gets it). */
function hostileGraph(text: string): PathGraph {
  return {
    title: text,
    nodes: [{ id: "n1", label: text, kind: "rule" }, { id: "n2", label: "ok", kind: "endpoint" }],
    edges: [{ from: "n1", to: "n2", label: text }],
    clusters: [{ id: "c1", label: text, nodes: ["n1"], clusters: [] }],
  };
}

let parseMermaid: (text: string) => Promise<unknown>;
let layoutDot: (text: string) => { status: string; errors: { level?: string; message: string }[] };
beforeAll(async () => {
  const { JSDOM } = await import("jsdom");
  const dom = new JSDOM("<!doctype html><html><body></body></html>");
  Object.assign(globalThis, { window: dom.window, document: dom.window.document });
  const mermaid = (await import("mermaid")).default;
  parseMermaid = (t) => mermaid.parse(t);
  const viz = await (await import("@viz-js/viz")).instance();
  layoutDot = (t) => viz.render(t, { format: "svg" }) as ReturnType<typeof layoutDot>;
}, 60_000);

describe("the packet tree is the default text of a packet question", () => {
  it.each(PACKETS)("$name", async ({ name, args }) => {
    const r = await run(args);
    expect(r.code, r.err).toBe(0);
    golden(`${name}.packet.txt`, r.out);
    const widest = Math.max(...r.out.split("\n").filter((l) => !/^\s*(masquerade|caveat):/.test(l)).map((l) => l.length));
    expect(widest, "tree lines fit 80 columns").toBeLessThanOrEqual(80);
    expect(r.out).not.toContain("Endpoints:"); // not the whole report
  });
  it("-o wide prints the whole report, then the tree with full rule text", async () => {
    const r = await run([...PACKETS[0]!.args, "-o", "wide"]);
    expect(r.out).toContain("Endpoints:");
    expect(r.out).toContain("-j DNAT --to-destination 10.244.0.5:53");
    expect(r.out.indexOf("Endpoints:")).toBeLessThan(r.out.indexOf("packet 10.244.1.7"));
  });
  it("the tree follows the terminal width", async () => {
    const r = await run(PACKETS[0]!.args, 120);
    expect(Math.max(...r.out.split("\n").filter((l) => !/^\s*(masquerade|caveat):/.test(l)).map((l) => l.length))).toBeGreaterThan(80);
  });
});

describe("-o mermaid and -o dot", () => {
  const all = [...PACKETS.map((p) => ({ ...p, name: `${p.name}.packet` })), ...SERVICES.map((s) => ({ ...s, name: `${s.name}.svc` }))];
  it.each(all)("$name: Mermaid parses", async ({ name, args }) => {
    const r = await run([...args, "-o", "mermaid"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^---\ntitle: .*\n---\nflowchart LR\n/);
    await expect(parseMermaid(r.out)).resolves.toBeTruthy();
    golden(`${name}.mmd`, r.out);
  });
  it.each(all)("$name: Graphviz lays the DOT out without error", async ({ name, args }) => {
    const r = await run([...args, "-o", "dot"]);
    expect(r.code, r.err).toBe(0);
    const res = layoutDot(r.out);
    expect(res.errors.filter((e) => e.level === "error"), JSON.stringify(res.errors)).toEqual([]);
    expect(res.status).toBe("success");
    golden(`${name}.dot`, r.out);
  });
  it("labels from the cluster cannot break out of their quotes (Mermaid and DOT)", async () => {
    const hostile = 'a"] --> x["pwn\\" ]; n9 -> n1 [label="<b>#quot;&`\u001b[31m\nnext';
    const g = hostileGraph(hostile);
    const m = renderMermaid(g);
    await expect(parseMermaid(m)).resolves.toBeTruthy();
    expect(m).not.toContain("\u001b");
    const d = renderDot(g);
    expect(layoutDot(d).status).toBe("success");
    expect(d.split("\n").filter((l) => /^\s*n\d+ \[label=/.test(l))).toHaveLength(2);
    expect(d).not.toContain("\u001b");
  });
  it("no label or title can set Mermaid's configuration: %%{init}%% is written as entity codes", async () => {
    for (const hostile of ["zone %%{init: {'theme':'dark','flowchart':{'htmlLabels':false}}}%% a", "unclosed %%{init: {'theme':'dark'"]) {
      const g = hostileGraph(hostile);
      const m = renderMermaid(g);
      expect(m).not.toContain("%%");
      const parsed = (await parseMermaid(m)) as { config?: Record<string, unknown> };
      expect(parsed.config ?? {}, hostile).not.toHaveProperty("theme");
      expect(parsed.config ?? {}, hostile).not.toHaveProperty("flowchart");
    }
  });
  it("--why-pending has no picture: a usage error", async () => {
    const r = await run(["pod/busybox", "--why-pending", "--from", "examples/azure-zones", "-o", "mermaid"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("-o mermaid draws a Service's path");
  });
});
