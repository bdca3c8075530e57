/**
 * The completion fast path's V8 code cache (src/cli/code_cache.ts), through the built executable as a TAB press runs
 * it: the cache is made at exit and used by the next press, private to the user, rejected by V8 when damaged, not
 * trusted when others can write it, and never changes an answer. KUBECTL_NETPATH_DEBUG=1 says what it did.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  appendFileSync,
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import Module from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { codeCacheDir } from "../src/cli/cache_dir.ts";
import { startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { spawnCollect } from "./helpers/spawn.ts";

const ROOT = join(import.meta.dirname, "..");
const CLI = join(ROOT, "dist", "kubectl-netpath.cjs");
const LAB = join(ROOT, "examples", "iptables-lab");
const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

function temp(): string {
  const d = mkdtempSync(join(tmpdir(), "netpath-code-cache-"));
  temps.push(d);
  return d;
}

/** A TAB press on `svc/` from the lab bundle: its answer, exit code, and the code cache's debug lines. */
function tab(env: Record<string, string>, cli = CLI) {
  const r = spawnSync(process.execPath, [cli, "complete", "--", "--from", LAB, "svc/"], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent", ...env },
  });
  return { status: r.status, out: r.stdout, stderr: r.stderr, cache: r.stderr.split("\n").filter((l) => l.startsWith("code cache:")) };
}

function cacheFiles(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".v8")) : [];
}

/** A cache directory after one press: XDG_CACHE_HOME, the cache directory, and the cache file's name and path. */
function primed(): { xdg: string; dir: string; name: string; file: string } {
  const xdg = temp();
  const dir = join(xdg, "kubectl-netpath");
  tab({ XDG_CACHE_HOME: xdg });
  const [name] = cacheFiles(dir);
  if (name === undefined) throw new Error(`no cache written in ${dir}`);
  return { xdg, dir, name, file: join(dir, name) };
}

const withoutCache = tab({ KUBECTL_NETPATH_CODE_CACHE: "off" });

describe("completion fast path: V8 code cache", () => {
  it("answers without a cache, and makes none when it is off", () => {
    expect(withoutCache.status).toBe(0);
    expect(withoutCache.out).toContain("svc/my-nginx-svc");
    const xdg = temp();
    const r = tab({ XDG_CACHE_HOME: xdg, KUBECTL_NETPATH_CODE_CACHE: "off", KUBECTL_NETPATH_DEBUG: "1" });
    expect(r.out).toBe(withoutCache.out);
    expect(r.cache).toEqual(["code cache: off (no cache directory (or KUBECTL_NETPATH_CODE_CACHE=off))"]);
    expect(readdirSync(xdg)).toEqual([]);
  });

  it("the first press writes a private cache named after the built text, the next uses it, with the same answer", () => {
    const xdg = temp();
    const dir = join(xdg, "kubectl-netpath");
    const first = tab({ XDG_CACHE_HOME: xdg, KUBECTL_NETPATH_DEBUG: "1" });
    expect(first.status).toBe(0);
    expect(first.out).toBe(withoutCache.out);
    const [name] = cacheFiles(dir);
    const digest = createHash("sha256").update(readFileSync(join(ROOT, "dist", "complete.cjs"))).digest("hex").slice(0, 32);
    expect(name).toMatch(new RegExp(`^complete-${digest}-\\d+-\\d+-${process.version.replace(/\./g, "\\.")}-${process.arch}\\.v8$`));
    expect(first.cache).toEqual([`code cache: written ${join(dir, name!)} (there was none)`]);
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(dir, name!)).mode & 0o777).toBe(0o600);
    expect(lstatSync(join(dir, name!)).size).toBeGreaterThan(10_000);
    // no temporary file left beside it
    expect(readdirSync(dir)).toEqual([name]);
    const second = tab({ XDG_CACHE_HOME: xdg, KUBECTL_NETPATH_DEBUG: "1" });
    expect(second.cache).toEqual([`code cache: used ${join(dir, name!)}`]);
    expect(second.out).toBe(withoutCache.out);
    // and with no debug, nothing on stderr
    const quiet = tab({ XDG_CACHE_HOME: xdg });
    expect(quiet.stderr).toBe("");
    expect(quiet.out).toBe(withoutCache.out);
  });

  it("a damaged cache (other bytes, cut short) is rejected by V8 and written anew; the answer stands", () => {
    const { xdg, file } = primed();
    const good = readFileSync(file);
    for (const damaged of [Buffer.alloc(good.length, 0x5a), good.subarray(0, good.length >> 1), Buffer.from("garbage")]) {
      writeFileSync(file, damaged, { mode: 0o600 });
      const r = tab({ XDG_CACHE_HOME: xdg, KUBECTL_NETPATH_DEBUG: "1" });
      expect(r.status).toBe(0);
      expect(r.out).toBe(withoutCache.out);
      expect(r.cache).toEqual([`code cache: written ${file} (V8 rejected the one there)`]);
      expect(tab({ XDG_CACHE_HOME: xdg, KUBECTL_NETPATH_DEBUG: "1" }).cache).toEqual([`code cache: used ${file}`]);
    }
  });

  it("a cache others can write, or a symbolic link in its place, is not read but replaced; a directory others can write is not used", () => {
    const { xdg, dir, name, file } = primed();
    chmodSync(file, 0o666);
    const open = tab({ XDG_CACHE_HOME: xdg, KUBECTL_NETPATH_DEBUG: "1" });
    expect(open.cache).toEqual([`code cache: written ${file} (the one there was not a private regular file)`]);
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    // a link to a valid cache elsewhere: not followed (O_NOFOLLOW), and the rename replaces the link, not its target
    const elsewhere = join(temp(), "valid.v8");
    cpSync(file, elsewhere);
    const before = readFileSync(elsewhere);
    rmSync(file);
    symlinkSync(elsewhere, file);
    const linked = tab({ XDG_CACHE_HOME: xdg, KUBECTL_NETPATH_DEBUG: "1" });
    expect(linked.cache).toEqual([`code cache: written ${file} (the one there was not a private regular file)`]);
    expect(lstatSync(file).isSymbolicLink()).toBe(false);
    expect(readFileSync(elsewhere).equals(before)).toBe(true);
    // the directory itself writable by others: nothing read there, nothing written
    chmodSync(dir, 0o777);
    const shared = tab({ XDG_CACHE_HOME: xdg, KUBECTL_NETPATH_DEBUG: "1" });
    expect(shared.out).toBe(withoutCache.out);
    expect(shared.cache).toEqual([`code cache: off (${dir} is not a directory of this user's that only it can write)`]);
    expect(readdirSync(dir)).toEqual([name]);
  });

  it("a cache directory that cannot be made: the answer stands, exit 0, and nothing on stderr without debug", () => {
    const xdg = join(temp(), "a-file");
    writeFileSync(xdg, "not a directory\n");
    const quiet = tab({ XDG_CACHE_HOME: xdg });
    expect(quiet).toMatchObject({ status: 0, out: withoutCache.out, stderr: "" });
    const said = tab({ XDG_CACHE_HOME: xdg, KUBECTL_NETPATH_DEBUG: "1" });
    expect(said.cache).toHaveLength(1);
    expect(said.cache[0]).toMatch(/^code cache: off \(not written: ENOTDIR/);
  });

  it.runIf(process.getuid?.() === 0)("as root with another user's home (sudo keeps HOME), nothing is made in that user's tree", () => {
    const home = temp();
    chmodSync(home, 0o755);
    chownSync(home, 65534, 65534);
    const r = tab({ HOME: home, KUBECTL_NETPATH_DEBUG: "1" });
    expect(r.out).toBe(withoutCache.out);
    expect(r.cache).toEqual([`code cache: off (not written: ${home} belongs to uid 65534, not root: no cache is made there as root (sudo keeps HOME?))`]);
    expect(readdirSync(home)).toEqual([]);
  });

  it("a script edited in place gets a cache of its own; the old one is removed, another Node's kept unless stale", () => {
    const xdg = temp();
    const dir = join(xdg, "kubectl-netpath");
    const dist = join(temp(), "dist");
    cpSync(join(ROOT, "dist"), dist, { recursive: true });
    const cli = join(dist, "kubectl-netpath.cjs");
    tab({ XDG_CACHE_HOME: xdg }, cli);
    const [old] = cacheFiles(dir);
    // another Node's cache (kept: a user may switch between versions), and one not used for 40 days (removed)
    const otherNode = old!.replace(`-${process.version}-`, "-v99.0.0-");
    const staleNode = old!.replace(`-${process.version}-`, "-v98.0.0-");
    writeFileSync(join(dir, otherNode), "x", { mode: 0o600 });
    writeFileSync(join(dir, staleNode), "x", { mode: 0o600 });
    const forty = new Date(Date.now() - 40 * 24 * 3600 * 1000);
    utimesSync(join(dir, staleNode), forty, forty);
    appendFileSync(join(dist, "complete.cjs"), "\n// edited\n");
    const r = tab({ XDG_CACHE_HOME: xdg, KUBECTL_NETPATH_DEBUG: "1" }, cli);
    expect(r.out).toBe(withoutCache.out);
    const now = cacheFiles(dir).filter((n) => n !== otherNode);
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(old);
    expect(r.cache).toEqual([`code cache: written ${join(dir, now[0]!)} (there was none)`]);
    expect(readdirSync(dir).sort()).toEqual([now[0], otherNode].sort());
  });

  it("names from a cluster (the fast path's import of live-lookup.mjs) come the same from cached code", async () => {
    const svc = (name: string) => ({ apiVersion: "v1", kind: "Service", metadata: { name, namespace: "default" }, spec: { type: "ClusterIP" as const, clusterIP: "10.96.7.7", ports: [{ port: 80 }] } });
    const api = await startFakeApiServer({ objects: { services: [svc("web"), svc("db")] } });
    try {
      const xdg = temp();
      const env = { PATH: process.env.PATH ?? "", HOME: "/nonexistent", XDG_CACHE_HOME: xdg, KUBECONFIG: api.kubeconfig, KUBECTL_NETPATH_DEBUG: "1" };
      const press = () => spawnCollect(process.execPath, [CLI, "complete", "--", "svc/"], { env });
      const first = await press();
      const second = await press();
      const off = await spawnCollect(process.execPath, [CLI, "complete", "--", "svc/"], { env: { ...env, KUBECTL_NETPATH_CODE_CACHE: "off" } });
      expect(first.stderr).toMatch(/code cache: written .* \(there was none\)/);
      expect(second.stderr).toMatch(/code cache: used /);
      expect(off.stdout).toMatch(/^svc\/db\b/m);
      expect(off.stdout).toMatch(/^svc\/web\b/m);
      expect(first.stdout).toBe(off.stdout);
      expect(second.stdout).toBe(off.stdout);
    } finally {
      await api.close();
    }
  });
});

describe("a command: Node's own compile cache (module.enableCompileCache, Node >= 22.1)", () => {
  const nodeHasOne = typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === "function";
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, [CLI, "svc/testsvc", "--from", join(ROOT, "examples", "lb-legacy")], {
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent", ...env },
    });
  const plain = run({ KUBECTL_NETPATH_CODE_CACHE: "off" });

  it.runIf(nodeHasOne)("is kept in node-compile-cache/ of the private cache directory, and changes no answer", () => {
    const xdg = temp();
    const dir = join(xdg, "kubectl-netpath", "node-compile-cache");
    const first = run({ XDG_CACHE_HOME: xdg });
    expect(first.status).toBe(0);
    expect(first.stdout).toBe(plain.stdout);
    expect(lstatSync(join(xdg, "kubectl-netpath")).mode & 0o777).toBe(0o700);
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    // Node writes its entries at exit, under a directory of its own naming (its version and V8's)
    const entries = readdirSync(dir, { recursive: true }).filter((n) => lstatSync(join(dir, String(n))).isFile());
    expect(entries.length).toBeGreaterThan(0);
    expect(run({ XDG_CACHE_HOME: xdg }).stdout).toBe(plain.stdout);
    // off: no directory at all
    const off = temp();
    expect(run({ XDG_CACHE_HOME: off, KUBECTL_NETPATH_CODE_CACHE: "off" }).stdout).toBe(plain.stdout);
    expect(readdirSync(off)).toEqual([]);
  });

  it.runIf(!nodeHasOne)("on a Node without one (20), a command makes no cache directory", () => {
    const xdg = temp();
    const r = run({ XDG_CACHE_HOME: xdg });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(plain.stdout);
    expect(readdirSync(xdg)).toEqual([]);
  });
});

describe("codeCacheDir", () => {
  const cases: { name: string; env: Record<string, string>; platform: string; home: string; want: string | undefined }[] = [
    { name: "XDG_CACHE_HOME, absolute", env: { XDG_CACHE_HOME: "/x/cache" }, platform: "linux", home: "/home/u", want: "/x/cache/kubectl-netpath" },
    { name: "XDG_CACHE_HOME relative is ignored (XDG base directory spec)", env: { XDG_CACHE_HOME: "rel" }, platform: "linux", home: "/home/u", want: "/home/u/.cache/kubectl-netpath" },
    { name: "Linux default", env: {}, platform: "linux", home: "/home/u", want: "/home/u/.cache/kubectl-netpath" },
    { name: "macOS", env: {}, platform: "darwin", home: "/Users/u", want: "/Users/u/Library/Caches/kubectl-netpath" },
    { name: "no home", env: {}, platform: "linux", home: "", want: undefined },
    { name: "off", env: { KUBECTL_NETPATH_CODE_CACHE: "off", XDG_CACHE_HOME: "/x" }, platform: "linux", home: "/home/u", want: undefined },
    { name: "Windows without LOCALAPPDATA", env: {}, platform: "win32", home: "C:\\Users\\u", want: undefined },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(codeCacheDir(c.env, c.platform, c.home)).toBe(c.want);
    });
  }
});
