/**
 * Taints and tolerations as the scheduler's TaintToleration and NodeUnschedulable filters see them.
 *
 * Matching follows k8s.io/api/core/v1 toleration.go `(*Toleration).ToleratesTaint` (v1.35):
 * 1. an empty toleration effect matches every effect, else the effects must be equal;
 * 2. an empty toleration key matches every key (the operator must then be Exists), else the keys must be equal;
 * 3. operator "" or Equal: the values must be equal; Exists: any value; Lt / Gt (v1.35 alpha,
 *    TaintTolerationComparisonOperators): both values parse as base-10 int64 and taint < toleration / taint >
 *    toleration; any other operator tolerates nothing.
 * The filter looks only at NoSchedule and NoExecute taints and reports the first untolerated one in the node's order
 * (v1helper.FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Taint, Toleration } from "../model/k8s.ts";
import { parseGoInt64 } from "./node_selector.ts";

/** Taint the node lifecycle controller puts on a cordoned node (`spec.unschedulable: true`). */
export const TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable";
/** Taint the node lifecycle controller puts on a node whose Ready condition is False. */
export const TAINT_NOT_READY = "node.kubernetes.io/not-ready";
/** Taint the node lifecycle controller puts on a node whose Ready condition is Unknown. */
export const TAINT_UNREACHABLE = "node.kubernetes.io/unreachable";

/**
 * Whether one toleration tolerates one taint (k8s.io/api core/v1 ToleratesTaint).
 * @param toleration the pod's toleration.
 * @param taint the node's taint.
 * @example toleratesTaint({ operator: "Exists" }, { key: "a", effect: "NoSchedule" }) // true
 */
export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  const op = (toleration.operator ?? "") as string;
  switch (op) {
    case "":
    case "Equal":
      return (toleration.value ?? "") === (taint.value ?? "");
    case "Exists":
      return true;
    case "Lt":
    case "Gt": {
      const tol = parseGoInt64(toleration.value ?? "");
      const tnt = parseGoInt64(taint.value ?? "");
      if (tol === undefined || tnt === undefined) return false;
      return op === "Lt" ? tnt < tol : tnt > tol;
    }
    default:
      return false;
  }
}

/**
 * Whether any of the tolerations tolerates the taint (v1helper.TolerationsTolerateTaint).
 * @returns the index of the first tolerating toleration, or -1.
 */
export function findToleration(tolerations: Toleration[] | undefined, taint: Taint): number {
  return (tolerations ?? []).findIndex((t) => toleratesTaint(t, taint));
}

/** One of a node's taints judged against a pod's tolerations. */
export interface TaintEvaluation {
  taint: Taint;
  /** `key=value:Effect` as kubectl prints it (`key:Effect` when the value is empty). */
  text: string;
  /** The scheduler's filter considers this effect (NoSchedule, NoExecute); PreferNoSchedule only scores. */
  filtered: boolean;
  tolerated: boolean;
  /** Index in the pod's tolerations of the first toleration that tolerates it. */
  toleratedBy?: number;
}

/** A node's taints judged against a pod's tolerations. */
export interface TaintsVerdict {
  /** Every taint, in the node's order. */
  taints: TaintEvaluation[];
  /** NoSchedule/NoExecute taints no toleration covers, in the node's order. */
  untolerated: Taint[];
  /** The one the scheduler names (the first untolerated), if any. */
  first?: Taint;
}

/** Formats a taint as `kubectl taint` / `kubectl describe node` write it: `key=value:Effect` or `key:Effect`. */
export function formatTaint(taint: Taint): string {
  return taint.value ? `${taint.key}=${taint.value}:${taint.effect}` : `${taint.key}:${taint.effect}`;
}

/**
 * Judges a node's taints against a pod's tolerations, the TaintToleration filter's way.
 * @param taints the node's `spec.taints`.
 * @param tolerations the pod's `spec.tolerations`.
 */
export function evaluateTaints(taints: Taint[] | undefined, tolerations: Toleration[] | undefined): TaintsVerdict {
  const evaluations = (taints ?? []).map((taint): TaintEvaluation => {
    const filtered = taint.effect === "NoSchedule" || taint.effect === "NoExecute";
    const idx = findToleration(tolerations, taint);
    return {
      taint,
      text: formatTaint(taint),
      filtered,
      tolerated: idx >= 0,
      ...(idx >= 0 ? { toleratedBy: idx } : {}),
    };
  });
  const untolerated = evaluations.filter((e) => e.filtered && !e.tolerated).map((e) => e.taint);
  return { taints: evaluations, untolerated, ...(untolerated[0] ? { first: untolerated[0] } : {}) };
}

/**
 * Whether the NodeUnschedulable filter lets the pod onto a cordoned node: only a toleration of
 * `node.kubernetes.io/unschedulable:NoSchedule` does (pkg/scheduler/framework/plugins/nodeunschedulable).
 */
export function toleratesUnschedulable(tolerations: Toleration[] | undefined): boolean {
  return findToleration(tolerations, { key: TAINT_UNSCHEDULABLE, effect: "NoSchedule" }) >= 0;
}
