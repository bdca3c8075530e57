// The packet answer's `masquerade:` line of a packet no branch forwards (audit s20b finding 6): kube-proxy's own
// TestOverallIPTablesRules dump (pkg/proxy/iptables/proxier_test.go), ns5/svc5 with loadBalancerSourceRanges
// 203.0.113.0/25: 203.0.113.130 at the LoadBalancer IP is dropped by KUBE-PROXY-FIREWALL. Nothing is masqueraded, so the
// line says masquerade does not apply and then the fate, not "masquerade: dropped by line N".
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { renderPacketTree } from "../src/report/packet_tree.ts";
import { bundleOf, fixture, overallObjects } from "./helpers/bundles.ts";

describe("packet tree: masquerade of a dropped packet", () => {
  const { services, slices } = overallObjects("test-node", false);
  const b = bundleOf({ dump: fixture("kube-proxy/TestOverallIPTablesRules.iptables-save"), nodeName: "test-node", nodeIP: "192.168.1.2", services, slices });
  const r = explainService(b, "ns5", "svc5", { packet: { source: "203.0.113.130", destination: "5.6.7.8", port: 80, protocol: "tcp" } });

  it("says masquerade does not apply, then the rule that dropped it", () => {
    const a = r.packet![0]!;
    expect(a.outcome).toBe("dropped");
    expect(a.masquerade).toBe("n/a");
    const masq = renderPacketTree(r).split("\n").filter((l) => l.startsWith("  masquerade:"));
    expect(masq).toEqual([expect.stringMatching(/^ {2}masquerade: does not apply — dropped by line \d+ \(KUBE-PROXY-FIREWALL\)$/)]);
  });

  it("a forwarded packet keeps its masquerade reason", () => {
    const ok = explainService(b, "ns5", "svc5", { packet: { source: "203.0.113.10", destination: "5.6.7.8", port: 80, protocol: "tcp" } });
    expect(renderPacketTree(ok)).toMatch(/^ {2}masquerade: masqueraded: /m);
  });
});
