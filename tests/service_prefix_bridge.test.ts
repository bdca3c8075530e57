// InterfaceNamePrefix (`! -i veth+`) on a node whose veths are bridge ports (tests/fixtures/service/prefix-bridge):
// a pod's routed packet arrives on the bridge, which the prefix does not name, so kube-proxy's rule marks it for
// masquerade. It was traced arriving on a veth and answered "not masqueraded".
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";

describe("InterfaceNamePrefix detector on a bridge CNI", () => {
  const dir = "tests/fixtures/service/prefix-bridge";
  it("a pod of the node is traced arriving on the bridge, masqueraded by `! -i veth+`, and the note says why", () => {
    const r = explainService(readBundle(dir), "ns1", "web");
    const node = r.nodes[0]!;
    const pod = node.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!.clients.find((c) => c.client === "pod-same-node")!;
    expect(pod.endpoints.map((e) => e.masqueraded)).toEqual([true]);
    expect(node.notes.join("\n")).toContain("this node's pods sit behind bridge cni0 (cni0 holds the pods' gateway 10.244.0.1/24 and is a bridge (the node's sysctls)): a pod's routed packets arrive on cni0");
  });
  const podVerdict = (b: ReturnType<typeof readBundle>) => {
    const n = explainService(b, "ns1", "web").nodes[0]!;
    return { n, pod: n.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!.clients.find((c) => c.client === "pod-same-node")! };
  };
  it("without the sysctls, the addresses tell it: cni0 holds the pods' gateway on a subnet, so the pods sit behind it", () => {
    const b = readBundle(dir);
    delete b.nodes[0]!.sections.sysctls;
    const { n, pod } = podVerdict(b);
    expect(pod.endpoints.map((e) => e.masqueraded)).toEqual([true]);
    expect(n.notes.join("\n")).toContain("cni0 holds the pods' gateway 10.244.0.1/24 (the node's addresses; its sysctls, which list bridge ports, were not collected)");
  });
  it("with neither the sysctls nor the addresses: traced on the veth, and the note names what decides it", () => {
    const b = readBundle(dir);
    delete b.nodes[0]!.sections.sysctls;
    delete b.nodes[0]!.sections["ip-addr"];
    const { n, pod } = podVerdict(b);
    expect(pod.endpoints.map((e) => e.masqueraded)).toEqual([false]);
    expect(n.notes.join("\n")).toMatch(/whether this node's pods sit behind a bridge .* was not collected: the node's sysctls and addresses decide it/);
  });
  it("a bridge with veth ports that holds no pod address (Docker's docker0) is not the pods': a point-to-point CNI's pods arrive on their veths", () => {
    const b = readBundle(dir);
    const sec = b.nodes[0]!.sections;
    // ptp CNI: each pod's veth holds the gateway as a /32; docker0 has one container port
    sec["ip-addr"]!.stdout = sec["ip-addr"]!.stdout.replace(/^5: cni0 .*$/m, "5: docker0    inet 172.17.0.1/16 brd 172.17.255.255 scope global docker0\\       valid_lft forever preferred_lft forever\n7: vethc1    inet 10.244.0.1/32 scope global vethc1\\       valid_lft forever preferred_lft forever");
    sec.sysctls!.stdout = sec.sysctls!.stdout.replace(/brport\.cni0\.\S+\n/g, "").replace(/$/, "\nbrport.docker0.vethd0cker1.hairpin_mode=0\n");
    expect(sec.sysctls!.stdout).toContain("brport.docker0.vethd0cker1");
    const { n, pod } = podVerdict(b);
    expect(pod.endpoints.map((e) => e.masqueraded)).toEqual([false]);
    expect(n.notes.join("\n")).toContain("pods of this node are traced arriving on veth0a1b2c3d");
  });
});
