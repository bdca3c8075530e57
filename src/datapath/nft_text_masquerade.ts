/**
 * Recognises kube-proxy's ClusterIP masquerade request — `ip daddr VIP [tcp dport P] [ip saddr != CIDR] jump
 * mark-for-masquerade` — in a rule's line as `nft list ruleset` prints it, without decoding the rule: the text-form
 * twin of nft_json_masquerade.ts (same reason: the table-wide facts of a kube-proxy table are read from this rule of
 * every service chain, 10,000 rules on a 10,000-Service node; decoding them all cost ~110 ms of a text question).
 *
 * Exactness: only the exact line nft 1.0.6 prints (single spaces, the matches in kube-proxy's order, a plain
 * address, a numeric port, a CIDR) is recognised; the interface forms (`iifname != "veth*"`) hold quotes, and such
 * lines are decoded eagerly by nft_text.ts anyway. Anything else gives undefined and the caller decodes the rule's
 * statements. tests/nft_text_masquerade.test.ts checks that what is recognised is what the decoder makes of every
 * rule of kube-proxy's rulesets as nft prints them.
 *
 * Source of truth for the rule: kube-proxy `pkg/proxy/nftables/proxier.go` (syncProxyRules, the internalTrafficChain
 * rule `ipX daddr ClusterIP [protocol dport port] localDetector.IfNotLocalNFT() jump mark-for-masquerade`).
 * @module
 */
import { masqueradeParts, type MasqueradeRuleParts } from "./nft_json_masquerade.ts";

/** An address as nft prints one (no `@`: a set reference is another thing). */
const ADDR = "[0-9A-Fa-f.:]+";

const MASQUERADE_LINE = new RegExp(
  `^\\s*ip6? daddr (${ADDR})(?: (tcp|udp|sctp|th) dport (\\d{1,5}))?(?: ip6? saddr != (${ADDR})/(\\d{1,3}))? jump mark-for-masquerade\\s*$`,
);

/**
 * The parts of a ClusterIP masquerade rule from its line, or undefined when the line is not exactly that rule as nft
 * prints it (then decode the rule's statements: it may still be one, written otherwise).
 * @param line the rule's line (NftRule.lineText()), e.g. `ip daddr 10.96.0.10 ip saddr != 10.244.0.0/16 jump mark-for-masquerade`.
 * @returns daddr, protocol, dport and notLocal as the statement decoder gives them; undefined when not recognised.
 */
export function masqueradeRuleFromText(line: string): MasqueradeRuleParts | undefined {
  const m = MASQUERADE_LINE.exec(line);
  if (m === null) return undefined;
  return masqueradeParts(m[1]!, m[2], m[3], m[4] !== undefined ? { kind: "cidr", cidr: `${m[4]}/${m[5]}` } : undefined);
}
