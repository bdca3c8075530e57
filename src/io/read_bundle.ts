/**
 * Edge: reads a bundle from disk (`--from PATH`), a one-file bundle or a bundle directory (docs/bundle.md).
 * Uses `node:fs`, which Node and Deno 2 both provide.
 *
 * Before reading any content it refuses what cannot be one bundle, so that a wrong path costs neither memory nor a
 * flood of warnings: a device, FIFO or socket (`/dev/zero`); a file or directory larger than the size limit
 * ({@link DEFAULT_MAX_BUNDLE_BYTES}, `--max-bundle-size` to raise it); a file whose first 64 KiB hold a NUL byte
 * (binary); a directory with subdirectories other than `nodes/` (a directory of several bundles, e.g. `examples/`,
 * is named as such; a source tree is said not to be a bundle directory).
 * @module
 */
import { Buffer, isAscii } from "node:buffer";
import { closeSync, type Dirent, openSync, readdirSync, readFileSync, readSync, realpathSync, statSync, type Stats } from "node:fs";
import { join, relative, sep } from "node:path";
import { type Bundle, emptyBundle, SECTION_NAMES } from "../bundle/bundle.ts";
import { BundleError, type BundleFile, bundleFromFiles, decodeBundle, isBundleKind } from "../bundle/decode.ts";

/**
 * Default limit of the bytes read for one bundle (a file, or all files of a directory): 256 MiB. A 10,000-Service
 * iptables-save is ~30 MB; reading takes about 3× the bytes in memory.
 */
export const DEFAULT_MAX_BUNDLE_BYTES = 256 * 1024 * 1024;

/**
 * Default limit of a bundle's YAML structure (its bytes but the text of block scalars, `stdout: |` dumps): 8 MiB.
 * The `yaml` parser builds a document tree first: measured on Node 20 (this project's CI machine) with block-style
 * pods as `kubectl get -o yaml` and `capture -o FILE.yaml` write them, 2 MB took 1.4 s and 230 MB of memory, 4 MB
 * 4.2 s and 380 MB, 8 MB 6.4 s and 680 MB, 16 MB 11.5 s and 1.3 GB, and 120 MB ran out of heap (V8 OOM); a 34 MB
 * YAML bundle that is mostly one iptables-save in a block scalar took 0.4 s and 230 MB. JSON is read at ~100 MB/s,
 * within {@link DEFAULT_MAX_BUNDLE_BYTES}. An explicit `maxBytes` (`--max-bundle-size`) is the YAML limit too.
 */
export const DEFAULT_MAX_YAML_STRUCTURE_BYTES = 8 * 1024 * 1024;

/**
 * Bytes of a YAML text's structure: every line but the content lines of block scalars (`key: |`, `- >-` and the lines
 * indented below), which the parser reads as plain text at little cost. 0 for JSON (it starts with `{` or `[`).
 * @param text a YAML or JSON text.
 * @returns the count, in UTF-16 code units (bytes for ASCII).
 */
export function yamlStructureBytes(text: string): number {
  if (/^\s*[{[]/.test(text.slice(0, 4096))) return 0;
  let total = 0;
  let pos = 0;
  let blockIndent = -1;
  while (pos < text.length) {
    let end = text.indexOf("\n", pos);
    if (end === -1) end = text.length;
    let i = pos;
    while (i < end && text.charCodeAt(i) === 32) i++;
    const blank = i === end || (i + 1 === end && text.charCodeAt(i) === 13);
    if (blockIndent >= 0 && (blank || i - pos > blockIndent)) {
      pos = end + 1;
      continue;
    }
    total += end - pos + 1;
    blockIndent = -1;
    // a block scalar's header (a line over 4 KiB is none): its content is indented more than its key, or than its
    // dash when it is a list item
    const m = end - pos <= 4096 ? BLOCK_HEADER.exec(text.slice(pos, end)) : null;
    if (m) blockIndent = m[2] !== undefined ? m[1]!.length : m[1]!.replace(/- *$/, "").length;
    pos = end + 1;
  }
  return total;
}

/** A YAML line that opens a block scalar: `key: |`, `- >-`, `- key: |2` (a comment may follow); group 1 is what is before the key or last dash. */
const BLOCK_HEADER = /^((?: *- +)* *)([^\s#-][^#]*?:[ \t]+)?[|>][1-9]?[-+]?[1-9]?[ \t]*(?:#.*)?\r?$/;

/** Most files a bundle directory may hold (1,000 nodes × every section, and the object files). */
const MAX_FILES = 20_000;

/** Bytes looked at for a NUL (and, in a large file, for a bundle's or object's first key) before reading it whole. */
const SNIFF_BYTES = 64 * 1024;

/**
 * Above this size, a JSON/YAML file is parsed only when its first {@link SNIFF_BYTES} show it is a bundle or a
 * Kubernetes object file: parsing 200 MB of YAML-like junk takes the `yaml` parser over 4 GB.
 */
const SNIFF_ABOVE_BYTES = 1024 * 1024;

/** What the start of a bundle or object file holds: the bundle marker, or an object's apiVersion/kind. */
const STRUCTURED_START = /kubectl-netpath\/bundle|"?apiVersion"?\s*:|"?kind"?\s*:/;

/** A node dump's file name: nodes/<node>/<section>.txt or .json. */
const SECTION_FILE = new RegExp(`^(${SECTION_NAMES.join("|")})\\.(txt|json)$`);

/** What a bundle directory looks like, for messages. */
const BUNDLE_DIR_SHAPE = "a bundle directory holds *.yaml/*.json files of Kubernetes objects, an optional capture.yaml and nodes/<node>/<section>.txt (docs/bundle.md)";

/** Options of {@link readBundle}. */
export interface ReadBundleOptions {
  /**
   * Most bytes read (a file, or all files of a directory together); default {@link DEFAULT_MAX_BUNDLE_BYTES}. Given,
   * it is also the limit of YAML structure (default {@link DEFAULT_MAX_YAML_STRUCTURE_BYTES}).
   */
  maxBytes?: number;
  /**
   * For a directory bundle: files (paths relative to it) not to read at all, e.g. the node dumps when only the API
   * objects are wanted (completion). Default: read every file.
   */
  skip?: (rel: string) => boolean;
}

/** A size in the binary units `--max-bundle-size` takes: `572 MiB`, `2.5 GiB`, `12 KiB`, `900 bytes`. */
export function formatBytes(n: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${v >= 100 ? Math.round(v) : Math.round(v * 10) / 10} ${units[i]}`;
}

function tooBig(what: string, size: number, max: number): BundleError {
  return new BundleError(
    `${what} is ${formatBytes(size)}, more than the ${formatBytes(max)} a bundle may have: check the path, or raise the limit with --max-bundle-size ${suggestLimit(size)}`,
  );
}

/**
 * The error for too much YAML structure. `bytes`: all the bytes the bundle reads. `--max-bundle-size` sets both limits
 * (bytes read and YAML structure), so the value suggested covers both: a value above the YAML structure alone but
 * below the bytes read would fail the next run on the byte limit.
 */
function tooMuchYaml(what: string, size: number, max: number, bytes: number): BundleError {
  return new BundleError(
    `${what} holds ${formatBytes(size)} of YAML structure (block-scalar dumps not counted), more than the ${formatBytes(max)} a bundle may have: YAML takes ~0.7 s and ~75 MB of memory per MB to parse; give the bundle as JSON (kubectl netpath capture -o FILE.json; kubectl get -o json), or raise the limit with --max-bundle-size ${suggestLimit(Math.max(size, bytes))}`,
  );
}

function suggestLimit(size: number): string {
  const mib = 2 ** Math.max(0, Math.ceil(Math.log2(size / (1024 * 1024))));
  return mib >= 1024 ? `${mib / 1024}Gi` : `${mib}Mi`;
}

function kindOf(st: Stats): string {
  if (st.isDirectory()) return "a directory";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isSocket()) return "a socket";
  return "not a regular file";
}

function statOrExplain(path: string, what: string): Stats {
  try {
    return statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new BundleError(`${what}: no such file or directory`);
    if (code === "EACCES") throw new BundleError(`${what}: permission denied: make it readable, or run as a user who can read it`);
    if (code === "ELOOP") throw new BundleError(`${what}: too many levels of symbolic links (a symlink loop): point --from at the bundle itself`);
    if (code === "ENOTDIR") throw new BundleError(`${what}: a part of the path is not a directory: check the path`);
    if (code === "ENAMETOOLONG") throw new BundleError(`${what}: the path is too long: check the path`);
    throw new BundleError(`${what}: ${(e as Error).message}`);
  }
}

/**
 * Refuses a JSON/YAML file that cannot be a bundle, from its first {@link SNIFF_BYTES} only: a NUL byte (binary), or,
 * in a file over {@link SNIFF_ABOVE_BYTES}, neither the bundle marker nor an object's apiVersion/kind.
 * @throws {BundleError} saying what the file is and to check the path.
 */
function sniff(path: string, size: number, shown: string): void {
  const start = head(path, SNIFF_BYTES);
  if (start.includes("\u0000")) throw new BundleError(`${shown} is a binary file, not a kubectl-netpath bundle (JSON or YAML): check the path`);
  if (size > SNIFF_ABOVE_BYTES && !STRUCTURED_START.test(start)) {
    throw new BundleError(
      `${shown} (${formatBytes(size)}) does not start like a kubectl-netpath bundle or Kubernetes objects (no "format: kubectl-netpath/bundle", apiVersion or kind in its first 64 KiB): check the path`,
    );
  }
}

function readText(path: string): string {
  const bytes = readFileSync(path);
  // Dumps are ASCII: a one-byte (latin1) string is the same text, made with one copy instead of a UTF-8 decode (on
  // Node 20, 13 ms against 48 ms for a 26 MB iptables-save). Anything else is decoded as UTF-8.
  return typeof isAscii === "function" && isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
}

/** A file of a bundle directory, found before reading. */
interface Found {
  full: string;
  rel: string;
  size: number;
}

function entries(dir: string): Dirent[] {
  return readdirSync(dir, { withFileTypes: true }).filter((e) => !e.name.startsWith("."));
}

/** The first bytes of a file, as text (empty when unreadable). */
function head(path: string, bytes: number): string {
  try {
    const fd = openSync(path, "r");
    try {
      const buf = Buffer.alloc(bytes);
      return buf.subarray(0, readSync(fd, buf, 0, bytes, 0)).toString("latin1");
    } finally {
      closeSync(fd);
    }
  } catch {
    return "";
  }
}

/** Whether a nodes/ directory holds nodes/<node>/<section>.txt|.json dumps (the yaml package's dist/nodes does not). */
function hasNodeDumps(nodesDir: string): boolean {
  return entries(nodesDir).some((n) => n.isDirectory() && entries(join(nodesDir, n.name)).some((f) => SECTION_FILE.test(f.name)));
}

/**
 * Whether a subdirectory looks like a bundle of its own: a capture.yaml, a nodes/ directory, a one-file bundle
 * (`format: kubectl-netpath/bundle` in its first 4 KiB), or Kubernetes objects of a kind bundles hold there (a
 * directory of `kubectl get -o yaml` files, as a --why-pending bundle often is; a krew manifest is not one) at its top.
 */
function looksLikeBundle(dir: string): boolean {
  try {
    return entries(dir).some((e) =>
      (e.isDirectory() && e.name === "nodes" && hasNodeDumps(join(dir, e.name))) || (e.isFile() && /^capture\.ya?ml$/.test(e.name)) ||
      (e.isFile() && /\.(ya?ml|json)$/.test(e.name) && holdsBundleObjects(head(join(dir, e.name), 4096)))
    );
  } catch {
    return false;
  }
}

/** Whether the start of a file is a one-file bundle, or names a kind of object bundles hold (`kind: List`, `"kind": "Pod"`…). */
function holdsBundleObjects(start: string): boolean {
  if (start.includes("kubectl-netpath/bundle")) return true;
  for (const m of start.matchAll(/(?:^|\n)\s*-?\s*kind:\s*["']?(\w+)|"kind"\s*:\s*"(\w+)"/g)) if (isBundleKind(m[1] ?? m[2]!)) return true;
  return false;
}

/**
 * Lists the files of a bundle directory without reading them: top-level files, and nodes/<node>/<file>.
 * A symbolic link is followed only when its real path stays inside the directory's real path: a bundle is data handed
 * over by someone else, and a link to `/etc/shadow` or `~/.kube/config` would have its content read and quoted in
 * messages (a parse error shows the offending line).
 * @throws {BundleError} when the directory has other subdirectories (several bundles, or not a bundle), too many
 *   files, a file (or a link to one) whose real path is outside the directory, or more bytes than `maxBytes`.
 */
function scanBundleDir(root: string, maxBytes: number): Found[] {
  const realRoot = realpathSync(root);
  const top = entries(root);
  const others = top.filter((e) => e.isDirectory() && e.name !== "nodes").map((e) => e.name).sort();
  if (others.length > 0) {
    const bundles = others.filter((d) => looksLikeBundle(join(root, d)));
    const list = (names: string[]) => names.slice(0, 8).join(", ") + (names.length > 8 ? `, … (${names.length} in all)` : "");
    if (bundles.length > 0) {
      throw new BundleError(
        `--from ${root} holds ${bundles.length > 1 ? "several bundles" : "a bundle in a subdirectory"} (${list(bundles)}), not one bundle: give one, e.g. --from ${join(root, bundles[0]!)}`,
      );
    }
    throw new BundleError(`--from ${root} does not look like a bundle directory (it has subdirectories ${list(others)}): ${BUNDLE_DIR_SHAPE}`);
  }
  const found: Found[] = [];
  let total = 0;
  const add = (full: string) => {
    const st = statOrExplain(full, `--from ${root}: ${relative(root, full)}`);
    // a link (of the file, or of its node directory, or a node directory itself) out of the bundle: its target is not
    // the bundle's to give; said before what the target is, which is none of the bundle's business
    const real = realpathSync(full);
    if (real !== realRoot && !real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)) {
      throw new BundleError(
        `--from ${root}: ${relative(root, full)} is a symbolic link to ${st.isFile() ? "a file" : "something"} outside the bundle directory, which is not read: give a bundle that holds ${st.isFile() ? "the file" : "it"} itself, not a link out of it`,
      );
    }
    // a FIFO, a device or a socket (or a link to one) is not read, and not skipped in silence: the answer would lack it
    if (!st.isFile()) throw new BundleError(`--from ${root}: ${relative(root, full)} is ${kindOf(st)}, not a file: check the bundle (put the file itself there, or remove it)`);
    total += st.size;
    found.push({ full, rel: relative(root, full).split(sep).join("/"), size: st.size });
    if (found.length > MAX_FILES) {
      throw new BundleError(`--from ${root} holds more than ${MAX_FILES} files: not one bundle (${BUNDLE_DIR_SHAPE})`);
    }
  };
  for (const e of top) {
    const full = join(root, e.name);
    if (!e.isDirectory()) add(full);
    else {
      for (const node of entries(full)) {
        const nodeDir = join(full, node.name);
        if (!node.isDirectory()) {
          add(nodeDir); // a file where a node's directory belongs: the decoder says so (bundleFromFiles)
          continue;
        }
        for (const f of entries(nodeDir)) {
          if (f.isDirectory()) {
            throw new BundleError(`--from ${root}: nodes/${node.name}/${f.name} is a directory: ${BUNDLE_DIR_SHAPE}`);
          }
          add(join(nodeDir, f.name));
        }
      }
    }
  }
  if (total > maxBytes) throw tooBig(`--from ${root} (all its files)`, total, maxBytes);
  return found;
}

/**
 * Reads a bundle file or directory.
 * @param path file or directory.
 * @param options the size limit.
 * @returns the bundle.
 * @throws {BundleError} when the path does not exist, is unreadable, too large (bytes; or YAML structure, see
 *   {@link DEFAULT_MAX_YAML_STRUCTURE_BYTES}), not a regular file or directory, or not (one) bundle; the message says
 *   what to do.
 */
export function readBundle(path: string, options: ReadBundleOptions = {}): Bundle {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BUNDLE_BYTES;
  const yamlLimit = options.maxBytes ?? DEFAULT_MAX_YAML_STRUCTURE_BYTES;
  const st = statOrExplain(path, `--from ${path}`);
  try {
    if (st.isDirectory()) {
      const all = scanBundleDir(path, maxBytes);
      const found = options.skip ? all.filter((f) => !options.skip!(f.rel)) : all;
      // Everything that holds objects was skipped (e.g. no pods.yaml when completing pods): nothing of that kind.
      if (found.length < all.length && found.every((f) => !/\.(ya?ml|json)$/.test(f.rel) || /^capture\.ya?ml$/.test(f.rel))) return emptyBundle({});
      for (const f of found) if (!f.rel.startsWith("nodes/") && /\.(ya?ml|json)$/.test(f.rel)) sniff(f.full, f.size, `${path}/${f.rel}`);
      const files: BundleFile[] = found.map((f) => ({ path: f.rel, text: readText(f.full) }));
      const yaml = files.reduce((n, f) => n + (!f.path.startsWith("nodes/") && /\.(ya?ml|json)$/.test(f.path) ? yamlStructureBytes(f.text) : 0), 0);
      if (yaml > yamlLimit) throw tooMuchYaml(`--from ${path} (its YAML files)`, yaml, yamlLimit, found.reduce((n, f) => n + f.size, 0));
      return bundleFromFiles(files, path);
    }
    if (!st.isFile()) throw new BundleError(`--from ${path} is ${kindOf(st)}: give a bundle file or directory (kubectl netpath capture -o FILE writes one)`);
    if (st.size > maxBytes) throw tooBig(`--from ${path}`, st.size, maxBytes);
    sniff(path, st.size, path);
    const text = readText(path);
    const yaml = yamlStructureBytes(text);
    if (yaml > yamlLimit) throw tooMuchYaml(`--from ${path}`, yaml, yamlLimit, st.size);
    return decodeBundle(text, path);
  } catch (e) {
    if (e instanceof BundleError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const where = (e as { path?: string }).path ?? path;
    if (code === "EACCES") throw new BundleError(`--from ${path}: permission denied reading ${where}: make it readable`);
    if (code === "EISDIR" || code === "ELOOP" || code === "EIO") throw new BundleError(`--from ${path}: cannot read ${where} (${code}): check the path`);
    // Only what says the input is too large to hold is said so: a string or buffer past the runtime's limit. Any other
    // RangeError (a call stack exceeded by a list spread into arguments was one) is a bug, reported as such.
    if (code === "ERR_STRING_TOO_LONG" || code === "ERR_FS_FILE_TOO_LARGE" || code === "ERR_BUFFER_TOO_LARGE" || (e instanceof RangeError && /^(Invalid string length|Array buffer allocation failed|Invalid array length)/.test(e.message))) {
      throw new BundleError(`--from ${path}: too large to read (${(e as Error).message}): give a smaller bundle`);
    }
    throw e;
  }
}
