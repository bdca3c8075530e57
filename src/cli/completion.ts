/**
 * Shell completion for the CLI: `kubectl-netpath completion bash|zsh|fish|powershell` prints a script, and the
 * hidden `kubectl-netpath complete -- <words…> <current word>` answers one completion request in Cobra's
 * `__complete` format. The scripts call the latter; so does `kubectl_complete-netpath`, the executable kubectl
 * (>= 1.26) runs from PATH to complete `kubectl netpath …`. The engine is @bomb.sh/tab's commander adapter
 * (src/cli/completion/engine.ts).
 *
 * Static candidates (subcommands, flags, `-o` formats, target prefixes) never load the Kubernetes client; dynamic
 * ones (Service, claim, pod, namespace, node names) come from the `--from` bundle on the line, else from the cluster,
 * within a 2 s timeout, and a failed lookup answers `:1` (Error) without candidates.
 * @module
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import type { Command as PlainCommand } from "commander";
import tab from "@bomb.sh/tab/commander";
import { answerCompletion } from "./completion/engine.ts";
import { completionScript, type Shell } from "./completion/scripts.ts";
import type { CliIo } from "./io.ts";

/** Subcommands offered even before the program registers them (their own flags complete once it does). */
const STATIC_SUBCOMMANDS: [string, string][] = [
  ["capture", "Save what a live run would analyse as a bundle (for --from, bug reports, offline work)"],
  ["cleanup", "Delete debug pods left behind by interrupted runs"],
];

const COMPLETION_EXAMPLES = `
Examples:
  # Complete \`kubectl netpath …\` through kubectl (1.26+): put kubectl_complete-netpath on PATH beside the plugin
  cp completions/kubectl_complete-netpath ~/.local/bin/ && chmod +x ~/.local/bin/kubectl_complete-netpath

  # Load completion of kubectl-netpath in the current bash session (needs the bash-completion package)
  source <(kubectl-netpath completion bash)

  # Load it in every zsh session (the directory must be on $fpath, before compinit runs)
  kubectl-netpath completion zsh > "\${fpath[1]}/_kubectl-netpath"

  # fish
  kubectl-netpath completion fish > ~/.config/fish/completions/kubectl-netpath.fish

  # PowerShell
  kubectl-netpath completion powershell | Out-String | Invoke-Expression
`;

function subcommand(program: CommandUnknownOpts, name: string): CommandUnknownOpts {
  const cmd = program.commands.find((c) => c.name() === name);
  if (!cmd) throw new Error(`@bomb.sh/tab/commander did not add the "${name}" command`);
  return cmd;
}

/**
 * Adds the `completion` and (hidden) `complete` subcommands. Call it after the other subcommands are added, so that
 * their names and flags are part of the completion tree. Calling it again on the same program does nothing.
 * @param program the root command.
 * @param io streams and environment: the script and the answers go to `io.stdout`, a failed lookup's one-line
 *   reason to `io.stderr` (the scripts and kubectl discard it).
 * @param result the exit code holder of {@link buildProgram}; both commands set 0.
 * @throws {Error} when @bomb.sh/tab did not add the two commands (an incompatible version).
 */
export function registerCompletion(program: CommandUnknownOpts, io: CliIo, result: { code: number }): void {
  if (program.commands.some((c) => c.name() === "complete")) return;
  const root = tab(program as unknown as PlainCommand, { completionCommandName: "completion" });
  for (const [name, description] of STATIC_SUBCOMMANDS) if (!root.commands.has(name)) root.command(name, description);

  const completion = subcommand(program, "completion");
  const shellArgument = completion.registeredArguments[0];
  if (shellArgument) shellArgument.description = "the shell the script is for";
  completion
    .usage("SHELL [flags]")
    .description("Print the shell completion script of kubectl-netpath for bash, zsh, fish or powershell.")
    .addHelpText("after", COMPLETION_EXAMPLES)
    .action((...args: unknown[]) => {
      io.stdout(completionScript(args[0] as Shell));
      result.code = 0;
    });

  subcommand(program, "complete")
    .description("Print completion candidates for the words after -- in Cobra's __complete format (used by the scripts)")
    .action(async (...args: unknown[]) => {
      const warn = (line: string) => io.stderr(`completion: ${line}\n`);
      const answer = await answerCompletion(program, root, args[0] as string[], { env: io.env, cwd: io.cwd, warn }, (reason) => {
        io.stderr(`completion: ${reason}\n`);
      });
      io.stdout(answer);
      result.code = 0;
    });
}
