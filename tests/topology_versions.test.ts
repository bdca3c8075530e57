// The version-specific answers of kube-proxy's pkg/proxy/topology.go that topology.ts models, pinned per release:
// - v1.30–v1.32 canUseTopology (v1.30 tree, ashierj/superdemo@86435b28): false only when neither TopologyAwareHints
//   nor ServiceTrafficDistribution is on; the annotation is read only when ServiceTrafficDistribution is off ("Ignore
//   value of hintsAnnotation if the ServiceTrafficDistribution feature gate is enabled"), and then any value but "",
//   "disabled", "Disabled" turns the hints on (kubernetes/kubernetes@803d40a5 canUseTopology).
// - v1.33+ topologyModeFromHints (kubernetes/kubernetes@008b3652): no gate, no annotation, the hints alone.
// - every version: a ready endpoint without a zone hint, no endpoint hinted for the node's zone, or a node whose zone
//   label is missing or empty ("empty zone label" in TestCategorizeEndpoints) → every endpoint.
// Cluster of three zones, node-a in zone-a; kube-proxy's configuration read from a ConfigMap where it sets gates.
import { describe, expect, it } from "vitest";
import type { EndpointInfo } from "../src/service/report.ts";
import { nodeEndpoints, type TopologyNode, topologyNode } from "../src/service/topology.ts";
import { node } from "./helpers/bundles.ts";

const KEY = "ns/web:http";
const ep = (ip: string, zone: string, o: { hinted?: boolean; ready?: boolean } = {}): EndpointInfo => {
  const ready = o.ready ?? true;
  const e: EndpointInfo = { address: ip, ports: [{ portKey: KEY, port: 8080, protocol: "TCP" }], ready, serving: ready, terminating: false, slice: "web-x7k2p", zone, zoneSource: "endpoint" };
  if (o.hinted ?? true) e.hintsForZones = [zone];
  return e;
};
// as the EndpointSlice controller hints them: one endpoint per zone, each for its own zone
const hinted = [ep("10.244.1.10", "eu-west-1a"), ep("10.244.2.10", "eu-west-1b"), ep("10.244.3.10", "eu-west-1c")];
const ALL = ["10.244.1.10:8080", "10.244.2.10:8080", "10.244.3.10:8080"];
const ZONE_A = ["10.244.1.10:8080"];
const CONFIG = "ConfigMap kube-system/kube-proxy key config.conf featureGates";

const nodeA = (minor: number, gates?: Record<string, boolean>): TopologyNode => ({
  name: "ip-10-0-1-17.eu-west-1.compute.internal",
  zone: "eu-west-1a",
  minor,
  versionFrom: `v1.${minor}.4, the Node's kubeletVersion`,
  configRead: true,
  ...(gates ? { gates: { value: gates, source: CONFIG } } : {}),
});
const programs = (n: TopologyNode, annotations: Record<string, string> = {}, eps: EndpointInfo[] = hinted) => nodeEndpoints(eps, KEY, "Cluster", annotations, n);

describe("v1.30–v1.32 canUseTopology: ServiceTrafficDistribution on → the annotation is not read", () => {
  it.each([
    { v: 31, label: "topology-mode Disabled", ann: { "service.kubernetes.io/topology-mode": "Disabled" } },
    { v: 32, label: "topology-mode disabled", ann: { "service.kubernetes.io/topology-mode": "disabled" } },
    { v: 32, label: "topology-aware-hints empty (it would take precedence)", ann: { "service.kubernetes.io/topology-aware-hints": "", "service.kubernetes.io/topology-mode": "Auto" } },
  ] as { v: number; label: string; ann: Record<string, string> }[])("v1.$v at its default (beta, on), $label: the zone hints are followed", ({ v, ann }) => {
    const r = programs(nodeA(v), ann);
    expect(r.endpoints).toEqual(ZONE_A);
    expect(r.mode).toBe("PreferSameZone");
  });

  it("v1.30 with the gate set on (alpha): topology-mode Disabled is not read either", () => {
    const r = programs(nodeA(30, { ServiceTrafficDistribution: true }), { "service.kubernetes.io/topology-mode": "Disabled" });
    expect(r.endpoints).toEqual(ZONE_A);
    expect(r.why).toMatch(/^hints for zone eu-west-1a \(feature gate ServiceTrafficDistribution is on in ConfigMap kube-system\/kube-proxy key config\.conf featureGates\): 1 of 3 ready endpoints$/);
  });

  it("v1.31 with TopologyAwareHints set off: ServiceTrafficDistribution (on) alone still makes it follow the hints", () => {
    const r = programs(nodeA(31, { TopologyAwareHints: false }));
    expect(r.endpoints).toEqual(ZONE_A);
    expect(r.mode).toBe("PreferSameZone");
  });

  it("v1.31 with both gates set off: the hints are not read, even with topology-mode Auto", () => {
    const r = programs(nodeA(31, { TopologyAwareHints: false, ServiceTrafficDistribution: false }), { "service.kubernetes.io/topology-mode": "Auto" });
    expect(r.endpoints).toEqual(ALL);
    expect(r.why).toMatch(/does not follow topology hints: feature gate TopologyAwareHints is off in ConfigMap .*, and feature gate ServiceTrafficDistribution is off in ConfigMap/);
  });
});

describe("v1.30–v1.32 canUseTopology: ServiceTrafficDistribution off → any annotation value but \"\", disabled, Disabled", () => {
  it.each([
    { v: 30, gates: undefined, value: "auto", want: ZONE_A },
    { v: 30, gates: undefined, value: "Auto", want: ZONE_A },
    { v: 30, gates: undefined, value: "PreferZone", want: ZONE_A },
    { v: 30, gates: undefined, value: "disabled", want: ALL },
    { v: 30, gates: undefined, value: "Disabled", want: ALL },
    { v: 30, gates: undefined, value: "", want: ALL },
    { v: 32, gates: { ServiceTrafficDistribution: false }, value: "auto", want: ZONE_A },
    { v: 32, gates: { ServiceTrafficDistribution: false }, value: "Disabled", want: ALL },
  ])("v1.$v (gates $gates), topology-mode \"$value\"", ({ v, gates, value, want }) => {
    expect(programs(nodeA(v, gates), { "service.kubernetes.io/topology-mode": value }).endpoints).toEqual(want);
  });
});

describe("v1.33+ topologyModeFromHints: the hints alone decide", () => {
  it.each([33, 34])("v1.%i, topology-mode Disabled and both gates set off in the configuration (locked on): the zone hints are followed", (v) => {
    const r = programs(nodeA(v, { TopologyAwareHints: false, ServiceTrafficDistribution: false }), { "service.kubernetes.io/topology-mode": "Disabled" });
    expect(r.endpoints).toEqual(ZONE_A);
    expect(r.mode).toBe("PreferSameZone");
  });
});

describe("every version that reads zone hints: when they are ignored", () => {
  const cases = [
    { name: "a ready endpoint without a zone hint", eps: [ep("10.244.1.10", "eu-west-1a"), ep("10.244.2.10", "eu-west-1b", { hinted: false }), ep("10.244.3.10", "eu-west-1c")], why: /^not every ready endpoint has a zone hint/ },
    { name: "no endpoint hinted for the node's zone (its endpoint is not ready)", eps: [ep("10.244.1.10", "eu-west-1a", { ready: false }), ep("10.244.2.10", "eu-west-1b"), ep("10.244.3.10", "eu-west-1c")], why: /^no endpoint is hinted for zone eu-west-1a/ },
  ];
  it.each([30, 31, 32, 33])("v1.%i with the annotation: a ready endpoint without a hint or none for the zone → every ready endpoint", (v) => {
    for (const c of cases) {
      const r = programs(nodeA(v), { "service.kubernetes.io/topology-mode": "Auto" }, c.eps);
      expect(r.mode, c.name).toBe("");
      expect(r.endpoints, c.name).toEqual(c.eps.filter((e) => e.ready).map((e) => `${e.address}:8080`));
      expect(r.why, c.name).toMatch(c.why);
    }
  });

  it("a Node whose zone label is empty: no zone (not unknown), every endpoint, v1.31 and v1.33 alike", () => {
    const n = node("ip-10-0-1-17.eu-west-1.compute.internal", "10.0.1.17", { "topology.kubernetes.io/zone": "" });
    for (const version of ["v1.31.4", "v1.33.1"]) {
      n.status!.nodeInfo = { kubeletVersion: version } as never;
      const t = topologyNode(n.metadata.name, n, hinted, {});
      expect(t.zone).toBeUndefined();
      expect(t.zoneUnknown).toBeUndefined();
      const r = programs(t, { "service.kubernetes.io/topology-mode": "Auto" });
      expect(r.endpoints, version).toEqual(ALL);
      expect(r.undetermined, version).toBeUndefined();
      expect(r.why, version).toMatch(/^the node has no topology\.kubernetes\.io\/zone label: zone hints are ignored, every endpoint is used/);
    }
  });
});
