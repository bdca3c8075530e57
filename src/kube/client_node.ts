/**
 * Edge: the parts of `@kubernetes/client-node` (pinned 1.4.x) this project uses, imported by name so that the
 * bundler keeps only them: a dynamic `import("@kubernetes/client-node")` keeps the whole package (5.3 MB of generated
 * API clients and models in dist/, ~70 ms more start-up for every live run and every TAB that asks a cluster),
 * named imports ~1.2 MB. kubeconfig.ts and exec.ts load this module lazily (`await import`), so the offline path never
 * loads the client.
 * @module
 */
// first: under Deno, the client's dependencies then get the userland punycode (no DEP0040 warning)
import "./userland_punycode.ts";
export { Exec, KubeConfig } from "@kubernetes/client-node";
export { WebSocketHandler } from "@kubernetes/client-node/dist/web-socket-handler.js";
