/**
 * Golden files of the why-pending renderer on the azure-zones example. Regenerate after an intended change with
 * `UPDATE_GOLDEN=1 npx vitest run tests/pending_text.test.ts` and review the diff.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { explainPending } from "../src/pending/explain.ts";
import type { PendingQuestion } from "../src/pending/report.ts";
import { renderPendingText } from "../src/report/pending_text.ts";
import { azureBundle, bundleOf, node, pendingFixturePath, pod, pvc, storageClass } from "./fixtures/pending/objects.ts";

const UPDATE = process.env["UPDATE_GOLDEN"] === "1";

function golden(name: string, actual: string): void {
  const path = pendingFixturePath(name);
  if (UPDATE || !existsSync(path)) {
    if (!UPDATE) throw new Error(`golden file ${name} is missing: run with UPDATE_GOLDEN=1`);
    writeFileSync(path, actual);
  }
  expect(actual).toBe(readFileSync(path, "utf8"));
}

const CASES: { name: string; q: PendingQuestion }[] = [
  { name: "azure-md", q: { kind: "pvc", namespace: "default", name: "md" } },
  { name: "azure-md-zoned", q: { kind: "pvc", namespace: "default", name: "md-zoned" } },
  { name: "azure-busybox", q: { kind: "pod", namespace: "default", name: "busybox" } },
];

describe("golden text", () => {
  for (const c of CASES) {
    test(`${c.q.kind}/${c.q.name}`, () => {
      golden(`${c.name}.golden.txt`, renderPendingText(explainPending(azureBundle(), c.q), { color: false }));
    });
  }

  test("pvc/md as JSON (the -o json shape)", () => {
    golden("azure-md.golden.json", JSON.stringify(explainPending(azureBundle(), CASES[0]!.q), null, 2) + "\n");
  });

  test("without Node objects", () => {
    const b = azureBundle();
    b.objects.nodes = [];
    golden("azure-md-no-nodes.golden.txt", renderPendingText(explainPending(b, CASES[0]!.q), { color: false }));
  });
});

describe("colour", () => {
  const report = explainPending(azureBundle(), { kind: "pvc", namespace: "default", name: "md" });

  test("no escape codes unless asked", () => {
    // deno-lint-ignore no-control-regex
    expect(renderPendingText(report, { color: false })).not.toMatch(/\u001b\[/);
  });

  test("with colour: failing cells red, the same text once the codes are stripped", () => {
    const colored = renderPendingText(report, { color: true });
    expect(colored).toContain("\u001b[31mno: zone=southeastasia-1\u001b[0m");
    expect(colored).toContain("\u001b[32magree\u001b[0m");
    // deno-lint-ignore no-control-regex
    expect(colored.replace(/\u001b\[[0-9;]*m/g, "")).toBe(renderPendingText(report, { color: false }));
  });
});

describe("layout details", () => {
  test("the why-lines are capped", () => {
    const nodes = Array.from({ length: 5 }, (_, i) => node(`n${i}`, { unschedulable: true }));
    const r = explainPending(bundleOf([...nodes, storageClass("gp3"), pvc("data"), pod("app-0", { claims: ["data"] })]), { kind: "pod", namespace: "default", name: "app-0" });
    // Every node fails three rows: cordoned, its unschedulable taint, and the unbound Immediate claim.
    const failing = r.pods[0]!.nodes.flatMap((n) => n.checks.filter((c) => !c.passed && c.rule !== "ready"));
    expect(failing).toHaveLength(15);
    const text = renderPendingText(r, { color: false, maxWhyLines: 3 });
    expect(text).toContain("    n0: cordoned: cordoned (spec.unschedulable)\n    n0: taints: untolerated node.kubernetes.io/unschedulable:NoSchedule\n    n0: claim data: unbound");
    expect(text).toContain("    … 12 more (see -o yaml)");
    expect(text).not.toContain("n1: cordoned");
  });
});

// The DaemonSet controller pins each pod to its node with a required term of matchFields alone
// (pkg/controller/daemon/util/daemonset_util.go ReplaceDaemonSetPodNodeNameNodeAffinity); an empty term matches no node
// (component-helpers nodeaffinity nodeSelectorTerm.match), so such a term must not be shown as "<empty>"
describe("required node affinity terms", () => {
  test("a DaemonSet pod's matchFields term is printed as such; matchExpressions and matchFields together; a term with neither is <empty>", () => {
    const ds = pod("ds-abc", { ns: "kube-system", affinity: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["n1"] }] }] } });
    const text = renderPendingText(explainPending(bundleOf([node("n1"), node("n2"), ds]), { kind: "pod", namespace: "kube-system", name: "ds-abc" }), { color: false });
    expect(text).toContain("  required node affinity term 0: field:metadata.name in [n1]\n");
    expect(text).not.toContain("<empty>");
    const both = pod("web", {
      affinity: { nodeSelectorTerms: [{ matchExpressions: [{ key: "disk", operator: "In", values: ["ssd"] }], matchFields: [{ key: "metadata.name", operator: "NotIn", values: ["n2"] }] }, {}] },
    });
    const text2 = renderPendingText(explainPending(bundleOf([node("n1"), node("n2"), both]), { kind: "pod", namespace: "default", name: "web" }), { color: false });
    expect(text2).toContain("  required node affinity term 0: disk in [ssd], field:metadata.name notin [n2]\n  required node affinity term 1: <empty>\n");
  });
});
