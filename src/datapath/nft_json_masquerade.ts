/**
 * Recognises kube-proxy's ClusterIP masquerade request — `ip daddr VIP [tcp dport P] [ip saddr != CIDR | iifname !=
 * IF] jump mark-for-masquerade` — in the JSON text of a rule's `expr` array as `nft -j` prints it, without parsing it.
 *
 * Why: the table-wide facts of a kube-proxy nftables table (the local-traffic detector, --masquerade-all) are read
 * from this rule of every service chain: 10,000 rules on a 10,000-Service node, of which a question otherwise decodes
 * a few dozen. Decoding them all cost ~75 ms of a ~1 s offline question; matching their text costs a few.
 *
 * Exactness: only the exact form libnftables' JSON output gives (keys in its order, `", "` and `": "` separators, no
 * escape sequence) is recognised; anything else — another order of matches, a counter, a set reference, a named port —
 * gives undefined and the caller decodes the rule's statements as before. What is recognised is what the statement
 * decoder (nft_json.ts) makes of the same text; tests/nft_json_masquerade.test.ts checks that on every rule of the
 * seed, real and generated dumps.
 *
 * Source of truth for the rule: kube-proxy `pkg/proxy/nftables/proxier.go` (syncProxyRules: the internalTrafficChain
 * rule `ipX daddr ClusterIP [protocol dport port] localDetector.IfNotLocalNFT() jump mark-for-masquerade`, or without
 * the local condition under --masquerade-all).
 */

/** What a recognised rule says; field meanings as in ClusterIPMasqueradeRule (kube_proxy_nft.ts). */
export interface MasqueradeRuleParts {
  /** The ClusterIP, as printed (`10.96.0.10`, `fd00::a`). */
  daddr: string;
  /** `tcp`, `udp` or `sctp` when the port test names it; undefined for `th dport` or no port test. */
  protocol?: string;
  /** The ServicePort's port, when tested. */
  dport?: number;
  /** The local-traffic condition masquerade is skipped for; undefined = masquerade all traffic to the VIP. */
  notLocal?:
    | { kind: "cidr"; cidr: string }
    | { kind: "interface"; name: string }
    | { kind: "interface-prefix"; prefix: string };
}

const M = '\\{"match": \\{"op": ';
const PAYLOAD = (proto: string, field: string) =>
  `\\{"payload": \\{"protocol": "${proto}", "field": "${field}"\\}\\}`;
/** An address as nft prints one (no `@`: a set reference is another thing). */
const ADDR = "[0-9A-Fa-f.:]+";
/** An interface name or prefix (`eth0`, `veth*`); no quote, backslash or `@`. */
const IFNAME = "[A-Za-z0-9_.+:*-]+";

const MASQUERADE_EXPR = new RegExp(
  "^\\[" +
    `${M}"==", "left": ${PAYLOAD("(ip6?)", "daddr")}, "right": "(${ADDR})"\\}\\}, ` +
    `(?:${M}"==", "left": ${PAYLOAD("(tcp|udp|sctp|th)", "dport")}, "right": (\\d{1,5})\\}\\}, )?` +
    "(?:" +
    `${M}"!=", "left": ${PAYLOAD("ip6?", "saddr")}, "right": \\{"prefix": \\{"addr": "(${ADDR})", "len": (\\d{1,3})\\}\\}\\}\\}, ` +
    `|${M}"!=", "left": \\{"meta": \\{"key": "iif(?:name)?"\\}\\}, "right": "(${IFNAME})"\\}\\}, ` +
    ")?" +
    '\\{"jump": \\{"target": "mark-for-masquerade"\\}\\}\\]$',
);

/**
 * The parts of a ClusterIP masquerade rule from its `expr` JSON text, or undefined when the text is not exactly that
 * rule in nft's own JSON form (then decode the rule's statements: it may still be one, written otherwise).
 * @param expr the `expr` array's JSON text (NftRule.exprJson()).
 * @returns daddr, protocol, dport and notLocal as the statement decoder gives them; undefined when not recognised.
 */
export function masqueradeRuleFromJson(expr: string): MasqueradeRuleParts | undefined {
  const m = MASQUERADE_EXPR.exec(expr);
  if (m === null) return undefined;
  const v = m[7];
  const iface = v === undefined ? undefined : v.endsWith("*") ? { kind: "interface-prefix" as const, prefix: v.slice(0, -1) } : { kind: "interface" as const, name: v };
  return masqueradeParts(m[2]!, m[3], m[4], m[5] !== undefined ? { kind: "cidr", cidr: `${m[5]}/${m[6]}` } : iface);
}

/**
 * The parts of a recognised rule from its matched pieces (as both recognisers capture them).
 * @param daddr the ClusterIP.
 * @param proto the port test's protocol (`tcp`, `udp`, `sctp`, or `th`: none), undefined without a port test.
 * @param port the port's digits, undefined without a port test.
 * @param notLocal the local-traffic condition, undefined for none.
 */
export function masqueradeParts(daddr: string, proto: string | undefined, port: string | undefined, notLocal: MasqueradeRuleParts["notLocal"]): MasqueradeRuleParts {
  const out: MasqueradeRuleParts = { daddr };
  if (port !== undefined) {
    out.dport = Number(port);
    if (proto !== undefined && proto !== "th") out.protocol = proto;
  }
  if (notLocal !== undefined) out.notLocal = notLocal;
  return out;
}
