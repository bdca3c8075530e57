// Audit-topo finding 4: the limits line for Node objects the bundle lacks said the endpoints there are "shown as no
// zone" even when their EndpointSlice names the zone (the report then shows it), and did not say that the analysed
// node's kube-proxy version and zone label are what its missing Node object hides.
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

const svc = () => service("ns", "web", { type: "ClusterIP", clusterIP: "10.96.0.50", clusterIPs: ["10.96.0.50"], ports: [{ name: "p80", port: 80, targetPort: 8080, protocol: "TCP" }] } as never);
const run = (zones: boolean, keepAnalysed: boolean) => {
  const s = slice("ns", "web", [{ ip: "10.244.1.10", node: "node-a" }, { ip: "10.244.2.10", node: "node-b" }], [{ name: "p80", port: 8080 }]);
  if (zones) {
    s.endpoints![0]!.zone = "zone-a";
    s.endpoints![1]!.zone = "zone-b";
  }
  const b = bundleOf({ dump: kubeProxyRules([svc()], [s], "10.244.0.0/16"), nodeName: "node-a", nodeIP: "192.168.1.1", services: [svc()], slices: [s], clusterCIDRs: ["10.244.0.0/16"] });
  if (!keepAnalysed) b.objects.nodes = [];
  const r = explainService(b, "ns", "web");
  return { limit: r.limits.find((l) => l.startsWith("the Node object")) ?? "", endpoints: r.endpoints };
};

describe("the limits line for Node objects not in the bundle", () => {
  it("endpoints whose EndpointSlice names their zone: the zone is shown, and the line says where it came from", () => {
    const { limit, endpoints } = run(true, true);
    expect(endpoints.find((e) => e.address === "10.244.2.10")!.zone).toBe("zone-b");
    expect(limit).toBe("the Node object of node-b (not in the bundle; reading them needs get on nodes, cluster-scoped): the endpoints there take their zone from their EndpointSlice (endpoint.zone); that node's address and readiness");
  });
  it("an endpoint without endpoint.zone: named, as shown with no zone", () => {
    expect(run(false, true).limit).toContain("the zone of 10.244.2.10 (no endpoint.zone in its EndpointSlice: shown as no zone)");
  });
  it("the analysed node without its Node object: its kube-proxy version and zone label are named as unknown", () => {
    const { limit } = run(true, false);
    expect(limit).toMatch(/^the Node objects of node-a, node-b \(/);
    expect(limit).toContain("for node-a, analysed here: kube-proxy's version (status.nodeInfo; the topology answers say which version they rest on) and the topology.kubernetes.io/zone label");
  });
});
