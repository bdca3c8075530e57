/**
 * Asking Deno for a permission before the work that needs it, so that a run lacking it stops at once with the flag to
 * add rather than after a live collection. Node has no such permissions (its `--permission` model is opt-in and not
 * what this CLI documents): there, everything is granted.
 * @module
 */

/** What a permission is asked for: Deno's PermissionDescriptor of `name` "write" (a path) or "run" (a command). */
export type DenoPermissionAsked = { name: "write"; path: string } | { name: "run"; command?: string };

/** The part of the `Deno` global used here (absent on Node). */
interface DenoPermissions {
  permissions?: { requestSync?(d: DenoPermissionAsked): { state: "granted" | "denied" | "prompt" } };
}

/**
 * Under Deno, requests a permission now (`Deno.permissions.requestSync`: Deno prompts on a terminal, as it would at
 * the operation itself; without one it answers "denied" at once) and names the flag that grants it when it is not
 * granted.
 * @param asked the permission and its scope (a path for write).
 * @returns the flag to add, e.g. `--allow-write`, or undefined when granted or not under Deno.
 */
export function denoPermissionMissing(asked: DenoPermissionAsked): string | undefined {
  const permissions = (globalThis as { Deno?: DenoPermissions }).Deno?.permissions;
  if (permissions?.requestSync === undefined) return undefined;
  try {
    return permissions.requestSync(asked).state === "granted" ? undefined : `--allow-${asked.name}`;
  } catch {
    return undefined; // a Deno without the API: the operation itself will say
  }
}
