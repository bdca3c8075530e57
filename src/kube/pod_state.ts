/**
 * Reading the state of a debug pod and of a Node from their status, for the wait loop and for messages that say
 * what to do: an image that cannot be pulled, a pod the kubelet rejected, a node that is NotReady.
 * Field meanings follow core/v1 PodStatus / ContainerStateWaiting reasons as the kubelet sets them
 * (pkg/kubelet/images: ErrImagePull, ImagePullBackOff, InvalidImageName, ErrImageNeverPull; kuberuntime:
 * CreateContainerConfigError, CreateContainerError, RunContainerError) and NodeCondition Ready.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Node, Pod } from "../model/k8s.ts";
import { shellWord } from "../model/shell_word.ts";

/** Where a debug pod stands. */
export type PodState =
  | { kind: "running" }
  | { kind: "pending"; detail: string }
  | { kind: "failed"; reason: string; detail: string };

interface ContainerStatus {
  name?: string;
  image?: string;
  state?: {
    waiting?: { reason?: string; message?: string };
    running?: { startedAt?: string };
    terminated?: { reason?: string; message?: string; exitCode?: number };
  };
}

const IMAGE_REASONS = new Set(["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"]);
const CREATE_REASONS = new Set(["CreateContainerConfigError", "CreateContainerError", "RunContainerError", "PreCreateHookError", "PreStartHookError"]);

/**
 * Classifies a debug pod: running (exec can start), pending (with a short progress text), or failed (with the
 * reason and a sentence for the user).
 * @param pod the pod as last seen.
 * @param image the image requested, for the image-pull message.
 */
export function podState(pod: Pod, image: string): PodState {
  const st = pod.status ?? {};
  const statuses = (st.containerStatuses ?? []) as ContainerStatus[];
  if (pod.metadata.deletionTimestamp) return { kind: "failed", reason: "Deleted", detail: "the pod is being deleted" };
  for (const c of statuses) {
    const w = c.state?.waiting;
    if (w?.reason && IMAGE_REASONS.has(w.reason)) {
      return {
        kind: "failed",
        reason: w.reason,
        detail: `the image "${image}" cannot be pulled (${w.reason}${w.message ? `: ${w.message}` : ""}); pass --image with an image the node can pull that has iptables, ipset, ipvsadm and nft (for example a copy of nicolaka/netshoot in your registry)`,
      };
    }
    if (w?.reason && CREATE_REASONS.has(w.reason)) {
      return { kind: "failed", reason: w.reason, detail: `the container cannot start (${w.reason}${w.message ? `: ${w.message}` : ""})` };
    }
    if (c.state?.terminated) {
      const t = c.state.terminated;
      return { kind: "failed", reason: t.reason ?? "Terminated", detail: `the container exited before collection (${t.reason ?? "terminated"}, exit ${t.exitCode ?? "?"})` };
    }
  }
  if (st.phase === "Failed" || st.phase === "Succeeded") {
    const reason = (st.reason as string | undefined) ?? st.phase;
    const msg = st.message as string | undefined;
    return { kind: "failed", reason, detail: `the kubelet ${st.phase === "Failed" ? "failed" : "finished"} the pod (${reason}${msg ? `: ${msg}` : ""})` };
  }
  if (st.phase === "Running" && statuses.some((c) => c.state?.running)) return { kind: "running" };
  const waiting = statuses.map((c) => c.state?.waiting?.reason).find((r) => r !== undefined);
  if (waiting) return { kind: "pending", detail: waiting === "ContainerCreating" ? "pulling the image / creating the container" : waiting };
  const scheduled = st.conditions?.find((c) => c.type === "PodScheduled");
  if (scheduled?.status === "False") return { kind: "pending", detail: `not placed: ${scheduled.reason ?? ""} ${scheduled.message ?? ""}`.trim() };
  return { kind: "pending", detail: st.phase === undefined ? "accepted by the API server" : `${st.phase}, waiting for the kubelet to start it` };
}

/**
 * Why a node cannot run collection now, or undefined when its Ready condition is True.
 * @returns e.g. `node k8s2 is NotReady (Ready=Unknown, NodeStatusUnknown: Kubelet stopped posting node status.):
 *   its kubelet cannot run an exec or a debug pod, and its rules may be stale`.
 */
export function nodeNotReady(node: Node): string | undefined {
  const ready = node.status?.conditions?.find((c) => c.type === "Ready");
  if (ready?.status === "True") return undefined;
  const why = ready ? `Ready=${ready.status}${ready.reason ? `, ${ready.reason}` : ""}${ready.message ? `: ${ready.message}` : ""}` : "no Ready condition";
  return `node ${node.metadata.name} is NotReady (${why}): its kubelet cannot run an exec or a debug pod, and its rules may be stale; ` +
    `check it with kubectl describe node ${shellWord(node.metadata.name)}`;
}
