/**
 * What Dynamic Resource Allocation holds a pod on, from its ResourceClaims (resource.k8s.io v1 since Kubernetes 1.34,
 * v1beta1/v1beta2 before), after kube-scheduler's DynamicResources plugin
 * (pkg/scheduler/framework/plugins/dynamicresources, the last filter of the default profile, after InterPodAffinity):
 *
 * - a claim from a `resourceClaimTemplateName` exists only once the ResourceClaim controller created it and wrote its
 *   name into the pod's `status.resourceClaimStatuses`; until then the pod waits for that controller; an entry there
 *   without a `resourceClaimName` says no claim was needed, and the scheduler skips it (resourceclaim.Name returns
 *   nil: "Nothing to do" in the plugin's foreachPodResourceClaim);
 * - a claim that does not exist, or is being deleted, keeps the pod unschedulable (PreFilter);
 * - an unallocated claim is allocated by the scheduler itself while it places the pod, against the ResourceSlices the
 *   drivers publish: whether devices are free is not simulated here (say so, with the device classes asked for);
 * - an allocated claim's `status.allocation.nodeSelector` limits the nodes: any other node fails the Filter with
 *   `resourceclaim not available on the node` (UnschedulableAndUnresolvable).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Node, Pod, ResourceClaim } from "../../model/k8s.ts";
import { evaluateNodeSelector } from "../node_selector.ts";
import { nodeFacts } from "../context.ts";
import { shellWord } from "../../model/shell_word.ts";

/** The scheduler's reason for a node outside an allocated claim's node selector. */
export const DRA_NODE_REASON = "resourceclaim not available on the node";

/** One of the pod's ResourceClaims and its state. */
export interface PodResourceClaim {
  /** The name in the pod's `spec.resourceClaims`. */
  podClaimName: string;
  /** The ResourceClaim's name; `null` while a template's claim is not created yet, or when none was needed. */
  claimName: string | null;
  template: string | null;
  /** `not-needed`: the pod's status lists this claim without a ResourceClaim (generating one was not necessary). */
  state: "not-created" | "not-needed" | "not-found" | "unallocated" | "allocated";
  /** The device classes its requests ask for. */
  deviceClasses: string[];
  /** For allocated claims: `driver/pool/device` per allocated device. */
  devices: string[];
  /** For allocated claims: the node selector of the allocation, when it has one. */
  allocation: NonNullable<NonNullable<ResourceClaim["status"]>["allocation"]> | null;
  /** The ResourceClaim has a deletionTimestamp: the scheduler's PreFilter rejects every node while it is deleted. */
  deleting?: true;
}

function classesOf(claim: ResourceClaim): string[] {
  const out = new Set<string>();
  for (const r of claim.spec?.devices?.requests ?? []) {
    if (r.deviceClassName) out.add(r.deviceClassName);
    if (r.exactly?.deviceClassName) out.add(r.exactly.deviceClassName);
    for (const f of r.firstAvailable ?? []) if (f.deviceClassName) out.add(f.deviceClassName);
  }
  return [...out].sort();
}

/**
 * The pod's ResourceClaims, each with its state from the bundle.
 * @param pod the pod.
 * @param claims the bundle's ResourceClaims.
 */
export function podResourceClaims(pod: Pod, claims: readonly ResourceClaim[]): PodResourceClaim[] {
  const ns = pod.metadata.namespace ?? "";
  const generated = new Map((pod.status?.resourceClaimStatuses ?? []).map((s) => [s.name, s.resourceClaimName] as const));
  return (pod.spec?.resourceClaims ?? []).map((rc): PodResourceClaim => {
    const template = rc.resourceClaimTemplateName ?? null;
    const claimName = rc.resourceClaimName ?? generated.get(rc.name) ?? null;
    const base = { podClaimName: rc.name, claimName, template, deviceClasses: [] as string[], devices: [] as string[], allocation: null };
    if (claimName === null) return { ...base, state: rc.resourceClaimName === undefined && generated.has(rc.name) ? "not-needed" : "not-created" };
    const claim = claims.find((c) => c.metadata.name === claimName && (c.metadata.namespace ?? "") === ns);
    if (!claim) return { ...base, state: "not-found" };
    const allocation = claim.status?.allocation ?? null;
    return {
      ...base,
      ...(claim.metadata.deletionTimestamp ? { deleting: true as const } : {}),
      deviceClasses: classesOf(claim),
      state: allocation ? "allocated" : "unallocated",
      devices: (allocation?.devices?.results ?? []).map((r) => `${r.driver}/${r.pool}/${r.device}`),
      allocation,
    };
  });
}

/**
 * The DynamicResources Filter for the pod's allocated claims on one node: `null` when no allocated claim restricts
 * nodes, else the verdict.
 * @param claims from {@link podResourceClaims}.
 * @param node the node.
 */
export function draNodeCheck(claims: readonly PodResourceClaim[], node: Node): { passed: boolean; detail: string } | null {
  const restricting = claims.filter((c) => c.state === "allocated" && c.allocation?.nodeSelector);
  if (restricting.length === 0) return null;
  for (const c of restricting) {
    const ev = evaluateNodeSelector(c.allocation!.nodeSelector!, nodeFacts(node));
    if (!ev.matched) return { passed: false, detail: `ResourceClaim ${c.claimName} is allocated (${c.devices.join(", ") || "devices"}) for nodes this one is not in` };
  }
  return { passed: true, detail: `the allocated ResourceClaim(s) ${restricting.map((c) => c.claimName).join(", ")} can be used here` };
}

/**
 * One sentence on the claims that hold the pod, or `null` when none does (all allocated, or the pod uses none).
 * @param claims from {@link podResourceClaims}.
 */
export function draWaitText(claims: readonly PodResourceClaim[]): string | null {
  const parts: string[] = [];
  for (const c of claims) {
    // a claim being deleted is the PreFilter's rejection of every node (explain.ts podPreFilter), said there
    if (c.deleting) continue;
    if (c.state === "not-created") {
      parts.push(`claim ${c.podClaimName} (template ${c.template}) has no ResourceClaim yet: the ResourceClaim controller of kube-controller-manager creates it`);
    } else if (c.state === "not-found") {
      parts.push(`ResourceClaim ${c.claimName} does not exist (or was not collected: kubectl get resourceclaim ${shellWord(c.claimName ?? "")})`);
    } else if (c.state === "unallocated") {
      parts.push(`ResourceClaim ${c.claimName} is not allocated (device class${c.deviceClasses.length === 1 ? "" : "es"} ${c.deviceClasses.join(", ") || "?"}): the scheduler allocates it while placing the pod, from the ResourceSlices the drivers publish — whether such devices are free is not checked here`);
    }
  }
  return parts.length > 0 ? parts.join("; ") : null;
}
