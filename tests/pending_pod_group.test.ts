// Gang scheduling with PodGroup objects (KEP-4671 "Scheduler Changes for v1.36", KEP-5832): a pod whose
// spec.schedulingGroup.podGroupName names a PodGroup (scheduling.k8s.io/v1alpha2 in v1.36, v1alpha3 in v1.37) is held
// by GangScheduling's PreEnqueue until the PodGroup exists and minCount pods of the group exist; then the pod group
// scheduling cycle places the group at once or rejects it whole (pkg/scheduler/schedule_one_podgroup.go), writing the
// PodGroup's PodGroupScheduled (v1.37: PodGroupInitiallyScheduled) condition. The objects below are shaped as a v1.36
// (and a v1.37) API server returns them.
import { describe, expect, it } from "vitest";
import { BUNDLE_END, emptyBundle } from "../src/bundle/bundle.ts";
import { allowListObjects } from "../src/bundle/allow_list.ts";
import { decodeBundle } from "../src/bundle/decode.ts";
import type { KubeEvent, Node, Pod, PodGroup } from "../src/model/k8s.ts";
import { explainPending } from "../src/pending/explain.ts";
import { gangPodsNotListedWarning, workloadNotFoundWarning } from "../src/pending/gang.ts";
import { POD_GROUP_REJECTED_MESSAGE, podGroupApiNotServedWarning, podGroupNotFoundWarning, podGroupsForbiddenWarning } from "../src/pending/pod_group.ts";
import { renderPendingText } from "../src/report/pending_text.ts";
import { expectGroupObjectsNotReadFor, gangBundle, gangPolicy, itStatesGroupObjectAbsence, schedulerNode, startGangCluster, whyPendingLive, withFakeApiServer } from "./helpers/gang_bundles.ts";

const node = (name: string, cpu: string, version = "v1.36.1"): Node => schedulerNode(name, cpu, version);

/** A pod as the Job controller (KEP-5547) creates it in v1.36: spec.schedulingGroup.podGroupName set. */
const worker = (name: string, cpu: string, podGroup: string | null, extra: Record<string, unknown> = {}, phase = "Pending"): Pod =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "train", uid: `uid-${name}` },
    spec: { containers: [{ name: "c", resources: { requests: { cpu } } }], ...(podGroup ? { schedulingGroup: { podGroupName: podGroup } } : {}), ...extra },
    status: { phase },
  } as unknown as Pod);
/** A PodGroup as v1.36 serves it (scheduling.k8s.io/v1alpha2): the policy copied from the Workload's template. */
const podGroup = (name: string, policy: Record<string, unknown>, extra: { status?: unknown; apiVersion?: string; parent?: string } = {}): PodGroup =>
  ({
    apiVersion: extra.apiVersion ?? "scheduling.k8s.io/v1alpha2",
    kind: "PodGroup",
    metadata: { name, namespace: "train", uid: `uid-${name}` },
    spec: {
      podGroupTemplateRef: { workload: { workloadName: "llm", podGroupTemplateName: "workers" } },
      schedulingPolicy: policy,
      ...(extra.parent ? { parentCompositePodGroupName: extra.parent } : {}),
    },
    ...(extra.status ? { status: extra.status } : {}),
  } as unknown as PodGroup);
const gang = gangPolicy;

const bundle = (pods: Pod[], podGroups: PodGroup[], opts: { nodes?: Node[]; warnings?: string[]; events?: KubeEvent[] } = {}) =>
  gangBundle(pods, { podGroups }, { ...opts, nodes: opts.nodes ?? [node("n1", "8"), node("n2", "8")] });
const ask = (b: ReturnType<typeof bundle>, name = "w-0") => explainPending(b, { kind: "pod", namespace: "train", name });

describe("v1.36 PodGroup: PreEnqueue", () => {
  it("the PodGroup does not exist: PreEnqueue holds the pod, in the plugin's words; no FailedScheduling is expected", () => {
    const pods = [0, 1, 2].map((i) => worker(`w-${i}`, "1", "llm-0"));
    const r = ask(bundle(pods, [], { warnings: [podGroupNotFoundWarning("train", "llm-0")] }));
    const g = r.pods[0]!.gang!;
    expect(g).toMatchObject({ plugin: "GangScheduling", via: "schedulingGroup", podGroup: "llm-0", objectState: "not-found", stage: "pre-enqueue", workload: null });
    expect(g.message).toBe(`waiting for pods's pod group "llm-0" to appear in scheduling queue`);
    expect(r.answer).toMatch(/^Pod train\/w-0 is held back by kube-scheduler's GangScheduling plugin \(PreEnqueue\): PodGroup train\/llm-0 does not exist/);
    expect(r.pods[0]!.reconciliation.status).toBe("not-applicable");
    const f = r.findings.find((x) => x.id === "gang-scheduling")!;
    expect(f).toMatchObject({ severity: "error", title: "PodGroup train/llm-0 does not exist: GangScheduling holds pod train/w-0 before scheduling" });
    expect(f.suggestion).toContain("kubectl get podgroups.scheduling.k8s.io -n train llm-0 -o yaml");
    expect(f.evidence[0]).toBe("Pod train/w-0: spec.schedulingGroup.podGroupName llm-0");
  });

  it("fewer non-terminal pods of the PodGroup than minCount: PreEnqueue waits for the missing ones (Succeeded ones and other groups not counted)", () => {
    const pods = [
      worker("w-0", "1", "llm-0"),
      worker("w-1", "1", "llm-0"),
      worker("w-2", "1", "llm-0", {}, "Succeeded"),
      worker("w-3", "1", "llm-1"),
      worker("solo", "1", null),
    ];
    const r = ask(bundle(pods, [podGroup("llm-0", gang(4)), podGroup("llm-1", gang(1))]));
    const g = r.pods[0]!.gang!;
    expect(g).toMatchObject({ stage: "pre-enqueue", policy: "gang", minCount: 4, workload: "llm" });
    expect(g.message).toBe("waiting for minCount pods from a gang to appear in scheduling queue");
    expect(g.members.map((m) => m.pod)).toEqual(["train/w-0", "train/w-1"]);
    expect(g.detail).toContain("until 2 more exist");
    expect(r.findings.find((x) => x.id === "gang-scheduling")!.title).toBe("The gang of pod train/w-0 has 2 of its minCount 4 pods: GangScheduling holds them before scheduling");
  });

  it("the namespace's pods could not be listed: the count is undecided, and the answer says so", () => {
    const r = ask(bundle([worker("w-0", "1", "llm-0")], [podGroup("llm-0", gang(4))], { warnings: [gangPodsNotListedWarning("train")] }));
    expect(r.pods[0]!.gang!.stage).toBe("undecided");
    expect(r.answer).toContain("Whether GangScheduling holds it:");
  });

  it("the basic policy: GangScheduling lets the pod through, and its own filters answer", () => {
    const r = ask(bundle([worker("w-0", "16", "llm-0")], [podGroup("llm-0", { basic: {} })]));
    expect(r.pods[0]!.gang).toMatchObject({ policy: "basic", stage: "none" });
    expect(r.findings.some((x) => x.id === "gang-scheduling")).toBe(false);
    expect(r.answer).toContain("cannot be scheduled: 0/2 nodes are available: 2 Insufficient cpu");
  });
});

describe("v1.36 PodGroup: the pod group scheduling cycle", () => {
  // n1 and n2 have 8 cpu each: w-0..w-2 (2 cpu) fit, w-3 and w-4 (16 cpu) fit nowhere
  const pods = () => [worker("w-0", "2", "llm-0"), worker("w-1", "2", "llm-0"), worker("w-2", "2", "llm-0"), worker("w-3", "16", "llm-0"), worker("w-4", "16", "llm-0")];
  // what kube-scheduler v1.36 writes on the PodGroup after a failed cycle (schedule_one_podgroup.go updatePodGroupCondition)
  const rejected = {
    conditions: [{ type: "PodGroupScheduled", status: "False", reason: "Unschedulable", message: "pod group is unschedulable", lastTransitionTime: "2026-05-04T10:00:00Z" }],
  };

  it("enough pods exist but too few can be placed: the whole group is rejected in one cycle, not held at Permit; the stuck pods are named", () => {
    const r = ask(bundle(pods(), [podGroup("llm-0", gang(5), { status: rejected })]));
    const g = r.pods[0]!.gang!;
    expect(g.stage).toBe("pod-group-cycle");
    expect(g.message).toBe(POD_GROUP_REJECTED_MESSAGE);
    expect(g.detail).toContain("of which only 3 can be placed (0 bound, 3 fit a node by the rules checked here, each alone)");
    expect(g.detail).toContain("rejects the whole group");
    expect(g.detail).toContain("w-3 (0/2 nodes are available: 2 Insufficient cpu)");
    expect(g.detail).not.toContain("Permit");
    expect(g.podGroupCondition).toEqual({ type: "PodGroupScheduled", status: "False", reason: "Unschedulable", message: "pod group is unschedulable" });
    expect(r.answer).toMatch(/^Pod train\/w-0 is rejected with its gang \(GangScheduling, pod group scheduling cycle\): PodGroup train\/llm-0 is a gang of minCount 5/);
    // the confirming condition: no feature-gate note
    expect(g.notes.join(" ")).not.toContain("feature gate");
    // w-0 fits: its rejection is the group's, not a filter's
    expect(r.pods[0]!.reconciliation.status).toBe("not-applicable");
    expect(r.pods[0]!.reconciliation.details[0]).toContain(`PodGroup train/llm-0 PodGroupScheduled=False (Unschedulable): "pod group is unschedulable"`);
    const f = r.findings.find((x) => x.id === "gang-scheduling")!;
    expect(f.title).toBe("The gang of pod train/w-0 cannot place minCount 5 pods: the pod group cycle rejects the whole group");
    expect(f.evidence).toContain("PodGroup train/llm-0: status.conditions PodGroupScheduled=False (Unschedulable): pod group is unschedulable");
  });

  it("v1.36: a pod that found a node expects the group's words (schedule_one_podgroup.go submitPodGroupAlgorithmResult); one that fits nowhere, and v1.37 or an unknown release, expect none", () => {
    // w-0 fits alone: its FailedScheduling is "pod group is unschedulable, <GangScheduling's Permit status>"
    expect(ask(bundle(pods(), [podGroup("llm-0", gang(5), { status: rejected })])).pods[0]!.gang!.message)
      .toBe("pod group is unschedulable, waiting for minCount pods from a gang to be scheduled");
    // w-3 (16 cpu) fits no node: it is rejected with its own filters' message, not the group's
    expect(ask(bundle(pods(), [podGroup("llm-0", gang(5))]), "w-3").pods[0]!.gang!.message).toBeNull();
    // v1.37 checks minCount in PlacementFeasible, whose words on the pod the sources read do not show
    const v137 = [node("n1", "8", "v1.37.0"), node("n2", "8", "v1.37.0")];
    const g37 = ask(bundle(pods(), [podGroup("llm-0", gang(5), { apiVersion: "scheduling.k8s.io/v1alpha3" })], { nodes: v137 })).pods[0]!.gang!;
    expect(g37.stage).toBe("pod-group-cycle");
    expect(g37.message).toBeNull();
  });

  it("a pod of the group that does not fit keeps its own filters' reconciliation", () => {
    const r = ask(bundle(pods(), [podGroup("llm-0", gang(5))]), "w-3");
    expect(r.pods[0]!.gang!.stage).toBe("pod-group-cycle");
    expect(r.pods[0]!.reconciliation.status).not.toBe("not-applicable");
  });

  it("bound pods of the group count towards the quorum: minCount reachable, the gang does not hold the pod", () => {
    const ps = [...pods().slice(0, 3), worker("w-5", "2", "llm-0", { nodeName: "n2" }, "Running"), worker("w-6", "2", "llm-0", { nodeName: "n2" }, "Running")];
    const r = ask(bundle(ps, [podGroup("llm-0", gang(5))]));
    expect(r.pods[0]!.gang).toMatchObject({ stage: "none" });
    expect(r.findings.some((x) => x.id === "gang-scheduling")).toBe(false);
  });

  it("the text report shows the PodGroup, the stage, the scheduler's condition and the members", () => {
    const r = ask(bundle(pods(), [podGroup("llm-0", gang(5), { status: rejected })]));
    const text = renderPendingText(r, { color: false });
    expect(text).toContain("gang: PodGroup llm-0 (Workload llm) (GangScheduling, minCount 5): rejected by the pod group cycle");
    expect(text).toContain("condition PodGroupScheduled=False (Unschedulable): pod group is unschedulable");
    expect(text).toContain("w-3: does not fit (0/2 nodes are available: 2 Insufficient cpu)");
  });
});

describe("PodGroup: versions, gates and what the bundle does not hold", () => {
  const pods = () => [0, 1].map((i) => worker(`w-${i}`, "1", "llm-0"));

  it("v1.36 without a word from the scheduler: the note names GenericWorkload and GangScheduling (alpha, off by default)", () => {
    const r = ask(bundle(pods(), [], { warnings: [podGroupNotFoundWarning("train", "llm-0")] }));
    expect(r.pods[0]!.gang!.notes[0]).toContain("kube-scheduler's feature gates GenericWorkload and GangScheduling on (alpha in v1.36, off by default)");
  });

  it("v1.37: the note names GenericWorkload alone (beta, off by default), and v1alpha3 objects and PodGroupInitiallyScheduled are read", () => {
    const pg = podGroup("llm-0", gang(5), {
      apiVersion: "scheduling.k8s.io/v1alpha3",
      status: { conditions: [{ type: "PodGroupInitiallyScheduled", status: "False", reason: "Unschedulable", message: "x" }] },
    });
    const nodes = [node("n1", "8", "v1.37.0"), node("n2", "8", "v1.37.0")];
    const r = ask(bundle([...pods(), worker("w-2", "16", "llm-0"), worker("w-3", "16", "llm-0"), worker("w-4", "16", "llm-0")], [pg], { nodes }));
    expect(r.pods[0]!.gang!.podGroupCondition!.type).toBe("PodGroupInitiallyScheduled");
    expect(r.pods[0]!.gang!.stage).toBe("pod-group-cycle");
    const r2 = ask(bundle(pods(), [], { nodes, warnings: [podGroupNotFoundWarning("train", "llm-0")] }));
    expect(r2.pods[0]!.gang!.notes[0]).toContain("kube-scheduler's feature gate GenericWorkload on (beta in v1.37, off by default; GangScheduling was merged into it)");
  });

  it("kubelets older than v1.36: the scheduler's own version decides, and the note says so", () => {
    const r = ask(bundle(pods(), [], { nodes: [node("n1", "8", "v1.35.4")], warnings: [podGroupNotFoundWarning("train", "llm-0")] }));
    expect(r.pods[0]!.gang!.notes.join(" ")).toContain("a kube-scheduler before v1.36 ignores it");
  });

  it("a v1.35 pod with spec.workloadRef still takes the Workload path (the version switch is the field)", () => {
    const p = worker("w-0", "1", null, { workloadRef: { name: "llm", podGroup: "workers" } });
    const r = ask(bundle([p], [], { nodes: [node("n1", "8", "v1.35.1")], warnings: [workloadNotFoundWarning("train", "llm")] }));
    expect(r.pods[0]!.gang).toMatchObject({ via: "workloadRef", workload: "llm", stage: "pre-enqueue" });
  });

  it("a PodGroup under a CompositePodGroup (v1.37): undecided, saying the tree decides it", () => {
    const r = ask(bundle(pods(), [podGroup("llm-0", gang(2), { parent: "llm", apiVersion: "scheduling.k8s.io/v1alpha3" })], { nodes: [node("n1", "8", "v1.37.0")] }));
    expect(r.pods[0]!.gang!.stage).toBe("undecided");
    expect(r.pods[0]!.gang!.detail).toContain("belongs to CompositePodGroup llm");
  });

  it.each([
    [podGroupApiNotServedWarning("train", ["v1beta1", "v1alpha3", "v1alpha2"]), "api-not-served", "the PodGroup API is not served"],
    [podGroupsForbiddenWarning("train", "podgroups.scheduling.k8s.io is forbidden"), "forbidden", "reading PodGroups was forbidden"],
    [undefined, "not-collected", "the bundle holds no PodGroup"],
  ])("PodGroup unread (%s): undecided, saying what decides it", (warning, state, words) => {
    const r = ask(bundle(pods(), [], { warnings: warning ? [warning] : [] }));
    expect(r.pods[0]!.gang).toMatchObject({ objectState: state, stage: "undecided" });
    expect(r.pods[0]!.gang!.detail).toContain(words);
    expect(r.findings.find((x) => x.id === "gang-scheduling")!.severity).toBe("warning");
  });
});

describe("PodGroup: bundle", () => {
  it("the allow-list keeps schedulingGroup and the PodGroup's policy, template ref and scheduling condition, nothing else", () => {
    const p = { ...worker("w-0", "1", "llm-0"), metadata: { name: "w-0", namespace: "train", annotations: { secret: "x" } } } as Pod;
    const pg = podGroup("llm-0", gang(2), { status: { conditions: [{ type: "PodGroupScheduled", status: "True", reason: "Scheduled", message: "", observedGeneration: 1 }], resourceClaimStatuses: [{ name: "x" }] } });
    (pg.spec as Record<string, unknown>).resourceClaims = [{ name: "gpu", resourceClaimName: "c" }];
    (pg.spec as Record<string, unknown>).priority = 1000;
    const kept = allowListObjects({ ...emptyBundle({}).objects, pods: [p], podGroups: [pg] });
    expect(kept.pods[0]!.spec!.schedulingGroup).toEqual({ podGroupName: "llm-0" });
    expect(kept.podGroups[0]).toEqual({
      apiVersion: "scheduling.k8s.io/v1alpha2",
      kind: "PodGroup",
      metadata: { name: "llm-0", namespace: "train", uid: "uid-llm-0" },
      spec: { podGroupTemplateRef: { workload: { workloadName: "llm", podGroupTemplateName: "workers" } }, schedulingPolicy: { gang: { minCount: 2 } } },
      status: { conditions: [{ type: "PodGroupScheduled", status: "True", reason: "Scheduled", message: "" }] },
    });
  });

  it("a bundle file with a PodGroup decodes into objects.podGroups; a bad minCount is one line naming the field", () => {
    const b = bundle([worker("w-0", "1", "llm-0")], [podGroup("llm-0", gang(2))]);
    const text = JSON.stringify({ format: b.format, version: b.version, capture: {}, objects: b.objects, nodes: [], warnings: [], end: BUNDLE_END });
    expect(decodeBundle(text, "b.json").objects.podGroups[0]!.metadata.name).toBe("llm-0");
    const bad = text.replace('"minCount":2', '"minCount":"two"');
    expect(() => decodeBundle(bad, "b.json")).toThrow(/objects\.podGroups\[0\]\.spec\.schedulingPolicy\.gang\.minCount is the string "two": want a number/);
  });
});

describe("live: PodGroups and the group's pods are gathered only for a pod with spec.schedulingGroup", () => {
  const cluster = (opts: { podGroups?: PodGroup[]; served?: string; deny?: readonly string[] } = {}) =>
    startGangCluster((name, cpu, inGroup) => worker(name, cpu, inGroup ? "llm-0" : null), { podGroups: opts.podGroups ?? [] }, {
      nodes: [node("n1", "8"), node("n2", "8")],
      ...(opts.served ? { servedVersions: { podgroups: opts.served } } : {}),
      ...(opts.deny ? { deny: opts.deny } : {}),
    });
  const why = whyPendingLive;
  const paths = (s: { requests: { path: string }[] }) => s.requests.filter((x) => x.path.includes("/podgroups")).map((x) => x.path);

  it("v1.36 (v1alpha2): the PodGroup listed after v1beta1 and v1alpha3 answer 404, the group's unbound pods kept: rejected by the pod group cycle", async () => {
    await withFakeApiServer(cluster({ podGroups: [podGroup("llm-0", gang(3)), podGroup("unrelated", gang(1))] }), async (s) => {
      const { code, stderr, report } = await why(s, "pod/w-0");
      expect(code, stderr).toBe(0);
      expect(report.pods[0]!.gang).toMatchObject({ via: "schedulingGroup", objectState: "found", stage: "pod-group-cycle", minCount: 3 });
      expect(report.pods[0]!.gang!.members.map((m) => m.pod)).toEqual(["train/w-0", "train/w-1", "train/w-2"]);
      expect(paths(s)).toEqual([
        "/apis/scheduling.k8s.io/v1beta1/namespaces/train/podgroups",
        "/apis/scheduling.k8s.io/v1alpha3/namespaces/train/podgroups",
        "/apis/scheduling.k8s.io/v1alpha2/namespaces/train/podgroups",
      ]);
      expect(s.requests.some((x) => x.path.includes("/workloads"))).toBe(false);
      // without spec.schedulingGroup, no PodGroup is read
      await expectGroupObjectsNotReadFor(s, "pod/solo", "/podgroups");
    });
  }, 60_000);

  it("v1.37 (v1alpha3): read at the version served, kept with that apiVersion", async () => {
    await withFakeApiServer(cluster({ served: "scheduling.k8s.io/v1alpha3", podGroups: [podGroup("llm-0", gang(2), { apiVersion: "scheduling.k8s.io/v1alpha3" })] }), async (s) => {
      const { code, report } = await why(s, "pod/w-0");
      expect(code).toBe(0);
      expect(report.pods[0]!.gang).toMatchObject({ objectState: "found", stage: "none" });
      expect(paths(s)).toEqual(["/apis/scheduling.k8s.io/v1beta1/namespaces/train/podgroups", "/apis/scheduling.k8s.io/v1alpha3/namespaces/train/podgroups"]);
    });
  }, 60_000);

  itStatesGroupObjectAbsence("PodGroup", cluster, podGroupNotFoundWarning("train", "llm-0"), {
    name: "404 at every version (the API is off) and 403: a stated fact in the report, exit 0, no crash",
    cases: [
      [{ served: "none" }, "api-not-served", "the PodGroup API is not served: list podgroups.scheduling.k8s.io in namespace \"train\" answered 404 at v1beta1, v1alpha3, v1alpha2"],
      [{ deny: ["podgroups"] }, "forbidden", "not allowed to read podgroups:"],
    ],
  });
});
