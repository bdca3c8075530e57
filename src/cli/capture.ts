/**
 * `kubectl netpath capture TYPE/NAME -o FILE`: writes the Bundle a live run would analyse, so that
 * `kubectl netpath TYPE/NAME --from FILE` later prints the same report (for bug reports, offline work, tests).
 * Secrets are never read, and the bundle keeps only the fields the analyses read (src/bundle/allow_list.ts: no env,
 * no ConfigMap key but kube-proxy's configuration, credentials in the text that remains redacted); the file is 0600.
 *
 * The live code is imported lazily: declaring this command loads no Kubernetes client.
 * @module
 */
import { collectOnce } from "./repeatable.ts";
import { accessSync, closeSync, constants, existsSync, fchmodSync, fsyncSync, lstatSync, openSync, readlinkSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import process from "node:process";
import { type CommandUnknownOpts, Option } from "@commander-js/extra-typings";
import type { Bundle } from "../bundle/bundle.ts";
import type { CliIo } from "./io.ts";
import type { MainOptions } from "./program.ts";
import { gatherRequest } from "./gather_request.ts";
import type { RunPlan } from "./run_target.ts";
import { parseNamespace, parseTarget, UsageError } from "./target.ts";
import { withRootOptions } from "./root_options.ts";
import { shellWord } from "../model/shell_word.ts";
import { deniedDenoPermission } from "../model/errors.ts";
import { denoPermissionMissing } from "./deno_permission.ts";

/**
 * Flags of `capture`: the main command's cluster and collection flags (one definition, in program.ts), with `-o`
 * naming the bundle file instead of a format.
 */
export type CaptureOptions =
  & Pick<
    MainOptions,
    | "namespace"
    | "context"
    | "kubeconfig"
    | "requestTimeout"
    | "node"
    | "allNodes"
    | "fromPod"
    | "exec"
    | "image"
    | "profile"
    | "debugNamespace"
    | "via"
    | "parallel"
    | "timeout"
    | "sectionTimeout"
    | "dryRun"
  >
  & { output: string };

const EXAMPLES = `
Examples:
  # Save what the live run for Service web would analyse, then analyse it offline
  kubectl netpath capture svc/web -n shop -o web.bundle.json
  kubectl netpath svc/web -n shop --from web.bundle.json

  # YAML, every node of the cluster (drift check later)
  kubectl netpath capture svc/web -n shop --all-nodes -o web.bundle.yaml
`;


function summary(b: Bundle): string {
  const o = b.objects;
  const parts = [
    [o.services.length, "Service"],
    [o.endpointSlices.length, "EndpointSlice"],
    [o.pods.length, "Pod"],
    [o.nodes.length, "Node"],
    [o.configMaps.length, "ConfigMap"],
    [o.daemonSets.length, "DaemonSet"],
    [o.persistentVolumeClaims.length, "PersistentVolumeClaim"],
    [o.persistentVolumes.length, "PersistentVolume"],
    [o.storageClasses.length, "StorageClass"],
    [o.events.length, "Event"],
    [(o.namespaces ?? []).length, "Namespace"],
  ].filter(([n]) => (n as number) > 0).map(([n, k]) => `${n} ${k}${n === 1 ? "" : "s"}`);
  const nodes = b.nodes.map((n) => `${n.name} (${n.error ? "failed" : n.source?.kind ?? "?"})`);
  return `${parts.join(", ") || "no objects"}; node state: ${nodes.join(", ") || "none"}`;
}

/** Most symbolic links followed for one `-o` path, as the kernel's MAXSYMLINKS (include/linux/namei.h, 40). */
const MAX_LINKS = 40;

/**
 * Where `-o PATH` is written: PATH, or what the symbolic link PATH names (link by link) when following it is safe.
 * A link is followed only when its owner is the invoking user, or root outside a sticky world-writable directory not
 * owned by root: the kernel's protected_symlinks rule (fs/namei.c may_follow_link: "allowed if owner and follower
 * match", "if parent directory not sticky and world-writable", "if parent directory and link owner match"), made
 * stricter in that a link owned by another user is never followed, and the file it names, when it exists, must be
 * the invoking user's (never replace another user's file). Without effective uids (Windows) links are followed.
 * @param path the absolute `-o` path.
 * @returns the path of the file to replace.
 * @throws {Error} one line naming the link, its owner and what to do, when following it is refused.
 */
function outputTarget(path: string): string {
  const euid = process.geteuid?.();
  let cur = path;
  for (let hops = 0;; hops++) {
    let st;
    try {
      st = lstatSync(cur);
    } catch {
      return cur; // a new file (a dangling link ends here too: the name it gives is created, by us, 0600)
    }
    if (!st.isSymbolicLink()) {
      if (euid !== undefined && cur !== path && st.uid !== euid) {
        throw new Error(`capture -o ${path}: it is a symbolic link to ${cur}, a file of uid ${st.uid}, not yours; nothing was written: remove the link or choose another -o path`);
      }
      return cur;
    }
    if (hops >= MAX_LINKS) throw new Error(`capture -o ${path}: too many levels of symbolic links (a symlink loop?); nothing was written: choose another -o path`);
    if (euid !== undefined && st.uid !== euid) {
      const dir = statSync(dirname(cur));
      const stickyShared = (dir.mode & 0o1002) === 0o1002;
      if (st.uid !== 0 || (stickyShared && dir.uid !== 0)) {
        const whose = st.uid !== 0 ? `uid ${st.uid} (neither you nor root)` : `root in a sticky world-writable directory of uid ${dir.uid}`;
        throw new Error(`capture -o ${path}: ${cur} is a symbolic link owned by ${whose}: another user may have put it there to make capture replace the file it points to; nothing was written: remove the link or choose another -o path`);
      }
    }
    cur = resolve(dirname(cur), readlinkSync(cur));
  }
}

/**
 * Writes a bundle readable by its owner only (mode 0600): created so, and an existing file is made 0600 before the
 * new content goes in (the umask never widens it).
 * @param path the file.
 * @param text the bundle's text.
 * @throws {Error} one line when PATH is a symbolic link it may not follow (outputTarget) or the write fails.
 */
function writePrivate(path: string, text: string): void {
  // through a symlink only when it is safe (outputTarget); the new content goes to a temporary file beside the file
  // replaced, created with O_EXCL (never through a link planted under that name) and 0600 from the start, renamed
  // over the old one once whole: rename(2) replaces the name, never writes into a file a link or hard link leads to,
  // and a failed write (EFBIG, ENOSPC, a crash) leaves the old bundle, never a cut one
  const target = outputTarget(path);
  const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, "wx", 0o600);
    fchmodSync(fd, 0o600);
    writeFileSync(fd, text);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, target);
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch { /* not created */ }
    const flag = deniedDenoPermission(e); // Deno 2 NotCapable: not the disk, the run's permissions
    if (flag !== undefined) throw new Error(`cannot write the bundle to ${path}: Deno was not granted ${flag} for ${dirname(target)}; nothing was written there: run again with ${flag} (or -A)`);
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(`cannot write the bundle to ${path} (${code ?? (e as Error).message}): nothing was written there; free space or choose another -o path`);
  }
}

/**
 * Checks `-o PATH` before anything is collected: its directory exists and is writable, and PATH is not a directory.
 * @throws {Error} one line naming the path and what to do.
 */
function checkOutputPath(path: string): void {
  const dir = dirname(path);
  let why: string | undefined;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) why = `directory ${dir} does not exist`;
  else if (existsSync(path) && statSync(path).isDirectory()) why = "it is a directory";
  else {
    try {
      accessSync(dir, constants.W_OK);
    } catch {
      why = `directory ${dir} is not writable`;
    }
  }
  if (why) throw new Error(`capture -o ${path}: ${why}: give a file path in a writable directory (nothing was collected)`);
  // a symbolic link that may not be followed is refused now, not after a collection of minutes (writePrivate checks
  // again when it writes: the link may change meanwhile)
  try {
    outputTarget(path);
  } catch (e) {
    throw new Error(`${(e as Error).message.replace(/; nothing was written: /, ": ")} (nothing was collected)`);
  }
  const flag = denoPermissionMissing({ name: "write", path: dir });
  if (flag !== undefined) throw new Error(`capture -o ${path}: Deno was not granted ${flag} for ${dir}: run again with ${flag} (or -A) (nothing was collected)`);
}

/**
 * Words that are output formats, not file names: the main command's `-o` choices (src/cli/program.ts) and kubectl's
 * common ones (`kubectl get -o json|yaml|wide|name`), with `yml`. Given bare to `capture -o` they are refused: the
 * operator meant a format, and would get a file of that name in the current directory, holding JSON.
 */
const FORMAT_WORDS = new Set(["json", "yaml", "yml", "text", "wide", "name", "mermaid", "dot"]);

/**
 * Refuses a bare format word as `capture`'s output file (`-o yaml`): `capture -o` names the bundle file, whose
 * format follows its extension. A path (`./yaml`) or a name with an extension is taken as given.
 * @param output the `-o` value.
 * @param name the target's name, for the suggested file name.
 * @throws {UsageError} naming the file to give instead, and `-o -` for stdout.
 */
export function checkOutputNotFormat(output: string, name: string): void {
  if (!FORMAT_WORDS.has(output)) return;
  const ext = output === "yaml" || output === "yml" ? "yaml" : "json";
  throw new UsageError(
    `capture -o takes the bundle file to write, not a format: -o ${output} would write JSON to a file named "${output}" in the current directory; ` +
      `give a file name, e.g. -o ${name}.bundle.${ext} (its extension sets the format: .json, or .yaml/.yml), or -o - for JSON on stdout`,
  );
}

/**
 * Runs `capture`.
 * @returns the exit code: 0, or 1 when some node could not be collected (the file is written anyway).
 * @throws {UsageError} for a bad target or flags; live errors as the main command throws them.
 */
export async function runCapture(words: string[], o: CaptureOptions, io: CliIo): Promise<number> {
  const target = parseTarget(words);
  if (target.kind !== "service" && (o.node || o.allNodes || o.fromPod)) {
    throw new UsageError("--node, --all-nodes and --from-pod may only be used with a Service target");
  }
  if (o.node && o.allNodes) throw new UsageError("--node and --all-nodes cannot be used together");
  checkOutputNotFormat(o.output, target.name);
  const plan: RunPlan = { target, output: "text" };
  // as the main command (run_target.ts validate): a usage error, before any request
  if (o.namespace !== undefined) plan.namespace = parseNamespace(o.namespace);
  if (o.node) plan.nodes = o.node;
  const { output: _file, ...flags } = o;
  const outPath = o.output === "-" ? undefined : isAbsolute(o.output) ? o.output : resolve(io.cwd, o.output);
  if (outPath !== undefined && !o.dryRun) checkOutputPath(outPath);
  const request = gatherRequest(plan, flags);
  request.collect = "node"; // a bundle is analysed later, for any question: whole tables
  const live = await import("../kube/live.ts");
  const s = live.liveSettings(request);
  const cluster = await live.openCluster(request, io, s.requestTimeoutMs);
  const { bundle, namespace, leftBehind = [] } = await live.gatherWith(cluster, request, s, io);
  plan.namespace = namespace;
  if (s.dryRun) return 0;
  const format = /\.ya?ml$/i.test(o.output) ? "yaml" : "json";
  const { encodeBundle } = await import("../bundle/decode.ts"); // on use: keeps YAML out of start-up
  // what the run says about itself can quote the API server's messages (a 500's body, a URL with credentials): a
  // bundle is handed around, so they are redacted as the objects' free text is (allow_list.ts redactText)
  const { redactText } = await import("../bundle/allow_list.ts");
  bundle.warnings = bundle.warnings.map(redactText);
  for (const n of bundle.nodes) if (n.error !== undefined) n.error = redactText(n.error);
  const text = encodeBundle(bundle, format);
  if (outPath === undefined) io.stdout(text);
  else writePrivate(outPath, text);
  for (const w of bundle.warnings) io.stderr(`warning: ${w}\n`);
  const where = o.output === "-" ? "stdout" : o.output;
  io.stderr(`wrote ${where}: ${summary(bundle)}\n`);
  const kind = target.kind === "service" ? "svc" : target.kind;
  const failed = bundle.nodes.filter((n) => n.error !== undefined);
  for (const n of failed) io.stderr(`error: node ${n.name}: ${n.error}\n`);
  if (o.output !== "-") {
    // the same question over the same scope as the capture (its capture.command: src/kube/live.ts commandLine): a
    // --from-pod capture holds the client's node only, and is answered with --from-pod; --node and --all-nodes keep
    // the offline run on the nodes collected
    const scope = [...(o.node ?? []).flatMap((n) => ["--node", n]), ...(o.allNodes ? ["--all-nodes"] : []), ...(o.fromPod !== undefined ? ["--from-pod", o.fromPod] : [])];
    io.stderr(`analyse it with: kubectl netpath ${shellWord(`${kind}/${target.name}`)} -n ${shellWord(plan.namespace)}${target.kind === "service" ? "" : " --why-pending"}${scope.map((w) => ` ${shellWord(w)}`).join("")} --from ${shellWord(o.output)}\n`);
  }
  if (leftBehind.length > 0) io.stderr(`error: ${live.leftBehindMessage(leftBehind)}\n`);
  return failed.length > 0 || leftBehind.length > 0 ? 1 : 0;
}

/**
 * Adds the `capture` subcommand. Enables positional options on `program` (its own `-o` takes a format, capture's a
 * file), so it must be called after the program's `exitOverride()`/`configureOutput()` (inherited by subcommands).
 * @param program the root command.
 * @param io streams.
 * @param result where the exit code goes.
 */
export function registerCapture(program: CommandUnknownOpts, io: CliIo, result: { code: number }): void {
  program.enablePositionalOptions();
  program
    .command("capture")
    .description("Write the bundle a live run would analyse; `--from FILE` later gives the same report")
    .usage("TYPE/NAME -o FILE [flags]")
    .argument("[target...]", "svc/NAME, pvc/NAME or pod/NAME")
    .requiredOption("-o, --output <file>", "bundle file to write (.json, or .yaml/.yml; - for stdout)")
    .option("-n, --namespace <namespace>", "namespace of the target (default: the context's namespace)")
    .option("--context <name>", "kubeconfig context to use")
    .option("--kubeconfig <path>", "path to the kubeconfig file")
    .option("--request-timeout <duration>", "timeout of each API request, e.g. 10s", "30s")
    .option("--node <name>", "collect this node (repeatable; default: the nodes hosting the endpoints)", collectOnce)
    .option("--all-nodes", "collect every node")
    .option("--from-pod <pod>", "collect the node of this client pod")
    .option("--no-exec", "API objects only, collect nothing from nodes")
    .option("--image <image>", "debug pod image (default: netshoot v0.13 pinned by digest)")
    .addOption(new Option("--profile <profile>", "debug pod privileges").choices(["netadmin", "sysadmin"]).default("netadmin"))
    .option("--debug-namespace <namespace>", "namespace of the debug pods", "kube-system")
    .addOption(new Option("--via <where>", "where nodes are collected (auto: the kube-proxy pod, else a debug pod; kube-proxy: never create a pod)").choices(["auto", "kube-proxy", "debug-pod"]).default("auto"))
    .option("--parallel <n>", "nodes collected at once", "8")
    .option("--timeout <duration>", "time allowed per node", "60s")
    .option("--section-timeout <duration>", "time allowed to each collection step on a node, 0 for none (default: 3/4 of --timeout)")
    .option("--dry-run", "print the debug pod that would be created, create nothing, write nothing")
    .addHelpText("after", EXAMPLES)
    .action(async (target, opts, cmd) => {
      result.code = await runCapture(target, withRootOptions(program, cmd, opts) as CaptureOptions, io);
    });
}
