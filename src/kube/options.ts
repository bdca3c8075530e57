/**
 * What a live gather is asked to do, as plain data: the CLI (or a library user, through mod.ts) fills it; nothing
 * here knows about flags parsing. Durations and counts stay as the user wrote them (`30s`, `8`) and are validated by
 * {@link liveSettings} (src/kube/live.ts), which names the flag in its error.
 * @module
 */
import type { Bundle, NodeCapture } from "../bundle/bundle.ts";
import type { PacketQuestion, Target } from "../model/question.ts";

/** Which cluster: kubeconfig file(s) and context, as kubectl's `--kubeconfig` and `--context`. */
export interface ClusterOptions {
  /** Path of the kubeconfig; default `KUBECONFIG`, then `~/.kube/config`, then in-cluster. */
  kubeconfig?: string;
  /** Context name; default the kubeconfig's current-context. */
  context?: string;
}

/** How the live collection behaves; every field optional, defaults in brackets. */
export interface LiveOptions extends ClusterOptions {
  /** Per API request time limit, a Go duration or bare seconds. @default "30s" */
  requestTimeout?: string;
  /** Per node collection time limit. @default "60s" */
  timeout?: string;
  /**
   * Time limit of each section of the collection on the node (iptables-save, nft, ipvsadm, …), so that one slow
   * section does not cost the others; "0" for none. @default three quarters of `timeout`
   */
  sectionTimeout?: string;
  /** Nodes collected at once. @default "8" */
  parallel?: string;
  /** Debug pod image. @default DEFAULT_IMAGE (src/kube/debug_pod.ts) */
  image?: string;
  /** Debug pod privileges: "netadmin" or "sysadmin". @default "netadmin" */
  profile?: string;
  /** Namespace the debug pods are created in (`--debug-namespace`). @default "kube-system" */
  debugNamespace?: string;
  /**
   * Where each node's state is collected (`--via`): "auto" the node's kube-proxy pod when its image can collect what
   * the node's proxy mode needs, else a debug pod; "kube-proxy" only the kube-proxy pod (no pod is ever created: a
   * node it cannot serve reports why); "debug-pod" a debug pod (sections its image lacks are still filled from the
   * kube-proxy pod, as "auto" fills the other way). @default "auto"
   */
  via?: string;
  /** false: read the API only, exec nothing (`--no-exec`). @default true */
  exec?: boolean;
  /** true: create nothing, print the debug pods that would be created. @default false */
  dryRun?: boolean;
  /** How `dryRun` prints the debug pods: YAML documents, or JSON (one Pod, or a v1 List) as `kubectl -o json`. @default "yaml" */
  dryRunFormat?: "yaml" | "json";
}

/** One gather: the question and how to collect for it. */
export interface GatherRequest extends LiveOptions {
  target: Target;
  /** Namespace of the target; default the context's namespace. */
  namespace?: string;
  /** Only these nodes. */
  nodes?: string[];
  /** Every node of the cluster. */
  allNodes?: boolean;
  /** `--from-pod POD`: the client pod; its node is collected and its IP becomes the packet's source. */
  fromPod?: string;
  /** The packet question, when one was asked. */
  packet?: PacketQuestion;
  /**
   * What to collect on a node: `service` (default for a Service question) only the rules the Service's packets can
   * traverse, in the node's proxy mode (src/kube/targeted_script.ts); `node` whole tables, as `capture` does.
   */
  collect?: "service" | "node";
}

/** The streams a gather writes to: dry-run manifests on stdout, progress (only when a terminal) on stderr. */
export interface GatherIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  stderrIsTTY: boolean;
  cwd: string;
}

/** Hooks of a live gather ({@link GatherResult} so far: the objects are gathered before any node is collected). */
export interface GatherHooks {
  /**
   * Called as each node's collection ends (failed or not), in the order they end, while other nodes may still be
   * collected: `sofar` holds the objects and the completed question (its `bundle.nodes` is not filled yet), `nodeCount`
   * how many nodes the run collects. For analysing each node as it arrives. Must not throw.
   */
  nodeCaptured?(capture: NodeCapture, sofar: GatherResult, nodeCount: number): void;
}

/** What a gather returns: the Bundle, and the question as the cluster completed it. */
export interface GatherResult {
  bundle: Bundle;
  /** The namespace used (the context's when the request had none). */
  namespace: string;
  /**
   * The packet questions: the request's packet (with `--from-pod`'s IP as its source), or, for `--from-pod` without
   * one, every destination of the Service (src/service/from_pod.ts servicePacketsFromPod).
   */
  packets?: PacketQuestion[];
  /**
   * The nodes collected, when the question narrowed them: `--node`; `--from-pod` collects the client pod's node, with
   * the node a `--dest` is an address of (gather_api.ts destinationNode) after it.
   */
  nodes?: string[];
  /**
   * Debug pods the run created and could not delete (`namespace/name`): the answer may be whole, but the run left
   * state in the cluster (the bundle's warnings say why and how to remove them); the CLI then exits 1.
   */
  leftBehind?: string[];
}
