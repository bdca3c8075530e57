// Audit (packet questions) finding 3: with a client whose node is not known (10.0.5.9: no Pod of the bundle, in no
// node's podCIDR) and an endpoint whose node is not in the API objects, the reply-path caveat stated only the failing
// case ("if it is not test-node … the connection does not complete"). A client on test-node gets its replies through
// test-node wherever the endpoint runs (its conntrack entry reverses the DNAT): both facts decide, and the caveat says so.
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";

// nftables-lab (kube-proxy's TestOverallNFTablesRules): svc2 (externalTrafficPolicy Local, LoadBalancer 1.2.3.4) has
// its endpoint 10.180.0.2 with no nodeName in its EndpointSlice
const lab = readBundle(new URL("../examples/nftables-lab", import.meta.url).pathname);
const ask = (source: string, b = lab) =>
  explainService(b, "ns2", "svc2", { packet: { source, destination: "1.2.3.4", port: 80, protocol: "tcp" } }).packet![0]!;

describe("the reply path when neither the client's node nor the endpoint's is known", () => {
  it("names both facts and the case where the connection completes, not only the failing one", () => {
    const a = ask("10.0.5.9");
    expect(a.outcome).toBe("forwarded");
    expect(a.endpoints.map((e) => [e.endpoint, e.masqueraded, e.replyFails])).toEqual([["10.180.0.2:80", false, undefined]]);
    const reply = a.caveats.filter((c) => c.startsWith("reply path:"));
    expect(reply).toEqual([
      "reply path: the nodes of 10.180.0.2:80 (not in the API objects) and of 10.0.5.9 (no Pod of the bundle has this address, and it is in no node's podCIDR) are not known, and they decide whether the connection completes: " +
      "it does if either is test-node (the replies then return through test-node, whose conntrack reverses the DNAT); if neither is, 10.180.0.2:80 replies straight to 10.0.5.9, not through test-node, and the connection does not complete",
    ]);
  });

  it("a client known to be on another node (a Pod of the bundle): only the endpoint's node decides, as before", () => {
    const b = structuredClone(lab);
    b.objects.pods.push({ apiVersion: "v1", kind: "Pod", metadata: { name: "client", namespace: "ns2" }, spec: { nodeName: "node-b", containers: [] }, status: { podIP: "10.0.5.9" } } as never);
    const reply = ask("10.0.5.9", b).caveats.filter((c) => c.startsWith("reply path:"));
    expect(reply).toEqual(["reply path: the node of 10.180.0.2:80 is not in the API objects; if it is not test-node, the unmasqueraded reply bypasses test-node and the connection does not complete"]);
  });
});
