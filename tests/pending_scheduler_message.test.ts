import { describe, expect, test } from "vitest";
import {
  formatSchedulerMessage,
  parseSchedulerMessage,
  reasonText,
  SchedulerMessageParseError,
  type SchedulerReason,
  taintWordingUndetermined,
  wordingForVersion,
  wordingOfMessage,
} from "../src/pending/scheduler_message.ts";
import { pendingFixture } from "./fixtures/pending/objects.ts";

type Want = { total: number | null; reasons: Partial<SchedulerReason>[]; preemption?: { total: number | null; reasons: Partial<SchedulerReason>[] }; notes?: string[] };

// The event column of seed 000's `kubectl get events` line.
const SEED_MESSAGE = pendingFixture("seed000-failed-scheduling-event.txt").trim().replace(/^.*?Pod\s+/, "");

describe("parseSchedulerMessage", () => {
  const cases: { name: string; input: string; want: Want }[] = [
    {
      name: "seed 000 (v1.13)",
      input: SEED_MESSAGE,
      want: { total: 3, reasons: [{ count: 3, reason: "node(s) had volume node affinity conflict", kind: "volume-node-affinity" }] },
    },
    {
      name: "v1.33+ wording with untolerated taint(s), DRA note and preemption",
      input: "0/2 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 1 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
      want: {
        total: 2,
        reasons: [
          { count: 1, reason: "node(s) didn't match PersistentVolume's node affinity", kind: "volume-node-affinity" },
          { count: 1, reason: "node(s) had untolerated taint(s)", kind: "taint" },
        ],
        notes: ["no new claims to deallocate"],
        preemption: { total: 2, reasons: [{ count: 2, reason: "Preemption is not helpful for scheduling", kind: "preemption-not-helpful" }] },
      },
    },
    {
      // dynamicresources.go: PreFilter for a missing DeviceClass, Filter's allocation timeout; "still not schedulable" is its PostFilter
      name: "DynamicResources: a missing DeviceClass (PreFilter), an allocation that timed out (Filter)",
      input: "0/4 nodes are available: 1 timed out trying to allocate devices, 3 cannot allocate all claims. still not schedulable, preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
      want: {
        total: 4,
        reasons: [{ count: 1, reason: "timed out trying to allocate devices", kind: "dra" }, { count: 3, reason: "cannot allocate all claims", kind: "dra" }],
        notes: ["still not schedulable"],
        preemption: { total: 4, reasons: [{ count: 4, reason: "Preemption is not helpful for scheduling", kind: "preemption-not-helpful" }] },
      },
    },
    {
      name: "DynamicResources: request gpu names a DeviceClass that does not exist",
      input: "0/3 nodes are available: request gpu: device class gpu.example.com does not exist. still not schedulable",
      want: { total: 3, reasons: [{ count: 3, reason: "request gpu: device class gpu.example.com does not exist", kind: "dra", preFilter: true }], notes: ["still not schedulable"] },
    },
    {
      name: "VolumeBinding's PreFilter for a Lost claim and an ephemeral claim, VolumeZone's for a missing PV",
      input: '0/2 nodes are available: persistentvolumeclaim "data" bound to non-existent persistentvolume "pv-gone".',
      want: { total: 2, reasons: [{ count: 2, reason: 'persistentvolumeclaim "data" bound to non-existent persistentvolume "pv-gone"', kind: "pv-not-exist", preFilter: true }] },
    },
    {
      name: "ephemeral claim not created yet",
      input: '0/2 nodes are available: waiting for ephemeral volume controller to create the persistentvolumeclaim "app-0-scratch".',
      want: { total: 2, reasons: [{ count: 2, reason: 'waiting for ephemeral volume controller to create the persistentvolumeclaim "app-0-scratch"', kind: "pvc-not-found", preFilter: true }] },
    },
    {
      name: "VolumeZone's PreFilter: a bound claim's PV not found",
      input: '0/2 nodes are available: persistentvolume "pv-gone" not found.',
      want: { total: 2, reasons: [{ count: 2, reason: 'persistentvolume "pv-gone" not found', kind: "pv-not-exist", preFilter: true }] },
    },
    {
      // FitError.Error(): no histogram after a PreFilter message; the rest is PostFilter text (DynamicResources')
      name: "PreFilter message followed by PostFilter text: the text is a note, not a second reason",
      input: "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found",
      want: {
        total: 3,
        reasons: [{ count: 3, reason: "pod has unbound immediate PersistentVolumeClaims", kind: "unbound-immediate-pvc", preFilter: true }],
        notes: ["not found"],
      },
    },
    {
      name: "PreFilter message, DynamicResources' PostFilter note and preemption",
      input: "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
      want: {
        total: 3,
        reasons: [{ count: 3, reason: "pod has unbound immediate PersistentVolumeClaims", kind: "unbound-immediate-pvc", preFilter: true }],
        notes: ["no new claims to deallocate"],
        preemption: { total: 3, reasons: [{ count: 3, reason: "Preemption is not helpful for scheduling", kind: "preemption-not-helpful" }] },
      },
    },
    {
      name: "untolerated taint with its key and an empty value",
      input: "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 node(s) had volume node affinity conflict. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..",
      want: {
        total: 3,
        reasons: [
          { count: 1, kind: "taint", taint: { key: "node-role.kubernetes.io/control-plane", value: "" }, reason: "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }" },
          { count: 2, kind: "volume-node-affinity" },
        ],
        preemption: { total: 3, reasons: [{ count: 3, kind: "preemption-not-helpful" }] },
      },
    },
    {
      name: "v1.18-v1.23 taint wording keeps its inner comma",
      input: "0/3 nodes are available: 1 node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate, 2 node(s) didn't match node selector.",
      want: {
        total: 3,
        reasons: [
          { count: 1, kind: "taint", taint: { key: "node-role.kubernetes.io/master", value: "" }, reason: "node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate" },
          { count: 2, kind: "node-affinity", reason: "node(s) didn't match node selector" },
        ],
      },
    },
    {
      name: "taints with a value, unschedulable, node affinity/selector, resources",
      input: "0/5 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: gpu}, 2 node(s) were unschedulable. preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling.",
      want: {
        total: 5,
        reasons: [
          { count: 1, kind: "resources", reason: "Insufficient memory" },
          { count: 1, kind: "node-affinity" },
          { count: 1, kind: "taint", taint: { key: "dedicated", value: "gpu" } },
          { count: 2, kind: "unschedulable", reason: "node(s) were unschedulable" },
        ],
        preemption: { total: 5, reasons: [{ count: 1, kind: "preemption-no-victims" }, { count: 4, kind: "preemption-not-helpful" }] },
      },
    },
    {
      name: "PreFilter: unbound immediate claims (no count in the text)",
      input: "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
      want: {
        total: 3,
        reasons: [{ count: 3, preFilter: true, kind: "unbound-immediate-pvc", reason: "pod has unbound immediate PersistentVolumeClaims" }],
        preemption: { total: 3, reasons: [{ count: 3, kind: "preemption-not-helpful" }] },
      },
    },
    {
      name: "old filter form: counted unbound immediate claims",
      input: "0/3 nodes are available: 3 pod has unbound immediate PersistentVolumeClaims.",
      want: { total: 3, reasons: [{ count: 3, kind: "unbound-immediate-pvc" }] },
    },
    {
      name: "old taints wording, volume bind conflict, volume zone",
      input: "0/4 nodes are available: 1 node(s) had taints that the pod didn't tolerate, 1 node(s) didn't find available persistent volumes to bind, 2 node(s) had no available volume zone.",
      want: {
        total: 4,
        reasons: [{ count: 1, kind: "taint" }, { count: 1, kind: "volume-bind" }, { count: 2, kind: "volume-zone" }],
      },
    },
    {
      name: "PVC not found at PreFilter",
      input: '0/3 nodes are available: persistentvolumeclaim "data" not found. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
      want: { total: 3, reasons: [{ count: 3, preFilter: true, kind: "pvc-not-found", reason: 'persistentvolumeclaim "data" not found' }], preemption: { total: 3, reasons: [{ count: 3 }] } },
    },
    {
      name: "the event correlator's combined prefix",
      input: "(combined from similar events): 0/3 nodes are available: 3 node(s) had volume node affinity conflict.",
      want: { total: 3, reasons: [{ count: 3, kind: "volume-node-affinity" }] },
    },
    {
      name: "running filter plugin form (v1.16-v1.18 errors)",
      input: 'error while running "VolumeBinding" filter plugin for pod "mysql-0": pod has unbound immediate PersistentVolumeClaims',
      want: { total: null, reasons: [{ count: 0, kind: "unbound-immediate-pvc", preFilter: true }] },
    },
    {
      name: "no nodes",
      input: "no nodes available to schedule pods",
      want: { total: 0, reasons: [{ count: 0, kind: "no-nodes" }] },
    },
    {
      name: "wrapped over lines as kubectl describe may print it",
      input: "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector,\n1 node(s) had untolerated taint(s). preemption: 0/2 nodes are available:\n2 Preemption is not helpful for scheduling.",
      want: { total: 2, reasons: [{ count: 1, kind: "node-affinity" }, { count: 1, kind: "taint" }], preemption: { total: 2, reasons: [{ count: 2 }] } },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = parseSchedulerMessage(c.input);
      expect(got.total).toBe(c.want.total);
      expect(got.reasons).toHaveLength(c.want.reasons.length);
      c.want.reasons.forEach((r, i) => expect(got.reasons[i]).toMatchObject(r));
      if (c.want.preemption) {
        expect(got.preemption?.total).toBe(c.want.preemption.total);
        c.want.preemption.reasons.forEach((r, i) => expect(got.preemption?.reasons[i]).toMatchObject(r));
      } else {
        expect(got.preemption).toBeUndefined();
      }
      expect(got.notes).toEqual(c.want.notes ?? []);
      expect(got.raw).toBe(c.input);
    });
  }

  test("the PreFilter error form (framework.go `running PreFilter plugin %q: %w`)", () => {
    const p = parseSchedulerMessage('running PreFilter plugin "VolumeBinding": error getting PVC "shop/data": could not find v1.PersistentVolumeClaim "shop/data"');
    expect(p.total).toBeNull();
    expect(p.reasons).toEqual([{ count: 0, reason: 'error getting PVC "shop/data": could not find v1.PersistentVolumeClaim "shop/data"', preFilter: true, kind: "other" }]);
  });
  test("anything else is refused, quoting the message", () => {
    expect(() => parseSchedulerMessage("Successfully assigned default/busybox to k8s-01")).toThrow(SchedulerMessageParseError);
    expect(() => parseSchedulerMessage("Successfully assigned default/busybox to k8s-01")).toThrow(
      'not a FailedScheduling message: "Successfully assigned default/busybox to k8s-01"',
    );
  });
});

describe("formatSchedulerMessage (FitError.Error)", () => {
  test("the seed's message, from three rejected nodes", () => {
    const r = "node(s) had volume node affinity conflict";
    expect(formatSchedulerMessage(3, [[r], [r], [r]])).toBe(SEED_MESSAGE);
  });

  test("histogram sorted as Go sort.Strings sorts '<count> <reason>' (count first, byte order)", () => {
    const per = [
      ["node(s) had volume node affinity conflict"],
      ["node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"],
      ["node(s) had volume node affinity conflict"],
      ["Insufficient cpu"],
      ["node(s) didn't match Pod's node affinity/selector"],
    ];
    expect(formatSchedulerMessage(5, per)).toBe(
      "0/5 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, " +
        "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 node(s) had volume node affinity conflict.",
    );
  });

  test("a node with two VolumeBinding reasons counts in both", () => {
    expect(formatSchedulerMessage(1, [["node(s) had volume node affinity conflict", "node(s) didn't find available persistent volumes to bind"]])).toBe(
      "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind, 1 node(s) had volume node affinity conflict.",
    );
  });

  test("PreFilter message without a histogram", () => {
    expect(formatSchedulerMessage(3, [], "pod has unbound immediate PersistentVolumeClaims")).toBe(
      "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
    );
  });

  test("format → parse round trip keeps counts and kinds", () => {
    const msg = formatSchedulerMessage(4, [["node(s) were unschedulable"], ["node(s) had untolerated taint {a: b}"], ["node(s) didn't match PersistentVolume's node affinity"], ["node(s) didn't match PersistentVolume's node affinity"]]);
    expect(parseSchedulerMessage(msg).reasons.map((r) => [r.count, r.kind])).toEqual([[1, "taint"], [1, "unschedulable"], [2, "volume-node-affinity"]]);
  });
});

describe("wordings by release", () => {
  const cases: { input: string; want: ReturnType<typeof wordingForVersion> }[] = [
    { input: "v1.13.1", want: { volumeNodeAffinity: "conflict", taint: "taints", nodeAffinity: "selector" } },
    { input: "v1.19.4", want: { volumeNodeAffinity: "conflict", taint: "taint-that", nodeAffinity: "selector" } },
    { input: "v1.28.3+k3s1", want: { volumeNodeAffinity: "conflict", taint: "untolerated", nodeAffinity: "affinity", preFilterResult: "uncounted" } },
    { input: "v1.28.10-eks-1234", want: { volumeNodeAffinity: "conflict", taint: "untolerated", nodeAffinity: "affinity", preFilterResult: "filtered-out" } },
    // v1.30 without its patch release: 1.30.0 and 1.30.1 wrote "filtered out", 1.30.2 on nothing: most of them
    { input: "v1.30", want: { volumeNodeAffinity: "conflict", taint: "untolerated", nodeAffinity: "affinity", preFilterResult: "uncounted" } },
    { input: "v1.33.1", want: { volumeNodeAffinity: "pv", taint: "untolerated", nodeAffinity: "affinity", preFilterResult: "plugins" } },
    // kubernetes#134740 reached release-1.34 as #135023, in v1.34.2 (CHANGELOG-1.34): the taint is no longer named
    { input: "v1.34.1", want: { volumeNodeAffinity: "pv", taint: "untolerated", nodeAffinity: "affinity", preFilterResult: "plugins" } },
    { input: "v1.34.2", want: { volumeNodeAffinity: "pv", taint: "untolerated-generic", nodeAffinity: "affinity", preFilterResult: "plugins" } },
    { input: "v1.34.3-eks-113cf36", want: { volumeNodeAffinity: "pv", taint: "untolerated-generic", nodeAffinity: "affinity", preFilterResult: "plugins" } },
    // without the patch release: most of 1.34's releases (taintWordingUndetermined says so)
    { input: "v1.34", want: { volumeNodeAffinity: "pv", taint: "untolerated-generic", nodeAffinity: "affinity", preFilterResult: "plugins" } },
    { input: "v1.35.0", want: { volumeNodeAffinity: "pv", taint: "untolerated-generic", nodeAffinity: "affinity", preFilterResult: "plugins" } },
    { input: "garbage", want: { volumeNodeAffinity: "pv", taint: "untolerated-generic", nodeAffinity: "affinity", preFilterResult: "plugins" } },
  ];
  for (const c of cases) test(`wordingForVersion(${c.input})`, () => expect(wordingForVersion(c.input)).toEqual(c.want));

  test("taintWordingUndetermined: only a 1.34 without its patch release", () => {
    expect(["v1.34", "1.34", "v1.34.0", "v1.34.2", "v1.33", "v1.35", undefined].map(taintWordingUndetermined)).toEqual([true, true, false, false, false, false, false]);
  });

  test("wordingOfMessage reads the release from the words", () => {
    expect(wordingOfMessage(parseSchedulerMessage(SEED_MESSAGE))).toEqual({ volumeNodeAffinity: "conflict" });
    expect(wordingOfMessage(parseSchedulerMessage("0/2 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 1 node(s) had untolerated taint {a: }."))).toEqual({
      volumeNodeAffinity: "pv",
      taint: "untolerated",
    });
  });

  test("reasonText writes each wording", () => {
    const taint = { key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" as const };
    expect(reasonText("taint", wordingForVersion("v1.17.0"), taint)).toBe("node(s) had taints that the pod didn't tolerate");
    expect(reasonText("taint", wordingForVersion("v1.20.0"), taint)).toBe("node(s) had taint {node-role.kubernetes.io/control-plane: }, that the pod didn't tolerate");
    expect(reasonText("taint", wordingForVersion("v1.30.0"), taint)).toBe("node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }");
    expect(reasonText("taint", wordingForVersion("v1.35.0"), taint)).toBe("node(s) had untolerated taint(s)");
    expect(reasonText("volume-node-affinity", wordingForVersion("v1.33.0"))).toBe("node(s) didn't match PersistentVolume's node affinity");
    expect(reasonText("resources", wordingForVersion("v1.33.0"))).toBeUndefined();
  });
});
