// externalTrafficPolicy drift: the ClusterIP comparison cannot see a node whose rules for clients from outside (NodePort,
// LoadBalancer IP, externalIP) were written for the other policy. Under Local kube-proxy sends them only to this node's
// endpoints, unmasqueraded, or drops them when there is none (iptables proxier.go: KUBE-EXT-* without the
// unconditional KUBE-MARK-MASQ, a DROP in KUBE-EXTERNAL-SERVICES; nftables: `external-` chains, no-endpoint-nodeports);
// under Cluster it sends them where ClusterIP traffic goes, masqueraded. Dumps: kube-proxy's own unit-test outputs.
import { describe, expect, it } from "vitest";
import { emptyBundle } from "../src/bundle/bundle.ts";
import type { EndpointSlice, Service } from "../src/model/k8s.ts";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, fixture, node, overallObjects, service, slice } from "./helpers/bundles.ts";

const policy = (services: Service[], ns: string, value: "Local" | "Cluster") =>
  services.map((s) => (s.metadata.namespace === ns ? { ...s, spec: { ...s.spec, externalTrafficPolicy: value } } : s));
const external = (r: ReturnType<typeof explainService>) => r.nodes[0]!.drift.filter((d) => d.kind === "external-policy").map((d) => d.message);

describe("iptables mode (TestOverallIPTablesRules, TestOnlyLocalNodePorts)", () => {
  const dump = fixture("kube-proxy/TestOverallIPTablesRules.iptables-save");
  const bundle = (services: Service[], slices: EndpointSlice[]) => bundleOf({ dump, nodeName: "test-node", nodeIP: "192.168.0.2", services, slices });
  const { services, slices } = overallObjects("test-node", true);

  it("rules that match the policy: no external-policy drift (svc2 Local without a local endpoint, svc5 Cluster)", () => {
    expect(external(explainService(bundle(services, slices), "ns2", "svc2"))).toEqual([]);
    expect(external(explainService(bundle(services, slices), "ns5", "svc5"))).toEqual([]);
  });

  it("the API says Local, the node still forwards clients from outside to another node's endpoint: stale", () => {
    const r = explainService(bundle(policy(services, "ns5", "Local"), slices), "ns5", "svc5");
    expect(external(r)).toEqual([
      expect.stringMatching(/^ns5\/svc5:p80: externalTrafficPolicy Local should send clients from outside at NodePort 192\.168\.0\.2:3002\/tcp nowhere: this node has no endpoint, so they are dropped, but test-node sends them to 10\.180\.0\.3:80: the node's rules are stale/),
    ]);
  });

  it("the API says Cluster, the node drops clients from outside as Local without local endpoints does: stale", () => {
    const r = explainService(bundle(policy(services, "ns2", "Cluster"), slices), "ns2", "svc2");
    expect(external(r)).toEqual([
      expect.stringMatching(/^ns2\/svc2:p80: externalTrafficPolicy Cluster, but test-node sends clients from outside at NodePort 192\.168\.0\.2:3001\/tcp to no endpoint where the API has 10\.180\.0\.2:80/),
    ]);
  });

  it("a local endpoint, rules for Local: none; the API says Cluster: the other endpoint is missing for clients from outside", () => {
    const local = fixture("kube-proxy/TestOnlyLocalNodePorts.v1.27.iptables-save");
    const svc = (p: "Local" | "Cluster") => service("ns1", "svc1", { type: "NodePort", clusterIP: "172.30.0.41", externalTrafficPolicy: p, ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }] });
    const eps = [slice("ns1", "svc1", [{ ip: "10.180.0.1", node: "other" }, { ip: "10.180.2.1", node: "test-hostname" }], [{ name: "p80", port: 80 }])];
    const b = (p: "Local" | "Cluster") => bundleOf({ dump: local, nodeName: "test-hostname", nodeIP: "192.168.0.2", services: [svc(p)], slices: eps, clusterCIDRs: ["10.0.0.0/8"] });
    expect(external(explainService(b("Local"), "ns1", "svc1"))).toEqual([]);
    expect(external(explainService(b("Cluster"), "ns1", "svc1"))).toEqual([
      expect.stringMatching(/^ns1\/svc1:p80: externalTrafficPolicy Cluster, but test-hostname sends clients from outside at NodePort 192\.168\.0\.2:3001\/tcp to 10\.180\.2\.1:80 where the API has 10\.180\.0\.1:80, 10\.180\.2\.1:80/),
    ]);
  });
});

describe("nftables mode (TestOverallNFTablesRules)", () => {
  const { services, slices } = overallObjects("test-node", true);
  const bundle = (svcs: Service[]) => {
    const b = emptyBundle({ tool: "test" });
    b.objects.services.push(...svcs);
    b.objects.endpointSlices.push(...slices);
    b.objects.nodes.push(node("test-node", "192.168.0.2"));
    b.nodes.push({ name: "test-node", sections: { "nft-json": { stdout: fixture("nftables/TestOverallNFTablesRules.json"), exitCode: 0 } } });
    return b;
  };
  it("rules that match: none; the API's policy flipped: stale, either way", () => {
    expect(external(explainService(bundle(services), "ns2", "svc2"))).toEqual([]);
    expect(external(explainService(bundle(services), "ns5", "svc5"))).toEqual([]);
    expect(external(explainService(bundle(policy(services, "ns5", "Local")), "ns5", "svc5"))).toEqual([
      expect.stringMatching(/^ns5\/svc5:p80: externalTrafficPolicy Local should send clients from outside at NodePort 192\.168\.0\.2:3002\/tcp nowhere/),
    ]);
    expect(external(explainService(bundle(policy(services, "ns2", "Cluster")), "ns2", "svc2"))).toEqual([
      expect.stringMatching(/^ns2\/svc2:p80: externalTrafficPolicy Cluster, but test-node sends clients from outside at NodePort 192\.168\.0\.2:3001\/tcp to no endpoint/),
    ]);
  });
});
