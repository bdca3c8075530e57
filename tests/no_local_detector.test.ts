// kube-proxy with detect-local-mode ClusterCIDR and no clusterCIDR runs without a local-traffic detector
// (pkg/proxy/util/localdetector.go: a no-op detector, IsImplemented() false): it writes no ClusterIP masquerade rule
// (iptables proxier.go syncProxyRules: `if masqueradeAll … else if localDetector.IsImplemented()`), and in IPVS mode
// `KUBE-CLUSTER-IP src,dst` instead of the detector's `dst,dst` rule. The report named a "cluster CIDR" from elsewhere
// as if the masquerade depended on it, and explained the unmasqueraded client by an endpoint's own hairpin rule.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

describe("iptables mode without a local-traffic detector", () => {
  const services = [service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.30.0.41", ports: [{ name: "p80", port: 80, protocol: "TCP" }] })];
  const slices = [slice("ns1", "svc1", [{ ip: "10.180.0.1", node: "node-2" }, { ip: "10.180.2.1", node: "node-1" }], [{ name: "p80", port: 80 }])];
  // kube-proxy's rules with no detector: the ClusterIP rule `… ! -s CIDR -j KUBE-MARK-MASQ` is not written
  const dump = kubeProxyRules(services, slices, "10.0.0.0/8").split("\n").filter((l) => !/cluster IP" .*-j KUBE-MARK-MASQ$/.test(l)).join("\n");
  const b = bundleOf({ dump, nodeName: "node-1", nodeIP: "192.168.0.2", services, slices, clusterCIDRs: ["10.0.0.0/8"] });
  it("the premise: no rule of a KUBE-SVC chain marks for masquerade", () => {
    expect(dump).not.toMatch(/-A KUBE-SVC-\S+ .*KUBE-MARK-MASQ/);
  });
  const r = explainService(b, "ns1", "svc1");
  const notes = r.nodes[0]!.notes.join("\n");
  it("the note says kube-proxy runs without a detector, and that the cluster CIDR only places the sample clients", () => {
    // no kube-proxy configuration in the bundle, no podCIDR on the Node: a NodeCIDR kube-proxy would have written no rule
    expect(notes).toContain(
      "no local-traffic detector in node-1's rules: kube-proxy runs without one (detect-local-mode ClusterCIDR (the default) with no IPv4 clusterCIDR: pkg/proxy/util/localdetector.go; with NodeCIDR, kube-proxy writes no rule before Node node-1 has a podCIDR (it has none); kube-proxy's configuration, not in the bundle, would say)",
    );
    expect(notes).toContain("The cluster CIDR 10.0.0.0/8 (from the bundle's capture info) only places this report's sample clients");
    expect(notes).not.toMatch(/^cluster CIDR /m);
  });
  it("the client from outside is not masqueraded because no ClusterIP masquerade rule exists, not because of a hairpin rule", () => {
    const ext = r.nodes[0]!.ports[0]!.entryPoints[0]!.clients.find((c) => c.client === "external")!;
    expect(ext.masquerade).toBe("never");
    expect(ext.reason).toMatch(/^not masqueraded: no rule on the path marks it: the node's rules have no local-traffic detector \(kube-proxy's clusterCIDR has no IPv4 range, as far as the bundle tells: its configuration is not in it\)/);
    expect(ext.reason).not.toContain("KUBE-SEP");
  });
  it("a packet question to the ClusterIP says the same", () => {
    const a = explainService(b, "ns1", "svc1", { packet: { source: "203.0.113.10", destination: "172.30.0.41", port: 80, protocol: "tcp" } }).packet![0]!;
    expect(a.reason).toMatch(/^not masqueraded: no rule on the path marks it: the node's rules have no local-traffic detector/);
  });
  it("with the detector (the same rules as kube-proxy writes them with clusterCIDR set) the note is the cluster CIDR's", () => {
    const withDetector = bundleOf({ dump: kubeProxyRules(services, slices, "10.0.0.0/8"), nodeName: "node-1", nodeIP: "192.168.0.2", services, slices });
    const n = explainService(withDetector, "ns1", "svc1").nodes[0]!.notes.join("\n");
    expect(n).toContain("cluster CIDR 10.0.0.0/8 (from the rules (local-traffic detector))");
    expect(n).not.toContain("no local-traffic detector");
  });
});

describe("IPVS mode without a local-traffic detector (KUBE-CLUSTER-IP src,dst)", () => {
  const b = structuredClone(readBundle("examples/ipvs-lab"));
  const sec = b.nodes[0]!.sections["iptables-save"]!;
  // the rule kube-proxy writes in place of the detector's: pkg/proxy/ipvs/proxier.go writeIptablesRules
  sec.stdout = sec.stdout.replace(
    /^-A KUBE-SERVICES ! -s 192\.168\.0\.0\/16 (-m comment --comment "Kubernetes service cluster ip \+ port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP) dst,dst -j KUBE-MARK-MASQ$/m,
    "-A KUBE-SERVICES $1 src,dst -j KUBE-MARK-MASQ",
  );
  it("the note says so, and what kube-proxy masquerades then", () => {
    expect(sec.stdout).toContain("KUBE-CLUSTER-IP src,dst -j KUBE-MARK-MASQ");
    const r = explainService(b, "kube-system", "kube-dns");
    expect(r.nodes[0]!.notes.join("\n")).toContain("so it masquerades ClusterIP traffic only from a Service address (KUBE-CLUSTER-IP src,dst");
    const ext = r.nodes[0]!.ports[0]!.entryPoints[0]!.clients.find((c) => c.client === "external")!;
    expect(ext.reason).toMatch(/the node's rules have no local-traffic detector \(kube-proxy's clusterCIDR has no IPv4 range, (as far as the bundle tells|or with detect-local-mode NodeCIDR)/);
  });
});

describe("nftables mode without a local-traffic detector", () => {
  // kube-proxy's TestOverallNFTablesRules ruleset (nft list text) as kube-proxy writes it without a detector: the
  // ClusterIP rules `ip daddr VIP ip saddr != 10.0.0.0/8 jump mark-for-masquerade` and the external chain's
  // `ip saddr 10.0.0.0/8 goto service-… comment "short-circuit pod traffic"` are written only
  // `if masqueradeAll … else if localDetector.IsImplemented()` (pkg/proxy/nftables/proxier.go syncProxyRules)
  const full = readFileSync("tests/fixtures/nftables/TestOverallNFTablesRules.nft.txt", "utf8");
  const withText = (text: string) => {
    const b = structuredClone(readBundle("examples/nftables-lab"));
    const sections = b.nodes[0]!.sections;
    delete sections["nft-json"];
    sections["nft-text"] = { command: "nft list ruleset", stdout: text, exitCode: 0 };
    return b;
  };
  const none = full.split("\n").filter((l) => !l.includes("10.0.0.0/8")).join("\n");
  const b = withText(none);
  it("the premise: no service chain marks ClusterIP traffic, and the bundle names a cluster CIDR", () => {
    expect(none).not.toMatch(/ip daddr \S+ .*jump mark-for-masquerade/);
    expect(b.capture.clusterCIDRs).toEqual(["10.0.0.0/8"]);
  });
  const r = explainService(b, "ns1", "svc1");
  const notes = r.nodes[0]!.notes.join("\n");
  it("the note says kube-proxy runs without a detector, and that the cluster CIDR only places the sample clients", () => {
    expect(notes).toContain("no local-traffic detector in test-node's rules: kube-proxy runs without one (detect-local-mode ClusterCIDR (the default) with no IPv4 clusterCIDR");
    expect(notes).toContain(`"short-circuit pod traffic" rule in the external chains (pkg/proxy/nftables/proxier.go syncProxyRules)`);
    expect(notes).toContain("The cluster CIDR 10.0.0.0/8 (from the bundle's capture info) only places this report's sample clients");
    expect(notes).not.toMatch(/^cluster CIDR /m);
  });
  it("the client from outside is not masqueraded because no ClusterIP masquerade rule exists, not because of the endpoint's hairpin rule", () => {
    const ext = r.nodes[0]!.ports[0]!.entryPoints[0]!.clients.find((c) => c.client === "external")!;
    expect(ext.masquerade).toBe("never");
    expect(ext.reason).toMatch(/^not masqueraded: no rule on the path marks it: the node's rules have no local-traffic detector .*pkg\/proxy\/nftables\/proxier\.go/);
    expect(ext.reason).not.toContain("endpoint-");
  });
  it("a packet question to the ClusterIP says the same", () => {
    const a = explainService(b, "ns1", "svc1", { packet: { source: "203.0.113.10", destination: "172.30.0.41", port: 80, protocol: "tcp" } }).packet![0]!;
    expect(a.reason).toMatch(/^not masqueraded: no rule on the path marks it: the node's rules have no local-traffic detector/);
  });
  it("with masqueradeAll (ClusterIP rules without a source condition) there is no such note", () => {
    const all = full.split("\n").filter((l) => !l.includes("short-circuit pod traffic")).join("\n").replaceAll(" ip saddr != 10.0.0.0/8", "");
    expect(all).toMatch(/ip daddr 172\.30\.0\.41 jump mark-for-masquerade/);
    const n = explainService(withText(all), "ns1", "svc1").nodes[0]!.notes.join("\n");
    expect(n).not.toContain("no local-traffic detector");
    expect(n).toContain("masquerades all traffic to ClusterIPs");
  });
  it("with the detector (the ruleset as kube-proxy writes it with clusterCIDR set) the note is the cluster CIDR's", () => {
    const n = explainService(withText(full), "ns1", "svc1").nodes[0]!.notes.join("\n");
    expect(n).toContain("cluster CIDR 10.0.0.0/8 (from the rules (local-traffic detector))");
    expect(n).not.toContain("no local-traffic detector");
  });
});
