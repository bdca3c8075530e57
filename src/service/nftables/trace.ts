/**
 * The nftables packet tracer: follows the first packet of a new connection through kube-proxy's nftables table
 * (`ip kube-proxy` / `ip6 kube-proxy`, kubernetes/kubernetes pkg/proxy/nftables/proxier.go, v1.29+) the way the kernel
 * evaluates it, and returns the same {@link TraceResult} as the iptables tracer (iptables_trace.ts), so the
 * per-client verdicts (client_verdict.ts) read the same for both modes.
 *
 * Kernel semantics modelled (nft(8), net/netfilter/nf_tables_core.c, nft_nat.c, nf_nat_core.c):
 * - Base chains are run per hook in priority order (ties: chain handle, i.e. creation order): for a client from the
 *   network or a pod, prerouting (`filter-prerouting-pre-dnat` at dstnat-10 = -110, `nat-prerouting` at dstnat = -100),
 *   then the routing decision (a destination that is a local address after DNAT goes to input, anything else to
 *   forward: `filter-input` / `filter-forward` at priority filter = 0), then postrouting (`nat-postrouting` at
 *   srcnat = 100); for a host-network process, output (`filter-output-pre-dnat` -110, `nat-output` -100,
 *   `filter-output` 0), then postrouting.
 * - A rule's statements run left to right: a match that fails ends the rule (the chain goes on with the next rule);
 *   `jump` runs the target chain and comes back; `goto` does not come back (the end of the target chain, or its
 *   `return`, goes back to whoever called the chain holding the goto); `accept` ends the current base chain (later base
 *   chains on the hook still run); `drop` and `reject` end the packet; the end of a base chain applies its policy.
 * - `dnat to` and `masquerade` end their base chain (accept) and bind the connection's NAT: once a nat chain has set up
 *   the destination (or source) mapping, later nat chains on that hook are not consulted (nf_nat_inet_fn).
 * - `KEY vmap @map` / `KEY vmap { … }` look the packet up; no element → the rule does not match.
 *   `numgen random mod N vmap { 0 : goto A, 1 : goto B, … }` branches: each value 0..N-1 is equally likely, so an
 *   endpoint mapped from k values gets exactly k/N of new connections (the shares come from the decoder,
 *   kube_proxy_nft.ts; values with no entry fall through to the next rule). The kernel draws the value as
 *   `reciprocal_scale(get_random_u32(), N)`, which is k/N to within N/2^32.
 * - `meta mark set meta mark | 0x4000` (`mark-for-masquerade`) and `meta mark & 0x4000 == 0 return` / `masquerade`
 *   (`masquerading`) are evaluated on the packet mark; every rule that requests masquerade (`jump
 *   mark-for-masquerade`, or a mark statement setting the masquerade bit) met on the way is recorded as a
 *   {@link RuleCheck}, fired or not, with the reason, like the iptables tracer does for KUBE-MARK-MASQ.
 *
 * What a ruleset cannot show is reported, not guessed: conntrack state (existing connections keep their endpoint),
 * session affinity (a new client is not in an `affinity-…` set; a client listed in the captured set is, until its
 * entry expires), interface matches (`iifname`), `numgen inc` (a round-robin counter), rate limits. Only the
 * kube-proxy table is evaluated; the caller says which other tables hook the same points.
 *
 * A chain that does not fit kube-proxy's layout (KubeProxyNft.chainAnomalies: an unmapped numgen value, an unexpected
 * rule) adds its findings as caveats of the branches that run it, worded like the node notes: `nftables: MESSAGE
 * (CHAIN handle N: RULE)`. What a trace derives from a table (base chains per hook, set indexes) is kept for the next
 * trace of the same table; per-Service chains are decoded as the trace reaches them. A chain whose rules cannot be
 * read (nft -j input with a syntax error inside a rule, found when the rule is first read) ends its branches as
 * `unresolved`, like a chain missing from the dump, with the parse error as a caveat.
 *
 * Evidence: every decision carries a {@link RuleRef} `{ table: "ip kube-proxy", chain, line, raw }` where `line` is
 * the rule's kernel handle when known (JSON input, `nft -a` listings) and its line in the input otherwise, and `raw`
 * is the rule as `nft -a list ruleset` prints it (`… comment "…" # handle 64`). A decision taken by a named map
 * element (`@no-endpoint-services`, `@service-ips`) quotes the element after the rule: `…; element 172.30.0.46 . tcp
 * . 80 comment "ns6/svc6:p80" : goto reject-chain`.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { DumpParseError } from "../../datapath/errors.ts";
import { type Fraction, indexesOf, type KubeProxyNft, type KubeProxyNftAnomaly } from "../../datapath/kube_proxy_nft.ts";
import {
  type NftChain,
  type NftElement,
  type NftRule,
  type NftSet,
  type NftStatement,
  type NftTable,
  type NftValue,
  type NftVerdict,
  verdictText,
} from "../../datapath/nft_model.ts";
import { cidrContains, isIPv6, joinHostPort } from "../../model/ip.ts";
import type { RuleCheck, RuleRef, TraceOutcome, TraceResult } from "../trace.ts";
import type { TracePacket } from "../trace.ts";

/** Options of {@link traceNft}. */
export interface NftTraceOptions {
  /** The mark bit `mark-for-masquerade` sets. @default the decoded bit, else 0x4000 */
  masqueradeMark?: number;
  /** Maximum outcomes before the tracer gives up (protects against pathological rulesets). @default 10000 */
  maxOutcomes?: number;
  /** Notes to add to every result (e.g. other tables hooking the same points). @default [] */
  notes?: string[];
}

/** Thrown when a ruleset makes the tracer loop (chains nested deeper than the kernel allows) or explode. */
export class NftTraceError extends Error {
  override name = "NftTraceError";
}

/** Hooks in the order a packet meets them; `input` / `forward` are chosen by the routing decision. */
type Hook = "prerouting" | "input" | "forward" | "output" | "postrouting";

/** How a chain run ended for one branch. */
type How = "return" | "accept" | "drop" | "reject" | "dnat" | "masquerade" | "snat" | "missing";

interface State {
  probability: number;
  packet: TracePacket;
  path: RuleRef[];
  checks: RuleCheck[];
  caveats: string[];
  /** The map element that sent the packet into the current chain (for kube-proxy's `reject-chain` helper). */
  via?: RuleRef;
}

interface Ended extends State {
  how: How;
  dnatTo?: string;
  decidedBy?: RuleRef;
  missingChain?: string;
  /** how = "missing" because the chain is in the dump but cannot be read: the parse error. */
  unreadable?: string;
}

/** A branch between base chains: its NAT bindings so far. */
interface Flow extends State {
  dnatTo?: string;
  snatBy?: RuleRef;
  /** Mark after the first hook's chains (what the outcome reports). */
  markAfterNat?: number;
}

interface FlowEnd extends Flow {
  how: "drop" | "reject" | "missing";
  decidedBy?: RuleRef;
  missingChain?: string;
  unreadable?: string;
}

/** The chain kube-proxy uses to request masquerade, and the helpers that are not themselves requests. */
const MARK_CHAIN = "mark-for-masquerade";
const MASQ_CHAIN = "masquerading";
/** kube-proxy's reject helper (`goto reject-chain` from @no-endpoint-services / @no-endpoint-nodeports). */
const REJECT_CHAIN = "reject-chain";
const MAX_DEPTH = 64;

/**
 * The `table` field of evidence: family and name as nft prints them, e.g. `ip kube-proxy`.
 * @param t a table.
 * @returns `"<family> <name>"`.
 */
export function nftTableLabel(t: Pick<NftTable, "family" | "name">): string {
  return `${t.family} ${t.name}`;
}

/**
 * The evidence reference of an nft rule: `line` is the kernel handle when known, else the input line; `raw` is the
 * rule as `nft -a list ruleset` prints it (statements, `comment "…"`, `# handle N`).
 * @param rule a parsed rule.
 * @returns `{ table: "ip kube-proxy", chain, line, raw }`.
 */
export function nftRuleRef(rule: NftRule): RuleRef {
  let raw = rule.text;
  if (rule.comment !== undefined) raw += ` comment "${rule.comment}"`;
  if (rule.handle !== undefined) raw += ` # handle ${rule.handle}`;
  return { table: `${rule.family} ${rule.table}`, chain: rule.chain, line: rule.handle ?? rule.line, raw };
}

function elementRef(rule: NftRule, set: NftSet, e: NftElement): RuleRef {
  const r = nftRuleRef(rule);
  const key = e.keyText + (e.comment !== undefined ? ` comment "${e.comment}"` : "");
  const data = e.verdict ? ` : ${verdictText(e.verdict)}` : e.data !== undefined ? ` : ${e.data}` : "";
  return { ...r, raw: `${r.raw}; @${set.name} element ${key}${data}` };
}

function chainRef(c: NftChain, what: string): RuleRef {
  return {
    table: `${c.family} ${c.table}`,
    chain: c.name,
    line: c.handle ?? c.line,
    raw: `chain ${c.name} { ${what} }`,
  };
}

function clonePacket(p: TracePacket): TracePacket {
  return { ...p, ctstate: new Set(p.ctstate) };
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Packet fields and value matching

/** A packet field a selector reads, typed for comparison. */
type Field =
  | { kind: "addr"; who: string; value: string }
  | { kind: "proto"; value: string }
  | { kind: "port"; who: string; value: number }
  /** `shown`: how a failed match words the packet's value, e.g. `packet mark 0x4000`. */
  | { kind: "number"; shown: string; value: number }
  | { kind: "flags"; who: string; value: string[] }
  | { kind: "word"; who: string; value: string }
  | { kind: "iface"; who: string; value: string };

type FieldResult = Field | { no: string } | { unknown: string };

const PROTO_NUMBERS: Record<string, string> = {
  "6": "tcp",
  "17": "udp",
  "132": "sctp",
  "1": "icmp",
  "58": "ipv6-icmp",
  "136": "udplite",
};
const PORT_PROTOS = new Set(["tcp", "udp", "sctp", "udplite", "dccp"]);

function normProto(s: string): string {
  const t = s.toLowerCase();
  return PROTO_NUMBERS[t] ?? (t === "icmpv6" ? "ipv6-icmp" : t);
}

function parseNumber(s: string): number | undefined {
  const t = s.trim();
  if (/^0x[0-9a-f]+$/i.test(t)) return parseInt(t, 16);
  if (/^\d+$/.test(t)) return Number(t);
  return undefined;
}

/** Reads the packet field a selector names (`ip saddr`, `th dport`, `meta mark & 0x00004000`, `fib daddr type`). */
function fieldOf(selector: string, p: TracePacket): FieldResult {
  const fam = p.family === 6 ? "ip6" : "ip";
  let m: RegExpExecArray | null;
  if ((m = /^(ip6?) (saddr|daddr)$/.exec(selector))) {
    if (m[1] !== fam) return { no: `the packet is IPv${p.family} (rule matches ${m[1]})` };
    return m[2] === "saddr"
      ? { kind: "addr", who: "source", value: p.src }
      : { kind: "addr", who: "destination", value: p.dst };
  }
  if (selector === "meta l4proto" || selector === "ip protocol" || selector === "ip6 nexthdr") {
    return { kind: "proto", value: p.proto };
  }
  if ((m = /^(th|tcp|udp|sctp|udplite) (dport|sport)$/.exec(selector))) {
    const proto = m[1]!;
    if (proto === "th" ? !PORT_PROTOS.has(p.proto) : proto !== p.proto) {
      return { no: `protocol ${p.proto} (rule matches ${selector})` };
    }
    return m[2] === "dport"
      ? { kind: "port", who: "destination port", value: p.dport }
      : { kind: "port", who: "source port", value: p.sport ?? 40000 };
  }
  if (selector === "meta mark" || selector === "mark") {
    return { kind: "number", shown: `packet mark ${hex(p.mark)}`, value: p.mark };
  }
  if ((m = /^(?:meta )?mark & (0x[0-9a-f]+|\d+)$/i.exec(selector))) {
    return { kind: "number", shown: `packet mark ${hex(p.mark)}`, value: (p.mark & parseNumber(m[1]!)!) >>> 0 };
  }
  if (selector === "ct state") {
    const states = [...p.ctstate].map((s) => s.toLowerCase()).filter((s) =>
      ["new", "established", "related", "invalid", "untracked"].includes(s)
    );
    return { kind: "flags", who: "connection state", value: states };
  }
  if (selector === "ct status") {
    const st = [...p.ctstate].map((s) => s.toLowerCase()).filter((s) => s === "dnat" || s === "snat");
    return { kind: "flags", who: "connection status", value: st };
  }
  if ((m = /^fib (saddr|daddr) type$/.exec(selector))) {
    const src = m[1] === "saddr";
    return {
      kind: "word",
      who: src ? `source ${p.src}` : `destination ${p.dst}`,
      value: (src ? p.srcLocal : p.dstLocal) ? "local" : "unicast",
    };
  }
  if (selector === "meta nfproto") return { kind: "word", who: "family", value: p.family === 6 ? "ipv6" : "ipv4" };
  if (selector === "iifname" || selector === "meta iifname" || selector === "oifname" || selector === "meta oifname") {
    const input = selector.endsWith("iifname");
    const known = input ? p.inInterface : p.outInterface;
    if (known === undefined) return { unknown: `depends on the ${input ? "input" : "output"} interface` };
    return { kind: "iface", who: input ? "input interface" : "output interface", value: known };
  }
  return { unknown: `selector "${selector}" is not modelled` };
}

/** Whether the field's value equals one scalar text as nft prints it (address, prefix, range, name, number). */
function scalarHas(f: Field, text: string): boolean | undefined {
  const t = text.replace(/^"|"$/g, "");
  switch (f.kind) {
    case "addr": {
      if (isIPv6(t) !== isIPv6(f.value)) return false;
      const dash = t.indexOf("-");
      if (dash > 0) return inAddrRange(f.value, t.slice(0, dash).trim(), t.slice(dash + 1).trim());
      return cidrContains(t, f.value);
    }
    case "proto":
      return normProto(t) === f.value;
    case "port":
    case "number": {
      const dash = t.indexOf("-", 1);
      if (dash > 0) {
        const lo = parseNumber(t.slice(0, dash));
        const hi = parseNumber(t.slice(dash + 1));
        return lo === undefined || hi === undefined ? undefined : f.value >= lo && f.value <= hi;
      }
      const n = parseNumber(t);
      return n === undefined ? undefined : n === f.value;
    }
    case "flags":
      return t.split(",").some((x) => f.value.includes(x.trim().toLowerCase()));
    case "word":
      return f.value === t.toLowerCase();
    case "iface":
      return t.endsWith("*") ? f.value.startsWith(t.slice(0, -1)) : f.value === t;
  }
}

function addrBits(a: string): bigint | undefined {
  if (!isIPv6(a)) {
    const o = a.split(".").map(Number);
    if (o.length !== 4 || o.some((x) => !Number.isInteger(x) || x < 0 || x > 255)) return undefined;
    return BigInt(((o[0]! << 24) >>> 0) + (o[1]! << 16) + (o[2]! << 8) + o[3]!);
  }
  const [head, tail] = a.split("::") as [string, string | undefined];
  const hs = head === "" ? [] : head.split(":");
  const ts = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? hs : [...hs, ...Array(8 - hs.length - ts.length).fill("0"), ...ts];
  if (groups.length !== 8) return undefined;
  let v = 0n;
  for (const g of groups) v = (v << 16n) + BigInt(parseInt(g || "0", 16));
  return v;
}

function inAddrRange(a: string, from: string, to: string): boolean | undefined {
  const x = addrBits(a);
  const lo = addrBits(from);
  const hi = addrBits(to);
  if (x === undefined || lo === undefined || hi === undefined) return undefined;
  return x >= lo && x <= hi;
}

interface SetLookup {
  set(name: string): NftSet | undefined;
  /** The set's elements that are plain addresses, by value, and the others (prefixes, ranges, …). */
  addresses(set: NftSet): AddressIndex;
}

/**
 * Membership of a named set for an address, without testing each of its (10,000+) elements: elements that are a
 * plain IPv4 or IPv6 address match exactly when they equal the address (what cidrContains decides for them); the
 * others are tested one by one.
 */
interface AddressIndex {
  /** IPv4 elements as written; IPv6 elements as `v6:` + their value in hex. */
  plain: Set<string>;
  others: NftElement[];
}

const IPV4_TEXT = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const IPV6_TEXT = /^(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}$/i;

/** The key of a plain address in an AddressIndex, or undefined when the text is not one. */
function plainAddressKey(text: string): string | undefined {
  if (IPV4_TEXT.test(text)) return text;
  if (!IPV6_TEXT.test(text) || text.indexOf("::") !== text.lastIndexOf("::")) return undefined;
  const bits = addrBits(text.toLowerCase());
  return bits === undefined ? undefined : `v6:${bits.toString(16)}`;
}

function addressIndex(set: NftSet): AddressIndex {
  const ix: AddressIndex = { plain: new Set(), others: [] };
  for (const e of set.elements) {
    const key = e.key.length === 1 ? plainAddressKey(e.key[0]!) : undefined;
    if (key !== undefined) ix.plain.add(key);
    else ix.others.push(e);
  }
  return ix;
}

/** Whether the field's value is in an NftValue (literal, prefix, range, anonymous set, named set, flag list). */
function valueHas(f: Field, v: NftValue, sets: SetLookup): boolean | undefined {
  switch (v.kind) {
    case "literal":
      return scalarHas(f, v.value);
    case "prefix":
      return f.kind === "addr" ? cidrContains(v.text, f.value) : undefined;
    case "range":
      return scalarHas(f, `${v.from}-${v.to}`);
    case "list":
      return f.kind === "flags" ? v.items.some((i) => f.value.includes(i.toLowerCase())) : scalarHas(f, v.text);
    case "set": {
      let unknown = false;
      for (const e of v.elements) {
        const r = valueHas(f, e, sets);
        if (r === true) return true;
        if (r === undefined) unknown = true;
      }
      return unknown ? undefined : false;
    }
    case "set-ref": {
      const s = sets.set(v.name);
      if (!s) return undefined;
      let elements = s.elements;
      if (f.kind === "addr") {
        const ix = sets.addresses(s);
        const key = plainAddressKey(f.value);
        if (key !== undefined && ix.plain.has(key)) return true;
        if (key !== undefined || ix.plain.size === 0) elements = ix.others;
      }
      let unknown = false;
      for (const e of elements) {
        const r = scalarHas(f, e.key[0] ?? e.keyText);
        if (r === true) return true;
        if (r === undefined) unknown = true;
      }
      return unknown ? undefined : false;
    }
    case "concat":
      return undefined;
  }
}

/** One value of a field as the "why" of a failed match words it. */
function shownField(f: Field): string {
  switch (f.kind) {
    case "addr":
      return `${f.who} ${f.value}`;
    case "proto":
      return `protocol ${f.value}`;
    case "port":
      return `${f.who} ${f.value}`;
    case "number":
      return f.shown;
    case "flags":
      return `${f.who} ${f.value.join(",") || "none"}`;
    case "word":
      return f.who;
    case "iface":
      return `${f.who} ${f.value}`;
  }
}

type MatchResult = { kind: "yes"; caveat?: string } | { kind: "no"; why: string; caveat?: string } | {
  kind: "unknown";
  why: string;
};

function isAffinitySet(s: NftSet): boolean {
  return s.name.startsWith("affinity-") || s.flags.includes("timeout") || s.flags.includes("dynamic");
}

function affinityWords(s: NftSet): string {
  return s.timeout !== undefined ? ` (entries last ${formatSeconds(s.timeout)})` : "";
}

function formatSeconds(s: number): string {
  if (s % 3600 === 0) return `${s / 3600}h`;
  if (s % 60 === 0) return `${s / 60}m`;
  return `${Math.round(s * 1000) / 1000}s`;
}

/** Evaluates one match statement against a packet. */
function evalMatch(st: Extract<NftStatement, { kind: "match" }>, p: TracePacket, sets: SetLookup): MatchResult {
  const f = fieldOf(st.selector, p);
  if ("no" in f) return { kind: "no", why: f.no };
  if ("unknown" in f) return { kind: "unknown", why: `${f.unknown} (${st.text})` };
  let ok: boolean;
  let has: boolean | undefined;
  if (st.op === "==" || st.op === "!=") {
    has = valueHas(f, st.value, sets);
    if (has === undefined) {
      if (st.value.kind === "set-ref" && !sets.set(st.value.name)) {
        return { kind: "unknown", why: `set @${st.value.name} is not in the ruleset (${st.text})` };
      }
      return { kind: "unknown", why: `cannot evaluate "${st.text}"` };
    }
    ok = st.op === "==" ? has : !has;
  } else {
    const n = st.value.kind === "literal" ? parseNumber(st.value.value) : undefined;
    if (n === undefined || (f.kind !== "port" && f.kind !== "number")) {
      return { kind: "unknown", why: `cannot evaluate "${st.text}"` };
    }
    const x = f.value;
    ok = st.op === "<" ? x < n : st.op === ">" ? x > n : st.op === "<=" ? x <= n : x >= n;
  }
  // Session affinity: a dynamic set is kernel state; the capture shows who was in it then.
  let caveat: string | undefined;
  if (st.value.kind === "set-ref") {
    const s = sets.set(st.value.name);
    if (s && isAffinitySet(s) && f.kind === "addr") {
      if (has) {
        const e = s.elements.find((x) => scalarHas(f, x.key[0] ?? x.keyText) === true);
        const exp = e?.expires !== undefined ? `, ${formatSeconds(e.expires)} left when captured` : "";
        caveat =
          `session affinity: ${f.value} is remembered in @${s.name}${exp}; it returns to the same endpoint until the entry expires`;
      } else {
        caveat = `session affinity: a client that connected recently is remembered in @${s.name}${
          affinityWords(s)
        } and returns to that endpoint; shares are for a new client (the set is kernel state, read when captured)`;
        if (!ok) {
          return {
            kind: "no",
            why: `session affinity: a new client is not yet in @${s.name}${affinityWords(s)}`,
            caveat,
          };
        }
      }
    }
  }
  if (ok) return caveat !== undefined ? { kind: "yes", caveat } : { kind: "yes" };
  let why: string;
  if (f.kind === "addr") {
    const target = st.value.text;
    const inWord = st.value.kind === "literal" ? (has ? "is" : "is not") : has ? "is in" : "is not in";
    why = `${f.who} ${f.value} ${inWord} ${target}`;
  } else if (f.kind === "word" && st.selector.startsWith("fib")) {
    why = `${f.who} is ${f.value === "local" ? "" : "not "}a local address of the node (rule wants ${st.text})`;
  } else {
    why = `${shownField(f)} (rule wants ${st.text})`;
  }
  return caveat !== undefined ? { kind: "no", why, caveat } : { kind: "no", why };
}

// ---------------------------------------------------------------------------------------------------------------
// Map lookups

/** An exact-key index of a named set/map: key parts joined by NUL → element; elements with intervals apart. */
interface SetIndex {
  exact: Map<string, NftElement>;
  patterns: NftElement[];
}

function keyPart(f: Field): string {
  switch (f.kind) {
    case "addr":
      return canonicalAddr(f.value);
    case "proto":
      return f.value;
    case "port":
    case "number":
      return String(f.value);
    case "flags":
      return f.value.join(",");
    default:
      return f.value;
  }
}

function isPlainPart(s: string): boolean {
  return !s.includes("/") && !/^[^:]*\d-\d/.test(s) && !s.includes("*") && !s.includes("{");
}

/** IPv6 addresses are compared by value (`fd00:10::5` = `fd00:10:0:0::5`); IPv4 as written. */
function canonicalAddr(a: string): string {
  if (!isIPv6(a)) return a;
  const bits = addrBits(a.toLowerCase());
  return bits === undefined ? a.toLowerCase() : `v6:${bits.toString(16)}`;
}

function canonicalPart(s: string): string {
  const t = s.replace(/^"|"$/g, "").toLowerCase();
  if (/^0x[0-9a-f]+$/.test(t)) return String(parseInt(t, 16));
  if (isIPv6(t)) return canonicalAddr(t);
  return PROTO_NUMBERS[t] ?? t;
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * What a tracer derives from a parsed table and keeps for the next trace of the same table (a `svc/NAME` question
 * traces a dozen packets through a table of 100,000+ chains): base chains per hook, map indexes.
 */
const baseChainCache = new WeakMap<NftTable, Map<string, NftChain[]>>();
const setIndexCache = new WeakMap<NftSet, SetIndex>();
const addressIndexCache = new WeakMap<NftSet, AddressIndex>();

/** Base chains of a table by hook, each in the order the kernel runs them. */
function baseChainsByHook(table: NftTable): Map<string, NftChain[]> {
  let byHook = baseChainCache.get(table);
  if (byHook) return byHook;
  byHook = new Map();
  for (const c of table.chains.values()) {
    if (!c.base) continue;
    const list = byHook.get(c.base.hook);
    if (list) list.push(c);
    else byHook.set(c.base.hook, [c]);
  }
  for (const list of byHook.values()) {
    const order = new Map(list.map((c, i) => [c, i]));
    list.sort((a, b) =>
      a.base!.priority - b.base!.priority || (a.handle ?? Infinity) - (b.handle ?? Infinity) ||
      order.get(a)! - order.get(b)!
    );
  }
  baseChainCache.set(table, byHook);
  return byHook;
}

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

/**
 * `read()`, or undefined when it meets a rule that cannot be read: decoding a service chain decodes the endpoint
 * chains it points to, and an unreadable one is reported where the trace reaches it.
 */
function readable<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (e) {
    if (e instanceof DumpParseError) return undefined;
    throw e;
  }
}

class NftTracer {
  private steps = 0;
  private readonly markBit: number;
  readonly sets: SetLookup;

  constructor(private readonly layout: KubeProxyNft, private readonly maxOutcomes: number, markBit: number) {
    this.markBit = markBit;
    this.sets = {
      set: (n) => this.layout.table.sets.get(n),
      addresses: (set) => {
        let ix = addressIndexCache.get(set);
        if (!ix) addressIndexCache.set(set, ix = addressIndex(set));
        return ix;
      },
    };
  }

  get table(): NftTable {
    return this.layout.table;
  }

  /** Base chains hooked at `hook`, in the order the kernel runs them. */
  baseChains(hook: Hook): NftChain[] {
    return baseChainsByHook(this.table).get(hook) ?? [];
  }

  /** Whether evaluating `rule` is a masquerade request (for RuleCheck records). */
  private isMarking(rule: NftRule): boolean {
    if (rule.chain === MARK_CHAIN || rule.chain === MASQ_CHAIN) return false;
    for (const st of rule.statements) {
      if (
        st.kind === "verdict" && (st.verdict.kind === "jump" || st.verdict.kind === "goto") &&
        st.verdict.target === MARK_CHAIN
      ) return true;
      if (
        st.kind === "mark" && st.target === "meta mark" && (st.op === "or" || st.op === "set") &&
        (st.value & this.markBit) !== 0
      ) return true;
    }
    return false;
  }

  private index(set: NftSet): SetIndex {
    let ix = setIndexCache.get(set);
    if (ix) return ix;
    ix = { exact: new Map(), patterns: [] };
    for (const e of set.elements) {
      const parts = e.key.length > 0 ? e.key : [e.keyText];
      if (parts.every(isPlainPart)) {
        const k = parts.map(canonicalPart).join("\u0000");
        if (!ix.exact.has(k)) ix.exact.set(k, e);
      } else ix.patterns.push(e);
    }
    setIndexCache.set(set, ix);
    return ix;
  }

  /** Looks a packet up in a named map by a (possibly concatenated) selector. */
  private lookup(
    selector: string,
    set: NftSet,
    p: TracePacket,
  ): { element?: NftElement; no?: string; unknown?: string } {
    const fields: Field[] = [];
    for (const part of selector.split(" . ")) {
      const f = fieldOf(part, p);
      if ("no" in f) return { no: f.no };
      if ("unknown" in f) return { unknown: f.unknown };
      fields.push(f);
    }
    const ix = this.index(set);
    const hit = ix.exact.get(fields.map(keyPart).join("\u0000"));
    if (hit) return { element: hit };
    for (const e of ix.patterns) {
      const parts = e.key.length > 0 ? e.key : [e.keyText];
      if (parts.length !== fields.length) continue;
      if (parts.every((k, i) => scalarHas(fields[i]!, k) === true)) return { element: e };
    }
    return {};
  }

  /** Runs states through a chain; returned branches have how = "return" when the chain ended or returned. */
  run(name: string, states: State[], depth: number): Ended[] {
    if (depth > MAX_DEPTH) {
      throw new NftTraceError(
        `nftables chain nesting deeper than ${MAX_DEPTH} at ${nftTableLabel(this.table)} chain ${name} (a loop?)`,
      );
    }
    const chain = this.table.chains.get(name);
    if (!chain) return states.map((s) => ({ ...s, how: "missing", missingChain: name }));
    const ended: Ended[] = [];
    // What does not fit kube-proxy's layout in this chain (a numgen value without an entry, an unexpected rule) is a
    // caveat of every branch that runs it.
    try {
      for (const r of chain.rules) void r.statements; // nft -j rules are decoded when first read (nft_json.ts)
    } catch (e) {
      if (!(e instanceof DumpParseError)) throw e;
      return states.map((s) => ({ ...s, how: "missing", missingChain: name, unreadable: e.message }));
    }
    const anomalies = readable(() => this.layout.chainAnomalies(name)) ?? [];
    let live = anomalies.length === 0
      ? states
      : states.map((s) => ({ ...s, caveats: [...s.caveats, ...anomalies.map(nftAnomalyNote)] }));
    for (const rule of chain.rules) {
      if (live.length === 0) break;
      const next: State[] = [];
      for (const s of live) {
        const r = this.rule(rule, 0, s, depth);
        next.push(...r.cont);
        ended.push(...r.ended);
      }
      live = next;
      if (live.length + ended.length > this.maxOutcomes) throw new NftTraceError("trace has too many outcomes");
    }
    for (const s of live) ended.push({ ...s, how: "return" });
    return ended;
  }

  /** Evaluates statements `i..` of a rule for one branch. `cont`: the chain goes on with its next rule. */
  private rule(rule: NftRule, i: number, s: State, depth: number): { cont: State[]; ended: Ended[] } {
    if (++this.steps > this.maxOutcomes * 1000) {
      throw new NftTraceError("trace too large: the ruleset branches too much");
    }
    const st = rule.statements[i];
    if (st === undefined) return { cont: [s], ended: [] };
    const ref = (): RuleRef => nftRuleRef(rule);
    const check = (matched: RuleCheck["matched"], why?: string): State => {
      if (!this.isMarking(rule)) return s;
      const c: RuleCheck = { rule: ref(), matched };
      if (why !== undefined) c.why = why;
      return { ...s, checks: [...s.checks, c] };
    };
    const miss = (why: string, unknown: boolean, caveat?: string): { cont: State[]; ended: Ended[] } => {
      let n = check(unknown ? "unknown" : false, why);
      const cav: string[] = [];
      if (caveat !== undefined) cav.push(caveat);
      if (unknown) cav.push(`${ref().chain} rule ${ref().line} (${rule.text}): ${why}; assumed not to match`);
      if (cav.length > 0) n = { ...n, caveats: [...n.caveats, ...cav] };
      return { cont: [n], ended: [] };
    };
    switch (st.kind) {
      case "match": {
        const r = evalMatch(st, s.packet, this.sets);
        if (r.kind === "no") return miss(r.why, false, r.caveat);
        if (r.kind === "unknown") return miss(r.why, true);
        const n = r.caveat !== undefined ? { ...s, caveats: [...s.caveats, r.caveat] } : s;
        return this.rule(rule, i + 1, n, depth);
      }
      case "counter":
      case "log":
      case "notrack":
      case "set-update":
        return this.rule(rule, i + 1, s, depth);
      case "limit":
        return this.rule(rule, i + 1, {
          ...s,
          caveats: [...s.caveats, `${rule.chain} rule ${ref().line}: "${st.text}" assumed not exceeded`],
        }, depth);
      case "mark": {
        const p = clonePacket(s.packet);
        if (st.target !== "meta mark") {
          return this.rule(rule, i + 1, {
            ...s,
            caveats: [...s.caveats, `${rule.chain} rule ${ref().line}: "${st.text}" (ct mark) is not modelled`],
          }, depth);
        }
        p.mark =
          (st.op === "set"
            ? st.value
            : st.op === "or"
            ? p.mark | st.value
            : st.op === "and"
            ? p.mark & st.value
            : p.mark ^ st.value) >>> 0;
        let n: State = { ...s, packet: p, path: [...s.path, ref()] };
        if (this.isMarking(rule) && (st.value & this.markBit) !== 0 && st.op !== "and" && st.op !== "xor") {
          n = { ...n, checks: [...n.checks, { rule: ref(), matched: true }] };
        }
        return this.rule(rule, i + 1, n, depth);
      }
      case "nat": {
        const path = [...s.path, ref()];
        if (st.nat === "dnat") {
          if (st.addr === undefined) {
            return {
              cont: [],
              ended: [{ ...s, path, how: "missing", missingChain: `the target of "${st.text}"`, decidedBy: ref() }],
            };
          }
          const to = joinHostPort(st.addr, st.port ?? s.packet.dport);
          return { cont: [], ended: [{ ...s, path, how: "dnat", dnatTo: to, decidedBy: ref() }] };
        }
        if (st.nat === "snat") return { cont: [], ended: [{ ...s, path, how: "snat", decidedBy: ref() }] };
        // redirect: DNAT to the node itself.
        return {
          cont: [],
          ended: [{
            ...s,
            path,
            how: "accept",
            decidedBy: ref(),
            caveats: [
              ...s.caveats,
              `${rule.chain} rule ${ref().line}: "${st.text}" (redirect to the node) is not modelled`,
            ],
          }],
        };
      }
      case "masquerade":
        return { cont: [], ended: [{ ...s, path: [...s.path, ref()], how: "masquerade", decidedBy: ref() }] };
      case "reject": {
        const decidedBy = rule.chain === REJECT_CHAIN && s.via ? s.via : ref();
        return { cont: [], ended: [{ ...s, path: [...s.path, ref()], how: "reject", decidedBy }] };
      }
      case "verdict":
        return this.verdict(st.verdict, rule, ref(), s, depth);
      case "vmap":
        return this.vmap(st, rule, s, depth);
      case "unknown":
        return miss(`statement "${st.text}" is not modelled`, true);
    }
  }

  private vmap(
    st: Extract<NftStatement, { kind: "vmap" }>,
    rule: NftRule,
    s: State,
    depth: number,
  ): { cont: State[]; ended: Ended[] } {
    const ref = nftRuleRef(rule);
    if (st.numgen) {
      const branches = this.numgenBranches(rule, st);
      const cont: State[] = [];
      const ended: Ended[] = [];
      let caveats = s.caveats;
      if (st.numgen.mode !== "random") {
        caveats = [
          ...caveats,
          `${rule.chain} rule ${ref.line}: "numgen inc" is a round-robin counter: shares are long-run averages`,
        ];
      }
      const covered = branches.reduce((a, b) => a + b.share.num / b.share.den, 0);
      if (covered < 1 - 1e-12) cont.push({ ...s, caveats, probability: s.probability * (1 - covered) });
      for (const b of branches) {
        const p = b.share.num / b.share.den;
        if (p === 0) continue;
        const r = this.verdict(b.verdict, rule, ref, { ...s, caveats, probability: s.probability * p }, depth);
        cont.push(...r.cont);
        ended.push(...r.ended);
      }
      return { cont, ended };
    }
    if (st.map !== undefined) {
      const set = this.table.sets.get(st.map);
      if (!set) {
        return {
          cont: [{
            ...s,
            caveats: [
              ...s.caveats,
              `${rule.chain} rule ${ref.line}: map @${st.map} is not in the ruleset; assumed not to match`,
            ],
          }],
          ended: [],
        };
      }
      const r = this.lookup(st.selector, set, s.packet);
      if (r.unknown !== undefined) {
        return {
          cont: [{
            ...s,
            caveats: [
              ...s.caveats,
              `${rule.chain} rule ${ref.line} (${rule.text}): ${r.unknown}; assumed not to match`,
            ],
          }],
          ended: [],
        };
      }
      if (!r.element?.verdict) return { cont: [s], ended: [] };
      const eref = elementRef(rule, set, r.element);
      return this.verdict(r.element.verdict, rule, eref, s, depth, eref);
    }
    // Inline vmap { key : verdict, … } with a non-numgen key.
    const fields: Field[] = [];
    for (const part of st.selector.split(" . ")) {
      const f = fieldOf(part, s.packet);
      if ("no" in f) return { cont: [s], ended: [] };
      if ("unknown" in f) {
        return {
          cont: [{
            ...s,
            caveats: [
              ...s.caveats,
              `${rule.chain} rule ${ref.line} (${rule.text}): ${f.unknown}; assumed not to match`,
            ],
          }],
          ended: [],
        };
      }
      fields.push(f);
    }
    for (const e of st.entries ?? []) {
      const parts = e.key.kind === "concat" ? e.key.parts : [e.key];
      if (parts.length !== fields.length) continue;
      if (parts.every((k, i) => valueHas(fields[i]!, k, this.sets) === true)) {
        return this.verdict(e.verdict, rule, ref, s, depth);
      }
    }
    return { cont: [s], ended: [] };
  }

  /** The branches of a numgen vmap: the decoder's exact shares for kube-proxy's service chains, else counted here. */
  private numgenBranches(
    rule: NftRule,
    st: Extract<NftStatement, { kind: "vmap" }>,
  ): { verdict: NftVerdict; share: Fraction }[] {
    const pc = readable(() => this.layout.policyChain(rule.chain));
    const ev = pc?.loadBalancing?.evidence;
    if (pc && ev && (ev.handle === undefined ? ev.line === rule.line : ev.handle === rule.handle)) {
      return pc.endpoints.map((e) => ({ verdict: verdictOf(st, e.endpointChain), share: e.share }));
    }
    const ng = st.numgen!;
    const seen = new Set<number>();
    const out: { verdict: NftVerdict; share: Fraction }[] = [];
    for (const e of st.entries ?? []) {
      const idx = indexesOf(e.key)?.filter((x) => x >= ng.offset && x < ng.offset + ng.mod && !seen.has(x)) ?? [];
      idx.forEach((x) => seen.add(x));
      if (idx.length > 0) out.push({ verdict: e.verdict, share: { num: idx.length, den: ng.mod } });
    }
    return out;
  }

  /**
   * Applies a verdict (of a rule, a map element or a numgen branch). `via`: the map element it came from, remembered
   * in the target chain (kube-proxy's `reject-chain` rejects on behalf of that element).
   */
  private verdict(
    v: NftVerdict,
    rule: NftRule,
    ref: RuleRef,
    s: State,
    depth: number,
    via?: RuleRef,
  ): { cont: State[]; ended: Ended[] } {
    const path = [...s.path, ref];
    switch (v.kind) {
      case "accept":
        return { cont: [], ended: [{ ...s, path, how: "accept", decidedBy: ref }] };
      case "drop":
        return { cont: [], ended: [{ ...s, path, how: "drop", decidedBy: ref }] };
      case "return":
        return { cont: [], ended: [{ ...s, path, how: "return" }] };
      case "continue":
        return { cont: [s], ended: [] };
      case "queue":
        return {
          cont: [],
          ended: [{
            ...s,
            path,
            how: "accept",
            decidedBy: ref,
            caveats: [
              ...s.caveats,
              `${rule.chain} rule ${ref.line}: queued to userspace; what that program decides is not in the ruleset`,
            ],
          }],
        };
      case "jump":
      case "goto": {
        const target = v.target ?? "";
        let n: State = { ...s, path };
        if (this.isMarking(rule) && target === MARK_CHAIN) {
          n = { ...n, checks: [...n.checks, { rule: nftRuleRef(rule), matched: true }] };
        }
        if (!this.table.chains.has(target)) {
          return { cont: [], ended: [{ ...n, how: "missing", missingChain: target, decidedBy: ref }] };
        }
        if (via) n.via = via;
        else delete n.via;
        const results = this.run(target, [n], depth + 1);
        const cont: State[] = [];
        const ended: Ended[] = [];
        for (const e of results) {
          if (e.how === "return") {
            const { how: _h, ...st } = e;
            const back: State = { ...st };
            if (s.via) back.via = s.via;
            else delete back.via;
            if (v.kind === "goto") ended.push({ ...back, how: "return" });
            else cont.push(back);
          } else ended.push(e);
        }
        return { cont, ended };
      }
    }
  }

  /** Runs the base chains of one hook for every flow; flows that are dropped, rejected or unresolved stop. */
  hook(hook: Hook, flows: Flow[], notes: Set<string>): { passed: Flow[]; stopped: FlowEnd[] } {
    const stopped: FlowEnd[] = [];
    let live = flows;
    let chains = this.baseChains(hook);
    if (chains.length === 0) {
      // A partial capture (one chain listed, or a table without its base chains): start where kube-proxy hooks.
      const entry = hook === "prerouting" || hook === "output"
        ? "services"
        : hook === "postrouting"
        ? MASQ_CHAIN
        : undefined;
      const c = entry !== undefined ? this.table.chains.get(entry) : undefined;
      if (c) {
        notes.add(
          `${
            nftTableLabel(this.table)
          } has no base chain on the ${hook} hook in this capture; traced from chain ${entry}, as kube-proxy hooks it`,
        );
        chains = [c];
      }
    }
    for (const c of chains) {
      const isNat = c.base === undefined ? hook !== "postrouting" || c.name === MASQ_CHAIN : c.base.type === "nat";
      const next: Flow[] = [];
      for (const f of live) {
        const destNat = hook === "prerouting" || hook === "output";
        if (isNat && (destNat ? f.dnatTo !== undefined : f.snatBy !== undefined)) {
          next.push(f);
          continue;
        }
        const start: State = {
          probability: f.probability,
          packet: f.packet,
          path: f.path,
          checks: f.checks,
          caveats: f.caveats,
        };
        for (const e of this.run(c.name, [start], 0)) {
          const { how, dnatTo, decidedBy, missingChain } = e;
          const flow: Flow = {
            ...f,
            probability: e.probability,
            packet: e.packet,
            path: e.path,
            checks: e.checks,
            caveats: e.caveats,
          };
          switch (how) {
            case "return":
            case "accept":
              if (how === "return" && c.base?.policy === "drop") {
                stopped.push({ ...flow, how: "drop", decidedBy: chainRef(c, `policy drop`) });
              } else next.push(flow);
              break;
            case "dnat": {
              if (!isNat) {
                next.push(flow);
                break;
              }
              const p = clonePacket(flow.packet);
              const at = dnatTo!.startsWith("[") ? dnatTo!.lastIndexOf("]:") : dnatTo!.lastIndexOf(":");
              p.dst = dnatTo!.startsWith("[") ? dnatTo!.slice(1, at) : dnatTo!.slice(0, at);
              p.dport = Number(dnatTo!.slice(at + (dnatTo!.startsWith("[") ? 2 : 1)));
              p.dstLocal = false;
              p.ctstate.add("DNAT");
              next.push({ ...flow, packet: p, dnatTo: dnatTo! });
              break;
            }
            case "masquerade":
            case "snat":
              next.push({ ...flow, snatBy: decidedBy! });
              break;
            case "drop":
            case "reject": {
              const end: FlowEnd = { ...flow, how };
              if (decidedBy) end.decidedBy = decidedBy;
              stopped.push(end);
              break;
            }
            case "missing": {
              const end: FlowEnd = { ...flow, how: "missing", missingChain: missingChain! };
              if (decidedBy) end.decidedBy = decidedBy;
              if (e.unreadable !== undefined) end.unreadable = e.unreadable;
              stopped.push(end);
              break;
            }
          }
        }
      }
      live = next;
    }
    return { passed: live, stopped };
  }
}

function verdictOf(st: Extract<NftStatement, { kind: "vmap" }>, target: string): NftVerdict {
  const e = st.entries?.find((x) => x.verdict.target === target);
  return e?.verdict ?? { kind: "goto", target };
}


function outcomeOf(
  f: Flow,
  verdict: TraceOutcome["verdict"],
  masqueraded: boolean | undefined,
  decidedBy: RuleRef | undefined,
): TraceOutcome {
  const o: TraceOutcome = {
    probability: f.probability,
    verdict,
    mark: f.markAfterNat ?? f.packet.mark,
    path: f.path,
    masqueradeChecks: f.checks,
    caveats: [...new Set(f.caveats)],
  };
  if (f.dnatTo !== undefined) o.dnatTo = f.dnatTo;
  if (masqueraded !== undefined) o.masqueraded = masqueraded;
  if (decidedBy) o.decidedBy = decidedBy;
  return o;
}

/**
 * Traces the first packet of a new connection through a node's kube-proxy nftables table.
 *
 * @param layout the decoded table (decodeKubeProxyNft / decodeKubeProxyTable): its `table` is evaluated rule by
 *   rule; its per-ServicePort `numgen` shares give the branch probabilities.
 * @param packet the packet as it arrives (`family` must match the table: 4 for `ip`, 6 for `ip6`); `mark` 0 and
 *   `ctstate` `{NEW}` for a new connection; `srcLocal`/`dstLocal` answer `fib saddr/daddr type local`.
 * @param hook "PREROUTING" for a client from the network or a pod, "OUTPUT" for a host-network process.
 * @param options {@link NftTraceOptions}.
 * @returns every possible outcome with its probability (summing to 1) and notes, in the shapes of the iptables
 *   tracer: `dnat` (with `dnatTo` and `masqueraded`), `drop`, `reject`, `no-match` (leaves untranslated), `unresolved`.
 * @throws {NftTraceError} `nftables chain nesting deeper than 64 at ip kube-proxy chain X (a loop?)`, `trace has too
 *   many outcomes`, `trace too large: the ruleset branches too much`.
 * @example
 * ```ts
 * import { decodeKubeProxyNft } from "../../datapath/kube_proxy_nft.ts";
 * import { parseNftJson } from "../../datapath/nft_json.ts";
 * const [layout] = decodeKubeProxyNft(parseNftJson(json));
 * const t = traceNft(layout!, { family: 4, src: "10.0.0.5", dst: "172.30.0.41", proto: "tcp", dport: 80,
 *   srcLocal: false, dstLocal: false, mark: 0, ctstate: new Set(["NEW"]) }, "PREROUTING");
 * // t.outcomes[0].dnatTo === "10.180.0.1:80", t.outcomes[0].masqueraded === false
 * ```
 */
export function traceNft(
  layout: KubeProxyNft,
  packet: TracePacket,
  hook: "PREROUTING" | "OUTPUT",
  options: NftTraceOptions = {},
): TraceResult {
  const t = new NftTracer(
    layout,
    options.maxOutcomes ?? 10000,
    options.masqueradeMark ?? layout.masquerade.mark ?? 0x4000,
  );
  const notes = new Set<string>(options.notes ?? []);
  const wantFamily = layout.family === "ip6" ? 6 : 4;
  if (packet.family !== wantFamily) {
    notes.add(
      `the packet is IPv${packet.family} but table ${
        nftTableLabel(layout.table)
      } handles IPv${wantFamily}: no rule of it applies`,
    );
    return {
      outcomes: [
        outcomeOf({ probability: 1, packet, path: [], checks: [], caveats: [] }, "no-match", false, undefined),
      ],
      notes: [...notes],
    };
  }
  const start: Flow = { probability: 1, packet: clonePacket(packet), path: [], checks: [], caveats: [] };
  const outcomes: TraceOutcome[] = [];
  const stop = (ends: FlowEnd[]) => {
    for (const e of ends) {
      if (e.how === "missing") {
        const o = outcomeOf(e, "unresolved", undefined, e.decidedBy);
        o.missingChain = e.missingChain!;
        o.caveats.push(
          e.unreadable !== undefined
            ? `chain ${e.missingChain} cannot be read (${e.unreadable}): where this branch goes cannot be told`
            : `chain ${e.missingChain} is not in the dump (a partial listing?): where this branch goes cannot be told`,
        );
        outcomes.push(o);
      } else outcomes.push(outcomeOf(e, e.how, undefined, e.decidedBy));
    }
  };
  const first = t.hook(hook === "OUTPUT" ? "output" : "prerouting", [start], notes);
  stop(first.stopped);
  const toPost: Flow[] = [];
  const delivered: Flow[] = [];
  for (const f of first.passed) {
    const g: Flow = { ...f, markAfterNat: f.packet.mark };
    if (hook === "OUTPUT") toPost.push(g);
    else {
      // The routing decision: to this node (input) or through it (forward).
      const r = t.hook(g.packet.dstLocal ? "input" : "forward", [g], notes);
      stop(r.stopped);
      (g.packet.dstLocal ? delivered : toPost).push(...r.passed);
    }
  }
  const post = t.hook("postrouting", toPost, notes);
  stop(post.stopped);
  for (const f of post.passed) {
    if (hook === "OUTPUT" && f.packet.dstLocal) {
      // A host process reaching one of the node's own addresses loops back through input.
      const r = t.hook("input", [f], notes);
      stop(r.stopped);
      delivered.push(...r.passed);
    } else delivered.push(f);
  }
  for (const f of delivered) {
    const masq = f.snatBy !== undefined;
    outcomes.push(outcomeOf(f, f.dnatTo !== undefined ? "dnat" : "no-match", masq, masq ? f.snatBy : undefined));
  }
  return { outcomes, notes: [...notes] };
}
