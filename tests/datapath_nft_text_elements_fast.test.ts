/**
 * The nft text parser reads kube-proxy's `elements = { … }` lists without tokens (elementsFast in
 * src/datapath/nft_text.ts): the elements must be those of the general path, element for element, on every nft text
 * fixture (kube-proxy's own unit-test rulesets, the real dumps kept in tests/fixtures, as transactions and as nft listed them, and the synthetic ones) and on a generated 1,000-Service
 * ruleset; lists it does not take (quotes, comments, per-element options, words it would not read) go the general way.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { planCluster } from "../bench/cluster_plan.ts";
import { nftRulesetText } from "../bench/gen_nftables.ts";
import type { NftRuleset, NftSet } from "../src/datapath/nft_model.ts";
import { elementsFast, parseNftText } from "../src/datapath/nft_text.ts";

// tests/fixtures/nftables holds the real dumps of ../shared/fixtures/real-dumps/nftables (kube-proxy's unit-test
// rulesets, with provenance), as transactions and as nft listed them; a clone has no ../shared
const DIRS = ["tests/fixtures/nftables", "tests/fixtures/nftables/synthetic"];

function files(): { name: string; text: string }[] {
  const out: { name: string; text: string }[] = [];
  for (const d of DIRS) {
    for (const f of readdirSync(d).filter((x) => /\.nft(?:-a)?(?:\.txt)?$/.test(x)).sort()) out.push({ name: join(d, f), text: readFileSync(join(d, f), "latin1") });
  }
  return out;
}

/** Every set and map of a ruleset with its elements, by family/table/name. */
function setsOf(rs: NftRuleset): Map<string, NftSet> {
  const out = new Map<string, NftSet>();
  for (const t of rs.tables) for (const s of t.sets.values()) out.set(`${t.family} ${t.name} ${s.name}`, s);
  return out;
}

function parseBoth(text: string): { fast: NftRuleset | Error; general: NftRuleset | Error } {
  const run = (fastElements: boolean) => {
    try {
      return parseNftText(text, { fastElements });
    } catch (e) {
      return e as Error;
    }
  };
  return { fast: run(true), general: run(false) };
}

describe("nft text: elements read without tokens equal the general path's", () => {
  const all = files();
  test("there are fixtures with element lists", () => {
    expect(all.length).toBeGreaterThan(40);
    expect(all.filter((f) => /elements = \{/.test(f.text)).length).toBeGreaterThan(10);
  });

  test.each(all.map((f) => [f.name, f.text]))("%s", (_name, text) => {
    const { fast, general } = parseBoth(text);
    if (general instanceof Error) {
      expect(fast).toBeInstanceOf(Error);
      expect((fast as Error).message).toBe(general.message);
      return;
    }
    expect(fast).not.toBeInstanceOf(Error);
    const a = setsOf(fast as NftRuleset);
    const b = setsOf(general);
    expect([...a.keys()]).toEqual([...b.keys()]);
    for (const [k, s] of b) expect(a.get(k)!.elements, k).toEqual(s.elements);
    expect((fast as NftRuleset).unparsed).toEqual(general.unparsed);
  });

  test("a generated 1,000-Service ruleset: the same elements, and kube-proxy's maps are read the fast way", () => {
    const text = nftRulesetText(planCluster({ services: 1000, endpointsPerService: 5 }));
    const { fast, general } = parseBoth(text);
    const a = setsOf(fast as NftRuleset);
    const b = setsOf(general as NftRuleset);
    let elements = 0;
    for (const [k, s] of b) {
      expect(a.get(k)!.elements, k).toEqual(s.elements);
      elements += s.elements.length;
    }
    expect(elements).toBeGreaterThan(2000);
    const ips = [...b.values()].find((s) => s.name === "service-ips")!;
    const listed = ips.elements.map((e) => `${e.keyText} : ${e.data}`).join(",\n\t\t\t     ");
    expect(elementsFast(ips, `elements = { ${listed} }`)).toEqual(ips.elements);
  });

  test("lists it does not take go the general way", () => {
    const map: NftSet = { family: "ip", table: "t", kind: "map", name: "m", line: 1, type: "ipv4_addr . inet_proto . inet_service", keyType: ["ipv4_addr", "inet_proto", "inet_service"], dataType: "verdict", flags: [], elements: [] } as unknown as NftSet;
    expect(elementsFast(map, 'elements = { 10.0.0.1 . tcp . 80 comment "x" : goto s }')).toBeUndefined();
    expect(elementsFast(map, "elements = { 10.0.0.1 . tcp . 80 timeout 5s : goto s }")).toBeUndefined();
    expect(elementsFast(map, "elements = { 10.0.0.1 . tcp . 80 : goto s, , 10.0.0.2 . tcp . 80 : drop }")).toBeUndefined();
    expect(elementsFast(map, "elements = { 10.0.0.1 . tcp . 80 : goto }")).toBeUndefined();
    expect(elementsFast(map, "elements = { 10.0.0.1 . tcp . 80 : goto s, 10.0.0.2 . tcp . 81 : drop, }")).toEqual([
      { verdict: { kind: "goto", target: "s" }, data: "goto s", keyText: "10.0.0.1 . tcp . 80", key: ["10.0.0.1", "tcp", "80"], text: "10.0.0.1 . tcp . 80 : goto s" },
      { verdict: { kind: "drop" }, data: "drop", keyText: "10.0.0.2 . tcp . 81", key: ["10.0.0.2", "tcp", "81"], text: "10.0.0.2 . tcp . 81 : drop" },
    ]);
  });
});
