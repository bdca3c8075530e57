// Audit roundtrip finding 6: `--dest <node na's IP>:<NodePort>` answered on node nb "not handled by kube-proxy" with
// the caveat "192.168.50.11 is not an address of Service shop/web", although it is the Service's NodePort on na. A
// packet to na's address is routed to na and never meets nb's NodePort rules, which take only packets addressed to nb
// itself (pkg/proxy/iptables/proxier.go syncProxyRules: KUBE-SERVICES -> KUBE-NODEPORTS with `-m addrtype --dst-type
// LOCAL`). The caveat now names the node that owns the address, its NodePort, and where it is traced: that node's
// answer in the same report when it is answered too (else `--node`, tests/packet_dest_node_path.test.ts).
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, node, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

const web = service("shop", "web", { type: "NodePort", clusterIP: "10.96.10.10", clusterIPs: ["10.96.10.10"], ports: [{ name: "http", port: 80, targetPort: 8080, nodePort: 30080, protocol: "TCP" }] } as never);
const eps = slice("shop", "web", [{ ip: "10.244.1.10", node: "na" }, { ip: "10.244.2.10", node: "nb" }], [{ name: "http", port: 8080 }]);
const rules = kubeProxyRules([web], [eps], "10.244.0.0/16");
const bundle = () => {
  const b = bundleOf({ dump: rules, nodeName: "na", nodeIP: "192.168.50.11", services: [web], slices: [eps], clusterCIDRs: ["10.244.0.0/16"] });
  b.objects.nodes.push(node("nb", "192.168.50.12"));
  b.nodes.push({ name: "nb", sections: { "iptables-save": { stdout: rules, exitCode: 0 } } });
  return b;
};
const ask = (port: number) =>
  explainService(bundle(), "shop", "web", { packet: { source: "203.0.113.9", destination: "192.168.50.11", port, protocol: "tcp" } }).packet!;

describe("--dest at another node's address", () => {
  it("its NodePort: the owning node translates it; the other node says the address is that node's NodePort, and points to its answer", () => {
    const [na, nb] = ask(30080);
    expect([na!.node, na!.outcome, na!.endpoints.map((e) => e.endpoint).sort()]).toEqual(["na", "forwarded", ["10.244.1.10:8080", "10.244.2.10:8080"]]);
    expect([nb!.node, nb!.outcome]).toEqual(["nb", "not-handled"]);
    expect(nb!.caveats).toContain("192.168.50.11 is an address of node na (NodePort 30080/tcp of Service shop/web there): the packet is routed to na and handled by its rules, not nb's, whose NodePort rules take only packets addressed to nb itself; this answer is for the packet as if it entered nb (node na's answer above traces it where it is handled)");
    expect(nb!.caveats.join("\n")).not.toMatch(/is not an address of Service|depends on whether 192\.168\.50\.11 is a local address/);
  });

  it("another port of that node: named as the node's address and not the Service's", () => {
    const nb = ask(22)[1]!;
    expect(nb.caveats).toContain("192.168.50.11 is an address of node na (not an address of Service shop/web): the packet is routed to na and handled by its rules, not nb's, whose NodePort rules take only packets addressed to nb itself; this answer is for the packet as if it entered nb (node na's answer above traces it where it is handled)");
  });
});
