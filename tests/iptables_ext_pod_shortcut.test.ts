// externalTrafficPolicy Local (kube-proxy's own TestOverallIPTablesRules dump, ns2/svc2): kube-proxy's external chain
// starts with `-s CLUSTER-CIDR "pod traffic for … external destinations" -j KUBE-SVC-…`, then `"masquerade LOCAL
// traffic …" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ` (pkg/proxy/iptables/proxier.go syncProxyRules, the
// external chain). A pod's packet to the NodePort or LoadBalancer IP takes the first rule into KUBE-SVC, is DNATed
// there, and never comes back to the marking rule: that jump decides that it is not masqueraded, and the answer names it.
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, fixture, overallObjects } from "./helpers/bundles.ts";

const EXT = "KUBE-EXT-GNZBNJ2PO5MGZ6GT";
const SVC = "KUBE-SVC-GNZBNJ2PO5MGZ6GT";

describe("pods at an externalTrafficPolicy Local entry point", () => {
  const { services, slices } = overallObjects("test-node", false);
  const b = bundleOf({ dump: fixture("kube-proxy/TestOverallIPTablesRules.iptables-save"), nodeName: "test-node", nodeIP: "192.168.1.2", services, slices });
  const r = explainService(b, "ns2", "svc2");
  const dump = fixture("kube-proxy/TestOverallIPTablesRules.iptables-save").split("\n");
  const lineOf = (needle: string) => dump.findIndex((l) => l.includes(needle)) + 1;
  const podRule = lineOf(`-A ${EXT} -m comment --comment "pod traffic for ns2/svc2:p80 external destinations"`);
  const masqLocal = lineOf(`-A ${EXT} -m comment --comment "masquerade LOCAL traffic for ns2/svc2:p80 external destinations"`);

  for (const kind of ["NodePort", "LoadBalancer"] as const) {
    it(`${kind}: a pod is not masqueraded because line ${podRule} sends it to ${SVC} before line ${masqLocal}`, () => {
      const entry = r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === kind)!;
      const pods = entry.clients.filter((c) => c.client === "pod-same-node" || c.client === "pod-other-node");
      expect(pods.length).toBeGreaterThan(0);
      for (const pod of pods) {
        expect(pod.outcome).toBe("forwarded");
        expect(pod.masquerade).toBe("never");
        expect(pod.reason).toBe(
          `bypasses externalTrafficPolicy Local: line ${podRule} (${EXT}) short-circuits pod traffic to ${SVC}, every endpoint; not masqueraded: it skips line ${masqLocal}, a mark for masquerade; no rule on its path marks it`,
        );
        const decided = pod.evidence.find((e) => e.rule.line === podRule);
        // the same rule sent it to every endpoint (the short-circuit) and past the marking rule: one entry, both roles
        expect(decided?.role).toBe(
          `short-circuits pod traffic to ${SVC}, every endpoint of the Service: kube-proxy exempts it from externalTrafficPolicy Local; takes the packet past line ${masqLocal}, a rule that marks for masquerade`,
        );
        expect(pod.evidence.find((e) => e.rule.line === masqLocal)?.role).toMatch(/^does not mark: not reached: line \d+ jumps to /);
      }
      // a host-network client is not a pod: the first rule does not take it, and line masqLocal marks it
      const host = entry.clients.find((c) => c.client === "host-network")!;
      expect(host.masquerade).toBe("always");
      expect(host.evidence.find((e) => e.rule.line === masqLocal)?.role).toBe("marks for masquerade (KUBE-MARK-MASQ)");
    });
  }
});
