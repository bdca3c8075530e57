/**
 * `kubectl netpath cleanup`: deletes leftover debug pods, e.g. after a run was killed with SIGKILL — only pods that
 * carry the tool's label and run annotations and whose run is over (src/kube/cleanup.ts); a debug pod still inside
 * its deadline needs `--force`. Every labelled pod gets one line saying what was done and why. The live code is
 * imported lazily.
 * @module
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import type { CliIo } from "./io.ts";
import { withRootOptions } from "./root_options.ts";
import { printable } from "../report/printable.ts";

/** Flags of `cleanup`. */
export interface CleanupOptions {
  namespace?: string;
  allNamespaces?: boolean;
  context?: string;
  kubeconfig?: string;
  requestTimeout?: string;
  dryRun?: boolean;
  force?: boolean;
}

const EXAMPLES = `
Examples:
  # Delete the debug pods a killed run left in kube-system
  kubectl netpath cleanup

  # Look everywhere, delete nothing: say what would go and what stays, and why
  kubectl netpath cleanup -A --dry-run

  # Also delete debug pods whose run may still be in flight (inside their deadline)
  kubectl netpath cleanup --force
`;

/**
 * Runs `cleanup`: one line per labelled pod on stdout — `deleted pod NS/NAME (node N, PHASE): why`,
 * `would delete …` with `--dry-run`, or `kept pod …: why` — and failed deletes on stderr.
 * @returns 0, or 1 when some pod could not be deleted.
 */
export async function runCleanup(o: CleanupOptions, io: CliIo): Promise<number> {
  const live = await import("../kube/live.ts");
  const { parseDurationMs } = await import("../kube/duration.ts");
  const { cleanupDebugPods } = await import("../kube/cleanup.ts");
  const cluster = await live.openCluster(o, io, parseDurationMs("--request-timeout", o.requestTimeout ?? "30s"));
  const namespace = o.allNamespaces ? undefined : o.namespace ?? live.DEBUG_NAMESPACE;
  const pods = await cleanupDebugPods(cluster.rest, namespace, { dryRun: o.dryRun === true, force: o.force === true });
  const where = namespace === undefined ? "any namespace" : `namespace ${namespace}`;
  if (pods.length === 0) {
    io.stderr(`no kubectl-netpath debug pods in ${where}\n`);
    return 0;
  }
  for (const p of pods) {
    const what = `pod ${p.namespace}/${p.name}${p.node ? ` (node ${p.node}${p.phase ? `, ${p.phase}` : ""})` : ""}`;
    if (p.action === "keep") io.stdout(printable(`${o.dryRun ? "would keep" : "kept"} ${what}: ${p.reason}\n`));
    else if (o.dryRun) io.stdout(printable(`would delete ${what}: ${p.reason}\n`));
    else if (p.error) io.stderr(`error: could not delete ${what}: ${p.error}\n`);
    else io.stdout(printable(`deleted ${what}: ${p.reason}\n`));
  }
  return pods.some((p) => p.error) ? 1 : 0;
}

/**
 * Adds the `cleanup` subcommand (call after the program's `exitOverride()`/`configureOutput()`).
 * @param program the root command.
 * @param io streams.
 * @param result where the exit code goes.
 */
export function registerCleanup(program: CommandUnknownOpts, io: CliIo, result: { code: number }): void {
  program.enablePositionalOptions();
  program
    .command("cleanup")
    .description("Delete leftover kubectl-netpath debug pods (from a run that was killed); pods of a run in flight stay")
    .option("-n, --namespace <namespace>", "namespace of the debug pods", "kube-system")
    .option("-A, --all-namespaces", "look in every namespace")
    .option("--context <name>", "kubeconfig context to use")
    .option("--kubeconfig <path>", "path to the kubeconfig file")
    .option("--request-timeout <duration>", "timeout of each API request, e.g. 10s", "30s")
    .option("--dry-run", "say which pods would be deleted or kept, and why; delete nothing")
    .option("--force", "also delete debug pods still inside their deadline (their run may be in flight)")
    .addHelpText("after", EXAMPLES)
    .action(async (opts, cmd) => {
      result.code = await runCleanup(withRootOptions(program, cmd, opts) as CleanupOptions, io);
    });
}
