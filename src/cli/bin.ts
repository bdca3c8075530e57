/**
 * The Node executable's entry (bundled to dist/kubectl-netpath.cjs by scripts/build.mjs). A completion request for
 * names (`complete -- …` whose word is a Service, claim, pod, namespace, node or context) is answered by the fast
 * path (src/cli/completion/fast.ts) without loading the program; everything else loads it (main.ts), lazily, so the
 * fast path does not pay for it.
 * @module
 */
// The global, not `import process from "node:process"`: Node builds that module's ES facade by reading every property
// of `process`, stdout and stderr included, which creates both streams (a few ms, and fd 1 turned non-blocking) on
// every TAB press that only writes one answer.
const process = globalThis.process;

import Module from "node:module";
import { permittedEnv } from "./env.ts";

/** Whether process.stdout or process.stderr was written to (output may still be queued there). */
let streamsUsed = false;

async function run(): Promise<boolean> {
  const argv = process.argv.slice(2);
  if (argv[0] === "complete" && argv[1] === "--") {
    // the fast path writes its own answer (completion/write_answer.ts): importing node:fs here would load node:stream
    const { completeFast, writeAnswer } = await import("./completion/fast.ts");
    const warn = (line: string) => {
      streamsUsed = true;
      process.stderr.write(`completion: ${line}\n`);
    };
    const answer = await completeFast(argv.slice(2), { env: permittedEnv(process.env), cwd: process.cwd(), warn }, warn);
    if (answer !== undefined) {
      if (writeAnswer(answer)) streamsUsed = true;
      return true;
    }
  }
  // Node's compile cache for the program, before the program is loaded; only a Node that has one (>= 22.1) loads the
  // module that turns it on (it reads the home directory through node:os, which Node 20 would load for nothing)
  if (typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === "function") {
    (await import("./node_compile_cache.ts")).enableNodeCompileCache(permittedEnv(process.env));
  }
  const { main } = await import("./main.ts");
  await main(argv);
  return false;
}

// Not top-level await: dist/kubectl-netpath.cjs is CommonJS (scripts/build.mjs), which loads the completion fast path
// as CommonJS (~10 ms less of every TAB press than an ES module entry), from its V8 code cache (code_cache.ts).
run().then((answered) => {
  // A completion answer went straight to fd 1 and nothing else was written: nothing can be queued.
  if (answered && !streamsUsed) process.exit(process.exitCode ?? 0);
  // Everything the command does is awaited. Exit now rather than let Node tear the heap down on its own (after a
  // 26 MB dump that takes it ~20 ms), unless output is still queued (pipes are asynchronous on macOS). After the ticks
  // queued now: a failed write to a file (a full disk) reports its error from them, and that decides the exit code.
  setImmediate(() => {
    if (process.stdout.writableLength === 0 && process.stderr.writableLength === 0) process.exit(process.exitCode ?? 0);
  });
}, (e: unknown) => {
  // main() reports its own errors; this is a failure to load the program itself (e.g. a damaged install)
  process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
