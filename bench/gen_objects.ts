/**
 * The Kubernetes API objects of a {@link ClusterPlan}, as `kubectl get services,endpointslices,nodes -A -o json`
 * prints them: one `List` per kind, keys sorted (kubectl prints unstructured objects through a map), 4-space indent,
 * no managedFields. Services carry a selector and one ServicePort; each Service has one EndpointSlice
 * (`<svc>-<suffix>`, label `kubernetes.io/service-name`, owner reference to the Service) with every endpoint ready,
 * serving, not terminating, on its node and zone; Nodes carry podCIDR(s), InternalIP, zone labels and a Ready
 * condition. Written into a bundle directory these files are what src/bundle/decode.ts `bundleFromFiles` reads.
 *
 * Bench code (not shipped); uses node:crypto for stable UIDs.
 * @module
 */
import { createHash } from "node:crypto";
import type { ClusterPlan, PlanNode, PlanService } from "./cluster_plan.ts";

/** Kubernetes version the generated Nodes report. */
export const KUBE_VERSION = "v1.31.4";

const CREATED = "2025-03-17T08:12:44Z";

/**
 * A stable RFC 4122-shaped UID (version 4 layout) derived from a name.
 * @param seed any text, e.g. `service/team-000/app-00000`.
 */
export function uid(seed: string): string {
  const h = createHash("sha256").update(seed).digest("hex");
  const variant = "89ab"[parseInt(h[16]!, 16) % 4];
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

type JsonObject = { [k: string]: unknown };

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== "object") return v;
  const out: JsonObject = {};
  for (const k of Object.keys(v as JsonObject).sort()) out[k] = sortKeys((v as JsonObject)[k]);
  return out;
}

/**
 * The Service object of a planned Service.
 * @param svc the Service.
 */
export function serviceObject(svc: PlanService): JsonObject {
  const port: JsonObject = { name: svc.portName, port: svc.port, protocol: svc.protocol, targetPort: svc.targetPort };
  if (svc.nodePort !== undefined) port.nodePort = svc.nodePort;
  const spec: JsonObject = {
    clusterIP: svc.clusterIP,
    clusterIPs: [svc.clusterIP],
    internalTrafficPolicy: "Cluster",
    ipFamilies: ["IPv4"],
    ipFamilyPolicy: "SingleStack",
    ports: [port],
    selector: { "app.kubernetes.io/name": svc.name },
    sessionAffinity: "None",
    type: svc.type,
  };
  if (svc.type === "NodePort") spec.externalTrafficPolicy = "Cluster";
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      creationTimestamp: CREATED,
      labels: { "app.kubernetes.io/name": svc.name, "app.kubernetes.io/part-of": svc.namespace },
      name: svc.name,
      namespace: svc.namespace,
      resourceVersion: String(100000 + svc.index * 7),
      uid: uid(`service/${svc.namespace}/${svc.name}`),
    },
    spec,
    status: { loadBalancer: {} },
  };
}

/**
 * The EndpointSlice object of a planned Service (all its endpoints in one slice, as the EndpointSlice controller
 * writes up to 100 per slice).
 * @param svc the Service.
 * @param plan the cluster.
 * @param nodesByName the plan's nodes by name (for the endpoints' zones).
 */
export function endpointSliceObject(svc: PlanService, plan: ClusterPlan, nodesByName: Map<string, PlanNode>): JsonObject {
  const suffix = uid(`slice/${svc.namespace}/${svc.name}`).replace(/[^a-z]/g, "").slice(0, 5).padEnd(5, "x");
  return {
    addressType: "IPv4",
    apiVersion: "discovery.k8s.io/v1",
    endpoints: svc.endpoints.map((ep) => ({
      addresses: [ep.ip],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: ep.nodeName,
      targetRef: { kind: "Pod", name: ep.podName, namespace: svc.namespace, uid: uid(`pod/${svc.namespace}/${ep.podName}`) },
      zone: nodesByName.get(ep.nodeName)?.zone ?? plan.dumpNode.zone,
    })),
    kind: "EndpointSlice",
    metadata: {
      annotations: { "endpoints.kubernetes.io/last-change-trigger-time": CREATED },
      creationTimestamp: CREATED,
      generateName: `${svc.name}-`,
      generation: 1,
      labels: {
        "app.kubernetes.io/name": svc.name,
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
        "kubernetes.io/service-name": svc.name,
      },
      name: `${svc.name}-${suffix}`,
      namespace: svc.namespace,
      ownerReferences: [{
        apiVersion: "v1",
        blockOwnerDeletion: true,
        controller: true,
        kind: "Service",
        name: svc.name,
        uid: uid(`service/${svc.namespace}/${svc.name}`),
      }],
      resourceVersion: String(100003 + svc.index * 7),
      uid: uid(`slice/${svc.namespace}/${svc.name}`),
    },
    ports: [{ name: svc.portName, port: svc.targetPort, protocol: svc.protocol }],
  };
}

/**
 * The Node object of a planned node.
 * @param node the node.
 */
export function nodeObject(node: PlanNode): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      creationTimestamp: CREATED,
      labels: {
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "topology.kubernetes.io/region": "region-1",
        "topology.kubernetes.io/zone": node.zone,
      },
      name: node.name,
      resourceVersion: "99000",
      uid: uid(`node/${node.name}`),
    },
    spec: { podCIDR: node.podCIDR, podCIDRs: [node.podCIDR] },
    status: {
      addresses: [{ address: node.internalIP, type: "InternalIP" }, { address: node.name, type: "Hostname" }],
      conditions: [{
        lastHeartbeatTime: CREATED,
        lastTransitionTime: CREATED,
        message: "kubelet is posting ready status",
        reason: "KubeletReady",
        status: "True",
        type: "Ready",
      }],
      nodeInfo: {
        architecture: "amd64",
        containerRuntimeVersion: "containerd://1.7.24",
        kernelVersion: "6.1.0-31-amd64",
        kubeProxyVersion: KUBE_VERSION,
        kubeletVersion: KUBE_VERSION,
        operatingSystem: "linux",
        osImage: "Debian GNU/Linux 12 (bookworm)",
      },
    },
  };
}

/** The three `kubectl get -o json` files of a plan, by file name. */
export interface ObjectFiles {
  "services.json": string;
  "endpointslices.json": string;
  "nodes.json": string;
}

function list(items: JsonObject[]): string {
  return JSON.stringify(sortKeys({ apiVersion: "v1", items, kind: "List", metadata: { resourceVersion: "" } }), null, 4) + "\n";
}

/**
 * Renders the plan's objects as three `kubectl get … -o json` List files.
 * @param plan the cluster.
 * @returns file name → text.
 */
export function objectFiles(plan: ClusterPlan): ObjectFiles {
  const nodesByName = new Map(plan.nodes.map((n) => [n.name, n]));
  return {
    "services.json": list(plan.services.map(serviceObject)),
    "endpointslices.json": list(plan.services.map((s) => endpointSliceObject(s, plan, nodesByName))),
    "nodes.json": list(plan.nodes.map(nodeObject)),
  };
}
