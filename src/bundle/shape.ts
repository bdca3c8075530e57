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
type Shape = "string" | "number" | "boolean" | "map" | "string map" | "string or number" | "object" | [Shape] | { [field: string]: Shape };

const META: Shape = {
  "name!": "string",
  namespace: "string",
  labels: "string map",
  annotations: "string map",
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
      selector: "string map",
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
      nodeSelector: "string map",
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { "nodeSelectorTerms!": [NODE_SELECTOR_TERM] } } },
      tolerations: [{ key: "string", operator: "string", value: "string", effect: "string" }],
      volumes: [{ "name!": "string", persistentVolumeClaim: { "claimName!": "string" } }],
      containers: [{ "name!": "string", ports: [{ "containerPort!": "number", name: "string", protocol: "string" }] }],
      workloadRef: { "name!": "string", "podGroup!": "string", podGroupReplicaKey: "string" },
      schedulingGroup: { podGroupName: "string" },
    },
    status: { phase: "string", podIP: "string", podIPs: [{ "ip!": "string" }], hostIP: "string", conditions: CONDITIONS },
  },
  Node: {
    "metadata!": META,
    spec: { podCIDR: "string", podCIDRs: ["string"], taints: [{ "key!": "string", "effect!": "string", value: "string" }] },
    status: { addresses: [{ "type!": "string", "address!": "string" }], conditions: CONDITIONS },
  },
  ConfigMap: { "metadata!": META, data: "string map" },
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
  Workload: {
    "metadata!": META,
    spec: { podGroups: [{ "name!": "string", policy: { basic: "map", gang: { "minCount!": "number" } } }] },
  },
  PodGroup: {
    "metadata!": META,
    spec: { schedulingPolicy: { basic: "map", gang: { "minCount!": "number" } }, parentCompositePodGroupName: "string" },
    status: { conditions: [{ "type!": "string", "status!": "string", reason: "string", message: "string" }] },
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
  return shape === "map" || shape === "object" ? "a map" : shape === "string map" ? "a map of strings" : `a ${shape}`;
}

/** A {@link Shape} made ready for checking: object fields as a list, `!` read once. */
type Compiled =
  | { kind: "scalar"; shape: Shape & string }
  | { kind: "list"; shape: Shape; element: Compiled }
  | { kind: "object"; shape: Shape; fields: { name: string; required: boolean; shape: Compiled }[] };

const COMPILED = new Map<Shape, Compiled>();

function compile(shape: Shape): Compiled {
  if (typeof shape === "string") return { kind: "scalar", shape };
  let c = COMPILED.get(shape);
  if (c) return c;
  if (Array.isArray(shape)) c = { kind: "list", shape, element: compile(shape[0]) };
  else {
    c = {
      kind: "object",
      shape,
      fields: Object.entries(shape).map(([key, sub]) => ({ name: key.endsWith("!") ? key.slice(0, -1) : key, required: key.endsWith("!"), shape: compile(sub) })),
    };
  }
  COMPILED.set(shape, c);
  return c;
}

/**
 * Where the value being checked is, below the object's path: field names and list indexes, pushed and popped as the
 * check descends (a bundle of 10,000 Services has hundreds of thousands of fields: their paths are spelled only for
 * the one that is wrong).
 */
type Trail = (string | number)[];

function spell(path: string, trail: Trail): string {
  let out = path;
  for (const t of trail) out += typeof t === "number" ? `[${t}]` : `.${t}`;
  return out;
}

function check(v: unknown, c: Compiled, path: string, trail: Trail): string | undefined {
  if (c.kind === "list") {
    if (!Array.isArray(v)) return `${spell(path, trail)} is ${describe(v)}: want a list`;
    for (let i = 0; i < v.length; i++) {
      const el = v[i];
      trail.push(i);
      const bad = el === null || el === undefined ? `${spell(path, trail)} is null: want ${want(c.element.shape)}` : check(el, c.element, path, trail);
      trail.pop();
      if (bad) return bad;
    }
    return undefined;
  }
  if (c.kind === "object") {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return `${spell(path, trail)} is ${describe(v)}: want a map`;
    const obj = v as Record<string, unknown>;
    for (const f of c.fields) {
      const value = obj[f.name];
      if (value === undefined || value === null) {
        if (f.required) {
          trail.push(f.name);
          const msg = `${spell(path, trail)} is missing: want ${want(f.shape.shape)}`;
          trail.pop();
          return msg;
        }
        continue;
      }
      // scalars inline: most fields are strings and numbers
      const sub = f.shape;
      if (sub.kind === "scalar" && scalarFits(value, sub.shape)) continue;
      trail.push(f.name);
      const bad = check(value, sub, path, trail);
      trail.pop();
      if (bad) return bad;
    }
    return undefined;
  }
  if (scalarFits(v, c.shape)) return undefined;
  const where = spell(path, trail);
  switch (c.shape) {
    case "string or number":
      return `${where} is ${describe(v)}: want a number or a port name`;
    case "map":
    case "object":
      return `${where} is ${describe(v)}: want a map`;
    case "string map": {
      // a map whose values are not all strings (a label `zone: 1` written without quotes): name the key
      if (v === null || typeof v !== "object" || Array.isArray(v)) return `${where} is ${describe(v)}: want a map of strings`;
      const [k, x] = Object.entries(v).find(([, x]) => typeof x !== "string")!;
      return `${where}[${JSON.stringify(k)}] is ${describe(x)}: want a string (quote it in YAML)`;
    }
    default:
      return `${where} is ${describe(v)}: want a ${c.shape}`;
  }
}

function scalarFits(v: unknown, shape: Shape & string): boolean {
  switch (shape) {
    case "map":
    case "object":
      return v !== null && typeof v === "object" && !Array.isArray(v);
    case "string map":
      return v !== null && typeof v === "object" && !Array.isArray(v) && Object.values(v).every((x) => typeof x === "string");
    case "string or number":
      return typeof v === "string" || typeof v === "number";
    case "string":
      return typeof v === "string";
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "boolean":
      return typeof v === "boolean";
    default:
      return false;
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
  return shape === undefined ? undefined : check(value, compile(shape), path, []);
}
