// One-packet questions on a node whose addresses were not collected (no ip-addr section): loopback is always local
// (a host process to 127.0.0.1:NodePort starts in nat OUTPUT and is DNATed by KUBE-NODEPORTS, route_localnet
// permitting), the Node object's own addresses are local, and any other address cannot be placed: `--dst-type LOCAL`
// is then unknown (assumed not to match, said), not a confident "not local" (measured in a network namespace with
// kube-proxy's TestOverallIPTablesRules: 127.0.0.1 → 127.0.0.1:3003 is DNATed to 10.180.0.3:80; a secondary node
// address at :3003 too).
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, fixture, overallObjects } from "./helpers/bundles.ts";

const bundle = () => {
  const { services, slices } = overallObjects("test-node", true);
  return bundleOf({ dump: fixture("kube-proxy/TestOverallIPTablesRules.iptables-save"), nodeName: "test-node", nodeIP: "192.168.0.2", services, slices });
};
const ask = (b: ReturnType<typeof bundle>, source: string, destination: string, port: number) =>
  explainService(b, "ns3", "svc3", { packet: { source, destination, port, protocol: "tcp" } }).packet![0]!;

describe("packet locality without the node's addresses", () => {
  it("127.0.0.1 → 127.0.0.1:NodePort: a host process (nat OUTPUT), DNATed by KUBE-NODEPORTS", () => {
    const a = ask(bundle(), "127.0.0.1", "127.0.0.1", 3003);
    expect(a.outcome).toBe("forwarded");
    expect(a.endpoints.map((e) => e.endpoint)).toEqual(["10.180.0.3:80"]);
    expect(a.caveats.join("\n")).toMatch(/traced as a host-network client \(nat OUTPUT\)/);
  });

  it("an address of the Node object other than the InternalIP is local", () => {
    const b = bundle();
    b.objects.nodes[0]!.status!.addresses!.push({ type: "ExternalIP", address: "192.168.99.11" });
    expect(ask(b, "8.8.8.8", "192.168.99.11", 3003).outcome).toBe("forwarded");
  });

  it("an address the bundle cannot place: the LOCAL match is unknown and said, not a silent 'not handled'", () => {
    const a = ask(bundle(), "8.8.8.8", "192.168.99.11", 3003);
    expect(a.outcome).toBe("not-handled");
    expect(a.caveats.join("\n")).toMatch(/KUBE-SERVICES -j KUBE-NODEPORTS\) depends on whether 192\.168\.99\.11 is a local address of the node \(not collected: the node's `ip -o addr`\); assumed not to match/);
  });
});

// A client that is an endpoint of the Service, known from its EndpointSlice (nodeName) without a Pod object: it is a
// pod of that node, so a branch back to itself is a hairpin (bridge hairpin_mode, bridge-nf-call-iptables decide it).
describe("an endpoint client known from its EndpointSlice only", () => {
  it("is a pod of the node its slice names: the branch back to itself carries the hairpin caveat", () => {
    const b = bundle();
    const sl = b.objects.endpointSlices.find((s) => s.metadata.labels?.["kubernetes.io/service-name"] === "svc4")!;
    for (const ep of sl.endpoints ?? []) ep.nodeName = "test-node";
    b.objects.pods = [];
    const a = explainService(b, "ns4", "svc4", { packet: { source: "10.180.0.5", destination: "172.30.0.44", port: 80, protocol: "tcp" } }).packet![0]!;
    expect(a.outcome).toBe("forwarded");
    expect(a.caveats.join("\n")).toMatch(/hairpin_mode/);
  });
});

// A source that is another node's address (a host process or a hostNetwork pod there): its packets to a Service are
// translated in that node's nat OUTPUT first; traced here, the answer says so and where to trace it.
describe("a source that is another node's address", () => {
  it("says the packet is translated on that node first", () => {
    const b = bundle();
    b.objects.nodes.push({ apiVersion: "v1", kind: "Node", metadata: { name: "node-b" }, status: { addresses: [{ type: "InternalIP", address: "192.168.0.3" }] } } as never);
    const a = explainService(b, "ns3", "svc3", { packet: { source: "192.168.0.3", destination: "172.30.0.43", port: 80, protocol: "tcp" } }).packet![0]!;
    expect(a.caveats.join("\n")).toMatch(/192\.168\.0\.3 is an address of node node-b: a host process or hostNetwork pod there has its packets translated by node-b's rules first \(nat OUTPUT\)/);
  });
});

// The packet tree's text: what no dump shows is said under the answers (conntrack keeps existing connections on their
// endpoint), and a question no node answers says which nodes failed and why.
describe("the packet tree's text", () => {
  it("ends with the limits line, and a node without a capture is named as the reason no node answered", async () => {
    const { renderPacketTree } = await import("../src/report/packet_tree.ts");
    const { readBundle } = await import("../src/io/read_bundle.ts");
    const lab = readBundle("examples/iptables-lab");
    const ok = renderPacketTree(explainService(lab, "kube-system", "kube-dns", { packet: { source: "10.244.0.9", destination: "10.96.0.10", port: 53, protocol: "udp" } }));
    expect(ok).toMatch(/\nNot visible in a dump: conntrack state: connections that already exist keep the endpoint/);
    const none = renderPacketTree(explainService(lab, "kube-system", "kube-dns", { packet: { source: "10.244.2.9", destination: "10.96.0.10", port: 53, protocol: "udp" }, nodes: ["k8s2"] }));
    expect(none).toMatch(/no node answered: node k8s2: no datapath state was collected from this node/);
    expect(none.split("\n")[0]).toBe("Service kube-system/kube-dns: no answer");
  });
  it("through the CLI, a node the bundle holds no capture of is to be captured, not fixed (exit 1)", async () => {
    const { runCli } = await import("../src/cli/program.ts");
    let err = "";
    const io = { stdout: () => {}, stderr: (t: string) => void (err += t), env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: process.cwd() };
    const code = await runCli(["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab", "--from-pod", "coredns-78fcd69978-hf5sj"], io);
    expect(code).toBe(1);
    expect(err).toContain(
      "error: node k8s2: no datapath state was collected from this node; the bundle holds no capture of it: capture it (kubectl netpath capture svc/kube-dns -n kube-system --node k8s2 -o FILE)",
    );
  });
});
