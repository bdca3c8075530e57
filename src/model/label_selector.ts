/**
 * metav1.LabelSelector against a label set, as k8s.io/apimachinery `metav1.LabelSelectorAsSelector` and
 * `labels.Selector.Matches` decide it: `matchLabels` are equalities; `In` needs the key with a listed value, `NotIn`
 * the key absent or with an unlisted value, `Exists` / `DoesNotExist` the key's presence; all are ANDed. An empty
 * selector (`{}`) matches every label set. A nil selector matches nothing in pod affinity terms and topology spread
 * constraints (`LabelSelectorAsSelector(nil)` is `labels.Nothing()`), but every volume in a PVC's `spec.selector`
 * (the PV controller skips a nil selector): callers say which with `nil`.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { LabelSelector } from "./k8s.ts";

/**
 * Whether `labels` satisfy `selector`.
 * @param selector the selector; `null`/`undefined` is decided by `nil`.
 * @param labels the object's labels (absent: none).
 * @param nil what a missing selector matches: `"nothing"` (affinity, spread) or `"everything"` (PVC selector).
 * @returns true when every requirement holds. An unknown operator matches nothing (the API server rejects it).
 */
export function labelSelectorMatches(
  selector: LabelSelector | null | undefined,
  labels: Record<string, string> | undefined,
  nil: "nothing" | "everything",
): boolean {
  if (!selector) return nil === "everything";
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    const vals = e.values ?? [];
    switch (e.operator) {
      case "In":
        if (!has || !vals.includes(l[e.key] as string)) return false;
        break;
      case "NotIn":
        if (has && vals.includes(l[e.key] as string)) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/**
 * Whether the selector is empty (`{}`: no matchLabels, no matchExpressions), which matches everything.
 * @param selector the selector.
 */
export function isEmptySelector(selector: LabelSelector | null | undefined): boolean {
  return !!selector && Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
}

/**
 * The selector in kubectl's words: `app=web, tier in (a,b), !legacy`; `<none>` for nil, `<all>` for `{}`.
 * @param selector the selector.
 */
export function selectorText(selector: LabelSelector | null | undefined): string {
  if (!selector) return "<none>";
  if (isEmptySelector(selector)) return "<all>";
  return [
    ...Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(selector.matchExpressions ?? []).map((e) => {
      const vals = (e.values ?? []).join(",");
      switch (e.operator) {
        case "In":
          return `${e.key} in (${vals})`;
        case "NotIn":
          return `${e.key} notin (${vals})`;
        case "Exists":
          return e.key;
        case "DoesNotExist":
          return `!${e.key}`;
        default:
          return `${e.key} ${String(e.operator)} (${vals})`;
      }
    }),
  ].join(", ");
}
