/**
 * Runs a command without blocking the event loop (a fake API server may live in the test process) and collects its
 * output. Test helper.
 * @module
 */
import { spawn } from "node:child_process";

/** What a finished command printed. */
export interface Spawned {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * @param cmd the program (a path, or a name looked up in `env.PATH`).
 * @param args its arguments (argv, never a shell string).
 * @param o working directory, the whole environment, and a time limit after which it is killed (default 120 s).
 */
export function spawnCollect(cmd: string, args: string[], o: { cwd?: string; env: Record<string, string | undefined>; timeoutMs?: number }): Promise<Spawned> {
  return new Promise((done) => {
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString("utf8")));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString("utf8")));
    const t = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 120_000);
    child.on("close", (status) => {
      clearTimeout(t);
      done({ status, stdout, stderr });
    });
  });
}
