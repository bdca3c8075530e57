// kube-proxy with an interface detector (--detect-local-mode BridgeInterface / InterfaceNamePrefix:
// pkg/proxy/util/localdetector.go NewDetectLocalByBridgeInterface, NewDetectLocalByInterfaceNamePrefix) tells pod
// traffic from the rest by the input interface: iptables `! -i cni0 -j KUBE-MARK-MASQ` on each ClusterIP rule
// (pkg/proxy/iptables/proxier.go syncProxyRules, localDetector.IfNotLocal()), nftables `iifname != "cni0" jump
// mark-for-masquerade` (pkg/proxy/nftables/proxier.go syncProxyRules, IfNotLocalNFT()). The node's notes still said
// "cluster CIDR X (from the nodes' podCIDRs)", as if the masquerade decisions depended on it; the note now names the
// interface rule, with its line, and says the CIDR only places the report's sample clients.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

describe("iptables mode, BridgeInterface detector (! -i cni0)", () => {
  const services = [service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.30.0.41", ports: [{ name: "p80", port: 80, protocol: "TCP" }] })];
  const slices = [slice("ns1", "svc1", [{ ip: "10.180.0.1", node: "node-2" }, { ip: "10.180.2.1", node: "node-1" }], [{ name: "p80", port: 80 }])];
  const dump = kubeProxyRules(services, slices, "10.180.0.0/16").replaceAll("! -s 10.180.0.0/16 ", "! -i cni0 ");
  const b = bundleOf({ dump, nodeName: "node-1", nodeIP: "192.168.0.2", services, slices });
  b.objects.nodes[0]!.spec = { podCIDR: "10.180.2.0/24", podCIDRs: ["10.180.2.0/24"] };
  const lines = dump.split("\n");
  const at = lines.findIndex((l) => /^-A KUBE-SVC-\S+ .*! -i cni0 -j KUBE-MARK-MASQ$/.test(l));
  it("the premise: the ClusterIP rule tests the input interface, no rule tests a source CIDR", () => {
    expect(at).toBeGreaterThan(0);
    expect(dump).not.toMatch(/! -s 10\.180\./);
  });
  const notes = explainService(b, "ns1", "svc1").nodes[0]!.notes;
  it("no note presents a cluster CIDR as what the decisions depend on", () => {
    expect(notes.filter((n) => n.startsWith("cluster CIDR "))).toEqual([]);
  });
  it("the detector's note names the interface rule with its line, and says the CIDR only places the sample clients", () => {
    const chain = lines[at]!.split(" ")[1]!;
    const note = notes.find((n) => n.startsWith("local traffic is detected by input interface"));
    expect(note).toContain(`(cni0, from the rules (kube-proxy's local-traffic detector): line ${at + 1} (${chain}) \`${lines[at]}\`)`);
    expect(note).toContain("kube-proxy tells pod traffic from the rest by the interface a packet arrives on, not by a CIDR");
    expect(note).toMatch(/the cluster CIDR 10\.180\.2\.0\/24 \(from the nodes' podCIDRs\) only places this report's sample clients$/);
  });
  it("InterfaceNamePrefix (! -i veth+): the same", () => {
    const prefixDump = kubeProxyRules(services, slices, "10.180.0.0/16").replaceAll("! -s 10.180.0.0/16 ", "! -i veth+ ");
    const pb = bundleOf({ dump: prefixDump, nodeName: "node-1", nodeIP: "192.168.0.2", services, slices, clusterCIDRs: ["10.180.0.0/16"] });
    const n = explainService(pb, "ns1", "svc1").nodes[0]!.notes;
    expect(n.filter((x) => x.startsWith("cluster CIDR "))).toEqual([]);
    const note = n.find((x) => x.startsWith("local traffic is detected by input interface (veth*, from the rules (kube-proxy's local-traffic detector): line "));
    expect(note).toMatch(/ ! -i veth\+ -j KUBE-MARK-MASQ`\): kube-proxy tells pod traffic from the rest by the interface/);
    expect(note).toContain("the cluster CIDR 10.180.0.0/16 (from the bundle's capture info) only places this report's sample clients");
  });
});

describe("nftables mode, BridgeInterface detector (iif != \"cni0\")", () => {
  // kube-proxy's TestOverallNFTablesRules ruleset with the BridgeInterface detector, real nft output (nft list text)
  const text = readFileSync("tests/fixtures/nftables/bridge-iif/TestOverallNFTablesRules-iif.nft.txt", "utf8");
  const b = structuredClone(readBundle("examples/nftables-lab"));
  delete b.nodes[0]!.sections["nft-json"];
  b.nodes[0]!.sections["nft-text"] = { command: "nft list ruleset", stdout: text, exitCode: 0 };
  const lines = text.split("\n");
  const at = lines.findIndex((l) => l.includes('ip daddr 172.30.0.41 iif != "cni0" jump mark-for-masquerade'));
  it("the premise: the bundle names a cluster CIDR, and the ClusterIP rule tests the input interface", () => {
    expect(b.capture.clusterCIDRs).toEqual(["10.0.0.0/8"]);
    expect(at).toBeGreaterThan(0);
  });
  const notes = explainService(b, "ns1", "svc1").nodes[0]!.notes;
  it("no note presents the cluster CIDR as what the decisions depend on; the detector's note names the rule and its line", () => {
    expect(notes.filter((n) => n.startsWith("cluster CIDR "))).toEqual([]);
    const note = notes.find((n) => n.startsWith("local traffic is detected by input interface"));
    expect(note).toContain(`(cni0, from the rules (kube-proxy's local-traffic detector): line ${at + 1} (service-ULMVA6XW-ns1/svc1/tcp/p80) \`ip daddr 172.30.0.41 iif != "cni0" jump mark-for-masquerade\`)`);
    expect(note).toContain("the cluster CIDR 10.0.0.0/8 (from the bundle's capture info) only places this report's sample clients");
  });
});
