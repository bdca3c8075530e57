/**
 * Entry of the CLI: `main()` runs it with the process's arguments. Under Deno, `deno run -A src/cli/main.ts …` runs
 * it directly (see {@link isCliEntry}); under Node the executable is dist/kubectl-netpath.cjs, built from bin.ts.
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

/**
 * Whether `url`, the `import.meta.url` of a module whose `import.meta.main` is true, is this source file, i.e. the
 * program being run is `deno run src/cli/main.ts` (or Node >= 24 `node src/cli/main.ts`). `import.meta.main` alone
 * does not say so once a bundler has inlined this file into another program: esbuild keeps `import.meta` as it is, so
 * it then reads the *bundle's* import.meta, whose `main` is true in any host script on Deno and on Node >= 24 (where
 * import.meta.main was added), and a library user's argv would run as netpath commands. The module's own URL names
 * this source file only when it is not bundled. The dist build (scripts/build.mjs) also defines `import.meta.main` as
 * false: bin.ts runs main there. A `url` that is not a URL is not this file.
 */
export function isCliEntryUrl(url: string): boolean {
  try {
    return new URL(url).pathname.endsWith("/src/cli/main.ts");
  } catch {
    return false;
  }
}

if ((import.meta as { main?: boolean }).main === true && isCliEntryUrl(import.meta.url)) await main();
