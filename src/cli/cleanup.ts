/**
 * `kubectl netpath cleanup`: deletes leftover debug pods (label `app.kubernetes.io/managed-by=kubectl-netpath`),
 * e.g. after a run was killed with SIGKILL. The live code is imported lazily.
 * @module
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import type { CliIo } from "./io.ts";

/** Flags of `cleanup`. */
export interface CleanupOptions {
  namespace?: string;
  allNamespaces?: boolean;
  context?: string;
  kubeconfig?: string;
  requestTimeout?: string;
  dryRun?: boolean;
}

const EXAMPLES = `
Examples:
  # Delete the debug pods a killed run left in kube-system
  kubectl netpath cleanup

  # Look everywhere, delete nothing
  kubectl netpath cleanup -A --dry-run
`;

/**
 * Runs `cleanup`.
 * @returns 0, or 1 when some pod could not be deleted.
 */
export async function runCleanup(o: CleanupOptions, io: CliIo): Promise<number> {
  const live = await import("../kube/live.ts");
  const { parseDurationMs } = await import("../kube/duration.ts");
  const { cleanupDebugPods } = await import("../kube/cleanup.ts");
  const cluster = await live.openCluster(o, io, parseDurationMs("--request-timeout", o.requestTimeout ?? "30s"));
  const namespace = o.allNamespaces ? undefined : o.namespace ?? live.DEBUG_NAMESPACE;
  const pods = await cleanupDebugPods(cluster.rest, namespace, o.dryRun === true);
  const where = namespace === undefined ? "any namespace" : `namespace ${namespace}`;
  if (pods.length === 0) {
    io.stderr(`no kubectl-netpath debug pods in ${where}\n`);
    return 0;
  }
  for (const p of pods) {
    const what = `pod ${p.namespace}/${p.name}${p.node ? ` (node ${p.node}${p.phase ? `, ${p.phase}` : ""})` : ""}`;
    if (o.dryRun) io.stdout(`would delete ${what}\n`);
    else if (p.error) io.stderr(`error: could not delete ${what}: ${p.error}\n`);
    else io.stdout(`deleted ${what}\n`);
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
    .description("Delete leftover kubectl-netpath debug pods (from a run that was killed)")
    .option("-n, --namespace <namespace>", "namespace of the debug pods", "kube-system")
    .option("-A, --all-namespaces", "look in every namespace")
    .option("--context <name>", "kubeconfig context to use")
    .option("--kubeconfig <path>", "path to the kubeconfig file")
    .option("--request-timeout <duration>", "timeout of each API request, e.g. 10s", "30s")
    .option("--dry-run", "list the pods, delete nothing")
    .addHelpText("after", EXAMPLES)
    .action(async (opts) => {
      result.code = await runCleanup(opts as CleanupOptions, io);
    });
}
