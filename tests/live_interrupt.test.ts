// Ctrl-C (SIGINT) during a multi-node live run, with the executable's own entry (src/cli/bin.ts): the run's aborted
// requests reject ("cancelled"), which is no error of the run. The exit status must be 130 (128 + SIGINT, as a shell
// reports a Ctrl-C), stderr only the handler's "interrupted: deleting …" line, and no debug pod left behind.
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { type Fault, type FakeApiServer, type RecordedRequest, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { buildCli } from "./helpers/live_cli.ts";

const web = readBundle("tests/fixtures/live/web");
const isCreate = (r: RecordedRequest) => r.method === "POST" && r.path === "/api/v1/namespaces/kube-system/pods";

describe("SIGINT during a multi-node live run", () => {
  let cli: Awaited<ReturnType<typeof buildCli>>;
  beforeAll(async () => {
    cli = await buildCli({ entry: "bin" });
  });
  afterAll(() => cli?.remove());

  function start(s: FakeApiServer, extra: string[] = []): { child: ChildProcess; done: Promise<{ code: number | null; signal: string | null; stderr: string; stdout: string }> } {
    // both nodes of the Service's endpoints, no kube-proxy pods: a debug pod on each
    const child = spawn(process.execPath, [cli.js, "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--timeout", "20s", ...extra], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let stdout = "";
    child.stderr!.on("data", (b: Buffer) => (stderr += b.toString("utf8")));
    child.stdout!.on("data", (b: Buffer) => (stdout += b.toString("utf8")));
    const done = new Promise<{ code: number | null; signal: string | null; stderr: string; stdout: string }>((r) => child.on("close", (code, signal) => r({ code, signal, stderr, stdout })));
    return { child, done };
  }

  const cases: { name: string; faults: Fault[]; startDelayMs: number; afterMs: number; creates: number }[] = [
    // the pods exist and wait to be Running (their watches are aborted)
    { name: "while the debug pods start (early)", faults: [], startDelayMs: 4000, afterMs: 150, creates: 2 },
    { name: "while the debug pods start (late)", faults: [], startDelayMs: 4000, afterMs: 900, creates: 2 },
    { name: "while the debug pods start (later)", faults: [], startDelayMs: 4000, afterMs: 1600, creates: 2 },
    // the creates are on the wire (aborted: "request cancelled: POST …")
    { name: "while the creates are in flight", faults: [{ method: "POST", path: /\/namespaces\/kube-system\/pods$/, delayMs: 800 }], startDelayMs: 4000, afterMs: 100, creates: 1 },
  ];

  it.each(cases)("$name: exit 130, only the interrupted line, no pod left", async (c) => {
    const s = await startFakeApiServer({ objects: web.objects, kubeProxyPods: false, faults: c.faults, pods: { startDelayMs: c.startDelayMs } });
    try {
      const { child, done } = start(s);
      let seen = 0;
      await s.waitForArrival((r) => isCreate(r) && ++seen >= c.creates);
      await new Promise((r) => setTimeout(r, c.afterMs));
      child.kill("SIGINT");
      const res = await done;
      await new Promise((r) => setTimeout(r, 300)); // a create that was in flight is answered, then deleted
      expect(s.debugPods().map((p) => p.metadata.name)).toEqual([]);
      expect(res.signal).toBeNull();
      expect(res.code).toBe(130);
      expect(res.stdout).toBe("");
      const lines = res.stderr.split("\n").filter((l) => l.trim() !== "");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^interrupted: deleting [12] debug pods? \(kube-system\/kubectl-netpath-k8s-guide-worker2?-[a-z0-9]{5}(, kube-system\/kubectl-netpath-k8s-guide-worker2?-[a-z0-9]{5})?\)…$/);
      expect(res.stderr).not.toMatch(/error:|cancelled/);
    } finally {
      await s.close();
    }
  });

  // --debug-namespace other than kube-system: `kubectl netpath cleanup` alone looks in kube-system and finds nothing
  it("a pod the handler cannot delete in --debug-namespace: the cleanup command names -n NS", async () => {
    const s = await startFakeApiServer({ objects: web.objects, kubeProxyPods: false, denials: [{ verb: "delete", resource: "pods", namespace: "netpath-debug" }], faults: [{ path: /selfsubjectaccessreviews$/, status: 500 }], pods: { startDelayMs: 4000 } });
    try {
      const { child, done } = start(s, ["--node", "k8s-guide-worker", "--debug-namespace", "netpath-debug"]);
      await s.waitForArrival((r) => r.method === "POST" && r.path === "/api/v1/namespaces/netpath-debug/pods");
      await new Promise((r) => setTimeout(r, 300));
      child.kill("SIGINT");
      const res = await done;
      expect(res.code).toBe(130);
      expect(res.stderr).toMatch(/could not delete debug pod netpath-debug\/kubectl-netpath-k8s-guide-worker-[a-z0-9]{5} \(not allowed to delete pods .*\); it stops on its own at its deadline \(activeDeadlineSeconds\) — then remove it with: kubectl netpath cleanup -n netpath-debug\n/);
    } finally {
      await s.close();
    }
  });

  it("interrupted again while deleting in --debug-namespace: the cleanup command names -n NS", async () => {
    const s = await startFakeApiServer({ objects: web.objects, kubeProxyPods: false, faults: [{ method: "DELETE", path: /\/pods\/kubectl-netpath-/, delayMs: 3000 }], pods: { startDelayMs: 4000 } });
    try {
      const { child, done } = start(s, ["--node", "k8s-guide-worker", "--debug-namespace", "netpath-debug"]);
      await s.waitForArrival((r) => r.method === "POST" && r.path === "/api/v1/namespaces/netpath-debug/pods");
      await new Promise((r) => setTimeout(r, 300));
      child.kill("SIGINT");
      await s.waitForArrival((r) => r.method === "DELETE");
      child.kill("SIGINT");
      const res = await done;
      expect(res.code).toBe(130);
      expect(res.stderr).toContain("interrupted again: exiting without waiting; leftover pods stop on their own (activeDeadlineSeconds) — then remove them with: kubectl netpath cleanup -n netpath-debug\n");
      await new Promise((r) => setTimeout(r, 3200)); // the delete on the wire completes
    } finally {
      await s.close();
    }
  });
});
