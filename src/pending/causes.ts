/**
 * Root-cause hints for a Pending claim or pod, each raised only when the objects show it:
 * - `fault-domain-zone-values`: a PV requires zone values that look like fault domains ("0", "1", "2") while nodes
 *   carry region-zone values (Azure `zoned: "false"` disks, seed 000);
 * - `label-key-missing`: a required label key no node has, with the near miss the nodes do carry
 *   (failure-domain.beta.kubernetes.io/zone vs topology.kubernetes.io/zone, CSI keys such as
 *   topology.disk.csi.azure.com/zone, topology.ebs.csi.aws.com/zone, topology.gke.io/zone);
 * - `empty-zone-value`: a zone requirement or node zone label with an empty value;
 * - `volume-nodes-unusable`: every node a PV can be used on is cordoned, NotReady or tainted for the pod;
 * - `volume-node-gone`: a PV pinned to nodes or zones that no longer exist (local PVs of deleted nodes);
 * - `claims-in-different-zones`: a pod's claims are usable on disjoint node sets;
 * - `pod-affinity-vs-volume`: the pod's nodeSelector / required node affinity and a PV point to disjoint nodes;
 * - `immediate-binding-multizone`: `volumeBindingMode: Immediate` in a multi-zone cluster placed the volume where the
 *   pod cannot go;
 * - `allowed-topologies-exclude-all`: a StorageClass's allowedTopologies match no schedulable node.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { NodeSelector, NodeSelectorRequirement } from "../model/k8s.ts";
import { formatRequirement, matchTopologySelectorTerms } from "./node_selector.ts";
import { cmp, NO_PROVISIONER, NODE_KEYS, type PendingContext, REGION_KEYS, ZONE_KEYS } from "./context.ts";
import type { ClaimReport, Finding, NodeState, PodReport } from "./report.ts";

/** What the hints look at. */
export interface HintInput {
  ctx: PendingContext;
  claims: ClaimReport[];
  pods: PodReport[];
}

/** CSI topology keys and the driver (and product) whose node plugin sets them on the Node. */
export const CSI_TOPOLOGY_KEYS: Record<string, string> = {
  "topology.disk.csi.azure.com/zone": "disk.csi.azure.com",
  "topology.ebs.csi.aws.com/zone": "ebs.csi.aws.com",
  "topology.gke.io/zone": "pd.csi.storage.gke.io",
  "topology.cinder.csi.openstack.org/zone": "cinder.csi.openstack.org",
  "topology.csi.vmware.com/k8s-zone": "csi.vsphere.vmware.com (vSphere)",
  "topology.csi.vmware.com/k8s-region": "csi.vsphere.vmware.com (vSphere)",
  "topology.rbd.csi.ceph.com/zone": "rbd.csi.ceph.com (Ceph RBD, from its --domainlabels)",
  "topology.rbd.csi.ceph.com/region": "rbd.csi.ceph.com (Ceph RBD, from its --domainlabels)",
  "topology.cephfs.csi.ceph.com/zone": "cephfs.csi.ceph.com (CephFS, from its --domainlabels)",
  "topology.cephfs.csi.ceph.com/region": "cephfs.csi.ceph.com (CephFS, from its --domainlabels)",
  "topology.portworx.io/zone": "pxd.portworx.com (Portworx)",
  "topology.portworx.io/region": "pxd.portworx.com (Portworx)",
  "topology.topolvm.io/node": "topolvm.io (TopoLVM, Red Hat LVMS)",
  "topology.topolvm.cybozu.com/node": "topolvm.cybozu.com (TopoLVM before its rename to topolvm.io)",
  "openebs.io/nodename": "local.csi.openebs.io / zfs.csi.openebs.io (OpenEBS LocalPV-LVM, LocalPV-ZFS)",
  "openebs.io/nodeid": "zfs.csi.openebs.io (OpenEBS LocalPV-ZFS)",
};

const ZONE_SET = new Set<string>(ZONE_KEYS);
const REGION_SET = new Set<string>(REGION_KEYS);
const NODE_SET = new Set<string>(NODE_KEYS);

function isZoneKey(k: string): boolean {
  return ZONE_SET.has(k);
}

function listWords(items: string[], conjunction = "and"): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} ${conjunction} ${items[items.length - 1]}`;
}

function quoted(v: string): string {
  return JSON.stringify(v);
}

/** Requirements (matchExpressions) of a selector with their term index. */
function requirementsOf(sel: NodeSelector | null | undefined): { term: number; req: NodeSelectorRequirement }[] {
  const out: { term: number; req: NodeSelectorRequirement }[] = [];
  (sel?.nodeSelectorTerms ?? []).forEach((t, i) => {
    for (const r of t?.matchExpressions ?? []) out.push({ term: i, req: r });
  });
  return out;
}

/** The node label values present for a key: value → node names. */
function nodeValues(ctx: PendingContext, key: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const n of ctx.nodes) {
    const labels = n.metadata.labels ?? {};
    if (Object.prototype.hasOwnProperty.call(labels, key)) {
      const v = labels[key] as string;
      out.set(v, [...(out.get(v) ?? []), n.metadata.name]);
    }
  }
  return out;
}

function zonesOf(ctx: PendingContext, nodes: string[]): string[] {
  const z = new Set<string>();
  for (const n of ctx.nodeStates) if (nodes.includes(n.name) && n.zone !== null) z.add(n.zone);
  return [...z].sort(cmp);
}

function nodesDescribed(ctx: PendingContext, nodes: string[]): string {
  return nodes.map((n) => {
    const z = ctx.nodeStates.find((s) => s.name === n)?.zone;
    return z ? `${n} (${z})` : n;
  }).join(", ");
}

function volumesOf(claims: ClaimReport[]) {
  return claims.flatMap((c) => (c.volume && c.volume.found ? [{ claim: c, volume: c.volume }] : []));
}

function faultDomainValues(input: HintInput): Finding[] {
  const { ctx } = input;
  const out: Finding[] = [];
  if (ctx.nodes.length === 0) return out;
  for (const { claim, volume } of volumesOf(input.claims)) {
    const reqs = requirementsOf(volume.nodeAffinity).filter(({ req }) => isZoneKey(req.key) && req.operator === "In");
    const byKey = new Map<string, string[]>();
    for (const { req } of reqs) byKey.set(req.key, [...(byKey.get(req.key) ?? []), ...(req.values ?? [])]);
    for (const [key, values] of byKey) {
      if (values.length === 0 || !values.every((v) => /^[0-9]+$/.test(v))) continue;
      // Node values under the same key, else under any zone key.
      let nodeVals = nodeValues(ctx, key);
      if (nodeVals.size === 0) for (const k of ZONE_KEYS) if (nodeVals.size === 0) nodeVals = nodeValues(ctx, k);
      const named = [...nodeVals.keys()].filter((v) => v !== "");
      if (named.length === 0 || named.some((v) => /^[0-9]+$/.test(v))) continue;
      const uniq = [...new Set(values)];
      const sc = claim.storageClass;
      const azureUnzoned = !!sc && /azure-disk|disk\.csi\.azure\.com/.test(sc.provisioner) &&
        (sc.parameters["zoned"] ?? "").toLowerCase() === "false";
      const nodeList = [...nodeVals].sort((a, b) => cmp(a[0], b[0])).map(([v, ns]) => `${v} (${ns.join(", ")})`);
      out.push({
        id: "fault-domain-zone-values",
        severity: "error",
        title: `PersistentVolume ${volume.name} requires ${key} in ${listWords(uniq.map((v) => `[${v}]`), "or")}: fault-domain numbers, while the nodes carry region-zone values`,
        detail: `Its node affinity names zone values ${listWords(uniq.map(quoted), "or")}, which is how unzoned (availability-set) ` +
          `nodes are labelled with their fault domain; the nodes here are zoned and carry ${listWords(nodeList)}. ` +
          `No node can ever match, whatever its state.` +
          (azureUnzoned
            ? ` StorageClass ${quoted(sc!.name)} has zoned: "false": the Azure disk was created without an availability zone, and such a disk cannot be attached to zoned nodes.`
            : ""),
        evidence: [
          ...volume.terms.map((t, i) => `PersistentVolume ${volume.name} term ${i}: ${t}`),
          ...nodeList.map((n) => `Node label ${key}=${n}`),
          ...(azureUnzoned ? [`StorageClass ${sc!.name}: provisioner ${sc!.provisioner}, parameters.zoned "false"`] : []),
        ],
        suggestion: azureUnzoned
          ? `Provision from a StorageClass with zoned: "true" (or the CSI driver disk.csi.azure.com) so the disk lands in one of the nodes' zones; a PV's node affinity cannot be edited, so recreate the claim and copy the data.`
          : `Provision the volume in one of the nodes' zones (${listWords(named.sort(cmp))}); a PV's node affinity cannot be edited, so recreate it.`,
      });
    }
  }
  return out;
}

function nearMisses(missing: string, present: string[]): string[] {
  const tail = (k: string) => k.slice(k.lastIndexOf("/") + 1).toLowerCase();
  const family = (k: string) => (ZONE_SET.has(k) ? "zone" : REGION_SET.has(k) ? "region" : NODE_SET.has(k) ? "host" : "");
  return present.filter((k) =>
    k !== missing &&
    ((family(k) !== "" && family(k) === family(missing)) || tail(k) === tail(missing) || k.toLowerCase() === missing.toLowerCase())
  ).sort(cmp);
}

function labelKeyMissing(input: HintInput): Finding[] {
  const { ctx } = input;
  const out: Finding[] = [];
  if (ctx.nodes.length === 0) return out;
  const present = [...new Set(ctx.nodes.flatMap((n) => Object.keys(n.metadata.labels ?? {})))];
  const needs: { key: string; where: string; text: string }[] = [];
  for (const { volume } of volumesOf(input.claims)) {
    for (const { term, req } of requirementsOf(volume.nodeAffinity)) {
      if (req.operator === "NotIn" || req.operator === "DoesNotExist") continue;
      needs.push({ key: req.key, where: `PersistentVolume ${volume.name} term ${term}`, text: formatRequirement(req) });
    }
  }
  for (const pod of input.pods) {
    for (const [k, v] of Object.entries(pod.nodeSelector)) {
      needs.push({ key: k, where: `Pod ${pod.namespace}/${pod.name} nodeSelector`, text: `${k}=${v}` });
    }
    for (const { term, req } of requirementsOf(pod.requiredNodeAffinity)) {
      if (req.operator === "NotIn" || req.operator === "DoesNotExist") continue;
      needs.push({ key: req.key, where: `Pod ${pod.namespace}/${pod.name} required node affinity term ${term}`, text: formatRequirement(req) });
    }
  }
  const seen = new Set<string>();
  for (const need of needs) {
    if (present.includes(need.key) || seen.has(need.key + "|" + need.where)) continue;
    seen.add(need.key + "|" + need.where);
    const near = nearMisses(need.key, present);
    const nearText = near.map((k) => {
      const vals = [...nodeValues(ctx, k).keys()].sort(cmp);
      return `${k} (${vals.map(quoted).join(", ")})`;
    });
    const driver = CSI_TOPOLOGY_KEYS[need.key];
    const betaGa = (need.key.startsWith("failure-domain.beta.kubernetes.io/") && near.some((k) => k.startsWith("topology.kubernetes.io/"))) ||
      (need.key.startsWith("topology.kubernetes.io/") && near.some((k) => k.startsWith("failure-domain.beta.kubernetes.io/")));
    let suggestion: string;
    if (driver) {
      suggestion = `${need.key} is set on nodes by the ${driver} CSI node plugin: check that its node DaemonSet runs on every node and that each node's CSINode object lists the driver; or use a key the nodes carry${near.length ? ` (${near.join(", ")})` : ""}.`;
    } else if (betaGa) {
      suggestion = `failure-domain.beta.kubernetes.io/* are the deprecated beta keys and topology.kubernetes.io/* their GA replacements; write the rule with the key the nodes carry (${near.join(", ")}).`;
    } else if (near.length > 0) {
      suggestion = `Use the key the nodes carry (${near.join(", ")}), or label the nodes with ${need.key}.`;
    } else {
      suggestion = `Label the nodes that should host this with ${need.key}, or fix the rule.`;
    }
    out.push({
      id: "label-key-missing",
      severity: "error",
      title: `No node has label ${need.key}` + (near.length ? `; the nodes carry ${listWords(near)}` : ""),
      detail: `${need.where} requires ${need.text}, and none of the ${ctx.nodes.length} node(s) has the key ${need.key}` +
        (nearText.length ? `; the near miss ${nearText.length > 1 ? "keys are" : "key is"} ${listWords(nearText)}.` : "."),
      evidence: [`${need.where}: ${need.text}`, ...nearText.map((t) => `Node label ${t}`)],
      suggestion,
    });
  }
  return out;
}

function emptyZoneValue(input: HintInput): Finding[] {
  const { ctx } = input;
  const out: Finding[] = [];
  for (const { volume } of volumesOf(input.claims)) {
    for (const { term, req } of requirementsOf(volume.nodeAffinity)) {
      if (!isZoneKey(req.key) || !(req.values ?? []).includes("")) continue;
      out.push({
        id: "empty-zone-value",
        severity: "error",
        title: `PersistentVolume ${volume.name} requires an empty ${req.key} value`,
        detail: `Term ${term} requires ${formatRequirement(req)} with an empty value: the provisioner did not know the zone when it ` +
          `created the volume (a node without zone labels, or a cloud lookup that failed). Only a node whose ${req.key} label is ` +
          `present and empty can match.`,
        evidence: [`PersistentVolume ${volume.name} term ${term}: ${formatRequirement(req)} (values ${JSON.stringify(req.values)})`],
        suggestion: `Recreate the volume so its node affinity names a real zone, and check the labels of the node it was provisioned for.`,
      });
    }
  }
  for (const n of ctx.nodes) {
    const labels = n.metadata.labels ?? {};
    for (const k of ZONE_KEYS) {
      if (labels[k] === "") {
        out.push({
          id: "empty-zone-value",
          severity: "warning",
          title: `Node ${n.metadata.name} has an empty ${k} label`,
          detail: `The node carries ${k}="" : zone-aware provisioners and topology rules see no zone for it, and volumes provisioned ` +
            `for it may get an empty zone in their node affinity.`,
          evidence: [`Node ${n.metadata.name} label ${k}=""`],
          suggestion: `Fix the node's zone label (set by the cloud provider / cloud-controller-manager).`,
        });
      }
    }
  }
  return out;
}

/** Why a node cannot take a pod, apart from the volume: cordoned, NotReady, tainted (for the pod's tolerations). */
function nodeUnusableReasons(state: NodeState, pod: PodReport | undefined): string[] {
  const why: string[] = [];
  if (state.cordoned) why.push("is cordoned");
  if (state.ready !== "True") why.push(`is NotReady (Ready=${state.ready})`);
  // The taints the node lifecycle controller derives from cordon / readiness restate those facts: leave them out.
  const derived = (t: string) => /^node\.kubernetes\.io\/(unschedulable|not-ready|unreachable)[:=]/.test(t);
  if (pod) {
    const row = pod.nodes.find((r) => r.node === state.name);
    const t = row?.checks.find((c) => c.rule === "taints");
    const own = (t?.untoleratedTaints ?? []).filter((x) => !derived(x));
    if (own.length > 0) why.push(`has untolerated taint ${own.join(", ")}`);
    else if (t && !t.passed && why.length === 0) why.push(`has untolerated taint ${(t.untoleratedTaints ?? []).join(", ")}`);
  } else {
    const own = state.taints.filter((x) => !derived(x));
    if (own.length > 0) why.push(`has taint ${own.join(", ")}`);
  }
  return why;
}

function volumeNodesUnusable(input: HintInput, faultDomainVolumes: Set<string>): Finding[] {
  const { ctx } = input;
  const out: Finding[] = [];
  if (ctx.nodes.length === 0) return out;
  for (const { claim, volume } of volumesOf(input.claims)) {
    if (!volume.nodeAffinity) continue;
    const pod = input.pods.find((p) => p.claims.some((c) => c.claim === claim.name) && !p.nodeName);
    if (volume.matchingNodes.length > 0) {
      const reasons = volume.matchingNodes.map((n) => ({
        node: n,
        why: nodeUnusableReasons(ctx.nodeStates.find((s) => s.name === n) as NodeState, pod),
      }));
      if (reasons.every((r) => r.why.length > 0)) {
        const zones = zonesOf(ctx, volume.matchingNodes);
        out.push({
          id: "volume-nodes-unusable",
          severity: "error",
          title: `Every node PersistentVolume ${volume.name} can be used on is unavailable` +
            (zones.length ? ` (zone ${listWords(zones)})` : ""),
          detail: `The volume's node affinity matches ${listWords(volume.matchingNodes)}, and ` +
            reasons.map((r) => `${r.node} ${r.why.join(" and ")}`).join("; ") + ".",
          evidence: [
            ...volume.terms.map((t, i) => `PersistentVolume ${volume.name} term ${i}: ${t}`),
            ...reasons.map((r) => `Node ${r.node} ${r.why.join(" and ")}`),
          ],
          suggestion: `Bring a node of that ${zones.length ? "zone" : "set"} back (uncordon, fix readiness, remove the taint or tolerate it), or add a node there.`,
        });
      }
      continue;
    }
    if (faultDomainVolumes.has(volume.name)) continue;
    // Matches no node: are the named hosts or zones simply gone?
    const reqs = requirementsOf(volume.nodeAffinity).filter(({ req }) => req.operator === "In");
    // the hostname label, or a local-volume driver's node key (TopoLVM/LVMS, OpenEBS LocalPV), or metadata.name
    const hostReqs = reqs.filter(({ req }) => NODE_SET.has(req.key)).flatMap(({ req }) => (req.values ?? []).map((h) => ({ key: req.key, host: h })));
    const fieldHosts = (volume.nodeAffinity.nodeSelectorTerms ?? []).flatMap((t) =>
      (t?.matchFields ?? []).filter((f) => f.key === "metadata.name" && f.operator === "In").flatMap((f) => f.values ?? [])
    ).map((h) => ({ key: "metadata.name", host: h }));
    const pins = [...hostReqs, ...fieldHosts];
    const allHosts = [...new Set(pins.map((p) => p.host))];
    const exists = (key: string, h: string) =>
      ctx.nodes.some((n) => n.metadata.name === h || (key !== "metadata.name" && (n.metadata.labels?.[key] ?? (key === "kubernetes.io/hostname" ? n.metadata.name : undefined)) === h));
    const gonePins = pins.filter((p) => !exists(p.key, p.host));
    const goneHosts = [...new Set(gonePins.map((p) => p.host))];
    if (allHosts.length > 0 && goneHosts.length === allHosts.length) {
      out.push({
        id: "volume-node-gone",
        severity: "error",
        title: `PersistentVolume ${volume.name} is pinned to node ${listWords(goneHosts)}, which no longer exists`,
        detail: `Its node affinity requires ${listWords([...new Set(gonePins.map((p) => `${p.key}=${p.host}`))])}` +
          (volume.source ? ` (a ${volume.source} volume, stored on that node)` : "") +
          `; no node of the cluster carries that name, so pods using claim ${claim.namespace}/${claim.name} can never be scheduled.`,
        evidence: volume.terms.map((t, i) => `PersistentVolume ${volume.name} term ${i}: ${t}`),
        suggestion: `If the node is gone for good, the data on it is too: delete claim ${claim.name} and PersistentVolume ${volume.name} ` +
          `(with a StatefulSet, delete the claim and the pod so a new volume is provisioned).`,
      });
      continue;
    }
    const zoneReqs = reqs.filter(({ req }) => isZoneKey(req.key));
    const wantZones = [...new Set(zoneReqs.flatMap(({ req }) => req.values ?? []))].filter((z) => z !== "");
    const haveZones = new Set(ctx.nodeStates.map((s) => s.zone).filter((z): z is string => z !== null));
    if (wantZones.length > 0 && haveZones.size > 0 && wantZones.every((z) => !haveZones.has(z))) {
      out.push({
        id: "volume-node-gone",
        severity: "error",
        title: `PersistentVolume ${volume.name} is pinned to zone ${listWords(wantZones)}, where no node exists`,
        detail: `Its node affinity requires zone ${listWords(wantZones.map(quoted))}; the nodes are in ${listWords([...haveZones].sort(cmp).map(quoted))}. ` +
          `The nodes of that zone were removed (node pool scaled down or deleted).`,
        evidence: volume.terms.map((t, i) => `PersistentVolume ${volume.name} term ${i}: ${t}`),
        suggestion: `Add a node in zone ${listWords(wantZones)} (scale the node pool of that zone up), or restore the data into a volume in a zone that has nodes.`,
      });
    }
  }
  return out;
}

function claimsInDifferentZones(input: HintInput): Finding[] {
  const { ctx } = input;
  const out: Finding[] = [];
  if (ctx.nodes.length === 0) return out;
  for (const pod of input.pods) {
    if (pod.nodeName) continue;
    const vols = pod.claims.flatMap((u) => {
      const c = input.claims.find((x) => x.name === u.claim && x.namespace === pod.namespace);
      return c?.volume?.found && c.volume.nodeAffinity && c.volume.matchingNodes.length > 0 ? [{ claim: c, volume: c.volume }] : [];
    });
    if (vols.length < 2) continue;
    let common = new Set(vols[0]!.volume.matchingNodes);
    for (const v of vols.slice(1)) common = new Set(v.volume.matchingNodes.filter((n) => common.has(n)));
    if (common.size > 0) continue;
    const parts = vols.map((v) => {
      const zones = zonesOf(ctx, v.volume.matchingNodes);
      return `claim ${v.claim.name} → PersistentVolume ${v.volume.name} usable on ${nodesDescribed(ctx, v.volume.matchingNodes)}` +
        (zones.length ? ` (zone ${listWords(zones)})` : "");
    });
    out.push({
      id: "claims-in-different-zones",
      severity: "error",
      title: `Pod ${pod.namespace}/${pod.name} mounts claims whose volumes are in different zones: no node can satisfy both`,
      detail: `${parts.join("; ")}. A pod runs on one node, which must satisfy every volume's node affinity.`,
      evidence: vols.flatMap((v) => v.volume.terms.map((t, i) => `PersistentVolume ${v.volume.name} term ${i}: ${t}`)),
      suggestion: `Move the data so both volumes are in one zone, and provision claims used together from a StorageClass with ` +
        `volumeBindingMode: WaitForFirstConsumer so the scheduler picks one node for all of them.`,
    });
  }
  return out;
}

function podAffinityVsVolume(input: HintInput): Finding[] {
  const { ctx } = input;
  const out: Finding[] = [];
  if (ctx.nodes.length === 0) return out;
  for (const pod of input.pods) {
    if (pod.nodeName) continue;
    if (Object.keys(pod.nodeSelector).length === 0 && !pod.requiredNodeAffinity) continue;
    const podNodes = pod.nodes.filter((r) =>
      r.checks.filter((c) => c.rule === "nodeSelector" || c.rule === "nodeAffinity").every((c) => c.passed)
    ).map((r) => r.node);
    if (podNodes.length === 0) continue;
    for (const use of pod.claims) {
      const c = input.claims.find((x) => x.name === use.claim && x.namespace === pod.namespace);
      const v = c?.volume;
      if (!v?.found || !v.nodeAffinity || v.matchingNodes.length === 0) continue;
      if (v.matchingNodes.some((n) => podNodes.includes(n))) continue;
      const rules = [
        ...Object.entries(pod.nodeSelector).map(([k, val]) => `nodeSelector ${k}=${val}`),
        ...requirementsOf(pod.requiredNodeAffinity).map(({ term, req }) => `required node affinity term ${term}: ${formatRequirement(req)}`),
      ];
      const podZones = zonesOf(ctx, podNodes);
      const volZones = zonesOf(ctx, v.matchingNodes);
      out.push({
        id: "pod-affinity-vs-volume",
        severity: "error",
        title: `Pod ${pod.namespace}/${pod.name} is restricted to ${podZones.length ? `zone ${listWords(podZones)}` : "other nodes"}, ` +
          `but PersistentVolume ${v.name} is in ${volZones.length ? `zone ${listWords(volZones)}` : "a disjoint set of nodes"}`,
        detail: `The pod's own rules allow ${nodesDescribed(ctx, podNodes)}; claim ${use.claim}'s volume can only be used on ` +
          `${nodesDescribed(ctx, v.matchingNodes)}. No node is in both.`,
        evidence: [...rules.map((r) => `Pod ${pod.namespace}/${pod.name} ${r}`), ...v.terms.map((t, i) => `PersistentVolume ${v.name} term ${i}: ${t}`)],
        suggestion: `Align them: change the pod's nodeSelector/affinity to the volume's zone, or recreate the volume in the pod's zone ` +
          `(with volumeBindingMode: WaitForFirstConsumer the provisioner follows the pod).`,
      });
    }
  }
  return out;
}

function immediateBindingMultizone(input: HintInput): Finding[] {
  const { ctx } = input;
  const out: Finding[] = [];
  const zones = new Set(ctx.nodeStates.map((s) => s.zone).filter((z): z is string => z !== null && z !== ""));
  if (zones.size < 2) return out;
  for (const pod of input.pods) {
    if (pod.nodeName || !pod.summary || pod.summary.feasibleNodes.length > 0) continue;
    for (const use of pod.claims) {
      const c = input.claims.find((x) => x.name === use.claim && x.namespace === pod.namespace);
      const sc = c?.storageClass;
      const v = c?.volume;
      if (!c || !sc || sc.volumeBindingMode !== "Immediate" || sc.provisioner === NO_PROVISIONER) continue;
      if (!v?.found || !v.nodeAffinity || v.matchingNodes.length === 0 || v.matchingNodes.length === ctx.nodes.length) continue;
      // Nodes the pod could use but for this volume.
      const elsewhere = pod.nodes.filter((r) =>
        !v.matchingNodes.includes(r.node) &&
        r.checks.filter((k) => k.rule !== "volume" && k.rule !== "volumeZone" && k.rule !== "ready").every((k) => k.passed)
      ).map((r) => r.node);
      if (elsewhere.length === 0) continue;
      out.push({
        id: "immediate-binding-multizone",
        severity: "warning",
        title: `StorageClass ${sc.name} binds Immediately in a ${zones.size}-zone cluster: the volume was placed before the pod`,
        detail: `Claim ${c.name} was provisioned as soon as it was created, in ${listWords(zonesOf(ctx, v.matchingNodes))}, without ` +
          `knowing where pod ${pod.name} can run; the pod's other rules allow ${nodesDescribed(ctx, elsewhere)}, outside the volume's zone.`,
        evidence: [`StorageClass ${sc.name}: volumeBindingMode Immediate, provisioner ${sc.provisioner}`, ...v.terms.map((t, i) => `PersistentVolume ${v.name} term ${i}: ${t}`)],
        suggestion: `Use a StorageClass with volumeBindingMode: WaitForFirstConsumer, so the volume is provisioned in the zone of the node the scheduler picks.`,
      });
    }
  }
  return out;
}

function allowedTopologiesExcludeAll(input: HintInput): Finding[] {
  const { ctx } = input;
  const out: Finding[] = [];
  if (ctx.nodes.length === 0) return out;
  const done = new Set<string>();
  for (const c of input.claims) {
    const sc = c.storageClass;
    if (!sc || sc.allowedTopologies.length === 0 || done.has(sc.name)) continue;
    done.add(sc.name);
    if (c.state.status === "Bound" && c.volume?.found) continue;
    const schedulable = ctx.nodes.filter((n) => !n.spec?.unschedulable && ctx.nodeStates.find((s) => s.name === n.metadata.name)?.ready === "True");
    if (schedulable.some((n) => matchTopologySelectorTerms(sc.allowedTopologies, n.metadata.labels ?? {}))) continue;
    const allowed = sc.allowedTopologies.map((t) =>
      (t.matchLabelExpressions ?? []).map((e) => `${e.key} in [${e.values.join(", ")}]`).join(", ")
    );
    const keys = [...new Set(sc.allowedTopologies.flatMap((t) => (t.matchLabelExpressions ?? []).map((e) => e.key)))];
    const have = schedulable.map((n) => `${n.metadata.name} (${keys.map((k) => `${k}=${n.metadata.labels?.[k] ?? "<absent>"}`).join(", ")})`);
    out.push({
      id: "allowed-topologies-exclude-all",
      severity: "error",
      title: `StorageClass ${sc.name} allowedTopologies exclude every schedulable node`,
      detail: `It allows only ${listWords(allowed)}; the schedulable nodes are ${have.length ? listWords(have) : "none"}. ` +
        `A claim of this class can be provisioned nowhere a pod can run.`,
      evidence: [...allowed.map((a) => `StorageClass ${sc.name} allowedTopologies: ${a}`), ...have.map((h) => `Node ${h}`)],
      suggestion: `Add the zones of the schedulable nodes to allowedTopologies (it is immutable: create a new StorageClass), or bring nodes up in the allowed zones.`,
    });
  }
  return out;
}

/**
 * Computes every root-cause hint the data shows.
 * @param input the context and the claim and pod reports already computed.
 * @returns findings, in a fixed order: fault-domain values, missing keys, empty zones, unusable or gone nodes,
 *   claims in different zones, pod affinity vs volume, Immediate binding, allowedTopologies.
 */
export function pendingHints(input: HintInput): Finding[] {
  const fault = faultDomainValues(input);
  const faultVolumes = new Set(fault.flatMap((f) => {
    const m = /^PersistentVolume (\S+) /.exec(f.title);
    return m ? [m[1] as string] : [];
  }));
  return [
    ...fault,
    ...labelKeyMissing(input),
    ...emptyZoneValue(input),
    ...volumeNodesUnusable(input, faultVolumes),
    ...claimsInDifferentZones(input),
    ...podAffinityVsVolume(input),
    ...immediateBindingMultizone(input),
    ...allowedTopologiesExcludeAll(input),
  ];
}
