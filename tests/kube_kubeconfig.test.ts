// Finding and loading the kubeconfig as kubectl does: --kubeconfig, KUBECONFIG (several files), ~/.kube/config,
// in-cluster; --context; the context's namespace; tokenFile; and the messages when something is missing.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { KubeconfigError } from "../src/kube/errors.ts";
import { loadKubeconfig } from "../src/kube/kubeconfig.ts";

function dir(): string {
  return mkdtempSync(join(tmpdir(), "knp-kubeconfig-"));
}
function kc(o: { current?: string; contexts?: [string, string, string?, string?][]; clusters?: [string, string][]; users?: [string, Record<string, unknown>][] }): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    ...(o.current ? { "current-context": o.current } : {}),
    contexts: (o.contexts ?? []).map(([name, cluster, user, namespace]) => ({ name, context: { cluster, ...(user ? { user } : {}), ...(namespace ? { namespace } : {}) } })),
    clusters: (o.clusters ?? []).map(([name, server]) => ({ name, cluster: { server, "insecure-skip-tls-verify": true } })),
    users: (o.users ?? []).map(([name, user]) => ({ name, user })),
  });
}

describe("loadKubeconfig", () => {
  it("~/.kube/config with current-context and its namespace", async () => {
    const home = dir();
    mkdirSync(join(home, ".kube"));
    writeFileSync(join(home, ".kube", "config"), kc({ current: "dev", contexts: [["dev", "c", "u", "shop"]], clusters: [["c", "https://10.0.0.1:6443"]], users: [["u", { token: "t" }]] }));
    const l = await loadKubeconfig({ env: { HOME: home }, cwd: "/" });
    expect([l.context, l.namespace, l.server, l.user, l.sources]).toEqual(["dev", "shop", "https://10.0.0.1:6443", "u", [join(home, ".kube", "config")]]);
  });

  it("KUBECONFIG: relative paths from cwd, missing files skipped, --context picks another context, namespace default", async () => {
    const d = dir();
    writeFileSync(join(d, "a"), kc({ current: "one", contexts: [["one", "c1"]], clusters: [["c1", "https://one"]] }));
    writeFileSync(join(d, "b"), kc({ contexts: [["two", "c2"]], clusters: [["c2", "https://two"]] }));
    const l = await loadKubeconfig({ env: { KUBECONFIG: "a:nope:b" }, cwd: d, context: "two" });
    expect([l.context, l.namespace, l.server, l.sources]).toEqual(["two", "default", "https://two", [join(d, "a"), join(d, "b")]]);
  });

  it("--kubeconfig wins over KUBECONFIG", async () => {
    const d = dir();
    writeFileSync(join(d, "flag"), kc({ current: "f", contexts: [["f", "c"]], clusters: [["c", "https://flag"]] }));
    const l = await loadKubeconfig({ env: { KUBECONFIG: "/nonexistent" }, cwd: d, kubeconfig: "flag" });
    expect(l.server).toBe("https://flag");
  });

  it("tokenFile is read (trimmed) relative to the kubeconfig's directory", async () => {
    const d = dir();
    writeFileSync(join(d, "token"), "s3cr3t\n");
    writeFileSync(join(d, "config"), kc({ current: "x", contexts: [["x", "c", "u"]], clusters: [["c", "https://x"]], users: [["u", { tokenFile: "token" }]] }));
    const l = await loadKubeconfig({ env: {}, cwd: "/", kubeconfig: join(d, "config") });
    const opts: { headers?: Record<string, string> } = {};
    await l.kc.applyToHTTPSOptions(opts as never);
    expect(opts.headers?.Authorization).toBe("Bearer s3cr3t");
  });

  it("in-cluster: KUBERNETES_SERVICE_HOST/PORT and the service account", async () => {
    const sa = dir();
    writeFileSync(join(sa, "token"), "sa-token");
    writeFileSync(join(sa, "namespace"), "monitoring");
    writeFileSync(join(sa, "ca.crt"), "");
    const l = await loadKubeconfig({ env: { HOME: "/nonexistent", KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" }, cwd: "/", serviceAccountDir: sa });
    expect([l.context, l.namespace, l.server, l.sources]).toEqual(["in-cluster", "monitoring", "https://10.96.0.1:443", ["in-cluster"]]);
  });

  const d = dir();
  writeFileSync(join(d, "ok"), kc({ current: "a", contexts: [["a", "c", "u"], ["b", "missing"], ["nouser", "c", "ghost"]], clusters: [["c", "https://c"]], users: [["u", { token: "t" }]] }));
  writeFileSync(join(d, "nocurrent"), kc({ contexts: [["a", "c"]], clusters: [["c", "https://c"]] }));
  writeFileSync(join(d, "bad"), "clusters: [\n");
  writeFileSync(join(d, "noserver"), JSON.stringify({ "current-context": "a", contexts: [{ name: "a", context: { cluster: "c" } }], clusters: [{ name: "c", cluster: {} }] }));
  writeFileSync(join(d, "badurl"), kc({ current: "a", contexts: [["a", "c"]], clusters: [["c", "not a url"]] }));
  writeFileSync(join(d, "ftp"), kc({ current: "a", contexts: [["a", "c"]], clusters: [["c", "ftp://127.0.0.1:21"]] }));
  writeFileSync(join(d, "cafile"), JSON.stringify({ "current-context": "a", contexts: [{ name: "a", context: { cluster: "c", user: "u" } }], clusters: [{ name: "c", cluster: { server: "https://c", "certificate-authority": "/nonexistent/ca.crt" } }], users: [{ name: "u", user: { token: "t" } }] }));
  writeFileSync(join(d, "keyfile"), JSON.stringify({ "current-context": "a", contexts: [{ name: "a", context: { cluster: "c", user: "u" } }], clusters: [{ name: "c", cluster: { server: "https://c", "insecure-skip-tls-verify": true } }], users: [{ name: "u", user: { "client-certificate": d, "client-key": "/nonexistent/c.key" } }] }));
  mkdirSync(join(d, "adir"));
  it.each([
    { name: "unknown --context", o: { kubeconfig: join(d, "ok"), context: "prod" }, want: `context "prod" not found in kubeconfig ${join(d, "ok")} (contexts: a, b, nouser)` },
    { name: "context naming a missing cluster", o: { kubeconfig: join(d, "ok"), context: "b" }, want: `context "b" refers to cluster "missing", which is not in kubeconfig ${join(d, "ok")}` },
    { name: "context naming a missing user", o: { kubeconfig: join(d, "ok"), context: "nouser" }, want: `context "nouser" refers to user "ghost", which is not in kubeconfig ${join(d, "ok")}` },
    { name: "no current-context", o: { kubeconfig: join(d, "nocurrent") }, want: `no current-context is set in kubeconfig ${join(d, "nocurrent")}: pass --context (contexts: a)` },
    { name: "invalid YAML", o: { kubeconfig: join(d, "bad") }, want: `kubeconfig ${join(d, "bad")} is not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1` },
    { name: "cluster without server", o: { kubeconfig: join(d, "noserver") }, want: `kubeconfig ${join(d, "noserver")}: clusters[0].cluster.server is missing` },
    { name: "KUBECONFIG of missing files", o: { env: { KUBECONFIG: "/nope/a:/nope/b" } }, want: "none of the files in KUBECONFIG exists (/nope/a, /nope/b)" },
    { name: "a server that is not a URL", o: { kubeconfig: join(d, "badurl") }, want: `cluster "c" of context "a" has server "not a url", not an https:// URL: fix clusters[].cluster.server in kubeconfig ${join(d, "badurl")}` },
    { name: "a server of another scheme", o: { kubeconfig: join(d, "ftp") }, want: `cluster "c" of context "a" has server "ftp://127.0.0.1:21", not an https:// URL: fix clusters[].cluster.server in kubeconfig ${join(d, "ftp")}` },
    { name: "a certificate-authority file that does not exist", o: { kubeconfig: join(d, "cafile") }, want: `cluster "c" certificate-authority /nonexistent/ca.crt does not exist: fix the path in kubeconfig ${join(d, "cafile")}` },
    { name: "a client-certificate that is a directory", o: { kubeconfig: join(d, "keyfile") }, want: `user "u" client-certificate ${d} is not a file: fix the path in kubeconfig ${join(d, "keyfile")}` },
    { name: "--kubeconfig a directory", o: { kubeconfig: join(d, "adir") }, want: `kubeconfig ${join(d, "adir")} is a directory, not a file: pass --kubeconfig FILE` },
    { name: "--kubeconfig /dev/zero (read, it never ends)", o: { kubeconfig: "/dev/zero" }, want: "kubeconfig /dev/zero is a character device, not a file: pass --kubeconfig FILE" },
  ])("$name", async ({ o, want }) => {
    await expect(loadKubeconfig({ env: {}, cwd: "/", ...o })).rejects.toThrow(new KubeconfigError(want));
  });
});
