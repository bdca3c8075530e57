// Issue 16: PodTopologySpread and InterPodAffinity as filters, per node in the same table, over the pods the bundle
// holds; the first line carries the scheduler's reason and the reconciliation agrees with the FailedScheduling text the
// real scheduler writes (reason constants of podtopologyspread/filtering.go and interpodaffinity/filtering.go, the
// histogram of framework's FitError). Scenarios after the Kubernetes documentation's spread example and the cases of
// the plugins' own filtering_test.go (minDomains, node inclusion policies, matchLabelKeys, the first pod of a group
// with affinity to itself, existing pods' anti-affinity).
import { describe, expect, it } from "vitest";
import { emptyBundle } from "../src/bundle/bundle.ts";
import { readdirSync, readFileSync } from "node:fs";
import { bundleFromFiles, decodeBundle } from "../src/bundle/decode.ts";
import { allowListObjects } from "../src/bundle/allow_list.ts";
import type { KubeEvent, Namespace, Node, Pod, PodAffinityTerm, TopologySpreadConstraint } from "../src/model/k8s.ts";
import { labelSelectorMatches } from "../src/model/label_selector.ts";
import { explainPending } from "../src/pending/explain.ts";
import { classifyReason, parseSchedulerMessage } from "../src/pending/scheduler_message.ts";
import { renderPendingText } from "../src/report/pending_text.ts";

const ZONE = "topology.kubernetes.io/zone";
const HOST = "kubernetes.io/hostname";

const node = (name: string, zone: string | null, extra: Partial<Node["spec"]> = {}): Node => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name, labels: { [HOST]: name, ...(zone ? { [ZONE]: zone } : {}) } },
  spec: { ...extra },
  status: { conditions: [{ type: "Ready", status: "True" }] },
});
const pod = (name: string, labels: Record<string, string>, spec: Record<string, unknown> = {}, ns = "default", meta: Record<string, unknown> = {}): Pod =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns, labels, ...meta },
    spec: { containers: [{ name: "c" }], ...spec },
    status: { phase: spec.nodeName ? "Running" : "Pending" },
  } as unknown as Pod);
const event = (podName: string, message: string): KubeEvent =>
  ({
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${podName}.1`, namespace: "default" },
    involvedObject: { kind: "Pod", name: podName, namespace: "default" },
    reason: "FailedScheduling",
    type: "Warning",
    message,
    count: 1,
  } as unknown as KubeEvent);
const spread = (c: Partial<TopologySpreadConstraint>): TopologySpreadConstraint =>
  ({ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: "DoNotSchedule", labelSelector: { matchLabels: { app: "web" } }, ...c });

function bundleOf(nodes: Node[], pods: Pod[], events: KubeEvent[] = [], namespaces: Namespace[] = []) {
  const b = emptyBundle({});
  b.objects.nodes.push(...nodes);
  b.objects.pods.push(...pods);
  b.objects.events.push(...events);
  b.objects.namespaces.push(...namespaces);
  return b;
}
const ask = (b: ReturnType<typeof bundleOf>, name: string) => explainPending(b, { kind: "pod", namespace: "default", name });
const verdicts = (r: ReturnType<typeof ask>) => Object.fromEntries(r.pods[0]!.nodes.map((n) => [n.node, n.rejectedBy?.plugin ?? "fits"]));

// The documentation's example: zoneA = node1, node2; zoneB = node3, node4; one app=web pod on each of node1..node3.
const fourNodes = (extraB: Partial<Node["spec"]> = {}) => [node("node1", "zoneA"), node("node2", "zoneA"), node("node3", "zoneB", extraB), node("node4", "zoneB", extraB)];
const threeWeb = () => [pod("w1", { app: "web" }, { nodeName: "node1" }), pod("w2", { app: "web" }, { nodeName: "node2" }), pod("w3", { app: "web" }, { nodeName: "node3" })];

describe("PodTopologySpread (DoNotSchedule)", () => {
  it("zoneA holds 2, zoneB 1, maxSkew 1: zoneA's nodes would make skew 2, zoneB's fit", () => {
    const p = pod("new", { app: "web" }, { topologySpreadConstraints: [spread({})] });
    const r = ask(bundleOf(fourNodes(), [p, ...threeWeb()]), "new");
    expect(verdicts(r)).toEqual({ node1: "PodTopologySpread", node2: "PodTopologySpread", node3: "fits", node4: "fits" });
    const n1 = r.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "topologySpread")!;
    expect(n1.detail).toBe(`${ZONE}=zoneA: 2 pod(s) match [app=web] + 1 (self) − min 1 = skew 2 > maxSkew 1`);
    expect(r.pods[0]!.topologySpread).toEqual([`constraint 0 (${ZONE}, maxSkew 1): pods matching [app=web] per domain: zoneA=2, zoneB=1`]);
  });

  it("labelSelector {} (empty, non-nil): v1.27–v1.37 schedulers count no existing pod (kubernetes#141339), others every pod", () => {
    // zoneA holds 2 pods, zoneB 1: counted, zoneA would make skew 2; uncounted, every domain is 0 + 1 (self) − 0
    const withVersion = (v?: string) => fourNodes().map((n) => (v ? { ...n, status: { ...n.status, nodeInfo: { kubeletVersion: v } } } as Node : n));
    const p = pod("new", { app: "web" }, { topologySpreadConstraints: [spread({ labelSelector: {} })] });
    const at = (v?: string) => ask(bundleOf(withVersion(v), [p, ...threeWeb()]), "new");
    expect(verdicts(at("v1.33.4"))).toEqual({ node1: "fits", node2: "fits", node3: "fits", node4: "fits" });
    expect(at("v1.33.4").pods[0]!.nodes[0]!.checks.find((c) => c.rule === "topologySpread")!.detail).toContain("0 pod(s) match [<all>] (an empty labelSelector: this release counts no existing pod for it");
    for (const v of ["v1.26.15", "v1.38.0"]) expect(verdicts(at(v)), v).toEqual({ node1: "PodTopologySpread", node2: "PodTopologySpread", node3: "fits", node4: "fits" });
    const unknown = at();
    expect(verdicts(unknown)).toEqual({ node1: "PodTopologySpread", node2: "PodTopologySpread", node3: "fits", node4: "fits" });
    expect(unknown.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "topologySpread")!.detail).toContain("v1.27–v1.37 count none, kubernetes#141339, and the scheduler's version is not known");
  });

  it("zoneB tainted, nodeTaintsPolicy Ignore (default): zoneB still counts as a domain with min 1, so zoneA is rejected; first line and event agree", () => {
    const p = pod("new", { app: "web" }, { topologySpreadConstraints: [spread({})] });
    const pods = [p, pod("w1", { app: "web" }, { nodeName: "node1" }), pod("w2", { app: "web" }, { nodeName: "node2" }), pod("w3", { app: "web" }, { nodeName: "node3" })];
    const msg = "0/4 nodes are available: 2 node(s) didn't match pod topology spread constraints, 2 node(s) had untolerated taint {dedicated: infra}. preemption: 0/4 nodes are available: 2 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.";
    const r = ask(bundleOf(fourNodes({ taints: [{ key: "dedicated", value: "infra", effect: "NoSchedule" }] }), pods, [event("new", msg)]), "new");
    expect(r.answer.split("\n")[0]).toContain("0/4 nodes are available: 2 node(s) didn't match pod topology spread constraints, 2 node(s) had untolerated taint {dedicated: infra}.");
    expect(r.pods[0]!.reconciliation.status).toBe("agree");
  });

  it("nodeTaintsPolicy Honor: the tainted zone is no domain, the minimum is zoneA's own 2, and zoneA fits", () => {
    const p = pod("new", { app: "web" }, { topologySpreadConstraints: [spread({ nodeTaintsPolicy: "Honor" })] });
    const r = ask(bundleOf(fourNodes({ taints: [{ key: "dedicated", value: "infra", effect: "NoSchedule" }] }), [p, ...threeWeb()]), "new");
    expect(verdicts(r)).toEqual({ node1: "fits", node2: "fits", node3: "TaintToleration", node4: "TaintToleration" });
  });

  it("nodeAffinityPolicy Honor (default) drops the zone the pod's nodeSelector excludes; Ignore keeps it", () => {
    const honour = pod("new", { app: "web" }, { nodeSelector: { [ZONE]: "zoneA" }, topologySpreadConstraints: [spread({})] });
    expect(verdicts(ask(bundleOf(fourNodes(), [honour, ...threeWeb()]), "new"))).toEqual({ node1: "fits", node2: "fits", node3: "NodeAffinity", node4: "NodeAffinity" });
    const ignore = pod("new", { app: "web" }, { nodeSelector: { [ZONE]: "zoneA" }, topologySpreadConstraints: [spread({ nodeAffinityPolicy: "Ignore" })] });
    expect(verdicts(ask(bundleOf(fourNodes(), [ignore, ...threeWeb()]), "new"))).toEqual({ node1: "PodTopologySpread", node2: "PodTopologySpread", node3: "NodeAffinity", node4: "NodeAffinity" });
  });

  it("minDomains 3 with two zones: the global minimum is 0, so one pod per zone already blocks both", () => {
    const p = pod("new", { app: "web" }, { topologySpreadConstraints: [spread({ minDomains: 3 })] });
    const pods = [p, pod("w1", { app: "web" }, { nodeName: "node1" }), pod("w3", { app: "web" }, { nodeName: "node3" })];
    const r = ask(bundleOf(fourNodes(), pods), "new");
    expect(r.pods[0]!.summary!.message).toBe("0/4 nodes are available: 4 node(s) didn't match pod topology spread constraints.");
    expect(r.pods[0]!.nodes[2]!.checks.find((c) => c.rule === "topologySpread")!.detail).toContain("min 0 (2 domain(s) < minDomains 3) = skew 2 > maxSkew 1");
  });

  it("a node without the topologyKey: (missing required label), and it is no domain", () => {
    const p = pod("new", { app: "web" }, { topologySpreadConstraints: [spread({})] });
    const r = ask(bundleOf([...fourNodes(), node("edge", null)], [p, ...threeWeb()]), "new");
    expect(r.pods[0]!.nodes.find((n) => n.node === "edge")!.rejectedBy).toEqual({ plugin: "PodTopologySpread", reasons: ["node(s) didn't match pod topology spread constraints (missing required label)"] });
  });

  it("counts only pods of the pod's namespace, not terminating, not terminal; matchLabelKeys adds the pod's own revision", () => {
    const p = pod("new", { app: "web", "pod-template-hash": "v2" }, { topologySpreadConstraints: [spread({ matchLabelKeys: ["pod-template-hash"] })] });
    const pods = [
      p,
      pod("old1", { app: "web", "pod-template-hash": "v1" }, { nodeName: "node1" }),
      pod("old2", { app: "web", "pod-template-hash": "v1" }, { nodeName: "node2" }),
      pod("other-ns", { app: "web", "pod-template-hash": "v2" }, { nodeName: "node1" }, "staging"),
      pod("leaving", { app: "web", "pod-template-hash": "v2" }, { nodeName: "node2" }, "default", { deletionTimestamp: "2026-11-25T00:00:00Z" }),
      { ...pod("done", { app: "web", "pod-template-hash": "v2" }, { nodeName: "node1" }), status: { phase: "Succeeded" } } as Pod,
      pod("new1", { app: "web", "pod-template-hash": "v2" }, { nodeName: "node3" }),
    ];
    const r = ask(bundleOf(fourNodes(), pods), "new");
    // only new1 counts: zoneA=0, zoneB=1 → zoneB would be skew 2
    expect(r.pods[0]!.topologySpread![0]).toContain("[app=web, pod-template-hash=v2] per domain: zoneA=0, zoneB=1");
    expect(verdicts(r)).toEqual({ node1: "fits", node2: "fits", node3: "PodTopologySpread", node4: "PodTopologySpread" });
  });

  it("a pod nominated to node3 counts in zoneB for node3 only (updateWithPod); an empty selector counts it even where PreFilter counts none", () => {
    const nominated = (ns = "default", labels = { app: "web" }) => ({ ...pod("w4", labels, {}, ns), status: { phase: "Pending", nominatedNodeName: "node3" } } as Pod);
    const p = pod("new", { app: "web" }, { topologySpreadConstraints: [spread({})] });
    const base = [p, pod("w1", { app: "web" }, { nodeName: "node1" }), pod("w3", { app: "web" }, { nodeName: "node3" })];
    const r = ask(bundleOf(fourNodes(), [...base, nominated()]), "new");
    expect(verdicts(r)).toEqual({ node1: "fits", node2: "fits", node3: "PodTopologySpread", node4: "fits" });
    expect(r.pods[0]!.nodes[2]!.checks.find((c) => c.rule === "topologySpread")!.detail).toBe(
      `${ZONE}=zoneB: 2 pod(s) match [app=web] + 1 (self) − min 1 = skew 2 > maxSkew 1 (counting the pod(s) a preemption nominated to this node: default/w4)`,
    );
    // another namespace, or labels the selector does not match: not counted
    expect(verdicts(ask(bundleOf(fourNodes(), [...base, nominated("other")]), "new")).node3).toBe("fits");
    expect(verdicts(ask(bundleOf(fourNodes(), [...base, nominated("default", { app: "db" })]), "new")).node3).toBe("fits");
    // labelSelector {} on a v1.33 scheduler: bound pods count none, the nominee counts (Selector.Matches)
    const v133 = fourNodes().map((n) => ({ ...n, status: { ...n.status, nodeInfo: { kubeletVersion: "v1.33.4" } } } as Node));
    const empty = pod("new", { app: "web" }, { topologySpreadConstraints: [spread({ labelSelector: {} })] });
    const e = ask(bundleOf(v133, [empty, pod("w1", { app: "web" }, { nodeName: "node1" }), nominated()]), "new");
    expect(verdicts(e)).toEqual({ node1: "fits", node2: "fits", node3: "PodTopologySpread", node4: "fits" });
  });

  it("ScheduleAnyway only scores: no spread check", () => {
    const p = pod("new", { app: "web" }, { topologySpreadConstraints: [spread({ whenUnsatisfiable: "ScheduleAnyway" })] });
    const r = ask(bundleOf(fourNodes(), [p, ...threeWeb()]), "new");
    expect(r.pods[0]!.nodes.every((n) => n.fits && !n.checks.some((c) => c.rule === "topologySpread"))).toBe(true);
  });
});

const term = (labels: Record<string, string>, topologyKey: string, extra: Partial<PodAffinityTerm> = {}): PodAffinityTerm =>
  ({ labelSelector: { matchLabels: labels }, topologyKey, ...extra });

describe("InterPodAffinity (required terms)", () => {
  const three = () => [node("n1", "a"), node("n2", "a"), node("n3", "b")];

  it("anti-affinity by hostname with a replica on every node: 0/3, the scheduler's words, agree", () => {
    const p = pod("web-3", { app: "web" }, { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "web" }, HOST)] } } });
    const pods = [p, pod("web-0", { app: "web" }, { nodeName: "n1" }), pod("web-1", { app: "web" }, { nodeName: "n2" }), pod("web-2", { app: "web" }, { nodeName: "n3" })];
    const r = ask(bundleOf(three(), pods, [event("web-3", "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")]), "web-3");
    expect(r.answer.split("\n")[0]).toContain("0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.");
    expect(r.pods[0]!.reconciliation.status).toBe("agree");
    expect(r.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "podAffinity")!.detail).toBe(`anti-affinity term 0 [app=web] by ${HOST}: default/web-0 on n1 in ${HOST}=n1`);
  });

  it("the same event in the wording before v1.22 (umbrella reason beside the specific one) still agrees", () => {
    const p = pod("web-3", { app: "web" }, { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "web" }, HOST)] } } });
    const pods = [p, pod("web-0", { app: "web" }, { nodeName: "n1" }), pod("web-1", { app: "web" }, { nodeName: "n2" }), pod("web-2", { app: "web" }, { nodeName: "n3" })];
    const r = ask(bundleOf(three(), pods, [event("web-3", "0/3 nodes are available: 3 node(s) didn't match pod affinity/anti-affinity, 3 node(s) didn't match pod anti-affinity rules.")]), "web-3");
    expect(r.pods[0]!.reconciliation.status).toBe("agree");
  });

  it("affinity to a cache in zone a: zone b is rejected (UnschedulableAndUnresolvable reason)", () => {
    const p = pod("api", { app: "api" }, { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "cache" }, ZONE)] } } });
    const r = ask(bundleOf(three(), [p, pod("cache-0", { app: "cache" }, { nodeName: "n2" })]), "api");
    expect(verdicts(r)).toEqual({ n1: "fits", n2: "fits", n3: "InterPodAffinity" });
    expect(r.pods[0]!.nodes[2]!.rejectedBy!.reasons).toEqual(["node(s) didn't match pod affinity rules"]);
    expect(r.pods[0]!.nodes[2]!.checks.find((c) => c.rule === "podAffinity")!.detail).toContain(`no matching pod in ${ZONE}=b`);
  });

  // interpodaffinity/filtering.go Filter: required affinity fails UnschedulableAndUnresolvable (no eviction brings the
  // pod it wants), anti-affinity Unschedulable (evicting the matching pod could help): preemption-never is about room
  it("preemptionPolicy Never: no preemption finding for required pod affinity, one for anti-affinity", () => {
    const never = (name: string, labels: Record<string, string>, affinity: Record<string, unknown>) => pod(name, labels, { preemptionPolicy: "Never", affinity });
    const web = never("web", { app: "web" }, { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "db" }, HOST)] } });
    const r = ask(bundleOf(three(), [web]), "web");
    expect(r.pods[0]!.summary!.message).toBe("0/3 nodes are available: 3 node(s) didn't match pod affinity rules.");
    expect(r.findings.map((f) => f.id)).not.toContain("preemption-never");
    const spreadOut = never("web-3", { app: "web" }, { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "web" }, HOST)] } });
    const replicas = [pod("web-0", { app: "web" }, { nodeName: "n1" }), pod("web-1", { app: "web" }, { nodeName: "n2" }), pod("web-2", { app: "web" }, { nodeName: "n3" })];
    const anti = ask(bundleOf(three(), [spreadOut, ...replicas]), "web-3");
    expect(anti.findings.find((f) => f.id === "preemption-never")!.detail).toContain("3 node(s) reject it for room that evicting lower-priority pods could free (n1, n2, n3)");
    // mixed: only the anti-affinity node counts
    const mixed = never("api", { app: "api" }, {
      podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "cache" }, ZONE)] },
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "api" }, HOST)] },
    });
    const m = ask(bundleOf(three(), [mixed, pod("cache-0", { app: "cache" }, { nodeName: "n1" }), pod("api-0", { app: "api" }, { nodeName: "n1" }), pod("api-1", { app: "api" }, { nodeName: "n2" })]), "api");
    expect(verdicts(m)).toEqual({ n1: "InterPodAffinity", n2: "InterPodAffinity", n3: "InterPodAffinity" });
    expect(m.findings.find((f) => f.id === "preemption-never")!.detail).toContain("2 node(s) reject it for room that evicting lower-priority pods could free (n1, n2)");
  });

  it("the first pod of a group with affinity to itself is allowed anywhere; with a member elsewhere it is not", () => {
    const spec = { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "db" }, ZONE)] } } };
    expect(verdicts(ask(bundleOf(three(), [pod("db-0", { app: "db" }, spec)]), "db-0"))).toEqual({ n1: "fits", n2: "fits", n3: "fits" });
    // an unrelated pod's affinity to app=db does not exempt a pod labelled otherwise
    expect(verdicts(ask(bundleOf(three(), [pod("x", { app: "x" }, spec)]), "x"))).toEqual({ n1: "InterPodAffinity", n2: "InterPodAffinity", n3: "InterPodAffinity" });
    expect(verdicts(ask(bundleOf(three(), [pod("db-1", { app: "db" }, spec), pod("db-0", { app: "db" }, { nodeName: "n3" })]), "db-1"))).toEqual({ n1: "InterPodAffinity", n2: "InterPodAffinity", n3: "fits" });
  });

  it("a bound pod's anti-affinity keeps this pod off its zone: existing pods anti-affinity rules", () => {
    const guard = pod("batch-0", { app: "batch" }, { nodeName: "n1", affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "web" }, ZONE)] } } });
    const r = ask(bundleOf(three(), [pod("web", { app: "web" }), guard]), "web");
    expect(verdicts(r)).toEqual({ n1: "InterPodAffinity", n2: "InterPodAffinity", n3: "fits" });
    expect(r.pods[0]!.nodes[1]!.rejectedBy!.reasons).toEqual(["node(s) didn't satisfy existing pods anti-affinity rules"]);
    expect(r.pods[0]!.nodes[1]!.checks.find((c) => c.rule === "podAffinity")!.detail).toBe(`the required anti-affinity of default/batch-0 on n1 (its term 0) excludes this pod from ${ZONE}=a`);
  });

  it("terms look in the owner's namespace unless namespaces or a namespaceSelector say otherwise", () => {
    const anti = (extra: Partial<PodAffinityTerm>) => pod("web", { app: "web" }, { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "web" }, HOST, extra)] } } });
    const elsewhere = pod("web-s", { app: "web" }, { nodeName: "n1" }, "staging");
    expect(verdicts(ask(bundleOf(three(), [anti({}), elsewhere]), "web")).n1).toBe("fits");
    expect(verdicts(ask(bundleOf(three(), [anti({ namespaces: ["staging"] }), elsewhere]), "web")).n1).toBe("InterPodAffinity");
    expect(verdicts(ask(bundleOf(three(), [anti({ namespaceSelector: {} }), elsewhere]), "web")).n1).toBe("InterPodAffinity");
    const ns = (name: string, labels: Record<string, string>): Namespace => ({ apiVersion: "v1", kind: "Namespace", metadata: { name, labels } });
    const bySel = anti({ namespaceSelector: { matchLabels: { env: "staging" } } });
    // without Namespace objects the selector is undecided, and the check says which fact decides it
    const undecided = ask(bundleOf(three(), [bySel, elsewhere]), "web");
    expect(undecided.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "podAffinity")!.detail).toContain("namespaceSelector needs the namespaces' labels");
    expect(verdicts(ask(bundleOf(three(), [bySel, elsewhere], [], [ns("staging", { env: "staging" }), ns("default", {})]), "web")).n1).toBe("InterPodAffinity");
    expect(verdicts(ask(bundleOf(three(), [bySel, elsewhere], [], [ns("staging", { env: "prod" }), ns("default", {})]), "web")).n1).toBe("fits");
  });

  // framework/runtime/framework.go RunFilterPluginsWithNominatedPods: a pod a preemption nominated to the node being
  // checked, of no lower priority, is added to that node through the plugin's AddPod (updateWithPod), then the filters
  // run again without it; only the node's own nominees count
  const nominee = (name: string, labels: Record<string, string>, to: string, spec: Record<string, unknown> = {}, priority = 0): Pod =>
    ({ ...pod(name, labels, { priority, ...spec }), status: { phase: "Pending", nominatedNodeName: to } } as Pod);
  it("a pod nominated to n2 holds n2 against this pod's anti-affinity; one of lower priority does not", () => {
    const p = pod("web-3", { app: "web" }, { priority: 10, affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "web" }, HOST)] } } });
    const r = ask(bundleOf(three(), [p, pod("web-0", { app: "web" }, { nodeName: "n1" }), nominee("web-1", { app: "web" }, "n2", {}, 100)]), "web-3");
    expect(verdicts(r)).toEqual({ n1: "InterPodAffinity", n2: "InterPodAffinity", n3: "fits" });
    expect(r.pods[0]!.nodes[1]!.checks.find((c) => c.rule === "podAffinity")!.detail).toBe(
      `anti-affinity term 0 [app=web] by ${HOST}: default/web-1 nominated to n2 in ${HOST}=n2 (counting the pod(s) a preemption nominated to this node: default/web-1)`,
    );
    const low = ask(bundleOf(three(), [p, pod("web-0", { app: "web" }, { nodeName: "n1" }), nominee("web-1", { app: "web" }, "n2", {}, 5)]), "web-3");
    expect(verdicts(low)).toEqual({ n1: "InterPodAffinity", n2: "fits", n3: "fits" });
  });

  it("a required affinity only a nominated pod satisfies fails: the scheduler checks the node without it too", () => {
    const p = pod("api", { app: "api" }, { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "cache" }, ZONE)] } } });
    const r = ask(bundleOf(three(), [p, pod("cache-0", { app: "cache" }, { nodeName: "n3" }), nominee("cache-1", { app: "cache" }, "n1")]), "api");
    expect(verdicts(r)).toEqual({ n1: "InterPodAffinity", n2: "InterPodAffinity", n3: "fits" });
    const n1 = r.pods[0]!.nodes[0]!;
    expect(n1.rejectedBy!.reasons).toEqual(["node(s) didn't match pod affinity rules"]);
    expect(n1.checks.find((c) => c.rule === "podAffinity")!.detail).toBe(
      `affinity term 0 [app=cache] by ${ZONE}: no matching pod in ${ZONE}=a (without the pod(s) a preemption nominated to this node, default/cache-1: the scheduler checks the node both with and without them)`,
    );
    // with the cache bound in zone a as well, both checks pass on n1
    const both = ask(bundleOf(three(), [p, pod("cache-0", { app: "cache" }, { nodeName: "n2" }), nominee("cache-1", { app: "cache" }, "n1")]), "api");
    expect(verdicts(both)).toEqual({ n1: "fits", n2: "fits", n3: "InterPodAffinity" });
    expect(both.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "podAffinity")!.detail).toContain("counting the pod(s) a preemption nominated to this node (default/cache-1) and without them");
  });

  it("a nominated pod's term with a namespaceSelector the bundle cannot decide (no Namespaces) is said on its node, as a bound pod's is", () => {
    const guard = nominee("batch-0", { app: "batch" }, "n1", { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "web" }, ZONE, { namespaceSelector: { matchLabels: { team: "web" } } })] } } });
    const r = ask(bundleOf(three(), [pod("web", { app: "web" }, { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "x" }, HOST)] } } }), guard]), "web");
    expect(r.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "podAffinity")!.detail).toContain(
      `(default/batch-0; undecided, counted as no match: anti-affinity of default/batch-0 term 0 [app=web] namespaceSelector [team=web] by ${ZONE})`,
    );
    expect(r.pods[0]!.nodes[1]!.checks.find((c) => c.rule === "podAffinity")!.detail).not.toContain("undecided");
  });

  it("a nominated pod's own anti-affinity rejects its node, not the other nodes of its zone (only the node's nominees are added)", () => {
    const guard = nominee("batch-0", { app: "batch" }, "n1", { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "web" }, ZONE)] } } });
    const r = ask(bundleOf(three(), [pod("web", { app: "web" }), guard]), "web");
    expect(verdicts(r)).toEqual({ n1: "InterPodAffinity", n2: "fits", n3: "fits" });
    expect(r.pods[0]!.nodes[0]!.rejectedBy!.reasons).toEqual(["node(s) didn't satisfy existing pods anti-affinity rules"]);
    expect(r.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "podAffinity")!.detail).toContain(`default/batch-0 nominated to n1 (its term 0) excludes this pod from ${ZONE}=a`);
  });

  it("a node without the affinity term's topologyKey is rejected", () => {
    const p = pod("api", { app: "api" }, { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "cache" }, ZONE)] } } });
    const r = ask(bundleOf([...three(), node("edge", null)], [p, pod("cache-0", { app: "cache" }, { nodeName: "n1" })]), "api");
    expect(r.pods[0]!.nodes.find((n) => n.node === "edge")!.checks.find((c) => c.rule === "podAffinity")!.detail).toContain(`the node has no label ${ZONE}`);
  });

  it("spread runs before affinity (the default profile's filter order), and the text table shows both columns", () => {
    const p = pod("new", { app: "web" }, {
      topologySpreadConstraints: [spread({})],
      affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "web" }, HOST)] } },
    });
    const r = ask(bundleOf(fourNodes(), [p, ...threeWeb()]), "new");
    expect(verdicts(r)).toEqual({ node1: "PodTopologySpread", node2: "PodTopologySpread", node3: "InterPodAffinity", node4: "fits" });
    const text = renderPendingText(r, { color: false });
    expect(text).toMatch(/SPREAD\s+POD AFFINITY\s+VERDICT/);
    expect(text).toContain("topology spread constraint 0");
  });
});

describe("classification and the bundle", () => {
  it.each([
    ["node(s) didn't match pod topology spread constraints", "topology-spread"],
    ["node(s) didn't match pod topology spread constraints (missing required label)", "topology-spread"],
    ["node(s) didn't satisfy existing pods anti-affinity rules", "pod-affinity"],
    ["node(s) didn't match pod affinity rules", "pod-affinity"],
    ["node(s) didn't match pod anti-affinity rules", "pod-affinity"],
    ["node(s) didn't match pod affinity/anti-affinity", "pod-affinity-umbrella"],
    ["node(s) didn't satisfy plugin(s) [InterPodAffinity]", "pod-affinity"],
    ["node(s) didn't satisfy plugin(s) [PodTopologySpread]", "topology-spread"],
  ])("%s → %s", (reason, kind) => {
    expect(classifyReason(reason).kind).toBe(kind);
    expect(parseSchedulerMessage(`0/2 nodes are available: 2 ${reason}.`).reasons[0]!.kind).toBe(kind);
  });

  it("label selectors: nil matches nothing (affinity) or everything (PVC), {} everything, NotIn matches a missing key", () => {
    expect(labelSelectorMatches(undefined, { a: "1" }, "nothing")).toBe(false);
    expect(labelSelectorMatches(undefined, { a: "1" }, "everything")).toBe(true);
    expect(labelSelectorMatches({}, {}, "nothing")).toBe(true);
    expect(labelSelectorMatches({ matchExpressions: [{ key: "a", operator: "NotIn", values: ["1"] }] }, {}, "nothing")).toBe(true);
    expect(labelSelectorMatches({ matchExpressions: [{ key: "a", operator: "In", values: ["1"] }] }, {}, "nothing")).toBe(false);
  });

  it("the allow-list keeps the required terms and spread constraints (and drops preferred terms); Namespaces keep labels only; a bundle file round-trips them", () => {
    const p = pod("new", { app: "web" }, {
      topologySpreadConstraints: [spread({})],
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "web" }, HOST)],
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: term({ app: "x" }, HOST) }],
        },
      },
    });
    const b = bundleOf(fourNodes(), [p, ...threeWeb()], [], [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "default", labels: { team: "a" }, annotations: { secret: "x" } } }]);
    const kept = allowListObjects(b.objects);
    const keptPod = kept.pods[0]!;
    expect(keptPod.spec!.topologySpreadConstraints).toEqual([spread({})]);
    expect(keptPod.spec!.affinity!.podAntiAffinity).toEqual({ requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "web" }, HOST)] });
    expect(kept.namespaces[0]).toEqual({ apiVersion: "v1", kind: "Namespace", metadata: { name: "default", labels: { team: "a" } } });
    const text = JSON.stringify({ format: "kubectl-netpath/bundle", version: 1, objects: { ...kept } });
    const back = decodeBundle(text, "b.json");
    expect(back.objects.namespaces).toHaveLength(1);
    expect(verdicts(ask(back, "new"))).toEqual({ node1: "PodTopologySpread", node2: "PodTopologySpread", node3: "InterPodAffinity", node4: "fits" });
  });
});

describe("examples/scheduling (the README's --why-pending examples)", () => {
  const dir = new URL("../examples/scheduling/", import.meta.url);
  const b = () => bundleFromFiles(readdirSync(dir).filter((f) => f.endsWith(".yaml")).map((f) => ({ path: f, text: readFileSync(new URL(f, dir), "utf8") })), "examples/scheduling");
  const q = (name: string) => explainPending(b(), { kind: "pod", namespace: "shop", name });

  it("web-7d9f-3: spread rejects eu-west-1a, memory rejects eu-west-1b; the first line is the scheduler's, and they agree", () => {
    const r = q("web-7d9f-3");
    expect(r.answer.split("\n")[0]).toBe("Pod shop/web-7d9f-3 cannot be scheduled: 0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't match pod topology spread constraints.");
    expect(Object.fromEntries(r.pods[0]!.nodes.map((n) => [n.node, n.rejectedBy?.plugin]))).toEqual({ "pool-a-1": "PodTopologySpread", "pool-a-2": "PodTopologySpread", "pool-b-1": "NodeResourcesFit" });
    expect(r.pods[0]!.reconciliation.status).toBe("agree");
  });

  it("train-0: Insufficient cpu on every node, memory on pool-b-1 too; agree", () => {
    const r = q("train-0");
    expect(r.answer.split("\n")[0]).toBe("Pod shop/train-0 cannot be scheduled: 0/3 nodes are available: 1 Insufficient memory, 3 Insufficient cpu.");
    expect(r.pods[0]!.reconciliation.status).toBe("agree");
  });
  // framework/types.go FitError: the histogram counts exact reason strings; "Insufficient cpu" and "Insufficient
  // memory" are two reasons (they were compared as one kind, "resources", and said to agree)
  it("train-0 against a message that blames other resources: a disagreement per reason, not an agreement by kind", () => {
    const bundle = b();
    const other = "0/3 nodes are available: 1 Too many pods, 3 Insufficient memory.";
    for (const e of bundle.objects.events) if (e.reason === "FailedScheduling" && e.involvedObject?.name === "train-0") e.message = other;
    for (const p of bundle.objects.pods) if (p.metadata.name === "train-0") for (const c of p.status?.conditions ?? []) if (c.type === "PodScheduled") c.message = other;
    const r = explainPending(bundle, { kind: "pod", namespace: "shop", name: "train-0" }).pods[0]!;
    expect(r.reconciliation.status).toBe("disagree");
    expect(r.reconciliation.details).toEqual(expect.arrayContaining([
      'resources "Insufficient cpu": the event says 0 node(s), the bundle gives 3.',
      'resources "Insufficient memory": the event says 3 node(s), the bundle gives 1.',
      'resources "Too many pods": the event says 1 node(s), the bundle gives 0.',
    ]));
  });
});

describe("live: what the pod's affinity costs", () => {
  it("an unscheduled pod without requests still gets the one pod list (bound pods' anti-affinity applies to it); a namespaceSelector adds one namespace list", async () => {
    const { startFakeApiServer } = await import("./helpers/fake_apiserver.ts");
    const { run } = await import("./helpers/live_cli.ts");
    const ns = (name: string, labels: Record<string, string>): Namespace => ({ apiVersion: "v1", kind: "Namespace", metadata: { name, labels } });
    const p = pod("web", { app: "web" }, { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "web" }, HOST, { namespaceSelector: { matchLabels: { env: "staging" } } })] } } });
    const plain = pod("plain", { app: "plain" });
    const guard = pod("web-s", { app: "web" }, { nodeName: "n1" }, "staging");
    const s = await startFakeApiServer({ objects: { nodes: [node("n1", "a"), node("n2", "a")], pods: [p, plain, guard], namespaces: [ns("staging", { env: "staging" }), ns("default", {})] } });
    try {
      const r = await run(["pod/web", "-n", "default", "--why-pending", "--kubeconfig", s.kubeconfig, "-o", "json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(s.requests.filter((x) => x.method === "GET" && x.path === "/api/v1/namespaces")).toHaveLength(1);
      const report = JSON.parse(r.stdout) as { pods: { nodes: { node: string; rejectedBy: { plugin: string } | null }[] }[] };
      expect(report.pods[0]!.nodes.map((n) => n.rejectedBy?.plugin ?? "fits")).toEqual(["InterPodAffinity", "fits"]);
      const before = s.requests.length;
      const r2 = await run(["pod/plain", "-n", "default", "--why-pending", "--kubeconfig", s.kubeconfig, "-o", "json"]);
      expect(r2.code, r2.stderr).toBe(0);
      const mine = s.requests.slice(before);
      expect(mine.filter((x) => x.method === "GET" && x.path === "/api/v1/pods")).toHaveLength(1);
      expect(mine.filter((x) => x.path === "/api/v1/namespaces")).toHaveLength(0);
    } finally {
      await s.close();
    }
  }, 60_000);
});

describe("VolumeRestrictions: a ReadWriteOncePod claim already in use", () => {
  const claim = (name: string, modes: string[]) =>
    ({ apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name, namespace: "default", annotations: { "pv.kubernetes.io/bind-completed": "yes" } }, spec: { accessModes: modes, volumeName: `pv-${name}`, storageClassName: "" }, status: { phase: "Bound" } });
  const volume = (name: string) =>
    ({ apiVersion: "v1", kind: "PersistentVolume", metadata: { name: `pv-${name}` }, spec: { accessModes: ["ReadWriteOncePod"], capacity: { storage: "1Gi" }, claimRef: { namespace: "default", name } }, status: { phase: "Bound" } });
  const mounting = (name: string, claimName: string, spec: Record<string, unknown> = {}) => pod(name, { app: "db" }, { ...spec, volumes: [{ name: "data", persistentVolumeClaim: { claimName } }] });

  function withClaims(pods: Pod[], modes: string[], events: KubeEvent[] = []) {
    const b = bundleOf([node("n1", "a"), node("n2", "a"), node("n3", "b")], pods, events);
    b.objects.persistentVolumeClaims.push(claim("data", modes) as never);
    b.objects.persistentVolumes.push(volume("data") as never);
    return b;
  }

  // readWriteOncePodPVCsForPod (the pod to place) and NodeInfo.updatePVCRefCounts (the pods on the nodes) count only
  // persistentVolumeClaim volumes: a generic ephemeral volume's claim is on neither side
  it("a generic ephemeral volume's claim is not counted, on either side (readWriteOncePodPVCsForPod, updatePVCRefCounts)", () => {
    const ephemeral = (name: string, spec: Record<string, unknown> = {}) =>
      pod(name, { app: "db" }, { ...spec, volumes: [{ name: "data", ephemeral: { volumeClaimTemplate: { spec: { accessModes: ["ReadWriteOncePod"], resources: { requests: { storage: "1Gi" } } } } } }] });
    const rwop = (claimName: string, pods: Pod[]) => {
      const b = bundleOf([node("n1", "a"), node("n2", "a"), node("n3", "b")], pods);
      b.objects.persistentVolumeClaims.push({ ...claim(claimName, ["ReadWriteOncePod"]), metadata: { name: claimName, namespace: "default", annotations: { "pv.kubernetes.io/bind-completed": "yes" } }, spec: { accessModes: ["ReadWriteOncePod"], volumeName: "pv-data", storageClassName: "" } } as never);
      b.objects.persistentVolumes.push({ ...volume("data"), spec: { ...volume("data").spec, claimRef: { namespace: "default", name: claimName } } } as never);
      return b;
    };
    // the pod to place mounts its RWOP claim through an ephemeral volume, another pod mounts that claim by name
    const mine = ask(rwop("db-new-data", [ephemeral("db-new"), mounting("db-old", "db-new-data", { nodeName: "n2" })]), "db-new");
    expect(verdicts(mine)).toEqual({ n1: "fits", n2: "fits", n3: "fits" });
    // the pod on n2 holds it through its ephemeral volume, the pod to place names it
    const theirs = ask(rwop("db-old-data", [mounting("db-new", "db-old-data"), ephemeral("db-old", { nodeName: "n2" })]), "db-new");
    expect(verdicts(theirs)).toEqual({ n1: "fits", n2: "fits", n3: "fits" });
    // by name on both sides: the conflict
    expect(verdicts(ask(rwop("shared", [mounting("db-new", "shared"), mounting("db-old", "shared", { nodeName: "n2" })]), "db-new")))
      .toEqual({ n1: "VolumeRestrictions", n2: "VolumeRestrictions", n3: "VolumeRestrictions" });
  });

  it("held by a running pod: every node fails with the scheduler's words, and the event agrees", () => {
    const msg = "0/3 nodes are available: 3 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.";
    const r = ask(withClaims([mounting("db-new", "data"), mounting("db-old", "data", { nodeName: "n2" })], ["ReadWriteOncePod"], [event("db-new", msg)]), "db-new");
    expect(r.answer.split("\n")[0]).toContain("0/3 nodes are available: 3 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode.");
    expect(r.pods[0]!.reconciliation.status).toBe("agree");
    expect(r.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "volumeRestrictions")!.detail).toBe("claim data is ReadWriteOncePod and held by default/db-old on n2");
  });

  it("ReadWriteOnce, or the holder finished: no conflict; an event that still names it is a disagreement, not an unmodelled check", () => {
    expect(verdicts(ask(withClaims([mounting("db-new", "data"), mounting("db-old", "data", { nodeName: "n2" })], ["ReadWriteOnce"]), "db-new"))).toEqual({ n1: "fits", n2: "fits", n3: "fits" });
    const done = { ...mounting("db-old", "data", { nodeName: "n2" }), status: { phase: "Succeeded" } } as Pod;
    const msg = "0/3 nodes are available: 3 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode.";
    const r = ask(withClaims([mounting("db-new", "data"), done], ["ReadWriteOncePod"], [event("db-new", msg)]), "db-new");
    expect(verdicts(r)).toEqual({ n1: "fits", n2: "fits", n3: "fits" });
    expect(r.pods[0]!.reconciliation.status).toBe("disagree");
    expect(r.pods[0]!.reconciliation.details.join(" ")).not.toContain("does not model");
  });
});

describe("DynamicResources: the pod's ResourceClaims", () => {
  const rc = (name: string, allocation?: Record<string, unknown>) => ({
    apiVersion: "resource.k8s.io/v1",
    kind: "ResourceClaim",
    metadata: { name, namespace: "default" },
    spec: { devices: { requests: [{ name: "gpu", exactly: { deviceClassName: "gpu.example.com" } }] } },
    status: allocation ? { allocation } : {},
  });
  const gpuPod = (claims: { name: string; resourceClaimName?: string; resourceClaimTemplateName?: string }[], statuses?: { name: string; resourceClaimName?: string }[]) =>
    ({ ...pod("train", { app: "train" }, { resourceClaims: claims }), status: { phase: "Pending", ...(statuses ? { resourceClaimStatuses: statuses } : {}) } } as Pod);
  const three = () => [node("n1", "a"), node("n2", "a"), node("n3", "b")];
  const withClaims = (p: Pod, claims: unknown[], events: KubeEvent[] = []) => {
    const b = bundleOf(three(), [p], events);
    b.objects.resourceClaims.push(...(claims as never[]));
    return b;
  };

  it("an unallocated claim: every node fits the other filters, and the first line says the pod waits for DRA, with the device class", () => {
    const r = ask(withClaims(gpuPod([{ name: "gpu", resourceClaimName: "train-gpu" }]), [rc("train-gpu")]), "train");
    expect(r.answer.split("\n")[0]).toBe(
      "Pod default/train waits for Dynamic Resource Allocation: ResourceClaim train-gpu is not allocated (device class gpu.example.com): the scheduler allocates it while placing the pod, from the ResourceSlices the drivers publish — whether such devices are free is not checked here (by the other rules checked here 3/3 nodes fit).",
    );
  });

  it("a template whose claim is not created yet, and a claim that does not exist", () => {
    expect(ask(withClaims(gpuPod([{ name: "gpu", resourceClaimTemplateName: "gpu-tpl" }]), []), "train").answer).toContain(
      "claim gpu (template gpu-tpl) has no ResourceClaim yet: the ResourceClaim controller of kube-controller-manager creates it",
    );
    expect(ask(withClaims(gpuPod([{ name: "gpu", resourceClaimTemplateName: "gpu-tpl" }], [{ name: "gpu", resourceClaimName: "train-gpu-x7k2" }]), []), "train").answer).toContain(
      "Root cause: ResourceClaim default/train-gpu-x7k2 does not exist (claim gpu of pod default/train).",
    );
  });

  it("a status entry without a resourceClaimName: no claim was needed, the scheduler skips it (resourceclaim.Name returns nil), nothing waits", () => {
    const r = ask(withClaims(gpuPod([{ name: "gpu", resourceClaimTemplateName: "gpu-tpl" }], [{ name: "gpu" }]), []), "train");
    expect(r.pods[0]!.resourceClaims).toEqual([expect.objectContaining({ podClaimName: "gpu", claimName: null, state: "not-needed" })]);
    expect(r.answer).not.toContain("has no ResourceClaim yet");
    expect(r.answer).not.toContain("Dynamic Resource Allocation");
    expect(r.pods[0]!.summary!.feasibleNodes).toEqual(["n1", "n2", "n3"]);
    expect(renderPendingText(r, { color: false })).toContain("resource claim gpu → no ResourceClaim: none needed (template gpu-tpl: the pod's status lists it without a ResourceClaim)");
  });

  it("a claim being deleted: PreFilter rejects every node in the scheduler's words (foreachPodResourceClaim), and the event agrees", () => {
    const deleting = { ...rc("train-gpu"), metadata: { name: "train-gpu", namespace: "default", deletionTimestamp: "2026-11-27T07:00:00Z" } };
    const msg = '0/3 nodes are available: resourceclaim "train-gpu" is being deleted. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.';
    const r = ask(withClaims(gpuPod([{ name: "gpu", resourceClaimName: "train-gpu" }]), [deleting], [event("train", msg)]), "train");
    expect(r.answer.split("\n")[0]).toBe('Pod default/train cannot be scheduled: 0/3 nodes are available: resourceclaim "train-gpu" is being deleted.');
    expect(r.pods[0]!.reconciliation.status).toBe("agree");
  });

  // dynamicresources.go PreFilter → podResourceClaims → foreachPodResourceClaim: the claim's Get error, as is
  // (UnschedulableAndUnresolvable): the assume cache's `could not find ResourceClaim "ns/name"` from v1.31, the
  // lister's `resourceclaim.resource.k8s.io "name" not found` in v1.27–v1.30; PreEnqueue runs the same check first
  it("a claim the pod names that does not exist: PreFilter rejects every node, in the words of the scheduler's release", () => {
    const named = () => gpuPod([{ name: "gpu", resourceClaimName: "train-gpu" }]);
    const versioned = (v: string) => three().map((n) => ({ ...n, status: { ...n.status, nodeInfo: { kubeletVersion: v } } }) as Node);
    const current = ask(withClaims(named(), []), "train");
    expect(verdicts(current)).toEqual({ n1: "DynamicResources", n2: "DynamicResources", n3: "DynamicResources" });
    expect(current.answer.split("\n")[0]).toBe(
      'Pod default/train cannot be scheduled: 0/3 nodes are available: could not find ResourceClaim "default/train-gpu". Root cause: ResourceClaim default/train-gpu does not exist (claim gpu of pod default/train).',
    );
    expect(current.findings[0]).toMatchObject({ id: "resource-claim-missing", severity: "error" });
    expect(current.pods[0]!.notes!.join(" ")).toContain("DynamicResources' PreEnqueue holds the pod back from scheduling while it is missing");
    // a v1.30 scheduler read claims from the lister; its event agrees with the same claim in either release's words
    const msg30 = '0/3 nodes are available: resourceclaim.resource.k8s.io "train-gpu" not found. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.';
    const b30 = bundleOf(versioned("v1.30.4"), [named()], [event("train", msg30)]);
    const old = ask(b30, "train");
    expect(old.pods[0]!.summary!.message).toBe('0/3 nodes are available: resourceclaim.resource.k8s.io "train-gpu" not found.');
    expect(old.pods[0]!.reconciliation.status).toBe("agree");
    const b33 = bundleOf(versioned("v1.33.4"), [named()], [event("train", msg30)]);
    expect(ask(b33, "train").pods[0]!.reconciliation.status).toBe("agree");
    // another claim's name is not the same reason
    const other = bundleOf(versioned("v1.33.4"), [named()], [event("train", msg30.replace('"train-gpu"', '"other"'))]);
    expect(ask(other, "train").pods[0]!.reconciliation.status).toBe("disagree");
    // reading it was forbidden: its state is unknown, no node is rejected for it, and the finding says what decides it
    const hidden = withClaims(named(), []);
    hidden.warnings.push("get resourceclaims is forbidden (403): the state of ResourceClaim train-gpu is unknown");
    const unknown = ask(hidden, "train");
    expect(unknown.pods[0]!.summary!.feasibleNodes).toEqual(["n1", "n2", "n3"]);
    expect(unknown.findings.find((f) => f.id === "resource-claim-unknown")!.suggestion).toContain('grant "get" on resourceclaims');
  });

  it("an allocated claim pinned by its node selector: the other nodes fail with the scheduler's words, and the event agrees", () => {
    const allocation = {
      nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["n3"] }] }] },
      devices: { results: [{ request: "gpu", driver: "gpu.example.com", pool: "n3", device: "gpu-0" }] },
    };
    const msg = "0/3 nodes are available: 2 resourceclaim not available on the node, 1 node(s) didn't match pod anti-affinity rules.";
    const p = { ...gpuPod([{ name: "gpu", resourceClaimName: "train-gpu" }]), spec: { ...gpuPod([{ name: "gpu", resourceClaimName: "train-gpu" }]).spec, affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "train" }, HOST)] } } } } as Pod;
    const other = pod("train-old", { app: "train" }, { nodeName: "n3" });
    const b = withClaims(p, [rc("train-gpu", allocation)], [event("train", msg)]);
    b.objects.pods.push(other);
    const r = ask(b, "train");
    expect(verdicts(r)).toEqual({ n1: "DynamicResources", n2: "DynamicResources", n3: "InterPodAffinity" });
    expect(r.pods[0]!.reconciliation.status).toBe("agree");
    expect(renderPendingText(r, { color: false })).toContain("resource claim gpu → ResourceClaim train-gpu: allocated (gpu.example.com/n3/gpu-0)");
  });
});

describe("live: DRA claims at the version the server serves", () => {
  it.each(["resource.k8s.io/v1", "resource.k8s.io/v1beta1"])("served at %s: one GET per version tried, the claim lands in the bundle", async (served) => {
    const { startFakeApiServer } = await import("./helpers/fake_apiserver.ts");
    const { run } = await import("./helpers/live_cli.ts");
    const p = { ...pod("train", { app: "train" }, { resourceClaims: [{ name: "gpu", resourceClaimName: "train-gpu" }] }), status: { phase: "Pending" } } as Pod;
    const claim = { apiVersion: served, kind: "ResourceClaim", metadata: { name: "train-gpu", namespace: "default" }, spec: { devices: { requests: [{ name: "gpu", deviceClassName: "gpu.example.com" }] } }, status: {} };
    const s = await startFakeApiServer({ objects: { nodes: [node("n1", "a")], pods: [p], resourceClaims: [claim as never] }, servedVersions: { resourceclaims: served } });
    try {
      const r = await run(["pod/train", "-n", "default", "--why-pending", "--kubeconfig", s.kubeconfig, "-o", "json"]);
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as { answer: string; pods: { resourceClaims: { claimName: string; state: string; deviceClasses: string[] }[] }[] };
      expect(report.pods[0]!.resourceClaims).toMatchObject([{ claimName: "train-gpu", state: "unallocated", deviceClasses: ["gpu.example.com"] }]);
      expect(report.answer).toContain("ResourceClaim train-gpu is not allocated (device class gpu.example.com)");
      const gets = s.requests.filter((x) => x.path.includes("/resourceclaims/"));
      expect(gets.map((x) => x.path.split("/")[3])).toEqual(served.endsWith("v1") ? ["v1"] : ["v1", "v1beta2", "v1beta1"]);
    } finally {
      await s.close();
    }
  }, 60_000);
});

describe("NodeVolumeLimits: CSI attach limits", () => {
  const csiNode = (name: string, count: number, migrated?: string) =>
    ({ apiVersion: "storage.k8s.io/v1", kind: "CSINode", metadata: { name, ...(migrated ? { annotations: { "storage.alpha.kubernetes.io/migrated-plugins": migrated } } : {}) }, spec: { drivers: [{ name: "ebs.csi.aws.com", nodeID: `i-${name}`, allocatable: { count } }] } });
  const boundPv = (name: string, claimNs: string, claim: string, source: Record<string, unknown> = { csi: { driver: "ebs.csi.aws.com" } }) =>
    ({ apiVersion: "v1", kind: "PersistentVolume", metadata: { name }, spec: { ...source, accessModes: ["ReadWriteOnce"], capacity: { storage: "1Gi" }, claimRef: { namespace: claimNs, name: claim } }, status: { phase: "Bound" } });
  const claimOf = (name: string, volumeName?: string, storageClassName = "gp3") =>
    ({ apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name, namespace: "default", ...(volumeName ? { annotations: { "pv.kubernetes.io/bind-completed": "yes" } } : {}) }, spec: { accessModes: ["ReadWriteOnce"], storageClassName, ...(volumeName ? { volumeName } : {}) }, status: { phase: volumeName ? "Bound" : "Pending" } });
  const withVolumes = (name: string, claims: string[], nodeName?: string) => pod(name, { app: name }, { ...(nodeName ? { nodeName } : {}), volumes: claims.map((c) => ({ name: c, persistentVolumeClaim: { claimName: c } })) });

  function cluster(limit: number, opts: { migrated?: string; inTree?: boolean } = {}) {
    const b = bundleOf([node("n1", "a"), node("n2", "a")], []);
    // n1 already holds two EBS volumes (one in-tree when asked), n2 none
    b.objects.pods.push(withVolumes("old-a", ["va"], "n1"), withVolumes("old-b", ["vb"], "n1"));
    b.objects.persistentVolumes.push(boundPv("pv-a", "default", "va") as never, boundPv("pv-b", "default", "vb", opts.inTree ? { awsElasticBlockStore: {} } : undefined) as never);
    b.objects.csiNodes.push(csiNode("n1", limit, opts.migrated) as never, csiNode("n2", limit, opts.migrated) as never);
    b.objects.storageClasses.push({ apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "gp3" }, provisioner: "ebs.csi.aws.com", volumeBindingMode: "WaitForFirstConsumer" } as never);
    b.objects.persistentVolumeClaims.push(claimOf("new-data") as never);
    b.objects.pods.push(withVolumes("db", ["new-data"]));
    return b;
  }

  it("limit 2 with two attached on n1: n1 exceeds (the scheduler's words), n2 fits", () => {
    const r = ask(cluster(2), "db");
    expect(verdicts(r)).toEqual({ n1: "NodeVolumeLimits", n2: "fits" });
    expect(r.pods[0]!.nodes[0]!.rejectedBy!.reasons).toEqual(["node(s) exceed max volume count"]);
    expect(r.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "volumeLimits")!.detail).toMatch(/^ebs\.csi\.aws\.com: 2 attached \+ 1 new > limit 2/);
  });

  it("limit 3: fits; a volume the pod shares with one already attached is not counted twice", () => {
    expect(verdicts(ask(cluster(3), "db"))).toEqual({ n1: "fits", n2: "fits" });
    const b = cluster(2);
    b.objects.persistentVolumeClaims.push(claimOf("va", "pv-a") as never);
    b.objects.pods.push(withVolumes("reader", ["va"]));
    expect(verdicts(ask(b, "reader"))).toEqual({ n1: "fits", n2: "fits" });
  });

  it("an in-tree EBS volume counts under ebs.csi.aws.com on a node with a CSINode, annotation or not (isCSIMigrationOn)", () => {
    expect(verdicts(ask(cluster(2, { inTree: true }), "db"))).toEqual({ n1: "NodeVolumeLimits", n2: "fits" });
    expect(verdicts(ask(cluster(2, { inTree: true, migrated: "kubernetes.io/aws-ebs,kubernetes.io/gce-pd" }), "db"))).toEqual({ n1: "NodeVolumeLimits", n2: "fits" });
  });

  it("in-tree vsphereVolume and azureFile volumes are never counted, even where the CSINode lists them as migrated", () => {
    for (const [source, plugin, driver] of [["vsphereVolume", "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"], ["azureFile", "kubernetes.io/azure-file", "file.csi.azure.com"]]) {
      const b = bundleOf([node("n1", "a")], []);
      b.objects.pods.push(withVolumes("old-b", ["vb"], "n1"));
      b.objects.persistentVolumes.push(boundPv("pv-b", "default", "vb", { [source!]: {} }) as never, boundPv("pv-c", "default", "vc", { [source!]: {} }) as never);
      const cn = csiNode("n1", 1, plugin) as { spec: { drivers: { name: string }[] } };
      cn.spec.drivers[0]!.name = driver!;
      b.objects.csiNodes.push(cn as never);
      b.objects.persistentVolumeClaims.push(claimOf("vb", "pv-b") as never, claimOf("vc", "pv-c") as never);
      b.objects.pods.push(withVolumes("db", ["vc"]));
      expect(verdicts(ask(b, "db")), source).toEqual({ n1: "fits" });
    }
  });

  // csi.go filterAttachableVolumes runs for every pod on the node as for the pod to place: inline migratable disks
  // (checkAttachableInlineVolume) and claims without a PersistentVolume yet (getCSIDriverInfoFromSC) count too
  it("a pod on n1 with an inline in-tree disk, or with a claim not yet provisioned, takes one of n1's attachments", () => {
    const one = (extra: (b: ReturnType<typeof bundleOf>) => void) => {
      const b = bundleOf([node("n1", "a"), node("n2", "a")], []);
      b.objects.csiNodes.push(csiNode("n1", 1) as never, csiNode("n2", 1) as never);
      b.objects.storageClasses.push({ apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "gp3" }, provisioner: "ebs.csi.aws.com", volumeBindingMode: "WaitForFirstConsumer" } as never);
      b.objects.persistentVolumeClaims.push(claimOf("new-data", "pv-new") as never);
      b.objects.persistentVolumes.push(boundPv("pv-new", "default", "new-data") as never);
      b.objects.pods.push(withVolumes("db", ["new-data"]));
      extra(b);
      return ask(b, "db");
    };
    // an inline awsElasticBlockStore volume of a running pod: counted under ebs.csi.aws.com (n1 has a CSINode)
    const inline = one((b) => b.objects.pods.push(pod("legacy", { app: "legacy" }, { nodeName: "n1", volumes: [{ name: "d", awsElasticBlockStore: { volumeID: "aws://eu-west-1a/vol-0abc" } }] })));
    expect(verdicts(inline)).toEqual({ n1: "NodeVolumeLimits", n2: "fits" });
    expect(inline.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "volumeLimits")!.detail).toMatch(/^ebs\.csi\.aws\.com: 1 attached \+ 1 new > limit 1/);
    // a pod placed on n1 whose WaitForFirstConsumer claim has no volume yet: counted by its StorageClass's provisioner
    const unbound = one((b) => {
      b.objects.persistentVolumeClaims.push(claimOf("placed-data") as never);
      b.objects.pods.push(withVolumes("placed", ["placed-data"], "n1"));
    });
    expect(verdicts(unbound)).toEqual({ n1: "NodeVolumeLimits", n2: "fits" });
    // the same claim, bound later to the same volume as the pod to place: counted once
    const shared = one((b) => b.objects.pods.push(withVolumes("reader", ["new-data"], "n1")));
    expect(verdicts(shared)).toEqual({ n1: "fits", n2: "fits" });
    // a pod on n1 whose claim the bundle does not hold, and no PersistentVolume names: not counted, and said
    const hidden = one((b) => b.objects.pods.push(withVolumes("other", ["elsewhere"], "n1")));
    expect(verdicts(hidden)).toEqual({ n1: "fits", n2: "fits" });
    expect(hidden.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "volumeLimits")!.detail).toContain("not counted, as the bundle holds neither the claim nor a PersistentVolume bound to it: default/elsewhere");
  });

  it("an inline gcePersistentDisk of a running pod counts under pd.csi.storage.gke.io; the pending pod's own inline disk counts too", () => {
    const b = bundleOf([node("n1", "a")], []);
    const cn = csiNode("n1", 1) as { spec: { drivers: { name: string }[] } };
    cn.spec.drivers[0]!.name = "pd.csi.storage.gke.io";
    b.objects.csiNodes.push(cn as never);
    b.objects.pods.push(pod("legacy", { app: "legacy" }, { nodeName: "n1", volumes: [{ name: "d", gcePersistentDisk: { pdName: "old-disk" } }] }));
    b.objects.pods.push(pod("db", { app: "db" }, { volumes: [{ name: "d", gcePersistentDisk: { pdName: "new-disk" } }] }));
    expect(verdicts(ask(b, "db"))).toEqual({ n1: "NodeVolumeLimits" });
    // without a CSINode the in-tree disk is not migrated there (isCSIMigrationOn): no CSI count
    b.objects.csiNodes.length = 0;
    expect(verdicts(ask(b, "db"))).toEqual({ n1: "fits" });
    // a Cinder disk is one volume by its ID, in the bundle as kept: the same disk twice is counted once
    const cinder = (mine: string) => {
      const c = bundleOf([node("n1", "a")], [
        pod("legacy", { app: "legacy" }, { nodeName: "n1", volumes: [{ name: "d", cinder: { volumeID: "c-1", fsType: "ext4", secretRef: { name: "os" } } }] }),
        pod("db", { app: "db" }, { volumes: [{ name: "d", cinder: { volumeID: mine } }] }),
      ]);
      const node1 = csiNode("n1", 1) as { spec: { drivers: { name: string }[] } };
      node1.spec.drivers[0]!.name = "cinder.csi.openstack.org";
      c.objects.csiNodes.push(node1 as never);
      return { ...c, objects: allowListObjects(c.objects) };
    };
    expect(verdicts(ask(cinder("c-2"), "db"))).toEqual({ n1: "NodeVolumeLimits" });
    expect(verdicts(ask(cinder("c-1"), "db"))).toEqual({ n1: "fits" });
    expect(JSON.stringify(cinder("c-1").objects.pods[0]!.spec!.volumes)).not.toMatch(/secretRef|fsType/);
  });

  it("the scheduler's event agrees; without CSINodes the check is not made and the reconciliation says it has no data", () => {
    const msg = "0/2 nodes are available: 1 node(s) exceed max volume count, 1 node(s) had untolerated taint {dedicated: db}.";
    const b = cluster(2);
    b.objects.nodes[1]!.spec = { taints: [{ key: "dedicated", value: "db", effect: "NoSchedule" }] };
    b.objects.events.push(event("db", msg));
    expect(ask(b, "db").pods[0]!.reconciliation.status).toBe("agree");
    b.objects.csiNodes.length = 0;
    const r = ask(b, "db");
    expect(r.pods[0]!.reconciliation.details.join(" ")).toContain('"1 node(s) exceed max volume count", a check this analysis does not model (it has no data for it)');
  });
});

describe("live: CSINodes are read for a pod that mounts a claim", () => {
  it("one list of csinodes, kept with its limits; none for a pod without claims", async () => {
    const { startFakeApiServer } = await import("./helpers/fake_apiserver.ts");
    const { run } = await import("./helpers/live_cli.ts");
    const withClaim = pod("db", { app: "db" }, { volumes: [{ name: "d", persistentVolumeClaim: { claimName: "data" } }] });
    const plain = pod("plain", { app: "plain" });
    const legacy = pod("legacy", { app: "legacy" }, { volumes: [{ name: "d", awsElasticBlockStore: { volumeID: "vol-0abc" } }] });
    const claim = { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "data", namespace: "default" }, spec: { accessModes: ["ReadWriteOnce"], storageClassName: "gp3" }, status: { phase: "Pending" } };
    const sc = { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "gp3" }, provisioner: "ebs.csi.aws.com", volumeBindingMode: "WaitForFirstConsumer" };
    const cn = { apiVersion: "storage.k8s.io/v1", kind: "CSINode", metadata: { name: "n1" }, spec: { drivers: [{ name: "ebs.csi.aws.com", nodeID: "i-0abc", allocatable: { count: 0 } }] } };
    const s = await startFakeApiServer({ objects: { nodes: [node("n1", "a")], pods: [withClaim, plain, legacy], persistentVolumeClaims: [claim as never], storageClasses: [sc as never], csiNodes: [cn as never] } });
    try {
      const r = await run(["pod/db", "-n", "default", "--why-pending", "--kubeconfig", s.kubeconfig, "-o", "json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(s.requests.filter((x) => x.path === "/apis/storage.k8s.io/v1/csinodes")).toHaveLength(1);
      // the claim is still to provision: the CSIDrivers are read; none tracks capacity, so no CSIStorageCapacity list
      expect(s.requests.filter((x) => x.path === "/apis/storage.k8s.io/v1/csidrivers")).toHaveLength(1);
      expect(s.requests.filter((x) => x.path.endsWith("/csistoragecapacities"))).toHaveLength(0);
      const report = JSON.parse(r.stdout) as { pods: { nodes: { rejectedBy: { plugin: string } | null }[] }[] };
      expect(report.pods[0]!.nodes[0]!.rejectedBy?.plugin).toBe("NodeVolumeLimits");
      const before = s.requests.length;
      const r2 = await run(["pod/plain", "-n", "default", "--why-pending", "--kubeconfig", s.kubeconfig, "-o", "json"]);
      expect(r2.code, r2.stderr).toBe(0);
      expect(s.requests.slice(before).filter((x) => x.path.includes("csinodes"))).toHaveLength(0);
      // an inline in-tree disk counts under its CSI driver (checkAttachableInlineVolume): the CSINodes are read for it
      const mark = s.requests.length;
      const r3 = await run(["pod/legacy", "-n", "default", "--why-pending", "--kubeconfig", s.kubeconfig, "-o", "json"]);
      expect(r3.code, r3.stderr).toBe(0);
      expect(s.requests.slice(mark).filter((x) => x.path === "/apis/storage.k8s.io/v1/csinodes")).toHaveLength(1);
    } finally {
      await s.close();
    }
  }, 60_000);
});

describe("VolumeBinding: CSIStorageCapacity for a claim to provision", () => {
  const TOPO = "topology.topolvm.io/node";
  function topolvm(opts: { capacities?: [string, string, string?][]; tracks?: boolean } = {}) {
    const b = bundleOf([
      { ...node("n1", "a"), metadata: { name: "n1", labels: { [HOST]: "n1", [TOPO]: "n1" } } },
      { ...node("n2", "a"), metadata: { name: "n2", labels: { [HOST]: "n2", [TOPO]: "n2" } } },
    ], [pod("db", { app: "db" }, { volumes: [{ name: "d", persistentVolumeClaim: { claimName: "data" } }] })]);
    b.objects.storageClasses.push({ apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "topolvm-provisioner" }, provisioner: "topolvm.io", volumeBindingMode: "WaitForFirstConsumer" } as never);
    b.objects.persistentVolumeClaims.push({ apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "data", namespace: "default" }, spec: { accessModes: ["ReadWriteOnce"], storageClassName: "topolvm-provisioner", resources: { requests: { storage: "10Gi" } } }, status: { phase: "Pending" } } as never);
    b.objects.csiDrivers.push({ apiVersion: "storage.k8s.io/v1", kind: "CSIDriver", metadata: { name: "topolvm.io" }, spec: { storageCapacity: opts.tracks ?? true } } as never);
    for (const [n, capacity, max] of opts.capacities ?? [["n1", "5Gi"], ["n2", "50Gi"]]) {
      b.objects.csiStorageCapacities.push({ apiVersion: "storage.k8s.io/v1", kind: "CSIStorageCapacity", metadata: { name: `csisc-${n}`, namespace: "topolvm-system" }, storageClassName: "topolvm-provisioner", nodeTopology: { matchLabels: { [TOPO]: n } }, capacity, ...(max ? { maximumVolumeSize: max } : {}) } as never);
    }
    return b;
  }

  it("5Gi free on n1, 50Gi on n2, 10Gi asked: n1 did not have enough free storage; the event agrees", () => {
    const b = topolvm();
    b.objects.events.push(event("db", "0/2 nodes are available: 1 node(s) did not have enough free storage. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."));
    const r = ask(b, "db");
    expect(verdicts(r)).toEqual({ n1: "VolumeBinding", n2: "fits" });
    expect(r.pods[0]!.nodes[0]!.rejectedBy!.reasons).toEqual(["node(s) did not have enough free storage"]);
    expect(r.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "volume")!.detail).toBe("not enough free storage for 10Gi: topolvm-system/csisc-n1 capacity 5Gi");
    expect(r.pods[0]!.reconciliation.status).toBe("agree");
  });

  it("maximumVolumeSize wins over capacity; no capacity object for a node is not enough; a driver that does not track capacity is not checked", () => {
    expect(verdicts(ask(topolvm({ capacities: [["n1", "100Gi", "8Gi"], ["n2", "50Gi"]] }), "db"))).toEqual({ n1: "VolumeBinding", n2: "fits" });
    expect(verdicts(ask(topolvm({ capacities: [["n2", "50Gi"]] }), "db"))).toEqual({ n1: "VolumeBinding", n2: "fits" });
    expect(verdicts(ask(topolvm({ tracks: false }), "db"))).toEqual({ n1: "fits", n2: "fits" });
  });
});

describe("VolumeRestrictions: an inline disk already mounted on the node", () => {
  const gce = (pdName: string, readOnly = false) => ({ name: "disk", gcePersistentDisk: { pdName, fsType: "ext4", readOnly } });
  const three = () => [node("n1", "a"), node("n2", "a"), node("n3", "b")];
  it("the same GCE PD read-write on n1: n1 had no available disk (before the other checks of the plugin), the event agrees; both read-only: no conflict", () => {
    const holder = pod("legacy-0", { app: "legacy" }, { nodeName: "n1", volumes: [gce("data-disk")] });
    const msg = "0/3 nodes are available: 1 node(s) had no available disk, 2 node(s) didn't match Pod's node affinity/selector.";
    const p = pod("legacy-1", { app: "legacy" }, { nodeSelector: { [ZONE]: "a" }, volumes: [gce("data-disk")] });
    const b = bundleOf([node("n1", "a"), node("n2", "b"), node("n3", "b")], [p, holder], [event("legacy-1", msg)]);
    const r = ask(b, "legacy-1");
    expect(verdicts(r)).toEqual({ n1: "VolumeRestrictions", n2: "NodeAffinity", n3: "NodeAffinity" });
    expect(r.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "volumeRestrictions")!.detail).toBe("GCE PD data-disk (volume disk) is mounted by pod default/legacy-0");
    expect(r.pods[0]!.reconciliation.status).toBe("agree");
    const ro = ask(bundleOf(three(), [pod("r", { app: "r" }, { volumes: [gce("data-disk", true)] }), pod("h", { app: "h" }, { nodeName: "n1", volumes: [gce("data-disk", true)] })]), "r");
    expect(verdicts(ro)).toEqual({ n1: "fits", n2: "fits", n3: "fits" });
  });

  it("AWS EBS by volume ID, RBD by monitor/pool/image, iSCSI by IQN; the bundle keeps exactly those identities", () => {
    const cases = [
      [{ name: "v", awsElasticBlockStore: { volumeID: "vol-0abc" } }, { name: "w", awsElasticBlockStore: { volumeID: "vol-0abc", fsType: "ext4" } }],
      [{ name: "v", rbd: { monitors: ["10.0.0.1:6789", "10.0.0.2:6789"], pool: "rbd", image: "img" } }, { name: "w", rbd: { monitors: ["10.0.0.2:6789"], pool: "rbd", image: "img", secretRef: { name: "ceph" } } }],
      [{ name: "v", iscsi: { iqn: "iqn.2001-04.com.example:storage.disk1", targetPortal: "10.0.0.9:3260", lun: 0 } }, { name: "w", iscsi: { iqn: "iqn.2001-04.com.example:storage.disk1", targetPortal: "10.0.0.9:3260", lun: 0 } }],
    ];
    for (const [mine, theirs] of cases) {
      const b = bundleOf(three(), [pod("p", { app: "p" }, { volumes: [mine] }), pod("h", { app: "h" }, { nodeName: "n2", volumes: [theirs] })]);
      expect(verdicts(ask(b, "p"))).toEqual({ n1: "fits", n2: "VolumeRestrictions", n3: "fits" });
      const kept = allowListObjects(b.objects).pods[1]!.spec!.volumes![0]!;
      expect(JSON.stringify(kept)).not.toMatch(/secretRef|targetPortal|fsType|lun/);
      expect(verdicts(ask({ ...b, objects: allowListObjects(b.objects) }, "p"))).toEqual({ n1: "fits", n2: "VolumeRestrictions", n3: "fits" });
    }
  });
});

describe("VolumeAttributesClass", () => {
  const claimVac = (vac: string | undefined, volumeName?: string) =>
    ({ apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "data", namespace: "default" }, spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", resources: { requests: { storage: "10Gi" } }, ...(vac ? { volumeAttributesClassName: vac } : {}), ...(volumeName ? { volumeName } : {}) }, status: { phase: "Pending" } });
  const pvVac = (vac: string | undefined) =>
    ({ apiVersion: "v1", kind: "PersistentVolume", metadata: { name: "pv-1" }, spec: { accessModes: ["ReadWriteOnce"], capacity: { storage: "10Gi" }, storageClassName: "fast", ...(vac ? { volumeAttributesClassName: vac } : {}), local: { path: "/mnt" } }, status: { phase: "Available" } });

  it("static binding needs the same class on the claim and the volume (FindMatchingVolume)", () => {
    const b = bundleOf([node("n1", "a")], [pod("db", { app: "db" }, { volumes: [{ name: "d", persistentVolumeClaim: { claimName: "data" } }] })]);
    b.objects.storageClasses.push({ apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "fast" }, provisioner: "kubernetes.io/no-provisioner", volumeBindingMode: "WaitForFirstConsumer" } as never);
    b.objects.persistentVolumeClaims.push(claimVac("gold") as never);
    b.objects.persistentVolumes.push(pvVac("silver") as never);
    const r = ask(b, "db");
    expect(r.claims[0]!.staticCandidates[0]!.mismatches).toContainEqual({ field: "volumeAttributesClassName", want: '"gold"', got: '"silver"' });
  });

  it("live: a class the server does not have is an error finding that says both possible reasons; one that exists is none", async () => {
    const { startFakeApiServer } = await import("./helpers/fake_apiserver.ts");
    const { run } = await import("./helpers/live_cli.ts");
    const p = pod("db", { app: "db" }, { volumes: [{ name: "d", persistentVolumeClaim: { claimName: "data" } }] });
    const sc = { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "fast" }, provisioner: "ebs.csi.aws.com", volumeBindingMode: "Immediate" };
    const go = async (vacs: unknown[]) => {
      const s = await startFakeApiServer({ objects: { nodes: [node("n1", "a")], pods: [p], persistentVolumeClaims: [claimVac("gold") as never], storageClasses: [sc as never], volumeAttributesClasses: vacs as never[] } });
      try {
        const r = await run(["pod/db", "-n", "default", "--why-pending", "--kubeconfig", s.kubeconfig, "-o", "json"]);
        expect(r.code, r.stderr).toBe(0);
        return { report: JSON.parse(r.stdout) as { findings: { id: string; severity: string; detail: string }[] }, paths: s.requests.filter((x) => x.path.includes("volumeattributesclasses")).map((x) => x.path) };
      } finally {
        await s.close();
      }
    };
    const missing = await go([]);
    expect(missing.paths).toEqual(["/apis/storage.k8s.io/v1/volumeattributesclasses/gold", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses/gold", "/apis/storage.k8s.io/v1alpha1/volumeattributesclasses/gold"]);
    const f = missing.report.findings.find((x) => x.id === "volume-attributes-class-missing")!;
    expect(f.severity).toBe("error");
    expect(f.detail).toContain("it does not exist, or the cluster does not serve that API");
    const present = await go([{ apiVersion: "storage.k8s.io/v1", kind: "VolumeAttributesClass", metadata: { name: "gold" }, driverName: "ebs.csi.aws.com", parameters: { iops: "3000" } }]);
    expect(present.paths).toHaveLength(1);
    expect(present.report.findings.some((x) => x.id === "volume-attributes-class-missing")).toBe(false);
  }, 60_000);
});

// schedule_one.go truncateMessage: an Event's message is cut at 1,024 bytes with " ..."; with 30 tainted nodes the
// histogram runs past it. The reasons shown whole are compared; the cut one and those not shown are not disagreements.
describe("a FailedScheduling message cut at 1,024 bytes", () => {
  const ZONE_NODES = Array.from({ length: 30 }, (_, i) => {
    const n = node(`n${String(i).padStart(2, "0")}`, "a");
    n.spec = { taints: [{ key: `dedicated-pool-${String(i).padStart(2, "0")}`, value: "true", effect: "NoSchedule" }] };
    return n;
  });
  it("agrees on what it shows, and says it is cut", () => {
    const items = ZONE_NODES.map((n) => `1 node(s) had untolerated taint {${n.spec!.taints![0]!.key}: true}`);
    const full = `0/30 nodes are available: ${items.join(", ")}. preemption: 0/30 nodes are available: 30 Preemption is not helpful for scheduling.`;
    const r = ask(bundleOf(ZONE_NODES, [pod("web", { app: "web" })], [event("web", full.slice(0, 1020) + " ...")]), "web").pods[0]!;
    expect(r.reconciliation.status).toBe("agree");
    expect(r.reconciliation.details[0]).toMatch(/^The last FailedScheduling event, cut at 1,024 bytes, says the same in the \d+ reason\(s\) it shows whole/);
  });
});
