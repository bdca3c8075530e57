/**
 * Parser of `iptables -L` listings: `iptables -t nat -nL`, `-nvL`, `-nvxL`, with or without `--line-numbers`
 * (also `ip6tables`, and both the nf_tables and legacy backends). Many write-ups and bug reports show this format
 * instead of `iptables-save`, so kube-proxy's chains can be analysed from either.
 *
 * Layout as printed by iptables (iptables/iptables.c `print_header` / `print_firewall`, xtables
 * `xtables_print_num`, and each extension's `print` function, v1.4–v1.8.10):
 * ```
 * Chain KUBE-SERVICES (2 references)
 *  pkts bytes target     prot opt in     out     source               destination
 *     0     0 KUBE-MARK-MASQ  all  --  *      *      !10.244.0.0/16        0.0.0.0/0    … match-set KUBE-CLUSTER-IP dst,dst
 * ```
 * The columns of each chain are read from its column header. A rule's `target` column is empty for a rule without
 * a target. Counters abbreviated by iptables without `-x` (`1235K`, `99M`: rounded to the unit) are expanded and
 * flagged approximate. iptables 1.8.9 prints protocols as numbers under `-n` (`0`, `6`); `protocol` normalises them.
 *
 * The trailing match text is parsed into the facts kube-proxy's rules carry — comment, `match-set`, statistic
 * probability, DNAT `to:`, MARK target and mark match, tcp/udp/sctp ports, ADDRTYPE, recent, masquerade options,
 * conntrack state, reject-with — and everything else is kept raw in `extra` and reported in `unparsed`.
 *
 * The parser is a state machine over lines: `Chain …` header → column header → rules, repeated. Every rule keeps its
 * raw text and 1-based line number.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { DumpParseError } from "./errors.ts";

const FORMAT = "iptables-list";

/** The columns `iptables -L` can print, in order (`num` with `--line-numbers`, counters and interfaces with `-v`). */
export type ListingColumn = "num" | "pkts" | "bytes" | "target" | "prot" | "opt" | "in" | "out" | "source" | "destination";

/** A port match of the tcp/udp/sctp modules: `dpt:80` → `{ negated: false, first: 80, last: 80 }`, `dpts:!1000:2000`. */
export interface ListingPortMatch {
  negated: boolean;
  first: number;
  last: number;
}

/** `recent:` match (ClientIP session affinity in kube-proxy): `recent: CHECK seconds: 10800 reap name: KUBE-SEP-… side: source mask: 255.255.255.255`. */
export interface ListingRecent {
  negated: boolean;
  command: "SET" | "CHECK" | "UPDATE" | "REMOVE";
  seconds?: number;
  hitCount?: number;
  reap: boolean;
  ttl: boolean;
  name?: string;
  side?: "source" | "dest";
  mask?: string;
}

/** One rule line of a listing. Parameters that are absent are `undefined`, never `""`. */
export interface ListingRule {
  /** Chain the rule belongs to. */
  chain: string;
  /** 1-based line number in the listing, and the line as printed. */
  line: number;
  raw: string;
  /** `--line-numbers` column. */
  num?: number;
  /** `-v` packet and byte counters. */
  pkts?: number;
  bytes?: number;
  /** true when a counter was abbreviated (`1235K`): the value is rounded to that unit. */
  approximateCounters?: boolean;
  /** Target or jump chain; undefined for a rule with no target (an empty column: the rule only counts). */
  target?: string;
  /** The `prot` column as printed: `all`, `tcp`, or a number (`0`, `6`) from iptables 1.8.9 with `-n`. */
  prot: { negated: boolean; value: string };
  /** Protocol name normalised from `prot`: `all` (0), `tcp` (6), `udp` (17), `sctp` (132), `icmp`, `icmpv6`, or the number. */
  protocol: string;
  /** `opt` column (`--`, `-f` fragments, `!f`). */
  opt?: string;
  /** Interfaces (`-v`); undefined for `*` (any) or when the listing has no such column. */
  in?: { negated: boolean; value: string };
  out?: { negated: boolean; value: string };
  /** Source and destination as printed (`0.0.0.0/0`, `172.30.5.207`, `::/0`); `!10.244.0.0/16` → negated. */
  source: { negated: boolean; value: string };
  destination: { negated: boolean; value: string };
  /** The trailing match and target text, as printed; undefined when the rule has none. */
  matchText?: string;
  /** `/* … *\/` comment (kube-proxy: `ns/svc:port`, `ns/svc:port cluster IP`, `… -> 10.180.0.1:80`). */
  comment?: string;
  /** `[!] match-set NAME dst,dst` (IPVS mode: KUBE-CLUSTER-IP, KUBE-LOOP-BACK dst,dst,src, …). */
  matchSets: { negated: boolean; name: string; flags: string }[];
  /** `statistic mode random probability P` (the iptables-mode endpoint cascade), P in [0, 1]. */
  probability?: number;
  /** DNAT target: `to:10.180.0.1:80`, `to:[fd00::1]:80`; `port` is set when the text has a single numeric port. */
  toDestination?: { raw: string; address: string; port?: number };
  /** SNAT target: `to:ADDRESS[:PORT]`, as printed. */
  toSource?: string;
  /** MARK target: `MARK or 0x4000` (KUBE-MARK-MASQ), `MARK xor 0x4000`, `MARK set 0x8000`, `MARK and …`, `MARK xset V/M`. */
  markTarget?: { op: "set" | "or" | "xor" | "and" | "xset"; value: string };
  /** mark match: `mark match 0x4000/0x4000`; `mark match ! 0x4000/0x4000` (or older `! mark match …`) → negated. */
  markMatch?: { negated: boolean; value: string };
  /** Protocol module printing the ports (`tcp dpt:80` → `tcp`), and the ports. */
  portMatchProtocol?: string;
  dport?: ListingPortMatch;
  sport?: ListingPortMatch;
  /** `ADDRTYPE match [src-type [!]TYPES] [dst-type [!]TYPES] [limit-in] [limit-out]`. */
  addrtype?: {
    src?: { negated: boolean; value: string };
    dst?: { negated: boolean; value: string };
    limitIn?: boolean;
    limitOut?: boolean;
  };
  /** `recent:` match. */
  recent?: ListingRecent;
  /** MASQUERADE target: `masq ports: 1024-65535`. */
  masqPorts?: string;
  /** NAT target flags: `random`, `random-fully` (kube-proxy's MASQUERADE when supported), `persistent`. */
  random?: boolean;
  randomFully?: boolean;
  persistent?: boolean;
  /** `[!] ctstate STATES` (conntrack module) or `[!] state STATES` (state module). */
  ctstate?: { negated: boolean; value: string };
  /** REJECT target: `reject-with icmp-port-unreachable`. */
  rejectWith?: string;
  /** Match or target text not understood, in order, as printed; each is also listed in {@link IptablesListing.unparsed}. */
  extra?: string[];
}

/** One chain of a listing. */
export interface ListingChain {
  name: string;
  /** Builtin chain policy (`ACCEPT`, `DROP`); undefined for user chains. */
  policy?: string;
  /** Policy counters (`-v`): packets and bytes that reached the end of the builtin chain. */
  policyPackets?: number;
  policyBytes?: number;
  /** Number of rules jumping to a user chain (`(2 references)`). */
  references?: number;
  /** Columns from the chain's column header. */
  columns: ListingColumn[];
  rules: ListingRule[];
  /** 1-based line number of the `Chain …` line, and the line. */
  line: number;
  raw: string;
}

/** A parsed listing. */
export interface IptablesListing {
  chains: ListingChain[];
  /** Lines and match text not understood, with why; reported, never silently dropped. */
  unparsed: { line: number; text: string; reason: string }[];
}

const CHAIN_RE = /^Chain (\S+) \((.*)\)$/;
const COLUMN_NAMES = new Set<string>(["num", "pkts", "bytes", "target", "prot", "opt", "in", "out", "source", "destination"]);
const OPT_RE = /^[-!][-f]$/;
const COUNTER_RE = /^(\d+)([KMGT])?$/;
const PROTO_RE = /^!?(?:all|tcp|udp|udplite|icmp|icmpv6|ipv6-icmp|sctp|esp|ah|gre|mh|ipip|dccp|\d+)$/;
const IPV4 = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(?:\\.(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}";
const ADDRESS_RE = new RegExp(
  `^(?:${IPV4}(?:/(?:3[0-2]|[12]?\\d|${IPV4}))?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(?:/(?:12[0-8]|1[01]\\d|[1-9]?\\d))?|anywhere)$`,
);
const UNIT: Record<string, number> = { K: 1e3, M: 1e6, G: 1e9, T: 1e12 };
/** IANA protocol numbers iptables prints under `-n` since 1.8.9, to the names older releases print. */
const PROTOCOL_NAMES: Record<string, string> = {
  "0": "all",
  "1": "icmp",
  "6": "tcp",
  "17": "udp",
  "47": "gre",
  "50": "esp",
  "51": "ah",
  "58": "icmpv6",
  "132": "sctp",
  "136": "udplite",
  "ipv6-icmp": "icmpv6",
};

/**
 * Parses an `iptables -L` listing (`-nL`, `-nvL`, `-nvxL`, `--line-numbers`; iptables or ip6tables; nf_tables or
 * legacy backend).
 *
 * @param text the command's standard output (a whole table, or one chain: `iptables -t nat -nvL KUBE-SERVICES`).
 * @returns the chains in listing order with their rules, and what was not understood.
 * @throws {DumpParseError} when the input is empty or binary; when a non-comment line comes before the first
 *   `Chain NAME (…)` header (a rule line before any chain: cut at the start, or not a listing); when a chain header
 *   is not followed by its column header, or the column header has unknown or missing columns (it needs `target`,
 *   `prot`, `source`, `destination`); when a rule line is cut or malformed (missing columns, a non-numeric counter
 *   or line number, a source/destination that is not a numeric address — list with `-n`); when the listing ends
 *   right after a `Chain` line.
 * @example
 * ```ts
 * import { parseIptablesListing } from "./iptables_list.ts";
 * const l = parseIptablesListing(
 *   "Chain KUBE-MARK-MASQ (1 references)\ntarget prot opt source destination\nMARK all -- 0.0.0.0/0 0.0.0.0/0 MARK or 0x4000\n",
 * );
 * l.chains[0]?.rules[0]?.markTarget; // { op: "or", value: "0x4000" }
 * ```
 */
export function parseIptablesListing(text: string): IptablesListing {
  if (text.trim() === "") {
    throw new DumpParseError(FORMAT, 0, `empty input, expected "iptables -L" output`, "");
  }
  const lines = text.split("\n");
  const listing: IptablesListing = { chains: [], unparsed: [] };
  let chain: ListingChain | undefined;
  let expectColumns = false;

  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const raw = (lines[i] ?? "").replace(/\r$/, "");
    if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(raw)) {
      throw new DumpParseError(FORMAT, lineNo, "binary data, expected iptables listing text", raw);
    }
    const t = raw.trim();
    if (t === "") continue;
    if (t.startsWith("#") || t.startsWith("$ ")) {
      // Shell prompts and comments around a pasted listing; iptables-nft's
      // "# Warning: iptables-legacy tables present, use iptables-legacy to see them".
      listing.unparsed.push({ line: lineNo, text: raw, reason: "comment or shell prompt" });
      continue;
    }

    const cm = CHAIN_RE.exec(t);
    if (cm) {
      if (chain && expectColumns) {
        throw new DumpParseError(FORMAT, lineNo, `chain ${chain.name} has no column header before the next "Chain" line`, raw);
      }
      chain = { name: cm[1] as string, columns: [], rules: [], line: lineNo, raw };
      parseChainInfo(cm[2] as string, chain, listing, lineNo, raw);
      listing.chains.push(chain);
      expectColumns = true;
      continue;
    }
    if (!chain) {
      throw new DumpParseError(FORMAT, lineNo, `expected "Chain NAME (…)" before any rule (listing cut at the start?)`, raw);
    }
    if (expectColumns) {
      chain.columns = parseColumns(t, lineNo, raw);
      expectColumns = false;
      continue;
    }
    const rule = parseRule(raw, chain, listing, lineNo);
    if (rule) chain.rules.push(rule);
    else listing.unparsed.push({ line: lineNo, text: raw, reason: "not a rule line" });
  }
  if (chain && expectColumns) {
    throw new DumpParseError(FORMAT, chain.line, `listing ends after "Chain ${chain.name}" (expected its column header)`, chain.raw);
  }
  return listing;
}

function parseCounter(s: string): { value: number; approximate: boolean } | undefined {
  const m = COUNTER_RE.exec(s);
  if (!m) return undefined;
  return { value: Number(m[1]) * (m[2] ? UNIT[m[2]] as number : 1), approximate: m[2] !== undefined };
}

/** `policy ACCEPT`, `policy ACCEPT 12 packets, 720 bytes`, `2 references`. */
function parseChainInfo(info: string, chain: ListingChain, listing: IptablesListing, lineNo: number, raw: string): void {
  let m = /^policy (\S+)(?: (\S+) packets, (\S+) bytes)?$/.exec(info);
  if (m) {
    chain.policy = m[1];
    if (m[2] !== undefined && m[3] !== undefined) {
      const p = parseCounter(m[2]);
      const b = parseCounter(m[3]);
      if (!p || !b) throw new DumpParseError(FORMAT, lineNo, "chain policy counters are not numbers", raw);
      chain.policyPackets = p.value;
      chain.policyBytes = b.value;
    }
    return;
  }
  m = /^(\d+) references?$/.exec(info);
  if (m) {
    chain.references = Number(m[1]);
    return;
  }
  listing.unparsed.push({ line: lineNo, text: raw, reason: `chain information "${info}" not understood` });
}

function parseColumns(t: string, lineNo: number, raw: string): ListingColumn[] {
  const words = t.split(/\s+/);
  for (const w of words) {
    if (!COLUMN_NAMES.has(w)) {
      throw new DumpParseError(FORMAT, lineNo, `expected the column header "target prot opt source destination", found "${w}"`, raw);
    }
  }
  for (const need of ["target", "prot", "source", "destination"]) {
    if (!words.includes(need)) {
      throw new DumpParseError(FORMAT, lineNo, `column header without "${need}"`, raw);
    }
  }
  return words as ListingColumn[];
}

interface Token {
  text: string;
  end: number;
}

function negatable(s: string): { negated: boolean; value: string } {
  return s.startsWith("!") ? { negated: true, value: s.slice(1) } : { negated: false, value: s };
}

/**
 * Parses one rule line by the chain's columns. Returns undefined when the line does not have the shape of a rule
 * (no protocol/opt where they belong) — an unknown line; throws when it has that shape but is cut or malformed.
 */
function parseRule(raw: string, chain: ListingChain, listing: IptablesListing, lineNo: number): ListingRule | undefined {
  const tokens: Token[] = [];
  for (const m of raw.matchAll(/\S+/g)) tokens.push({ text: m[0], end: (m.index ?? 0) + m[0].length });
  const cols = chain.columns;
  const hasOpt = cols.includes("opt");
  const tIdx = cols.indexOf("target");
  const text = (k: number) => tokens[k]?.text;

  // Is the target column empty? Then the token at the target position is already the protocol.
  let targetPresent: boolean;
  if (hasOpt) {
    if (OPT_RE.test(text(tIdx + 2) ?? "") && PROTO_RE.test(text(tIdx + 1) ?? "")) targetPresent = true;
    else if (OPT_RE.test(text(tIdx + 1) ?? "") && PROTO_RE.test(text(tIdx) ?? "")) targetPresent = false;
    else return undefined;
  } else {
    if (PROTO_RE.test(text(tIdx + 1) ?? "")) targetPresent = true;
    else if (PROTO_RE.test(text(tIdx) ?? "")) targetPresent = false;
    else return undefined;
  }

  const fail = (what: string): never => {
    throw new DumpParseError(FORMAT, lineNo, `${what} (expected columns "${cols.join(" ")}"; line cut?)`, raw);
  };
  const rule: ListingRule = {
    chain: chain.name,
    line: lineNo,
    raw,
    prot: { negated: false, value: "" },
    protocol: "",
    source: { negated: false, value: "" },
    destination: { negated: false, value: "" },
    matchSets: [],
  };
  let k = 0;
  let lastEnd = 0;
  for (const col of cols) {
    if (col === "target" && !targetPresent) continue;
    const tok = tokens[k++];
    if (tok === undefined) return fail(`missing "${col}" column`);
    lastEnd = tok.end;
    const v = tok.text;
    switch (col) {
      case "num":
        if (!/^\d+$/.test(v)) fail(`line number "${v}" is not a number`);
        rule.num = Number(v);
        break;
      case "pkts":
      case "bytes": {
        const c = parseCounter(v);
        if (!c) return fail(`${col} counter "${v}" is not a number`);
        rule[col] = c.value;
        if (c.approximate) rule.approximateCounters = true;
        break;
      }
      case "target":
        rule.target = v;
        break;
      case "prot": {
        rule.prot = negatable(v);
        rule.protocol = PROTOCOL_NAMES[rule.prot.value] ?? rule.prot.value;
        break;
      }
      case "opt":
        rule.opt = v;
        break;
      case "in":
      case "out":
        if (v !== "*") rule[col] = negatable(v);
        break;
      case "source":
      case "destination": {
        const a = negatable(v);
        if (!ADDRESS_RE.test(a.value)) fail(`${col} "${v}" is not a numeric address (list with -n)`);
        rule[col] = a;
        break;
      }
    }
  }
  const matchText = raw.slice(lastEnd).trim();
  if (matchText !== "") {
    rule.matchText = matchText;
    parseMatchText(matchText, rule, listing);
  }
  return rule;
}

function ports(neg: string | undefined, first: string, last: string | undefined): ListingPortMatch {
  return { negated: neg === "!", first: Number(first), last: Number(last ?? first) };
}

/**
 * One recogniser of the match text: a sticky regular expression matched at a word boundary, and what it sets.
 * Order matters only where one form is a prefix of another (`random-fully` before `random`).
 */
interface Recogniser {
  re: RegExp;
  apply(m: RegExpExecArray, rule: ListingRule): void;
}

const RECOGNISERS: Recogniser[] = [
  {
    // libxt_comment: " /* %s */".
    re: /\/\* (.*?) \*\/(?=\s|$)/y,
    apply: (m, r) => (r.comment = m[1]),
  },
  {
    // libxt_set (rev 1+): "[ !] match-set NAME src,dst".
    re: /(!\s+)?match-set (\S+) ((?:src|dst)(?:,(?:src|dst))*)(?=\s|$)/y,
    apply: (m, r) => r.matchSets.push({ negated: m[1] !== undefined, name: m[2] as string, flags: m[3] as string }),
  },
  {
    // libxt_statistic: "statistic mode random probability %.11f" (not the negated or nth forms: those stay extra).
    re: /statistic mode random probability (\d+(?:\.\d+)?)(?=\s|$)/y,
    apply: (m, r) => (r.probability = Number(m[1])),
  },
  {
    // libxt_MARK (rev 2): "MARK set|or|xor|and 0x…", "MARK xset 0x…/0x…".
    re: /MARK (set|or|xor|and|xset) (0x[0-9a-fA-F]+(?:\/0x[0-9a-fA-F]+)?)(?=\s|$)/y,
    apply: (m, r) => (r.markTarget = { op: m[1] as "set" | "or" | "xor" | "and" | "xset", value: m[2] as string }),
  },
  {
    // libxt_mark: "mark match [!] 0x…[/0x…]"; older releases printed "! mark match …".
    re: /(!\s+)?mark match (!\s+)?(0x[0-9a-fA-F]+(?:\/0x[0-9a-fA-F]+)?)(?=\s|$)/y,
    apply: (m, r) => (r.markMatch = { negated: (m[1] !== undefined) !== (m[2] !== undefined), value: m[3] as string }),
  },
  {
    // libxt_tcp/udp/sctp: "tcp [spt[s]:[!]P[:Q]] [dpt[s]:[!]P[:Q]] [flags:…] [option=…]"; a bare "tcp" is `-m tcp`.
    re: /(tcp|udp|udplite|sctp|dccp)((?: (?:spts?|dpts?):!?\d+(?::\d+)?| flags:!?\S+| option=!?\d+)*)(?=\s|$)/y,
    apply: (m, r) => {
      r.portMatchProtocol = m[1];
      for (const o of (m[2] ?? "").matchAll(/(spt|dpt)s?:(!)?(\d+)(?::(\d+))?/g)) {
        const p = ports(o[2], o[3] as string, o[4]);
        if (o[1] === "dpt") r.dport = p;
        else r.sport = p;
      }
      const rest = (m[2] ?? "").replace(/ (?:spts?|dpts?):!?\d+(?::\d+)?/g, "").trim();
      if (rest !== "") (r.extra ??= []).push(`${m[1]} ${rest}`);
    },
  },
  {
    // libxt_DNAT / SNAT: "to:ADDR[-ADDR][:PORT[-PORT]]".
    re: /to:(\S+)(?=\s|$)/y,
    apply: (m, r) => {
      const value = m[1] as string;
      if (r.target === "SNAT") {
        r.toSource = value;
        return;
      }
      const v6 = /^\[([^\]]+)\](?::(\S+))?$/.exec(value);
      const v4 = /^([^:]+)(?::(\S+))?$/.exec(value);
      const parts = v6 ?? v4;
      const port = parts?.[2];
      r.toDestination = { raw: value, address: parts?.[1] ?? value };
      if (port !== undefined && /^\d+$/.test(port)) r.toDestination.port = Number(port);
    },
  },
  {
    // libxt_addrtype (rev 1): "ADDRTYPE match [src-type [!]T[,T]] [dst-type [!]T] [limit-in] [limit-out]".
    re: /ADDRTYPE match((?: (?:src|dst)-type !?[A-Z_]+(?:,[A-Z_]+)*| limit-in| limit-out)+)(?=\s|$)/y,
    apply: (m, r) => {
      const a: NonNullable<ListingRule["addrtype"]> = {};
      for (const o of (m[1] ?? "").matchAll(/(src|dst)-type (\S+)/g)) a[o[1] as "src" | "dst"] = negatable(o[2] as string);
      if ((m[1] ?? "").includes(" limit-in")) a.limitIn = true;
      if ((m[1] ?? "").includes(" limit-out")) a.limitOut = true;
      r.addrtype = a;
    },
  },
  {
    // libxt_recent: "recent: [!] SET|CHECK|UPDATE|REMOVE [seconds: N] [reap] [hit_count: N] [TTL-Match] name: X side: source|dest [mask: M]".
    re:
      /recent:( !)? (SET|CHECK|UPDATE|REMOVE)((?: seconds: \d+| reap| hit_count: \d+| TTL-Match| name: \S+| side: (?:source|dest)| mask: \S+)*)(?=\s|$)/y,
    apply: (m, r) => {
      const o = m[3] ?? "";
      const rec: ListingRecent = {
        negated: m[1] !== undefined,
        command: m[2] as ListingRecent["command"],
        reap: / reap(?= |$)/.test(o),
        ttl: o.includes(" TTL-Match"),
      };
      const num = (re: RegExp) => {
        const x = re.exec(o);
        return x ? Number(x[1]) : undefined;
      };
      const seconds = num(/ seconds: (\d+)/);
      if (seconds !== undefined) rec.seconds = seconds;
      const hits = num(/ hit_count: (\d+)/);
      if (hits !== undefined) rec.hitCount = hits;
      const name = / name: (\S+)/.exec(o);
      if (name) rec.name = name[1];
      const side = / side: (source|dest)/.exec(o);
      if (side) rec.side = side[1] as "source" | "dest";
      const mask = / mask: (\S+)/.exec(o);
      if (mask) rec.mask = mask[1];
      r.recent = rec;
    },
  },
  {
    // libxt_MASQUERADE: "masq ports: P[-Q]".
    re: /masq ports: (\d+(?:-\d+)?)(?=\s|$)/y,
    apply: (m, r) => (r.masqPorts = m[1]),
  },
  { re: /random-fully(?=\s|$)/y, apply: (_m, r) => (r.randomFully = true) },
  { re: /random(?=\s|$)/y, apply: (_m, r) => (r.random = true) },
  { re: /persistent(?=\s|$)/y, apply: (_m, r) => (r.persistent = true) },
  {
    // libxt_conntrack: "[! ]ctstate S[,S]"; libxt_state: "[! ]state S[,S]".
    re: /(!\s+)?(?:ctstate|state) ([A-Z]+(?:,[A-Z]+)*)(?=\s|$)/y,
    apply: (m, r) => (r.ctstate = { negated: m[1] !== undefined, value: m[2] as string }),
  },
  {
    // libipt_REJECT: "reject-with TYPE".
    re: /reject-with (\S+)(?=\s|$)/y,
    apply: (m, r) => (r.rejectWith = m[1]),
  },
];

/** Splits the match text into recognised facts; runs of unrecognised words go to `extra` and `unparsed`. */
function parseMatchText(s: string, rule: ListingRule, listing: IptablesListing): void {
  let pos = 0;
  let unknownStart = -1;
  const flushUnknown = (end: number) => {
    if (unknownStart < 0) return;
    const piece = s.slice(unknownStart, end).trim();
    unknownStart = -1;
    if (piece === "") return;
    (rule.extra ??= []).push(piece);
  };
  while (pos < s.length) {
    while (pos < s.length && /\s/.test(s[pos] as string)) pos++;
    if (pos >= s.length) break;
    let matched = false;
    for (const rec of RECOGNISERS) {
      rec.re.lastIndex = pos;
      const m = rec.re.exec(s);
      if (m) {
        flushUnknown(pos);
        rec.apply(m, rule);
        pos = rec.re.lastIndex;
        matched = true;
        break;
      }
    }
    if (!matched) {
      if (unknownStart < 0) unknownStart = pos;
      const next = s.slice(pos).search(/\s/);
      pos = next < 0 ? s.length : pos + next;
    }
  }
  flushUnknown(s.length);
  for (const piece of rule.extra ?? []) {
    listing.unparsed.push({ line: rule.line, text: rule.raw, reason: `match text not understood: "${piece}"` });
  }
}
