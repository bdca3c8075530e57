// Regenerates the standalone completion scripts kept in completions/ (bash, zsh, fish, PowerShell) from
// src/cli/completion/scripts.ts — the same text `kubectl-netpath completion SHELL` prints.
//
//   node scripts/gen-completions.mjs           write completions/*
//   node scripts/gen-completions.mjs --check   exit 1, naming the stale files, when a file differs
//
// tests/completion_engine.test.ts fails when the files are stale; this script is the fix.
import { build } from "esbuild";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const check = process.argv.includes("--check");
const out = join(root, ".tmp", "gen-completions", "scripts.mjs");
mkdirSync(dirname(out), { recursive: true });
// Bundled inside the repository so that the packages it imports (@bomb.sh/tab) resolve from node_modules.
await build({
  entryPoints: [join(root, "src/cli/completion/scripts.ts")],
  outfile: out,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  logLevel: "warning",
});
const { completionScript, SCRIPT_FILES, SHELLS } = await import(pathToFileURL(out).href);

const stale = [];
for (const shell of SHELLS) {
  const file = join(root, "completions", SCRIPT_FILES[shell]);
  const want = completionScript(shell);
  let have;
  try {
    have = readFileSync(file, "utf8");
  } catch {
    have = undefined;
  }
  if (have === want) continue;
  if (check) stale.push(`completions/${SCRIPT_FILES[shell]}`);
  else {
    writeFileSync(file, want);
    console.log(`wrote completions/${SCRIPT_FILES[shell]}`);
  }
}
// kubectl_complete-netpath: static answers computed by the CLI itself (src/cli/completion/static_responder.ts).
{
  const outResponder = join(root, ".tmp", "gen-completions", "static_responder.mjs");
  await build({
    entryPoints: [join(root, "src/cli/completion/static_responder.ts")],
    outfile: outResponder,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    define: { "import.meta.main": "false" },
    logLevel: "warning",
  });
  const { kubectlCompleteScript, lineSpecSource } = await import(pathToFileURL(outResponder).href);
  const specFile = join(root, "src", "cli", "completion", "line_spec_data.ts");
  const specWant = lineSpecSource();
  let specHave;
  try {
    specHave = readFileSync(specFile, "utf8");
  } catch {
    specHave = undefined;
  }
  if (specHave !== specWant) {
    if (check) stale.push("src/cli/completion/line_spec_data.ts");
    else {
      writeFileSync(specFile, specWant);
      console.log("wrote src/cli/completion/line_spec_data.ts");
    }
  }
  const file = join(root, "completions", "kubectl_complete-netpath");
  const want = await kubectlCompleteScript();
  let have;
  try {
    have = readFileSync(file, "utf8");
  } catch {
    have = undefined;
  }
  if (have !== want) {
    if (check) stale.push("completions/kubectl_complete-netpath");
    else {
      writeFileSync(file, want, { mode: 0o755 });
      chmodSync(file, 0o755);
      console.log("wrote completions/kubectl_complete-netpath");
    }
  }
}
if (check && stale.length > 0) {
  console.error(`stale: ${stale.join(", ")} (run: node scripts/gen-completions.mjs)`);
  process.exit(1);
}
if (check) console.log("completions/ is current");
