// A reason that names several rules names the chain of each: "marked by line 23, 26 (KUBE-SERVICES)" sent an operator
// to KUBE-SERVICES for line 26, which is in the endpoint's KUBE-SEP chain (the JSON evidence had it right).
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import type { ServiceReport } from "../src/service/report.ts";
import { rulesInChains } from "../src/service/trace.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules, sepChain, svcChain } from "./helpers/fake_node_rules.ts";

const hairpin = (r: ServiceReport, kind: string) => r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === kind)!.clients.find((c) => c.client === "hairpin")!;

describe("rulesInChains", () => {
  it("one chain: the lines, then the chain; several: each group with its chain", () => {
    const r = (chain: string, line: number) => ({ table: "nat", chain, line, raw: "" });
    expect(rulesInChains([r("A", 3), r("A", 9)])).toBe("line 3, 9 (A)");
    expect(rulesInChains([r("A", 3), r("B", 9), r("A", 12)])).toBe("line 3, 12 (A), line 9 (B)");
  });
});

describe("the masquerade reason of a client marked in two chains", () => {
  it("iptables: an endpoint outside the detector's CIDR reaching itself, marked in KUBE-SVC and KUBE-SEP", () => {
    // the local-traffic detector 10.0.0.0/24 does not cover the endpoint 10.0.1.1 (as in kube-proxy's e2e dumps)
    const services = [service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.20.1.1", ports: [{ port: 80, protocol: "TCP" }] })];
    const slices = [slice("ns1", "svc1", [{ ip: "10.0.1.1", node: "node1" }], [{ port: 80 }])];
    const dump = kubeProxyRules(services, slices, "10.0.0.0/24");
    const lines = dump.split("\n");
    const at = (needle: RegExp) => lines.findIndex((l) => needle.test(l)) + 1;
    const svc = svcChain("ns1/svc1", "tcp");
    const sep = sepChain("ns1/svc1", "tcp", "10.0.1.1:80");
    const svcMark = at(new RegExp(`^-A ${svc} .*-j KUBE-MARK-MASQ`));
    const sepMark = at(new RegExp(`^-A ${sep} .*-j KUBE-MARK-MASQ`));
    expect(svcMark).toBeGreaterThan(0);
    expect(sepMark).toBeGreaterThan(0);
    const r = explainService(bundleOf({ dump, nodeName: "node1", nodeIP: "192.168.0.2", services, slices }), "ns1", "svc1");
    const v = hairpin(r, "ClusterIP");
    const [first, second] = svcMark < sepMark ? [`line ${svcMark} (${svc})`, `line ${sepMark} (${sep})`] : [`line ${sepMark} (${sep})`, `line ${svcMark} (${svc})`];
    expect(v.reason).toMatch(new RegExp(`^masqueraded: marked by ${escape(first)}, ${escape(second)}, SNATed by line \\d+$`));
  });

  it("nftables (examples/nftables-lab): svc4's endpoint to its externalIP, marked in the external and the endpoint chain", () => {
    const r = explainService(readBundle("examples/nftables-lab"), "ns4", "svc4");
    const v = hairpin(r, "ExternalIP");
    expect(v.reason).toMatch(/^masqueraded: marked by (line|handle) \d+ \(external-[A-Z0-9]+-ns4\/svc4\/tcp\/p80\), (line|handle) \d+ \(endpoint-[A-Z0-9]+-ns4\/svc4\/tcp\/p80__10\.180\.0\.5\/80\), SNATed by/);
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
