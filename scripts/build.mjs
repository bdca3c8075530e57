// Bundles the CLI into one ESM file so `npm install` leaves a runnable, fast-starting plugin.
// The Kubernetes client is kept external: it is loaded lazily, only by live commands.
import { build } from "esbuild";
import { chmodSync } from "node:fs";

const outfile = "dist/kubectl-netpath.js";
await build({
  entryPoints: ["src/cli/main.ts"],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  banner: { js: "#!/usr/bin/env node" },
  logLevel: "warning",
});
chmodSync(outfile, 0o755);
