/**
 * A first pass over each API object as the gather reads it: drops `metadata.managedFields` (bulk), the
 * `kubectl.kubernetes.io/last-applied-configuration` annotation and literal container `env[].value`s. What a bundle
 * keeps is decided afterwards by the allow-list of src/bundle/allow_list.ts (applied in live.ts gatherWith), which
 * drops every field the analyses do not read and redacts credentials in the text that remains; this pass only keeps
 * secret values out of memory between the two.
 *
 * Runtime-neutral: no I/O.
 * @module
 */

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
/** The value that replaces a literal env value. */
export const REDACTED = "<redacted by kubectl-netpath>";

function stripContainers(list: unknown): void {
  if (!Array.isArray(list)) return;
  for (const c of list) {
    const env = (c as { env?: { value?: string }[] }).env;
    if (!Array.isArray(env)) continue;
    for (const e of env) if (e && typeof e.value === "string") e.value = REDACTED;
  }
}

/**
 * Returns a copy of an API object without managedFields, the last-applied annotation, and literal env values of
 * (init/ephemeral) containers.
 * @param obj an object as the API returned it.
 * @returns the sanitized copy (the input is not modified).
 */
export function sanitizeObject<T>(obj: T): T {
  const o = structuredClone(obj) as Record<string, unknown>;
  const meta = o.metadata as { managedFields?: unknown; annotations?: Record<string, string> } | undefined;
  if (meta) {
    delete meta.managedFields;
    if (meta.annotations && LAST_APPLIED in meta.annotations) {
      delete meta.annotations[LAST_APPLIED];
      if (Object.keys(meta.annotations).length === 0) delete meta.annotations;
    }
  }
  const spec = o.spec as Record<string, unknown> | undefined;
  if (spec) {
    stripContainers(spec.containers);
    stripContainers(spec.initContainers);
    stripContainers(spec.ephemeralContainers);
  }
  return o as T;
}
