// nftables mode: kube-proxy writes an `affinity-…` set per endpoint when the Service asks for ClientIP affinity, with
// its timeout, and deletes every other affinity set at once (pkg/proxy/nftables/proxier.go syncProxyRules,
// activeAffinitySets; writeServiceToEndpointRules). A node without the sets for a ClientIP Service, or with sets for
// a Service set to None, has stale rules, as iptables mode's recent rules and IPVS persistence are (drift.ts).
// examples/nftables-lab is kube-proxy's own TestOverallNFTablesRules state: ns5/svc5 is ClientIP 10800 s with sets.
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";

const lab = (edit: (svc: ReturnType<typeof readBundle>["objects"]["services"][number]) => void, name: string) => {
  const b = readBundle("examples/nftables-lab");
  edit(b.objects.services.find((s) => s.metadata.name === name)!);
  return b;
};
const affinity = (r: ReturnType<typeof explainService>) => r.nodes[0]!.drift.filter((d) => d.kind === "affinity-timeout");

describe("nftables affinity sets against the API", () => {
  it("as the API asks (svc5 ClientIP 10800 s with its sets; svc1 None without): no drift", () => {
    const r5 = explainService(readBundle("examples/nftables-lab"), "ns5", "svc5");
    expect(affinity(r5)).toEqual([]);
    expect(r5.nodes[0]!.ports[0]!.entryPoints[0]!.balancing.sessionAffinity).toBe("ClientIP, 10800 s");
    expect(affinity(explainService(readBundle("examples/nftables-lab"), "ns1", "svc1"))).toEqual([]);
  });

  it("sets while the API asks for None: stale, and balancing.sessionAffinity says what the node does", () => {
    const r = explainService(lab((s) => {
      s.spec!.sessionAffinity = "None";
      delete s.spec!.sessionAffinityConfig;
    }, "svc5"), "ns5", "svc5");
    const d = affinity(r);
    expect(d.map((x) => x.message)).toEqual([
      expect.stringMatching(/^ns5\/svc5:p80: test-node has 1 affinity set\(s\) \(e\.g\. affinity-\w+-ns5\/svc5\/tcp\/p80__10\.180\.0\.3\/80, keeping a client for 10800 s\) that keep clients on their endpoint, the API asks for no session affinity: the node's rules are stale$/),
    ]);
    expect(r.findings.map((f) => f.code)).toContain("Drift/affinity-timeout");
    expect(r.nodes[0]!.ports[0]!.entryPoints.map((e) => e.balancing.sessionAffinity)).toEqual(r.nodes[0]!.ports[0]!.entryPoints.map(() => "ClientIP on the node: 10800 s (affinity sets)"));
  });

  it("no set while the API asks for ClientIP: stale", () => {
    const r = explainService(lab((s) => {
      s.spec!.sessionAffinity = "ClientIP";
      s.spec!.sessionAffinityConfig = { clientIP: { timeoutSeconds: 600 } };
    }, "svc1"), "ns1", "svc1");
    expect(affinity(r).map((x) => x.message)).toEqual([
      "ns1/svc1:p80: test-node has no affinity set for the port's endpoints (clients are balanced per connection), the API asks for ClientIP session affinity of 600 s: the node's rules are stale",
    ]);
    expect(r.nodes[0]!.ports[0]!.entryPoints[0]!.balancing.sessionAffinity).toBe("none on the node (no affinity set)");
  });

  it("another timeout: stale, as before", () => {
    const r = explainService(lab((s) => void (s.spec!.sessionAffinityConfig = { clientIP: { timeoutSeconds: 60 } }), "svc5"), "ns5", "svc5");
    expect(affinity(r).map((x) => x.message)).toEqual([expect.stringMatching(/^ns5\/svc5:p80: test-node's affinity sets keep a client for 10800 s \(1 of 1 set\(s\), e\.g\. affinity-/)]);
  });
});

describe("iptables mode: balancing.sessionAffinity is the node's when it differs, as in IPVS mode", () => {
  it("kube-dns set to ClientIP on a node without recent rules", () => {
    const b = readBundle("examples/iptables-lab");
    const s = b.objects.services.find((x) => x.metadata.name === "kube-dns")!;
    s.spec!.sessionAffinity = "ClientIP";
    const r = explainService(b, "kube-system", "kube-dns");
    const n = r.nodes[0]!;
    expect(n.drift.some((d) => d.kind === "affinity-timeout")).toBe(true);
    for (const p of n.ports) for (const e of p.entryPoints) expect(e.balancing.sessionAffinity).toBe("none on the node (no recent rule)");
  });
});
