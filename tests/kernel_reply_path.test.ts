// Issue 14 point 5, checked against the kernel: asymmetric replies. kube-proxy's own v1.27 rules
// (TestOverallIPTablesRulesWithMultipleServices) are loaded into a namespace that plays the node; a pod of another
// node (10.5.0.9, inside the cluster CIDR 10.0.0.0/8) connects over a routed fabric to the node's NodePorts, and the
// endpoints (10.180.0.2, 10.180.0.3) sit on a third node that routes replies straight back over the fabric, as a flat
// pod network does. ns2/svc2 (externalTrafficPolicy: Local, no local endpoint) sends pod traffic to the cluster-wide
// chain without masquerade: the endpoint's SYN-ACK goes straight to the pod, from the endpoint's address, and the
// connection never completes (the node's conntrack entry stays UNREPLIED). ns3/svc3 (Cluster) masquerades: the reply
// returns through the node and the connection completes. The plugin's verdict for "a pod on another node" at each
// NodePort must say the same.
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, fixture, overallObjects } from "./helpers/bundles.ts";
import { createNetns, findTool, installKubeProxyJumps, loadIptables, type Netns, requireNetns } from "./helpers/netns.ts";

const DUMP = "kube-proxy/TestOverallIPTablesRulesWithMultipleServices.v1.27.iptables-save";

describe.runIf(requireNetns(["curl", "conntrack"])).each(["nft", "legacy"] as const)("asymmetric replies (kernel-checked, iptables-%s)", (backend) => {
  const made: Netns[] = [];
  const servers: ChildProcess[] = [];
  let node: Netns;
  let client: Netns;

  beforeAll(async () => {
    const [n, fabric, c, ep] = [await createNetns("rp-node"), await createNetns("rp-fabric"), await createNetns("rp-client"), await createNetns("rp-ep")];
    made.push(n, fabric, c, ep);
    node = n;
    client = c;
    const ip = (ns: Netns, ...args: string[]) => ns.run(["ip", ...args]);
    // fabric <-> node, client, endpoints
    await ip(fabric, "link", "add", "fn", "type", "veth", "peer", "name", "eth0", "netns", n.name);
    await ip(fabric, "link", "add", "fc", "type", "veth", "peer", "name", "eth0", "netns", c.name);
    await ip(fabric, "link", "add", "fe", "type", "veth", "peer", "name", "eth0", "netns", ep.name);
    for (const [dev, addr] of [["fn", "192.168.0.1/24"], ["fc", "10.5.0.1/24"], ["fe", "10.180.0.254/24"]] as const) {
      await ip(fabric, "addr", "add", addr, "dev", dev);
      await ip(fabric, "link", "set", dev, "up");
    }
    for (const [ns, addrs, gw] of [[n, ["192.168.0.2/24"], "192.168.0.1"], [c, ["10.5.0.9/24"], "10.5.0.1"], [ep, ["10.180.0.2/24", "10.180.0.3/24"], "10.180.0.254"]] as const) {
      for (const a of addrs) await ip(ns, "addr", "add", a, "dev", "eth0");
      await ip(ns, "link", "set", "eth0", "up");
      await ip(ns, "link", "set", "lo", "up");
      await ip(ns, "route", "add", "default", "via", gw);
    }
    for (const ns of [fabric, n]) await ns.run(["sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"]);
    // the node: kube-proxy's rules, with the jumps kube-proxy adds from the builtin chains
    await loadIptables(n, fixture(DUMP), { backend, family: 4 });
    await installKubeProxyJumps(n, backend, 4);
    // the endpoints answer HTTP on both addresses
    const script = `const net=require("net");for(const a of ["10.180.0.2","10.180.0.3"])net.createServer((s)=>s.end("HTTP/1.0 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok")).listen(80,a);`;
    const srv = spawn(findTool("ip") ?? "ip", ["netns", "exec", ep.name, process.execPath, "-e", script], { stdio: "ignore" });
    servers.push(srv);
    for (let i = 0; i < 50; i++) {
      const r = await ep.exec(["sh", "-c", "cat /proc/net/tcp | grep -c ':0050 00000000:0000 0A'"]);
      if (Number(r.stdout.trim()) >= 2) break;
      await new Promise((res) => setTimeout(res, 100));
    }
  }, 60_000);

  afterAll(async () => {
    for (const s of servers) if (s.pid && s.exitCode === null) s.kill("SIGKILL");
    for (const ns of made) await ns.destroy();
  });

  async function kernel(nodePort: number): Promise<{ completed: boolean; conntrack: string }> {
    await node.run(["conntrack", "-F"]).catch(() => {});
    const r = await client.exec(["curl", "-s", "-m", "2", `http://192.168.0.2:${nodePort}/`]);
    const ct = (await node.exec(["conntrack", "-L", "-p", "tcp", "--dport", String(nodePort)])).stdout;
    return { completed: r.code === 0 && r.stdout === "ok", conntrack: ct };
  }

  function plugin(ns: string, name: string) {
    const { services, slices } = overallObjects("test-hostname", false);
    // the endpoints of svc2 and svc3 live on a third node (the API says where)
    for (const s of slices) for (const e of s.endpoints ?? []) if (!e.nodeName) e.nodeName = "node-b";
    const b = bundleOf({ dump: fixture(DUMP), nodeName: "test-hostname", nodeIP: "192.168.0.2", services, slices });
    const r = explainService(b, ns, name, { nodes: ["test-hostname"] });
    const port = r.nodes[0]!.ports[0]!;
    const nodePortEntry = port.entryPoints.find((e) => e.kind === "NodePort")!;
    return nodePortEntry.clients.find((c) => c.client === "pod-other-node")!;
  }

  it("ns2/svc2 (eTP Local, endpoint on a third node): the kernel never completes the connection; the plugin says the reply bypasses the node", async () => {
    const k = await kernel(3001);
    expect(k.completed).toBe(false);
    expect(k.conntrack).toMatch(/UNREPLIED/);
    const v = plugin("ns2", "svc2");
    expect(v.endpoints.map((e) => [e.endpoint, e.masqueraded, e.replyFails])).toEqual([["10.180.0.2:80", false, "bypasses-node"]]);
    expect(v.reason).toContain("the connection does not complete");
  }, 30_000);

  it("ns3/svc3 (eTP Cluster): masqueraded, the reply returns through the node and the connection completes; the plugin agrees", async () => {
    const k = await kernel(3003);
    expect(k.completed, k.conntrack).toBe(true);
    const v = plugin("ns3", "svc3");
    expect(v.endpoints.map((e) => [e.endpoint, e.masqueraded, e.replyFails])).toEqual([["10.180.0.3:80", true, undefined]]);
    expect(v.reason).not.toContain("does not complete");
  }, 30_000);
});
