// iptables mode: sessionAffinity ClientIP is a `-m recent --rcheck --seconds N --reap` rule per endpoint in the
// Service's KUBE-SVC/KUBE-SVL chain (pkg/proxy/iptables/proxier.go writeServiceToEndpointRules, N =
// StickyMaxAgeSeconds); sessionAffinity None writes none. kube-proxy's own TestOverallIPTablesRules dump has them for
// ns5/svc5 (10800 s), in its three forms (restore buffer, iptables-nft-save, iptables-legacy-save).
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, fixture, overallObjects } from "./helpers/bundles.ts";

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
