/**
 * Executable entry of {@link runCliWithCompletion} (bundled by the tests and scripts/bench-completion.mjs the way
 * scripts/build.mjs bundles src/cli/bin.ts).
 * @module
 */
import { main } from "./entry.ts";

await main();
