// Audit-topo finding 1: zone hints on a Service without the topology annotation are followed only by kube-proxy v1.31+
// (ServiceTrafficDistribution on by default; before, canUseTopology needs the annotation, and KEP-4444 "Version Skew":
// an older kube-proxy "ignores the hints"). kube-proxy's version is not in the API: the Node's kubeProxyVersion and
// kubeletVersion are both the kubelet's (pkg/kubelet/nodestatus), and kube-proxy may run up to three minors from it
// (version skew policy). When that version decides, the note says which version and where it was read, and a node
// programming what the other side of v1.31 programs is not called stale or missing.
import { describe, expect, it } from "vitest";
import type { Service } from "../src/model/k8s.ts";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, node, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

const svc = (): Service => service("ns", "web", { type: "ClusterIP", clusterIP: "10.96.0.50", clusterIPs: ["10.96.0.50"], ports: [{ name: "p80", port: 80, targetPort: 8080, protocol: "TCP" }], trafficDistribution: "PreferClose" } as never);
const eps = [{ ip: "10.244.1.10", node: "node-a", zone: "zone-a" }, { ip: "10.244.2.10", node: "node-b", zone: "zone-b" }];
const run = (o: { version?: string; nodeObject?: boolean; programs: string[] }) => {
  const s = svc();
  const sl = slice("ns", "web", eps.map((e) => ({ ip: e.ip, node: e.node })), [{ name: "p80", port: 8080 }]);
  sl.endpoints!.forEach((ep, i) => {
    ep.zone = eps[i]!.zone;
    ep.hints = { forZones: [{ name: eps[i]!.zone }] };
  });
  const rules = kubeProxyRules([s], [slice("ns", "web", eps.filter((e) => o.programs.includes(e.ip)).map((e) => ({ ip: e.ip, node: e.node })), [{ name: "p80", port: 8080 }])], "10.244.0.0/16");
  const b = bundleOf({ dump: rules, nodeName: "node-a", nodeIP: "192.168.1.1", services: [s], slices: [sl], clusterCIDRs: ["10.244.0.0/16"] });
  const n = node("node-a", "192.168.1.1", { "topology.kubernetes.io/zone": "zone-a" });
  if (o.version) n.status!.nodeInfo = { kubeletVersion: o.version } as never;
  b.objects.nodes = o.nodeObject === false ? [] : [n];
  return explainService(b, "ns", "web").nodes[0]!;
};
const BOTH = ["10.244.1.10", "10.244.2.10"];

describe("zone hints without the annotation, kube-proxy's version not its own", () => {
  it("version unknown (no status.nodeInfo), node sends to both zones: no stale-on-node; one unverifiable item naming v1.31", () => {
    const n = run({ programs: BOTH });
    expect(n.drift.map((d) => d.kind)).toEqual(["unverifiable"]);
    expect(n.drift[0]!.message).toMatch(/^ns\/web:p80: node-a sends traffic to 10\.244\.1\.10:8080, 10\.244\.2\.10:8080, as kube-proxy before v1\.31 follows the zone hints only with the annotation service\.kubernetes\.io\/topology-mode.*kube-proxy's version, which the API does not hold, decides whether this is drift/);
    expect(n.notes.join("\n")).toMatch(/hints for zone zone-a: 1 of 2 ready endpoints; this rests on kube-proxy being v1\.31 or later: kube-proxy's version is not known/);
  });
  it("no Node object (namespace-scoped bundle): the same, with the zone from the endpoint", () => {
    const n = run({ nodeObject: false, programs: BOTH });
    expect(n.drift.map((d) => d.kind)).toEqual(["unverifiable"]);
  });
  it("version unknown, node follows the hints: no drift, and the note still says what it rests on", () => {
    const n = run({ programs: ["10.244.1.10"] });
    expect(n.drift).toEqual([]);
    expect(n.notes.join("\n")).toMatch(/this rests on kube-proxy being v1\.31 or later/);
  });
  it("kubeletVersion v1.31.4: the note names it and where it was read; both-zone rules are not stale", () => {
    const n = run({ version: "v1.31.4", programs: BOTH });
    expect(n.drift.map((d) => d.kind)).toEqual(["unverifiable"]);
    expect(n.notes.join("\n")).toMatch(/this rests on kube-proxy being v1\.31 or later: the v1\.31 read is v1\.31\.4, the Node's kubeletVersion, which the kubelet writes/);
  });
  it("kubeletVersion v1.34.1: kube-proxy is at least v1.31 within the skew policy, so both-zone rules are drift", () => {
    const n = run({ version: "v1.34.1", programs: BOTH });
    expect(n.drift.map((d) => [d.kind, d.endpoint])).toEqual([["stale-on-node", "10.244.2.10:8080"]]);
  });
  it("kubeletVersion v1.30.2, node follows the hints: not stale either (a v1.31+ kube-proxy would)", () => {
    const n = run({ version: "v1.30.2", programs: ["10.244.1.10"] });
    expect(n.drift.map((d) => d.kind)).toEqual(["unverifiable"]);
    expect(n.notes.join("\n")).toMatch(/this rests on kube-proxy being before v1\.31/);
  });
});
