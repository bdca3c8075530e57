/**
 * The CLI with completion registered, for the tests and the benchmark until src/cli/program.ts calls
 * {@link registerCompletion} itself (registration is idempotent, so this stays correct afterwards). Error handling
 * is {@link runCli}'s: usage errors exit 2, other errors print one line and exit 1.
 * @module
 */
import process from "node:process";
import { CommanderError } from "@commander-js/extra-typings";
import { registerCompletion } from "../cli/completion.ts";
import { type CliIo, nodeIo } from "../cli/io.ts";
import { buildProgram, describeError } from "../cli/program.ts";
import { UsageError } from "../cli/target.ts";

/**
 * Runs the CLI (with the `completion` and `complete` subcommands) and returns the exit code.
 * @param argv arguments after the program name.
 * @param io streams and environment.
 */
export async function runCliWithCompletion(argv: string[], io: CliIo): Promise<number> {
  const result = { code: 0 };
  const program = buildProgram(io, result);
  registerCompletion(program, io, result);
  try {
    await program.parseAsync(argv, { from: "user" });
    return result.code;
  } catch (e) {
    if (e instanceof CommanderError) {
      return e.code === "commander.helpDisplayed" || e.code === "commander.version" || e.code === "commander.help" ? 0 : 2;
    }
    if (e instanceof UsageError) {
      io.stderr(`error: ${e.message}\n(run with --help for usage)\n`);
      return 2;
    }
    io.stderr(`error: ${describeError(e)}\n`);
    return 1;
  }
}

/** Runs it with the process's arguments and sets the exit code (the entry of the test executable). */
export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  process.exitCode = await runCliWithCompletion(argv, nodeIo());
}
