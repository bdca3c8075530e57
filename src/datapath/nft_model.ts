/**
 * The nftables ruleset model shared by the parsers of `nft -j list ruleset` (nft_json.ts) and `nft list ruleset` /
 * `nft -f` transaction text (nft_text.ts), and read by the kube-proxy nftables layout decoder (kube_proxy_nft.ts).
 *
 * Shapes follow libnftables-json(5) and nft(8): a ruleset is tables (family + name); a table holds chains (base chains
 * carry type/hook/priority/policy), sets and maps (with their elements) and rules. Every rule keeps its text form as
 * `nft list ruleset` prints it, its handle and line when known, and its statements decoded into the structured
 * {@link NftStatement} union; a statement the parsers do not understand is kept as `{ kind: "unknown", text }` and
 * listed in {@link NftRuleset.unparsed}, never dropped.
 *
 * Canonical forms (so that the JSON and the text parsers produce the same model for the same kernel state):
 * - a selector (the left side of a match, a vmap key, a set-update key) is written as `nft list ruleset` prints it:
 *   `ip saddr`, `ip6 daddr`, `meta l4proto`, `th dport`, `tcp dport`, `fib daddr type`, `ct state`, `iifname`,
 *   `meta mark & 0x00004000`, `ip daddr . meta l4proto . th dport`, `numgen random mod 2`;
 *   the `nft -f` input shorthands are normalised (`mark` → `meta mark`, `l4proto` → `meta l4proto`, `and` → `&`,
 *   mark constants → `0x%08x`).
 * - values keep nft's text (`10.0.0.0/8`, `tcp`, `"veth*"`, `@cluster-ips`, `{ 203.0.113.0/25 }`).
 *
 * Runtime-neutral: no I/O.
 * @module
 */

/** Formats the parsers accept. `nft-list` is `nft [-a] list ruleset`; `nft-transaction` is `nft -f` input. */
export type NftFormat = "nft-json" | "nft-list" | "nft-transaction";

/**
 * A relational operator of a match. An implicit match (`ip daddr 1.2.3.4`, `ct state new`, libnftables-json's "in")
 * is `==`.
 */
export type NftOp = "==" | "!=" | "<" | ">" | "<=" | ">=";

/** A verdict: `accept`, `drop`, `continue`, `return`, `jump CHAIN`, `goto CHAIN` (and `queue`). */
export interface NftVerdict {
  kind: "accept" | "drop" | "continue" | "return" | "jump" | "goto" | "queue";
  /** Target chain of `jump` / `goto`. */
  target?: string;
}

/** A value on the right side of a match, in a set element or a vmap key. `text` is nft's rendering. */
export type NftValue =
  | {
    kind: "literal";
    text: string;
    /** The value with quotes removed (`"veth*"` → `veth*`). */
    value: string;
  }
  | { kind: "prefix"; text: string; addr: string; len: number }
  | { kind: "range"; text: string; from: string; to: string }
  /** `@name`: a named set or map. */
  | { kind: "set-ref"; text: string; name: string }
  /** `{ a, b }`: an anonymous set. */
  | { kind: "set"; text: string; elements: NftValue[] }
  /** `a . b . c`: a concatenation. */
  | { kind: "concat"; text: string; parts: NftValue[] }
  /** `established,related`: a list of flag values. */
  | { kind: "list"; text: string; items: string[] };

/** `numgen random mod N [offset O]` as a vmap key. */
export interface NftNumgen {
  mode: "random" | "inc";
  mod: number;
  offset: number;
}

/** One entry of an inline verdict map `{ 0 : goto X, 1 : goto Y }`. */
export interface NftVmapEntry {
  key: NftValue;
  verdict: NftVerdict;
}

/** A decoded statement of a rule. `text` is its text form as `nft list ruleset` prints it (or as written, for -f). */
export type NftStatement =
  /** `SELECTOR [OP] VALUE`, e.g. `ip saddr != 10.0.0.0/8`, `fib daddr type local`, `ip saddr @affinity-…`. */
  | { kind: "match"; text: string; selector: string; op: NftOp; value: NftValue }
  | { kind: "verdict"; text: string; verdict: NftVerdict }
  /**
   * `KEY vmap @map` or `KEY vmap { k : verdict, … }`; `numgen` is set when the key is `numgen random mod N`.
   * Exactly one of `map` (named) and `entries` (inline) is set.
   */
  | {
    kind: "vmap";
    text: string;
    selector: string;
    numgen?: NftNumgen;
    map?: string;
    entries?: NftVmapEntry[];
  }
  /**
   * `dnat to 10.180.0.1:80`, `dnat ip to …`, `dnat to [fd00::1]:80`, `snat …`, `redirect to :22`. `family` is the
   * `ip`/`ip6` qualifier of inet tables; `addr` is undefined for a port-only or mapped target (`to` keeps the text).
   */
  | {
    kind: "nat";
    text: string;
    nat: "dnat" | "snat" | "redirect";
    family?: "ip" | "ip6";
    to?: string;
    addr?: string;
    port?: number;
    flags: string[];
  }
  | { kind: "masquerade"; text: string; flags: string[]; to?: string }
  /** `reject` (family default: ICMP port-unreachable) or `reject with icmp host-unreachable` / `with tcp reset`. */
  | { kind: "reject"; text: string; with?: string }
  /**
   * `meta mark set meta mark | 0x00004000` (nft -f: `mark set mark or 0x4000`) → `{ target: "meta mark", op: "or",
   * value: 0x4000 }`; `meta mark set 0x1` → op `set`. `target` is `meta mark` or `ct mark`.
   */
  | { kind: "mark"; text: string; target: string; op: "set" | "or" | "and" | "xor"; value: number }
  /** `update @set { ip saddr }` (also `add` / `delete`), with an optional per-element timeout in seconds. */
  | { kind: "set-update"; text: string; op: "add" | "update" | "delete"; set: string; key: string; timeout?: number }
  /** `counter packets P bytes B` (anonymous) or `counter name "x"` (named). */
  | { kind: "counter"; text: string; packets?: number; bytes?: number; name?: string }
  | { kind: "log"; text: string; prefix?: string }
  | { kind: "limit"; text: string }
  | { kind: "notrack"; text: string }
  /** Anything else, kept verbatim (e.g. `xt match "comment"` of iptables-nft rules). Listed in `unparsed`. */
  | { kind: "unknown"; text: string };

/** One rule. `family`/`table`/`chain` make a rule its own evidence. */
export interface NftRule {
  family: string;
  table: string;
  chain: string;
  /** Kernel handle: from JSON, from `nft -a` text (`# handle N`); undefined otherwise. */
  handle?: number;
  /** 1-based line of the rule in the input (for single-line JSON, the line holding the rule object). */
  line: number;
  /** The statements' text forms joined by single spaces, without the comment and the handle. */
  text: string;
  /** The rule's `comment "…"`, unquoted. */
  comment?: string;
  statements: NftStatement[];
  /**
   * A cheap pre-check some parsers offer (nft_json.ts, whose rules decode their statements on first use): false only
   * when the rule's input certainly does not contain `word`, so a decoder looking for, e.g., `mark-for-masquerade`
   * can skip the rule without decoding it. Absent or true: decode and look.
   */
  mayContain?(word: string): boolean;
  /**
   * The rule's `expr` array exactly as `nft -j` printed it (JSON text, e.g. `[{"match": {…}}, {"jump": {…}}]`), offered
   * by nft_json.ts for the rules it reads in nft's own layout (no parsing, a slice of the document); undefined for a
   * rule it had to parse whole. A decoder may recognise an exact common form in it (e.g. nft_json_masquerade.ts) and
   * fall back to `statements` for anything else.
   */
  exprJson?(): string | undefined;
  /**
   * The rule's line exactly as `nft list ruleset` printed it, offered by nft_text.ts for the rules it decodes on first
   * use (no comment, no handle on the line); a decoder may recognise an exact common form in it (e.g.
   * nft_text_masquerade.ts) and fall back to `statements` for anything else.
   */
  lineText?(): string;
}

/** Base chain properties: `type filter hook prerouting priority dstnat - 10; policy accept;`. */
export interface NftBaseChain {
  type: string;
  hook: string;
  /** Numeric priority (symbolic names resolved: `dstnat - 10` → -110). */
  priority: number;
  /** Default policy; nft prints `accept` when none was given. */
  policy?: string;
  /** Device of netdev/ingress chains. */
  device?: string;
}

/** A chain; regular chains have no `base`. An empty `rules` array is a chain that exists but was flushed. */
export interface NftChain {
  family: string;
  table: string;
  name: string;
  handle?: number;
  line: number;
  comment?: string;
  base?: NftBaseChain;
  rules: NftRule[];
}

/** One element of a set or map. */
export interface NftElement {
  /** The key as nft prints it, without comment or timeouts: `172.30.0.41 . tcp . 80`. */
  keyText: string;
  /** The key's concatenated parts (one part for a plain key): `["172.30.0.41", "tcp", "80"]`. */
  key: string[];
  /** For a verdict map: the verdict (`goto service-…`, `drop`). */
  verdict?: NftVerdict;
  /** For a data map: the mapped value's text (`10.1.0.1`). For verdict maps the verdict's text. */
  data?: string;
  comment?: string;
  /** Per-element timeout in seconds (when it differs from the set's). */
  timeout?: number;
  /** Seconds left before a dynamic element expires (nft prints it for timeout sets). */
  expires?: number;
  /** `KEY : DATA` (or `KEY` for a set), without comment/timeout, e.g. `172.30.0.41 . tcp . 80 : goto service-…`. */
  text: string;
}

/** A named set (`kind: "set"`) or map (`kind: "map"`; verdict maps have `dataType: "verdict"`). */
export interface NftSet {
  family: string;
  table: string;
  kind: "set" | "map";
  name: string;
  handle?: number;
  line: number;
  /** The key type as nft prints it: `ipv4_addr . inet_proto . inet_service`. */
  type: string;
  /** The key type's concatenated parts: `["ipv4_addr", "inet_proto", "inet_service"]`. */
  keyType: string[];
  /** For maps: the data type (`verdict`, `ipv4_addr`). */
  dataType?: string;
  /** Set flags (`interval`, `timeout`, `dynamic`, `constant`). Note: nft 1.0.6 JSON omits `dynamic`. */
  flags: string[];
  /** Default element timeout in seconds. */
  timeout?: number;
  size?: number;
  comment?: string;
  elements: NftElement[];
}

/** A table with its chains and sets/maps by name, in listing order. */
export interface NftTable {
  family: string;
  name: string;
  handle?: number;
  line: number;
  comment?: string;
  /** Table flags (`dormant`, `owner`). */
  flags: string[];
  chains: Map<string, NftChain>;
  sets: Map<string, NftSet>;
}

/** A statement (or set element, or table object) the parsers kept as text without decoding it. */
export interface NftUnparsed {
  family: string;
  table: string;
  chain?: string;
  handle?: number;
  line: number;
  /** The undecoded piece. */
  text: string;
  /** The whole rule (or object) it belongs to. */
  context: string;
}

/** A parsed ruleset. */
export interface NftRuleset {
  format: NftFormat;
  /** `nft` version from JSON `metainfo` (e.g. "1.0.6"). */
  nftVersion?: string;
  tables: NftTable[];
  /** Everything kept as text only; empty when the whole ruleset was decoded. */
  unparsed: NftUnparsed[];
}

/** Evidence for a finding: which table/chain/rule (or set element) and its text, as nft prints it. */
export interface NftEvidence {
  family: string;
  table: string;
  /** Chain of a rule, or the chain itself. */
  chain?: string;
  /** Set/map of an element. */
  set?: string;
  handle?: number;
  line: number;
  /** Rule text, element text, or `chain NAME` for a chain. */
  text: string;
  comment?: string;
}

/**
 * Evidence of a rule.
 * @param rule the rule.
 * @returns its family, table, chain, handle, line, text and comment.
 */
export function ruleEvidence(rule: NftRule): NftEvidence {
  const e: NftEvidence = {
    family: rule.family,
    table: rule.table,
    chain: rule.chain,
    line: rule.line,
    text: rule.text,
  };
  if (rule.handle !== undefined) e.handle = rule.handle;
  if (rule.comment !== undefined) e.comment = rule.comment;
  return e;
}

/**
 * {@link ruleEvidence} whose `text` is read from the rule when first read (an enumerable getter, so JSON output and
 * deep equality see the same fields): for evidence kept by the thousand (one per Service) and rarely shown, without
 * decoding each rule's statements up front.
 * @param rule the rule.
 * @returns the same fields as ruleEvidence(rule).
 */
export function lazyRuleEvidence(rule: NftRule): NftEvidence {
  const e: NftEvidence = {
    family: rule.family,
    table: rule.table,
    chain: rule.chain,
    line: rule.line,
    get text(): string {
      return rule.text;
    },
  };
  if (rule.handle !== undefined) e.handle = rule.handle;
  if (rule.comment !== undefined) e.comment = rule.comment;
  return e;
}

/**
 * Evidence of a set/map element.
 * @param set the set or map.
 * @param element one of its elements.
 * @returns family, table, set name, the set's line, the element's text and comment.
 */
export function elementEvidence(set: NftSet, element: NftElement): NftEvidence {
  const e: NftEvidence = { family: set.family, table: set.table, set: set.name, line: set.line, text: element.text };
  if (element.comment !== undefined) e.comment = element.comment;
  return e;
}

/**
 * Evidence of a chain itself (for example a flushed, empty chain).
 * @param chain the chain.
 * @returns family, table, chain, handle, line and the text `chain NAME`.
 */
export function chainEvidence(chain: NftChain): NftEvidence {
  const e: NftEvidence = {
    family: chain.family,
    table: chain.table,
    chain: chain.name,
    line: chain.line,
    text: `chain ${chain.name}`,
  };
  if (chain.handle !== undefined) e.handle = chain.handle;
  return e;
}

/**
 * Finds a table by family and name.
 * @param ruleset a parsed ruleset.
 * @param family `ip`, `ip6`, `inet`, ….
 * @param name table name, e.g. `kube-proxy`.
 * @returns the table, or undefined.
 */
export function findNftTable(ruleset: NftRuleset, family: string, name: string): NftTable | undefined {
  return ruleset.tables.find((t) => t.family === family && t.name === name);
}

/**
 * Renders a verdict as nft prints it: `drop`, `goto service-…`.
 * @param v the verdict.
 * @returns its text.
 */
export function verdictText(v: NftVerdict): string {
  return v.target === undefined ? v.kind : `${v.kind} ${v.target}`;
}

/** Symbolic chain priorities of nft(8) ("PRIORITY" table), for the ip/ip6/inet/arp/netdev families. */
const PRIORITY_NAMES: Record<string, number> = {
  raw: -300,
  mangle: -150,
  dstnat: -100,
  filter: 0,
  security: 50,
  srcnat: 100,
};
/** The bridge family's names (nft(8)). */
const BRIDGE_PRIORITY_NAMES: Record<string, number> = { dstnat: -300, filter: -200, out: 100, srcnat: 300 };

/**
 * Resolves a chain priority as nft prints or accepts it (`-110`, `dstnat`, `dstnat - 10`, `filter + 5`).
 * Follows nft(8), section CHAINS, "PRIORITY".
 * @param text the priority expression.
 * @param family the table family (`bridge` has its own names).
 * @returns the numeric priority, or undefined when `text` is not a priority.
 */
export function resolvePriority(text: string, family: string): number | undefined {
  const m = /^\s*(-?\d+|[a-z]+)\s*(?:([+-])\s*(\d+))?\s*$/.exec(text);
  if (!m) return undefined;
  const base = m[1]!;
  let value: number | undefined;
  if (/^-?\d+$/.test(base)) value = Number(base);
  else value = (family === "bridge" ? BRIDGE_PRIORITY_NAMES : PRIORITY_NAMES)[base];
  if (value === undefined) return undefined;
  if (m[2] !== undefined) value += (m[2] === "-" ? -1 : 1) * Number(m[3]);
  return value;
}

/**
 * Parses an nft time value (`10800s`, `3h`, `1h30m`, `9m49s412ms`, `2d`, or a bare number of seconds).
 * @param text the time text.
 * @returns seconds (fractional for ms), or undefined when `text` is not a time.
 */
export function parseNftTime(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  const re = /(\d+)(ms|d|h|m|s)/gy;
  let total = 0;
  let pos = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const n = Number(m[1]);
    total += m[2] === "d" ? n * 86400 : m[2] === "h" ? n * 3600 : m[2] === "m" ? n * 60 : m[2] === "s" ? n : n / 1000;
    pos = re.lastIndex;
  }
  if (pos === 0 || pos !== text.length) return undefined;
  return total;
}

/**
 * Renders seconds the way nft prints times (`10800` → `3h`, `600` → `10m`, `5400` → `1h30m`).
 * @param seconds a duration in seconds (integer or with millisecond fraction).
 * @returns nft's text.
 */
export function formatNftTime(seconds: number): string {
  let ms = Math.round(seconds * 1000);
  if (ms === 0) return "0s";
  const parts: string[] = [];
  const units: [string, number][] = [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1000], ["ms", 1]];
  for (const [u, size] of units) {
    const n = Math.floor(ms / size);
    if (n > 0) parts.push(`${n}${u}`);
    ms -= n * size;
  }
  return parts.join("");
}
