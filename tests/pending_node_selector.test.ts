import { describe, expect, test } from "vitest";
import type { NodeSelectorRequirement } from "../src/model/k8s.ts";
import {
  evaluateLabelRequirement,
  evaluateNodeSelector,
  evaluateNodeSelectorMap,
  formatRequirement,
  formatTerm,
  matchTopologySelectorTerms,
  parseGoInt64,
  validateLabelKey,
  validateLabelValue,
} from "../src/pending/node_selector.ts";
import { azureBundle } from "./fixtures/pending/objects.ts";

// Node k8s-01 of seed 000, labels exactly as `kubectl get node --show-labels` printed them.
const K8S01 = {
  "beta.kubernetes.io/arch": "amd64",
  "beta.kubernetes.io/instance-type": "Standard_B2s",
  "beta.kubernetes.io/os": "linux",
  "failure-domain.beta.kubernetes.io/region": "southeastasia",
  "failure-domain.beta.kubernetes.io/zone": "southeastasia-1",
  "kubernetes.io/hostname": "k8s-01",
};
const labels = { ...K8S01, "example.com/gen": "7", "example.com/empty": "", "example.com/notint": "7a" };

const req = (key: string, operator: string, values?: string[]): NodeSelectorRequirement =>
  ({ key, operator, ...(values ? { values } : {}) }) as NodeSelectorRequirement;

describe("evaluateLabelRequirement: labels.Requirement.Matches semantics", () => {
  const cases: { name: string; input: NodeSelectorRequirement; want: { matched: boolean; reason: string; actual: string | null } }[] = [
    { name: "In, value listed", input: req("failure-domain.beta.kubernetes.io/zone", "In", ["southeastasia-1", "southeastasia-2"]), want: { matched: true, reason: '"southeastasia-1" is in [southeastasia-1, southeastasia-2]', actual: "southeastasia-1" } },
    { name: "In, the seed's fault-domain value", input: req("failure-domain.beta.kubernetes.io/zone", "In", ["0"]), want: { matched: false, reason: '"southeastasia-1" is not in [0]', actual: "southeastasia-1" } },
    { name: "In, label absent fails", input: req("topology.kubernetes.io/zone", "In", ["southeastasia-1"]), want: { matched: false, reason: "label absent", actual: null } },
    { name: "In, empty value matches an empty label", input: req("example.com/empty", "In", [""]), want: { matched: true, reason: '"" is in [""]', actual: "" } },
    { name: "NotIn, value listed fails", input: req("failure-domain.beta.kubernetes.io/zone", "NotIn", ["southeastasia-1"]), want: { matched: false, reason: '"southeastasia-1" is in [southeastasia-1]', actual: "southeastasia-1" } },
    { name: "NotIn, other value passes", input: req("failure-domain.beta.kubernetes.io/zone", "NotIn", ["southeastasia-2"]), want: { matched: true, reason: '"southeastasia-1" is not in [southeastasia-2]', actual: "southeastasia-1" } },
    { name: "NotIn, label absent passes", input: req("topology.kubernetes.io/zone", "NotIn", ["x"]), want: { matched: true, reason: "label absent (NotIn passes)", actual: null } },
    { name: "Exists, present", input: req("kubernetes.io/hostname", "Exists"), want: { matched: true, reason: 'label present ("k8s-01")', actual: "k8s-01" } },
    { name: "Exists, absent fails", input: req("node-role.kubernetes.io/control-plane", "Exists"), want: { matched: false, reason: "label absent", actual: null } },
    { name: "Exists, empty value is present", input: req("example.com/empty", "Exists"), want: { matched: true, reason: 'label present ("")', actual: "" } },
    { name: "DoesNotExist, absent passes", input: req("node-role.kubernetes.io/control-plane", "DoesNotExist"), want: { matched: true, reason: "label absent", actual: null } },
    { name: "DoesNotExist, present fails", input: req("kubernetes.io/hostname", "DoesNotExist"), want: { matched: false, reason: 'label present ("k8s-01")', actual: "k8s-01" } },
    { name: "Gt, 7 > 6", input: req("example.com/gen", "Gt", ["6"]), want: { matched: true, reason: "7 > 6", actual: "7" } },
    { name: "Gt is strict, 7 > 7 fails", input: req("example.com/gen", "Gt", ["7"]), want: { matched: false, reason: "7 is not > 7", actual: "7" } },
    { name: "Lt, 7 < 10 (numeric, not lexical)", input: req("example.com/gen", "Lt", ["10"]), want: { matched: true, reason: "7 < 10", actual: "7" } },
    { name: "Gt, label absent fails", input: req("example.com/missing", "Gt", ["1"]), want: { matched: false, reason: "label absent", actual: null } },
    { name: "Gt, label not an integer fails", input: req("example.com/notint", "Gt", ["1"]), want: { matched: false, reason: '"7a" is not an integer', actual: "7a" } },
    { name: "Lt, label empty is not an integer", input: req("example.com/empty", "Lt", ["1"]), want: { matched: false, reason: '"" is not an integer', actual: "" } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = evaluateLabelRequirement(c.input, labels);
      expect({ matched: got.matched, reason: got.reason, actual: got.actual }).toEqual(c.want);
      expect(got.parseError).toBeUndefined();
    });
  }
});

describe("evaluateLabelRequirement: parse errors (labels.NewRequirement) fail the requirement", () => {
  const cases: { name: string; input: NodeSelectorRequirement; want: string }[] = [
    { name: "In without values", input: req("a", "In", []), want: "for 'in', 'notin' operators, values set can't be empty" },
    { name: "Exists with values", input: req("a", "Exists", ["x"]), want: "values set must be empty for exists and does not exist" },
    { name: "Gt with two values", input: req("example.com/gen", "Gt", ["1", "2"]), want: "for 'Gt', 'Lt' operators, exactly one value is required" },
    { name: "Gt with a non-integer value", input: req("example.com/gen", "Gt", ["1.5"]), want: `for 'Gt', 'Lt' operators, the value must be an integer: "1.5"` },
    { name: "Lt beyond int64", input: req("example.com/gen", "Lt", ["9223372036854775808"]), want: `for 'Gt', 'Lt' operators, the value must be an integer: "9223372036854775808"` },
    // Values are validated as label values too, so a negative bound can never be written.
    { name: "Lt with a negative bound", input: req("example.com/gen", "Lt", ["-1"]), want: `invalid label value "-1": must be empty or consist of alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric` },
    { name: "unknown operator", input: req("a", "Equals", ["x"]), want: `unsupported operator "Equals": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"` },
    { name: "key with two slashes", input: req("a/b/c", "Exists"), want: `invalid label key "a/b/c": a qualified name must have at most one "/"` },
    { name: "upper-case prefix", input: req("Example.com/zone", "Exists"), want: `invalid label key "Example.com/zone": prefix part must be a lowercase RFC 1123 subdomain` },
    { name: "value with a space", input: req("a", "In", ["south east"]), want: `invalid label value "south east": must be empty or consist of alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric` },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = evaluateLabelRequirement(c.input, labels);
      expect(got.matched).toBe(false);
      expect(got.parseError).toBe(c.want);
    });
  }
});

describe("evaluateNodeSelector: terms ORed, expressions ANDed, lazy errors", () => {
  test("the seed's unzoned PV: no term matches k8s-01, each fails on the zone with the node's value", () => {
    const pv = azureBundle().objects.persistentVolumes.find((v) => v.metadata.name === "pvc-0a20ee9f-0c34-11e9-b302-000d3aa0aa40")!;
    const ev = evaluateNodeSelector(pv.spec!.nodeAffinity!.required!, { labels: K8S01 }, { fields: false });
    expect(ev.matched).toBe(false);
    expect(ev.terms.map((t) => t.requirements.map((r) => [r.text, r.matched, r.actual]))).toEqual([
      [["failure-domain.beta.kubernetes.io/region in [southeastasia]", true, "southeastasia"], ["failure-domain.beta.kubernetes.io/zone in [0]", false, "southeastasia-1"]],
      [["failure-domain.beta.kubernetes.io/region in [southeastasia]", true, "southeastasia"], ["failure-domain.beta.kubernetes.io/zone in [1]", false, "southeastasia-1"]],
      [["failure-domain.beta.kubernetes.io/region in [southeastasia]", true, "southeastasia"], ["failure-domain.beta.kubernetes.io/zone in [2]", false, "southeastasia-1"]],
    ]);
  });

  test("the seed's zoned PV matches k8s-01 by term 0", () => {
    const pv = azureBundle().objects.persistentVolumes.find((v) => v.metadata.name === "pvc-6b8d1e52-0c45-11e9-b302-000d3aa0aa40")!;
    const ev = evaluateNodeSelector(pv.spec!.nodeAffinity!.required!, { labels: K8S01 }, { fields: false });
    expect(ev.matched).toBe(true);
    expect(ev.terms[0]!.matched).toBe(true);
  });

  const Z = "failure-domain.beta.kubernetes.io/zone";
  const cases: { name: string; input: Parameters<typeof evaluateNodeSelector>[0]; node: { name?: string; labels: Record<string, string> }; fields?: boolean; want: boolean[] }[] = [
    { name: "second term matches (OR)", input: { nodeSelectorTerms: [{ matchExpressions: [req(Z, "In", ["x"])] }, { matchExpressions: [req(Z, "In", ["southeastasia-1"])] }] }, node: { labels: K8S01 }, want: [true, false, true] },
    { name: "one failing expression fails the term (AND)", input: { nodeSelectorTerms: [{ matchExpressions: [req(Z, "In", ["southeastasia-1"]), req("kubernetes.io/hostname", "In", ["k8s-02"])] }] }, node: { labels: K8S01 }, want: [false, false] },
    { name: "an empty term matches nothing", input: { nodeSelectorTerms: [{}] }, node: { labels: K8S01 }, want: [false, false] },
    { name: "no terms matches nothing", input: { nodeSelectorTerms: [] }, node: { labels: K8S01 }, want: [false] },
    { name: "an invalid term is ignored, a valid one still matches", input: { nodeSelectorTerms: [{ matchExpressions: [req(Z, "In", [])] }, { matchExpressions: [req(Z, "Exists")] }] }, node: { labels: K8S01 }, want: [true, false, true] },
    { name: "matchFields metadata.name In, pod path", input: { nodeSelectorTerms: [{ matchFields: [req("metadata.name", "In", ["k8s-01"])] }] }, node: { name: "k8s-01", labels: K8S01 }, want: [true, true] },
    { name: "matchFields metadata.name In, other node", input: { nodeSelectorTerms: [{ matchFields: [req("metadata.name", "In", ["k8s-01"])] }] }, node: { name: "k8s-02", labels: K8S01 }, want: [false, false] },
    { name: "matchFields NotIn", input: { nodeSelectorTerms: [{ matchFields: [req("metadata.name", "NotIn", ["k8s-01"])] }] }, node: { name: "k8s-02", labels: K8S01 }, want: [true, true] },
    { name: "matchFields skipped on the PV path (node built from labels only)", input: { nodeSelectorTerms: [{ matchFields: [req("metadata.name", "In", ["gone"])] }] }, node: { name: "k8s-01", labels: K8S01 }, fields: false, want: [true, true] },
    { name: "matchFields with Exists is invalid", input: { nodeSelectorTerms: [{ matchFields: [req("metadata.name", "Exists")] }] }, node: { name: "k8s-01", labels: K8S01 }, want: [false, false] },
    { name: "matchFields with two values is invalid", input: { nodeSelectorTerms: [{ matchFields: [req("metadata.name", "In", ["a", "b"])] }] }, node: { name: "a", labels: K8S01 }, want: [false, false] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const ev = evaluateNodeSelector(c.input, c.node, c.fields === undefined ? {} : { fields: c.fields });
      expect([ev.matched, ...ev.terms.map((t) => t.matched)]).toEqual(c.want);
    });
  }

  test("parse errors are listed with the term path", () => {
    const ev = evaluateNodeSelector({ nodeSelectorTerms: [{ matchExpressions: [req(Z, "Gt", ["a"])], matchFields: [req("metadata.name", "Gt", ["1"])] }] }, { name: "k8s-01", labels: K8S01 });
    expect(ev.terms[0]!.parseErrors).toEqual([
      `matchExpressions[0]: for 'Gt', 'Lt' operators, the value must be an integer: "a"`,
      `matchFields[0]: unsupported operator "Gt" in matchFields: supported values: "In", "NotIn"`,
    ]);
  });

  test("skipped matchFields say why", () => {
    const ev = evaluateNodeSelector({ nodeSelectorTerms: [{ matchFields: [req("metadata.name", "In", ["gone"])] }] }, { labels: K8S01 }, { fields: false });
    expect(ev.terms[0]!.requirements[0]).toMatchObject({ skipped: true, matched: true, reason: "not evaluated: the scheduler checks PersistentVolume node affinity against node labels only" });
  });
});

describe("pod nodeSelector, allowedTopologies, formatting", () => {
  test("nodeSelector: every pair must be present and equal", () => {
    const ok = evaluateNodeSelectorMap({ "failure-domain.beta.kubernetes.io/zone": "southeastasia-1" }, K8S01);
    const bad = evaluateNodeSelectorMap({ "failure-domain.beta.kubernetes.io/zone": "southeastasia-2", "disktype": "ssd" }, K8S01);
    expect(ok.matched).toBe(true);
    expect(bad.matched).toBe(false);
    expect(bad.requirements.map((r) => r.reason)).toEqual(['"southeastasia-1" is not "southeastasia-2"', "label absent"]);
    expect(evaluateNodeSelectorMap(undefined, K8S01).matched).toBe(true);
  });

  test("allowedTopologies of the seed's StorageClass (southeastasia-1, -2)", () => {
    const terms = [{ matchLabelExpressions: [{ key: "failure-domain.beta.kubernetes.io/zone", values: ["southeastasia-1", "southeastasia-2"] }] }];
    expect(matchTopologySelectorTerms(terms, K8S01)).toBe(true);
    expect(matchTopologySelectorTerms(terms, { ...K8S01, "failure-domain.beta.kubernetes.io/zone": "southeastasia-3" })).toBe(false);
    expect(matchTopologySelectorTerms(terms, { "kubernetes.io/hostname": "x" })).toBe(false);
    expect(matchTopologySelectorTerms([], {})).toBe(true);
    // an empty term selects nothing (upstream MatchTopologySelectorTerms), alone or ORed with a term that fails
    expect(matchTopologySelectorTerms([{}], K8S01)).toBe(false);
    expect(matchTopologySelectorTerms([{ matchLabelExpressions: [] }, { matchLabelExpressions: [{ key: "kubernetes.io/hostname", values: ["x"] }] }], K8S01)).toBe(false);
    expect(matchTopologySelectorTerms(undefined, {})).toBe(true);
  });

  test("formatRequirement writes what kubectl describe pv prints", () => {
    expect(formatRequirement(req("failure-domain.beta.kubernetes.io/zone", "In", ["0"]))).toBe("failure-domain.beta.kubernetes.io/zone in [0]");
    expect(formatRequirement(req("a", "NotIn", ["x", "y"]))).toBe("a notin [x, y]");
    expect(formatRequirement(req("a", "DoesNotExist"))).toBe("a doesnotexist");
    expect(formatRequirement(req("topology.kubernetes.io/zone", "In", [""]))).toBe('topology.kubernetes.io/zone in [""]');
    expect(formatTerm({})).toBe("<empty>");
    expect(formatTerm({ matchFields: [req("metadata.name", "In", ["n1"])] })).toBe("field:metadata.name in [n1]");
  });

  test("parseGoInt64 follows strconv.ParseInt(s, 10, 64)", () => {
    const cases: { input: string; want: bigint | undefined }[] = [
      { input: "0", want: 0n },
      { input: "+5", want: 5n },
      { input: "-9223372036854775808", want: -(2n ** 63n) },
      { input: "9223372036854775807", want: 2n ** 63n - 1n },
      { input: "9223372036854775808", want: undefined },
      { input: " 1", want: undefined },
      { input: "1_000", want: undefined },
      { input: "0x10", want: undefined },
      { input: "", want: undefined },
    ];
    for (const c of cases) expect(parseGoInt64(c.input), c.input).toBe(c.want);
  });

  test("label key and value validation", () => {
    expect(validateLabelKey("topology.disk.csi.azure.com/zone")).toBeUndefined();
    expect(validateLabelKey("/zone")).toBe(`invalid label key "/zone": prefix part must be non-empty`);
    expect(validateLabelKey("a".repeat(64))).toBe(`invalid label key "${"a".repeat(64)}": name part must be no more than 63 characters`);
    expect(validateLabelValue("")).toBeUndefined();
    expect(validateLabelValue("-a")).toMatch(/^invalid label value "-a"/);
  });
});
