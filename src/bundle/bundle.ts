/**
 * The Bundle: everything one question needs, gathered from a cluster (live) or read from disk (offline).
 * It is the only seam between the cluster and the analyses: live collection produces one, `capture` writes one,
 * `--from` reads one, and every analysis is a pure function of it. Format: docs/bundle.md.
 *
 * Node state is kept as the raw text each collection command printed (with its exit code and stderr), never as
 * parsed structures, so that parsers can improve and old bundles still work.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type {
  ConfigMap,
  CSIDriver,
  CSINode,
  CSIStorageCapacity,
  DaemonSet,
  Namespace,
  EndpointSlice,
  KubeEvent,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  ResourceClaim,
  Service,
  StorageClass,
  VolumeAttributesClass,
  PodGroup,
  Workload,
} from "../model/k8s.ts";

/** The `format` marker every bundle file carries. */
export const BUNDLE_FORMAT = "kubectl-netpath/bundle";
/**
 * The bundle format version this code writes; readers accept versions <= this. Version 2 added {@link BUNDLE_END}:
 * a one-file bundle of version 2 or later without it was cut.
 */
export const BUNDLE_VERSION = 2;
/**
 * The value of the last key, `end`, of a one-file bundle of version 2 or later: written after everything else, so
 * that a file cut short (a copy or transfer that stopped) is told from a whole one. YAML has no end of its own: a
 * YAML bundle cut at a line boundary still parses, with fewer objects or a shorter dump (JSON's cut is a syntax error).
 */
export const BUNDLE_END = "kubectl-netpath/bundle end";

/**
 * Names of the per-node collection sections and the command each holds.
 * - `iptables-save`: `iptables-save` (all tables) from the backend kube-proxy uses (nft or legacy).
 * - `ip6tables-save`: the same for IPv6.
 * - `iptables-list`: `iptables -t nat -nL` / `-nvL` listing text (what many write-ups show instead of a save).
 * - `ipvsadm`: `ipvsadm -Ln --exact` (with or without `--stats` / `--rate`).
 * - `ipset`: `ipset list`.
 * - `nft-json`: `nft -j list ruleset`; `nft-text`: `nft list ruleset`, or what live collection lists in nftables mode:
 *   `nft list table ip kube-proxy` and `… ip6 kube-proxy` (text: less memory on the node than `nft -j`).
 * - `proxy-mode`: body of `http://127.0.0.1:10249/proxyMode` (`iptables`, `ipvs`, `nftables`).
 * - `iptables-backend`: the backend detected as iptables-wrappers does (`nft` or `legacy`).
 * - `ip-addr`: `ip -o addr show`, every address on every interface of the node (ExternalIP, secondary IPs, the
 *   kube-ipvs0 dummy addresses, load-balancer IPs bound locally).
 * - `ip-route-local`: `ip route show table local`, the routes that decide `-m addrtype --dst-type LOCAL` (including
 *   prefixes routed locally, e.g. AnyIP `local 203.0.113.0/24 dev lo`).
 * - `sysctls`: `NAME=VALUE` lines: net.bridge.bridge-nf-call-iptables (and ip6; absent when br_netfilter is not
 *   loaded), net.netfilter.nf_conntrack_tcp_be_liberal, net.ipv4.vs.conntrack, net.ipv4.conf.*.route_localnet, and
 *   `brport.BRIDGE.PORT.hairpin_mode` for every bridge port.
 * - `collection-scope`: what a targeted collection (one Service's question, src/kube/targeted_script.ts) kept:
 *   `scope=service`, `mode=` and `mode-source=` (the proxy mode followed and how it was learnt), `keys=` (the
 *   addresses and ports whose rules were kept), and `skipped=SECTION: why` lines. Absent: whole tables were collected.
 */
export const SECTION_NAMES = [
  "iptables-save",
  "ip6tables-save",
  "iptables-list",
  "ipvsadm",
  "ipset",
  "nft-json",
  "nft-text",
  "proxy-mode",
  "iptables-backend",
  "ip-addr",
  "ip-route-local",
  "sysctls",
  "collection-scope",
  "cilium-services",
] as const;

/** One of {@link SECTION_NAMES}. */
export type SectionName = typeof SECTION_NAMES[number];

/**
 * What one collection command printed on a node.
 * `exitCode` is `undefined` when unknown (a file read from disk), `null` when the stream ended before the command
 * reported its status (a truncated exec); `truncated` says the section end marker never arrived.
 */
export interface CommandOutput {
  command?: string;
  stdout: string;
  stderr?: string;
  exitCode?: number | null;
  truncated?: boolean;
  /** How long the section took on the node (ms, 10 ms resolution: /proc/uptime), when the collection script said. */
  durationMs?: number;
  /**
   * Set when the node stopped the section at its time limit (`--section-timeout`, in seconds); `truncated` is then
   * true too: what it printed is only a part.
   */
  timedOutAfterSeconds?: number;
}

/**
 * Why a section cannot be read as whole, in words for a report line: `timed out on the node after 45 s
 * (--section-timeout)` or `was cut off (stream ended early)`. @param s a section with `truncated` set.
 */
export function cutReason(s: CommandOutput): string {
  return s.timedOutAfterSeconds !== undefined
    ? `timed out on the node after ${s.timedOutAfterSeconds} s (--section-timeout; raise it, and --timeout, for this node)`
    : "was cut off (stream ended early)";
}

/**
 * A section's exit status in words for a report line: `exit 2`; `exit 137` (128 + SIGKILL) says what kills a
 * listing on a big node: `exit 137: killed (SIGKILL), most often by the out-of-memory killer at the memory limit of
 * the container it ran in`. @param code the exit status.
 */
export function exitWords(code: number | null | undefined): string {
  if (code === 137) return "exit 137: killed (SIGKILL), most often by the out-of-memory killer at the memory limit of the container it ran in";
  return `exit ${code ?? "?"}`;
}

/**
 * Whether a section's command failed (a non-zero exit status; absent when unknown, e.g. a file from disk, counts as
 * success): whatever it printed is not analysed as the node's state, output or not. A listing killed by a signal
 * (above 128: 137 SIGKILL, in a pod most often the out-of-memory killer) stops at an unknown point; a chain listing
 * that failed leaves its chain out. @param s the section.
 */
export function failedSection(s: CommandOutput): boolean {
  return (s.exitCode ?? 0) !== 0;
}

/** A section's stderr on one line (its lines joined by "; "), for a report's problem line; "nothing on stderr" when empty. */
export function stderrLine(s: CommandOutput): string {
  return s.stderr?.trim().replace(/\s*\n\s*/g, "; ") || "nothing on stderr";
}

/** How a node's state was obtained. */
export interface NodeSource {
  kind: "kube-proxy-pod" | "debug-pod" | "host-chroot" | "file" | "none";
  pod?: string;
  namespace?: string;
  image?: string;
  /** Free text: where a file came from (e.g. "seed 001: sudo iptables-save on k8s1"). */
  detail?: string;
}

/** Everything collected on one node. */
export interface NodeCapture {
  /** The Node's metadata.name. */
  name: string;
  source?: NodeSource;
  sections: Partial<Record<SectionName, CommandOutput>>;
  /** Set when collection on this node failed as a whole (unreachable, timed out, 403): the reason, for the report. */
  error?: string;
}

/** The Kubernetes objects of a bundle (a live gather keeps only the fields of src/bundle/allow_list.ts). Every list may be empty. */
export interface BundleObjects {
  services: Service[];
  endpointSlices: EndpointSlice[];
  pods: Pod[];
  nodes: Node[];
  configMaps: ConfigMap[];
  persistentVolumeClaims: PersistentVolumeClaim[];
  persistentVolumes: PersistentVolume[];
  storageClasses: StorageClass[];
  events: KubeEvent[];
  /** The kube-system/kube-proxy DaemonSet (containers' command/args/volumeMounts and ConfigMap volumes only). */
  daemonSets: DaemonSet[];
  /** Namespaces (name and labels): the namespaceSelector of pod affinity terms (src/pending/filters/pod_affinity.ts). */
  namespaces: Namespace[];
  /** DRA ResourceClaims of the pending pod (src/pending/filters/dra.ts). */
  resourceClaims: ResourceClaim[];
  /** CSINodes: per-node CSI attach limits (src/pending/filters/volume_limits.ts). */
  csiNodes: CSINode[];
  /** CSIDrivers (storageCapacity) and CSIStorageCapacities: VolumeBinding's capacity check (src/pending/volume_checks.ts). */
  csiDrivers: CSIDriver[];
  csiStorageCapacities: CSIStorageCapacity[];
  /** VolumeAttributesClasses named by the claims (name and driver only). */
  volumeAttributesClasses: VolumeAttributesClass[];
  /** Workloads (scheduling.k8s.io) the pods' `spec.workloadRef` names: their pod groups' policies (src/pending/gang.ts). */
  workloads: Workload[];
  /** PodGroups (scheduling.k8s.io, v1.36+) the pods' `spec.schedulingGroup` names: their policies and scheduling condition (src/pending/pod_group.ts). */
  podGroups: PodGroup[];
}

/** How and when a bundle was made. */
export interface CaptureInfo {
  /** ISO 8601 time of capture, when known. */
  capturedAt?: string;
  /** kubeconfig context name, for live captures. */
  context?: string;
  /** Tool name and version that wrote the bundle. */
  tool?: string;
  /** The command line that produced it, or a description for hand-built bundles. */
  command?: string;
  /** Cluster pod CIDR(s) when known from outside the rules (kube-proxy ConfigMap `clusterCIDR`, or documentation). */
  clusterCIDRs?: string[];
  /** Free-text provenance notes (e.g. which seed an example was built from). */
  notes?: string[];
}

/**
 * The warning a live `--why-pending` collection leaves in {@link Bundle.warnings} when RBAC forbids listing the
 * cluster's pods (src/kube/gather_api.ts gatherPendingObjects). The bundle then holds no pod bound to a node, so the
 * checks that count them (NodeResourcesFit, NodePorts, PodTopologySpread, InterPodAffinity) see empty nodes; a bundle
 * written by `capture` keeps the warning, so `--from` answers say it too (src/pending/explain.ts).
 */
export const PODS_NOT_LISTED_WARNING =
  `list pods (all namespaces) is forbidden (403): RBAC must allow "list pods" cluster-wide for the resource, host-port, topology spread and pod affinity checks; answered without them`;

/** A complete bundle. */
export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  version: number;
  capture: CaptureInfo;
  objects: BundleObjects;
  nodes: NodeCapture[];
  /** Problems found while reading the bundle (unknown keys, unreadable files): reported, never fatal. */
  warnings: string[];
}

/** A new, empty object set. */
export function emptyObjects(): BundleObjects {
  return {
    services: [],
    endpointSlices: [],
    pods: [],
    nodes: [],
    configMaps: [],
    persistentVolumeClaims: [],
    persistentVolumes: [],
    storageClasses: [],
    events: [],
    daemonSets: [],
    namespaces: [],
    resourceClaims: [],
    csiNodes: [],
    csiDrivers: [],
    csiStorageCapacities: [],
    volumeAttributesClasses: [],
    workloads: [],
    podGroups: [],
  };
}

/**
 * A new, empty bundle.
 * @param capture how it was made.
 * @returns a Bundle with no objects and no nodes.
 */
export function emptyBundle(capture: CaptureInfo = {}): Bundle {
  return { format: BUNDLE_FORMAT, version: BUNDLE_VERSION, capture, objects: emptyObjects(), nodes: [], warnings: [] };
}
