/**
 * Edge: removes leftover debug pods — those of a run that was killed (SIGKILL, a lost connection) before it could
 * delete them — and nothing else. A label is not ownership (anyone can set `app.kubernetes.io/managed-by`), and a
 * debug pod of another run still in flight must survive, so a pod is deleted only when:
 * 1. it carries the label `app.kubernetes.io/managed-by=kubectl-netpath` (what is listed) AND every run annotation
 *    (`kubectl-netpath/run-id`, `created-by`, `created-at`, `expires-at`, set by debug_pod.ts) with valid times;
 * 2. AND its run is over: its phase is terminal (Succeeded/Failed: the kubelet stopped it, e.g. DeadlineExceeded),
 *    or its `expires-at` (creation + `activeDeadlineSeconds`, which exceeds the run's per-node `--timeout`) has
 *    passed; a pod already being deleted is left to that deletion;
 * 3. OR `force` is set and rule 1 holds (a pod still inside its deadline: its run may be in flight).
 * The delete uses the pod's own grace period (pod_lifecycle.ts deletePod), never 0.
 * @module
 */
import type { Pod } from "../model/k8s.ts";
import { EXPIRES_AT_ANNOTATION, MANAGED_BY, MANAGED_BY_LABEL, NODE_ANNOTATION, RUN_ANNOTATIONS, RUN_ID_ANNOTATION } from "./debug_pod.ts";
import { formatMs } from "./duration.ts";
import { deletePod } from "./pod_lifecycle.ts";
import { type KubeRest, R } from "./rest.ts";

/** What cleanup does with one labelled pod, and why (one clause for humans). */
export interface CleanupVerdict {
  action: "delete" | "keep";
  reason: string;
}

/** One labelled pod, what was decided and what happened. */
export interface CleanedPod extends CleanupVerdict {
  namespace: string;
  name: string;
  node?: string;
  phase?: string;
  /** The run that created it (its `kubectl-netpath/run-id`), when it has one. */
  runId?: string;
  /** Set when the delete was attempted and failed. */
  error?: string;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Decides, for one pod carrying the tool's label, whether cleanup may delete it (pure; see the module comment).
 * @param p the pod as listed.
 * @param nowMs the current time (epoch ms).
 * @param force delete debug pods still inside their deadline.
 * @returns the verdict and its reason, e.g. `keep: in use by run m3x1-ab12c until 2026-01-01T00:02:00Z (95s left); --force deletes it`.
 */
export function cleanupVerdict(p: Pod, nowMs: number, force: boolean): CleanupVerdict {
  const a = p.metadata.annotations ?? {};
  if (p.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY) return { action: "keep", reason: `no ${MANAGED_BY_LABEL}=${MANAGED_BY} label` };
  const missing = RUN_ANNOTATIONS.filter((k) => typeof a[k] !== "string" || a[k] === "");
  if (missing.length > 0) {
    return {
      action: "keep",
      reason: `not a kubectl-netpath debug pod: it has the label but not the run annotation${missing.length === 1 ? "" : "s"} ${missing.join(", ")} (delete it yourself if it is one)`,
    };
  }
  const expires = a[EXPIRES_AT_ANNOTATION]!;
  const expiresMs = RFC3339.test(expires) ? Date.parse(expires) : NaN;
  if (Number.isNaN(expiresMs)) return { action: "keep", reason: `its ${EXPIRES_AT_ANNOTATION} "${expires}" is not an RFC 3339 time (delete it yourself if it is a debug pod)` };
  if (p.metadata.deletionTimestamp) return { action: "keep", reason: "already being deleted" };
  const phase = p.status?.phase;
  const run = a[RUN_ID_ANNOTATION]!;
  if (phase === "Succeeded" || phase === "Failed") {
    return { action: "delete", reason: `ended (${phase}${p.status?.reason ? `, ${p.status.reason}` : ""})` };
  }
  if (expiresMs <= nowMs) return { action: "delete", reason: `run ${run} is over: its deadline ${expires} has passed` };
  const left = `${formatMs(Math.ceil((expiresMs - nowMs) / 1000) * 1000)} left`;
  if (force) return { action: "delete", reason: `--force: run ${run} may still be using it (deadline ${expires}, ${left})` };
  return { action: "keep", reason: `in use by run ${run} until ${expires} (${left}); --force deletes it` };
}

/**
 * Lists the pods carrying the debug pods' label and deletes those {@link cleanupVerdict} allows, unless `dryRun`.
 * @param rest REST client.
 * @param namespace where to look, or undefined for every namespace.
 * @param o `dryRun`: decide only; `force`: also delete debug pods still inside their deadline; `nowMs`: the clock.
 * @returns every labelled pod with its verdict, and `error` for a delete that failed.
 * @throws {KubeApiError} when the list itself fails (403: names the permission).
 */
export async function cleanupDebugPods(
  rest: KubeRest,
  namespace: string | undefined,
  o: { dryRun: boolean; force: boolean; nowMs?: number },
): Promise<CleanedPod[]> {
  const list = await rest.list<Pod>(R.pods(namespace), { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}` });
  const nowMs = o.nowMs ?? Date.now();
  const out: CleanedPod[] = [];
  for (const p of list.items) {
    const ns = p.metadata.namespace ?? "default";
    const c: CleanedPod = { namespace: ns, name: p.metadata.name, ...cleanupVerdict(p, nowMs, o.force) };
    const node = p.metadata.annotations?.[NODE_ANNOTATION] ?? p.spec?.nodeName;
    if (node) c.node = node;
    if (p.status?.phase) c.phase = p.status.phase;
    const run = p.metadata.annotations?.[RUN_ID_ANNOTATION];
    if (run) c.runId = run;
    if (c.action === "delete" && !o.dryRun) {
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
