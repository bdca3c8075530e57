// Where each rule of an `nft -j` document ends is read from nft's printed form (src/datapath/nft_json.ts ruleEnd)
// instead of counting the brackets of every expression. The spans must be exactly JSON's: every rule's `expr` text
// parses to the `expr` JSON.parse finds for the same handle, on kube-proxy's rulesets as nft prints them
// (tests/fixtures/nftables, synthetic ones included), on the bench's generated 10,000-Service ruleset, and on crafted
// documents where the printed form misleads (`]}}, {"` inside an expression, a key after `expr`, a statement with a
// `family`), which must fall back to counting.
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { planCluster } from "../bench/cluster_plan.ts";
import { nftRulesetJson } from "../bench/gen_nftables.ts";
import { DumpParseError } from "../src/datapath/errors.ts";
import { parseNftJson, ruleEnd } from "../src/datapath/nft_json.ts";
import { fixture, fixturePath } from "./helpers/bundles.ts";

const names = [
  ...readdirSync(fixturePath("nftables")).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5)),
  ...readdirSync(fixturePath("nftables/synthetic")).filter((f) => f.endsWith(".json")).map((f) =>
    `synthetic/${f.slice(0, -5)}`
  ),
];

type Obj = Record<string, unknown>;

/** Every rule of the documents (one per line) as JSON.parse reads it, keyed `family table chain handle`. */
function rulesByJsonParse(text: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const line of text.split("\n").filter((l) => l.trim() !== "")) {
    for (const item of (JSON.parse(line) as { nftables: Obj[] }).nftables) {
      const r = item.rule as Obj | undefined;
      if (r) out.set(`${r.family} ${r.table} ${r.chain} ${r.handle}`, r.expr);
    }
  }
  return out;
}

/** Every rule of parseNftJson's ruleset, its `expr` read back from the span the parser kept. */
function rulesByParser(text: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const t of parseNftJson(text).tables) {
    for (const c of t.chains.values()) {
      for (const r of c.rules) {
        const expr = r.exprJson?.();
        // a rule the parser had to JSON.parse keeps no span: it shows as undefined and fails the comparison
        out.set(`${r.family} ${r.table} ${r.chain} ${r.handle}`, expr === undefined ? undefined : JSON.parse(expr));
      }
    }
  }
  return out;
}

/**
 * Every rule's text form, keyed as above. On a pretty-printed document nft's printed form is not there: every element
 * is JSON.parse'd on its own (the reference the crafted cases are checked against).
 */
function rulesText(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const t of parseNftJson(text).tables) {
    for (const c of t.chains.values()) for (const r of c.rules) out.set(`${r.family} ${r.table} ${r.chain} ${r.handle}`, r.text);
  }
  return out;
}

const pretty = (text: string) => JSON.stringify(JSON.parse(text), null, 2);

/** The offset of each rule's `"expr": [` bracket in a document nft printed (a rule's head has no other). */
function exprOffsets(text: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf('"expr": ['); i !== -1; i = text.indexOf('"expr": [', i + 1)) out.push(i + 8);
  return out;
}

const doc = (...items: string[]) => `{"nftables": [${items.join(", ")}]}`;
const table = '{"table": {"family": "ip", "name": "kube-proxy", "handle": 1}}';
const chain = (name: string, handle: number) =>
  `{"chain": {"family": "ip", "table": "kube-proxy", "name": "${name}", "handle": ${handle}}}`;
const rule = (chainName: string, handle: number, expr: string, after = "") =>
  `{"rule": {"family": "ip", "table": "kube-proxy", "chain": "${chainName}", "handle": ${handle}, "expr": ${expr}${after}}}`;
const accept = '[{"accept": null}]';

describe("rule spans read from nft's printed form equal JSON's", () => {
  it.each(names)("%s: every rule's expr text parses to JSON.parse's expr for that handle", (name) => {
    const text = fixture(`nftables/${name}.json`);
    const expected = rulesByJsonParse(text);
    expect(rulesByParser(text)).toEqual(expected);
  });

  it("the fixtures' rules are split from the printed form (no bracket counting) but for each document's last element", () => {
    let rules = 0;
    let counted = 0;
    for (const name of names) {
      const text = fixture(`nftables/${name}.json`);
      for (const at of exprOffsets(text)) {
        rules++;
        if (ruleEnd(text, at) < 0) counted++;
      }
    }
    expect(rules).toBeGreaterThan(500);
    // at most one rule per document (the last element) has no next element to recognise
    expect(counted).toBeLessThanOrEqual(names.length * 2);
  });

  it("a generated 10,000-Service ruleset: 122,023 rules, spans equal to JSON's; only the last rule is counted", () => {
    const text = nftRulesetJson(planCluster({ services: 10000 }));
    const expected = rulesByJsonParse(text);
    expect(expected.size).toBe(122023);
    expect(rulesByParser(text)).toEqual(expected);
    const offsets = exprOffsets(text);
    expect(offsets.filter((at) => ruleEnd(text, at) < 0)).toEqual([offsets.at(-1)]);
  });
});

describe("where the printed form would mislead, the end is counted", () => {
  const masq = "mark-for-masquerade";

  it("`]}}, {\"` inside an expression (log flags before the next statement) or a string is not taken for the end", () => {
    const flags = '[{"log": {"prefix": "x", "flags": ["all"]}}, {"counter": {"packets": 0, "bytes": 0}}, {"accept": null}]';
    const inString = '[{"log": {"prefix": "x ]}}, {"}}, {"accept": null}]';
    for (const expr of [flags, inString]) {
      const text = doc(table, chain(masq, 2), rule(masq, 3, expr), rule(masq, 4, accept), rule(masq, 5, accept));
      expect(ruleEnd(text, exprOffsets(text)[0]!)).toBe(-1);
      const at = exprOffsets(text)[1]!;
      expect(text.slice(at, ruleEnd(text, at))).toBe(`${accept}}}`);
      expect(rulesText(text)).toEqual(rulesText(pretty(text)));
      expect(rulesText(text).size).toBe(3);
    }
  });

  it("a key after expr: the span would swallow the next rule, so -1 and the document still parses right", () => {
    const text = doc(table, chain(masq, 2), rule(masq, 3, accept, ', "x": 1'), rule(masq, 4, accept), rule(masq, 5, accept));
    expect(ruleEnd(text, exprOffsets(text)[0]!)).toBe(-1);
    const rs = rulesText(text);
    expect([...rs.keys()]).toEqual([`ip kube-proxy ${masq} 3`, `ip kube-proxy ${masq} 4`, `ip kube-proxy ${masq} 5`]);
    expect(rs).toEqual(rulesText(pretty(text)));
  });

  it("a statement whose object starts with family (snat in an inet-style print) before `]}}, {\"`: counted, right", () => {
    const expr = '[{"snat": {"family": "ip", "addr": "10.0.0.1", "flags": ["persistent"]}}, {"accept": null}]';
    const text = doc(table, chain(masq, 2), rule(masq, 3, expr), rule(masq, 4, accept));
    expect(ruleEnd(text, exprOffsets(text)[0]!)).toBe(-1);
    expect(rulesText(text)).toEqual(rulesText(pretty(text)));
    expect(rulesText(text).size).toBe(2);
  });

  it("the next element is not one libnftables prints (no family first): counted", () => {
    const text = doc(table, chain(masq, 2), rule(masq, 3, accept), '{"rule": {"table": "kube-proxy"}}');
    expect(ruleEnd(text, exprOffsets(text)[0]!)).toBe(-1);
    expect(() => parseNftJson(text)).toThrow(/rule without family, table or chain/);
  });

  it("pretty-printed or otherwise spaced documents: counted, same ruleset", () => {
    const compact = doc(table, chain(masq, 2), rule(masq, 3, accept), rule(masq, 4, accept));
    const spaced = pretty(compact);
    expect(exprOffsets(spaced).map((at) => ruleEnd(spaced, at))).toEqual([-1, -1]);
    expect(rulesText(spaced)).toEqual(rulesText(compact));
    expect([...rulesText(compact).values()]).toEqual(["accept", "accept"]);
  });

  it("a document cut inside a rule whose printed end is intact elsewhere still fails as truncated, with its line", () => {
    const text = doc(table, chain(masq, 2), rule(masq, 3, accept), rule(masq, 4, accept));
    const cut = text.slice(0, text.lastIndexOf('"expr"'));
    expect(() => parseNftJson(cut)).toThrow(DumpParseError);
    expect(() => parseNftJson(cut)).toThrow(/truncated JSON/);
  });

  it("two documents (ip and ip6 tables, one per line): both split, line numbers kept", () => {
    const v4 = doc(table, chain(masq, 2), rule(masq, 3, accept), rule(masq, 4, accept));
    const v6 = v4.replaceAll('"family": "ip"', '"family": "ip6"');
    const rs = parseNftJson(`${v4}\n${v6}\n`);
    expect(rs.tables.map((t) => `${t.family} ${[...t.chains.values()][0]!.rules.map((r) => `${r.handle}@${r.line}`)}`))
      .toEqual(["ip 3@1,4@1", "ip6 3@2,4@2"]);
  });
});
