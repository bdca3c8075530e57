// A kube-proxy iptables dump with no Service chain at all (every Service without usable endpoints: only its
// "has no endpoints" REJECT rules) is iptables mode all the same: its nat KUBE-NODEPORTS chain and filter REJECTs are
// iptables mode's layout (pkg/proxy/iptables/proxier.go; IPVS mode's NodePort chain is KUBE-NODE-PORT). It was reported
// "kube-proxy mode unknown" with no evidence, and then traced as iptables anyway.
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { detectProxyMode } from "../src/service/proxy_mode.ts";
import { emptyBundle } from "../src/bundle/bundle.ts";
import { bundleOf, fixture, service, slice } from "./helpers/bundles.ts";

describe("proxy mode of an iptables dump without Service chains", () => {
  it("TestEndpointSliceWithTerminatingEndpointsTrafficPolicyLocal-6 (v1.27): iptables, with the rules that show it", () => {
    const svc = service("ns1", "svc1", {
      type: "LoadBalancer",
      clusterIP: "172.30.1.1",
      externalTrafficPolicy: "Local",
      healthCheckNodePort: 30000,
      ports: [{ name: "", port: 80, protocol: "TCP", targetPort: 80, nodePort: 30010 }],
    }, { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } });
    const sl = slice("ns1", "svc1", [{ ip: "10.0.1.5", node: "test-hostname", ready: false, serving: false, terminating: true }], [{ port: 80 }]);
    const b = bundleOf({ dump: fixture("kube-proxy/TestEndpointSliceWithTerminatingEndpointsTrafficPolicyLocal-6-no-usable-endpoints.v1.27.iptables-save"), nodeName: "test-hostname", nodeIP: "192.168.0.2", services: [svc], slices: [sl] });
    const mode = explainService(b, "ns1", "svc1").nodes[0]!.proxyMode;
    expect(mode.mode).toBe("iptables");
    expect(mode.evidence).toEqual([{ source: "rules", value: "iptables", detail: 'no KUBE-SVC/KUBE-SEP chain, but filter "… has no endpoints" REJECT rules (iptables mode)' }]);
    expect(mode.conflicts).toEqual([]);
  });

  it("the nat KUBE-NODEPORTS chain alone says iptables; IPVS signals win over it, with no conflict claimed", () => {
    const node = emptyBundle({ tool: "test" });
    const capture = { name: "n", sections: {} };
    expect(detectProxyMode(capture, node.objects, { iptablesServiceChains: 0, ipvsMatchSets: false, ipvsVirtualServers: 0, nftablesTable: false, iptablesLayout: "the nat chain KUBE-NODEPORTS" }).mode).toBe("iptables");
    const ipvs = detectProxyMode(capture, node.objects, { iptablesServiceChains: 0, ipvsMatchSets: true, ipvsVirtualServers: 2, nftablesTable: false, iptablesLayout: "the nat chain KUBE-NODEPORTS" });
    expect(ipvs.mode).toBe("ipvs");
    expect(ipvs.conflicts).toEqual([]);
    expect(detectProxyMode(capture, node.objects, { iptablesServiceChains: 0, ipvsMatchSets: false, ipvsVirtualServers: 0, nftablesTable: false }).mode).toBe("unknown");
  });
});
