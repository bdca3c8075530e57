/**
 * The synthetic cluster behind the benchmark fixtures: N Services with E ready endpoints each, spread over enough
 * Nodes that no node runs more than {@link PlanOptions.podsPerNode} of them, all deterministic in N (same N → same
 * plan, byte for byte). Every generator (iptables-save, nft -j, API objects) renders this one plan, so the dump and the
 * objects agree the way a healthy cluster's do (no drift).
 *
 * Address plan (kubeadm defaults): pod CIDR 10.244.0.0/16 with one /24 per node (node k: 10.244.k.0/24; past 256
 * nodes, 10.128.0.0/9 with node k at 10.(128 + k/256).(k mod 256).0/24), Service CIDR
 * 10.96.0.0/12 (ClusterIPs from 10.96.0.10 upwards), node InternalIPs in 172.18.0.0/16. One ServicePort per Service,
 * cycling through `http` 80→8080, `https` 443→8443, `grpc` 9090→9090, all TCP; every 10th Service is a NodePort
 * (nodePort 30000 + k), the rest ClusterIP. Namespaces `team-000`, `team-001`, … hold 200 Services each; Services are
 * named `app-00000` … (fixed width, so no Service's `ns/name:port` text is a prefix of another's).
 *
 * Runtime-neutral, no I/O.
 * @module
 */

/** Options of {@link planCluster}. */
export interface PlanOptions {
  /** Number of Services (one ServicePort each). */
  services: number;
  /** Ready endpoints per Service. @default 5 */
  endpointsPerService?: number;
  /** Most endpoints (pods) on one node. @default 200 */
  podsPerNode?: number;
  /** Every `nodePortEvery`-th Service (index 0, k, 2k, …) is type NodePort. @default 10 */
  nodePortEvery?: number;
  /** Services per namespace. @default 200 */
  servicesPerNamespace?: number;
}

/** One endpoint (a pod) of a planned Service. */
export interface PlanEndpoint {
  /** Pod IP, in its node's /24. */
  ip: string;
  /** Node the pod runs on. */
  nodeName: string;
  /** Pod name, `<service>-<rs hash>-<suffix>` as a Deployment names them. */
  podName: string;
}

/** One planned Service with its single ServicePort. */
export interface PlanService {
  /** Position in the plan, 0-based. */
  index: number;
  namespace: string;
  name: string;
  type: "ClusterIP" | "NodePort";
  clusterIP: string;
  /** ServicePort name (never empty here). */
  portName: string;
  protocol: "TCP";
  port: number;
  targetPort: number;
  /** Set for type NodePort. */
  nodePort?: number;
  /** Endpoints, in kube-proxy's order (sorted by `IP:port` text, as its endpoints cache does). */
  endpoints: PlanEndpoint[];
}

/** One planned Node. */
export interface PlanNode {
  name: string;
  podCIDR: string;
  internalIP: string;
  zone: string;
}

/** The whole synthetic cluster. */
export interface ClusterPlan {
  /** Pod CIDR, the local-traffic detector's `! -s` value. */
  clusterCIDR: string;
  serviceCIDR: string;
  nodes: PlanNode[];
  services: PlanService[];
  /** The node whose datapath the fixtures dump (`node-1`). */
  dumpNode: PlanNode;
  /** A deterministic permutation of service indexes: the order kube-proxy's Go map iteration wrote them in. */
  writeOrder: number[];
}

/** The plan cannot be built (too many pods for the /16 pod CIDR, or a bad count). */
export class PlanError extends Error {
  override name = "PlanError";
}

const PORTS = [
  { name: "http", port: 80, targetPort: 8080 },
  { name: "https", port: 443, targetPort: 8443 },
  { name: "grpc", port: 9090, targetPort: 9090 },
] as const;

/**
 * Dotted IPv4 text of a 32-bit number.
 * @param n 0 … 2^32-1.
 */
export function ipv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** mulberry32: a small seeded PRNG, so "random" orders are the same on every run. @returns numbers in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A deterministic shuffle of 0 … n-1 (Fisher–Yates with a PRNG seeded by `seed`).
 * @param n length.
 * @param seed any integer.
 */
export function permutation(n: number, seed: number): number[] {
  const out = Array.from({ length: n }, (_, i) => i);
  const rnd = prng(seed);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const POD_SUFFIX = "bcdfghjklmnpqrstvwxz2456789";

function podSuffix(n: number, len: number): string {
  // Knuth's multiplicative hash spreads consecutive numbers; the alphabet is the one Kubernetes uses for name suffixes.
  let v = Math.imul(n + 1, 2654435761) >>> 0;
  let s = "";
  for (let i = 0; i < len; i++) {
    s += POD_SUFFIX[v % POD_SUFFIX.length];
    v = Math.floor(v / POD_SUFFIX.length);
    if (v === 0) v = Math.imul(n + i + 2, 2246822519) >>> 0;
  }
  return s;
}

/**
 * Builds the synthetic cluster.
 * @param options sizes; see {@link PlanOptions}.
 * @returns the plan; `services[Math.floor(N / 2)]` is "the service in the middle" the bench queries.
 * @throws {PlanError} when `services` is not a positive integer, or the pods do not fit the /16 pod CIDR
 *   ("N services × E endpoints need M nodes of P pods; the pod CIDR 10.244.0.0/16 has room for 256").
 */
export function planCluster(options: PlanOptions): ClusterPlan {
  const n = options.services;
  const perService = options.endpointsPerService ?? 5;
  const podsPerNode = options.podsPerNode ?? 200;
  const nodePortEvery = options.nodePortEvery ?? 10;
  const perNamespace = options.servicesPerNamespace ?? 200;
  if (!Number.isInteger(n) || n < 1) throw new PlanError(`services must be a positive integer, got ${n}`);
  if (!Number.isInteger(perService) || perService < 1) {
    throw new PlanError(`endpointsPerService must be a positive integer, got ${perService}`);
  }
  if (!Number.isInteger(podsPerNode) || podsPerNode < 1 || podsPerNode > 252) {
    throw new PlanError(`podsPerNode must be 1…252 (a node's /24 minus network, gateway and broadcast), got ${podsPerNode}`);
  }
  const pods = n * perService;
  const nodeCount = Math.max(3, Math.ceil(pods / podsPerNode));
  // Up to 256 nodes: kubeadm's 10.244.0.0/16. Beyond (30,000+ Services): 10.128.0.0/9, 32,768 node /24s, which does
  // not overlap the Service CIDR 10.96.0.0/12.
  const wide = nodeCount > 256;
  if (nodeCount > 32768) {
    throw new PlanError(
      `${n} services × ${perService} endpoints need ${nodeCount} nodes of ${podsPerNode} pods; the pod CIDR 10.128.0.0/9 has room for 32768`,
    );
  }
  const podNet = (k: number) => (wide ? `10.${128 + (k >> 8)}.${k & 255}` : `10.244.${k}`);
  // NodePorts come from 30000-32767 (2,768 ports): past that, fewer Services are NodePorts, never two on one port.
  const npEvery = Math.max(nodePortEvery, Math.ceil(n / 2768));
  const nodes: PlanNode[] = [];
  for (let k = 0; k < nodeCount; k++) {
    nodes.push({
      name: `node-${k + 1}`,
      podCIDR: `${podNet(k)}.0/24`,
      internalIP: ipv4((172 << 24 | 18 << 16) + 256 * Math.floor(k / 250) + (k % 250) + 2),
      zone: `zone-${"abc"[k % 3]}`,
    });
  }
  const services: PlanService[] = [];
  const nsWidth = Math.max(3, String(Math.ceil(n / perNamespace) - 1).length);
  const nameWidth = Math.max(5, String(n - 1).length);
  const serviceBase = (10 << 24 | 96 << 16) + 10;
  for (let i = 0; i < n; i++) {
    const p = PORTS[i % PORTS.length]!;
    const name = `app-${String(i).padStart(nameWidth, "0")}`;
    const rsHash = podSuffix(i * 7919 + 17, 10);
    const endpoints: PlanEndpoint[] = [];
    for (let e = 0; e < perService; e++) {
      // Pods numbered Service by Service, dealt round-robin over the nodes: a Service's replicas land on consecutive
      // nodes (different ones when there are at least E nodes), as the scheduler's spreading would put them.
      const pod = i * perService + e;
      const node = pod % nodeCount;
      const slot = Math.floor(pod / nodeCount);
      endpoints.push({ ip: `${podNet(node)}.${slot + 2}`, nodeName: nodes[node]!.name, podName: `${name}-${rsHash}-${podSuffix(pod, 5)}` });
    }
    endpoints.sort((a, b) => {
      const x = `${a.ip}:${p.targetPort}`;
      const y = `${b.ip}:${p.targetPort}`;
      return x < y ? -1 : x > y ? 1 : 0;
    });
    const isNodePort = i % npEvery === 0;
    const svc: PlanService = {
      index: i,
      namespace: `team-${String(Math.floor(i / perNamespace)).padStart(nsWidth, "0")}`,
      name,
      type: isNodePort ? "NodePort" : "ClusterIP",
      clusterIP: ipv4(serviceBase + i),
      portName: p.name,
      protocol: "TCP",
      port: p.port,
      targetPort: p.targetPort,
      endpoints,
    };
    if (isNodePort) svc.nodePort = 30000 + (Math.floor(i / npEvery) % 2768);
    services.push(svc);
  }
  return {
    clusterCIDR: wide ? "10.128.0.0/9" : "10.244.0.0/16",
    serviceCIDR: "10.96.0.0/12",
    nodes,
    services,
    dumpNode: nodes[0]!,
    writeOrder: permutation(n, n * 31 + 7),
  };
}

/**
 * kube-proxy's ServicePortName text of a planned Service: `ns/name:port`, as it appears in rule comments.
 * @param svc the Service.
 */
export function servicePortName(svc: PlanService): string {
  return `${svc.namespace}/${svc.name}:${svc.portName}`;
}
