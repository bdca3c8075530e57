// VolumeBinding checks a bound in-tree PersistentVolume on a node where its plugin is migrated to CSI as
// csi-translation-lib rewrites it (volumebinding/binder.go checkBoundClaims → tryTranslatePVToCSI;
// translateTopologyFromInTreeToCSI): the zone becomes the CSI driver's key, which a node carries only where the driver's
// node plugin registered it. Three nodes in zone us-east-1a: n1 with the EBS CSI driver's label, n2 without it, both
// with aws-ebs migrated in their CSINode; n3 without the annotation (the PV is checked as it is).
import { describe, expect, it } from "vitest";
import { explainPending } from "../src/pending/explain.ts";
import { csiTranslatedAffinity } from "../src/pending/filters/csi_translation.ts";
import type { CSINode } from "../src/model/k8s.ts";
import { bundleOf, node, pod, pv, pvc, term } from "./fixtures/pending/objects.ts";

const ZONE = "topology.kubernetes.io/zone";
const EBS_ZONE = "topology.ebs.csi.aws.com/zone";
const csiNode = (name: string, migrated: string | undefined): CSINode => ({
  apiVersion: "storage.k8s.io/v1",
  kind: "CSINode",
  metadata: { name, ...(migrated !== undefined ? { annotations: { "storage.alpha.kubernetes.io/migrated-plugins": migrated } } : {}) },
  spec: { drivers: [] },
});
const ebs = (o: { terms?: boolean; labels?: Record<string, string> }) =>
  pv("pv-ebs", { claim: "default/data", source: { awsElasticBlockStore: { volumeID: "vol-1", fsType: "ext4" } }, ...(o.terms ? { terms: [term([ZONE, "In", "us-east-1a"])] } : {}), ...(o.labels ? { labels: o.labels } : {}) });

function run(volume: ReturnType<typeof pv>) {
  const b = bundleOf([
    node("n1", { zone: "us-east-1a", labels: { [EBS_ZONE]: "us-east-1a" } }),
    node("n2", { zone: "us-east-1a" }),
    node("n3", { zone: "us-east-1a" }),
    pvc("data", { boundTo: "pv-ebs" }),
    volume,
    pod("app-0", { claims: ["data"] }),
  ]);
  b.objects.csiNodes.push(csiNode("n1", "kubernetes.io/aws-ebs,kubernetes.io/gce-pd"), csiNode("n2", "kubernetes.io/aws-ebs"), csiNode("n3", undefined));
  const r = explainPending(b, { kind: "pod", namespace: "default", name: "app-0" }).pods[0]!;
  return Object.fromEntries(r.nodes.map((n) => [n.node, n.fits]));
}

describe("an in-tree EBS volume on nodes where aws-ebs is migrated to CSI", () => {
  it("node affinity by the GA zone key: checked as topology.ebs.csi.aws.com/zone where migrated", () => {
    expect(run(ebs({ terms: true }))).toEqual({ n1: true, n2: false, n3: true });
  });
  it("no node affinity, a zone label only: the label's zones are added under the CSI key", () => {
    expect(run(ebs({ labels: { [ZONE]: "us-east-1a" } }))).toEqual({ n1: true, n2: false, n3: true });
  });
  it("the check names the translation", () => {
    const t = csiTranslatedAffinity(ebs({ labels: { "failure-domain.beta.kubernetes.io/zone": "us-east-1a__us-east-1b" } }), csiNode("n1", "kubernetes.io/aws-ebs"));
    expect(t).toEqual({ plugin: "kubernetes.io/aws-ebs", key: EBS_ZONE, required: { nodeSelectorTerms: [{ matchExpressions: [{ key: EBS_ZONE, operator: "In", values: ["us-east-1a", "us-east-1b"] }] }] } });
    expect(csiTranslatedAffinity(ebs({ terms: true }), csiNode("n3", undefined))).toBeUndefined();
    expect(csiTranslatedAffinity(pv("csi", {}), csiNode("n1", "kubernetes.io/aws-ebs"))).toBeUndefined();
  });
});
