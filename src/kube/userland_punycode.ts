/**
 * Edge, loaded before `@kubernetes/client-node` (client_node.ts imports it first): under Deno, a `require("punycode")`
 * made by the client's dependencies loads the userland `punycode` package (same API, npm `punycode` 2.x, a
 * devDependency) instead of the runtime's deprecated built-in module.
 *
 * Why: node-fetch 2 (client-node's config.js) loads whatwg-url 5, whose url-state-machine.js and tr46 0.0.3 call
 * `require("punycode")`. Node (>= 21) prints DEP0040 only when the built-in is required from outside node_modules
 * (lib/punycode.js, `isInsideNodeModules`); Deno 2 prints it for every require of it
 * (ext/node/polyfills/01_require.js `maybeEmitNativeModuleDeprecation`), so every live run and live completion from
 * source printed `[DEP0040] DeprecationWarning: The punycode module is deprecated` first on stderr. dist/ has no such
 * require: scripts/build.mjs aliases `punycode` to `punycode/` (the userland package) when bundling. A deno.json
 * import map cannot do the same for the sources: Deno applies it to the project's own ES module specifiers, not to
 * the `require` calls inside npm packages. A resolve hook (`module.registerHooks`, which Deno 2 implements for
 * CommonJS requires) does: it maps `punycode` to `punycode/` as the bundler alias does, and leaves the built-in in
 * place when the userland package is not installed.
 * @module
 */
import module from "node:module";

type Resolve = (specifier: string, context: unknown) => unknown;
type RegisterHooks = (hooks: { resolve(specifier: string, context: unknown, next: Resolve): unknown }) => unknown;

const registerHooks = (module as unknown as { registerHooks?: RegisterHooks }).registerHooks;
// Deno only: Node warns for no require from node_modules, and dist/ (the bundle) requires no `punycode` at all
if ("Deno" in globalThis && typeof registerHooks === "function") {
  registerHooks({
    resolve(specifier, context, next) {
      if (specifier !== "punycode" && specifier !== "node:punycode") return next(specifier, context);
      try {
        return next("punycode/", context); // the trailing slash: the package, never the built-in (as in build.mjs)
      } catch {
        return next(specifier, context);
      }
    },
  });
}
