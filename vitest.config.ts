import { resolve } from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests that touch network namespaces share kernel state; they take a file lock themselves.
    pool: "forks",
    // The built executable's code cache (src/cli/code_cache.ts) goes under the checkout, not the user's ~/.cache
    env: { XDG_CACHE_HOME: resolve(import.meta.dirname, ".tmp", "test-xdg-cache") },
  },
});
