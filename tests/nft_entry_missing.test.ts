// nftables mode: kube-proxy writes an element for every NodePort, LoadBalancer ingress IP and externalIP of a Service
// at every sync (pkg/proxy/nftables/proxier.go syncProxyRules, v1.29+: "Capture externalIPs", "Capture load-balancer
// ingress", "Capture nodeports": a service-ips / service-nodeports element `goto external-…` when the Service has
// endpoints, a no-endpoint-services / no-endpoint-nodeports drop or reject when none serves clients from outside).
// A node whose table lacks one while the ClusterIP is programmed has stale rules (drift.ts unhandledEntryDrift): the
// load balancer sends clients into a black hole, which "drift: none" used to hide.
// The ruleset is kube-proxy's own TestOverallNFTablesRules transaction (tests/fixtures/nftables), with the objects it
// was written for (tests/helpers/bundles.ts overallObjects); each case deletes the elements of one address.
import { describe, expect, it } from "vitest";
import { emptyBundle } from "../src/bundle/bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { fixture, node, overallObjects } from "./helpers/bundles.ts";

const RULES = fixture("nftables/TestOverallNFTablesRules.nft");

/** The fixture without the element lines containing each of `drop` (all must be there). */
function without(...drop: string[]): string {
  const lines = RULES.split("\n");
  for (const d of drop) expect(lines.some((l) => l.startsWith("add element") && l.includes(d)), d).toBe(true);
  return lines.filter((l) => !(l.startsWith("add element") && drop.some((d) => l.includes(d)))).join("\n");
}

function explain(rules: string, ns: string, name: string, edit?: (s: ReturnType<typeof overallObjects>["services"]) => void) {
  const { services, slices } = overallObjects("test-node", true);
  edit?.(services);
  const b = emptyBundle({ tool: "test" });
  b.objects.services.push(...services);
  b.objects.endpointSlices.push(...slices);
  b.objects.nodes.push(node("test-node", "192.168.0.2"));
  b.nodes.push({ name: "test-node", sections: { "nft-text": { stdout: rules, exitCode: 0 } } });
  return explainService(b, ns, name);
}

// one entry point missing is `entry-missing`; `service-missing` is kept for the Service not programmed at all
const missing = (r: ReturnType<typeof explainService>, kind = "entry-missing") => r.nodes[0]!.drift.filter((d) => d.kind === kind).map((d) => d.message);

describe("entry points kube-proxy did not program", () => {
  it("the table as kube-proxy writes it: no drift for any Service", () => {
    for (const [ns, name] of [["ns2", "svc2"], ["ns3", "svc3"], ["ns4", "svc4"], ["ns5", "svc5"]]) {
      expect(explain(RULES, ns!, name!).nodes[0]!.drift, name).toEqual([]);
    }
  });

  it("a LoadBalancer IP missing from service-ips (svc5, endpoints and a source-range firewall): entry-missing drift and a finding", () => {
    const r = explain(without("service-ips { 5.6.7.8 . tcp . 80"), "ns5", "svc5");
    expect(missing(r)).toEqual([
      expect.stringMatching(/^ns5\/svc5:p80: no kube-proxy rule for LoadBalancer IP 5\.6\.7\.8:80\/tcp on test-node, though its ClusterIP is programmed: kube-proxy writes a service-ips element .* the node's rules are stale/),
    ]);
    expect(r.findings.filter((f) => f.code === "Drift/entry-missing")).toHaveLength(1);
    expect(r.findings.filter((f) => f.code === "Drift/service-missing")).toEqual([]);
  });

  it("a NodePort missing from service-nodeports (svc3)", () => {
    const r = explain(without("service-nodeports { tcp . 3003"), "ns3", "svc3");
    expect(missing(r)).toEqual([expect.stringMatching(/^ns3\/svc3:p80: no kube-proxy rule for NodePort 192\.168\.0\.2:3003\/tcp on test-node/)]);
  });

  it("an externalIP missing from service-ips (svc4)", () => {
    const r = explain(without("service-ips { 192.168.99.33 . tcp . 80"), "ns4", "svc4");
    expect(missing(r)).toEqual([expect.stringMatching(/^ns4\/svc4:p80: no kube-proxy rule for externalIP 192\.168\.99\.33:80\/tcp/)]);
  });

  it("eTP Local without a local endpoint (svc2): the LB IP's service-ips and no-endpoint-services elements both gone", () => {
    const r = explain(without("service-ips { 1.2.3.4 . tcp . 80", "no-endpoint-services { 1.2.3.4 . tcp . 80"), "ns2", "svc2");
    expect(missing(r)).toEqual([expect.stringMatching(/^ns2\/svc2:p80: no kube-proxy rule for LoadBalancer IP 1\.2\.3\.4:80\/tcp/)]);
  });

  it("a second LoadBalancer IP, assigned after the last sync, is seen though the first is programmed", () => {
    const r = explain(RULES, "ns5", "svc5", (s) => {
      s.find((x) => x.metadata.name === "svc5")!.status = { loadBalancer: { ingress: [{ ip: "5.6.7.8" }, { ip: "5.6.7.9" }] } };
    });
    expect(missing(r)).toEqual([expect.stringMatching(/^ns5\/svc5:p80: no kube-proxy rule for LoadBalancer IP 5\.6\.7\.9:80\/tcp/)]);
  });

  it("a Service not programmed at all is said once (by its ClusterIP), not again per entry point", () => {
    const r = explain(RULES.split("\n").filter((l) => !l.includes("172.30.0.43") && !l.includes("3003")).join("\n"), "ns3", "svc3");
    expect(missing(r, "service-missing")).toHaveLength(1);
    expect(missing(r, "service-missing")[0]).toMatch(/ClusterIP/);
    expect(missing(r)).toEqual([]);
  });
});
