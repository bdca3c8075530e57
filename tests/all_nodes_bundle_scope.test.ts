// Audit roundtrip finding 2: `--all-nodes --from BUNDLE` on a bundle captured without --all-nodes analysed the nodes
// of the endpoints (the only ones such a capture holds) and said nothing: the answer read as a drift check across the
// cluster, while a live --all-nodes also checked a fourth node without endpoints. The bundle records how it was made
// (capture.command, src/kube/live.ts commandLine): the report's limits and a warning now say which nodes were left.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { encodeBundle } from "../src/bundle/decode.ts";
import { bundleOf, node, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";
import { run } from "./helpers/live_cli.ts";

const T = mkdtempSync(join(tmpdir(), "netpath-all-nodes-"));
afterAll(() => rmSync(T, { recursive: true, force: true }));

const web = service("shop", "web", { type: "NodePort", clusterIP: "10.96.0.80", clusterIPs: ["10.96.0.80"], ports: [{ name: "http", port: 80, targetPort: 8080, nodePort: 30080, protocol: "TCP" }] } as never);
const eps = slice("shop", "web", [{ ip: "10.244.1.10", node: "na" }, { ip: "10.244.2.10", node: "nb" }, { ip: "10.244.3.10", node: "nc" }], [{ name: "http", port: 8080 }]);
const rules = kubeProxyRules([web], [eps], "10.244.0.0/16");

/** The bundle `capture` writes for svc/web: the endpoints' nodes (Node objects and rules), or every node with --all-nodes. */
function captured(command: string, nodes: [string, string][]): string {
  const b: Bundle = bundleOf({ dump: rules, nodeName: nodes[0]![0], nodeIP: nodes[0]![1], services: [web], slices: [eps], clusterCIDRs: ["10.244.0.0/16"] });
  for (const [name, ip] of nodes.slice(1)) {
    b.objects.nodes.push(node(name, ip));
    b.nodes.push({ name, sections: { "iptables-save": { stdout: rules, exitCode: 0 } } });
  }
  b.capture.command = command;
  const f = join(T, `${command.replace(/\W+/g, "-")}.json`);
  writeFileSync(f, encodeBundle(b, "json"));
  return f;
}
const ENDPOINT_NODES: [string, string][] = [["na", "192.168.50.11"], ["nb", "192.168.50.12"], ["nc", "192.168.50.13"]];

describe("--all-nodes on a bundle says when the bundle does not hold every node", () => {
  it("captured without --all-nodes: the endpoints' nodes analysed, the limits and a warning say the others were not checked", async () => {
    const f = captured("kubectl netpath svc/web -n shop", ENDPOINT_NODES);
    const r = await run(["svc/web", "-n", "shop", "--from", f, "--all-nodes", "-o", "json"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { nodes: { node: string }[]; limits: string[] };
    expect(report.nodes.map((n) => n.node)).toEqual(["na", "nb", "nc"]);
    expect(report.limits).toContain("nodes other than na, nb, nc: this bundle was captured without --all-nodes (capture.command: kubectl netpath svc/web -n shop), so it holds no other node, and those were not checked (capture with --all-nodes for a drift check across the cluster)");
    expect(r.stderr).toBe("warning: --all-nodes on this bundle analysed only the nodes it holds (na, nb, nc): this bundle was captured without --all-nodes (capture.command: kubectl netpath svc/web -n shop); other nodes of the cluster were not checked: capture with --all-nodes for a drift check across the cluster\n");
    const text = await run(["svc/web", "-n", "shop", "--from", f, "--all-nodes"]);
    expect(text.stdout).toContain("nodes other than na, nb, nc: this bundle was captured without --all-nodes");
  });

  it("captured with --all-nodes (a fourth node without endpoints): no such line, that node is analysed too", async () => {
    const f = captured("kubectl netpath svc/web -n shop --all-nodes", [...ENDPOINT_NODES, ["nd", "192.168.50.14"]]);
    const r = await run(["svc/web", "-n", "shop", "--from", f, "--all-nodes", "-o", "json"]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const report = JSON.parse(r.stdout) as { nodes: { node: string }[]; limits: string[] };
    expect(report.nodes.map((n) => n.node)).toEqual(["na", "nb", "nc", "nd"]);
    expect(report.limits.filter((l) => l.startsWith("nodes other than"))).toEqual([]);
  });

  it("a hand-made bundle, which does not say how it was made: said so, not assumed whole", async () => {
    const f = captured("hand-built from iptables-save on three nodes", ENDPOINT_NODES);
    const r = await run(["svc/web", "-n", "shop", "--from", f, "--all-nodes", "-o", "json"]);
    expect(r.stderr).toContain("(na, nb, nc): this bundle does not record a capture with --all-nodes; other nodes of the cluster were not checked");
  });

  it("without --all-nodes: nothing is added (the run asked for the nodes the bundle holds)", async () => {
    const f = captured("kubectl netpath svc/web -n shop", ENDPOINT_NODES);
    const r = await run(["svc/web", "-n", "shop", "--from", f, "-o", "json"]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect((JSON.parse(r.stdout) as { limits: string[] }).limits.filter((l) => l.startsWith("nodes other than"))).toEqual([]);
  });
});

describe("--all-nodes on a bundle holding Node objects of nodes it has no state of", () => {
  it("those nodes are not analysed: exit 1, one error line naming them, and the warning names only the nodes analysed", async () => {
    // the state of na alone, with the Node objects of the whole cluster (as a single-node capture carries them)
    const b: Bundle = bundleOf({ dump: rules, nodeName: "na", nodeIP: "192.168.50.11", services: [web], slices: [eps], clusterCIDRs: ["10.244.0.0/16"] });
    b.objects.nodes.push(node("nb", "192.168.50.12"), node("nc", "192.168.50.13"));
    b.capture.command = "kubectl netpath svc/web -n shop --node na";
    const f = join(T, "one-node-state.json");
    writeFileSync(f, encodeBundle(b, "json"));
    const r = await run(["svc/web", "-n", "shop", "--from", f, "--all-nodes", "-o", "json"]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { nodes: { node: string; error?: string }[] };
    expect(report.nodes.map((n) => [n.node, n.error])).toEqual([["na", undefined], ["nb", "no datapath state was collected from this node"], ["nc", "no datapath state was collected from this node"]]);
    expect(r.stderr.split("\n").filter(Boolean)).toEqual([
      "warning: --all-nodes on this bundle analysed only the nodes it holds (na): this bundle was captured without --all-nodes (capture.command: kubectl netpath svc/web -n shop --node na); other nodes of the cluster were not checked: capture with --all-nodes for a drift check across the cluster",
      "error: 2 of 3 node(s) not analysed, the bundle holds no capture of them: nb, nc; capture them with --all-nodes (or ask for the captured ones with --node)",
    ]);
  });
});
