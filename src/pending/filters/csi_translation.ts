/**
 * The node affinity kube-scheduler checks for a bound in-tree PersistentVolume on a node where its plugin is migrated
 * to CSI: VolumeBinding (volumebinding/binder.go checkBoundClaims → tryTranslatePVToCSI) translates the PV with
 * k8s.io/csi-translation-lib first when the node's CSINode lists the in-tree plugin in its
 * `storage.alpha.kubernetes.io/migrated-plugins` annotation (isPluginMigratedToCSIOnNode), and the translation
 * (translateTopologyFromInTreeToCSI) rewrites the zone: the zone key of the PV's node affinity — the GA
 * `topology.kubernetes.io/zone`, else the beta `failure-domain.beta.kubernetes.io/zone` — becomes the CSI driver's own
 * key (`topology.ebs.csi.aws.com/zone`, …), or, with no zone in the node affinity, the PV's zone label (values split on
 * `__`) is added under that key to every term; a beta region key becomes the GA one. The node must then carry the
 * driver's key, which its CSI node plugin registers: a node without the driver running fails with "node(s) had volume
 * node affinity conflict" although its zone label matches.
 *
 * For the in-tree sources whose translation maps topology so: awsElasticBlockStore, gcePersistentDisk, azureDisk,
 * cinder (csi-translation-lib plugins/*.go, the *TopologyKey constants).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { CSINode, NodeSelector, PersistentVolume } from "../../model/k8s.ts";
import { ANN_MIGRATED_PLUGINS } from "./volume_limits.ts";

const GA_ZONE = "topology.kubernetes.io/zone";
const BETA_ZONE = "failure-domain.beta.kubernetes.io/zone";
const GA_REGION = "topology.kubernetes.io/region";
const BETA_REGION = "failure-domain.beta.kubernetes.io/region";
/** Separator of several zones in a PV's zone label (csi-translation-lib labelMultiZoneDelimiter). */
const MULTI_ZONE = "__";

/** In-tree source → its plugin name and the CSI driver's zone key (csi-translation-lib plugins). */
const TRANSLATED: Record<string, { plugin: string; key: string }> = {
  awsElasticBlockStore: { plugin: "kubernetes.io/aws-ebs", key: "topology.ebs.csi.aws.com/zone" },
  gcePersistentDisk: { plugin: "kubernetes.io/gce-pd", key: "topology.gke.io/zone" },
  azureDisk: { plugin: "kubernetes.io/azure-disk", key: "topology.disk.csi.azure.com/zone" },
  cinder: { plugin: "kubernetes.io/cinder", key: "topology.cinder.csi.openstack.org/zone" },
};

/** The in-tree source translated on this node, with the node affinity the scheduler checks. */
export interface TranslatedAffinity {
  /** The in-tree plugin, e.g. `kubernetes.io/aws-ebs`. */
  plugin: string;
  /** The CSI driver's zone key the zone is checked as. */
  key: string;
  /** The translated required node affinity (undefined: the PV has neither zone affinity nor zone label). */
  required?: NodeSelector;
}

const hasKey = (sel: NodeSelector | undefined, key: string) =>
  (sel?.nodeSelectorTerms ?? []).some((t) => (t.matchExpressions ?? []).some((r) => r.key === key));

/**
 * The translation of `pv` on a node whose CSINode is `csiNode`, or `undefined` when the scheduler checks the PV as it
 * is (not one of the sources above, or the plugin not migrated on that node, or no CSINode).
 * @param pv the bound PersistentVolume.
 * @param csiNode the node's CSINode, when the bundle holds it.
 */
export function csiTranslatedAffinity(pv: PersistentVolume, csiNode: CSINode | undefined): TranslatedAffinity | undefined {
  const spec = (pv.spec ?? {}) as Record<string, unknown>;
  const source = Object.keys(TRANSLATED).find((s) => spec[s] !== undefined && spec[s] !== null);
  if (!source) return undefined;
  const { plugin, key } = TRANSLATED[source]!;
  // isPluginMigratedToCSIOnNode: the annotation's comma-separated names, as written (no trimming)
  const migrated = (csiNode?.metadata.annotations?.[ANN_MIGRATED_PLUGINS] ?? "").split(",");
  if (!csiNode || !migrated.includes(plugin)) return undefined;
  const original = pv.spec?.nodeAffinity?.required;
  const labels = pv.metadata.labels ?? {};
  // getTopologyLabel: the zone key the node affinity uses (beta over GA), else the labels', else GA
  const zoneLabel = hasKey(original, BETA_ZONE) ? BETA_ZONE : hasKey(original, GA_ZONE) ? GA_ZONE : labels[GA_ZONE] !== undefined ? GA_ZONE : labels[BETA_ZONE] !== undefined ? BETA_ZONE : GA_ZONE;
  let terms = structuredClone(original?.nodeSelectorTerms ?? []);
  if (hasKey(original, zoneLabel)) {
    // replaceTopology
    terms = terms.map((t) => ({ ...t, matchExpressions: (t.matchExpressions ?? []).map((r) => (r.key === zoneLabel ? { ...r, key } : r)) }));
  } else if (labels[zoneLabel] !== undefined) {
    // addTopology: to every term, or to a new one
    const zones = labels[zoneLabel]!.split(MULTI_ZONE);
    if (terms.length === 0) terms = [{ matchExpressions: [] }];
    terms = terms.map((t) => ({ ...t, matchExpressions: [...(t.matchExpressions ?? []), { key, operator: "In", values: zones }] }));
  }
  // a beta region in the node affinity becomes the GA one
  terms = terms.map((t) => ({ ...t, matchExpressions: (t.matchExpressions ?? []).map((r) => (r.key === BETA_REGION ? { ...r, key: GA_REGION } : r)) }));
  return terms.length > 0 ? { plugin, key, required: { nodeSelectorTerms: terms } } : { plugin, key };
}
