// Issue 14 point 5: asymmetric replies. A pod on another node reaching an externalTrafficPolicy: Local NodePort is
// sent to the cluster-wide chain without masquerade (kube-proxy v1.22+); an endpoint on a third node replies straight
// to the pod and the connection never completes. Checked on kube-proxy's own nftables test ruleset (svc2, eTP Local)
// with the endpoint's node set as the API would show it.
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import type { Bundle } from "../src/bundle/bundle.ts";
import { explainService } from "../src/service/explain.ts";
import type { ClientVerdict, ServiceReport } from "../src/service/report.ts";

const base = readBundle("examples/nftables-lab");

function withEndpointNode(b: Bundle, node: string): Bundle {
  const copy = structuredClone(b);
  for (const s of copy.objects.endpointSlices) {
    if (s.metadata.labels?.["kubernetes.io/service-name"] !== "svc2") continue;
    for (const e of s.endpoints ?? []) e.nodeName = node;
  }
  return copy;
}

function verdict(r: ServiceReport, kind: string, client: ClientVerdict["client"]): ClientVerdict {
  return r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === kind)!.clients.find((c) => c.client === client)!;
}

describe("reply path of unmasqueraded DNAT", () => {
  it("endpoint on a third node: the pod of another node never gets the reply through this node", () => {
    const r = explainService(withEndpointNode(base, "node-c"), "ns2", "svc2");
    const v = verdict(r, "NodePort", "pod-other-node");
    expect(v.masquerade).toBe("never");
    expect(v.endpoints.map((e) => [e.endpoint, e.replyFails])).toEqual([["10.180.0.2:80", "bypasses-node"]]);
    expect(v.reason).toMatch(/; but the replies bypass test-node: the connection does not complete$/);
    expect(v.caveats).toContainEqual(expect.stringMatching(/^reply path: 10\.180\.0\.2:80 \(on node-c\) replies straight to \S+, not through test-node/));
  });
  it("endpoint on this node: the reply returns through it; no finding", () => {
    const r = explainService(withEndpointNode(base, r0node()), "ns2", "svc2");
    const v = verdict(r, "NodePort", "pod-other-node");
    expect(v.endpoints.some((e) => e.replyFails)).toBe(false);
    expect(v.caveats.some((c) => c.startsWith("reply path"))).toBe(false);
  });
  it("clients on this node and masqueraded clients are never affected", () => {
    const r = explainService(withEndpointNode(base, "node-c"), "ns2", "svc2");
    for (const e of r.nodes[0]!.ports[0]!.entryPoints) {
      for (const c of e.clients) {
        if (c.client === "pod-same-node" || c.client === "host-network" || c.client === "hairpin") expect(c.endpoints.some((x) => x.replyFails), `${e.kind} ${c.client}`).toBe(false);
        for (const x of c.endpoints) if (x.masqueraded) expect(x.replyFails).toBeUndefined();
      }
    }
  });
});

function r0node(): string {
  return explainService(base, "ns2", "svc2").nodes[0]!.node;
}
