/**
 * How the nftables tracer quotes its evidence: table labels, rule and map-element references, layout anomaly notes.
 *
 * Part of the nftables tracer (trace.ts has the whole story). Runtime-neutral: no I/O.
 * @module
 */
import type { KubeProxyNftAnomaly } from "../../datapath/kube_proxy_nft.ts";
import { type NftChain, type NftElement, type NftRule, type NftSet, type NftTable, verdictText } from "../../datapath/nft_model.ts";
import type { RuleRef } from "../trace.ts";

/**
 * The `table` field of evidence: family and name as nft prints them, e.g. `ip kube-proxy`.
 * @param t a table.
 * @returns `"<family> <name>"`.
 */
export function nftTableLabel(t: Pick<NftTable, "family" | "name">): string {
  return `${t.family} ${t.name}`;
}

/**
 * The evidence reference of an nft rule: `line` is the kernel handle when known (then also `handle`), else the input
 * line; `raw` is the rule as `nft -a list ruleset` prints it (statements, `comment "…"`, `# handle N`).
 * @param rule a parsed rule.
 * @returns `{ table: "ip kube-proxy", chain, line, handle?, raw }`.
 */
export function nftRuleRef(rule: NftRule): RuleRef {
  let raw = rule.text;
  if (rule.comment !== undefined) raw += ` comment "${rule.comment}"`;
  if (rule.handle !== undefined) raw += ` # handle ${rule.handle}`;
  const ref: RuleRef = { table: `${rule.family} ${rule.table}`, chain: rule.chain, line: rule.handle ?? rule.line, raw };
  if (rule.handle !== undefined) ref.handle = rule.handle;
  return ref;
}

export function elementRef(rule: NftRule, set: NftSet, e: NftElement): RuleRef {
  const r = nftRuleRef(rule);
  const key = e.keyText + (e.comment !== undefined ? ` comment "${e.comment}"` : "");
  const data = e.verdict ? ` : ${verdictText(e.verdict)}` : e.data !== undefined ? ` : ${e.data}` : "";
  return { ...r, raw: `${r.raw}; @${set.name} element ${key}${data}` };
}

export function chainRef(c: NftChain, what: string): RuleRef {
  const ref: RuleRef = { table: `${c.family} ${c.table}`, chain: c.name, line: c.handle ?? c.line, raw: `chain ${c.name} { ${what} }` };
  if (c.handle !== undefined) ref.handle = c.handle;
  return ref;
}



// ---------------------------------------------------------------------------------------------------------------
// Packet fields and value matching

/** Caveat words for a layout anomaly: `nftables: MESSAGE (CHAIN handle N: TEXT)`, as node notes word them too. */
export function nftAnomalyNote(a: KubeProxyNftAnomaly): string {
  const ev = a.evidence[0];
  const where = ev
    ? ` (${ev.chain ?? (ev.set !== undefined ? `@${ev.set}` : "")}${
      ev.handle !== undefined ? ` handle ${ev.handle}` : ""
    }: ${ev.text})`
    : "";
  return `nftables: ${a.message}${where}`;
}
