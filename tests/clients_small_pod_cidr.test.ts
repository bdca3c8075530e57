// A node podCIDR longer than /24 (GKE's max-pods 32 gives /26; --node-cidr-mask-size 25/26 is common): the address
// that stands for a pod of the node must lie in that podCIDR. Offset 200 is past the end of a /26 (64 addresses): the
// client was taken from the cluster CIDR instead (an address on no node, traced with the wrong masquerade), or, with a
// NodeCIDR local-traffic detector (cluster CIDR = the node's /26), not traced at all.
import { describe, expect, it } from "vitest";
import { cidrContains, hostWithin } from "../src/model/ip.ts";
import { explainService } from "../src/service/explain.ts";
import type { ClientVerdict, ServiceReport } from "../src/service/report.ts";
import { bundleOf, node, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

const NODE = "node1";
const services = [service("default", "web", {
  type: "NodePort",
  clusterIP: "10.96.100.10",
  externalTrafficPolicy: "Cluster",
  ports: [{ port: 80, protocol: "TCP", nodePort: 30080 }],
})];
const slices = [slice("default", "web", [{ ip: "10.0.1.5", node: NODE }, { ip: "10.0.1.70", node: "node2" }], [{ port: 8080 }])];

/** node1 holds 10.0.1.0/26, node2 10.0.1.64/26; the rules' local-traffic detector is `! -s DETECTOR`. */
function bundle(detector: string) {
  const b = bundleOf({ dump: kubeProxyRules(services, slices, detector), nodeName: NODE, nodeIP: "192.168.0.2", services, slices });
  b.objects.nodes[0]!.spec = { podCIDR: "10.0.1.0/26", podCIDRs: ["10.0.1.0/26"] };
  const n2 = node("node2", "192.168.0.3");
  n2.spec = { podCIDR: "10.0.1.64/26", podCIDRs: ["10.0.1.64/26"] };
  b.objects.nodes.push(n2);
  return b;
}
const client = (r: ServiceReport, entry: string, kind: string): ClientVerdict | undefined =>
  r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === entry)!.clients.find((c) => c.client === kind);

describe("hostWithin", () => {
  it("wraps the offset into a prefix that holds fewer addresses, off its first and last", () => {
    expect(hostWithin("10.0.1.0/26", 200)).toBe("10.0.1.8");
    expect(hostWithin("10.0.1.64/26", 201)).toBe("10.0.1.73");
    expect(hostWithin("10.0.1.128/25", 200)).toBe("10.0.1.200");
    expect(hostWithin("10.244.0.0/24", 200)).toBe("10.244.0.200");
    expect(hostWithin("10.0.1.0/26", 64)).toBe("10.0.1.1");
    expect(hostWithin("10.0.1.0/26", 63)).toBe("10.0.1.62");
    expect(hostWithin("10.0.1.4/32", 200)).toBe("10.0.1.4");
    expect(hostWithin("fd00:10:244:1::/64", 200)).toBe("fd00:10:244:1::c8");
  });
});

describe("pod clients of a node whose podCIDR is a /26", () => {
  it("cluster-CIDR detector (10.0.0.0/16): the pod on this node is in its /26 and is not masqueraded", () => {
    const r = explainService(bundle("10.0.0.0/16"), "default", "web");
    const pod = client(r, "ClusterIP", "pod-same-node")!;
    expect(cidrContains("10.0.1.0/26", pod.source)).toBe(true);
    expect(pod.masquerade).toBe("never");
    const other = client(r, "NodePort", "pod-other-node")!;
    expect(cidrContains("10.0.1.64/26", other.source)).toBe(true);
  });

  it("a detector that does not cover the podCIDR (10.0.0.0/24): the node's pods are masqueraded, as kube-proxy's line does", () => {
    const pod = client(explainService(bundle("10.0.0.0/24"), "default", "web"), "ClusterIP", "pod-same-node")!;
    expect(cidrContains("10.0.1.0/26", pod.source)).toBe(true);
    expect(pod.masquerade).toBe("always");
  });

  it("NodeCIDR detector (the node's own /26): pod clients are traced, with no 'cluster CIDR is unknown' note", () => {
    const b = bundle("10.0.1.0/26");
    b.objects.nodes.pop();
    const r = explainService(b, "default", "web");
    expect(r.nodes[0]!.notes.join("\n")).not.toMatch(/cluster CIDR is unknown/);
    const pod = client(r, "ClusterIP", "pod-same-node")!;
    expect(pod.source).toBe("10.0.1.8");
    expect(pod.masquerade).toBe("never");
    // no other node's podCIDR, and the cluster CIDR is this node's: no address stands for a pod of another node
    expect(client(r, "NodePort", "pod-other-node")).toBeUndefined();
    expect(r.nodes[0]!.notes.join("\n")).toMatch(/no address of the cluster CIDR 10\.0\.1\.0\/26 lies outside node1's podCIDR 10\.0\.1\.0\/26/);
  });
});
