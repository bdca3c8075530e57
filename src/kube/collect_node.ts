/**
 * Edge: collects one node's datapath state with one exec of the collection script, preferring what exists:
 * 1. a NotReady node is not touched (its kubelet cannot exec; the reason is reported);
 * 2. the node's kube-proxy pod (kube-system, label `k8s-app=kube-proxy` or `component=kube-proxy`, found with one
 *    list by `spec.nodeName`): its image carries iptables (both backends) and usually ipset; the script is read-only;
 * 3. when that pod is missing, cannot run the script (no shell), lacks iptables-save, or lacks the tool the proxy
 *    mode needs (ipvsadm for IPVS, nft for nftables), or (`--via auto`) a listing there was killed (exit 137, most
 *    often the kube-proxy container's memory limit): a debug pod (debug_pod.ts), deleted in `finally` whatever
 *    happens. Sections the debug pod lacks (netshoot has no iptables-legacy) are filled from the kube-proxy pod's
 *    run, and the source says so. A listing killed in the debug pod (exit 137: its memory limit, a guess until the
 *    node is seen) is collected once more by a debug pod with more memory (debug_pod.ts retryMemoryMiB); killed
 *    again, the node reports it. A failed section is never analysed (bundle.ts failedSection).
 * `--via kube-proxy` stops at 2 (no pod is created; a node its kube-proxy pod cannot serve reports why), `--via
 * debug-pod` starts at 3 (and fills what the debug image lacks from the kube-proxy pod). A whole-node collection whose
 * output crossed the API server large and uncompressed (an image without gzip: kube-proxy's own) is reported, with
 * what sends it compressed; with `--via auto` on the nft backend, a kube-proxy pod without gzip stops before large
 * whole tables (targeted_script.ts `gzip:N`, {@link DEFER_UNCOMPRESSED_RULES}) and a debug pod collects them, unless
 * no pod may be made or it cannot collect them (then the kube-proxy pod does, and the run says so).
 * Everything runs under one per-node deadline (`--timeout`). On a node where a Cilium agent pod runs (label
 * `k8s-app=cilium`), one more read-only exec reads Cilium's service table (`cilium-dbg service list -o json`) into the
 * section `cilium-services`, whether it replaces kube-proxy (no kube-proxy state) or runs next to kube-proxy's rules
 * (it translates pod → ClusterIP connections before them); a table that cannot be read is a warning naming the command.
 * @module
 */
import type { KubeConfig } from "@kubernetes/client-node";
import type { CommandOutput, NodeCapture, NodeSource, SectionName } from "../bundle/bundle.ts";
import { type CollectionResult, parseCollectionOutput } from "../bundle/collection_output.ts";
import type { Node, Pod } from "../model/k8s.ts";
import { nodeTargetKeys } from "./target_keys.ts";
import { compressedCommand, DEFERRED, DEFERRED_EXIT, type DeferUncompressed, nodeCommand, type TargetKeys, targetedCommand } from "./targeted_script.ts";
import { buildDebugPod, DEBUG_CONTAINER, debugPodName, type DebugProfile, DEFAULT_DEBUG_MEMORY_MIB, MAX_DEBUG_MEMORY_MIB, nftListingMemoryMiB, retryMemoryMiB } from "./debug_pod.ts";
import { formatMs } from "./duration.ts";
import { KubeApiError } from "./errors.ts";
import { execInPod, type ExecOutcome } from "./exec.ts";
import { deletePod, type PodRegistry, startDebugPod } from "./pod_lifecycle.ts";
import { nodeNotReady } from "./pod_state.ts";
import { type KubeRest, R } from "./rest.ts";
import { hasKubeProxyState } from "../service/service_datapath.ts";
import { collectionScope } from "../service/collection_scope.ts";

/** Where a node's state may be collected (`--via`; see LiveOptions.via in options.ts). */
export const COLLECT_VIA = ["auto", "kube-proxy", "debug-pod"] as const;
/** One of {@link COLLECT_VIA}. */
export type CollectVia = typeof COLLECT_VIA[number];

/**
 * Whole-node output (bytes on the wire) from which an uncompressed stream is reported: the image had no gzip
 * (kube-proxy's own has none), so whole tables crossed the API server as text, several times what `gzip -1` sends
 * (18.4 MB of iptables-save on the bench's 10,000-Service node). 4 MiB is a node of some 2,200 Services.
 */
export const UNCOMPRESSED_REPORT_BYTES = 4 * 1024 * 1024;

/**
 * Whole-node collection in the kube-proxy pod with `--via auto`: from this many nat `KUBE-SERVICES` rules (nft
 * backend), an image without gzip stops before the save and a debug pod collects instead, compressed. About
 * {@link UNCOMPRESSED_REPORT_BYTES} of iptables-save: ~1.84 kB per rule on the bench's node (18.4 MB for 10,001 rules,
 * 5 endpoints per Service, written as kube-proxy writes them above 1,000 endpoints, which every node of this size has:
 * no per-endpoint comments, pkg/proxy/iptables/proxier.go largeClusterMode), so 2,300 rules are some 4.2 MB.
 */
export const DEFER_UNCOMPRESSED_RULES = 2300;

/**
 * The same for nftables mode, where even a one-Service question lists kube-proxy's whole tables: from this many lines
 * of `nft list map ip kube-proxy service-ips` (about one per Service port). `nft list table ip kube-proxy` is
 * ~1.5 kB per Service (15.5 MB for the bench generator's 10,000 Services, loaded into a network namespace), so about
 * {@link UNCOMPRESSED_REPORT_BYTES}.
 */
export const DEFER_UNCOMPRESSED_NFT_ELEMENTS = 2700;

/** What collection may do, from the SelfSubjectAccessReviews (undefined = unknown: try). */
export interface CollectAccess {
  exec: boolean | undefined;
  /** Whether a debug pod may be created and waited for (create, watch and get on pods). */
  createPods: boolean | undefined;
  deletePods: boolean | undefined;
  /** The sentence naming what is missing, for messages. */
  missing: string;
}

/** Options shared by every node of a run. */
export interface CollectOptions {
  rest: KubeRest;
  kc: KubeConfig;
  /** Namespace of the kube-proxy pods (kube-system). */
  namespace: string;
  /** Namespace of the debug pods (`--debug-namespace`, default kube-system). */
  debugNamespace: string;
  image: string;
  profile: DebugProfile;
  /** Per-node time limit in ms (0 = none). */
  timeoutMs: number;
  /**
   * Time allowed to each section of the collection on the node, in ms (0 = none; rounded up to whole seconds): a
   * section past it is stopped there and marked timed out, and the next sections still run.
   */
  sectionTimeoutMs?: number;
  runId: string;
  /** Who creates the debug pods (their `kubectl-netpath/created-by` annotation). */
  createdBy: string;
  registry: PodRegistry;
  signal: AbortSignal;
  access: CollectAccess;
  /** Progress for one node (shown on a terminal only). */
  progress: (node: string, text: string) => void;
  /** Random [a-z0-9]{5}. */
  suffix: () => string;
  /** Where nodes are collected (`--via`). @default "auto" */
  via?: CollectVia;
  /**
   * Collect only what one Service's packets can traverse, in the node's proxy mode (targeted_script.ts); absent:
   * whole tables (collection_script.ts), as `capture` does.
   */
  service?: TargetKeys;
}

/** The result for one node: its capture and warnings for the run. */
export interface NodeCollection {
  capture: NodeCapture;
  warnings: string[];
}

/** Seconds the debug pod may live: the node's time limit plus a margin, or an hour without a limit. */
export function activeDeadlineFor(timeoutMs: number): number {
  return timeoutMs > 0 ? Math.ceil(timeoutMs / 1000) + 60 : 3600;
}

function isKubeProxy(p: Pod): boolean {
  const l = p.metadata.labels ?? {};
  return l["k8s-app"] === "kube-proxy" || l.component === "kube-proxy";
}

function missingTool(s: CommandOutput | undefined): boolean {
  return s === undefined || s.exitCode === 127;
}

/** Sections the node's proxy mode needs that this run lacks (tool not in the image). */
function lacking(r: CollectionResult): SectionName[] {
  const out: SectionName[] = [];
  const scopedMode = scopeMode(r);
  if (scopedMode === "nftables") return missingTool(r.sections["nft-text"]) ? ["nft-text"] : [];
  if (missingTool(r.sections["iptables-save"])) out.push("iptables-save");
  const mode = scopedMode ?? (r.sections["proxy-mode"]?.exitCode === 0 ? r.sections["proxy-mode"].stdout.trim() : "");
  const ipvsRules = /--match-set KUBE-CLUSTER-IP /.test(r.sections["iptables-save"]?.stdout ?? "");
  if ((mode === "ipvs" || ipvsRules) && missingTool(r.sections.ipvsadm)) out.push("ipvsadm");
  if (mode === "nftables" && missingTool(r.sections["nft-text"])) out.push("nft-text");
  return out;
}

/** Whether a section is the script's {@link DEFERRED} stop (not data, not a missing tool). */
function isDeferred(s: CommandOutput | undefined): boolean {
  return s?.exitCode === DEFERRED_EXIT && (s.stderr ?? "").trimStart().startsWith(`${DEFERRED}:`);
}

/** The proxy mode a targeted collection followed (`mode=` of its collection-scope section). */
function scopeMode(r: CollectionResult): string | undefined {
  return /^mode=(\S+)$/m.exec(r.sections["collection-scope"]?.stdout ?? "")?.[1];
}

/** The sections a targeted run prints, by the mode it followed (for marking the ones a cut stream never began). */
function targetedSections(mode: string | undefined): SectionName[] {
  const base: SectionName[] = ["proxy-mode", "collection-scope"];
  if (mode === undefined) return base;
  if (mode === "nftables") return [...base, "nft-text", "ip-addr", "ip-route-local", "sysctls"];
  const ipt: SectionName[] = [...base, "iptables-backend", "iptables-save", "ip6tables-save"];
  return [...ipt, ...(mode === "ipvs" ? ["ipvsadm", "ipset"] as SectionName[] : []), "ip-addr", "ip-route-local", "sysctls"];
}

function firstLine(s: string | undefined): string {
  return (s ?? "").split("\n").map((l) => l.trim()).find((l) => l !== "" && !l.startsWith("### kubectl-netpath:")) ?? "";
}

/**
 * What the node's rules were listed with, for the report's source line: `iptables nft backend (why); iptables-save via
 * CMD` in iptables and IPVS modes, `nft-text via nft list table ip kube-proxy; …` (or `nft-json via …`) in nftables
 * mode, each section's command as the collection script names it (src/kube/targeted_script.ts, collection_script.ts).
 * @param r the parsed collection.
 * @returns the detail, or "" when no rule listing ran (a command not found, exit 127, is left out).
 */
export function backendDetail(r: CollectionResult): string {
  const b = r.sections["iptables-backend"];
  const save = r.sections["iptables-save"];
  const parts: string[] = [];
  if (b && b.exitCode === 0 && b.stdout.trim() !== "") {
    const why = (b.stderr ?? "").split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("### kubectl-netpath:")).join("; ");
    parts.push(`iptables ${b.stdout.trim()} backend (${why})`);
  }
  if (save?.command && save.exitCode !== 127) parts.push(`iptables-save via ${save.command}`);
  // nftables mode: kube-proxy's tables, listed whole (for one Service too: targeted_script.ts lists table ip/ip6
  // kube-proxy, not one Service's part)
  for (const name of ["nft-text", "nft-json"] as const) {
    const nft = r.sections[name];
    if (nft?.command && nft.exitCode !== 127) parts.push(`${name} via ${nft.command}`);
  }
  return parts.join("; ");
}

/** What a large uncompressed stream held: whole tables, or for one Service what its mode lists whole. */
function heldWhat(o: CollectOptions, ran: Ran): string {
  if (!o.service) return "whole tables";
  const mode = scopeMode(ran.result);
  const why = mode === "nftables"
    ? "nftables mode lists kube-proxy's whole nftables tables, not yet one Service's part"
    : mode === "ipvs"
    ? "IPVS mode lists the whole ipvsadm table and KUBE-* ipsets, not yet one Service's part"
    : "whole tables: the image has neither awk nor grep to pick the Service's rules";
  return `node state for one Service (${why})`;
}

/**
 * The warning for node state that crossed the API server uncompressed and large (see
 * {@link UNCOMPRESSED_REPORT_BYTES}: whole tables, or one Service's collection where its mode lists whole tables),
 * with what sends it compressed; undefined for a compressed or small stream.
 */
function uncompressedWarning(o: CollectOptions, node: string, ran: Ran, where: { kubeProxyPod: string } | { debugImage: string }): string | undefined {
  if (ran.outcome.stdoutCompressed || ran.outcome.stdoutBytes < UNCOMPRESSED_REPORT_BYTES) return undefined;
  const mb = (ran.outcome.stdoutBytes / 1e6).toFixed(1);
  const what = heldWhat(o, ran);
  if ("debugImage" in where) {
    return `node ${node}: ${mb} MB of ${what} came through the API server uncompressed: the debug image ${where.debugImage} has no gzip; pass an --image that has it`;
  }
  const legacy = ran.result.sections["iptables-backend"]?.stdout.trim() === "legacy";
  const fix = legacy
    ? "a debug pod sends them compressed: --via debug-pod --profile sysadmin (this node's legacy backend needs the host's iptables-legacy-save, run through chroot /host: the default debug image has no iptables-legacy)"
    : "a debug pod, whose image has gzip, sends them compressed: --via debug-pod";
  return `node ${node}: ${mb} MB of ${what} came through the API server uncompressed: the image of kube-proxy pod ${where.kubeProxyPod} has no gzip; ${fix}`;
}

/** `sent uncompressed (N MB: the image has no gzip)` for the source line, when {@link uncompressedWarning} applies. */
function uncompressedDetail(ran: Ran): string {
  if (ran.outcome.stdoutCompressed || ran.outcome.stdoutBytes < UNCOMPRESSED_REPORT_BYTES) return "";
  return `sent uncompressed (${(ran.outcome.stdoutBytes / 1e6).toFixed(1)} MB: the image has no gzip)`;
}

/** Why a debug pod collected, for the source line: `why not the kube-proxy pod: …` (its image, the exec, the flag) or `why: …` (none found). */
function whyDebugPod(kpWhy: string): string {
  return /^(its |the exec|--via)/.test(kpWhy) ? `why not the kube-proxy pod: ${kpWhy}` : `why: ${kpWhy}`;
}

function remaining(deadline: number): number {
  return deadline === Infinity ? 24 * 3600_000 : Math.max(1, deadline - Date.now());
}

interface Ran {
  result: CollectionResult;
  outcome: ExecOutcome;
}

/**
 * Runs the collection script in a container. @param defer {@link DeferUncompressed}: for the kube-proxy pod when a
 * debug pod may be made (stop before large state that would travel as text).
 */
async function runScript(o: CollectOptions, node: Node, namespace: string, pod: string, container: string, deadline: number, defer?: DeferUncompressed): Promise<Ran> {
  const cmd = o.service
    ? compressedCommand(targetedCommand(nodeTargetKeys(o.service, node), o.sectionTimeoutMs, defer ? { deferUncompressed: defer } : {}))
    : nodeCommand(o.sectionTimeoutMs, defer ? { deferUncompressed: defer } : {});
  const outcome = await execInPod(o.kc, namespace, pod, container, cmd.command, {
    timeoutMs: remaining(deadline),
    signal: o.signal,
    context: o.rest.context,
    ...(o.rest.kubeconfig ? { kubeconfig: o.rest.kubeconfig } : {}),
    stdin: cmd.stdin,
  });
  const first = parseCollectionOutput(outcome.stdout, outcome.stderr, []);
  if (first.complete) return { result: first, outcome };
  const skipped = new Set(collectionScope({ name: node.metadata.name, sections: first.sections })?.skipped.map((x) => x.section));
  const expected = targetedSections(scopeMode(first)).filter((s) => !skipped.has(s));
  return { result: parseCollectionOutput(outcome.stdout, outcome.stderr, expected), outcome };
}

function cutWarning(node: string, where: string, ran: Ran, timeoutMs: number): string | undefined {
  const r = ran.result;
  const timedOut = r.timedOut.map((s) => `${s} (stopped after ${r.sections[s]?.timedOutAfterSeconds ?? "?"} s)`);
  const one = timedOut.length === 1;
  const slow = timedOut.length > 0 ? `${one ? "section" : "sections"} ${timedOut.join(", ")} reached the per-section limit on the node (--section-timeout)` : "";
  if (r.complete) return slow === "" ? undefined : `node ${node}: in ${where}, ${slow}; ${one ? "it is" : "they are"} marked truncated and not analysed as complete`;
  const why = ran.outcome.end === "timeout"
    ? `did not finish within ${formatMs(timeoutMs)} (--timeout)`
    : ran.outcome.end === "aborted"
    ? "was interrupted"
    : "ended before the collection finished (stream cut)";
  const cut = r.truncated.filter((s) => !r.timedOut.includes(s));
  return `node ${node}: the exec in ${where} ${why}${slow === "" ? "" : `, and ${slow}`}; sections ${(cut.length > 0 ? cut : r.truncated).join(", ")} are marked truncated and not analysed as complete`;
}

/**
 * The error of an exec that ended before the collection script printed its first section and without the exec's
 * Status (channel 3): the stream was cut (or the time limit reached), which says nothing of the image. Only a run that
 * ended with its Status and printed no section tells that the image cannot run the script.
 * @param where `kube-proxy pod NAME` / `debug pod NAME`.
 */
function cutBeforeStart(where: string, ran: Ran, timeoutMs: number): string {
  if (ran.outcome.end === "timeout") {
    return `the exec in ${where} did not begin the collection within ${formatMs(timeoutMs)} (--timeout); nothing was collected: raise --timeout and run again`;
  }
  return `the exec in ${where} ended before the collection began (stream cut after ${ran.outcome.stdoutBytes} bytes, without the exec's Status); nothing was collected: run again`;
}

/**
 * A cut stream or a section stopped at its time limit: when iptables-save itself is not whole the node cannot be
 * analysed (its `error` says why, the partial sections stay in the bundle, marked truncated); when only other
 * sections are, a warning.
 */
function noteCut(capture: NodeCapture, warnings: string[], cut: string | undefined, ran: Ran): void {
  if (cut === undefined) return;
  const save = ran.result.sections["iptables-save"];
  if (save?.truncated) {
    const what = cut.replace(/^node \S+: /, "");
    capture.error = save.timedOutAfterSeconds !== undefined ? `${what}; run again with a larger --section-timeout (and --timeout)` : `${what}; run again`;
  } else warnings.push(cut);
}

/**
 * Collects one node (see the module comment).
 * @param o run options.
 * @param node the Node object.
 * @returns the capture (with `error` when nothing could be collected) and warnings; never throws for a node
 *   problem (a failed node is reported and the others still answer), except when `o.signal` aborted the run.
 */
export async function collectNode(o: CollectOptions, node: Node): Promise<NodeCollection> {
  const found: { cilium?: Pod } = {};
  const started = Date.now();
  const result = await collectKubeProxyState(o, node, found);
  // A Cilium agent pod on the node: its service table (read-only: cilium-dbg service list -o json, `cilium` before
  // Cilium 1.15) is what the node balances with when Cilium replaces kube-proxy (no kube-proxy state), and what Cilium
  // translates pod → ClusterIP connections with, before kube-proxy's rules, when both are there (kube-proxy hybrid
  // modes; service_datapath.ts ciliumAlongsideKubeProxy): read in both cases and compared with the API.
  if (!result.capture.error && found.cilium) {
    const alongside = hasKubeProxyState(result.capture);
    // the same per-node deadline as the collection
    const deadline = o.timeoutMs > 0 ? started + o.timeoutMs : Infinity;
    o.progress(node.metadata.name, `reading Cilium's service table from pod ${o.namespace}/${found.cilium.metadata.name}`);
    // next to kube-proxy's state, a table not read leaves the warning that both are there (the API side lists other
    // agents' DaemonSets only without kube-proxy's) and the command to read it
    const unread = (why: string) =>
      alongside
        ? `node ${node.metadata.name}: Cilium agent pod ${o.namespace}/${found.cilium!.metadata.name} runs next to kube-proxy's rules: the answers follow kube-proxy's rules, but Cilium translates pod → ClusterIP connections (every frontend with kubeProxyReplacement=true) before them; ` +
          `its table could not be read (${why}): kubectl -n ${o.namespace} exec ${found.cilium!.metadata.name} -c cilium-agent -- cilium-dbg service list`
        : `node ${node.metadata.name}: Cilium's service table could not be read from pod ${found.cilium!.metadata.name} (${why}); Services there are not compared`;
    try {
      const table = await ciliumServiceTable(o, found.cilium, deadline);
      if (table.exitCode === 0) result.capture.sections["cilium-services"] = table;
      else result.warnings.push(unread(firstLine(table.stderr) || `exit ${table.exitCode}`));
    } catch (e) {
      if (o.signal.aborted) throw e;
      if (!(e instanceof KubeApiError)) throw e;
      result.warnings.push(alongside ? unread(`exec refused: ${e.message}`) : `node ${node.metadata.name}: exec into Cilium pod ${found.cilium.metadata.name} refused: ${e.message}`);
    }
  }
  return result;
}

/** The container of a Cilium agent pod that has the CLI. */
const CILIUM_CONTAINER = "cilium-agent";

/**
 * `cilium-dbg service list -o json` in the agent's container, else `cilium service list -o json` (agents before 1.15
 * have no cilium-dbg): argv only, no shell.
 */
async function ciliumServiceTable(o: CollectOptions, pod: Pod, deadline: number): Promise<CommandOutput> {
  const container = pod.spec?.containers?.some((c) => c.name === CILIUM_CONTAINER) ? CILIUM_CONTAINER : pod.spec?.containers?.[0]?.name ?? CILIUM_CONTAINER;
  let last: CommandOutput | undefined;
  for (const cli of ["cilium-dbg", "cilium"]) {
    const argv = [cli, "service", "list", "-o", "json"];
    const out = await execInPod(o.kc, o.namespace, pod.metadata.name, container, argv, { timeoutMs: remaining(deadline), signal: o.signal, context: o.rest.context, ...(o.rest.kubeconfig ? { kubeconfig: o.rest.kubeconfig } : {}) });
    const failed = out.status?.status === "Failure";
    const exitCode = out.end !== "status" ? null : failed ? out.status?.exitCode ?? 1 : 0;
    last = { command: argv.join(" "), stdout: out.stdout, stderr: out.stderr, exitCode, ...(out.end !== "status" ? { truncated: true } : {}) };
    // a missing executable is not an exit status: the runtime refuses to start it
    const notFound = failed && /executable file not found|no such file or directory|not found/i.test(`${out.status?.message ?? ""} ${out.stderr}`);
    if (!notFound) return last;
  }
  return last!;
}

/**
 * The sections of a run that ended with exit 137 (SIGKILL: in a container with a memory limit, the out-of-memory
 * killer's), and the element count of map service-ips that the script prints after such an `nft list table`.
 */
export function killedSections(sections: Partial<Record<SectionName, CommandOutput>>): { sections: SectionName[]; elements?: number } {
  const out: { sections: SectionName[]; elements?: number } = { sections: [] };
  for (const [k, v] of Object.entries(sections) as [SectionName, CommandOutput | undefined][]) if (v?.exitCode === 137) out.sections.push(k);
  const elements = sections["nft-text"]?.exitCode === 137 ? serviceIpsElements(sections["nft-text"].stderr ?? "") : undefined;
  if (elements !== undefined) out.elements = elements;
  return out;
}

/**
 * The element count of map service-ips that the script prints when it defers nftables mode's listing or after a
 * killed one (`… map service-ips lists about N elements …`); undefined when the text has none.
 */
function serviceIpsElements(stderr: string): number | undefined {
  const m = /map service-ips lists about (\d+) elements/.exec(stderr);
  return m ? Number(m[1]) : undefined;
}

async function collectKubeProxyState(o: CollectOptions, node: Node, found: { cilium?: Pod }): Promise<NodeCollection> {
  const name = node.metadata.name;
  const warnings: string[] = [];
  const capture: NodeCapture = { name, sections: {} };
  const notReady = nodeNotReady(node);
  if (notReady) {
    capture.source = { kind: "none" };
    capture.error = notReady;
    return { capture, warnings };
  }
  const deadline = o.timeoutMs > 0 ? Date.now() + o.timeoutMs : Infinity;
  const progress = (t: string) => o.progress(name, t);
  try {
    if (o.access.exec === false) {
      throw new Error(`cannot exec on node ${name}: ${o.access.missing}; or run with --no-exec to analyse from the API alone`);
    }
    // 1. the node's kube-proxy pod
    let kpRan: Ran | undefined;
    let kpWhy: string;
    let kpPod: Pod | undefined;
    let listWhy: string | undefined;
    try {
      const pods = await o.rest.list<Pod>(R.pods(o.namespace), { fieldSelector: `spec.nodeName=${name}` });
      kpPod = pods.items.find((p) => isKubeProxy(p) && p.status?.phase === "Running");
      const cilium = pods.items.find((p) => p.metadata.labels?.["k8s-app"] === "cilium" && p.status?.phase === "Running");
      if (cilium) found.cilium = cilium;
    } catch (e) {
      if (!(e instanceof KubeApiError && e.status === 403)) throw e;
      listWhy = `pods in namespace ${o.namespace} cannot be listed (403 Forbidden), so its kube-proxy pod is unknown`;
    }
    /** The node's capture from a complete run in its kube-proxy pod (a cut stream is noted, large text said). */
    const fromKubeProxyPod = (ran: Ran, pod: Pod): NodeCollection => {
      noteCut(capture, warnings, cutWarning(name, `kube-proxy pod ${pod.metadata.name}`, ran, o.timeoutMs), ran);
      capture.sections = ran.result.sections;
      const detail = [backendDetail(ran.result), uncompressedDetail(ran)].filter((d) => d !== "").join("; ");
      capture.source = { kind: "kube-proxy-pod", pod: pod.metadata.name, namespace: o.namespace, detail };
      warnings.push(...ran.result.problems.map((p) => `node ${name}: ${p}`));
      const big = uncompressedWarning(o, name, ran, { kubeProxyPod: pod.metadata.name });
      if (big) warnings.push(big);
      return { capture, warnings };
    };
    const via = o.via ?? "auto";
    // large state from the kube-proxy pod (whole tables; nftables mode's whole tables for one Service) may wait for a
    // debug pod that sends it compressed (its image has gzip)
    const mayDefer = via === "auto" && o.access.createPods !== false && o.access.deletePods !== false;
    let deferred: Ran | undefined;
    /** The debug pod's memory limit when the deferred listing needs more than the default (MiB), and why. */
    let memoryLimitMiB: number | undefined;
    let memoryWhy = "nft's listing of that map's table needs more than the default 512Mi";
    /** Raises the debug pod's memory limit to what nft's listing of `elements` needs (at most MAX_DEBUG_MEMORY_MIB). */
    const sizeForElements = (elements: number): void => {
      const need = nftListingMemoryMiB(elements);
      if (need <= DEFAULT_DEBUG_MEMORY_MIB) return;
      memoryLimitMiB = Math.min(need, MAX_DEBUG_MEMORY_MIB);
      if (need > MAX_DEBUG_MEMORY_MIB) memoryWhy = `nft's listing of that map's table needs about ${need}Mi; kubectl-netpath asks for at most ${MAX_DEBUG_MEMORY_MIB}Mi`;
    };
    /** The sections the last debug pod's own run ended with exit 137 (killed, in a pod: at its memory limit). */
    let killed: { sections: SectionName[]; elements?: number } = { sections: [] };
    const kpContainer = kpPod?.spec?.containers?.find((c) => c.name === "kube-proxy")?.name ?? kpPod?.spec?.containers?.[0]?.name ?? "kube-proxy";
    if (kpPod && via !== "debug-pod") {
      progress(`exec into kube-proxy pod ${o.namespace}/${kpPod.metadata.name}`);
      try {
        kpRan = await runScript(o, node, o.namespace, kpPod.metadata.name, kpContainer, deadline, mayDefer ? { iptablesRules: DEFER_UNCOMPRESSED_RULES, nftElements: DEFER_UNCOMPRESSED_NFT_ELEMENTS } : undefined);
      } catch (e) {
        if (o.signal.aborted) throw e;
        if (!(e instanceof KubeApiError)) throw e;
        kpRan = undefined;
        // exec is authorized per namespace (RBAC on pods/exec): a debug pod in the same namespace would be created,
        // privileged, only for its exec to be refused alike
        if (e.status === 403 && o.debugNamespace === o.namespace) {
          throw new Error(
            `the kube-proxy pod ${kpPod.metadata.name} cannot be used: ${e.message}. No debug pod is created: it would be in the same namespace "${o.namespace}", ` +
              `where exec is refused alike; pass --debug-namespace with a namespace where you may create pods and exec into them`,
          );
        }
        warnings.push(`node ${name}: exec into kube-proxy pod ${kpPod.metadata.name} refused: ${e.message}`);
      }
      const stopped = kpRan?.result.complete ? [kpRan.result.sections["iptables-save"], kpRan.result.sections["nft-text"]].find(isDeferred) : undefined;
      if (kpRan && stopped) {
        deferred = kpRan;
        const why = firstLine(stopped.stderr).replace(`${DEFERRED}: `, "");
        kpWhy = why.replace(/^no gzip in this image/, "its image has no gzip");
        // nft's listing of a big table needs more memory than a debug pod's default limit (debug_pod.ts)
        const elements = stopped === kpRan.result.sections["nft-text"] ? serviceIpsElements(why) : undefined;
        if (elements !== undefined) sizeForElements(elements);
      } else if (kpRan && !kpRan.result.started && kpRan.outcome.end !== "status") {
        // Cut before its first section (no exec Status): the stream, not the image; as a later cut, run again.
        capture.error = cutBeforeStart(`kube-proxy pod ${kpPod.metadata.name}`, kpRan, o.timeoutMs);
        capture.source = { kind: "kube-proxy-pod", pod: kpPod.metadata.name, namespace: o.namespace, detail: "" };
        return { capture, warnings };
      } else if (kpRan && !kpRan.result.started) {
        kpWhy = `its image cannot run the collection script (${firstLine(kpRan.outcome.stderr) || firstLine(kpRan.outcome.status?.message) || "no output"})`;
      } else if (kpRan && !kpRan.result.complete) {
        // A cut stream is a finding in itself: report what arrived, marked truncated.
        noteCut(capture, warnings, cutWarning(name, `kube-proxy pod ${kpPod.metadata.name}`, kpRan, o.timeoutMs), kpRan);
        capture.sections = kpRan.result.sections;
        capture.source = { kind: "kube-proxy-pod", pod: kpPod.metadata.name, namespace: o.namespace, detail: backendDetail(kpRan.result) };
        warnings.push(...kpRan.result.problems.map((p) => `node ${name}: ${p}`));
        return { capture, warnings };
      } else if (kpRan) {
        const need = lacking(kpRan.result);
        const kpKilled = killedSections(kpRan.result.sections);
        if (need.length === 0 && (kpKilled.sections.length === 0 || !mayDefer)) {
          return fromKubeProxyPod(kpRan, kpPod);
        }
        if (need.length > 0) kpWhy = `its image lacks ${need.map((s) => (s === "nft-text" ? "nft" : s)).join(" and ")}`;
        else {
          // killed there (the kube-proxy container's memory limit): a debug pod, with what the listing needs if known
          kpWhy = `its ${kpKilled.sections.join(" and ")} was killed there (exit 137: most often the kube-proxy container's memory limit)`;
          if (kpKilled.elements !== undefined) {
            kpWhy += `; map service-ips lists about ${kpKilled.elements} elements`;
            sizeForElements(kpKilled.elements);
          }
        }
      } else {
        kpWhy = "the exec was refused";
      }
    } else if (kpPod) {
      kpWhy = "--via debug-pod";
    } else {
      kpWhy = listWhy ?? `no running kube-proxy pod on the node in namespace ${o.namespace}`;
    }
    if (via === "kube-proxy") {
      throw new Error(`the kube-proxy pod cannot collect node ${name} (${kpWhy}), and --via kube-proxy creates no debug pod: run with --via auto to let one collect`);
    }
    // 2. a debug pod
    if (o.access.createPods === false || o.access.deletePods === false) {
      throw new Error(`cannot create a debug pod on node ${name} (the kube-proxy pod cannot be used: ${kpWhy}): ${o.access.missing}`);
    }
    const viaDebugPod = async (): Promise<NodeCollection> => {
      killed = { sections: [] };
      const podName = debugPodName(name, o.suffix());
      const pod = buildDebugPod(name, { name: podName, namespace: o.debugNamespace, image: o.image, profile: o.profile, activeDeadlineSeconds: activeDeadlineFor(o.timeoutMs), runId: o.runId, createdBy: o.createdBy, createdAtMs: Date.now(), ...(memoryLimitMiB !== undefined ? { memoryLimitMiB } : {}) });
      try {
        progress(`using a debug pod (${kpWhy})`);
        await startDebugPod(o.rest, pod, { registry: o.registry, deadline: deadline === Infinity ? Date.now() + 24 * 3600_000 : deadline, timeoutMs: o.timeoutMs, signal: o.signal, progress, node: name });
        progress("collecting");
        const ran = await runScript(o, node, o.debugNamespace, podName, DEBUG_CONTAINER, deadline);
        if (!ran.result.started && ran.outcome.end !== "status") throw new Error(cutBeforeStart(`debug pod ${podName}`, ran, o.timeoutMs));
        if (!ran.result.started) {
          throw new Error(`the debug pod's image ${o.image} cannot run the collection script (${firstLine(ran.outcome.stderr) || firstLine(ran.outcome.status?.message) || "no output"}): pass --image with an image that has sh, iptables, ipset, ipvsadm and nft`);
        }
        noteCut(capture, warnings, cutWarning(name, `debug pod ${podName}`, ran, o.timeoutMs), ran);
        killed = killedSections(ran.result.sections);
        warnings.push(...ran.result.problems.map((p) => `node ${name}: ${p}`));
        const big = uncompressedWarning(o, name, ran, { debugImage: o.image });
        if (big) warnings.push(big);
        // --via debug-pod: what the debug image lacks (netshoot has no iptables-legacy) is read in the kube-proxy pod,
        // as "auto" fills the debug pod's run from it
        if (via === "debug-pod" && kpPod && ran.result.complete && Object.values(ran.result.sections).some((v) => v?.exitCode === 127)) {
          progress(`exec into kube-proxy pod ${o.namespace}/${kpPod.metadata.name} for what the debug image lacks`);
          try {
            kpRan = await runScript(o, node, o.namespace, kpPod.metadata.name, kpContainer, deadline);
          } catch (e) {
            if (o.signal.aborted) throw e;
            if (!(e instanceof KubeApiError)) throw e;
            warnings.push(`node ${name}: exec into kube-proxy pod ${kpPod.metadata.name} refused: ${e.message}`);
          }
        }
        const source: NodeSource = { kind: o.profile === "sysadmin" && /chroot \/host/.test(ran.result.sections["iptables-save"]?.command ?? "") ? "host-chroot" : "debug-pod", namespace: o.debugNamespace, image: o.image };
        const sections = { ...ran.result.sections };
        const filled: string[] = [];
        if (kpRan?.result.complete) {
          for (const [k, v] of Object.entries(kpRan.result.sections) as [SectionName, CommandOutput][]) {
            if (missingTool(sections[k]) && !missingTool(v) && !isDeferred(v)) {
              sections[k] = v;
              filled.push(k);
            }
          }
        }
        capture.sections = sections;
        const detail = [backendDetail({ ...ran.result, sections }), `image ${o.image}`, uncompressedDetail(ran), whyDebugPod(kpWhy)];
        if (memoryLimitMiB !== undefined) detail.push(`memory limit ${memoryLimitMiB}Mi (${memoryWhy})`);
        if (filled.length > 0) {
          const kpDetail = uncompressedDetail(kpRan!);
          detail.push(`${filled.join(", ")} from kube-proxy pod ${kpPod!.metadata.name} (not in the debug image${kpDetail === "" ? "" : `; ${kpDetail}`})`);
          const big = uncompressedWarning(o, name, kpRan!, { kubeProxyPod: kpPod!.metadata.name });
          if (big) warnings.push(big);
        }
        source.detail = detail.filter((d) => d !== "").join("; ");
        capture.source = source;
        return { capture, warnings };
      } finally {
        if (o.registry.has(o.debugNamespace, podName)) {
          progress("deleting the debug pod");
          try {
            await deletePod(o.rest, o.debugNamespace, podName);
            o.registry.remove(o.debugNamespace, podName);
          } catch {
            // left in the registry: the run's last step (live.ts, registry.deleteAll) tries once more and says it once
          }
        }
      }
    };
    /**
     * {@link viaDebugPod}, and once more in a pod with more memory when a listing in the first was killed (exit 137),
     * which a pod's memory limit does to a big table's listing: that limit is a guess until the node is seen.
     */
    const viaSizedDebugPod = async (): Promise<NodeCollection> => {
      const before = warnings.length;
      const first = await viaDebugPod();
      if (killed.sections.length === 0 || first.capture.error !== undefined) return first;
      const was = memoryLimitMiB ?? DEFAULT_DEBUG_MEMORY_MIB;
      const what = killed.sections.join(" and ");
      const counted = killed.elements !== undefined ? `; map service-ips lists about ${killed.elements} elements` : "";
      const next = retryMemoryMiB(was, killed.elements);
      if (next === undefined) {
        const need = killed.elements !== undefined ? `about ${nftListingMemoryMiB(killed.elements)}Mi` : `more than ${was}Mi`;
        warnings.push(`node ${name}: the debug pod's ${what} was killed at its memory limit of ${was}Mi (exit 137)${counted}; it needs ${need}, beyond the ${MAX_DEBUG_MEMORY_MIB}Mi kubectl-netpath asks for at most: collect with --via kube-proxy`);
        return first;
      }
      progress(`the debug pod's ${what} was killed at its memory limit of ${was}Mi (exit 137): a debug pod with ${next}Mi`);
      warnings.length = before;
      memoryLimitMiB = next;
      memoryWhy = `the first debug pod's ${what} was killed at ${was}Mi, exit 137${counted}`;
      const second = await viaDebugPod();
      if (killed.sections.length > 0) warnings.push(`node ${name}: the debug pod's ${killed.sections.join(" and ")} was killed at ${next}Mi too (exit 137): collect with --via kube-proxy, or on the node itself`);
      return second;
    };
    if (!deferred) return await viaSizedDebugPod();
    // The kube-proxy pod stopped before whole tables it could not compress: a debug pod that cannot collect them
    // (it cannot be made or started, its image cannot run the script) leaves them to the kube-proxy pod after all.
    try {
      const r = await viaSizedDebugPod();
      const need: SectionName = isDeferred(deferred.result.sections["nft-text"]) ? "nft-text" : "iptables-save";
      if (r.capture.error !== undefined || !missingTool(r.capture.sections[need])) return r;
      throw new Error(`its image ${o.image} has no ${need === "nft-text" ? "nft" : "iptables-save"}`);
    } catch (e) {
      if (o.signal.aborted) throw e;
      warnings.push(`node ${name}: a debug pod could not collect the ${o.service ? "node's tables" : "whole tables"} compressed (${(e as Error).message}); they come uncompressed from kube-proxy pod ${kpPod!.metadata.name}`);
      capture.error = undefined;
      progress(`exec into kube-proxy pod ${o.namespace}/${kpPod!.metadata.name}`);
      return fromKubeProxyPod(await runScript(o, node, o.namespace, kpPod!.metadata.name, kpContainer, deadline), kpPod!);
    }
  } catch (e) {
    if (o.signal.aborted) throw e;
    capture.error = (e as Error).message;
    capture.source ??= { kind: "none" };
    return { capture, warnings };
  }
}
