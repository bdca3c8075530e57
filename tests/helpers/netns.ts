/**
 * Network-namespace test harness: real iptables (nft and legacy backends) inside throw-away Linux network
 * namespaces, so tests can load the buffers kube-proxy hands to `iptables-restore` and read back exactly what a node
 * prints with `iptables-save`.
 *
 * Small API, used by several suites:
 * - {@link netnsAvailable} / {@link requireNetns}: gate a suite (`describe.runIf(requireNetns())`); under `CI=true` a
 *   missing capability throws instead of skipping.
 * - {@link createNetns}: a uniquely named namespace with `exec`/`run`/`destroy`; every namespace this process created
 *   is deleted at process exit (and on SIGINT/SIGTERM when nobody else handles them).
 * - {@link loadIptables} / {@link readIptables}: `iptables-restore --noflush` (kube-proxy's own flags) and
 *   `iptables-save`, per backend and IP family.
 * - {@link installKubeProxyJumps}: the jumps from builtin chains that kube-proxy installs outside its restore buffer.
 *
 * Edge code for tests only: spawns `ip`, `iptables-*-restore`, `iptables-*-save`, `nfacct` with argv arrays (never a
 * shell). Needs root, iproute2 and the `iptables` package (scripts/ci-setup.sh installs them). Runs on Node and on
 * Deno's Node compatibility layer.
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import process from "node:process";

/** iptables backend: `nft` = iptables-nft (nf_tables kernel API), `legacy` = iptables-legacy (x_tables). */
export type IptablesBackend = "nft" | "legacy";

/** IP family of an iptables ruleset: 4 → `iptables-*`, 6 → `ip6tables-*`. */
export type IpFamily = 4 | 6;

/** Outcome of one command run inside a namespace. `code` is the exit status (never null: a signal gives 128+n). */
export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link Netns.exec} and {@link Netns.run}. */
export interface ExecOptions {
  /** Text written to the command's stdin, then stdin is closed. @default no input (stdin closed at once) */
  input?: string;
  /** Kill the command (SIGKILL) after this many milliseconds and throw {@link CommandError}. @default 30000 */
  timeoutMs?: number;
}

/** A network namespace created by {@link createNetns}. */
export interface Netns {
  /** Namespace name as shown by `ip netns list`: `knp-<prefix>-<pid>-<n>`. */
  readonly name: string;
  /**
   * Runs `ip netns exec <name> ...argv` and resolves with its exit code and output, whatever the exit code.
   * @throws {CommandError} when the command cannot be started or exceeds `timeoutMs`.
   */
  exec(argv: readonly string[], options?: ExecOptions): Promise<ExecResult>;
  /**
   * Like {@link Netns.exec} but resolves with stdout only when the exit code is 0.
   * @throws {CommandError} on a non-zero exit code, with the first stderr line in the message.
   */
  run(argv: readonly string[], options?: ExecOptions): Promise<string>;
  /** Kills every process still inside the namespace (`ip netns pids`), then deletes it (`ip netns delete`). Idempotent. */
  destroy(): Promise<void>;
}

/** The harness cannot run here (not root, no `ip netns`, missing iptables binaries) and CI=true forbids skipping. */
export class NetnsUnavailableError extends Error {
  override name = "NetnsUnavailableError";
}

/** A command run by the harness failed to start, timed out, or (for `run`) exited non-zero. */
export class CommandError extends Error {
  override name = "CommandError";
  constructor(
    message: string,
    /** The argv run inside the namespace (without the `ip netns exec NAME` prefix). */
    readonly argv: readonly string[],
    /** Exit code, or undefined when the command did not start or timed out. */
    readonly code: number | undefined,
    /** Full stderr of the command ("" when it did not start). */
    readonly stderr: string,
  ) {
    super(message);
  }
}

/** `iptables-restore` rejected a buffer. The message quotes the restore command and its error line. */
export class IptablesRestoreError extends CommandError {
  override name = "IptablesRestoreError";
}

/** Bad argument to a harness function (e.g. a namespace prefix with characters `ip netns` refuses). */
export class NetnsUsageError extends Error {
  override name = "NetnsUsageError";
}

const NAME_MARKER = "knp";
const DEFAULT_TIMEOUT_MS = 30_000;
const SBIN_DIRS = ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/bin", "/bin"];

/**
 * Resolves a command name to a path, searching PATH and then the sbin directories (a non-login root shell may lack
 * /usr/sbin on PATH).
 * @returns the absolute path, or undefined when not found.
 */
export function findTool(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(":").filter((d) => d !== ""), ...SBIN_DIRS];
  for (const dir of dirs) {
    const p = `${dir}/${name}`;
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** The iptables binaries every netns suite needs (both backends, both families). */
const BASE_TOOLS = [
  "ip",
  "iptables-nft-restore",
  "iptables-nft-save",
  "iptables-legacy-restore",
  "iptables-legacy-save",
  "ip6tables-nft-restore",
  "ip6tables-nft-save",
  "ip6tables-legacy-restore",
  "ip6tables-legacy-save",
];

const reasonCache = new Map<string, string | null>();

/**
 * Why the harness cannot run here, or undefined when it can. Checks: uid 0, `ip netns list` succeeds, and every
 * tool in BASE_TOOLS plus `extraTools` is installed. Cached per `extraTools` set.
 * @param extraTools further commands the suite needs, e.g. `["conntrack"]` for the kernel oracle.
 */
export function netnsUnavailableReason(extraTools: readonly string[] = []): string | undefined {
  const key = [...extraTools].sort().join(",");
  const cached = reasonCache.get(key);
  if (cached !== undefined) return cached ?? undefined;
  let reason: string | null = null;
  const uid = typeof process.getuid === "function" ? process.getuid() : -1;
  if (process.platform !== "linux") {
    reason = `network namespaces need Linux (platform is ${process.platform})`;
  } else if (uid !== 0) {
    reason = `network namespaces need root (uid is ${uid})`;
  } else {
    const missing = [...BASE_TOOLS, ...extraTools].filter((t) => findTool(t) === undefined);
    if (missing.length > 0) {
      reason = `missing tools: ${missing.join(", ")} (run scripts/ci-setup.sh as root)`;
    } else {
      const r = spawnSync(findTool("ip")!, ["netns", "list"], { encoding: "utf8" });
      if (r.error !== undefined || r.status !== 0) {
        reason = `\`ip netns list\` failed: ${(r.error?.message ?? r.stderr ?? "").trim() || `exit ${r.status}`}`;
      }
    }
  }
  reasonCache.set(key, reason);
  return reason ?? undefined;
}

/**
 * True when network namespaces with real iptables can be used here (see {@link netnsUnavailableReason}).
 * @example
 * ```ts
 * import { netnsAvailable } from "../helpers/netns.ts";
 * describe.runIf(netnsAvailable())("iptables round-trip", () => { ... });
 * ```
 */
export function netnsAvailable(extraTools: readonly string[] = []): boolean {
  return netnsUnavailableReason(extraTools) === undefined;
}

/** True when the environment variable CI asks for strict mode (set and not "", "0" or "false"). */
export function isCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== "" && ci !== "0" && ci.toLowerCase() !== "false";
}

/**
 * Gate for suites that need the harness: returns true when available, false when not (the suite is skipped on a
 * developer machine), and THROWS when CI=true, so CI can never go green by silently skipping the kernel tests.
 * @param extraTools further commands the suite needs, e.g. `["conntrack"]`.
 * @throws {NetnsUnavailableError} "network namespace harness required under CI=true but unavailable: <reason>".
 * @example
 * ```ts
 * describe.runIf(requireNetns(["conntrack"]))("kernel oracle", () => { ... });
 * ```
 */
export function requireNetns(extraTools: readonly string[] = []): boolean {
  const reason = netnsUnavailableReason(extraTools);
  if (reason === undefined) return true;
  if (isCi()) {
    throw new NetnsUnavailableError(`network namespace harness required under CI=true but unavailable: ${reason}`);
  }
  reportSkip("network namespaces with real iptables/nftables", reason);
  return false;
}

/** The test file that called a gate, for the skip line. */
function callerFile(): string {
  const m = /(tests\/[\w./-]+\.test\.ts)/.exec(new Error().stack ?? "");
  return m ? m[1]! : "a test file";
}

const reported = new Set<string>();

/**
 * Prints, once per test file and group, why a group of tests is skipped and the command that enables it: on a
 * machine with only Node, `npm test` passes and says what it did not run.
 */
function reportSkip(group: string, reason: string): void {
  const file = callerFile();
  const key = `${file}|${group}`;
  if (reported.has(key)) return;
  reported.add(key);
  process.stderr.write(`[skipped] ${file}: ${group}: ${reason}; enable with: sudo bash scripts/ci-setup.sh\n`);
}

/**
 * Gate for suites that need commands other than the netns harness (openssl, zsh, fish, bash-completion, mkfifo…):
 * true when every one is installed; else false with one line on stderr saying what is missing and how to install it,
 * and under CI=true it throws, so CI never goes green by skipping.
 * @param group what the suite tests, for the skip line.
 * @param tools commands (looked up on PATH and the sbin directories) or absolute file paths.
 * @throws {NetnsUnavailableError} under CI=true when something is missing.
 */
export function requireTools(group: string, tools: readonly string[]): boolean {
  const missing = tools.filter((t) => (t.startsWith("/") ? !existsSync(t) : findTool(t) === undefined));
  return requireThat(group, missing.length === 0, `missing ${missing.join(", ")}`);
}

/**
 * The general gate: `ok`, or a skip with its reason (an error under CI=true), as {@link requireTools}.
 * @throws {NetnsUnavailableError} under CI=true when not `ok`.
 */
export function requireThat(group: string, ok: boolean, reason: string): boolean {
  if (ok) return true;
  if (isCi()) throw new NetnsUnavailableError(`${group} required under CI=true but unavailable: ${reason}`);
  reportSkip(group, reason);
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// Namespace lifecycle

const live = new Set<string>();
let counter = 0;
let hooksInstalled = false;

/**
 * Kills (SIGKILL) each process still inside namespace `name` (`ip netns pids`): deleting a namespace does not stop
 * what runs in it (a /proxyMode server loop, a listener), and the namespaces this harness makes hold only processes
 * it started.
 */
function killInsideSync(name: string): void {
  const r = spawnSync(findTool("ip") ?? "ip", ["netns", "pids", name], { encoding: "utf8" });
  if (r.status === 0) killPids(r.stdout);
}

/** SIGKILLs each pid of an `ip netns pids` listing (one per line), other than this process. */
function killPids(listing: string): void {
  for (const line of listing.split("\n")) {
    const pid = Number(line.trim());
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch { /* already gone */ }
  }
}

function deleteNetnsSync(name: string): void {
  killInsideSync(name);
  spawnSync(findTool("ip") ?? "ip", ["netns", "delete", name], { stdio: "ignore" });
}

function cleanupAllSync(): void {
  for (const name of live) deleteNetnsSync(name);
  live.clear();
}

function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.once("exit", cleanupAllSync);
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    // Only take over a signal nobody else handles; re-raise it afterwards so the default action (exit) still happens.
    if (process.listenerCount(sig) > 0) continue;
    const handler = (): void => {
      cleanupAllSync();
      process.removeListener(sig, handler);
      process.kill(process.pid, sig);
    };
    process.on(sig, handler);
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

let reaped = false;
/** Deletes `knp-*-<pid>-<n>` namespaces whose creating process is gone (left by a SIGKILLed run). Once per process. */
function reapStale(): void {
  if (reaped) return;
  reaped = true;
  const r = spawnSync(findTool("ip") ?? "ip", ["netns", "list"], { encoding: "utf8" });
  if (r.status !== 0) return;
  for (const line of r.stdout.split("\n")) {
    const name = line.split(" ")[0] ?? "";
    const m = new RegExp(`^${NAME_MARKER}-[a-z0-9-]+-(\\d+)-\\d+$`).exec(name);
    if (m === null) continue;
    const pid = Number(m[1]);
    if (pid !== process.pid && !pidAlive(pid)) deleteNetnsSync(name);
  }
}

/** Spawns argv (absolute tool resolution for argv[0]) and collects output. Used for host-side `ip` calls too. */
export function runArgv(argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
  const [cmd, ...args] = argv;
  if (cmd === undefined) return Promise.reject(new NetnsUsageError("runArgv: empty argv"));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn(findTool(cmd) ?? cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.stdin.on("error", () => {/* the command may exit before reading its input; its exit code tells */});
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new CommandError(`cannot run ${argv.join(" ")}: ${e.message}`, argv, undefined, ""));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString("utf8");
      if (timedOut) {
        reject(new CommandError(`timed out after ${timeoutMs} ms: ${argv.join(" ")}`, argv, undefined, stderr));
        return;
      }
      resolve({
        code: code ?? 128 + (signal === null ? 0 : signalNumber(signal)),
        stdout: Buffer.concat(out).toString("utf8"),
        stderr,
      });
    });
    child.stdin.end(options.input ?? "");
  });
}

function signalNumber(signal: string): number {
  return ({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal] ?? 0;
}

function firstLine(text: string): string {
  return text.split("\n").map((l) => l.trim()).find((l) => l !== "") ?? "";
}

/**
 * Creates a fresh network namespace named `knp-<prefix>-<pid>-<n>` (n counts per process), with `lo` up.
 * It is deleted by `destroy()`, or at the latest when this process exits (or gets SIGINT/SIGTERM); either way every
 * process still inside it is killed first.
 * @param prefix lowercase letters, digits and `-`, 1 to 20 characters, e.g. `"oracle"`.
 * @throws {NetnsUsageError} `invalid netns prefix "<prefix>": use 1-20 of [a-z0-9-]`.
 * @throws {CommandError} when `ip netns add` fails (not root, name taken).
 */
export async function createNetns(prefix: string): Promise<Netns> {
  if (!/^[a-z0-9][a-z0-9-]{0,19}$/.test(prefix)) {
    throw new NetnsUsageError(`invalid netns prefix "${prefix}": use 1-20 of [a-z0-9-]`);
  }
  installExitHooks();
  reapStale();
  counter += 1;
  const name = `${NAME_MARKER}-${prefix}-${process.pid}-${counter}`;
  const add = await runArgv(["ip", "netns", "add", name]);
  if (add.code !== 0) {
    throw new CommandError(`ip netns add ${name} failed: ${firstLine(add.stderr)}`, ["ip", "netns", "add", name], add.code, add.stderr);
  }
  live.add(name);
  let destroyed = false;
  const ns: Netns = {
    name,
    exec(argv, options) {
      if (destroyed) return Promise.reject(new NetnsUsageError(`netns ${name} was destroyed`));
      if (argv.length === 0) return Promise.reject(new NetnsUsageError("exec: empty argv"));
      const [cmd, ...rest] = argv as [string, ...string[]];
      return runArgv(["ip", "netns", "exec", name, findTool(cmd) ?? cmd, ...rest], options);
    },
    async run(argv, options) {
      const r = await ns.exec(argv, options);
      if (r.code !== 0) {
        throw new CommandError(
          `${argv.join(" ")} failed in netns ${name} (exit ${r.code}): ${firstLine(r.stderr)}`,
          argv,
          r.code,
          r.stderr,
        );
      }
      return r.stdout;
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      const pids = await runArgv(["ip", "netns", "pids", name]);
      if (pids.code === 0) killPids(pids.stdout);
      await runArgv(["ip", "netns", "delete", name]);
      live.delete(name);
    },
  };
  await ns.run(["ip", "link", "set", "lo", "up"]);
  return ns;
}

/** Names of the namespaces this process created and has not destroyed yet (for leak checks in tests). */
export function liveNetnsNames(): string[] {
  return [...live];
}

// ---------------------------------------------------------------------------------------------------------------
// iptables

/** The `iptables-*` binary for a backend, family and verb, e.g. `ip6tables-legacy-save`. */
export function iptablesBinary(backend: IptablesBackend, family: IpFamily, verb: "restore" | "save" | ""): string {
  const base = family === 6 ? "ip6tables" : "iptables";
  return verb === "" ? `${base}-${backend}` : `${base}-${backend}-${verb}`;
}

/** Options of {@link loadIptables}. */
export interface LoadIptablesOptions {
  backend: IptablesBackend;
  family: IpFamily;
  /**
   * Pass `--noflush`, as kube-proxy always does (pkg/util/iptables RestoreAll(..., NoFlushTables, ...)): tables and
   * chains the buffer does not declare are kept, so partial restores (TestSyncProxyRulesRepeated stages 2–9) apply
   * on top of earlier ones. A declared chain (`:CHAIN - [0:0]`) is flushed either way. @default true
   */
  noflush?: boolean;
}

/**
 * Loads an `iptables-restore` buffer into `ns` with `(ip6)iptables-<backend>-restore [--noflush] -w 5`.
 *
 * Before the restore, every nfacct counter the buffer names (`-m nfacct --nfacct-name X`, used by kube-proxy master
 * for ct_state_invalid_dropped_pkts and localhost_nps_accepted_pkts) is created with `nfacct add X`, because
 * kube-proxy creates them over netlink before it writes rules that use them, and xt_nfacct refuses unknown names
 * (`RULE_APPEND failed (No such file or directory)`).
 * @param ns namespace from {@link createNetns}.
 * @param text the restore buffer (kube-proxy form, or `iptables-save` output).
 * @throws {IptablesRestoreError} `<binary> failed in netns <name> (exit N): <first error line>`, e.g.
 *   `iptables-nft-restore failed in netns knp-x-1-1 (exit 2): iptables-nft-restore v1.8.9 (nf_tables): Chain
 *   'KUBE-SVC-XPGD46QRK7WJZT7O' does not exist`.
 * @throws {CommandError} `dump uses -m nfacct (--nfacct-name X) but the nfacct tool is not installed (apt-get install
 *   nfacct)`.
 */
export async function loadIptables(ns: Netns, text: string, options: LoadIptablesOptions): Promise<void> {
  const names = [...new Set([...text.matchAll(/--nfacct-name\s+"?([^\s"]+)"?/g)].map((m) => m[1]!))];
  if (names.length > 0) {
    if (findTool("nfacct") === undefined) {
      throw new CommandError(
        `dump uses -m nfacct (--nfacct-name ${names[0]}) but the nfacct tool is not installed (apt-get install nfacct)`,
        ["nfacct", "add", names[0]!],
        undefined,
        "",
      );
    }
    for (const n of names) {
      // `nfacct add` of an existing counter fails (EEXIST, or EBUSY while rules use it): add only missing ones.
      if ((await ns.exec(["nfacct", "get", n])).code === 0) continue;
      const r = await ns.exec(["nfacct", "add", n]);
      if (r.code !== 0) {
        throw new CommandError(`nfacct add ${n} failed in netns ${ns.name}: ${firstLine(r.stderr)}`, ["nfacct", "add", n], r.code, r.stderr);
      }
    }
  }
  const bin = iptablesBinary(options.backend, options.family, "restore");
  const argv = [bin, ...(options.noflush ?? true ? ["--noflush"] : []), "-w", "5"];
  const r = await ns.exec(argv, { input: text.endsWith("\n") ? text : `${text}\n` });
  if (r.code !== 0) {
    throw new IptablesRestoreError(
      `${bin} failed in netns ${ns.name} (exit ${r.code}): ${restoreErrorSummary(r.stderr)}`,
      argv,
      r.code,
      r.stderr,
    );
  }
}

/** iptables-nft-restore prints its version line, then the error on the next line; keep both on one line. */
function restoreErrorSummary(stderr: string): string {
  const lines = stderr.split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("Try `"));
  return lines.slice(0, 2).join(" ").replace(/:\s+line/, ": line");
}

/**
 * Reads the namespace's ruleset with `(ip6)iptables-<backend>-save` (all tables, or one with `table`), exactly as
 * printed, including the `# Generated by … on <date>` / `# Completed on <date>` lines.
 * @throws {CommandError} when the save command fails.
 */
export function readIptables(ns: Netns, backend: IptablesBackend, family: IpFamily, table?: string): Promise<string> {
  const argv = [iptablesBinary(backend, family, "save"), ...(table === undefined ? [] : ["-t", table])];
  return ns.run(argv);
}

/** Drops the `# Generated by …` / `# Completed on …` / `# Warning: …` comment lines (they carry dates and versions). */
export function stripSaveComments(text: string): string {
  return text
    .split("\n")
    .filter((l) => !l.startsWith("# "))
    .join("\n");
}

/** One jump from a builtin chain into a kube-proxy chain, as kube-proxy (or kubelet) installs it. */
export interface KubeProxyJump {
  table: "filter" | "nat";
  /** Builtin chain: INPUT, FORWARD, OUTPUT, PREROUTING, POSTROUTING. */
  chain: string;
  /** kube-proxy chain jumped to, e.g. KUBE-SERVICES. */
  target: string;
  /** Match arguments before the comment, e.g. `["-m", "conntrack", "--ctstate", "NEW"]`. */
  extraArgs: readonly string[];
  /** `-m comment --comment` text, or "" for kubelet's comment-less KUBE-FIREWALL jumps. */
  comment: string;
}

const NEW = ["-m", "conntrack", "--ctstate", "NEW"] as const;

/**
 * kube-proxy's jump list, in its order: iptablesJumpChains in pkg/proxy/iptables/proxier.go (kubernetes master,
 * ~v1.25+), each installed with `EnsureRule(Prepend, …)` (so later entries end up first in the builtin chain).
 */
export const KUBE_PROXY_JUMPS: readonly KubeProxyJump[] = [
  { table: "filter", chain: "INPUT", target: "KUBE-EXTERNAL-SERVICES", extraArgs: NEW, comment: "kubernetes externally-visible service portals" },
  { table: "filter", chain: "FORWARD", target: "KUBE-EXTERNAL-SERVICES", extraArgs: NEW, comment: "kubernetes externally-visible service portals" },
  { table: "filter", chain: "INPUT", target: "KUBE-NODEPORTS", extraArgs: [], comment: "kubernetes health check service ports" },
  { table: "filter", chain: "FORWARD", target: "KUBE-SERVICES", extraArgs: NEW, comment: "kubernetes service portals" },
  { table: "filter", chain: "OUTPUT", target: "KUBE-SERVICES", extraArgs: NEW, comment: "kubernetes service portals" },
  { table: "filter", chain: "FORWARD", target: "KUBE-FORWARD", extraArgs: [], comment: "kubernetes forwarding rules" },
  { table: "filter", chain: "INPUT", target: "KUBE-PROXY-FIREWALL", extraArgs: NEW, comment: "kubernetes load balancer firewall" },
  { table: "filter", chain: "OUTPUT", target: "KUBE-PROXY-FIREWALL", extraArgs: NEW, comment: "kubernetes load balancer firewall" },
  { table: "filter", chain: "FORWARD", target: "KUBE-PROXY-FIREWALL", extraArgs: NEW, comment: "kubernetes load balancer firewall" },
  { table: "nat", chain: "OUTPUT", target: "KUBE-SERVICES", extraArgs: [], comment: "kubernetes service portals" },
  { table: "nat", chain: "PREROUTING", target: "KUBE-SERVICES", extraArgs: [], comment: "kubernetes service portals" },
  { table: "nat", chain: "POSTROUTING", target: "KUBE-POSTROUTING", extraArgs: [], comment: "kubernetes postrouting rules" },
];

/**
 * kubelet's KUBE-FIREWALL jumps (pkg/kubelet/kubelet_network_linux.go; iptablesKubeletJumpChains in kube-proxy).
 * On a node kubelet installs them before kube-proxy starts, so they end up after kube-proxy's prepended jumps.
 */
export const KUBELET_JUMPS: readonly KubeProxyJump[] = [
  { table: "filter", chain: "INPUT", target: "KUBE-FIREWALL", extraArgs: [], comment: "" },
  { table: "filter", chain: "OUTPUT", target: "KUBE-FIREWALL", extraArgs: [], comment: "" },
];

/** Declared chain names per table in iptables-save output. */
export function declaredChains(saveText: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  let table: Set<string> | undefined;
  for (const line of saveText.split("\n")) {
    if (line.startsWith("*")) {
      table = new Set();
      out.set(line.slice(1).trim(), table);
    } else if (line.startsWith(":") && table !== undefined) {
      table.add(line.slice(1).split(" ")[0]!);
    }
  }
  return out;
}

function quoteArg(a: string): string {
  return /^[A-Za-z0-9_./:,=@%+-]+$/.test(a) ? a : `"${a.replace(/(["\\])/g, "\\$1")}"`;
}

/**
 * Adds the jumps from builtin chains that a real node has and kube-proxy's restore buffer lacks: kubelet's
 * `INPUT/OUTPUT -j KUBE-FIREWALL` first, then each of {@link KUBE_PROXY_JUMPS} inserted at position 1, in list
 * order, as kube-proxy's `EnsureRule(Prepend, …)` does. Resulting order, e.g. filter INPUT: KUBE-PROXY-FIREWALL,
 * KUBE-NODEPORTS, KUBE-EXTERNAL-SERVICES, KUBE-FIREWALL (as seen on real v1.25+ nodes).
 *
 * Only jumps whose target chain exists in the loaded table are added (kube-proxy's EnsureChain would create missing
 * ones empty; an empty chain changes no verdict). A jump already present (same chain, same target) is not added
 * again, so the call is idempotent and safe on node-format (`iptables-save`) dumps that carry the jumps.
 * One `iptables-restore --noflush` transaction.
 * @returns the jumps added, in the order applied.
 * @throws {IptablesRestoreError} when the restore fails.
 */
export async function installKubeProxyJumps(
  ns: Netns,
  backend: IptablesBackend,
  family: IpFamily = 4,
): Promise<KubeProxyJump[]> {
  const current = await readIptables(ns, backend, family);
  const chains = declaredChains(current);
  const existing = current.split("\n").filter((l) => l.startsWith("-A "));
  const has = (j: KubeProxyJump): boolean =>
    existing.some((l) => l.startsWith(`-A ${j.chain} `) && l.endsWith(` -j ${j.target}`));
  const added: KubeProxyJump[] = [];
  const lines: Record<"filter" | "nat", string[]> = { filter: [], nat: [] };
  const apply = (j: KubeProxyJump, op: "-A" | "-I"): void => {
    if (!chains.get(j.table)?.has(j.target) || has(j)) return;
    const args = [...j.extraArgs, ...(j.comment === "" ? [] : ["-m", "comment", "--comment", j.comment]), "-j", j.target];
    lines[j.table].push([op, j.chain, ...(op === "-I" ? ["1"] : []), ...args.map(quoteArg)].join(" "));
    added.push(j);
  };
  for (const j of KUBELET_JUMPS) apply(j, "-A");
  for (const j of KUBE_PROXY_JUMPS) apply(j, "-I");
  if (added.length === 0) return added;
  const buffer = (["filter", "nat"] as const)
    .filter((t) => lines[t].length > 0)
    .map((t) => [`*${t}`, ...lines[t], "COMMIT"].join("\n"))
    .join("\n");
  await loadIptables(ns, buffer, { backend, family, noflush: true });
  return added;
}

// ---------------------------------------------------------------------------------------------------------------
// Node-format fixtures (tests/fixtures/node-format/, written by scripts/gen-node-format.ts)

/** One node-format fixture: which restore buffers to load, in order, and how its outputs are named. */
export interface NodeFormatItem {
  /** The dump file this fixture is for, e.g. `TestNodePort.v1.27.iptables-save`. */
  source: string;
  family: IpFamily;
  /** Restore buffers to load in order: the file itself, or stages 1..N for TestSyncProxyRulesRepeated-N. */
  inputs: string[];
  /** Output file name for a backend, e.g. `TestNodePort.v1.27.nft.iptables-save`. */
  output(backend: IptablesBackend): string;
}

/**
 * The node-format fixture plan for a list of dump file names (`*.iptables-save` / `*.ip6tables-save`). Partial
 * restores `TestSyncProxyRulesRepeated-<n>-…` load every stage up to n, since kube-proxy applies them on top of the
 * previous state (MinimizeIPTablesRestore) and stages 2–9 reference chains they do not declare.
 */
export function nodeFormatPlan(files: readonly string[]): NodeFormatItem[] {
  const stages = files.filter((f) => /^TestSyncProxyRulesRepeated-\d+-/.test(f));
  const stageNo = (f: string): number => Number(/^TestSyncProxyRulesRepeated-(\d+)-/.exec(f)?.[1] ?? "0");
  return files
    .filter((f) => /\.ip6?tables-save$/.test(f))
    .map((source) => {
      const ext = source.endsWith(".ip6tables-save") ? "ip6tables-save" : "iptables-save";
      const base = source.slice(0, -(ext.length + 1));
      const n = stageNo(source);
      const inputs = n > 0 ? stages.filter((s) => stageNo(s) <= n).sort((a, b) => stageNo(a) - stageNo(b)) : [source];
      return {
        source,
        family: (ext === "ip6tables-save" ? 6 : 4) as IpFamily,
        inputs,
        output: (backend: IptablesBackend) => `${base}.${backend}.${ext}`,
      };
    });
}
