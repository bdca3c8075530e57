/**
 * The Node executable's entry (bundled to dist/kubectl-netpath.js by scripts/build.mjs). A completion request for
 * names (`complete -- …` whose word is a Service, claim, pod, namespace, node or context) is answered by the fast
 * path (src/cli/completion/fast.ts) without loading the program; everything else loads it (main.ts), lazily, so the
 * fast path does not pay for it.
 * @module
 */
import { writeSync } from "node:fs";

// The global, not `import process from "node:process"`: Node builds that module's ES facade by reading every property
// of `process`, stdout and stderr included, which creates both streams (a few ms, and fd 1 turned non-blocking) on
// every TAB press that only writes one answer.
const process = globalThis.process;

/**
 * Writes a completion answer to fd 1 directly: creating `process.stdout` loads Node's stream machinery, a few ms of
 * every TAB press. A pipe that would block (EAGAIN) gets the rest through `process.stdout` after all; a reader that
 * went away (EPIPE) gets nothing more, and no stack trace.
 */
function writeAnswer(text: string): void {
  const bytes = Buffer.from(text, "utf8");
  let at = 0;
  try {
    while (at < bytes.length) at += writeSync(1, bytes, at);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EPIPE") return; // the shell stopped reading: nobody wants the rest
    if (code !== "EAGAIN") throw e;
    process.stdout.write(bytes.subarray(at));
    streamsUsed = true;
  }
}

/** Whether process.stdout or process.stderr was written to (output may still be queued there). */
let streamsUsed = false;

async function run(): Promise<boolean> {
  const argv = process.argv.slice(2);
  if (argv[0] === "complete" && argv[1] === "--") {
    const { completeFast } = await import("./completion/fast.ts");
    const warn = (line: string) => {
      streamsUsed = true;
      process.stderr.write(`completion: ${line}\n`);
    };
    const answer = await completeFast(argv.slice(2), { env: process.env, cwd: process.cwd(), warn }, warn);
    if (answer !== undefined) {
      writeAnswer(answer);
      return true;
    }
  }
  const { main } = await import("./main.ts");
  await main(argv);
  return false;
}

const answered = await run();
// A completion answer went straight to fd 1 and nothing else was written: nothing can be queued.
if (answered && !streamsUsed) process.exit(process.exitCode ?? 0);
// Everything the command does is awaited. Exit now rather than let Node tear the heap down on its own (after a
// 26 MB dump that takes it ~20 ms), unless output is still queued (pipes are asynchronous on macOS).
if (process.stdout.writableLength === 0 && process.stderr.writableLength === 0) process.exit(process.exitCode ?? 0);
