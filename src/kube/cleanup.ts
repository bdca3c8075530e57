/**
 * Edge: removes leftover debug pods — those of a run that was killed (SIGKILL, a lost connection) before it could
 * delete them. They carry the label `app.kubernetes.io/managed-by=kubectl-netpath`; their `activeDeadlineSeconds`
 * has already stopped their container, but the Pod objects stay until deleted.
 * @module
 */
import type { Pod } from "../model/k8s.ts";
import { MANAGED_BY, MANAGED_BY_LABEL, NODE_ANNOTATION } from "./debug_pod.ts";
import { deletePod } from "./pod_lifecycle.ts";
import { type KubeRest, R } from "./rest.ts";

/** One leftover pod and what happened to it. */
export interface CleanedPod {
  namespace: string;
  name: string;
  node?: string;
  phase?: string;
  /** Set when the delete failed. */
  error?: string;
}

/**
 * Lists the debug pods (by label) and deletes them, unless `dryRun`.
 * @param rest REST client.
 * @param namespace where to look, or undefined for every namespace.
 * @param dryRun list only.
 * @returns the pods found, with `error` for those that could not be deleted.
 * @throws {KubeApiError} when the list itself fails (403: names the permission).
 */
export async function cleanupDebugPods(rest: KubeRest, namespace: string | undefined, dryRun: boolean): Promise<CleanedPod[]> {
  const list = await rest.list<Pod>(R.pods(namespace), { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}` });
  const out: CleanedPod[] = [];
  for (const p of list.items) {
    const ns = p.metadata.namespace ?? "default";
    const c: CleanedPod = { namespace: ns, name: p.metadata.name };
    const node = p.metadata.annotations?.[NODE_ANNOTATION] ?? p.spec?.nodeName;
    if (node) c.node = node;
    if (p.status?.phase) c.phase = p.status.phase;
    if (!dryRun) {
      try {
        await deletePod(rest, ns, p.metadata.name);
      } catch (e) {
        c.error = (e as Error).message;
      }
    }
    out.push(c);
  }
  return out;
}
