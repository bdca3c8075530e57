// kube-proxy's interface detector (--detect-local-mode=BridgeInterface: `! -i cni0 -j KUBE-MARK-MASQ` on each
// ClusterIP rule, pkg/proxy/iptables/proxier.go syncProxyRules, localDetector.IfNotLocal()) in a whole dump laid out
// as iptables-legacy-save prints it: user chains in name order, so a cluster's KUBE-EXT-… chains (NodePort Services
// with externalTrafficPolicy Cluster: a "masquerade traffic" rule, no detector) all come before the first KUBE-SVC-…
// chain. The search walked chains in that order and gave up after 200, so with more than 200 NodePort Services the
// detector was not found: clients from outside the node were answered "not masqueraded if … not known".
import { describe, expect, it } from "vitest";
import type { Pod, Service } from "../src/model/k8s.ts";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules, legacySaveOrder } from "./helpers/fake_node_rules.ts";

function manyNodePorts(extra: number) {
  const services: Service[] = [
    service("ns1", "svc1", { type: "NodePort", clusterIP: "172.30.0.41", ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }] }),
  ];
  const slices = [slice("ns1", "svc1", [{ ip: "10.180.0.1", node: "node-2" }, { ip: "10.180.2.1", node: "node-1" }], [{ name: "p80", port: 80 }])];
  for (let i = 0; i < extra; i++) {
    const ip = `172.30.${1 + (i >> 8)}.${i & 255}`;
    services.push(service("ns2", `s${i}`, { type: "NodePort", clusterIP: ip, ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 30100 + i }] }));
    slices.push(slice("ns2", `s${i}`, [{ ip: `10.180.0.${10 + (i % 200)}`, node: "node-2" }], [{ name: "p80", port: 80 }]));
  }
  const dump = legacySaveOrder(kubeProxyRules(services, slices, "10.180.0.0/16").replaceAll("! -s 10.180.0.0/16 ", "! -i cni0 "));
  const b = bundleOf({ dump, nodeName: "node-1", nodeIP: "192.168.0.2", services, slices });
  b.objects.nodes[0]!.spec = { podCIDR: "10.180.2.0/24", podCIDRs: ["10.180.2.0/24"] };
  b.objects.pods.push({ apiVersion: "v1", kind: "Pod", metadata: { name: "client", namespace: "ns1" }, spec: { nodeName: "node-1", containers: [] }, status: { phase: "Running", podIP: "10.180.2.200" } } as Pod);
  b.nodes[0]!.sections["ip-addr"] = {
    stdout: "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n" +
      "2: eth0    inet 192.168.0.2/24 brd 192.168.0.255 scope global eth0\\       valid_lft forever preferred_lft forever\n" +
      "3: cni0    inet 10.180.2.254/24 brd 10.180.2.255 scope global cni0\\       valid_lft forever preferred_lft forever\n",
    exitCode: 0,
  };
  return { b, dump };
}

describe("the interface detector in a legacy-ordered dump with 250 KUBE-EXT chains before any KUBE-SVC chain", () => {
  const { b, dump } = manyNodePorts(250);
  it("the dump is laid out so (the premise)", () => {
    const decl = dump.split("\n").filter((l) => l.startsWith(":KUBE-EXT-") || l.startsWith(":KUBE-SVC-"));
    expect(decl.findIndex((l) => l.startsWith(":KUBE-SVC-"))).toBe(251);
  });
  const r = explainService(b, "ns1", "svc1");
  const node = r.nodes[0]!;
  const cip = node.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!;
  it("the node's note names the detector found in the rules", () => {
    const note = node.notes.find((n) => n.startsWith("local traffic is detected by input interface (cni0, from the rules (kube-proxy's local-traffic detector): line "))!;
    expect(note).toMatch(/\(KUBE-SVC-XPGD46QRK7WJZT7O\) `-A KUBE-SVC-XPGD46QRK7WJZT7O .* ! -i cni0 -j KUBE-MARK-MASQ`\)/);
    expect(note).toContain("pods of this node are traced arriving on cni0, other clients on eth0");
  });
  it("a client from outside the node arrives on eth0: `! -i cni0` masquerades it, to both endpoints", () => {
    const ext = cip.clients.find((c) => c.client === "external")!;
    expect(ext.masquerade).toBe("always");
    expect(ext.reason).toMatch(/^masqueraded: marked by line \d+ \(KUBE-SVC-XPGD46QRK7WJZT7O\)/);
    expect(ext.endpoints.every((e) => e.replyFails === undefined)).toBe(true);
  });
  it("a pod of the node arrives on cni0: not masqueraded, known", () => {
    const pod = cip.clients.find((c) => c.client === "pod-same-node")!;
    expect(pod.masquerade).toBe("never");
    expect(pod.reason).toMatch(/^not masqueraded: line \d+ \(KUBE-SVC-XPGD46QRK7WJZT7O\) does not apply: interface cni0/);
  });
});
