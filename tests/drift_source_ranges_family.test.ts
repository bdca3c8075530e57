// loadBalancerSourceRanges of one family leave the other family's LoadBalancer IPs open: kube-proxy keeps the ranges of
// its own family (pkg/proxy/serviceport.go newBaseServiceInfo, MapCIDRsByIPFamily) and, with none, writes no firewall
// for that family. An IPv6 client at an IPv6 LoadBalancer IP of a Service whose ranges are all IPv4 is then judged
// against externalTrafficPolicy like any client (it was skipped as "outside the ranges").
import { describe, expect, it } from "vitest";
import { externalPolicyDrift } from "../src/service/drift.ts";
import type { ResolvedService } from "../src/service/resolve.ts";
import type { PortReport, ServicePortSummary } from "../src/service/report.ts";

describe("externalTrafficPolicy drift at an IPv6 LoadBalancer IP with IPv4-only source ranges", () => {
  const sp: ServicePortSummary = { port: 80, protocol: "TCP", portKey: "ns/web:http", name: "http" };
  const resolved = (ranges: string[]) =>
    ({
      summary: { namespace: "ns", name: "web", type: "LoadBalancer", clusterIPs: ["fd00:96::5"], ports: [sp], externalTrafficPolicy: "Local", internalTrafficPolicy: "Cluster", sessionAffinity: "None", externalIPs: [], loadBalancerIngress: ["2001:db8::5"], loadBalancerSourceRanges: ranges },
      endpoints: [],
    }) as unknown as ResolvedService;
  const pr = {
    servicePort: sp,
    entryPoints: [{
      kind: "LoadBalancer",
      destination: "[2001:db8::5]:80/tcp",
      clients: [{ client: "external", source: "2001:db8:eeee::10", outcome: "forwarded", endpoints: [{ endpoint: "[fd00:244:1::9]:80" }], masquerade: "never", evidence: [] }],
    }],
  } as unknown as PortReport;
  const none = { endpoints: [], mode: "" as const, ready: true, why: "" };

  it("the node sending outside clients to a remote endpoint under Local is drift, v4 ranges or not", () => {
    for (const ranges of [[], ["203.0.113.0/24"]]) {
      expect(externalPolicyDrift(resolved(ranges), sp, pr, "node-a", none, []).map((d) => d.kind), JSON.stringify(ranges)).toEqual(["external-policy"]);
    }
  });
  it("an IPv6 range that leaves the client out: its drop is the firewall's, no policy drift", () => {
    expect(externalPolicyDrift(resolved(["2001:db8:1::/64"]), sp, pr, "node-a", none, [])).toEqual([]);
  });
});
