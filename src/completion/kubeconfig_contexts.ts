/**
 * The contexts of the kubeconfig in effect, for `--context` completion, read without the Kubernetes client (parsing
 * a few kB of YAML is cheap; loading the client is not). File precedence and merging follow client-go
 * (tools/clientcmd/loader.go, ClientConfigLoadingRules): `--kubeconfig` alone when given (it must exist); else the
 * `KUBECONFIG` list (missing files skipped); else `~/.kube/config`. The first file to define a context name wins,
 * and the first file to set `current-context` wins.
 *
 * Runtime-neutral: no I/O; the caller reads the files.
 * @module
 */
import { parse } from "yaml";
import type { ContextInfo } from "./candidates.ts";

/** A kubeconfig that cannot be read or is not a kubeconfig; the message names the file. */
export class KubeconfigReadError extends Error {
  override name = "KubeconfigReadError";
}

/** Where the kubeconfig comes from. */
export interface KubeconfigPaths {
  /** Files in precedence order. */
  paths: string[];
  /** True for `--kubeconfig`: the file must exist. Otherwise missing files are skipped, as kubectl does. */
  explicit: boolean;
}

/**
 * The kubeconfig files in effect.
 * @param opts `flag`: the `--kubeconfig` value on the line; `env`: `KUBECONFIG`; `home`: the home directory;
 *   `separator`: the path-list separator (`:` on POSIX, `;` on Windows).
 * @returns the files; an empty list when there is no home directory and nothing else is set.
 */
export function kubeconfigPaths(opts: { flag?: string; env?: string; home?: string; separator?: string }): KubeconfigPaths {
  if (opts.flag !== undefined && opts.flag !== "") return { paths: [opts.flag], explicit: true };
  if (opts.env !== undefined && opts.env !== "") {
    const seen = new Set<string>();
    const paths = opts.env.split(opts.separator ?? ":").filter((p) => p !== "" && !seen.has(p) && seen.add(p));
    return { paths, explicit: false };
  }
  return { paths: opts.home ? [`${opts.home.replace(/\/$/, "")}/.kube/config`] : [], explicit: false };
}

/**
 * Merges the contexts of kubeconfig files.
 * @param files the files' paths and texts, in precedence order.
 * @returns the contexts (first definition of a name wins, in file order) and the current context.
 * @throws {KubeconfigReadError} `<path>: not valid YAML: <reason>` or `<path>: "contexts" must be a list`.
 */
export function mergeContexts(files: readonly { path: string; text: string }[]): { contexts: ContextInfo[]; current?: string } {
  const contexts: ContextInfo[] = [];
  const seen = new Set<string>();
  let current: string | undefined;
  for (const f of files) {
    let doc: unknown;
    try {
      doc = parse(f.text);
    } catch (e) {
      throw new KubeconfigReadError(`${f.path}: not valid YAML: ${(e as Error).message.split("\n")[0]}`);
    }
    if (doc === null || doc === undefined) continue; // an empty file is an empty config
    if (typeof doc !== "object" || Array.isArray(doc)) throw new KubeconfigReadError(`${f.path}: not a kubeconfig (want a mapping)`);
    const d = doc as Record<string, unknown>;
    if (current === undefined && typeof d["current-context"] === "string" && d["current-context"] !== "") current = d["current-context"];
    const list = d.contexts ?? [];
    if (!Array.isArray(list)) throw new KubeconfigReadError(`${f.path}: "contexts" must be a list`);
    for (const entry of list) {
      const e = entry as { name?: unknown; context?: { cluster?: unknown; namespace?: unknown } } | null;
      if (!e || typeof e.name !== "string" || e.name === "" || seen.has(e.name)) continue;
      seen.add(e.name);
      const info: ContextInfo = { name: e.name };
      if (typeof e.context?.cluster === "string") info.cluster = e.context.cluster;
      if (typeof e.context?.namespace === "string" && e.context.namespace !== "") info.namespace = e.context.namespace;
      contexts.push(info);
    }
  }
  return current === undefined ? { contexts } : { contexts, current };
}
