// What the collection could not read reaches the report (JSON/YAML and text), not only stderr: a --why-pending run
// whose "list pods" RBAC forbade once answered "3/3 nodes fit" with nothing saying the nodes' pods were not counted,
// and blamed the event's disagreement on "a check not modelled here" (audit of the -o json contract, defect 2).
import { afterEach, describe, expect, it } from "vitest";
import { PODS_NOT_LISTED_WARNING } from "../src/bundle/bundle.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainPending } from "../src/pending/explain.ts";
import { renderPendingText } from "../src/report/pending_text.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { run } from "./helpers/live_cli.ts";

const question = { kind: "pod" as const, namespace: "shop", name: "web-7d9f-3" };

/** examples/scheduling as a collection that could not list pods holds it: the pending pod alone, and the warning. */
function withoutPods() {
  const b = readBundle("examples/scheduling");
  b.objects.pods = b.objects.pods.filter((p) => p.metadata.namespace === "shop" && p.metadata.name === "web-7d9f-3");
  b.warnings.push(PODS_NOT_LISTED_WARNING);
  return b;
}

describe("--why-pending without the cluster's pods (list pods forbidden)", () => {
  it("with the pods the answer agrees with the event (the control)", () => {
    const r = explainPending(readBundle("examples/scheduling"), question);
    expect(r.answer).toMatch(/^Pod shop\/web-7d9f-3 cannot be scheduled: 0\/3 nodes are available/);
    expect(r.warnings).toBeUndefined();
  });

  it("the answer, the pod's notes, a finding and the report's warnings say the pods were not counted", () => {
    const r = explainPending(withoutPods(), question);
    expect(r.answer).toBe(
      "Pod shop/web-7d9f-3 cannot be scheduled: 3/3 nodes fit by the rules checked here, which counted no pod on the nodes (list pods was forbidden): pool-a-1, pool-a-2, pool-b-1.",
    );
    expect(r.pods[0]!.notes).toContainEqual(expect.stringMatching(/^the pods bound to the nodes were not listed \(list pods was forbidden\): the resources, hostPorts, topologySpread and podAffinity verdicts count none of them/));
    const f = r.findings.find((x) => x.id === "pods-not-listed")!;
    expect(f.severity).toBe("warning");
    expect(f.evidence).toEqual([PODS_NOT_LISTED_WARNING]);
    // the disagreement with the event names the gap, not "a check not modelled here"
    const dis = r.findings.find((x) => x.id === "event-disagrees")!;
    expect(dis.detail).toContain("but they counted no pod on the nodes (list pods was forbidden)");
    expect(dis.detail).not.toContain("a check not modelled here");
    expect(r.warnings).toEqual([PODS_NOT_LISTED_WARNING]);
    const text = renderPendingText(r, { color: false });
    expect(text).toContain("which counted no pod on the nodes (list pods was forbidden)");
    expect(text).toContain(`Collection warnings\n  WARN ${PODS_NOT_LISTED_WARNING}`);
  });
});

describe("live: the denials reach -o json and the text", () => {
  let servers: FakeApiServer[] = [];
  afterEach(async () => {
    for (const s of servers) await s.close();
    servers = [];
  });
  const fake = async (dir: string, denials: { verb: string; resource: string; namespace?: string }[]) => {
    const s = await startFakeApiServer({ objects: readBundle(dir).objects, denials });
    servers.push(s);
    return s;
  };

  it("pod --why-pending with list pods forbidden", async () => {
    const s = await fake("examples/scheduling", [{ verb: "list", resource: "pods" }]);
    const r = await run(["pod/web-7d9f-3", "-n", "shop", "--why-pending", "--kubeconfig", s.kubeconfig, "-o", "json"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`warning: ${PODS_NOT_LISTED_WARNING}`);
    const report = JSON.parse(r.stdout);
    expect(report.answer).toContain("which counted no pod on the nodes (list pods was forbidden)");
    expect(report.findings.map((f: { id: string }) => f.id)).toContain("pods-not-listed");
    expect(report.warnings).toEqual([PODS_NOT_LISTED_WARNING]);
  });

  it("svc/NAME with the kube-proxy ConfigMap forbidden: in the JSON's warnings and the text", async () => {
    const s = await fake("tests/fixtures/live/web", [{ verb: "get", resource: "configmaps", namespace: "kube-system" }]);
    const denied = "the kube-system/kube-proxy ConfigMap is not readable (403 Forbidden): proxy mode from the nodes only";
    const json = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", "json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).warnings).toContain(denied);
    const text = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    expect(text.stdout).toContain(`Collection warnings\n  WARN ${denied}`);
  });
});
