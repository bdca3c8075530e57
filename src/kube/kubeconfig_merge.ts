/**
 * Merging kubeconfig files the way kubectl does for `KUBECONFIG=a:b:c` (client-go
 * tools/clientcmd/loader.go, ClientConfigLoadingRules.Load): files are read in order, the first file to define a
 * cluster, user or context of a given name wins (later definitions of that name are ignored, never merged field by
 * field), and the first file that sets `current-context` wins. Relative file references in a file (certificate
 * authority, client certificate and key, tokenFile) are relative to that file's directory (ResolveLocalPaths).
 *
 * client-node's own `loadFromDefault` differs (it throws on duplicate names and lets the last current-context win),
 * hence this module.
 *
 * Runtime-neutral: no I/O; the caller reads the files.
 * @module
 */

/** A named entry of a kubeconfig list (`clusters`, `users`, `contexts`). */
export interface NamedEntry {
  name: string;
  [k: string]: unknown;
}

/** The parts of a kubeconfig (v1 Config) that matter for merging. */
export interface RawKubeconfig {
  apiVersion?: string;
  kind?: string;
  "current-context"?: string;
  clusters: NamedEntry[];
  users: NamedEntry[];
  contexts: NamedEntry[];
}

/** One parsed kubeconfig file. */
export interface KubeconfigDoc {
  /** Absolute path of the file. */
  path: string;
  /** The parsed YAML document (anything: it is validated here). */
  doc: unknown;
}

/** A kubeconfig file that is not a kubeconfig (wrong shape); the message names the file and the field. */
export class KubeconfigShapeError extends Error {
  override name = "KubeconfigShapeError";
}

function dirOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

function resolvePath(dir: string, p: unknown): unknown {
  if (typeof p !== "string" || p === "" || p.startsWith("/")) return p;
  return `${dir}/${p}`.replace(/\/\.\//g, "/");
}

function entries(doc: Record<string, unknown>, key: "clusters" | "users" | "contexts", path: string): NamedEntry[] {
  const v = doc[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new KubeconfigShapeError(`${path}: "${key}" must be a list`);
  return v.map((e, i) => {
    if (e === null || typeof e !== "object" || typeof (e as NamedEntry).name !== "string" || (e as NamedEntry).name === "") {
      throw new KubeconfigShapeError(`${path}: ${key}[${i}] has no name`);
    }
    return e as NamedEntry;
  });
}

/**
 * Makes the file references of one kubeconfig absolute, relative to the file's directory.
 * @returns a copy of the entries with `certificate-authority`, `client-certificate`, `client-key` and `tokenFile`
 *   resolved.
 */
function resolveEntries(list: NamedEntry[], key: "clusters" | "users" | "contexts", dir: string): NamedEntry[] {
  return list.map((e) => {
    if (key === "clusters" && e.cluster && typeof e.cluster === "object") {
      const c = { ...(e.cluster as Record<string, unknown>) };
      c["certificate-authority"] = resolvePath(dir, c["certificate-authority"]);
      return { ...e, cluster: c };
    }
    if (key === "users" && e.user && typeof e.user === "object") {
      const u = { ...(e.user as Record<string, unknown>) };
      for (const f of ["client-certificate", "client-key", "tokenFile"]) u[f] = resolvePath(dir, u[f]);
      return { ...e, user: u };
    }
    return e;
  });
}

/**
 * Merges kubeconfig documents in order, kubectl style.
 * @param docs parsed files in KUBECONFIG order (null/empty documents are skipped).
 * @returns the merged kubeconfig.
 * @throws {KubeconfigShapeError} when a document is not a mapping or a list is malformed, e.g.
 *   `/home/me/.kube/config: "contexts" must be a list`.
 */
export function mergeKubeconfigs(docs: readonly KubeconfigDoc[]): RawKubeconfig {
  const out: RawKubeconfig = { apiVersion: "v1", kind: "Config", clusters: [], users: [], contexts: [] };
  for (const { path, doc } of docs) {
    if (doc === null || doc === undefined) continue;
    if (typeof doc !== "object" || Array.isArray(doc)) throw new KubeconfigShapeError(`${path}: not a kubeconfig (want a YAML mapping with clusters, users, contexts)`);
    const d = doc as Record<string, unknown>;
    const cc = d["current-context"];
    if (out["current-context"] === undefined && typeof cc === "string" && cc !== "") out["current-context"] = cc;
    for (const key of ["clusters", "users", "contexts"] as const) {
      for (const e of resolveEntries(entries(d, key, path), key, dirOf(path))) {
        if (!out[key].some((x) => x.name === e.name)) out[key].push(e);
      }
    }
  }
  return out;
}
