// Only the pods' own bridge decides whether a reply between two pods of a node is un-NATed (bridge-nf-call-iptables):
// kube-proxy needs br_netfilter "when containers are connected to a Linux bridge (but not SDN bridges)"
// (pkg/proxy/iptables/proxier.go NewProxier). A routed CNI (Calico: the pods' gateway is no address on a subnet,
// only tunl0's /32) that shares its node with Docker's docker0 or libvirt's virbr0 was answered as if its pods sat on
// that bridge, and their connections to a Service endpoint of the same node reported as failing.
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import type { Pod } from "../src/model/k8s.ts";
import { explainService } from "../src/service/explain.ts";
import type { ClientVerdict } from "../src/service/report.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

const CLIENT = "10.180.2.200";
const addr = (i: number, ifname: string, cidr: string) => `${i}: ${ifname}    inet ${cidr} scope global ${ifname}\\       valid_lft forever preferred_lft forever\n`;

/** node-1 (pod CIDR 10.180.2.0/24) with an endpoint of ns1/svc1 (10.180.2.5) and a client pod; the other on node-2. */
function bundle(ipAddr: string | undefined, sysctls: string): Bundle {
  const services = [service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.30.0.41", clusterIPs: ["172.30.0.41"], ports: [{ name: "p80", port: 80, protocol: "TCP" }] })];
  const slices = [slice("ns1", "svc1", [{ ip: "10.180.0.1", node: "node-2" }, { ip: "10.180.2.5", node: "node-1" }], [{ name: "p80", port: 80 }])];
  const b = bundleOf({ dump: kubeProxyRules(services, slices, "10.180.0.0/16"), nodeName: "node-1", nodeIP: "192.168.0.2", services, slices });
  b.objects.nodes[0]!.spec = { podCIDR: "10.180.2.0/24", podCIDRs: ["10.180.2.0/24"] };
  b.objects.pods.push({ apiVersion: "v1", kind: "Pod", metadata: { name: "client", namespace: "ns1" }, spec: { nodeName: "node-1", containers: [] }, status: { phase: "Running", podIP: CLIENT, podIPs: [{ ip: CLIENT }] } } as Pod);
  if (ipAddr !== undefined) b.nodes[0]!.sections["ip-addr"] = { stdout: addr(1, "lo", "127.0.0.1/8") + addr(2, "eth0", "192.168.0.2/24") + ipAddr, exitCode: 0 };
  b.nodes[0]!.sections.sysctls = { stdout: sysctls, exitCode: 0 };
  return b;
}

function podClient(b: Bundle): ClientVerdict {
  const r = explainService(b, "ns1", "svc1");
  return r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!.clients.find((c) => c.client === "pod-same-node")!;
}

function packet(b: Bundle) {
  return explainService(b, "ns1", "svc1", { packet: { source: CLIENT, destination: "172.30.0.41", port: 80, protocol: "tcp" } }).packet![0]!;
}

// Calico's node: pods routed through cali* veths, tunl0 holds a /32 of the pod CIDR
const CALICO = addr(4, "tunl0", "10.180.2.192/32");

describe("a routed CNI next to another bridge: the pods' replies are routed, un-NATed whatever bridge-nf-call-iptables says", () => {
  for (
    const [what, ipAddr, sysctls] of [
      ["Docker's docker0, br_netfilter not loaded", CALICO + addr(3, "docker0", "172.17.0.1/16"), "net.ipv4.conf.all.route_localnet=1\nbrport.docker0.veth1a2b3c.hairpin_mode=0\n"],
      ["libvirt's virbr0, bridge-nf-call-iptables=0", CALICO + addr(3, "virbr0", "192.168.122.1/24"), "net.bridge.bridge-nf-call-iptables=0\nbrport.virbr0.virbr0-nic.hairpin_mode=0\n"],
    ] as const
  ) {
    it(`${what}: the report's pod client completes to both endpoints, with no bridge caveat`, () => {
      const v = podClient(bundle(ipAddr, sysctls));
      expect(v.source).toBe(CLIENT);
      expect(v.endpoints.map((e) => [e.endpoint, e.masqueraded, e.replyFails])).toEqual([["10.180.0.1:80", false, undefined], ["10.180.2.5:80", false, undefined]]);
      expect(v.reason).not.toContain("completes");
      expect(v.caveats.join("\n")).not.toMatch(/bridge|br_netfilter/);
    });
    it(`${what}: so does the packet question --source ${CLIENT}`, () => {
      const a = packet(bundle(ipAddr, sysctls));
      expect(a.endpoints.every((e) => e.replyFails === undefined)).toBe(true);
      expect(a.caveats.join("\n")).not.toMatch(/bridge|br_netfilter/);
    });
  }
});

describe("a bridge CNI next to docker0: the pods' bridge is the one holding their gateway", () => {
  it("cni0 holds 10.180.2.1/24: the same-node reply fails there, and the caveat names cni0, not docker0 (listed first)", () => {
    const v = podClient(bundle(
      addr(3, "docker0", "172.17.0.1/16") + addr(4, "cni0", "10.180.2.1/24"),
      "net.bridge.bridge-nf-call-iptables=0\nbrport.docker0.veth1a2b3c.hairpin_mode=0\nbrport.cni0.vethaa11.hairpin_mode=1\nbrport.cni0.vethbb22.hairpin_mode=1\n",
    ));
    expect(v.endpoints.map((e) => [e.endpoint, e.replyFails])).toEqual([["10.180.0.1:80", undefined], ["10.180.2.5:80", "bridge-not-filtered"]]);
    expect(v.caveats.join("\n")).toContain("replies from 10.180.2.5:80 cross bridge cni0 at layer 2 and net.bridge.bridge-nf-call-iptables=0");
  });
  it("the node's addresses not collected: whether the pods sit on the bridge decides, said, and no branch is marked failed", () => {
    const a = packet(bundle(undefined, "net.bridge.bridge-nf-call-iptables=0\nbrport.docker0.veth1a2b3c.hairpin_mode=0\n"));
    expect(a.endpoints.every((e) => e.replyFails === undefined)).toBe(true);
    expect(a.caveats.join("\n")).toContain(
      "replies from 10.180.2.5:80 do not complete if the pods sit on bridge docker0 (the node's addresses (ip -o addr), which show the interface holding the pods' gateway, were not collected)",
    );
  });
});
