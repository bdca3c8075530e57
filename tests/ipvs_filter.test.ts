// Issue 15 point 5: IPVS mode's filter chains. kube-proxy v1.27+ (pkg/proxy/ipvs/proxier.go writeIptablesRules,
// iptablesJumpChain) binds every service address to kube-ipvs0 and guards the node's own ports behind them with
// filter KUBE-IPVS-FILTER (RETURN for virtual services, REJECT for any other port of an address in KUBE-IPVS-IPS),
// accepts health-check node ports in filter KUBE-NODE-PORT, and drops node-originated access to LoadBalancer IPs
// that have no node access in KUBE-IPVS-OUT-FILTER. The bundle is examples/ipvs-lab (seed 000) with the filter table
// and ipsets those releases add, written as that source writes them; the pre-1.27 dump of the lab itself shows what
// the filter's absence means (kubernetes/kubernetes#72236).
import { afterAll, describe, expect, it } from "vitest";
import { type KernelOracle, openKernelOracle, ORACLE_TOOLS } from "./helpers/kernel_oracle.ts";
import { requireNetns } from "./helpers/netns.ts";
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

/** `ipset list` text as `ipset restore` input: one `create` per set (its type and header), one `add` per member. */
function ipsetRestore(list: string): string {
  const out: string[] = [];
  for (const block of list.split(/\n(?=Name: )/)) {
    const name = /^Name: (\S+)/m.exec(block)?.[1];
    const type = /^Type: (\S+)/m.exec(block)?.[1];
    if (!name || !type) continue;
    const header = (/^Header: (.*)$/m.exec(block)?.[1] ?? "").replace(/\b(bucketsize|initval) \S+/g, "").trim();
    out.push(`create ${name} ${type} ${header}`.trim());
    const members = block.split(/^Members:\n/m)[1] ?? "";
    for (const m of members.split("\n").map((l) => l.trim()).filter((l) => l !== "")) out.push(`add ${name} ${m}`);
  }
  return out.join("\n") + "\n";
}

describe.runIf(requireNetns([...ORACLE_TOOLS, "ipset"]))("KUBE-IPVS-FILTER, checked against the kernel", () => {
  // The lab's dump (nat + filter) and ipsets loaded into a namespace that plays the node; the DNS ClusterIP is bound
  // on the node as kube-proxy binds it to kube-ipvs0. The kernel has no IPVS here: what is compared is the filter's
  // verdict (REJECT or not) for a port that is no virtual service, and that a virtual service's port passes it.
  const oracles: KernelOracle[] = [];
  afterAll(async () => {
    for (const o of oracles) await o.close();
  });
  it.each([
    { name: "v1.27 filter: port 22 of the ClusterIP is rejected", v127: true, port: 22, rejected: true },
    { name: "v1.27 filter: port 53/tcp, a virtual service, passes the filter", v127: true, port: 53, rejected: false },
    { name: "v1.13 dump (no KUBE-IPVS-FILTER): port 22 reaches the node", v127: false, port: 22, rejected: false },
  ])("$name", async ({ v127, port, rejected }) => {
    const b = lab(v127);
    const n = b.nodes[0]!;
    const oracle = await openKernelOracle(
      // this kernel has no IPVS, so the `-m ipvs` rule of KUBE-IPVS-OUT-FILTER cannot load: it is checked from dumps only
      { text: n.sections["iptables-save"]!.stdout.replace(/^-A KUBE-IPVS-OUT-FILTER .*-m ipvs .*\n/m, ""), backend: "nft", jumps: false, ipsets: ipsetRestore(n.sections.ipset!.stdout) },
      { nodeAddresses: ["192.168.0.2/24", "10.96.0.10/32"], gateway: "192.168.0.1" },
    );
    oracles.push(oracle);
    const k = await oracle.trace({ client: "external", src: "192.168.1.7", dst: "10.96.0.10", dport: port, proto: "tcp" });
    expect(k.rejected, k.conntrack).toBe(rejected);
    const a = ask(b, "192.168.1.7", "10.96.0.10", port);
    expect(a.outcome === "rejected", a.reason).toBe(rejected);
  });
});
