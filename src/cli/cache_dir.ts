/**
 * Edge (Node only): where kubectl-netpath keeps per-user caches, and whether a directory or file there may be trusted.
 * The V8 code cache of the completion fast path (code_cache.ts) and Node's own compile cache of the program
 * (node_compile_cache.ts) live there; both hold code that is run, so both are used only from a directory of this
 * user's that no one else can write.
 * @module
 */
import * as fs from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";

/**
 * The directory of kubectl-netpath's per-user caches: `$XDG_CACHE_HOME/kubectl-netpath` (an absolute XDG_CACHE_HOME
 * only, as the XDG base directory specification says), else `~/Library/Caches/kubectl-netpath` on macOS,
 * `%LOCALAPPDATA%\kubectl-netpath\Cache` on Windows, `~/.cache/kubectl-netpath` elsewhere.
 * @param env the environment (`XDG_CACHE_HOME`, `LOCALAPPDATA`, `KUBECTL_NETPATH_CODE_CACHE`).
 * @param platform `process.platform`.
 * @param home the home directory (`os.homedir()`), or "" when there is none.
 * @returns the directory, or undefined when the caches are off (`KUBECTL_NETPATH_CODE_CACHE=off`) or there is nowhere
 *   to put them.
 */
export function codeCacheDir(env: Record<string, string | undefined>, platform: string, home: string): string | undefined {
  if (env.KUBECTL_NETPATH_CODE_CACHE === "off") return undefined;
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, "kubectl-netpath");
  if (platform === "win32") return env.LOCALAPPDATA ? path.join(env.LOCALAPPDATA, "kubectl-netpath", "Cache") : undefined;
  if (!home) return undefined;
  return platform === "darwin" ? path.join(home, "Library", "Caches", "kubectl-netpath") : path.join(home, ".cache", "kubectl-netpath");
}

/** Whether a stat is this user's and writable by no one else (always true where there are no uids: Windows). */
export function ownedAndPrivate(st: fs.Stats): boolean {
  const uid = process.getuid?.();
  if (uid === undefined) return true;
  return st.uid === uid && (st.mode & 0o022) === 0;
}

/**
 * Makes `dir` (and its missing parents) 0700 and checks that it is a directory of this user's that no one else can
 * write, following no symbolic link at `dir` itself. As root, it makes nothing under a directory of another user's.
 * @param dir the directory.
 * @throws {Error} when it cannot be made, is not such a directory (nothing should be read or written there), or would be
 *   root's inside another user's tree.
 */
export function ensurePrivateDir(dir: string): void {
  if (process.getuid?.() === 0) {
    // root (sudo keeps the user's HOME): a directory made in another user's tree would be root's, and that user's own
    // runs could then neither use nor replace it
    const owner = nearestExisting(dir);
    if (owner !== undefined && owner.uid !== 0) {
      throw new Error(`${owner.path} belongs to uid ${owner.uid}, not root: no cache is made there as root (sudo keeps HOME?)`);
    }
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || !ownedAndPrivate(st)) throw new Error(`${dir} is not a directory of this user's that only it can write`);
}

/** The nearest of `dir` and its ancestors that exists, with its owner; undefined when none can be read. */
function nearestExisting(dir: string): { path: string; uid: number } | undefined {
  for (let p = path.resolve(dir);; p = path.dirname(p)) {
    try {
      return { path: p, uid: fs.statSync(p).uid };
    } catch {
      if (path.dirname(p) === p) return undefined;
    }
  }
}

/** The home directory, or "" when the system has none for this user (`os.homedir()` throws). */
export function userHome(): string {
  try {
    return homedir();
  } catch {
    return "";
  }
}
