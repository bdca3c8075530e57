// A packet question (--source/--dest, --from-pod) gets the same checks beyond the rules as the report's clients
// (explain.ts): the reply path of an unmasqueraded DNAT, the bridge a same-node reply crosses, and, new here, a
// loopback source's route out of the node (route_localnet). Found by an audit that checked each in the kernel
// (tests/kernel_bridge.test.ts, kernel_reply_path.test.ts; route_localnet: 0 of 4 connections with it 0, 4 of 4 with 1).
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import type { PacketAnswer } from "../src/service/report.ts";
import { localhostNodePortBundle } from "./helpers/localhost_nodeports.ts";

function answer(b: Bundle, ns: string, name: string, source: string, destination: string, port: number, nodes?: string[]): PacketAnswer {
  const r = explainService(b, ns, name, { packet: { source, destination, port, protocol: "tcp" }, ...(nodes ? { nodes } : {}) });
  return r.packet![0]!;
}

describe("route_localnet: 127.0.0.1 to a localhost NodePort (kube-proxy's TestEnableLocalhostNodePortsIPv4, v1.27)", () => {
  const base = localhostNodePortBundle;
  const q = (b: Bundle) => answer(b, "ns1", "svc1", "127.0.0.1", "127.0.0.1", 30001);

  it("every interface at 0: forwarded by the rules, but no connection completes, and the answer says why", () => {
    const a = q(base("net.ipv4.conf.all.route_localnet=0\nnet.ipv4.conf.lo.route_localnet=0\nnet.ipv4.conf.eth0.route_localnet=0\n"));
    expect(a.outcome).toBe("forwarded");
    expect(a.endpoints.map((e) => e.replyFails)).toEqual(["route-localnet-off", "route-localnet-off"]);
    expect(a.reason).toMatch(/; but no connection completes: 10\.244\.0\.1:80, 10\.244\.2\.1:80/);
    expect(a.caveats.join("\n")).toContain("net.ipv4.conf.all.route_localnet=0 and no interface of the node has it");
  });
  it("all at 1 (what kube-proxy sets): completes, nothing said", () => {
    const a = q(base("net.ipv4.conf.all.route_localnet=1\nnet.ipv4.conf.eth0.route_localnet=0\n"));
    expect(a.endpoints.some((e) => e.replyFails)).toBe(false);
    expect(a.caveats.join("\n")).not.toContain("route_localnet");
  });
  it("one interface at 1: the interface the route takes decides, and the answer names it", () => {
    const a = q(base("net.ipv4.conf.all.route_localnet=0\nnet.ipv4.conf.eth0.route_localnet=1\nnet.ipv4.conf.cni0.route_localnet=0\n"));
    expect(a.endpoints.some((e) => e.replyFails)).toBe(false);
    expect(a.caveats.join("\n")).toContain("it is routed only out of an interface with route_localnet 1 (eth0)");
  });
  it("sysctls not collected: the answer names the setting that decides", () => {
    expect(q(base()).caveats.join("\n")).toContain("net.ipv4.conf.all.route_localnet=1 or the interface's own (not collected");
  });
});

describe("the reply path of a packet question", () => {
  // nftables-lab (kube-proxy's TestOverallNFTablesRules): svc2 is externalTrafficPolicy Local; its endpoint put on a
  // third node, as tests/service_reply_path.test.ts does for the report's clients
  const b = structuredClone(readBundle("examples/nftables-lab"));
  for (const s of b.objects.endpointSlices) if (s.metadata.labels?.["kubernetes.io/service-name"] === "svc2") for (const e of s.endpoints ?? []) e.nodeName = "node-c";
  // the client, a Pod of another node (node-b): its node is known, so the reply path is definite
  b.objects.pods.push({ apiVersion: "v1", kind: "Pod", metadata: { name: "client", namespace: "ns2" }, spec: { nodeName: "node-b", containers: [] }, status: { podIP: "10.180.5.7" } } as never);
  it("a pod of another node to the NodePort: not masqueraded, the reply bypasses this node", () => {
    const nodePort = b.objects.services.find((s) => s.metadata.name === "svc2")!.spec!.ports![0]!.nodePort!;
    const a = answer(b, "ns2", "svc2", "10.180.5.7", "192.168.0.2", nodePort);
    expect(a.endpoints.map((e) => [e.endpoint, e.masqueraded, e.replyFails])).toEqual([["10.180.0.2:80", false, "bypasses-node"]]);
    expect(a.reason).toMatch(/the connection does not complete$/);
  });
});

describe("a source in this node's pod CIDR that is no Pod of the bundle is a pod of this node", () => {
  // iptables-lab with the node's bridge sysctls and addresses (cni0 holds the pods' gateway, so the pods sit on it):
  // k8s1's pod CIDR is 10.244.0.0/24; kube-dns has 10.244.0.5 there
  const b = structuredClone(readBundle("examples/iptables-lab"));
  // without the lab host's `-A POSTROUTING -o eth0 -j MASQUERADE` (line 128), whose output interface is not
  // collected: the branches are then known not to be masqueraded, which the bridge failure rests on
  const k8s1Rules = b.nodes.find((n) => n.name === "k8s1")!.sections["iptables-save"]!;
  k8s1Rules.stdout = k8s1Rules.stdout.replace("-A POSTROUTING -o eth0 -j MASQUERADE\n", "");
  b.nodes.find((n) => n.name === "k8s1")!.sections.sysctls = { stdout: "net.bridge.bridge-nf-call-iptables=0\nbrport.cni0.veth1.hairpin_mode=1\n", exitCode: 0 };
  b.nodes.find((n) => n.name === "k8s1")!.sections["ip-addr"] = {
    stdout: "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n" +
      "2: eth0    inet 10.210.40.172/24 brd 10.210.40.255 scope global eth0\\       valid_lft forever preferred_lft forever\n" +
      "3: cni0    inet 10.244.0.1/24 brd 10.244.0.255 scope global cni0\\       valid_lft forever preferred_lft forever\n",
    exitCode: 0,
  };
  it("its reply from the same-node endpoint crosses the bridge unfiltered: that branch does not complete", () => {
    const a = answer(b, "kube-system", "kube-dns", "10.244.0.77", "10.96.0.10", 53, ["k8s1"]);
    expect(k8s1Rules.stdout).not.toContain("-o eth0 -j MASQUERADE");
    const same = a.endpoints.find((e) => e.endpoint === "10.244.0.5:53")!;
    expect(same.masqueraded).toBe(false);
    expect(same.replyFails).toBe("bridge-not-filtered");
    expect(a.endpoints.find((e) => e.endpoint !== "10.244.0.5:53")!.replyFails).toBeUndefined();
  });
});
