import { describe, expect, test } from "vitest";
import { NotFoundError } from "../src/model/errors.ts";
import { explainPending, PENDING_REPORT_API_VERSION } from "../src/pending/explain.ts";
import { renderPendingText } from "../src/report/pending_text.ts";
import { azureBundle, bundleOf, event, node, pod, pv, pvc, storageClass, term } from "./fixtures/pending/objects.ts";

const MD_PV = "pvc-0a20ee9f-0c34-11e9-b302-000d3aa0aa40";
const SEED_MESSAGE = "0/3 nodes are available: 3 node(s) had volume node affinity conflict.";

describe("the azure-zones example (seed 000)", () => {
  test("pvc/md: Bound, its pod rejected on every node by the PV's terms, in the scheduler's v1.13 words", () => {
    const r = explainPending(azureBundle(), { kind: "pvc", namespace: "default", name: "md" });
    expect(r.kind).toBe("PendingReport");
    expect(r.apiVersion).toBe(PENDING_REPORT_API_VERSION);
    expect(r.claims[0]!.state.reason).toBe("Bound");
    expect(r.claims[0]!.volume!.matchingNodes).toEqual([]);
    expect(r.claims[0]!.volume!.nodes.map((n) => n.evaluation.terms.map((t) => t.requirements[1]!.reason))).toEqual([
      ['"southeastasia-1" is not in [0]', '"southeastasia-1" is not in [1]', '"southeastasia-1" is not in [2]'],
      ['"southeastasia-2" is not in [0]', '"southeastasia-2" is not in [1]', '"southeastasia-2" is not in [2]'],
      ['"southeastasia-3" is not in [0]', '"southeastasia-3" is not in [1]', '"southeastasia-3" is not in [2]'],
    ]);
    const p = r.pods[0]!;
    expect(p.name).toBe("busybox");
    expect(p.summary!.message).toBe(SEED_MESSAGE);
    expect(p.summary!.wording.volumeNodeAffinity).toBe("conflict");
    expect(p.reconciliation).toEqual({ status: "agree", details: [`The last FailedScheduling event says the same: "${SEED_MESSAGE}"`] });
    expect(r.answer).toBe(
      `PersistentVolumeClaim default/md: Bound to PersistentVolume "${MD_PV}". But pod default/busybox cannot be scheduled: ${SEED_MESSAGE} ` +
        `Root cause: PersistentVolume ${MD_PV} requires failure-domain.beta.kubernetes.io/zone in [0], [1] or [2]: fault-domain numbers, while the nodes carry region-zone values.`,
    );
  });

  test("pod/busybox asks the same from the pod's side", () => {
    const r = explainPending(azureBundle(), { kind: "pod", namespace: "default", name: "busybox" });
    expect(r.answer.startsWith(`Pod default/busybox cannot be scheduled: ${SEED_MESSAGE} Root cause: PersistentVolume ${MD_PV}`)).toBe(true);
    expect(r.claims.map((c) => c.name)).toEqual(["md"]);
  });

  test("pvc/md-zoned: Bound, pinned to southeastasia-1, its pod runs on k8s-01", () => {
    const r = explainPending(azureBundle(), { kind: "pvc", namespace: "default", name: "md-zoned" });
    expect(r.claims[0]!.volume!.matchingNodes).toEqual(["k8s-01"]);
    expect(r.pods[0]!.nodeName).toBe("k8s-01");
    expect(r.pods[0]!.summary!.feasibleNodes).toEqual(["k8s-01"]);
    expect(r.pods[0]!.reconciliation.status).toBe("not-applicable");
    expect(r.findings.map((f) => f.id)).toEqual(["pod-scheduled"]);
    expect(r.answer).toBe(
      'PersistentVolumeClaim default/md-zoned: Bound to PersistentVolume "pvc-6b8d1e52-0c45-11e9-b302-000d3aa0aa40". Nothing is pending: pod default/busybox-zoned is scheduled on k8s-01.',
    );
  });

  test("the report is plain JSON: it survives a JSON round trip unchanged", () => {
    const r = explainPending(azureBundle(), { kind: "pvc", namespace: "default", name: "md" });
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
  });

  test("pure: the bundle is not modified", () => {
    const b = azureBundle();
    const before = JSON.stringify(b);
    explainPending(b, { kind: "pvc", namespace: "default", name: "md" });
    expect(JSON.stringify(b)).toBe(before);
  });
});

describe("bad input", () => {
  test("unknown claim", () => {
    const run = () => explainPending(azureBundle(), { kind: "pvc", namespace: "default", name: "nope" });
    expect(run).toThrow(NotFoundError);
    expect(run).toThrow(/^persistentvolumeclaim "nope" not found in namespace "default"$/);
  });

  test("a claim in another namespace: the message says where it is", () => {
    try {
      explainPending(azureBundle(), { kind: "pvc", namespace: "prod", name: "md" });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(NotFoundError);
      expect((e as Error).message).toBe('persistentvolumeclaim "md" not found in namespace "prod"; it exists in namespace "default": use -n default');
      expect((e as NotFoundError).elsewhere).toEqual(["default"]);
    }
  });

  test("unknown pod, present in two other namespaces", () => {
    const b = bundleOf([pod("web", { ns: "b" }), pod("web", { ns: "a" })]);
    expect(() => explainPending(b, { kind: "pod", namespace: "default", name: "web" })).toThrow(
      'pod "web" not found in namespace "default"; it exists in namespaces "a", "b": use -n a',
    );
  });

  test("a PV with no node affinity is a finding, not a crash", () => {
    const r = explainPending(
      bundleOf([
        node("n1", { zone: "a" }),
        storageClass("nfs", { provisioner: "nfs.csi.k8s.io" }),
        pvc("shared", { class: "nfs", boundTo: "pv-nfs", modes: ["ReadWriteMany"] }),
        pv("pv-nfs", { class: "nfs", claim: "default/shared", modes: ["ReadWriteMany"], source: { nfs: { server: "10.0.0.5", path: "/export" } } }),
        pod("app-0", { claims: ["shared"] }),
      ]),
      { kind: "pvc", namespace: "default", name: "shared" },
    );
    const f = r.findings.find((x) => x.id === "no-node-affinity")!;
    expect(f.title).toBe("PersistentVolume pv-nfs has no node affinity");
    expect(f.evidence).toEqual(["PersistentVolume pv-nfs: source nfs"]);
    expect(r.claims[0]!.volume).toMatchObject({ nodeAffinity: null, nodes: [], matchingNodes: ["n1"], source: "nfs" });
    expect(r.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "volume")).toMatchObject({ passed: true, detail: "no node affinity" });
  });

  test("no Node objects (RBAC forbade list nodes): says what is missing and what remains", () => {
    const b = azureBundle();
    b.objects.nodes = [];
    b.warnings.push('nodes is forbidden: User "dev" cannot list resource "nodes" in API group "" at the cluster scope');
    const r = explainPending(b, { kind: "pvc", namespace: "default", name: "md" });
    expect(r.nodesListed).toBe(false);
    const f = r.findings[0]!;
    expect(f.id).toBe("nodes-missing");
    expect(f.detail).toMatch(/needs "list nodes" \(verb list, resource nodes, cluster scope\)/);
    expect(f.evidence).toEqual([
      'nodes is forbidden: User "dev" cannot list resource "nodes" in API group "" at the cluster scope',
      `Pod default/busybox last FailedScheduling: ${SEED_MESSAGE}`,
    ]);
    expect(r.claims[0]!.volume!.terms).toHaveLength(3);
    expect(r.claims[0]!.volume!.nodes).toEqual([]);
    expect(r.pods[0]!.summary).toBeNull();
    expect(r.pods[0]!.reconciliation.status).toBe("not-applicable");
    expect(r.answer).toMatch(/No Node objects in the bundle, so no per-node verdict\.$/);
    // Hints that need nodes stay silent instead of guessing.
    expect(r.findings.some((x) => x.id === "fault-domain-zone-values")).toBe(false);
  });

  test("a claim the pod names does not exist: PreFilter rejects every node", () => {
    const r = explainPending(bundleOf([node("n1"), node("n2"), pod("app-0", { claims: ["data"] })]), { kind: "pod", namespace: "default", name: "app-0" });
    expect(r.pods[0]!.summary!.message).toBe('0/2 nodes are available: persistentvolumeclaim "data" not found.');
    expect(r.claims[0]!.state).toMatchObject({ status: "Missing", reason: "NotFound" });
    expect(r.findings[0]!.id).toBe("claim-missing");
  });
});

describe("scheduler model and reconciliation", () => {
  const ZONE = "topology.kubernetes.io/zone";

  // VolumeBinding's PreFilter (volume_binding.go podHasPVCs) and VolumeZone's (volume_zone.go getPVbyPod, v1.27+)
  test("broken volumes rejected at PreFilter in the scheduler's words: a Lost claim, an ephemeral claim not created yet, a missing PV", () => {
    const explain = (objects: Parameters<typeof bundleOf>[0], name = "app-0") => explainPending(bundleOf(objects), { kind: "pod", namespace: "default", name }).pods[0]!;
    const lost = explain([node("n1"), node("n2"), pvc("data", { boundTo: "pv-gone", phase: "Lost" }), pod("app-0", { claims: ["data"] })]);
    expect(lost.summary!.message).toBe('0/2 nodes are available: persistentvolumeclaim "data" bound to non-existent persistentvolume "pv-gone".');
    expect(lost.nodes[0]!.rejectedBy!.plugin).toBe("VolumeBinding");
    const eph = pod("app-0");
    eph.spec!.volumes = [{ name: "scratch", ephemeral: { volumeClaimTemplate: { spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } } } } as never];
    const r = explainPending(bundleOf([node("n1"), node("n2"), eph]), { kind: "pod", namespace: "default", name: "app-0" });
    expect(r.pods[0]!.summary!.message).toBe('0/2 nodes are available: waiting for ephemeral volume controller to create the persistentvolumeclaim "app-0-scratch".');
    expect(r.findings.find((f) => f.id === "claim-missing")!.title).toBe("PersistentVolumeClaim default/app-0-scratch does not exist yet: the ephemeral volume controller has not created it");
    const gone = (version: string) => explain([node("n1", { version }), node("n2", { version }), pvc("data", { boundTo: "pv-gone" }), pod("app-0", { claims: ["data"] })]);
    const now = gone("v1.33.1");
    expect(now.summary!.message).toBe('0/2 nodes are available: persistentvolume "pv-gone" not found.');
    expect(now.nodes[0]!.rejectedBy!.plugin).toBe("VolumeZone");
    // before v1.27 VolumeZone had no PreFilter: VolumeBinding's Filter says it node by node
    expect(gone("v1.26.4").summary!.message).toBe("0/2 nodes are available: 2 node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s).");
  });

  // VolumeRestrictions' PreFilter comes before VolumeBinding's (default_plugins.go): readWriteOncePodPVCsForPod gets
  // every persistentVolumeClaim volume's claim, ephemeral ones not, and returns NotFound as UnschedulableAndUnresolvable
  test("a Lost claim before a missing one: VolumeRestrictions' PreFilter names the missing one first (v1.27+); an ephemeral claim is VolumeBinding's", () => {
    const lostThenGone = (version?: string) =>
      explainPending(
        bundleOf([
          node("n1", version ? { version } : {}),
          node("n2", version ? { version } : {}),
          pvc("lost", { boundTo: "pv-x", phase: "Lost" }),
          pod("app-0", { claims: ["lost", "gone"] }),
          event("Pod", "default", "app-0", "FailedScheduling", '0/2 nodes are available: persistentvolumeclaim "gone" not found. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.'),
        ]),
        { kind: "pod", namespace: "default", name: "app-0" },
      ).pods[0]!;
    const now = lostThenGone("v1.33.4");
    expect(now.summary!.message).toBe('0/2 nodes are available: persistentvolumeclaim "gone" not found.');
    expect(now.nodes[0]!.rejectedBy!.plugin).toBe("VolumeRestrictions");
    expect(now.reconciliation.status).toBe("agree");
    expect(lostThenGone().nodes[0]!.rejectedBy!.plugin).toBe("VolumeRestrictions");
    // before v1.27 ReadWriteOncePod was alpha, off by default, and VolumeRestrictions looked no claim up
    expect(lostThenGone("v1.26.4").summary!.message).toBe('0/2 nodes are available: persistentvolumeclaim "lost" bound to non-existent persistentvolume "pv-x".');
    // a Lost claim and a generic ephemeral volume whose claim is not created yet: VolumeRestrictions does not look at
    // the ephemeral one, so VolumeBinding's podHasPVCs speaks, volume by volume
    const eph = pod("app-0", { claims: ["lost"] });
    eph.spec!.volumes!.push({ name: "scratch", ephemeral: { volumeClaimTemplate: { spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } } } } as never);
    const r = explainPending(bundleOf([node("n1"), node("n2"), pvc("lost", { boundTo: "pv-x", phase: "Lost" }), eph]), { kind: "pod", namespace: "default", name: "app-0" });
    expect(r.pods[0]!.summary!.message).toBe('0/2 nodes are available: persistentvolumeclaim "lost" bound to non-existent persistentvolume "pv-x".');
    expect(r.pods[0]!.nodes[0]!.rejectedBy!.plugin).toBe("VolumeBinding");
  });

  // Only the scheduler writes volume.kubernetes.io/selected-node (VolumeBinding PreBind); a pod created with
  // spec.nodeName never passes it, so its WaitForFirstConsumer claim is never provisioned (StorageClass docs)
  test("a pod with spec.nodeName and a WaitForFirstConsumer claim: both questions say the claim is never provisioned, and what to do", () => {
    const placed = pod("app-0", { claims: ["data"], nodeName: "n1" });
    placed.status = { phase: "Pending" };
    const objects = () => [node("n1"), node("n2"), storageClass("wffc", { mode: "WaitForFirstConsumer" }), pvc("data", { class: "wffc" }), placed];
    const byClaim = explainPending(bundleOf(objects()), { kind: "pvc", namespace: "default", name: "data" });
    expect(byClaim.claims[0]!.state.reason).toBe("NodeNameBypassesScheduler");
    expect(byClaim.answer).toMatch(/^PersistentVolumeClaim default\/data: Pending, and never provisioned this way: StorageClass "wffc" has volumeBindingMode WaitForFirstConsumer/);
    expect(byClaim.answer).toContain("app-0 (spec.nodeName n1)");
    expect(byClaim.answer).not.toContain("see why they cannot be scheduled");
    expect(byClaim.findings[0]).toMatchObject({ id: "node-name-bypasses-scheduler", severity: "error" });
    const byPod = explainPending(bundleOf(objects()), { kind: "pod", namespace: "default", name: "app-0" });
    expect(byPod.answer).toBe(
      "Pod default/app-0 names node n1 in spec.nodeName, so the scheduler never sees it and its WaitForFirstConsumer claim(s) data are never provisioned: " +
        "place it with nodeSelector or nodeAffinity instead, or use a StorageClass with volumeBindingMode Immediate.",
    );
    expect(byPod.findings.find((f) => f.id === "pod-scheduled")).toMatchObject({ severity: "error" });
    expect(byPod.answer).not.toContain("waits for the kubelet");
    // another consumer the scheduler can place gives the claim a node: the usual wait for the first consumer
    const other = pod("app-1", { claims: ["data"] });
    const mixed = explainPending(bundleOf([...objects(), other]), { kind: "pvc", namespace: "default", name: "data" });
    expect(mixed.claims[0]!.state.reason).toBe("WaitForFirstConsumer");
    // once the scheduler picked a node (the annotation), it is a provisioning like any other
    const chosen = explainPending(bundleOf([node("n1"), storageClass("wffc", { mode: "WaitForFirstConsumer" }), pvc("data", { class: "wffc", annotations: { "volume.kubernetes.io/selected-node": "n1" } }), placed]), { kind: "pvc", namespace: "default", name: "data" });
    expect(chosen.claims[0]!.state.reason).toBe("Provisioning");
  });

  // VolumeBinding's PreFilterResult (binder.go GetEligibleNodes, kubernetes#109877): a bound local PV keeps only the
  // nodes named by its hostname values, from v1.27 until kubernetes#125398 (v1.32.0, v1.31.3, v1.30.7, v1.29.11)
  describe("a bound local PersistentVolume", () => {
    const HOST = "kubernetes.io/hostname";
    const q = { kind: "pod" as const, namespace: "default", name: "app-0" };
    const local = (name: string, host: string) => pv(name, { claim: "default/data", terms: [term([HOST, "In", host])], source: { local: { path: "/mnt/disks/a" } } });
    const objects = (version: string | undefined, names: string[], ...pvs: ReturnType<typeof pv>[]) => [
      ...names.map((n, i) => node(n, { version, labels: { [HOST]: `n${i + 1}` } })), ...pvs,
      ...pvs.map((v, i) => pvc(`data${i}`, { boundTo: v.metadata.name })),
      pod("app-0", { claims: pvs.map((_, i) => `data${i}`), tolerations: [] }),
    ];
    const plain = ["n1", "n2", "n3"];

    test("v1.27–v1.31.2: the other nodes are never filtered; the release's wording counts them or not", () => {
      // n1 is cordoned: the one node kept is rejected by its own filter; the others by the PreFilterResult
      const cordoned = (version: string) => {
        const b = bundleOf(objects(version, plain, local("pv-a", "n1")));
        b.objects.nodes[0]!.spec!.unschedulable = true;
        return explainPending(b, q).pods[0]!;
      };
      const p = cordoned("v1.31.2");
      expect(p.nodes.map((n) => n.rejectedBy)).toEqual([
        { plugin: "NodeUnschedulable", reasons: ["node(s) were unschedulable"] },
        { plugin: "VolumeBinding", reasons: ["not among the node(s) the PreFilterResult of [VolumeBinding] keeps"], uncounted: true },
        { plugin: "VolumeBinding", reasons: ["not among the node(s) the PreFilterResult of [VolumeBinding] keeps"], uncounted: true },
      ]);
      expect(p.summary!.message).toBe("0/3 nodes are available: 1 node(s) were unschedulable.");
      expect(p.notes).toEqual([
        "VolumeBinding's PreFilter keeps only the nodes NAMED by the bound local PersistentVolume's kubernetes.io/hostname values, as from v1.27 until kubernetes#125398: v1.32.0, v1.31.3, v1.30.7, v1.29.11 (since then, Filter matches its node affinity against each node's labels); the scheduler's release is taken to be v1.31.2, the newest kubelet's version (the bundle does not hold kube-scheduler's).",
      ]);
      // v1.30.1 wrote "filtered out" for them (kubernetes#119779)
      expect(cordoned("v1.30.1").summary!.message).toBe("0/3 nodes are available: 1 node(s) were unschedulable, 2 node is filtered out by the prefilter result.");
      // two local PVs on different nodes: the merged result is empty, a PreFilter rejection of every node
      const two = explainPending(bundleOf(objects("v1.28.15", plain, local("pv-a", "n1"), local("pv-b", "n2"))), q).pods[0]!;
      expect(two.summary!.message).toBe("0/3 nodes are available: node(s) didn't satisfy plugin VolumeBinding.");
      // before v1.27 every node went through the filters (VolumeBinding's Filter: the PV's node affinity)
      const old = bundleOf(objects("v1.26.4", plain, local("pv-a", "n1")));
      old.objects.nodes[0]!.spec!.unschedulable = true;
      expect(explainPending(old, q).pods[0]!.summary!.message)
        .toBe("0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) had volume node affinity conflict.");
    });

    // kubernetes#125336: node names that are not their hostname labels (n1.example.internal labelled n1)
    const fqdn = ["n1.example.internal", "n2.example.internal", "n3.example.internal"];
    test.each([["v1.34.2"], ["v1.32.0"], ["v1.31.3"], ["v1.30.7"], ["v1.29.11"]])("from kubernetes#125398 (%s): Filter on the node's labels, the node of the PV fits", (version) => {
      const p = explainPending(bundleOf(objects(version, fqdn, local("pv-a", "n1"))), q).pods[0]!;
      expect(p.summary!.feasibleNodes).toEqual(["n1.example.internal"]);
      expect(p.nodes.map((n) => n.rejectedBy?.reasons[0] ?? null)).toEqual([
        null,
        expect.stringMatching(/^node\(s\) (?:didn't match PersistentVolume's node affinity|had volume node affinity conflict)$/),
        expect.stringMatching(/^node\(s\) (?:didn't match PersistentVolume's node affinity|had volume node affinity conflict)$/),
      ]);
      expect(p.notes![0]).toContain(`VolumeBinding matches the bound local PersistentVolume's node affinity against each node's labels (Filter)`);
      expect(p.notes![0]).toContain(`the scheduler's release is taken to be ${version}, the newest kubelet's version`);
    });
    test.each([["v1.31.2"], ["v1.30.6"], ["v1.29.10"], ["v1.28.15"], ["v1.27.3"]])("before kubernetes#125398 (%s): the hostname value taken as a node name keeps no node of the cluster", (version) => {
      // the PreFilterResult {n1} names no node: none is filtered, none counted (FitError.Error adds no reason)
      const p = explainPending(bundleOf(objects(version, fqdn, local("pv-a", "n1"))), q).pods[0]!;
      expect(p.summary!.feasibleNodes).toEqual([]);
      expect(p.nodes.every((n) => n.rejectedBy?.plugin === "VolumeBinding")).toBe(true);
      expect(p.notes![0]).toContain("VolumeBinding's PreFilter keeps only the nodes NAMED by");
    });
    test("nodes of one minor and different patches: the newest patch decides (v1.31.2 and v1.31.5: no narrowing)", () => {
      for (const order of [["v1.31.2", "v1.31.5"], ["v1.31.5", "v1.31.2"]]) {
        const objs = objects(undefined, fqdn, local("pv-a", "n1"));
        objs.filter((o) => o.kind === "Node").forEach((n, i) => {
          (n as ReturnType<typeof node>).status!.nodeInfo!.kubeletVersion = order[Math.min(i, 1)]!;
        });
        const p = explainPending(bundleOf(objs), q).pods[0]!;
        expect(p.summary!.feasibleNodes, order.join()).toEqual(["n1.example.internal"]);
        expect(p.notes![0], order.join()).toContain("taken to be v1.31.5");
      }
    });
    test("a version without patch (v1.31) or none at all: the latest behaviour, and the note says what it was taken to be", () => {
      const noPatch = explainPending(bundleOf(objects("v1.31", fqdn, local("pv-a", "n1"))), q).pods[0]!;
      expect(noPatch.summary!.feasibleNodes).toEqual(["n1.example.internal"]);
      expect(noPatch.notes![0]).toContain("the scheduler's release is taken to be the latest patch of v1.31 (the newest kubelet's version, which has no patch number)");
      const none = bundleOf(objects(undefined, fqdn, local("pv-a", "n1")));
      for (const n of none.objects.nodes) delete (n.status as { nodeInfo?: unknown }).nodeInfo;
      const p = explainPending(none, q).pods[0]!;
      expect(p.summary!.feasibleNodes).toEqual(["n1.example.internal"]);
      expect(p.notes![0]).toContain("no node reports a kubelet version, so the scheduler is taken to be a current release");
    });
    test("a v1.34 scheduler's event that counts every node agrees, and the text prints the note", () => {
      const msg = "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match PersistentVolume's node affinity. " +
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
      const b = bundleOf([...objects("v1.34.2", plain, local("pv-a", "n1")), event("Pod", "default", "app-0", "FailedScheduling", msg)]);
      b.objects.nodes[0]!.spec!.unschedulable = true;
      const r = explainPending(b, q);
      expect(r.pods[0]!.reconciliation.status).toBe("agree");
      expect(renderPendingText(r, { color: false })).toContain("  note: VolumeBinding matches the bound local PersistentVolume's node affinity");
    });
  });

  // volume_zone.go getPVTopologies: a label LabelZonesToSet cannot parse (an empty "__"-separated entry after trimming) is
  // logged and ignored; entries are trimmed
  describe("VolumeZone and the PersistentVolume's zone label as LabelZonesToSet reads it", () => {
    const ZONE = "topology.kubernetes.io/zone";
    const run = (value: string) => {
      const nfs = pv("nfs-pv", { claim: "default/shared", class: "", modes: ["ReadWriteMany"], labels: { [ZONE]: value }, source: { nfs: { server: "10.0.0.5", path: "/export" } } });
      const r = explainPending(bundleOf([node("n1", { zone: "eu-west-1a" }), node("n2", { zone: "eu-west-1b" }), nfs, pvc("shared", { boundTo: "nfs-pv" }), pod("web-0", { claims: ["shared"] })]), { kind: "pod", namespace: "default", name: "web-0" });
      return r.pods[0]!;
    };
    test.each([[""], ["eu-west-1a__"], ["eu-west-1a____eu-west-1b"], ["  "], ["__eu-west-1b"]])("%j: ignored, every node passes VolumeZone", (value) => {
      const p = run(value);
      expect(p.summary!.feasibleNodes).toEqual(["n1", "n2"]);
      const check = p.nodes[0]!.checks.find((c) => c.rule === "volumeZone")!;
      expect(check.passed).toBe(true);
      expect(check.detail).toBe(`no zone label to check (ignored, as kube-scheduler ignores a value it cannot parse — an empty entry between "__" separators, LabelZonesToSet: PersistentVolume nfs-pv label ${ZONE}=${JSON.stringify(value)})`);
    });
    test("entries are trimmed; a parseable list still filters", () => {
      expect(run(" eu-west-1a __eu-west-1c").summary!.feasibleNodes).toEqual(["n1"]);
      const p = run("eu-west-1c");
      expect(p.summary!.message).toBe("0/2 nodes are available: 2 node(s) had no available volume zone.");
    });
  });

  test("preemptionPolicy Never with nodes short of room: a finding says the scheduler evicts nothing for it", () => {
    const msg = "0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.";
    const big = pod("app-0");
    big.spec!.containers![0]!.resources = { requests: { cpu: "64" } };
    (big.spec as Record<string, unknown>).preemptionPolicy = "Never";
    const withAlloc = (name: string) => {
      const n = node(name);
      (n.status as Record<string, unknown>).allocatable = { cpu: "4", memory: "8Gi", pods: "110" };
      return n;
    };
    const r = explainPending(bundleOf([withAlloc("n1"), withAlloc("n2"), big, event("Pod", "default", "app-0", "FailedScheduling", msg, { type: "Warning" })]), { kind: "pod", namespace: "default", name: "app-0" });
    const f = r.findings.find((x) => x.id === "preemption-never")!;
    expect(f.title).toBe("Pod default/app-0 does not preempt (preemptionPolicy: Never)");
    expect(f.evidence).toEqual(["Pod default/app-0 spec.preemptionPolicy: Never", `Event FailedScheduling: ${msg}`]);
    // the default policy, and no such event: nothing to say
    delete (big.spec as Record<string, unknown>).preemptionPolicy;
    const r2 = explainPending(bundleOf([withAlloc("n1"), withAlloc("n2"), big]), { kind: "pod", namespace: "default", name: "app-0" });
    expect(r2.findings.some((x) => x.id === "preemption-never")).toBe(false);
  });

  test("an event naming a DeviceClass that does not exist: an error finding that says what provides it", () => {
    const msg = "0/2 nodes are available: request gpu: device class gpu.example.com does not exist. still not schedulable";
    const r = explainPending(bundleOf([node("n1"), node("n2"), pod("app-0"), event("Pod", "default", "app-0", "FailedScheduling", msg, { type: "Warning" })]), { kind: "pod", namespace: "default", name: "app-0" });
    const f = r.findings.find((x) => x.id === "device-class-missing")!;
    expect(f.title).toBe("DeviceClass gpu.example.com does not exist (request gpu of a ResourceClaim of pod default/app-0)");
    expect(f.severity).toBe("error");
  });

  // NodeAffinity PreFilter (node_affinity.go): terms that name nodes by metadata.name leave no node → errReasonConflict
  test("required terms whose metadata.name lists have no common node: NodeAffinity's PreFilter rejects every node", () => {
    const names = (...v: string[][]) => ({ nodeSelectorTerms: v.map((values) => ({ matchFields: values.map((x) => ({ key: "metadata.name", operator: "In" as const, values: [x] })) })) });
    const msg = "0/2 nodes are available: pod affinity terms conflict. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
    const conflict = pod("app-0", { affinity: names(["n1", "n2"]) });
    const r = explainPending(bundleOf([node("n1"), node("n2"), conflict, event("Pod", "default", "app-0", "FailedScheduling", msg, { type: "Warning" })]), { kind: "pod", namespace: "default", name: "app-0" });
    const p = r.pods[0]!;
    expect(p.summary!.message).toBe("0/2 nodes are available: pod affinity terms conflict.");
    expect(p.nodes.map((n) => n.rejectedBy)).toEqual([
      { plugin: "NodeAffinity", reasons: ["pod affinity terms conflict"] },
      { plugin: "NodeAffinity", reasons: ["pod affinity terms conflict"] },
    ]);
    expect(p.reconciliation.status).toBe("agree");
    // one term naming a node the cluster has: a PreFilter result (that node), not a conflict
    const one = explainPending(bundleOf([node("n1"), node("n2"), pod("app-0", { affinity: names(["n2"]) })]), { kind: "pod", namespace: "default", name: "app-0" });
    expect(one.pods[0]!.summary!.preFilter).toBeNull();
    expect(one.pods[0]!.summary!.feasibleNodes).toEqual(["n2"]);
    // a term without metadata.name lets every node through PreFilter
    const open = pod("app-0", { affinity: { nodeSelectorTerms: [...names(["n1", "n2"]).nodeSelectorTerms, { matchExpressions: [{ key: "disk", operator: "In", values: ["ssd"] }] }] } });
    expect(explainPending(bundleOf([node("n1"), node("n2"), open]), { kind: "pod", namespace: "default", name: "app-0" }).pods[0]!.summary!.preFilter).toBeNull();
  });

  // A DaemonSet pod names its node by `matchFields metadata.name` (pkg/controller/daemon/util): from v1.24 NodeAffinity's
  // PreFilterResult keeps that node and the others are never filtered; FailedScheduling counts them as
  // `node(s) didn't satisfy plugin(s) [NodeAffinity]`, or in earlier releases `node is filtered out by the prefilter result`
  describe("NodeAffinity's PreFilterResult (a DaemonSet pod's node named by metadata.name)", () => {
    const dsPod = () => pod("agent-x", { affinity: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["n2"] }] }] } });
    const nodes = (version?: string) => [node("n1", { version }), node("n2", { unschedulable: true, version }), node("n3", { version })];
    const q = { kind: "pod" as const, namespace: "default", name: "agent-x" };
    test.each([
      ["current wording", "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."],
      ["the earlier wording", "0/3 nodes are available: 1 node(s) were unschedulable, 2 node is filtered out by the prefilter result."],
    ])("the event's %s: the same message, agreeing", (_, msg) => {
      const r = explainPending(bundleOf([...nodes(), dsPod(), event("Pod", "default", "agent-x", "FailedScheduling", msg + " preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")]), q);
      const p = r.pods[0]!;
      expect(p.summary!.message).toBe(msg);
      expect(p.reconciliation.status).toBe("agree");
      expect(p.nodes.find((n) => n.node === "n1")!.rejectedBy!.plugin).toBe("NodeAffinity");
    });
    // kube-scheduler counted those nodes in three ways over its releases (schedule_one.go, FitError.Error): not at all
    // (no status recorded for them), "filtered out" (kubernetes#119779 and its backports, removed again by #125197),
    // then NodeToStatus' status of absent nodes (kubernetes#126022, v1.32)
    test.each([
      ["v1.26.15", "0/3 nodes are available: 1 node(s) were unschedulable."],
      ["v1.27.13", "0/3 nodes are available: 1 node(s) were unschedulable."],
      ["v1.27.14", "0/3 nodes are available: 1 node(s) were unschedulable, 2 node is filtered out by the prefilter result."],
      ["v1.27.15", "0/3 nodes are available: 1 node(s) were unschedulable."],
      ["v1.28.10", "0/3 nodes are available: 1 node(s) were unschedulable, 2 node is filtered out by the prefilter result."],
      ["v1.29.5", "0/3 nodes are available: 1 node(s) were unschedulable, 2 node is filtered out by the prefilter result."],
      ["v1.29.8", "0/3 nodes are available: 1 node(s) were unschedulable."],
      ["v1.30.1", "0/3 nodes are available: 1 node(s) were unschedulable, 2 node is filtered out by the prefilter result."],
      ["v1.30.2", "0/3 nodes are available: 1 node(s) were unschedulable."],
      ["v1.31.4", "0/3 nodes are available: 1 node(s) were unschedulable."],
      ["v1.32.0", "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."],
    ])("no event, nodes at %s: the message that release writes", (version, msg) => {
      const r = explainPending(bundleOf([...nodes(version), dsPod()]), q);
      expect(r.pods[0]!.summary!.message).toBe(msg);
      const n1 = r.pods[0]!.nodes.find((n) => n.node === "n1")!;
      expect(n1.rejectedBy!.plugin).toBe("NodeAffinity");
      expect(n1.rejectedBy!.uncounted === true).toBe(!msg.includes(", 2 "));
    });
    test("an event of a release that does not count them (v1.24–v1.31 mostly) agrees, whatever the nodes' versions say", () => {
      const msg = "0/3 nodes are available: 1 node(s) were unschedulable.";
      for (const version of [undefined, "v1.32.1"]) {
        const r = explainPending(bundleOf([...nodes(version), dsPod(), event("Pod", "default", "agent-x", "FailedScheduling", msg + " preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.")]), q);
        expect(r.pods[0]!.summary!.message, version).toBe(msg);
        expect(r.pods[0]!.reconciliation.status, version).toBe("agree");
        expect(renderPendingText(r, { color: false }), version).toContain("(not counted: n1, n3, left out by the PreFilterResult of NodeAffinity");
      }
    });
    test("no event: the current wording; before v1.24 (no PreFilterResult) NodeAffinity's Filter wording", () => {
      expect(explainPending(bundleOf([...nodes(), dsPod()]), q).pods[0]!.summary!.message).toBe(
        "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].",
      );
      expect(explainPending(bundleOf([...nodes("v1.23.17"), dsPod()]), q).pods[0]!.summary!.message).toBe(
        "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector.",
      );
    });
  });

  test("unbound Immediate claim: PreFilter message, agreeing with the event (double-dot preemption suffix)", () => {
    const msg = "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..";
    const r = explainPending(
      bundleOf([node("a"), node("b"), node("c"), storageClass("gp3"), pvc("data"), pod("app-0", { claims: ["data"] }), event("Pod", "default", "app-0", "FailedScheduling", msg)]),
      { kind: "pod", namespace: "default", name: "app-0" },
    );
    const p = r.pods[0]!;
    expect(p.summary!.message).toBe("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.");
    expect(p.summary!.preFilter).toBe("pod has unbound immediate PersistentVolumeClaims");
    expect(p.nodes.every((n) => n.rejectedBy?.plugin === "VolumeBinding")).toBe(true);
    expect(p.claims[0]!.binding).toBe("immediate");
    expect(p.reconciliation.status).toBe("agree");
  });

  // the scheduler's words are in the Event and, latest, in the PodScheduled condition: both say it here
  const saying = (b: ReturnType<typeof azureBundle>, message: string) => {
    b.objects.events[0]!.message = message;
    for (const p of b.objects.pods) for (const c of p.status?.conditions ?? []) if (c.type === "PodScheduled") c.message = message;
    return b;
  };
  test("disagreement: the event counted another cluster", () => {
    const b = saying(azureBundle(), "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) had volume node affinity conflict.");
    const r = explainPending(b, { kind: "pvc", namespace: "default", name: "md" });
    expect(r.pods[0]!.reconciliation).toEqual({
      status: "disagree",
      details: [
        "The event counted 4 node(s); the bundle has 3: nodes were added or removed since.",
        'The scheduler reported "1 Insufficient cpu", a check this analysis does not model (it has no data for it).',
      ],
    });
    expect(r.findings.find((f) => f.id === "event-disagrees")!.severity).toBe("warning");
  });

  test("scheduler-enforced node affinity (the profile's addedAffinity): explained as the scheduler's configuration, not counted as the pod's node affinity", () => {
    const msg = "0/2 nodes are available: 2 node(s) didn't match scheduler-enforced node affinity. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
    const p = pod("batch-0");
    p.spec!.schedulerName = "batch-scheduler";
    const r = explainPending(bundleOf([node("n1"), node("n2"), p, event("Pod", "default", "batch-0", "FailedScheduling", msg)]), { kind: "pod", namespace: "default", name: "batch-0" });
    const rec = r.pods[0]!.reconciliation;
    expect(rec.status).toBe("disagree");
    expect(rec.details[0]).toBe(
      'The scheduler reported "2 node(s) didn\'t match scheduler-enforced node affinity": node affinity that batch-scheduler\'s profile adds to every pod it places ' +
        "(KubeSchedulerConfiguration profiles[].pluginConfig, NodeAffinity args.addedAffinity), not the pod's own. " +
        "It is in the scheduler's configuration file, not in the API, so this bundle cannot check it: compare that addedAffinity with the nodes' labels.",
    );
    // not read as the pod's own node affinity failing on 2 nodes
    expect(rec.details.some((d) => d.startsWith("node-affinity:") || d.startsWith("scheduler-enforced-affinity:"))).toBe(false);
  });

  test("NodeDeclaredFeatures (v1.35): the features named, and which nodes of the bundle declare them", () => {
    const msg = "0/3 nodes are available: 2 node declared features check failed - unsatisfied requirements: FeatureA, FeatureB, 1 node(s) were unschedulable.";
    const declaring = node("n3", { unschedulable: true });
    declaring.status!.declaredFeatures = ["FeatureA", "FeatureB"];
    const other = node("n2");
    other.status!.declaredFeatures = ["FeatureB"];
    const r = explainPending(bundleOf([node("n1"), other, declaring, pod("app-0"), event("Pod", "default", "app-0", "FailedScheduling", msg)]), { kind: "pod", namespace: "default", name: "app-0" });
    const p = r.pods[0]!;
    expect(p.lastFailedScheduling!.parsed!.reasons.map((x) => [x.count, x.kind])).toEqual([[2, "node-declared-features"], [1, "unschedulable"]]);
    expect(p.reconciliation.details[0]).toBe(
      'The scheduler reported "2 node declared features check failed - unsatisfied requirements: FeatureA, FeatureB": those nodes do not declare, in status.declaredFeatures, features the pod needs ' +
        "(NodeDeclaredFeatures; the scheduler infers the pod's needs from its spec, which this analysis does not model). " +
        "FeatureA: declared by n3; FeatureB: declared by n2, n3.",
    );
    // unmodelled: not read as "node-declared-features: the event says 2 node(s), the bundle gives 0"
    expect(p.reconciliation.details.some((d) => d.startsWith("node-declared-features:"))).toBe(false);
  });

  test("NodeDeclaredFeatures (later releases): the message names no feature; what each node declares, fewest first", () => {
    // plugins/nodedeclaredfeatures errReasonUnsatisfiedRequirements, written without the features since the Filter
    // stopped computing the difference
    const msg = "0/3 nodes are available: 2 node(s) didn't match Pod's required features, 1 node(s) were unschedulable. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
    const full = node("n3", { unschedulable: true });
    full.status!.declaredFeatures = ["RestartAllContainersOnContainerExits", "VolumeBindMountOptions"];
    const some = node("n2");
    some.status!.declaredFeatures = ["RestartAllContainersOnContainerExits"];
    const r = explainPending(bundleOf([node("n1"), some, full, pod("app-0"), event("Pod", "default", "app-0", "FailedScheduling", msg)]), { kind: "pod", namespace: "default", name: "app-0" });
    const p = r.pods[0]!;
    expect(p.lastFailedScheduling!.parsed!.reasons.map((x) => [x.count, x.kind])).toEqual([[2, "node-declared-features"], [1, "unschedulable"]]);
    expect(p.reconciliation.details[0]).toBe(
      `The scheduler reported "2 node(s) didn't match Pod's required features": those nodes do not declare, in status.declaredFeatures, features the pod needs ` +
        "(NodeDeclaredFeatures; the scheduler infers the pod's needs from its spec, which this analysis does not model). " +
        "This release's message does not name the features: what each node declares, fewest first: n1: none; n2: RestartAllContainersOnContainerExits; " +
        "n3: RestartAllContainersOnContainerExits, VolumeBindMountOptions.",
    );
    // one detail for the reason, not also a count disagreement
    expect(p.reconciliation.details.filter((d) => /required features/.test(d))).toHaveLength(1);
  });

  test("DRAExtendedResource's 'cannot fit resource' is explained, not left as a reason not modelled", () => {
    const msg = "0/1 nodes are available: 1 cannot fit resource. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";
    const r = explainPending(bundleOf([node("n1"), pod("app-0"), event("Pod", "default", "app-0", "FailedScheduling", msg)]), { kind: "pod", namespace: "default", name: "app-0" });
    expect(r.pods[0]!.reconciliation.details[0]).toMatch(/^The scheduler reported "1 cannot fit resource": the pod requests an extended resource that those nodes neither advertise in status\.allocatable \(a device plugin\) nor can get through a DeviceClass's spec\.extendedResourceName/);
  });

  test("disagreement: the event blames taints, the bundle shows none", () => {
    const b = saying(azureBundle(), "0/3 nodes are available: 3 node(s) had taints that the pod didn't tolerate.");
    const r = explainPending(b, { kind: "pvc", namespace: "default", name: "md" });
    expect(r.pods[0]!.reconciliation.details).toEqual([
      "taint: the event says 3 node(s), the bundle gives 0.",
      "volume-node-affinity: the event says 0 node(s), the bundle gives 3.",
    ]);
  });

  // schedule_one.go handleSchedulingFailure: the condition gets every attempt's message whole; a repeated Event keeps
  // its first message (client-go events count repeats by a key without the message) and is cut at 1,024 bytes
  test("an Event that kept an older message: the PodScheduled condition, the scheduler's latest, is reconciled", () => {
    const b = azureBundle();
    const condition = b.objects.pods.flatMap((p) => p.status?.conditions ?? []).find((c) => c.type === "PodScheduled")!.message!;
    b.objects.events[0]!.message = "0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: gpu}.";
    const r = explainPending(b, { kind: "pvc", namespace: "default", name: "md" }).pods[0]!;
    expect(r.lastFailedScheduling!.message).toBe(condition);
    expect(r.lastFailedScheduling!.source).toBe("PodScheduled condition (the scheduler's latest message; the Event keeps the first message of its series)");
    expect(r.reconciliation.status).toBe("agree");
  });

  test("no FailedScheduling event: the PodScheduled condition holds the scheduler's message (issue 16)", () => {
    const b = azureBundle();
    b.objects.events = [];
    const p = explainPending(b, { kind: "pod", namespace: "default", name: "busybox" }).pods[0]!;
    expect(p.lastFailedScheduling?.source).toBe("PodScheduled condition (the Events have expired)");
    expect(p.reconciliation.status).toBe("agree");
  });

  test("neither an event nor a PodScheduled condition", () => {
    const b = azureBundle();
    b.objects.events = [];
    for (const pod of b.objects.pods) if (pod.status) pod.status.conditions = (pod.status.conditions ?? []).filter((c) => c.type !== "PodScheduled");
    expect(explainPending(b, { kind: "pod", namespace: "default", name: "busybox" }).pods[0]!.reconciliation.status).toBe("no-event");
  });

  test("v1.35 nodes: generic taint wording; a cordoned node reports unschedulable first", () => {
    const r = explainPending(
      bundleOf([
        node("cp", { zone: "a", version: "v1.35.0", taints: [{ key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" }] }),
        node("w1", { zone: "a", version: "v1.35.0", unschedulable: true }),
        node("w2", { zone: "b", version: "v1.35.0" }),
        storageClass("gp3"),
        pvc("data", { boundTo: "pv-a" }),
        pv("pv-a", { claim: "default/data", terms: [term([ZONE, "In", "a"])] }),
        pod("app-0", { claims: ["data"] }),
      ]),
      { kind: "pod", namespace: "default", name: "app-0" },
    );
    expect(r.pods[0]!.summary!.message).toBe(
      "0/3 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable.",
    );
  });

  test("a NotReady node without its taint yet is still considered by the scheduler, and says so", () => {
    const r = explainPending(bundleOf([node("n1", { ready: "Unknown" }), pod("app-0")]), { kind: "pod", namespace: "default", name: "app-0" });
    const row = r.pods[0]!.nodes[0]!;
    expect(row.fits).toBe(true);
    expect(row.checks.find((c) => c.rule === "ready")!.detail).toBe(
      "NotReady (Ready=Unknown); no not-ready/unreachable taint yet, so the scheduler still considers it",
    );
  });

  test("a toleration of the control-plane taint lets the pod there", () => {
    const r = explainPending(
      bundleOf([
        node("cp", { taints: [{ key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" }] }),
        pod("app-0", { tolerations: [{ key: "node-role.kubernetes.io/control-plane", operator: "Exists", effect: "NoSchedule" }] }),
      ]),
      { kind: "pod", namespace: "default", name: "app-0" },
    );
    expect(r.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "taints")).toMatchObject({ passed: true, detail: "all taints tolerated" });
  });

  test("WaitForFirstConsumer with a selected node: other nodes report a bind conflict", () => {
    const r = explainPending(
      bundleOf([
        node("n-a", { zone: "a" }),
        node("n-b", { zone: "b" }),
        storageClass("gp3", { mode: "WaitForFirstConsumer" }),
        pvc("data", { annotations: { "volume.kubernetes.io/selected-node": "n-a" } }),
        pod("app-0", { claims: ["data"] }),
      ]),
      { kind: "pod", namespace: "default", name: "app-0" },
    );
    expect(r.claims[0]!.state.reason).toBe("Provisioning");
    expect(r.claims[0]!.state.message).toBe('Pending: waiting for provisioner "ebs.csi.aws.com" to create the volume for node "n-a"; it has reported nothing (is it running?).');
    expect(r.pods[0]!.nodes.map((n) => [n.node, n.fits])).toEqual([["n-a", true], ["n-b", false]]);
    // issue 16: the first line says the pod waits for provisioning, not that a node fits
    expect(r.answer.split("\n")[0]).toBe(
      'Pod default/app-0 waits for claim data: the scheduler chose node n-a (annotation volume.kubernetes.io/selected-node) and binds the pod once the volume exists; provisioner "ebs.csi.aws.com" is creating it, and has reported nothing (is it running?).',
    );
  });

  // volumebinding/binder.go FindPodVolumes: a claim with a selected node goes to checkVolumeProvisions on that node
  test("a selected node is still checked for provisioning: a class that cannot provision there fails it, as the scheduler's checkVolumeProvisions does", () => {
    const run = (cls: ReturnType<typeof storageClass>[]) =>
      explainPending(
        bundleOf([
          node("n-a", { zone: "a" }),
          node("n-b", { zone: "b" }),
          ...cls,
          pvc("data", { class: "gp3", annotations: { "volume.kubernetes.io/selected-node": "n-a" } }),
          pod("app-0", { claims: ["data"] }),
        ]),
        { kind: "pod", namespace: "default", name: "app-0" },
      ).pods[0]!.nodes.map((n) => [n.node, n.fits, n.checks.find((c) => c.rule === "volume")!.detail]);
    const zoneB = [{ matchLabelExpressions: [{ key: "topology.kubernetes.io/zone", values: ["b"] }] }];
    expect(run([storageClass("gp3", { mode: "WaitForFirstConsumer", allowedTopologies: zoneB })])).toEqual([
      ["n-a", false, "provisioning for this node (volume.kubernetes.io/selected-node), but StorageClass gp3 allowedTopologies exclude this node"],
      ["n-b", false, "being provisioned for node n-a (volume.kubernetes.io/selected-node)"],
    ]);
    expect(run([storageClass("gp3", { mode: "WaitForFirstConsumer", provisioner: "kubernetes.io/no-provisioner" })])[0]).toEqual(["n-a", false, "provisioning for this node (volume.kubernetes.io/selected-node), but StorageClass gp3 cannot provision"]);
    expect(run([storageClass("gp3", { mode: "WaitForFirstConsumer" })])[0]).toEqual(["n-a", true, "provisioning for this node (volume.kubernetes.io/selected-node) by ebs.csi.aws.com"]);
  });

  /** A pod whose WaitForFirstConsumer claim is being provisioned for node n-a, with these events. */
  const provisioningFor = (...events: ReturnType<typeof event>[]) =>
    explainPending(
      bundleOf([
        node("n-a", { zone: "a" }),
        storageClass("gp3", { mode: "WaitForFirstConsumer" }),
        pvc("data", { annotations: { "volume.kubernetes.io/selected-node": "n-a" } }),
        pod("app-0", { claims: ["data"] }),
        ...events,
      ]),
      { kind: "pod", namespace: "default", name: "app-0" },
    );

  // framework.go RunPreBindPlugins: `running PreBind plugin "VolumeBinding": binding volumes: …`, written as FailedScheduling
  test("a binding-cycle failure (PreBind VolumeBinding) is no filter verdict to reconcile; the first line carries it", () => {
    const msg = 'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded';
    const r = provisioningFor(event("Pod", "default", "app-0", "FailedScheduling", msg, { type: "Warning" }));
    expect(r.pods[0]!.reconciliation.status).toBe("not-applicable");
    expect(r.pods[0]!.reconciliation.details[0]).toMatch(/^The scheduler's last attempt chose a node and failed while binding the pod \(PreBind plugin VolumeBinding\), not at filtering/);
    expect(r.findings.some((f) => f.id === "event-disagrees")).toBe(false);
    expect(r.answer.split("\n")[0]).toContain(`The scheduler's last attempt failed while binding: ${msg}.`);
  });

  test("a selected node and a failing provisioner: the first line carries the provisioner's error", () => {
    const r = provisioningFor(
      event("PersistentVolumeClaim", "default", "data", "ProvisioningFailed", 'failed to provision volume with StorageClass "gp3": rpc error: code = Internal desc = Could not create volume: UnauthorizedOperation', { type: "Warning" }),
    );
    expect(r.answer.split("\n")[0]).toBe(
      'Pod default/app-0 waits for claim data: the scheduler chose node n-a (annotation volume.kubernetes.io/selected-node) and binds the pod once the volume exists; provisioner "ebs.csi.aws.com" fails: failed to provision volume with StorageClass "gp3": rpc error: code = Internal desc = Could not create volume: UnauthorizedOperation.' +
        " Root cause: The provisioner of PersistentVolumeClaim default/data fails.",
    );
  });

  test("WaitForFirstConsumer + no-provisioner: a static local PV on one node", () => {
    const r = explainPending(
      bundleOf([
        node("w1"),
        node("w2"),
        storageClass("local", { provisioner: "kubernetes.io/no-provisioner", mode: "WaitForFirstConsumer" }),
        pvc("data", { class: "local" }),
        pv("local-w2", { class: "local", source: { local: { path: "/mnt/ssd" } }, terms: [term(["kubernetes.io/hostname", "In", "w2"])] }),
        pod("app-0", { claims: ["data"] }),
      ]),
      { kind: "pod", namespace: "default", name: "app-0" },
    );
    const rows = r.pods[0]!.nodes;
    expect(rows.map((n) => n.checks.find((c) => c.rule === "volume")!.detail)).toEqual([
      "no available PersistentVolume matches on this node, and StorageClass local cannot provision",
      "PersistentVolume local-w2 is available here",
    ]);
    expect(r.pods[0]!.summary!.feasibleNodes).toEqual(["w2"]);
  });

  test("two WaitForFirstConsumer claims, one static PV: a volume serves one claim of the pod (binder.go findMatchingVolumes)", () => {
    const objects = (volumes: string[]) => bundleOf([
      node("w1"),
      storageClass("local", { provisioner: "kubernetes.io/no-provisioner", mode: "WaitForFirstConsumer" }),
      pvc("data", { class: "local", size: "10Gi" }),
      pvc("wal", { class: "local", size: "5Gi" }),
      ...volumes.map((v) => pv(v, { class: "local", size: v === "big" ? "100Gi" : "20Gi", source: { local: { path: `/mnt/${v}` } }, terms: [term(["kubernetes.io/hostname", "In", "w1"])] })),
      pod("pg-0", { claims: ["data", "wal"] }),
    ]);
    const one = explainPending(objects(["big"]), { kind: "pod", namespace: "default", name: "pg-0" });
    const details = (r: typeof one) => r.pods[0]!.nodes[0]!.checks.filter((c) => c.rule === "volume").map((c) => `${c.claim}: ${c.detail}`);
    // the smaller claim (wal) is matched first and takes the only volume
    expect(details(one)).toEqual([
      "data: no available PersistentVolume matches on this node, and StorageClass local cannot provision",
      "wal: PersistentVolume big is available here",
    ]);
    expect(one.pods[0]!.summary!.feasibleNodes).toEqual([]);
    // two volumes: each claim its own, the smallest that fits (wal: small, data: the other)
    const two = explainPending(objects(["big", "small"]), { kind: "pod", namespace: "default", name: "pg-0" });
    expect(details(two)).toEqual(["data: PersistentVolume big is available here", "wal: PersistentVolume small is available here"]);
    expect(two.pods[0]!.summary!.feasibleNodes).toEqual(["w1"]);
  });
});

// kube-controller-manager's pod GC deletes pods bound to nodes that do not exist (pkg/controller/podgc/gc_controller.go
// gcOrphaned): such a pod waits for no kubelet and no scheduler; the bundle's other nodes say nothing about it
describe("a pod whose spec.nodeName names a node the bundle does not list", () => {
  const pinned = () => {
    const p = pod("pinned", { nodeName: "gone-node" });
    p.status = { phase: "Pending" };
    return p;
  };

  test("an error finding says the node is missing; no kubelet advice, no verdicts of the other nodes", () => {
    const r = explainPending(bundleOf([node("n1", { zone: "a" }), node("n2", { zone: "b" }), pinned()]), { kind: "pod", namespace: "default", name: "pinned" });
    const p = r.pods[0]!;
    expect(p.nodeMissing).toBe(true);
    expect(p.summary).toBeNull();
    expect(p.nodes).toEqual([]);
    expect(r.findings.map((f) => [f.id, f.severity])).toEqual([["pod-node-missing", "error"]]);
    expect(r.findings[0]!.title).toBe("Pod default/pinned is bound to node gone-node, which does not exist");
    expect(r.findings[0]!.detail).toContain("spec.nodeName was set when it was created, so no scheduler handled it");
    expect(r.findings[0]!.detail).toContain("gcOrphaned");
    expect(r.answer).toBe(
      "Pod default/pinned is bound to node gone-node (spec.nodeName), which is not among the bundle's nodes: no kubelet will run it, and no scheduler will place it elsewhere.",
    );
    const text = renderPendingText(r, { color: false });
    expect(text).not.toContain("waits for the kubelet");
    expect(text).not.toContain("nodes fit");
    expect(text).toContain("error: Pod default/pinned is bound to node gone-node, which does not exist");
  });

  test("bound by a scheduler (PodScheduled True), the node deleted since; its owner replaces it", () => {
    const p = pinned();
    p.status = { phase: "Pending", conditions: [{ type: "PodScheduled", status: "True" }] } as never;
    p.metadata.ownerReferences = [{ kind: "ReplicaSet", name: "web-5d8f", controller: true }];
    const r = explainPending(bundleOf([node("n1"), p]), { kind: "pod", namespace: "default", name: "pinned" });
    expect(r.findings[0]!.detail).toContain("a scheduler bound it to gone-node, which has been deleted since");
    expect(r.findings[0]!.suggestion).toContain("its ReplicaSet web-5d8f creates a replacement");
  });

  test("a pod on a listed node is still reported as scheduled; without Node objects nothing is said missing", () => {
    const on = explainPending(bundleOf([node("n1"), pod("web", { nodeName: "n1" })]), { kind: "pod", namespace: "default", name: "web" });
    expect(on.findings.map((f) => f.id)).toEqual(["pod-scheduled"]);
    const none = explainPending(bundleOf([pinned()]), { kind: "pod", namespace: "default", name: "pinned" });
    expect(none.pods[0]!.nodeMissing).toBeUndefined();
    expect(none.findings.map((f) => f.id)).not.toContain("pod-node-missing");
  });

  test("asked from its claim: the claim's pod is not 'Nothing is pending'", () => {
    const p = pod("pinned", { nodeName: "gone-node", claims: ["data"] });
    p.status = { phase: "Pending" };
    const r = explainPending(bundleOf([node("n1"), pv("pv-1", { claim: "default/data" }), pvc("data", { boundTo: "pv-1" }), p]), { kind: "pvc", namespace: "default", name: "data" });
    expect(r.answer).not.toContain("Nothing is pending");
    expect(r.answer).toContain("is bound to node gone-node (spec.nodeName), which is not among the bundle's nodes");
    expect(r.answer).toContain("Root cause: Pod default/pinned is bound to node gone-node, which does not exist.");
  });
});

// kube-scheduler v1.34.2+ no longer names the taint (kubernetes#134740, cherry-picked as #135023, CHANGELOG-1.34
// v1.34.2): with no event and no PodScheduled message, the computed message is the only one and must use those words
describe("the TaintToleration wording of a v1.34 cluster, without an event", () => {
  const cluster = (version: string) => {
    const sized = (name: string, o: Parameters<typeof node>[1]) => {
      const n = node(name, { ...o, version });
      (n.status as Record<string, unknown>).allocatable = { cpu: "2", memory: "8Gi", pods: "110" };
      return n;
    };
    const p = pod("p");
    p.spec!.containers![0]!.resources = { requests: { cpu: "3" } };
    return bundleOf([sized("cp1", { taints: [{ key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" }] }), sized("w1", {}), p]);
  };
  const ask = (version: string) => explainPending(cluster(version), { kind: "pod", namespace: "default", name: "p" }).pods[0]!;

  test.each([["v1.34.2"], ["v1.34.3"]])("%s: the taint is not named", (version) => {
    const p = ask(version);
    expect(p.summary!.message).toBe("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s).");
    expect(p.notes ?? []).toEqual([]);
  });

  test("v1.34.1: the taint is named", () => {
    expect(ask("v1.34.1").summary!.message).toBe("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }.");
  });

  test("v1.34 without a patch number: a note says the wording is undetermined, and what decides it", () => {
    const p = ask("v1.34");
    expect(p.summary!.message).toBe("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s).");
    expect(p.notes!.some((n) => n.includes("v1.34.0 and v1.34.1 name the taint") && n.includes("v1.34, has no patch number"))).toBe(true);
  });
});
