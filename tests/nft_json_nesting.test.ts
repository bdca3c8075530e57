// A deeply nested `nft -j` dump (a vmap key nested 5,000 levels, hand-made or hostile) overflowed the call stack of
// nft_json.ts's recursive decoders and failed the whole run as "internal error (RangeError: Maximum call stack size
// exceeded)". The decoders stop at MAX_NFT_JSON_NESTING levels: that rule is a DumpParseError "nesting too deep" of its
// node only, and the other nodes are still answered. The dumps are examples/nftables-lab's real `nft -j list ruleset`.
import { describe, expect, it } from "vitest";
import { DumpParseError } from "../src/datapath/errors.ts";
import { MAX_NFT_JSON_NESTING, parseNftJson } from "../src/datapath/nft_json.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";

const lab = readBundle("examples/nftables-lab");
const NFT = lab.nodes[0]!.sections["nft-json"]!.stdout;
const VMAP_KEY = '"expr": [{"vmap": {"key": {"concat": [';

/** The lab's ruleset with the firewall-check vmap's key wrapped in `depth` more concat levels. */
function deep(depth: number): string {
  const at = NFT.indexOf(VMAP_KEY);
  expect(at).toBeGreaterThan(0);
  const keyStart = at + '"expr": [{"vmap": {"key": '.length;
  // the key object ends before `, "data": "@firewall-ips"`
  const keyEnd = NFT.indexOf(', "data": "@firewall-ips"', keyStart);
  const key = NFT.slice(keyStart, keyEnd);
  return NFT.slice(0, keyStart) + '{"concat": ['.repeat(depth) + key + "]}".repeat(depth) + NFT.slice(keyEnd);
}

/** Parses the text and decodes every rule (rules are decoded when first read). */
function readAll(text: string): void {
  for (const t of parseNftJson(text).tables) for (const c of t.chains.values()) for (const r of c.rules) void r.statements;
}

describe("nft -j nesting", () => {
  it("the lab's ruleset decodes (nft's own nesting is well under the limit)", () => {
    expect(() => readAll(deep(MAX_NFT_JSON_NESTING - 8))).not.toThrow();
  });

  it("a vmap key nested 5,000 levels is a DumpParseError naming the rule, not a stack overflow", () => {
    let err: unknown;
    try {
      readAll(deep(5000));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DumpParseError);
    expect((err as Error).message).toMatch(/^nft-json line 1: nesting too deep \(more than 64 levels of expressions; nft prints a handful\): ".*"chain": "firewall-check", "handle": 51/);
  });

  it("a set element nested 5,000 levels deep is one too", () => {
    const text = NFT.replace(/("elem": \[)/, `$1${'{"concat": ['.repeat(5000)}"x"${"]}".repeat(5000)}, `);
    expect(text).not.toBe(NFT);
    expect(() => readAll(text)).toThrow(/nesting too deep/);
  });

  it("only that node fails: the other node is still answered", () => {
    const b = structuredClone(lab);
    const good = structuredClone(b.nodes[0]!);
    good.name = "other-node";
    b.nodes[0]!.sections["nft-json"]!.stdout = deep(5000);
    b.nodes.push(good);
    const node = structuredClone(b.objects.nodes.find((n) => n.metadata.name === "test-node")!);
    node.metadata.name = "other-node";
    b.objects.nodes.push(node);
    const r = explainService(b, "ns4", "svc4", { nodes: ["test-node", "other-node"] });
    const bad = r.nodes.find((n) => n.node === "test-node")!;
    const ok = r.nodes.find((n) => n.node === "other-node")!;
    expect(bad.error).toMatch(/^nft-json line 1: nesting too deep/);
    expect(ok.error).toBeUndefined();
    expect(ok.proxyMode.mode).toBe("nftables");
  });
});
