/**
 * The debug pod that collects a node's datapath state when the node's kube-proxy pod cannot, built by a pure
 * function (as kubectl debug builds its node-debugging pod in staging/src/k8s.io/kubectl/pkg/cmd/debug/debug.go,
 * generateNodeDebugPod, and applies a profile in profiles.go), asking for no more than the collection needs:
 * - pinned to the node (`spec.nodeName`: no scheduler involved), `hostNetwork` (the node's network namespace is what
 *   kube-proxy programs), tolerating every taint (`operator: Exists`). No `hostPID`: no collected command looks at
 *   the host's processes (no /proc/1, no nsenter; /proc/sys/net and /sys/class/net are per network namespace);
 * - `restartPolicy: Never` and `activeDeadlineSeconds`, so the kubelet stops it even if kubectl-netpath is killed
 *   before it can delete the pod; the container itself only sleeps for that long and ends at once on SIGTERM, so a
 *   delete with the normal grace period ({@link TERMINATION_GRACE_SECONDS}) is quick;
 * - profile `netadmin` (default), least privilege: every capability dropped but NET_ADMIN (netlink reads of
 *   nf_tables, ipset and IPVS are CAP_NET_ADMIN-checked: nfnetlink_rcv, GENL_ADMIN_PERM) and NET_RAW (legacy
 *   iptables-save/ip6tables-save read the tables through getsockopt on a raw socket); no privilege escalation, the
 *   runtime's default seccomp profile, a read-only root filesystem with an emptyDir at /run (legacy iptables takes
 *   /run/xtables.lock), small resource requests and limits ({@link DEBUG_RESOURCES}). It cannot run as non-root:
 *   the netfilter reads check CAP_NET_ADMIN of a process whose capabilities come from uid 0 (a non-root uid keeps no
 *   added capability across exec without ambient capabilities, which Kubernetes does not set);
 * - profile `sysadmin` (on request): `privileged: true` and the host's root filesystem read-only at /host, so the
 *   host's own iptables-legacy-save can run through `chroot /host` (netshoot ships no iptables-legacy);
 * - label `app.kubernetes.io/managed-by=kubectl-netpath` (what `kubectl netpath cleanup` lists) and the run
 *   annotations (run id, creator, creation time, expiry: what `cleanup` requires before it deletes anything);
 * - no service account token, no service links: the pod needs no API access.
 *
 * Runtime-neutral: no I/O (`V1Pod` is a type-only import).
 * @module
 */
import type { V1Pod, V1ResourceRequirements, V1SecurityContext } from "@kubernetes/client-node";

/** Label every debug pod carries (and `cleanup` lists by). */
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
/** Value of {@link MANAGED_BY_LABEL}. */
export const MANAGED_BY = "kubectl-netpath";
/** Label with the id of the run that created the pod. */
export const RUN_LABEL = "kubectl-netpath/run";
/** Annotation with the node name (label values are limited to 63 characters, node names are not). */
export const NODE_ANNOTATION = "kubectl-netpath/node";
/** Run annotation: the id of the run that created the pod (the same as {@link RUN_LABEL}). */
export const RUN_ID_ANNOTATION = "kubectl-netpath/run-id";
/** Run annotation: who created the pod (`kubectl-netpath VERSION`, the kubeconfig context and user). */
export const CREATED_BY_ANNOTATION = "kubectl-netpath/created-by";
/** Run annotation: when the run created the pod (RFC 3339, UTC). */
export const CREATED_AT_ANNOTATION = "kubectl-netpath/created-at";
/**
 * Run annotation: when the pod is of no more use to its run (RFC 3339, UTC): creation + `activeDeadlineSeconds`,
 * which is itself the run's per-node `--timeout` plus a margin. After it, `cleanup` may delete the pod.
 */
export const EXPIRES_AT_ANNOTATION = "kubectl-netpath/expires-at";
/** The run annotations `cleanup` requires (with {@link MANAGED_BY_LABEL}) before it deletes a pod. */
export const RUN_ANNOTATIONS = [RUN_ID_ANNOTATION, CREATED_BY_ANNOTATION, CREATED_AT_ANNOTATION, EXPIRES_AT_ANNOTATION] as const;
/** Name of the debug pod's container. */
export const DEBUG_CONTAINER = "collector";
/**
 * Default image, pinned by digest: netshoot v0.13 (has iptables (nft), ipset, ipvsadm, nft, conntrack, curl). The
 * digest is the one public deployments pin for `nicolaka/netshoot:v0.13` (e.g. as `docker.io/nicolaka/netshoot:v0.13@sha256:a20c…`
 * in several repositories' defaults); the tag is informative, the runtime pulls by digest. `--image` overrides it.
 */
export const DEFAULT_IMAGE = "nicolaka/netshoot:v0.13@sha256:a20c2531bf35436ed3766cd6cfe89d352b050ccc4d7005ce6400adf97503da1b";
/** Seconds between SIGTERM and SIGKILL when the pod is deleted (the container ends at SIGTERM). */
export const TERMINATION_GRACE_SECONDS = 10;
/**
 * Requests and limits of the collector container. Idle it is `sh` and `sleep` (under 2 MB); at work, one tool at
 * a time, each single-threaded, holding a table in memory. Measured peak RSS on a node with 10,000 Services (issue
 * 12's test bed, `/usr/bin/time -f %M`): `iptables-nft-save` 202 MiB (26.6 MB printed: that test bed still wrote
 * kube-proxy's per-endpoint comments, which it leaves out at this size, so the real save is smaller:
 * bench/gen_iptables.ts), `iptables-legacy-save` 202 MiB, `iptables-legacy -t nat -S KUBE-SERVICES` 201 MiB (legacy loads the whole table blob), `iptables-nft -t nat -S
 * KUBE-SERVICES` 16 MiB, `nft -j list chain ip nat KUBE-SERVICES` 124 MiB; in nftables mode `nft list table ip
 * kube-proxy` 406 MiB (15.5 MB printed). The 512Mi limit is 2.5× the biggest of the iptables ones and above the
 * nftables listing up to ~8,800 Services with a quarter to spare (beyond, the limit is raised for that listing:
 * {@link nftListingMemoryMiB}); `nft -j list ruleset` of the iptables-nft tables of such a node (68 MB of
 * JSON, 1.44 GiB RSS) or `nft -j list table ip kube-proxy` in nftables mode (907 MiB) is beyond it, which is why
 * neither is run. A listing killed at the limit ends with exit 137; collect_node.ts then runs a second debug pod with
 * {@link retryMemoryMiB}, and a listing killed there too is the node's error, naming exit 137. The CPU limit of one
 * core never slows a single-threaded tool; the request is what the pod needs idle.
 */
export const DEBUG_RESOURCES: V1ResourceRequirements = {
  requests: { cpu: "100m", memory: "64Mi" },
  limits: { cpu: "1", memory: "512Mi" },
};
/** Where the emptyDir for legacy iptables' lock file (/run/xtables.lock) is mounted. */
export const RUN_VOLUME = { name: "run", mountPath: "/run" } as const;

/**
 * The `netadmin` container securityContext: every capability dropped but NET_ADMIN and NET_RAW, no privilege
 * escalation, RuntimeDefault seccomp, read-only root filesystem. `runAsNonRoot` is not set: see the module comment.
 */
export function netadminSecurityContext(): V1SecurityContext {
  return {
    capabilities: { drop: ["ALL"], add: ["NET_ADMIN", "NET_RAW"] },
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    seccompProfile: { type: "RuntimeDefault" },
  };
}

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
  /** Id of the run, for the {@link RUN_LABEL} label and the {@link RUN_ID_ANNOTATION} annotation. */
  runId: string;
  /** Who creates it, for {@link CREATED_BY_ANNOTATION}, e.g. `kubectl-netpath 0.9.0 (context prod, user alice)`. */
  createdBy: string;
  /** When the run creates it (epoch ms), for {@link CREATED_AT_ANNOTATION} and {@link EXPIRES_AT_ANNOTATION}. */
  createdAtMs: number;
  /**
   * The container's memory limit in MiB when the collection needs more than {@link DEBUG_RESOURCES}' 512Mi (see
   * {@link nftListingMemoryMiB}); smaller values are ignored.
   */
  memoryLimitMiB?: number;
}

/** Peak memory of `nft list table ip kube-proxy` per element of map service-ips, KiB, with a quarter to spare. */
const NFT_LISTING_KIB_PER_ELEMENT = 52;

/**
 * The memory (MiB) nft needs to list kube-proxy's nftables table as text, from the number of elements of its map
 * `service-ips` (about one per ServicePort): 64 MiB for the rest of the container plus 52 KiB per element. Measured
 * on the bench's 10,000-Service node (10,005 elements; nft 1.0.6, in a network namespace): 406 MiB peak RSS, 41.6 KiB
 * per element; 52 leaves a quarter to spare. From ~8,800 elements this exceeds the default 512Mi limit, at which the
 * listing would be OOM-killed (exit 137).
 * @param elements lines of `nft list map ip kube-proxy service-ips`.
 * @returns MiB, a whole number.
 */
export function nftListingMemoryMiB(elements: number): number {
  return 64 + Math.ceil((Math.max(0, elements) * NFT_LISTING_KIB_PER_ELEMENT) / 1024);
}

/** The most memory (MiB) a debug pod is given when a listing in a first one was killed at its limit. */
export const MAX_DEBUG_MEMORY_MIB = 8192;

/**
 * The memory limit (MiB) of a second debug pod, after a listing in the first was killed (exit 137: SIGKILL, which in
 * a container with a memory limit is the out-of-memory killer's) at `killedAtMiB`: twice that, or what nft's listing
 * needs ({@link nftListingMemoryMiB}) when the element count of map service-ips is known and asks for more.
 * @param killedAtMiB the first pod's memory limit, MiB (512 for {@link DEBUG_RESOURCES}).
 * @param elements lines of `nft list map ip kube-proxy service-ips`, when the first pod counted them.
 * @returns MiB, a whole number; undefined when that is more than {@link MAX_DEBUG_MEMORY_MIB} (no retry is worth it).
 */
export function retryMemoryMiB(killedAtMiB: number, elements?: number): number | undefined {
  const need = Math.max(2 * killedAtMiB, elements !== undefined && Number.isInteger(elements) ? nftListingMemoryMiB(elements) : 0);
  return need <= MAX_DEBUG_MEMORY_MIB ? need : undefined;
}

/** The memory limit of {@link DEBUG_RESOURCES}, MiB. */
export const DEFAULT_DEBUG_MEMORY_MIB = 512;

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

/** An epoch-ms time as RFC 3339 UTC to the second, as Kubernetes writes timestamps. */
function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** {@link DEBUG_RESOURCES}, with the memory limit raised to `memoryLimitMiB` when that is more than 512Mi. */
function resourcesFor(memoryLimitMiB: number | undefined): V1ResourceRequirements {
  const r = structuredClone(DEBUG_RESOURCES);
  if (memoryLimitMiB !== undefined && Number.isInteger(memoryLimitMiB) && memoryLimitMiB > DEFAULT_DEBUG_MEMORY_MIB) r.limits = { ...r.limits, memory: `${memoryLimitMiB}Mi` };
  return r;
}

/**
 * Builds the debug pod for a node (pure; the caller creates it).
 * @param node the Node's metadata.name.
 * @param o name, namespace, image, profile, deadline, and the run (id, creator, creation time).
 * @returns the V1Pod to create.
 * @throws {RangeError} `activeDeadlineSeconds must be a whole number >= 1 (got 0)`.
 * @example
 * ```ts
 * const pod = buildDebugPod("k8s1", { name: debugPodName("k8s1", "x7k2q"), namespace: "kube-system", activeDeadlineSeconds: 120,
 *   runId: "m3x1-ab12c", createdBy: "kubectl-netpath 0.9.0", createdAtMs: Date.now() });
 * pod.spec.nodeName; // "k8s1"
 * ```
 */
export function buildDebugPod(node: string, o: DebugPodOptions): V1Pod & { spec: NonNullable<V1Pod["spec"]> } {
  if (!Number.isInteger(o.activeDeadlineSeconds) || o.activeDeadlineSeconds < 1) {
    throw new RangeError(`activeDeadlineSeconds must be a whole number >= 1 (got ${o.activeDeadlineSeconds})`);
  }
  const profile = o.profile ?? "netadmin";
  const labels: Record<string, string> = { [MANAGED_BY_LABEL]: MANAGED_BY, "app.kubernetes.io/name": "kubectl-netpath-collector", [RUN_LABEL]: o.runId };
  const sysadmin = profile === "sysadmin";
  const volumes = sysadmin ? [{ name: "host-root", hostPath: { path: "/", type: "Directory" } }] : [{ name: RUN_VOLUME.name, emptyDir: { sizeLimit: "1Mi" } }];
  const volumeMounts = sysadmin ? [{ name: "host-root", mountPath: "/host", readOnly: true }] : [{ name: RUN_VOLUME.name, mountPath: RUN_VOLUME.mountPath }];
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: o.name,
      namespace: o.namespace,
      labels,
      annotations: {
        [NODE_ANNOTATION]: node,
        [RUN_ID_ANNOTATION]: o.runId,
        [CREATED_BY_ANNOTATION]: o.createdBy,
        [CREATED_AT_ANNOTATION]: rfc3339(o.createdAtMs),
        [EXPIRES_AT_ANNOTATION]: rfc3339(o.createdAtMs + o.activeDeadlineSeconds * 1000),
        "kubectl-netpath/purpose": "read-only collection of kube-proxy datapath state (iptables-save, ipvsadm, ipset, nft); deleted after use",
      },
    },
    spec: {
      nodeName: node,
      hostNetwork: true,
      restartPolicy: "Never",
      activeDeadlineSeconds: o.activeDeadlineSeconds,
      terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      tolerations: [{ operator: "Exists" }],
      containers: [{
        name: DEBUG_CONTAINER,
        image: o.image ?? DEFAULT_IMAGE,
        imagePullPolicy: "IfNotPresent",
        // PID 1 ignores SIGTERM unless it traps it: this sleep ends at once when the pod is deleted.
        command: ["sh", "-c", `trap 'exit 0' TERM; sleep ${o.activeDeadlineSeconds} & wait`],
        securityContext: sysadmin ? { privileged: true } : netadminSecurityContext(),
        resources: resourcesFor(o.memoryLimitMiB),
        volumeMounts,
      }],
      volumes,
    },
  };
}
