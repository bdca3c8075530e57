/**
 * Writing a completion answer to standard output without Node's stream machinery: creating `process.stdout` loads
 * it, a few ms of every TAB press that only writes one answer. Part of the completion fast path (dist/complete.cjs),
 * whose build loads `node:fs` with `require` (scripts/build.mjs): the ES module face of `node:fs` reads every export,
 * `fs.ReadStream` included, which loads `node:stream` all the same.
 * @module
 */
import { writeSync } from "node:fs";

/**
 * Writes `text` (UTF-8) to fd 1 directly. A pipe that would block (EAGAIN) gets the rest through `process.stdout`
 * after all; a reader that went away (EPIPE) gets nothing more, and no stack trace.
 * @param text the answer, Cobra's `__complete` format.
 * @returns whether `process.stdout` was used (its output may then still be queued).
 * @throws the write's error, other than EAGAIN and EPIPE.
 */
export function writeAnswer(text: string): boolean {
  const bytes = Buffer.from(text, "utf8");
  let at = 0;
  try {
    while (at < bytes.length) at += writeSync(1, bytes, at);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EPIPE") return false; // the shell stopped reading: nobody wants the rest
    if (code !== "EAGAIN") throw e;
    globalThis.process.stdout.write(bytes.subarray(at));
    return true;
  }
  return false;
}
