/**
 * The Node executable's entry (bundled to dist/kubectl-netpath.js by scripts/build.mjs). A completion request for
 * names (`complete -- …` whose word is a Service, claim, pod, namespace, node or context) is answered by the fast
 * path (src/cli/completion/fast.ts) without loading the program; everything else loads it (main.ts), lazily, so the
 * fast path does not pay for it.
 * @module
 */
import process from "node:process";

async function run(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === "complete" && argv[1] === "--") {
    const { completeFast } = await import("./completion/fast.ts");
    const warn = (line: string) => void process.stderr.write(`completion: ${line}\n`);
    const answer = await completeFast(argv.slice(2), { env: process.env, cwd: process.cwd(), warn }, warn);
    if (answer !== undefined) {
      process.stdout.write(answer);
      return;
    }
  }
  const { main } = await import("./main.ts");
  await main(argv);
}

await run();
// Everything the command does is awaited. Exit now rather than let Node tear the heap down on its own (after a
// 26 MB dump that takes it ~20 ms), unless output is still queued (pipes are asynchronous on macOS).
if (process.stdout.writableLength === 0 && process.stderr.writableLength === 0) process.exit(process.exitCode ?? 0);
