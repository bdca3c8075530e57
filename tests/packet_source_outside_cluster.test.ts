// Audit (packet questions) finding 2: an external client's `--source` answer said the reply path "depends on which
// node 198.51.100.10 runs on (not known)", where the same Service's report says its client from outside fails
// (replyFails bypasses-node). 198.51.100.10 lies outside the cluster CIDR kube-proxy's rules detect local traffic by
// (10.244.0.0/16), so it is no pod, and it is none of n1's collected addresses: it is not on n1, and the unmasqueraded
// reply of the endpoint on n2 bypasses n1 (pkg/proxy/ipvs/proxier.go syncEndpoint, v1.30, kubernetes/kubernetes#97081:
// "Traffic from an external source will be routed but the reply will have the POD address and will be discarded").
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";

// kube-proxy v1.30's IPVS layout (tests/fixtures/ipvs/v1.30-layout/README.md): nplocalremote is a NodePort (30084)
// with externalTrafficPolicy Local whose only endpoint, 10.244.2.22, is on n2; n1 (10.0.0.11) has ip-addr collected
const base = () => readBundle(new URL("./fixtures/ipvs/v1.30-layout/base", import.meta.url).pathname);
const ask = (b: ReturnType<typeof base>, source: string) =>
  explainService(b, "default", "nplocalremote", { packet: { source, destination: "10.0.0.11", port: 30084, protocol: "tcp" }, nodes: ["n1"] });

describe("a --source outside the cluster CIDR", () => {
  it("not one of n1's collected addresses: a client from outside, whose reply bypasses n1, as the report's own client from outside", () => {
    const r = ask(base(), "198.51.100.10");
    const a = r.packet![0]!;
    expect(a.outcome).toBe("forwarded");
    expect(a.endpoints.map((e) => [e.endpoint, e.masqueraded, e.replyFails])).toEqual([["10.244.2.22:8080", false, "bypasses-node"]]);
    expect(a.reason).toMatch(/; but the replies bypass n1: the connection does not complete$/);
    expect(a.caveats.join("\n")).not.toMatch(/not known/);
    // the report's client from outside on the same NodePort says the same
    const external = r.nodes[0]!.ports.flatMap((p) => p.entryPoints).filter((e) => e.kind === "NodePort").flatMap((e) => e.clients).find((c) => c.client === "external")!;
    expect(external.endpoints.map((e) => e.replyFails)).toEqual(["bypasses-node"]);
  });

  it("n1's addresses not collected: not known whether it is one of them, and the answer names that fact", () => {
    const b = base();
    delete b.nodes.find((n) => n.name === "n1")!.sections["ip-addr"];
    const a = ask(b, "198.51.100.10").packet![0]!;
    expect(a.endpoints[0]!.replyFails).toBeUndefined();
    expect(a.caveats.find((c) => c.startsWith("reply path:"))).toMatch(
      /^reply path: the node 198\.51\.100\.10 runs on is not known \(it lies outside the cluster CIDR 10\.244\.0\.0\/16 \(from the rules \(local-traffic detector\)\), so it is no pod of n1, but n1's own addresses were not collected \(ip -o addr\): whether it is one of them is not known\)/,
    );
  });

  it("a source inside the cluster CIDR in no node's podCIDR (a CNI's own IPAM) is still not placed", () => {
    const a = ask(base(), "10.244.9.9").packet![0]!;
    expect(a.reason).toMatch(/depends on which node 10\.244\.9\.9 runs on \(not known\)$/);
  });
});
