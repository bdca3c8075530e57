import { describe, expect, test } from "vitest";
import { explainPending } from "../src/pending/explain.ts";
import { volumeMismatches } from "../src/pending/claim.ts";
import type { ClaimReport } from "../src/pending/report.ts";
import { bundleOf, event, node, pod, pv, pvc, storageClass } from "./fixtures/pending/objects.ts";

const NODES = [node("ip-10-0-1-10", { zone: "us-east-1a", region: "us-east-1" }), node("ip-10-0-2-10", { zone: "us-east-1b", region: "us-east-1" })];

function claimOf(objects: Parameters<typeof bundleOf>[0], name = "data"): ClaimReport {
  return explainPending(bundleOf(objects), { kind: "pvc", namespace: "default", name }).claims[0]!;
}

describe("claim state and reason", () => {
  test("Bound", () => {
    const c = claimOf([...NODES, storageClass("gp3"), pvc("data", { boundTo: "pv-1" }), pv("pv-1", { claim: "default/data" })]);
    expect(c.state).toEqual({ status: "Bound", reason: "Bound", message: 'Bound to PersistentVolume "pv-1".' });
    expect(c.volume?.found).toBe(true);
  });

  test("no storageClassName and no default StorageClass", () => {
    const c = claimOf([
      ...NODES,
      storageClass("gp3"),
      pvc("data", { class: null }),
      event("PersistentVolumeClaim", "default", "data", "FailedBinding", "no persistent volumes available for this claim and no storage class is set", { type: "Normal" }),
    ]);
    expect(c.state.reason).toBe("NoStorageClass");
    expect(c.state.message).toBe(
      "Pending: no storageClassName and no default StorageClass, so nothing provisions it; only a PersistentVolume without a class can bind it, and none matches.",
    );
    expect(c.state.event?.message).toBe("no persistent volumes available for this claim and no storage class is set");
    expect(c.storageClass).toBeNull();
  });

  test("no storageClassName but a default class: WaitForFirstConsumer of the default", () => {
    const c = claimOf([...NODES, storageClass("gp3", { isDefault: true, mode: "WaitForFirstConsumer" }), pvc("data", { class: null })]);
    expect(c.state.reason).toBe("WaitForFirstConsumer");
    expect(c.storageClass?.name).toBe("gp3");
    expect(c.state.message).toBe(
      'Pending: StorageClass "gp3" has volumeBindingMode WaitForFirstConsumer, so the claim is provisioned only once a pod that uses it is scheduled; no pod in the bundle uses it.',
    );
  });

  test("StorageClass does not exist", () => {
    const c = claimOf([
      ...NODES,
      storageClass("gp3"),
      pvc("data", { class: "fast" }),
      event("PersistentVolumeClaim", "default", "data", "ProvisioningFailed", 'storageclass.storage.k8s.io "fast" not found'),
    ]);
    expect(c.state.reason).toBe("StorageClassNotFound");
    expect(c.state.message).toBe('Pending: StorageClass "fast" does not exist, so nothing provisions the claim.');
    expect(c.state.event?.message).toBe('storageclass.storage.k8s.io "fast" not found');
  });

  test("WaitForFirstConsumer with a pod that uses it", () => {
    const c = claimOf([
      ...NODES,
      storageClass("gp3", { mode: "WaitForFirstConsumer" }),
      pvc("data"),
      pod("web-0", { claims: ["data"] }),
      event("PersistentVolumeClaim", "default", "data", "WaitForFirstConsumer", "waiting for first consumer to be created before binding", { type: "Normal" }),
    ]);
    expect(c.state.reason).toBe("WaitForFirstConsumer");
    expect(c.state.message).toMatch(/1 pod\(s\) use it \(web-0\): see why they cannot be scheduled\.$/);
    expect(c.state.event?.reason).toBe("WaitForFirstConsumer");
  });

  test("provisioner failing: its last ProvisioningFailed event", () => {
    const msg = 'failed to provision volume with StorageClass "gp3": rpc error: code = Internal desc = Could not create volume "pvc-1": UnauthorizedOperation: You are not authorized to perform this operation.';
    const c = claimOf([
      ...NODES,
      storageClass("gp3"),
      pvc("data"),
      event("PersistentVolumeClaim", "default", "data", "ExternalProvisioning", "Waiting for a volume to be created either by the external provisioner 'ebs.csi.aws.com' or manually by the system administrator.", { type: "Normal", at: "2025-06-01T10:01:00Z" }),
      event("PersistentVolumeClaim", "default", "data", "ProvisioningFailed", msg, { at: "2025-06-01T10:02:00Z", component: "ebs.csi.aws.com_ebs-csi-controller-0" }),
    ]);
    expect(c.state.reason).toBe("ProvisioningFailed");
    expect(c.state.message).toBe(`Pending: provisioner "ebs.csi.aws.com" fails: ${msg}`);
    expect(c.state.event?.source).toBe("ebs.csi.aws.com_ebs-csi-controller-0");
    expect(c.events.map((e) => e.reason)).toEqual(["ExternalProvisioning", "ProvisioningFailed"]);
  });

  test("a later success clears an earlier failure: waiting for the provisioner", () => {
    const c = claimOf([
      ...NODES,
      storageClass("gp3"),
      pvc("data"),
      event("PersistentVolumeClaim", "default", "data", "ProvisioningFailed", "timeout", { at: "2025-06-01T10:02:00Z" }),
      event("PersistentVolumeClaim", "default", "data", "ProvisioningSucceeded", "Successfully provisioned volume pvc-1", { type: "Normal", at: "2025-06-01T10:03:00Z" }),
    ]);
    expect(c.state.reason).toBe("Provisioning");
    expect(c.state.message).toBe('Pending: waiting for provisioner "ebs.csi.aws.com"; it has reported nothing (is it running?).');
  });

  test("static binding: each mismatch named (class, capacity, access modes, volumeMode, selector, claimRef, phase)", () => {
    const c = claimOf([
      ...NODES,
      storageClass("local-storage", { provisioner: "kubernetes.io/no-provisioner" }),
      pvc("data", { class: "local-storage", size: "100Gi", modes: ["ReadWriteMany"], selector: { matchLabels: { tier: "db" } } }),
      pv("pv-small", { class: "local-storage", size: "50Gi", modes: ["ReadWriteMany"], labels: { tier: "db" } }),
      pv("pv-class", { class: "standard", size: "100Gi", modes: ["ReadWriteMany"], labels: { tier: "db" } }),
      pv("pv-rwo", { class: "local-storage", size: "200Gi", labels: { tier: "db" } }),
      pv("pv-block", { class: "local-storage", size: "100Gi", modes: ["ReadWriteMany"], volumeMode: "Block", labels: { tier: "db" } }),
      pv("pv-label", { class: "local-storage", size: "100Gi", modes: ["ReadWriteMany"], labels: { tier: "web" } }),
      pv("pv-released", { class: "local-storage", size: "100Gi", modes: ["ReadWriteMany"], labels: { tier: "db" }, claim: "default/old", phase: "Released" }),
      pv("pv-bound-elsewhere", { class: "local-storage", size: "100Gi", modes: ["ReadWriteMany"], claim: "other/data" }),
    ]);
    expect(c.state.reason).toBe("NoMatchingVolume");
    expect(c.state.message).toBe('Pending: StorageClass "local-storage" uses kubernetes.io/no-provisioner (static binding only) and no PersistentVolume matches.');
    const byName = Object.fromEntries(c.staticCandidates.map((s) => [s.volume, s.mismatches]));
    expect(Object.keys(byName).sort()).toEqual(["pv-block", "pv-class", "pv-label", "pv-released", "pv-rwo", "pv-small"]);
    expect(byName["pv-small"]).toEqual([{ field: "capacity", want: ">= 100Gi", got: "50Gi" }]);
    expect(byName["pv-class"]).toEqual([{ field: "storageClassName", want: '"local-storage"', got: '"standard"' }]);
    expect(byName["pv-rwo"]).toEqual([{ field: "accessModes", want: "[ReadWriteMany]", got: "[ReadWriteOnce]" }]);
    expect(byName["pv-block"]).toEqual([{ field: "volumeMode", want: "Filesystem", got: "Block" }]);
    expect(byName["pv-label"]).toEqual([{ field: "selector", want: "tier=db", got: "tier=web" }]);
    expect(byName["pv-released"]).toEqual([
      { field: "claimRef", want: "unclaimed or default/data", got: "default/old" },
      { field: "phase", want: "Available", got: "Released" },
    ]);
  });

  test("explicit empty class: static binding only", () => {
    const c = claimOf([...NODES, pvc("data", { class: "" }), pv("pv-1", { class: "", size: "5Gi" })]);
    expect(c.state.reason).toBe("NoMatchingVolume");
    expect(c.staticCandidates).toEqual([{ volume: "pv-1", mismatches: [{ field: "capacity", want: ">= 10Gi", got: "5Gi" }] }]);
  });

  test("pre-bound to a PV that does not exist", () => {
    const c = claimOf([...NODES, storageClass("gp3"), pvc("data", { volumeName: "pv-gone" })]);
    expect(c.state).toMatchObject({ status: "Pending", reason: "VolumeMissing" });
    expect(c.state.message).toBe('Pending: pre-bound to PersistentVolume "pv-gone" (spec.volumeName), which does not exist.');
  });

  test("pre-bound to a PV that does not satisfy it", () => {
    const c = claimOf([...NODES, storageClass("gp3"), pvc("data", { volumeName: "pv-1", size: "20Gi" }), pv("pv-1", { size: "10Gi" })]);
    expect(c.state.message).toBe('Pending: pre-bound to PersistentVolume "pv-1" (spec.volumeName), which does not satisfy it: capacity wants >= 20Gi, has 10Gi.');
  });

  test("pre-bound pairs are bound as the PV controller binds them: no selector, phase or class filter for a volume pre-bound to the claim", () => {
    // spec.volumeName → an unclaimed PV: checkVolumeSatisfyClaim only (no selector); a PV whose claimRef names the claim:
    // FindMatchingVolume takes it before the phase, selector and class filters
    const named = claimOf([...NODES, storageClass("gp3"), pvc("data", { volumeName: "nfs-data", selector: { matchLabels: { tier: "gold" } } }), pv("nfs-data", { labels: { tier: "silver" } })]);
    expect(named.state).toMatchObject({ status: "Pending", reason: "Binding" });
    expect(named.state.message).toBe('Pending: pre-bound to PersistentVolume "nfs-data" (spec.volumeName); the PV controller has not completed the binding yet.');
    const byRef = claimOf([...NODES, pvc("logs", { class: "" }), pv("logs-pv", { class: "manual", claim: "default/logs", phase: "Available" })], "logs");
    expect(byRef.state.reason).toBe("Binding");
    expect(byRef.state.message).toContain('PersistentVolume "logs-pv" matches it, so the PV controller binds them');
    // the selector still filters volumes that are not pre-bound
    const other = claimOf([...NODES, pvc("logs", { class: "", selector: { matchLabels: { tier: "gold" } } }), pv("free", { class: "", labels: { tier: "silver" } })], "logs");
    expect(other.state.reason).toBe("NoMatchingVolume");
  });

  test("Lost", () => {
    const c = claimOf([...NODES, storageClass("gp3"), pvc("data", { boundTo: "pv-1", phase: "Lost" })]);
    expect(c.state.status).toBe("Lost");
    // syncBoundClaim binds a Lost claim again once its PersistentVolume exists unclaimed: recreating it recovers the claim
    expect(c.state.message).toMatch(/^Lost: its PersistentVolume "pv-1" no longer exists\. The PV controller binds the claim again when a PersistentVolume of that name exists/);
  });

  test("Lost with its PersistentVolume back, unclaimed: bound again at the next sync; claimed by another: says by whom", () => {
    const back = claimOf([...NODES, storageClass("gp3"), pvc("data", { boundTo: "pv-1", phase: "Lost" }), pv("pv-1")]);
    expect(back.state.message).toMatch(/^Lost, but its PersistentVolume "pv-1" exists unclaimed: the PV controller binds them again/);
    const taken = claimOf([...NODES, storageClass("gp3"), pvc("data", { boundTo: "pv-1", phase: "Lost" }), pv("pv-1", { claim: "default/other" })]);
    expect(taken.state.message).toMatch(/^Lost: its PersistentVolume "pv-1" is bound to another claim \(default\/other/);
  });

  test("an event of an earlier claim of the same name (another uid) is not this claim's", () => {
    const claim = pvc("data", { class: "gp3" });
    const old = event("PersistentVolumeClaim", "default", "data", "ProvisioningFailed", 'storageclass.storage.k8s.io "fast" not found');
    old.involvedObject!.uid = "11111111-old";
    const mine = event("PersistentVolumeClaim", "default", "data", "ExternalProvisioning", "Waiting for a volume to be created either by the external provisioner 'ebs.csi.aws.com' or manually by the system administrator.", { type: "Normal", at: "2025-06-01T10:06:00Z" });
    mine.involvedObject!.uid = claim.metadata.uid;
    const c = claimOf([...NODES, storageClass("gp3", { provisioner: "ebs.csi.aws.com" }), claim, old, mine]);
    expect(c.state.message).not.toContain("not found");
    expect(c.state.message).toContain("waiting for provisioner");
  });

  test("bound to a PV that is gone", () => {
    const c = claimOf([...NODES, storageClass("gp3"), pvc("data", { boundTo: "pv-1" }), pv("pv-other")]);
    expect(c.state).toMatchObject({ status: "Bound", reason: "VolumeMissing" });
    expect(c.state.message).toBe('Bound to PersistentVolume "pv-1", which is not in the bundle: it was deleted, so pods using the claim cannot be scheduled.');
  });

  test("bound, but the bundle holds no PVs at all: says what to collect", () => {
    const c = claimOf([...NODES, storageClass("gp3"), pvc("data", { boundTo: "pv-1" })]);
    expect(c.state.message).toMatch(/listing them needs "list persistentvolumes" at cluster scope/);
  });
});

describe("helpers", () => {
  test("volumeMismatches compares capacities as the PV controller does: Value(), rounded up to whole bytes", () => {
    // checkVolumeSatisfyClaim: volumeQty.Value() < requestedQty.Value(); 1.2 and 1.5 bytes are both 2
    // (a YAML bundle may carry a number: `storage: 10`)
    const want = (size: string | number) => pvc("data", { size: size as string });
    const have = (size: string | number) => pv("pv-1", { size: size as string });
    expect(volumeMismatches(want("1.5"), have("1.2"))).toEqual([]);
    expect(volumeMismatches(want("2.5"), have("2"))).toEqual([{ field: "capacity", want: ">= 2.5", got: "2" }]);
    expect(volumeMismatches(want(10), have("10"))).toEqual([]);
    expect(volumeMismatches(want("1Gi"), have(1_000_000_000)).map((m) => m.field)).toEqual(["capacity"]);
  });

  test("volumeMismatches: a matching Available PV has none; pre-bound PV skips the phase check", () => {
    expect(volumeMismatches(pvc("data"), pv("pv-1"))).toEqual([]);
    expect(volumeMismatches(pvc("data"), pv("pv-2", { claim: "default/data", phase: "Released" }))).toEqual([]);
    expect(volumeMismatches(pvc("data", { size: "1Gi" }), pv("pv-3", { size: "1024Mi" }))).toEqual([]);
  });
});
