// The masquerade and drop marks are the node's, not fixed numbers. kube-proxy makes its masquerade mark
// `1 << masqueradeBit` (pkg/proxy/iptables/proxier.go NewProxier; --iptables-masquerade-bit, iptables.masqueradeBit,
// default 14 = 0x4000) and writes it into KUBE-MARK-MASQ and KUBE-POSTROUTING; kubelet's drop mark
// (--iptables-drop-bit, default 15 = 0x8000) exists only while kubelet writes KUBE-MARK-DROP and the KUBE-FIREWALL
// `-m mark --mark DROP/DROP -j DROP` rule (pkg/kubelet/kubelet_network_linux.go, before v1.28): since v1.28 its
// KUBE-FIREWALL holds only the localnet rule. With masqueradeBit 15 on such a node, 0x8000 is the masquerade mark.
import { describe, expect, it } from "vitest";
import { parseIptablesSave } from "../src/datapath/iptables_save.ts";
import { explainService } from "../src/service/explain.ts";
import { masqueradeMarkOf } from "../src/service/iptables/trace.ts";
import type { ClientVerdict, ServiceReport } from "../src/service/report.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

const NODE = "node1";
const services = [service("default", "web", {
  type: "NodePort",
  clusterIP: "10.96.100.10",
  externalTrafficPolicy: "Cluster",
  ports: [{ port: 80, protocol: "TCP", nodePort: 30080 }],
})];
const slices = [slice("default", "web", [{ ip: "10.244.1.5", node: NODE }, { ip: "10.244.2.7", node: "node2" }], [{ port: 8080 }])];

/** kubelet v1.28+: KUBE-FIREWALL with the localnet rule only, jumped to from INPUT and OUTPUT. */
const KUBELET_128_FILTER = [
  ":INPUT ACCEPT [0:0]",
  ":FORWARD ACCEPT [0:0]",
  ":OUTPUT ACCEPT [0:0]",
  ":KUBE-FIREWALL - [0:0]",
  "-A INPUT -j KUBE-FIREWALL",
  "-A OUTPUT -j KUBE-FIREWALL",
  `-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`,
].join("\n");

/** The node's rules as kube-proxy writes them with masqueradeBit `bit`, and kubelet v1.28's filter chains. */
function rules(bit: number): string {
  const mark = `0x${(1 << bit).toString(16)}`;
  return kubeProxyRules(services, slices, "10.244.0.0/16")
    .replaceAll("0x4000", mark)
    .replace("*filter\n", `*filter\n${KUBELET_128_FILTER}\n`);
}

function clients(r: ServiceReport, kind: string): ClientVerdict[] {
  return r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === kind)!.clients;
}

describe("iptables.masqueradeBit other than 14", () => {
  it("reads the mark from KUBE-MARK-MASQ, else KUBE-POSTROUTING", () => {
    expect(masqueradeMarkOf(parseIptablesSave(rules(15)))).toBe(0x8000);
    expect(masqueradeMarkOf(parseIptablesSave(rules(14)))).toBe(0x4000);
    const postOnly = rules(12).replace(/^-A KUBE-MARK-MASQ .*\n/m, "");
    expect(masqueradeMarkOf(parseIptablesSave(postOnly))).toBe(0x1000);
  });

  it.each([15, 14, 12])("masqueradeBit %i, kubelet v1.28 (no KUBE-MARK-DROP): every client is answered as with bit 14", (bit) => {
    const r = explainService(bundleOf({ dump: rules(bit), nodeName: NODE, nodeIP: "192.168.0.11", services, slices }), "default", "web");
    for (const kind of ["ClusterIP", "NodePort"]) {
      for (const c of clients(r, kind)) {
        expect(c.outcome, `${kind} ${c.client}`).toBe("forwarded");
        expect(c.caveats.join("\n")).not.toContain("KUBE-MARK-DROP");
        expect(c.endpoints.map((e) => e.endpoint).sort()).toEqual(["10.244.1.5:8080", "10.244.2.7:8080"]);
      }
      const host = clients(r, kind).find((c) => c.client === "host-network")!;
      expect(host.masquerade).toBe("always");
      expect(host.reason).toMatch(/^masqueraded: marked by line \d+ \(KUBE-(SVC|EXT)-\w+\), SNATed by line \d+$/);
    }
    const podHere = clients(r, "ClusterIP").find((c) => c.client === "pod-same-node")!;
    expect(podHere.masquerade).toBe("never");
  });

  it("a drop mark is one only where the node's KUBE-FIREWALL drops it (kubelet before v1.28, --iptables-drop-bit 16)", () => {
    const old = rules(14).replace(
      "-A KUBE-FIREWALL ! -s",
      `-A KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked packets" -m mark --mark 0x10000/0x10000 -j DROP\n-A KUBE-FIREWALL ! -s`,
    )
      // a host-network client of the ClusterIP marked with the drop mark (as KUBE-MARK-DROP would) is dropped in OUTPUT
      .replace(/^(-A KUBE-SERVICES -m comment --comment "default\/web cluster IP")/m, `-A KUBE-SERVICES -s 192.168.0.11/32 -d 10.96.100.10/32 -j MARK --set-xmark 0x10000/0x10000\n$1`);
    const r = explainService(bundleOf({ dump: old, nodeName: NODE, nodeIP: "192.168.0.11", services, slices }), "default", "web");
    const host = clients(r, "ClusterIP").find((c) => c.client === "host-network")!;
    expect(host.outcome).toBe("dropped");
    expect(host.caveats.join("\n")).toContain("`-m mark --mark 0x10000/0x10000 -j DROP`");
    const pod = clients(r, "ClusterIP").find((c) => c.client === "pod-same-node")!;
    expect(pod.outcome).toBe("forwarded");
  });
});
