// Issue 14 points 1 and 2, checked against the kernel: a pre-1.25 layout (loadBalancerSourceRanges as
// `KUBE-FW-X … -j KUBE-MARK-DROP`, kubelet's nat KUBE-MARK-DROP and filter KUBE-FIREWALL hooked from INPUT and OUTPUT)
// loaded into a network namespace that plays the node. A client outside the source ranges sends to the LoadBalancer
// IP; conntrack says what happened. The LB IP is either not an address of the node (the packet is forwarded,
// untranslated, marked 0x8000: not dropped) or bound on the node's eth0 (INPUT: KUBE-FIREWALL drops it). The plugin's
// answer, given the node's real `ip -o addr show` as its ip-addr section, must agree; without that section it must
// answer as for a non-local address and say which fact decides it.
import { afterAll, describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { type KernelOracle, openKernelOracle, ORACLE_TOOLS } from "./helpers/kernel_oracle.ts";
import { requireNetns } from "./helpers/netns.ts";

const LB = "203.0.113.100";
const RULES = `*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-FIREWALL - [0:0]
-A INPUT -j KUBE-FIREWALL
-A OUTPUT -j KUBE-FIREWALL
-A KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked packets" -m mark --mark 0x8000/0x8000 -j DROP
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-MARK-DROP - [0:0]
:KUBE-SVC-LB - [0:0]
:KUBE-FW-LB - [0:0]
:KUBE-SEP-EP1 - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
-A KUBE-MARK-DROP -j MARK --set-xmark 0x8000/0x8000
-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
-A KUBE-SERVICES -d 172.30.0.50/32 -p tcp -m comment --comment "ns1/lb:p80 cluster IP" -m tcp --dport 80 -j KUBE-SVC-LB
-A KUBE-SERVICES -d ${LB}/32 -p tcp -m comment --comment "ns1/lb:p80 loadbalancer IP" -m tcp --dport 80 -j KUBE-FW-LB
-A KUBE-FW-LB -s 198.51.100.0/24 -m comment --comment "ns1/lb:p80 loadbalancer IP" -j KUBE-SVC-LB
-A KUBE-FW-LB -m comment --comment "ns1/lb:p80 loadbalancer IP" -j KUBE-MARK-DROP
-A KUBE-SVC-LB -m comment --comment "ns1/lb:p80" -j KUBE-SEP-EP1
-A KUBE-SEP-EP1 -s 10.180.0.1/32 -m comment --comment "ns1/lb:p80" -j KUBE-MARK-MASQ
-A KUBE-SEP-EP1 -p tcp -m comment --comment "ns1/lb:p80" -m tcp -j DNAT --to-destination 10.180.0.1:80
COMMIT
`;

const objects = {
  services: [service("ns1", "lb", {
    type: "LoadBalancer",
    clusterIP: "172.30.0.50",
    ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 30080 }],
    loadBalancerSourceRanges: ["198.51.100.0/24"],
  }, { loadBalancer: { ingress: [{ ip: LB }] } })],
  slices: [slice("ns1", "lb", [{ ip: "10.180.0.1", node: "other-node" }], [{ name: "p80", port: 80 }])],
};

const CLIENT = "203.0.113.9";

describe.runIf(requireNetns(ORACLE_TOOLS))("KUBE-MARK-DROP drops only where KUBE-FIREWALL is hooked (kernel-checked)", () => {
  const oracles: KernelOracle[] = [];
  afterAll(async () => {
    for (const o of oracles) await o.close();
  });
  it.each([
    { name: "LB IP not local: forwarded untranslated", nodeAddresses: ["192.168.0.2/24"], want: "not-handled" as const },
    { name: "LB IP bound on eth0: dropped in INPUT", nodeAddresses: ["192.168.0.2/24", `${LB}/32`], want: "dropped" as const },
  ])("$name", async ({ nodeAddresses, want }) => {
    const oracle = await openKernelOracle({ text: RULES, backend: "nft", jumps: false }, { nodeAddresses, gateway: "192.168.0.1" });
    oracles.push(oracle);
    const k = await oracle.trace({ client: "external", src: CLIENT, dst: LB, dport: 80, proto: "tcp" });
    expect(k.dropped).toBe(want === "dropped");
    if (!k.dropped) expect(k.dnatTo).toBeUndefined();
    const ipAddr = await oracle.node.run(["ip", "-o", "addr", "show"]);
    const b = bundleOf({ dump: RULES, nodeName: "node-1", nodeIP: "192.168.0.2", clusterCIDRs: ["10.0.0.0/8"], ...objects });
    b.nodes[0]!.sections["ip-addr"] = { stdout: ipAddr, exitCode: 0 };
    const packet = { source: CLIENT, destination: LB, port: 80, protocol: "tcp" as const };
    const withAddrs = explainService(b, "ns1", "lb", { packet }).packet![0]!;
    expect(withAddrs.outcome, withAddrs.reason).toBe(want);
    expect(withAddrs.caveats.some((c) => c.includes("decides it"))).toBe(false);
    // Without the node's addresses: not known; the answer names the fact that decides it and both outcomes, which
    // the kernel gives one each way above.
    delete b.nodes[0]!.sections["ip-addr"];
    const without = explainService(b, "ns1", "lb", { packet }).packet![0]!;
    expect(without.outcome).toBe("unknown");
    expect(without.outcomeDependsOn).toMatchObject({ fact: `${LB} is a local address of the node`, ifTrue: "dropped", ifFalse: "not-handled" });
    expect(without.caveats.some((c) => c.startsWith(`whether ${LB} is a local address of the node decides it`))).toBe(true);
  });
});
