/**
 * A small cluster for scale tests and the live bench: one Service `spread` with one ready endpoint on each of n nodes
 * `n01`…, its EndpointSlice, the endpoint pods and the Nodes. Test helper (pure).
 * @module
 */
import type { BundleObjects } from "../../src/bundle/bundle.ts";
import type { EndpointSlice, Node, Pod, Service } from "../../src/model/k8s.ts";

/** A Service `spread` with one endpoint on each of n nodes `n01`…. */
export function spread(n: number): Pick<BundleObjects, "services" | "endpointSlices" | "pods" | "nodes"> {
  const nodes: Node[] = [];
  const pods: Pod[] = [];
  const endpoints: NonNullable<EndpointSlice["endpoints"]> = [];
  for (let i = 1; i <= n; i++) {
    const name = `n${String(i).padStart(2, "0")}`;
    nodes.push({ apiVersion: "v1", kind: "Node", metadata: { name }, spec: { podCIDR: `10.244.${i}.0/24` }, status: { addresses: [{ type: "InternalIP", address: `192.168.0.${i}` }], conditions: [{ type: "Ready", status: "True" }] } });
    pods.push({ apiVersion: "v1", kind: "Pod", metadata: { name: `spread-${name}`, namespace: "default", labels: { app: "spread" } }, spec: { nodeName: name }, status: { phase: "Running", podIP: `10.244.${i}.5` } });
    endpoints.push({ addresses: [`10.244.${i}.5`], conditions: { ready: true }, nodeName: name, targetRef: { kind: "Pod", name: `spread-${name}`, namespace: "default" } });
  }
  const svc: Service = { apiVersion: "v1", kind: "Service", metadata: { name: "spread", namespace: "default" }, spec: { type: "ClusterIP", clusterIP: "10.96.50.50", selector: { app: "spread" }, ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }] } };
  const slice: EndpointSlice = { apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice", metadata: { name: "spread-1", namespace: "default", labels: { "kubernetes.io/service-name": "spread" } }, addressType: "IPv4", endpoints, ports: [{ name: "http", port: 8080, protocol: "TCP" }] };
  return { services: [svc], endpointSlices: [slice], pods, nodes };
}
