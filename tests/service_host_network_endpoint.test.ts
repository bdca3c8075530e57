// A host-network endpoint (an ingress DaemonSet with hostNetwork: true) sends from the node itself: its packets start
// in nat OUTPUT, where kube-proxy's KUBE-EXT `--src-type LOCAL` rules send them to the Service chain, masqueraded
// (iptables/proxier.go syncProxyRules, external chain). It is the host-network client, not a hairpin pod endpoint
// arriving in PREROUTING on a pod interface (which it was traced as: "delivered here, not masqueraded").
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";
import type { Pod } from "../src/model/k8s.ts";

describe("a host-network endpoint on the node", () => {
  const svc = service("ingress", "web", { type: "NodePort", clusterIP: "10.96.0.80", clusterIPs: ["10.96.0.80"], ports: [{ name: "https", port: 443, targetPort: 8443, nodePort: 30443, protocol: "TCP" }] } as never);
  const eps = (first: string) => slice("ingress", "web", [{ ip: first, node: "node-a" }, { ip: "192.168.1.2", node: "node-b" }], [{ name: "https", port: 8443 }]);
  const pod = (name: string, ip: string, hostNetwork: boolean): Pod => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "ingress" },
    spec: { nodeName: "node-a", hostNetwork, containers: [] },
    status: { podIP: ip, podIPs: [{ ip }] },
  } as never);
  const run = (first: string, hostNetwork: boolean) => {
    const s = eps(first);
    s.endpoints![0]!.targetRef = { kind: "Pod", name: "ing-a", namespace: "ingress" };
    const b = bundleOf({ dump: kubeProxyRules([svc], [s], "10.244.0.0/16"), nodeName: "node-a", nodeIP: "192.168.1.1", services: [svc], slices: [s], clusterCIDRs: ["10.244.0.0/16"] });
    b.objects.pods.push(pod("ing-a", first, hostNetwork));
    return explainService(b, "ingress", "web").nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!.clients.map((c) => c.client);
  };

  it("is no hairpin client (the host-network client is that process)", () => {
    expect(run("192.168.1.1", true)).not.toContain("hairpin");
    expect(run("192.168.1.1", true)).toContain("host-network");
  });

  it("a pod endpoint of the node is the hairpin client, as before", () => {
    expect(run("10.244.0.9", false)).toContain("hairpin");
  });

  it("a hostNetwork pod of the same name in another namespace does not take the endpoint's hairpin client away", () => {
    const s = eps("10.244.0.9");
    s.endpoints![0]!.targetRef = { kind: "Pod", name: "ing-a", namespace: "ingress" };
    const b = bundleOf({ dump: kubeProxyRules([svc], [s], "10.244.0.0/16"), nodeName: "node-a", nodeIP: "192.168.1.1", services: [svc], slices: [s], clusterCIDRs: ["10.244.0.0/16"] });
    b.objects.pods.push(pod("ing-a", "10.244.0.9", false));
    const other = pod("ing-a", "192.168.1.1", true);
    other.metadata.namespace = "monitoring";
    b.objects.pods.push(other);
    const clients = explainService(b, "ingress", "web").nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!.clients.map((c) => c.client);
    expect(clients).toContain("hairpin");
  });
});
