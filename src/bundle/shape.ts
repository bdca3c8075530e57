/**
 * The shape of the Kubernetes objects a bundle holds, checked before any analysis reads them: the fields the analyses
 * read (src/service, src/pending) must have the type the API gives them (k8s.io/api core/v1, discovery/v1,
 * storage/v1), so that a hand-edited or truncated bundle gets one line naming the field path
 * (`objects.services[0].spec.ports[1].port is "80": want a number`) instead of a TypeError deep in an analysis.
 *
 * Only the fields read are checked; any other field is left alone. An optional field that is `null` counts as absent
 * (`kubectl get -o yaml` prints `creationTimestamp: null`).
 *
 * Runtime-neutral: no I/O.
 * @module
 */

/**
 * A field's expected type: a scalar name, `[S]` a list of S, or an object whose keys are field names (`name!` when
 * required) mapping to their shapes.
 */
type Shape = "string" | "number" | "boolean" | "map" | "string or number" | "object" | [Shape] | { [field: string]: Shape };

const META: Shape = {
  "name!": "string",
  namespace: "string",
  labels: "map",
  annotations: "map",
  ownerReferences: [{ kind: "string", name: "string" }],
};
const NODE_SELECTOR_TERM: Shape = { matchExpressions: [{ "key!": "string", "operator!": "string", values: ["string"] }] };
const CONDITIONS: Shape = [{ "type!": "string", "status!": "string" }];

/** The shape of each kind a bundle holds (core/v1, discovery.k8s.io/v1, storage.k8s.io/v1, events). */
const KIND_SHAPES: Record<string, Shape> = {
  Service: {
    "metadata!": META,
    "spec!": {
      type: "string",
      clusterIP: "string",
      clusterIPs: ["string"],
      ports: [{ name: "string", protocol: "string", "port!": "number", targetPort: "string or number", nodePort: "number" }],
      selector: "map",
      externalIPs: ["string"],
      externalTrafficPolicy: "string",
      internalTrafficPolicy: "string",
      healthCheckNodePort: "number",
      sessionAffinity: "string",
      sessionAffinityConfig: { clientIP: { timeoutSeconds: "number" } },
      loadBalancerSourceRanges: ["string"],
      ipFamilies: ["string"],
      trafficDistribution: "string",
    },
    status: { loadBalancer: { ingress: [{ ip: "string", hostname: "string", ipMode: "string" }] } },
  },
  EndpointSlice: {
    "metadata!": META,
    addressType: "string",
    endpoints: [{
      "addresses!": ["string"],
      conditions: { ready: "boolean", serving: "boolean", terminating: "boolean" },
      nodeName: "string",
      zone: "string",
      targetRef: { kind: "string", name: "string", namespace: "string" },
      hints: { forZones: [{ "name!": "string" }], forNodes: [{ "name!": "string" }] },
    }],
    ports: [{ name: "string", protocol: "string", port: "number" }],
  },
  Pod: {
    "metadata!": META,
    spec: {
      nodeName: "string",
      hostNetwork: "boolean",
      nodeSelector: "map",
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { "nodeSelectorTerms!": [NODE_SELECTOR_TERM] } } },
      tolerations: [{ key: "string", operator: "string", value: "string", effect: "string" }],
      volumes: [{ "name!": "string", persistentVolumeClaim: { "claimName!": "string" } }],
      containers: [{ "name!": "string", ports: [{ "containerPort!": "number", name: "string", protocol: "string" }] }],
    },
    status: { phase: "string", podIP: "string", podIPs: [{ "ip!": "string" }], hostIP: "string", conditions: CONDITIONS },
  },
  Node: {
    "metadata!": META,
    spec: { podCIDR: "string", podCIDRs: ["string"], taints: [{ "key!": "string", "effect!": "string", value: "string" }] },
    status: { addresses: [{ "type!": "string", "address!": "string" }], conditions: CONDITIONS },
  },
  ConfigMap: { "metadata!": META, data: "map" },
  DaemonSet: {
    "metadata!": META,
    spec: {
      template: {
        spec: {
          containers: [{
            "name!": "string",
            command: ["string"],
            args: ["string"],
            volumeMounts: [{ "name!": "string", "mountPath!": "string", subPath: "string" }],
          }],
          volumes: [{ "name!": "string", configMap: { name: "string" } }],
        },
      },
    },
  },
  PersistentVolumeClaim: {
    "metadata!": META,
    spec: { volumeName: "string", accessModes: ["string"], volumeMode: "string", resources: { requests: "map" } },
    status: { phase: "string", accessModes: ["string"] },
  },
  PersistentVolume: {
    "metadata!": META,
    spec: {
      accessModes: ["string"],
      storageClassName: "string",
      claimRef: { name: "string", namespace: "string" },
      nodeAffinity: { required: { "nodeSelectorTerms!": [NODE_SELECTOR_TERM] } },
    },
    status: { phase: "string" },
  },
  StorageClass: {
    "metadata!": META,
    provisioner: "string",
    volumeBindingMode: "string",
    allowedTopologies: [{ matchLabelExpressions: [{ "key!": "string", "values!": ["string"] }] }],
  },
  Event: {
    "metadata!": META,
    type: "string",
    reason: "string",
    message: "string",
    note: "string",
    involvedObject: { kind: "string", name: "string", namespace: "string" },
    regarding: { kind: "string", name: "string", namespace: "string" },
  },
};

/** How a value is named in a message: its type, and the value itself when short. */
function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a map";
  if (typeof v === "string") return v.length <= 40 ? `the string ${JSON.stringify(v)}` : "a string";
  return `${typeof v} ${String(v)}`;
}

function want(shape: Shape): string {
  if (Array.isArray(shape)) return "a list";
  if (typeof shape === "object") return "a map";
  return shape === "map" || shape === "object" ? "a map" : `a ${shape}`;
}

function check(v: unknown, shape: Shape, path: string): string | undefined {
  if (Array.isArray(shape)) {
    if (!Array.isArray(v)) return `${path} is ${describe(v)}: want a list`;
    for (let i = 0; i < v.length; i++) {
      const el = v[i];
      if (el === null || el === undefined) return `${path}[${i}] is null: want ${want(shape[0])}`;
      const bad = check(el, shape[0], `${path}[${i}]`);
      if (bad) return bad;
    }
    return undefined;
  }
  if (typeof shape === "object") {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return `${path} is ${describe(v)}: want a map`;
    const obj = v as Record<string, unknown>;
    for (const [key, sub] of Object.entries(shape)) {
      const required = key.endsWith("!");
      const name = required ? key.slice(0, -1) : key;
      const value = obj[name];
      if (value === undefined || value === null) {
        if (required) return `${path}.${name} is missing: want ${want(sub)}`;
        continue;
      }
      const bad = check(value, sub, `${path}.${name}`);
      if (bad) return bad;
    }
    return undefined;
  }
  switch (shape) {
    case "map":
    case "object":
      return v !== null && typeof v === "object" && !Array.isArray(v) ? undefined : `${path} is ${describe(v)}: want a map`;
    case "string or number":
      return typeof v === "string" || typeof v === "number" ? undefined : `${path} is ${describe(v)}: want a number or a port name`;
    case "string":
      return typeof v === "string" ? undefined : `${path} is ${describe(v)}: want a string`;
    case "number":
      return typeof v === "number" && Number.isFinite(v) ? undefined : `${path} is ${describe(v)}: want a number`;
    case "boolean":
      return typeof v === "boolean" ? undefined : `${path} is ${describe(v)}: want a boolean`;
  }
}

/**
 * Checks one object of a bundle against the shape of its kind.
 * @param value the object.
 * @param kind the kind it must be (the list it is in: `services` → Service), or undefined to take the object's own.
 * @param path where it is, for the message, e.g. `objects.services[0]`.
 * @returns undefined when it fits, else one line naming the field path and what is wanted, e.g.
 *   `objects.services[0] is null: want a Service object`.
 */
export function checkObjectShape(value: unknown, kind: string, path: string): string | undefined {
  if (value === null || value === undefined) return `${path} is null: want a ${kind} object`;
  if (typeof value !== "object" || Array.isArray(value)) return `${path} is ${describe(value)}: want a ${kind} object`;
  const own = (value as { kind?: unknown }).kind;
  if (own !== undefined && own !== kind) return `${path} is ${typeof own === "string" ? `a ${own}` : `of kind ${describe(own)}`}: want a ${kind} object`;
  const shape = KIND_SHAPES[kind];
  return shape === undefined ? undefined : check(value, shape, path);
}
