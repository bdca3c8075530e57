/**
 * Turns an `iptables -t nat -nL` / `-nvL` listing (what many write-ups and support tickets show instead of
 * iptables-save) into the {@link IptablesDump} model, so the same tracer can follow it. Every chain goes into table
 * `nat` (the listings kube-proxy users share are of the nat table). What the listing format loses is said, not
 * invented: match text the listing parser did not understand becomes a match module named `listing-unparsed` that the
 * tracer reports as "not modelled", and chains absent from a partial listing stay absent (the tracer reports them).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { IptablesChain, IptablesDump, IptablesRule, MatchModule, RuleOption } from "./iptables_save.ts";
import type { IptablesListing, ListingChain, ListingRule } from "./iptables_list.ts";

const ANY = new Set(["0.0.0.0/0", "::/0", "anywhere"]);

function opt(name: string, values: string[], negated = false): RuleOption {
  return { name, negated, values };
}

/**
 * Converts one listing rule.
 * @param r the parsed listing rule.
 * @param table the table name to record (default "nat").
 * @returns an {@link IptablesRule} with the listing line's text and line number as evidence.
 */
export function listingRuleToRule(r: ListingRule, table = "nat"): IptablesRule {
  const rule: IptablesRule = { table, chain: r.chain, line: r.line, raw: r.raw.trim(), matches: [], targetOptions: [] };
  if (!ANY.has(r.source.value)) rule.source = { negated: r.source.negated, value: r.source.value };
  if (!ANY.has(r.destination.value)) rule.destination = { negated: r.destination.negated, value: r.destination.value };
  if (r.protocol !== "all" && r.protocol !== "0") rule.protocol = { negated: r.prot.negated, value: r.protocol };
  if (r.in) rule.inInterface = { ...r.in };
  if (r.out) rule.outInterface = { ...r.out };
  const m = (name: string, ...options: RuleOption[]) => rule.matches.push({ name, options } satisfies MatchModule);
  if (r.comment !== undefined) {
    m("comment", opt("comment", [r.comment]));
    rule.comment = r.comment;
  }
  if (r.dport || r.sport) {
    const options: RuleOption[] = [];
    const fmt = (p: { first: number; last: number }) => (p.first === p.last ? `${p.first}` : `${p.first}:${p.last}`);
    if (r.dport) options.push(opt("dport", [fmt(r.dport)], r.dport.negated));
    if (r.sport) options.push(opt("sport", [fmt(r.sport)], r.sport.negated));
    m(r.portMatchProtocol ?? r.protocol, ...options);
  }
  if (r.probability !== undefined) m("statistic", opt("mode", ["random"]), opt("probability", [String(r.probability)]));
  for (const s of r.matchSets) m("set", opt("match-set", [s.name, s.flags], s.negated));
  if (r.markMatch) m("mark", opt("mark", [r.markMatch.value], r.markMatch.negated));
  if (r.addrtype) {
    const options: RuleOption[] = [];
    if (r.addrtype.src) options.push(opt("src-type", [r.addrtype.src.value], r.addrtype.src.negated));
    if (r.addrtype.dst) options.push(opt("dst-type", [r.addrtype.dst.value], r.addrtype.dst.negated));
    m("addrtype", ...options);
  }
  if (r.recent) {
    const cmd = { SET: "set", CHECK: "rcheck", UPDATE: "update", REMOVE: "remove" }[r.recent.command];
    const options = [opt(cmd, [], r.recent.negated)];
    if (r.recent.seconds !== undefined) options.push(opt("seconds", [String(r.recent.seconds)]));
    if (r.recent.name) options.push(opt("name", [r.recent.name]));
    m("recent", ...options);
  }
  if (r.ctstate) m("conntrack", opt("ctstate", [r.ctstate.value], r.ctstate.negated));
  if (r.extra && r.extra.length > 0) m("listing-unparsed", opt("text", [r.extra.join(" ")]));
  if (r.target !== undefined) {
    rule.target = r.target;
    if (r.toDestination) rule.targetOptions.push(opt("to-destination", [r.toDestination.raw.replace(/^to:/, "")]));
    if (r.toSource) rule.targetOptions.push(opt("to-source", [r.toSource.replace(/^to:/, "")]));
    if (r.markTarget) {
      const name = { set: "set-mark", or: "or-mark", xor: "xor-mark", and: "and-mark", xset: "set-xmark" }[r.markTarget.op];
      rule.targetOptions.push(opt(name, [r.markTarget.value]));
    }
    if (r.randomFully) rule.targetOptions.push(opt("random-fully", []));
    if (r.rejectWith) rule.targetOptions.push(opt("reject-with", [r.rejectWith]));
  }
  return rule;
}

function toChain(c: ListingChain, table: string): IptablesChain {
  const rules = c.rules.map((r) => listingRuleToRule(r, table));
  const chain: IptablesChain = {
    name: c.name,
    line: c.line,
    rules,
    rule: (i: number) => rules[i]!,
    ruleCount: rules.length,
    rawRules: rules.map((r) => r.raw),
    ruleLines: rules.map((r) => r.line),
  };
  if (c.policy !== undefined) chain.policy = c.policy;
  return chain;
}

/**
 * Converts a parsed listing into a dump with one table.
 * @param listing the output of parseIptablesListing.
 * @param table the table the listing was taken of. @default "nat"
 * @returns the dump; a chain listed twice (as seeds often do) keeps its first listing.
 */
export function listingToDump(listing: IptablesListing, table = "nat"): IptablesDump {
  const chains = new Map<string, IptablesChain>();
  let ruleCount = 0;
  listing.chains.forEach((c, i) => {
    if (chains.has(c.name)) return;
    const chain = toChain(c, table);
    // Lines the parser could not read inside this chain's block (e.g. "......" where a write-up elided rules).
    const end = listing.chains[i + 1]?.line ?? Number.MAX_SAFE_INTEGER;
    const gaps = listing.unparsed.filter((u) => u.line > c.line && u.line < end);
    if (gaps.length > 0) chain.incomplete = gaps.map((g) => `line ${g.line} "${g.text.trim()}" is not a rule`).join("; ");
    chains.set(c.name, chain);
    ruleCount += c.rules.length;
  });
  return { tables: new Map([[table, { name: table, line: 1, chains, deletedChains: [] }]]), legacyTablesPresent: false, ruleCount };
}
