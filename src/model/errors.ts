/**
 * Errors shared by the analyses and the edges. Runtime-neutral: no I/O.
 * @module
 */

/**
 * The question itself is malformed (a flag value, a target, a combination of flags): the CLI prints it as
 * `error: …` with a hint to `--help` and exits 2. Defined here, not in the CLI, so that the edges (kube/) can raise
 * it for the values they validate without importing the CLI.
 */
export class UsageError extends Error {
  override name = "UsageError";
}

/**
 * The object a question names is not in the bundle (or the cluster). The message is the one kubectl users know
 * (`services "web" not found in namespace "shop"`), plus a hint when an object of that name exists elsewhere
 * (`it exists in namespace "default"; use -n default`).
 */
export class NotFoundError extends Error {
  override name = "NotFoundError";
  /** Resource, e.g. "service", "persistentvolumeclaim". */
  readonly resource: string;
  readonly objectName: string;
  readonly namespace?: string;
  /** Namespaces where an object of that name exists. */
  readonly elsewhere: string[];

  /**
   * @param resource resource kind in lower case (singular), e.g. "service".
   * @param name the object name.
   * @param namespace the namespace searched, when namespaced.
   * @param elsewhere namespaces where an object of that name exists.
   */
  constructor(resource: string, name: string, namespace?: string, elsewhere: string[] = []) {
    let msg = namespace !== undefined
      ? `${resource} "${name}" not found in namespace "${namespace}"`
      : `${resource} "${name}" not found`;
    if (elsewhere.length > 0) {
      msg += `; it exists in namespace${elsewhere.length > 1 ? "s" : ""} ${elsewhere.map((n) => `"${n}"`).join(", ")}: use -n ${elsewhere[0]}`;
    }
    super(msg);
    this.resource = resource;
    this.objectName = name;
    if (namespace !== undefined) this.namespace = namespace;
    this.elsewhere = elsewhere;
  }
}

/**
 * The Deno permission flag an error says was not granted, e.g. `--allow-write`, or undefined when `e` is no such
 * denial. Deno 2 raises `Deno.errors.NotCapable` (name "NotCapable") when an operation needs a `--allow-*` permission
 * the run lacks; before Deno 2.0 that was `PermissionDenied`, which Deno 2 keeps for the operating system's EACCES, so
 * that name counts only with Deno's own "Requires … access" message. The flag is the one Deno's message names
 * ("run again with the --allow-write flag"), else `--allow-` and the access kind ("Requires write access"). Source:
 * Deno 2 runtime/permissions (PermissionDeniedError → NotCapable), docs.deno.com Deno.errors.NotCapable. Matched by
 * name and message, never `Deno.errors`, so it is runtime-neutral and false on Node.
 */
export function deniedDenoPermission(e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  const requires = /\bRequires (\w+) access\b/.exec(e.message);
  if (e.name !== "NotCapable" && !(e.name === "PermissionDenied" && requires !== null)) return undefined;
  const flag = /\brun again with the (--allow-[\w-]+) flag\b/.exec(e.message)?.[1];
  return flag ?? (requires !== null ? `--allow-${requires[1]}` : "-A (a permission Deno did not grant)");
}
