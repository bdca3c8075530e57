/**
 * A container's memory limit, for the fake API server's exec: the command runs in a memory cgroup of its own whose
 * limit the test chooses from the container's `resources.limits.memory`, so a listing that needs more is killed by the
 * kernel's out-of-memory killer (SIGKILL, exit 137), as in a pod on a real node. cgroup v1 (`memory.limit_in_bytes`,
 * and `memory.memsw.limit_in_bytes` when swap is accounted) or v2 (`memory.max`, `memory.swap.max`), under the test
 * process's own memory cgroup.
 *
 * Test helper: argv only; the cgroup's path goes to the fixed wrapper script as "$1", the command as "$@".
 * @module
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Pod } from "../../src/model/k8s.ts";
import { parseQuantity } from "../../src/model/quantity.ts";

/** The directory of this process's memory cgroup and its version, or undefined when there is none to write to. */
function ownMemoryCgroup(): { dir: string; v: 1 | 2 } | undefined {
  let lines: string[];
  try {
    lines = readFileSync("/proc/self/cgroup", "utf8").split("\n");
  } catch {
    return undefined;
  }
  const v1 = lines.map((l) => l.split(":")).find((f) => f[1]?.split(",").includes("memory"));
  if (v1 && existsSync("/sys/fs/cgroup/memory")) return { dir: join("/sys/fs/cgroup/memory", v1[2] ?? "/"), v: 1 };
  const v2 = lines.map((l) => l.split(":")).find((f) => f[0] === "0" && f[1] === "");
  for (const root of ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]) {
    if (v2 && existsSync(join(root, "cgroup.controllers")) && readFileSync(join(root, "cgroup.controllers"), "utf8").includes("memory")) {
      return { dir: join(root, v2[2] ?? "/"), v: 2 };
    }
  }
  return undefined;
}

let made = 0;

/**
 * A new memory cgroup limited to `bytes` (no swap); undefined when this machine cannot make one. `remove` deletes it
 * once its last process is gone (the kernel takes a moment after the exec's own exit to empty it), trying for 5 s.
 */
export function makeMemoryCgroup(bytes: number): { dir: string; remove: () => Promise<void> } | undefined {
  const own = ownMemoryCgroup();
  if (!own) return undefined;
  const dir = join(own.dir, `netpath-test-${process.pid}-${++made}`);
  try {
    mkdirSync(dir);
    if (own.v === 1) {
      writeFileSync(join(dir, "memory.limit_in_bytes"), String(bytes));
      if (existsSync(join(dir, "memory.memsw.limit_in_bytes"))) writeFileSync(join(dir, "memory.memsw.limit_in_bytes"), String(bytes));
    } else {
      writeFileSync(join(dir, "memory.max"), String(bytes));
      if (existsSync(join(dir, "memory.swap.max"))) writeFileSync(join(dir, "memory.swap.max"), "0");
    }
  } catch {
    try {
      rmdirSync(dir);
    } catch { /* not made */ }
    return undefined;
  }
  return {
    dir,
    remove: async () => {
      for (let i = 0; i < 100; i++) {
        try {
          rmdirSync(dir);
          return;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
          await new Promise((r) => setTimeout(r, 50)); // EBUSY: a process is still leaving it
        }
      }
    },
  };
}

/** Whether memory cgroups can be made here (a limit a test's exec can be held to). */
export function memoryCgroupsWork(): boolean {
  const g = makeMemoryCgroup(64 * 1024 * 1024);
  if (g) rmdirSync(g.dir); // empty: nothing ever joined it
  return g !== undefined;
}

/** The argv that runs `command` in cgroup directory `dir` (joins it, then execs the command). */
export function inMemoryCgroupArgv(dir: string, command: string[]): string[] {
  return ["/bin/sh", "-c", 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"', "sh", dir, ...command];
}

/** A container's `resources.limits.memory` in MiB (`512Mi`, `1Gi`, `674Mi`); undefined when it has none. */
export function containerMemoryLimitMiB(pod: Pod, name: string | undefined): number | undefined {
  const c = (pod.spec?.containers ?? []).find((x) => x.name === name) ?? pod.spec?.containers?.[0];
  const bytes = parseQuantity((c as { resources?: { limits?: { memory?: string } } } | undefined)?.resources?.limits?.memory);
  return bytes === undefined ? undefined : bytes / 2 ** 20;
}
