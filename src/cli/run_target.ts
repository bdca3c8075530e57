/**
 * The main command's phases: complete (read the bundle, or gather one from the cluster), validate (flags that go
 * together), run (analyse and render). Offline (`--from`) needs no Kubernetes client; the live path loads it lazily.
 * @module
 */
import type { Bundle, CaptureInfo } from "../bundle/bundle.ts";
import { readBundle } from "../io/read_bundle.ts";
import { explainService } from "../service/explain.ts";
import type { GatherHooks } from "../kube/options.ts";
import { streamedExplain } from "./streamed_explain.ts";
import { packetFromPod } from "../service/from_pod.ts";
import { nodeOfAddress } from "../service/packet_answer.ts";
import { parseByteSize } from "./byte_size.ts";
import { shellWord } from "../model/shell_word.ts";
import { gatherRequest } from "./gather_request.ts";
import type { PacketQuestion } from "../model/question.ts";
import { NotFoundError } from "../model/errors.ts";
import { renderServiceText } from "../report/service_text.ts";
import { wrapText } from "../report/style.ts";
import { serializeReport } from "../report/serialize.ts";
import type { ServiceReport } from "../service/report.ts";
import { type CliIo, outputWidth, useColor } from "./io.ts";
import type { MainOptions } from "./program.ts";
import { parseDest, parseNamespace, parseSource, parseTarget, type Target, UsageError } from "./target.ts";

/** Validated options of one run (pure result of {@link validate}). */
export interface RunPlan {
  target: Target;
  namespace?: string;
  output: "text" | "wide" | "json" | "yaml" | "mermaid" | "dot";
  /** The packet asked for (`--source/--dest`, or `--dest` with `--from-pod`, whose source the pod's address fills in). */
  packet?: PacketQuestion;
  /**
   * The packets traced, once the question is complete: `packet` with its source, or for `--from-pod` without `--dest`
   * every destination of the Service (src/service/from_pod.ts servicePacketsFromPod).
   */
  packets?: PacketQuestion[];
  nodes?: string[];
}

/**
 * Validates flags against the target (pure). Messages name the flags the user typed.
 * @throws {UsageError} for combinations that make no sense.
 */
export function validate(words: string[], o: MainOptions): RunPlan {
  const target = parseTarget(words);
  if (target.kind === "service" && o.whyPending) throw new UsageError("--why-pending may only be used with a pvc/NAME or pod/NAME target");
  if (target.kind !== "service") {
    if (!o.whyPending) throw new UsageError(`${target.kind}/${target.name}: add --why-pending (the only question asked of a ${target.kind} so far)`);
    for (const [flag, set] of [["--source", o.source], ["--dest", o.dest], ["--node", o.node], ["--from-pod", o.fromPod], ["--all-nodes", o.allNodes]] as const) {
      if (set !== undefined && set !== false) throw new UsageError(`${flag} may only be used with a Service target`);
    }
  }
  if (target.kind !== "service" && (o.output === "mermaid" || o.output === "dot")) {
    throw new UsageError(`-o ${o.output} draws a Service's path; for --why-pending use -o text, wide, json or yaml`);
  }
  if (o.fromPod !== undefined && o.source !== undefined) throw new UsageError("--from-pod gives the packet's source: leave out --source");
  if (o.source !== undefined && o.dest === undefined) throw new UsageError("--source needs --dest (the packet's destination, IP:PORT[/proto])");
  if (o.dest !== undefined && o.source === undefined && o.fromPod === undefined) throw new UsageError("--dest needs --source (or --from-pod, whose address is the source)");
  if (o.node && o.allNodes) throw new UsageError("--node and --all-nodes cannot be used together");
  if (o.dryRun && o.from !== undefined) throw new UsageError("--dry-run shows the debug pod a live run would create; with --from nothing is created: leave out one of them");
  // a dry run prints Pod manifests, as YAML (text, wide, yaml) or JSON: a picture of a path it does not trace is none
  if (o.dryRun && (o.output === "mermaid" || o.output === "dot")) {
    throw new UsageError(`--dry-run prints the debug pods a live run would create, as YAML or JSON (-o yaml, -o json); -o ${o.output} draws a traced path, which a dry run does not trace: leave out one of them`);
  }
  const plan: RunPlan = { target, output: o.output as RunPlan["output"] };
  if (o.namespace !== undefined) plan.namespace = parseNamespace(o.namespace);
  if (o.node) plan.nodes = o.node;
  if (o.dest !== undefined && o.source === undefined) {
    // --from-pod with --dest: the source is the pod's address of the destination's family, filled in once the pod is read
    const d = parseDest(o.dest);
    plan.packet = { source: "", destination: d.ip, port: d.port, protocol: d.protocol };
  }
  if (o.source !== undefined && o.dest !== undefined) {
    const d = parseDest(o.dest);
    const source = parseSource(o.source);
    // one packet has one IP family: no rule of the other family's tables could take it
    if (source.includes(":") !== d.ip.includes(":")) {
      throw new UsageError(`--source ${source} and --dest ${d.ip} are of different IP families: give two IPv4 or two IPv6 addresses`);
    }
    plan.packet = { source, destination: d.ip, port: d.port, protocol: d.protocol };
  }
  return plan;
}

/** The bundle of a run, and the debug pods a live run could not delete (`namespace/name`). */
async function gather(plan: RunPlan, o: MainOptions, io: CliIo, hooks: GatherHooks = {}): Promise<{ bundle: Bundle; leftBehind: string[] }> {
  if (o.from !== undefined) return { bundle: readBundle(o.from, o.maxBundleSize !== undefined ? { maxBytes: parseByteSize("--max-bundle-size", o.maxBundleSize) } : {}), leftBehind: [] };
  const live = await import("../kube/live.ts").catch((e: Error) => {
    throw new Error(`live cluster access is not available in this build (${e.message}); analyse a saved bundle with --from`);
  });
  const got = await live.gatherBundle(gatherRequest(plan, o), io, hooks);
  plan.namespace = got.namespace;
  if (got.packets) plan.packets = got.packets;
  if (got.nodes) plan.nodes = got.nodes;
  return { bundle: got.bundle, leftBehind: got.leftBehind ?? [] };
}

/**
 * Renders a ServiceReport in the chosen output (pure but for loading the renderer a format needs):
 * json/yaml the report itself; mermaid/dot the path picture (of the packet when one was asked, else of the Service);
 * text the packet's tree when a packet was asked, else the report; wide the report, then the packet's tree.
 */
export async function renderService(report: ServiceReport, output: RunPlan["output"], o: { color: boolean; width: number }): Promise<string> {
  switch (output) {
    case "json":
    case "yaml":
      return serializeReport(report, output);
    case "mermaid":
    case "dot": {
      const { packetGraph, serviceGraph } = await import("../report/path_graph.ts");
      const g = report.packet ? packetGraph(report) : serviceGraph(report);
      if (output === "dot") return (await import("../report/dot.ts")).renderDot(g);
      return (await import("../report/mermaid.ts")).renderMermaid(g);
    }
    default: {
      if (!report.packet) {
        const text = renderServiceText(report, { color: o.color, wide: output === "wide" });
        return output === "wide" ? text : wrapText(text, o.width);
      }
      const { renderPacketTree } = await import("../report/packet_tree.ts");
      const tree = renderPacketTree(report, { color: o.color, wide: output === "wide", width: o.width });
      return output === "wide" ? renderServiceText(report, { color: o.color, wide: true }) + "\n" + tree : wrapText(tree, o.width);
    }
  }
}

/**
 * What `--all-nodes` on a bundle (`--from`) leaves out. A live `--all-nodes` lists every Node of the cluster; a bundle
 * holds the nodes its capture was asked for: every node only when it was captured with `--all-nodes` (its
 * `capture.command`, written by src/kube/live.ts commandLine, then has that flag), else the endpoints' nodes (or
 * `--node`, `--from-pod`), and a hand-made bundle does not say.
 * @param capture the bundle's capture info.
 * @param nodes the nodes `--all-nodes` analysed on the bundle: those it holds a capture of (a Node object alone is
 *   reported as not analysed, and fails the run).
 * @returns the report's limit line and the stderr warning, or undefined when the bundle was captured with --all-nodes.
 */
export function allNodesShortfall(capture: CaptureInfo, nodes: readonly string[]): { limit: string; warning?: string } | undefined {
  const command = capture.command?.trim();
  if (command !== undefined && command.split(/\s+/).includes("--all-nodes")) return undefined;
  const how = command !== undefined && /^kubectl netpath\s/.test(command)
    ? `this bundle was captured without --all-nodes (capture.command: ${command})`
    : "this bundle does not record a capture with --all-nodes";
  const held = nodes.length > 0 ? nodes.join(", ") : "none";
  return {
    limit: `nodes other than ${held}: ${how}, so it holds no other node, and those were not checked (capture with --all-nodes for a drift check across the cluster)`,
    warning: `--all-nodes on this bundle analysed only the nodes it holds (${held}): ${how}; other nodes of the cluster were not checked: capture with --all-nodes for a drift check across the cluster`,
  };
}

/**
 * The endpoints' nodes an offline run (`--from`, no `--node`, `--all-nodes` or `--from-pod`) cannot analyse: a live
 * run reads every node hosting an endpoint; a bundle holds the nodes its capture was asked for, which are fewer when
 * it was captured with `--from-pod` (the client's node only) or `--node`. Said of bundles `capture` wrote (their
 * `capture.command` is a kubectl netpath command line) with the capture flag that left them out, and of hand-made
 * bundles (a directory of `kubectl get` files and dumps, docs/bundle.md) too: `--node` defaults to the endpoints'
 * nodes, and a report of fewer nodes read as the whole answer would say nothing of the others' rules.
 * @param capture the bundle's capture info (`command`: how it was captured, src/kube/live.ts commandLine).
 * @param endpointNodes the nodes of the Service's endpoints (duplicates allowed).
 * @param captured the nodes the bundle holds a capture of.
 * @returns the report's limit line and (for a bundle capture wrote) the stderr warning, or undefined when every
 *   endpoint's node is in the bundle.
 */
export function endpointNodesShortfall(capture: CaptureInfo, endpointNodes: readonly string[], captured: readonly string[]): { limit: string; warning?: string } | undefined {
  const missing = [...new Set(endpointNodes)].filter((n) => !captured.includes(n)).sort();
  const command = capture.command?.trim() ?? "";
  const words = command.split(/\s+/);
  const fromPod = words.indexOf("--from-pod");
  // with no node state at all (--no-exec) the run says so once ("the bundle holds no node state")
  if (missing.length === 0 || captured.length === 0) return undefined;
  const why = !/^kubectl netpath\s/.test(command)
    ? (missing.length === 1
      ? `the bundle holds no dump of it (nodes/<node>/iptables-save.txt…, docs/bundle.md): add its dump, or capture the Service with kubectl netpath capture, to check it`
      : `the bundle holds no dump of them (nodes/<node>/iptables-save.txt…, docs/bundle.md): add their dumps, or capture the Service with kubectl netpath capture, to check them`)
    : fromPod > 0 && words[fromPod + 1] !== undefined
    ? `this bundle was captured with --from-pod ${words[fromPod + 1]} (capture.command: ${command}), which collects that pod's node only: add --from-pod ${words[fromPod + 1]} for its packet's answer, or capture without it to check them`
    : words.includes("--node")
    ? `this bundle was captured with --node (capture.command: ${command}), which collects those nodes only: capture without --node to check them`
    : `the bundle (capture.command: ${command}) holds no capture of them: capture again to check them`;
  const these = `${missing.length === 1 ? "node" : "nodes"} ${missing.join(", ")}`;
  // a hand-made bundle holds the nodes its maker chose: the report's limit says which endpoints' nodes it lacks, and
  // stderr stays for what went wrong (a capture that left out nodes a live run reads)
  if (!/^kubectl netpath\s/.test(command)) return { limit: `the rules of ${these}, which host${missing.length === 1 ? "s" : ""} endpoints: ${why}` };
  return {
    limit: `the rules of ${these}, which host${missing.length === 1 ? "s" : ""} endpoints: ${why}`,
    warning: `${these} ${missing.length === 1 ? "hosts" : "host"} endpoints but ${missing.length === 1 ? "is" : "are"} not in the bundle, not analysed: ${why}`,
  };
}

/** Flags of a live run only (option key, flag as written). */
const LIVE_ONLY: readonly (readonly [string, string])[] = [
  ["context", "--context"], ["kubeconfig", "--kubeconfig"], ["requestTimeout", "--request-timeout"], ["exec", "--no-exec"],
  ["image", "--image"], ["profile", "--profile"], ["debugNamespace", "--debug-namespace"], ["via", "--via"],
  ["parallel", "--parallel"], ["timeout", "--timeout"], ["sectionTimeout", "--section-timeout"], ["wholeNode", "--whole-node"],
];

/**
 * Runs the main command for the positional words.
 * @returns the exit code (0, or 1 when the analysis could not be done).
 * @throws {UsageError} for usage errors; other errors are described by the caller.
 */
export async function runTarget(words: string[], o: MainOptions, io: CliIo, given: ReadonlySet<string> = new Set()): Promise<number> {
  const plan = validate(words, o);
  // With --from no cluster is contacted: a cluster or collection flag written anyway does nothing, and says so
  if (o.from !== undefined) {
    for (const [key, flag] of LIVE_ONLY) if (given.has(key)) io.stderr(`warning: ${flag} has no effect with --from: the bundle is read, no cluster is contacted\n`);
  }
  // live: each node is analysed as its collection ends, while the others are still collected
  const streamed = plan.target.kind === "service" && o.from === undefined ? streamedExplain(plan.target.name) : undefined;
  const { bundle, leftBehind } = await gather(plan, o, io, streamed?.hooks);
  if (o.dryRun) return 0; // the debug pod it would create was printed; nothing was created or analysed
  for (const w of bundle.warnings) io.stderr(`warning: ${w}\n`);
  const namespace = plan.namespace ?? "default";
  if (plan.target.kind === "service") {
    if (o.from !== undefined && o.fromPod !== undefined) {
      // Offline --from-pod: the pod from the bundle, traced on its own node (as the live path collects that node).
      const q = packetFromPod(bundle.objects, namespace, o.fromPod, plan.target.name, plan.packet, bundle.capture);
      plan.packets = q.packets;
      // ...and, for a packet to another node's address (its NodePort), on that node too when the bundle holds its
      // capture: the pod's node routes it out unchanged (kube-proxy takes a NodePort only for packets addressed to the
      // node itself: pkg/proxy/iptables/proxier.go "kubernetes service nodeports", `-m addrtype --dst-type LOCAL`;
      // nftables `fib daddr type local`), and that node's rules translate it. --node given: the user chose.
      if (!plan.nodes) {
        const there = plan.packet ? nodeOfAddress(bundle.objects.nodes, plan.packet.destination) : undefined;
        plan.nodes = there !== undefined && there !== q.node && bundle.nodes.some((n) => n.name === there) ? [q.node, there] : [q.node];
      }
    }
    const opts: Parameters<typeof explainService>[3] = {};
    if (plan.nodes) opts.nodes = plan.nodes;
    // --all-nodes on a bundle: every node it knows of, those without a capture reported as not analysed (not left out)
    else if (o.allNodes && o.from !== undefined) opts.nodes = [...new Set([...bundle.nodes.map((n) => n.name), ...bundle.objects.nodes.map((n) => n.metadata.name)])];
    plan.packets ??= plan.packet ? [plan.packet] : undefined;
    if (plan.packets) opts.packets = plan.packets;
    if (plan.nodes) {
      const unknown = plan.nodes.filter((n) => !bundle.nodes.some((c) => c.name === n) && !bundle.objects.nodes.some((x) => x.metadata.name === n));
      if (unknown.length > 0) {
        // Not found, as live (gather_api.ts TargetNotFoundError) and kubectl answer a missing object: exit 1, not a usage error.
        const e = new NotFoundError("node", unknown[0]!);
        e.message = `--node ${unknown.join(", ")}: no such node in the bundle (nodes: ${bundle.nodes.map((n) => n.name).join(", ") || "none"}); use one of those, or capture that node into a bundle`;
        throw e;
      }
    }
    const report = streamed ? streamed.report(bundle, namespace, opts) : explainService(bundle, namespace, plan.target.name, opts);
    // --all-nodes on a bundle reaches the nodes the bundle holds: the whole cluster only if it was captured so
    const partial = o.from === undefined || plan.nodes
      ? undefined
      : o.allNodes
      ? allNodesShortfall(bundle.capture, bundle.nodes.map((n) => n.name))
      : endpointNodesShortfall(bundle.capture, report.endpoints.map((e) => e.node).filter((n): n is string => n !== undefined), bundle.nodes.map((n) => n.name));
    if (partial) {
      report.limits.push(partial.limit);
      if (partial.warning !== undefined) io.stderr(`warning: ${partial.warning}\n`);
    }
    io.stdout(await renderService(report, plan.output, { color: useColor(io, o.color), width: outputWidth(io) }));
    // Nodes whose state could not be read: partial results above, one line each here, exit 1 (README, Exit codes: "also
    // when a node could not be analysed"). Under --all-nodes on a bundle, the Nodes it holds no capture of are not
    // analysed either: one line names them all (a bundle of one node's state and the cluster's 25 Node objects would
    // otherwise exit 0 with 24 nodes unchecked).
    const uncaptured = o.allNodes && o.from !== undefined && !plan.nodes
      ? new Set(report.nodes.filter((n) => !bundle.nodes.some((c) => c.name === n.node)).map((n) => n.node))
      : new Set<string>();
    if (uncaptured.size > 0) {
      const names = [...uncaptured];
      const shown = names.length > 10 ? `${names.slice(0, 10).join(", ")}, … (${names.length - 10} more)` : names.join(", ");
      io.stderr(`error: ${names.length} of ${report.nodes.length} node(s) not analysed, the bundle holds no capture of them: ${shown}; capture them with --all-nodes (or ask for the captured ones with --node)\n`);
    }
    const failed = report.nodes.filter((n) => n.error !== undefined && !uncaptured.has(n.node));
    for (const n of failed) {
      // a NotReady node is not retried into health (pod_state.ts nodeNotReady says why and what to check)
      // (offline: a node the bundle holds no capture of has nothing to fix: it is to be captured)
      const what = o.from !== undefined
        ? bundle.nodes.some((c) => c.name === n.node) ? "fix or re-capture that node's dump" : `the bundle holds no capture of it: capture it (kubectl netpath capture ${shellWord(`svc/${plan.target.name}`)} -n ${shellWord(namespace)} --node ${shellWord(n.node)} -o FILE)`
        : /^node \S+ is NotReady\b/.test(n.error ?? "")
        ? "wait until the node is Ready (or fix its kubelet), then run again"
        : "see the reason and retry that node (--node)";
      io.stderr(`error: node ${n.node}: ${n.error}; ${what}\n`);
    }
    if (report.nodes.length === 0) io.stderr("warning: the bundle holds no node state: only the API side was analysed\n");
    if (leftBehind.length > 0) io.stderr(`error: ${(await import("../kube/live.ts")).leftBehindMessage(leftBehind)}\n`);
    return failed.length > 0 || leftBehind.length > 0 || uncaptured.size > 0 ? 1 : 0;
  }
  const pending = await import("./run_pending.ts");
  return pending.runPending(bundle, plan, namespace, o, io);
}
