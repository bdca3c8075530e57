/**
 * Edge: the life of a debug pod — create, wait for Running with a watch and a time limit, delete — and the
 * registry that guarantees deletion on every exit path: the caller's `finally`, and SIGINT/SIGTERM (Ctrl-C), whose
 * handler aborts the work, waits for creations in flight (a pod whose create request is still on the wire could
 * otherwise be created after its delete), deletes every registered pod, then exits 130/143. A SIGKILL cannot be
 * handled: then the pod's `activeDeadlineSeconds` makes the kubelet stop it, and `kubectl netpath cleanup` removes
 * the object.
 *
 * Uses `node:process` (signals), which Node and Deno 2 provide.
 * @module
 */
import process from "node:process";
import type { V1Pod } from "@kubernetes/client-node";
import type { Pod } from "../model/k8s.ts";
import { formatMs } from "./duration.ts";
import { KubeApiError } from "./errors.ts";
import { recordInterruption } from "./interrupt.ts";
import { podState } from "./pod_state.ts";
import { shellWord } from "../model/shell_word.ts";
import { type KubeRest, R } from "./rest.ts";

/** A debug pod that could not be brought to Running; `message` says why and what to do. */
export class DebugPodError extends Error {
  override name = "DebugPodError";
  constructor(message: string, readonly reason: string) {
    super(message);
  }
}

interface Entry {
  namespace: string;
  name: string;
  created: Promise<unknown>;
}

/** A debug pod a run could not delete, and why (the error's message). */
export interface LeftPod {
  namespace: string;
  name: string;
  reason: string;
}

/**
 * The command that removes a run's leftover debug pods once they have stopped, for messages: `kubectl netpath
 * cleanup`, with `-n NS` for a namespace other than its default (kube-system), one command per namespace. (Inside its
 * deadline a pod is kept by cleanup, which cannot tell a leftover from a pod of a run in flight: src/kube/cleanup.ts.)
 * @param namespaces the namespaces of the pods.
 */
export function cleanupCommand(namespaces: readonly string[]): string {
  const ns = [...new Set(namespaces)].sort();
  if (ns.length === 0) return "kubectl netpath cleanup";
  return ns.map((n) => (n === CLEANUP_DEFAULT_NAMESPACE ? "kubectl netpath cleanup" : `kubectl netpath cleanup -n ${shellWord(n)}`)).join("; ");
}

/** The namespace `kubectl netpath cleanup` looks in without `-n` (src/cli/cleanup.ts). */
const CLEANUP_DEFAULT_NAMESPACE = "kube-system";

/**
 * The sentence for debug pods a run could not delete: each with why, that it stops at its deadline
 * (activeDeadlineSeconds, when the kubelet fails it), and the cleanup command for its namespace.
 */
export function leftPodsMessage(left: readonly LeftPod[]): string {
  const one = left.length === 1;
  return `could not delete debug pod${one ? "" : "s"} ${left.map((p) => `${p.namespace}/${p.name} (${p.reason})`).join("; ")}; ` +
    `${one ? "it stops" : "they stop"} on ${one ? "its" : "their"} own at ${one ? "its" : "their"} deadline (activeDeadlineSeconds) — then remove ${one ? "it" : "them"} with: ${cleanupCommand(left.map((p) => p.namespace))}`;
}

/** The debug pods this process created and has not deleted yet. */
export class PodRegistry {
  #pods = new Map<string, Entry>();

  /** Registers a pod before its create request is sent; `created` settles when the request does. */
  add(namespace: string, name: string, created: Promise<unknown>): void {
    this.#pods.set(`${namespace}/${name}`, { namespace, name, created: created.catch(() => undefined) });
  }

  /** Whether a pod is registered. */
  has(namespace: string, name: string): boolean {
    return this.#pods.has(`${namespace}/${name}`);
  }

  /** Forgets a pod (after it was deleted). */
  remove(namespace: string, name: string): void {
    this.#pods.delete(`${namespace}/${name}`);
  }

  /** `namespace/name` of the registered pods. */
  names(): string[] {
    return [...this.#pods.keys()];
  }

  /** The namespaces of the registered pods, sorted. */
  namespaces(): string[] {
    return [...new Set([...this.#pods.values()].map((e) => e.namespace))].sort();
  }

  /**
   * Deletes every registered pod, after waiting (at most `waitMs`) for creations in flight.
   * @returns the pods that could not be deleted, with the reason.
   */
  async deleteAll(rest: KubeRest, waitMs = 5000): Promise<LeftPod[]> {
    const entries = [...this.#pods.values()];
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(entries.map((e) => e.created)),
      new Promise((r) => (timer = setTimeout(r, waitMs))),
    ]);
    clearTimeout(timer);
    const failed: LeftPod[] = [];
    await Promise.all(entries.map(async (e) => {
      try {
        await deletePod(rest, e.namespace, e.name, Math.min(rest.requestTimeoutMs || 10_000, 10_000));
        this.remove(e.namespace, e.name);
      } catch (err) {
        failed.push({ namespace: e.namespace, name: e.name, reason: (err as Error).message });
      }
    }));
    return failed;
  }
}

/**
 * Deletes a pod with its own grace period (no `gracePeriodSeconds` in the DeleteOptions: kube-apiserver then uses
 * the pod's `terminationGracePeriodSeconds`, pkg/registry/core/pod/strategy.go CheckGracefulDelete; a grace period
 * of 0 would remove the object before the kubelet has stopped the container). A pod already gone is fine.
 * @throws {KubeApiError} / {ApiUnreachableError} when the delete fails.
 */
export async function deletePod(rest: KubeRest, namespace: string, name: string, timeoutMs = rest.requestTimeoutMs): Promise<void> {
  await rest.delete(R.pods(namespace, name), { apiVersion: "v1", kind: "DeleteOptions", propagationPolicy: "Background" }, timeoutMs);
}

/**
 * Installs SIGINT/SIGTERM handlers that abort `abort`, delete the registry's pods and exit (130 / 143). A second
 * signal exits at once. The interruption is recorded (interrupt.ts {@link recordInterruption}) as the first signal
 * lands, so that the run's own failure (its aborted requests reject with "cancelled") is neither reported nor turned
 * into exit code 1 (src/cli/program.ts runCli waits for this handler instead). Returns the uninstaller (call it when
 * the run is over; once interrupted it leaves the handlers in place, so a second signal is still answered).
 * @param write where to say what happens (stderr).
 */
export function installInterruptCleanup(registry: PodRegistry, rest: KubeRest, abort: AbortController, write: (s: string) => void): () => void {
  let interrupted = false;
  const handler = (signal: "SIGINT" | "SIGTERM") => {
    const code = signal === "SIGINT" ? 130 : 143;
    if (interrupted) {
      write(`\ninterrupted again: exiting without waiting; leftover pods stop on their own (activeDeadlineSeconds) — then remove them with: ${cleanupCommand(registry.namespaces())}\n`);
      process.exit(code);
    }
    interrupted = true;
    let finished!: () => void;
    recordInterruption(signal, new Promise<void>((r) => (finished = r)));
    abort.abort();
    const n = registry.names().length;
    if (n > 0) write(`\ninterrupted: deleting ${n} debug pod${n === 1 ? "" : "s"} (${registry.names().join(", ")})…\n`);
    const exit = () => {
      finished();
      process.exit(code);
    };
    registry.deleteAll(rest).then((failed) => {
      if (failed.length > 0) write(`${leftPodsMessage(failed)}\n`);
      exit();
    }, exit);
  };
  const onInt = () => handler("SIGINT");
  const onTerm = () => handler("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  return () => {
    if (interrupted) return;
    process.removeListener("SIGINT", onInt);
    process.removeListener("SIGTERM", onTerm);
  };
}

/** Options of {@link startDebugPod}. */
export interface StartOptions {
  registry: PodRegistry;
  /** Epoch ms by which the pod must be Running. */
  deadline: number;
  /** The `--timeout` that set the deadline, for messages. */
  timeoutMs: number;
  signal: AbortSignal;
  /** Progress (only shown on a terminal). */
  progress: (text: string) => void;
  /** The node, for messages. */
  node: string;
}

function describePod(p: Pod, image: string): string {
  const s = podState(p, image);
  return s.kind === "pending" ? s.detail : s.kind === "running" ? "Running" : s.reason;
}

/**
 * Creates the debug pod and waits until its container runs.
 * @param rest REST client.
 * @param pod the pod from buildDebugPod.
 * @param o registry, deadline, signal, progress.
 * @returns the running pod.
 * @throws {KubeApiError} when the create is refused (403 RBAC or Pod Security, 409).
 * @throws {DebugPodError} when the pod fails (image pull, kubelet rejection) or is not Running by the deadline.
 */
export async function startDebugPod(rest: KubeRest, pod: V1Pod, o: StartOptions): Promise<Pod> {
  const ns = pod.metadata!.namespace!;
  const name = pod.metadata!.name!;
  const image = pod.spec!.containers[0]!.image ?? "";
  const creating = rest.create<Pod>(R.pods(ns), pod, o.signal);
  o.registry.add(ns, name, creating);
  o.progress(`creating debug pod ${ns}/${name} (image ${image})`);
  let last: Pod;
  try {
    last = await creating;
  } catch (e) {
    // A 4xx (403 RBAC or Pod Security, 409, 422) means nothing was created. A 5xx or a timeout may hide a pod
    // that exists: it stays registered, so the caller's cleanup deletes it.
    if (e instanceof KubeApiError && e.status >= 400 && e.status < 500) o.registry.remove(ns, name);
    throw e;
  }
  let lastShown = "";
  const show = (p: Pod) => {
    const d = describePod(p, image);
    if (d !== lastShown) o.progress(`debug pod ${name}: ${d}`);
    lastShown = d;
  };
  for (;;) {
    const st = podState(last, image);
    if (st.kind === "running") return last;
    if (st.kind === "failed") throw new DebugPodError(`debug pod ${ns}/${name} on node ${o.node}: ${st.detail}`, st.reason);
    show(last);
    const remaining = o.deadline - Date.now();
    if (remaining <= 0 || o.signal.aborted) {
      if (o.signal.aborted) throw new DebugPodError(`debug pod ${ns}/${name}: cancelled`, "Cancelled");
      throw new DebugPodError(
        `debug pod ${ns}/${name} on node ${o.node} was not Running within ${formatMs(o.timeoutMs)} (last state: ${describePod(last, image)}); ` +
          `the node may be slow to pull ${image}: raise --timeout, or pass --image with an image already on the node`,
        "Timeout",
      );
    }
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), remaining);
    const onAbort = () => ctl.abort();
    o.signal.addEventListener("abort", onAbort, { once: true });
    try {
      await rest.watch<Pod>(
        R.pods(ns),
        { fieldSelector: `metadata.name=${name}`, resourceVersion: last.metadata.resourceVersion, timeoutSeconds: Math.max(1, Math.ceil(remaining / 1000)) },
        (ev) => {
          if (ev.type === "BOOKMARK") return false;
          if (ev.type === "DELETED") {
            last = { ...ev.object, metadata: { ...ev.object.metadata, deletionTimestamp: ev.object.metadata.deletionTimestamp ?? new Date().toISOString() } };
            return true;
          }
          last = ev.object;
          return podState(last, image).kind !== "pending";
        },
        ctl.signal,
      );
    } catch (e) {
      // 410 Gone: the resourceVersion is too old; re-read below and watch again.
      if (!(e instanceof KubeApiError && e.status === 410)) throw e;
    } finally {
      clearTimeout(timer);
      o.signal.removeEventListener("abort", onAbort);
    }
    if (podState(last, image).kind === "pending" && !o.signal.aborted && Date.now() < o.deadline) {
      const fresh = await rest.getOptional<Pod>(R.pods(ns, name));
      if (!fresh) throw new DebugPodError(`debug pod ${ns}/${name} on node ${o.node} was deleted by someone else before it ran`, "Deleted");
      last = fresh;
    }
  }
}
