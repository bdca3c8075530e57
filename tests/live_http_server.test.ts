// A plain http:// API server address — kubectl proxy's `http://127.0.0.1:PORT` — as kubectl accepts it: the run talks
// plain HTTP to it (client-node needs insecure-skip-tls-verify for that, which kubeconfig.ts sets: no TLS to verify).
// kubectl proxy refuses exec by default (--reject-paths ^/api/.*/pods/.*/exec) with a plain-text "Forbidden": the node
// quotes it, names the proxy, and no debug pod is created in the same namespace.
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { run } from "./helpers/live_cli.ts";
import { findTool } from "./helpers/netns.ts";

const web = readBundle("tests/fixtures/live/web");

describe("an http:// server (kubectl proxy)", () => {
  let s: FakeApiServer;
  let proxy: ChildProcess;
  let kubeconfig = "";
  beforeAll(async () => {
    const kubectl = findTool("kubectl");
    expect(kubectl, "kubectl must be installed (scripts/ci-setup.sh)").toBeDefined();
    s = await startFakeApiServer({ objects: web.objects });
    proxy = spawn(kubectl!, ["proxy", "--kubeconfig", s.kubeconfig, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    const port = await new Promise<number>((resolve, reject) => {
      let out = "";
      proxy.stdout!.on("data", (b: Buffer) => {
        out += b.toString("utf8");
        const m = /Starting to serve on 127\.0\.0\.1:(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      proxy.on("exit", (code) => reject(new Error(`kubectl proxy exited ${code}`)));
    });
    kubeconfig = join(s.dir, "kubeconfig-proxy");
    // as a user writes one for kubectl proxy: a server, no CA, no user
    writeFileSync(kubeconfig, JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "proxy",
      clusters: [{ name: "proxy", cluster: { server: `http://127.0.0.1:${port}` } }],
      contexts: [{ name: "proxy", context: { cluster: "proxy" } }],
      users: [],
    }));
  }, 30_000);
  afterAll(async () => {
    proxy?.kill();
    await s?.close();
  });

  it("--no-exec: answered over plain HTTP, as kubectl does", async () => {
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", kubeconfig, "--no-exec"]);
    expect(r.stderr).toBe("warning: the bundle holds no node state: only the API side was analysed\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Service default/web  type NodePort  ClusterIP 10.96.119.228");
    expect(s.requests.some((x) => x.path === "/api/v1/namespaces/default/services/web")).toBe(true);
  });

  it("exec through kubectl proxy is refused with plain text: quoted, the proxy named, no debug pod made", async () => {
    const before = s.requests.length;
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", kubeconfig, "--node", "k8s-guide-worker"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'not analysed: the kube-proxy pod kube-proxy-k8s-guide-worker cannot be used: could not exec into pod "kube-proxy-k8s-guide-worker" in namespace "kube-system": ' +
        "Error from server (Forbidden): Forbidden (a plain-text answer, not the API server's Status: a proxy between refused it; kubectl proxy refuses exec unless its --reject-paths allows it)",
    );
    expect(s.requests.slice(before).filter((x) => x.method === "POST" && x.path.endsWith("/pods"))).toEqual([]);
    expect(s.debugPods()).toEqual([]);
  });
});
