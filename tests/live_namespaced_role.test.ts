// Issue 13 defect 5: `--no-exec` with only a namespace-scoped read-only Role (no cluster-scoped reads, nothing in
// kube-system) answers from what it may read, and says what is missing and which permission would give it; it does
// not die on `get nodes`.
import { afterEach, describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import type { ServiceReport } from "../src/service/report.ts";
import { type Denial, type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { run } from "./helpers/live_cli.ts";

const web = readBundle("tests/fixtures/live/web");
// a Role in namespace default: get/list/watch of its namespaced objects, nothing else
const ROLE: Denial[] = [
  { verb: "*", resource: "nodes" },
  ...["pods", "configmaps", "daemonsets", "services", "endpointslices", "events"].map((resource) => ({ verb: "*", resource, namespace: "kube-system" })),
];
let servers: FakeApiServer[] = [];
afterEach(async () => {
  for (const s of servers) await s.close();
  servers = [];
});

describe("--no-exec with a namespace-scoped read-only Role", () => {
  it("svc/web: the report, without node objects, saying what is missing and the permission that gives it", async () => {
    const s = await startFakeApiServer({ objects: web.objects, denials: ROLE });
    servers.push(s);
    const full = await startFakeApiServer({ objects: web.objects });
    servers.push(full);
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    expect(r.stderr).not.toMatch(/error: not allowed to get nodes/);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Service default/web");
    expect(r.stderr).toMatch(/node objects could not be read \(403.*get on nodes.*cluster-scoped/);
    const j = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", "json"]);
    const rep = JSON.parse(j.stdout) as ServiceReport;
    const ok = JSON.parse((await run(["svc/web", "-n", "default", "--kubeconfig", full.kubeconfig, "--no-exec", "-o", "json"])).stdout) as ServiceReport;
    // the endpoints are the same; only what Node objects give (zones, node addresses) is missing
    expect(rep.endpoints.map((e) => e.address)).toEqual(ok.endpoints.map((e) => e.address));
  });
});

describe("what the report itself says", () => {
  it("the text and JSON reports name the nodes whose objects are missing, and what that hides", async () => {
    const s = await startFakeApiServer({ objects: web.objects, denials: ROLE });
    servers.push(s);
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    const j = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", "json"]);
    const limit = "the Node objects of k8s-guide-worker, k8s-guide-worker2 (not in the bundle; reading them needs get on nodes, cluster-scoped)";
    expect((JSON.parse(j.stdout) as ServiceReport).limits.some((l) => l.startsWith(limit))).toBe(true);
    expect(r.stdout.replace(/\s+/g, " ")).toContain(limit);
  });
});
