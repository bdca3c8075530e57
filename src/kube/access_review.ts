/**
 * Edge: asks the API server what the current user may do (authorization.k8s.io/v1 SelfSubjectAccessReview, what
 * `kubectl auth can-i` sends) before creating anything, so that a missing permission is named precisely instead of
 * surfacing half-way as a 403.
 *
 * The checks for node collection, all in the namespace of the debug pods (kube-system, where kube-proxy runs too):
 * - `create` and `get` on `pods/exec`: an exec over WebSocket is an HTTP GET, authorized as `get` on pods/exec; since
 *   Kubernetes v1.35 (feature AuthorizePodWebsocketUpgradeCreatePermission, KEP-4006) `create` is required as well;
 * - `create` and `delete` on `pods`: the debug pod, when the kube-proxy pod cannot be used;
 * - `watch` and `get` on `pods`: waiting for the debug pod to run (a watch by `metadata.name`, then a get when it ends
 *   early: pod_lifecycle.ts startDebugPod); without them a privileged pod would be created only to be deleted unused.
 * @module
 */
import { grantNeeded, KubeApiError, type RequestDescription } from "./errors.ts";
import { type KubeRest, R } from "./rest.ts";

/** One permission to check. */
export interface AccessCheck {
  verb: string;
  /** `pods`, or `pods/exec` (resource/subresource). */
  resource: string;
  namespace: string;
}

/** The answer for one check. */
export interface AccessAnswer extends AccessCheck {
  /** true / false, or undefined when the review itself could not be made (then the request is simply tried). */
  allowed: boolean | undefined;
  /** The authorizer's reason, when it gave one. */
  reason?: string;
}

/**
 * The permissions node collection needs in `namespace`: exec (an exec over WebSocket is authorized as `get`, and from
 * Kubernetes v1.35 also as `create`, on pods/exec) and, when it may make debug pods, create, watch, get and delete pods.
 * @param debugPods false when the run creates no pod (`--via kube-proxy`). @default true
 */
export function collectionChecks(namespace: string, debugPods = true): AccessCheck[] {
  const exec: AccessCheck[] = [
    { verb: "get", resource: "pods/exec", namespace },
    { verb: "create", resource: "pods/exec", namespace },
  ];
  if (!debugPods) return exec;
  return [
    ...exec,
    { verb: "create", resource: "pods", namespace },
    { verb: "watch", resource: "pods", namespace },
    { verb: "get", resource: "pods", namespace },
    { verb: "delete", resource: "pods", namespace },
  ];
}

/**
 * Runs SelfSubjectAccessReviews (one request each, in parallel).
 * @returns one answer per check, in order. A review that fails (403 on the review itself, old server) gives
 *   `allowed: undefined`.
 * @throws {ApiUnreachableError} when the server cannot be reached.
 */
export async function reviewAccess(rest: KubeRest, checks: readonly AccessCheck[]): Promise<AccessAnswer[]> {
  return await Promise.all(checks.map(async (c): Promise<AccessAnswer> => {
    const [resource, subresource] = c.resource.split("/");
    const body = {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { resourceAttributes: { namespace: c.namespace, verb: c.verb, group: "", resource, ...(subresource ? { subresource } : {}) } },
    };
    try {
      const r = await rest.create<{ status?: { allowed?: boolean; denied?: boolean; reason?: string } }>(R.selfSubjectAccessReviews(), body);
      const a: AccessAnswer = { ...c, allowed: r.status?.allowed === true };
      if (r.status?.reason) a.reason = r.status.reason;
      return a;
    } catch (e) {
      if (e instanceof KubeApiError) return { ...c, allowed: undefined };
      throw e;
    }
  }));
}

/** The sentence for denied answers: `RBAC must grant verb "create" on "pods/exec" in namespace "kube-system"; ...`. */
export function missingPermissions(answers: readonly AccessAnswer[]): string {
  return answers
    .filter((a) => a.allowed === false)
    .map((a) => grantNeeded({ verb: a.verb, resource: a.resource, namespace: a.namespace } as RequestDescription))
    .join("; ");
}
