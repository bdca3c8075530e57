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
    expect(node.notes.join("\n")).toContain("this node's veth* interfaces are ports of bridge cni0 (its sysctls): a pod's routed packets arrive on cni0");
  });
  it("without the bridge ports (sysctls not collected) the pod is taken to arrive on its veth, as before", () => {
    const b = readBundle(dir);
    delete b.nodes[0]!.sections.sysctls;
    const pod = explainService(b, "ns1", "web").nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!.clients.find((c) => c.client === "pod-same-node")!;
    expect(pod.endpoints.map((e) => e.masqueraded)).toEqual([false]);
  });
});
