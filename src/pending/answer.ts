/**
 * The one-paragraph answer of the Pending question: for a pod, or for each pod that uses a claim, what it waits for,
 * first that which decides: a node that does not exist, WaitForFirstConsumer claims never provisioned because
 * spec.nodeName bypasses the scheduler, scheduling gates, a schedulerName nothing answers for, a claim being
 * provisioned for the node the scheduler chose (VolumeBinding PreBind, `volume.kubernetes.io/selected-node`), Dynamic
 * Resource Allocation, victims of a preemption still terminating, else the scheduler's verdict in its own words; and
 * the root cause when a finding is an error.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { ClaimReport, Finding, PendingQuestion, PodReport } from "./report.ts";
import { missingResourceClaimName } from "./scheduler_message.ts";
import { draWaitText } from "./filters/dra.ts";

/** The pod's claims that are never provisioned because their consumers set spec.nodeName (claim.ts `NodeNameBypassesScheduler`). */
export function bypassedClaims(claims: readonly ClaimReport[], p: PodReport): ClaimReport[] {
  if (!p.nodeName) return [];
  return claims.filter((c) => c.namespace === p.namespace && c.state.reason === "NodeNameBypassesScheduler" && p.claims.some((u) => u.claim === c.name));
}

/**
 * The report's `answer`: for a pod question, its line; for a claim question, the claim's state, then the lines of the
 * pods that use it and still wait (not scheduled, or bound to a node that does not exist). The first error finding is
 * named as the root cause; a bundle without Node objects says that no per-node verdict was made.
 * @param q the question.
 * @param claims the claims' reports (the claim asked about first).
 * @param pods the pods' reports (for a pod question, exactly one).
 * @param findings the findings, sorted by severity.
 * @param nodesListed whether the bundle holds Node objects.
 * @returns the answer, in sentences.
 */
export function composeAnswer(q: PendingQuestion, claims: ClaimReport[], pods: PodReport[], findings: Finding[], nodesListed: boolean): string {
  const rootCause = findings.find((f) => f.severity === "error");
  const cause = rootCause ? ` Root cause: ${rootCause.title}.` : "";
  const noNodes = nodesListed ? "" : " No Node objects in the bundle, so no per-node verdict.";
  const podLine = (p: PodReport): string => {
    if (p.nodeName && p.nodeMissing) {
      return `pod ${p.namespace}/${p.name} is bound to node ${p.nodeName} (spec.nodeName), which is not among the bundle's nodes: no kubelet will run it, and no scheduler will place it elsewhere`;
    }
    const stranded = bypassedClaims(claims, p);
    if (p.nodeName && stranded.length > 0) {
      return `pod ${p.namespace}/${p.name} names node ${p.nodeName} in spec.nodeName, so the scheduler never sees it and its WaitForFirstConsumer claim(s) ${stranded.map((c) => c.name).join(", ")} are never provisioned: ` +
        `place it with nodeSelector or nodeAffinity instead, or use a StorageClass with volumeBindingMode Immediate`;
    }
    if (p.nodeName) return `pod ${p.namespace}/${p.name} is scheduled on ${p.nodeName}`;
    if (p.schedulingGates && p.schedulingGates.length > 0) {
      return `pod ${p.namespace}/${p.name} is SchedulingGated: the scheduler does not try to place it until every spec.schedulingGates entry is removed (${p.schedulingGates.join(", ")}), by whoever added it`;
    }
    // GangScheduling holds the pod before the filters (PreEnqueue) or after them (v1.35 Permit, v1.36+ the pod group cycle)
    if (p.gang && (p.gang.stage === "pre-enqueue" || p.gang.stage === "permit" || p.gang.stage === "pod-group-cycle")) {
      const head = p.gang.stage === "pre-enqueue"
        ? `pod ${p.namespace}/${p.name} is held back by kube-scheduler's GangScheduling plugin (PreEnqueue): `
        : p.gang.stage === "pod-group-cycle"
        ? `pod ${p.namespace}/${p.name} is rejected with its gang (GangScheduling, pod group scheduling cycle): `
        : `pod ${p.namespace}/${p.name} waits for its gang (GangScheduling, Permit): `;
      return head + p.gang.detail;
    }
    if (p.schedulerName !== "default-scheduler" && !p.lastFailedScheduling) {
      return `pod ${p.namespace}/${p.name} asks for scheduler "${p.schedulerName}" (spec.schedulerName) and has no FailedScheduling event or PodScheduled condition: no scheduler of that name has looked at it — is one running?`;
    }
    // the scheduler chose a node for a WaitForFirstConsumer claim and waits (VolumeBinding PreBind) for the volume
    const provisioning = claims.find((c) =>
      c.namespace === p.namespace && p.claims.some((u) => u.claim === c.name) && c.selectedNode !== null &&
      (c.state.reason === "Provisioning" || c.state.reason === "ProvisioningFailed")
    );
    if (provisioning) {
      return `pod ${p.namespace}/${p.name} waits for claim ${provisioning.name}: the scheduler chose node ${provisioning.selectedNode} ` +
        `(annotation volume.kubernetes.io/selected-node) and binds the pod once the volume exists; ` +
        (provisioning.state.reason === "ProvisioningFailed"
          ? `provisioner ${JSON.stringify(provisioning.storageClass?.provisioner ?? "?")} fails: ${provisioning.state.event?.message ?? ""}`
          : `provisioner ${JSON.stringify(provisioning.storageClass?.provisioner ?? "?")} is creating it` +
            (provisioning.state.event ? ` (${provisioning.state.event.reason}: ${provisioning.state.event.message})` : ", and has reported nothing (is it running?)")) +
        "." +
        // the scheduler's own word on it: a PreBind failure of VolumeBinding (a provisioning that failed or timed out)
        (p.lastFailedScheduling && /^running (?:Reserve|Permit|PreBind|Bind) plugin "/.test(p.lastFailedScheduling.message)
          ? ` The scheduler's last attempt failed while binding: ${p.lastFailedScheduling.message}.`
          : "");
    }
    // DRA: claims not created, missing or not allocated hold the pod where the node filters do not say why
    // a claim the PreFilter message already names as missing is not said twice
    const draText = draWaitText((p.resourceClaims ?? []).filter((c) =>
      !(c.state === "not-found" && p.summary?.preFilter && missingResourceClaimName(p.summary.preFilter) === c.claimName)
    ));
    if (draText && (!p.summary || p.summary.feasibleNodes.length > 0)) {
      return `pod ${p.namespace}/${p.name} waits for Dynamic Resource Allocation: ${draText}` +
        (p.summary ? ` (by the other rules checked here ${p.summary.feasibleNodes.length}/${p.summary.total} nodes fit)` : "") + ".";
    }
    // a preemption already made room for it on its nominated node: it waits for the victims to go
    const waiting = findings.find((f) => f.id === "preemption-victims-terminating" && f.evidence[0]?.startsWith(`Pod ${p.namespace}/${p.name}: status.nominatedNodeName `));
    if (waiting && p.nominatedNodeName) {
      return `${waiting.title.charAt(0).toLowerCase()}${waiting.title.slice(1)}; once they are gone the scheduler tries it there first` +
        (p.summary ? ` (until then: ${p.summary.message.replace(/\.$/, "")})` : "") + ".";
    }
    const gangText = p.gang?.stage === "undecided" ? ` Whether GangScheduling holds it: ${p.gang.detail}` : "";
    if (p.summary) return `pod ${p.namespace}/${p.name} cannot be scheduled: ${p.summary.message}` + (draText ? ` Also: ${draText}.` : "") + gangText;
    return `pod ${p.namespace}/${p.name} is not scheduled` + (p.lastFailedScheduling ? `; the scheduler's last word: ${p.lastFailedScheduling.message}` : "");
  };
  if (q.kind === "pod") {
    const p = pods[0] as PodReport;
    const line = podLine(p);
    const bypassed = bypassedClaims(claims, p).length > 0 && !p.nodeMissing;
    const end = p.nodeMissing ? "." : p.nodeName ? (bypassed ? "." : "; it is not waiting for the scheduler.") : "";
    return line.charAt(0).toUpperCase() + line.slice(1) + end + (p.nodeName ? "" : cause) + noNodes;
  }
  const c = claims[0] as ClaimReport;
  const head = `PersistentVolumeClaim ${c.namespace}/${c.name}: ${c.state.message}`;
  // a pod bound to a node that does not exist is stuck as much as one the scheduler cannot place
  const pending = pods.filter((p) => !p.nodeName || p.nodeMissing);
  if (c.state.status !== "Bound") {
    const lines = pending.map(podLine).join("; ");
    return head + (lines ? ` ${lines.charAt(0).toUpperCase()}${lines.slice(1)}${lines.endsWith(".") ? "" : "."}` : "") + cause + noNodes;
  }
  if (pending.length === 0) {
    return head + (pods.length ? ` Nothing is pending: ${pods.map(podLine).join("; ")}.` : " No pod uses it.") + noNodes;
  }
  const lines = pending.map(podLine).join("; ");
  return head + ` But ${lines}${lines.endsWith(".") ? "" : "."}` + cause + noNodes;
}
