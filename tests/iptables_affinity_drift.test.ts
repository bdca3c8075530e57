// iptables mode: sessionAffinity ClientIP is a `-m recent --rcheck --seconds N --reap` rule per endpoint in the
// Service's KUBE-SVC/KUBE-SVL chain (pkg/proxy/iptables/proxier.go writeServiceToEndpointRules, N =
// StickyMaxAgeSeconds); sessionAffinity None writes none. kube-proxy's own TestOverallIPTablesRules dump has them for
// ns5/svc5 (10800 s), in its three forms (restore buffer, iptables-nft-save, iptables-legacy-save).
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, fixture, overallObjects, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules, sepChain, svcChain } from "./helpers/fake_node_rules.ts";

const FORMS = [
  ["restore buffer", "kube-proxy/TestOverallIPTablesRules.iptables-save"],
  ["iptables-nft-save", "node-format/TestOverallIPTablesRules.nft.iptables-save"],
  ["iptables-legacy-save", "node-format/TestOverallIPTablesRules.legacy.iptables-save"],
] as const;
const affinityDrift = (path: string, affinity: boolean, timeout?: number) => {
  const { services, slices } = overallObjects("test-node", affinity);
  if (timeout !== undefined) services.find((s) => s.metadata.name === "svc5")!.spec!.sessionAffinityConfig = { clientIP: { timeoutSeconds: timeout } };
  const b = bundleOf({ dump: fixture(path), nodeName: "test-node", nodeIP: "192.168.1.2", services, slices });
  return explainService(b, "ns5", "svc5").nodes[0]!.drift.filter((d) => d.kind === "affinity-timeout").map((d) => d.message);
};

describe.each(FORMS)("%s", (_form, path) => {
  it("as the API asks (ClientIP, 10800 s): no drift", () => {
    expect(affinityDrift(path, true)).toEqual([]);
  });
  it("another timeout in the API, or none: the node's recent rules are stale", () => {
    expect(affinityDrift(path, true, 60)).toEqual([expect.stringMatching(/^ns5\/svc5:p80: KUBE-SVC-\w+ on test-node keeps a client on its endpoint for 10800 s \(-m recent --rcheck\), the API asks for ClientIP session affinity of 60 s: the node's rules are stale$/)]);
    expect(affinityDrift(path, false)).toEqual([expect.stringContaining("the API asks for no session affinity")]);
  });
});

// kube-proxy without a local-traffic detector (no clusterCIDR, detect-local-mode ClusterCIDR: NoOpLocalDetector) writes
// no `! -s CIDR -j KUBE-MARK-MASQ` in KUBE-SVC, so a pod's verdict names no rule of that chain; the recent rules are
// still there (writeServiceToEndpointRules writes them whatever the detector). The chain is the one the trace entered.
describe("no local-traffic detector (no clusterCIDR)", () => {
  const NODE = "node1";
  const slices = [slice("default", "web", [{ ip: "10.244.1.5", node: NODE }, { ip: "10.244.2.7", node: "node2" }], [{ port: 8080 }])];
  const web = (affinity: boolean) => [service("default", "web", {
    type: "ClusterIP",
    clusterIP: "10.96.100.10",
    ports: [{ port: 80, protocol: "TCP" }],
    ...(affinity ? { sessionAffinity: "ClientIP" as const, sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } } } : { sessionAffinity: "None" as const }),
  })];
  /** kubeProxyRules without the detector's rule; with `recent`, the recent rules kube-proxy writes for ClientIP 10800 s. */
  const rules = (recent: boolean) => {
    const svc = svcChain("default/web", "tcp");
    let text = kubeProxyRules(web(false), slices, "10.244.0.0/16").replace(/^-A KUBE-SVC-\S+ .* ! -s 10\.244\.0\.0\/16 -j KUBE-MARK-MASQ\n/m, "");
    if (recent) {
      const eps = ["10.244.1.5:8080", "10.244.2.7:8080"];
      const rcheck = eps.map((ep) => {
        const sep = sepChain("default/web", "tcp", ep);
        return `-A ${svc} -m comment --comment "default/web -> ${ep}" -m recent --rcheck --seconds 10800 --reap --name ${sep} --mask 255.255.255.255 --rsource -j ${sep}`;
      }).join("\n");
      text = text.replace(new RegExp(`^(-A ${svc} -m comment --comment "default/web -> 10\\.244\\.1\\.5:8080" -m statistic)`, "m"), `${rcheck}\n$1`);
      for (const ep of eps) {
        const sep = sepChain("default/web", "tcp", ep);
        text = text.replace(`-A ${sep} -m comment --comment default/web -m tcp -p tcp -j DNAT`, `-A ${sep} -m comment --comment default/web -m recent --set --name ${sep} --mask 255.255.255.255 --rsource -m tcp -p tcp -j DNAT`);
      }
      expect(text.match(/--rcheck/g)?.length).toBe(2);
      expect(text.match(/--set --name/g)?.length).toBe(2);
    }
    expect(text).not.toContain("! -s 10.244.0.0/16");
    return text;
  };
  const drift = (affinity: boolean, recent: boolean) => {
    const b = bundleOf({ dump: rules(recent), nodeName: NODE, nodeIP: "192.168.0.11", services: web(affinity), slices });
    return explainService(b, "default", "web").nodes[0]!.drift.filter((d) => d.kind === "affinity-timeout").map((d) => d.message);
  };
  const chain = svcChain("default/web", "tcp");
  it("the API asks for ClientIP 10800 s, the node has no recent rule: stale", () => {
    expect(drift(true, false)).toEqual([`default/web: ${chain} on node1 has no session-affinity (recent) rule, the API asks for ClientIP session affinity of 10800 s: the node's rules are stale`]);
  });
  it("the API asks for none, the node keeps clients 10800 s: stale", () => {
    expect(drift(false, true)).toEqual([`default/web: ${chain} on node1 keeps a client on its endpoint for 10800 s (-m recent --rcheck), the API asks for no session affinity: the node's rules are stale`]);
  });
  it("both agree: no drift", () => {
    expect(drift(true, true)).toEqual([]);
    expect(drift(false, false)).toEqual([]);
  });
});
