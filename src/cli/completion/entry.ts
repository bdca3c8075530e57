/**
 * The CLI entry the completion tests and the completion benchmark bundle. Completion is registered by
 * src/cli/program.ts itself, so this is the CLI's own {@link runCli} under the name the tests use.
 * @module
 */
import process from "node:process";
import { nodeIo } from "../io.ts";
import { runCli } from "../program.ts";

/**
 * Runs the CLI (with its `completion` and `complete` subcommands) and returns the exit code.
 * @param argv arguments after the program name.
 * @param io streams and environment.
 */
export const runCliWithCompletion = runCli;

/** Runs it with the process's arguments and sets the exit code (the entry of the test executable). */
export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  process.exitCode = await runCli(argv, nodeIo());
}
