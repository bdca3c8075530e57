// Killing the plugin at each phase of a live run — SIGINT (Ctrl-C) and SIGKILL — and checking what it leaves in
// the cluster: after SIGINT no debug pod may remain; after SIGKILL (which cannot be handled) every remaining debug
// pod must carry activeDeadlineSeconds (the fake kubelet then fails it with DeadlineExceeded, as a real one would),
// and `kubectl netpath cleanup` must remove it. The plugin runs as a child process (the built CLI).
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import type { Pod } from "../src/model/k8s.ts";
import { type Fault, type FakeApiServer, type RecordedRequest, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { type FakeNode, startFakeNode } from "./helpers/fake_nodes.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";
import { buildCli, run } from "./helpers/live_cli.ts";
import { requireNetns } from "./helpers/netns.ts";

const web = readBundle("tests/fixtures/live/web");

interface Phase {
  name: string;
  /** The request whose arrival means "the plugin is in this phase now". */
  at: (r: RecordedRequest) => boolean;
  faults?: Fault[];
  startDelayMs?: number;
  execDelayMs?: number;
  /** Whether a debug pod can exist when the kill lands. */
  podPossible: boolean;
}

const isDebug = (r: RecordedRequest) => /\/pods\/kubectl-netpath-/.test(r.path);
const PHASES: Phase[] = [
  { name: "API reads", at: (r) => r.path.endsWith("/endpointslices"), faults: [{ path: /endpointslices$/, delayMs: 1500 }], podPossible: false },
  { name: "permission checks", at: (r) => r.path.endsWith("/selfsubjectaccessreviews"), faults: [{ path: /selfsubjectaccessreviews$/, delayMs: 1500 }], podPossible: false },
  { name: "pod create in flight", at: (r) => r.method === "POST" && r.path.endsWith("/pods"), faults: [{ method: "POST", path: /\/pods$/, delayMs: 800 }], podPossible: true },
  { name: "waiting for Running", at: (r) => r.method === "POST" && r.path.endsWith("/pods"), startDelayMs: 5000, podPossible: true },
  { name: "exec running", at: (r) => r.kind === "exec" && isDebug(r), execDelayMs: 3000, podPossible: true },
  { name: "delete in flight", at: (r) => r.method === "DELETE" && isDebug(r), faults: [{ method: "DELETE", path: /\/pods\/kubectl-netpath-/, delayMs: 1500 }], podPossible: true },
];

describe.runIf(requireNetns(["nc", "curl", "ss"]))("killing the plugin at each phase leaves no debug pod behind", () => {
  let node: FakeNode;
  let cli: Awaited<ReturnType<typeof buildCli>>;
  const tally = { cases: 0, leaked: 0, reapedByDeadline: 0 };
  beforeAll(async () => {
    node = await startFakeNode("k8s-guide-worker", { rules: { text: kubeProxyRules(web.objects.services, web.objects.endpointSlices, "10.244.0.0/16"), backend: "nft" } });
    cli = await buildCli();
  });
  afterAll(async () => {
    await node?.stop();
    cli?.remove();
    console.info(`[live-faults] ${tally.cases} kill cases (6 phases × SIGINT/SIGKILL); debug pods leaked: ${tally.leaked}; left by SIGKILL and reaped by activeDeadlineSeconds then removed by cleanup: ${tally.reapedByDeadline}`);
  });

  function start(s: FakeApiServer): { child: ChildProcess; done: Promise<{ code: number | null; signal: string | null; stderr: string }> } {
    const child = spawn(process.execPath, [cli.js, "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker", "--timeout", "20s"], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (b: Buffer) => (stderr += b.toString("utf8")));
    child.stdout!.resume();
    const done = new Promise<{ code: number | null; signal: string | null; stderr: string }>((r) => child.on("close", (code, signal) => r({ code, signal, stderr })));
    return { child, done };
  }

  async function server(p: Phase, msPerDeadlineSecond = 1000): Promise<FakeApiServer> {
    return await startFakeApiServer({
      objects: web.objects,
      kubeProxyPods: false,
      faults: p.faults ?? [],
      pods: { startDelayMs: p.startDelayMs ?? 100, msPerDeadlineSecond },
      exec: { netnsFor: (n) => (n === "k8s-guide-worker" ? node.netns.name : undefined), ...(p.execDelayMs ? { delayMs: p.execDelayMs } : {}) },
    });
  }

  it.each(PHASES)("SIGINT during $name: no debug pod left", async (p) => {
    const s = await server(p);
    try {
      const { child, done } = start(s);
      await s.waitForArrival(p.at);
      await new Promise((r) => setTimeout(r, 100));
      child.kill("SIGINT");
      const res = await done;
      tally.cases++;
      // settle: a create that was in flight is answered, then deleted by the handler
      await new Promise((r) => setTimeout(r, 300));
      const left = s.debugPods();
      tally.leaked += left.length;
      expect(left.map((x) => x.metadata.name)).toEqual([]);
      // before any pod exists the default action of SIGINT ends the process; once a pod may exist, the handler
      // deletes it and exits 130 (128 + SIGINT), as the shell reports a Ctrl-C
      if (p.podPossible) expect(res.code).toBe(130);
      else expect(res.signal).toBe("SIGINT");
      if (p.podPossible) expect(res.stderr).toMatch(/interrupted: deleting 1 debug pod \(kube-system\/kubectl-netpath-k8s-guide-worker-[a-z0-9]{5}\)…/);
    } finally {
      await s.close();
    }
  });

  it.each(PHASES)("SIGKILL during $name: any pod left has activeDeadlineSeconds, is reaped by it, and cleanup removes it", async (p) => {
    const s = await server(p, 20); // the fake kubelet counts 20 ms per deadline second
    try {
      const { child, done } = start(s);
      await s.waitForArrival(p.at);
      await new Promise((r) => setTimeout(r, 100));
      child.kill("SIGKILL");
      const res = await done;
      tally.cases++;
      expect(res.signal).toBe("SIGKILL");
      await new Promise((r) => setTimeout(r, 1000)); // requests already on the wire complete server-side
      const left = s.debugPods();
      if (!p.podPossible) expect(left).toEqual([]);
      for (const pod of left) {
        const deadline = pod.spec?.activeDeadlineSeconds as number | undefined;
        expect(deadline, `${pod.metadata.name} has no activeDeadlineSeconds`).toBe(80); // --timeout 20s + 60
        // the kubelet fails it when the deadline passes (80 × 20 ms here)
        await waitFor(() => (s.get("pods", "kube-system", pod.metadata.name) as Pod | undefined)?.status?.phase === "Failed", 5000);
        expect((s.get("pods", "kube-system", pod.metadata.name) as Pod).status?.reason).toBe("DeadlineExceeded");
        tally.reapedByDeadline++;
      }
      const c = await run(["cleanup", "--kubeconfig", s.kubeconfig]);
      expect(c.code).toBe(0);
      const after = s.debugPods();
      tally.leaked += after.length;
      expect(after).toEqual([]);
    } finally {
      await s.close();
    }
  });
});

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}
