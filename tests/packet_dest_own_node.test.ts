// Audit (packet questions) finding 1: a pod on node-b sending to test-node's own address at a NodePort got circular
// advice: test-node's answer said "first handled by node-b's rules … as if it entered test-node", node-b's said "routed
// to test-node … as if it entered node-b". node-b's rules do not translate a packet addressed to another node: kube-proxy
// takes a NodePort only at the node's own addresses (pkg/proxy/iptables/proxier.go syncProxyRules, the "kubernetes
// service nodeports" rule `-m addrtype --dst-type LOCAL`). So test-node's answer is the real path. A ClusterIP is
// translated on node-b first: there the "as if" stays.
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, fixture, node, overallObjects } from "./helpers/bundles.ts";

// TestOverallIPTablesRules (master) on both nodes; svc3 (NodePort 3003, externalTrafficPolicy Cluster) has its
// endpoint 10.180.0.3 on node-b; the client pod 10.0.6.9 runs on node-b
const bundle = () => {
  const dump = fixture("kube-proxy/TestOverallIPTablesRules.iptables-save");
  const { services, slices } = overallObjects("test-node", false);
  for (const s of slices) for (const e of s.endpoints ?? []) e.nodeName ??= "node-b";
  const b = bundleOf({ dump, nodeName: "test-node", nodeIP: "192.168.0.2", services, slices, clusterCIDRs: ["10.0.0.0/8"] });
  b.objects.nodes.push(node("node-b", "192.168.0.3"));
  b.nodes.push({ name: "node-b", sections: { "iptables-save": { stdout: dump, exitCode: 0 } } });
  b.objects.pods.push({ apiVersion: "v1", kind: "Pod", metadata: { name: "client-there", namespace: "default" }, spec: { nodeName: "node-b", containers: [] }, status: { podIP: "10.0.6.9" } } as never);
  return b;
};
const ask = (source: string, destination: string, port: number, nodes?: string[]) =>
  explainService(bundle(), "ns3", "svc3", { packet: { source, destination, port, protocol: "tcp" }, ...(nodes ? { nodes } : {}) }).packet!;

describe("a client on another node sending to this node's own address", () => {
  it("a pod of node-b to test-node's NodePort: test-node's answer is the real path, node-b's the first part of it", () => {
    const [here, there] = ask("10.0.6.9", "192.168.0.2", 3003);
    expect([here!.node, here!.outcome, here!.endpoints.map((e) => e.endpoint)]).toEqual(["test-node", "forwarded", ["10.180.0.3:80"]]);
    const text = here!.caveats.join("\n");
    expect(text).not.toMatch(/as if it entered test-node|first handled by node-b's rules/);
    expect(here!.caveats).toContain(
      "10.0.6.9 is pod client-there on node node-b: node-b's kube-proxy rules leave its packet to 192.168.0.2, an address of test-node and none of Service ns3/svc3's, untranslated (they take a NodePort only at node-b's own addresses), so it reaches test-node as traced here (node node-b's answer below traces it on node-b); rules outside kube-proxy's on node-b that masquerade pod traffic leaving the node (a CNI's, ip-masq-agent's) would make its source node-b's address instead",
    );
    // node-b: the packet starts there, and its answer is not an "as if" either
    expect([there!.node, there!.outcome]).toEqual(["node-b", "not-handled"]);
    expect(there!.caveats.join("\n")).not.toMatch(/as if it entered node-b/);
    // each answer points to the other, both in this report (not to --node)
    expect(there!.caveats.join("\n")).toMatch(/the packet is routed to test-node as this answer leaves it and handled there by its rules: see node test-node's answer above$/m);
  });

  it("a host process of node-b (its address) to test-node's NodePort: not translated in node-b's nat OUTPUT", () => {
    const [here] = ask("192.168.0.3", "192.168.0.2", 3003, ["test-node"]);
    expect(here!.outcome).toBe("forwarded");
    expect(here!.caveats.join("\n")).not.toMatch(/as if it entered test-node/);
    expect(here!.caveats.join("\n")).toMatch(/^192\.168\.0\.3 is an address of node node-b .*: node-b's kube-proxy rules leave its packet to 192\.168\.0\.2, .* untranslated .*so it reaches test-node as traced here$/m);
  });

  it("the Service's ClusterIP is translated on node-b first: test-node's answer stays an \"as if\"", () => {
    const [here] = ask("10.0.6.9", "172.30.0.43", 80, ["test-node"]);
    expect(here!.caveats.join("\n")).toMatch(/10\.0\.6\.9 is pod client-there on node node-b: its packets are first handled by node-b's rules, not test-node's; this answer is for the packet as if it entered test-node/);
  });
});
