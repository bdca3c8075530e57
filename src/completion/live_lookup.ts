/**
 * Edge: lists for completion from the cluster of the kubeconfig in effect. The Kubernetes client is imported here,
 * lazily (`await import(...)`), and only here on the completion path: loading it costs ~0.5 s, so static completions
 * never reach this module. The client is used for what it does best — kubeconfig loading and authentication
 * (certificates, tokens, exec plugins, proxies: `KubeConfig.applyToHTTPSOptions`) — and the one GET is made with
 * `node:https` so that it can be aborted: a completion must never hang the user's shell.
 *
 * Requests: `GET /api/v1/namespaces/<ns>/{services,persistentvolumeclaims,pods}`, `/api/v1/namespaces`,
 * `/api/v1/nodes`, with `limit=500` (one page: completion offers what fits on a screen, not the whole cluster).
 * @module
 */
import { existsSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { KubeObject } from "../model/k8s.ts";
import type { LookupKind } from "./candidates.ts";
import type { KubeconfigPaths } from "./kubeconfig_contexts.ts";

/** Where to look: the kubeconfig files in effect, and the `--context` and `-n` typed on the line. */
export interface LiveSource {
  kubeconfig: KubeconfigPaths;
  context?: string;
  namespace?: string;
}

/** A lookup that failed: unreachable cluster, HTTP error, unknown context, bad kubeconfig. */
export class LookupError extends Error {
  override name = "LookupError";
}

/** Largest response read (bytes): a page of 500 pods is a few MB. */
const MAX_BODY = 32 * 1024 * 1024;

const PATHS: Record<Exclude<LookupKind, "contexts">, (ns: string) => string> = {
  services: (ns) => `/api/v1/namespaces/${encodeURIComponent(ns)}/services`,
  persistentvolumeclaims: (ns) => `/api/v1/namespaces/${encodeURIComponent(ns)}/persistentvolumeclaims`,
  pods: (ns) => `/api/v1/namespaces/${encodeURIComponent(ns)}/pods`,
  namespaces: () => `/api/v1/namespaces`,
  nodes: () => `/api/v1/nodes`,
};

function get(url: URL, options: https.RequestOptions, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === "http:" ? http : https;
    const opts: https.RequestOptions = { ...options, method: "GET", signal };
    const req = mod.request(url, opts, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) req.destroy(new LookupError(`GET ${url.pathname}: response larger than ${MAX_BODY} bytes`));
        else chunks.push(c);
      });
      res.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        if (res.statusCode !== 200) {
          let reason = body.slice(0, 200);
          try {
            reason = (JSON.parse(body) as { message?: string }).message ?? reason;
          } catch { /* not a Status */ }
          reject(new LookupError(`GET ${url.pathname}: HTTP ${res.statusCode}: ${reason}`));
        } else resolve(body);
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * Lists objects for completion from the live cluster.
 * @param kind what to list (not `contexts`, which come from the kubeconfig alone).
 * @param source the kubeconfig files, and `--context` and `-n` from the line. Without `-n`, the context's namespace,
 *   else `default` (as kubectl).
 * @param signal aborts the request (the caller's timeout).
 * @returns the objects of the first page (at most 500).
 * @throws {LookupError} for an unknown context, a kubeconfig without a cluster, an HTTP error, an unparsable body;
 *   any error of the client or the socket (ECONNREFUSED, certificate errors, AbortError) passes through.
 */
export async function listLive(kind: Exclude<LookupKind, "contexts">, source: LiveSource, signal: AbortSignal): Promise<KubeObject[]> {
  const { KubeConfig } = await import("@kubernetes/client-node");
  signal.throwIfAborted();
  const kc = new KubeConfig();
  // The files are chosen here (not by loadFromDefault, which reads process.env) so that the environment passed in
  // is the one honoured; missing files in KUBECONFIG are skipped and the first current-context wins, as in kubectl.
  const files = source.kubeconfig.explicit ? source.kubeconfig.paths : source.kubeconfig.paths.filter((p) => existsSync(p));
  if (files.length === 0) {
    kc.loadFromDefault(); // no kubeconfig: in-cluster configuration, as client-node does
  } else {
    let current: string | undefined;
    files.forEach((file, i) => {
      const one = i === 0 ? kc : new KubeConfig();
      one.loadFromFile(file);
      current ||= one.getCurrentContext() || undefined;
      if (i === 0) return;
      // First definition of a name wins (client-node's mergeConfig throws on duplicates instead).
      for (const c of one.clusters) if (!kc.clusters.some((x) => x.name === c.name)) kc.addCluster(c);
      for (const u of one.users) if (!kc.users.some((x) => x.name === u.name)) kc.addUser(u);
      for (const c of one.contexts) if (!kc.contexts.some((x) => x.name === c.name)) kc.addContext(c);
    });
    if (current) kc.setCurrentContext(current);
  }
  if (source.context) {
    if (!kc.getContextObject(source.context)) throw new LookupError(`context "${source.context}" is not in the kubeconfig`);
    kc.setCurrentContext(source.context);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new LookupError(`context "${kc.getCurrentContext()}" has no cluster`);
  const namespace = source.namespace || kc.getContextObject(kc.getCurrentContext())?.namespace || "default";
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  signal.throwIfAborted();
  options.headers = { ...options.headers, Accept: "application/json" };
  const url = new URL(cluster.server.replace(/\/+$/, "") + PATHS[kind](namespace));
  url.searchParams.set("limit", "500");
  try {
    const body = await get(url, options, signal);
    let list: { items?: KubeObject[] };
    try {
      list = JSON.parse(body) as { items?: KubeObject[] };
    } catch {
      throw new LookupError(`GET ${url.pathname}: the response is not JSON`);
    }
    return (list.items ?? []).filter((o) => typeof o?.metadata?.name === "string");
  } finally {
    (options.agent as http.Agent | undefined)?.destroy?.();
  }
}
