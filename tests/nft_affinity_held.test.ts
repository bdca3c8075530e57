// nftables mode, sessionAffinity ClientIP: the capture shows the same-node pod 10.0.0.200 in svc4's affinity set for
// 10.180.0.5 (tests/fixtures/nftables/affinity-held/README.md). Its trace goes to that endpoint only; the entry
// point's shares are the numgen's for new clients (1/2 each), and 10.180.0.4 is not "missing on the node" (it was
// reported so, from the held pod's trace).
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";

describe("a client held by a session-affinity set does not stand for the entry point", () => {
  const r = explainService(readBundle("tests/fixtures/nftables/affinity-held"), "ns4", "svc4");
  const node = r.nodes[0]!;
  const cip = node.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!;

  it("the held pod goes to its remembered endpoint, and says why", () => {
    const pod = cip.clients.find((c) => c.client === "pod-same-node")!;
    expect(pod.source).toBe("10.0.0.200");
    expect(pod.endpoints.map((e) => [e.endpoint, e.share])).toEqual([["10.180.0.5:80", 1]]);
    expect(pod.caveats.join("\n")).toMatch(/^session affinity: 10\.0\.0\.200 is remembered in @affinity-BBBBBBBB/m);
    // said as a field too (report JSON), which the shares and drift read; clients not in a set have none
    expect(pod.heldBySessionAffinity).toBe("affinity-BBBBBBBB-ns4/svc4/tcp/p80__10.180.0.5/80");
    expect(cip.clients.filter((c) => c.heldBySessionAffinity !== undefined).map((c) => c.client)).toEqual(["pod-same-node"]);
  });
  it("the entry point's shares are those of new clients: 1/2 each", () => {
    expect(cip.balancing.shares.map((s) => [s.endpoint, s.share])).toEqual([["10.180.0.4:80", 0.5], ["10.180.0.5:80", 0.5]]);
  });
  it("no endpoint is reported missing on the node", () => {
    expect(node.drift).toEqual([]);
  });
});
