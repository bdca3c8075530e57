// Gang scheduling with the Workload API (KEP-4671, kube-scheduler v1.35 alpha): a pod whose spec.workloadRef names a
// Workload is held by the GangScheduling plugin (pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go):
// PreEnqueue until the Workload exists, holds the pod group, and minCount pods of the group exist; Permit until minCount
// pods of the group are assumed or bound, rejected after 5 minutes (workloadmanager DefaultSchedulingTimeoutDuration)
// with the framework's "rejected due to timeout after waiting <d> at plugin GangScheduling". The bundles below are built
// as a v1.35 API server returns the objects.
import { describe, expect, it } from "vitest";
import { BUNDLE_END, emptyBundle } from "../src/bundle/bundle.ts";
import { allowListObjects } from "../src/bundle/allow_list.ts";
import { decodeBundle } from "../src/bundle/decode.ts";
import type { KubeEvent, Node, Pod, Workload } from "../src/model/k8s.ts";
import { explainPending } from "../src/pending/explain.ts";
import {
  gangPodsNotListedWarning,
  workloadApiNotServedWarning,
  workloadNotFoundWarning,
  workloadsForbiddenWarning,
} from "../src/pending/gang.ts";
import { permitTimeout } from "../src/pending/scheduler_message.ts";
import { renderPendingText } from "../src/report/pending_text.ts";
import { expectGroupObjectsNotReadFor, gangBundle, gangPolicy, itStatesGroupObjectAbsence, schedulerNode, startGangCluster, whyPendingLive, withFakeApiServer } from "./helpers/gang_bundles.ts";

const node = (name: string, cpu: string, version = "v1.35.1"): Node => schedulerNode(name, cpu, version);

const worker = (name: string, cpu: string, ref: { name: string; podGroup: string; podGroupReplicaKey?: string } | null, extra: Record<string, unknown> = {}, phase = "Pending"): Pod =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "train", uid: `uid-${name}` },
    spec: { containers: [{ name: "c", resources: { requests: { cpu } } }], ...(ref ? { workloadRef: ref } : {}), ...extra },
    status: { phase },
  } as unknown as Pod);
const workload = (name: string, groups: { name: string; policy: Record<string, unknown> }[]): Workload =>
  ({ apiVersion: "scheduling.k8s.io/v1alpha1", kind: "Workload", metadata: { name, namespace: "train" }, spec: { podGroups: groups } } as unknown as Workload);
const gang = gangPolicy;
const event = (podName: string, message: string): KubeEvent =>
  ({ apiVersion: "v1", kind: "Event", metadata: { name: `${podName}.1`, namespace: "train" }, involvedObject: { kind: "Pod", name: podName, namespace: "train" }, reason: "FailedScheduling", type: "Warning", message, count: 1 } as unknown as KubeEvent);
const REF = { name: "llm", podGroup: "workers" };

const bundle = (pods: Pod[], workloads: Workload[], opts: { nodes?: Node[]; warnings?: string[]; events?: KubeEvent[] } = {}) =>
  gangBundle(pods, { workloads }, { ...opts, nodes: opts.nodes ?? [node("n1", "8"), node("n2", "8")] });
const ask = (b: ReturnType<typeof bundle>, name = "w-0") => explainPending(b, { kind: "pod", namespace: "train", name });

describe("GangScheduling PreEnqueue", () => {
  it("the Workload does not exist: PreEnqueue holds the pod, in the plugin's words; no FailedScheduling is expected", () => {
    const pods = [0, 1, 2].map((i) => worker(`w-${i}`, "1", REF));
    const r = ask(bundle(pods, [], { warnings: [workloadNotFoundWarning("train", "llm")] }));
    const g = r.pods[0]!.gang!;
    expect(g).toMatchObject({ plugin: "GangScheduling", workload: "llm", podGroup: "workers", objectState: "not-found", stage: "pre-enqueue" });
    expect(g.message).toBe(`waiting for pods's workload "llm" to appear in scheduling queue`);
    expect(r.answer).toMatch(/^Pod train\/w-0 is held back by kube-scheduler's GangScheduling plugin \(PreEnqueue\): Workload train\/llm does not exist/);
    expect(r.pods[0]!.reconciliation.status).toBe("not-applicable");
    const f = r.findings.find((x) => x.id === "gang-scheduling")!;
    expect(f.severity).toBe("error");
    expect(f.title).toBe("Workload train/llm does not exist: GangScheduling holds pod train/w-0 before scheduling");
    // the per-node verdicts are still computed: the pod itself would fit
    expect(r.pods[0]!.summary!.feasibleNodes).toEqual(["n1", "n2"]);
  });

  it("the pod group is not in the Workload: PreEnqueue holds the pod, and the groups it has are named", () => {
    const pods = [0, 1].map((i) => worker(`w-${i}`, "1", REF));
    const r = ask(bundle(pods, [workload("llm", [{ name: "driver", policy: gang(1) }])]));
    const g = r.pods[0]!.gang!;
    expect(g.stage).toBe("pre-enqueue");
    expect(g.message).toBe(`pod group "workers" doesn't exist for a workload "llm"`);
    expect(g.detail).toContain("has no pod group workers (it has driver)");
    expect(r.findings.find((x) => x.id === "gang-scheduling")!.suggestion).toContain("Recreate Workload llm with a pod group workers");
  });

  it("fewer non-terminal pods of the same group and replica than minCount: PreEnqueue waits for the missing ones", () => {
    const pods = [
      worker("w-0", "1", REF),
      worker("w-1", "1", REF, { nodeName: "n1" }, "Running"), // bound: counted
      worker("w-2", "1", REF, {}, "Failed"), // terminal: the scheduler's informer drops it
      worker("w-3", "1", { ...REF, podGroupReplicaKey: "r1" }), // another replica of the group
      worker("w-4", "1", { name: "llm", podGroup: "driver" }), // another group
      worker("other", "1", null),
    ];
    const r = ask(bundle(pods, [workload("llm", [{ name: "workers", policy: gang(4) }, { name: "driver", policy: gang(1) }])]));
    const g = r.pods[0]!.gang!;
    expect(g.stage).toBe("pre-enqueue");
    expect(g.message).toBe("waiting for minCount pods from a gang to appear in scheduling queue");
    expect(g.members.map((m) => m.pod)).toEqual(["train/w-0", "train/w-1"]);
    expect(g.detail).toContain("only 2 of its pods exist");
    expect(g.detail).toContain("until 2 more exist");
    expect(r.findings.find((x) => x.id === "gang-scheduling")!.title).toBe("The gang of pod train/w-0 has 2 of its minCount 4 pods: GangScheduling holds them before scheduling");
  });

  it("the namespace's pods could not be listed: the count is undecided, and the answer says so", () => {
    const r = ask(bundle([worker("w-0", "1", REF)], [workload("llm", [{ name: "workers", policy: gang(4) }])], { warnings: [gangPodsNotListedWarning("train")] }));
    expect(r.pods[0]!.gang!.stage).toBe("undecided");
    expect(r.answer).toContain("Whether GangScheduling holds it:");
    expect(r.findings.find((x) => x.id === "gang-scheduling")!.severity).toBe("warning");
  });
});

describe("GangScheduling Permit", () => {
  // n1 and n2 have 8 cpu each: w-0..w-2 (2 cpu) fit, w-3 and w-4 (16 cpu) fit nowhere
  const pods = () => [
    worker("w-0", "2", REF),
    worker("w-1", "2", REF),
    worker("w-2", "2", REF),
    worker("w-3", "16", REF),
    worker("w-4", "16", REF),
  ];

  it("enough pods exist but too few can be placed: those that fit wait at Permit; the pods that do not are named with their reasons", () => {
    const r = ask(bundle(pods(), [workload("llm", [{ name: "workers", policy: gang(5) }])]));
    const g = r.pods[0]!.gang!;
    expect(g.stage).toBe("permit");
    expect(g.message).toBe("waiting for minCount pods from a gang to be waiting on permit");
    expect(g.members.filter((m) => m.fits === false).map((m) => [m.pod, m.why])).toEqual([
      ["train/w-3", "0/2 nodes are available: 2 Insufficient cpu"],
      ["train/w-4", "0/2 nodes are available: 2 Insufficient cpu"],
    ]);
    expect(r.answer).toMatch(/^Pod train\/w-0 waits for its gang \(GangScheduling, Permit\): .*only 3 can be placed \(0 bound, 3 fit a node/);
    expect(r.answer).toContain("w-3 (0/2 nodes are available: 2 Insufficient cpu)");
    expect(r.findings.find((x) => x.id === "gang-scheduling")!.title).toBe(
      "The gang of pod train/w-0 cannot place minCount 5 pods: those that fit wait at Permit and are rejected after 5 minutes",
    );
  });

  it("bound pods of the group count towards the quorum: minCount reachable, the gang does not hold the pod", () => {
    const p = pods();
    (p[3]!.spec as Record<string, unknown>).nodeName = "n1";
    (p[3]!.status as Record<string, unknown>).phase = "Running";
    (p[3]!.spec!.containers![0] as Record<string, unknown>).resources = { requests: { cpu: "1" } };
    const r = ask(bundle(p, [workload("llm", [{ name: "workers", policy: gang(4) }])]));
    expect(r.pods[0]!.gang!.stage).toBe("none");
    expect(r.pods[0]!.gang!.detail).toContain("4 of which can be placed (1 bound, 3 fit");
    expect(r.findings.some((x) => x.id === "gang-scheduling")).toBe(false);
    expect(r.answer).toMatch(/^Pod train\/w-0 cannot be scheduled: 2\/2 nodes fit/);
  });

  it("the basic policy: the plugin lets the pod through", () => {
    const r = ask(bundle(pods(), [workload("llm", [{ name: "workers", policy: { basic: {} } }])]));
    expect(r.pods[0]!.gang).toMatchObject({ policy: "basic", stage: "none" });
  });

  it("the scheduler's Permit timeout is read and reconciled as the gang's word, not the filters'", () => {
    const msg = "rejected due to timeout after waiting 4m59.982s at plugin GangScheduling";
    expect(permitTimeout(msg)).toEqual({ plugin: "GangScheduling", waited: "4m59.982s" });
    expect(permitTimeout("0/3 nodes are available: 3 Insufficient cpu.")).toBeNull();
    const r = ask(bundle(pods(), [workload("llm", [{ name: "workers", policy: gang(5) }])], { events: [event("w-0", msg)] }));
    const rec = r.pods[0]!.reconciliation;
    expect(rec.status).toBe("not-applicable");
    expect(rec.details[0]).toContain("GangScheduling held it at Permit until the gang's deadline");
    expect(rec.details[0]).toContain("The gang still cannot reach minCount");
    expect(r.findings.some((x) => x.id === "event-disagrees")).toBe(false);
    // the event proves the gates on: no note that they decide it
    expect(r.pods[0]!.gang!.notes.join(" ")).not.toContain("feature gates GenericWorkload");
  });
});

describe("GangScheduling: versions, gates and what the bundle does not hold", () => {
  const pods = () => [0, 1].map((i) => worker(`w-${i}`, "1", REF));

  it("without a word from the scheduler the answer says the feature gates decide it", () => {
    const r = ask(bundle(pods(), [], { warnings: [workloadNotFoundWarning("train", "llm")] }));
    expect(r.pods[0]!.gang!.notes[0]).toContain("kube-scheduler's feature gates GenericWorkload and GangScheduling on (alpha in v1.35, off by default)");
  });

  it("a v1.36 scheduler does not read workloadRef (replaced by spec.schedulingGroup): not held", () => {
    const r = ask(bundle(pods(), [], { nodes: [node("n1", "8", "v1.36.0")], warnings: [workloadNotFoundWarning("train", "llm")] }));
    expect(r.pods[0]!.gang!.stage).toBe("none");
    expect(r.pods[0]!.gang!.detail).toContain("does not read spec.workloadRef: it was replaced by spec.schedulingGroup");
    expect(r.findings.some((x) => x.id === "gang-scheduling")).toBe(false);
  });

  it("kubelets older than v1.35: the scheduler's own version decides, and the note says so", () => {
    const r = ask(bundle(pods(), [], { nodes: [node("n1", "8", "v1.34.3")], warnings: [workloadNotFoundWarning("train", "llm")] }));
    expect(r.pods[0]!.gang!.notes.join(" ")).toContain("kube-scheduler before v1.35 has no GangScheduling plugin");
  });

  it.each([
    [workloadApiNotServedWarning("train", "the server could not find the requested resource"), "api-not-served", "the Workload API is not served"],
    [workloadsForbiddenWarning("train", "workloads.scheduling.k8s.io is forbidden"), "forbidden", "reading Workloads was forbidden"],
    [undefined, "not-collected", "the bundle holds no Workload"],
  ])("Workload unread (%s): undecided, saying what decides it", (warning, state, words) => {
    const r = ask(bundle(pods(), [], { warnings: warning ? [warning] : [] }));
    expect(r.pods[0]!.gang).toMatchObject({ objectState: state, stage: "undecided" });
    expect(r.pods[0]!.gang!.detail).toContain(words);
    expect(r.answer).toContain(`Whether GangScheduling holds it: ${words.charAt(0)}`);
  });

  it("pvc/NAME: the claim's unscheduled consumer held by its gang says so in the claim's answer", () => {
    const p = worker("w-0", "1", REF, { volumes: [{ name: "data", persistentVolumeClaim: { claimName: "data" } }] });
    const b = bundle([p, worker("w-1", "1", REF)], [workload("llm", [{ name: "workers", policy: gang(3) }])]);
    b.objects.persistentVolumeClaims.push({ apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "data", namespace: "train" }, spec: { accessModes: ["ReadWriteOnce"], volumeName: "pv-1", resources: { requests: { storage: "1Gi" } } }, status: { phase: "Bound" } } as never);
    b.objects.persistentVolumes.push({ apiVersion: "v1", kind: "PersistentVolume", metadata: { name: "pv-1" }, spec: { accessModes: ["ReadWriteOnce"], capacity: { storage: "1Gi" }, claimRef: { namespace: "train", name: "data" } }, status: { phase: "Bound" } } as never);
    const r = explainPending(b, { kind: "pvc", namespace: "train", name: "data" });
    expect(r.answer).toContain("But pod train/w-0 is held back by kube-scheduler's GangScheduling plugin (PreEnqueue): Workload train/llm's pod group workers is a gang of minCount 3, and only 2 of its pods exist");
  });

  it("a pod without workloadRef has no gang section", () => {
    const r = ask(bundle([worker("w-0", "1", null)], []));
    expect(r.pods[0]!.gang).toBeUndefined();
  });
});

describe("GangScheduling: bundle and report", () => {
  it("the allow-list keeps workloadRef and the Workload's groups and policies, nothing else", () => {
    const p = { ...worker("w-0", "1", REF), metadata: { name: "w-0", namespace: "train", annotations: { secret: "x" } } } as Pod;
    const w = { ...workload("llm", [{ name: "workers", policy: gang(2) }, { name: "ps", policy: { basic: {} } }]), status: { x: 1 } } as Workload;
    (w.metadata as unknown as Record<string, unknown>).annotations = { "kubectl.kubernetes.io/last-applied-configuration": "{…}" };
    const kept = allowListObjects({ ...emptyBundle({}).objects, pods: [p], workloads: [w] });
    expect(kept.pods[0]!.spec!.workloadRef).toEqual(REF);
    expect(kept.workloads[0]).toEqual({
      apiVersion: "scheduling.k8s.io/v1alpha1",
      kind: "Workload",
      metadata: { name: "llm", namespace: "train" },
      spec: { podGroups: [{ name: "workers", policy: { gang: { minCount: 2 } } }, { name: "ps", policy: { basic: {} } }] },
    });
  });

  it("a bundle file with a Workload decodes into objects.workloads; a bad minCount is one line naming the field", () => {
    const b = bundle([worker("w-0", "1", REF)], [workload("llm", [{ name: "workers", policy: gang(2) }])]);
    const text = JSON.stringify({ format: b.format, version: b.version, capture: {}, objects: b.objects, nodes: [], warnings: [], end: BUNDLE_END });
    expect(decodeBundle(text, "b.json").objects.workloads[0]!.metadata.name).toBe("llm");
    const bad = text.replace('"minCount":2', '"minCount":"two"');
    expect(() => decodeBundle(bad, "b.json")).toThrow(/objects\.workloads\[0\]\.spec\.podGroups\[0\]\.policy\.gang\.minCount is the string "two": want a number/);
  });

  it("the text report shows the gang section with the plugin, the stage and the members", () => {
    const r = ask(bundle([0, 1, 2].map((i) => worker(`w-${i}`, i === 2 ? "16" : "1", REF)), [workload("llm", [{ name: "workers", policy: gang(3) }])]));
    const text = renderPendingText(r, { color: false });
    expect(text).toContain("gang: Workload llm, pod group workers (GangScheduling, minCount 3): held at Permit");
    expect(text).toContain("w-2: does not fit (0/2 nodes are available: 2 Insufficient cpu)");
  });
});

describe("live: the Workload and the gang's pods are gathered only for a pod with a workloadRef", () => {
  const cluster = (opts: { workloads?: Workload[]; served?: string; deny?: readonly string[] } = {}) =>
    startGangCluster((name, cpu, inGroup) => worker(name, cpu, inGroup ? REF : null), { workloads: opts.workloads ?? [] }, {
      nodes: [node("n1", "8"), node("n2", "8")],
      ...(opts.served ? { servedVersions: { workloads: opts.served } } : {}),
      ...(opts.deny ? { deny: opts.deny } : {}),
    });
  const why = (s: { kubeconfig: string }, pod: string) => whyPendingLive(s, `pod/${pod}`);

  it("the Workload listed and the group's unbound pods kept: the gang's verdict at Permit", async () => {
    await withFakeApiServer(cluster({ workloads: [workload("llm", [{ name: "workers", policy: gang(3) }]), workload("unrelated", [{ name: "x", policy: gang(1) }])] }), async (s) => {
      const { code, stderr, report } = await why(s, "w-0");
      expect(code, stderr).toBe(0);
      expect(report.pods[0]!.gang).toMatchObject({ objectState: "found", stage: "permit", minCount: 3 });
      expect(report.pods[0]!.gang!.members.map((m) => m.pod)).toEqual(["train/w-0", "train/w-1", "train/w-2"]);
      expect(s.requests.filter((x) => x.path.includes("/workloads")).map((x) => x.path)).toEqual(["/apis/scheduling.k8s.io/v1alpha1/namespaces/train/workloads"]);
      // without a workloadRef, no Workload is read
      await expectGroupObjectsNotReadFor(s, "pod/solo", "/workloads");
    });
  }, 60_000);

  itStatesGroupObjectAbsence("Workload", cluster, workloadNotFoundWarning("train", "llm"), {
    name: "404 (the alpha API is off) and 403: a stated fact in the report, exit 0, no crash",
    cases: [
      [{ served: "none" }, "api-not-served", "the Workload API is not served: list workloads.scheduling.k8s.io/v1alpha1"],
      [{ deny: ["workloads"] }, "forbidden", "not allowed to read workloads:"],
    ],
  });

  it("listing pods cluster-wide forbidden: the namespace's pods count the gang", async () => {
    const { startFakeApiServer } = await import("./helpers/fake_apiserver.ts");
    const pods = [worker("w-0", "2", REF), worker("w-1", "2", REF), worker("w-2", "16", REF)];
    await withFakeApiServer(startFakeApiServer({
      objects: { nodes: [node("n1", "8")], pods, workloads: [workload("llm", [{ name: "workers", policy: gang(4) }])] },
      denials: [{ verb: "list", resource: "pods", namespace: "" }],
    }), async (s2) => {
      const { code, report } = await why(s2, "w-0");
      expect(code).toBe(0);
      expect(report.pods[0]!.gang!.members.length).toBe(3);
      expect(report.pods[0]!.gang!.stage).toBe("pre-enqueue");
    });
  }, 60_000);
});
