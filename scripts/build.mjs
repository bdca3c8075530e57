// Bundles the CLI for `npm install` (run in `prepare`), so the plugin runs from dist/ and starts fast.
// Everything is bundled in, dependencies included: krew installs the files of the npm tarball without node_modules
// (plugins/netpath.yaml), so dist/ must run on its own. The Kubernetes client is a chunk loaded by live commands only.
//
// Layout: dist/kubectl-netpath.cjs (the executable, package.json "bin") and dist/complete.cjs (the completion fast path)
// are CommonJS; the program is ES modules split into chunks (dist/main.mjs, dist/live-lookup.mjs, dist/chunks/*.mjs).
// The entry loads the fast path with `require`: on every TAB press that answers names, an ES module entry and an ES
// module fast path cost ~10 ms more (Node's ES module loader reads, translates and links each file asynchronously;
// measured with npm run bench:completion, 90 vs 81 ms, `node -e 0` 60 ms). Commands load the program with `import()`.
// The extensions say which is which, as Node and Deno both read them (Deno ignores a nested package.json "type" inside
// node_modules and under `deno install`).
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { chmodSync, readFileSync, rmSync } from "node:fs";

const outfile = "dist/kubectl-netpath.cjs";
rmSync("dist", { recursive: true, force: true });

/**
 * The completion fast path (src/cli/completion/fast.ts, what a TAB press on a name runs) is dist/complete.cjs, one file:
 * each ES module Node loads costs it resolving, reading and linking, and split into a dozen chunks it took ~7 ms more
 * per TAB (npm run bench:completion). bin.ts requires it from there; its one lazy import that brings the Kubernetes
 * client (live_lookup.ts, names from a cluster) is dist/live-lookup.mjs, an entry of the split build.
 */
const external = (filter, importerEnd, path) => ({
  name: `external ${path}`,
  setup(b) {
    b.onResolve({ filter }, (args) => (importerEnd === undefined || args.importer.endsWith(importerEnd) ? { path, external: true } : undefined));
  },
});
const shared = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Bundled CommonJS dependencies (commander) require Node built-ins; ESM output needs a real `require` for that.
  banner: { js: '#!/usr/bin/env node\nimport { createRequire as __netpathCreateRequire } from "node:module";\nconst require = __netpathCreateRequire(import.meta.url);' },
  // bin.ts calls main(); keep main.ts from running it again on runtimes that set import.meta.main (Node >= 24).
  define: { "import.meta.main": "false" },
  // node-fetch 2's whatwg-url and tr46 (inside @kubernetes/client-node) require the built-in `punycode`, deprecated
  // since Node 21 (DEP0040; Deno prints the warning on every live run): bundle the userland package of the same API.
  // (Run from source under Deno, src/kube/userland_punycode.ts does the same mapping with a resolve hook.)
  // yaml: its ES module build (the package's "default" export; the "node" one is CommonJS). Same code; as ESM it is
  // bundled without CommonJS wrappers, 30 kB smaller, and evaluated faster: a completion from a YAML bundle loads it.
  alias: { punycode: "punycode/", yaml: "./node_modules/yaml/browser/index.js" },
  logLevel: "warning",
  minifyWhitespace: true,
  minifySyntax: true,
};
/**
 * A module made of one line of CommonJS (the entry's stand-in for the fast path: dist/complete.cjs loaded through the
 * code cache, src/cli/code_cache.ts), its relative requires resolved from `resolveDir`.
 */
const commonJs = (filter, contents, resolveDir) => ({
  name: `commonjs ${contents}`,
  setup(b) {
    b.onResolve({ filter }, (args) => ({ path: args.path, namespace: "commonjs-line" }));
    b.onLoad({ filter: /.*/, namespace: "commonjs-line" }, () => ({ contents, loader: "js", resolveDir }));
  },
});
/**
 * commander requires `node:child_process` when it loads, for stand-alone executable subcommands (`git-foo` style),
 * which this CLI does not have; loading it brings `net`, `dgram` and the stream modules (~5 ms of every start, TAB
 * presses that answer through the program included). Inside commander it is a stand-in that requires the built-in
 * on first use of any of its properties, so commander behaves the same if it ever spawns one.
 */
const lazyChildProcess = {
  name: "commander: child_process on first use",
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer) ? { path: "lazy-child-process", namespace: "lazy-builtin" } : undefined);
    b.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, () => ({
      contents: 'let m; module.exports = new Proxy({}, { get: (_, k) => (m ??= require("node:child_process"))[k] });',
      loader: "js",
    }));
  },
};
/**
 * The fast path's one lazy import, live_lookup.ts (names from a cluster), is dist/live-lookup.mjs. The fast path runs
 * from V8's code cache (src/cli/code_cache.ts), compiled by `vm.Script`, where an `import()` has no loader on Node 20
 * (V8's "A dynamic import callback was not specified" once the code comes from the cache; and
 * `vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER` prints an ExperimentalWarning on every TAB): the import goes through
 * `__netpathImport`, a parameter of the code cache's module wrapper that imports from the executable, and is a plain
 * `import()` when complete.cjs is loaded by `require` (no such parameter).
 */
const liveLookupShim = {
  name: "live-lookup through the code cache's importer",
  setup(b) {
    b.onResolve({ filter: /\/live_lookup\.ts$/ }, (args) => ({ path: args.path, namespace: "live-lookup-shim" }));
    b.onLoad({ filter: /.*/, namespace: "live-lookup-shim" }, () => ({
      contents: 'export async function listLive(kind, source) {\n' +
        '  const m = await (typeof __netpathImport === "function" ? __netpathImport("./live-lookup.mjs") : import("./live-lookup.mjs"));\n' +
        "  return m.listLive(kind, source);\n}\n",
      loader: "js",
      resolveDir: "src/cli/completion",
    }));
  },
};
/** Node built-ins stay `require` calls, dropped where nothing imported from them is used. */
const builtins = {
  name: "node built-ins",
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) => ({ path: args.path, external: true, sideEffects: false }));
  },
};
// CommonJS, one file, short names: less source for V8 to scan on every TAB (error names are set explicitly, never
// read from classes). `require` of a CommonJS built-in module runs no getter: the ES module face of `node:fs` reads
// every export, `fs.ReadStream` included, which loads all of `node:stream` (~3 ms).
await build({
  ...shared,
  format: "cjs",
  banner: {},
  entryPoints: { complete: "src/cli/completion/fast.ts" },
  outdir: "dist",
  outExtension: { ".js": ".cjs" },
  minifyIdentifiers: true,
  plugins: [builtins, liveLookupShim, external(/^\.\/live-lookup\.mjs$/, undefined, "./live-lookup.mjs")],
});
// The name of the fast path's code cache carries the digest of its text (src/cli/code_cache.ts).
const fastPathDigest = createHash("sha256").update(readFileSync("dist/complete.cjs")).digest("hex");
// The executable: bin.ts, whose `import("./completion/fast.ts")` becomes dist/complete.cjs loaded through the V8 code
// cache (src/cli/code_cache.ts requireFastPath) when it is reached, and whose `import("./main.ts")` stays an `import()`
// of dist/main.mjs.
await build({
  ...shared,
  format: "cjs",
  banner: { js: "#!/usr/bin/env node" },
  entryPoints: { "kubectl-netpath": "src/cli/bin.ts" },
  outdir: "dist",
  outExtension: { ".js": ".cjs" },
  plugins: [
    builtins,
    commonJs(/\/completion\/fast\.ts$/, `module.exports = require("./code_cache.ts").requireFastPath(__dirname, "${fastPathDigest}");`, "src/cli"),
    external(/\/main\.ts$/, "src/cli/bin.ts", "./main.mjs"),
  ],
});
await build({
  // Code splitting keeps lazily imported modules (analyses, the Kubernetes client, YAML) in their own chunks, so
  // start-up (every TAB press runs the plugin) loads only the CLI layer.
  entryPoints: { main: "src/cli/main.ts", "live-lookup": "src/cli/completion/live_lookup.ts" },
  ...shared,
  outdir: "dist",
  outExtension: { ".js": ".mjs" },
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  plugins: [lazyChildProcess],
  // Dependencies are bundled too: krew's install has no node_modules, and resolving packages through node_modules costs
  // Node ~15 ms of start-up. ws's optional native add-ons (bufferutil, utf-8-validate) stay optional: ws loads them
  // in a try/catch, and without them uses its JavaScript code.
});
chmodSync(outfile, 0o755);
