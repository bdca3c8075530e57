// A dual-stack Service (tests/fixtures/dual-stack): kube-proxy runs one proxier per IP family, each reading only the
// EndpointSlices of its addressType (pkg/proxy/proxier.go NewDualStackProxier; endpointslicecache.go), so each family's
// rules send only to that family's endpoints; and a pod's client address of a family is its status.podIPs entry of
// that family (podIP is only the first).
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import type { ServiceReport } from "../src/service/report.ts";
import { renderServiceText } from "../src/report/service_text.ts";

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
    // nothing said missing: the IPv6 half is unverifiable (not read), the IPv4 half matches
    expect(n.drift.map((d) => d.kind)).toEqual(["unverifiable"]);
    expect(n.notes).toContain("no ip6tables-save output for this node");
  });

  it("the IPv6 ClusterIP is asked of a pod's IPv6 address (status.podIPs), not of its IPv4 podIP", () => {
    const r = explainService(readBundle(DIR), "default", "web", { nodes: ["k8s1"] });
    const v6pod = clusterIP(r, true).clients.find((c) => c.client === "pod-same-node")!;
    // no pod of k8s1 other than an endpoint: a host of k8s1's IPv6 pod CIDR (spec.podCIDRs), inside the cluster CIDR
    expect(v6pod.source).toMatch(/^fd00:10:244:/);
    // written as iptables, nft and the kernel write it (canonical text), not fd00:10:244:0:0:0:0:c8
    expect(v6pod.source).toBe("fd00:10:244::c8");
    // `! -s fd00:10:244::/56 … -j KUBE-MARK-MASQ` does not apply to it
    expect(v6pod.masquerade).toBe("never");
    const v4pod = clusterIP(r, false).clients.find((c) => c.client === "pod-same-node")!;
    expect(v4pod.source).toMatch(/^10\.244\.0\./);
    expect(v4pod.masquerade).toBe("never");
  });
});

describe("which dump a rule line is in", () => {
  it("dual-stack in iptables mode: each entry point and packet names the dump its lines are numbered in", () => {
    const r = explainService(readBundle(DIR), "default", "web", { nodes: ["k8s1"] });
    // both dumps number from 1: "line 53" is KUBE-SVC-WEB4's rule in one and KUBE-SVC-WEB6's in the other
    expect(clusterIP(r, false).ruleLines).toBe("iptables-save");
    expect(clusterIP(r, true).ruleLines).toBe("ip6tables-save");
    const ask = (source: string, destination: string) =>
      explainService(readBundle(DIR), "default", "web", { nodes: ["k8s1"], packet: { source, destination, port: 80, protocol: "tcp" } }).packet![0]!;
    expect(ask("fd00:10:244::c8", "fd00:10:96::a").ruleLines).toBe("ip6tables-save");
    expect(ask("10.244.0.200", "10.96.100.10").ruleLines).toBe("iptables-save");
    const text = renderServiceText(r);
    expect(text).toContain("ClusterIP [fd00:10:96::a]:80/tcp  (lines of ip6tables-save)");
    expect(text).toContain("ClusterIP 10.96.100.10:80/tcp  (lines of iptables-save)");
  });
  it("one family, one dump: no dump named", () => {
    const b = readBundle(DIR);
    delete b.nodes[0]!.sections["ip6tables-save"];
    b.objects.services[0]!.spec!.ipFamilies = ["IPv4"];
    b.objects.services[0]!.spec!.clusterIPs = ["10.96.100.10"];
    const r = explainService(b, "default", "web", { nodes: ["k8s1"] });
    expect(r.nodes[0]!.ports.flatMap((p) => p.entryPoints).map((e) => e.ruleLines)).toEqual([undefined, undefined]);
  });
});

describe("IPv6 addresses written another way are the same address", () => {
  const ask = (destination: string) =>
    explainService(readBundle(DIR), "default", "web", { nodes: ["k8s1"], packet: { source: "2001:db8:ffff::1", destination, port: 30080, protocol: "tcp" } }).packet![0]!;
  it("a NodePort to the node's IPv6 address, in upper case or uncompressed: the answer of the canonical form", () => {
    const canonical = ask("2001:db8::10");
    expect(canonical.outcome).toBe("forwarded");
    for (const d of ["2001:DB8::10", "2001:db8:0:0:0:0:0:10", "2001:0db8::0010"]) {
      const a = ask(d);
      expect(a.outcome, d).toBe("forwarded");
      expect(a.caveats, d).toEqual(canonical.caveats);
    }
  });
  it("the ClusterIP written otherwise gets no 'not an address of Service' caveat", () => {
    const r = explainService(readBundle(DIR), "default", "web", { nodes: ["k8s1"], packet: { source: "fd00:10:244::c8", destination: "FD00:10:96:0:0:0:0:A", port: 80, protocol: "tcp" } });
    expect(r.packet![0]!.caveats.join("\n")).not.toMatch(/is not an address of Service/);
  });
  it("an EndpointSlice address written otherwise is not both missing and stale", () => {
    const b = readBundle(DIR);
    const v6 = b.objects.endpointSlices.find((s) => s.addressType === "IPv6")!;
    v6.endpoints![0]!.addresses = v6.endpoints![0]!.addresses.map((a) => (a === "fd00:10:244::7" ? "FD00:10:244:0:0:0:0:7" : a));
    expect(JSON.stringify(b.objects.endpointSlices)).toContain("FD00:10:244:0:0:0:0:7");
    expect(explainService(b, "default", "web", { nodes: ["k8s1"] }).nodes[0]!.drift).toEqual([]);
  });
});

describe("addresses of a family the Service has no ClusterIP of", () => {
  it("an IPv6 externalIP and LoadBalancer IP of a single-stack IPv4 Service: a finding, no entry point", () => {
    const b = readBundle(DIR);
    const s = b.objects.services[0]!;
    s.spec!.ipFamilies = ["IPv4"];
    s.spec!.clusterIPs = ["10.96.100.10"];
    s.spec!.externalIPs = ["192.0.2.70", "2001:db8:e::70"];
    const r = explainService(b, "default", "web", { nodes: ["k8s1"] });
    const f = r.findings.find((x) => x.code === "OtherFamilyAddress")!;
    expect(f.message).toMatch(/^2001:db8:e::70 is an address of an IP family the Service has no ClusterIP of \(ipFamilies IPv4\): kube-proxy does no family translation/);
    expect(r.nodes[0]!.ports.flatMap((p) => p.entryPoints).map((e) => e.destination)).not.toContain("[2001:db8:e::70]:80/tcp");
    // dual-stack: none
    expect(explainService(readBundle(DIR), "default", "web", { nodes: ["k8s1"] }).findings.map((x) => x.code)).not.toContain("OtherFamilyAddress");
  });
});
