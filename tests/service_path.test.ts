// The svc/NAME analysis on real dumps: the seed's node dump (iptables-lab) and kube-proxy's own test dumps, each in
// the restore-buffer form kube-proxy writes and in the form iptables-save prints on a node (node-format fixtures,
// produced by the real kernel). Expected verdicts come from the dumps' notes (../shared/fixtures/real-dumps).
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import type { ClientVerdict, ServiceReport } from "../src/service/report.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import {
  bundleOf,
  fixture,
  IPTABLES_LAB,
  notServingEndpoint,
  overallObjects,
  readyEndpoint,
  service,
  servingTerminatingEndpoint,
  slice,
  terminatingLocalService,
} from "./helpers/bundles.ts";

function client(r: ServiceReport, port: number, kind: string, client: ClientVerdict["client"], node = 0): ClientVerdict {
  const n = r.nodes[node]!;
  const pr = n.ports.find((p) => p.servicePort.port === port || p.servicePort.nodePort === port)!;
  const e = pr.entryPoints.find((x) => x.kind === kind)!;
  expect(e, `${kind} entry for port ${port}`).toBeDefined();
  const c = e.clients.find((x) => x.client === client)!;
  expect(c, `${client} at ${kind}`).toBeDefined();
  return c;
}

function shares(c: ClientVerdict): Record<string, number> {
  return Object.fromEntries(c.endpoints.map((e) => [e.endpoint, Math.round((e.share ?? -1) * 1e6) / 1e6]));
}

describe("iptables-lab (seed 001, node k8s1, v1.22)", () => {
  const bundle = readBundle(IPTABLES_LAB);

  it("kube-dns:dns goes to 10.244.0.5:53 or 10.244.2.21:53 with probability 0.5 each", () => {
    const r = explainService(bundle, "kube-system", "kube-dns");
    expect(r.service.clusterIPs).toEqual(["10.96.0.10"]);
    expect(r.nodes.map((n) => n.node)).toEqual(["k8s1"]);
    expect(r.nodes[0]!.proxyMode.mode).toBe("iptables");
    const dns = r.nodes[0]!.ports.find((p) => p.servicePort.name === "dns")!;
    const cip = dns.entryPoints[0]!;
    expect(cip.destination).toBe("10.96.0.10:53/udp");
    expect(cip.balancing.shares.map((s) => [s.endpoint, s.share, s.via])).toEqual([
      ["10.244.0.5:53", 0.5, "KUBE-SEP-LPGSDLJ3FDW46N4W"],
      ["10.244.2.21:53", 0.5, "KUBE-SEP-2NK74F4BXH6S2KMP"],
    ]);
    expect(r.nodes[0]!.drift).toEqual([]);
  });

  it("a pod inside 10.244.0.0/16 is not masqueraded; a client outside it and the node itself are, by line 171", () => {
    const r = explainService(bundle, "kube-system", "kube-dns");
    const pod = client(r, 53, "ClusterIP", "pod-same-node");
    expect(pod.masquerade).toBe("never");
    expect(pod.reason).toContain("line 171");
    expect(pod.reason).toContain("is in 10.244.0.0/16");
    const ext = client(r, 53, "ClusterIP", "external");
    expect(ext.masquerade).toBe("always");
    expect(ext.evidence.find((e) => e.rule.line === 171)?.role).toBe("marks for masquerade (KUBE-MARK-MASQ)");
    expect(ext.evidence.find((e) => e.rule.line === 138)?.rule.raw).toContain("-j MASQUERADE --random-fully");
    const host = client(r, 53, "ClusterIP", "host-network");
    expect(host.source).toBe("10.210.40.172");
    expect(host.masquerade).toBe("always");
  });

  it("hairpin: coredns 10.244.0.5 reaching kube-dns is masqueraded only when it picks itself", () => {
    const r = explainService(bundle, "kube-system", "kube-dns");
    const h = client(r, 53, "ClusterIP", "hairpin");
    expect(h.masquerade).toBe("some");
    expect(h.endpoints.find((e) => e.endpoint === "10.244.0.5:53")?.masqueraded).toBe(true);
    // the branch to k8s2 meets line 128 (`-o eth0 -j MASQUERADE`), whose output interface is not collected: not known
    expect(h.endpoints.find((e) => e.endpoint === "10.244.2.21:53")?.masqueraded).toBeUndefined();
    expect(h.evidence.some((e) => e.rule.line === 151 && e.role.startsWith("marks"))).toBe(true);
  });

  it("my-nginx-svc has one endpoint, 10.244.3.38:80 on k8s3, and k8s1 sends everything there", () => {
    const r = explainService(bundle, "default", "my-nginx-svc");
    expect(r.endpoints.map((e) => [e.address, e.node, e.pod])).toEqual([["10.244.3.38", "k8s3", "nginx"]]);
    const pod = client(r, 3000, "ClusterIP", "pod-same-node");
    expect(shares(pod)).toEqual({ "10.244.3.38:80": 1 });
  });

  it("notes the -o eth0 MASQUERADE rule it cannot decide without knowing the output interface", () => {
    const r = explainService(bundle, "default", "my-nginx-svc");
    const pod = client(r, 3000, "ClusterIP", "pod-same-node");
    expect(pod.caveats.some((c) => c.includes("line 128") && c.includes("-o eth0"))).toBe(true);
  });

  it("answers one packet: 10.244.1.7 → 10.96.0.10:53/udp", () => {
    const r = explainService(bundle, "kube-system", "kube-dns", { packet: { source: "10.244.1.7", destination: "10.96.0.10", port: 53, protocol: "udp" } });
    const a = r.packet![0]!;
    expect(a.outcome).toBe("forwarded");
    expect(a.masquerade).toBe("never");
    expect(a.endpoints.map((e) => [e.endpoint, e.share])).toEqual([["10.244.0.5:53", 0.5], ["10.244.2.21:53", 0.5]]);
  });
});

// Both forms of every kube-proxy dump: the buffer kube-proxy writes, and what iptables-nft-save prints after loading it.
const forms = (name: string) => [
  { form: "restore buffer", text: fixture(`kube-proxy/${name}.iptables-save`) },
  { form: "iptables-nft-save", text: fixture(`node-format/${name}.nft.iptables-save`) },
  { form: "iptables-legacy-save", text: fixture(`node-format/${name}.legacy.iptables-save`) },
];

describe.each(forms("TestOverallIPTablesRules"))("TestOverallIPTablesRules (master), $form", ({ text }) => {
  const { services, slices } = overallObjects("test-node", true);
  const b = bundleOf({ dump: text, nodeName: "test-node", nodeIP: "192.168.0.2", services, slices });

  it("svc1 ClusterIP: pods → 10.180.0.1:80 unmasqueraded; sources outside 10.0.0.0/8 masqueraded", () => {
    const r = explainService(b, "ns1", "svc1");
    expect(r.nodes[0]!.notes).toContain("cluster CIDR 10.0.0.0/8 (from the rules (local-traffic detector))");
    const pod = client(r, 80, "ClusterIP", "pod-same-node");
    expect(shares(pod)).toEqual({ "10.180.0.1:80": 1 });
    expect(pod.masquerade).toBe("never");
    expect(client(r, 80, "ClusterIP", "external").masquerade).toBe("always");
    expect(client(r, 80, "ClusterIP", "host-network").masquerade).toBe("always");
  });

  it("svc2 eTP=Local without local endpoints: external traffic dropped, pod traffic short-circuited to all endpoints", () => {
    const r = explainService(b, "ns2", "svc2");
    for (const kind of ["LoadBalancer", "ExternalIP", "NodePort"]) {
      const ext = client(r, kind === "NodePort" ? 3001 : 80, kind, "external");
      expect(ext.outcome, kind).toBe("dropped");
      expect(ext.evidence.find((e) => e.role === "drops")?.rule.chain).toBe("KUBE-EXTERNAL-SERVICES");
    }
    // a pod of this node: kube-proxy translates a pod's packet to the LB IP on the pod's own node
    const pod = client(r, 80, "LoadBalancer", "pod-same-node");
    expect(pod.outcome).toBe("forwarded");
    expect(shares(pod)).toEqual({ "10.180.0.2:80": 1 });
    expect(pod.masquerade).toBe("never");
    const host = client(r, 80, "LoadBalancer", "host-network");
    expect(host.outcome).toBe("forwarded");
    expect(host.masquerade).toBe("always");
  });

  it("svc4 externalIP (eTP=Cluster): external clients split 50/50 over .4 and .5, always masqueraded", () => {
    const r = explainService(b, "ns4", "svc4");
    const ext = client(r, 80, "ExternalIP", "external");
    expect(shares(ext)).toEqual({ "10.180.0.4:80": 0.5, "10.180.0.5:80": 0.5 });
    expect(ext.masquerade).toBe("always");
    expect(ext.reason).toContain("KUBE-EXT-4SW47YFZTEDKD3PK");
  });

  it("svc5 loadBalancerSourceRanges: an allowed client is forwarded (masqueraded), another is dropped by KUBE-PROXY-FIREWALL", () => {
    const r = explainService(b, "ns5", "svc5");
    const ok = client(r, 80, "LoadBalancer", "external");
    expect(ok.source).toBe("203.0.113.2");
    expect(ok.outcome).toBe("forwarded");
    expect(ok.masquerade).toBe("always");
    const denied = client(r, 80, "LoadBalancer", "external-denied");
    expect(denied.outcome).toBe("dropped");
    expect(denied.evidence.find((e) => e.role === "drops")?.rule.chain).toBe("KUBE-PROXY-FIREWALL");
    // Session affinity is stated as a limit, not modelled as a share.
    expect(r.limits.some((l) => l.includes("10800 s"))).toBe(true);
    expect(ok.endpoints[0]!.share).toBe(1);
  });

  it("svc6 without endpoints: rejected by filter KUBE-SERVICES, and the report says why", () => {
    const r = explainService(b, "ns6", "svc6");
    const pod = client(r, 80, "ClusterIP", "pod-same-node");
    expect(pod.outcome).toBe("rejected");
    expect(pod.evidence.find((e) => e.role === "rejects")?.rule.raw).toContain("has no endpoints");
    expect(r.findings.map((f) => f.code)).toContain("NoEndpointSlices");
  });
});

describe("TestEndpointSliceE2E (v1.20): masquerade rule in KUBE-SERVICES, 3-endpoint cascade", () => {
  const objects = {
    services: [service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.20.1.1", ports: [{ port: 0, protocol: "TCP" }] })],
    slices: [slice("ns1", "svc1", [{ ip: "10.0.1.1", node: "test-hostname" }, { ip: "10.0.1.2", node: "node2" }, { ip: "10.0.1.3", node: "node3" }], [{ port: 80 }])],
  };
  it.each(forms("TestEndpointSliceE2E.v1.20"))("$form: 1/3 each, masquerade decided in KUBE-SERVICES", ({ text }) => {
    const b = bundleOf({ dump: text, nodeName: "test-hostname", nodeIP: "192.168.0.2", ...objects });
    const r = explainService(b, "ns1", "svc1");
    const pod = client(r, 0, "ClusterIP", "pod-same-node");
    for (const e of pod.endpoints) expect(e.share).toBeCloseTo(1 / 3, 9);
    expect(Object.keys(shares(pod))).toEqual(["10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80"]);
    const ext = client(r, 0, "ClusterIP", "external");
    expect(ext.masquerade).toBe("always");
    expect(ext.evidence.find((e) => e.role.startsWith("marks"))?.rule.chain).toBe("KUBE-SERVICES");
    expect(r.nodes[0]!.notes).toContain("cluster CIDR 10.0.0.0/24 (from the rules (local-traffic detector))");
  });
});

describe("internalTrafficPolicy (v1.27)", () => {
  const svc = (itp: "Cluster" | "Local") =>
    service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.30.1.1", internalTrafficPolicy: itp, selector: { foo: "bar" }, ports: [{ port: 80, protocol: "TCP" }] });
  it.each(forms("TestInternalTrafficPolicyE2E-2-local-with-local-endpoint.v1.27"))("$form: Local with a local endpoint → only 10.0.1.1", ({ text }) => {
    const s = slice("ns1", "svc1", [{ ip: "10.0.1.1", node: "test-hostname" }, { ip: "10.0.1.2", node: "host1" }, { ip: "10.0.1.3", node: "host2" }], [{ port: 80 }]);
    const r = explainService(bundleOf({ dump: text, nodeName: "test-hostname", nodeIP: "192.168.0.2", clusterCIDRs: ["10.0.0.0/8"], services: [svc("Local")], slices: [s] }), "ns1", "svc1");
    const pod = client(r, 80, "ClusterIP", "pod-same-node");
    expect(shares(pod)).toEqual({ "10.0.1.1:80": 1 });
    expect(r.nodes[0]!.drift).toEqual([]);
    expect(client(r, 80, "ClusterIP", "external").reason).toMatch(/KUBE-SVL-/);
  });
  it.each(forms("TestInternalTrafficPolicyE2E-3-local-no-local-endpoints.v1.27"))("$form: Local without local endpoints → DROP, not REJECT", ({ text }) => {
    const s = slice("ns1", "svc1", [{ ip: "10.0.1.1", node: "host0" }, { ip: "10.0.1.2", node: "host1" }, { ip: "10.0.1.3", node: "host2" }], [{ port: 80 }]);
    const r = explainService(bundleOf({ dump: text, nodeName: "test-hostname", nodeIP: "192.168.0.2", clusterCIDRs: ["10.0.0.0/8"], services: [svc("Local")], slices: [s] }), "ns1", "svc1");
    const pod = client(r, 80, "ClusterIP", "pod-same-node");
    expect(pod.outcome).toBe("dropped");
    expect(pod.evidence.find((e) => e.role === "drops")?.rule.raw).toContain("has no local endpoints");
    expect(r.nodes[0]!.drift).toEqual([]);
  });
  it("drift: the API says Cluster with 3 endpoints but the node only knows the local one", () => {
    const text = fixture("kube-proxy/TestInternalTrafficPolicyE2E-2-local-with-local-endpoint.v1.27.iptables-save");
    const s = slice("ns1", "svc1", [{ ip: "10.0.1.1", node: "test-hostname" }, { ip: "10.0.1.2", node: "host1" }, { ip: "10.0.1.3", node: "host2" }], [{ port: 80 }]);
    const r = explainService(bundleOf({ dump: text, nodeName: "test-hostname", nodeIP: "192.168.0.2", clusterCIDRs: ["10.0.0.0/8"], services: [svc("Cluster")], slices: [s] }), "ns1", "svc1");
    expect(r.nodes[0]!.drift.map((d) => [d.kind, d.endpoint])).toEqual([["missing-on-node", "10.0.1.2:80"], ["missing-on-node", "10.0.1.3:80"]]);
  });
});

describe("LoadBalancer source ranges (v1.27)", () => {
  it.each(forms("TestLoadBalancer-source-ranges.v1.27"))("$form: ranges apply to the LB IPs, not to the NodePort", ({ text }) => {
    const svc = service("ns1", "svc1", {
      type: "LoadBalancer",
      clusterIP: "172.30.0.41",
      loadBalancerSourceRanges: ["192.168.0.0/24", "203.0.113.0/25"],
      ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }],
    }, { loadBalancer: { ingress: [{ ip: "1.2.3.4" }, { ip: "5.6.7.8" }] } });
    const s = slice("ns1", "svc1", [{ ip: "10.180.0.1" }], [{ name: "p80", port: 80 }]);
    const r = explainService(bundleOf({ dump: text, nodeName: "test-hostname", nodeIP: "192.168.0.2", clusterCIDRs: ["10.0.0.0/8"], services: [svc], slices: [s] }), "ns1", "svc1");
    expect(client(r, 80, "LoadBalancer", "external-denied").outcome).toBe("dropped");
    expect(client(r, 80, "LoadBalancer", "external").outcome).toBe("forwarded");
    expect(client(r, 80, "LoadBalancer", "external").masquerade).toBe("always");
    // pods (10.0.0.0/8) are outside the ranges: dropped at the LB IP, as the test's flow expects
    expect(client(r, 80, "LoadBalancer", "pod-same-node").outcome).toBe("dropped");
    const np = client(r, 3001, "NodePort", "external-denied");
    expect(np.outcome).toBe("forwarded");
    expect(np.masquerade).toBe("always");
  });
});

describe("no endpoints: REJECT (v1.27)", () => {
  it.each(forms("TestClusterIPReject.v1.27"))("$form", ({ text }) => {
    const svc = service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.30.0.41", ports: [{ name: "p80", port: 80, protocol: "TCP" }] });
    const r = explainService(bundleOf({ dump: text, nodeName: "test-hostname", nodeIP: "192.168.0.2", clusterCIDRs: ["10.0.0.0/8"], services: [svc], slices: [] }), "ns1", "svc1");
    expect(client(r, 80, "ClusterIP", "pod-same-node").outcome).toBe("rejected");
  });
  it("drift: a node that still rejects while the API has a ready endpoint", () => {
    const text = fixture("kube-proxy/TestClusterIPReject.v1.27.iptables-save");
    const svc = service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.30.0.41", ports: [{ name: "p80", port: 80, protocol: "TCP" }] });
    const s = slice("ns1", "svc1", [{ ip: "10.180.0.9" }], [{ name: "p80", port: 80 }]);
    const r = explainService(bundleOf({ dump: text, nodeName: "test-hostname", nodeIP: "192.168.0.2", clusterCIDRs: ["10.0.0.0/8"], services: [svc], slices: [s] }), "ns1", "svc1");
    expect(r.nodes[0]!.drift.map((d) => d.kind)).toEqual(["unexpected-reject", "missing-on-node"]);
  });
});

describe("terminating endpoints with externalTrafficPolicy Local (v1.27)", () => {
  const svc = terminatingLocalService();
  const cases = [
    {
      name: "1-ready-exist",
      eps: [readyEndpoint("10.0.1.1", "test-hostname"), readyEndpoint("10.0.1.2", "test-hostname"), servingTerminatingEndpoint("10.0.1.3", "test-hostname"), notServingEndpoint("10.0.1.4", "test-hostname"), readyEndpoint("10.0.1.5", "host-1")],
      pod: ["10.0.1.1:80", "10.0.1.2:80", "10.0.1.5:80"],
      external: ["10.0.1.1:80", "10.0.1.2:80"],
    },
    {
      name: "3-only-terminating-local",
      eps: [servingTerminatingEndpoint("10.0.1.2", "test-hostname"), servingTerminatingEndpoint("10.0.1.3", "test-hostname"), notServingEndpoint("10.0.1.4", "test-hostname"), readyEndpoint("10.0.1.5", "host-1")],
      pod: ["10.0.1.5:80"],
      external: ["10.0.1.2:80", "10.0.1.3:80"],
    },
    { name: "5-terminating-remote-only", eps: [servingTerminatingEndpoint("10.0.1.5", "host-1")], pod: ["10.0.1.5:80"], external: "dropped" },
    { name: "6-no-usable-endpoints", eps: [notServingEndpoint("10.0.1.5", "test-hostname"), notServingEndpoint("10.0.1.5", "host-1")], pod: "rejected", external: "rejected" },
  ];
  for (const c of cases) {
    it.each(forms(`TestEndpointSliceWithTerminatingEndpointsTrafficPolicyLocal-${c.name}.v1.27`))(`${c.name}, $form`, ({ text }) => {
      const s = slice("ns1", "svc1", c.eps, [{ port: 80 }]);
      const r = explainService(bundleOf({ dump: text, nodeName: "test-hostname", nodeIP: "192.168.0.2", clusterCIDRs: ["10.0.0.0/8"], services: [svc], slices: [s] }), "ns1", "svc1");
      const pod = client(r, 80, "ClusterIP", "pod-same-node");
      if (typeof c.pod === "string") expect(pod.outcome).toBe(c.pod);
      else expect(pod.endpoints.map((e) => e.endpoint)).toEqual(c.pod);
      const ext = client(r, 80, "LoadBalancer", "external");
      if (typeof c.external === "string") expect(ext.outcome).toBe(c.external);
      else {
        expect(ext.endpoints.map((e) => e.endpoint)).toEqual(c.external);
        expect(ext.masquerade).toBe("never"); // eTP=Local keeps the client's address
        for (const e of ext.endpoints) expect(e.share).toBeCloseTo(1 / c.external.length, 9);
      }
      expect(r.nodes[0]!.drift).toEqual([]);
      expect(r.limits.some((l) => l.startsWith("session affinity"))).toBe(true);
    });
  }
});

describe("IPv6 (ip6tables-save, v1.27, no local-traffic detector)", () => {
  it.each([
    { form: "restore buffer", text: fixture("kube-proxy/TestEnableLocalhostNodePortsIPv6.v1.27.ip6tables-save") },
    { form: "ip6tables-nft-save", text: fixture("node-format/TestEnableLocalhostNodePortsIPv6.v1.27.nft.ip6tables-save") },
  ])("$form: NodePort eTP=Local keeps external clients on the local endpoint, unmasqueraded", ({ text }) => {
    const svc = service("ns1", "svc1", {
      type: "NodePort",
      clusterIP: "fd00:ab34::20",
      clusterIPs: ["fd00:ab34::20"],
      ipFamilies: ["IPv6"],
      externalTrafficPolicy: "Local",
      ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 30001 }],
    });
    const s = { ...slice("ns1", "svc1", [{ ip: "ff06::c1" }, { ip: "ff06::c2", node: "test-hostname" }], [{ name: "p80", port: 80 }]), addressType: "IPv6" as const };
    const b = bundleOf({ dump: text, nodeName: "test-hostname", nodeIP: "2001:db8::2", section: "ip6tables-save", clusterCIDRs: ["fd00:10::/64"], services: [svc], slices: [s] });
    const r = explainService(b, "ns1", "svc1");
    const pod = client(r, 80, "ClusterIP", "pod-same-node");
    expect(pod.endpoints.map((e) => [e.endpoint, e.share])).toEqual([["[ff06::c1]:80", 0.5], ["[ff06::c2]:80", 0.5]]);
    expect(pod.masquerade).toBe("never");
    const ext = client(r, 30001, "NodePort", "external");
    expect(ext.source).toBe("2001:db8:ffff::10");
    expect(ext.endpoints.map((e) => [e.endpoint, e.share])).toEqual([["[ff06::c2]:80", 1]]);
    expect(ext.masquerade).toBe("never");
    const host = client(r, 30001, "NodePort", "host-network");
    expect(host.endpoints).toHaveLength(2);
    expect(host.masquerade).toBe("always");
  });
});
