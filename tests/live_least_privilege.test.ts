// Issue 13 defect 4: the debug pod asks for the least privilege that works, and it does work. `--dry-run` prints the
// manifest with every field of the securityContext; a live run whose debug pod's commands run as a container runtime
// would run them under exactly that securityContext (tests/helpers/fake_runtime.ts: setpriv with the bounding set
// NET_ADMIN+NET_RAW, no_new_privs, read-only root with a tmpfs at the emptyDir /run) gives the same report as an
// unconfined run, on both iptables backends; and with the capabilities taken away the collection fails and the
// report says so.
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseCollectionOutput } from "../src/bundle/collection_output.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { buildDebugPod, DEFAULT_IMAGE } from "../src/kube/debug_pod.ts";
import { targetedCommand } from "../src/kube/targeted_script.ts";
import type { Pod } from "../src/model/k8s.ts";
import type { ServiceReport } from "../src/service/report.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { type FakeNode, startFakeNode } from "./helpers/fake_nodes.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";
import { containerArgv } from "./helpers/fake_runtime.ts";
import { findTool, requireNetns } from "./helpers/netns.ts";
import { run } from "./helpers/live_cli.ts";

const web = readBundle("tests/fixtures/live/web");

describe("--dry-run prints the least-privilege debug pod", () => {
  it("every field of issue 13 defect 4, in the namespace of --debug-namespace", async () => {
    const s = await startFakeApiServer({ objects: web.objects });
    try {
      const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--dry-run", "--debug-namespace", "netpath-debug"]);
      expect(r.code).toBe(0);
      const pods = r.stdout.split(/^---\n/m).filter((d) => d.trim() !== "").map((d) => parse(d) as Pod & { spec: Record<string, unknown> });
      expect(pods.length).toBeGreaterThan(0);
      for (const p of pods) {
        expect(p.metadata.namespace).toBe("netpath-debug");
        expect(p.spec.hostNetwork).toBe(true);
        expect(p.spec.hostPID).toBeUndefined();
        expect(p.spec.automountServiceAccountToken).toBe(false);
        const c = (p.spec.containers as Record<string, unknown>[])[0]!;
        expect(c.image).toBe(DEFAULT_IMAGE);
        expect(DEFAULT_IMAGE).toMatch(/@sha256:[0-9a-f]{64}$/);
        expect(c.securityContext).toEqual({
          capabilities: { drop: ["ALL"], add: ["NET_ADMIN", "NET_RAW"] },
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          seccompProfile: { type: "RuntimeDefault" },
        });
        expect(c.resources).toEqual({ requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "1", memory: "512Mi" } });
        expect(c.volumeMounts).toEqual([{ name: "run", mountPath: "/run" }]);
        expect(p.spec.volumes).toEqual([{ name: "run", emptyDir: { sizeLimit: "1Mi" } }]);
        for (const k of ["kubectl-netpath/run-id", "kubectl-netpath/created-by", "kubectl-netpath/created-at", "kubectl-netpath/expires-at"]) {
          expect(p.metadata.annotations?.[k], k).toBeTruthy();
        }
      }
      expect(s.requests.filter((x) => x.method !== "GET")).toEqual([]);
    } finally {
      await s.close();
    }
  });
});

describe.runIf(requireNetns(["nc", "curl", "setpriv"]))("the collection under the debug pod's securityContext", () => {
  const nodes = new Map<string, FakeNode>();
  const servers: FakeApiServer[] = [];
  beforeAll(async () => {
    const rules = kubeProxyRules(web.objects.services, web.objects.endpointSlices, "10.244.0.0/16");
    nodes.set("k8s-guide-worker", await startFakeNode("k8s-guide-worker", { rules: { text: rules, backend: "nft" }, proxyMode: "iptables" }));
    nodes.set("k8s-guide-worker2", await startFakeNode("k8s-guide-worker2", { rules: { text: rules, backend: "legacy" }, proxyMode: "iptables" }));
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const n of nodes.values()) await n.stop();
  });

  async function liveJson(enforce: boolean, extra: string[]): Promise<{ code: number; report: ServiceReport; stderr: string }> {
    // no kube-proxy pod can run the script (no shell in its image): a debug pod collects every node
    const s = await startFakeApiServer({
      objects: web.objects,
      exec: { netnsFor: (n) => nodes.get(n)?.netns.name, noShell: (_ns, pod) => pod.startsWith("kube-proxy-"), enforceSecurityContext: enforce },
    });
    servers.push(s);
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "-o", "json", ...extra]);
    const posts = s.requests.filter((x) => x.method === "POST" && x.path.endsWith("/pods"));
    expect(posts.length, r.stderr).toBeGreaterThan(0);
    return { code: r.code, report: JSON.parse(r.stdout) as ServiceReport, stderr: r.stderr };
  }

  it("netadmin (default): the same report as an unconfined run; the legacy node says its binary is missing, as without confinement", async () => {
    const free = await liveJson(false, []);
    const confined = await liveJson(true, []);
    expect(confined.code).toBe(free.code);
    // two collections: the pod names, and each section's time and size on the node (iptables-save's header carries the
    // time it ran), are each run's own
    const strip = (r: ServiceReport) =>
      JSON.parse(JSON.stringify({ ...r, nodes: r.nodes.map(({ collection: _, ...n }) => n) }).replace(/kubectl-netpath-[a-z0-9-]+-[a-z0-9]{5}/g, "POD")) as unknown;
    expect(strip(confined.report)).toEqual(strip(free.report));
    // the nft-backend node was analysed from rules read under NET_ADMIN+NET_RAW only
    const w1 = confined.report.nodes.find((n) => n.node === "k8s-guide-worker")!;
    expect(w1.error).toBeUndefined();
    expect(w1.ports.length).toBeGreaterThan(0);
  });

  it("the capabilities are what makes it work: the same script without NET_ADMIN/NET_RAW cannot read the rules", () => {
    const node = nodes.get("k8s-guide-worker")!;
    const cmd = targetedCommand({ addresses: ["10.96.0.10"], ports: [] });
    const withCaps = buildDebugPod("k8s-guide-worker", { name: "x", namespace: "kube-system", activeDeadlineSeconds: 60, runId: "r", createdBy: "test", createdAtMs: 0 }) as unknown as Pod;
    const noCaps = structuredClone(withCaps);
    (noCaps.spec!.containers![0] as unknown as { securityContext: { capabilities: { add: string[] } } }).securityContext.capabilities.add = [];
    const runIn = (p: Pod) => spawnSync(findTool("ip") ?? "ip", ["netns", "exec", node.netns.name, ...containerArgv(p, "collector", cmd.command)], { input: cmd.stdin, encoding: "utf8" });
    const ok = parseCollectionOutput(runIn(withCaps).stdout, "", []);
    expect(ok.sections["iptables-save"]?.stdout).toContain("KUBE-SERVICES");
    const denied = runIn(noCaps);
    const bad = parseCollectionOutput(denied.stdout, denied.stderr, []);
    // not an empty ruleset analysed as whole: the section fails with the kernel's refusal
    expect(bad.sections["iptables-save"]?.exitCode).not.toBe(0);
    expect(bad.sections["iptables-save"]?.stderr).toMatch(/Permission denied/);
    expect(bad.sections["iptables-save"]?.stdout ?? "").not.toContain("-A KUBE-SERVICES");
  });
});
