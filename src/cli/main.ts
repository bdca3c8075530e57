/**
 * Entry of the CLI: `main()` runs it with the process's arguments. Under Deno, `deno run -A src/cli/main.ts …` runs
 * it directly (`import.meta.main`); under Node the executable is dist/kubectl-netpath.cjs, built from bin.ts.
 * @module
 */
import process from "node:process";
import { nodeIo } from "./io.ts";
import { runCli } from "./program.ts";

/** Runs the CLI with the process's arguments and sets the exit code. */
export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  const code = await runCli(argv, nodeIo());
  process.exitCode = code;
}

if ((import.meta as { main?: boolean }).main === true) await main();
