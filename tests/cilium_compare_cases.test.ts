// Cilium service tables as Cilium programs them for the API objects (tests/fixtures/cilium/compare/README.md): the
// comparison must call none of them drift. Each was reported as drift before: the internal-scope copy of a NodePort
// frontend taken for the external one, the other IP family's endpoints expected on every frontend, a LocalRedirect
// frontend taken for a missing ClusterIP, a Service labelled for another proxy compared, an endpoint without a
// nodeName dropped under a Local policy. A changed backend is still caught (the controls at the end).
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";

const DIR = "tests/fixtures/cilium/compare";
const node = (dir: string, ns: string, name: string) => explainService(readBundle(`${DIR}/${dir}`), ns, name).nodes[0]!;

describe("Cilium's table as Cilium programs it: no drift", () => {
  it.each([
    ["scope", "shop", "web", /NodePort 0\.0\.0\.0:30080\/TCP \(internal scope\) → /],
    ["dualstack", "shop", "web", /compared with Cilium's service table/],
    ["lrp", "kube-system", "kube-dns", /is redirected on this node by a CiliumLocalRedirectPolicy \(frontend type LocalRedirect\) to 10\.244\.1\.77:53/],
    ["proxyname", "shop", "web", /Cilium's service table is not compared: the Service carries service\.kubernetes\.io\/service-proxy-name=other-proxy/],
    ["nonode", "shop", "ext", /compared with Cilium's service table/],
  ])("%s", (dir, ns, name, note) => {
    const n = node(dir, ns, name);
    expect(n.drift).toEqual([]);
    expect(n.notes.join("\n")).toMatch(note);
  });
});

describe("controls: a real difference is still drift", () => {
  it("the internal-scope NodePort frontend without a ready endpoint", () => {
    const b = readBundle(`${DIR}/scope`);
    const sec = b.nodes[0]!.sections["cilium-services"]!;
    const table = JSON.parse(sec.stdout) as { spec: { "frontend-address": { scope?: string }; flags: { type: string }; "backend-addresses": { ip: string }[] } }[];
    const internal = table.find((e) => e.spec.flags.type === "NodePort" && e.spec["frontend-address"].scope === "internal")!;
    internal.spec["backend-addresses"] = internal.spec["backend-addresses"].slice(0, 1);
    sec.stdout = JSON.stringify(table);
    const drift = explainService(b, "shop", "web").nodes[0]!.drift;
    expect(drift.map((d) => [d.kind, d.message.includes("NodePort (internal scope)")])).toEqual([["missing-on-node", true]]);
  });
  it("dual-stack: an IPv6 backend missing from the IPv6 ClusterIP frontend", () => {
    const b = readBundle(`${DIR}/dualstack`);
    const sec = b.nodes[0]!.sections["cilium-services"]!;
    const table = JSON.parse(sec.stdout) as { spec: { "frontend-address": { ip: string }; "backend-addresses": unknown[] } }[];
    const v6 = table.find((e) => e.spec["frontend-address"].ip.includes(":"))!;
    v6.spec["backend-addresses"] = [];
    sec.stdout = JSON.stringify(table);
    const drift = explainService(b, "shop", "web").nodes[0]!.drift;
    expect(drift.length).toBeGreaterThan(0);
    expect(drift.every((d) => d.kind === "missing-on-node" && d.endpoint!.startsWith("["))).toBe(true);
  });
});

// Defects found against Cilium's sources: each bundle is a fixture above edited to the shape Cilium writes.
type Entry = { spec: { "frontend-address": { ip: string; port: number }; flags: { type: string; name?: string; namespace?: string }; "backend-addresses": { ip: string; port: number; state?: string; nodeName?: string }[] } };
const edit = (dir: string, change: (table: Entry[], b: ReturnType<typeof readBundle>) => void) => {
  const b = readBundle(`${DIR}/${dir}`);
  const sec = b.nodes[0]!.sections["cilium-services"]!;
  const table = JSON.parse(sec.stdout) as Entry[];
  change(table, b);
  sec.stdout = JSON.stringify(table);
  return b;
};

describe("Cilium's table as releases and features write it", () => {
  it("Cilium 1.14–1.17: a LocalRedirect frontend under the policy's name is the redirect, not a missing ClusterIP", () => {
    // pkg/redirectpolicy/manager.go upsertService: `<policy>-local-redirect` in the policy's namespace
    const b = edit("lrp", (t) => {
      for (const e of t.filter((x) => x.spec.flags.type === "LocalRedirect")) e.spec.flags.name = "nodelocaldns-local-redirect";
    });
    const n = explainService(b, "kube-system", "kube-dns").nodes[0]!;
    expect(n.drift).toEqual([]);
    expect(n.notes.join("\n")).toMatch(/is redirected on this node by a CiliumLocalRedirectPolicy/);
  });

  it("a ClusterMesh global Service: backends from other clusters are a note, not stale; without the annotation, stale", () => {
    const remote = (global: boolean) =>
      edit("scope", (t, b) => {
        const cip = t.find((x) => x.spec.flags.type === "ClusterIP")!;
        cip.spec["backend-addresses"].push({ ip: "10.245.1.40", port: 8080, state: "active", nodeName: "cluster2-worker" });
        if (global) b.objects.services.find((s) => s.metadata.name === "web")!.metadata.annotations = { "service.cilium.io/global": "true" };
      });
    const g = explainService(remote(true), "shop", "web").nodes[0]!;
    expect(g.drift).toEqual([]);
    expect(g.notes.join("\n")).toMatch(/also balances to 10\.245\.1\.40:8080, which this cluster's API does not list: the Service is a ClusterMesh global Service/);
    expect(explainService(remote(false), "shop", "web").nodes[0]!.drift.map((d) => [d.kind, d.endpoint])).toEqual([["stale-on-node", "10.245.1.40:8080"]]);
  });

  it("an endpoint ready and terminating (publishNotReadyAddresses) is a terminating backend, as Cilium marks it", () => {
    // pkg/k8s/endpoints.go ParseEndpointSliceV1: Terminating whenever conditions.terminating is true
    const b = edit("scope", (t, bundle) => {
      const sl = bundle.objects.endpointSlices.find((s) => s.metadata.labels?.["kubernetes.io/service-name"] === "web")!;
      const ep = sl.endpoints!.find((e) => e.addresses[0] === "10.244.0.17")!;
      ep.conditions = { ready: true, serving: true, terminating: true };
      for (const e of t) for (const be of e.spec["backend-addresses"]) if (be.ip === "10.244.0.17") be.state = "terminating";
    });
    expect(explainService(b, "shop", "web").nodes[0]!.drift).toEqual([]);
  });
});

describe("Cilium drift in the report's findings and per frontend", () => {
  // the audit's case: an endpoint the API moved to another address while Cilium still balances to the old one
  const moved = () => {
    const b = readBundle(`${DIR}/scope`);
    const sl = b.objects.endpointSlices.find((s) => s.metadata.labels?.["kubernetes.io/service-name"] === "web")!;
    sl.endpoints!.find((e) => e.addresses[0] === "10.244.1.31")!.addresses = ["10.244.1.77"];
    return b;
  };

  it("each drift item is repeated as a Drift/<kind> warning, as in kube-proxy modes (docs/report.md)", () => {
    const r = explainService(moved(), "shop", "web");
    const drift = r.nodes[0]!.drift;
    expect(drift.length).toBe(6);
    const fromDrift = r.findings.filter((f) => f.code.startsWith("Drift/"));
    expect(fromDrift.map((f) => [f.code, f.severity, f.node, f.message])).toEqual(drift.map((d) => [`Drift/${d.kind}`, "warning", "kind-worker", d.message]));
    expect(r.findings.map((f) => f.code)).toContain("NotKubeProxyDatapath");
  });

  it("each item names its frontend (type, address, scope), so that the six can be told apart", () => {
    const drift = explainService(moved(), "shop", "web").nodes[0]!.drift;
    const keys = drift.map((d) => JSON.stringify([d.kind, d.endpoint, d.frontend]));
    expect(new Set(keys).size).toBe(6);
    expect(drift.filter((d) => d.kind === "missing-on-node").map((d) => d.frontend)).toEqual([
      { type: "ClusterIP", address: expect.stringMatching(/^10\.96\.\d+\.\d+:80\/TCP$/) },
      { type: "NodePort", address: "*:30080/TCP" },
      { type: "NodePort", address: "*:30080/TCP", scope: "internal" },
    ]);
    expect(drift.every((d) => d.endpoint === (d.kind === "missing-on-node" ? "10.244.1.77:8080" : "10.244.1.31:8080"))).toBe(true);
  });
});

// Audit (Cilium) defect 4: a LoadBalancer Service with two ingress IPs, one ipMode VIP and one ipMode Proxy. Cilium
// programs a frontend for the VIP one only (pkg/k8s/service.go ParseService: ipMode unset or VIP), as the tool's own
// finding says; the Proxy one was still called service-missing on Cilium nodes.
describe("LoadBalancer ingress IPs with ipMode Proxy on a Cilium node", () => {
  const lb = (ips: string[]) =>
    edit("scope", (t, b) => {
      const web = b.objects.services.find((s) => s.metadata.name === "web")!;
      web.spec!.type = "LoadBalancer";
      web.status = { loadBalancer: { ingress: [{ ip: "203.0.113.10", ipMode: "VIP" }, { ip: "203.0.113.11", ipMode: "Proxy" }] } } as typeof web.status;
      // each LoadBalancer frontend as Cilium lists the NodePort ones (external and internal scope: the policies differ)
      for (const ip of ips) {
        for (const np of t.filter((e) => e.spec.flags.type === "NodePort" && e.spec["frontend-address"].ip === "0.0.0.0")) {
          const copy = JSON.parse(JSON.stringify(np)) as Entry;
          copy.spec.flags.type = "LoadBalancer";
          copy.spec["frontend-address"] = { ...copy.spec["frontend-address"], ip, port: 80 };
          t.push(copy);
        }
      }
    });
  it("the Proxy IP's absence is no drift, and the node says why; the VIP one is compared", () => {
    const r = explainService(lb(["203.0.113.10"]), "shop", "web");
    expect(r.findings.map((f) => f.code)).toContain("LoadBalancerIPModeProxy");
    const n = r.nodes[0]!;
    expect(n.drift).toEqual([]);
    expect(n.notes).toContain("LoadBalancer ingress 203.0.113.11 has ipMode Proxy: Cilium programs no frontend for it (pkg/k8s/service.go ParseService keeps ingress IPs whose ipMode is unset or VIP), so its absence is not drift");
    expect(n.notes.join("\n")).toMatch(/Cilium frontend LoadBalancer 203\.0\.113\.10:80\/TCP → 10\.244\.1\.31:8080$/m);
  });
  it("control: the VIP frontend missing is still drift; a Proxy frontend an agent lists anyway is compared", () => {
    // the table lists the Proxy IP's frontend (an agent without ParseService's check), not the VIP one
    const noVip = explainService(lb(["203.0.113.11"]), "shop", "web").nodes[0]!;
    expect(noVip.drift.map((d) => [d.kind, d.frontend?.address])).toEqual([["entry-missing", "203.0.113.10:80/TCP"]]);
    const listed = explainService(lb(["203.0.113.10", "203.0.113.11"]), "shop", "web").nodes[0]!;
    expect(listed.drift).toEqual([]);
    expect(listed.notes.join("\n")).toMatch(/Cilium frontend LoadBalancer 203\.0\.113\.11:80\/TCP/);
  });
});

// Audit (Cilium) defect 6: zone hints on a Service with externalTrafficPolicy Local. Cilium 1.14–1.17 ignores them then
// (pkg/k8s/service_cache.go filterEndpoints), so a backend missing from the ClusterIP frontend is drift there, while
// 1.18+ with --enable-service-topology leaves it out by design: it was hidden as "hinted away" for every version.
describe("zone hints on a Local-policy Service", () => {
  const hintedLocal = (etp: "Local" | "Cluster") =>
    edit("scope", (t, b) => {
      for (const n of b.objects.nodes) n.metadata.labels = { ...n.metadata.labels, "topology.kubernetes.io/zone": n.metadata.name === "kind-worker" ? "zone-a" : "zone-b" };
      const web = b.objects.services.find((s) => s.metadata.name === "web")!;
      web.metadata.annotations = { "service.kubernetes.io/topology-mode": "Auto" };
      web.spec!.externalTrafficPolicy = etp;
      const sl = b.objects.endpointSlices.find((s) => s.metadata.labels?.["kubernetes.io/service-name"] === "web")!;
      for (const ep of sl.endpoints!) {
        const zone = ep.nodeName === "kind-worker" ? "zone-a" : "zone-b";
        ep.zone = zone;
        ep.hints = { forZones: [{ name: zone }] };
      }
      // the ClusterIP frontend holds only this zone's backend, as 1.18+ with --enable-service-topology writes it
      const cip = t.find((e) => e.spec.flags.type === "ClusterIP")!;
      cip.spec["backend-addresses"] = cip.spec["backend-addresses"].filter((x) => x.ip === "10.244.1.31");
    });
  it("externalTrafficPolicy Local: the absent backend is unverifiable, and says which version calls it drift", () => {
    const n = explainService(hintedLocal("Local"), "shop", "web").nodes[0]!;
    expect(n.drift.map((d) => [d.kind, d.endpoint, d.frontend?.type])).toEqual([["unverifiable", "10.244.0.17:8080", "ClusterIP"]]);
    expect(n.drift[0]!.message).toContain("drift on Cilium 1.14–1.17, which ignores zone hints under a Local traffic policy (pkg/k8s/service_cache.go filterEndpoints)");
    expect(n.notes.join("\n")).toContain("the Service has a Local traffic policy: Cilium 1.14–1.17 then ignores the hints");
  });
  it("control: externalTrafficPolicy Cluster, the same table: hinted away on every version, no drift", () => {
    const b = hintedLocal("Cluster");
    // with both policies Cluster Cilium lists each NodePort frontend once, with every backend
    const sec = b.nodes[0]!.sections["cilium-services"]!;
    const table = (JSON.parse(sec.stdout) as Entry[]).filter((e) => (e.spec["frontend-address"] as { scope?: string }).scope !== "internal");
    for (const e of table.filter((x) => x.spec.flags.type === "NodePort")) e.spec["backend-addresses"] = [{ ip: "10.244.1.31", port: 8080, state: "active", nodeName: "kind-worker" }];
    sec.stdout = JSON.stringify(table);
    const n = explainService(b, "shop", "web").nodes[0]!;
    expect(n.drift).toEqual([]);
    expect(n.notes.join("\n")).toContain("Cilium follows them only with --enable-service-topology");
  });
});
