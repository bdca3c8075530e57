// IPVS mode (seed 000's node: ipvsadm, ipset, IPVS-mode iptables) and partial `iptables -t nat -nL` listings
// (seed 004's pre-1.24 LoadBalancer): the same questions, answered from what those dumps really hold.
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { parseIpsetList } from "../src/datapath/ipset.ts";
import { kubeProxyIpsets } from "../src/service/ipvs/kube_proxy_ipsets.ts";
import { explainService } from "../src/service/explain.ts";
import { ipsetMembership } from "../src/service/ipvs/ipset_membership.ts";
import { kernelProbability } from "../src/service/iptables/probability.ts";
import type { TracePacket } from "../src/service/trace.ts";
import type { ClientVerdict, ServiceReport } from "../src/service/report.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { fixture } from "./helpers/bundles.ts";

const IPVS_LAB = new URL("../examples/ipvs-lab", import.meta.url).pathname;
const LB_LEGACY = new URL("../examples/lb-legacy", import.meta.url).pathname;

function entry(r: ServiceReport, portName: string | undefined, kind: string) {
  const p = r.nodes[0]!.ports.find((x) => x.servicePort.name === portName)!;
  return p.entryPoints.find((e) => e.kind === kind)!;
}
function client(r: ServiceReport, portName: string | undefined, kind: string, c: ClientVerdict["client"]): ClientVerdict {
  return entry(r, portName, kind).clients.find((x) => x.client === c)!;
}
function withIpvsadm(b: Bundle, transform: (t: string) => string): Bundle {
  const copy = structuredClone(b);
  const s = copy.nodes[0]!.sections.ipvsadm!;
  s.stdout = transform(s.stdout);
  return copy;
}

describe("ipvs-lab (seed 000, node k8s-01, IPVS mode)", () => {
  const b = readBundle(IPVS_LAB);
  const r = explainService(b, "kube-system", "kube-dns");

  it("detects IPVS from the virtual servers and the KUBE-CLUSTER-IP match-set, without conflict", () => {
    expect(r.nodes[0]!.proxyMode.mode).toBe("ipvs");
    expect(r.nodes[0]!.proxyMode.conflicts).toEqual([]);
    expect(r.nodes[0]!.proxyMode.evidence[0]!.detail).toBe("4 IPVS virtual server(s), KUBE-CLUSTER-IP match-set in KUBE-SERVICES");
  });

  it("names the scheduler and the real servers' shares: rr over 192.168.0.17/.18, 1/2 each", () => {
    const e = entry(r, "dns", "ClusterIP");
    expect(e.balancing.method).toBe("ipvs");
    expect(e.balancing.scheduler).toMatchObject({ name: "rr", deterministicShares: true });
    expect(e.balancing.shares.map((s) => [s.endpoint, s.share, s.weight])).toEqual([["192.168.0.17:53", 0.5, 1], ["192.168.0.18:53", 0.5, 1]]);
  });

  it("masquerade: a pod in 192.168.0.0/16 is not masqueraded, the node is (match-set KUBE-CLUSTER-IP, line 25)", () => {
    const pod = client(r, "dns", "ClusterIP", "pod-same-node");
    expect(pod.masquerade).toBe("never");
    expect(pod.reason).toBe("not masqueraded: line 25 (KUBE-SERVICES) does not apply: source 192.168.0.200 is in 192.168.0.0/16");
    const host = client(r, "dns", "ClusterIP", "host-network");
    expect(host.masquerade).toBe("always");
    expect(host.evidence.find((e) => e.rule.line === 25)?.role).toBe("marks for masquerade (KUBE-MARK-MASQ)");
  });

  it("hairpin: KUBE-LOOP-BACK (dst,dst,src) masquerades an endpoint sent back to itself, and only then", () => {
    const h = client(r, "dns", "ClusterIP", "hairpin");
    expect(h.masquerade).toBe("some");
    expect(h.endpoints.map((e) => [e.endpoint, e.masqueraded])).toEqual([["192.168.0.17:53", true], ["192.168.0.18:53", false]]);
    expect(h.evidence.find((e) => e.rule.line === 24)?.role).toBe("masquerades (SNAT to the node's address)");
  });

  it("wrr weights give exact shares; weight 0 is quiesced and reported", () => {
    const wrr = withIpvsadm(b, (t) =>
      t.replace(/UDP {2}10\.96\.0\.10:53 rr\n(\s+-> 192\.168\.0\.17:53\s+Masq\s+)1/, "UDP  10.96.0.10:53 wrr\n$13")
    );
    const r2 = explainService(wrr, "kube-system", "kube-dns");
    expect(entry(r2, "dns", "ClusterIP").balancing.shares.map((s) => s.share)).toEqual([0.75, 0.25]);
    const quiesced = withIpvsadm(b, (t) => t.replace(/(TCP {2}10\.96\.0\.10:53 rr\n\s+-> 192\.168\.0\.17:53\s+Masq\s+)1/, "$10"));
    const r3 = explainService(quiesced, "kube-system", "kube-dns");
    expect(entry(r3, "dns-tcp", "ClusterIP").balancing.shares.map((s) => [s.endpoint, s.share])).toEqual([["192.168.0.17:53", 0], ["192.168.0.18:53", 1]]);
    expect(r3.nodes[0]!.drift.map((d) => [d.kind, d.endpoint])).toEqual([["missing-on-node", "192.168.0.17:53"], ["quiesced", "192.168.0.17:53"]]);
  });

  it("a weight other than kube-proxy's 1 (or 0, drained) is drift: something else changed it", () => {
    const w3 = withIpvsadm(b, (t) => t.replace(/(TCP {2}10\.96\.0\.10:53 rr\n\s+-> 192\.168\.0\.17:53\s+Masq\s+)1/, "$13"));
    const r = explainService(w3, "kube-system", "kube-dns");
    const d = r.nodes[0]!.drift.filter((x) => x.portKey === "kube-system/kube-dns:dns-tcp");
    expect(d.map((x) => [x.kind, x.endpoint])).toEqual([["weight", "192.168.0.17:53"]]);
    expect(d[0]!.message).toMatch(/has weight 3 on .*where kube-proxy sets 1/);
    // rr ignores weights above 0: the shares stay equal
    expect(entry(r, "dns-tcp", "ClusterIP").balancing.shares.map((s) => s.share)).toEqual([0.5, 0.5]);
    expect(explainService(b, "kube-system", "kube-dns").nodes[0]!.drift.filter((x) => x.kind === "weight")).toEqual([]);
  });

  it("an `ipvsadm -Ln --stats` listing shows no scheduler, persistence or weights: none is claimed, no affinity drift", () => {
    // ipvsadm.c print_service_entry: the --stats layout prints counters in place of scheduler, flags and weights
    const stats = withIpvsadm(b, (t) =>
      t.replace("Prot LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn", "Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutBytes\n  -> RemoteAddress:Port")
        .replace(/^((?:TCP|UDP|SCTP) {2}\S+) .*$/gm, "$1  0 0 0 0 0")
        .replace(/^( {2}-> \S+) +Masq +\d+ +\d+ +\d+ *$/gm, "$1  0 0 0 0 0")
    );
    stats.objects.services.find((x) => x.metadata.name === "kube-dns")!.spec.sessionAffinity = "ClientIP";
    const r = explainService(stats, "kube-system", "kube-dns");
    const e = entry(r, "dns", "ClusterIP");
    expect(e.balancing.scheduler?.unlisted).toBe(true);
    expect(e.balancing.scheduler?.description).toMatch(/^not shown: the listing is `ipvsadm -Ln --stats`/);
    expect(e.balancing.sessionAffinity).toMatch(/on the node not shown/);
    expect(r.nodes[0]!.drift.filter((d) => d.kind === "affinity-timeout")).toEqual([]);
  });

  it("live-count schedulers have no fixed share", () => {
    const wlc = withIpvsadm(b, (t) => t.replace("UDP  10.96.0.10:53 rr", "UDP  10.96.0.10:53 wlc"));
    const e = entry(explainService(wlc, "kube-system", "kube-dns"), "dns", "ClusterIP");
    expect(e.balancing.scheduler?.deterministicShares).toBe(false);
    expect(e.balancing.shares.map((s) => s.share)).toEqual([null, null]);
    expect(e.clients.find((c) => c.client === "pod-same-node")!.endpoints.map((x) => x.share)).toEqual([null, null]);
  });

  it("a missing virtual server is drift", () => {
    const gone = withIpvsadm(b, (t) => t.split("\n").filter((l) => !/^UDP|192\.168\.0\.1[78]:53/.test(l)).join("\n"));
    const r4 = explainService(gone, "kube-system", "kube-dns");
    expect(r4.nodes[0]!.drift.find((d) => d.portKey === "kube-system/kube-dns:dns")?.kind).toBe("service-missing");
  });

  it("stale KUBE-SVC chains left from iptables mode are a conflict", () => {
    const stale = structuredClone(b);
    const s = stale.nodes[0]!.sections["iptables-save"]!;
    s.stdout = s.stdout.replace(":KUBE-SERVICES - [0:0]", ":KUBE-SERVICES - [0:0]\n:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]\n:KUBE-SEP-2NK74F4BXH6S2KMP - [0:0]");
    const r5 = explainService(stale, "kube-system", "kube-dns");
    expect(r5.nodes[0]!.proxyMode.mode).toBe("ipvs");
    expect(r5.findings.find((f) => f.code === "ProxyModeConflict")?.message).toContain("2 KUBE-SVC/KUBE-SEP chain(s) remain in iptables nat although the node runs IPVS");
  });
});

describe("ipset membership as the kernel's set match", () => {
  const sets = parseIpsetList(fixture("ipvs/seed-000-azure-ipset-list.txt"));
  const has = ipsetMembership(sets);
  const pkt = (src: string, dst: string, dport: number, proto: "tcp" | "udp"): TracePacket => ({ family: 4, src, dst, dport, proto, srcLocal: false, dstLocal: true, mark: 0, ctstate: new Set(["NEW"]) });
  it.each([
    ["KUBE-CLUSTER-IP", "dst,dst", pkt("192.168.1.9", "10.96.0.10", 53, "udp"), true],
    ["KUBE-CLUSTER-IP", "dst,dst", pkt("192.168.1.9", "10.96.0.10", 54, "udp"), false],
    ["KUBE-CLUSTER-IP", "dst,dst", pkt("192.168.1.9", "10.96.0.1", 443, "udp"), false],
    ["KUBE-LOOP-BACK", "dst,dst,src", pkt("192.168.0.17", "192.168.0.17", 53, "tcp"), true],
    ["KUBE-LOOP-BACK", "dst,dst,src", pkt("192.168.0.18", "192.168.0.17", 53, "tcp"), false],
  ])("%s %s %o → %s", (name, flags, p, want) => {
    expect(has(name, flags.split(","), p)).toBe(want);
  });
  it("an unknown set is unknown, not false", () => {
    expect(has("KUBE-NOPE", ["dst"], pkt("1.1.1.1", "2.2.2.2", 1, "tcp"))).toBeUndefined();
  });
});

describe("lb-legacy (seed 004, v1.12 listing, LoadBalancer with KUBE-FW / KUBE-XLB)", () => {
  const r = explainService(readBundle(LB_LEGACY), "default", "testsvc");

  it("computes the 7-way cascade exactly as the kernel applies the 5-decimal probabilities", () => {
    const shares = entry(r, undefined, "ClusterIP").balancing.shares;
    expect(shares).toHaveLength(7);
    const written = ["0.14286000002", "0.16667000018", "0.20000000019", "0.25000000000", "0.33332999982", "0.50000000000"];
    let rest = 1;
    const want: number[] = [];
    for (const w of written) {
      const p = kernelProbability(w);
      want.push(rest * p);
      rest *= 1 - p;
    }
    want.push(rest);
    const byChain = Object.fromEntries(shares.map((s) => [s.via, s.share]));
    const chains = ["EA7TYKWK2S6G4PQR", "ZJI36FVTROQF5MX7", "JLGUPWE7JCRU2AGG", "GCNPY23RDN22AOTX", "FNDISD3HQYKEHL3T", "3RWVMCKITDQWELSA", "BVMKBOC4GGNJ3567"];
    chains.forEach((c, i) => expect(byChain[`KUBE-SEP-${c}`]).toBeCloseTo(want[i]!, 12));
    expect(shares.find((s) => s.via === "KUBE-SEP-BVMKBOC4GGNJ3567")!.endpoint).toBe("172.31.9.52:80");
    expect(shares.filter((s) => s.endpoint.startsWith("unknown (")).length).toBe(6);
  });

  // Issue 14 point 1: KUBE-MARK-DROP's mark 0x8000 is dropped by kubelet's filter KUBE-FIREWALL, which kubelet hooks
  // from INPUT and OUTPUT only. Whether the LB IP is local to the node decides INPUT (dropped) or FORWARD (not).
  it("external clients at the LB IP, LB IP not known to be local: marked for drop by KUBE-XLB, but forwarded untranslated, saying which fact decides it", () => {
    const ext = client(r, undefined, "LoadBalancer", "external");
    expect(ext.outcome).toBe("not-handled");
    expect(ext.reason).toMatch(/^marked for drop by line 24 \(KUBE-XLB-M42ZCW2EYUCRBVAF\): forwarded untranslated if 172\.6\.6\.6 is not a local address of the node \(KUBE-FIREWALL, which drops the mark, is hooked in INPUT and OUTPUT only\), dropped by INPUT's KUBE-FIREWALL if it is; which is not known/);
    expect(ext.caveats.some((c) => c.startsWith("whether 172.6.6.6 is a local address of the node decides it"))).toBe(true);
    const pod = client(r, undefined, "LoadBalancer", "pod-same-node");
    expect(pod.outcome).toBe("forwarded");
    expect(pod.masquerade).toBe("never");
  });
  it("external clients at the LB IP, LB IP bound on the node (ip -o addr collected): dropped by KUBE-FIREWALL in INPUT", () => {
    const b = readBundle(LB_LEGACY);
    b.nodes[0]!.sections["ip-addr"] = {
      stdout: "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n" +
        "2: eth0    inet 172.31.9.10/20 brd 172.31.15.255 scope global eth0\\       valid_lft forever preferred_lft forever\n" +
        "2: eth0    inet 172.6.6.6/32 scope global eth0\\       valid_lft forever preferred_lft forever\n",
      exitCode: 0,
    };
    const local = explainService(b, "default", "testsvc");
    const ext = client(local, undefined, "LoadBalancer", "external");
    expect(ext.outcome).toBe("dropped");
    expect(ext.evidence.find((e) => e.role === "drops")?.rule.raw).toContain("has no local endpoints");
    expect(ext.caveats.some((c) => c.includes("kubelet's filter KUBE-FIREWALL, jumped to from INPUT, drops it"))).toBe(true);
    expect(ext.caveats.some((c) => c.includes("decides it"))).toBe(false);
  });

  it("says what the partial listing cannot show instead of guessing", () => {
    const np = client(r, undefined, "NodePort", "external");
    expect(np.endpoints.map((e) => e.endpoint)).toEqual(["unknown (the rest of KUBE-SERVICES not in the dump)"]);
    expect(np.caveats.join("\n")).toContain('KUBE-SERVICES is shown incompletely (line 14 "......" is not a rule)');
    const host = client(r, undefined, "ClusterIP", "host-network");
    expect(host.masquerade).toBe("always");
    expect(host.caveats.some((c) => c.startsWith("KUBE-POSTROUTING is not in the dump"))).toBe(true);
    expect(r.nodes[0]!.drift.map((d) => d.kind)).toEqual(["unverifiable"]);
  });
});

// Drift is claimed only from state that was read: an endpoint is "missing on the node" only when every branch of the
// node's rules is known, and a ServicePort whose verdicts are unknown (a failed or empty section) has no drift but an
// unverifiable note.
describe("no drift from state that was not read", () => {
  it("a partial listing whose only known branch was cut: no endpoint is said missing", () => {
    const b = readBundle(LB_LEGACY);
    const cut = structuredClone(b);
    const s = cut.nodes[0]!.sections["iptables-list"]!;
    // the listing without chain KUBE-SEP-BVMKBOC4GGNJ3567, the branch to 172.31.9.52:80 (as a listing cut short shows it)
    s.stdout = s.stdout.replace(/Chain KUBE-SEP-BVMKBOC4GGNJ3567 \(1 references\)\n(?:.+\n)*/, "");
    expect(s.stdout).not.toBe(b.nodes[0]!.sections["iptables-list"]!.stdout);
    const r = explainService(cut, "default", "testsvc");
    expect(r.nodes[0]!.drift.map((d) => d.kind)).toEqual(["unverifiable"]);
    expect(r.nodes[0]!.drift[0]!.message).toMatch(/7 branch\(es\) on node-1 lead to chains the dump does not contain; .*so none is said missing/);
  });
  for (const c of [{ name: "ipvsadm ended 137 (killed)", exitCode: 137, stdout: "" }, { name: "ipvsadm printed nothing", exitCode: 0, stdout: "" }]) {
    it(`IPVS mode, ${c.name}: no "not programmed" and no endpoint missing, but what is not known`, () => {
      const b = readBundle(IPVS_LAB);
      const broken = structuredClone(b);
      const s = broken.nodes[0]!.sections.ipvsadm!;
      s.stdout = c.stdout;
      s.exitCode = c.exitCode;
      const r = explainService(broken, "kube-system", "kube-dns");
      const kinds = r.nodes[0]!.drift.map((d) => d.kind);
      expect(kinds.length).toBeGreaterThan(0);
      expect(new Set(kinds)).toEqual(new Set(["unverifiable"]));
      expect(r.nodes[0]!.drift[0]!.message).toMatch(/what k8s-01 does with 10\.96\.0\.10:53\/(udp|tcp) is not known \(accepted for IPVS, but this node's IPVS table was not captured/);
    });
  }
});

// kube-proxy writes KUBE-CLUSTER-IP (every ClusterIP,PROTO:PORT) and KUBE-LOOP-BACK (each local endpoint as
// EP,PROTO:PORT,EP) itself at every sync (pkg/proxy/ipvs/proxier.go syncProxyRules): without the node's `ipset list`,
// the answer takes them as kube-proxy fills them — the answer the collected sets give — and says it assumed so.
describe("IPVS mode without the node's ipsets", () => {
  for (const c of [{ name: "not collected", edit: (b: Bundle) => delete b.nodes[0]!.sections.ipset }, { name: "not ipset output", edit: (b: Bundle) => (b.nodes[0]!.sections.ipset!.stdout = "junk\nName: \n") }]) {
    it(`${c.name}: a client outside the cluster CIDR is masqueraded, as with the sets read, and the headline says the set was assumed`, () => {
      const b = structuredClone(readBundle(IPVS_LAB));
      c.edit(b);
      const r = explainService(b, "kube-system", "kube-dns");
      for (const kind of ["host-network", "external"] as const) {
        const v = client(r, "dns", "ClusterIP", kind);
        expect(v.masquerade).toBe("always");
        expect(v.reason).toMatch(/^masqueraded: marked by line 25 \(KUBE-SERVICES\), SNATed by line 23 \(assuming ipset KUBE-CLUSTER-IP holds what kube-proxy writes into it: the node's members were not collected\)$/);
        expect(v.caveats.join("\n")).toMatch(/line 25 \(KUBE-SERVICES\) reads ipset KUBE-CLUSTER-IP, whose members were not read .*every Service's ClusterIP,PROTO:PORT \(pkg\/proxy\/ipvs\/proxier\.go syncProxyRules\)/);
        expect(client(explainService(readBundle(IPVS_LAB), "kube-system", "kube-dns"), "dns", "ClusterIP", kind).masquerade).toBe("always");
      }
      // line 27 (`-m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT`) is answered: IPVS takes the packet, and the
      // endpoints are compared with the API (no "unverifiable" drift)
      expect(r.nodes[0]!.drift).toEqual([]);
      expect(client(r, "dns", "ClusterIP", "external").assumedNotMatched).toBeUndefined();
    });
    it(`${c.name}: the hairpin is masqueraded through KUBE-LOOP-BACK when the endpoint picks itself, as with the sets read`, () => {
      const b = structuredClone(readBundle(IPVS_LAB));
      c.edit(b);
      const hairpin = client(explainService(b, "kube-system", "kube-dns"), "dns", "ClusterIP", "hairpin");
      expect(hairpin.masquerade).toBe("some");
      expect(hairpin.endpoints.map((e) => [e.endpoint, e.masqueraded])).toEqual([["192.168.0.17:53", true], ["192.168.0.18:53", false]]);
      expect(hairpin.reason).toMatch(/^masqueraded only when sent to 192\.168\.0\.17:53 \(50% of new connections\): SNATed by line 24 \(KUBE-POSTROUTING\) \(assuming ipsets KUBE-CLUSTER-IP, KUBE-LOOP-BACK hold what kube-proxy writes into them/);
      expect(hairpin.caveats.join("\n")).toMatch(/line 24 \(KUBE-POSTROUTING\) reads ipset KUBE-LOOP-BACK, whose members were not read .*each endpoint on k8s-01 as EP-IP,PROTO:PORT,EP-IP/);
      expect(client(explainService(readBundle(IPVS_LAB), "kube-system", "kube-dns"), "dns", "ClusterIP", "hairpin").masquerade).toBe("some");
    });
  }
});

describe("kube-proxy's own IPVS sets, from the API objects (ipvs/kube_proxy_ipsets.ts)", () => {
  const sets = () => kubeProxyIpsets(readBundle(IPVS_LAB).objects, "k8s-01");
  const pkt = (src: string, dst: string, dport: number, proto: "tcp" | "udp" = "udp") => ({ family: 4 as const, src, dst, proto, dport, srcLocal: false, dstLocal: false, mark: 0, ctstate: new Set(["NEW"]) });
  it("KUBE-CLUSTER-IP: the ClusterIP on a Service port is in, on another port is not; an address no Service of the bundle has is not decided", () => {
    expect(sets()("KUBE-CLUSTER-IP", ["dst", "dst"], pkt("203.0.113.10", "10.96.0.10", 53))?.member).toBe(true);
    expect(sets()("KUBE-CLUSTER-IP", ["dst", "dst"], pkt("203.0.113.10", "10.96.0.10", 54))?.member).toBe(false);
    expect(sets()("KUBE-CLUSTER-IP", ["dst", "dst"], pkt("203.0.113.10", "10.96.7.7", 53))).toBeUndefined();
    expect(sets()("KUBE-NODE-PORT-TCP", ["dst"], pkt("203.0.113.10", "10.96.0.10", 53))).toBeUndefined();
  });
  it("KUBE-LOOP-BACK: an endpoint of this node to itself is in; a packet whose two addresses differ is not", () => {
    expect(sets()("KUBE-LOOP-BACK", ["dst", "dst", "src"], pkt("192.168.0.17", "192.168.0.17", 53))?.member).toBe(true);
    expect(sets()("KUBE-LOOP-BACK", ["dst", "dst", "src"], pkt("192.168.0.17", "192.168.0.18", 53))?.member).toBe(false);
    expect(sets()("KUBE-LOOP-BACK", ["dst", "dst", "src"], pkt("192.168.0.99", "192.168.0.99", 53))).toBeUndefined();
  });
});

describe("example bundles are the seeds' data", () => {
  it("iptables-lab's node dump is seed 001's iptables-save, byte for byte", () => {
    const ex = readFileSync(new URL("../examples/iptables-lab/nodes/k8s1/iptables-save.txt", import.meta.url), "utf8");
    expect(ex).toBe(fixture("seeds/001-k8s1.iptables-save"));
    // The seeds live beside the repository (../shared) on developer machines and in CI.
    const seedPath = new URL("../../shared/seeds/001_90a3171e736d5ab9.txt", import.meta.url);
    if (existsSync(seedPath)) expect(readFileSync(seedPath, "utf8").includes(ex.trimEnd())).toBe(true);
  });
});

describe("IPVS ipset entries the Service needs", () => {
  const b = readBundle(IPVS_LAB);
  it("all present in seed 000's sets: no ipset drift", () => {
    const r = explainService(b, "kube-system", "kube-dns");
    expect(r.nodes[0]!.drift.filter((d) => d.kind === "ipset-missing")).toEqual([]);
  });
  it("a KUBE-LOOP-BACK entry missing (rancher/rancher#30363-style breakage) is reported", () => {
    const broken = structuredClone(b);
    const s = broken.nodes[0]!.sections.ipset!;
    // as ipset prints it after the entry is gone: one member and one count fewer
    s.stdout = s.stdout.replace("192.168.0.17,udp:53,192.168.0.17\n", "").replace("Size in memory: 416\nReferences: 1\nNumber of entries: 4", "Size in memory: 416\nReferences: 1\nNumber of entries: 3");
    const r = explainService(broken, "kube-system", "kube-dns");
    expect(r.nodes[0]!.drift.filter((d) => d.kind === "ipset-missing").map((d) => d.message)).toEqual([
      "kube-system/kube-dns:dns: ipset KUBE-LOOP-BACK on k8s-01 lacks 192.168.0.17,udp:53,192.168.0.17: an endpoint reaching its own Service and sent to itself is not masqueraded (hairpin fails)",
    ]);
    const h = entry(r, "dns", "ClusterIP").clients.find((c) => c.client === "hairpin")!;
    expect(h.masquerade).toBe("never");
  });
  it("a KUBE-CLUSTER-IP entry missing is reported", () => {
    const broken = structuredClone(b);
    const s = broken.nodes[0]!.sections.ipset!;
    s.stdout = s.stdout.replace("10.96.0.10,tcp:53\n", "").replace(/(Name: KUBE-CLUSTER-IP\n(?:.*\n){5})Number of entries: 4/, "$1Number of entries: 3");
    const r = explainService(broken, "kube-system", "kube-dns");
    expect(r.nodes[0]!.drift.map((d) => d.message)).toContain(
      "kube-system/kube-dns:dns-tcp: ipset KUBE-CLUSTER-IP on k8s-01 lacks 10.96.0.10,tcp:53: traffic to the ClusterIP from outside the cluster CIDR is not masqueraded (and not accepted in KUBE-SERVICES)",
    );
  });
});

describe("ipvs-kind (seed 002: a partial IPVS-mode listing)", () => {
  const r = explainService(readBundle(new URL("../examples/ipvs-kind", import.meta.url).pathname), "default", "web");
  it("knows the virtual server and its real servers from ipvsadm", () => {
    const e = entry(r, undefined, "ClusterIP");
    expect(e.balancing.scheduler?.name).toBe("rr");
    expect(e.balancing.shares.map((s) => [s.endpoint, s.share])).toEqual([["10.244.1.6:80", 0.5], ["10.244.2.4:80", 0.5]]);
  });
  it("goes past KUBE-NODE-PORT, which the seed's listing does not show, as kube-proxy writes it (RETURN or KUBE-MARK-MASQ only), and says so", () => {
    const pod = client(r, undefined, "ClusterIP", "pod-same-node");
    expect(pod.endpoints.map((e) => e.endpoint)).toEqual(["10.244.1.6:80", "10.244.2.4:80"]);
    expect(pod.caveats.some((c) => c.startsWith("KUBE-NODE-PORT is not in the dump: taken as kube-proxy's IPVS mode writes it"))).toBe(true);
  });
});

describe("IPVS node whose ipvsadm failed", () => {
  it("says the IPVS table is unknown instead of claiming the Service is not programmed", () => {
    const b = structuredClone(readBundle(IPVS_LAB));
    b.nodes[0]!.sections.ipvsadm = { command: "ipvsadm -Ln --exact", stdout: "", stderr: "Can't initialize ipvs: Protocol not available\n", exitCode: 2 };
    const r = explainService(b, "kube-system", "kube-dns");
    expect(r.nodes[0]!.proxyMode.mode).toBe("ipvs");
    expect(r.nodes[0]!.notes).toContain("ipvsadm failed (exit 2: Can't initialize ipvs: Protocol not available): the IPVS virtual servers of this node are unknown");
    const pod = client(r, "dns", "ClusterIP", "pod-same-node");
    expect(pod.outcome).toBe("unknown");
    expect(pod.masquerade).toBe("n/a");
    expect(r.nodes[0]!.drift.filter((d) => d.kind === "service-missing")).toEqual([]);
  });
});
