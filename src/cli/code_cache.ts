/**
 * Edge (Node only; the executable's entry, dist/kubectl-netpath.cjs): loads the completion fast path
 * (dist/complete.cjs) through a V8 code cache kept in the user's cache directory, so a TAB press that answers names
 * runs bytecode compiled by an earlier TAB instead of compiling the fast path again.
 *
 * Why not a library or Node's own cache: `v8-compile-cache` makes its cache when a file is compiled, before it runs,
 * and V8 compiles most functions lazily, on their first call, so such a cache holds little of what a TAB press
 * compiles; Node's compile cache (`module.enableCompileCache`) does not exist on Node 20. This one is made at exit
 * (`vm.Script#createCachedData` after the answer), and holds every function the answer ran. Measured on
 * `complete -- --from examples/iptables-lab svc/` (25 alternated runs, `node -e 0` 84 ms): 107 ms without a cache,
 * 103 ms with one made at compile time, 91 ms with one made at exit.
 *
 * What is trusted: the cache holds bytecode that is run, so it is read only from a directory and a file owned by
 * this user and writable by no one else (a cache another user could write is skipped, not trusted). The file name
 * carries the SHA-256 of the script's text as built (scripts/build.mjs computes it: hashing at run time would load
 * node:crypto, ~7 ms of the ~15 saved), the script's size and modification time (an edit in place is a new name),
 * Node's version and the architecture: V8 itself checks only the length of the source, its own version and its flags.
 * The file is written 0600 under a 0700 directory, through a temporary file renamed into place, so a concurrent TAB
 * never reads half a cache. V8 rejects a cache that does not match (`cachedDataRejected`); it is then written again.
 * Any failure (no home, a read-only disk, a directory others can write) falls back to a plain `require`: the cache
 * only ever changes how fast the answer comes, never the answer. `KUBECTL_NETPATH_CODE_CACHE=off` turns it off.
 * @module
 */
import * as fs from "node:fs";
import Module from "node:module";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import * as vm from "node:vm";
import { codeCacheDir, ensurePrivateDir, ownedAndPrivate, userHome } from "./cache_dir.ts";

/**
 * CommonJS's module wrapper (`Module.wrap`) with one more parameter, `__netpathImport(specifier)`: how the script
 * imports an ES module beside it (scripts/build.mjs liveLookupShim; a plain `import()` when it is loaded by `require`).
 */
const WRAPPER_HEAD = "(function (exports, require, module, __filename, __dirname, __netpathImport) { ";
const WRAPPER_TAIL = "\n});";

/** What {@link requireWithCodeCache} did, for tests and KUBECTL_NETPATH_DEBUG (`used`: V8 accepted the cache). */
export type CodeCacheOutcome =
  | { state: "used"; file: string }
  | { state: "written"; file: string; why: "absent" | "untrusted" | "rejected" }
  | { state: "off"; why: string };

/** Largest cache file read (bytes): the fast path's is ~250 kB; anything far larger is not ours. */
const MAX_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * The cache's bytes when the file is a regular file of this user's that no one else can write; else whether there is
 * none or it is not trusted (a symbolic link, a file others can write, or far too large): it is then written anew.
 * @throws {Error} when the directory is not this user's or others can write it: nothing is read or written there.
 */
function readTrusted(dir: string, file: string): Buffer | "absent" | "untrusted" {
  let dirStat: fs.Stats | undefined;
  try {
    dirStat = fs.lstatSync(dir);
  } catch {
    return "absent";
  }
  if (!dirStat.isDirectory() || !ownedAndPrivate(dirStat)) throw new Error(`${dir} is not a directory of this user's that only it can write`);
  let fd: number | undefined;
  try {
    // O_NOFOLLOW: a symbolic link put in the file's place is not followed (0 where the platform has none)
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
    const st = fs.fstatSync(fd);
    if (!st.isFile() || !ownedAndPrivate(st) || st.size > MAX_CACHE_BYTES) return "untrusted";
    return fs.readFileSync(fd);
  } catch (e) {
    return (e as { code?: string }).code === "ENOENT" ? "absent" : "untrusted";
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Writes the cache (0600, through a renamed temporary file: a symbolic link in its place is replaced, not followed)
 * and removes the caches it replaces (other builds of `prefix` for this Node) and stale ones.
 * @throws {Error} when the directory cannot be made, is not this user's, or others can write it.
 */
function writeCache(dir: string, file: string, prefix: string, data: Buffer): void {
  ensurePrivateDir(dir);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  fs.writeFileSync(tmp, data, { mode: 0o600, flag: "wx" });
  try {
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  // the caches this one replaces: other builds' for this Node and architecture; and any cache or left-over temporary
  // file not touched for STALE_MS (another Node's, used no more). Caches of other Nodes stay otherwise: a user who
  // switches between Node versions keeps one cache per version.
  const sameRuntime = `-${process.version}-${process.arch}.v8`;
  const now = Date.now();
  for (const name of fs.readdirSync(dir)) {
    const p = path.join(dir, name);
    if (p === file || !(name.startsWith(`${prefix}-`) || name.startsWith(`.${prefix}-`))) continue;
    try {
      if (name.endsWith(sameRuntime) || now - fs.lstatSync(p).mtimeMs > STALE_MS) fs.rmSync(p, { force: true });
    } catch {
      // gone already (another press cleaned up)
    }
  }
}

/** Age (ms) after which another runtime's cache, or a temporary file left by a killed write, is removed: 30 days. */
const STALE_MS = 30 * 24 * 3600 * 1000;

/**
 * `require(script)` of a CommonJS file, its bytecode taken from the code cache in `cache.dir` when there is a trusted
 * one for this exact text, Node and architecture; when there is none (or V8 rejects it), the cache is made when the
 * process exits, with everything the run compiled. The module is the same module `require` would give (its `require`,
 * `module`, `__filename`, `__dirname`), with `__netpathImport(specifier)` for its imports of ES modules beside it.
 * @param script absolute path of the CommonJS file (dist/complete.cjs).
 * @param cache the cache directory ({@link codeCacheDir}) and the SHA-256 of the script's text (hex), or undefined
 *   for a plain `require`.
 * @param onOutcome told what happened (once the cache is written, for a written one), for debugging and tests.
 * @returns the module's exports.
 * @throws whatever the module itself throws when it runs (as `require` would); never for the cache.
 */
export function requireWithCodeCache(
  script: string,
  cache: { dir: string; digest: string } | undefined,
  onOutcome?: (o: CodeCacheOutcome) => void,
): unknown {
  let source: string | undefined;
  let stamp = "";
  if (cache !== undefined && /^[0-9a-f]{16,64}$/.test(cache.digest)) {
    let fd: number | undefined;
    try {
      fd = fs.openSync(script, "r");
      const st = fs.fstatSync(fd);
      stamp = `${st.size}-${Math.trunc(st.mtimeMs)}`;
      source = fs.readFileSync(fd, "utf8");
    } catch {
      source = undefined;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }
  if (cache === undefined || source === undefined) {
    const why = cache === undefined ? "no cache directory (or KUBECTL_NETPATH_CODE_CACHE=off)" : "the script or its digest could not be read";
    onOutcome?.({ state: "off", why });
    return require(script);
  }
  const dir = cache.dir;
  const prefix = path.basename(script).replace(/\.[^.]*$/, "");
  const file = path.join(dir, `${prefix}-${cache.digest.slice(0, 32)}-${stamp}-${process.version}-${process.arch}.v8`);
  let read: Buffer | "absent" | "untrusted";
  try {
    read = readTrusted(dir, file);
  } catch (e) {
    onOutcome?.({ state: "off", why: e instanceof Error ? e.message : String(e) });
    return require(script);
  }
  const cachedData = typeof read === "string" ? undefined : read;
  const compiled = new vm.Script(`${WRAPPER_HEAD}${source}${WRAPPER_TAIL}`, { filename: script, cachedData });
  if (cachedData !== undefined && !compiled.cachedDataRejected) onOutcome?.({ state: "used", file });
  else {
    const why = typeof read === "string" ? read : "rejected";
    // at exit, after the answer: the cache then holds every function the run compiled, not only the top level
    process.once("exit", () => {
      try {
        writeCache(dir, file, prefix, compiled.createCachedData());
        onOutcome?.({ state: "written", file, why });
      } catch (e) {
        onOutcome?.({ state: "off", why: `not written: ${e instanceof Error ? e.message : String(e)}` });
      }
    });
  }
  const m = new Module(script);
  m.filename = script;
  m.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(path.dirname(script));
  const run = compiled.runInThisContext() as (
    exports: unknown,
    req: NodeJS.Require,
    mod: Module,
    file: string,
    dirname: string,
    importer: (specifier: string) => Promise<unknown>,
  ) => void;
  // the script's `import()` of a file beside it, done by this module, which Node's own loader compiled (a vm.Script's
  // `import()` has no loader on Node 20 once its code comes from the cache)
  const importer = (specifier: string) => import(pathToFileURL(path.join(path.dirname(script), specifier)).href);
  run.call(m.exports, m.exports, Module.createRequire(script), m, script, path.dirname(script), importer);
  m.loaded = true;
  return m.exports;
}

/** One line for KUBECTL_NETPATH_DEBUG=1 (stderr). */
function describeOutcome(o: CodeCacheOutcome): string {
  if (o.state === "used") return `code cache: used ${o.file}`;
  if (o.state === "written") {
    const why = { absent: "there was none", untrusted: "the one there was not a private regular file", rejected: "V8 rejected the one there" }[o.why];
    return `code cache: written ${o.file} (${why})`;
  }
  return `code cache: off (${o.why})`;
}

/**
 * The completion fast path of the executable (dist/complete.cjs next to it), loaded by {@link requireWithCodeCache}
 * with the cache in {@link codeCacheDir}; with KUBECTL_NETPATH_DEBUG=1 what the cache did is one line on stderr.
 * scripts/build.mjs puts a call of this where bin.ts imports completion/fast.ts.
 * @param distDir the directory of the executable (its `__dirname`).
 * @param digest the SHA-256 (hex) of dist/complete.cjs as the build wrote it.
 * @returns the exports of dist/complete.cjs (completion/fast.ts).
 */
export function requireFastPath(distDir: string, digest: string): unknown {
  const env = process.env;
  const debug = env.KUBECTL_NETPATH_DEBUG === "1" ? (o: CodeCacheOutcome) => void process.stderr.write(`${describeOutcome(o)}\n`) : undefined;
  const dir = codeCacheDir(env, process.platform, userHome());
  return requireWithCodeCache(path.join(distDir, "complete.cjs"), dir === undefined ? undefined : { dir, digest }, debug);
}
