/**
 * Parser of nftables text into the {@link NftRuleset} model: the fallback for nodes where only text was captured.
 *
 * Accepts
 * - `nft list ruleset` and `nft -a list ruleset` (nested `table FAMILY NAME { chain … { … } set … { … } }` blocks,
 *   `# handle N` comments, multi-line `elements = { … }`, `# Warning: …` lines of iptables-nft tables), and
 * - `nft -f` transactions as knftables / kube-proxy write them (`add table|chain|set|map|rule|element …`, `insert rule`,
 *   `flush chain|set|map|table|ruleset`, `delete table|chain|set|map|element`), which is also how kube-proxy's own
 *   unit tests spell expected rulesets.
 *
 * Structure follows nft(8) (sections TABLES, CHAINS, SETS, MAPS, ELEMENTS); statements are decoded with the same
 * vocabulary and canonical forms as the JSON parser (see nft_model.ts), and statements outside it are kept as
 * `unknown` text and listed in `unparsed`.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { DumpParseError } from "./errors.ts";
import {
  type NftBaseChain,
  type NftChain,
  type NftElement,
  type NftFormat,
  type NftNumgen,
  type NftOp,
  type NftRule,
  type NftRuleset,
  type NftUnparsed,
  type NftSet,
  type NftStatement,
  type NftTable,
  type NftValue,
  type NftVerdict,
  type NftVmapEntry,
  parseNftTime,
  resolvePriority,
  verdictText,
} from "./nft_model.ts";

const FORMAT = "nft-text";

// ---------------------------------------------------------------------------------------------------------------
// Tokens

/** A token: a word, a quoted string (text keeps the quotes) or one of `{ } , ;`. */
interface Tok {
  text: string;
  quoted: boolean;
  /** Whitespace came before it (so `established,related` and `a, b` render back as written). */
  sp: boolean;
}

/** Thrown by the tokenizer; turned into a DumpParseError with the line by the caller. */
class TokenError extends Error {}

const PUNCT = new Set(["{", "}", ",", ";"]);

/**
 * Splits nft text into tokens. Whitespace separates words; `{ } , ;` are always tokens of their own; `"…"` is one token
 * (backslash escapes kept); `#` at a token start begins a comment to the end of the line, returned separately.
 * `:` and `.` inside words stay there (`10.180.0.1:80`, `fd00::1`, chain names); on their own they are tokens.
 */
function tokenize(text: string): { toks: Tok[]; comment?: string } {
  const toks: Tok[] = [];
  let i = 0;
  const n = text.length;
  let sp = false;
  while (i < n) {
    const c = text[i]!;
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
      sp = true;
      continue;
    }
    if (c === "#") return { toks, comment: text.slice(i + 1).trim() };
    if (PUNCT.has(c)) {
      toks.push({ text: c, quoted: false, sp });
      sp = false;
      i++;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (j >= n) throw new TokenError("unterminated string");
      toks.push({ text: text.slice(i, j + 1), quoted: true, sp });
      sp = false;
      i = j + 1;
      continue;
    }
    let j = i;
    while (j < n) {
      const d = text[j]!;
      if (d === " " || d === "\t" || d === "\n" || d === "\r" || d === '"' || PUNCT.has(d)) break;
      j++;
    }
    toks.push({ text: text.slice(i, j), quoted: false, sp });
    sp = false;
    i = j;
  }
  return { toks };
}

function unquote(s: string): string {
  return s.startsWith('"') && s.endsWith('"') && s.length >= 2 ? s.slice(1, -1).replace(/\\(.)/g, "$1") : s;
}

/**
 * Joins tokens the way nft prints them: single spaces, none before `,` and `;`, and after `,` only where the input
 * had one (`established,related` vs `{ a, b }`).
 */
function joinToks(toks: Tok[]): string {
  let out = "";
  let prev: Tok | undefined;
  for (const t of toks) {
    if (prev === undefined || t.text === "," || t.text === ";") out += t.text;
    else if (prev.text === "," && !prev.quoted && !t.sp && !PUNCT.has(t.text)) out += t.text;
    else out += " " + t.text;
    prev = t;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Statements

/** Protocols whose header fields nft addresses as `PROTO FIELD`, with the fields nft(8) lists for them. */
const PAYLOAD_FIELDS: Record<string, Set<string>> = {
  ip: new Set([
    "version",
    "hdrlength",
    "dscp",
    "ecn",
    "length",
    "id",
    "frag-off",
    "ttl",
    "protocol",
    "checksum",
    "saddr",
    "daddr",
  ]),
  ip6: new Set(["version", "dscp", "ecn", "flowlabel", "length", "nexthdr", "hoplimit", "saddr", "daddr"]),
  tcp: new Set(["sport", "dport", "sequence", "ackseq", "doff", "reserved", "flags", "window", "checksum", "urgptr"]),
  udp: new Set(["sport", "dport", "length", "checksum"]),
  udplite: new Set(["sport", "dport", "checksum"]),
  sctp: new Set(["sport", "dport", "vtag", "checksum"]),
  dccp: new Set(["sport", "dport", "type"]),
  th: new Set(["sport", "dport"]),
  icmp: new Set(["type", "code", "checksum", "id", "sequence", "gateway", "mtu"]),
  icmpv6: new Set(["type", "code", "checksum", "parameter-problem", "packet-too-big", "id", "sequence", "max-delay"]),
  ether: new Set(["daddr", "saddr", "type"]),
  vlan: new Set(["id", "dei", "pcp", "type"]),
  arp: new Set(["htype", "ptype", "hlen", "plen", "operation", "saddr", "daddr"]),
};
/** meta keys (nft(8) META EXPRESSIONS); those in UNQUALIFIED_META print without `meta`. */
const META_KEYS = new Set([
  "length",
  "nfproto",
  "l4proto",
  "protocol",
  "priority",
  "mark",
  "iif",
  "iifname",
  "iiftype",
  "oif",
  "oifname",
  "oiftype",
  "skuid",
  "skgid",
  "nftrace",
  "rtclassid",
  "ibrname",
  "obrname",
  "ibriport",
  "obriport",
  "pkttype",
  "cpu",
  "iifgroup",
  "oifgroup",
  "cgroup",
  "random",
  "secpath",
  "ibrpvid",
  "ibrvproto",
  "time",
  "day",
  "hour",
  "sdif",
  "sdifname",
]);
/** meta keys accepted without `meta` in nft -f input (nft(8): "unqualified meta expressions"). */
const BARE_META = new Set([
  "mark",
  "l4proto",
  "nfproto",
  "iif",
  "iifname",
  "iiftype",
  "oif",
  "oifname",
  "oiftype",
  "skuid",
  "skgid",
  "nftrace",
  "rtclassid",
  "ibrname",
  "obrname",
  "ibriport",
  "obriport",
  "pkttype",
  "cpu",
  "iifgroup",
  "oifgroup",
  "cgroup",
]);
const UNQUALIFIED_META = new Set(["iif", "oif", "iifname", "oifname", "iifgroup", "oifgroup"]);
const STRING_META = new Set(["iifname", "oifname", "iif", "oif", "ibrname", "obrname", "ibriport", "obriport"]);
const CT_KEYS = new Set([
  "state",
  "direction",
  "status",
  "mark",
  "expiration",
  "helper",
  "label",
  "l3proto",
  "saddr",
  "daddr",
  "protocol",
  "proto-src",
  "proto-dst",
  "bytes",
  "packets",
  "avgpkt",
  "zone",
  "count",
  "id",
]);
const FIB_FLAGS = new Set(["saddr", "daddr", "mark", "iif", "oif"]);
const FIB_RESULTS = new Set(["type", "oif", "oifname"]);
const VERDICTS = new Set(["accept", "drop", "continue", "return"]);
const OPS: Record<string, NftOp> = {
  "==": "==",
  eq: "==",
  "!=": "!=",
  ne: "!=",
  "<": "<",
  lt: "<",
  ">": ">",
  gt: ">",
  "<=": "<=",
  le: "<=",
  ">=": ">=",
  ge: ">=",
};
const BINOPS: Record<string, string> = {
  "&": "&",
  and: "&",
  "|": "|",
  or: "|",
  "^": "^",
  xor: "^",
  "<<": "<<",
  lshift: "<<",
  ">>": ">>",
  rshift: ">>",
};
const NAT_FLAGS = new Set(["random", "fully-random", "persistent", "netmap", "prefix"]);
/** Words that start a statement: where the parser resumes after an undecodable piece. */
const STARTERS = new Set([
  ...VERDICTS,
  "jump",
  "goto",
  "queue",
  "counter",
  "log",
  "limit",
  "notrack",
  "masquerade",
  "dnat",
  "snat",
  "redirect",
  "reject",
  "meta",
  "ct",
  "fib",
  "numgen",
  "jhash",
  "symhash",
  ...Object.keys(PAYLOAD_FIELDS),
  ...BARE_META,
]);

/** Statement keywords that are never a value: a match cut short before them is not a match. */
const NOT_VALUES = new Set([
  ...VERDICTS,
  "jump",
  "goto",
  "queue",
  "counter",
  "log",
  "limit",
  "notrack",
  "masquerade",
  "dnat",
  "snat",
  "redirect",
  "reject",
  "vmap",
  "map",
  "comment",
  "update",
]);

/** How values are read: marks in hex, names quoted, `flags` for ct status (where `snat`/`dnat` are values). */
type Hint = "default" | "mark" | "string" | "flags";

/** Parse failure inside a statement: the statement becomes `unknown`. */
class NoParse extends Error {}

/** A cursor over a rule's tokens. */
class Cursor {
  pos = 0;
  constructor(readonly toks: Tok[]) {}
  peek(k = 0): Tok | undefined {
    return this.toks[this.pos + k];
  }
  word(k = 0): string | undefined {
    const t = this.toks[this.pos + k];
    return t && !t.quoted ? t.text : undefined;
  }
  next(): Tok {
    const t = this.toks[this.pos];
    if (!t) throw new NoParse();
    this.pos++;
    return t;
  }
  expect(word: string): void {
    if (this.word() !== word) throw new NoParse();
    this.pos++;
  }
  done(): boolean {
    return this.pos >= this.toks.length;
  }
  slice(from: number): Tok[] {
    return this.toks.slice(from, this.pos);
  }
}

function hex8(n: number): string {
  return "0x" + (n >>> 0).toString(16).padStart(8, "0");
}

function parseNumber(s: string): number | undefined {
  if (/^0x[0-9a-f]+$/i.test(s)) return parseInt(s, 16);
  if (/^\d+$/.test(s)) return Number(s);
  return undefined;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const IPV6 = /^[0-9a-f:.]*:[0-9a-f:.]*$/i;

function isAddrOrNumber(s: string): boolean {
  return IPV4.test(s) || IPV6.test(s) || /^\d+$/.test(s) || /^0x[0-9a-f]+$/i.test(s);
}

/** One selector (left-hand expression), canonical text and hint. */
interface Sel {
  text: string;
  hint: Hint;
  numgen?: NftNumgen;
}

/** Parses one primary selector at the cursor, or throws NoParse. */
function primary(c: Cursor): Sel {
  const w = c.word();
  if (w === undefined) throw new NoParse();
  if (PAYLOAD_FIELDS[w]) {
    const f = c.word(1);
    if (f === undefined || !PAYLOAD_FIELDS[w]!.has(f)) throw new NoParse();
    c.pos += 2;
    return { text: `${w} ${f}`, hint: "default" };
  }
  if (w === "meta") {
    const k = c.word(1);
    if (k === undefined || !META_KEYS.has(k)) throw new NoParse();
    c.pos += 2;
    return metaSel(k);
  }
  if (BARE_META.has(w)) {
    c.pos += 1;
    return metaSel(w);
  }
  if (w === "ct") {
    let i = 1;
    let dir = "";
    if (c.word(1) === "original" || c.word(1) === "reply") {
      dir = `${c.word(1)} `;
      i = 2;
    }
    const k = c.word(i);
    if (k === undefined || !CT_KEYS.has(k)) throw new NoParse();
    c.pos += i + 1;
    const hint: Hint = k === "mark" ? "mark" : k === "helper" ? "string" : k === "status" ? "flags" : "default";
    return { text: `ct ${dir}${k}`, hint };
  }
  if (w === "fib") {
    const flags: string[] = [];
    let i = 1;
    for (;;) {
      const f = c.word(i);
      if (f === undefined || !FIB_FLAGS.has(f)) throw new NoParse();
      flags.push(f);
      i++;
      if (c.word(i) === "." && FIB_FLAGS.has(c.word(i + 1) ?? "")) i++;
      else break;
    }
    const r = c.word(i);
    if (r === undefined || !FIB_RESULTS.has(r)) throw new NoParse();
    c.pos += i + 1;
    return { text: `fib ${flags.join(" . ")} ${r}`, hint: "default" };
  }
  if (w === "numgen") {
    const mode = c.word(1);
    if ((mode !== "random" && mode !== "inc") || c.word(2) !== "mod") throw new NoParse();
    const mod = parseNumber(c.word(3) ?? "");
    if (mod === undefined) throw new NoParse();
    c.pos += 4;
    let offset = 0;
    if (c.word() === "offset") {
      const o = parseNumber(c.word(1) ?? "");
      if (o === undefined) throw new NoParse();
      offset = o;
      c.pos += 2;
    }
    return {
      text: `numgen ${mode} mod ${mod}${offset ? ` offset ${offset}` : ""}`,
      hint: "default",
      numgen: { mode, mod, offset },
    };
  }
  if (w === "jhash" || w === "symhash") {
    c.pos++;
    let expr = "";
    if (w === "jhash") {
      const parts = [primary(c)];
      while (c.word() === ".") {
        c.pos++;
        parts.push(primary(c));
      }
      expr = ` ${parts.map((p) => p.text).join(" . ")}`;
    }
    c.expect("mod");
    const mod = parseNumber(c.next().text);
    if (mod === undefined) throw new NoParse();
    let text = `${w}${expr} mod ${mod}`;
    for (const opt of ["seed", "offset"]) {
      if (c.word() === opt) {
        c.pos++;
        text += ` ${opt} ${c.next().text}`;
      }
    }
    return { text, hint: "default" };
  }
  const raw = /^@(ll|nh|th|ih)$/.exec(w);
  if (raw && c.word(1) === "," && c.word(3) === ",") {
    const off = parseNumber(c.word(2) ?? "");
    const len = parseNumber(c.word(4) ?? "");
    if (off === undefined || len === undefined) throw new NoParse();
    c.pos += 5;
    return { text: `@${raw[1]},${off},${len}`, hint: "default" };
  }
  throw new NoParse();
}

function metaSel(k: string): Sel {
  return {
    text: UNQUALIFIED_META.has(k) ? k : `meta ${k}`,
    hint: k === "mark" ? "mark" : STRING_META.has(k) ? "string" : "default",
  };
}

/** Parses a selector: primaries joined by ` . `, then an optional `& VALUE` style binary operation. */
function selector(c: Cursor): Sel {
  const first = primary(c);
  const parts = [first];
  while (c.word() === ".") {
    c.pos++;
    parts.push(primary(c));
  }
  const sel: Sel = parts.length === 1 ? first : { text: parts.map((p) => p.text).join(" . "), hint: "default" };
  const b = c.word();
  if (b !== undefined && BINOPS[b] !== undefined && parts.length === 1) {
    c.pos++;
    const v = literal(c.next(), sel.hint);
    return { text: `${sel.text} ${BINOPS[b]} ${v.text}`, hint: sel.hint };
  }
  return sel;
}

/** A single literal token as a value: prefix, range, set reference, quoted string, or plain word. */
function literal(t: Tok, hint: Hint): NftValue {
  if (t.quoted) return { kind: "literal", text: t.text, value: unquote(t.text) };
  const s = t.text;
  if (PUNCT.has(s) || s === ":" || s === "=" || s === ".") throw new NoParse();
  if (NOT_VALUES.has(s) && !(hint === "flags" && (s === "snat" || s === "dnat"))) throw new NoParse();
  if (s.startsWith("@")) return { kind: "set-ref", text: s, name: s.slice(1) };
  const pre = /^(.+)\/(\d+)$/.exec(s);
  if (pre && isAddrOrNumber(pre[1]!)) return { kind: "prefix", text: s, addr: pre[1]!, len: Number(pre[2]) };
  const dash = s.indexOf("-", 1);
  if (dash > 0) {
    const from = s.slice(0, dash);
    const to = s.slice(dash + 1);
    if (isAddrOrNumber(from) && isAddrOrNumber(to)) return { kind: "range", text: s, from, to };
  }
  if (hint === "mark") {
    const n = parseNumber(s);
    if (n !== undefined) return { kind: "literal", text: hex8(n), value: hex8(n) };
  }
  return { kind: "literal", text: s, value: s };
}

/** Parses a value: `@set`, `{ … }`, a literal, a concatenation `a . b`, or a flag list `a,b` (when `lists`). */
function value(c: Cursor, hint: Hint, lists: boolean): NftValue {
  const t = c.peek();
  if (!t) throw new NoParse();
  if (!t.quoted && t.text === "{") {
    c.pos++;
    const elements: NftValue[] = [];
    while (c.word() !== "}") {
      elements.push(value(c, hint, false));
      if (c.word() === ",") c.pos++;
      else if (c.word() !== "}") throw new NoParse();
    }
    c.pos++;
    return { kind: "set", text: `{ ${elements.map((e) => e.text).join(", ")} }`, elements };
  }
  c.pos++;
  const first = literal(t, hint);
  if (c.word() === "." && first.kind !== "set-ref") {
    const parts: NftValue[] = [first];
    while (c.word() === ".") {
      c.pos++;
      parts.push(literal(c.next(), "default"));
    }
    return { kind: "concat", text: parts.map((p) => p.text).join(" . "), parts };
  }
  if (lists && c.word() === "," && first.kind === "literal") {
    const items = [first.text];
    while (c.word() === ",") {
      c.pos++;
      items.push(literal(c.next(), hint).text);
    }
    return { kind: "list", text: items.join(","), items };
  }
  return first;
}

function verdictAt(c: Cursor): NftVerdict | undefined {
  const w = c.word();
  if (w !== undefined && VERDICTS.has(w)) {
    c.pos++;
    return { kind: w as NftVerdict["kind"] };
  }
  if (w === "jump" || w === "goto") {
    const target = c.peek(1);
    if (!target || PUNCT.has(target.text)) throw new NoParse();
    c.pos += 2;
    return { kind: w, target: unquote(target.text) };
  }
  return undefined;
}

/** `ADDR`, `ADDR:PORT`, `[ADDR6]:PORT`, `:PORT` → parts. */
function natAddress(s: string): { addr?: string; port?: number } | undefined {
  let m = /^\[([0-9a-f:.]+)\](?::(\d+))?$/i.exec(s);
  if (m) return m[2] === undefined ? { addr: m[1]! } : { addr: m[1]!, port: Number(m[2]) };
  m = /^(\d{1,3}(?:\.\d{1,3}){3})(?::(\d+))?$/.exec(s);
  if (m) return m[2] === undefined ? { addr: m[1]! } : { addr: m[1]!, port: Number(m[2]) };
  m = /^:(\d+)$/.exec(s);
  if (m) return { port: Number(m[1]) };
  if (IPV6.test(s)) return { addr: s };
  return undefined;
}

function natFlags(c: Cursor): string[] {
  const flags: string[] = [];
  while (c.word() !== undefined && NAT_FLAGS.has(c.word()!)) {
    flags.push(c.next().text);
    if (c.word() === "," && NAT_FLAGS.has(c.word(1) ?? "")) c.pos++;
  }
  return flags;
}

/** Parses one statement at the cursor, or throws NoParse (the caller then keeps the text as unknown). */
function statement(c: Cursor): NftStatement {
  const start = c.pos;
  const text = () => joinToks(c.slice(start));
  const w = c.word();
  const v = verdictAt(c);
  if (v) return { kind: "verdict", text: text(), verdict: v };
  switch (w) {
    case "counter": {
      c.pos++;
      if (c.word() === "packets" && c.word(2) === "bytes") {
        const packets = parseNumber(c.word(1) ?? "");
        const bytes = parseNumber(c.word(3) ?? "");
        if (packets === undefined || bytes === undefined) throw new NoParse();
        c.pos += 4;
        return { kind: "counter", text: text(), packets, bytes };
      }
      if (c.word() === "name") {
        c.pos++;
        const name = unquote(c.next().text);
        return { kind: "counter", text: text(), name };
      }
      return { kind: "counter", text: text() };
    }
    case "notrack":
      c.pos++;
      return { kind: "notrack", text: text() };
    case "log": {
      c.pos++;
      let prefix: string | undefined;
      for (;;) {
        const o = c.word();
        if (o === "prefix") {
          c.pos++;
          prefix = unquote(c.next().text);
        } else if (o === "level" || o === "group" || o === "snaplen" || o === "queue-threshold" || o === "flags") {
          c.pos += 2;
        } else break;
      }
      const st: NftStatement = { kind: "log", text: text() };
      if (prefix !== undefined) st.prefix = prefix;
      return st;
    }
    case "limit": {
      c.pos++;
      c.expect("rate");
      if (c.word() === "over") c.pos++;
      c.next();
      if (c.word() !== undefined && /^\/?(second|minute|hour|day|week)$/.test(c.word()!)) c.pos++;
      if (c.word() === "burst") {
        c.pos += 2;
        if (c.word() === "packets" || c.word() === "bytes" || c.word() === "kbytes" || c.word() === "mbytes") c.pos++;
      }
      return { kind: "limit", text: text() };
    }
    case "masquerade": {
      c.pos++;
      const st: Extract<NftStatement, { kind: "masquerade" }> = { kind: "masquerade", text: "", flags: [] };
      if (c.word() === "to") {
        c.pos++;
        st.to = c.next().text;
      }
      st.flags = natFlags(c);
      st.text = text();
      return st;
    }
    case "dnat":
    case "snat":
    case "redirect": {
      c.pos++;
      const st: Extract<NftStatement, { kind: "nat" }> = { kind: "nat", text: "", nat: w, flags: [] };
      if (c.word() === "ip" || c.word() === "ip6") {
        if (c.word(1) !== "to") throw new NoParse();
        st.family = c.next().text as "ip" | "ip6";
      }
      if (c.word() === "to") {
        c.pos++;
        const tgtStart = c.pos;
        const a = natAddress(c.word() ?? "");
        if (a) {
          c.pos++;
          if (a.addr !== undefined) st.addr = a.addr;
          if (a.port !== undefined) st.port = a.port;
        } else {
          selector(c);
          if (c.word() !== "map") throw new NoParse();
          c.pos++;
          value(c, "default", false);
        }
        st.to = joinToks(c.slice(tgtStart));
      } else if (w !== "redirect") {
        throw new NoParse();
      }
      st.flags = natFlags(c);
      st.text = text();
      return st;
    }
    case "reject": {
      c.pos++;
      if (c.word() !== "with") return { kind: "reject", text: text() };
      c.pos++;
      const kind = c.next().text;
      let w2: string;
      if (kind === "tcp") {
        c.expect("reset");
        w2 = "tcp reset";
      } else {
        if (c.word() === "type") c.pos++;
        w2 = `${kind} ${c.next().text}`;
      }
      return { kind: "reject", text: text(), with: w2 };
    }
    case "add":
    case "update":
    case "delete": {
      const ref = c.word(1);
      if (ref === undefined || !ref.startsWith("@")) break;
      c.pos += 2;
      c.expect("{");
      const key = selector(c).text;
      let timeout: number | undefined;
      if (c.word() === "timeout") {
        c.pos++;
        timeout = parseNftTime(c.next().text);
        if (timeout === undefined) throw new NoParse();
      }
      c.expect("}");
      const st: Extract<NftStatement, { kind: "set-update" }> = {
        kind: "set-update",
        text: text(),
        op: w,
        set: ref.slice(1),
        key,
      };
      if (timeout !== undefined) st.timeout = timeout;
      return st;
    }
  }
  // Expression statements: match, vmap, mark set.
  const sel = selector(c);
  const nw = c.word();
  if (nw === "vmap") {
    c.pos++;
    const st: Extract<NftStatement, { kind: "vmap" }> = { kind: "vmap", text: "", selector: sel.text };
    if (sel.numgen) st.numgen = sel.numgen;
    const t = c.word();
    if (t !== undefined && t.startsWith("@")) {
      c.pos++;
      st.map = t.slice(1);
    } else {
      c.expect("{");
      const entries: NftVmapEntry[] = [];
      while (c.word() !== "}") {
        const key = value(c, sel.hint, false);
        c.expect(":");
        const verdict = verdictAt(c);
        if (!verdict) throw new NoParse();
        entries.push({ key, verdict });
        if (c.word() === ",") c.pos++;
        else if (c.word() !== "}") throw new NoParse();
      }
      c.pos++;
      st.entries = entries;
    }
    st.text = text();
    return st;
  }
  if (nw === "set") {
    if (sel.text !== "meta mark" && sel.text !== "ct mark") throw new NoParse();
    c.pos++;
    const simple = parseNumber(c.word() ?? "");
    if (simple !== undefined) {
      c.pos++;
      return { kind: "mark", text: text(), target: sel.text, op: "set", value: simple };
    }
    const src = selector(c);
    const m = /^(meta mark|ct mark) ([&|^]) (0x[0-9a-f]+)$/.exec(src.text);
    if (!m || m[1] !== sel.text) throw new NoParse();
    const op = m[2] === "|" ? "or" : m[2] === "^" ? "xor" : "and";
    return { kind: "mark", text: text(), target: sel.text, op, value: parseInt(m[3]!, 16) };
  }
  let op: NftOp = "==";
  if (nw !== undefined && OPS[nw] !== undefined) {
    op = OPS[nw]!;
    c.pos++;
  }
  const val = value(c, sel.hint, true);
  return { kind: "match", text: text(), selector: sel.text, op, value: val };
}

/** Decodes a rule's tokens into statements (+ trailing `comment "…"`); never throws. */
function ruleStatements(toks: Tok[]): { statements: NftStatement[]; comment?: string } {
  let comment: string | undefined;
  let body = toks;
  const n = toks.length;
  if (n >= 2 && toks[n - 2]!.text === "comment" && !toks[n - 2]!.quoted && toks[n - 1]!.quoted) {
    comment = unquote(toks[n - 1]!.text);
    body = toks.slice(0, n - 2);
  }
  const c = new Cursor(body);
  const statements: NftStatement[] = [];
  while (!c.done()) {
    const start = c.pos;
    try {
      statements.push(statement(c));
    } catch (err) {
      if (!(err instanceof NoParse)) throw err;
      // Resume at the next word that starts a statement, outside any { … }.
      let depth = 0;
      for (c.pos = start; !c.done(); c.pos++) {
        const w = c.word();
        if (c.pos > start && depth === 0 && w !== undefined && STARTERS.has(w)) break;
        if (w === "{") depth++;
        else if (w === "}") depth--;
      }
      statements.push({ kind: "unknown", text: joinToks(body.slice(start, c.pos)) });
    }
  }
  return comment === undefined ? { statements } : { statements, comment };
}

// ---------------------------------------------------------------------------------------------------------------
// Sets, maps, elements

/** Splits tokens at top-level commas (commas inside `{ }` stay). */
function splitTopLevel(toks: Tok[], sep: string): Tok[][] {
  const out: Tok[][] = [];
  let cur: Tok[] = [];
  let depth = 0;
  for (const t of toks) {
    if (!t.quoted && t.text === "{") depth++;
    if (!t.quoted && t.text === "}") depth--;
    if (depth === 0 && !t.quoted && t.text === sep) {
      out.push(cur);
      cur = [];
    } else cur.push(t);
  }
  if (cur.length) out.push(cur);
  return out;
}

function typeHint(type: string): Hint {
  return type === "mark" ? "mark" : type === "ifname" || type === "string" ? "string" : "default";
}

/** Parses the items of an `elements = { … }` / `add element … { … }` list (tokens inside the braces). */
function elementsOf(set: NftSet, toks: Tok[]): NftElement[] {
  const hints = set.keyType.map(typeHint);
  return splitTopLevel(toks, ",").map((item) => {
    const c = new Cursor(item);
    const parts: string[] = [];
    let i = 0;
    const el: Partial<NftElement> = {};
    // key parts
    for (;;) {
      parts.push(literal(c.next(), hints[i] ?? "default").text);
      i++;
      if (c.word() === ".") c.pos++;
      else break;
    }
    for (;;) {
      const w = c.word();
      if (w === "timeout" || w === "expires") {
        c.pos++;
        const s = parseNftTime(c.next().text);
        if (s === undefined) throw new NoParse();
        if (w === "timeout") el.timeout = s;
        else el.expires = s;
      } else if (w === "comment") {
        c.pos++;
        el.comment = unquote(c.next().text);
      } else if (w === "counter") {
        c.pos++;
        if (c.word() === "packets") c.pos += 4;
      } else break;
    }
    const keyText = parts.join(" . ");
    let text = keyText;
    if (c.word() === ":") {
      c.pos++;
      const v = verdictAt(c);
      if (v) {
        el.verdict = v;
        el.data = verdictText(v);
      } else {
        el.data = value(c, typeHint(set.dataType ?? ""), false).text;
      }
      text = `${keyText} : ${el.data}`;
    }
    if (!c.done()) throw new NoParse();
    return { ...el, keyText, key: parts, text } as NftElement;
  });
}

/** An `elements = { … }` list whose items {@link elementsFast} reads: no quotes, comments, braces inside, per-element options. */
const FAST_ELEMENTS = /^[ \t\n\r]*elements[ \t\n\r]*=[ \t\n\r]*\{([^"#{};]*)\}[ \t\n\r]*$/;
const ELEMENT_OPTIONS = /(?:^|[ \t\n\r,])(?:timeout|expires|comment|counter)(?:[ \t\n\r,]|$)/;

/**
 * {@link elementsOf} for the common shape of kube-proxy's maps (`10.96.0.10 . udp . 53 : goto service-…`, one per
 * line, thousands of them), read from the text without a token object per word: on a 10,000-Service ruleset the
 * tokens of the maps were most of what the parser allocated. The same items as {@link elementsOf} gives, by the same
 * rules ({@link literal}, {@link verdictAt}, {@link value} on a word at a time); undefined for any list it does not
 * take whole (quotes, comments, nested braces, `timeout`/`expires`/`comment`/`counter` options, a word it would not
 * read), which then goes the general way, errors included.
 * @param set the set or map (its key and data types give the hints).
 * @param text the gathered `elements = { … }` text.
 * @returns the elements, or undefined.
 */
export function elementsFast(set: NftSet, text: string): NftElement[] | undefined {
  const m = FAST_ELEMENTS.exec(text);
  if (!m || ELEMENT_OPTIONS.test(m[1]!)) return undefined;
  const hints = set.keyType.map(typeHint);
  const dataHint = typeHint(set.dataType ?? "");
  const items = m[1]!.split(",");
  // a trailing comma ends the list (splitTopLevel keeps no empty last item); an empty item elsewhere is an error
  if (items.length > 0 && !/[^ \t\n\r]/.test(items[items.length - 1]!)) items.pop();
  const out: NftElement[] = new Array(items.length);
  const scratch: Tok = { text: "", quoted: false, sp: true };
  const lit = (w: string, hint: Hint): NftValue => {
    scratch.text = w;
    return literal(scratch, hint);
  };
  try {
    for (let n = 0; n < items.length; n++) {
      // split where tokenize splits (space, tab, newline, carriage return; no other whitespace)
      const words = items[n]!.split(/[ \t\n\r]+/);
      if (words[0] === "") words.shift();
      if (words[words.length - 1] === "") words.pop();
      if (words.length === 0) return undefined;
      let k = 0;
      const parts: string[] = [];
      for (let i = 0;; i++) {
        const w = words[k++];
        if (w === undefined) return undefined;
        parts.push(lit(w, hints[i] ?? "default").text);
        if (words[k] === ".") k++;
        else break;
      }
      const keyText = parts.join(" . ");
      let el: NftElement;
      if (k === words.length) el = { keyText, key: parts, text: keyText };
      else {
        if (words[k++] !== ":") return undefined;
        const w = words[k];
        if (w === undefined) return undefined;
        let verdict: NftVerdict | undefined;
        let data: string;
        if (VERDICTS.has(w)) {
          verdict = { kind: w as NftVerdict["kind"] };
          k++;
        } else if (w === "jump" || w === "goto") {
          const target = words[k + 1];
          if (target === undefined) return undefined;
          verdict = { kind: w, target };
          k += 2;
        }
        if (verdict) data = verdictText(verdict);
        else {
          const first = lit(w, dataHint);
          k++;
          data = first.text;
          if (words[k] === "." && first.kind !== "set-ref") {
            const concat = [first.text];
            while (words[k] === ".") {
              const next = words[k + 1];
              if (next === undefined) return undefined;
              concat.push(lit(next, "default").text);
              k += 2;
            }
            data = concat.join(" . ");
          }
        }
        if (k !== words.length) return undefined;
        const shown = `${keyText} : ${data}`;
        el = verdict ? { verdict, data, keyText, key: parts, text: shown } : { data, keyText, key: parts, text: shown };
      }
      out[n] = el;
    }
  } catch (err) {
    if (err instanceof NoParse) return undefined;
    throw err;
  }
  return out;
}

/** Applies one set/map property (`type …`, `flags …`, `timeout …`, `size …`, `comment …`, `elements = { … }`). */
function setProperty(set: NftSet, toks: Tok[]): boolean {
  const w = toks[0]?.text;
  const rest = toks.slice(1);
  switch (w) {
    case "type":
    case "typeof": {
      const text = joinToks(rest);
      const colon = splitTopLevel(rest, ":");
      const keyToks = colon[0] ?? [];
      set.keyType = splitTopLevel(keyToks, ".").map(joinToks);
      set.type = set.keyType.join(" . ");
      if (colon.length > 1) {
        set.kind = "map";
        set.dataType = joinToks(colon.slice(1).flat());
      }
      return text !== "";
    }
    case "flags":
      set.flags = rest.filter((t) => t.text !== ",").map((t) => t.text);
      return true;
    case "timeout": {
      const s = parseNftTime(rest[0]?.text ?? "");
      if (s === undefined) return false;
      set.timeout = s;
      return true;
    }
    case "size": {
      const n = Number(rest[0]?.text);
      if (!Number.isInteger(n)) return false;
      set.size = n;
      return true;
    }
    case "comment":
      if (!rest[0]?.quoted) return false;
      set.comment = unquote(rest[0].text);
      return true;
    case "elements": {
      if (rest[0]?.text !== "=" || rest[1]?.text !== "{" || rest[rest.length - 1]?.text !== "}") return false;
      set.elements.push(...elementsOf(set, rest.slice(2, -1)));
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// Document

const FAMILIES = new Set(["ip", "ip6", "inet", "arp", "bridge", "netdev"]);
/** Named stateful objects and other table members nft(8) knows that the model does not decode (kept as text). */
const STATEFUL_OBJECTS = new Set(["counter", "quota", "limit", "flowtable", "ct", "secmark", "synproxy"]);

/** Parser state over the whole text. */
/**
 * `{` minus `}` on a line without `"` or `#` (where every brace is a token of its own, see {@link tokenize});
 * undefined for a line with either, which must be tokenized.
 */
function braceBalance(line: string): number | undefined {
  if (line.includes('"') || line.includes("#")) return undefined;
  let depth = 0;
  for (let k = line.indexOf("{"); k !== -1; k = line.indexOf("{", k + 1)) depth++;
  for (let k = line.indexOf("}"); k !== -1; k = line.indexOf("}", k + 1)) depth--;
  return depth;
}

/** Unknown statements of a rule, as `unparsed` entries. */
function ruleUnparsed(rule: NftRule): NftUnparsed[] {
  const out: NftUnparsed[] = [];
  for (const st of rule.statements) {
    if (st.kind !== "unknown") continue;
    const u: NftUnparsed = { family: rule.family, table: rule.table, chain: rule.chain, line: rule.line, text: st.text, context: rule.text };
    out.push(rule.handle === undefined ? u : { ...u, handle: rule.handle });
  }
  return out;
}

/**
 * A rule line of a listing decoded on first use: a 10,000-Service table holds 100,000+ rules and a `svc/NAME` question
 * reads a few dozen (eager decoding took ~1 s there). Only lines {@link Doc.lazyRule} accepts: no comment, no handle,
 * nothing the tokenizer could refuse; so decoding later yields what decoding now would have, and cannot fail.
 */
class TextRule implements NftRule {
  readonly family: string;
  readonly table: string;
  readonly chain: string;
  readonly line: number;
  #raw: string;
  #decoded: { statements: NftStatement[]; text: string } | undefined;

  constructor(family: string, table: string, chain: string, line: number, raw: string) {
    this.family = family;
    this.table = table;
    this.chain = chain;
    this.line = line;
    this.#raw = raw;
  }

  #decode(): { statements: NftStatement[]; text: string } {
    if (this.#decoded === undefined) {
      const { statements } = ruleStatements(tokenize(this.#raw).toks);
      this.#decoded = { statements, text: statements.map((x) => x.text).join(" ") };
    }
    return this.#decoded;
  }

  get statements(): NftStatement[] {
    return this.#decode().statements;
  }

  get text(): string {
    return this.#decode().text;
  }

  /** False only when the rule's line does not contain `word` (nft prints names and keywords as they are). */
  mayContain(word: string): boolean {
    return this.#raw.includes(word);
  }

  /** The line as nft printed it (see NftRule.lineText). */
  lineText(): string {
    return this.#raw;
  }

  /** The plain form (JSON.stringify, test equality): the same fields as an eagerly parsed rule. */
  toJSON(): NftRule {
    return { family: this.family, table: this.table, chain: this.chain, line: this.line, text: this.text, statements: this.statements };
  }
}

class Doc {
  readonly lines: string[];
  readonly ruleset: NftRuleset;
  readonly tables = new Map<string, NftTable>();
  /** Tables read from a `table FAMILY NAME {` block (a listing), as opposed to `add table` commands. */
  readonly blocks = new Set<NftTable>();
  transaction = false;
  listing = false;
  /**
   * What `ruleset.unparsed` lists, in input order: entries found while parsing, and the rules decoded on first use
   * (their unknown statements are listed when `unparsed` is first read, as nft_json.ts does).
   */
  readonly unparsedItems: (NftUnparsed | TextRule)[] = [];

  /** {@link ParseNftTextOptions.fastElements}. */
  readonly fastElements: boolean;

  constructor(text: string, options: ParseNftTextOptions = {}) {
    this.fastElements = options.fastElements ?? true;
    this.lines = text.includes("\r") ? text.split(/\r?\n/) : text.split("\n");
    const items = this.unparsedItems;
    let unparsed: NftUnparsed[] | undefined;
    this.ruleset = {
      format: "nft-list",
      tables: [],
      get unparsed(): NftUnparsed[] {
        if (unparsed === undefined) {
          unparsed = [];
          for (const x of items) {
            if (x instanceof TextRule) unparsed.push(...ruleUnparsed(x));
            else unparsed.push(x);
          }
        }
        return unparsed;
      },
    };
  }

  /** 1-based number of the last non-blank line (where a truncated input stops). */
  lastLine(): number {
    let n = this.lines.length;
    while (n > 1 && this.lines[n - 1]!.trim() === "") n--;
    return n;
  }

  fail(line: number, what: string): never {
    throw new DumpParseError(FORMAT, line, what, this.lines[line - 1] ?? "");
  }

  tok(line: number, text: string): { toks: Tok[]; comment?: string } {
    try {
      return tokenize(text);
    } catch (err) {
      if (err instanceof TokenError) this.fail(line, err.message);
      throw err;
    }
  }

  table(family: string, name: string, line: number): NftTable {
    const key = `${family} ${name}`;
    let t = this.tables.get(key);
    if (!t) {
      t = { family, name, line, flags: [], chains: new Map(), sets: new Map() };
      this.tables.set(key, t);
      this.ruleset.tables.push(t);
    }
    return t;
  }

  chain(t: NftTable, name: string, line: number): NftChain {
    let c = t.chains.get(name);
    if (!c) {
      c = { family: t.family, table: t.name, name, line, rules: [] };
      t.chains.set(name, c);
    }
    return c;
  }

  existingTable(family: string, name: string, line: number): NftTable {
    const t = this.tables.get(`${family} ${name}`);
    if (!t) this.fail(line, `table ${family} ${name} does not exist`);
    return t;
  }

  rule(t: NftTable, chain: NftChain, toks: Tok[], line: number, handle?: number): NftRule {
    const { statements, comment } = ruleStatements(toks);
    const rule: NftRule = {
      family: t.family,
      table: t.name,
      chain: chain.name,
      line,
      text: statements.map((s) => s.text).join(" "),
      statements,
    };
    if (handle !== undefined) rule.handle = handle;
    if (comment !== undefined) rule.comment = comment;
    this.unparsedItems.push(...ruleUnparsed(rule));
    return rule;
  }

  /**
   * A rule line of a chain block that can be decoded later ({@link TextRule}): no quote (so no comment, and no
   * tokenizer error to report now), no `#` (so no handle), braces balanced on the line, and not a chain property.
   * @returns the rule, or undefined for a line the block must read now.
   */
  lazyRule(t: NftTable, chain: NftChain, raw: string, line: number): TextRule | undefined {
    if (braceBalance(raw) !== 0) return undefined;
    const from = raw.search(/\S/);
    if (from === -1) return undefined;
    const sp = raw.indexOf(" ", from);
    const first = raw.slice(from, sp === -1 ? raw.length : sp);
    if (first === "}" || first === "type" || first === "policy" || first === "comment") return undefined;
    const rule = new TextRule(t.family, t.name, chain.name, line, raw);
    this.unparsedItems.push(rule);
    return rule;
  }

  /** Reads physical lines from `i` until braces balance; returns the joined text and the last line index. */
  gather(i: number, depth0: number): { text: string; end: number } {
    let depth = depth0;
    let text = "";
    let j = i;
    for (; j < this.lines.length; j++) {
      const l = this.lines[j]!;
      text += (text ? "\n" : "") + l;
      depth += braceBalance(l) ?? this.tok(j + 1, l).toks.reduce((d, t) => (t.quoted ? d : t.text === "{" ? d + 1 : t.text === "}" ? d - 1 : d), 0);
      if (depth <= 0) return { text, end: j };
    }
    return this.fail(this.lastLine(), "truncated: '}' missing at end of input");
  }

  parse(): NftRuleset {
    if (this.lines.every((l) => l.trim() === "")) throw new DumpParseError(FORMAT, 0, "empty input", "");
    let i = 0;
    while (i < this.lines.length) {
      const raw = this.lines[i]!;
      const trimmed = raw.trim();
      if (trimmed === "" || trimmed.startsWith("#")) {
        i++;
        continue;
      }
      const { toks } = this.tok(i + 1, raw);
      const w = toks[0]?.text;
      if (w === "table" && toks[toks.length - 1]?.text === "{") {
        this.listing = true;
        i = this.tableBlock(i, toks);
        continue;
      }
      if (w === "add" || w === "create" || w === "insert" || w === "flush" || w === "delete" || w === "destroy") {
        this.transaction = true;
        // A command may continue on following lines while braces are open (`add set … {` newline `elements = …`).
        const opened = toks.filter((t) => !t.quoted && t.text === "{").length -
          toks.filter((t) => !t.quoted && t.text === "}").length;
        if (opened > 0) {
          const g = this.gather(i, 0);
          this.command(i + 1, this.tok(i + 1, g.text.replace(/\n/g, " ")).toks);
          i = g.end + 1;
        } else {
          this.command(i + 1, toks);
          i++;
        }
        continue;
      }
      this.fail(i + 1, 'expected "table FAMILY NAME {" or an nft command (add, insert, flush, delete)');
    }
    const format: NftFormat = this.transaction ? "nft-transaction" : "nft-list";
    this.ruleset.format = format;
    return this.ruleset;
  }

  /** `table FAMILY NAME {` … `}` of a listing; returns the index of the line after the block. */
  tableBlock(i: number, head: Tok[]): number {
    const line = i + 1;
    if (head.length !== 4 || !FAMILIES.has(head[1]!.text)) this.fail(line, 'expected "table FAMILY NAME {"');
    // `nft list` prints each table once: a second block of the same table is a second listing joined to the first
    const first = this.tables.get(`${head[1]!.text} ${head[2]!.text}`);
    if (first !== undefined && this.blocks.has(first)) this.fail(line, `table ${head[1]!.text} ${head[2]!.text} is listed twice (first at line ${first.line}): two listings joined into one section? capture it again`);
    const t = this.table(head[1]!.text, head[2]!.text, line);
    this.blocks.add(t);
    const hc = tokenize(this.lines[i]!).comment;
    const h = /handle (\d+)/.exec(hc ?? "");
    if (h) t.handle = Number(h[1]);
    let j = i + 1;
    for (; j < this.lines.length; j++) {
      const raw = this.lines[j]!;
      const trimmed = raw.trim();
      if (trimmed === "" || trimmed.startsWith("#")) continue;
      // `chain NAME {`, most lines of a big table's block level: read without the tokenizer
      if (trimmed.startsWith("chain ") && trimmed.endsWith(" {") && braceBalance(trimmed) === 1) {
        const name = trimmed.slice(6, -2);
        if (name !== "" && !/\s/.test(name)) {
          j = this.chainBlock(j, t, name);
          continue;
        }
      }
      const { toks, comment } = this.tok(j + 1, raw);
      const w = toks[0]?.text;
      if (w === "}" && toks.length === 1) return j + 1;
      if (w === "comment" && toks[1]?.quoted && toks.length === 2) {
        t.comment = unquote(toks[1].text);
        continue;
      }
      if (w === "flags") {
        t.flags = toks.slice(1).filter((x) => x.text !== ",").map((x) => x.text);
        continue;
      }
      const last = toks[toks.length - 1]?.text;
      if ((w === "chain" || w === "set" || w === "map") && toks.length === 3 && last === "{") {
        const handle = /handle (\d+)/.exec(comment ?? "");
        j = w === "chain"
          ? this.chainBlock(j, t, toks[1]!.text, handle ? Number(handle[1]) : undefined)
          : this.setBlock(j, t, w, toks[1]!.text, handle ? Number(handle[1]) : undefined);
        continue;
      }
      if (last === "{") {
        // Other stateful objects (counter, quota, ct helper, flowtable…): kept as text.
        const g = this.gather(j, 0);
        this.unparsedItems.push({
          family: t.family,
          table: t.name,
          line: j + 1,
          text: joinToks(toks.slice(0, -1)),
          context: g.text.trim().replace(/\s+/g, " "),
        });
        j = g.end;
        continue;
      }
      this.fail(j + 1, `unexpected line in table ${t.family} ${t.name}`);
    }
    return this.fail(this.lastLine(), `truncated: table ${t.family} ${t.name} not closed ('}' missing)`);
  }

  /** `chain NAME {` … `}`; returns the index of its closing line. */
  chainBlock(i: number, t: NftTable, name: string, handle?: number): number {
    const c = this.chain(t, name, i + 1);
    c.line = i + 1;
    if (handle !== undefined) c.handle = handle;
    let j = i + 1;
    for (; j < this.lines.length; j++) {
      const raw = this.lines[j]!;
      if (raw.trim() === "") continue;
      // most lines of a 10,000-Service table are rules a question never reads: decoded on first use
      const lazy = this.lazyRule(t, c, raw, j + 1);
      if (lazy) {
        c.rules.push(lazy);
        continue;
      }
      let { toks, comment } = this.tok(j + 1, raw);
      let line = j + 1;
      if (toks.length === 0) continue; // a comment-only line
      if (toks[0]!.text === "}" && toks.length === 1) return j;
      if (toks[0]!.text === "type" && c.rules.length === 0) {
        this.baseChain(c, toks, j + 1);
        continue;
      }
      if (toks[0]!.text === "comment" && toks.length === 2 && toks[1]!.quoted && c.rules.length === 0) {
        c.comment = unquote(toks[1]!.text);
        continue;
      }
      if (toks[0]!.text === "policy" && c.base) {
        c.base.policy = toks[1]?.text.replace(/;$/, "") ?? c.base.policy;
        continue;
      }
      const open = toks.filter((x) => !x.quoted && x.text === "{").length;
      const close = toks.filter((x) => !x.quoted && x.text === "}").length;
      if (open > close) {
        const g = this.gather(j, 0);
        ({ toks, comment } = this.tok(j + 1, g.text));
        line = j + 1;
        j = g.end;
      } else if (close > open) {
        this.fail(j + 1, "unbalanced '}' in rule");
      }
      const hm = /handle (\d+)/.exec(comment ?? "");
      c.rules.push(this.rule(t, c, toks, line, hm ? Number(hm[1]) : undefined));
    }
    return this.fail(this.lastLine(), `truncated: chain ${name} not closed ('}' missing)`);
  }

  /** `type filter hook prerouting priority dstnat - 10; policy accept;` (also inside `{ … }` of `add chain`). */
  baseChain(c: NftChain, toks: Tok[], line: number): void {
    for (const part of splitTopLevel(toks, ";")) {
      const w = part[0]?.text;
      if (w === "type") {
        const hookAt = part.findIndex((x) => x.text === "hook");
        const prioAt = part.findIndex((x) => x.text === "priority");
        if (hookAt !== 2 || prioAt < 0) this.fail(line, 'expected "type T hook H [device D] priority P"');
        const devAt = part.findIndex((x) => x.text === "device");
        const prioText = joinToks(part.slice(prioAt + 1));
        const priority = resolvePriority(prioText, c.family);
        if (priority === undefined) this.fail(line, `unknown chain priority "${prioText}"`);
        const base: NftBaseChain = { type: part[1]!.text, hook: part[3]!.text, priority };
        if (devAt > 0) base.device = unquote(part[devAt + 1]?.text ?? "");
        if (c.base?.policy !== undefined) base.policy = c.base.policy;
        c.base = base;
      } else if (w === "policy") {
        if (!c.base) this.fail(line, "policy of a chain that is not a base chain");
        c.base.policy = part[1]?.text ?? "";
      } else if (w === "comment" && part[1]?.quoted) {
        c.comment = unquote(part[1].text);
      } else if (w === "device") {
        if (c.base) c.base.device = unquote(part[1]?.text ?? "");
      } else if (w !== undefined) {
        this.fail(line, `unknown chain property "${w}"`);
      }
    }
  }

  newSet(t: NftTable, kind: "set" | "map", name: string, line: number): NftSet {
    const set: NftSet = {
      family: t.family,
      table: t.name,
      kind,
      name,
      line,
      type: "",
      keyType: [],
      flags: [],
      elements: [],
    };
    t.sets.set(name, set);
    return set;
  }

  /** `set NAME {` / `map NAME {` … `}` of a listing; returns the index of its closing line. */
  setBlock(i: number, t: NftTable, kind: "set" | "map", name: string, handle?: number): number {
    const set = this.newSet(t, kind, name, i + 1);
    if (handle !== undefined) set.handle = handle;
    let j = i + 1;
    for (; j < this.lines.length; j++) {
      const raw = this.lines[j]!;
      if (raw.trim() === "") continue;
      let { toks } = this.tok(j + 1, raw);
      if (toks.length === 1 && toks[0]!.text === "}") return j;
      const startLine = j + 1;
      if (toks[0]?.text === "elements") {
        const g = this.gather(j, 0);
        const fast = this.fastElements ? elementsFast(set, g.text) : undefined;
        if (fast) {
          for (const e of fast) set.elements.push(e);
          j = g.end;
          continue;
        }
        toks = this.tok(j + 1, g.text).toks;
        j = g.end;
      }
      this.property(set, toks, startLine);
    }
    return this.fail(this.lastLine(), `truncated: ${kind} ${name} not closed ('}' missing)`);
  }

  property(set: NftSet, toks: Tok[], line: number): void {
    let ok: boolean;
    try {
      ok = setProperty(set, toks);
    } catch (err) {
      if (!(err instanceof NoParse)) throw err;
      ok = false;
      if (toks[0]?.text === "elements") this.fail(line, `cannot read the elements of ${set.kind} ${set.name}`);
    }
    if (!ok) {
      this.unparsedItems.push({
        family: set.family,
        table: set.table,
        line,
        text: joinToks(toks),
        context: `${set.kind} ${set.name}`,
      });
    }
  }

  /** One `nft -f` command (tokens of the whole command). */
  command(line: number, toks: Tok[]): void {
    const verb = toks[0]!.text;
    const obj = toks[1]?.text;
    let k = 2;
    let family = "ip";
    if (FAMILIES.has(toks[k]?.text ?? "") && toks[k + 1] !== undefined && !PUNCT.has(toks[k + 1]!.text)) {
      family = toks[k]!.text;
      k++;
    }
    const tableName = toks[k]?.text;
    if (obj === "ruleset" && verb === "flush") {
      this.tables.clear();
      this.ruleset.tables.length = 0;
      return;
    }
    if (tableName === undefined || PUNCT.has(tableName)) this.fail(line, `expected "${verb} ${obj} FAMILY TABLE …"`);
    const rest = toks.slice(k + 1);
    const body = (from: Tok[]): Tok[] | undefined => {
      if (from.length === 0) return undefined;
      if (from[0]!.text !== "{" || from[from.length - 1]!.text !== "}") this.fail(line, "expected { … }");
      return from.slice(1, -1);
    };
    const isAdd = verb === "add" || verb === "create" || verb === "insert";
    switch (obj) {
      case "table": {
        if (isAdd) {
          const t = this.table(family, tableName, line);
          for (const part of splitTopLevel(body(rest) ?? [], ";")) {
            if (part[0]?.text === "comment" && part[1]?.quoted) t.comment = unquote(part[1].text);
            else if (part[0]?.text === "flags") {
              t.flags = part.slice(1).filter((x) => x.text !== ",").map((x) => x.text);
            }
          }
        } else if (verb === "flush") {
          const t = this.existingTable(family, tableName, line);
          for (const c of t.chains.values()) c.rules = [];
          for (const s of t.sets.values()) s.elements = [];
        } else {
          this.tables.delete(`${family} ${tableName}`);
          this.ruleset.tables = this.ruleset.tables.filter((x) => !(x.family === family && x.name === tableName));
        }
        return;
      }
      case "chain": {
        const name = rest[0]?.text;
        if (name === undefined) this.fail(line, `expected "${verb} chain FAMILY TABLE NAME"`);
        const t = isAdd ? this.table(family, tableName, line) : this.existingTable(family, tableName, line);
        if (isAdd) {
          const c = this.chain(t, name, line);
          const b = body(rest.slice(1));
          if (b) this.baseChain(c, b, line);
        } else if (verb === "flush") {
          const c = t.chains.get(name);
          if (!c) this.fail(line, `chain ${name} does not exist`);
          c.rules = [];
        } else {
          t.chains.delete(name);
        }
        return;
      }
      case "set":
      case "map": {
        const name = rest[0]?.text;
        if (name === undefined) this.fail(line, `expected "${verb} ${obj} FAMILY TABLE NAME"`);
        const t = isAdd ? this.table(family, tableName, line) : this.existingTable(family, tableName, line);
        if (isAdd) {
          const set = t.sets.get(name) ?? this.newSet(t, obj, name, line);
          for (const part of splitTopLevel(body(rest.slice(1)) ?? [], ";")) {
            if (part.length) this.property(set, part, line);
          }
        } else if (verb === "flush") {
          const s = t.sets.get(name);
          if (!s) this.fail(line, `${obj} ${name} does not exist`);
          s.elements = [];
        } else {
          t.sets.delete(name);
        }
        return;
      }
      case "rule": {
        const name = rest[0]?.text;
        if (name === undefined || !isAdd) this.fail(line, `expected "add rule FAMILY TABLE CHAIN STATEMENTS"`);
        const t = this.existingTable(family, tableName, line);
        const c = t.chains.get(name);
        if (!c) this.fail(line, `chain ${name} does not exist in table ${family} ${tableName}`);
        const r = this.rule(t, c, rest.slice(1), line);
        if (verb === "insert") c.rules.unshift(r);
        else c.rules.push(r);
        return;
      }
      case "element": {
        const name = rest[0]?.text;
        if (name === undefined) this.fail(line, `expected "${verb} element FAMILY TABLE SET { … }"`);
        const t = this.existingTable(family, tableName, line);
        const s = t.sets.get(name);
        if (!s) this.fail(line, `set ${name} does not exist in table ${family} ${tableName}`);
        const b = body(rest.slice(1)) ?? this.fail(line, "expected { … }");
        let els: NftElement[];
        try {
          els = elementsOf(s, b);
        } catch (err) {
          if (!(err instanceof NoParse)) throw err;
          return this.fail(line, `cannot read the elements of ${s.kind} ${s.name}`);
        }
        if (isAdd) s.elements.push(...els);
        else {
          const gone = new Set(els.map((e) => e.keyText));
          s.elements = s.elements.filter((e) => !gone.has(e.keyText));
        }
        return;
      }
    }
    if (obj !== undefined && STATEFUL_OBJECTS.has(obj)) {
      this.unparsedItems.push({ family, table: tableName, line, text: joinToks(toks), context: joinToks(toks) });
      return;
    }
    this.fail(line, `unsupported command "${verb} ${obj ?? ""}"`);
  }
}

/** Options of {@link parseNftText}. */
export interface ParseNftTextOptions {
  /**
   * Read `elements = { … }` lists of the common shape without tokens ({@link elementsFast}); false reads every list
   * the general way (the same elements, slower: tests compare the two). @default true
   */
  fastElements?: boolean;
}

/**
 * Parses nft text: `nft [-a] list ruleset` output, or an `nft -f` transaction (`add table/chain/set/map/rule/element`,
 * `insert rule`, `flush …`, `delete …`) such as knftables and kube-proxy's unit tests write.
 *
 * @param text the text.
 * @param options {@link ParseNftTextOptions}.
 * @returns the ruleset, `format` `nft-list` for listings and `nft-transaction` when it held commands.
 * @throws {DumpParseError} format `nft-text`, quoting the line:
 *   - `nft-text line 0: empty input: ""`;
 *   - `… expected "table FAMILY NAME {" or an nft command (add, insert, flush, delete)` for stray top-level text;
 *   - `… truncated: table ip kube-proxy not closed ('}' missing)` (also for a chain or set cut short, and
 *     `truncated: '}' missing at end of input` inside an element list or rule);
 *   - `… unterminated string` for a `"` without its pair;
 *   - `… unexpected line in table ip kube-proxy`, `… unknown chain priority "…"`, `… unknown chain property "…"`,
 *     `… unbalanced '}' in rule`, `… cannot read the elements of map service-ips`;
 *   - for transactions: `… table ip t does not exist`, `… chain X does not exist in table ip t`,
 *     `… set X does not exist in table ip t`, `… unsupported command "…"`, `… expected { … }`.
 * @example
 * ```ts
 * import { parseNftText } from "./nft_text.ts";
 * const rs = parseNftText("table ip kube-proxy {\n\tchain services {\n\t\tjump masquerading\n\t}\n}\n");
 * rs.tables[0]!.chains.get("services")!.rules[0]!.text; // "jump masquerading"
 * ```
 */
export function parseNftText(text: string, options: ParseNftTextOptions = {}): NftRuleset {
  return new Doc(text, options).parse();
}
