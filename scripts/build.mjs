// Bundles the CLI for `npm install` (run in `prepare`), so the plugin runs from dist/ and starts fast.
// Dependencies are bundled in, except the Kubernetes client, which is loaded lazily from node_modules by live commands.
import { build } from "esbuild";
import { chmodSync, rmSync } from "node:fs";

const outfile = "dist/kubectl-netpath.js";
rmSync("dist", { recursive: true, force: true });
await build({
  // Code splitting keeps lazily imported modules (analyses, the Kubernetes client, YAML) in their own chunks, so
  // start-up (every TAB press runs the plugin) loads only the CLI layer.
  entryPoints: { "kubectl-netpath": "src/cli/bin.ts" },
  outdir: "dist",
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Dependencies are bundled too (resolving packages through node_modules costs Node ~15 ms of start-up), except the
  // Kubernetes client: it is large, only live commands load it, and it must resolve its own optional dependencies.
  external: ["@kubernetes/client-node"],
  // Bundled CommonJS dependencies (commander) require Node built-ins; ESM output needs a real `require` for that.
  banner: { js: '#!/usr/bin/env node\nimport { createRequire as __netpathCreateRequire } from "node:module";\nconst require = __netpathCreateRequire(import.meta.url);' },
  // bin.ts calls main(); keep main.ts from running it again on runtimes that set import.meta.main (Node >= 24).
  define: { "import.meta.main": "false" },
  logLevel: "warning",
});
chmodSync(outfile, 0o755);
