// Audit roundtrip finding 1: `capture -o PATH` followed a symbolic link that another user had put at PATH (in a shared
// sticky directory such as /tmp) and replaced the file it named, changing that file's owner and mode. A link is now
// followed only as the kernel's protected_symlinks rule would (fs/namei.c may_follow_link), and never into another
// user's file; the bundle goes to a temporary file created O_EXCL 0600 beside the file replaced, renamed over it.
// The links are given to uid 65534 (nobody) with lchown, which needs root: the test is skipped for other users.
import { chmodSync, lchownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { afterAll, describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { run } from "./helpers/live_cli.ts";

const NOBODY = 65534;
const root = process.geteuid?.() === 0;
const T = mkdtempSync(join(tmpdir(), "netpath-capture-link-"));
const servers: FakeApiServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(T, { recursive: true, force: true });
});

/** A capture of svc/web (API objects only) to `out`. */
async function capture(out: string) {
  const s = await startFakeApiServer({ objects: readBundle("tests/fixtures/live/web").objects });
  servers.push(s);
  const r = await run(["capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", out]);
  // requests the API server answered: a refused -o path is refused before any collection
  return { ...r, requests: s.requests.length };
}

/** A root-owned 0644 file in a directory of its own, as /etc/… would be. */
function victim(name: string): string {
  const dir = join(T, `etc-${name}`);
  mkdirSync(dir);
  const f = join(dir, "victim.conf");
  writeFileSync(f, "precious\n");
  chmodSync(f, 0o644);
  return f;
}

/** A directory of mode `mode` (0o1777: a shared sticky directory like /tmp). */
function dir(name: string, mode: number): string {
  const d = join(T, name);
  mkdirSync(d);
  chmodSync(d, mode);
  return d;
}

describe.skipIf(!root)("capture -o through a symbolic link another user put there", () => {
  it("a link owned by nobody in a sticky world-writable directory: refused, the file it names untouched", async () => {
    const v = victim("sticky");
    const link = join(dir("sticky", 0o1777), "web.json");
    symlinkSync(v, link);
    lchownSync(link, NOBODY, NOBODY);
    const r = await capture(link);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: capture -o ${link}: ${link} is a symbolic link owned by uid 65534 (neither you nor root): another user may have put it there to make capture replace the file it points to: remove the link or choose another -o path (nothing was collected)\n`);
    expect(r.requests).toBe(0);
    expect(readFileSync(v, "utf8")).toBe("precious\n");
    expect([statSync(v).mode & 0o7777, statSync(v).uid]).toEqual([0o644, 0]);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(v);
  });

  it("a link owned by nobody in a directory that is not sticky: refused too (never follow another user's link)", async () => {
    const v = victim("plain");
    const link = join(dir("plain", 0o755), "web.json");
    symlinkSync(v, link);
    lchownSync(link, NOBODY, NOBODY);
    const r = await capture(link);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("is a symbolic link owned by uid 65534 (neither you nor root)");
    expect(readFileSync(v, "utf8")).toBe("precious\n");
  });

  it("a link of one's own that names another user's file: refused (a rename would replace that user's file)", async () => {
    const d = dir("theirs", 0o755);
    const theirs = join(d, "their.json");
    writeFileSync(theirs, "theirs\n");
    lchownSync(theirs, NOBODY, NOBODY);
    const link = join(dir("mine-to-theirs", 0o700), "web.json");
    symlinkSync(theirs, link);
    const r = await capture(link);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: capture -o ${link}: it is a symbolic link to ${theirs}, a file of uid 65534, not yours: remove the link or choose another -o path (nothing was collected)\n`);
    expect([readFileSync(theirs, "utf8"), statSync(theirs).uid]).toEqual(["theirs\n", NOBODY]);
  });

  it("a link of one's own (in the sticky directory, through a second link of one's own) to one's file: followed, 0600", async () => {
    const d = dir("own", 0o1777);
    const file = join(dir("own-store", 0o755), "latest.json");
    writeFileSync(file, "old\n");
    chmodSync(file, 0o644);
    symlinkSync(file, join(d, "hop"));
    const link = join(d, "web.json");
    symlinkSync("hop", link);
    const r = await capture(link);
    expect(r.code).toBe(0);
    expect(readFileSync(file, "utf8")).toMatch(/^\{\n\s*"format": "kubectl-netpath\/bundle"/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readlinkSync(link)).toBe("hop");
  });

  it("a hard link planted at the path given: the name is replaced by a new 0600 file, the file it shared untouched", async () => {
    const d = dir("hard", 0o1777);
    const v = victim("hard");
    const out = join(d, "web.json");
    // a hard link planted under the name: writing into it would write the victim; a rename replaces the name only
    const { linkSync } = await import("node:fs");
    linkSync(v, out);
    const r = await capture(out);
    expect(r.code).toBe(0);
    expect(readFileSync(v, "utf8")).toBe("precious\n");
    expect(statSync(out).mode & 0o777).toBe(0o600);
  });
});
