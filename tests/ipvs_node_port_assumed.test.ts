// IPVS mode, a partial `iptables -t nat -nvL` listing without nat KUBE-NODE-PORT (examples/ipvs-kind, seed 002).
// kube-proxy's IPVS KUBE-NODE-PORT holds only the rules of ipsetWithIptablesChain (pkg/proxy/ipvs/proxier.go):
// `-m set --match-set KUBE-NODE-PORT-LOCAL-TCP dst -j RETURN` and `-m set --match-set KUBE-NODE-PORT-TCP dst
// -j KUBE-MARK-MASQ`. It can neither translate, drop, nor clear the mark; IPVS picks the endpoint. A client outside
// the cluster CIDR was marked by KUBE-SERVICES line 8, so KUBE-POSTROUTING line 32 masquerades it.
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { explainService } from "../src/service/explain.ts";
import type { ClientVerdict, ServiceReport } from "../src/service/report.ts";
import { readBundle } from "../src/io/read_bundle.ts";

const IPVS_KIND = new URL("../examples/ipvs-kind", import.meta.url).pathname;
const packet = { source: "203.0.113.10", destination: "10.96.119.228", port: 80, protocol: "tcp" as const };

function client(r: ServiceReport, kind: ClientVerdict["client"]): ClientVerdict {
  return r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!.clients.find((c) => c.client === kind)!;
}

describe("ipvs-kind: nat KUBE-NODE-PORT missing from the listing, taken as kube-proxy writes it", () => {
  const r = explainService(readBundle(IPVS_KIND), "default", "web", { packet });

  it("the outside client is masqueraded: marked by line 8, SNATed by line 32, to both real servers", () => {
    const c = client(r, "external");
    expect(c.outcome).toBe("forwarded");
    expect(c.masquerade).toBe("always");
    expect(c.reason).toBe("masqueraded: marked by line 8 (KUBE-SERVICES), SNATed by line 32");
    expect(c.endpoints.map((e) => [e.endpoint, e.share, e.masqueraded])).toEqual([["10.244.1.6:80", 0.5, true], ["10.244.2.4:80", 0.5, true]]);
    expect(c.caveats.join("\n")).toMatch(/KUBE-NODE-PORT is not in the dump: taken as kube-proxy's IPVS mode writes it/);
  });

  it("the packet answer says the same, and its path goes on past KUBE-SERVICES line 9 to the ACCEPT of line 10", () => {
    const a = r.packet![0]!;
    expect(a.masquerade).toBe("always");
    expect(a.reason).toBe("masqueraded: marked by line 8 (KUBE-SERVICES), SNATed by line 32");
    for (const p of a.paths!) expect(p.rules.map((x) => `${x.chain}:${x.line}`)).toEqual(expect.arrayContaining(["KUBE-SERVICES:9", "KUBE-SERVICES:10", "KUBE-POSTROUTING:32"]));
  });

  it("a pod client (not marked by line 8): the answer rests on KUBE-NODE-PORT-TCP, which the listing does not show, and the reason says so", () => {
    const c = client(r, "pod-same-node");
    expect(c.masquerade).toBe("never");
    expect(c.reason).toMatch(/^not masqueraded if line 9 \(KUBE-SERVICES\) does not apply, which is not known: KUBE-NODE-PORT, which the dump lacks, marks it for masquerade when 80\/tcp is a NodePort \(in ipset KUBE-NODE-PORT-TCP/);
    expect(c.reason).toMatch(/not in the node's `ipset list` as collected/);
    expect(c.endpoints.every((e) => e.masqueraded === undefined)).toBe(true);
  });

  it("with KUBE-NODE-PORT-TCP listed holding port 80, the pod client is masqueraded through KUBE-NODE-PORT", () => {
    const b: Bundle = readBundle(IPVS_KIND);
    const s = b.nodes[0]!.sections.ipset!;
    const set = (name: string, members: string[]) =>
      `\nName: ${name}\nType: bitmap:port\nRevision: 3\nHeader: range 0-65535\nSize in memory: 8268\nReferences: 1\nNumber of entries: ${members.length}\nMembers:\n${members.map((m) => `${m}\n`).join("")}`;
    s.stdout = `${s.stdout.trimEnd()}\n${set("KUBE-NODE-PORT-LOCAL-TCP", [])}${set("KUBE-NODE-PORT-TCP", ["80"])}`;
    const c = client(explainService(b, "default", "web"), "pod-same-node");
    expect(c.masquerade).toBe("always");
    expect(c.reason).toBe("masqueraded: marked by line 9 (KUBE-SERVICES), SNATed by line 32");
  });

  it("with KUBE-NODE-PORT-TCP listed without port 80, the pod client is not masqueraded, with no unknown left", () => {
    const b: Bundle = readBundle(IPVS_KIND);
    const s = b.nodes[0]!.sections.ipset!;
    s.stdout = `${s.stdout.trimEnd()}\n\nName: KUBE-NODE-PORT-TCP\nType: bitmap:port\nRevision: 3\nHeader: range 0-65535\nSize in memory: 8268\nReferences: 1\nNumber of entries: 1\nMembers:\n30080\n`;
    const c = client(explainService(b, "default", "web"), "pod-same-node");
    expect(c.masquerade).toBe("never");
    expect(c.reason).not.toMatch(/not known/);
    expect(c.endpoints.every((e) => e.masqueraded === false)).toBe(true);
  });
});
