// Bundles the CLI into one ESM file so `npm install` leaves a runnable, fast-starting plugin.
// The Kubernetes client is kept external: it is loaded lazily, only by live commands.
import { build } from "esbuild";
import { chmodSync } from "node:fs";

const outfile = "dist/kubectl-netpath.js";
await build({
  entryPoints: ["src/cli/bin.ts"],
  outfile,
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
