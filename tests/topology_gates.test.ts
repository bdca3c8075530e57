// Audit-topo finding 2: the feature gates kube-proxy's configuration sets decide which endpoints it programs, per
// version (pkg/features/kube_features.go versioned specs): ServiceTrafficDistribution (alpha off v1.30, beta on v1.31,
// GA v1.33) makes it follow zone hints without the annotation (pkg/proxy/topology.go canUseTopology, v1.30 tree:
// the annotation is read only with the gate off); TopologyAwareHints (on by default v1.24,
// GA v1.33) off makes it ignore them (v1.27–v1.30 canUseTopology); ProxyTerminatingEndpoints (alpha off v1.22, beta on
// v1.26, GA v1.28) on gives the serving-terminating fallback. Without the configuration in the bundle the version's
// default is taken and the note says the setting was not read. Rules are generated as kube-proxy writes them
// (tests/helpers/fake_node_rules.ts) for the set that kube-proxy programs.
import { describe, expect, it } from "vitest";
import type { EndpointSlice, Service } from "../src/model/k8s.ts";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, node, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

const svc = (annotations?: Record<string, string>): Service => {
  const s = service("ns", "web", { type: "ClusterIP", clusterIP: "10.96.0.50", clusterIPs: ["10.96.0.50"], ports: [{ name: "p80", port: 80, targetPort: 8080, protocol: "TCP" }], trafficDistribution: "PreferClose" } as never);
  if (annotations) s.metadata.annotations = annotations;
  return s;
};
const eps = [{ ip: "10.244.1.10", node: "node-a", zone: "zone-a" }, { ip: "10.244.2.10", node: "node-b", zone: "zone-b" }];
const hinted = (terminating = false): EndpointSlice => {
  const s = slice("ns", "web", eps.map((e) => ({ ip: e.ip, node: e.node })), [{ name: "p80", port: 8080 }]);
  s.endpoints!.forEach((ep, i) => {
    ep.zone = eps[i]!.zone;
    ep.hints = { forZones: [{ name: eps[i]!.zone }] };
    if (terminating) ep.conditions = { ready: false, serving: true, terminating: true };
  });
  return s;
};
const rulesFor = (s: Service, ips: string[]) =>
  kubeProxyRules([s], [slice("ns", "web", eps.filter((e) => ips.includes(e.ip)).map((e) => ({ ip: e.ip, node: e.node })), [{ name: "p80", port: 8080 }])], "10.244.0.0/16");

const run = (o: { version: string; gates?: string; programs: string[]; annotations?: Record<string, string>; terminating?: boolean }) => {
  const s = svc(o.annotations);
  const b = bundleOf({ dump: rulesFor(s, o.programs), nodeName: "node-a", nodeIP: "192.168.1.1", services: [s], slices: [hinted(o.terminating)], clusterCIDRs: ["10.244.0.0/16"] });
  const n = node("node-a", "192.168.1.1", { "topology.kubernetes.io/zone": "zone-a" });
  n.status!.nodeInfo = { kubeletVersion: o.version } as never;
  b.objects.nodes = [n];
  if (o.gates !== undefined) {
    b.objects.configMaps = [{
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "kube-proxy", namespace: "kube-system" },
      data: { "config.conf": `apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: iptables\n${o.gates}` },
    }] as never;
  }
  return explainService(b, "ns", "web").nodes[0]!;
};
const ZONE_A = ["10.244.1.10"];
const BOTH = ["10.244.1.10", "10.244.2.10"];
const kinds = (n: ReturnType<typeof run>) => n.drift.map((d) => [d.kind, d.endpoint]);

describe("ServiceTrafficDistribution as kube-proxy's configuration sets it", () => {
  it("v1.30 with the gate on (alpha): zone hints followed without the annotation, no drift, the note names the setting", () => {
    const n = run({ version: "v1.30.4", gates: "featureGates:\n  ServiceTrafficDistribution: true\n", programs: ZONE_A });
    expect(n.drift).toEqual([]);
    expect(n.notes.join("\n")).toMatch(/hints for zone zone-a \(feature gate ServiceTrafficDistribution is on in ConfigMap kube-system\/kube-proxy key config\.conf featureGates\): 1 of 2 ready endpoints/);
  });
  it("v1.30 with the gate on: a node sending to both zones is drift (the zone-b endpoint is stale on it)", () => {
    expect(kinds(run({ version: "v1.30.4", gates: "featureGates:\n  ServiceTrafficDistribution: true\n", programs: BOTH }))).toEqual([["stale-on-node", "10.244.2.10:8080"]]);
  });
  it("v1.31 with the gate off: the annotation is needed again, every endpoint is used, no drift", () => {
    const n = run({ version: "v1.31.5", gates: "featureGates:\n  ServiceTrafficDistribution: false\n", programs: BOTH });
    expect(n.drift).toEqual([]);
    expect(n.notes.join("\n")).toMatch(/follows them only with the annotation service\.kubernetes\.io\/topology-mode, which the Service lacks \(feature gate ServiceTrafficDistribution is off in ConfigMap/);
  });
  it("v1.30 without kube-proxy's configuration: the default (off), and the note says the setting was not read", () => {
    const n = run({ version: "v1.30.4", programs: BOTH });
    expect(n.drift).toEqual([]);
    expect(n.notes.join("\n")).toMatch(/ServiceTrafficDistribution is off by default in kube-proxy v1\.30 .*configuration is not in the bundle, so a featureGates setting there is not known/);
  });
  it("v1.33: GA and locked on, the configuration cannot turn it off", () => {
    expect(run({ version: "v1.33.1", gates: "featureGates:\n  ServiceTrafficDistribution: false\n", programs: ZONE_A }).drift).toEqual([]);
  });
});

describe("TopologyAwareHints off in kube-proxy's configuration", () => {
  it("v1.28, topology-mode Auto: hints not read, every endpoint used, no drift", () => {
    const n = run({ version: "v1.28.5", gates: "featureGates:\n  TopologyAwareHints: false\n", programs: BOTH, annotations: { "service.kubernetes.io/topology-mode": "Auto" } });
    expect(n.drift).toEqual([]);
    expect(n.notes.join("\n")).toMatch(/does not follow topology hints: feature gate TopologyAwareHints is off in ConfigMap/);
  });
  it("v1.28 with the gate at its default (on): the annotation makes the zone-a set, the same rules are drift", () => {
    expect(kinds(run({ version: "v1.28.5", gates: "", programs: BOTH, annotations: { "service.kubernetes.io/topology-mode": "Auto" } }))).toEqual([["stale-on-node", "10.244.2.10:8080"]]);
  });
});

describe("ProxyTerminatingEndpoints on in kube-proxy's configuration", () => {
  it("v1.25 with the gate on: the serving-terminating endpoints are used, no drift, the note names the setting", () => {
    const n = run({ version: "v1.25.9", gates: "featureGates:\n  ProxyTerminatingEndpoints: true\n", programs: BOTH, terminating: true });
    expect(n.drift).toEqual([]);
    expect(n.notes.join("\n")).toMatch(/serving-terminating endpoints are used \(feature gate ProxyTerminatingEndpoints is on in ConfigMap/);
  });
  it("v1.25 at its default (off): the same rules are drift, and the note says the configuration was not read", () => {
    const n = run({ version: "v1.25.9", programs: BOTH, terminating: true });
    expect(kinds(n).map((k) => k[0])).toContain("stale-on-node");
    expect(n.notes.join("\n")).toMatch(/does not fall back to serving-terminating endpoints \(feature gate ProxyTerminatingEndpoints is off by default in kube-proxy v1\.25 .*configuration is not in the bundle/);
  });
});
