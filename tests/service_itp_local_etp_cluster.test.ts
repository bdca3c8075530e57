// internalTrafficPolicy Local with externalTrafficPolicy Cluster: clients from outside follow the external policy alone
// (pkg/proxy/iptables/proxier.go syncProxyRules: externalPolicyChain is clusterPolicyChain unless ExternalPolicyLocal;
// the same in nftables and in IPVS syncEndpoint). The rules below are what kube-proxy >= v1.27 writes for such a
// NodePort Service: the ClusterIP jumps to KUBE-SVL (the local endpoint), the NodePort through KUBE-EXT to KUBE-SVC
// (every endpoint). That is no drift.
import { it, expect } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { svcChain, sepChain, extChain } from "./helpers/fake_node_rules.ts";

const spn = "ns1/svc1:p80";
const SVC = svcChain(spn, "tcp"), EXT = extChain(spn, "tcp"), SVL = SVC.replace("KUBE-SVC-", "KUBE-SVL-");
const S1 = sepChain(spn, "tcp", "10.0.1.1:80"), S2 = sepChain(spn, "tcp", "10.0.1.2:80");
// What kube-proxy (>= v1.27 iptables proxier.go syncProxyRules) writes for a NodePort Service with
// internalTrafficPolicy Local, externalTrafficPolicy Cluster: internalPolicyChain = KUBE-SVL (local eps),
// externalPolicyChain = clusterPolicyChain = KUBE-SVC (all eps).
const dump = `*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-FORWARD - [0:0]
:KUBE-NODEPORTS - [0:0]
-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES
-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD
-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:${EXT} - [0:0]
:${SVC} - [0:0]
:${SVL} - [0:0]
:${S1} - [0:0]
:${S2} - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j ${SVL}
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-NODEPORTS -m comment --comment ns1/svc1:p80 -m tcp -p tcp --dport 3001 -j ${EXT}
-A ${EXT} -m comment --comment "masquerade traffic for ns1/svc1:p80 external destinations" -j KUBE-MARK-MASQ
-A ${EXT} -j ${SVC}
-A ${SVC} -m comment --comment "ns1/svc1:p80 -> 10.0.1.1:80" -m statistic --mode random --probability 0.5000000000 -j ${S1}
-A ${SVC} -m comment --comment "ns1/svc1:p80 -> 10.0.1.2:80" -j ${S2}
-A ${SVL} -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A ${SVL} -m comment --comment "ns1/svc1:p80 -> 10.0.1.1:80" -j ${S1}
-A ${S1} -m comment --comment ns1/svc1:p80 -s 10.0.1.1 -j KUBE-MARK-MASQ
-A ${S1} -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.0.1.1:80
-A ${S2} -m comment --comment ns1/svc1:p80 -s 10.0.1.2 -j KUBE-MARK-MASQ
-A ${S2} -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.0.1.2:80
COMMIT
`;
it("NodePort, internalTrafficPolicy Local, externalTrafficPolicy Cluster, rules exactly as kube-proxy writes them", () => {
  const svc = service("ns1", "svc1", { type: "NodePort", clusterIP: "172.30.0.41", internalTrafficPolicy: "Local", externalTrafficPolicy: "Cluster", ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }] });
  const eps = [slice("ns1", "svc1", [{ ip: "10.0.1.1", node: "test-node" }, { ip: "10.0.1.2", node: "host1" }], [{ name: "p80", port: 80 }])];
  const r = explainService(bundleOf({ dump, nodeName: "test-node", nodeIP: "192.168.0.2", services: [svc], slices: eps, clusterCIDRs: ["10.0.0.0/8"] }), "ns1", "svc1");
  const np = r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "NodePort")!;
  expect(np.clients.find((c) => c.client === "external")!.endpoints.map((e) => e.endpoint)).toEqual(["10.0.1.1:80", "10.0.1.2:80"]);
  const cip = r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!;
  expect(cip.clients.find((c) => c.client === "pod-same-node")!.endpoints.map((e) => e.endpoint)).toEqual(["10.0.1.1:80"]);
  expect(r.nodes[0]!.drift).toEqual([]);
});
