// Issue 15 points 1-2: the endpoints kube-proxy on a node programs, as pkg/proxy/topology.go CategorizeEndpoints
// decides them (cases after topology_test.go's TestCategorizeEndpoints), and a node that follows its zone's hints is
// not drift: a cluster in two zones whose node in zone-a programs only the zone-a endpoints (rules generated as
// kube-proxy writes them, tests/helpers/fake_node_rules.ts) gets no drift with hints and a note saying why; the
// same rules without hints are drift.
import { describe, expect, it } from "vitest";
import type { EndpointSlice } from "../src/model/k8s.ts";
import type { EndpointInfo } from "../src/service/report.ts";
import { allowListObjects } from "../src/bundle/allow_list.ts";
import { explainService } from "../src/service/explain.ts";
import { nodeEndpoints, type TopologyNode } from "../src/service/topology.ts";
import { bundleOf, node, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

interface Ep {
  ip: string;
  node?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  zones?: string[];
  nodes?: string[];
}
const eps = (list: Ep[]): EndpointInfo[] =>
  list.map((e) => {
    const ready = e.ready ?? true;
    const info: EndpointInfo = { address: e.ip, ports: [{ portKey: "ns/svc:p80", port: 80, protocol: "TCP" }], ready, serving: e.serving ?? ready, terminating: e.terminating ?? false, slice: "s" };
    if (e.node) info.node = e.node;
    if (e.zones) info.hintsForZones = e.zones;
    if (e.nodes) info.hintsForNodes = e.nodes;
    return info;
  });
const zoneA: TopologyNode = { name: "node-a", zone: "zone-a" };

describe("nodeEndpoints follows CategorizeEndpoints", () => {
  it.each([
    { name: "hints for the node's zone: only those", node: zoneA, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4", zones: ["zone-b"] }, { ip: "10.1.2.5", zones: ["zone-a"] }], want: ["10.1.2.3:80", "10.1.2.5:80"], mode: "PreferSameZone" },
    { name: "one ready endpoint without a hint: hints ignored", node: zoneA, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4" }], want: ["10.1.2.3:80", "10.1.2.4:80"], mode: "" },
    { name: "a not-ready endpoint without a hint does not count", node: zoneA, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4", zones: ["zone-b"] }, { ip: "10.1.2.6", ready: false }], want: ["10.1.2.3:80"], mode: "PreferSameZone" },
    { name: "no endpoint hinted for the zone: all", node: { name: "node-c", zone: "zone-c" }, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4", zones: ["zone-b"] }], want: ["10.1.2.3:80", "10.1.2.4:80"], mode: "" },
    { name: "node without a zone label: all", node: { name: "node-x" }, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4", zones: ["zone-b"] }], want: ["10.1.2.3:80", "10.1.2.4:80"], mode: "" },
    { name: "node hints (PreferSameNode, v1.34+) win over zone hints", node: { ...zoneA, minor: 34 }, eps: [{ ip: "10.1.2.3", zones: ["zone-a"], nodes: ["node-a"] }, { ip: "10.1.2.5", zones: ["zone-a"], nodes: ["node-b"] }], want: ["10.1.2.3:80"], mode: "PreferSameNode" },
    { name: "node hints ignored by v1.33 (PreferSameTrafficDistribution alpha, off)", node: { ...zoneA, minor: 33 }, eps: [{ ip: "10.1.2.3", zones: ["zone-a"], nodes: ["node-a"] }, { ip: "10.1.2.5", zones: ["zone-a"], nodes: ["node-b"] }], want: ["10.1.2.3:80", "10.1.2.5:80"], mode: "PreferSameZone" },
    { name: "v1.30 without the topology-mode annotation: hints ignored", node: { ...zoneA, minor: 30 }, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4", zones: ["zone-b"] }], want: ["10.1.2.3:80", "10.1.2.4:80"], mode: "" },
    { name: "v1.30 with topology-mode Auto: hints followed", node: { ...zoneA, minor: 30 }, ann: { "service.kubernetes.io/topology-mode": "Auto" }, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4", zones: ["zone-b"] }], want: ["10.1.2.3:80"], mode: "PreferSameZone" },
    // pkg/proxy/service.go newBaseServiceInfo: the deprecated annotation, when present at all, takes precedence
    { name: "v1.30, topology-aware-hints Disabled beside topology-mode Auto: the deprecated one wins, hints ignored", node: { ...zoneA, minor: 30 }, ann: { "service.kubernetes.io/topology-aware-hints": "Disabled", "service.kubernetes.io/topology-mode": "Auto" }, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4", zones: ["zone-b"] }], want: ["10.1.2.3:80", "10.1.2.4:80"], mode: "" },
    { name: "v1.30, topology-aware-hints empty beside topology-mode Auto: hints ignored", node: { ...zoneA, minor: 30 }, ann: { "service.kubernetes.io/topology-aware-hints": "", "service.kubernetes.io/topology-mode": "Auto" }, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4", zones: ["zone-b"] }], want: ["10.1.2.3:80", "10.1.2.4:80"], mode: "" },
    { name: "v1.28, topology-mode PreferZone (any value but disabled): hints followed", node: { ...zoneA, minor: 28 }, ann: { "service.kubernetes.io/topology-mode": "PreferZone" }, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4", zones: ["zone-b"] }], want: ["10.1.2.3:80"], mode: "PreferSameZone" },
    // topology-mode came in v1.27; before, only topology-aware-hints: Auto/auto
    { name: "v1.26, topology-mode Auto alone: not read, hints ignored", node: { ...zoneA, minor: 26 }, ann: { "service.kubernetes.io/topology-mode": "Auto" }, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4", zones: ["zone-b"] }], want: ["10.1.2.3:80", "10.1.2.4:80"], mode: "" },
    { name: "v1.26, topology-aware-hints Auto: hints followed", node: { ...zoneA, minor: 26 }, ann: { "service.kubernetes.io/topology-aware-hints": "Auto" }, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4", zones: ["zone-b"] }], want: ["10.1.2.3:80"], mode: "PreferSameZone" },
    { name: "v1.25, topology-aware-hints PreferZone: only Auto counted then, hints ignored", node: { ...zoneA, minor: 25 }, ann: { "service.kubernetes.io/topology-aware-hints": "PreferZone" }, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4", zones: ["zone-b"] }], want: ["10.1.2.3:80", "10.1.2.4:80"], mode: "" },
    // feature gate TopologyAwareHints: off by default before v1.24
    { name: "v1.23, topology-aware-hints Auto: the gate is off, hints ignored", node: { ...zoneA, minor: 23 }, ann: { "service.kubernetes.io/topology-aware-hints": "Auto" }, eps: [{ ip: "10.1.2.3", zones: ["zone-a"] }, { ip: "10.1.2.4", zones: ["zone-b"] }], want: ["10.1.2.3:80", "10.1.2.4:80"], mode: "" },
    // feature gate ProxyTerminatingEndpoints: off by default before v1.26
    { name: "v1.25, no ready endpoint: no serving-terminating fallback", node: { ...zoneA, minor: 25 }, eps: [{ ip: "10.1.2.3", ready: false, serving: true, terminating: true }], want: [], mode: "" },
    { name: "no ready endpoint: serving-terminating ones, topology ignored", node: zoneA, eps: [{ ip: "10.1.2.3", ready: false, serving: true, terminating: true, zones: ["zone-b"] }, { ip: "10.1.2.4", ready: false, serving: false, terminating: true }], want: ["10.1.2.3:80"], mode: "" },
    { name: "ready endpoints exist but none in this topology is impossible (mode only when one is hinted here)", node: zoneA, eps: [{ ip: "10.1.2.3", zones: ["zone-a"], ready: true }, { ip: "10.1.2.4", ready: false, serving: true, terminating: true, zones: ["zone-b"] }], want: ["10.1.2.3:80"], mode: "PreferSameZone" },
  ] as { name: string; node: TopologyNode; ann?: Record<string, string>; eps: Ep[]; want: string[]; mode: string }[])("cluster policy: $name", ({ node, ann, eps: list, want, mode }) => {
    const r = nodeEndpoints(eps(list), "ns/svc:p80", "Cluster", ann ?? {}, node);
    expect(r.endpoints).toEqual(want);
    expect(r.mode).toBe(mode);
  });

  it.each([
    { name: "local ready endpoints", eps: [{ ip: "10.1.2.3", node: "node-a" }, { ip: "10.1.2.4", node: "node-b" }], want: ["10.1.2.3:80"], ready: true },
    { name: "local serving-terminating when no local ready one (even if remote ready ones exist)", eps: [{ ip: "10.1.2.3", node: "node-a", ready: false, serving: true, terminating: true }, { ip: "10.1.2.4", node: "node-b" }], want: ["10.1.2.3:80"], ready: false },
    { name: "no local endpoint: none", eps: [{ ip: "10.1.2.4", node: "node-b" }], want: [], ready: true },
    { name: "v1.25: no local fallback to serving-terminating endpoints", minor: 25, eps: [{ ip: "10.1.2.3", node: "node-a", ready: false, serving: true, terminating: true }, { ip: "10.1.2.4", node: "node-b" }], want: [], ready: true },
    { name: "topology hints do not apply to Local", eps: [{ ip: "10.1.2.3", node: "node-a", zones: ["zone-b"] }, { ip: "10.1.2.4", node: "node-b", zones: ["zone-a"] }], want: ["10.1.2.3:80"], ready: true },
  ] as { name: string; minor?: number; eps: Ep[]; want: string[]; ready: boolean }[])("local policy: $name", ({ minor, eps: list, want, ready }) => {
    const r = nodeEndpoints(eps(list), "ns/svc:p80", "Local", {}, minor === undefined ? zoneA : { ...zoneA, minor });
    expect(r.endpoints).toEqual(want);
    expect(r.ready).toBe(ready);
  });
});

describe("a node that follows its zone's hints is not drift", () => {
  const svc = service("ns", "web", { type: "ClusterIP", clusterIP: "10.96.0.50", clusterIPs: ["10.96.0.50"], ports: [{ name: "p80", port: 80, targetPort: 8080, protocol: "TCP" }], trafficDistribution: "PreferClose" } as never);
  const endpoints = [
    { ip: "10.244.1.10", node: "node-a", zone: "zone-a" },
    { ip: "10.244.1.11", node: "node-a2", zone: "zone-a" },
    { ip: "10.244.2.10", node: "node-b", zone: "zone-b" },
    { ip: "10.244.2.11", node: "node-b2", zone: "zone-b" },
  ];
  const full = (hints: boolean): EndpointSlice => {
    const s = slice("ns", "web", endpoints.map((e) => ({ ip: e.ip, node: e.node })), [{ name: "p80", port: 8080 }]);
    s.endpoints!.forEach((ep, i) => {
      ep.zone = endpoints[i]!.zone;
      if (hints) ep.hints = { forZones: [{ name: endpoints[i]!.zone }] };
    });
    return s;
  };
  // kube-proxy on node-a (zone-a) with hints: only the zone-a endpoints
  const zoneARules = kubeProxyRules([svc], [slice("ns", "web", endpoints.filter((e) => e.zone === "zone-a").map((e) => ({ ip: e.ip, node: e.node })), [{ name: "p80", port: 8080 }])], "10.244.0.0/16");
  const bundle = (hints: boolean) => {
    const b = bundleOf({ dump: zoneARules, nodeName: "node-a", nodeIP: "192.168.1.1", services: [svc], slices: [full(hints)], clusterCIDRs: ["10.244.0.0/16"] });
    b.objects.nodes = [node("node-a", "192.168.1.1", { "topology.kubernetes.io/zone": "zone-a" })];
    return b;
  };

  it("with hints for zone-a: no drift, and the node's note says which subset and why", () => {
    const r = explainService(bundle(true), "ns", "web");
    const n = r.nodes[0]!;
    expect(n.error).toBeUndefined();
    expect(n.drift).toEqual([]);
    // the Node has no status.nodeInfo: kube-proxy's version is not known, and following the hints without the
    // annotation rests on it being v1.31+ (topology_version_unknown.test.ts)
    expect(n.notes.find((x) => x.startsWith("ns/web:p80: endpoints this node programs:"))).toMatch(/^ns\/web:p80: endpoints this node programs: hints for zone zone-a: 2 of 4 ready endpoints; this rests on kube-proxy being v1\.31 or later: kube-proxy's version is not known/);
    expect(n.ports[0]!.entryPoints[0]!.balancing.shares.map((s) => s.endpoint).sort()).toEqual(["10.244.1.10:8080", "10.244.1.11:8080"]);
  });

  it("the same rules without hints: the zone-b endpoints are missing on the node (real drift)", () => {
    const r = explainService(bundle(false), "ns", "web");
    const missing = r.nodes[0]!.drift.filter((d) => d.kind === "missing-on-node").map((d) => d.endpoint).sort();
    expect(missing).toEqual(["10.244.2.10:8080", "10.244.2.11:8080"]);
  });
});

describe("what kube-proxy reads, read as it reads it", () => {
  const svc = (annotations?: Record<string, string>, dual = false) => {
    const s = service("ns", "web", {
      type: "ClusterIP",
      clusterIP: "10.96.0.50",
      clusterIPs: dual ? ["10.96.0.50", "fd00:96::50"] : ["10.96.0.50"],
      ipFamilies: dual ? ["IPv4", "IPv6"] : ["IPv4"],
      ports: [{ name: "p80", port: 80, targetPort: 8080, protocol: "TCP" }],
    } as never);
    if (annotations) s.metadata.annotations = annotations;
    return s;
  };
  const hinted = (list: { ip: string; node: string; zone: string }[], hints: boolean) => {
    const s = slice("ns", "web", list.map((e) => ({ ip: e.ip, node: e.node })), [{ name: "p80", port: 8080 }]);
    s.endpoints!.forEach((ep, i) => {
      ep.zone = list[i]!.zone;
      if (hints) ep.hints = { forZones: [{ name: list[i]!.zone }] };
    });
    return s;
  };
  const v4 = [{ ip: "10.244.1.10", node: "node-a", zone: "zone-a" }, { ip: "10.244.2.10", node: "node-b", zone: "zone-b" }];
  const zoneANode = (version: string) => {
    const n = node("node-a", "192.168.1.1", { "topology.kubernetes.io/zone": "zone-a" });
    n.status!.nodeInfo = { kubeletVersion: version } as never;
    return n;
  };

  it("a live run or capture keeps the topology annotations: on v1.30 topology-mode Auto is still followed", () => {
    const s = svc({ "service.kubernetes.io/topology-mode": "Auto", "example.com/other": "x" });
    const rules = kubeProxyRules([s], [slice("ns", "web", [{ ip: "10.244.1.10", node: "node-a" }], [{ name: "p80", port: 8080 }])], "10.244.0.0/16");
    const b = bundleOf({ dump: rules, nodeName: "node-a", nodeIP: "192.168.1.1", services: [s], slices: [hinted(v4, true)], clusterCIDRs: ["10.244.0.0/16"] });
    b.objects.nodes = [zoneANode("v1.30.4")];
    b.objects = allowListObjects(b.objects);
    expect(b.objects.services[0]!.metadata.annotations).toEqual({ "service.kubernetes.io/topology-mode": "Auto" });
    expect(explainService(b, "ns", "web").nodes[0]!.drift).toEqual([]);
  });

  it("dual-stack: each family's hints are judged apart (IPv4 fully hinted, IPv6 slice without hints)", () => {
    const s = svc(undefined, true);
    const v6 = [{ ip: "fd00:244:1::10", node: "node-a", zone: "zone-a" }, { ip: "fd00:244:2::10", node: "node-b", zone: "zone-b" }];
    const s6 = hinted(v6, false);
    s6.addressType = "IPv6";
    s6.metadata.name = "web-v6";
    // node-a's IPv4 rules follow the zone-a hint: only 10.244.1.10
    const rules = kubeProxyRules([svc()], [slice("ns", "web", [{ ip: "10.244.1.10", node: "node-a" }], [{ name: "p80", port: 8080 }])], "10.244.0.0/16");
    const b = bundleOf({ dump: rules, nodeName: "node-a", nodeIP: "192.168.1.1", services: [s], slices: [hinted(v4, true), s6], clusterCIDRs: ["10.244.0.0/16"] });
    b.objects.nodes = [zoneANode("v1.33.2")];
    const n = explainService(b, "ns", "web").nodes[0]!;
    expect(n.drift.filter((d) => d.kind === "missing-on-node")).toEqual([]);
    expect(n.notes.join("\n")).not.toMatch(/not every ready endpoint has a zone hint/);
  });

  // PreferSameNode: feature gate PreferSameTrafficDistribution (alpha off v1.33, beta on v1.34, GA locked v1.35), as
  // kube-proxy's configuration sets it; node-a's rules send only to its own endpoint (the node hint).
  describe("PreferSameNode follows kube-proxy's feature gate as its configuration sets it", () => {
    const both = [{ ip: "10.244.1.10", node: "node-a", zone: "zone-a" }, { ip: "10.244.1.11", node: "node-a2", zone: "zone-a" }];
    const nodeHinted = () => {
      const s = hinted(both, true);
      s.endpoints!.forEach((ep, i) => (ep.hints = { forZones: [{ name: "zone-a" }], forNodes: [{ name: both[i]!.node }] }));
      return s;
    };
    const sameNodeRules = kubeProxyRules([svc()], [slice("ns", "web", [{ ip: "10.244.1.10", node: "node-a" }], [{ name: "p80", port: 8080 }])], "10.244.0.0/16");
    const zoneRules = kubeProxyRules([svc()], [slice("ns", "web", both.map((e) => ({ ip: e.ip, node: e.node })), [{ name: "p80", port: 8080 }])], "10.244.0.0/16");
    const withConfig = (rules: string, version: string, gates: string | undefined) => {
      const b = bundleOf({ dump: rules, nodeName: "node-a", nodeIP: "192.168.1.1", services: [svc()], slices: [nodeHinted()], clusterCIDRs: ["10.244.0.0/16"] });
      b.objects.nodes = [zoneANode(version)];
      if (gates !== undefined) {
        b.objects.configMaps = [{
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "kube-proxy", namespace: "kube-system" },
          data: { "config.conf": `apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: iptables\n${gates}` },
        }] as never;
      }
      return explainService(b, "ns", "web").nodes[0]!;
    };

    it("v1.33 with the gate on in config.conf: same-node only, no drift, and the note names the setting", () => {
      const n = withConfig(sameNodeRules, "v1.33.2", "featureGates:\n  PreferSameTrafficDistribution: true\n");
      expect(n.drift).toEqual([]);
      expect(n.notes.join("\n")).toMatch(/hints for node node-a \(feature gate PreferSameTrafficDistribution is on in ConfigMap kube-system\/kube-proxy key config\.conf featureGates\)/);
    });

    it("v1.33 without the gate set: zone hints (alpha, off), said with the default", () => {
      const n = withConfig(zoneRules, "v1.33.2", "");
      expect(n.drift).toEqual([]);
      expect(n.notes.join("\n")).toMatch(/hints for zone zone-a; the slices carry hints for node node-a, not followed: feature gate PreferSameTrafficDistribution is off by default in kube-proxy v1\.33 .*does not set it/);
    });

    it("v1.34 with the gate off: zone hints; the same-node rules are drift", () => {
      expect(withConfig(zoneRules, "v1.34.1", "featureGates:\n  PreferSameTrafficDistribution: false\n").drift).toEqual([]);
      expect(withConfig(sameNodeRules, "v1.34.1", "featureGates:\n  PreferSameTrafficDistribution: false\n").drift.map((d) => [d.kind, d.endpoint])).toEqual([["missing-on-node", "10.244.1.11:8080"]]);
    });

    it("v1.35: GA and locked on, whatever the configuration says", () => {
      expect(withConfig(sameNodeRules, "v1.35.0", "featureGates:\n  PreferSameTrafficDistribution: false\n").drift).toEqual([]);
    });

    it("v1.34 without kube-proxy's configuration in the bundle: the default (on), and the note says the setting was not read", () => {
      const n = withConfig(sameNodeRules, "v1.34.1", undefined);
      expect(n.drift).toEqual([]);
      expect(n.notes.join("\n")).toMatch(/on by default in kube-proxy v1\.34 .*configuration is not in the bundle/);
    });
  });

  it("an endpoint whose serving condition is unset is serving, as kube-proxy reads it (endpointslicecache.go)", () => {
    const s = svc();
    const sl = slice("ns", "web", [{ ip: "10.244.1.10", node: "node-a" }], [{ name: "p80", port: 8080 }]);
    sl.endpoints![0]!.conditions = { ready: false, terminating: true };
    const rules = kubeProxyRules([s], [slice("ns", "web", [{ ip: "10.244.1.10", node: "node-a" }], [{ name: "p80", port: 8080 }])], "10.244.0.0/16");
    const b = bundleOf({ dump: rules, nodeName: "node-a", nodeIP: "192.168.1.1", services: [s], slices: [sl], clusterCIDRs: ["10.244.0.0/16"] });
    b.objects.nodes = [zoneANode("v1.33.2")];
    const r = explainService(b, "ns", "web");
    expect(r.endpoints[0]!.serving).toBe(true);
    expect(r.nodes[0]!.drift).toEqual([]);
  });
});
