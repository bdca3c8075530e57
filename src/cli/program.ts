/**
 * The command line, with commander: one options object per command, wired in three phases as kubectl does —
 * complete (namespace, bundle or cluster), validate (pure: which flags go together), run. This file only declares
 * flags and help; the phases live in run_*.ts. Errors become exit codes in one place: {@link runCli}.
 * @module
 */
import { collectOnce } from "./repeatable.ts";
import { Command, CommanderError, type CommandUnknownOpts, Option } from "@commander-js/extra-typings";
import { DumpParseError } from "../datapath/errors.ts";
import { NotFoundError } from "../model/errors.ts";
import { registerCapture } from "./capture.ts";
import { registerCleanup } from "./cleanup.ts";
import { registerCompletion } from "./completion.ts";
import type { CliIo } from "./io.ts";
import { type Interruption, interruption } from "../kube/interrupt.ts";
import { UsageError } from "./target.ts";
import { VERSION } from "./version.ts";

/** Flags of the main command, after parsing. */
export interface MainOptions {
  namespace?: string;
  context?: string;
  kubeconfig?: string;
  requestTimeout?: string;
  from?: string;
  maxBundleSize?: string;
  output: string;
  node?: string[];
  allNodes?: boolean;
  fromPod?: string;
  source?: string;
  dest?: string;
  whyPending?: boolean;
  color?: boolean;
  exec?: boolean;
  image?: string;
  profile?: string;
  debugNamespace?: string;
  via?: string;
  parallel?: string;
  timeout?: string;
  sectionTimeout?: string;
  dryRun?: boolean;
  wholeNode?: boolean;
}

const EXAMPLES = `
Examples:
  # Explain how kube-proxy balances and masquerades Service web, on the nodes hosting its endpoints
  kubectl netpath svc/web -n shop

  # Save what that run reads, then analyse it offline (or hand the file to someone else)
  kubectl netpath capture svc/web -n shop -o web.bundle.json
  kubectl netpath svc/web -n shop --from web.bundle.json

  # One packet: where does 10.244.1.7 → 10.96.0.10:53/udp go on each node, and is it masqueraded?
  kubectl netpath svc/kube-dns -n kube-system --source 10.244.1.7 --dest 10.96.0.10:53/udp

  # Rule text behind every verdict, or machine-readable output
  kubectl netpath svc/web -o wide
  kubectl netpath svc/web -o json

  # The path as a picture: a Mermaid flowchart (renders on GitHub) or Graphviz DOT
  kubectl netpath svc/web -o mermaid
  kubectl netpath svc/kube-dns -n kube-system --source 10.244.1.7 --dest 10.96.0.10:53/udp -o dot | dot -Tsvg > path.svg

  # Why is this claim (or pod) Pending?
  kubectl netpath pvc/data --why-pending
  kubectl netpath pod/busybox --why-pending

  # In a clone of the repository, bundles to try it on: examples/ (README "Usage")
  kubectl netpath svc/kube-dns -n kube-system --from examples/iptables-lab
`;


/**
 * Builds the program. Actions write to `io` and resolve to an exit code stored in `result.code`.
 */
export function buildProgram(io: CliIo, result: { code: number }) {
  const program = new Command()
    // the name kubectl users type (a kubectl plugin's usage reads `kubectl PLUGIN`, as kubectl's own commands do)
    .name("kubectl netpath")
    .usage("[TYPE/NAME] [flags]")
    .description(
      "Explain how kube-proxy really load-balances and masquerades a Service on each node (iptables, IPVS, " +
        "nftables), and why a PersistentVolumeClaim or Pod is Pending.",
    )
    .version(VERSION, "--version", "print the version")
    .argument("[target...]", "svc/NAME, pvc/NAME or pod/NAME")
    .option("-n, --namespace <namespace>", "namespace of the target (default: the context's namespace, or \"default\"; with --from, \"default\")")
    .option("--context <name>", "kubeconfig context to use")
    .option("--kubeconfig <path>", "path to the kubeconfig file")
    .option("--request-timeout <duration>", "timeout of each API request, e.g. 10s", "30s")
    .option("--from <path>", "analyse a saved bundle (file or directory) instead of a live cluster")
    .option("--max-bundle-size <size>", "--from: most bytes read from the bundle, and of its YAML structure, e.g. 1Gi (default 256Mi, YAML 8Mi)")
    .addOption(new Option("-o, --output <format>", "output format").choices(["text", "wide", "json", "yaml", "mermaid", "dot"]).default("text"))
    .option("--node <name>", "analyse this node (repeatable; default: the nodes hosting the endpoints)", collectOnce)
    .option("--all-nodes", "analyse every node (drift check across the cluster)")
    .option("--from-pod <pod>", "answer for traffic from this pod (NAME, or NAMESPACE/NAME when not in -n's): its node and its address; with --dest, to that destination; without, to every ServicePort at each ClusterIP of its address families (one answer each)")
    .option("--source <ip>", "one packet: the client address (with --dest)")
    .option("--dest <ip:port[/proto]>", "one packet: the destination, e.g. 10.96.0.10:53/udp (with --source)")
    .option("--why-pending", "pvc/NAME or pod/NAME: explain why it cannot be placed")
    .option("--no-color", "never colour the output (NO_COLOR is honoured too)")
    .option("--no-exec", "live: use the API only, collect nothing from nodes")
    .option("--image <image>", "live: debug pod image (default: netshoot v0.13 pinned by digest)")
    .addOption(new Option("--profile <profile>", "live: debug pod privileges").choices(["netadmin", "sysadmin"]).default("netadmin"))
    .option("--debug-namespace <namespace>", "live: namespace of the debug pods", "kube-system")
    .addOption(new Option("--via <where>", "live: where nodes are collected (auto: the kube-proxy pod, else a debug pod; kube-proxy: never create a pod)").choices(["auto", "kube-proxy", "debug-pod"]).default("auto"))
    .option("--parallel <n>", "live: nodes collected at once", "8")
    .option("--timeout <duration>", "live: time allowed per node", "60s")
    .option("--section-timeout <duration>", "live: time allowed to each collection step on a node, 0 for none (default: 3/4 of --timeout)")
    .option("--dry-run", "live: print the debug pod that would be created, create nothing")
    .option("--whole-node", "live: collect whole tables, as capture does (finds stale chains of deleted Services), not only the Service's rules")
    .addHelpText("after", EXAMPLES)
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => writeLines(io, s) })
    .action(async (target, opts) => {
      // `kubectl netpath help [SUBCOMMAND]` / `kubectl netpath version`, as kubectl's own words (Cobra's help command,
      // command.go InitDefaultHelpCmd: `help CMD` prints CMD's help; an unknown CMD is a usage error here). commander
      // adds no help command of its own: the root has an action (its targets).
      if (target[0] === "help") return void helpOf(program, target.slice(1)).outputHelp();
      if (target.length === 1 && target[0] === "version") return void io.stdout(`${VERSION}\n`);
      // Loaded on use: completion and --help must not pay for the analyses.
      const { runTarget } = await import("./run_target.ts");
      // the flags written on the command line (not defaults): runTarget says which of them a bundle run ignores
      const given = new Set(program.options.map((o) => o.attributeName()).filter((k) => program.getOptionValueSource(k) === "cli"));
      result.code = await runTarget(target, opts as MainOptions, io, given);
    });
  // Subcommands inherit exitOverride/configureOutput from here.
  registerCapture(program, io, result);
  registerCleanup(program, io, result);
  registerCompletion(program, io, result); // last: it completes the subcommands registered before it
  return program;
}

/**
 * The command whose help `help WORDS` prints: the program for `help`, a subcommand (or alias) for `help SUBCOMMAND`;
 * words after the subcommand are ignored, as Cobra's help command does.
 * @throws {UsageError} for a word that names no subcommand, listing those that exist.
 */
function helpOf(program: CommandUnknownOpts, words: string[]): CommandUnknownOpts {
  if (words.length === 0) return program;
  const sub = program.commands.find((c) => c.name() === words[0] || c.aliases().includes(words[0]!));
  if (sub) return sub;
  const names = program.createHelp().visibleCommands(program).map((c) => c.name());
  throw new UsageError(`no subcommand ${JSON.stringify(words[0])}: help takes one of ${names.join(", ")} (or nothing, for the main command)`);
}

/**
 * Writes text laid out in lines by this program or commander (help after an error, `(Did you mean --x?)` on the line
 * after an unknown option, a stack trace) to stderr, one message per line: {@link CliIo.stderr} escapes a newline
 * inside a message.
 */
function writeLines(io: CliIo, text: string): void {
  for (const line of text.split(/(?<=\n)/)) io.stderr(line);
}

/**
 * `-n=NS` and `-o=FORMAT` as kubectl (pflag) reads them, `-n NS`: commander would keep the `=` in the value
 * (`"=kube-system"`). Arguments after `--` are left alone.
 */
function shortEquals(argv: string[]): string[] {
  const end = argv.indexOf("--");
  return argv.flatMap((a, i) => (end !== -1 && i > end) || !/^-[no]=/.test(a) ? [a] : [a.slice(0, 2), a.slice(3)]);
}

/**
 * Runs the CLI and returns the exit code: 0 success, 1 error (printed as one line, `error: …`), 2 usage error, 130 / 143
 * after SIGINT / SIGTERM interrupted a live run (then nothing more is printed: the signal handler has said what it
 * does, and this waits until it has done it).
 * Never throws and never prints a stack trace, except with `KUBECTL_NETPATH_DEBUG=1`.
 * @param argv arguments after the program name.
 * @param io streams and environment.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const result = { code: 0 };
  const program = buildProgram(io, result);
  try {
    await program.parseAsync(shortEquals(argv), { from: "user" });
    const stopped = interruption();
    if (stopped) return await afterInterruption(stopped);
    return result.code;
  } catch (e) {
    // Ctrl-C during a live run: its requests were aborted and reject ("cancelled"); that is no error of its own. The
    // signal handler deletes the debug pods, says so, and exits 130/143 (src/kube/pod_lifecycle.ts).
    const stopped = interruption();
    if (stopped) return await afterInterruption(stopped);
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version" || e.code === "commander.help") return 0;
      return 2; // commander already printed "error: …" and the hint
    }
    if (e instanceof UsageError) {
      io.stderr(`error: ${e.message}\n`);
      io.stderr("(run with --help for usage)\n");
      return 2;
    }
    if (io.env.KUBECTL_NETPATH_DEBUG === "1" && e instanceof Error) writeLines(io, `${e.stack}\n`);
    io.stderr(`error: ${describeError(e)}\n`);
    return 1;
  }
}

/** Waits for the signal handler's cleanup (it exits the process itself), then gives its exit code. */
async function afterInterruption(stopped: Interruption): Promise<number> {
  await stopped.done;
  return stopped.exitCode;
}

/**
 * One line for any error, with the next step where there is one.
 */
export function describeError(e: unknown): string {
  // BundleError is matched by name so that this module does not load the bundle decoder (and YAML) at start-up.
  if (e instanceof NotFoundError || (e instanceof Error && e.name === "BundleError")) return e.message;
  if (e instanceof DumpParseError) return `${e.message}; the dump is malformed or truncated: capture it again (kubectl netpath capture …)`;
  if (e instanceof Error) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EPIPE") return "output closed early";
    if (e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError) {
      // A bug met on this input: still one line, and what to do about it.
      return `internal error (${e.name}: ${e.message.split("\n")[0]}): rerun with KUBECTL_NETPATH_DEBUG=1 and report it, with the input if you can share it`;
    }
    return e.message || e.name;
  }
  return String(e);
}
