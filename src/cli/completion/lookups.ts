/**
 * Edge: fetches what a dynamic completion needs, before the (synchronous) completion engine runs. Sources, in order:
 * `--context` values come from the kubeconfig files alone; with `--from PATH` on the line everything else comes from
 * that bundle (offline); otherwise from the cluster (live_lookup.ts, which loads the Kubernetes client lazily).
 * Every lookup is bounded by a timeout (default 2 s, `KUBECTL_NETPATH_COMPLETION_TIMEOUT`, e.g. `500ms`, `3s`).
 * @module
 */
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { platform } from "node:os";
import type { Bundle } from "../../bundle/bundle.ts";
import type { KubeObject } from "../../model/k8s.ts";
import { readBundle } from "../../io/read_bundle.ts";
import { type CompletionPlan, contextCandidates, type LookupKind, objectCandidates } from "./candidates.ts";
import type { Candidate } from "./directive.ts";
import { type KubeconfigPaths, kubeconfigPaths, mergeContexts } from "./kubeconfig_contexts.ts";
import type { CompletionLine } from "./line.ts";
import type { LiveSource } from "./live_lookup.ts";

/** The default time allowed to a dynamic lookup (ms). */
export const DEFAULT_LOOKUP_TIMEOUT_MS = 2000;

/** A lookup that did not answer in time. */
export class LookupTimeoutError extends Error {
  override name = "LookupTimeoutError";
}

/** What a lookup runs with. */
export interface LookupEnv {
  env: Record<string, string | undefined>;
  /** Directory relative paths on the line are relative to. */
  cwd: string;
  /** Receives one line about candidates left out (names that are not valid Kubernetes names). */
  warn?: (line: string) => void;
}

/** The object files `capture` writes per list, by the lists a lookup reads ({@link bundleObjects}). */
const LIST_FILES: Record<Exclude<LookupKind, "contexts">, string[]> = {
  services: ["services"],
  persistentvolumeclaims: ["persistentvolumeclaims"],
  pods: ["pods"],
  nodes: ["nodes"],
  namespaces: ["services", "endpointslices", "pods", "persistentvolumeclaims", "configmaps", "events"],
};
const CAPTURE_LIST_FILES = ["services", "endpointslices", "pods", "nodes", "configmaps", "events", "persistentvolumeclaims", "persistentvolumes", "storageclasses", "daemonsets"];

/**
 * What a completion lookup need not read in a directory bundle: the node dumps (`nodes/…`; but for node names), `capture.yaml`, and the object files
 * `capture` names after another list (e.g. `nodes.yaml` when Services are completed). Files under any other name
 * (`objects.yaml`, `bundle.yaml`) are read, whatever they hold.
 */
export function skipFor(kind: Exclude<LookupKind, "contexts">): (rel: string) => boolean {
  const keep = new Set(LIST_FILES[kind]);
  return (rel) => {
    if (rel.startsWith("nodes/")) return kind !== "nodes"; // node names also come from the dumps' directories
    if (/^capture\.ya?ml$/.test(rel)) return true; // how the bundle was made: no names in it
    const m = /^([a-z]+)\.(ya?ml|json)$/.exec(rel);
    return m !== null && CAPTURE_LIST_FILES.includes(m[1]!) && !keep.has(m[1]!);
  };
}

/**
 * The name rules of the API server (k8s.io/apimachinery validation): Services and namespaces are DNS-1035 /
 * RFC 1123 labels, pods, claims and nodes RFC 1123 subdomains. A name outside them cannot come from a real cluster:
 * a bundle carrying one was edited, and its name is never offered (it could carry shell syntax into a command line).
 */
const NAME_RULES: Record<Exclude<LookupKind, "contexts">, RegExp> = {
  services: /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/,
  namespaces: /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
  persistentvolumeclaims: /^(?=.{1,253}$)[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
  pods: /^(?=.{1,253}$)[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
  nodes: /^(?=.{1,253}$)[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
};

/** The objects whose names are valid for their kind; reports how many were left out. */
function validNames(kind: Exclude<LookupKind, "contexts">, objects: KubeObject[], where: string, warn?: (line: string) => void): KubeObject[] {
  const ok = objects.filter((o) => typeof o.metadata?.name === "string" && NAME_RULES[kind].test(o.metadata.name));
  const bad = objects.length - ok.length;
  if (bad > 0) warn?.(`${bad} name${bad === 1 ? " in the " + where + " is not a valid Kubernetes name" : "s in the " + where + " are not valid Kubernetes names"} (${kind}): not offered`);
  return ok;
}

/**
 * The lookup timeout from `KUBECTL_NETPATH_COMPLETION_TIMEOUT` (`250ms`, `2s`, `1.5s`, or plain milliseconds).
 * @returns milliseconds; {@link DEFAULT_LOOKUP_TIMEOUT_MS} when unset or not a positive duration.
 */
export function lookupTimeoutMs(env: Record<string, string | undefined>): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s)?$/.exec((env.KUBECTL_NETPATH_COMPLETION_TIMEOUT ?? "").trim());
  if (!m) return DEFAULT_LOOKUP_TIMEOUT_MS;
  const ms = m[2] === "s" ? Number(m[1]) * 1000 : Number(m[1]);
  return ms > 0 ? ms : DEFAULT_LOOKUP_TIMEOUT_MS;
}

/** `~/x` → `$HOME/x` (a word being completed has not been expanded by the shell), relative → under `cwd`. */
export function resolveLinePath(path: string, e: LookupEnv): string {
  let p = path;
  if ((p === "~" || p.startsWith("~/")) && e.env.HOME) p = e.env.HOME + p.slice(1);
  return isAbsolute(p) ? p : join(e.cwd, p);
}

function last(line: CompletionLine, flag: string): string | undefined {
  const v = line.flags[flag];
  return v && v.length > 0 ? v[v.length - 1] : undefined;
}

/**
 * The objects of one list in a bundle.
 * @param namespace for namespaced lists: the namespace in effect.
 * @returns services, claims or pods of the namespace; the namespaces any object of the bundle is in; the nodes
 *   the bundle holds node state of (their Node objects when present), or every Node object when it holds none.
 */
export function bundleObjects(bundle: Bundle, kind: Exclude<LookupKind, "contexts">, namespace: string): KubeObject[] {
  const o = bundle.objects;
  const inNs = (list: KubeObject[]) => list.filter((x) => (x.metadata.namespace ?? "default") === namespace);
  switch (kind) {
    case "services":
      return inNs(o.services);
    case "persistentvolumeclaims":
      return inNs(o.persistentVolumeClaims);
    case "pods":
      return inNs(o.pods);
    case "namespaces": {
      const names = new Set<string>();
      for (const list of [o.services, o.endpointSlices, o.pods, o.persistentVolumeClaims, o.configMaps, o.events] as KubeObject[][]) {
        for (const x of list) if (x.metadata.namespace) names.add(x.metadata.namespace);
      }
      return [...names].map((name) => ({ metadata: { name } }));
    }
    case "nodes": {
      // `--node` with `--from` analyses a node of the bundle: when it holds node state, only the nodes it holds
      // (another one is "not analysed", exit 1); a bundle of API objects alone (--no-exec) offers its Nodes
      if (bundle.nodes.length === 0) return [...o.nodes];
      return bundle.nodes.map((c) => o.nodes.find((n) => n.metadata.name === c.name) ?? { metadata: { name: c.name } });
    }
  }
}

function kubeconfigOf(line: CompletionLine, e: LookupEnv): KubeconfigPaths {
  const flag = last(line, "kubeconfig");
  const opts: Parameters<typeof kubeconfigPaths>[0] = { separator: platform() === "win32" ? ";" : ":" };
  if (flag !== undefined) opts.flag = resolveLinePath(flag, e);
  if (e.env.KUBECONFIG !== undefined) opts.env = e.env.KUBECONFIG;
  const home = e.env.HOME ?? e.env.USERPROFILE;
  if (home !== undefined) opts.home = home;
  return kubeconfigPaths(opts);
}

function contextsOf(line: CompletionLine, e: LookupEnv): Candidate[] {
  const { paths, explicit } = kubeconfigOf(line, e);
  const files: { path: string; text: string }[] = [];
  for (const path of paths) {
    try {
      files.push({ path, text: readFileSync(path, "utf8") });
    } catch (err) {
      if (explicit || (err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
  const { contexts, current } = mergeContexts(files);
  const plain = contexts.filter((c) => SHELL_WORD.test(c.name));
  const left = contexts.length - plain.length;
  if (left > 0) e.warn?.(`${left} context name${left === 1 ? " holds" : "s hold"} characters a shell would read (spaces, quotes, $, \`, ;, …): not offered; type ${left === 1 ? "it" : "them"} quoted`);
  return contextCandidates(plain, current);
}

/**
 * A kubeconfig context name that a shell reads as one plain word wherever a completion script puts it (kubectl's bash
 * script passes candidates without a description through `compgen -W`, which expands `$(…)` and backquotes): letters,
 * digits and `_ . : @ / + = , % -`, as in `kubernetes-admin@kubernetes`, `arn:aws:eks:eu-west-1:123:cluster/prod`,
 * `gke_project_zone_name`. Context names are free text (kubeconfig is not validated by the API server).
 */
const SHELL_WORD = /^[A-Za-z0-9_][A-Za-z0-9_.:@/+=,%-]*$/;

/** Races `run` against a timer (the loader and authentication, e.g. an exec plugin, count too). */
function withTimeout<T>(ms: number, run: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LookupTimeoutError(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([run(), expired]).finally(() => clearTimeout(timer));
}

/**
 * Fetches the candidates of a lookup plan.
 * @param plan a lookup plan ({@link planCompletion}).
 * @param line the line: `--from`, `--kubeconfig`, `--context`, `-n` decide the source and the namespace.
 * @param e environment and current directory.
 * @returns the candidates (unfiltered by the word under the cursor: the engine filters).
 * @throws {LookupTimeoutError} when the source did not answer within the timeout; {@link BundleError},
 *   {@link KubeconfigReadError}, {@link KubeconfigError}, {@link KubeApiError}, {@link ApiUnreachableError}
 *   otherwise. The caller turns any of them into the Error directive.
 */
export async function fetchCandidates(plan: Extract<CompletionPlan, { kind: "lookup" }>, line: CompletionLine, e: LookupEnv): Promise<Candidate[]> {
  const ms = lookupTimeoutMs(e.env);
  if (plan.lookup === "contexts") return contextsOf(line, e);
  const kind = plan.lookup;
  const from = last(line, "from");
  if (from !== undefined) {
    const bundle = readBundle(resolveLinePath(from, e), { skip: skipFor(kind) });
    return objectCandidates(plan, validNames(kind, bundleObjects(bundle, kind, last(line, "namespace") || "default"), "bundle", e.warn));
  }
  const source: LiveSource = { env: e.env, cwd: e.cwd, timeoutMs: ms };
  const kubeconfig = last(line, "kubeconfig");
  if (kubeconfig) source.kubeconfig = resolveLinePath(kubeconfig, e);
  const context = last(line, "context");
  if (context) source.context = context;
  const namespace = last(line, "namespace");
  if (namespace) source.namespace = namespace;
  const objects = await withTimeout(ms, async () => {
    const { listLive } = await import("./live_lookup.ts");
    return listLive(kind, source);
  });
  return objectCandidates(plan, validNames(kind, objects, "cluster's answer", e.warn));
}
