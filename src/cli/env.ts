/**
 * The environment as the CLI reads it: one variable at a time, a variable Deno does not let it read being unset.
 * Runtime-neutral (takes the environment object, touches neither `process` nor `Deno`), so bin.ts can use it without
 * loading node:process.
 * @module
 */
import { deniedDenoPermission } from "../model/errors.ts";

/**
 * A view of `env` (usually `process.env`) whose reads never throw for want of permission. Under Deno, `process.env` is
 * backed by `Deno.env`, and reading a variable the run may not read (`--allow-env` absent, or `--allow-env=A,B`
 * without it) throws `NotCapable`; every variable the CLI reads is optional (`KUBECONFIG`, `HOME`, `NO_COLOR`,
 * `COLUMNS`, `KUBECTL_NETPATH_DEBUG`, …), so a denied read is treated as unset, exactly as if the variable were not
 * set. Other errors are not caught. Listing the whole environment (spread, `Object.keys`) is left as it is: Deno needs
 * the full `--allow-env` for that, and an empty list would hide variables rather than mark them unset.
 * @param env the environment to read; not copied, so later changes show.
 * @returns a read-through view of `env`; `x in view` is false for a denied variable.
 */
export function permittedEnv(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const read = <T>(f: () => T, denied: T): T => {
    try {
      return f();
    } catch (e) {
      if (deniedDenoPermission(e) !== undefined) return denied;
      throw e;
    }
  };
  // The target is a plain empty object, not `env`: a Proxy checks each answer against its target's own property
  // (ECMAScript [[Get]] invariants), which on Deno's `process.env` is a permission-checked read of its own.
  return new Proxy({} as Record<string, string | undefined>, {
    get: (_, key) => read(() => Reflect.get(env, key) as string | undefined, undefined),
    has: (_, key) => read(() => Reflect.has(env, key), false),
    getOwnPropertyDescriptor: (_, key) => {
      const value = read(() => Reflect.get(env, key) as string | undefined, undefined);
      return value === undefined ? undefined : { value, writable: true, enumerable: true, configurable: true };
    },
    ownKeys: () => Reflect.ownKeys(env),
    set: (_, key, value) => Reflect.set(env, key, value),
    deleteProperty: (_, key) => Reflect.deleteProperty(env, key),
  });
}
