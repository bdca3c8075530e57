/**
 * Edge (Node only; the executable's entry, bin.ts): Node's own compile cache (`module.enableCompileCache`, Node >=
 * 22.1) for the program a command loads (dist/main.mjs and its chunks), kept in `node-compile-cache/` of the per-user
 * cache directory (cache_dir.ts). Node checks each entry against the text of its module. On Node 20, which has no such
 * cache, nothing is done (the completion fast path has its own cache there: code_cache.ts).
 *
 * Measured on Node 24.21 (15 alternated runs, `node -e 0` 37 ms): `svc/testsvc --from examples/lb-legacy` 155 ms
 * without, 134 ms with.
 * @module
 */
import Module from "node:module";
import * as path from "node:path";
import { codeCacheDir, ensurePrivateDir, userHome } from "./cache_dir.ts";

/** What `module.enableCompileCache` answers (Node >= 22.1). */
interface CompileCacheResult {
  status: number;
  message?: string;
  directory?: string;
}

/**
 * Turns on Node's compile cache in `<cache dir>/node-compile-cache` when this Node has one, the caches are not off
 * (`KUBECTL_NETPATH_CODE_CACHE=off`), and that directory is this user's and private (made 0700 if absent).
 * @param env the environment ({@link codeCacheDir}).
 * @param platform `process.platform`.
 * @param home the home directory, "" for none.
 * @returns the directory the cache is in, or undefined when it was not turned on (or Node had it on already, from
 *   NODE_COMPILE_CACHE: then Node's choice stands). Never throws.
 */
export function enableNodeCompileCache(
  env: Record<string, string | undefined>,
  platform: string = process.platform,
  home: string = userHome(),
): string | undefined {
  const enable = (Module as unknown as { enableCompileCache?: (dir: string) => CompileCacheResult }).enableCompileCache;
  const statuses = (Module as unknown as { constants?: { compileCacheStatus?: { ENABLED: number } } }).constants?.compileCacheStatus;
  if (typeof enable !== "function" || statuses === undefined) return undefined;
  const root = codeCacheDir(env, platform, home);
  if (root === undefined) return undefined;
  const dir = path.join(root, "node-compile-cache");
  try {
    ensurePrivateDir(root);
    ensurePrivateDir(dir);
    const r = enable(dir);
    return r.status === statuses.ENABLED ? r.directory ?? dir : undefined;
  } catch {
    return undefined;
  }
}
