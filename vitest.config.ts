import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests that touch network namespaces share kernel state; they take a file lock themselves.
    pool: "forks",
  },
});
