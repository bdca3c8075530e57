// Topology hints and a node the bundle has no Node object of (a bundle made with a namespace-scoped role): kube-proxy
// knows its own zone (topology.go topologyModeFromHints); the bundle may not. The zone is then that of an
// EndpointSlice endpoint on the node (the EndpointSlice controller copies the node's label into endpoint.zone), else
// not known, and what the node should use cannot be told: no missing/stale drift is claimed, the report says why.
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

const svc = () => service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.30.0.41", trafficDistribution: "PreferClose", ports: [{ name: "p80", port: 80, protocol: "TCP" }] });
// n1's rules, as kube-proxy in zone za writes them under the hints below: the za endpoint only
const dump = kubeProxyRules([svc()], [slice("ns1", "svc1", [{ ip: "10.0.1.1", node: "n1" }], [{ name: "p80", port: 80 }])], "10.0.0.0/8");

const run = (withNode: boolean, endpointZone: boolean) => {
  const s = slice("ns1", "svc1", [{ ip: "10.0.1.1", node: "n1" }, { ip: "10.0.2.1", node: "n2" }], [{ name: "p80", port: 80 }]);
  s.endpoints![0]!.hints = { forZones: [{ name: "za" }] };
  s.endpoints![1]!.hints = { forZones: [{ name: "zb" }] };
  if (endpointZone) {
    s.endpoints![0]!.zone = "za";
    s.endpoints![1]!.zone = "zb";
  }
  const b = bundleOf({ dump, nodeName: "n1", nodeIP: "192.168.0.2", services: [svc()], slices: [s], clusterCIDRs: ["10.0.0.0/8"] });
  b.objects.nodes[0]!.metadata.labels!["topology.kubernetes.io/zone"] = "za";
  if (!withNode) b.objects.nodes.length = 0;
  return explainService(b, "ns1", "svc1").nodes[0]!;
};

describe("zone hints on a node the bundle has no Node object of", () => {
  it("with the Node object (zone za): the za endpoint only, no drift (the control)", () => {
    expect(run(true, true).drift).toEqual([]);
  });
  it("without it, the zone of an endpoint on the node stands for it: no drift", () => {
    expect(run(false, true).drift).toEqual([]);
  });
  it("without either, the node's endpoints cannot be compared: one unverifiable item that says why, no missing-on-node", () => {
    const n = run(false, false);
    expect(n.drift.map((d) => [d.kind, d.message])).toEqual([["unverifiable", "ns1/svc1:p80: the endpoints carry zone hints, and n1's zone is not known (its Node object is not in the bundle, and no endpoint on it names a zone): which endpoints it uses cannot be told; collect with a role that can get nodes"]]);
  });
});
