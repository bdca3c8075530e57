// Scale of the live path: the API request count of a full run (with node collection) on a 5,000-node /
// 50,000-pod cluster equals that on a 3-node cluster; 50 nodes are collected concurrently, at most --parallel at a
// time (not one after the other).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import type { ServiceReport } from "../src/service/report.ts";
import { type FakeApiServer, type RecordedRequest, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { type FakeNode, startFakeNode } from "./helpers/fake_nodes.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";
import { run } from "./helpers/live_cli.ts";
import { spread } from "./helpers/spread_cluster.ts";
import { requireNetns } from "./helpers/netns.ts";

const web = readBundle("tests/fixtures/live/web");
const N = 50;


const line = (r: RecordedRequest) => `${r.method} ${r.path.replace(/kubectl-netpath-[a-z0-9-]+/, "DEBUG")}`;

describe.runIf(requireNetns(["nc", "curl", "ss"]))("live path at scale", () => {
  const nodes = new Map<string, FakeNode>();
  const servers: FakeApiServer[] = [];
  const objs = spread(N);
  beforeAll(async () => {
    const spreadRules = kubeProxyRules(objs.services, objs.endpointSlices, "10.244.0.0/16");
    const webRules = kubeProxyRules(web.objects.services, web.objects.endpointSlices, "10.244.0.0/16");
    for (const n of objs.nodes) nodes.set(n.metadata.name, await startFakeNode(n.metadata.name, { rules: { text: spreadRules, backend: "nft" } }));
    for (const n of ["k8s-guide-worker", "k8s-guide-worker2"]) nodes.set(n, await startFakeNode(n, { rules: { text: webRules, backend: "nft" }, proxyMode: "iptables" }));
  }, 180_000);
  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const n of nodes.values()) await n.stop();
  });
  const exec = { netnsFor: (n: string) => nodes.get(n)?.netns.name };

  it("svc/web with node collection: the same requests on 5,000 nodes / 50,000 pods as on 3 nodes", async () => {
    const small = await startFakeApiServer({ objects: web.objects, exec });
    const big = await startFakeApiServer({ objects: web.objects, synthetic: { nodes: 5000, podsPerNode: 10 }, exec });
    servers.push(small, big);
    const a = await run(["svc/web", "-n", "default", "--kubeconfig", small.kubeconfig]);
    const t = Date.now();
    const b = await run(["svc/web", "-n", "default", "--kubeconfig", big.kubeconfig]);
    const ms = Date.now() - t;
    expect(a.code).toBe(0);
    expect(b).toEqual(a);
    const sorted = (s: FakeApiServer) => s.requests.map(line).sort();
    expect(sorted(big)).toEqual(sorted(small));
    // 9 API reads (issue 15: the kube-proxy DaemonSet, and without one kube-system's DaemonSets by name) + 6
    // SelfSubjectAccessReviews (get/create pods/exec, create/watch/get/delete pods) + per node (2): list its kube-system
    // pods, one exec
    expect(big.requests.length).toBe(19);
    console.info(`[live-scale] svc/web with node collection on 5,000 nodes / 50,000 pods: ${big.requests.length} API requests (same as on 3 nodes), ${ms} ms`);
  });

  it(`${N} nodes in parallel vs one node: wall time`, async () => {
    const s = await startFakeApiServer({ objects: objs, exec });
    servers.push(s);
    const time = async (argv: string[]) => {
      const t = Date.now();
      const before = s.requests.length;
      const r = await run(["svc/spread", "-n", "default", "--kubeconfig", s.kubeconfig, "-o", "json", ...argv]);
      expect(r.code, r.stderr).toBe(0);
      // the most execs in flight at once, from the fake API server's record of each exec's start and end
      const execs = s.requests.slice(before).filter((x) => x.kind === "exec");
      const edges = execs.flatMap((x) => [[x.at, 1], [x.endedAt ?? Infinity, -1]] as [number, number][]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      let inFlight = 0;
      let most = 0;
      for (const [, d] of edges) most = Math.max(most, inFlight += d);
      return { ms: Date.now() - t, report: JSON.parse(r.stdout) as ServiceReport, execs: execs.length, most };
    };
    await time(["--node", "n01"]); // warm-up (module loading, TLS session)
    // 50 nodes at once put more than 10 listeners on the run's abort signal: Node must not warn of a leak
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    const one = await time(["--node", "n01"]);
    const all8 = await time([]);
    const all50 = await time(["--parallel", String(N)]);
    const seq = await time(["--parallel", "1"]);
    await new Promise((r) => setTimeout(r, 10)); // warnings are emitted on the next tick
    process.off("warning", onWarning);
    expect(warnings).toEqual([]);
    for (const r of [all8, all50, seq]) {
      expect(r.report.nodes.length).toBe(N);
      expect(r.report.nodes.every((n) => n.error === undefined && n.ports[0]!.entryPoints[0]!.balancing.shares.length === N)).toBe(true);
    }
    console.info(`[live-scale] wall time: 1 node ${one.ms} ms; ${N} nodes --parallel 8 (default) ${all8.ms} ms (at most ${all8.most} execs at once); --parallel ${N} ${all50.ms} ms (${all50.most} at once); --parallel 1 ${seq.ms} ms (${seq.most} at once)`);
    // The nodes are collected concurrently, bounded by --parallel (what the fake API server saw, not a wall-clock
    // ratio: the test bed runs the plugin, the API server and all 50 "nodes'" commands on the same few cores; the
    // time ratio is for `npm run bench`).
    for (const r of [all8, all50, seq]) expect(r.execs).toBe(N);
    expect(seq.most).toBe(1);
    expect(all8.most).toBeGreaterThan(1);
    expect(all8.most).toBeLessThanOrEqual(8);
    expect(all50.most).toBeGreaterThan(8);
  }, 240_000);
});
