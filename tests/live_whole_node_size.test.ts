// Whole-node captures through the fake API server, with each pod's image played by a userland
// (tests/helpers/userlands.ts); kube-proxy's own image has no gzip:
// - nft backend, a generated node of 2,400 Services (over DEFER_UNCOMPRESSED_RULES): by default the kube-proxy pod
//   stops before the save and a debug pod sends the tables compressed; `--via kube-proxy`, or RBAC without pod
//   creation, or a debug pod that cannot start, leave them to the kube-proxy pod, as text, and the run says so.
// - nftables mode, a generated node of 3,200 Services (4.9 MB of `nft list table ip kube-proxy`): even a
//   one-Service question lists kube-proxy's whole tables, so the kube-proxy pod stops after one `nft list map` and a
//   debug pod sends them compressed; `--via kube-proxy` sends them as text, and the run says so. The listing is nft's
//   text, not `nft -j`: measured there, the JSON listing needs over twice the memory and three times the bytes.
//   With pods held to memory limits by real cgroups (tests/helpers/memory_cgroup.ts), the kernel kills the listing:
//   in a debug pod, a second one with more memory collects the node; in the kube-proxy pod, a debug pod does; killed
//   everywhere, the node's error says so (exit 137), and nothing cut is analysed.
// - legacy backend, the bench's 10,000-Service node (its save takes ~1 s, the nft backend's ~30 s): netshoot has no
//   iptables-legacy, so the kube-proxy pod sends 18.4 MB as text (kube-proxy's large cluster mode: no per-endpoint
//   comments), and the run says so, with what compresses them.
//   `--via debug-pod` does, with an image that has iptables-legacy; with netshoot's the rules still come from the
//   kube-proxy pod, and the run says that too.
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { decodeBundle } from "../src/bundle/decode.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { DEFER_UNCOMPRESSED_NFT_ELEMENTS, DEFER_UNCOMPRESSED_RULES, UNCOMPRESSED_REPORT_BYTES } from "../src/kube/collect_node.ts";
import { DEFAULT_IMAGE } from "../src/kube/debug_pod.ts";
import { writeFixture } from "../bench/write_fixture.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { type FakeNode, startFakeNode } from "./helpers/fake_nodes.ts";
import { run } from "./helpers/live_cli.ts";
import { memoryCgroupsWork } from "./helpers/memory_cgroup.ts";
import { findTool, loadIptables, requireNetns } from "./helpers/netns.ts";
import { busyboxUserland, busyboxWith, kubeProxyImageUserland, netshootUserland } from "./helpers/userlands.ts";

const BIG = "bench/out/iptables-10000";
const NETNS = requireNetns(["dash", "busybox"]);
const READY = NETNS && existsSync(join(BIG, "capture.yaml"));

/** The bytes the API server sent for the execs among `requests`, by pod (kube-proxy or debug). */
function execBytes(api: FakeApiServer, from: number): { kubeProxy: number; debug: number } {
  const out = { kubeProxy: 0, debug: 0 };
  for (const x of api.requests.slice(from)) {
    if (x.kind !== "exec") continue;
    if (x.path.split("/")[6]!.startsWith("kube-proxy-")) out.kubeProxy += x.bytesOut ?? 0;
    else out.debug += x.bytesOut ?? 0;
  }
  return out;
}

/** A generated node of `services` Services in `mode` (bench/write_fixture.ts) in a fresh network namespace, not loaded. */
async function generatedNode(prefix: string, mode: "iptables" | "nftables", services: number) {
  const out = mkdtempSync(join(tmpdir(), prefix));
  const m = writeFixture(out, mode, { services });
  const bundle = readBundle(m.dir);
  const nodeName = bundle.nodes[0]!.name;
  const node = await startFakeNode(nodeName, { proxyMode: mode });
  return { out, bundle, objects: bundle.objects, nodeName, query: { name: m.query.name, namespace: m.query.namespace }, node };
}

/** The rules without what changes between two saves: the `#` lines' times, builtin chains' packet counters. */
const same = (save: string) => save.replace(/^#.*\n/gm, "").replace(/\[\d+:\d+\]$/gm, "[0:0]");

describe.runIf(NETNS)(`nft backend, ${DEFER_UNCOMPRESSED_RULES}+ Service rules: the kube-proxy pod defers whole tables to a debug pod that compresses them`, () => {
  const SERVICES = DEFER_UNCOMPRESSED_RULES + 100;
  const images = { kubeProxy: kubeProxyImageUserland()!, busybox: busyboxUserland()!, noIptables: busyboxWith([])! };
  /** The userland of the next debug pods. */
  let debugImage = images.busybox.dir;
  const servers: FakeApiServer[] = [];
  let node: FakeNode | undefined;
  let out = "";
  let objects: Bundle["objects"];
  let nodeName = "";
  let query = { name: "", namespace: "" };

  beforeAll(async () => {
    let bundle: Bundle;
    ({ out, bundle, objects, nodeName, query, node } = await generatedNode("netpath-defer-", "iptables", SERVICES));
    await loadIptables(node.netns, bundle.nodes[0]!.sections["iptables-save"]!.stdout, { backend: "nft", family: 4, noflush: false });
    await loadIptables(node.netns, "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n", { backend: "nft", family: 4 });
  }, 180_000);
  afterAll(async () => {
    for (const s of servers) await s.close();
    await node?.stop();
    for (const u of Object.values(images)) u?.remove();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  async function cluster(o: Parameters<typeof startFakeApiServer>[0] = {}): Promise<FakeApiServer> {
    const s = await startFakeApiServer({
      objects,
      ...o,
      exec: { netnsFor: (n) => (n === nodeName ? node!.netns.name : undefined), pathFor: (_ns, pod) => (pod.startsWith("kube-proxy-") ? images.kubeProxy.dir : debugImage) },
    });
    servers.push(s);
    return s;
  }

  async function capture(s: FakeApiServer, extra: string[] = []) {
    const file = join(s.dir, `capture-${Date.now()}.json`);
    const from = s.requests.length;
    const r = await run(["capture", `svc/${query.name}`, "-n", query.namespace, "--kubeconfig", s.kubeconfig, "--node", nodeName, "-o", file, ...extra]);
    expect(r.code, r.stderr).toBe(0);
    const b = decodeBundle(readFileSync(file, "utf8"), file);
    return { r, node: b.nodes[0]!, bytes: execBytes(s, from), pods: s.requests.slice(from).filter((x) => x.method === "POST" && x.path.endsWith("/pods")).length };
  }

  let text = "";

  it("--via kube-proxy: the whole tables as text from the kube-proxy pod, no pod created, and the run says how many MB and what compresses them", async () => {
    const s = await cluster();
    const c = await capture(s, ["--via", "kube-proxy"]);
    text = c.node.sections["iptables-save"]!.stdout;
    expect(text).toContain(":KUBE-SVC-");
    expect(c.pods).toBe(0);
    expect(c.bytes.kubeProxy).toBeGreaterThan(UNCOMPRESSED_REPORT_BYTES);
    expect(c.r.stderr).toMatch(new RegExp(`node ${nodeName}: \\d+\\.\\d MB of whole tables came through the API server uncompressed: the image of kube-proxy pod kube-proxy-${nodeName} has no gzip; a debug pod, whose image has gzip, sends them compressed: --via debug-pod`));
  }, 120_000);

  it("default (--via auto): the kube-proxy pod stops before the save (a few kB), a debug pod sends the same tables compressed; nothing to warn about", async () => {
    const s = await cluster();
    const c = await capture(s);
    expect(c.node.source).toMatchObject({ kind: "debug-pod", image: DEFAULT_IMAGE });
    expect(c.node.source!.detail).toMatch(new RegExp(`; why not the kube-proxy pod: its image has no gzip, and nat KUBE-SERVICES holds ${SERVICES + 1} rules \\(at least ${DEFER_UNCOMPRESSED_RULES}\\): whole tables would cross the API server as text$`));
    expect(same(c.node.sections["iptables-save"]!.stdout)).toBe(same(text));
    expect(c.bytes.kubeProxy).toBeLessThan(20_000);
    expect(c.bytes.debug).toBeLessThan(text.length / 4);
    expect(c.pods).toBe(1);
    expect(c.r.stderr).not.toContain("uncompressed");
    expect(s.debugPods()).toEqual([]);
    console.log(`[whole-node] ${SERVICES} Services, nft: kube-proxy pod ${c.bytes.kubeProxy} B (deferred), debug pod ${(c.bytes.debug / 1e6).toFixed(2)} MB; --via kube-proxy ${(text.length / 1e6).toFixed(2)} MB of text`);
  }, 120_000);

  it("RBAC forbids creating pods: nothing is deferred, the kube-proxy pod sends the tables as text and the run says so", async () => {
    const s = await cluster({ denials: [{ verb: "create", resource: "pods", namespace: "kube-system" }] });
    const c = await capture(s);
    expect(c.node.source).toMatchObject({ kind: "kube-proxy-pod" });
    expect(same(c.node.sections["iptables-save"]!.stdout)).toBe(same(text));
    expect(c.pods).toBe(0);
    expect(c.r.stderr).toContain("MB of whole tables came through the API server uncompressed");
  }, 120_000);

  it("the debug pod cannot start (its image cannot be pulled): the tables come from the kube-proxy pod after all, and the run says why", async () => {
    const s = await cluster({ pods: { badImages: [DEFAULT_IMAGE] } });
    const c = await capture(s);
    expect(c.node.source).toMatchObject({ kind: "kube-proxy-pod" });
    expect(c.node.error).toBeUndefined();
    expect(same(c.node.sections["iptables-save"]!.stdout)).toBe(same(text));
    expect(c.r.stderr).toMatch(new RegExp(`node ${nodeName}: a debug pod could not collect the whole tables compressed \\(.+\\); they come uncompressed from kube-proxy pod kube-proxy-${nodeName}`));
    expect(c.r.stderr).toContain("MB of whole tables came through the API server uncompressed");
    expect(s.debugPods()).toEqual([]);
  }, 120_000);

  it("a one-Service question travels compressed too where the image has gzip (a debug pod), as text where not (the kube-proxy pod); the same report", async () => {
    const s = await cluster();
    const ask = async (via: string) => {
      const from = s.requests.length;
      const r = await run([`svc/${query.name}`, "-n", query.namespace, "--kubeconfig", s.kubeconfig, "--node", nodeName, "-o", "json", "--via", via]);
      expect(r.code, r.stderr).toBe(0);
      const rep = JSON.parse(r.stdout) as { nodes: { source: string; ports: unknown; drift: unknown }[] };
      return { bytes: execBytes(s, from), node: rep.nodes[0]! };
    };
    const plain = await ask("kube-proxy");
    const packed = await ask("debug-pod");
    expect(plain.node.source).toMatch(/^kube-proxy-pod: /);
    expect(packed.node.source).toMatch(/^debug-pod: /);
    expect(packed.node.ports).toEqual(plain.node.ports);
    expect(packed.node.drift).toEqual(plain.node.drift);
    expect(packed.bytes.debug).toBeLessThan(plain.bytes.kubeProxy / 2);
    console.log(`[whole-node] one-Service question, ${SERVICES} Services: kube-proxy pod ${plain.bytes.kubeProxy} B as text, debug pod ${packed.bytes.debug} B compressed`);
  }, 120_000);

  it("the debug image has no iptables: the tables come from the kube-proxy pod after all, and the run says why", async () => {
    const s = await cluster();
    debugImage = images.noIptables.dir;
    try {
      const c = await capture(s);
      expect(c.node.source).toMatchObject({ kind: "kube-proxy-pod" });
      expect(same(c.node.sections["iptables-save"]!.stdout)).toBe(same(text));
      expect(c.r.stderr).toContain(`node ${nodeName}: a debug pod could not collect the whole tables compressed (its image ${DEFAULT_IMAGE} has no iptables-save); they come uncompressed from kube-proxy pod kube-proxy-${nodeName}`);
      expect(c.pods).toBe(1);
      expect(s.debugPods()).toEqual([]);
    } finally {
      debugImage = images.busybox.dir;
    }
  }, 120_000);
});

describe.runIf(NETNS)(`nftables mode, ${DEFER_UNCOMPRESSED_NFT_ELEMENTS}+ Services: a one-Service question's whole kube-proxy tables go to a debug pod that compresses them`, () => {
  const SERVICES = 3200;
  const images = { kubeProxy: kubeProxyImageUserland()!, busybox: busyboxUserland()! };
  let node: FakeNode | undefined;
  let api: FakeApiServer | undefined;
  let out = "";
  let objects: Bundle["objects"];
  let nodeName = "";
  let query = { name: "", namespace: "" };

  beforeAll(async () => {
    let bundle: Bundle;
    ({ out, bundle, objects, nodeName, query, node } = await generatedNode("netpath-defer-nft-", "nftables", SERVICES));
    // `nft -j -f` takes objects in order: tables, chains, sets and maps, elements, rules (the dump lists the verdict
    // maps, whose elements `goto` service chains, before the chains)
    const order: Record<string, number> = { metainfo: 0, table: 1, chain: 2, set: 3, map: 3, element: 4, rule: 5 };
    const doc = JSON.parse(bundle.nodes[0]!.sections["nft-json"]!.stdout) as { nftables: Record<string, unknown>[] };
    doc.nftables.sort((a, b) => (order[Object.keys(a)[0]!] ?? 9) - (order[Object.keys(b)[0]!] ?? 9));
    const file = join(out, "ruleset.json");
    writeFileSync(file, JSON.stringify(doc));
    const load = await node.netns.exec(["nft", "-j", "-f", file]);
    expect(load.code, load.stderr).toBe(0);
    api = await startFakeApiServer({
      objects: bundle.objects,
      exec: { netnsFor: (n) => (n === nodeName ? node!.netns.name : undefined), pathFor: (_ns, pod) => (pod.startsWith("kube-proxy-") ? images.kubeProxy.dir : images.busybox.dir) },
    });
  }, 180_000);
  afterAll(async () => {
    await api?.close();
    await node?.stop();
    for (const u of Object.values(images)) u?.remove();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  async function ask(extra: string[]) {
    const from = api!.requests.length;
    const r = await run([`svc/${query.name}`, "-n", query.namespace, "--kubeconfig", api!.kubeconfig, "--node", nodeName, "-o", "json", ...extra]);
    expect(r.code, r.stderr).toBe(0);
    const rep = JSON.parse(r.stdout) as { nodes: { source: string; proxyMode: { mode: string }; ports: unknown; drift: unknown }[] };
    return { r, node: rep.nodes[0]!, bytes: execBytes(api!, from), pods: api!.requests.slice(from).filter((x) => x.method === "POST" && x.path.endsWith("/pods")).length };
  }

  let plain: Awaited<ReturnType<typeof ask>> | undefined;

  it("--via kube-proxy: the whole tables as text, and the run says why one Service costs that much", async () => {
    plain = await ask(["--via", "kube-proxy"]);
    expect(plain.node.proxyMode.mode).toBe("nftables");
    expect(plain.node.source).toMatch(/^kube-proxy-pod: /);
    expect(plain.pods).toBe(0);
    expect(plain.bytes.kubeProxy).toBeGreaterThan(UNCOMPRESSED_REPORT_BYTES);
    expect(plain.r.stderr).toMatch(
      new RegExp(`node ${nodeName}: \\d+\\.\\d MB of node state for one Service \\(nftables mode lists kube-proxy's whole nftables tables, not yet one Service's part\\) came through the API server uncompressed: the image of kube-proxy pod kube-proxy-${nodeName} has no gzip; a debug pod, whose image has gzip, sends them compressed: --via debug-pod`),
    );
  }, 120_000);

  it("the node lists text, not nft -j: the JSON listing of the same table needs over twice the memory and three times the bytes", async () => {
    const time = findTool("time") ?? "/usr/bin/time";
    const peak = async (argv: string[]) => {
      const r = await node!.netns.exec([time, "-f", "%M", ...argv], { timeoutMs: 120_000 });
      expect(r.code, r.stderr).toBe(0);
      return { kb: Number(r.stderr.trim().split("\n").at(-1)), bytes: Buffer.byteLength(r.stdout) };
    };
    const text = await peak(["nft", "list", "table", "ip", "kube-proxy"]);
    const json = await peak(["nft", "-j", "list", "table", "ip", "kube-proxy"]);
    expect(json.kb).toBeGreaterThan(2 * text.kb);
    expect(json.bytes).toBeGreaterThan(3 * text.bytes);
    console.log(`[whole-node] nftables mode, ${SERVICES} Services: nft list table ${(text.bytes / 1e6).toFixed(2)} MB, peak RSS ${(text.kb / 1024).toFixed(0)} MiB; nft -j list table ${(json.bytes / 1e6).toFixed(2)} MB, ${(json.kb / 1024).toFixed(0)} MiB (the debug pod's limit: 512Mi)`);
  }, 240_000);

  it("default: the kube-proxy pod stops after one nft list map, a debug pod sends the tables compressed; the same report", async () => {
    const c = await ask([]);
    expect(c.node.source).toMatch(
      new RegExp(`^debug-pod: .*; why not the kube-proxy pod: its image has no gzip, and map service-ips lists about \\d+ elements \\(at least ${DEFER_UNCOMPRESSED_NFT_ELEMENTS}\\): kube-proxy's whole nftables tables would cross the API server as text$`),
    );
    expect(c.pods).toBe(1);
    expect(c.bytes.kubeProxy).toBeLessThan(20_000);
    expect(c.bytes.debug).toBeLessThan(plain!.bytes.kubeProxy / 4);
    expect(c.r.stderr).not.toContain("uncompressed");
    expect(c.node.ports).toEqual(plain!.node.ports);
    expect(c.node.drift).toEqual(plain!.node.drift);
    expect(api!.debugPods()).toEqual([]);
    console.log(`[whole-node] nftables mode, ${SERVICES} Services, one Service: kube-proxy pod ${(plain!.bytes.kubeProxy / 1e6).toFixed(2)} MB as text (--via kube-proxy); default ${c.bytes.kubeProxy} B there (deferred) + debug pod ${(c.bytes.debug / 1e6).toFixed(2)} MB`);
  }, 120_000);

  for (const c of [
    { elements: 12_000, limit: "674Mi", why: "nft's listing of that map's table needs more than the default 512Mi", what: "the memory nft's listing of such a table needs (674Mi, not 512Mi)" },
    { elements: 170_000, limit: "8192Mi", why: "nft's listing of that map's table needs about 8697Mi; kubectl-netpath asks for at most 8192Mi", what: "at most 8192Mi, with how much the listing needs" },
  ]) {
    it(`a map of ${c.elements.toLocaleString("en-US")} elements: the debug pod gets ${c.what}, and says so`, async () => {
      // kube-proxy's image, with an nft that answers `list map ip kube-proxy service-ips` as such a node does
      // (loading that many takes minutes) and runs the real nft for everything else
      const kp = kubeProxyImageUserland()!;
      const realNft = findTool("nft")!;
      rmSync(join(kp.dir, "nft"));
      writeFileSync(
        join(kp.dir, "nft"),
        `#!${findTool("dash")}\nif [ "$*" = "list map ip kube-proxy service-ips" ]; then i=0; while [ $i -lt ${c.elements} ]; do echo "x"; i=$((i + 1)); done; exit 0; fi\nexec ${realNft} "$@"\n`,
        { mode: 0o755 },
      );
      const big = await startFakeApiServer({
        objects,
        exec: { netnsFor: (n) => (n === nodeName ? node!.netns.name : undefined), pathFor: (_ns, pod) => (pod.startsWith("kube-proxy-") ? kp.dir : images.busybox.dir) },
      });
      try {
        const r = await run([`svc/${query.name}`, "-n", query.namespace, "--kubeconfig", big.kubeconfig, "--node", nodeName, "-o", "json"]);
        expect(r.code, r.stderr).toBe(0);
        const created = big.requests.filter((x) => x.method === "POST" && x.path.endsWith("/pods"));
        expect(created).toHaveLength(1);
        const pod = JSON.parse(created[0]!.body!) as { spec: { containers: { resources: unknown }[] } };
        expect(pod.spec.containers[0]!.resources).toEqual({ requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "1", memory: c.limit } });
        const rep = JSON.parse(r.stdout) as { nodes: { source: string; proxyMode: { mode: string } }[] };
        expect(rep.nodes[0]!.proxyMode.mode).toBe("nftables");
        expect(rep.nodes[0]!.source).toContain(`map service-ips lists about ${c.elements} elements`);
        expect(rep.nodes[0]!.source).toContain(`memory limit ${c.limit} (${c.why})`);
        expect(big.debugPods()).toEqual([]);
      } finally {
        await big.close();
        kp.remove();
      }
    }, 120_000);
  }

  /**
   * A fake API server whose pods are held to memory limits by cgroups: `limitFor` maps a container's memory limit
   * (MiB) to the bytes its exec may use, so a node is played where nft's listing needs more than a limit.
   */
  async function limited(limitFor: (mi: number | undefined, pod: string) => number | undefined, kubeProxyImage = images.kubeProxy.dir) {
    return await startFakeApiServer({
      objects,
      exec: {
        netnsFor: (n) => (n === nodeName ? node!.netns.name : undefined),
        pathFor: (_ns, pod) => (pod.startsWith("kube-proxy-") ? kubeProxyImage : images.busybox.dir),
        memoryBytesFor: (mi, _ns, pod) => limitFor(mi, pod),
      },
    });
  }
  const MiB = 1024 * 1024;
  /** The memory limits of the debug pods created since request `from`, in order. */
  const podLimits = (s: FakeApiServer, from = 0) =>
    s.requests.slice(from).filter((x) => x.method === "POST" && x.path.endsWith("/pods")).map((x) => (JSON.parse(x.body!) as { spec: { containers: { resources: { limits: { memory: string } } }[] } }).spec.containers[0]!.resources.limits.memory);

  it.runIf(memoryCgroupsWork())("a listing killed at the debug pod's memory limit (exit 137): a second debug pod with twice the memory collects the node, and the report says so", async () => {
    // the kernel kills nft's listing (136 MiB peak at 3,200 Services) in a pod limited to 512Mi, played by 48 MiB here
    const s = await limited((mi) => (mi === undefined ? undefined : mi <= 512 ? 48 * MiB : mi * MiB));
    try {
      const r = await run([`svc/${query.name}`, "-n", query.namespace, "--kubeconfig", s.kubeconfig, "--node", nodeName, "-o", "json", "--via", "debug-pod"]);
      expect(r.code, r.stderr).toBe(0);
      expect(podLimits(s)).toEqual(["512Mi", "1024Mi"]);
      const rep = JSON.parse(r.stdout) as { nodes: { source: string; proxyMode: { mode: string }; ports: unknown; drift: unknown; notes: string[] }[] };
      const n = rep.nodes[0]!;
      expect(n.source).toMatch(/memory limit 1024Mi \(the first debug pod's nft-text was killed at 512Mi, exit 137; map service-ips lists about 320\d elements\)/);
      expect(n.proxyMode.mode).toBe("nftables");
      expect(n.ports).toEqual(plain!.node.ports);
      expect(n.drift).toEqual(plain!.node.drift);
      expect(r.stderr).not.toContain("exit 137");
      expect(s.debugPods()).toEqual([]);
    } finally {
      await s.close();
    }
  }, 180_000);

  it.runIf(memoryCgroupsWork())("killed in the kube-proxy pod (its container's memory limit): a debug pod collects the node, and says why; --via kube-proxy reports the kill", async () => {
    // kube-proxy's image with gzip, so that its pod lists the table itself (no deferral), in a container held to 48 MiB
    const kp = kubeProxyImageUserland()!;
    symlinkSync(findTool("gzip")!, join(kp.dir, "gzip"));
    const s = await limited((mi, pod) => (pod.startsWith("kube-proxy-") ? 48 * MiB : mi === undefined ? undefined : mi * MiB), kp.dir);
    try {
      const r = await run([`svc/${query.name}`, "-n", query.namespace, "--kubeconfig", s.kubeconfig, "--node", nodeName, "-o", "json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(podLimits(s)).toEqual(["512Mi"]);
      const n = (JSON.parse(r.stdout) as { nodes: { source: string; ports: unknown; drift: unknown }[] }).nodes[0]!;
      expect(n.source).toMatch(/^debug-pod: .*; why not the kube-proxy pod: its nft-text was killed there \(exit 137: most often the kube-proxy container's memory limit\); map service-ips lists about 320\d elements$/);
      expect(n.ports).toEqual(plain!.node.ports);
      expect(n.drift).toEqual(plain!.node.drift);
      const only = await run([`svc/${query.name}`, "-n", query.namespace, "--kubeconfig", s.kubeconfig, "--node", nodeName, "-o", "json", "--via", "kube-proxy"]);
      expect(only.code).toBe(1);
      expect(only.stderr).toMatch(new RegExp(`^error: node ${nodeName}: nft list table ip kube-proxy; nft list table ip6 kube-proxy failed \\(exit 137: killed \\(SIGKILL\\)`, "m"));
      expect(s.debugPods()).toEqual([]);
    } finally {
      await s.close();
      kp.remove();
    }
  }, 180_000);

  it.runIf(memoryCgroupsWork())("killed at the most kubectl-netpath asks for (8192Mi, 170,000 elements): no second pod; the run says how much the listing needs and what to do", async () => {
    // both images with an nft whose `list map ip kube-proxy service-ips` prints 170,000 lines; the debug pod's
    // listing is killed (48 MiB play its 8192Mi)
    const shim = (dir: string) => {
      rmSync(join(dir, "nft"), { force: true });
      writeFileSync(
        join(dir, "nft"),
        `#!${findTool("dash")}\nif [ "$*" = "list map ip kube-proxy service-ips" ]; then i=0; while [ $i -lt 170000 ]; do echo "x"; i=$((i + 1)); done; exit 0; fi\nexec ${findTool("nft")} "$@"\n`,
        { mode: 0o755 },
      );
    };
    const kp = kubeProxyImageUserland()!;
    const debug = busyboxUserland()!;
    shim(kp.dir);
    shim(debug.dir);
    const s = await startFakeApiServer({
      objects,
      exec: {
        netnsFor: (n) => (n === nodeName ? node!.netns.name : undefined),
        pathFor: (_ns, pod) => (pod.startsWith("kube-proxy-") ? kp.dir : debug.dir),
        memoryBytesFor: (mi) => (mi === undefined ? undefined : 48 * MiB),
      },
    });
    try {
      const r = await run([`svc/${query.name}`, "-n", query.namespace, "--kubeconfig", s.kubeconfig, "--node", nodeName, "-o", "json"]);
      expect(r.code).toBe(1);
      expect(podLimits(s)).toEqual(["8192Mi"]);
      expect(r.stderr).toContain(
        `warning: node ${nodeName}: the debug pod's nft-text was killed at its memory limit of 8192Mi (exit 137); map service-ips lists about 170000 elements; it needs about 8697Mi, beyond the 8192Mi kubectl-netpath asks for at most: collect with --via kube-proxy`,
      );
      expect(s.debugPods()).toEqual([]);
    } finally {
      await s.close();
      kp.remove();
      debug.remove();
    }
  }, 180_000);

  it.runIf(memoryCgroupsWork())("killed in the second debug pod too: the node's nftables state is reported missing with the reason, not analysed from a cut listing", async () => {
    const s = await limited((mi) => (mi === undefined ? undefined : 48 * MiB));
    try {
      const r = await run([`svc/${query.name}`, "-n", query.namespace, "--kubeconfig", s.kubeconfig, "--node", nodeName, "-o", "json", "--via", "debug-pod"]);
      expect(podLimits(s)).toEqual(["512Mi", "1024Mi"]);
      expect(r.stderr).toContain(`node ${nodeName}: the debug pod's nft-text was killed at 1024Mi too (exit 137): collect with --via kube-proxy, or on the node itself`);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        new RegExp(`^error: node ${nodeName}: nft list table ip kube-proxy; nft list table ip6 kube-proxy failed \\(exit 137: killed \\(SIGKILL\\), most often by the out-of-memory killer at the memory limit of the container it ran in\\): nft list table ip kube-proxy: killed by signal 9; map service-ips lists about 320\\d elements; see the reason and retry that node \\(--node\\)$`, "m"),
      );
      const rep = JSON.parse(r.stdout) as { nodes: { ports: unknown[] }[] };
      expect(rep.nodes[0]!.ports).toEqual([]);
      expect(s.debugPods()).toEqual([]);
    } finally {
      await s.close();
    }
  }, 180_000);
});

describe.runIf(READY)("whole tables of a 10,000-Service node: compressed when the image can, and said when not", () => {
  let node: FakeNode | undefined;
  let api: FakeApiServer | undefined;
  const images = { kubeProxy: kubeProxyImageUserland()!, busybox: busyboxUserland()!, netshoot: netshootUserland()! };
  /** The userland the next debug pod runs with. */
  let debugImage = images.busybox.dir;
  let query: { name: string; namespace: string };
  let nodeName: string;

  beforeAll(async () => {
    const bundle = readBundle(BIG, { maxBytes: 2 ** 32 });
    const capture = bundle.nodes[0]!;
    nodeName = capture.name;
    const svc = bundle.objects.services[5000]!;
    query = { name: svc.metadata.name, namespace: svc.metadata.namespace! };
    node = await startFakeNode(nodeName, { proxyMode: "iptables" });
    await loadIptables(node.netns, capture.sections["iptables-save"]!.stdout, { backend: "legacy", family: 4, noflush: false });
    api = await startFakeApiServer({
      objects: bundle.objects,
      exec: {
        netnsFor: (n) => (n === nodeName ? node!.netns.name : undefined),
        pathFor: (_ns, pod) => (pod.startsWith("kube-proxy-") ? images.kubeProxy.dir : debugImage),
      },
    });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await node?.stop();
    for (const u of Object.values(images)) u?.remove();
  });

  /** Captures the node; returns the run, the bundle, and the bytes the API server sent for the exec(s). */
  async function capture(extra: string[]): Promise<{ r: Awaited<ReturnType<typeof run>>; bundle: Bundle; execBytes: number }> {
    const file = join(api!.dir, `capture-${Date.now()}.json`);
    const from = api!.requests.length;
    const r = await run(["capture", `svc/${query.name}`, "-n", query.namespace, "--kubeconfig", api!.kubeconfig, "--node", nodeName, "-o", file, ...extra]);
    expect(r.code, r.stderr).toBe(0);
    const execBytes = api!.requests.slice(from).filter((x) => x.kind === "exec").reduce((n, x) => n + (x.bytesOut ?? 0), 0);
    return { r, bundle: decodeBundle(readFileSync(file, "utf8"), file), execBytes };
  }

  let rules = "";

  it("the kube-proxy pod (no gzip in its image): 18.4 MB as text, and the run says so, with what compresses it", async () => {
    const { r, bundle, execBytes } = await capture([]);
    const n = bundle.nodes[0]!;
    rules = n.sections["iptables-save"]!.stdout;
    expect(rules.length).toBeGreaterThan(18e6);
    expect(execBytes).toBeGreaterThan(rules.length);
    const mb = /(\d+\.\d) MB of whole tables/.exec(r.stderr)?.[1];
    expect(Number(mb)).toBeCloseTo(execBytes / 1e6, 0);
    expect(r.stderr).toContain(
      `node ${nodeName}: ${mb} MB of whole tables came through the API server uncompressed: the image of kube-proxy pod kube-proxy-${nodeName} has no gzip; ` +
        "a debug pod sends them compressed: --via debug-pod --profile sysadmin (this node's legacy backend needs the host's iptables-legacy-save, run through chroot /host: the default debug image has no iptables-legacy)",
    );
    expect(n.source).toMatchObject({ kind: "kube-proxy-pod" });
    expect(n.source!.detail).toContain(`sent uncompressed (${mb} MB: the image has no gzip)`);
    expect(api!.debugPods()).toEqual([]);
    console.log(`[whole-node] 10k legacy, kube-proxy image: ${(execBytes / 1e6).toFixed(1)} MB through the API server`);
  }, 120_000);

  it("--via debug-pod with an image that has gzip and iptables-legacy: the same rules, compressed to ≤ 6 MB, nothing to say", async () => {
    debugImage = images.busybox.dir;
    const { r, bundle, execBytes } = await capture(["--via", "debug-pod"]);
    const n = bundle.nodes[0]!;
    expect(n.source).toMatchObject({ kind: "debug-pod" });
    expect(same(n.sections["iptables-save"]!.stdout)).toBe(same(rules));
    expect(execBytes).toBeLessThan(6e6);
    expect(r.stderr).not.toContain("uncompressed");
    expect(n.source!.detail).not.toContain("uncompressed");
    expect(api!.debugPods()).toEqual([]);
    console.log(`[whole-node] 10k legacy, --via debug-pod: ${(execBytes / 1e6).toFixed(1)} MB through the API server`);
  }, 120_000);

  it("--via debug-pod with netshoot's userland (no iptables-legacy): the rules come from the kube-proxy pod, as text, and the run says so", async () => {
    debugImage = images.netshoot.dir;
    const { r, bundle, execBytes } = await capture(["--via", "debug-pod"]);
    const n = bundle.nodes[0]!;
    expect(same(n.sections["iptables-save"]!.stdout)).toBe(same(rules));
    expect(n.source!.detail).toMatch(/iptables-save(, [a-z0-9-]+)* from kube-proxy pod kube-proxy-\S+ \(not in the debug image; sent uncompressed \(\d+\.\d MB: the image has no gzip\)\)/);
    expect(r.stderr).toMatch(/MB of whole tables came through the API server uncompressed: the image of kube-proxy pod kube-proxy-\S+ has no gzip; a debug pod sends them compressed: --via debug-pod --profile sysadmin/);
    expect(execBytes).toBeGreaterThan(rules.length);
    expect(api!.debugPods()).toEqual([]);
  }, 120_000);

  it("a one-Service question in an image with neither awk nor grep lists whole tables: the run says what came as text and why", async () => {
    const bare = kubeProxyImageUserland()!;
    rmSync(join(bare.dir, "grep"));
    const s = await startFakeApiServer({
      objects: (await import("../src/io/read_bundle.ts")).readBundle(BIG, { maxBytes: 2 ** 32 }).objects,
      exec: { netnsFor: (n) => (n === nodeName ? node!.netns.name : undefined), pathFor: () => bare.dir },
    });
    try {
      const r = await run([`svc/${query.name}`, "-n", query.namespace, "--kubeconfig", s.kubeconfig, "--node", nodeName, "-o", "json", "--via", "kube-proxy"]);
      expect(r.code, r.stderr + r.stdout.slice(0, 3000)).toBe(0);
      // the legacy backend is found without grep too (kubelet's chains read with sh builtins)
      expect((JSON.parse(r.stdout) as { nodes: { source: string }[] }).nodes[0]!.source).toContain("iptables legacy backend (kubelet chain found by iptables-legacy-save -t mangle)");
      expect(r.stderr).toMatch(
        new RegExp(`node ${nodeName}: \\d+\\.\\d MB of node state for one Service \\(whole tables: the image has neither awk nor grep to pick the Service's rules\\) came through the API server uncompressed: the image of kube-proxy pod kube-proxy-${nodeName} has no gzip`),
      );
    } finally {
      await s.close();
      bare.remove();
    }
  }, 120_000);

  it("a targeted question moves a few kB and is never reported as uncompressed", async () => {
    const from = api!.requests.length;
    const r = await run([`svc/${query.name}`, "-n", query.namespace, "--kubeconfig", api!.kubeconfig, "--node", nodeName, "-o", "json"]);
    expect(r.code, r.stderr).toBe(0);
    const execBytes = api!.requests.slice(from).filter((x) => x.kind === "exec").reduce((n, x) => n + (x.bytesOut ?? 0), 0);
    expect(execBytes).toBeLessThan(UNCOMPRESSED_REPORT_BYTES);
    expect(r.stderr).not.toContain("uncompressed");
  }, 120_000);
});
