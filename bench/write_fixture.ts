/**
 * Edge: writes a benchmark bundle directory (docs in src/bundle/decode.ts `bundleFromFiles`) for N Services:
 *
 * ```
 * bench/out/<mode>-<N>/
 *   capture.yaml                      provenance (synthetic)
 *   services.json endpointslices.json nodes.json     kubectl get … -o json Lists
 *   nodes/node-1/iptables-save.txt    (mode iptables)  the node's iptables-save
 *   nodes/node-1/nft-json.txt         (mode nftables)  the node's nft -j list ruleset
 *   nodes/node-1/nft-text.txt         (mode nftables-text)  the same ruleset as nft list table prints it (what live
 *                                     collection reads in nftables mode)
 *   nodes/node-1/proxy-mode.txt       what kube-proxy's /proxyMode answers
 *   .bench-fixture.json               manifest for scripts/bench.mjs (dot file: the bundle reader skips it)
 * ```
 * With `objects: "query"` (directory `<mode>-<N>-query/`) the object files hold only what a live `svc/NAME` question
 * reads from the API (the queried Service, its EndpointSlice, the Nodes of its endpoints and the dumped node), as
 * `kubectl netpath capture svc/NAME` would save them; the node dump is the same full one.
 * The manifest is written last, so a directory without it (an interrupted run) is rebuilt.
 *
 * Bench code (not shipped): node:fs.
 * @module
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { planCluster, type PlanOptions, servicePortName } from "./cluster_plan.ts";
import { iptablesSave } from "./gen_iptables.ts";
import { nftRulesetJson, nftRulesetText } from "./gen_nftables.ts";
import { objectFiles } from "./gen_objects.ts";

/** Bumped whenever generated content changes, so stale fixtures are rebuilt. */
export const GENERATOR_VERSION = 3;

/** Proxy modes the bench generates (`nftables-text`: nftables mode, the ruleset as nft's text). */
export type BenchMode = "iptables" | "nftables" | "nftables-text";

/** Which API objects a fixture holds: every Service/EndpointSlice/Node, or only those the query needs. */
export type BenchObjects = "all" | "query";

/** What the bench needs to know about a written fixture (the `.bench-fixture.json` manifest). */
export interface FixtureManifest {
  generatorVersion: number;
  mode: BenchMode;
  objects: BenchObjects;
  services: number;
  endpointsPerService: number;
  /** Bundle directory. */
  dir: string;
  /** The node dump file (iptables-save.txt, nft-json.txt or nft-text.txt). */
  dumpPath: string;
  dumpBytes: number;
  /** Total bytes of the bundle's files. */
  bundleBytes: number;
  /** The queried Service: the one in the middle of the plan. */
  query: {
    namespace: string;
    name: string;
    /** `ns/name:port`, the text kube-proxy puts in its iptables rule comments (what the bench greps for). */
    servicePortName: string;
    /** Each endpoint as `IP:targetPort`. */
    endpoints: string[];
    clusterIP: string;
  };
}

/** Name of the manifest file inside a fixture directory. */
export const MANIFEST = ".bench-fixture.json";

/**
 * The directory of a fixture.
 * @param outDir e.g. `bench/out`.
 * @param mode proxy mode.
 * @param services N.
 * @param objects all objects (`<mode>-<N>`) or the query's only (`<mode>-<N>-query`).
 */
export function fixtureDir(outDir: string, mode: BenchMode, services: number, objects: BenchObjects = "all"): string {
  return join(outDir, `${mode}-${services}${objects === "query" ? "-query" : ""}`);
}

/**
 * Reads a fixture's manifest when the fixture is complete and current.
 * @returns the manifest, or undefined when missing, unreadable or from another generator version.
 */
export function readManifest(dir: string): FixtureManifest | undefined {
  const path = join(dir, MANIFEST);
  if (!existsSync(path)) return undefined;
  try {
    const m = JSON.parse(readFileSync(path, "utf8")) as FixtureManifest;
    if (m.generatorVersion !== GENERATOR_VERSION || !existsSync(m.dumpPath)) return undefined;
    return m;
  } catch {
    return undefined;
  }
}

/**
 * Generates and writes one fixture directory (replacing any previous one).
 * @param outDir parent directory, created when missing.
 * @param mode iptables (iptables-save dump), nftables (nft -j dump) or nftables-text (nft list dump).
 * @param options plan sizes.
 * @param objects every object, or only the query's (see the module doc).
 * @returns the manifest written.
 * @throws {PlanError} when the sizes do not fit the address plan; file-system errors as thrown by node:fs.
 */
export function writeFixture(outDir: string, mode: BenchMode, options: PlanOptions, objects: BenchObjects = "all"): FixtureManifest {
  const plan = planCluster(options);
  const svc = plan.services[Math.floor(plan.services.length / 2)]!;
  const dir = fixtureDir(outDir, mode, options.services, objects);
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const nodeDir = join(tmp, "nodes", plan.dumpNode.name);
  mkdirSync(nodeDir, { recursive: true });
  const wanted = new Set([plan.dumpNode.name, ...svc.endpoints.map((e) => e.nodeName)]);
  const files = objectFiles(objects === "all" ? plan : { ...plan, services: [svc], nodes: plan.nodes.filter((n) => wanted.has(n.name)) });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(tmp, name), text);
  writeFileSync(
    join(tmp, "capture.yaml"),
    [
      "# Synthetic benchmark bundle written by bench/write_fixture.ts (npm run bench); not captured from a cluster.",
      `command: "bench generator: ${options.services} Services x ${options.endpointsPerService ?? 5} endpoints, kube-proxy ${mode === "nftables-text" ? "nftables (nft list text)" : mode} mode, objects: ${objects}"`,
      "tool: kubectl-netpath bench",
      "notes:",
      `  - "${plan.nodes.length} nodes, pod CIDR ${plan.clusterCIDR}, Service CIDR ${plan.serviceCIDR}; only ${plan.dumpNode.name}'s datapath is dumped"`,
      "",
    ].join("\n"),
  );
  const dumpName = mode === "iptables" ? "iptables-save.txt" : mode === "nftables" ? "nft-json.txt" : "nft-text.txt";
  writeFileSync(join(nodeDir, dumpName), mode === "iptables" ? iptablesSave(plan) : mode === "nftables" ? nftRulesetJson(plan) : nftRulesetText(plan));
  writeFileSync(join(nodeDir, "proxy-mode.txt"), mode === "iptables" ? "iptables" : "nftables");
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);

  const dumpPath = join(dir, "nodes", plan.dumpNode.name, dumpName);
  const bundleBytes = [...Object.keys(files), "capture.yaml"].reduce((n, f) => n + statSync(join(dir, f)).size, 0) +
    statSync(dumpPath).size + statSync(join(dir, "nodes", plan.dumpNode.name, "proxy-mode.txt")).size;
  const manifest: FixtureManifest = {
    generatorVersion: GENERATOR_VERSION,
    mode,
    objects,
    services: options.services,
    endpointsPerService: options.endpointsPerService ?? 5,
    dir,
    dumpPath,
    dumpBytes: statSync(dumpPath).size,
    bundleBytes,
    query: {
      namespace: svc.namespace,
      name: svc.name,
      servicePortName: servicePortName(svc),
      endpoints: svc.endpoints.map((e) => `${e.ip}:${svc.targetPort}`),
      clusterIP: svc.clusterIP,
    },
  };
  writeFileSync(join(dir, MANIFEST), JSON.stringify(manifest, null, 2) + "\n");
  return manifest;
}
