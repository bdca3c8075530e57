/**
 * The kernel as the oracle for kube-proxy's nftables mode: the topology, packet sender and conntrack reading of
 * kernel_oracle.ts, with the node namespace holding an nftables ruleset (loaded with `nft -j -f` from the very
 * `nft -j list ruleset` JSON a bundle carries, or `nft -f` from `nft list ruleset` text) instead of iptables rules.
 *
 * Loading JSON: `nft -j list ruleset` prints sets and maps before chains, and a verdict map element (`… : goto
 * service-…`) names a chain, so nft 1.0.6 refuses the listing as input ("Could not process rule: No such file or
 * directory"). {@link nftLoadOrder} therefore keeps every object but orders them table → chains → sets/maps (with
 * their elements) → rules → elements, each group in listing order (so every chain keeps its rule order). nft 1.0.6's
 * JSON input also drops table/chain/set `comment`s; rules, elements and their comments load unchanged.
 *
 * Needs root, iproute2, nftables, conntrack (see scripts/ci-setup.sh). Test helper (node:child_process via netns.ts).
 * @module
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { ClientVerdict, ServiceReport } from "../../src/service/report.ts";
import {
  type ClientKind,
  type KernelOracle,
  type KernelTrace,
  openKernelOracle,
  ORACLE_TOOLS,
  type OracleTopology,
} from "./kernel_oracle.ts";
import { CommandError, type Netns } from "./netns.ts";

/** Tools the nftables oracle needs: gate suites with `requireNetns(NFT_ORACLE_TOOLS)`. */
export const NFT_ORACLE_TOOLS: readonly string[] = [...ORACLE_TOOLS, "nft"];

/**
 * The fake proxier's node (pkg/proxy/nftables/proxier_test.go: eth0 192.168.0.2/24, 192.168.1.2/24, 192.168.99.11/24)
 * with 192.168.1.2 first and the gateway in its subnet, so MASQUERADE picks 192.168.1.2 and the SNAT of a host client
 * sending from the NodePort address 192.168.0.2 (the `nodeport-ips` element) shows in conntrack.
 */
export const TOPOLOGY_NFT: OracleTopology = {
  nodeAddresses: ["192.168.1.2/24", "192.168.0.2/24", "192.168.99.11/24"],
  gateway: "192.168.1.1",
};

/** The ruleset to load: exactly one of `json` (`nft -j list ruleset` output) and `text` (`nft list ruleset`). */
export interface NftRules {
  json?: string;
  text?: string;
}

/** `nft -f` refused a ruleset; the message quotes nft's first error line. */
export class NftLoadError extends CommandError {
  override name = "NftLoadError";
}

/** Load rank of a libnftables-json object kind: declarations first, then what refers to them. */
const RANK: Record<string, number> = {
  metainfo: 0,
  table: 1,
  chain: 2,
  set: 3,
  map: 3,
  counter: 3,
  quota: 3,
  "ct helper": 3,
  limit: 3,
  flowtable: 3,
  rule: 4,
  element: 5,
};

/**
 * Reorders an `nft -j list ruleset` document so that `nft -j -f` accepts it (see the module doc).
 * @param json the listing.
 * @returns the same objects, as one JSON line, in load order.
 * @throws {Error} `not an nft -j document: expected {"nftables": [...]}` for other input.
 */
export function nftLoadOrder(json: string): string {
  const doc = JSON.parse(json) as { nftables?: Record<string, unknown>[] };
  if (!doc || !Array.isArray(doc.nftables)) throw new Error('not an nft -j document: expected {"nftables": [...]}');
  const rank = (o: Record<string, unknown>) => RANK[Object.keys(o)[0] ?? ""] ?? 6;
  const items = doc.nftables.map((o, i) => ({ o, i }));
  items.sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i);
  return JSON.stringify({ nftables: items.map((x) => x.o) });
}

/**
 * Loads a ruleset into a namespace with `nft [-j] -f FILE` (a temporary file, removed afterwards).
 * @throws {NftLoadError} `nft -j -f failed in netns <name> (exit 1): <first error line>`.
 */
export async function loadNft(ns: Netns, rules: NftRules): Promise<void> {
  if ((rules.json === undefined) === (rules.text === undefined)) {
    throw new Error("loadNft: give exactly one of json and text");
  }
  // nft opens /dev/stdin, which fails (ENXIO) on the socket Node gives a child as stdin: go through a file.
  const dir = mkdtempSync(join(tmpdir(), "knp-nft-"));
  const file = join(dir, rules.json !== undefined ? "ruleset.json" : "ruleset.nft");
  try {
    writeFileSync(file, rules.json !== undefined ? nftLoadOrder(rules.json) : rules.text!);
    const argv = rules.json !== undefined ? ["nft", "-j", "-f", file] : ["nft", "-f", file];
    const r = await ns.exec(argv);
    if (r.code !== 0) {
      const first = r.stderr.split("\n").map((l) => l.trim()).find((l) => l !== "") ?? "";
      throw new NftLoadError(
        `${argv.slice(0, -1).join(" ")} failed in netns ${ns.name} (exit ${r.code}): ${first}`,
        argv,
        r.code,
        r.stderr,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Builds the oracle's namespaces (kernel_oracle.ts), with the node holding `rules` and no iptables rules.
 * @throws {NftLoadError} when nft refuses the ruleset; {@link OracleError} for a bad topology.
 */
export async function openNftOracle(rules: NftRules, topo: OracleTopology = TOPOLOGY_NFT): Promise<KernelOracle> {
  const oracle = await openKernelOracle({ text: [], backend: "nft", jumps: false }, topo);
  try {
    await loadNft(oracle.node, rules);
  } catch (e) {
    await oracle.close();
    throw e;
  }
  return oracle;
}

const ORACLE_CLIENT: Record<string, ClientKind | undefined> = {
  "pod-same-node": "pod-local",
  "pod-other-node": "pod-remote",
  "host-network": "node-local",
  external: "external",
  "external-denied": "external",
  hairpin: "hairpin",
};

/** Connections sent per client when the analysis says the connection may go to several endpoints. */
export const SAMPLES = 400;

/** One compared client verdict, for the suite's tally. */
export interface Compared {
  where: string;
  analysis: ClientVerdict["outcome"];
  kernel: Record<string, number>;
}

/**
 * Sends every client of every entry point of the report's first node through the kernel and asserts the same verdict:
 * forwarded (the same endpoints, shares within 4 binomial sigma, the same SNAT per endpoint), dropped, rejected, or
 * not handled. Host clients whose source is the address MASQUERADE picks are skipped (conntrack cannot show that SNAT).
 * @returns the comparisons made.
 */
export async function compareWithKernel(
  oracle: KernelOracle,
  report: ServiceReport,
  topo: OracleTopology = TOPOLOGY_NFT,
): Promise<Compared[]> {
  const masqAddress = (topo.nodeAddresses ?? ["192.168.0.2/24"])[0]!.split("/")[0];
  const out: Compared[] = [];
  for (const port of report.nodes[0]!.ports) {
    const proto = port.servicePort.protocol.toLowerCase();
    if (proto !== "tcp" && proto !== "udp") continue;
    for (const entry of port.entryPoints) {
      const [ipPort] = entry.destination.split("/");
      const i = ipPort!.lastIndexOf(":");
      const dst = ipPort!.slice(0, i);
      const dport = Number(ipPort!.slice(i + 1));
      for (const c of entry.clients) {
        const kind = ORACLE_CLIENT[c.client];
        if (!kind || (kind === "node-local" && c.source === masqAddress)) continue;
        const samples = c.endpoints.length > 1 ? SAMPLES : 1;
        const k = await oracle.trace({ client: kind, src: c.source, dst, dport, proto, samples });
        const where = `${entry.kind} ${entry.destination} from ${c.description}`;
        assertAgrees(c, k, where, samples);
        out.push({ where, analysis: c.outcome, kernel: k.counts });
      }
    }
  }
  return out;
}

function assertAgrees(c: ClientVerdict, k: KernelTrace, where: string, samples: number): void {
  if (c.outcome === "dropped" || c.outcome === "rejected") {
    expect(k.counts["dropped"] ?? 0, `${where}: kernel should drop`).toBe(samples);
    expect(k.rejected, `${where}: kernel should ${c.outcome === "rejected" ? "reject (ICMP)" : "drop silently"}`).toBe(
      c.outcome === "rejected",
    );
    return;
  }
  if (c.outcome === "not-handled") {
    expect(k.counts["no-dnat"], `${where}: kernel should forward untranslated`).toBe(samples);
    return;
  }
  expect(c.outcome, where).toBe("forwarded");
  const want = new Map(c.endpoints.map((e) => [e.endpoint, e]));
  for (const [target, n] of Object.entries(k.counts)) {
    expect(want.has(target), `${where}: kernel sent ${n} to ${target}, analysis says ${[...want.keys()].join(", ")}`)
      .toBe(true);
  }
  for (const e of c.endpoints) {
    const n = k.counts[e.endpoint] ?? 0;
    const p = e.share ?? 0;
    const sigma = Math.sqrt(samples * p * (1 - p));
    expect(Math.abs(n - samples * p), `${where}: ${e.endpoint} got ${n}/${samples}, share ${p}`).toBeLessThanOrEqual(
      4 * sigma + 1e-9,
    );
  }
  for (const v of k.verdicts) {
    const e = want.get(v.dnatTo ?? "");
    expect(v.snat, `${where}: SNAT to ${v.dnatTo}`).toBe(e?.masqueraded === true);
  }
}
