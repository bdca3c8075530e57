/**
 * The entry of the single-executable build (scripts/build-sea.mjs): Node's SEA runs one CommonJS script, which cannot
 * use top-level await, so this entry chains the promise that bin.ts awaits.
 * @module
 */
import process from "node:process";
import { main } from "./main.ts";

main().then(() => {
  // As bin.ts: exit without Node's heap teardown unless output is still queued.
  if (process.stdout.writableLength === 0 && process.stderr.writableLength === 0) process.exit(process.exitCode ?? 0);
}, (e: unknown) => {
  process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
