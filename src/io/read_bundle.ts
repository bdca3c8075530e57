/**
 * Edge: reads a bundle from disk (`--from PATH`), a one-file bundle or a bundle directory (docs/bundle.md).
 * Uses `node:fs`, which Node and Deno 2 both provide.
 * @module
 */
import { isAscii } from "node:buffer";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type { Bundle } from "../bundle/bundle.ts";
import { BundleError, type BundleFile, bundleFromFiles, decodeBundle } from "../bundle/decode.ts";

/** Largest file read into a bundle (a 10,000-Service iptables-save is ~30 MB). */
const MAX_FILE_BYTES = 512 * 1024 * 1024;

function walk(dir: string, root: string, out: BundleFile[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) walk(full, root, out);
    else if (entry.isFile()) out.push({ path: relative(root, full).split(sep).join("/"), text: readText(full) });
  }
}

function readText(path: string): string {
  const size = statSync(path).size;
  if (size > MAX_FILE_BYTES) throw new BundleError(`${path} is ${size} bytes, more than the ${MAX_FILE_BYTES} a bundle file may have`);
  const bytes = readFileSync(path);
  // Dumps are ASCII: a one-byte (latin1) string is the same text, made with one copy instead of a UTF-8 decode (on
  // Node 20, 13 ms against 48 ms for a 26 MB iptables-save). Anything else is decoded as UTF-8.
  return typeof isAscii === "function" && isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
}

/**
 * Reads a bundle file or directory.
 * @param path file or directory.
 * @returns the bundle.
 * @throws {BundleError} when the path does not exist, is unreadable, or is not a bundle; the message says what to do.
 */
export function readBundle(path: string): Bundle {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new BundleError(`--from ${path}: no such file or directory`);
    if (code === "EACCES") throw new BundleError(`--from ${path}: permission denied`);
    throw new BundleError(`--from ${path}: ${(e as Error).message}`);
  }
  try {
    if (st.isDirectory()) {
      const files: BundleFile[] = [];
      walk(path, path, files);
      return bundleFromFiles(files, path);
    }
    return decodeBundle(readText(path), path);
  } catch (e) {
    if (e instanceof BundleError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EACCES") throw new BundleError(`--from ${path}: permission denied reading ${(e as { path?: string }).path ?? path}`);
    throw e;
  }
}
