/**
 * Edge: lists for completion from the cluster of the kubeconfig in effect, through the live path's own kubeconfig
 * loader and REST client (src/kube/kubeconfig.ts, src/kube/rest.ts: kubectl's file and merge rules, in-cluster
 * configuration, client-node for authentication), so completion reads the same cluster and namespace the command
 * would. Those modules load the Kubernetes client (~0.5 s), so this module is only ever imported lazily, for
 * dynamic candidates.
 *
 * Requests: one `GET /api/v1/namespaces/<ns>/{services,persistentvolumeclaims,pods}`, `/api/v1/namespaces` or
 * `/api/v1/nodes` with `limit=500` (one page: completion offers what fits on a screen, not the whole cluster).
 * @module
 */
import type { KubeObject } from "../../model/k8s.ts";
import type { LookupKind } from "./candidates.ts";

/** Where to look: the flags typed on the line and the environment. */
export interface LiveSource {
  env: Record<string, string | undefined>;
  cwd: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  /** Time allowed to the request (ms); the socket is destroyed after it. */
  timeoutMs: number;
}

const NAMESPACED = new Set<LookupKind>(["services", "persistentvolumeclaims", "pods"]);

/**
 * Lists objects for completion from the live cluster.
 * @param kind what to list (not `contexts`, which come from the kubeconfig alone).
 * @param source the kubeconfig, `--context` and `-n` from the line; without `-n` the context's namespace, else
 *   `default` (as kubectl).
 * @returns the objects of the first page (at most 500).
 * @throws {KubeconfigError} for a kubeconfig that cannot be used (missing file, unknown context, no server);
 *   {@link KubeApiError} for an error status (403 names the verb and resource RBAC must allow);
 *   {@link ApiUnreachableError} for network and TLS errors and the timeout.
 */
export async function listLive(kind: Exclude<LookupKind, "contexts">, source: LiveSource): Promise<KubeObject[]> {
  const { loadKubeconfig } = await import("../../kube/kubeconfig.ts");
  const { KubeRest } = await import("../../kube/rest.ts");
  const opts: Parameters<typeof loadKubeconfig>[0] = { env: source.env, cwd: source.cwd };
  if (source.kubeconfig !== undefined) opts.kubeconfig = source.kubeconfig;
  if (source.context !== undefined) opts.context = source.context;
  const loaded = await loadKubeconfig(opts);
  const rest = new KubeRest(loaded.kc, {
    context: loaded.context,
    requestTimeoutMs: source.timeoutMs,
    ...(loaded.user ? { user: loaded.user } : {}),
    ...(source.kubeconfig ? { kubeconfig: source.kubeconfig } : {}),
  });
  const ref = { group: "", version: "v1", resource: kind, ...(NAMESPACED.has(kind) ? { namespace: source.namespace || loaded.namespace } : {}) };
  const list = await rest.list<KubeObject>(ref, {}, 500, 500);
  return list.items.filter((o) => typeof o?.metadata?.name === "string");
}
