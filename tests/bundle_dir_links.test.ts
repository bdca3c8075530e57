// A bundle directory is data handed over by someone else: a symbolic link in it whose real path leaves the directory
// (nodes/k8s1/iptables-save.txt → /etc/shadow, extra.yaml → ~/.kube/config) would have its target read, and quoted in
// the parse error that names the offending line. src/io/read_bundle.ts scanBundleDir refuses it, one line naming the
// link; a link that stays inside the directory is still read.
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BundleError } from "../src/bundle/decode.ts";
import { readBundle } from "../src/io/read_bundle.ts";

const T = mkdtempSync(join(tmpdir(), "netpath-links-"));
afterAll(() => rmSync(T, { recursive: true, force: true }));
const LAB = "examples/iptables-lab";
const SECRET_LINE = "root:$6$saltsalt$SECRETHASHVALUE:19000:0:99999:7:::";

/** The lab bundle copied to T/name, and a file outside it holding a secret-looking line. */
function lab(name: string): { dir: string; outside: string } {
  const dir = join(T, name);
  cpSync(LAB, dir, { recursive: true });
  const outside = join(T, `${name}-outside`);
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(outside, "shadow-like"), SECRET_LINE + "\n");
  writeFileSync(join(outside, "kubeconfig.yaml"), "apiVersion: v1\nkind: Config\nusers: [{name: u, user: {token: SECRET-TOKEN}}]\n");
  return { dir, outside };
}

function refusal(dir: string): BundleError {
  try {
    readBundle(dir);
  } catch (e) {
    return e as BundleError;
  }
  throw new Error(`${dir} was read`);
}

describe("symbolic links in a bundle directory", () => {
  it("a node dump linked to a file outside the bundle is refused, named, and its content never read", () => {
    const { dir, outside } = lab("dump-out");
    rmSync(join(dir, "nodes/k8s1/iptables-save.txt"));
    symlinkSync(join(outside, "shadow-like"), join(dir, "nodes/k8s1/iptables-save.txt"));
    const e = refusal(dir);
    expect(e).toBeInstanceOf(BundleError);
    expect(e.message).toBe(
      `--from ${dir}: nodes/k8s1/iptables-save.txt is a symbolic link to a file outside the bundle directory, which is not read: give a bundle that holds the file itself, not a link out of it`,
    );
    expect(e.message).not.toContain("SECRETHASH");
  });

  it("an object file linked outside the bundle is refused (extra.yaml → a kubeconfig)", () => {
    const { dir, outside } = lab("objects-out");
    symlinkSync(join(outside, "kubeconfig.yaml"), join(dir, "extra.yaml"));
    expect(refusal(dir).message).toMatch(/: extra\.yaml is a symbolic link to a file outside the bundle directory/);
  });

  it("a relative link climbing out through .. is refused", () => {
    const { dir } = lab("relative-out");
    symlinkSync(join("..", "..", "..", "relative-out-outside", "shadow-like"), join(dir, "nodes/k8s1/ip6tables-save.txt"));
    expect(refusal(dir).message).toMatch(/nodes\/k8s1\/ip6tables-save\.txt is a symbolic link to a file outside the bundle directory/);
  });

  it("a node directory linked outside the bundle: its files are outside, refused", () => {
    const { dir, outside } = lab("nodedir-out");
    mkdirSync(join(outside, "k8s2"));
    writeFileSync(join(outside, "k8s2", "iptables-save.txt"), SECRET_LINE + "\n");
    symlinkSync(join(outside, "k8s2"), join(dir, "nodes/k8s2"));
    expect(() => readBundle(dir)).toThrow(BundleError);
    expect(refusal(dir).message).not.toContain("SECRETHASH");
    // named for what it is: a link out of the bundle (it said "is a directory, not a file")
    expect(refusal(dir).message).toBe(`--from ${dir}: nodes/k8s2 is a symbolic link to something outside the bundle directory, which is not read: give a bundle that holds it itself, not a link out of it`);
  });

  it("a link that stays inside the bundle is read", () => {
    const { dir } = lab("inside");
    cpSync(join(dir, "nodes/k8s1"), join(dir, "nodes/k8s2"), { recursive: true });
    rmSync(join(dir, "nodes/k8s2/iptables-save.txt"));
    symlinkSync(join("..", "k8s1", "iptables-save.txt"), join(dir, "nodes/k8s2/iptables-save.txt"));
    const b = readBundle(dir);
    expect(b.nodes.map((n) => n.name)).toEqual(["k8s1", "k8s2"]);
    expect(b.nodes[1]!.sections["iptables-save"]!.stdout).toBe(b.nodes[0]!.sections["iptables-save"]!.stdout);
  });

  it("a bundle reached through a link to its directory is read (the root's real path is the reference)", () => {
    const { dir } = lab("via-link");
    symlinkSync(dir, join(T, "via-link-alias"));
    expect(readBundle(join(T, "via-link-alias")).nodes).toHaveLength(1);
  });
});
