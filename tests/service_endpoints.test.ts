// Issue 16, second part: why a Service has no (or too few) endpoints, from the Service, its EndpointSlices and the
// namespace's Pods and Events — each case on a bundle that reproduces it, as k8sgpt's and Popeye's Service analysers
// report them.
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { emptyBundle } from "../src/bundle/bundle.ts";
import type { EndpointSlice, KubeEvent, Pod, Service } from "../src/model/k8s.ts";
import { explainService } from "../src/service/explain.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { renderServiceText } from "../src/report/service_text.ts";
import { service, slice } from "./helpers/bundles.ts";

function pod(name: string, labels: Record<string, string>, o: { ready?: boolean; ip?: string; ports?: { name?: string; containerPort: number; protocol?: string }[] } = {}): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "shop", labels },
    spec: { nodeName: "n1", containers: [{ name: "app", ports: o.ports ?? [{ name: "http", containerPort: 8080 }] }] },
    status: { phase: "Running", podIP: o.ip ?? "10.0.0.9", conditions: [{ type: "Ready", status: o.ready === false ? "False" : "True", ...(o.ready === false ? { reason: "ContainersNotReady", message: "containers with unready status: [app]" } : {}) }] },
  };
}
function bundle(svc: Service, pods: Pod[], slices: EndpointSlice[] = [], events: KubeEvent[] = []): Bundle {
  const b = emptyBundle({ tool: "test" });
  b.objects.services.push(svc);
  b.objects.pods.push(...pods);
  b.objects.endpointSlices.push(...slices);
  b.objects.events.push(...events);
  return b;
}
const web = (spec: Partial<Service["spec"]> = {}) =>
  service("shop", "web", { type: "ClusterIP", clusterIP: "10.96.0.50", selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }], ...spec });
const codes = (b: Bundle) => explainService(b, "shop", "web").findings.filter((f) => !/^(NoEndpointSlices|NoReadyEndpoints)$/.test(f.code));

describe("why a Service has no endpoints", () => {
  it("a selector matching no Pod names the closest Pods and the labels that differ", () => {
    const f = codes(bundle(web(), [pod("web-1", { app: "wbe", tier: "front" }), pod("db-1", { app: "db" })]));
    expect(f.map((x) => x.code)).toEqual(["NoPodsMatchSelector"]);
    expect(f[0]!.message).toBe("selector app=web matches none of the 2 Pods of namespace shop");
    const g = codes(bundle(web({ selector: { app: "web", tier: "front" } }), [pod("web-1", { app: "wbe", tier: "front" })]));
    expect(g[0]!.message).toContain("closest: web-1 (differs in app=web (pod has app=wbe))");
  });
  it("Pods that match but are not Ready, with the readiness probe's Event", () => {
    const ev: KubeEvent = { apiVersion: "v1", kind: "Event", metadata: { name: "e1", namespace: "shop" }, type: "Warning", reason: "Unhealthy", message: "Readiness probe failed: HTTP probe failed with statuscode: 503", involvedObject: { kind: "Pod", name: "web-1", namespace: "shop" } };
    const f = codes(bundle(web(), [pod("web-1", { app: "web" }, { ready: false }), pod("web-2", { app: "web" }, { ready: false, ip: "10.0.0.10" })], [], [ev]));
    expect(f.map((x) => x.code)).toEqual(["PodsNotReady"]);
    expect(f[0]!.message).toBe("2 of 2 Pods matching app=web are not Ready, so they are not ready endpoints: web-1 (Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 503); web-2 (containers with unready status: [app])");
  });
  it("a named targetPort no container declares", () => {
    const f = codes(bundle(web({ ports: [{ name: "http", port: 80, targetPort: "web", protocol: "TCP" }] }), [pod("web-1", { app: "web" })]));
    expect(f.map((x) => x.code)).toEqual(["TargetPortNotDeclared"]);
    expect(f[0]!.message).toContain('targetPort "web" is a port name no container of the 1 matching Pods declares');
  });
  it("a protocol mismatch between the ServicePort and the container port", () => {
    const f = codes(bundle(web({ ports: [{ name: "dns", port: 53, targetPort: "dns", protocol: "TCP" }] }), [pod("web-1", { app: "web" }, { ports: [{ name: "dns", containerPort: 53, protocol: "UDP" }] })]));
    expect(f.map((x) => x.code)).toEqual(["ProtocolMismatch"]);
  });
  it("publishNotReadyAddresses is said, and not-ready Pods are then not blamed", () => {
    const f = codes(bundle(web({ publishNotReadyAddresses: true }), [pod("web-1", { app: "web" }, { ready: false })]));
    expect(f.map((x) => x.code)).toEqual(["PublishNotReadyAddresses"]);
  });
  it("no selector and no EndpointSlice; a selector Service whose slices another controller manages", () => {
    expect(codes(bundle(web({ selector: undefined }), [])).map((x) => x.code)).toEqual(["NoSelectorNoEndpointSlices"]);
    const s = slice("shop", "web", [{ ip: "10.0.0.9", node: "n1" }], [{ name: "http", port: 8080 }]);
    s.metadata.labels = { ...s.metadata.labels, "endpointslice.kubernetes.io/managed-by": "my-operator" };
    expect(codes(bundle(web(), [pod("web-1", { app: "web" })], [s])).map((x) => x.code)).toEqual(["EndpointSlicesManagedElsewhere"]);
  });
  it("a healthy Service gets none of these findings; a bundle without the namespace's Pods claims nothing", () => {
    const s = slice("shop", "web", [{ ip: "10.0.0.9", node: "n1" }], [{ name: "http", port: 8080 }]);
    expect(codes(bundle(web(), [pod("web-1", { app: "web" })], [s]))).toEqual([]);
    expect(codes(bundle(web(), [], [s]))).toEqual([]);
  });
});

describe("live: the API reads that tell why (fake API server, --no-exec)", () => {
  it("no ready endpoint: the matching Pods and their readiness Events are read (3 more requests), and the finding says why", async () => {
    const { readBundle } = await import("../src/io/read_bundle.ts");
    const { startFakeApiServer } = await import("./helpers/fake_apiserver.ts");
    const { run } = await import("./helpers/live_cli.ts");
    const objects = structuredClone(readBundle("tests/fixtures/live/web").objects);
    for (const s of objects.endpointSlices) for (const e of s.endpoints ?? []) e.conditions = { ready: false };
    for (const p of objects.pods) p.status = { ...p.status, conditions: [{ type: "Ready", status: "False", reason: "ContainersNotReady" }] };
    const pod = objects.pods[0]!;
    objects.events.push({ apiVersion: "v1", kind: "Event", metadata: { name: "ev1", namespace: "default" }, type: "Warning", reason: "Unhealthy", message: "Readiness probe failed: connection refused", involvedObject: { kind: "Pod", name: pod.metadata.name, namespace: "default" } });
    const s = await startFakeApiServer({ objects });
    try {
      const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", "json"]);
      const report = JSON.parse(r.stdout);
      const f = report.findings.find((x: { code: string }) => x.code === "PodsNotReady");
      expect(f?.message).toContain(`${pod.metadata.name} (Unhealthy: Readiness probe failed: connection refused)`);
      const reads = s.requests.map((x) => `${x.method} ${x.path}`).filter((p) => /\/pods\?|\/pods$|\/events/.test(p));
      expect(reads.length).toBeLessThanOrEqual(3);
    } finally {
      await s.close();
    }
  });
});

// zones[] counts the endpoints without a zone under no `zone` key, as endpoints[].zone is absent for them: a script
// grouping by zone gets no fake zone "(no zone)" (audit of the -o json contract, defect 7). The text still says it.
describe("zones[]: endpoints without a zone", () => {
  it("have no zone key in the report, and are named (no zone) only in the text", () => {
    const r = explainService(readBundle("examples/iptables-lab"), "kube-system", "kube-dns");
    expect(r.endpoints.every((e) => e.zone === undefined)).toBe(true);
    expect(r.zones).toEqual([{ ready: r.endpoints.filter((e) => e.ready).length, notReady: r.endpoints.filter((e) => !e.ready).length }]);
    expect(JSON.stringify(r.zones)).not.toContain("no zone");
    expect(renderServiceText(r, { color: false })).toMatch(/zones: \(no zone\) \d/);
  });
});
