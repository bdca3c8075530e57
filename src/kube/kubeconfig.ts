/**
 * Edge: finds and loads the kubeconfig as kubectl does, into a client-node `KubeConfig`.
 * - `--kubeconfig FILE` alone, when given (it must exist);
 * - else `KUBECONFIG` (several files separated by `:`; missing files are skipped), merged kubectl style
 *   ({@link mergeKubeconfigs});
 * - else `~/.kube/config`;
 * - else, inside a pod, the in-cluster config (`KUBERNETES_SERVICE_HOST`/`_PORT` and the service account token).
 * `--context` picks the context (else `current-context`); the namespace is the context's, else `default`.
 *
 * client-node is imported lazily here: only live commands pay for it. Uses `node:fs`, which Node and Deno 2 provide.
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import { parse as parseYaml } from "yaml";
import { KubeconfigError } from "./errors.ts";
import { deniedDenoPermission } from "../model/errors.ts";
import { type KubeconfigDoc, KubeconfigShapeError, mergeKubeconfigs, type RawKubeconfig } from "./kubeconfig_merge.ts";

/** Where to look, from flags and environment. */
export interface KubeconfigOptions {
  /** Environment (KUBECONFIG, HOME, KUBERNETES_SERVICE_HOST/PORT). */
  env: Record<string, string | undefined>;
  /** Current directory, for relative paths. */
  cwd: string;
  /** `--kubeconfig`. */
  kubeconfig?: string;
  /** `--context`. */
  context?: string;
  /** Service account directory for in-cluster config. @default "/var/run/secrets/kubernetes.io/serviceaccount" */
  serviceAccountDir?: string;
}

/** A loaded kubeconfig and what was chosen from it. */
export interface LoadedKubeconfig {
  kc: KubeConfig;
  /** The context used. */
  context: string;
  /** The context's namespace, or "default". */
  namespace: string;
  /** API server URL. */
  server: string;
  /** The context's user name, when it has one. */
  user?: string;
  /** Files read (or "in-cluster"). */
  sources: string[];
}

const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** The largest kubeconfig read (kubectl's are a few kB; one with many clusters' certificates inline, a few MB). */
const MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024;

function readDoc(path: string): KubeconfigDoc {
  let text: string;
  try {
    // a directory, a FIFO or /dev/zero would fail late, block, or fill memory: only a regular file of sane size is read
    const st = statSync(path);
    if (!st.isFile()) {
      const what = st.isDirectory() ? "a directory" : st.isFIFO() ? "a FIFO" : st.isCharacterDevice() ? "a character device" : st.isSocket() ? "a socket" : "not a regular file";
      throw new KubeconfigError(`kubeconfig ${path} is ${what}, not a file: pass --kubeconfig FILE`);
    }
    if (st.size > MAX_KUBECONFIG_BYTES) throw new KubeconfigError(`kubeconfig ${path} is ${st.size} bytes, more than a kubeconfig holds (16 MiB): check the path`);
    text = readFileSync(path, "utf8");
  } catch (e) {
    if (e instanceof KubeconfigError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "EACCES" ? "permission denied: make it readable, or pass --kubeconfig FILE" : code === "ENOENT" ? "no such file" : (e as Error).message;
    throw new KubeconfigError(`cannot read kubeconfig ${path}: ${why}`);
  }
  try {
    return { path, doc: parseYaml(text) as unknown };
  } catch (e) {
    throw new KubeconfigError(`kubeconfig ${path} is not valid YAML: ${(e as Error).message.split("\n")[0]!.replace(/:$/, "")}`);
  }
}

function inCluster(o: KubeconfigOptions): RawKubeconfig | undefined {
  const host = o.env.KUBERNETES_SERVICE_HOST;
  const port = o.env.KUBERNETES_SERVICE_PORT;
  const dir = o.serviceAccountDir ?? SA_DIR;
  if (!host || !port || !existsSync(`${dir}/token`)) return undefined;
  const h = host.includes(":") ? `[${host}]` : host;
  let namespace: string | undefined;
  try {
    namespace = readFileSync(`${dir}/namespace`, "utf8").trim() || undefined;
  } catch {
    namespace = undefined;
  }
  return {
    "current-context": "in-cluster",
    clusters: [{ name: "in-cluster", cluster: { server: `https://${h}:${port}`, "certificate-authority": `${dir}/ca.crt` } }],
    users: [{ name: "in-cluster", user: { tokenFile: `${dir}/token` } }],
    contexts: [{ name: "in-cluster", context: { cluster: "in-cluster", user: "in-cluster", ...(namespace ? { namespace } : {}) } }],
  };
}

/**
 * Turns kubectl-only user fields into ones client-node reads: `tokenFile` → `token` (read now, trimmed, as client-go
 * does; client-node would send the trailing newline).
 */
function adaptUsers(raw: RawKubeconfig): void {
  for (const u of raw.users) {
    const user = u.user as Record<string, unknown> | undefined;
    if (!user) continue;
    if (typeof user.tokenFile === "string" && user.token === undefined) {
      try {
        user.token = readFileSync(user.tokenFile, "utf8").trim();
      } catch (e) {
        throw new KubeconfigError(`user "${u.name}": cannot read tokenFile ${user.tokenFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
      delete user.tokenFile;
    }
  }
}

/**
 * Loads the kubeconfig (see the module comment for the search order).
 * @param o flags and environment.
 * @returns the client-node KubeConfig with the chosen context set current, and what was chosen.
 * @throws {KubeconfigError} with a message saying what is wrong and what to do, e.g.
 *   `context "prod" not found in kubeconfig /home/me/.kube/config (contexts: kind-lab, minikube)`,
 *   `no kubeconfig found (KUBECONFIG is unset and /home/me/.kube/config does not exist): pass --kubeconfig, or
 *   analyse a saved bundle with --from`.
 */
export async function loadKubeconfig(o: KubeconfigOptions): Promise<LoadedKubeconfig> {
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(o.cwd, p));
  let docs: KubeconfigDoc[] = [];
  let sources: string[];
  let raw: RawKubeconfig | undefined;
  if (o.kubeconfig !== undefined && o.kubeconfig !== "") {
    const p = abs(o.kubeconfig);
    if (!existsSync(p)) throw new KubeconfigError(`--kubeconfig ${o.kubeconfig}: no such file`);
    docs = [readDoc(p)];
    sources = [p];
  } else if (o.env.KUBECONFIG !== undefined && o.env.KUBECONFIG !== "") {
    const listed = o.env.KUBECONFIG.split(":").filter((f) => f !== "").map(abs);
    sources = listed.filter((f) => existsSync(f));
    if (sources.length === 0) throw new KubeconfigError(`none of the files in KUBECONFIG exists (${listed.join(", ")})`);
    docs = sources.map(readDoc);
  } else {
    const home = o.env.HOME ?? o.env.USERPROFILE;
    const def = home ? `${home}/.kube/config` : undefined;
    if (def && existsSync(def)) {
      docs = [readDoc(def)];
      sources = [def];
    } else {
      raw = inCluster(o);
      if (!raw) {
        throw new KubeconfigError(
          `no kubeconfig found (KUBECONFIG is unset and ${def ?? "~/.kube/config"} does not exist, and this is not a pod): ` +
            `pass --kubeconfig FILE, or analyse a saved bundle with --from`,
        );
      }
      sources = ["in-cluster"];
    }
  }
  if (!raw) {
    try {
      raw = mergeKubeconfigs(docs);
    } catch (e) {
      if (e instanceof KubeconfigShapeError) throw new KubeconfigError(`kubeconfig ${e.message}`);
      throw e;
    }
  }
  const where = sources.join(", ");
  // `--context ""` is no context given, as kubectl reads it (a script passing --context "$CTX" with CTX empty)
  const contextName = o.context || raw["current-context"];
  const names = raw.contexts.map((c) => c.name);
  if (contextName === undefined) {
    throw new KubeconfigError(`no current-context is set in kubeconfig ${where}: pass --context (contexts: ${names.join(", ") || "none"})`);
  }
  const ctx = raw.contexts.find((c) => c.name === contextName);
  if (!ctx) {
    throw new KubeconfigError(`context "${contextName}" not found in kubeconfig ${where} (contexts: ${names.join(", ") || "none"})`);
  }
  const c = (ctx.context ?? {}) as { cluster?: string; user?: string; namespace?: string };
  const cluster = raw.clusters.find((x) => x.name === c.cluster);
  if (!cluster) throw new KubeconfigError(`context "${contextName}" refers to cluster "${c.cluster ?? ""}", which is not in kubeconfig ${where}`);
  if (c.user && !raw.users.some((u) => u.name === c.user)) {
    throw new KubeconfigError(`context "${contextName}" refers to user "${c.user}", which is not in kubeconfig ${where}`);
  }
  if (/^http:\/\//i.test(String((cluster.cluster as { server?: unknown } | undefined)?.server ?? ""))) {
    // A plain http:// server (kubectl proxy's `http://127.0.0.1:8001`), which kubectl (client-go) talks to without TLS.
    // client-node 1.4 createAgent refuses http:// unless insecure-skip-tls-verify is set (dist/config.js: "HTTP protocol
    // is not allowed when skipTLSVerify is not set or false"), and with it makes a plain http.Agent (and ws:// for
    // exec, web-socket-handler.js): set here, there being no TLS to verify.
    cluster.cluster = { ...(cluster.cluster as Record<string, unknown>), "insecure-skip-tls-verify": true };
  }
  if (!c.user) {
    // A context without a user (kubectl sends no credentials then): client-node 1.4 applyHTTPSOptions returns before it
    // applies the cluster's certificate-authority or insecure-skip-tls-verify when there is no current user
    // (dist/config.js), which fails TLS with a CA the kubeconfig names. An empty user of its own keeps the cluster's TLS
    // settings; the server's 401/403 then says what is missing.
    let anon = "kubectl-netpath:no-user";
    while (raw.users.some((u) => u.name === anon)) anon += "_";
    raw.users.push({ name: anon, user: {} });
    ctx.context = { ...c, user: anon };
  }
  adaptUsers(raw);
  raw["current-context"] = contextName;
  const { KubeConfig } = await import("./client_node.ts");
  const kc = new KubeConfig();
  try {
    kc.loadFromString(JSON.stringify(raw));
  } catch (e) {
    throw new KubeconfigError(`kubeconfig ${where}: ${(e as Error).message}`);
  }
  kc.setCurrentContext(contextName);
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new KubeconfigError(`cluster "${c.cluster}" of context "${contextName}" has no server address (kubeconfig ${where})`);
  let url: URL | undefined;
  try {
    url = new URL(server);
  } catch { /* said below */ }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.hostname === "") {
    throw new KubeconfigError(`cluster "${c.cluster}" of context "${contextName}" has server ${JSON.stringify(server)}, not an https:// URL: fix clusters[].cluster.server in kubeconfig ${where}`);
  }
  // the files the cluster and user name are read per request, where a missing one is a bare ENOENT: say which field
  const files: [string, string | undefined][] = [
    [`cluster "${c.cluster}" certificate-authority`, kc.getCurrentCluster()?.caFile],
    [`user "${c.user ?? ""}" client-certificate`, kc.getCurrentUser()?.certFile],
    [`user "${c.user ?? ""}" client-key`, kc.getCurrentUser()?.keyFile],
  ];
  for (const [field, file] of files) {
    if (!file) continue;
    let problem: string | undefined;
    try {
      if (!statSync(file).isFile()) problem = "is not a file";
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      problem = code === "ENOENT" ? "does not exist" : code === "EACCES" ? "cannot be read (permission denied)" : `cannot be read (${code ?? (e as Error).message})`;
    }
    if (problem) throw new KubeconfigError(`${field} ${file} ${problem}: fix the path in kubeconfig ${where}`);
  }
  const out: LoadedKubeconfig = { kc, context: contextName, namespace: c.namespace || "default", server, sources };
  if (c.user) out.user = c.user;
  return out;
}

/** Text from a credential plugin as a message quotes it: printable ASCII, at most 80 characters. */
function quotePrinted(text: string): string {
  const t = text.trim().replace(/[^\x20-\x7e]/g, "?");
  return JSON.stringify(t.length > 80 ? t.slice(0, 80) + "…" : t);
}

/**
 * Explains an error of the current user's exec credential plugin (client.authentication.k8s.io ExecCredential, run
 * by client-node's ExecAuth when a request is prepared): the plugin's command, and what it printed or why it failed.
 * @param e the error client-node raised while applying the credentials.
 * @param kc the loaded kubeconfig (its current user).
 * @param context the context name, for the message.
 * @returns a {@link KubeconfigError} naming the plugin (and, under Deno, the `--allow-*` flag the run lacks when Deno
 *   denied starting it: Deno 2 `NotCapable`), or undefined when the user has no exec plugin.
 */
export function credentialPluginError(e: unknown, kc: KubeConfig, context: string): KubeconfigError | undefined {
  const user = kc.getCurrentUser();
  const exec = user?.exec as { command?: string; args?: string[] } | undefined;
  if (!user || !exec?.command) return undefined;
  const cmd = [exec.command, ...(exec.args ?? [])].join(" ");
  const who = `the exec credential plugin \`${cmd.length > 80 ? cmd.slice(0, 80) + "…" : cmd}\` of user "${user.name}" (context "${context}")`;
  const tryIt = `run it yourself to see what it prints, and fix it or the user's exec section in your kubeconfig`;
  // Deno 2 NotCapable: the plugin was never started (--allow-run), or its environment not built (--allow-env)
  const flag = deniedDenoPermission(e);
  if (flag !== undefined) return new KubeconfigError(`${who} could not be run: Deno was not granted ${flag}: run again with ${flag} (or -A)`);
  const err = e as NodeJS.ErrnoException;
  if (err.code === "ENOENT") return new KubeconfigError(`${who} was not found: install ${exec.command}, or fix users[].user.exec.command in your kubeconfig`);
  if (err.code === "EACCES") return new KubeconfigError(`${who} is not executable (permission denied): ${tryIt}`);
  if (e instanceof SyntaxError) {
    // V8 quotes the start of the text: `Unexpected token 'P', "Please vis"... is not valid JSON`.
    const m = /"(.*)"(\.\.\.)? is not valid JSON/s.exec(e.message);
    const printed = /Unexpected end of JSON input/.test(e.message) && m === null
      ? "nothing"
      : m !== null
      ? quotePrinted(m[1]!).replace(/"$/, m[2] ? `…"` : `"`)
      : "text";
    return new KubeconfigError(`${who} printed ${printed}, not an ExecCredential in JSON: ${tryIt}`);
  }
  if (e instanceof Error) {
    // client-node rejects with the plugin's stderr when it exits non-zero.
    const said = e.message.trim();
    return new KubeconfigError(`${who} failed${said ? `, saying ${quotePrinted(said.split("\n")[0]!)}` : " without a message"}: ${tryIt}`);
  }
  return undefined;
}
