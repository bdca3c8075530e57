/**
 * The findings of the Pending question that the claims, the pod's ResourceClaims and the bundle's Node list show: a
 * PersistentVolumeClaim missing (or not yet created by kube-controller-manager's ephemeral volume controller), bound
 * to a PersistentVolume not there, without a (default) StorageClass, failing to provision, waiting for a consumer that
 * bypasses the scheduler with spec.nodeName, without a matching PersistentVolume, naming a VolumeAttributesClass not
 * found; a DeviceClass or ResourceClaim DynamicResources waits for (plugins/dynamicresources/dynamicresources.go
 * PreEnqueue, PreFilter, `foreachPodResourceClaim`); no Node objects at all; a pod bound to a node that does not exist
 * (pkg/controller/podgc/gc_controller.go `gcOrphaned`). Each says its evidence and what to do.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Pod } from "../model/k8s.ts";
import { shellWord } from "../model/shell_word.ts";
import { ANN_SELECTED_NODE, cmp, getClaim, NO_PROVISIONER, type PendingContext, podsUsingClaim } from "./context.ts";
import type { ClaimReport, Finding, PodReport } from "./report.ts";
import { GANG_PERMIT_TIMEOUT, gangSchedulingFinding } from "./gang.ts";
import { podGroupFinding } from "./pod_group.ts";

/**
 * DynamicResources' PreFilter when a claim's request names a DeviceClass that does not exist
 * (plugins/dynamicresources/dynamicresources.go: `request %s: device class %s does not exist`): the pod waits in the
 * unschedulable queue until that DeviceClass is created. The bundle holds no DeviceClasses: the event says it.
 */
export function deviceClassMissing(p: PodReport): Finding | undefined {
  const msg = p.lastFailedScheduling?.message ?? "";
  const m = /request (\S+): device class (\S+) does not exist/.exec(msg);
  if (!m) return undefined;
  return {
    id: "device-class-missing",
    severity: "error",
    title: `DeviceClass ${m[2]} does not exist (request ${m[1]} of a ResourceClaim of pod ${p.namespace}/${p.name})`,
    detail: `The scheduler's DynamicResources plugin rejects the pod on every node until a DeviceClass of that name exists; it retries when one is created.`,
    evidence: [`Event FailedScheduling: ${msg}`],
    suggestion: `Install the DRA driver that provides DeviceClass ${m[2]}, or fix deviceClassName in the claim (or its template); kubectl get deviceclasses lists those that exist.`,
  };
}

/**
 * A ResourceClaim the pod names (spec.resourceClaims[].resourceClaimName, or the name its template's claim got in
 * status.resourceClaimStatuses) that the bundle does not hold: DynamicResources holds the pod on every node until it
 * exists (PreEnqueue, then PreFilter: dynamicresources.go foreachPodResourceClaim). When reading it was forbidden the
 * claim's state is unknown, and the finding says that instead.
 */
export function resourceClaimsMissing(ctx: PendingContext, p: PodReport): Finding[] {
  return (p.resourceClaims ?? []).filter((c) => c.state === "not-found").map((c): Finding => {
    const name = c.claimName ?? "";
    const get = `kubectl get resourceclaim -n ${shellWord(p.namespace)} ${shellWord(name)}`;
    const forbidden = ctx.bundle.warnings.find((w) => w.startsWith("get resourceclaims is forbidden") && w.endsWith(`ResourceClaim ${name} is unknown`));
    if (forbidden) {
      return {
        id: "resource-claim-unknown",
        severity: "warning",
        title: `ResourceClaim ${p.namespace}/${name} (claim ${c.podClaimName} of pod ${p.namespace}/${p.name}) could not be read`,
        detail: `Whether it exists decides whether DynamicResources holds the pod on every node (a missing claim keeps the scheduler from trying the pod at all); the bundle cannot tell.`,
        evidence: [forbidden],
        suggestion: `${get}, or grant "get" on resourceclaims (resource.k8s.io) and run again.`,
      };
    }
    return {
      id: "resource-claim-missing",
      severity: "error",
      title: `ResourceClaim ${p.namespace}/${name} does not exist (claim ${c.podClaimName} of pod ${p.namespace}/${p.name})`,
      detail: `DynamicResources holds the pod until it exists: its PreEnqueue keeps the scheduler from trying the pod, and its PreFilter rejects every node if the claim disappears during an attempt. ` +
        (c.template ? `The pod's status names it as the claim made from template ${c.template}: the ResourceClaim controller of kube-controller-manager created it, and it was deleted since.` : `The pod names it in spec.resourceClaims[].resourceClaimName: nothing creates it but you.`),
      evidence: [`Pod ${p.namespace}/${p.name}: resource claim ${c.podClaimName} → ResourceClaim ${name}`],
      suggestion: c.template
        ? `${get} to confirm it is gone (and not just left out of the bundle); a pod whose generated claim was deleted does not get a new one: recreate the pod.`
        : `${get} to confirm it is gone (and not just left out of the bundle); create it, or fix resourceClaimName in the pod (immutable: recreate the pod).`,
    };
  });
}

/**
 * The findings of each claim's state ({@link ClaimReport}`.state.reason`: NotFound, VolumeMissing, NoStorageClass,
 * StorageClassNotFound, ProvisioningFailed, NodeNameBypassesScheduler, WaitForFirstConsumer, NoMatchingVolume), of a
 * VolumeAttributesClass it names that the bundle does not hold (an error when its lookup found none and the claim is
 * not Bound), and of a bound PersistentVolume without node affinity (info).
 * @returns the findings, claim by claim in the order given.
 */
export function claimFindings(ctx: PendingContext, claims: ClaimReport[]): Finding[] {
  const out: Finding[] = [];
  for (const c of claims) {
    const ref = `PersistentVolumeClaim ${c.namespace}/${c.name}`;
    const ev = c.state.event ? [`Event ${c.state.event.reason}: ${c.state.event.message}`] : [];
    switch (c.state.reason) {
      case "NotFound": {
        // a generic ephemeral volume's claim (`<pod>-<volume>`) is created by kube-controller-manager's ephemeral
        // volume controller (pkg/controller/volume/ephemeral), not by the user
        const owner = ctx.pods.find((p) => (p.metadata.namespace ?? "") === c.namespace &&
          (p.spec?.volumes ?? []).some((v) => v["ephemeral"] !== undefined && v["ephemeral"] !== null && `${p.metadata.name}-${v.name}` === c.name));
        out.push(owner
          ? {
            id: "claim-missing",
            severity: "error",
            title: `${ref} does not exist yet: the ephemeral volume controller has not created it`,
            detail: `${c.state.message} Pod ${c.namespace}/${owner.metadata.name} asks for it with a generic ephemeral volume; kube-controller-manager's ephemeral volume controller creates it from the volume's template.`,
            evidence: [],
            suggestion: `Check kube-controller-manager (is it running; do its logs or the pod's events say why the claim was not created, e.g. a quota or an invalid template?).`,
          }
          : { id: "claim-missing", severity: "error", title: `${ref} does not exist`, detail: c.state.message, evidence: [], suggestion: `Create the claim, or fix claimName in the pod.` });
        break;
      }
      case "VolumeMissing":
        out.push({ id: "volume-missing", severity: "error", title: `${ref} is bound to PersistentVolume ${c.volumeName}, which is not in the bundle`, detail: c.state.message, evidence: ev });
        break;
      case "NoStorageClass":
        out.push({
          id: "no-storage-class",
          severity: "error",
          title: `${ref} has no StorageClass and the cluster has no default one`,
          detail: c.state.message,
          evidence: [...ev, ...c.staticCandidates.slice(0, 5).map((s) => `PersistentVolume ${s.volume}: ${s.mismatches.map((m) => `${m.field} ${m.got} (wants ${m.want})`).join(", ") || "matches"}`)],
          suggestion: `Set storageClassName, mark a StorageClass as default (storageclass.kubernetes.io/is-default-class: "true"), or create a matching PersistentVolume.`,
        });
        break;
      case "StorageClassNotFound":
        out.push({
          id: "storage-class-not-found",
          severity: "error",
          title: `${ref} names StorageClass ${JSON.stringify(c.storageClassName)}, which does not exist`,
          detail: c.state.message,
          evidence: [...ev, `Existing StorageClasses: ${[...ctx.classes.keys()].sort(cmp).join(", ") || "none in the bundle"}`],
          suggestion: `Create the StorageClass or fix storageClassName (it is immutable: recreate the claim).`,
        });
        break;
      case "ProvisioningFailed":
        out.push({
          id: "provisioning-failed",
          severity: "error",
          title: `The provisioner of ${ref} fails`,
          detail: c.state.message,
          evidence: ev,
          suggestion: `Read the provisioner's logs (${c.storageClass?.provisioner ?? "?"}); the event above is its last word.`,
        });
        break;
      case "NodeNameBypassesScheduler":
        out.push({
          id: "node-name-bypasses-scheduler",
          severity: "error",
          title: `${ref} is never ${c.storageClass?.provisioner === NO_PROVISIONER ? "bound" : "provisioned"}: it waits for its first consumer, and the pods that use it bypass the scheduler with spec.nodeName`,
          detail: c.state.message,
          evidence: [
            ...ev,
            `StorageClass ${c.storageClass?.name ?? "?"}: volumeBindingMode WaitForFirstConsumer; no ${ANN_SELECTED_NODE} annotation on the claim`,
            ...podsUsingClaim(ctx, c.namespace, c.name).filter((p) => p.spec?.nodeName).map((p) => `Pod ${c.namespace}/${p.metadata.name}: spec.nodeName ${p.spec!.nodeName}`),
          ],
          suggestion: `Recreate the pod without spec.nodeName, placed by nodeSelector (kubernetes.io/hostname: NODE) or nodeAffinity; or give the claim a StorageClass with volumeBindingMode Immediate (storageClassName is immutable: recreate the claim).`,
        });
        break;
      case "WaitForFirstConsumer":
        out.push({
          id: "wait-for-first-consumer",
          severity: "info",
          title: `${ref} waits for its first consumer`,
          detail: c.state.message,
          evidence: ev,
        });
        break;
      case "NoMatchingVolume":
        out.push({
          id: "no-matching-volume",
          severity: "error",
          title: `No PersistentVolume can bind ${ref}`,
          detail: c.state.message +
            (c.staticCandidates.length === 0 ? " There is no unbound PersistentVolume at all." : ""),
          evidence: c.staticCandidates.slice(0, 5).map((s) =>
            `PersistentVolume ${s.volume}: ${s.mismatches.map((m) => `${m.field} is ${m.got}, claim wants ${m.want}`).join("; ") || "matches"}`
          ),
          suggestion: `Create a PersistentVolume that satisfies the claim, or change the claim to match an existing one.`,
        });
        break;
    }
    // VolumeAttributesClass (beta v1.31, GA v1.34): a claim that names one that does not exist is not provisioned
    const vac = getClaim(ctx, c.namespace, c.name)?.spec?.volumeAttributesClassName;
    if (vac && !(ctx.bundle.objects.volumeAttributesClasses ?? []).some((v) => v.metadata.name === vac)) {
      const looked = ctx.bundle.warnings.find((w) => w.startsWith(`volumeattributesclass "${vac}" was not found`));
      out.push({
        id: "volume-attributes-class-missing",
        severity: looked && c.state.status !== "Bound" ? "error" : "info",
        title: looked ? `${ref} names VolumeAttributesClass ${JSON.stringify(vac)}, which was not found` : `${ref} names VolumeAttributesClass ${JSON.stringify(vac)}, which is not in the bundle`,
        detail: looked
          ? `${looked}. While it is missing the external provisioner does not create the volume (and a bound volume is not modified): the claim waits.`
          : `Whether it exists decides whether the external provisioner creates (or modifies) the volume; the bundle does not hold VolumeAttributesClasses.`,
        evidence: [`${ref}: spec.volumeAttributesClassName ${JSON.stringify(vac)}`],
        suggestion: `kubectl get volumeattributesclass ${shellWord(vac)}; create it, or fix spec.volumeAttributesClassName.`,
      });
    }
    if (c.volume?.found && !c.volume.nodeAffinity) {
      out.push({
        id: "no-node-affinity",
        severity: "info",
        title: `PersistentVolume ${c.volume.name} has no node affinity`,
        detail: `It does not restrict nodes (no spec.nodeAffinity.required), so its topology is not why a pod using claim ${c.name} is Pending.`,
        evidence: [`PersistentVolume ${c.volume.name}: source ${c.volume.source ?? "unknown"}`],
      });
    }
  }
  return out;
}

/**
 * The finding of a bundle without Node objects: no per-node verdict; the collection's warnings about nodes and the
 * pods' last FailedScheduling messages are its evidence, and RBAC "list nodes" is what decides it.
 */
export function nodesMissingFinding(ctx: PendingContext, pods: PodReport[]): Finding {
  // RBAC / list failures name the resource in the plural ("nodes"); per-node collection warnings say "node X".
  const warnings = ctx.bundle.warnings.filter((w) => /\bnodes\b/i.test(w));
  const events = pods.flatMap((p) => (p.lastFailedScheduling ? [`Pod ${p.namespace}/${p.name} last FailedScheduling: ${p.lastFailedScheduling.message}`] : []));
  return {
    id: "nodes-missing",
    severity: "warning",
    title: `The bundle has no Node objects: no per-node verdict`,
    detail: `Matching volume node affinity, taints and the pod's node rules against nodes needs "list nodes" (verb list, ` +
      `resource nodes, cluster scope). Without it this report shows the claims' state and reasons, each PersistentVolume's ` +
      `node affinity terms, and the scheduler's own last word` + (events.length ? "" : " (none in the bundle)") + `.`,
    evidence: [...warnings, ...events],
    suggestion: `Grant "list" on "nodes" (a ClusterRole; e.g. kubectl create clusterrole netpath-nodes --verb=list,get --resource=nodes) and run again.`,
  };
}

/**
 * The finding of a pod whose spec.nodeName names a node the bundle's Node objects do not include
 * ({@link PodReport.nodeMissing}). No kubelet will run it, and no scheduler places it elsewhere (spec.nodeName is not
 * changed once set). Its PodScheduled condition tells how it got there: True when a Binding set spec.nodeName
 * (pkg/registry/core/pod/storage/storage.go, the binding subresource sets PodScheduled True with the node), so the
 * node was deleted since; without it, its creator set spec.nodeName and no scheduler handled it. kube-controller-manager's
 * pod garbage collector deletes pods bound to nodes that do not exist (pkg/controller/podgc/gc_controller.go
 * `gcOrphaned`, once the node is still missing after its 40 s quarantine, checked every 20 s).
 */
export function podNodeMissingFinding(ctx: PendingContext, p: PodReport, pod: Pod): Finding {
  const node = p.nodeName as string;
  const names = ctx.nodes.map((n) => n.metadata.name);
  const listed = names.slice(0, 5).join(", ") + (names.length > 5 ? ` and ${names.length - 5} more` : "");
  const bound = (pod.status?.conditions ?? []).some((c) => c.type === "PodScheduled" && c.status === "True");
  const owner = (pod.metadata.ownerReferences ?? []).find((o) => o.controller);
  return {
    id: "pod-node-missing",
    severity: "error",
    title: `Pod ${p.namespace}/${p.name} is bound to node ${node}, which does not exist`,
    detail: `spec.nodeName is ${node}, but the bundle's ${names.length} node(s) (${listed}) do not include it: no kubelet will start the pod, ` +
      `and no scheduler places it elsewhere (spec.nodeName is not changed once set). ` +
      (bound
        ? `Its PodScheduled condition is True: a scheduler bound it to ${node}, which has been deleted since. `
        : `It has no PodScheduled condition True: spec.nodeName was set when it was created, so no scheduler handled it. `) +
      `kube-controller-manager's pod garbage collector deletes pods bound to nodes that do not exist (podgc gcOrphaned, once the node is still missing after a 40 s quarantine): ` +
      `a pod still listed means ${node} went missing moments before the collection, or the pod garbage collector is not running (kube-controller-manager --controllers).`,
    evidence: [
      `Pod ${p.namespace}/${p.name}: spec.nodeName ${node}, phase ${p.phase ?? "unknown"}${bound ? ", PodScheduled True" : ""}`,
      `Nodes in the bundle: ${listed}`,
    ],
    suggestion: `Check the name (kubectl get node ${shellWord(node)}). If that node is gone for good, delete the pod (kubectl delete pod -n ${shellWord(p.namespace)} ${shellWord(p.name)})` +
      (owner ? `; its ${owner.kind} ${owner.name} creates a replacement, which the scheduler places` : `, and recreate it placed with nodeSelector or nodeAffinity rather than spec.nodeName`) + ".",
  };
}

/**
 * The finding of a pod GangScheduling holds ({@link analyseGang} in gang.ts, v1.35 `spec.workloadRef`; a v1.36+
 * `spec.schedulingGroup` pod's is {@link podGroupFinding}): an error when it holds it (PreEnqueue, Permit), a warning
 * when the bundle lacks what decides it; none when it lets the pod through.
 * @param p the pod's report (its `gang`).
 * @returns the finding (id `gang-scheduling`), or undefined.
 */
export function gangFinding(p: PodReport): Finding | undefined {
  const g = p.gang;
  if (g?.via === "schedulingGroup") return podGroupFinding(p);
  if (!g || g.stage === "none") return undefined;
  const ref = `Workload ${p.namespace}/${g.workload}, pod group ${g.podGroup}${g.podGroupReplicaKey ? `, replica key ${g.podGroupReplicaKey}` : ""}`;
  const get = `kubectl get workloads.scheduling.k8s.io -n ${shellWord(p.namespace)} ${shellWord(g.workload ?? "")} -o yaml`;
  const title = g.stage === "undecided"
    ? `Whether GangScheduling holds pod ${p.namespace}/${p.name} is undecided (${ref})`
    : g.objectState === "not-found"
    ? `Workload ${p.namespace}/${g.workload} does not exist: GangScheduling holds pod ${p.namespace}/${p.name} before scheduling`
    : g.policy === null
    ? `Workload ${p.namespace}/${g.workload} has no pod group ${g.podGroup}: GangScheduling holds pod ${p.namespace}/${p.name} before scheduling`
    : g.stage === "pre-enqueue"
    ? `The gang of pod ${p.namespace}/${p.name} has ${g.members.length} of its minCount ${g.minCount} pods: GangScheduling holds them before scheduling`
    : `The gang of pod ${p.namespace}/${p.name} cannot place minCount ${g.minCount} pods: those that fit wait at Permit and are rejected after ${GANG_PERMIT_TIMEOUT}`;
  const suggestion = g.stage === "undecided"
    ? `${get}; and check kube-scheduler's --feature-gates (GenericWorkload, GangScheduling).`
    : g.objectState === "not-found"
    ? `Create Workload ${g.workload} in namespace ${p.namespace} with pod group ${g.podGroup} (${get} to confirm it is missing), or recreate the pod without spec.workloadRef (it is immutable).`
    : g.policy === null
    ? `Recreate Workload ${g.workload} with a pod group ${g.podGroup} (its podGroups are immutable), or recreate the pod with a workloadRef naming an existing group.`
    : g.stage === "pre-enqueue"
    ? `Create the missing ${(g.minCount ?? 0) - g.members.length} pod(s) of the group (its controller's replicas or parallelism), or lower minCount (immutable: recreate the Workload).`
    : `Make room for the pods that do not fit (see their reasons), or lower minCount (immutable: recreate the Workload).`;
  const evidence = [
    `Pod ${p.namespace}/${p.name}: spec.workloadRef ${g.workload}/${g.podGroup}${g.podGroupReplicaKey ? `/${g.podGroupReplicaKey}` : ""}`,
    ...(g.minCount !== null ? [`${ref}: gang minCount ${g.minCount}`] : []),
  ];
  return gangSchedulingFinding(g, { title, evidence, suggestion });
}
