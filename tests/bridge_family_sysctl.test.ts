// br_netfilter passes a bridged frame to the netfilter of its own family only: br_nf_pre_routing
// (net/bridge/br_netfilter_hooks.c) tests call_ip6tables (net.bridge.bridge-nf-call-ip6tables) for IPv6 frames and
// call_iptables (net.bridge.bridge-nf-call-iptables) for IPv4 ones. An IPv6 Service on a bridge CNI (cni0) is un-NATed
// on the bridge only when bridge-nf-call-ip6tables is 1, whatever bridge-nf-call-iptables says.
import { describe, expect, it } from "vitest";
import type { Pod } from "../src/model/k8s.ts";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { sepChain, svcChain } from "./helpers/fake_node_rules.ts";

const SVC = svcChain("default/web", "tcp");
const SEP_A = sepChain("default/web", "tcp", "[fd00:10:244:1::5]:8080");
const SEP_B = sepChain("default/web", "tcp", "[fd00:10:244:2::7]:8080");
/** kube-proxy's ip6tables restore buffer (v1.27+ layout, detect-local-mode ClusterCIDR fd00:10:244::/56). */
const IP6TABLES = `*filter
:KUBE-SERVICES - [0:0]
:KUBE-FORWARD - [0:0]
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-POSTROUTING - [0:0]
:${SVC} - [0:0]
:${SEP_A} - [0:0]
:${SEP_B} - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-SERVICES -d fd00:10:96::100/128 -p tcp -m comment --comment "default/web cluster IP" -m tcp --dport 80 -j ${SVC}
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A ${SVC} ! -s fd00:10:244::/56 -d fd00:10:96::100/128 -p tcp -m comment --comment "default/web cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ
-A ${SVC} -m comment --comment "default/web -> [fd00:10:244:1::5]:8080" -m statistic --mode random --probability 0.50000000000 -j ${SEP_A}
-A ${SVC} -m comment --comment "default/web -> [fd00:10:244:2::7]:8080" -j ${SEP_B}
-A ${SEP_A} -s fd00:10:244:1::5/128 -m comment --comment default/web -j KUBE-MARK-MASQ
-A ${SEP_A} -p tcp -m comment --comment default/web -m tcp -j DNAT --to-destination [fd00:10:244:1::5]:8080
-A ${SEP_B} -s fd00:10:244:2::7/128 -m comment --comment default/web -j KUBE-MARK-MASQ
-A ${SEP_B} -p tcp -m comment --comment default/web -m tcp -j DNAT --to-destination [fd00:10:244:2::7]:8080
COMMIT
`;

function pod(name: string, node: string, ip: string): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default" },
    spec: { nodeName: node, containers: [{ name: "c" }] },
    status: { phase: "Running", podIP: ip, podIPs: [{ ip }] },
  } as Pod;
}

function podOnNode1(ip4: string, ip6: string) {
  const s = slice("default", "web", [{ ip: "fd00:10:244:1::5", node: "node1" }, { ip: "fd00:10:244:2::7", node: "node2" }], [{ port: 8080 }]);
  s.addressType = "IPv6";
  const b = bundleOf({
    dump: IP6TABLES,
    section: "ip6tables-save",
    nodeName: "node1",
    nodeIP: "fd00:192:168::11",
    services: [service("default", "web", { type: "ClusterIP", clusterIP: "fd00:10:96::100", clusterIPs: ["fd00:10:96::100"], ipFamilies: ["IPv6"], ports: [{ port: 80, protocol: "TCP" }] })],
    slices: [s],
  });
  b.objects.nodes[0]!.spec = { podCIDR: "fd00:10:244:1::/64", podCIDRs: ["fd00:10:244:1::/64"] };
  b.objects.pods.push(pod("web-a", "node1", "fd00:10:244:1::5"), pod("client-1", "node1", "fd00:10:244:1::9"));
  b.nodes[0]!.sections.sysctls = {
    stdout: `net.bridge.bridge-nf-call-iptables=${ip4}\nnet.bridge.bridge-nf-call-ip6tables=${ip6}\nbrport.cni0.veth3a9c1e2f.hairpin_mode=1\nbrport.cni0.veth77b0d4aa.hairpin_mode=1\n`,
    exitCode: 0,
  };
  b.nodes[0]!.sections["ip-addr"] = {
    stdout: "1: lo    inet6 ::1/128 scope host \\       valid_lft forever preferred_lft forever\n" +
      "2: eth0    inet6 fd00:192:168::11/64 scope global \\       valid_lft forever preferred_lft forever\n" +
      "3: cni0    inet6 fd00:10:244:1::1/64 scope global \\       valid_lft forever preferred_lft forever\n",
    exitCode: 0,
  };
  const r = explainService(b, "default", "web");
  return r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!.clients.find((c) => c.client === "pod-same-node")!;
}

describe("IPv6 replies on a bridge: net.bridge.bridge-nf-call-ip6tables decides, not the IPv4 key", () => {
  it("bridge-nf-call-iptables 1, bridge-nf-call-ip6tables 0: the reply from the endpoint on the same bridge is not un-NATed", () => {
    const v = podOnNode1("1", "0");
    expect(v.source).toBe("fd00:10:244:1::9");
    expect(v.endpoints.find((e) => e.endpoint === "[fd00:10:244:1::5]:8080")!.replyFails).toBe("bridge-not-filtered");
    expect(v.endpoints.find((e) => e.endpoint === "[fd00:10:244:2::7]:8080")!.replyFails).toBeUndefined();
    expect(v.reason).toContain("but not every connection completes: [fd00:10:244:1::5]:8080 (see caveats)");
    expect(v.caveats.join("\n")).toContain("net.bridge.bridge-nf-call-ip6tables=0: conntrack never un-NATs them");
  });
  it("bridge-nf-call-iptables 0, bridge-nf-call-ip6tables 1: every IPv6 connection completes", () => {
    const v = podOnNode1("0", "1");
    expect(v.endpoints.every((e) => e.replyFails === undefined)).toBe(true);
    expect(v.reason).not.toContain("completes");
    expect(v.caveats.join("\n")).not.toContain("bridge-nf-call");
  });
});

describe("the limits line for nodes without sysctls names each family's key", () => {
  it("a dual-stack Service: bridge-nf-call-iptables for IPv4 and bridge-nf-call-ip6tables for IPv6", async () => {
    const { readBundle } = await import("../src/io/read_bundle.ts");
    const r = explainService(readBundle("tests/fixtures/dual-stack"), "default", "web");
    const text = JSON.stringify(r);
    expect(text).toContain("net.bridge.bridge-nf-call-iptables (IPv4) and bridge-nf-call-ip6tables (IPv6) decide whether replies");
  });
});
