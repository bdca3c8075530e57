/**
 * Edge: a small REST client for the Kubernetes API, on top of client-node's `KubeConfig` (which supplies the TLS
 * material, the bearer token / client certificate / exec credential plugin, and proxies). Objects are kept exactly
 * as the server sent them in JSON (a Bundle stores objects verbatim), which client-node's typed API clients would
 * not do (they convert timestamps to Date and drop unknown fields).
 *
 * Every request has a timeout (`--request-timeout`); lists are paginated with `limit`/`continue` like kubectl
 * (chunk size 500); watches stream newline-delimited JSON events. Errors become {@link KubeApiError} /
 * {@link ApiUnreachableError} with human messages (see errors.ts).
 *
 * Uses `node:http`/`node:https`, which Node and Deno 2 provide.
 * @module
 */
import * as http from "node:http";
import * as https from "node:https";
import { shareTlsAgent } from "./tls_agent.ts";
import { Buffer } from "node:buffer";
import type { KubeConfig } from "@kubernetes/client-node";
import { formatMs } from "./duration.ts";
import { checkObjectShape } from "../bundle/shape.ts";
import { credentialPluginError } from "./kubeconfig.ts";
import { ApiUnreachableError, apiError, KubeApiError, networkError, type RequestDescription, type ServerInfo } from "./errors.ts";

/** An API resource to address: `/api/v1/namespaces/{ns}/pods/{name}/exec` and friends. */
export interface ResourceRef {
  /** API group, "" for core. */
  group: string;
  version: string;
  /** Plural resource, e.g. `pods`, `endpointslices`. */
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** Query parameters of a request (`labelSelector`, `fieldSelector`, `limit`, `continue`, `watch`, ...). */
export type Query = Record<string, string | number | boolean | string[] | undefined>;

/** One watch event. */
export interface WatchEvent<T> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: T;
}

/** A list as returned by {@link KubeRest.list}: every page's items, with `kind`/`apiVersion` filled in. */
export interface ListResult<T> {
  items: T[];
  resourceVersion?: string;
  /** Requests made (pages). */
  pages: number;
}

/** Builds the URL path of a resource. */
export function resourcePath(r: ResourceRef): string {
  const base = r.group === "" ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const ns = r.namespace !== undefined ? `/namespaces/${encodeURIComponent(r.namespace)}` : "";
  const name = r.name !== undefined ? `/${encodeURIComponent(r.name)}` : "";
  const sub = r.subresource !== undefined ? `/${r.subresource}` : "";
  return `${base}${ns}/${r.resource}${name}${sub}`;
}

/** Encodes a query string (repeated keys for arrays, as the API server expects for `command`). */
export function encodeQuery(q: Query | undefined): string {
  if (!q) return "";
  const parts: string[] = [];
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(one))}`);
  }
  return parts.length > 0 ? `?${parts.join("&")}` : "";
}

/**
 * Most retries of one request answered with Retry-After, so at most 11 tries (client-go rest/request.go maxRetries 10;
 * with_retry.go IsNextRetry stops once its attempts exceed it).
 */
export const MAX_RETRIES = 10;

/**
 * The wait (ms) an answer asks for before the request is sent again, or undefined when it is not to be retried:
 * 429, or >= 500 to anything but a POST, with `Retry-After` in whole seconds (an HTTP date is not read, as client-go
 * rest/with_retry.go retryAfterSeconds does not).
 */
export function retryAfterMs(answer: { status: number; retryAfter?: string }, method: string): number | undefined {
  if (!(answer.status === 429 || (answer.status >= 500 && method !== "POST"))) return undefined;
  if (answer.retryAfter === undefined || !/^\s*\d+\s*$/.test(answer.retryAfter)) return undefined;
  return Number(answer.retryAfter) * 1000;
}

/** The RBAC view of a request, for messages. */
export function describeRequest(verb: string, r: ResourceRef): RequestDescription {
  const res = `${r.resource}${r.group !== "" ? `.${r.group}` : ""}${r.subresource !== undefined ? `/${r.subresource}` : ""}`;
  const d: RequestDescription = { verb, resource: res };
  if (r.namespace !== undefined) d.namespace = r.namespace;
  if (r.name !== undefined) d.name = r.name;
  return d;
}

interface Prepared {
  options: https.RequestOptions;
  url: URL;
}

/** Options of {@link KubeRest}. */
export interface KubeRestOptions {
  /** Timeout of each request in ms (0 = none). @default 30000 */
  requestTimeoutMs?: number;
  /** Context name, for messages. */
  context: string;
  /** User name, for messages. */
  user?: string;
  /** The `--kubeconfig` file given, repeated in the kubectl commands messages suggest (see errors.ts ServerInfo). */
  kubeconfig?: string;
}

/**
 * A REST client bound to one kubeconfig context.
 * @example
 * ```ts
 * const rest = new KubeRest(kc, { context: "kind-lab" });
 * const svc = await rest.get({ group: "", version: "v1", resource: "services", namespace: "shop", name: "web" });
 * ```
 */
export class KubeRest {
  readonly server: string;
  readonly requestTimeoutMs: number;
  readonly context: string;
  readonly user: string | undefined;
  readonly kubeconfig: string | undefined;
  #kc: KubeConfig;
  #prepared: Promise<Prepared> | undefined;

  constructor(kc: KubeConfig, o: KubeRestOptions) {
    this.#kc = kc;
    this.server = kc.getCurrentCluster()?.server ?? "";
    this.requestTimeoutMs = o.requestTimeoutMs ?? 30_000;
    this.context = o.context;
    this.user = o.user;
    this.kubeconfig = o.kubeconfig;
  }

  /** The KubeConfig (for exec over WebSocket). */
  get kubeConfig(): KubeConfig {
    return this.#kc;
  }

  #prepare(): Promise<Prepared> {
    this.#prepared ??= (async () => {
      const options: https.RequestOptions = { headers: {} };
      try {
        await this.#kc.applyToHTTPSOptions(options);
        shareTlsAgent(this.#kc, options as Record<string, unknown>);
      } catch (e) {
        // (a plain http:// server is given insecure-skip-tls-verify by kubeconfig.ts, which client-node needs for it)
        throw credentialPluginError(e, this.#kc, this.context) ?? e;
      }
      return { options, url: new URL(this.server) };
    })();
    return this.#prepared;
  }

  /**
   * The error for a non-2xx answer: a {@link KubeApiError} when the body is a Kubernetes `Status` (every error of a
   * kube-apiserver is one, k8s.io/apimachinery pkg/api/errors), else an {@link ApiUnreachableError} saying the server is
   * not a Kubernetes API server (a web server answering 404 with HTML would otherwise read as "service not found").
   */
  #errorOf(status: number, text: string, verb: string, method: string, r: ResourceRef): Error {
    if (isKubeStatus(text)) return apiError(status, text, describeRequest(verb, r), this.#serverInfo());
    return new ApiUnreachableError(
      `${this.server} is not a Kubernetes API server: it answered ${method} ${resourcePath(r)} with HTTP ${status} and ${describeBody(text)}, ` +
        `not a Kubernetes Status; check the server of context "${this.context}" in your kubeconfig (or the proxy in front of it)`,
    );
  }

  #serverInfo(): ServerInfo {
    return { url: this.server, context: this.context, ...(this.user ? { user: this.user } : {}), ...(this.kubeconfig ? { kubeconfig: this.kubeconfig } : {}) };
  }

  /**
   * Sends a request and resolves with the status and body text. A 429, or a 5xx to any request but a POST, whose answer carries
   * `Retry-After: SECONDS` is sent again after that wait, as client-go does (k8s.io/client-go/rest/with_retry.go
   * checkWait and retryAfterSeconds: 429 or >= 500 with an integer Retry-After; request.go maxRetries 10): at most
   * {@link MAX_RETRIES} retries, all within `timeoutMs` (client-go's request timeout also covers its retries), and the wait
   * ends with `signal`. Unlike client-go, a POST is not sent again after a 5xx: it may have created the object (a
   * debug pod), and a second create would answer 409 for it. The last answer is returned when no retry is left.
   * @param timeoutMs the time for the request and its retries (0 = none).
   * @throws {ApiUnreachableError} on network/TLS errors and timeouts, and when `signal` aborts.
   */
  async raw(method: string, path: string, body?: unknown, timeoutMs = this.requestTimeoutMs, signal?: AbortSignal): Promise<{ status: number; text: string }> {
    const start = Date.now();
    for (let tries = 1; ; tries++) {
      const left = timeoutMs > 0 ? Math.max(1, timeoutMs - (Date.now() - start)) : 0;
      const answer = await this.#once(method, path, body, left, timeoutMs, signal);
      const waitMs = retryAfterMs(answer, method);
      if (waitMs === undefined || tries > MAX_RETRIES) return answer;
      if (timeoutMs > 0 && Date.now() - start + waitMs >= timeoutMs) return answer;
      await new Promise<void>((resolveWait, reject) => {
        const onAbort = () => {
          clearTimeout(timer);
          reject(new ApiUnreachableError(`request cancelled: ${method} ${path.split("?")[0]}`));
        };
        const timer = setTimeout(() => {
          signal?.removeEventListener("abort", onAbort);
          resolveWait();
        }, waitMs);
        if (signal?.aborted) onAbort();
        else signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
  }

  /** One try of {@link raw}: `timeoutMs` for this try, `statedMs` the time limit messages name. */
  async #once(method: string, path: string, body: unknown, timeoutMs: number, statedMs: number, signal?: AbortSignal): Promise<{ status: number; text: string; retryAfter?: string }> {
    const { options, url } = await this.#prepare();
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = {
      ...(options.headers as Record<string, string>),
      Accept: "application/json",
      "User-Agent": "kubectl-netpath",
    };
    if (payload !== undefined) {
      headers["Content-Type"] = "application/json";
      headers["Content-Length"] = String(Buffer.byteLength(payload));
    }
    const lib = url.protocol === "http:" ? http : https;
    const basePath = url.pathname.replace(/\/$/, "");
    return await new Promise((resolvePromise, reject) => {
      let settled = false;
      const done = (f: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        f();
      };
      const req = lib.request({
        ...options,
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ""),
        port: url.port || (url.protocol === "http:" ? 80 : 443),
        method,
        path: basePath + path,
        headers,
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        const retryAfter = res.headers["retry-after"];
        res.on("end", () => done(() => resolvePromise({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), ...(retryAfter !== undefined ? { retryAfter } : {}) })));
        res.on("error", (e) => done(() => reject(networkError(e, this.#serverInfo()))));
      });
      const timer = timeoutMs > 0
        ? setTimeout(() => {
          done(() => reject(new ApiUnreachableError(`the API server ${this.server} did not answer within ${formatMs(statedMs)} (${method} ${path.split("?")[0]}); raise --request-timeout or check the cluster`)));
          req.destroy();
        }, timeoutMs)
        : undefined;
      const onAbort = () => {
        done(() => reject(new ApiUnreachableError(`request cancelled: ${method} ${path.split("?")[0]}`)));
        req.destroy();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      req.on("error", (e) => done(() => reject(networkError(e, this.#serverInfo()))));
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  async #json<T>(verb: string, method: string, r: ResourceRef, query?: Query, body?: unknown, signal?: AbortSignal): Promise<T> {
    const { status, text } = await this.raw(method, resourcePath(r) + encodeQuery(query), body, this.requestTimeoutMs, signal);
    if (status < 200 || status >= 300) throw this.#errorOf(status, text, verb, method, r);
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ApiUnreachableError(
        `${this.server} is not a Kubernetes API server: it answered ${method} ${resourcePath(r)} with HTTP ${status} and ${describeBody(text)}, ` +
          `not JSON; check the server of context "${this.context}" in your kubeconfig (or the proxy in front of it)`,
      );
    }
  }

  /**
   * GET one object.
   * @throws {KubeApiError} for error statuses (404 has `status === 404`).
   */
  async get<T>(r: ResourceRef, query?: Query): Promise<T> {
    const value = await this.#json<T>("get", "GET", r, query);
    const kind = r.subresource ? undefined : KIND_OF[r.resource];
    if (kind) this.#fits(value, kind, `the ${kind}`, r);
    return value;
  }

  /**
   * An answer that does not have the shape of the kind asked for (a proxy's or another service's JSON, a Status with
   * HTTP 200) is not analysed as if it were one: the same shape checks as a bundle's objects (bundle/shape.ts).
   * @throws {ApiUnreachableError} naming the request and the first field that does not fit.
   */
  #fits(value: unknown, kind: string, what: string, r: ResourceRef): void {
    const bad = checkObjectShape(value, kind, what);
    if (bad === undefined) return;
    throw new ApiUnreachableError(
      `${this.server} answered GET ${resourcePath(r)} with JSON a Kubernetes API server does not send (${bad}); ` +
        `check the server of context "${this.context}" in your kubeconfig (or the proxy in front of it)`,
    );
  }

  /** GET one object, or undefined when it does not exist (404). */
  async getOptional<T>(r: ResourceRef): Promise<T | undefined> {
    try {
      return await this.get<T>(r);
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 404) return undefined;
      throw e;
    }
  }

  /**
   * Lists with pagination (`limit`, then `continue` until the server stops returning one). Items get the list's
   * `apiVersion` and `kind` (the server omits them in lists).
   * @param r the collection (no `name`).
   * @param query selectors.
   * @param pageSize `limit` per page. @default 500
   * @param maxItems stop after this many items (0 = all). @default 0
   */
  async list<T>(r: ResourceRef, query: Query = {}, pageSize = 500, maxItems = 0): Promise<ListResult<T>> {
    const items: T[] = [];
    let cont: string | undefined;
    let pages = 0;
    let rv: string | undefined;
    const kind = KIND_OF[r.resource];
    const apiVersion = r.group === "" ? r.version : `${r.group}/${r.version}`;
    do {
      const page = await this.#json<{ items?: T[]; metadata?: { continue?: string; resourceVersion?: string } }>(
        "list",
        "GET",
        r,
        { ...query, limit: pageSize, ...(cont ? { continue: cont } : {}) },
      );
      pages++;
      if (page === null || typeof page !== "object" || !Array.isArray(page.items)) {
        throw new ApiUnreachableError(
          `${this.server} answered GET ${resourcePath(r)} with JSON that is not a list (no items array); ` +
            `check the server of context "${this.context}" in your kubeconfig (or the proxy in front of it)`,
        );
      }
      for (const [i, it] of page.items.entries()) {
        if (kind !== undefined) this.#fits(it, kind, `items[${i}]`, r);
        const o = it as Record<string, unknown>;
        items.push((kind !== undefined && o.kind === undefined ? { apiVersion, kind, ...o } : o) as T);
      }
      rv = page.metadata?.resourceVersion ?? rv;
      cont = page.metadata?.continue || undefined;
      if (maxItems > 0 && items.length >= maxItems) break;
    } while (cont);
    return { items, ...(rv ? { resourceVersion: rv } : {}), pages };
  }

  /** POST a new object. */
  create<T>(r: ResourceRef, body: unknown, signal?: AbortSignal): Promise<T> {
    return this.#json<T>("create", "POST", r, undefined, body, signal);
  }

  /** DELETE an object; resolves false when it was already gone (404). */
  async delete(r: ResourceRef, body?: unknown, timeoutMs = this.requestTimeoutMs): Promise<boolean> {
    const { status, text } = await this.raw("DELETE", resourcePath(r), body, timeoutMs);
    if (status === 404 && isKubeStatus(text)) return false;
    if (status < 200 || status >= 300) throw this.#errorOf(status, text, "delete", "DELETE", r);
    return true;
  }

  /**
   * Watches a collection: calls `onEvent` for each event until it returns true, the server ends the watch, or
   * `signal` aborts. Resolves with true when `onEvent` returned true.
   * @throws {KubeApiError} for an error status, or an ERROR event carrying a Status.
   */
  async watch<T>(r: ResourceRef, query: Query, onEvent: (e: WatchEvent<T>) => boolean, signal: AbortSignal): Promise<boolean> {
    const { options, url } = await this.#prepare();
    const path = url.pathname.replace(/\/$/, "") + resourcePath(r) + encodeQuery({ ...query, watch: 1, allowWatchBookmarks: true });
    const lib = url.protocol === "http:" ? http : https;
    return await new Promise<boolean>((resolvePromise, reject) => {
      let settled = false;
      const finish = (f: () => void) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        req.destroy();
        f();
      };
      const req = lib.request({
        ...options,
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ""),
        port: url.port || (url.protocol === "http:" ? 80 : 443),
        method: "GET",
        path,
        headers: { ...(options.headers as Record<string, string>), Accept: "application/json", "User-Agent": "kubectl-netpath" },
      }, (res) => {
        if ((res.statusCode ?? 0) >= 300) {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => finish(() => reject(this.#errorOf(res.statusCode ?? 0, Buffer.concat(chunks).toString("utf8"), "watch", "GET", r))));
          return;
        }
        let buf = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line === "" || settled) continue;
            let ev: WatchEvent<T>;
            try {
              ev = JSON.parse(line) as WatchEvent<T>;
            } catch {
              continue;
            }
            if (ev.type === "ERROR") {
              const st = ev.object as { code?: number; message?: string };
              finish(() => reject(apiError(st.code ?? 500, JSON.stringify(st), describeRequest("watch", r), this.#serverInfo())));
              return;
            }
            if (onEvent(ev)) {
              finish(() => resolvePromise(true));
              return;
            }
          }
        });
        res.on("end", () => finish(() => resolvePromise(false)));
        res.on("error", () => finish(() => resolvePromise(false)));
      });
      const onAbort = () => finish(() => resolvePromise(false));
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
      req.on("error", (e) => finish(() => reject(networkError(e, this.#serverInfo()))));
      req.end();
    });
  }
}

/** Whether an error body is a Kubernetes `Status` object (`{"kind":"Status","apiVersion":"v1",…}`). */
export function isKubeStatus(text: string): boolean {
  try {
    const v = JSON.parse(text) as { kind?: unknown } | null;
    return v !== null && typeof v === "object" && v.kind === "Status";
  } catch {
    return false;
  }
}

/** A response body as a message names it: `an HTML page ("<title>404 Not Found</title>")`, `an empty body`. */
function describeBody(text: string): string {
  const t = text.trim();
  if (t === "") return "an empty body";
  const printable = (x: string) => JSON.stringify(x.replace(/[^\x20-\x7e]/g, "?").slice(0, 60));
  if (/^<(!doctype|html|\?xml|head|body)/i.test(t)) {
    const title = /<title>([^<]*)<\/title>/i.exec(t)?.[1]?.trim();
    return `an HTML page${title ? ` (${printable(title)})` : ""}`;
  }
  if (t.startsWith("{") || t.startsWith("[")) return `JSON that is not a Status (${printable(t)})`;
  return `the text ${printable(t)}`;
}

/** kind of the items of each resource this plugin lists. */
const KIND_OF: Record<string, string> = {
  services: "Service",
  endpointslices: "EndpointSlice",
  pods: "Pod",
  nodes: "Node",
  configmaps: "ConfigMap",
  events: "Event",
  persistentvolumeclaims: "PersistentVolumeClaim",
  persistentvolumes: "PersistentVolume",
  storageclasses: "StorageClass",
  workloads: "Workload",
  podgroups: "PodGroup",
};

/** Refs of the resources the plugin reads. */
export const R = {
  services: (namespace: string, name?: string): ResourceRef => ({ group: "", version: "v1", resource: "services", namespace, ...(name ? { name } : {}) }),
  endpointSlices: (namespace: string): ResourceRef => ({ group: "discovery.k8s.io", version: "v1", resource: "endpointslices", namespace }),
  pods: (namespace?: string, name?: string, subresource?: string): ResourceRef => ({
    group: "",
    version: "v1",
    resource: "pods",
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name ? { name } : {}),
    ...(subresource ? { subresource } : {}),
  }),
  resourceClaims: (namespace: string, name: string, version: string): ResourceRef => ({ group: "resource.k8s.io", version, resource: "resourceclaims", namespace, name }),
  csiDrivers: (): ResourceRef => ({ group: "storage.k8s.io", version: "v1", resource: "csidrivers" }),
  csiStorageCapacities: (): ResourceRef => ({ group: "storage.k8s.io", version: "v1", resource: "csistoragecapacities" }),
  volumeAttributesClasses: (name: string, version: string): ResourceRef => ({ group: "storage.k8s.io", version, resource: "volumeattributesclasses", name }),
  /** scheduling.k8s.io/v1alpha1 Workloads (v1.35 alpha): the pod groups GangScheduling reads. */
  workloads: (namespace: string): ResourceRef => ({ group: "scheduling.k8s.io", version: "v1alpha1", resource: "workloads", namespace }),
  /** scheduling.k8s.io PodGroups (v1.36+) at `version` (v1alpha2 in v1.36, v1alpha3 in v1.37): the groups GangScheduling reads. */
  podGroups: (namespace: string, version: string): ResourceRef => ({ group: "scheduling.k8s.io", version, resource: "podgroups", namespace }),
  csiNodes: (): ResourceRef => ({ group: "storage.k8s.io", version: "v1", resource: "csinodes" }),
  namespaces: (): ResourceRef => ({ group: "", version: "v1", resource: "namespaces" }),
  nodes: (name?: string): ResourceRef => ({ group: "", version: "v1", resource: "nodes", ...(name ? { name } : {}) }),
  configMaps: (namespace: string, name?: string): ResourceRef => ({ group: "", version: "v1", resource: "configmaps", namespace, ...(name ? { name } : {}) }),
  allDaemonSets: (): ResourceRef => ({ group: "apps", version: "v1", resource: "daemonsets" }),
  daemonSets: (namespace: string, name?: string): ResourceRef => ({ group: "apps", version: "v1", resource: "daemonsets", namespace, ...(name ? { name } : {}) }),
  events: (namespace: string): ResourceRef => ({ group: "", version: "v1", resource: "events", namespace }),
  pvcs: (namespace: string, name?: string): ResourceRef => ({ group: "", version: "v1", resource: "persistentvolumeclaims", namespace, ...(name ? { name } : {}) }),
  pvs: (name?: string): ResourceRef => ({ group: "", version: "v1", resource: "persistentvolumes", ...(name ? { name } : {}) }),
  storageClasses: (name?: string): ResourceRef => ({ group: "storage.k8s.io", version: "v1", resource: "storageclasses", ...(name ? { name } : {}) }),
  selfSubjectAccessReviews: (): ResourceRef => ({ group: "authorization.k8s.io", version: "v1", resource: "selfsubjectaccessreviews" }),
};
