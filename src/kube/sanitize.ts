/**
 * What a bundle keeps of an API object: everything the API returned except what is never needed and may be secret
 * or bulky. Secrets are never read at all; this strips the places where secret values leak into other objects:
 * literal container `env[].value` (often passwords), the `kubectl.kubernetes.io/last-applied-configuration`
 * annotation (a full copy of the manifest, env included), and `metadata.managedFields` (bulk, no analysis uses it).
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
