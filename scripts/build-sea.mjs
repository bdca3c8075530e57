// Builds kubectl-netpath as a Node single-executable application (SEA) for the platform this runs on: one file with
// Node inside, for krew users who have no Node.js (issue 17). Steps, as https://nodejs.org/api/single-executable-applications.html
// gives them for Node 20: bundle the CLI into one CommonJS script (SEA runs CommonJS only, no code splitting), let node
// write the preparation blob from sea-config, copy the node binary, inject the blob with postject, and pack the
// release archive krew downloads: kubectl-netpath_<os>_<arch>.tar.gz with the binary, the completion helper and LICENSE.
//
// Usage: node scripts/build-sea.mjs [--out DIR]   (default release/); prints the archive path and its sha256.
// Cross-building is not possible this way (the node binary is this machine's): each platform of the release matrix
// (docs/install.md) runs this on its own runner.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import process from "node:process";
import { build } from "esbuild";

const outArg = process.argv.indexOf("--out");
const out = resolve(outArg > 0 ? process.argv[outArg + 1] : "release");
const work = resolve(".tmp/sea");
const os = { linux: "linux", darwin: "darwin", win32: "windows" }[process.platform] ?? process.platform;
const arch = { x64: "amd64", arm64: "arm64" }[process.arch] ?? process.arch;
const exeName = os === "windows" ? "kubectl-netpath.exe" : "kubectl-netpath";

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
mkdirSync(out, { recursive: true });

// Optional add-ons the dependencies try to require inside try/catch and do without (ws: bufferutil, utf-8-validate;
// node-fetch: encoding; debug: supports-color). A SEA's require loads built-ins only and warns on anything else, so
// each is bundled as a module that throws, which the try/catch takes as "not installed", as when they are absent.
const OPTIONAL = ["bufferutil", "utf-8-validate", "encoding", "supports-color"];
const optionalAbsent = {
  name: "optional-absent",
  setup(b) {
    b.onResolve({ filter: new RegExp(`^(${OPTIONAL.join("|")})$`) }, (a) => ({ path: a.path, namespace: "optional-absent" }));
    b.onLoad({ filter: /.*/, namespace: "optional-absent" }, (a) => ({ contents: `throw new Error(${JSON.stringify(`${a.path} is not bundled`)});`, loader: "js" }));
  },
};

const built = await build({
  entryPoints: ["src/cli/sea.ts"],
  metafile: true,
  plugins: [optionalAbsent],
  outfile: join(work, "main.cjs"),
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  define: { "import.meta.main": "false" },
  alias: { punycode: "punycode/" },
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "error",
});

// A dynamic import() left in the script (an external module) would fail at run time under useCodeCache (below)
const dynamic = Object.values(built.metafile.outputs).flatMap((o) => o.imports).filter((i) => i.kind === "dynamic-import");
if (dynamic.length > 0) throw new Error(`build-sea: the single executable's script keeps import() of ${dynamic.map((i) => i.path).join(", ")}, which a SEA with a code cache cannot load`);
const seaConfig = join(work, "sea-config.json");
// useCodeCache (Node >= 20.6): the blob carries V8's code cache of the script, so each run skips compiling 2.6 MB of
// JavaScript. Measured (11 alternated runs): `--version` 136 -> 87 ms, `svc/testsvc --from examples/lb-legacy` 167 ->
// 132 ms. Node's SEA docs: `import()` does not work with it; the bundle has none (every import is bundled).
writeFileSync(seaConfig, JSON.stringify({ main: join(work, "main.cjs"), output: join(work, "sea-prep.blob"), disableExperimentalSEAWarning: true, useCodeCache: true }));
execFileSync(process.execPath, ["--experimental-sea-config", seaConfig], { stdio: ["ignore", "ignore", "inherit"] });

const dir = join(work, "pkg");
mkdirSync(dir);
const exe = join(dir, exeName);
copyFileSync(process.execPath, exe);
chmodSync(exe, 0o755);
if (os === "darwin") execFileSync("codesign", ["--remove-signature", exe]);
const postject = resolve("node_modules/postject/dist/cli.js");
execFileSync(process.execPath, [postject, exe, "NODE_SEA_BLOB", join(work, "sea-prep.blob"),
  "--sentinel-fuse", "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2", ...(os === "darwin" ? ["--macho-segment-name", "NODE_SEA"] : [])],
  { stdio: ["ignore", "ignore", "inherit"] });
if (os === "darwin") execFileSync("codesign", ["--sign", "-", exe]);
copyFileSync("LICENSE", join(dir, "LICENSE"));
copyFileSync("completions/kubectl_complete-netpath", join(dir, "kubectl_complete-netpath"));
chmodSync(join(dir, "kubectl_complete-netpath"), 0o755);

const archive = join(out, `kubectl-netpath_${os}_${arch}.tar.gz`);
execFileSync("tar", ["-czf", archive, "-C", dir, exeName, "kubectl_complete-netpath", "LICENSE"]);
const sha = createHash("sha256").update(readFileSync(archive)).digest("hex");
writeFileSync(`${archive}.sha256`, `${sha}  ${archive.split("/").pop()}\n`);
process.stdout.write(`${archive}\nsha256 ${sha}\n`);
