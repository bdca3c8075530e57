// Issue 15 point 5: IPVS mode's filter chains. kube-proxy v1.27+ (pkg/proxy/ipvs/proxier.go writeIptablesRules,
// iptablesJumpChain) binds every service address to kube-ipvs0 and guards the node's own ports behind them with
// filter KUBE-IPVS-FILTER (RETURN for virtual services, REJECT for any other port of an address in KUBE-IPVS-IPS),
// accepts health-check node ports in filter KUBE-NODE-PORT, and drops node-originated access to LoadBalancer IPs
// that have no node access in KUBE-IPVS-OUT-FILTER. The bundle is examples/ipvs-lab (seed 000) with the filter table
// and ipsets those releases add, written as that source writes them; the pre-1.27 dump of the lab itself shows what
// the filter's absence means (kubernetes/kubernetes#72236).
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";

const FILTER_V127 = `*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-FIREWALL - [0:0]
:KUBE-FORWARD - [0:0]
:KUBE-IPVS-FILTER - [0:0]
:KUBE-IPVS-OUT-FILTER - [0:0]
:KUBE-NODE-PORT - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
:KUBE-SOURCE-RANGES-FIREWALL - [0:0]
-A INPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-FILTER
-A INPUT -m comment --comment "kube-proxy firewall rules" -j KUBE-PROXY-FIREWALL
-A INPUT -m comment --comment "kubernetes health check rules" -j KUBE-NODE-PORT
-A INPUT -j KUBE-FIREWALL
-A FORWARD -m comment --comment "kube-proxy firewall rules" -j KUBE-PROXY-FIREWALL
-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD
-A OUTPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-OUT-FILTER
-A OUTPUT -j KUBE-FIREWALL
-A KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked packets" -m mark --mark 0x8000/0x8000 -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A KUBE-IPVS-FILTER -m set --match-set KUBE-LOAD-BALANCER dst,dst -j RETURN
-A KUBE-IPVS-FILTER -m set --match-set KUBE-CLUSTER-IP dst,dst -j RETURN
-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP dst,dst -j RETURN
-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP-LOCAL dst,dst -j RETURN
-A KUBE-IPVS-FILTER -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j RETURN
-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT --reject-with icmp-port-unreachable
-A KUBE-IPVS-OUT-FILTER -s 10.106.42.178/32 -m ipvs --vaddr 10.106.42.178/32 --vproto 6 --vport 44134 -j DROP
-A KUBE-NODE-PORT -m comment --comment "Kubernetes health check node port" -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j ACCEPT
-A KUBE-SOURCE-RANGES-FIREWALL -j DROP
COMMIT
`;

const SETS_V127 = `
Name: KUBE-EXTERNAL-IP-LOCAL
Type: hash:ip,port
Revision: 5
Header: family inet hashsize 1024 maxelem 65536
Size in memory: 88
References: 1
Number of entries: 0
Members:

Name: KUBE-HEALTH-CHECK-NODE-PORT
Type: bitmap:port
Revision: 3
Header: range 0-65535
Size in memory: 8268
References: 2
Number of entries: 0
Members:

Name: KUBE-IPVS-IPS
Type: hash:ip
Revision: 4
Header: family inet hashsize 1024 maxelem 65536
Size in memory: 344
References: 1
Number of entries: 3
Members:
10.96.0.1
10.96.0.10
10.106.42.178
`;

function lab(v127: boolean): Bundle {
  const b = readBundle("examples/ipvs-lab");
  const n = b.nodes[0]!;
  if (v127) {
    const save = n.sections["iptables-save"]!.stdout;
    n.sections["iptables-save"] = { ...n.sections["iptables-save"]!, stdout: save.replace(/\*filter[\s\S]*?COMMIT\n/, FILTER_V127) };
    n.sections.ipset = { ...n.sections.ipset!, stdout: n.sections.ipset!.stdout.trimEnd() + "\n" + SETS_V127 };
  }
  return b;
}
const ask = (b: Bundle, source: string, dest: string, port: number, protocol: "tcp" | "udp" = "tcp") =>
  explainService(b, "kube-system", "kube-dns", { packet: { source, destination: dest, port, protocol } }).packet![0]!;

describe("KUBE-IPVS-FILTER (v1.27+)", () => {
  it("a pod to the DNS ClusterIP on port 22: the address is bound to kube-ipvs0, so filter INPUT, where KUBE-IPVS-FILTER rejects it", () => {
    const a = ask(lab(true), "192.168.1.7", "10.96.0.10", 22);
    expect(a.outcome).toBe("rejected");
    expect(a.paths!.flatMap((p) => p.rules.map((r) => `${r.table} ${r.chain}`))).toContain("filter KUBE-IPVS-FILTER");
    expect(JSON.stringify(a.evidence)).toContain("KUBE-IPVS-IPS");
  });

  it("the same pod to 10.96.0.10:53/udp, a virtual service: KUBE-IPVS-FILTER returns (KUBE-CLUSTER-IP) and IPVS balances", () => {
    const a = ask(lab(true), "192.168.1.7", "10.96.0.10", 53, "udp");
    expect(a.outcome).not.toBe("rejected");
    expect(a.endpoints.length).toBeGreaterThan(0);
  });

  it("the node itself to the LoadBalancer 10.106.42.178:44134 that has no node access: KUBE-IPVS-OUT-FILTER drops it (-m ipvs)", () => {
    const b = lab(true);
    const nodeIP = b.objects.nodes[0]!.status!.addresses!.find((x) => x.type === "InternalIP")!.address;
    expect(nodeIP).toBeTruthy();
    const a = explainService(b, "kube-system", "kube-dns", { packet: { source: "10.106.42.178", destination: "10.106.42.178", port: 44134, protocol: "tcp" } }).packet![0]!;
    expect(a.outcome).toBe("dropped");
    expect(a.paths!.flatMap((p) => p.rules.map((r) => r.chain))).toContain("KUBE-IPVS-OUT-FILTER");
  });
});

describe("before KUBE-IPVS-FILTER (the lab's v1.13 dump)", () => {
  it("port 22 of a ClusterIP reaches the node's own sshd: no rule stops it (kubernetes/kubernetes#72236)", () => {
    const a = ask(lab(false), "192.168.1.7", "10.96.0.10", 22);
    expect(a.outcome).not.toBe("rejected");
    expect(a.caveats.join("\n")).toContain("delivered to the node itself");
  });
});
