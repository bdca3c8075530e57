// A dual-stack Service (tests/fixtures/dual-stack): kube-proxy runs one proxier per IP family, each reading only the
// EndpointSlices of its addressType (pkg/proxy/proxier.go NewDualStackProxier; endpointslicecache.go), so each family's
// rules send only to that family's endpoints; and a pod's client address of a family is its status.podIPs entry of
// that family (podIP is only the first).
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import type { ServiceReport } from "../src/service/report.ts";

const DIR = new URL("./fixtures/dual-stack", import.meta.url).pathname;

function clusterIP(r: ServiceReport, v6: boolean) {
  const node = r.nodes.find((n) => n.node === "k8s1")!;
  return node.ports.flatMap((p) => p.entryPoints).find((e) => e.kind === "ClusterIP" && e.destination.startsWith("[") === v6)!;
}

describe("a dual-stack Service", () => {
  it("no endpoint of one family is said missing from the other family's rules", () => {
    const r = explainService(readBundle(DIR), "default", "web", { nodes: ["k8s1"] });
    expect(r.nodes.find((n) => n.node === "k8s1")!.drift).toEqual([]);
    expect(clusterIP(r, false).balancing.shares.map((s) => s.endpoint).sort()).toEqual(["10.244.0.7:8080", "10.244.1.8:8080"]);
    expect(clusterIP(r, true).balancing.shares.map((s) => s.endpoint).sort()).toEqual(["[fd00:10:244:1::8]:8080", "[fd00:10:244::7]:8080"]);
  });

  it("without the node's ip6tables-save, the IPv6 endpoints are not said missing from the IPv4 rules", () => {
    const b = readBundle(DIR);
    delete b.nodes[0]!.sections["ip6tables-save"];
    const n = explainService(b, "default", "web", { nodes: ["k8s1"] }).nodes.find((x) => x.node === "k8s1")!;
    expect(n.drift).toEqual([]);
    expect(n.notes).toContain("no ip6tables-save output for this node");
  });

  it("the IPv6 ClusterIP is asked of a pod's IPv6 address (status.podIPs), not of its IPv4 podIP", () => {
    const r = explainService(readBundle(DIR), "default", "web", { nodes: ["k8s1"] });
    const v6pod = clusterIP(r, true).clients.find((c) => c.client === "pod-same-node")!;
    // no pod of k8s1 other than an endpoint: a host of k8s1's IPv6 pod CIDR (spec.podCIDRs), inside the cluster CIDR
    expect(v6pod.source).toMatch(/^fd00:10:244:/);
    // `! -s fd00:10:244::/56 … -j KUBE-MARK-MASQ` does not apply to it
    expect(v6pod.masquerade).toBe("never");
    const v4pod = clusterIP(r, false).clients.find((c) => c.client === "pod-same-node")!;
    expect(v4pod.source).toMatch(/^10\.244\.0\./);
    expect(v4pod.masquerade).toBe("never");
  });
});
