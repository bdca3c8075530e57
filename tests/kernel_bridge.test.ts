// Issue 14 point 4, checked against the kernel: pods on a Linux bridge (cni0) in a network namespace that plays the
// node, a ClusterIP DNATed by kube-proxy-layout rules, real TCP connections. The node's sysctls section comes from the
// real collection script run in that namespace. With net.bridge.bridge-nf-call-iptables 0, a pod reaching an endpoint
// on the same bridge through the ClusterIP gets no usable reply; with hairpin_mode 0 on its port, an endpoint reaching
// itself through its Service gets nothing back. The plugin's answer must follow the collected values.
import { spawn } from "node:child_process";
import process from "node:process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCollectionOutput } from "../src/bundle/collection_output.ts";
import { TARGETED_SCRIPT } from "../src/kube/targeted_script.ts";
import { explainService } from "../src/service/explain.ts";
import type { ClientVerdict } from "../src/service/report.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { createNetns, loadIptables, type Netns, requireNetns } from "./helpers/netns.ts";

const VIP = "10.96.0.50";
const CLIENT = "10.244.0.10";
const EP = "10.244.0.20";
const RULES = `*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-SVC-WEB - [0:0]
:KUBE-SEP-EP - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
-A KUBE-SERVICES -d ${VIP}/32 -p tcp -m comment --comment "ns1/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-WEB
-A KUBE-SVC-WEB ! -s 10.244.0.0/16 -d ${VIP}/32 -p tcp -m comment --comment "ns1/web:http cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ
-A KUBE-SVC-WEB -m comment --comment "ns1/web:http -> ${EP}:80" -j KUBE-SEP-EP
-A KUBE-SEP-EP -s ${EP}/32 -m comment --comment "ns1/web:http" -j KUBE-MARK-MASQ
-A KUBE-SEP-EP -p tcp -m comment --comment "ns1/web:http" -m tcp -j DNAT --to-destination ${EP}:80
COMMIT
`;

/** Connects from a namespace; resolves true when the TCP handshake completes within 1.5 s. */
function connects(ns: Netns, host: string): Promise<boolean> {
  const code = `const s=require("net").connect({host:${JSON.stringify(host)},port:80});s.setTimeout(1500);s.on("connect",()=>{process.exit(0)});s.on("timeout",()=>process.exit(2));s.on("error",()=>process.exit(3));`;
  return new Promise((done) => {
    const c = spawn("ip", ["netns", "exec", ns.name, process.execPath, "-e", code], { stdio: "ignore" });
    c.on("close", (status) => done(status === 0));
  });
}

describe.runIf(requireNetns(["sysctl"]))("pods on a bridge: bridge-nf-call-iptables and hairpin_mode (kernel-checked)", () => {
  let node: Netns;
  let client: Netns;
  let endpoint: Netns;
  let server: ReturnType<typeof spawn> | undefined;
  beforeAll(async () => {
    node = await createNetns("npt-brnode");
    client = await createNetns("npt-brcli");
    endpoint = await createNetns("npt-brep");
    await node.run(["ip", "-batch", "-"], {
      input: [
        "link set lo up",
        "link add cni0 type bridge",
        "addr add 10.244.0.1/24 dev cni0",
        "link set cni0 up",
        `link add vethc type veth peer name eth0 netns ${client.name}`,
        `link add vethe type veth peer name eth0 netns ${endpoint.name}`,
        "link set vethc master cni0",
        "link set vethe master cni0",
        "link set vethc up",
        "link set vethe up",
      ].join("\n") + "\n",
    });
    for (const [ns, ip] of [[client, CLIENT], [endpoint, EP]] as const) {
      await ns.run(["ip", "-batch", "-"], { input: `link set lo up\naddr add ${ip}/24 dev eth0\nlink set eth0 up\nroute add default via 10.244.0.1\n` });
    }
    await node.run(["sysctl", "-qw", "net.ipv4.ip_forward=1"]);
    await loadIptables(node, RULES, { backend: "nft", family: 4 });
    server = spawn("ip", ["netns", "exec", endpoint.name, process.execPath, "-e", `require("net").createServer((s)=>s.end()).listen(80,"0.0.0.0")`], { stdio: "ignore" });
    await new Promise((r) => setTimeout(r, 300));
  }, 60_000);
  afterAll(async () => {
    server?.kill("SIGKILL");
    for (const ns of [node, client, endpoint]) await ns?.destroy();
  });

  async function answer(): Promise<{ pod: ClientVerdict; hairpin: ClientVerdict }> {
    // the whole-node collection as capture runs it (scope:node, the script on stdin)
    const out = await node.exec(["sh", "-c", 'sh -s "$@"', "sh", "scope:node"], { input: TARGETED_SCRIPT });
    const collected = parseCollectionOutput(out.stdout, out.stderr, []);
    const b = bundleOf({
      dump: RULES,
      nodeName: "node-1",
      nodeIP: "192.168.0.2",
      clusterCIDRs: ["10.244.0.0/16"],
      services: [service("ns1", "web", { type: "ClusterIP", clusterIP: VIP, ports: [{ name: "http", port: 80, protocol: "TCP" }] })],
      slices: [slice("ns1", "web", [{ ip: EP, node: "node-1" }], [{ name: "http", port: 80 }])],
    });
    b.nodes[0]!.sections.sysctls = collected.sections.sysctls!;
    // the node's addresses: cni0 holds the pods' gateway, which is what puts the pods on that bridge (bridge_checks.ts)
    b.nodes[0]!.sections["ip-addr"] = collected.sections["ip-addr"]!;
    b.objects.pods.push({ apiVersion: "v1", kind: "Pod", metadata: { name: "client", namespace: "ns1" }, spec: { nodeName: "node-1", containers: [] }, status: { podIP: CLIENT } });
    const r = explainService(b, "ns1", "web");
    const cip = r.nodes[0]!.ports[0]!.entryPoints[0]!;
    return { pod: cip.clients.find((c) => c.client === "pod-same-node")!, hairpin: cip.clients.find((c) => c.client === "hairpin")! };
  }

  it.each([
    { nf: "1", hairpin: "on" },
    { nf: "0", hairpin: "off" },
    { nf: "1", hairpin: "off" },
    { nf: "0", hairpin: "on" },
  ])("bridge-nf-call-iptables=$nf, hairpin $hairpin", async ({ nf, hairpin }) => {
    await node.run(["sysctl", "-qw", `net.bridge.bridge-nf-call-iptables=${nf}`]);
    await node.run(["ip", "link", "set", "vethe", "type", "bridge_slave", "hairpin", hairpin]);
    await node.run(["conntrack", "-F"]).catch(() => "");
    const kernelPod = await connects(client, VIP);
    const kernelSelf = await connects(endpoint, VIP);
    const a = await answer();
    expect(a.pod.source).toBe(CLIENT);
    const plugin = (v: ClientVerdict) => v.outcome === "forwarded" && v.endpoints.every((e) => e.replyFails === undefined);
    expect({ pod: plugin(a.pod), self: plugin(a.hairpin) }).toEqual({ pod: kernelPod, self: kernelSelf });
    // The kernel: a pod reaches a bridge neighbour through the ClusterIP only with br_netfilter on; a pod reaches itself
    // with hairpin on, or with br_netfilter off (then the node routes the packet back out of cni0 itself).
    expect([kernelPod, kernelSelf]).toEqual([nf === "1", hairpin === "on" || nf !== "1"]);
  });
});
