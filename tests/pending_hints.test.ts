import { describe, expect, test } from "vitest";
import { explainPending } from "../src/pending/explain.ts";
import type { Finding, PendingReport } from "../src/pending/report.ts";
import { azureBundle, bundleOf, event, node, pod, pv, pvc, storageClass, term } from "./fixtures/pending/objects.ts";

const ZONE = "topology.kubernetes.io/zone";
const PREEMPTION = " preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";

function podReport(objects: Parameters<typeof bundleOf>[0], name = "app-0"): PendingReport {
  return explainPending(bundleOf(objects), { kind: "pod", namespace: "default", name });
}

function ids(r: PendingReport): string[] {
  return r.findings.map((f) => f.id);
}

function finding(r: PendingReport, id: Finding["id"]): Finding {
  const f = r.findings.find((x) => x.id === id);
  if (!f) throw new Error(`no finding ${id} in ${JSON.stringify(ids(r))}`);
  return f;
}

const HINT_IDS = [
  "fault-domain-zone-values",
  "label-key-missing",
  "empty-zone-value",
  "volume-nodes-unusable",
  "volume-node-gone",
  "claims-in-different-zones",
  "pod-affinity-vs-volume",
  "immediate-binding-multizone",
  "allowed-topologies-exclude-all",
];

function hints(r: PendingReport): string[] {
  return ids(r).filter((i) => HINT_IDS.includes(i));
}

describe("fault-domain zone values (seed 000)", () => {
  test("the azure example's unzoned disk", () => {
    const r = explainPending(azureBundle(), { kind: "pvc", namespace: "default", name: "md" });
    expect(hints(r)).toEqual(["fault-domain-zone-values"]);
    const f = finding(r, "fault-domain-zone-values");
    expect(f.title).toBe(
      "PersistentVolume pvc-0a20ee9f-0c34-11e9-b302-000d3aa0aa40 requires failure-domain.beta.kubernetes.io/zone in [0], [1] or [2]: fault-domain numbers, while the nodes carry region-zone values",
    );
    expect(f.detail).toContain('StorageClass "default" has zoned: "false"');
    expect(f.evidence).toContain("Node label failure-domain.beta.kubernetes.io/zone=southeastasia-2 (k8s-02)");
  });

  test("not raised for the zoned disk pinned to southeastasia-1", () => {
    const r = explainPending(azureBundle(), { kind: "pvc", namespace: "default", name: "md-zoned" });
    expect(hints(r)).toEqual([]);
  });

  test("not raised when the nodes themselves carry fault-domain numbers (unzoned cluster)", () => {
    const b = azureBundle();
    b.objects.nodes.forEach((n, i) => (n.metadata.labels!["failure-domain.beta.kubernetes.io/zone"] = String(i)));
    const r = explainPending(b, { kind: "pvc", namespace: "default", name: "md" });
    expect(hints(r)).toEqual([]);
    expect(r.pods[0]!.summary!.feasibleNodes).toEqual(["k8s-01", "k8s-02", "k8s-03"]);
  });
});

describe("label key no node has, with the near miss", () => {
  const azureNodes = [
    node("aks-nodepool1-0", { zone: "eastus-1", region: "eastus" }),
    node("aks-nodepool1-1", { zone: "eastus-2", region: "eastus" }),
  ];
  const csi = { csi: { driver: "disk.csi.azure.com", volumeHandle: "/subscriptions/x/resourceGroups/rg/providers/Microsoft.Compute/disks/pvc-1", fsType: "ext4" } };

  test("CSI topology key topology.disk.csi.azure.com/zone missing on the nodes", () => {
    const r = podReport([
      ...azureNodes,
      storageClass("managed-csi", { provisioner: "disk.csi.azure.com", mode: "WaitForFirstConsumer" }),
      pvc("data", { class: "managed-csi", boundTo: "pvc-1" }),
      pv("pvc-1", { class: "managed-csi", claim: "default/data", source: csi, terms: [term(["topology.disk.csi.azure.com/zone", "In", "eastus-1"])] }),
      pod("app-0", { claims: ["data"] }),
    ]);
    expect(hints(r)).toEqual(["label-key-missing"]);
    const f = finding(r, "label-key-missing");
    expect(f.title).toBe("No node has label topology.disk.csi.azure.com/zone; the nodes carry failure-domain.beta.kubernetes.io/zone and topology.kubernetes.io/zone");
    expect(f.suggestion).toMatch(/^topology\.disk\.csi\.azure\.com\/zone is set on nodes by the disk\.csi\.azure\.com CSI node plugin/);
    expect(f.evidence).toContain('Node label topology.kubernetes.io/zone ("eastus-1", "eastus-2")');
    expect(r.pods[0]!.summary!.message).toBe("0/2 nodes are available: 2 node(s) didn't match PersistentVolume's node affinity.");
    expect(r.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "volume")!.detail).toBe("term 0: topology.disk.csi.azure.com/zone label absent");
  });

  test("beta key in the pod's nodeSelector while nodes carry only the GA key", () => {
    const r = podReport([
      node("n-a", { labels: { [ZONE]: "us-east-1a" } }),
      node("n-b", { labels: { [ZONE]: "us-east-1b" } }),
      pod("app-0", { nodeSelector: { "failure-domain.beta.kubernetes.io/zone": "us-east-1a" } }),
    ]);
    expect(hints(r)).toEqual(["label-key-missing"]);
    expect(finding(r, "label-key-missing").suggestion).toBe(
      "failure-domain.beta.kubernetes.io/* are the deprecated beta keys and topology.kubernetes.io/* their GA replacements; write the rule with the key the nodes carry (topology.kubernetes.io/zone).",
    );
    expect(r.pods[0]!.summary!.message).toBe("0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.");
  });

  test("not raised when some node has the key (a value mismatch is not a missing key)", () => {
    const r = podReport([node("n-a", { zone: "us-east-1a" }), pod("app-0", { nodeSelector: { [ZONE]: "us-east-1b" } })]);
    expect(hints(r)).toEqual([]);
  });
});

describe("empty zone value", () => {
  test("PV requiring an empty zone, and a node with an empty zone label", () => {
    const r = podReport([
      node("n-a", { zone: "us-east-1a" }),
      node("n-x", { labels: { [ZONE]: "" } }),
      storageClass("gp3"),
      pvc("data", { boundTo: "pv-1" }),
      pv("pv-1", { claim: "default/data", terms: [term([ZONE, "In", ""])] }),
      pod("app-0", { claims: ["data"] }),
    ]);
    // The pod fits n-x, so no scheduling hint (an empty zone is no zone: the cluster is not multi-zone).
    expect(hints(r)).toEqual(["empty-zone-value", "empty-zone-value"]);
    expect(r.pods[0]!.summary!.feasibleNodes).toEqual(["n-x"]);
    const [pvF, nodeF] = r.findings.filter((f) => f.id === "empty-zone-value");
    expect(pvF!.severity).toBe("error");
    expect(pvF!.evidence).toEqual(['PersistentVolume pv-1 term 0: topology.kubernetes.io/zone in [""] (values [""])']);
    expect(nodeF!.title).toBe("Node n-x has an empty topology.kubernetes.io/zone label");
    // The empty-labelled node is the only one the PV can use: In [""] matches a present, empty label.
    expect(r.claims[0]!.volume!.matchingNodes).toEqual(["n-x"]);
  });

  test("not raised for named zones", () => {
    const r = podReport([node("n-a", { zone: "us-east-1a" }), storageClass("gp3"), pvc("data", { boundTo: "pv-1" }), pv("pv-1", { claim: "default/data", terms: [term([ZONE, "In", "us-east-1a"])] }), pod("app-0", { claims: ["data"] })]);
    expect(hints(r)).toEqual([]);
    expect(r.pods[0]!.summary!.feasibleNodes).toEqual(["n-a"]);
  });
});

describe("PV pinned to a zone whose nodes are all cordoned / NotReady / tainted", () => {
  const objects = [
    node("n-a1", { zone: "us-east-1a", unschedulable: true, version: "v1.28.3" }),
    node("n-a2", {
      zone: "us-east-1a",
      ready: "False",
      version: "v1.28.3",
      taints: [{ key: "node.kubernetes.io/not-ready", effect: "NoSchedule" }, { key: "node.kubernetes.io/not-ready", effect: "NoExecute" }],
    }),
    node("n-b1", { zone: "us-east-1b", version: "v1.28.3" }),
    storageClass("gp3", { mode: "WaitForFirstConsumer" }),
    pvc("data", { boundTo: "pv-a" }),
    pv("pv-a", { claim: "default/data", terms: [term([ZONE, "In", "us-east-1a"])] }),
    pod("app-0", { claims: ["data"] }),
  ];

  test("hint, per-node reasons in the v1.28 wording, and agreement with the event", () => {
    const msg = "0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 1 node(s) had volume node affinity conflict, 1 node(s) were unschedulable.";
    const r = podReport([...objects, event("Pod", "default", "app-0", "FailedScheduling", msg + PREEMPTION)]);
    expect(hints(r)).toEqual(["volume-nodes-unusable"]);
    const f = finding(r, "volume-nodes-unusable");
    expect(f.title).toBe("Every node PersistentVolume pv-a can be used on is unavailable (zone us-east-1a)");
    expect(f.detail).toBe(
      "The volume's node affinity matches n-a1 and n-a2, and n-a1 is cordoned; n-a2 is NotReady (Ready=False).",
    );
    const p = r.pods[0]!;
    expect(p.summary!.message).toBe(msg);
    expect(p.nodes.map((n) => n.rejectedBy?.plugin)).toEqual(["NodeUnschedulable", "TaintToleration", "VolumeBinding"]);
    expect(p.reconciliation.status).toBe("agree");
  });

  test("not raised when one node of the zone is usable", () => {
    const r = podReport([...objects, node("n-a3", { zone: "us-east-1a", version: "v1.28.3" })]);
    expect(hints(r)).toEqual([]);
    expect(r.pods[0]!.summary!.feasibleNodes).toEqual(["n-a3"]);
  });

  test("a dedicated taint the pod does not tolerate is named", () => {
    const r = podReport([
      node("n-a1", { zone: "us-east-1a", taints: [{ key: "dedicated", value: "db", effect: "NoSchedule" }] }),
      node("n-b1", { zone: "us-east-1b" }),
      storageClass("gp3"),
      pvc("data", { boundTo: "pv-a" }),
      pv("pv-a", { claim: "default/data", terms: [term([ZONE, "In", "us-east-1a"])] }),
      pod("app-0", { claims: ["data"] }),
    ]);
    expect(finding(r, "volume-nodes-unusable").detail).toBe(
      "The volume's node affinity matches n-a1, and n-a1 has untolerated taint dedicated=db:NoSchedule.",
    );
    expect(r.pods[0]!.summary!.message).toBe(
      "0/2 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 1 node(s) had untolerated taint {dedicated: db}.",
    );
  });
});

describe("PV pinned to nodes or zones that are gone", () => {
  test("local PV of a deleted node", () => {
    const r = podReport([
      node("worker-1"),
      node("worker-2"),
      storageClass("local-storage", { provisioner: "kubernetes.io/no-provisioner", mode: "WaitForFirstConsumer" }),
      pvc("data", { class: "local-storage", boundTo: "local-pv-3" }),
      pv("local-pv-3", { class: "local-storage", claim: "default/data", source: { local: { path: "/mnt/disks/ssd1" } }, terms: [term(["kubernetes.io/hostname", "In", "worker-3"])] }),
      pod("app-0", { claims: ["data"] }),
    ]);
    expect(hints(r)).toEqual(["volume-node-gone"]);
    const f = finding(r, "volume-node-gone");
    expect(f.title).toBe("PersistentVolume local-pv-3 is pinned to node worker-3, which no longer exists");
    expect(f.detail).toBe(
      "Its node affinity requires kubernetes.io/hostname=worker-3 (a local volume, stored on that node); no node of the cluster carries that name, so pods using claim default/data can never be scheduled.",
    );
  });

  test.each([
    ["topology.topolvm.io/node", "topolvm.io"],
    ["openebs.io/nodename", "local.csi.openebs.io"],
    ["openebs.io/nodeid", "zfs.csi.openebs.io"],
  ])("a local-volume CSI PV (%s) of a deleted node", (key, driver) => {
    const r = podReport([
      node("worker-1", { labels: { [key]: "worker-1" } }),
      node("worker-2", { labels: { [key]: "worker-2" } }),
      storageClass("local", { provisioner: driver, mode: "WaitForFirstConsumer" }),
      pvc("data", { class: "local", boundTo: "pvc-3" }),
      pv("pvc-3", { class: "local", claim: "default/data", source: { csi: { driver, volumeHandle: "h" } }, terms: [term([key, "In", "worker-3"])] }),
      pod("app-0", { claims: ["data"] }),
    ]);
    expect(hints(r)).toEqual(["volume-node-gone"]);
    expect(finding(r, "volume-node-gone").detail).toMatch(new RegExp(`^Its node affinity requires ${key.replace(/\./g, "\\.")}=worker-3`));
  });

  test("a TopoLVM PV whose node exists but carries no topology.topolvm.io/node label: the node plugin is not running there", () => {
    const r = podReport([
      node("worker-1"),
      node("worker-2"),
      storageClass("topolvm-provisioner", { provisioner: "topolvm.io", mode: "WaitForFirstConsumer" }),
      pvc("data", { class: "topolvm-provisioner", boundTo: "pvc-1" }),
      pv("pvc-1", { class: "topolvm-provisioner", claim: "default/data", source: { csi: { driver: "topolvm.io", volumeHandle: "h" } }, terms: [term(["topology.topolvm.io/node", "In", "worker-1"])] }),
      pod("app-0", { claims: ["data"] }),
    ]);
    expect(hints(r)).toEqual(["label-key-missing"]);
    const f = finding(r, "label-key-missing");
    expect(f.title).toBe("No node has label topology.topolvm.io/node; the nodes carry kubernetes.io/hostname");
    expect(f.suggestion).toMatch(/^topology\.topolvm\.io\/node is set on nodes by the topolvm\.io \(TopoLVM, Red Hat LVMS\) CSI node plugin/);
  });

  test.each([
    ["topology.csi.vmware.com/k8s-zone", "csi.vsphere.vmware.com (vSphere)"],
    ["topology.rbd.csi.ceph.com/zone", "rbd.csi.ceph.com (Ceph RBD, from its --domainlabels)"],
    ["topology.cephfs.csi.ceph.com/zone", "cephfs.csi.ceph.com (CephFS, from its --domainlabels)"],
    ["topology.portworx.io/zone", "pxd.portworx.com (Portworx)"],
  ])("a zone key of a CSI driver (%s) the nodes lack: the GA zone label is the near miss", (key, driver) => {
    const r = podReport([
      node("n-a", { zone: "zone-a" }),
      node("n-b", { zone: "zone-b" }),
      pvc("data", { boundTo: "pv-1" }),
      pv("pv-1", { claim: "default/data", terms: [term([key, "In", "zone-a"])] }),
      pod("app-0", { claims: ["data"] }),
    ]);
    expect(hints(r)).toEqual(["label-key-missing"]);
    const f = finding(r, "label-key-missing");
    expect(f.title).toContain(`No node has label ${key}; the nodes carry`);
    expect(f.title).toContain("topology.kubernetes.io/zone");
    expect(f.suggestion!.startsWith(`${key} is set on nodes by the ${driver} CSI node plugin`)).toBe(true);
  });

  test("zone with no node left", () => {
    const r = podReport([
      node("n-a", { zone: "us-east-1a" }),
      node("n-b", { zone: "us-east-1b" }),
      storageClass("gp3"),
      pvc("data", { boundTo: "pv-c" }),
      pv("pv-c", { claim: "default/data", terms: [term([ZONE, "In", "us-east-1c"])] }),
      pod("app-0", { claims: ["data"] }),
    ]);
    expect(hints(r)).toEqual(["volume-node-gone"]);
    expect(finding(r, "volume-node-gone").title).toBe("PersistentVolume pv-c is pinned to zone us-east-1c, where no node exists");
  });
});

describe("claims bound in different zones", () => {
  const base = [
    node("n-a", { zone: "us-east-1a" }),
    node("n-b", { zone: "us-east-1b" }),
    storageClass("gp3", { mode: "WaitForFirstConsumer" }),
    pvc("data-a", { boundTo: "pv-a" }),
    pv("pv-a", { claim: "default/data-a", terms: [term([ZONE, "In", "us-east-1a"])] }),
  ];

  test("no node satisfies both volumes", () => {
    const r = podReport([
      ...base,
      pvc("data-b", { boundTo: "pv-b" }),
      pv("pv-b", { claim: "default/data-b", terms: [term([ZONE, "In", "us-east-1b"])] }),
      pod("app-0", { claims: ["data-a", "data-b"] }),
    ]);
    expect(hints(r)).toEqual(["claims-in-different-zones"]);
    expect(finding(r, "claims-in-different-zones").detail).toBe(
      "claim data-a → PersistentVolume pv-a usable on n-a (us-east-1a) (zone us-east-1a); claim data-b → PersistentVolume pv-b usable on n-b (us-east-1b) (zone us-east-1b). A pod runs on one node, which must satisfy every volume's node affinity.",
    );
    expect(r.pods[0]!.summary!.message).toBe("0/2 nodes are available: 2 node(s) didn't match PersistentVolume's node affinity.");
    expect(r.claims.map((c) => c.name)).toEqual(["data-a", "data-b"]);
  });

  test("same zone: no hint, the pod fits n-a", () => {
    const r = podReport([
      ...base,
      pvc("data-b", { boundTo: "pv-b" }),
      pv("pv-b", { claim: "default/data-b", terms: [term([ZONE, "In", "us-east-1a"])] }),
      pod("app-0", { claims: ["data-a", "data-b"] }),
    ]);
    expect(hints(r)).toEqual([]);
    expect(r.pods[0]!.summary!.feasibleNodes).toEqual(["n-a"]);
  });
});

describe("pod nodeSelector for one zone, PV in another; Immediate binding in a multi-zone cluster", () => {
  const objects = (mode: "Immediate" | "WaitForFirstConsumer", zones = ["us-east-1a", "us-east-1b"]) => [
    node("n-a", { zone: zones[0] }),
    node("n-b", { zone: zones[1] }),
    storageClass("gp3", { mode }),
    pvc("data", { boundTo: "pv-b" }),
    pv("pv-b", { claim: "default/data", terms: [term([ZONE, "In", "us-east-1b"])] }),
    pod("app-0", { claims: ["data"], nodeSelector: { [ZONE]: "us-east-1a" } }),
  ];

  test("both hints with Immediate binding", () => {
    const r = podReport(objects("Immediate"));
    expect(hints(r)).toEqual(["pod-affinity-vs-volume", "immediate-binding-multizone"]);
    expect(finding(r, "pod-affinity-vs-volume").title).toBe(
      "Pod default/app-0 is restricted to zone us-east-1a, but PersistentVolume pv-b is in zone us-east-1b",
    );
    expect(finding(r, "immediate-binding-multizone").suggestion).toMatch(/volumeBindingMode: WaitForFirstConsumer/);
    expect(r.pods[0]!.summary!.message).toBe(
      "0/2 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 1 node(s) didn't match Pod's node affinity/selector.",
    );
  });

  test("WaitForFirstConsumer: no Immediate hint", () => {
    expect(hints(podReport(objects("WaitForFirstConsumer")))).toEqual(["pod-affinity-vs-volume"]);
  });

  test("the same with required node affinity instead of nodeSelector", () => {
    const o = objects("Immediate");
    o[5] = pod("app-0", { claims: ["data"], affinity: { nodeSelectorTerms: [term([ZONE, "In", "us-east-1a"])] } });
    const r = podReport(o);
    expect(hints(r)).toEqual(["pod-affinity-vs-volume", "immediate-binding-multizone"]);
    expect(r.pods[0]!.nodes[1]!.checks.find((c) => c.rule === "nodeAffinity")!.detail).toBe('term 0: topology.kubernetes.io/zone "us-east-1b" is not in [us-east-1a]');
  });

  test("single-zone cluster: neither hint", () => {
    const r = podReport([
      node("n-a", { zone: "us-east-1b" }),
      storageClass("gp3"),
      pvc("data", { boundTo: "pv-b" }),
      pv("pv-b", { claim: "default/data", terms: [term([ZONE, "In", "us-east-1b"])] }),
      pod("app-0", { claims: ["data"], tolerations: [] }),
    ]);
    expect(hints(r)).toEqual([]);
  });
});

describe("allowedTopologies excluding every schedulable zone", () => {
  const objects = (allowed: string[]) => [
    node("n-a", { zone: "us-east-1a" }),
    node("n-b", { zone: "us-east-1b" }),
    storageClass("gp3-c", { mode: "WaitForFirstConsumer", allowedTopologies: [{ matchLabelExpressions: [{ key: ZONE, values: allowed }] }] }),
    pvc("data", { class: "gp3-c" }),
    pod("app-0", { claims: ["data"] }),
  ];

  test("raised, and every node reports a bind conflict", () => {
    const r = podReport(objects(["us-east-1c"]));
    expect(hints(r)).toEqual(["allowed-topologies-exclude-all"]);
    expect(finding(r, "allowed-topologies-exclude-all").detail).toBe(
      "It allows only topology.kubernetes.io/zone in [us-east-1c]; the schedulable nodes are n-a (topology.kubernetes.io/zone=us-east-1a) and n-b (topology.kubernetes.io/zone=us-east-1b). A claim of this class can be provisioned nowhere a pod can run.",
    );
    expect(r.pods[0]!.summary!.message).toBe("0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.");
    expect(r.claims[0]!.state.reason).toBe("WaitForFirstConsumer");
  });

  test("not raised when a schedulable node is allowed; the pod fits there", () => {
    const r = podReport(objects(["us-east-1a", "us-east-1c"]));
    expect(hints(r)).toEqual([]);
    expect(r.pods[0]!.summary!.feasibleNodes).toEqual(["n-a"]);
    expect(r.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "volume")!.detail).toBe("can be provisioned here by ebs.csi.aws.com");
  });
});
