/**
 * Errors of the live path, each with a message a user can act on (no stack traces, no raw Status JSON): which
 * server, which context, which permission in which namespace, what to do next. Modelled on kubectl's habit of
 * rewriting server errors into the next step (kubectl debug turns a 404 on ephemeralcontainers into "ephemeral
 * containers are disabled for this cluster").
 *
 * Runtime-neutral: no I/O (the classifiers read `code` fields of Node's network errors).
 * @module
 */
import { shellWord } from "../model/shell_word.ts";

/** The kubeconfig cannot be read or does not name a usable context. */
export class KubeconfigError extends Error {
  override name = "KubeconfigError";
}

/** The API server cannot be reached, or TLS with it fails, or it does not answer in time. */
export class ApiUnreachableError extends Error {
  override name = "ApiUnreachableError";
}

/** What a request was about, for messages: `get services "web" in namespace "shop"`. */
export interface RequestDescription {
  /** RBAC verb: get, list, watch, create, delete. */
  verb: string;
  /** Resource with group suffix and subresource as RBAC names it, e.g. `endpointslices.discovery.k8s.io`, `pods/exec`. */
  resource: string;
  namespace?: string;
  name?: string;
}

/** A Kubernetes `Status` object as the API server sends it with an error code. */
export interface KubeStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; kind?: string; causes?: { reason?: string; message?: string; field?: string }[] };
}

/**
 * The API server answered with an error status. `status` is the HTTP code, `reason` the Status reason
 * (`NotFound`, `Forbidden`, `Unauthorized`, `AlreadyExists`, `InternalError`, ...), `serverMessage` its message.
 * `message` is the human sentence.
 */
export class KubeApiError extends Error {
  override name = "KubeApiError";
  constructor(
    message: string,
    readonly status: number,
    readonly reason: string,
    readonly serverMessage: string,
    readonly request: RequestDescription,
  ) {
    super(message);
  }
}

/** A permission the plugin needs is missing (found by SelfSubjectAccessReview before anything is created). */
export class PermissionDeniedError extends Error {
  override name = "PermissionDeniedError";
}

function where(r: RequestDescription): string {
  return r.namespace !== undefined ? ` in namespace "${r.namespace}"` : " (cluster-scoped)";
}

function what(r: RequestDescription): string {
  return `${r.resource}${r.name !== undefined ? ` "${r.name}"` : ""}`;
}

/** The RBAC grant a user needs for `r`, in words: `verb "create" on "pods/exec" in namespace "kube-system"`. */
export function grantNeeded(r: RequestDescription): string {
  return `verb "${r.verb}" on "${r.resource}"${r.namespace !== undefined ? ` in namespace "${r.namespace}"` : " (a ClusterRole)"}`;
}

/** How the API server authorizes an exec (for messages). */
export const EXEC_VERBS = `an exec over WebSocket is an HTTP GET, authorized as "get" on pods/exec, and from Kubernetes v1.35 also as "create" (AuthorizePodWebsocketUpgradeCreatePermission)`;

/**
 * The verb of the authorizer's refusal in a 403's message, or undefined when the 403 is not the authorizer's (an
 * admission webhook, a quota, a proxy). kube-apiserver words its refusal as `User "u" cannot VERB resource "R" in API
 * group "G" in the namespace "NS"` (or `at the cluster scope`; `cannot VERB path "/p"` for non-resource URLs):
 * staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go forbiddenMessage (v1.19+).
 */
export function rbacDenial(serverMessage: string): string | undefined {
  return /\bcannot ([a-z]+) (?:resource|path) "/.exec(serverMessage)?.[1];
}

/**
 * The refusal of v1.35's second check of an exec (pkg/registry/core/pod/rest/subresources.go ExecREST.Connect →
 * ensureAuthorizedForVerb "create", gate AuthorizePodWebsocketUpgradeCreatePermission): `pods "NAME" is forbidden: `
 * followed by the authorizer's reason, empty or RBAC's own (`RBAC: …`), not the `cannot VERB` sentence.
 */
const EXEC_CREATE_CHECK = /^pods "[^"]*" is forbidden: ?(RBAC: .*)?$/;

/**
 * The namespace a 404 says does not exist, or undefined. kube-apiserver refuses a create in a namespace that does not
 * exist with NewNotFound(Resource("namespaces"), ns) (plugin/pkg/admission/namespace/lifecycle/admission.go Admit):
 * message `namespaces "NS" not found`, details `{ name: NS, kind: "namespaces" }` (apimachinery pkg/api/errors NewNotFound).
 */
function missingNamespace(st: KubeStatus): string | undefined {
  if (st.details?.kind === "namespaces" && st.details.name) return st.details.name;
  return /^namespaces "([^"]+)" not found$/.exec(st.message ?? "")?.[1];
}

/** What was being done, in words: `exec into pod "x"`, `create pods`, `get services "web"`. */
function action(r: RequestDescription): string {
  return r.resource === "pods/exec" ? `exec into pod${r.name !== undefined ? ` "${r.name}"` : "s"}` : `${r.verb} ${what(r)}`;
}

/**
 * Turns an error status of the API server into a {@link KubeApiError} with a message for humans.
 * - 401: the credentials of the context were rejected: log in again.
 * - 403 with "violates PodSecurity": Pod Security Admission of the namespace rejected the debug pod.
 * - 403 from the authorizer (its `cannot VERB resource "R"` message, {@link rbacDenial}): names the grant needed, with
 *   the authorizer's verb (and `--no-exec` for exec and a debug pod's create).
 * - any other 403 (an admission webhook, a quota, a proxy in between): the server's message, as kubectl quotes it
 *   (`Error from server (Forbidden): <message>`, k8s.io/kubectl/pkg/cmd/util/helpers.go StandardErrorMessage); no
 *   RBAC claim.
 * - 404 whose Status names a namespace (`namespaces "NS" not found`): that namespace does not exist (with
 *   --debug-namespace for the debug pod's create), quoting the server as kubectl does; another 404: the object is not
 *   found.
 * - 409, 410, 422, 429, 5xx: the server's message with what was being done.
 * @param status HTTP status code.
 * @param body the response body (a Status object when the server sent one, else text).
 * @param r what the request was.
 * @param server the API server URL, context and `--kubeconfig` file, for 401 messages.
 * @returns the error (not thrown).
 */
export function apiError(status: number, body: string, r: RequestDescription, server: ServerInfo): KubeApiError {
  let st: KubeStatus = {};
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed !== null && typeof parsed === "object") st = parsed as KubeStatus;
  } catch {
    st = { message: body.trim().slice(0, 300) };
  }
  const serverMessage = st.message ?? "";
  const reason = st.reason ?? (status === 401 ? "Unauthorized" : status === 403 ? "Forbidden" : status === 404 ? "NotFound" : `HTTP${status}`);
  let msg: string;
  if (status === 401) {
    msg = `the API server ${server.url} rejected the credentials of context "${server.context}"${server.user ? ` (user "${server.user}")` : ""} (401 Unauthorized): ` +
      `log in again or refresh the token, then check with \`${kubectlFor(server)} auth whoami\``;
  } else if (status === 403 && /violates PodSecurity/.test(serverMessage)) {
    const level = /violates PodSecurity "([^"]+)"/.exec(serverMessage)?.[1] ?? "?";
    const detail = serverMessage.replace(/^.*violates PodSecurity "[^"]+":\s*/, "");
    msg = `Pod Security Admission of namespace "${r.namespace}" (level "${level}") rejected the debug pod: ${detail}. ` +
      `The debug pod needs hostNetwork and NET_ADMIN/NET_RAW: label the namespace ` +
      `pod-security.kubernetes.io/enforce=privileged (kubectl label ns ${shellWord(r.namespace ?? "")} pod-security.kubernetes.io/enforce=privileged --overwrite), ` +
      `or pass --debug-namespace with a namespace that allows it, or run with --no-exec to analyse from the API alone`;
  } else if (status === 403) {
    const denied = rbacDenial(serverMessage) ?? (r.resource === "pods/exec" && EXEC_CREATE_CHECK.test(serverMessage) ? "create" : undefined);
    // not for a delete: `cleanup` deletes pods too, and --no-exec means nothing there
    const noExec = r.resource === "pods/exec" || (r.resource === "pods" && r.verb === "create")
      ? "; or run with --no-exec to analyse from the API alone"
      : "";
    if (denied !== undefined) {
      // the authorizer's own verb: an exec over WebSocket is checked as "get", and from v1.35 also as "create"
      msg = `not allowed to ${action(r)}${where(r)} (403 Forbidden): RBAC must grant ${grantNeeded({ ...r, verb: denied })}` +
        (r.resource === "pods/exec" ? ` (${EXEC_VERBS})` : "") + noExec;
    } else {
      // Not the authorizer (an admission webhook, a quota, a proxy in between): its words, as kubectl quotes them
      const plain = st.kind !== "Status" && serverMessage !== "";
      msg = `could not ${action(r)}${where(r)}: Error from server (Forbidden): ${serverMessage || "no message"}` +
        (plain ? ` (a plain-text answer, not the API server's Status: a proxy between refused it${r.resource === "pods/exec" ? "; kubectl proxy refuses exec unless its --reject-paths allows it" : ""})` : "") +
        (r.resource === "pods" && r.verb === "create"
          ? "; the debug pod needs hostNetwork and NET_ADMIN/NET_RAW (--profile sysadmin: privileged): have it allowed, or pass --debug-namespace with a namespace where it is" +
            noExec
          : noExec);
    }
  } else if (status === 404) {
    const ns = missingNamespace(st);
    if (ns !== undefined && !r.resource.startsWith("namespaces")) {
      // the namespace of the request does not exist (NamespaceLifecycle admission refuses the create), not the object
      msg = `namespace "${ns}" does not exist: Error from server (NotFound): ${serverMessage}` +
        (r.resource === "pods" && r.verb === "create"
          ? `; pass --debug-namespace with an existing namespace (or create it: kubectl create namespace ${shellWord(ns)})`
          : "");
    } else {
      msg = `${what(r)} not found${where(r)}`;
    }
  } else if (status === 409) {
    msg = `conflict on ${what(r)}${where(r)} (409 ${reason}): ${serverMessage}`;
  } else if (status === 429) {
    // --parallel sets how many nodes are collected at once: it matters only to the requests of node collection (pods
    // of kube-system listed per node, debug pods created, watched and deleted, execs), not to the API reads before
    msg = `the API server is throttling requests (429 TooManyRequests${serverMessage ? `: ${serverMessage}` : ""}) while trying to ${action(r)}${where(r)}, ` +
      `when it asks to wait (Retry-After) the request is retried, up to 10 times within --request-timeout: try again later` +
      (r.resource === "pods/exec" || (r.resource === "pods" && r.verb !== "get") ? ", or lower --parallel" : "");
  } else if (status >= 500) {
    msg = `the API server failed to ${r.verb} ${what(r)}${where(r)} (${status} ${reason}): ${serverMessage || "no message"}; try again`;
  } else {
    msg = `could not ${r.verb} ${what(r)}${where(r)} (${status} ${reason}): ${serverMessage || "no message"}`;
  }
  return new KubeApiError(msg, status, reason, serverMessage, r);
}

const TLS_CODES: Record<string, string> = {
  SELF_SIGNED_CERT_IN_CHAIN: "the server's certificate chain ends in a CA the kubeconfig does not trust",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the server's certificate is self-signed and not trusted by the kubeconfig",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the server's certificate is not signed by the kubeconfig's certificate-authority",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "the server's certificate is not signed by the kubeconfig's certificate-authority",
  CERT_HAS_EXPIRED: "the server's certificate has expired",
  CERT_NOT_YET_VALID: "the server's certificate is not valid yet (check the clock)",
  ERR_TLS_CERT_ALTNAME_INVALID: "the server's certificate does not name this address",
};

/** The API server a request went to, for messages. */
export interface ServerInfo {
  /** The server's URL. */
  url: string;
  /** The kubeconfig context in use. */
  context: string;
  /** The context's user name, when it has one. */
  user?: string;
  /** The `--kubeconfig` file given on the command line; absent when the kubeconfig came from `KUBECONFIG` or
   * `~/.kube/config`, which a kubectl run in the same shell finds by itself. */
  kubeconfig?: string;
}

/**
 * The start of a kubectl command line that reaches the same cluster: `kubectl [--kubeconfig FILE] --context NAME`.
 * Without the `--kubeconfig` of the run, kubectl would read KUBECONFIG or ~/.kube/config: another cluster, or no
 * such context.
 */
function kubectlFor(server: ServerInfo): string {
  return `kubectl${server.kubeconfig ? ` --kubeconfig ${shellWord(server.kubeconfig)}` : ""} --context ${shellWord(server.context)}`;
}

/**
 * Turns a network error of a request to the API server into an {@link ApiUnreachableError}.
 * @param e the error from the HTTP client (Node error with `code`).
 * @param server the API server URL, context and `--kubeconfig` file (repeated in the suggested kubectl command).
 * @returns the error (not thrown).
 */
export function networkError(e: unknown, server: ServerInfo): ApiUnreachableError {
  const code = (e as { code?: string }).code ?? "";
  const raw = e instanceof Error ? e.message : String(e);
  const ctx = `context "${server.context}"`;
  // OpenSSL's "wrong version number" / "packet length too long" (EPROTO): the other side does not speak TLS at all
  if (code === "EPROTO" && /wrong version number|packet length too long|record layer failure|http request/i.test(raw)) {
    return new ApiUnreachableError(
      `the API server address ${server.url} does not answer TLS (is it an http:// port, or not an API server?): ` +
        `check the server address of the cluster of ${ctx} in your kubeconfig`,
    );
  }
  if (code in TLS_CODES || /certificate|SSL|TLS/i.test(raw)) {
    // OpenSSL's messages run over lines (`…:ssl3_record.c:350:\n`): one line, its first
    const why = TLS_CODES[code] ?? raw.split("\n").map((l) => l.trim()).filter((l) => l !== "").join(" ");
    return new ApiUnreachableError(
      `TLS with the API server ${server.url} failed: ${why}${code ? ` (${code})` : ""}; check certificate-authority(-data) ` +
        `and the server address of the cluster of ${ctx} in your kubeconfig`,
    );
  }
  const words: Record<string, string> = {
    ECONNREFUSED: "connection refused",
    ENOTFOUND: "host name not found",
    EAI_AGAIN: "host name lookup failed",
    EHOSTUNREACH: "host unreachable",
    ENETUNREACH: "network unreachable",
    ETIMEDOUT: "connection timed out",
    ECONNRESET: "connection reset",
  };
  const word = words[code] ?? raw.split("\n").map((l) => l.trim()).filter((l) => l !== "").join(" ");
  return new ApiUnreachableError(
    `cannot reach the API server ${server.url} (${word}): is the cluster running and is ${ctx} the right one? ` +
      `(${kubectlFor(server)} cluster-info)`,
  );
}
