// A whole-node capture on the bench's 10,000-Service node (legacy backend: its save takes ~1 s, the nft backend's
// ~30 s), through the fake API server, with each pod's image played by a userland (tests/helpers/userlands.ts):
// kube-proxy's own image has no gzip, so whole tables cross the API server as text (26.6 MB); the run says so, with
// what sends them compressed. `--via debug-pod` does, with an image that has iptables-legacy; with netshoot's (no
// iptables-legacy) the rules still come from the kube-proxy pod, and the run says that too.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { decodeBundle } from "../src/bundle/decode.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { UNCOMPRESSED_REPORT_BYTES } from "../src/kube/collect_node.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { type FakeNode, startFakeNode } from "./helpers/fake_nodes.ts";
import { run } from "./helpers/live_cli.ts";
import { loadIptables, requireNetns } from "./helpers/netns.ts";
import { busyboxUserland, kubeProxyImageUserland, netshootUserland } from "./helpers/userlands.ts";

const BIG = "bench/out/iptables-10000";
const READY = requireNetns(["dash", "busybox"]) && existsSync(join(BIG, "capture.yaml"));

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
  /** The rules without what changes between two saves: the `#` lines' times, builtin chains' packet counters. */
  const same = (save: string) => save.replace(/^#.*\n/gm, "").replace(/\[\d+:\d+\]$/gm, "[0:0]");

  it("the kube-proxy pod (no gzip in its image): 26.6 MB as text, and the run says so, with what compresses it", async () => {
    const { r, bundle, execBytes } = await capture([]);
    const n = bundle.nodes[0]!;
    rules = n.sections["iptables-save"]!.stdout;
    expect(rules.length).toBeGreaterThan(26e6);
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
    expect(execBytes).toBeGreaterThan(26e6);
    expect(api!.debugPods()).toEqual([]);
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
