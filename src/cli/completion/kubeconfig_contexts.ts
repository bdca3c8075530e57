/**
 * The contexts of the kubeconfig in effect, for `--context` completion, read without the Kubernetes client (parsing
 * a few kB of YAML is cheap; loading the client is not). Files as kubectl chooses them (client-go
 * tools/clientcmd/loader.go): `--kubeconfig` alone when given (it must exist); else the `KUBECONFIG` list (missing
 * files skipped); else `~/.kube/config`. Merged by the live path's {@link mergeKubeconfigs} (first definition of a
 * name wins, first `current-context` wins), so completion and the command agree.
 *
 * Runtime-neutral: no I/O; the caller reads the files.
 * @module
 */
import { parse } from "yaml";
import { type KubeconfigDoc, mergeKubeconfigs } from "../../kube/kubeconfig_merge.ts";
import type { ContextInfo } from "./candidates.ts";

/** A kubeconfig file that is not YAML; the message names the file. */
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
 * The contexts of kubeconfig files.
 * @param files the files' paths and texts, in precedence order.
 * @returns the contexts (first definition of a name wins, in file order) and the current context.
 * @throws {KubeconfigReadError} `<path>: not valid YAML: <reason>`.
 * @throws {KubeconfigShapeError} from {@link mergeKubeconfigs}, e.g. `<path>: "contexts" must be a list`.
 */
export function mergeContexts(files: readonly { path: string; text: string }[]): { contexts: ContextInfo[]; current?: string } {
  const docs: KubeconfigDoc[] = files.map((f) => {
    try {
      return { path: f.path, doc: parse(f.text) as unknown };
    } catch (e) {
      throw new KubeconfigReadError(`${f.path}: not valid YAML: ${(e as Error).message.split("\n")[0]}`);
    }
  });
  const raw = mergeKubeconfigs(docs);
  const contexts = raw.contexts.map((e) => {
    const c = (e.context ?? {}) as { cluster?: unknown; namespace?: unknown };
    const info: ContextInfo = { name: e.name };
    if (typeof c.cluster === "string") info.cluster = c.cluster;
    if (typeof c.namespace === "string" && c.namespace !== "") info.namespace = c.namespace;
    return info;
  });
  const current = raw["current-context"];
  return current === undefined ? { contexts } : { contexts, current };
}
