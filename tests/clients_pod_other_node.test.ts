// A pod of another node arrives at this node addressed to the Service only at a NodePort: kube-proxy programs the
// load-balancer IPs and externalIPs (as the ClusterIP) in nat KUBE-SERVICES on every node, hooked in PREROUTING
// (pkg/proxy/iptables/proxier.go syncProxyRules, "Capture load-balancer ingress" / "external IP"), so a pod's packet
// to one is DNATed on its own node. Traced at this node's LB IP, it was reported "the replies bypass test-node: the
// connection does not complete", a path that does not occur.
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, fixture, node, overallObjects } from "./helpers/bundles.ts";

describe("the pod-on-another-node client", () => {
  // TestOverallIPTablesRules: svc2 is a LoadBalancer (1.2.3.4) with externalIP 192.168.99.22 and NodePort 3001
  const { services, slices } = overallObjects("test-node", false);
  slices[1]!.endpoints![0]!.nodeName = "node-b";
  const b = bundleOf({ dump: fixture("kube-proxy/TestOverallIPTablesRules.iptables-save"), nodeName: "test-node", nodeIP: "192.168.0.2", services, slices });
  b.objects.nodes[0]!.spec = { podCIDR: "10.180.0.0/24", podCIDRs: ["10.180.0.0/24"] };
  const nb = node("node-b", "192.168.0.3");
  nb.spec = { podCIDR: "10.180.1.0/24", podCIDRs: ["10.180.1.0/24"] };
  b.objects.nodes.push(nb);
  const entries = explainService(b, "ns2", "svc2").nodes[0]!.ports[0]!.entryPoints;
  const kinds = (kind: string) => entries.find((e) => e.kind === kind)!.clients.map((c) => c.client);

  it("is traced at the NodePort only", () => {
    expect(kinds("NodePort")).toContain("pod-other-node");
    for (const kind of ["ClusterIP", "LoadBalancer", "ExternalIP"]) expect(kinds(kind), kind).not.toContain("pod-other-node");
  });

  it("the load-balancer IP and externalIP still trace the pod of this node, forwarded without a broken reply path", () => {
    for (const kind of ["LoadBalancer", "ExternalIP"]) {
      const pod = entries.find((e) => e.kind === kind)!.clients.find((c) => c.client === "pod-same-node")!;
      expect(pod.outcome, kind).toBe("forwarded");
      expect(pod.reason, kind).not.toMatch(/does not complete/);
    }
  });
});
