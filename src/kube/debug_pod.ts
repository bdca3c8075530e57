/**
 * The debug pod that collects a node's datapath state when the node's kube-proxy pod cannot, built by a pure
 * function (as kubectl debug builds its node-debugging pod in staging/src/k8s.io/kubectl/pkg/cmd/debug/debug.go,
 * generateNodeDebugPod, and applies a profile in profiles.go):
 * - pinned to the node (`spec.nodeName`: no scheduler involved), `hostNetwork` and `hostPID` (the node's network
 *   namespace is what kube-proxy programs), tolerating every taint (`operator: Exists`);
 * - `restartPolicy: Never` and `activeDeadlineSeconds`, so the kubelet stops it even if kubectl-netpath is killed
 *   before it can delete the pod; the container itself only sleeps for that long;
 * - profile `netadmin` (default): capabilities NET_ADMIN and NET_RAW, enough for iptables-save, ipset, ipvsadm,
 *   nft; profile `sysadmin`: `privileged: true` and the host's root filesystem read-only at /host, so the host's own
 *   iptables-legacy-save can run through `chroot /host` (netshoot ships no iptables-legacy);
 * - label `app.kubernetes.io/managed-by=kubectl-netpath` (what `kubectl netpath cleanup` selects) and a run id;
 * - no service account token, no service links: the pod needs no API access.
 *
 * Runtime-neutral: no I/O (`V1Pod` is a type-only import).
 * @module
 */
import type { V1Pod } from "@kubernetes/client-node";

/** Label every debug pod carries (and `cleanup` selects on). */
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
/** Value of {@link MANAGED_BY_LABEL}. */
export const MANAGED_BY = "kubectl-netpath";
/** Label with the id of the run that created the pod. */
export const RUN_LABEL = "kubectl-netpath/run";
/** Annotation with the node name (label values are limited to 63 characters, node names are not). */
export const NODE_ANNOTATION = "kubectl-netpath/node";
/** Name of the debug pod's container. */
export const DEBUG_CONTAINER = "collector";
/** Default image: has iptables (nft), ipset, ipvsadm, nft, conntrack, curl. */
export const DEFAULT_IMAGE = "nicolaka/netshoot";

/** Privileges of the debug pod (`--profile`). */
export type DebugProfile = "netadmin" | "sysadmin";

/** Options of {@link buildDebugPod}. */
export interface DebugPodOptions {
  /** Pod name (see {@link debugPodName}). */
  name: string;
  /** Namespace of the pod. */
  namespace: string;
  /** Container image. @default "nicolaka/netshoot" */
  image?: string;
  /** @default "netadmin" */
  profile?: DebugProfile;
  /** Seconds after which the kubelet fails the pod (and its container has exited anyway). */
  activeDeadlineSeconds: number;
  /** Id of this run, for the {@link RUN_LABEL} label. */
  runId?: string;
}

/**
 * A pod name for node `node`: `kubectl-netpath-<node>-<suffix>`, the node part cut and cleaned so the whole is a
 * valid DNS label of at most 63 characters.
 * @param node the node name.
 * @param suffix a random suffix of [a-z0-9], e.g. 5 characters.
 */
export function debugPodName(node: string, suffix: string): string {
  const room = 63 - "kubectl-netpath-".length - 1 - suffix.length;
  const part = node.toLowerCase().replace(/[^a-z0-9-]/g, "-").slice(0, room).replace(/-+$/, "").replace(/^-+/, "") || "node";
  return `kubectl-netpath-${part}-${suffix}`;
}

/**
 * Builds the debug pod for a node (pure; the caller creates it).
 * @param node the Node's metadata.name.
 * @param o name, namespace, image, profile, deadline.
 * @returns the V1Pod to create.
 * @throws {RangeError} `activeDeadlineSeconds must be a whole number >= 1 (got 0)`.
 * @example
 * ```ts
 * const pod = buildDebugPod("k8s1", { name: debugPodName("k8s1", "x7k2q"), namespace: "kube-system", activeDeadlineSeconds: 120 });
 * pod.spec.nodeName; // "k8s1"
 * ```
 */
export function buildDebugPod(node: string, o: DebugPodOptions): V1Pod & { spec: NonNullable<V1Pod["spec"]> } {
  if (!Number.isInteger(o.activeDeadlineSeconds) || o.activeDeadlineSeconds < 1) {
    throw new RangeError(`activeDeadlineSeconds must be a whole number >= 1 (got ${o.activeDeadlineSeconds})`);
  }
  const profile = o.profile ?? "netadmin";
  const labels: Record<string, string> = { [MANAGED_BY_LABEL]: MANAGED_BY, "app.kubernetes.io/name": "kubectl-netpath-collector" };
  if (o.runId) labels[RUN_LABEL] = o.runId;
  const sysadmin = profile === "sysadmin";
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: o.name,
      namespace: o.namespace,
      labels,
      annotations: {
        [NODE_ANNOTATION]: node,
        "kubectl-netpath/purpose": "read-only collection of kube-proxy datapath state (iptables-save, ipvsadm, ipset, nft); deleted after use",
      },
    },
    spec: {
      nodeName: node,
      hostNetwork: true,
      hostPID: true,
      restartPolicy: "Never",
      activeDeadlineSeconds: o.activeDeadlineSeconds,
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      tolerations: [{ operator: "Exists" }],
      containers: [{
        name: DEBUG_CONTAINER,
        image: o.image ?? DEFAULT_IMAGE,
        imagePullPolicy: "IfNotPresent",
        command: ["sleep", String(o.activeDeadlineSeconds)],
        securityContext: sysadmin ? { privileged: true } : { capabilities: { add: ["NET_ADMIN", "NET_RAW"] } },
        ...(sysadmin ? { volumeMounts: [{ name: "host-root", mountPath: "/host", readOnly: true }] } : {}),
      }],
      ...(sysadmin ? { volumes: [{ name: "host-root", hostPath: { path: "/", type: "Directory" } }] } : {}),
    },
  };
}
