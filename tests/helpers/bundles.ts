/**
 * Test helpers: API objects shaped as the API server returns them, and bundles pairing them with real dumps.
 * The Service/EndpointSlice inputs follow the notes of each kube-proxy test (../shared/fixtures/real-dumps/iptables/*.md).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Bundle } from "../../src/bundle/bundle.ts";
import { emptyBundle } from "../../src/bundle/bundle.ts";
import type { EndpointSlice, Node, Service } from "../../src/model/k8s.ts";

/** Absolute path of a file under tests/fixtures. */
export function fixturePath(rel: string): string {
  return fileURLToPath(new URL(`../fixtures/${rel}`, import.meta.url));
}

/** Text of a file under tests/fixtures. */
export function fixture(rel: string): string {
  return readFileSync(fixturePath(rel), "utf8");
}

/** A Service as the API returns it. */
export function service(ns: string, name: string, spec: Service["spec"], status?: Service["status"]): Service {
  const s: Service = { apiVersion: "v1", kind: "Service", metadata: { name, namespace: ns }, spec };
  if (status) s.status = status;
  return s;
}

/** An endpoint of a test slice. */
export interface TestEndpoint {
  ip: string;
  node?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

/** An EndpointSlice named `<svc>-1` (as makeTestEndpointSlice does), labelled with its Service. */
export function slice(ns: string, svc: string, endpoints: TestEndpoint[], ports: { name?: string; port: number; protocol?: "TCP" | "UDP" | "SCTP" }[]): EndpointSlice {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: `${svc}-1`, namespace: ns, labels: { "kubernetes.io/service-name": svc } },
    addressType: "IPv4",
    endpoints: endpoints.map((e) => {
      const ep: EndpointSlice["endpoints"] extends (infer T)[] | undefined ? T : never = { addresses: [e.ip] };
      if (e.ready !== undefined || e.serving !== undefined || e.terminating !== undefined) {
        ep.conditions = {};
        if (e.ready !== undefined) ep.conditions.ready = e.ready;
        if (e.serving !== undefined) ep.conditions.serving = e.serving;
        if (e.terminating !== undefined) ep.conditions.terminating = e.terminating;
      }
      if (e.node) ep.nodeName = e.node;
      return ep;
    }),
    ports: ports.map((p) => ({ name: p.name ?? "", port: p.port, protocol: p.protocol ?? "TCP" })),
  };
}

/**
 * Service ns1/svc1 of kube-proxy's TestEndpointSliceWithTerminatingEndpointsTrafficPolicyLocal (pkg/proxy/iptables
 * proxier_test.go, v1.27): a LoadBalancer 172.30.1.1:80 with ingress 1.2.3.4, externalTrafficPolicy Local
 * (healthCheckNodePort 30000), sessionAffinity ClientIP.
 */
export function terminatingLocalService(): Service {
  return service("ns1", "svc1", {
    type: "LoadBalancer",
    clusterIP: "172.30.1.1",
    selector: { foo: "bar" },
    externalTrafficPolicy: "Local",
    healthCheckNodePort: 30000,
    sessionAffinity: "ClientIP",
    ports: [{ port: 80, protocol: "TCP", targetPort: 80 }],
  }, { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } });
}

/** An endpoint ready, serving, not terminating (EndpointConditions). */
export const readyEndpoint = (ip: string, node: string): TestEndpoint => ({ ip, node, ready: true, serving: true, terminating: false });
/** An endpoint terminating but still serving (not ready): kube-proxy uses it only when no ready endpoint is left. */
export const servingTerminatingEndpoint = (ip: string, node: string): TestEndpoint => ({ ip, node, ready: false, serving: true, terminating: true });
/** An endpoint terminating and no longer serving: kube-proxy never uses it. */
export const notServingEndpoint = (ip: string, node: string): TestEndpoint => ({ ip, node, ready: false, serving: false, terminating: true });

/** A Node with an InternalIP. */
export function node(name: string, ip: string, labels: Record<string, string> = {}): Node {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels: { "kubernetes.io/hostname": name, ...labels } },
    status: { addresses: [{ type: "InternalIP", address: ip }], conditions: [{ type: "Ready", status: "True" }] },
  };
}

/** A bundle holding one node's dump and the given objects. */
export function bundleOf(opts: {
  dump: string;
  nodeName: string;
  nodeIP: string;
  services: Service[];
  slices: EndpointSlice[];
  section?: "iptables-save" | "ip6tables-save";
  clusterCIDRs?: string[];
}): Bundle {
  const b = emptyBundle({ tool: "test" });
  if (opts.clusterCIDRs) b.capture.clusterCIDRs = opts.clusterCIDRs;
  b.objects.services.push(...opts.services);
  b.objects.endpointSlices.push(...opts.slices);
  b.objects.nodes.push(node(opts.nodeName, opts.nodeIP));
  b.nodes.push({ name: opts.nodeName, sections: { [opts.section ?? "iptables-save"]: { stdout: opts.dump, exitCode: 0 } } });
  return b;
}

const p80 = [{ name: "p80", port: 80, protocol: "TCP" as const }];

/**
 * Objects of TestOverallIPTablesRules (master) and TestOverallIPTablesRulesWithMultipleServices (v1.27):
 * six services of every type (see TestOverallIPTablesRules.md). `node` is the fake proxier's node name.
 */
export function overallObjects(nodeName: string, affinity: boolean): { services: Service[]; slices: EndpointSlice[] } {
  const services = [
    service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.30.0.41", ports: [{ name: "p80", port: 80, protocol: "TCP" }] }),
    service("ns2", "svc2", {
      type: "LoadBalancer",
      clusterIP: "172.30.0.42",
      externalTrafficPolicy: "Local",
      healthCheckNodePort: 30000,
      externalIPs: ["192.168.99.22"],
      ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }],
    }, { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } }),
    service("ns3", "svc3", { type: "NodePort", clusterIP: "172.30.0.43", ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3003 }] }),
    service("ns4", "svc4", { type: "NodePort", clusterIP: "172.30.0.44", externalIPs: ["192.168.99.33"], ports: [{ name: "p80", port: 80, protocol: "TCP", targetPort: 80 }] }),
    service("ns5", "svc5", {
      type: "LoadBalancer",
      clusterIP: "172.30.0.45",
      externalTrafficPolicy: "Cluster",
      healthCheckNodePort: 30000,
      loadBalancerSourceRanges: ["203.0.113.0/25"],
      ...(affinity ? { sessionAffinity: "ClientIP" as const, sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } } } : {}),
      ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3002 }],
    }, { loadBalancer: { ingress: [{ ip: "5.6.7.8" }] } }),
    service("ns6", "svc6", { type: "ClusterIP", clusterIP: "172.30.0.46", ports: [{ name: "p80", port: 80, protocol: "TCP", targetPort: 80 }] }),
  ];
  const slices = [
    slice("ns1", "svc1", [{ ip: "10.180.0.1" }], p80),
    slice("ns2", "svc2", [{ ip: "10.180.0.2" }], p80),
    slice("ns3", "svc3", [{ ip: "10.180.0.3" }], p80),
    slice("ns4", "svc4", [{ ip: "10.180.0.4" }, { ip: "10.180.0.5", node: nodeName }], p80),
    slice("ns5", "svc5", [{ ip: "10.180.0.3" }], p80),
  ];
  return { services, slices };
}

/**
 * Objects of kube-proxy's nftables TestSyncProxyRulesRepeated stages (ClusterIP Services of node `test-node`):
 * ns1/svc1 172.30.0.41:80 → 10.0.1.1, ns2/svc2 172.30.0.42:8080 → 10.0.2.1 (with `svc2`), ns3/svc3 172.30.0.43:80 →
 * `svc3`, ns4/svc4 172.30.0.44:80 → `svc4` (no EndpointSlice without it).
 */
export function repeatedObjects(svc3: string[], opts: { svc2?: boolean; svc4?: string[] } = {}): { services: Service[]; slices: EndpointSlice[] } {
  const p = (name: string, port: number) => [{ name, port, protocol: "TCP" as const }];
  const services = [
    service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.30.0.41", ports: p("p80", 80) }),
    ...(opts.svc2
      ? [service("ns2", "svc2", { type: "ClusterIP", clusterIP: "172.30.0.42", ports: p("p8080", 8080) })]
      : []),
    service("ns3", "svc3", { type: "ClusterIP", clusterIP: "172.30.0.43", ports: p("p80", 80) }),
    service("ns4", "svc4", { type: "ClusterIP", clusterIP: "172.30.0.44", ports: p("p80", 80) }),
  ];
  const slices = [
    slice("ns1", "svc1", [{ ip: "10.0.1.1" }], [{ name: "p80", port: 80 }]),
    ...(opts.svc2 ? [slice("ns2", "svc2", [{ ip: "10.0.2.1" }], [{ name: "p8080", port: 8080 }])] : []),
    slice("ns3", "svc3", svc3.map((ip) => ({ ip })), [{ name: "p80", port: 80 }]),
    ...(opts.svc4 ? [slice("ns4", "svc4", opts.svc4.map((ip) => ({ ip })), [{ name: "p80", port: 80 }])] : []),
  ];
  return { services, slices };
}

/** The iptables-lab example bundle's directory. */
export const IPTABLES_LAB = fileURLToPath(new URL("../../examples/iptables-lab", import.meta.url));
