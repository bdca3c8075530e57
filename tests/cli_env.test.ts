// permittedEnv (src/cli/env.ts): the environment as the CLI reads it, a variable Deno denies being unset. Deno's
// process.env throws Deno.errors.NotCapable ("Requires env access to …") from each denied read; this stands in for it.
import { describe, expect, it } from "vitest";
import { permittedEnv } from "../src/cli/env.ts";
import { deniedDenoPermission } from "../src/model/errors.ts";

class NotCapable extends Error {
  override name = "NotCapable";
}

/** An environment like Deno's `process.env` under `--allow-env=HOME`: reading anything else throws. */
function denoEnv(vars: Record<string, string>): Record<string, string | undefined> {
  const check = (key: string | symbol) => {
    if (key !== "HOME") throw new NotCapable(`Requires env access to "${String(key)}", run again with the --allow-env flag`);
  };
  return new Proxy(vars, {
    get: (t, k) => (check(k), Reflect.get(t, k)),
    has: (t, k) => (check(k), Reflect.has(t, k)),
    getOwnPropertyDescriptor: (t, k) => (check(k), Reflect.getOwnPropertyDescriptor(t, k)),
  });
}

describe("permittedEnv", () => {
  const env = permittedEnv(denoEnv({ HOME: "/home/u", KUBECTL_NETPATH_DEBUG: "1" }));
  it("reads a permitted variable", () => {
    expect(env.HOME).toBe("/home/u");
    expect("HOME" in env).toBe(true);
  });
  it("treats a denied variable as unset", () => {
    expect(env.KUBECTL_NETPATH_DEBUG).toBeUndefined();
    expect("KUBECTL_NETPATH_DEBUG" in env).toBe(false);
  });
  it("lets other errors through", () => {
    const broken = permittedEnv(new Proxy({}, { get: () => { throw new TypeError("boom"); } }));
    expect(() => broken.HOME).toThrow("boom");
  });
  it("reads and writes through to the real object", () => {
    const real: Record<string, string | undefined> = { A: "1" };
    const v = permittedEnv(real);
    v.B = "2";
    expect(real.B).toBe("2");
    expect({ ...v }).toEqual({ A: "1", B: "2" });
  });
});

describe("deniedDenoPermission", () => {
  it("names the flag of Deno 2's NotCapable", () => {
    expect(deniedDenoPermission(new NotCapable('Requires write access to "/x/.b.tmp", run again with the --allow-write flag'))).toBe("--allow-write");
    expect(deniedDenoPermission(new NotCapable('Requires run access to "/bin/cred"'))).toBe("--allow-run");
  });
  it("takes Deno 1's PermissionDenied only with Deno's own message", () => {
    const d1 = new Error('Requires net access to "1.2.3.4:443", run again with the --allow-net flag');
    d1.name = "PermissionDenied";
    expect(deniedDenoPermission(d1)).toBe("--allow-net");
    const os = new Error("Permission denied (os error 13)");
    os.name = "PermissionDenied";
    expect(deniedDenoPermission(os)).toBeUndefined();
  });
  it("is undefined for Node's errors", () => {
    expect(deniedDenoPermission(Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" }))).toBeUndefined();
    expect(deniedDenoPermission("text")).toBeUndefined();
  });
});
