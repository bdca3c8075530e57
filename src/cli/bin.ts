/**
 * The Node executable's entry (bundled to dist/kubectl-netpath.js by scripts/build.mjs).
 * @module
 */
import { main } from "./main.ts";

await main();
