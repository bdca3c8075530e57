import { describe, expect, test } from "vitest";
import type { Taint, Toleration } from "../src/model/k8s.ts";
import { evaluateTaints, formatTaint, toleratesTaint, toleratesUnschedulable } from "../src/pending/taints.ts";
import { DEFAULT_TOLERATIONS } from "./fixtures/pending/objects.ts";

const CONTROL_PLANE: Taint = { key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" };
const NOT_READY_NS: Taint = { key: "node.kubernetes.io/not-ready", effect: "NoSchedule" };
const NOT_READY_NE: Taint = { key: "node.kubernetes.io/not-ready", effect: "NoExecute" };
const DEDICATED: Taint = { key: "dedicated", value: "gpu", effect: "NoSchedule" };
const GEN: Taint = { key: "example.com/gen", value: "5", effect: "NoSchedule" };

describe("toleratesTaint (k8s.io/api core/v1 ToleratesTaint)", () => {
  const cases: { name: string; tol: Toleration; taint: Taint; want: boolean }[] = [
    { name: "empty key + Exists tolerates everything", tol: { operator: "Exists" }, taint: DEDICATED, want: true },
    { name: "key + Exists, any value", tol: { key: "dedicated", operator: "Exists" }, taint: DEDICATED, want: true },
    { name: "empty operator means Equal: same value", tol: { key: "dedicated", value: "gpu" }, taint: DEDICATED, want: true },
    { name: "Equal: other value", tol: { key: "dedicated", operator: "Equal", value: "db" }, taint: DEDICATED, want: false },
    { name: "Equal with no value matches an empty taint value", tol: { key: "node-role.kubernetes.io/control-plane", operator: "Equal" }, taint: CONTROL_PLANE, want: true },
    { name: "effect must match when set", tol: { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" }, taint: NOT_READY_NS, want: false },
    { name: "default not-ready toleration covers NoExecute", tol: DEFAULT_TOLERATIONS[0]!, taint: NOT_READY_NE, want: true },
    { name: "empty effect matches every effect", tol: { key: "node.kubernetes.io/not-ready", operator: "Exists" }, taint: NOT_READY_NS, want: true },
    { name: "other key", tol: { key: "dedicated", operator: "Exists" }, taint: CONTROL_PLANE, want: false },
    { name: "Gt: taint 5 > toleration 3", tol: { key: "example.com/gen", operator: "Gt" as "Equal", value: "3" }, taint: GEN, want: true },
    { name: "Gt is strict", tol: { key: "example.com/gen", operator: "Gt" as "Equal", value: "5" }, taint: GEN, want: false },
    { name: "Lt: taint 5 < toleration 10", tol: { key: "example.com/gen", operator: "Lt" as "Equal", value: "10" }, taint: GEN, want: true },
    { name: "Lt with a non-integer toleration value", tol: { key: "example.com/gen", operator: "Lt" as "Equal", value: "ten" }, taint: GEN, want: false },
    { name: "unknown operator tolerates nothing", tol: { key: "dedicated", operator: "Matches" as "Equal", value: "gpu" }, taint: DEDICATED, want: false },
  ];
  for (const c of cases) test(c.name, () => expect(toleratesTaint(c.tol, c.taint)).toBe(c.want));
});

describe("evaluateTaints (TaintToleration filter)", () => {
  test("a default pod on a NotReady control-plane node: the first untolerated NoSchedule taint is named", () => {
    const v = evaluateTaints([CONTROL_PLANE, NOT_READY_NE, NOT_READY_NS], DEFAULT_TOLERATIONS);
    expect(v.first).toEqual(CONTROL_PLANE);
    expect(v.untolerated).toEqual([CONTROL_PLANE, NOT_READY_NS]);
    expect(v.taints.map((t) => [t.text, t.tolerated, t.toleratedBy])).toEqual([
      ["node-role.kubernetes.io/control-plane:NoSchedule", false, undefined],
      ["node.kubernetes.io/not-ready:NoExecute", true, 0],
      ["node.kubernetes.io/not-ready:NoSchedule", false, undefined],
    ]);
  });

  test("PreferNoSchedule only scores: never untolerated", () => {
    const v = evaluateTaints([{ key: "spot", value: "true", effect: "PreferNoSchedule" }], []);
    expect(v.untolerated).toEqual([]);
    expect(v.first).toBeUndefined();
    expect(v.taints[0]!.filtered).toBe(false);
  });

  test("no taints", () => {
    expect(evaluateTaints(undefined, DEFAULT_TOLERATIONS)).toEqual({ taints: [], untolerated: [] });
  });

  test("formatTaint writes kubectl's key=value:Effect", () => {
    expect(formatTaint(DEDICATED)).toBe("dedicated=gpu:NoSchedule");
    expect(formatTaint(CONTROL_PLANE)).toBe("node-role.kubernetes.io/control-plane:NoSchedule");
  });

  test("NodeUnschedulable: only a toleration of node.kubernetes.io/unschedulable:NoSchedule lets a pod on a cordoned node", () => {
    expect(toleratesUnschedulable(DEFAULT_TOLERATIONS)).toBe(false);
    expect(toleratesUnschedulable([{ operator: "Exists" }])).toBe(true);
    expect(toleratesUnschedulable([{ key: "node.kubernetes.io/unschedulable", operator: "Exists", effect: "NoSchedule" }])).toBe(true);
    expect(toleratesUnschedulable([{ key: "node.kubernetes.io/unschedulable", operator: "Exists", effect: "NoExecute" }])).toBe(false);
  });
});
