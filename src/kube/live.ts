/**
 * Edge: gathers, from a live cluster, the Bundle a run analyses (the same Bundle `capture` writes), in kubectl's
 * three phases: complete (kubeconfig, context, namespace, REST client), validate (flag values), run (API reads,
 * permission checks, node collection fanned out with bounded concurrency and a per-node time limit).
 *
 * A node that fails is reported with its reason (`NodeCapture.error`) and the others still answer. Debug pods are
 * deleted on every exit path, Ctrl-C included (pod_lifecycle.ts). Progress goes to stderr, and only when stderr is a
 * terminal. client-node is loaded lazily by the modules this one imports dynamically: the offline path never
 * loads it.
 * @module
 */
import { setMaxListeners } from "node:events";
import { stringify as toYaml } from "yaml";
import type { NodeCapture } from "../bundle/bundle.ts";
import { emptyBundle } from "../bundle/bundle.ts";
import { allowListObjects } from "../bundle/allow_list.ts";
import type { Node } from "../model/k8s.ts";
import { noAddressOfFamily, podAddressFor, servicePacketsFromPod } from "../service/from_pod.ts";
import { VERSION } from "../model/version.ts";
import { collectionChecks, missingPermissions, reviewAccess } from "./access_review.ts";
import { activeDeadlineFor, type CollectAccess, type CollectVia, COLLECT_VIA, collectNode } from "./collect_node.ts";
import { serviceTargetKeys } from "./target_keys.ts";
import type { TargetKeys } from "./targeted_script.ts";
import { buildDebugPod, DEFAULT_IMAGE, debugPodName, type DebugProfile } from "./debug_pod.ts";
import { FlagValueError, parseCount, parseDurationMs } from "./duration.ts";
import { PermissionDeniedError } from "./errors.ts";
import { gatherPendingObjects, gatherServiceObjects } from "./gather_api.ts";
import { loadKubeconfig, type LoadedKubeconfig } from "./kubeconfig.ts";
import { mapLimit } from "./pool.ts";
import { nodeProgress } from "./progress.ts";
import { installInterruptCleanup, leftPodsMessage, PodRegistry } from "./pod_lifecycle.ts";
import { interruption, InterruptedError } from "./interrupt.ts";
import type { ClusterOptions, GatherHooks, GatherIo, GatherRequest, GatherResult, LiveOptions } from "./options.ts";
import { KubeRest } from "./rest.ts";

/** Default namespace of the debug pods (`--debug-namespace`): kube-system, where kube-proxy runs and privileged pods belong. */
export const DEBUG_NAMESPACE = "kube-system";
/** Namespace of the kube-proxy pods the collection execs into first. */
const KUBE_PROXY_NAMESPACE = "kube-system";

/** Flag values of a live run, validated. */
export interface LiveSettings {
  requestTimeoutMs: number;
  timeoutMs: number;
  /** Time limit of each section on the node (ms, 0 = none). */
  sectionTimeoutMs: number;
  parallel: number;
  image: string;
  profile: DebugProfile;
  /** Namespace the debug pods are created in. */
  debugNamespace: string;
  exec: boolean;
  dryRun: boolean;
  /** How the dry run prints the debug pods (GatherRequest dryRunFormat). */
  dryRunFormat: "yaml" | "json";
  /** Where nodes are collected (`--via`). */
  via: CollectVia;
  /** Set when `--image` is not pinned by digest: the warning a run that may create debug pods gives. */
  imageWarning?: string;
}

/**
 * An image reference pinned by digest: `NAME[:TAG]@ALGORITHM:HEX` (distribution/reference's grammar, reference.go:
 * `digest := algorithm ":" encoded`, e.g. `@sha256:` and 64 hex digits). The runtime then pulls exactly that content;
 * a tag alone is resolved at each pull and can be moved.
 */
const PINNED_BY_DIGEST = /@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;

/**
 * The warning for an `--image` without a digest (kubectl-netpath pins the pods it creates by digest), or undefined.
 * Not a refusal: the flag exists to let users pick their image.
 * @param image the `--image` value.
 */
export function unpinnedImageWarning(image: string): string | undefined {
  if (PINNED_BY_DIGEST.test(image)) return undefined;
  return `--image ${image} is not pinned by digest: its tag can be moved to other content, which the debug pods would then run with NET_ADMIN (or SYS_ADMIN) on each node; pin it as ${image.replace(/@.*$/, "")}@sha256:<digest> (the digest as \`crane digest ${image}\` or \`docker buildx imagetools inspect ${image}\` prints it)`;
}

/**
 * Validates the live flags (pure).
 * @throws {FlagValueError} for a malformed duration or count, a `--debug-namespace` that is not a namespace name
 *   (an RFC 1123 DNS label, as kube-apiserver's ValidateNamespaceName), or a `--via` that is none of
 *   {@link COLLECT_VIA}, naming the flag.
 */
export function liveSettings(o: LiveOptions): LiveSettings {
  const profile = o.profile ?? "netadmin";
  const via = o.via ?? "auto";
  if (!(COLLECT_VIA as readonly string[]).includes(via)) {
    throw new FlagValueError(`--via ${JSON.stringify(via)}: want one of ${COLLECT_VIA.join(", ")}`);
  }
  const debugNamespace = o.debugNamespace ?? DEBUG_NAMESPACE;
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(debugNamespace)) {
    throw new FlagValueError(`--debug-namespace ${JSON.stringify(debugNamespace)}: want a namespace name: at most 63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit`);
  }
  const timeoutMs = parseDurationMs("--timeout", o.timeout ?? "60s");
  return {
    requestTimeoutMs: parseDurationMs("--request-timeout", o.requestTimeout ?? "30s"),
    timeoutMs,
    // 3/4 of the node's time by default: a section that hangs leaves the others time to run
    sectionTimeoutMs: o.sectionTimeout !== undefined ? parseDurationMs("--section-timeout", o.sectionTimeout) : Math.floor(timeoutMs * 3 / 4),
    parallel: parseCount("--parallel", o.parallel ?? "8"),
    image: o.image ?? DEFAULT_IMAGE,
    profile: profile === "sysadmin" ? "sysadmin" : "netadmin",
    debugNamespace,
    exec: o.exec !== false,
    dryRun: o.dryRun === true,
    dryRunFormat: o.dryRunFormat === "json" ? "json" : "yaml",
    via: via as CollectVia,
    ...(o.image !== undefined && unpinnedImageWarning(o.image) ? { imageWarning: unpinnedImageWarning(o.image)! } : {}),
  };
}

/** A connection to one cluster: kubeconfig and REST client. */
export interface Cluster {
  config: LoadedKubeconfig;
  rest: KubeRest;
}

/**
 * Complete phase: loads the kubeconfig (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`, in-cluster; `--context`)
 * and makes the REST client.
 * @throws {KubeconfigError} when no usable kubeconfig/context is found.
 */
export async function openCluster(o: ClusterOptions, io: Pick<GatherIo, "env" | "cwd">, requestTimeoutMs: number): Promise<Cluster> {
  const config = await loadKubeconfig({
    env: io.env,
    cwd: io.cwd,
    ...(o.kubeconfig !== undefined ? { kubeconfig: o.kubeconfig } : {}),
    ...(o.context !== undefined ? { context: o.context } : {}),
  });
  const rest = new KubeRest(config.kc, {
    requestTimeoutMs,
    context: config.context,
    ...(config.user ? { user: config.user } : {}),
    // messages that suggest a kubectl command repeat it, or kubectl would read another kubeconfig
    ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
  });
  return { config, rest };
}

function randomSuffix(): string {
  const a = "abcdefghijklmnopqrstuvwxyz0123456789";
  let s = "";
  for (let i = 0; i < 5; i++) s += a[Math.floor(Math.random() * a.length)];
  return s;
}

function commandLine(o: GatherRequest, namespace: string): string {
  const words = ["kubectl", "netpath", `${o.target.kind === "service" ? "svc" : o.target.kind}/${o.target.name}`, "-n", namespace];
  for (const n of o.nodes ?? []) words.push("--node", n);
  if (o.allNodes) words.push("--all-nodes");
  if (o.fromPod) words.push("--from-pod", o.fromPod);
  if (o.exec === false) words.push("--no-exec");
  if (o.via !== undefined && o.via !== "auto") words.push("--via", o.via);
  return words.join(" ");
}

/**
 * Collects the nodes of a run: permission check, then one collection per node with at most `parallel` at once.
 * @param service the keys of a targeted collection (one Service's rules); absent: whole tables.
 * @param captured called with each node's capture as its collection ends (before the others may have).
 * @returns one NodeCapture per node (failed ones carry `error`), warnings, and the debug pods that could not be
 *   deleted (`namespace/name`; a warning says why and how to remove them).
 * @throws {PermissionDeniedError} when exec is denied outright (nothing could be collected anywhere).
 */
export async function collectNodes(
  cluster: Cluster,
  nodes: Node[],
  s: LiveSettings,
  io: GatherIo,
  service?: TargetKeys,
  captured?: (capture: NodeCapture) => void,
): Promise<{ captures: NodeCapture[]; warnings: string[]; leftBehind: string[] }> {
  const { rest, config } = cluster;
  // --via kube-proxy creates no pod: only exec into the kube-proxy pods' namespace is asked about
  const execNamespace = s.via === "kube-proxy" ? KUBE_PROXY_NAMESPACE : s.debugNamespace;
  const answers = await reviewAccess(rest, collectionChecks(execNamespace, s.via !== "kube-proxy"));
  const find = (verb: string, resource: string) => answers.find((a) => a.verb === verb && a.resource === resource)?.allowed;
  const and = (a: boolean | undefined, b: boolean | undefined) => (a === false || b === false ? false : a === undefined || b === undefined ? undefined : true);
  const access: CollectAccess = {
    exec: and(find("get", "pods/exec"), find("create", "pods/exec")),
    // a debug pod is created, then watched (and read) until it runs: without watch/get it would be made for nothing
    createPods: and(find("create", "pods"), and(find("watch", "pods"), find("get", "pods"))),
    deletePods: find("delete", "pods"),
    missing: `RBAC must grant ${missingPermissions(answers)}`,
  };
  if (access.exec === false) {
    const denied = answers.filter((a) => a.resource === "pods/exec" && a.allowed === false).map((a) => `"${a.verb}"`).join(" and ");
    throw new PermissionDeniedError(
      `not allowed to exec into pods in namespace "${execNamespace}": RBAC must grant verb ${denied} on "pods/exec" there ` +
        `(an exec over WebSocket is authorized as "get", and from Kubernetes v1.35 also as "create") to collect the nodes' rules; ` +
        `or run with --no-exec to analyse from the API alone`,
    );
  }
  const registry = new PodRegistry();
  const abort = new AbortController();
  // Each node in flight listens to the run's signal (its exec, its pod's watch, its requests): with --parallel 8 or
  // more that is over Node's default of 10 listeners, which is not a leak (they are removed as each settles).
  setMaxListeners(4 * s.parallel + 16, abort.signal);
  const uninstall = installInterruptCleanup(registry, rest, abort, io.stderr);
  const runId = `${Date.now().toString(36)}-${randomSuffix()}`;
  const createdBy = creator(cluster);
  const tracker = nodeProgress(nodes.length, io.stderr, io.stderrIsTTY);
  const warnings: string[] = [];
  const leftBehind: string[] = [];
  try {
    const results = await mapLimit(nodes, s.parallel, async (node: Node) => {
      tracker.started(node.metadata.name);
      const r = await collectNode({
        rest,
        kc: config.kc,
        namespace: KUBE_PROXY_NAMESPACE,
        debugNamespace: s.debugNamespace,
        image: s.image,
        profile: s.profile,
        timeoutMs: s.timeoutMs,
        sectionTimeoutMs: s.sectionTimeoutMs,
        runId,
        createdBy,
        registry,
        signal: abort.signal,
        access,
        via: s.via,
        progress: tracker.step,
        suffix: randomSuffix,
        ...(service ? { service } : {}),
      }, node);
      tracker.ended(node.metadata.name, r.capture.error !== undefined);
      captured?.(r.capture);
      return r;
    });
    // interrupted as the last node ended: no report (the signal handler deletes the pods and exits 130/143)
    if (interruption()) throw new InterruptedError("interrupted");
    for (const r of results) warnings.push(...r.warnings);
    return { captures: results.map((r) => r.capture), warnings, leftBehind };
  } finally {
    // Every exit path: pods left by a failure in flight are deleted here (normally each node deleted its own). After
    // SIGINT/SIGTERM the signal handler deletes them, says so, and exits (pod_lifecycle.ts installInterruptCleanup).
    const failed = interruption() ? [] : await registry.deleteAll(rest);
    if (failed.length > 0) warnings.push(leftPodsMessage(failed));
    leftBehind.push(...failed.map((f) => `${f.namespace}/${f.name}`));
    uninstall();
  }
}

/**
 * The sentence for a run that left debug pods behind (`namespace/name`; its warning says why and how to remove them):
 * the run fails (exit 1) even when its answer is whole, since it left state in the cluster.
 */
export function leftBehindMessage(pods: readonly string[]): string {
  const one = pods.length === 1;
  return `the run left debug pod${one ? "" : "s"} ${pods.join(", ")} in the cluster (could not delete ${one ? "it" : "them"}: see the warning above)`;
}

/** `kubectl-netpath VERSION (context C, user U)`: the `created-by` annotation of a run's debug pods. */
function creator(cluster: Cluster): string {
  return `kubectl-netpath ${VERSION} (context ${cluster.config.context}${cluster.config.user ? `, user ${cluster.config.user}` : ""})`;
}

/**
 * The debug pods a run would create, as YAML (`--dry-run`): exactly what {@link collectNodes} would send, with
 * `xxxxx` for the random name suffix and `dry-run` for the run id.
 * @param nodes node names.
 * @param s the run's settings (image, profile, debug namespace, timeout).
 * @param createdBy the `created-by` annotation.
 * @param nowMs creation time (epoch ms) for the time annotations.
 */
export function dryRunManifests(nodes: string[], s: LiveSettings, createdBy = `kubectl-netpath ${VERSION}`, nowMs = Date.now()): string {
  const pods = nodes.map((n) =>
    buildDebugPod(n, {
      name: debugPodName(n, "xxxxx"),
      namespace: s.debugNamespace,
      image: s.image,
      profile: s.profile,
      activeDeadlineSeconds: activeDeadlineFor(s.timeoutMs),
      runId: "dry-run",
      createdBy,
      createdAtMs: nowMs,
    })
  );
  // -o json: one Pod, or a v1 List of them, as kubectl prints several objects
  if (s.dryRunFormat === "json") return JSON.stringify(pods.length === 1 ? pods[0] : { apiVersion: "v1", kind: "List", items: pods }, null, 2) + "\n";
  return pods
    .map((p) => toYaml(p, { lineWidth: 0 }))
    .join("---\n");
}

/**
 * Gathers a Bundle for a request from an open cluster (the shared core of a live run and `capture`).
 * With `fromPod`, the packet's source is the pod's IP (without a packet in the request, every destination of the
 * Service: each ServicePort at each ClusterIP of a family the pod has) and the pod's node is collected, with the
 * destination's node when `--dest` is another node's address (gather_api.ts destinationNode).
 * @param cluster the open cluster.
 * @param request the question and collection options.
 * @param s live settings, validated from the request by {@link liveSettings}.
 * @param io streams (dry-run manifests go to stdout, progress to stderr).
 * @param hooks {@link GatherHooks}: `nodeCaptured` as each node's collection ends.
 * @returns the Bundle and the question as completed (namespace, packets, nodes).
 * @throws {NotFoundError} / {KubeApiError} / {PermissionDeniedError} with a message for humans.
 */
export async function gatherWith(cluster: Cluster, request: GatherRequest, s: LiveSettings, io: GatherIo, hooks: GatherHooks = {}): Promise<GatherResult> {
  const namespace = request.namespace ?? cluster.config.namespace;
  const bundle = emptyBundle({
    capturedAt: new Date().toISOString(),
    context: cluster.config.context,
    tool: `kubectl-netpath ${VERSION}`,
    command: commandLine(request, namespace),
  });
  const result: GatherResult = { bundle, namespace };
  if (request.packet) result.packets = [{ ...request.packet }];
  if (request.nodes) result.nodes = request.nodes;
  if (request.target.kind !== "service") {
    const found = await gatherPendingObjects(cluster.rest, request.target.kind, namespace, request.target.name);
    bundle.objects = allowListObjects(found.objects);
    bundle.warnings.push(...found.warnings);
    return result;
  }
  const found = await gatherServiceObjects(cluster.rest, {
    namespace,
    service: request.target.name,
    ...(request.nodes ? { nodes: request.nodes } : {}),
    ...(request.allNodes ? { allNodes: true } : {}),
    ...(request.fromPod !== undefined ? { fromPod: request.fromPod } : {}),
    ...(request.packet ? { dest: request.packet.destination } : {}),
    ...(!s.exec || s.dryRun ? { apiOnly: true } : {}),
  });
  // What a bundle keeps (and the analyses read): the allow-list of each kind, credentials redacted.
  bundle.objects = allowListObjects(found.objects);
  bundle.warnings.push(...found.warnings);
  // a debug pod may run the image (--via kube-proxy creates none, --no-exec collects nothing): a warning of the run
  // (the dry run prints it itself, as it returns before the bundle's warnings are printed)
  const imageWarning = s.imageWarning !== undefined && s.exec && s.via !== "kube-proxy" ? s.imageWarning : undefined;
  if (imageWarning && !s.dryRun) bundle.warnings.push(imageWarning);
  if (found.fromPod) {
    const svc = found.objects.services[0]!;
    // the pod's address of the destination's family (a dual-stack pod has one of each)
    const { name: podName, ips } = found.fromPod;
    const sourceFor = (destination: string) => podAddressFor(ips, destination) ?? (() => { throw noAddressOfFamily(podName, ips, destination); })();
    // without --dest: every destination of the Service the pod can send to
    if (result.packets) for (const q of result.packets) q.source = sourceFor(q.destination);
    else {
      const chosen = servicePacketsFromPod(svc, ips, podName);
      if (chosen.length > 0) result.packets = chosen;
    }
    if (s.exec && !s.dryRun) result.nodes = [...found.nodes];
  }
  const nodeObjs = found.nodes.map((n) => found.objects.nodes.find((x) => x.metadata.name === n)).filter((n): n is Node => n !== undefined);
  if (!s.exec || s.dryRun) {
    if (s.dryRun && !s.exec) {
      io.stderr("dry run: nothing is created; with --no-exec kubectl-netpath reads the API alone and creates no pod\n");
    } else if (s.dryRun && s.via === "kube-proxy") {
      io.stderr(`dry run: nothing is created; with --via kube-proxy kubectl-netpath only execs into each node's kube-proxy pod in ${KUBE_PROXY_NAMESPACE} and creates no pod\n`);
    } else if (s.dryRun) {
      if (imageWarning) io.stderr(`warning: ${imageWarning}\n`);
      const how = s.via === "debug-pod" ? "create this debug pod" : "exec into its kube-proxy pod, or else create this debug pod";
      io.stderr(`dry run: nothing is created; for each node kubectl-netpath would ${how} in ${s.debugNamespace}:\n`);
      io.stdout(dryRunManifests(found.nodes, s, creator(cluster)));
    }
    // No node state: the report is the API's side only (and says so).
    return result;
  }
  const keys = request.collect === "node" ? undefined : serviceTargetKeys(found.objects, namespace, request.target.name, result.packets);
  const captured = hooks.nodeCaptured ? (c: NodeCapture) => hooks.nodeCaptured!(c, result, nodeObjs.length) : undefined;
  const { captures, warnings, leftBehind } = await collectNodes(cluster, nodeObjs, s, io, keys, captured);
  bundle.nodes = captures;
  bundle.warnings.push(...warnings);
  if (leftBehind.length > 0) result.leftBehind = leftBehind;
  return result;
}

/**
 * Gathers the Bundle a live run analyses: opens the cluster of the request's kubeconfig/context, then
 * {@link gatherWith}. This is the library entry of live collection (exported by mod.ts).
 * @param request the question and collection options.
 * @param io streams and environment.
 * @param hooks {@link GatherHooks}.
 * @returns the Bundle and the question as completed (namespace, packet, nodes).
 * @throws {KubeconfigError} / {ApiUnreachableError} / {KubeApiError} / {NotFoundError} / {PermissionDeniedError} /
 *   {FlagValueError}, each with a message for humans.
 * @example
 * ```ts
 * import { gatherBundle, explainService } from "./mod.ts";
 * const { bundle, namespace } = await gatherBundle({ target: { kind: "service", name: "web" }, namespace: "shop" }, io);
 * const report = explainService(bundle, namespace, "web");
 * ```
 */
export async function gatherBundle(request: GatherRequest, io: GatherIo, hooks: GatherHooks = {}): Promise<GatherResult> {
  const s = liveSettings(request);
  const cluster = await openCluster(request, io, s.requestTimeoutMs);
  return gatherWith(cluster, request, s, io, hooks);
}
