/**
 * The scheduler's own word on a pending pod and how it compares with the computed verdicts: the last
 * FailedScheduling message (the Event, or the PodScheduled condition that schedule_one.go `handleSchedulingFailure`
 * keeps whole when the Event is cut at 1,024 bytes, keeps the first message of its series, or has expired), and the
 * reconciliation of its histogram (framework/types.go `FitError`: exact reason strings counted per node) with the
 * one computed here; what the bundle cannot check (the profile's addedAffinity, NodeDeclaredFeatures, extended
 * resources the scheduler's configuration ignores, a binding-cycle failure) is said, with the setting that decides it.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Node, Pod } from "../model/k8s.ts";
import { cmp, eventsFor, type PendingContext, PODS_UNLISTED_WHY } from "./context.ts";
import type { FailedSchedulingEvent, Reconciliation, SchedulingSummary } from "./report.ts";
import { classifyReason, missingResourceClaimName, parseSchedulerMessage, type SchedulerReasonKind } from "./scheduler_message.ts";
import { EXTENDED_RESOURCE_CONFIG, isExtendedResourceName } from "./filters/resources.ts";

/**
 * The scheduler's last FailedScheduling message for `pod`, parsed: the newest FailedScheduling Event, or the
 * PodScheduled condition (status False, reason Unschedulable) when its message differs from the Event's or no Event is
 * left; `source` then says why the condition was taken.
 * @returns the event with `parsed` ({@link parseSchedulerMessage}), or `parsed: null` and `parseError` when the message
 *   cannot be read (never throws); null when the bundle holds neither.
 */
export function lastFailedScheduling(ctx: PendingContext, pod: Pod): FailedSchedulingEvent | null {
  const events = eventsFor(ctx, "Pod", pod.metadata.namespace ?? "", pod.metadata.name, pod.metadata.uid).filter((e) => e.reason === "FailedScheduling");
  let e = events[events.length - 1];
  // The scheduler writes every attempt's message, whole, into the PodScheduled condition (schedule_one.go
  // handleSchedulingFailure), while an Event keeps the first message of its series (client-go events: the key leaves
  // the message out, a repeat only counts) and is cut at 1,024 bytes (truncateMessage, " ..."): when the two differ,
  // the condition is the scheduler's last word. Events also expire (one hour by default).
  const c = (pod.status?.conditions ?? []).find((x) => x.type === "PodScheduled" && x.status === "False" && x.reason === "Unschedulable");
  if (c?.message && c.message !== e?.message) {
    e = {
      type: "Warning",
      reason: "FailedScheduling",
      message: c.message,
      count: null,
      lastSeen: (c as { lastTransitionTime?: string }).lastTransitionTime ?? null,
      source: e
        ? `PodScheduled condition (the scheduler's latest message; the Event ${e.message.endsWith(" ...") ? "is cut at 1,024 bytes" : "keeps the first message of its series"})`
        : "PodScheduled condition (the Events have expired)",
      object: { kind: "Pod", namespace: pod.metadata.namespace ?? "", name: pod.metadata.name },
    };
  }
  if (!e) return null;
  try {
    return { ...e, parsed: parseSchedulerMessage(e.message) };
  } catch (err) {
    return { ...e, parsed: null, parseError: (err as Error).message };
  }
}

/**
 * Compares the computed {@link SchedulingSummary} with the scheduler's last FailedScheduling message: its node count,
 * and its reasons by exact string where the framework's histogram counts them so (resources per resource, the
 * InterPodAffinity reasons apart, a taint by key and value), by kind otherwise; only the reasons a cut Event shows whole.
 * @param summary the computed summary, or null when the bundle has no Node objects.
 * @param ev the last FailedScheduling ({@link lastFailedScheduling}), or null.
 * @param scheduled whether the pod has spec.nodeName.
 * @param checked the rules the bundle let the analysis check (RuleCheck.rule, plus `storageCapacity`, `inlineDisks`):
 *   a reason of a rule not checked is said to be unmodelled, not a disagreement.
 * @param schedulerName the pod's spec.schedulerName, named where the profile's addedAffinity decides.
 * @param nodes the bundle's nodes (what each declares, for NodeDeclaredFeatures).
 * @param podsUnlisted the collection could not list the pods ({@link PODS_UNLISTED_WHY}), the likely cause of nodes
 *   shown to fit.
 * @returns the status (`agree`, `disagree`, `no-event`, `not-applicable`) and the sentences that explain it.
 */
export function reconcile(
  summary: SchedulingSummary | null,
  ev: FailedSchedulingEvent | null,
  scheduled: boolean,
  checked: ReadonlySet<string> = new Set<string>(),
  schedulerName = "default-scheduler",
  nodes: readonly Node[] = [],
  podsUnlisted = false,
): Reconciliation {
  if (scheduled) return { status: "not-applicable", details: ["The pod is scheduled; the scheduler's verdict no longer applies."] };
  if (!ev) return { status: "no-event", details: ["No FailedScheduling event for the pod in the bundle (events expire after one hour by default)."] };
  // A failure of the binding cycle (schedule_one.go: a node was chosen, then Reserve, Permit, PreBind or Bind failed,
  // framework.go "running PreBind plugin %q: %w"; "Binding rejected: …"): no node was filtered out, nothing to compare
  const binding = /^(?:running (Reserve|Permit|PreBind|Bind) plugin "([^"]+)": |Binding rejected: )/.exec(ev.message);
  if (!ev.parsed && binding) {
    return {
      status: "not-applicable",
      details: [`The scheduler's last attempt chose a node and failed while binding the pod${binding[2] ? ` (${binding[1]} plugin ${binding[2]})` : ""}, not at filtering: "${ev.message}". The pod is retried; the nodes' verdicts above are the filters' side.`],
    };
  }
  if (!ev.parsed) return { status: "disagree", details: [`The last FailedScheduling message could not be read: ${ev.parseError ?? ""}`] };
  if (!summary) return { status: "not-applicable", details: [`No Node objects: nothing to compare the scheduler's last word with ("${ev.message}").`] };
  const details: string[] = [];
  const p = ev.parsed;
  // The framework's histogram counts exact reason strings (framework/types.go FitError): resources per resource
  // ("Insufficient cpu" is not "Insufficient memory"), the three InterPodAffinity reasons apart, a taint by key and, when
  // both sides name it, value. Other kinds are compared by kind (their wording changed across releases).
  const theirsNames = p.reasons.some((x) => x.kind === "taint" && x.taint);
  const theirsValues = p.reasons.some((x) => x.kind === "taint" && x.taint?.value !== undefined);
  const key = (kind: SchedulerReasonKind, reason: string, taint?: { key: string; value?: string }) =>
    kind === "resources" || kind === "pod-affinity"
      ? `${kind} "${reason.trim()}"`
      : kind === "taint" && theirsNames && taint
      ? `taint{${taint.key}${theirsValues && taint.value !== undefined ? `: ${taint.value}` : ""}}`
      : kind;
  // An Event's message is cut at 1,024 bytes with " ..." (schedule_one.go truncateMessage): its last reason may be
  // cut too, and the reasons after it are not shown; only those shown whole are compared.
  const cut = ev.message.length >= 1000 && /\s\.\.\.$/.test(ev.message.trimEnd());
  const shown = cut ? p.reasons.slice(0, -1) : p.reasons;
  const theirs = new Map<string, number>();
  for (const r of shown.filter((x) => x.kind !== "pod-affinity-umbrella")) theirs.set(key(r.kind, r.reason, r.taint), (theirs.get(key(r.kind, r.reason, r.taint)) ?? 0) + r.count);
  const ours = new Map<string, number>();
  for (const r of summary.reasons) {
    const k = key(r.kind, r.reason, r.kind === "taint" ? classifyReason(r.reason).taint : undefined);
    ours.set(k, (ours.get(k) ?? 0) + r.count);
  }
  if (p.total !== null && p.total !== summary.total) {
    details.push(`The event counted ${p.total} node(s); the bundle has ${summary.total}: nodes were added or removed since.`);
  }
  const unmodelled = shown.filter((r) =>
    ["node-condition", "node-name", "scheduler-enforced-affinity", "node-declared-features", "other"].includes(r.kind) ||
    // modelled only with the data: requests and the nodes' allocatable, host ports
    (r.kind === "resources" && !checked.has("resources")) || (r.kind === "ports" && !checked.has("hostPorts")) ||
    (r.kind === "volume-restrictions" && !(checked.has("volumeRestrictions") && /ReadWriteOncePod/.test(r.reason)) &&
      !(checked.has("inlineDisks") && /had no available disk/.test(r.reason))) ||
    (r.kind === "volume-limits" && !checked.has("volumeLimits")) ||
    // modelled when the bundle holds the CSIDrivers (and their CSIStorageCapacities)
    (r.kind === "not-enough-storage" && !checked.has("storageCapacity")) ||
    (r.kind === "dra" && !(checked.has("dra") && /not available on the node/.test(r.reason)) && !summary.reasons.some((o) => o.reason === r.reason || sameMissingResourceClaim(o.reason, r.reason))) ||
    (r.kind === "pod-affinity" && !checked.has("podAffinity")) || (r.kind === "topology-spread" && !checked.has("topologySpread"))
  );
  for (const r of unmodelled) {
    if (r.kind === "scheduler-enforced-affinity") {
      // NodeAffinity's Filter tests the profile's added affinity first (plugins/nodeaffinity/node_affinity.go)
      details.push(
        `The scheduler reported "${r.count} ${r.reason}": node affinity that ${schedulerName}'s profile adds to every pod it places ` +
          `(KubeSchedulerConfiguration profiles[].pluginConfig, NodeAffinity args.addedAffinity), not the pod's own. ` +
          `It is in the scheduler's configuration file, not in the API, so this bundle cannot check it: compare that addedAffinity with the nodes' labels.`,
      );
      continue;
    }
    if (r.kind === "node-declared-features") {
      details.push(declaredFeaturesDetail(r.count, r.reason, nodes));
      continue;
    }
    if (r.kind === "dra" && /^cannot fit resource$/i.test(r.reason)) {
      // DynamicResources' Filter with DRAExtendedResource (plugins/dynamicresources/dynamicresources.go)
      details.push(
        `The scheduler reported "${r.count} ${r.reason}": the pod requests an extended resource that those nodes neither advertise in status.allocatable ` +
          `(a device plugin) nor can get through a DeviceClass's spec.extendedResourceName (DynamicResources, DRAExtendedResource, v1.34+); ` +
          `which resource is not in the message (the scheduler's log names it): compare the pod's extended resource requests with the nodes' allocatable and the DeviceClasses.`,
      );
      continue;
    }
    details.push(`The scheduler reported "${r.count} ${r.reason}", a check this analysis does not model (it has no data for it).`);
  }
  const kinds = new Set([...theirs.keys(), ...(cut ? [] : ours.keys())]);
  let same = true;
  const mismatched: string[] = [];
  for (const k of [...kinds].sort(cmp)) {
    const a = theirs.get(k) ?? 0;
    const b = ours.get(k) ?? 0;
    if (a !== b) {
      same = false;
      if (!unmodelled.some((r) => key(r.kind, r.reason, r.taint) === k)) mismatched.push(k);
    }
  }
  // Extended resources the event never calls short, the only difference: the scheduler's configuration, which the
  // bundle does not hold, can tell NodeResourcesFit to skip them (noderesources/fit.go fitsRequest)
  const ignorable = mismatched.map((k) => /^resources "Insufficient (.+)"$/.exec(k)?.[1]);
  if (mismatched.length > 0 && details.length === 0 && ignorable.every((r) => r !== undefined && isExtendedResourceName(r) && (theirs.get(`resources "Insufficient ${r}"`) ?? 0) === 0)) {
    const names = ignorable.map((r) => `${r} (the bundle finds ${ours.get(`resources "Insufficient ${r}"`) ?? 0} node(s) short of it)`).join(", ");
    return {
      status: "disagree",
      details: [
        `The event agrees but for extended resource(s) it never calls short: ${names}. ${EXTENDED_RESOURCE_CONFIG}: ` +
        `check kube-scheduler's --config file (kubectl -n kube-system get configmap, or the static pod's manifest) for those settings; ` +
        `otherwise the nodes' allocatable changed since the event.`,
      ],
    };
  }
  for (const k of mismatched) details.push(`${k}: the event says ${theirs.get(k) ?? 0} node(s), the bundle gives ${ours.get(k) ?? 0}.`);
  if (same && details.length === 0) {
    return {
      status: "agree",
      details: [cut
        ? `The last FailedScheduling event, cut at 1,024 bytes, says the same in the ${shown.length} reason(s) it shows whole: "${p.raw.trim()}"`
        : `The last FailedScheduling event says the same: "${p.raw.trim()}"`],
    };
  }
  if (cut) details.push("The event's message is cut at 1,024 bytes (the Event's limit): only the reasons it shows whole were compared.");
  if (summary.feasibleNodes.length > 0) {
    details.push(
      podsUnlisted
        ? `By the rules checked here ${summary.feasibleNodes.join(", ")} would fit, but they counted no pod on the nodes (${PODS_UNLISTED_WHY}): the resources, hostPorts, topologySpread and podAffinity verdicts are not decided, which is the likely cause.`
        : `By the rules checked here ${summary.feasibleNodes.join(", ")} would fit: the cluster changed since the event, or a check not modelled here rejects them.`,
    );
  }
  if (details.length === 0) details.push("The counts differ.");
  return { status: "disagree", details };
}

/** Whether two reasons both say one ResourceClaim is missing, whatever release's words each is in ({@link missingResourceClaimName}). */
function sameMissingResourceClaim(a: string, b: string): boolean {
  const name = missingResourceClaimName(a);
  return name !== null && name === missingResourceClaimName(b);
}

/**
 * What a NodeDeclaredFeatures rejection means (plugins/nodedeclaredfeatures, v1.35+, feature gate
 * NodeDeclaredFeatures): the nodes lack features the pod needs, which the scheduler infers from the pod's spec (not
 * modelled here: component-helpers/nodedeclaredfeatures' registry changes with each release); a node declares its
 * features in status.declaredFeatures. When the message lists the features (v1.35: `… unsatisfied requirements: A, B`),
 * names the nodes of the bundle that declare each; when it does not (later releases: `node(s) didn't match Pod's
 * required features`), lists what each node of the bundle declares, so that the nodes that declare less stand out.
 * @param count the nodes the scheduler rejected so.
 * @param reason the reason as written.
 * @param nodes the bundle's nodes.
 * @returns one sentence.
 */
function declaredFeaturesDetail(count: number, reason: string, nodes: readonly Node[]): string {
  const named = /:\s*(.*)$/.exec(reason);
  const features = (named?.[1] ?? "").split(",").map((f) => f.trim()).filter((f) => f !== "");
  const lead = `The scheduler reported "${count} ${reason}": those nodes do not declare, in status.declaredFeatures, features the pod needs ` +
    `(NodeDeclaredFeatures; the scheduler infers the pod's needs from its spec, which this analysis does not model)`;
  if (!nodes.some((n) => Array.isArray(n.status?.declaredFeatures))) return `${lead}; no node of this bundle lists declaredFeatures (an older kubelet, or a bundle that does not keep them).`;
  if (features.length === 0) {
    // the message names no feature: what each node declares, fewest first
    const per = [...nodes]
      .map((n) => ({ name: n.metadata.name, declared: n.status?.declaredFeatures ?? [] }))
      .sort((a, b) => a.declared.length - b.declared.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((n) => `${n.name}: ${n.declared.length > 0 ? n.declared.join(", ") : "none"}`);
    return `${lead}. This release's message does not name the features: ` +
      `what each node declares, fewest first: ${per.join("; ")}.`;
  }
  const per = features.map((f) => {
    const having = nodes.filter((n) => (n.status?.declaredFeatures ?? []).includes(f)).map((n) => n.metadata.name);
    return `${f}: ${having.length > 0 ? `declared by ${having.join(", ")}` : "declared by no node of this bundle"}`;
  });
  return `${lead}. ${per.join("; ")}.`;
}
