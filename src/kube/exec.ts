/**
 * Edge: one exec in a pod over WebSocket with client-node's `Exec` (protocols v5.channel.k8s.io, then
 * v4.channel.k8s.io, ...; the server picks). Output is collected in memory; the exec's `Status` (channel 3) gives the
 * outcome. A socket that closes without a Status, or that is cut by the time limit, is reported as such: the caller
 * then finds the missing section markers and marks those sections truncated.
 *
 * The socket is created through a factory so that it can be terminated on timeout or Ctrl-C even while the
 * upgrade is pending, and so that the HTTP status of a refused upgrade (403 on pods/exec, 404 pod gone) is known.
 * client-node's WebSocketHandler is given private sink streams: by default it would end the process's own
 * stdout/stderr when a v5 server half-closes a channel.
 *
 * Uses `node:stream` and the `ws` package, which Node and Deno 2 both run.
 * @module
 */
import { Buffer } from "node:buffer";
import { PassThrough, Writable } from "node:stream";
import type { KubeConfig } from "@kubernetes/client-node";
import type WebSocket from "ws";
import { constants as zlibConstants, gunzipSync } from "node:zlib";
import { formatMs } from "./duration.ts";
import { ApiUnreachableError, apiError, type KubeApiError } from "./errors.ts";
import { describeRequest } from "./rest.ts";
import { shareTlsAgent } from "./tls_agent.ts";

/** What one exec gave. */
export interface ExecOutcome {
  stdout: string;
  stderr: string;
  /** The exec's Status (channel 3), when it arrived. */
  status?: { status?: string; message?: string; reason?: string; exitCode?: number };
  /** The subprotocol the server chose, e.g. `v5.channel.k8s.io`. */
  protocol: string;
  /** How the stream ended: `status` (normal), `closed` (socket closed without a Status), `timeout`, `aborted`. */
  end: "status" | "closed" | "timeout" | "aborted";
  /** Bytes of stdout as they came over the stream (compressed, when the command compressed them). */
  stdoutBytes: number;
  /** Whether stdout came as a gzip stream (inflated into `stdout`). */
  stdoutCompressed: boolean;
}

/**
 * Most bytes one exec's stdout (and, apart, its stderr) may hold, as they come over the stream and after a gzip stream
 * is inflated: 256 MiB, the default `--max-bundle-size` (src/io/read_bundle.ts DEFAULT_MAX_BUNDLE_BYTES), so that what
 * is collected can be read back from a bundle. A 10,000-Service iptables-save is ~30 MB; more comes only from a
 * hostile or broken image (a gzip bomb: 17 MB on the wire inflated to 3.9 GB).
 */
export const MAX_EXEC_OUTPUT_BYTES = 256 * 1024 * 1024;

/**
 * An exec's output that cannot be read: more than the limit ({@link MAX_EXEC_OUTPUT_BYTES}) as sent or once inflated,
 * or a gzip stream that does not inflate. The collection of that node fails with this message (collect_node.ts).
 */
export class ExecOutputError extends Error {
  override name = "ExecOutputError";
}

/** Options of {@link execInPod}. */
export interface ExecOptions {
  /** Give up (terminate the socket) after this many ms. */
  timeoutMs: number;
  /** Abort (Ctrl-C). */
  signal?: AbortSignal;
  /** Context name, for messages. */
  context: string;
  /** The `--kubeconfig` file given, for the kubectl command a 401 message suggests. */
  kubeconfig?: string;
  /**
   * Text sent on the exec's stdin (`stdin=true`), e.g. a script for `sh -s`. Its end is never signalled (over v4
   * client-node would close the socket), so the command must not wait for end of input.
   */
  stdin?: string;
  /** Most bytes of stdout and of stderr, sent and inflated; default {@link MAX_EXEC_OUTPUT_BYTES}. */
  maxOutputBytes?: number;
}

/** What a {@link Collector} could not read: too many bytes (sent, or inflated), or a gzip stream that does not inflate. */
type Unreadable = { why: "sent" | "inflated"; limit: number } | { why: "corrupt"; detail: string };

/** One channel's bytes, at most `limit` of them; past it, the rest is dropped and `overflowed` says so. */
class Collector extends Writable {
  chunks: Buffer[] = [];
  /** Bytes that came (kept or not). */
  received = 0;
  overflowed = false;
  constructor(readonly limit: number, readonly onOverflow: () => void) {
    super();
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    const b = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    this.received += b.length;
    if (this.overflowed) return cb();
    if (this.received > this.limit) {
      // not kept: the exec is stopped (onOverflow) and the node's collection fails, saying why
      this.overflowed = true;
      this.chunks = [];
      this.onOverflow();
      return cb();
    }
    this.chunks.push(b);
    cb();
  }
  size(): number {
    return this.received;
  }
  /** Whether the bytes are a gzip stream (magic 1f 8b). */
  gzip(): boolean {
    const b = this.chunks.find((c) => c.length > 0);
    if (!b) return false;
    const second = b.length >= 2 ? b[1] : this.chunks.find((c) => c !== b && c.length > 0)?.[0];
    return b[0] === 0x1f && second === 0x8b;
  }
  /**
   * The bytes as UTF-8; a gzip stream (magic 1f 8b: the whole-node collection compresses its stdout) is inflated
   * first — a cut stream to the last byte that decodes (Z_SYNC_FLUSH), so its sections still read as truncated — to at
   * most `limit` bytes (zlib's maxOutputLength).
   * @returns the text, or what made it unreadable.
   */
  text(): string | Unreadable {
    if (this.overflowed) return { why: "sent", limit: this.limit };
    const b = Buffer.concat(this.chunks);
    if (!this.gzip()) return b.toString("utf8");
    let inflated: Buffer;
    try {
      inflated = gunzipSync(b, { finishFlush: zlibConstants.Z_SYNC_FLUSH, maxOutputLength: this.limit });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ERR_BUFFER_TOO_LARGE" || e instanceof RangeError) return { why: "inflated", limit: this.limit };
      return { why: "corrupt", detail: (e as Error).message };
    }
    if (inflated.length >= this.limit) return { why: "inflated", limit: this.limit };
    return inflated.toString("utf8");
  }
}

/**
 * The message of an exec's unreadable output, with what to do.
 * @param what `the stdout of pod NS/NAME`.
 */
function unreadableMessage(what: string, u: Unreadable): string {
  const next = "the image may be broken or hostile: collect the node with another image (--via debug-pod, --image), or analyse the other nodes only (--node NAME for each)";
  if (u.why === "corrupt") return `${what} is a corrupt gzip stream (${u.detail}): not read; ${next}`;
  const limit = formatLimit(u.limit);
  return u.why === "sent"
    ? `${what} exceeded ${limit} as sent: not read, the exec was stopped; ${next}`
    : `${what} exceeded ${limit} after decompression (a gzip bomb, or node state far beyond any cluster's): not read; ${next}`;
}

/** `256 MiB`. */
function formatLimit(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`;
}

/** What this module uses of a `ws` socket (client-node's WebSocketHandler drives the rest). */
interface WsLike {
  protocol: string;
  readyState: number;
  on(ev: string, fn: (...a: unknown[]) => void): void;
  terminate(): void;
  close(): void;
}

function exitCodeOf(st: { status?: string; details?: { causes?: { reason?: string; message?: string }[] } }): number | undefined {
  if (st.status === "Success") return 0;
  const c = st.details?.causes?.find((x) => x.reason === "ExitCode");
  return c?.message !== undefined && /^\d+$/.test(c.message) ? Number(c.message) : undefined;
}

/**
 * Runs `command` (argv) in a container and collects its output.
 * @param kc the kubeconfig (TLS and credentials of the socket).
 * @param namespace pod namespace.
 * @param pod pod name.
 * @param container container name.
 * @param command argv, e.g. `["sh", "-c", SCRIPT]`.
 * @param o time limit, abort signal.
 * @returns the output and how the stream ended (a cut stream resolves, with `end` saying so).
 * @throws {KubeApiError} when the server refuses the upgrade (403 pods/exec, 404 pod, 400 container not found).
 * @throws {ApiUnreachableError} when the socket cannot be opened at all, or the upgrade times out.
 * @throws {ExecOutputError} when stdout or stderr exceeds `o.maxOutputBytes` ({@link MAX_EXEC_OUTPUT_BYTES}) as sent
 *   or once inflated, or is a gzip stream that does not inflate; the message says so and what to do.
 */
export async function execInPod(
  kc: KubeConfig,
  namespace: string,
  pod: string,
  container: string,
  command: readonly string[],
  o: ExecOptions,
): Promise<ExecOutcome> {
  // `ws` with client-node, on first use: importing it reads the environment (WS_NO_BUFFER_UTIL), which a program that
  // imports the library (mod.ts) without live commands would otherwise need Deno's --allow-env for
  const [{ Exec, WebSocketHandler }, { default: WebSocketClient }] = await Promise.all([import("./client_node.ts"), import("ws")]);
  const server = kc.getCurrentCluster()?.server ?? "";
  // An exec over WebSocket is an HTTP GET: authorized as "get" on pods/exec (and, from v1.35, also as "create": errors.ts EXEC_VERBS)
  const request = describeRequest("get", { group: "", version: "v1", resource: "pods", namespace, name: pod, subresource: "exec" });
  let socket: WsLike | undefined;
  let refused: KubeApiError | undefined;
  const factory = (uri: string, protocols: string[], opts: unknown): WsLike => {
    // The `ws` client client-node itself uses (same package, deduplicated by npm; bundled into dist/).
    shareTlsAgent(kc, opts as Record<string, unknown>);
    const ws: WsLike = new WebSocketClient(uri, protocols, opts as WebSocket.ClientOptions) as unknown as WsLike;
    socket = ws;
    ws.on("unexpected-response", (_req: unknown, res: unknown) => {
      const r = res as { statusCode?: number; on(ev: string, f: (c?: Buffer) => void): void };
      const body: Buffer[] = [];
      r.on("data", (c) => c && body.push(c));
      r.on("end", () => {
        refused = apiError(r.statusCode ?? 0, Buffer.concat(body).toString("utf8"), request, { url: server, context: o.context, ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}) });
        (ws as unknown as { emit(ev: string, e: Error): void }).emit("error", refused);
        ws.terminate();
      });
    });
    return ws;
  };
  const sink = () => new Writable({ write: (_c, _e, cb) => cb() });
  const handler = new WebSocketHandler(kc, factory as never, { stdin: new PassThrough(), stdout: sink(), stderr: sink() });
  const exec = new Exec(kc, handler);
  const limit = o.maxOutputBytes ?? MAX_EXEC_OUTPUT_BYTES;
  // past the limit, nothing more is wanted: the socket is closed (the stream reads as cut, and the error says why)
  const out = new Collector(limit, () => socket?.terminate());
  const err = new Collector(limit, () => socket?.terminate());
  let status: ExecOutcome["status"];
  let end: ExecOutcome["end"] | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = (why: "timeout" | "aborted") => {
    end ??= why;
    socket?.terminate();
  };
  timer = setTimeout(() => stop("timeout"), o.timeoutMs);
  const onAbort = () => stop("aborted");
  o.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    if (o.signal?.aborted) throw new ApiUnreachableError(`exec in pod ${namespace}/${pod} cancelled`);
    let ws: WsLike;
    try {
      // Never ended: client-node closes the whole socket when stdin ends over v4 (no half-close there); the command
      // must exit on its own (the targeted script's group ends with `exit 0`).
      let stdin: PassThrough | null = null;
      if (o.stdin !== undefined) {
        stdin = new PassThrough();
        stdin.write(Buffer.from(o.stdin));
      }
      ws = await exec.exec(namespace, pod, container, [...command], out, err, stdin, false, (st) => {
        const s = st as { status?: string; message?: string; reason?: string; details?: { causes?: { reason?: string; message?: string }[] } };
        status = {};
        if (s.status !== undefined) status.status = s.status;
        if (s.message !== undefined) status.message = s.message;
        if (s.reason !== undefined) status.reason = s.reason;
        const code = exitCodeOf(s);
        if (code !== undefined) status.exitCode = code;
      }) as unknown as WsLike;
    } catch (e) {
      if (refused) throw refused;
      if (end === "timeout") throw new ApiUnreachableError(`exec in pod ${namespace}/${pod}: no answer within ${formatMs(o.timeoutMs)}`);
      if (end === "aborted") throw new ApiUnreachableError(`exec in pod ${namespace}/${pod} cancelled`);
      const m = /Unexpected server response: (\d+)/.exec((e as Error)?.message ?? "");
      if (m) throw apiError(Number(m[1]), "", request, { url: server, context: o.context, ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}) });
      const msg = (e as { message?: string })?.message ?? String(e);
      throw new ApiUnreachableError(`cannot open an exec stream to pod ${namespace}/${pod} through ${server}: ${msg}`);
    }
    await new Promise<void>((resolve) => {
      if (ws.readyState === 3) resolve();
      else ws.on("close", () => resolve());
    });
    end ??= status ? "status" : "closed";
    const stdout = out.text();
    if (typeof stdout !== "string") throw new ExecOutputError(unreadableMessage(`the output of pod ${namespace}/${pod}`, stdout));
    const stderr = err.text();
    if (typeof stderr !== "string") throw new ExecOutputError(unreadableMessage(`the stderr of pod ${namespace}/${pod}`, stderr));
    return { stdout, stderr, ...(status ? { status } : {}), protocol: ws.protocol, end, stdoutBytes: out.size(), stdoutCompressed: out.gzip() };
  } finally {
    clearTimeout(timer);
    timer = undefined;
    o.signal?.removeEventListener("abort", onAbort);
  }
}
