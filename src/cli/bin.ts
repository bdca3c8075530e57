/**
 * The Node executable's entry (bundled to dist/kubectl-netpath.js by scripts/build.mjs).
 * @module
 */
import process from "node:process";
import { main } from "./main.ts";

await main();
// Everything the command does is awaited by main(). Exit now rather than let Node tear the heap down on its own
// (after a 26 MB dump that takes it ~20 ms), unless output is still queued (pipes are asynchronous on macOS).
if (process.stdout.writableLength === 0 && process.stderr.writableLength === 0) process.exit(process.exitCode ?? 0);
