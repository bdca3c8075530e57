// The Service's endpoints as kube-proxy reads its EndpointSlices (pkg/proxy/endpointslicecache.go addEndpoints,
// cmd/kube-proxy/app/server.go informers), on the dual-stack fixture whose node rules are kube-proxy's for the two
// endpoints 10.244.0.7 (k8s1) and 10.244.1.8 (k8s2): each case changes the API objects only in a way kube-proxy does
// not see, so the node's rules stay right and no drift may be reported.
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import type { Bundle } from "../src/bundle/bundle.ts";
import type { EndpointSlice } from "../src/model/k8s.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

const fresh = (): Bundle => readBundle("tests/fixtures/dual-stack");
const v4 = (b: Bundle): EndpointSlice => b.objects.endpointSlices.find((s) => s.metadata.name === "web-v4")!;
const drift = (b: Bundle) => explainService(b, "default", "web").nodes.flatMap((n) => n.drift.map((d) => `${d.kind}: ${d.message}`));

describe("endpoints as kube-proxy reads them", () => {
  it("the fixture itself: no drift (the control)", () => {
    expect(drift(fresh())).toEqual([]);
  });

  it("an endpoint with two addresses: only the first is kube-proxy's (addEndpoints: endpoint.Addresses[0])", () => {
    const b = fresh();
    v4(b).endpoints![0]!.addresses = ["10.244.0.7", "10.244.0.99"];
    expect(drift(b)).toEqual([]);
    expect(explainService(b, "default", "web").endpoints.map((e) => e.address)).not.toContain("10.244.0.99");
  });

  it("an IP reused by a new pod while the old pod's endpoint is still terminating in another slice: the running one counts", () => {
    const b = fresh();
    const ghost = structuredClone(v4(b));
    ghost.metadata.name = "web-v4-old";
    ghost.endpoints = [{ addresses: ["10.244.1.8"], conditions: { ready: false, serving: false, terminating: true }, nodeName: "k8s3", targetRef: { kind: "Pod", name: "web-old", namespace: "default" } }];
    b.objects.endpointSlices.unshift(ghost);
    expect(drift(b)).toEqual([]);
    const e = explainService(b, "default", "web").endpoints.find((x) => x.address === "10.244.1.8")!;
    expect([e.ready, e.node, e.pod]).toEqual([true, "k8s2", "web-b"]);
  });

  it("slices labelled service.kubernetes.io/headless or service-proxy-name are not kube-proxy's (its informers select neither)", () => {
    for (const label of ["service.kubernetes.io/headless", "service.kubernetes.io/service-proxy-name"]) {
      const b = fresh();
      const extra = structuredClone(v4(b));
      extra.metadata.name = "web-v4-other";
      extra.metadata.labels = { "kubernetes.io/service-name": "web", [label]: label.endsWith("headless") ? "" : "other-proxy" };
      extra.endpoints = [{ addresses: ["10.244.2.9"], conditions: { ready: true } }];
      b.objects.endpointSlices.push(extra);
      expect(drift(b), label).toEqual([]);
    }
  });
});

describe("the health check answer of an externalTrafficPolicy Local LoadBalancer (pkg/proxy/healthcheck)", () => {
  const lb = (b: Bundle) => {
    const svc = b.objects.services.find((s) => s.metadata.name === "web")!;
    svc.spec = { ...svc.spec, type: "LoadBalancer", externalTrafficPolicy: "Local", healthCheckNodePort: 32000 };
    return b;
  };
  const note = (b: Bundle) => explainService(b, "default", "web").nodes[0]!.notes.find((n) => n.startsWith("healthCheckNodePort"))!;
  it("200 with a ready endpoint on the node", () => {
    expect(note(lb(fresh()))).toMatch(/on k8s1 with 200 while kube-proxy is healthy/);
  });
  it("503 when the slices publish no port: kube-proxy's endpoints map holds endpoints only under a slice's ports", () => {
    const b = lb(fresh());
    for (const s of b.objects.endpointSlices) s.ports = [];
    expect(note(b)).toMatch(/on k8s1 with 503 \(no ready local endpoint\)/);
  });
  it("an endpoint without nodeName is not local, whatever its pod's node (addEndpoints: isLocal needs endpoint.NodeName)", () => {
    const b = lb(fresh());
    for (const s of b.objects.endpointSlices) for (const e of s.endpoints ?? []) delete e.nodeName;
    expect(note(b)).toMatch(/on k8s1 with 503/);
  });
});

describe("an endpoint whose slice names no node is local to none (addEndpoints: isLocal needs endpoint.NodeName)", () => {
  it("its pod's node is shown, but a Local policy there does not pick it", async () => {
    const { resolveService } = await import("../src/service/resolve.ts");
    const { nodeEndpoints, topologyNode } = await import("../src/service/topology.ts");
    const b = fresh();
    for (const e of v4(b).endpoints ?? []) delete e.nodeName;
    const r = resolveService(b.objects, "default", "web");
    const e = r.endpoints.find((x) => x.address === "10.244.0.7")!;
    expect([e.node, e.nodeFromPod]).toEqual(["k8s1", true]);
    const k8s1 = b.objects.nodes.find((n) => n.metadata.name === "k8s1");
    expect(nodeEndpoints(r.endpoints.filter((x) => !x.address.includes(":")), "default/web:http", "Local", {}, topologyNode("k8s1", k8s1)).endpoints).toEqual([]);
    expect(nodeEndpoints(r.endpoints.filter((x) => !x.address.includes(":")), "default/web:http", "Cluster", {}, topologyNode("k8s1", k8s1)).endpoints).toEqual(["10.244.0.7:8080", "10.244.1.8:8080"]);
  });
});

// kube-proxy keys a ServicePort's endpoints by IP:port (endpointslicecache.go addEndpoints, endpointSet keyed by
// endpointInfo.String()): hostNetwork pods during a rollout that moves a named targetPort from 9100 to 9101 leave one
// address in two slices with two ports, and the node programs both (rules as kube-proxy writes them).
describe("one address, two ports for one ServicePort (two slices)", () => {
  const svc = service("monitoring", "exporter", { type: "ClusterIP", clusterIP: "10.96.0.20", clusterIPs: ["10.96.0.20"], ports: [{ name: "metrics", port: 9100, targetPort: "metrics", protocol: "TCP" }] } as never);
  const old = slice("monitoring", "exporter", [{ ip: "192.168.0.3", node: "node-b" }, { ip: "192.168.0.4", node: "node-c" }], [{ name: "metrics", port: 9100 }]);
  const next = slice("monitoring", "exporter", [{ ip: "192.168.0.3", node: "node-b" }], [{ name: "metrics", port: 9101 }]);
  next.metadata.name = "exporter-2";
  const rules = kubeProxyRules([svc], [old, next], "10.244.0.0/16");
  const b = bundleOf({ dump: rules, nodeName: "node-a", nodeIP: "192.168.0.2", services: [svc], slices: [old, next], clusterCIDRs: ["10.244.0.0/16"] });

  it("both endpoints of the address are the API's, and the node sending to all three is no drift", () => {
    expect(rules).toContain("192.168.0.3:9101");
    const r = explainService(b, "monitoring", "exporter");
    expect(r.endpoints.map((e) => `${e.address}:${e.ports[0]!.port}`)).toEqual(["192.168.0.3:9100", "192.168.0.4:9100", "192.168.0.3:9101"]);
    expect(r.nodes[0]!.drift).toEqual([]);
  });

  it("the node missing the 9101 one is drift for that endpoint alone", () => {
    const without = bundleOf({ dump: kubeProxyRules([svc], [old], "10.244.0.0/16"), nodeName: "node-a", nodeIP: "192.168.0.2", services: [svc], slices: [old, next], clusterCIDRs: ["10.244.0.0/16"] });
    expect(explainService(without, "monitoring", "exporter").nodes[0]!.drift.map((d) => [d.kind, d.endpoint])).toEqual([["missing-on-node", "192.168.0.3:9101"]]);
  });
});
