// A --source pod address in no node's spec.podCIDRs and held by no Pod of the bundle (CNIs with their own IPAM, such
// as Calico, assign pod IPs outside the podCIDR; a live run keeps only the endpoints' pods): the node it runs on is not
// known, and it decides the reply path. On this node, the replies return through it and conntrack reverses the DNAT;
// on another, an unmasqueraded endpoint on a third node replies straight to the client. The answer names that fact
// instead of declaring the connection broken; when a Pod of the bundle holds the address, its node is used.
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, fixture, node, overallObjects } from "./helpers/bundles.ts";

// TestOverallIPTablesRules (master): svc1's endpoint 10.180.0.1 on node-b; test-node's podCIDR 10.180.0.0/24,
// node-b's 10.180.1.0/24; 10.180.5.9 (inside the cluster CIDR 10.0.0.0/8, so not masqueraded) is in neither
const bundle = () => {
  const { services, slices } = overallObjects("test-node", false);
  slices[0]!.endpoints![0]!.nodeName = "node-b";
  const b = bundleOf({ dump: fixture("kube-proxy/TestOverallIPTablesRules.iptables-save"), nodeName: "test-node", nodeIP: "192.168.0.2", services, slices });
  b.objects.nodes[0]!.spec = { podCIDR: "10.180.0.0/24", podCIDRs: ["10.180.0.0/24"] };
  const nb = node("node-b", "192.168.0.3");
  nb.spec = { podCIDR: "10.180.1.0/24", podCIDRs: ["10.180.1.0/24"] };
  b.objects.nodes.push(nb);
  return b;
};
const ask = (b: ReturnType<typeof bundle>) =>
  explainService(b, "ns1", "svc1", { packet: { source: "10.180.5.9", destination: "172.30.0.41", port: 80, protocol: "tcp" } }).packet![0]!;

describe("a --source pod address whose node is not known", () => {
  it("says the reply path depends on which node the source runs on, not that the connection fails", () => {
    const a = ask(bundle());
    expect(a.outcome).toBe("forwarded");
    expect(a.masquerade).toBe("never");
    expect(a.reason).not.toMatch(/does not complete/);
    expect(a.reason).toMatch(/whether the replies return through test-node depends on which node 10\.180\.5\.9 runs on \(not known\)/);
    expect(a.endpoints[0]!.replyFails).toBeUndefined();
    const reply = a.caveats.find((c) => c.startsWith("reply path:"))!;
    expect(reply).toMatch(/the node 10\.180\.5\.9 runs on is not known \(no Pod of the bundle has this address, and it is in no node's podCIDR\)/);
    expect(reply).toMatch(/if 10\.180\.5\.9 is on test-node, the replies return through test-node/);
    expect(reply).toMatch(/if it is on another node, 10\.180\.0\.1:80 \(on node-b\) replies straight to it/);
  });

  it("a Pod of the bundle on this node with that address (status.podIPs): the connection completes, no reply caveat", () => {
    const b = bundle();
    b.objects.pods.push({ apiVersion: "v1", kind: "Pod", metadata: { name: "client", namespace: "ns1" }, spec: { nodeName: "test-node", containers: [] }, status: { podIPs: [{ ip: "10.180.5.9" }] } } as never);
    const a = ask(b);
    expect(a.reason).not.toMatch(/depends on which node|does not complete/);
    expect(a.caveats.join("\n")).not.toMatch(/reply path/);
  });

  it("a Pod of the bundle on another node: the unmasqueraded reply bypasses test-node, said for that pod", () => {
    const b = bundle();
    b.objects.pods.push({ apiVersion: "v1", kind: "Pod", metadata: { name: "client", namespace: "ns1" }, spec: { nodeName: "node-c", containers: [] }, status: { podIP: "10.180.5.9" } } as never);
    const a = ask(b);
    expect(a.reason).toMatch(/but the replies bypass test-node: the connection does not complete/);
    expect(a.endpoints[0]!.replyFails).toBe("bypasses-node");
    expect(a.caveats.join("\n")).toMatch(/10\.180\.5\.9 is pod client on node node-c/);
  });
});
