// IPVS mode masquerades with iptables nat (KUBE-MARK-MASQ, KUBE-POSTROUTING's MASQUERADE), which only acts on tracked
// packets: with net.ipv4.vs.conntrack=0 IPVS untracks every packet of its connections (ip_vs_conn.c ip_vs_conn_new sets
// IP_VS_CONN_F_NFCT only with the sysctl on; ip_vs_xmit.c ip_vs_nat_send_or_cont: ip_vs_notrack), so no client is
// SNATed. kube-proxy sets it to 1 at start (pkg/proxy/ipvs/proxier.go NewProxier). The sysctl was collected and ignored:
// clients were answered "masqueraded", and the limits line for nodes without sysctls did not name it.
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";

/** examples/ipvs-lab (kube-dns on k8s-01: 192.168.0.17 and .18) with the node's sysctls; `remote` moves .18 to k8s-02. */
function lab(sysctls: string | undefined, remote = false): Bundle {
  const b = structuredClone(readBundle("examples/ipvs-lab"));
  if (sysctls !== undefined) b.nodes[0]!.sections.sysctls = { stdout: sysctls, exitCode: 0 };
  if (remote) {
    for (const s of b.objects.endpointSlices) for (const e of s.endpoints ?? []) if (e.addresses[0] === "192.168.0.18") e.nodeName = "k8s-02";
  }
  return b;
}
const clients = (b: Bundle) => {
  const r = explainService(b, "kube-system", "kube-dns");
  const cip = r.nodes[0]!.ports.find((p) => p.servicePort.protocol === "TCP")!.entryPoints.find((e) => e.kind === "ClusterIP")!;
  return { r, of: (k: string) => cip.clients.find((c) => c.client === k)! };
};

describe("IPVS mode: net.ipv4.vs.conntrack decides whether the clients the rules mark are masqueraded", () => {
  it("=1 (kube-proxy's own setting): as the rules say", () => {
    const { of } = clients(lab("net.ipv4.vs.conntrack=1\n"));
    expect(of("external").masquerade).toBe("always");
    expect(of("hairpin").endpoints.find((e) => e.endpoint === "192.168.0.17:53")!.masqueraded).toBe(true);
  });
  it("=0: no client is SNATed; the endpoint reaching itself does not complete", () => {
    const { of } = clients(lab("net.ipv4.vs.conntrack=0\n"));
    const ext = of("external");
    expect(ext.masquerade).toBe("never");
    expect(ext.endpoints.map((e) => [e.masqueraded, e.replyFails])).toEqual([[false, undefined], [false, undefined]]);
    expect(ext.reason).toMatch(/^not masqueraded: net\.ipv4\.vs\.conntrack=0 untracks IPVS's packets, so the SNAT the rules ask for never happens \(the rules alone: masqueraded: marked by line 25/);
    expect(ext.caveats.join("\n")).toContain("ip_vs_xmit.c ip_vs_nat_send_or_cont");
    const self = of("hairpin");
    expect(self.endpoints.map((e) => [e.endpoint, e.masqueraded, e.replyFails])).toEqual([["192.168.0.17:53", false, "ipvs-untracked"], ["192.168.0.18:53", false, undefined]]);
    expect(self.reason).toContain("but not every connection completes: 192.168.0.17:53");
  });
  it("=0 with an endpoint on another node: the client from outside gets its reply straight from it, the host client's goes to the ClusterIP that node holds", () => {
    const { of } = clients(lab("net.ipv4.vs.conntrack=0\n", true));
    expect(of("external").endpoints.map((e) => [e.endpoint, e.replyFails])).toEqual([["192.168.0.17:53", undefined], ["192.168.0.18:53", "bypasses-node"]]);
    const host = of("host-network");
    expect(host.source).toBe("10.96.0.10");
    expect(host.endpoints.map((e) => [e.endpoint, e.replyFails])).toEqual([["192.168.0.17:53", undefined], ["192.168.0.18:53", "ipvs-untracked"]]);
  });
  it("=0: a packet question is answered the same way", () => {
    const r = explainService(lab("net.ipv4.vs.conntrack=0\n"), "kube-system", "kube-dns", { packet: { source: "203.0.113.10", destination: "10.96.0.10", port: 53, protocol: "tcp" } });
    expect(r.packet![0]!.masquerade).toBe("never");
  });
  it("sysctls not collected: the limits name net.ipv4.vs.conntrack", () => {
    const { r } = clients(lab(undefined));
    expect(r.limits.join("\n")).toContain("in IPVS mode, net.ipv4.vs.conntrack decides whether the clients shown masqueraded are");
  });
});
