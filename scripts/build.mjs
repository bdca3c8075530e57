// Bundles the CLI for `npm install` (run in `prepare`), so the plugin runs from dist/ and starts fast.
// Dependencies stay external (node_modules); the Kubernetes client is loaded lazily, only by live commands.
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
  packages: "external",
  banner: { js: "#!/usr/bin/env node" },
  // bin.ts calls main(); keep main.ts from running it again on runtimes that set import.meta.main (Node >= 24).
  define: { "import.meta.main": "false" },
  logLevel: "warning",
});
chmodSync(outfile, 0o755);
