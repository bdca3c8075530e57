/**
 * Parser of `nft -j list ruleset` (libnftables JSON, schema version 1, see libnftables-json(5)) into the
 * {@link NftRuleset} model. Every rule gets a text form rendered the way `nft list ruleset` prints the same kernel
 * state (checked against real nft 1.0.6 output in the tests), and its statements decoded into {@link NftStatement}s.
 * Expressions outside the decoded vocabulary are rendered as text, kept as `unknown` statements and listed in
 * `unparsed`; nothing is dropped.
 *
 * Large rulesets (10,000 Services: 50 MB on one line) are read without building the whole JSON tree: a rule's
 * statements and text are decoded the first time they are read (see {@link parseNftJson}).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { DumpParseError } from "./errors.ts";
import {
  formatNftTime,
  type NftBaseChain,
  type NftChain,
  type NftElement,
  type NftNumgen,
  type NftOp,
  type NftRule,
  type NftRuleset,
  type NftSet,
  type NftStatement,
  type NftTable,
  type NftUnparsed,
  type NftValue,
  type NftVerdict,
  type NftVmapEntry,
  verdictText,
} from "./nft_model.ts";

const FORMAT = "nft-json";

/** JSON value as produced by JSON.parse. */
type J = unknown;
type JObject = Record<string, J>;

/** How a value is printed, decided by the type of what it is compared with (nft prints marks in hex, names quoted). */
type Hint = "default" | "mark" | "string";

/** Keys of libnftables-json(5) ruleset objects that are not decoded (kept in `unparsed`). */
const VERDICT_KEYS = new Set(["accept", "drop", "continue", "return", "jump", "goto", "queue"]);
/** meta keys nft prints without the `meta` keyword (nft src/meta.c, meta_key_is_unqualified). */
const UNQUALIFIED_META = new Set(["iif", "oif", "iifname", "oifname", "iifgroup", "oifgroup"]);
/** Keys whose values nft prints as quoted strings. */
const STRING_META = new Set(["iifname", "oifname", "iif", "oif", "ibrname", "obrname", "ibriport", "obriport"]);
/** Selectors of bitmask type: nft prints an explicit `==` before a single value (nft src/rule.c, must_print_eq_op). */
const BITMASK_SELECTORS = new Set(["ct state", "ct status", "tcp flags"]);
/** Default reject per table family: nft prints a bare `reject` for these (nft src/statement.c, reject_stmt_print). */
/** Relational operators of libnftables-json(5) "match". */
const OPS = new Set(["==", "!=", "<", ">", "<=", ">=", "in"]);
const DEFAULT_REJECT: Record<string, string> = {
  ip: "icmp",
  ip6: "icmpv6",
  inet: "icmpx",
  bridge: "icmpx",
  netdev: "icmpx",
};

function isObject(v: J): v is JObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The single key of a libnftables-json object like `{"payload": {...}}`, or undefined. */
function soleKey(v: J): string | undefined {
  if (!isObject(v)) return undefined;
  const keys = Object.keys(v);
  return keys.length === 1 ? keys[0] : undefined;
}

/** Per-rule decoding context. */
interface Ctx {
  family: string;
}

/** A JSON expression that could not be rendered: the statement that holds it becomes `unknown`. */
class Undecodable extends Error {}

/**
 * Most levels of expressions nested in one another that are decoded (selectorText, valueOf, hintOf): 64. nft prints
 * a handful (a `vmap` on a `concat` of payloads, a bitwise `&` on a `meta mark`: libnftables src/json.c); a dump nested
 * thousands of levels deep (hand-made or hostile) would overflow the call stack. Past it, the rule or element is a
 * {@link DumpParseError} "nesting too deep" of its node only.
 */
export const MAX_NFT_JSON_NESTING = 64;

/** An expression nested past {@link MAX_NFT_JSON_NESTING}; turned into a DumpParseError where the line is known. */
class NestingTooDeep extends Error {}

/** Current nesting of the recursive decoders. */
let nesting = 0;

/** Runs one level of a recursive decoder, refusing past {@link MAX_NFT_JSON_NESTING}. */
function nested<T>(f: () => T): T {
  if (nesting >= MAX_NFT_JSON_NESTING) throw new NestingTooDeep();
  nesting++;
  try {
    return f();
  } finally {
    nesting--;
  }
}

/** JSON.stringify for messages and unknown statements; a value too deep for it is {@link NestingTooDeep}. */
function jsonText(v: J): string {
  try {
    return JSON.stringify(v);
  } catch (e) {
    if (e instanceof RangeError) throw new NestingTooDeep();
    throw e;
  }
}

/** The DumpParseError of a rule or element nested too deep, quoting its first 120 characters. */
function tooDeep(line: number, quoted: string): DumpParseError {
  return new DumpParseError(FORMAT, line, `nesting too deep (more than ${MAX_NFT_JSON_NESTING} levels of expressions; nft prints a handful)`, quoted.slice(0, 120) + (quoted.length > 120 ? "…" : ""));
}

function quote(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

function hex8(n: number): string {
  return "0x" + (n >>> 0).toString(16).padStart(8, "0");
}

/** Renders a scalar for a hint. */
function scalarText(v: string | number | boolean, hint: Hint): string {
  if (typeof v === "number") return hint === "mark" ? hex8(v) : String(v);
  if (typeof v === "boolean") return String(v);
  return hint === "string" ? quote(v) : v;
}

/** Hint for values compared with / assigned to a selector JSON expression. */
function hintOf(e: J): Hint {
  return nested(() => hintOfExpr(e));
}

function hintOfExpr(e: J): Hint {
  const k = soleKey(e);
  if (k === undefined || !isObject(e)) return "default";
  const body = e[k];
  if (k === "&" || k === "|" || k === "^") return Array.isArray(body) ? hintOf(body[0]) : "default";
  if (!isObject(body)) return "default";
  if ((k === "meta" || k === "ct") && body.key === "mark") return "mark";
  if (k === "meta" && typeof body.key === "string" && STRING_META.has(body.key)) return "string";
  if (k === "ct" && body.key === "helper") return "string";
  return "default";
}

/** Hint for elements of a set whose key type is `type`. */
function hintOfType(type: string): Hint {
  if (type === "mark") return "mark";
  if (type === "ifname" || type === "string") return "string";
  return "default";
}

/** Renders a selector (left-hand expression) the way nft prints it. Throws Undecodable for unknown shapes. */
function selectorText(e: J): string {
  return nested(() => selectorTextOf(e));
}

function selectorTextOf(e: J): string {
  const k = soleKey(e);
  if (k === undefined || !isObject(e)) throw new Undecodable();
  const b = e[k];
  switch (k) {
    case "payload": {
      if (!isObject(b)) break;
      if (typeof b.protocol === "string" && typeof b.field === "string") return `${b.protocol} ${b.field}`;
      if (typeof b.base === "string" && typeof b.offset === "number" && typeof b.len === "number") {
        return `@${b.base},${b.offset},${b.len}`;
      }
      break;
    }
    case "meta": {
      if (!isObject(b) || typeof b.key !== "string") break;
      return UNQUALIFIED_META.has(b.key) ? b.key : `meta ${b.key}`;
    }
    case "ct": {
      if (!isObject(b) || typeof b.key !== "string") break;
      const dir = typeof b.dir === "string" ? `${b.dir} ` : "";
      const fam = typeof b.family === "string" ? `${b.family} ` : "";
      return `ct ${dir}${fam}${b.key}`;
    }
    case "fib": {
      if (!isObject(b) || typeof b.result !== "string") break;
      const flags = Array.isArray(b.flags) ? b.flags : typeof b.flags === "string" ? [b.flags] : [];
      return `fib ${flags.join(" . ")} ${b.result}`;
    }
    case "numgen": {
      if (!isObject(b) || typeof b.mode !== "string" || typeof b.mod !== "number") break;
      const off = typeof b.offset === "number" && b.offset !== 0 ? ` offset ${b.offset}` : "";
      return `numgen ${b.mode} mod ${b.mod}${off}`;
    }
    case "concat": {
      if (!Array.isArray(b)) break;
      return b.map(selectorText).join(" . ");
    }
    case "jhash":
    case "symhash": {
      if (!isObject(b) || typeof b.mod !== "number") break;
      const expr = k === "jhash" ? ` ${selectorText(b.expr)}` : "";
      const seed = typeof b.seed === "number" ? ` seed 0x${b.seed.toString(16)}` : "";
      const off = typeof b.offset === "number" && b.offset !== 0 ? ` offset ${b.offset}` : "";
      return `${k}${expr} mod ${b.mod}${seed}${off}`;
    }
    case "&":
    case "|":
    case "^":
    case "<<":
    case ">>": {
      if (!Array.isArray(b) || b.length !== 2) break;
      return `${selectorText(b[0])} ${k} ${valueOf(b[1], hintOf(b[0])).text}`;
    }
  }
  throw new Undecodable();
}

/** Decodes a right-hand value. Throws Undecodable for shapes it does not know. */
function valueOf(v: J, hint: Hint): NftValue {
  return nested(() => valueOfExpr(v, hint));
}

function valueOfExpr(v: J, hint: Hint): NftValue {
  if (typeof v === "string") {
    if (v.startsWith("@")) return { kind: "set-ref", text: v, name: v.slice(1) };
    return { kind: "literal", text: scalarText(v, hint), value: v };
  }
  if (typeof v === "number" || typeof v === "boolean") {
    return { kind: "literal", text: scalarText(v, hint), value: scalarText(v, hint === "string" ? "default" : hint) };
  }
  if (Array.isArray(v)) {
    const items = v.map((x) => {
      if (typeof x !== "string" && typeof x !== "number") throw new Undecodable();
      return scalarText(x, hint);
    });
    return { kind: "list", text: items.join(","), items };
  }
  const k = soleKey(v);
  if (k === undefined || !isObject(v)) throw new Undecodable();
  const b = v[k];
  switch (k) {
    case "prefix":
      if (isObject(b) && typeof b.addr === "string" && typeof b.len === "number") {
        return { kind: "prefix", text: `${b.addr}/${b.len}`, addr: b.addr, len: b.len };
      }
      break;
    case "range":
      if (Array.isArray(b) && b.length === 2) {
        const from = valueOf(b[0], hint).text;
        const to = valueOf(b[1], hint).text;
        return { kind: "range", text: `${from}-${to}`, from, to };
      }
      break;
    case "set": {
      const list = Array.isArray(b) ? b : [b];
      const elements = list.map((x) => valueOf(x, hint));
      return { kind: "set", text: `{ ${elements.map((x) => x.text).join(", ")} }`, elements };
    }
    case "concat":
      if (Array.isArray(b)) {
        const parts = b.map((x) => valueOf(x, hint));
        return { kind: "concat", text: parts.map((x) => x.text).join(" . "), parts };
      }
      break;
    case "elem":
      if (isObject(b)) return valueOf(b.val, hint);
      break;
  }
  // An expression used as a value (e.g. `ct original saddr`): keep its selector rendering as a literal.
  const text = selectorText(v);
  return { kind: "literal", text, value: text };
}

/** Decodes a verdict object `{"goto": {"target": X}}` / `{"drop": null}`; undefined when it is not one. */
function verdictOf(v: J): NftVerdict | undefined {
  const k = soleKey(v);
  if (k === undefined || !isObject(v) || !VERDICT_KEYS.has(k)) return undefined;
  const b = v[k];
  if (k === "jump" || k === "goto") {
    if (!isObject(b) || typeof b.target !== "string") return undefined;
    return { kind: k, target: b.target };
  }
  return { kind: k as NftVerdict["kind"] };
}

/** Renders any JSON expression compactly, for statements kept as unknown. */
function unknownText(e: J): string {
  const k = soleKey(e);
  if (k === "xt" && isObject(e) && isObject(e.xt)) {
    const xt = e.xt;
    return `xt ${String(xt.type)} ${quote(String(xt.name))}`;
  }
  if (k !== undefined && isObject(e)) return e[k] === null ? k : `${k} ${jsonText(e[k])}`;
  return jsonText(e);
}

function natFlags(b: JObject): string[] {
  const f = b.flags;
  if (Array.isArray(f)) return f.map(String);
  return typeof f === "string" ? [f] : [];
}

/** Address text in a NAT target: IPv6 addresses get brackets when a port follows (nft prints `[fd00::1]:80`). */
function natTo(addr: J, port: J): { to: string; addr?: string; port?: number } {
  let a: string | undefined;
  let addrText = "";
  if (typeof addr === "string") {
    a = addr;
    addrText = addr.includes(":") && port !== undefined ? `[${addr}]` : addr;
  } else if (addr !== undefined) {
    const k = soleKey(addr);
    if (k === "map" && isObject(addr) && isObject(addr.map)) {
      addrText = `${selectorText(addr.map.key)} map ${valueOf(addr.map.data, "default").text}`;
    } else {
      addrText = valueOf(addr, "default").text;
    }
  }
  let p: number | undefined;
  let portText = "";
  if (typeof port === "number") {
    p = port;
    portText = `:${port}`;
  } else if (port !== undefined) {
    portText = `:${valueOf(port, "default").text}`;
  }
  const out: { to: string; addr?: string; port?: number } = { to: addrText + portText };
  if (a !== undefined) out.addr = a;
  if (p !== undefined) out.port = p;
  return out;
}

/** Decodes one statement of a rule's `expr` array. Throws Undecodable when it is not in the vocabulary. */
function statementOf(e: J, ctx: Ctx): NftStatement {
  const k = soleKey(e);
  if (k === undefined || !isObject(e)) throw new Undecodable();
  const b = e[k];
  const verdict = verdictOf(e);
  if (verdict) return { kind: "verdict", text: verdictText(verdict), verdict };
  switch (k) {
    case "match": {
      if (!isObject(b) || typeof b.op !== "string") break;
      const selector = selectorText(b.left);
      const value = valueOf(b.right, hintOf(b.left));
      if (!OPS.has(b.op)) break;
      const leftKey = soleKey(b.left);
      const binop = leftKey === "&" || leftKey === "|" || leftKey === "^" || leftKey === "<<" || leftKey === ">>";
      const explicitEq = b.op === "==" && (binop || (BITMASK_SELECTORS.has(selector) && value.kind === "literal"));
      const opText = b.op === "in" || (b.op === "==" && !explicitEq) ? "" : `${b.op} `;
      // libnftables-json writes "in" for nft's implicit match on flag values (`ct state new`): the model says "==".
      const op = (b.op === "in" ? "==" : b.op) as NftOp;
      return { kind: "match", text: `${selector} ${opText}${value.text}`, selector, op, value };
    }
    case "vmap": {
      if (!isObject(b)) break;
      const selector = selectorText(b.key);
      const st: Extract<NftStatement, { kind: "vmap" }> = { kind: "vmap", text: "", selector };
      const ng = numgenOf(b.key);
      if (ng) st.numgen = ng;
      if (typeof b.data === "string" && b.data.startsWith("@")) {
        st.map = b.data.slice(1);
        st.text = `${selector} vmap ${b.data}`;
        return st;
      }
      const data = isObject(b.data) ? b.data.set : undefined;
      if (!Array.isArray(data)) break;
      const hint = hintOf(b.key);
      const entries: NftVmapEntry[] = data.map((pair) => {
        if (!Array.isArray(pair) || pair.length !== 2) throw new Undecodable();
        const v = verdictOf(pair[1]);
        if (!v) throw new Undecodable();
        return { key: valueOf(pair[0], hint), verdict: v };
      });
      st.entries = entries;
      st.text = `${selector} vmap { ${entries.map((x) => `${x.key.text} : ${verdictText(x.verdict)}`).join(", ")} }`;
      return st;
    }
    case "dnat":
    case "snat":
    case "redirect": {
      const body = isObject(b) ? b : {};
      const fam = body.family === "ip" || body.family === "ip6" ? body.family : undefined;
      const flags = natFlags(body);
      const st: Extract<NftStatement, { kind: "nat" }> = { kind: "nat", text: "", nat: k, flags };
      if (fam) st.family = fam;
      let text = k;
      if (body.addr !== undefined || body.port !== undefined) {
        const t = natTo(body.addr, body.port);
        if (t.addr !== undefined) st.addr = t.addr;
        if (t.port !== undefined) st.port = t.port;
        st.to = t.to;
        text += `${fam ? ` ${fam}` : ""} to ${t.to}`;
      }
      if (flags.length) text += ` ${flags.join(",")}`;
      st.text = text;
      return st;
    }
    case "masquerade": {
      const body = isObject(b) ? b : {};
      const flags = natFlags(body);
      const st: Extract<NftStatement, { kind: "masquerade" }> = { kind: "masquerade", text: "masquerade", flags };
      if (body.port !== undefined) {
        st.to = `:${valueOf(body.port, "default").text}`;
        st.text += ` to ${st.to}`;
      }
      if (flags.length) st.text += ` ${flags.join(",")}`;
      return st;
    }
    case "reject": {
      if (!isObject(b)) return { kind: "reject", text: "reject" };
      const type = typeof b.type === "string" ? b.type : undefined;
      const code = typeof b.expr === "string" ? b.expr : undefined;
      if (
        type === undefined ||
        (type === DEFAULT_REJECT[ctx.family] && (code ?? "port-unreachable") === "port-unreachable")
      ) {
        return { kind: "reject", text: "reject" };
      }
      const w = code === undefined ? type : `${type} ${code}`;
      return { kind: "reject", text: `reject with ${w}`, with: w };
    }
    case "mangle": {
      if (!isObject(b)) break;
      const target = selectorText(b.key);
      if (target !== "meta mark" && target !== "ct mark") break;
      const val = b.value;
      if (typeof val === "number") {
        return { kind: "mark", text: `${target} set ${hex8(val)}`, target, op: "set", value: val };
      }
      const op = soleKey(val);
      if ((op === "|" || op === "^" || op === "&") && isObject(val)) {
        const args = val[op];
        if (
          Array.isArray(args) && args.length === 2 && selectorText(args[0]) === target && typeof args[1] === "number"
        ) {
          const name = op === "|" ? "or" : op === "^" ? "xor" : "and";
          return {
            kind: "mark",
            text: `${target} set ${target} ${op} ${hex8(args[1])}`,
            target,
            op: name,
            value: args[1],
          };
        }
      }
      break;
    }
    case "set": {
      if (!isObject(b) || typeof b.set !== "string" || typeof b.op !== "string") break;
      if (b.op !== "add" && b.op !== "update" && b.op !== "delete") break;
      let elem = b.elem;
      let timeout: number | undefined;
      if (soleKey(elem) === "elem" && isObject(elem) && isObject(elem.elem)) {
        if (typeof elem.elem.timeout === "number") timeout = elem.elem.timeout;
        elem = elem.elem.val;
      }
      const key = selectorText(elem);
      const set = b.set.startsWith("@") ? b.set.slice(1) : b.set;
      const to = timeout === undefined ? "" : ` timeout ${formatNftTime(timeout)}`;
      const st: Extract<NftStatement, { kind: "set-update" }> = {
        kind: "set-update",
        text: `${b.op} @${set} { ${key}${to} }`,
        op: b.op,
        set,
        key,
      };
      if (timeout !== undefined) st.timeout = timeout;
      return st;
    }
    case "counter": {
      if (b === null) return { kind: "counter", text: "counter" };
      if (typeof b === "string") return { kind: "counter", text: `counter name ${quote(b)}`, name: b };
      if (isObject(b) && typeof b.packets === "number" && typeof b.bytes === "number") {
        return {
          kind: "counter",
          text: `counter packets ${b.packets} bytes ${b.bytes}`,
          packets: b.packets,
          bytes: b.bytes,
        };
      }
      break;
    }
    case "log": {
      const body = isObject(b) ? b : {};
      let text = "log";
      const st: Extract<NftStatement, { kind: "log" }> = { kind: "log", text };
      for (const [key, val] of Object.entries(body)) {
        if (key === "prefix" && typeof val === "string") {
          st.prefix = val;
          text += ` prefix ${quote(val)}`;
        } else if (typeof val === "string" || typeof val === "number") {
          text += ` ${key} ${val}`;
        } else {
          throw new Undecodable();
        }
      }
      st.text = text;
      return st;
    }
    case "limit": {
      if (!isObject(b) || typeof b.rate !== "number" || typeof b.per !== "string") break;
      const over = b.inv === true ? "over " : "";
      const unit = typeof b.rate_unit === "string" && b.rate_unit !== "packets" ? ` ${b.rate_unit}` : "";
      const burst = typeof b.burst === "number" && b.burst !== 5 && b.burst !== 0 ? ` burst ${b.burst} packets` : "";
      return { kind: "limit", text: `limit rate ${over}${b.rate}${unit}/${b.per}${burst}` };
    }
    case "notrack":
      return { kind: "notrack", text: "notrack" };
  }
  throw new Undecodable();
}

function numgenOf(e: J): NftNumgen | undefined {
  if (soleKey(e) !== "numgen" || !isObject(e) || !isObject(e.numgen)) return undefined;
  const b = e.numgen;
  if ((b.mode !== "random" && b.mode !== "inc") || typeof b.mod !== "number") return undefined;
  return { mode: b.mode, mod: b.mod, offset: typeof b.offset === "number" ? b.offset : 0 };
}

// ---------------------------------------------------------------------------------------------------------------
// The document: where its array elements are, their lines, and rules decoded on first use.

/** The document text and its line index, shared by every rule decoded on first use. */
interface Doc {
  text: string;
  lineOf: (offset: number) => number;
}

function skipWs(text: string, i: number): number {
  let c = text.charCodeAt(i);
  while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++i);
  return i;
}

/** Index of the quote that ends the string opened at `i` (a `"`), or -1 when the text ends first. */
function stringEnd(text: string, i: number): number {
  let j = text.indexOf('"', i + 1);
  while (j !== -1 && text.charCodeAt(j - 1) === 92 /* \ */) {
    let k = j - 2;
    while (text.charCodeAt(k) === 92) k--;
    if ((j - 1 - k) % 2 === 0) break; // an even run of backslashes escapes itself, not the quote
    j = text.indexOf('"', j + 1);
  }
  return j;
}

/** Index of the first element of the `"nftables"` array (or of its `]` when empty); -1 when the text does not open `{"nftables": [`. */
function arrayStart(text: string): number {
  let i = skipWs(text, 0);
  if (text.charCodeAt(i) !== 123 /* { */) return -1;
  i = skipWs(text, i + 1);
  if (!text.startsWith('"nftables"', i)) return -1;
  i = skipWs(text, i + 10);
  if (text.charCodeAt(i) !== 58 /* : */) return -1;
  i = skipWs(text, i + 1);
  if (text.charCodeAt(i) !== 91 /* [ */) return -1;
  return skipWs(text, i + 1);
}

/** Whether the `]` at `i` closes the `"nftables"` array and only `}` and whitespace follow it. */
function arrayClosed(text: string, i: number): boolean {
  if (text.charCodeAt(i) !== 93 /* ] */) return false;
  i = skipWs(text, i + 1);
  return text.charCodeAt(i) === 125 && skipWs(text, i + 1) === text.length;
}

/**
 * End (exclusive) of the JSON object that opens at `start` (a `{`): one pass that jumps over string contents
 * (indexOf) and counts brackets; -1 when the text ends first.
 */
function objectEnd(text: string, start: number): number {
  const n = text.length;
  let depth = 0;
  for (let i = start; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i = stringEnd(text, i);
      if (i < 0) return -1;
    } else if (c === 123 || c === 91) depth++;
    else if ((c === 125 /* } */ || c === 93) && --depth === 0) return i + 1;
  }
  return -1;
}

/**
 * The spans `[start, end)` of the elements of the `"nftables"` array, in one pass over the text that jumps over string
 * contents (indexOf) and counts brackets. Undefined when the text is not `{"nftables": [{…}, …]}` (whitespace allowed
 * between tokens): another shape, an element that is not an object, or a document cut short; the caller then lets
 * JSON.parse judge the whole text (and word the error).
 */
function scanItems(text: string): { starts: number[]; ends: number[] } | undefined {
  let i = arrayStart(text);
  if (i < 0) return undefined;
  const starts: number[] = [];
  const ends: number[] = [];
  if (text.charCodeAt(i) !== 93 /* ] */) {
    for (;;) {
      if (text.charCodeAt(i) !== 123) return undefined;
      const end = objectEnd(text, i);
      if (end < 0) return undefined;
      starts.push(i);
      ends.push(end);
      i = skipWs(text, end);
      const c = text.charCodeAt(i);
      if (c === 93) break;
      if (c !== 44 /* , */) return undefined;
      i = skipWs(text, i + 1);
    }
  }
  return arrayClosed(text, i) ? { starts, ends } : undefined;
}

/**
 * Adds the elements of the `"nftables"` array to `b` as it walks them, taking each rule's and regular chain's end from
 * its printed form ({@link Builder.fast} with an unknown end) instead of counting the brackets of every expression;
 * any other element's end is counted ({@link objectEnd}). False when the text is not the plain
 * `{"nftables": [{…}, …]}` shape or an element cannot be added: the caller then starts over with {@link scanItems}
 * and a new builder, which words any error.
 */
function streamItems(b: Builder, doc: Doc): boolean {
  const text = doc.text;
  let i = arrayStart(text);
  if (i < 0) return false;
  if (text.charCodeAt(i) !== 93 /* ] */) {
    for (;;) {
      if (text.charCodeAt(i) !== 123) return false;
      let end = b.fast(doc, i, -1);
      if (end < 0) {
        end = objectEnd(text, i);
        if (end < 0) return false;
        if (b.fast(doc, i, end) < 0) b.item(parseSpan(doc, i, end), doc.lineOf(i));
      }
      i = skipWs(text, end);
      const c = text.charCodeAt(i);
      if (c === 93) break;
      if (c !== 44 /* , */) return false;
      i = skipWs(text, i + 1);
    }
  }
  return arrayClosed(text, i);
}

/**
 * Start offsets of the elements of the top-level `"nftables"` array, for line numbers when the document had to be
 * parsed whole (a shape {@link scanItems} does not follow). A linear scan that tracks strings and nesting; returns []
 * when the document is not shaped as expected.
 */
function elementOffsets(text: string): number[] {
  const out: number[] = [];
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (depth === 2) out.push(i);
      depth++;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return out;
}

/** Maps offsets to 1-based line numbers. */
function lineIndex(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  if (starts.length === 1) return () => 1;
  return (offset: number) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

function lineText(text: string, line: number): string {
  const nl = line <= 1 ? 0 : nthLineStart(text, line);
  const end = text.indexOf("\n", nl);
  return text.slice(nl, end === -1 ? text.length : end);
}

function nthLineStart(text: string, line: number): number {
  let at = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf("\n", at);
    if (nl === -1) return text.length;
    at = nl + 1;
  }
  return at;
}

/** JSON.parse of the whole text; a syntax error becomes the DumpParseError that names the line it stopped at. */
function parseWhole(text: string, lineOf: (offset: number) => number): J {
  try {
    return JSON.parse(text);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    const pos = /position (\d+)/.exec(msg);
    const truncated = /end of (JSON )?input|Unterminated string/i.test(msg) ||
      (pos !== null && Number(pos[1]) >= text.trimEnd().length);
    // Some engines give no position (e.g. V8 for `Unexpected token 't', "table ip k"... is not valid JSON`).
    const first = text.search(/\S/);
    const offset = pos
      ? Number(pos[1])
      : text[first] !== "{" && text[first] !== "["
      ? first
      : text.trimEnd().length - 1;
    const line = lineOf(Math.max(0, Math.min(offset, text.length - 1)));
    throw new DumpParseError(FORMAT, line, truncated ? "truncated JSON" : "malformed JSON", lineText(text, line));
  }
}

/** JSON.parse of one array element; when it is not valid JSON, the error is the whole document's (exact line). */
function parseSpan(doc: Doc, start: number, end: number): J {
  try {
    return JSON.parse(doc.text.slice(start, end));
  } catch {
    parseWhole(doc.text, doc.lineOf);
    // Unreachable: an element that is not valid JSON makes the document invalid too.
    const line = doc.lineOf(start);
    throw new DumpParseError(FORMAT, line, "malformed JSON", lineText(doc.text, line));
  }
}

function str(v: J): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function num(v: J): number | undefined {
  return typeof v === "number" ? v : undefined;
}

function badItem(line: number, what: string, item: J): DumpParseError {
  let quoted: string;
  try {
    quoted = jsonText(item);
  } catch {
    return tooDeep(line, "");
  }
  return new DumpParseError(FORMAT, line, what, quoted);
}

/**
 * A rule of an `nft -j` document whose statements (and text form) are decoded on first use: a ruleset of 10,000
 * Services holds 100,000+ rules and a `svc/NAME` question reads a few dozen of them. `family`, `table`, `chain`,
 * `handle`, `line` and `comment` are read up front from the rule's head; `text` and `statements` from its `expr` when
 * first asked for. `mayContain` tells decoders cheaply which rules cannot hold a word.
 */
/** A rule's statements and their text form, decoded. */
interface Decoded {
  statements: NftStatement[];
  text: string;
}

class JsonRule implements NftRule {
  readonly family: string;
  readonly table: string;
  readonly chain: string;
  declare handle?: number;
  readonly line: number;
  declare comment?: string;
  /** The document and the element's span (fast path). */
  #doc: Doc | undefined;
  #start: number;
  #end: number;
  /** Offset of the `[` of the `expr` array in the document (fast path). */
  #exprAt: number;
  /**
   * The `expr` array when the element was parsed whole, then (after the first read of `statements` or `text`) what
   * it decodes to: one field for both keeps 100,000+ rules of a big table a little smaller.
   */
  #decoded: J[] | Decoded | undefined;

  constructor(
    family: string,
    table: string,
    chain: string,
    line: number,
    handle: number | undefined,
    doc: Doc | undefined,
    start: number,
    exprAt: number,
    end: number,
    expr: J[] | undefined,
  ) {
    this.family = family;
    this.table = table;
    this.chain = chain;
    this.line = line;
    if (handle !== undefined) this.handle = handle;
    this.#doc = doc;
    this.#start = start;
    this.#exprAt = exprAt;
    this.#end = end;
    this.#decoded = expr;
  }

  get statements(): NftStatement[] {
    return this.#decodedNow().statements;
  }

  get text(): string {
    return this.#decodedNow().text;
  }

  #decodedNow(): Decoded {
    const d = this.#decoded;
    return d === undefined || Array.isArray(d) ? this.#decode(d) : d;
  }

  /**
   * False only when the rule's JSON certainly does not contain `word` (no escape sequence in it either): decoders use
   * it to skip rules that cannot be what they look for without decoding them.
   */
  mayContain(word: string): boolean {
    if (this.#doc === undefined) return true;
    const raw = this.#doc.text.slice(this.#start, this.#end);
    return raw.includes(word) || raw.includes("\\");
  }

  /**
   * The `expr` array's JSON text as nft printed it (fast path: a slice of the document, no parsing); undefined when
   * the rule was parsed whole (another key order or spacing, see {@link Builder.fast}).
   */
  exprJson(): string | undefined {
    return this.#doc === undefined ? undefined : this.#doc.text.slice(this.#exprAt, this.#end - 2);
  }

  /** The plain form (JSON.stringify, structuredClone-like copies): the same fields as a parsed NftRule. */
  toJSON(): NftRule {
    const r: NftRule = {
      family: this.family,
      table: this.table,
      chain: this.chain,
      line: this.line,
      text: this.text,
      statements: this.statements,
    };
    if (this.handle !== undefined) r.handle = this.handle;
    if (this.comment !== undefined) r.comment = this.comment;
    return r;
  }

  #decode(parsed: J[] | undefined): Decoded {
    let expr = parsed;
    if (expr === undefined) {
      const doc = this.#doc!;
      // The `[…]` of `"expr": […]}}` alone; anything unexpected is judged on the whole element.
      try {
        const e: J = JSON.parse(doc.text.slice(this.#exprAt, this.#end - 2));
        if (Array.isArray(e)) expr = e;
      } catch {
        // judged below
      }
    }
    if (expr === undefined) {
      const doc = this.#doc!;
      const item = parseSpan(doc, this.#start, this.#end);
      const body = isObject(item) && soleKey(item) === "rule" ? item.rule : undefined;
      if (!isObject(body)) throw badItem(this.line, 'expected an object with one key such as {"rule": {...}}', item);
      if (!Array.isArray(body.expr)) throw badItem(this.line, "rule without an expr array", item);
      expr = body.expr;
    }
    const ctx: Ctx = { family: this.family };
    const statements: NftStatement[] = [];
    for (const e of expr) {
      let st: NftStatement;
      try {
        try {
          st = statementOf(e, ctx);
        } catch (err) {
          if (!(err instanceof Undecodable)) throw err;
          st = { kind: "unknown", text: unknownText(e) };
        }
      } catch (err) {
        if (!(err instanceof NestingTooDeep)) throw err;
        throw tooDeep(this.line, this.#doc ? this.#doc.text.slice(this.#start, Math.min(this.#end, this.#start + 200)) : "");
      }
      statements.push(st);
    }
    return this.#decoded = { statements, text: statements.map((s) => s.text).join(" ") };
  }
}

/** Unknown statements of a rule, as `unparsed` entries. */
function ruleUnparsed(rule: NftRule): NftUnparsed[] {
  const out: NftUnparsed[] = [];
  for (const st of rule.statements) {
    if (st.kind !== "unknown") continue;
    const u: NftUnparsed = {
      family: rule.family,
      table: rule.table,
      chain: rule.chain,
      line: rule.line,
      text: st.text,
      context: rule.text,
    };
    out.push(rule.handle === undefined ? u : { ...u, handle: rule.handle });
  }
  return out;
}

/** `{"rule": {"family": F, "table": T, "chain": C, "handle": N, ["comment": "…",] "expr": [` as nft prints it. */
const RULE_HEAD =
  /\{"rule": \{"family": "([a-z0-9]+)", "table": "([^"\\]*)", "chain": "([^"\\]*)", "handle": (\d+), (?:"comment": "([^"\\]*)", )?"expr": \[/y;
/** A regular chain as nft prints it: `{"chain": {"family": F, "table": T, "name": N, "handle": H}}`, nothing else. */
const CHAIN_ITEM =
  /\{"chain": \{"family": "([a-z0-9]+)", "table": "([^"\\]*)", "name": "([^"\\]*)", "handle": (\d+)\}\}/y;

/** RULE_HEAD after the chain name. */
const RULE_TAIL = String.raw`"handle": (\d+), (?:"comment": "([^"\\]*)", )?"expr": \[`;

/**
 * The head of an element of the `"nftables"` array as libnftables prints it, e.g. `{"rule": {"family": "`: in
 * nftables' src/json.c every element but metainfo is packed with its family first (table, chain_print_json,
 * rule_print_json, set_print_json — set, map, meter —, element_print_json, obj_print_json — counter, quota,
 * ct helper, limit, ct timeout, secmark, synproxy, ct expectation, tunnel —, flowtable_print_json).
 */
const ELEMENT_HEAD =
  /\{"(?:table|chain|rule|set|map|meter|element|flowtable|counter|quota|limit|secmark|synproxy|tunnel|ct helper|ct timeout|ct expectation)": \{"family": "/y;

/**
 * Where the rule whose `"expr": [` array opens at `exprAt` ends, read from nft's printed form instead of counting
 * its brackets: at the first `]}}` that is followed by `, ` and the head of the next element ({@link ELEMENT_HEAD}),
 * provided no object opens with a `"family"` key in between (the head of an element the span would swallow, should
 * the rule carry a key after `expr`). Inside an `expr` array `]}}, {"` does occur (`log` and `queue` flags before the
 * next statement), but never before an object of an element's key whose first key is `family`: no statement or
 * expression of libnftables' JSON schema has that form. Being inside strings is excluded by the quotes those patterns
 * hold. Exported for its tests.
 * @param text an `nft -j` document.
 * @param exprAt offset of the `[` that opens a rule's `expr` array (the rule's head was matched up to it).
 * @returns the offset just past the rule's closing `}}`, or -1 (the caller counts brackets) when the form is not
 *   found: the last rule of a document, a `]}}, {"` inside an expression or a string, another spacing.
 * Source of truth: nftables src/json.c, rule_print_json: family, table, chain, handle, then comment when set, then
 * expr (left out for a rule without statements, which the rule's head pattern then does not match).
 */
export function ruleEnd(text: string, exprAt: number): number {
  const x = text.indexOf(']}}, {"', exprAt);
  if (x < 0) return -1;
  ELEMENT_HEAD.lastIndex = x + 5;
  if (!ELEMENT_HEAD.test(text)) return -1;
  return text.indexOf('{"family', exprAt) > x ? x + 3 : -1;
}

function reEscape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** Builds the ruleset from the document's elements, in document order. */
class Builder {
  readonly ruleset: NftRuleset;
  /** Rules (whose unknown statements are listed when first asked for) and unparsed entries, in document order. */
  readonly #producers: (NftRule | NftUnparsed)[] = [];
  readonly #tables = new Map<string, NftTable>();
  /** Tables whose `{"table": …}` object was read: one listing has one per table, two mean two listings joined. */
  readonly #declared = new Map<string, number>();
  #lastTable: NftTable | undefined;
  #lastChain: NftChain | undefined;
  /** RULE_HEAD / CHAIN_ITEM for #lastTable's family and name: captures the chain name, handle (and comment). */
  #ruleRe = RULE_HEAD;
  #chainRe = CHAIN_ITEM;
  /**
   * Every chain in the order it was listed (created), and the last rule's chain's place in that list. The place of
   * any chain (#chainSeq) is indexed only when a rule's chain is not among the next few: nft lists rules in chain
   * order, so on a 60,000-chain table that index is usually never needed.
   */
  readonly #chainList: NftChain[] = [];
  #chainSeq: Map<NftChain, number> | undefined;
  #chainAt = -1;
  /** Rules of #pendingChain not yet given to it. */
  #pending: NftRule[] = [];
  #pendingChain: NftChain | undefined;

  constructor() {
    const producers = this.#producers;
    let unparsed: NftUnparsed[] | undefined;
    this.ruleset = {
      format: FORMAT,
      tables: [],
      get unparsed(): NftUnparsed[] {
        if (unparsed === undefined) {
          unparsed = [];
          for (const p of producers) {
            if ("statements" in p) unparsed.push(...ruleUnparsed(p));
            else unparsed.push(p);
          }
        }
        return unparsed;
      },
    };
  }

  table(family: string, name: string, line: number): NftTable {
    const last = this.#lastTable;
    if (last !== undefined && last.name === name && last.family === family) return last;
    const key = `${family} ${name}`;
    let t = this.#tables.get(key);
    if (!t) {
      t = { family, name, line, flags: [], chains: new Map(), sets: new Map() };
      this.#tables.set(key, t);
      this.ruleset.tables.push(t);
    }
    if (t !== this.#lastTable) {
      this.#lastTable = t;
      const head = (key: string) => `\\{"${key}": \\{"family": "${reEscape(family)}", "table": "${reEscape(name)}", `;
      this.#ruleRe = new RegExp(`${head("rule")}"chain": "([^"\\\\]*)", ${RULE_TAIL}`, "y");
      this.#chainRe = new RegExp(`${head("chain")}"name": "([^"\\\\]*)", "handle": (\\d+)\\}\\}`, "y");
    }
    return t;
  }

  chain(t: NftTable, name: string, line: number, handle?: number): NftChain {
    const last = this.#lastChain;
    if (last !== undefined && last.name === name && last.table === t.name && last.family === t.family) {
      if (handle !== undefined) last.handle = handle;
      return last;
    }
    let c = t.chains.get(name);
    if (c) {
      if (handle !== undefined) c.handle = handle;
    } else {
      // With its handle from the start when the element gives one (60,000 chain objects on a 10,000-Service table
      // share one shape instead of each gaining a property).
      c = handle === undefined
        ? { family: t.family, table: t.name, name, line, rules: [] }
        : { family: t.family, table: t.name, name, line, handle, rules: [] };
      t.chains.set(name, c);
      this.#chainSeq?.set(c, this.#chainList.length);
      this.#chainList.push(c);
    }
    this.#lastChain = c;
    return c;
  }

  /**
   * Tries the forms nft prints of a rule and of a regular chain; -1 when the element must be parsed (another key,
   * key order or spacing, a base chain, an escape sequence in a name), else the element's end. nft lists a table's
   * chains, then their rules chain by chain: a rule's chain is looked for at the previous rule's chain and the ones
   * listed after it first.
   * @param end the element's end (exclusive) when known, or -1: then a regular chain ends where its printed form does
   *   and a rule where {@link ruleEnd} finds it (-1, nothing added, when it cannot tell).
   */
  fast(doc: Doc, start: number, end: number): number {
    const text = doc.text;
    const c0 = text.charCodeAt(start + 2);
    if (c0 === 114 /* r */) {
      let t = this.#lastTable;
      let m: RegExpExecArray | null = null;
      if (t !== undefined) {
        this.#ruleRe.lastIndex = start;
        m = this.#ruleRe.exec(text);
      }
      let g: RegExpExecArray | null = null;
      if (m === null) {
        RULE_HEAD.lastIndex = start;
        g = RULE_HEAD.exec(text);
        if (g === null) return -1;
        m = [g[0], g[3]!, g[4]!, g[5]!] as unknown as RegExpExecArray;
      }
      const exprAt = start + m[0].length - 1;
      if (end < 0) {
        if ((end = ruleEnd(text, exprAt)) < 0) return -1;
      } else if (text.charCodeAt(end - 3) !== 93 /* ] */ || text.charCodeAt(end - 2) !== 125) return -1;
      if (g !== null) t = this.table(g[1]!, g[2]!, doc.lineOf(start));
      const c = this.#ruleChain(t!, m[1]!, doc.lineOf(start));
      const rule = new JsonRule(c.family, c.table, c.name, doc.lineOf(start), Number(m[2]), doc, start, exprAt, end, undefined);
      if (m[3] !== undefined) rule.comment = m[3];
      this.#addRule(c, rule);
      return end;
    }
    if (c0 === 99 /* c */) {
      let t = this.#lastTable;
      let m: RegExpExecArray | null = null;
      if (t !== undefined) {
        this.#chainRe.lastIndex = start;
        m = this.#chainRe.exec(text);
        if (m !== null) {
          if (end < 0) end = this.#chainRe.lastIndex;
          else if (this.#chainRe.lastIndex !== end) return -1;
        }
      }
      if (m === null) {
        CHAIN_ITEM.lastIndex = start;
        const g = CHAIN_ITEM.exec(text);
        if (g === null) return -1;
        if (end < 0) end = CHAIN_ITEM.lastIndex;
        else if (CHAIN_ITEM.lastIndex !== end) return -1;
        t = this.table(g[1]!, g[2]!, doc.lineOf(start));
        m = [g[0], g[3]!, g[4]!] as unknown as RegExpExecArray;
      }
      const line = doc.lineOf(start);
      const c = this.chain(t!, m[1]!, line, Number(m[2]));
      c.line = line;
      return end;
    }
    return -1;
  }

  /**
   * Adds a rule to its chain. nft lists a chain's rules together: they are gathered and given to the chain as an array
   * of their exact number (a chain holds 1 to 3 rules; an array grown by push would reserve room for 17).
   */
  #addRule(c: NftChain, rule: NftRule): void {
    if (c !== this.#pendingChain) {
      this.#flush();
      this.#pendingChain = c;
    }
    this.#pending.push(rule);
    this.#producers.push(rule);
  }

  #flush(): void {
    const c = this.#pendingChain;
    if (c === undefined) return;
    if (c.rules.length === 0) c.rules = this.#pending.slice();
    else c.rules.push(...this.#pending);
    this.#pending.length = 0;
    this.#pendingChain = undefined;
  }

  /** The ruleset, once every element was added. */
  finish(): NftRuleset {
    this.#flush();
    return this.ruleset;
  }

  /** The chain of a rule: the previous rule's, or one of the next few chains in listing order, else by name. */
  #ruleChain(t: NftTable, name: string, line: number): NftChain {
    const last = this.#lastChain;
    if (last !== undefined && last.name === name && last.table === t.name && last.family === t.family) return last;
    const list = this.#chainList;
    for (let i = this.#chainAt + 1, stop = Math.min(list.length, i + 8); i < stop; i++) {
      const c = list[i]!;
      if (c.name === name && c.table === t.name && c.family === t.family) {
        this.#chainAt = i;
        this.#lastChain = c;
        return c;
      }
    }
    const c = this.chain(t, name, line);
    if (this.#chainSeq === undefined) {
      this.#chainSeq = new Map();
      list.forEach((x, i) => this.#chainSeq!.set(x, i));
    }
    this.#chainAt = this.#chainSeq.get(c)!;
    return c;
  }

  /** One parsed element of the `nftables` array. */
  item(item: J, line: number): void {
    const key = soleKey(item);
    if (key === undefined || !isObject(item)) {
      throw badItem(line, 'expected an object with one key such as {"rule": {...}}', item);
    }
    const body = item[key];
    const fail = (what: string): never => {
      throw badItem(line, what, item);
    };
    switch (key) {
      case "metainfo":
        if (isObject(body) && typeof body.version === "string") this.ruleset.nftVersion = body.version;
        return;
      case "table": {
        if (!isObject(body) || !str(body.family) || !str(body.name)) return fail("table without family or name");
        const tableKey = `${body.family} ${body.name}`;
        const first = this.#declared.get(tableKey);
        if (first !== undefined) return fail(`table ${tableKey} is listed twice (first at line ${first}): two listings joined into one section? capture it again`);
        this.#declared.set(tableKey, line);
        const t = this.table(body.family as string, body.name as string, line);
        t.line = line;
        if (num(body.handle) !== undefined) t.handle = body.handle as number;
        if (str(body.comment) !== undefined) t.comment = body.comment as string;
        if (Array.isArray(body.flags)) t.flags = body.flags.map(String);
        else if (typeof body.flags === "string") t.flags = [body.flags];
        return;
      }
      case "chain": {
        if (!isObject(body) || !str(body.family) || !str(body.table) || !str(body.name)) {
          return fail("chain without family, table or name");
        }
        const t = this.table(body.family as string, body.table as string, line);
        const c = this.chain(t, body.name as string, line);
        c.line = line;
        if (num(body.handle) !== undefined) c.handle = body.handle as number;
        if (str(body.comment) !== undefined) c.comment = body.comment as string;
        if (str(body.type) && str(body.hook)) {
          const base: NftBaseChain = {
            type: body.type as string,
            hook: body.hook as string,
            priority: num(body.prio) ?? 0,
          };
          if (str(body.policy)) base.policy = body.policy as string;
          if (str(body.dev)) base.device = body.dev as string;
          c.base = base;
        }
        return;
      }
      case "rule": {
        if (!isObject(body) || !str(body.family) || !str(body.table) || !str(body.chain)) {
          return fail("rule without family, table or chain");
        }
        if (!Array.isArray(body.expr)) return fail("rule without an expr array");
        // a handle is what the report cites a rule by: one that is not a whole number cannot be cited
        if (body.handle !== undefined && !(typeof body.handle === "number" && Number.isInteger(body.handle) && body.handle >= 0)) {
          return fail(`rule handle ${JSON.stringify(body.handle)} is not a whole number`);
        }
        const t = this.table(body.family as string, body.table as string, line);
        const c = this.chain(t, body.chain as string, line);
        const rule = new JsonRule(t.family, t.name, c.name, line, num(body.handle), undefined, 0, 0, 0, body.expr);
        if (str(body.comment) !== undefined) rule.comment = body.comment as string;
        this.#addRule(c, rule);
        return;
      }
      case "set":
      case "map": {
        if (!isObject(body) || !str(body.family) || !str(body.table) || !str(body.name)) {
          return fail("set without family, table or name");
        }
        const t = this.table(body.family as string, body.table as string, line);
        const keyType = Array.isArray(body.type) ? body.type.map(String) : [String(body.type ?? "")];
        const set: NftSet = {
          family: t.family,
          table: t.name,
          kind: key,
          name: body.name as string,
          line,
          type: keyType.join(" . "),
          keyType,
          flags: Array.isArray(body.flags)
            ? body.flags.map(String)
            : typeof body.flags === "string"
            ? [body.flags]
            : [],
          elements: [],
        };
        if (num(body.handle) !== undefined) set.handle = body.handle as number;
        if (key === "map" && str(body.map)) set.dataType = body.map as string;
        if (num(body.timeout) !== undefined) set.timeout = body.timeout as number;
        if (num(body.size) !== undefined) set.size = body.size as number;
        if (str(body.comment) !== undefined) set.comment = body.comment as string;
        t.sets.set(set.name, set);
        addElements(set, body.elem, line, this.#producers);
        return;
      }
      case "element": {
        if (!isObject(body) || !str(body.family) || !str(body.table) || !str(body.name)) {
          return fail("element without family, table or name");
        }
        const t = this.table(body.family as string, body.table as string, line);
        const set = t.sets.get(body.name as string);
        if (!set) return fail(`element of undeclared set ${String(body.name)}`);
        addElements(set, body.elem, line, this.#producers);
        return;
      }
      default: {
        const b = isObject(body) ? body : {};
        this.#producers.push({
          family: str(b.family) ?? "",
          table: str(b.table) ?? "",
          line,
          text: `${key} ${str(b.name) ?? ""}`.trim(),
          context: (() => {
            try {
              return jsonText(item).slice(0, 200);
            } catch {
              return `(nested more than ${MAX_NFT_JSON_NESTING} levels deep)`;
            }
          })(),
        });
      }
    }
  }
}

/**
 * Parses `nft -j list ruleset` output (also `nft -j list table …`).
 *
 * Tables, chains, sets, maps and rules are taken in document order; a chain or rule whose table (or chain) was not
 * listed before it gets one created, so partial listings parse too. Objects other than tables, chains, rules, sets,
 * maps and elements (counters, quotas, flowtables, ct helpers…) are kept in `unparsed`.
 *
 * Built for large rulesets (10,000 Services: 50 MB, 180,000 objects, on one line): one pass finds the array's
 * elements without building the whole JSON tree; chains and rules in the form nft prints them are read from their
 * head (family, table, chain, handle, comment) and a rule's `expr` is parsed and decoded the first time its `text` or
 * `statements` is read. Everything else (tables, base chains, sets with their elements, other objects, and any element
 * in another form, e.g. pretty-printed) is parsed and checked here. So a syntax error inside the `expr` of a rule that
 * is otherwise well formed (never seen from nft itself) is reported when that rule is first read, as the same
 * DumpParseError; `unparsed` decodes every rule when first read.
 *
 * @param text the JSON document, as printed by nft (one line) or pretty-printed.
 * @returns the ruleset, `format: "nft-json"`.
 * @throws {DumpParseError} format `nft-json`:
 *   - `nft-json line 0: empty input: ""` for empty or blank text;
 *   - `nft-json line L: malformed JSON: "…"` / `truncated JSON` (cut short) with the line JSON.parse stopped at;
 *   - `nft-json line 1: not an nft -j document (expected {"nftables": [...]}): "…"`;
 *   - `nft-json line L: expected an object with one key such as {"rule": {...}}: "…"` for a bad array element;
 *   - `nft-json line L: table without family or name` / `chain without family, table or name` /
 *     `rule without family, table or chain` / `rule without an expr array` / `set without family, table or name` /
 *     `element without family, table or name`, quoting the object.
 * @example
 * ```ts
 * import { parseNftJson } from "./nft_json.ts";
 * const rs = parseNftJson('{"nftables": [{"table": {"family": "ip", "name": "kube-proxy", "handle": 1}}]}');
 * rs.tables[0]!.name; // "kube-proxy"
 * ```
 */
export function parseNftJson(text: string): NftRuleset {
  if (text.trim() === "") throw new DumpParseError(FORMAT, 0, "empty input", "");
  // Several documents, one per line (e.g. `nft -j list table ip kube-proxy` then `… ip6 kube-proxy`): one ruleset.
  const docs = splitDocuments(text);
  return parseDocuments(docs, true) ?? parseDocuments(docs, false)!;
}

/**
 * The ruleset of the documents. With `stream`, each document's elements are walked once ({@link streamItems}) and
 * undefined is returned when any document is not the plain shape or any element fails (whatever the error): the
 * caller then parses again without `stream` ({@link parseDocumentInto}), which finds every element's span first and
 * words the errors.
 */
function parseDocuments(docs: string[], stream: boolean): NftRuleset | undefined {
  const b = new Builder();
  let lineBase = 0;
  for (const part of docs) {
    const local = lineIndex(part);
    const base = lineBase;
    const lineOf = base === 0 ? local : (offset: number) => local(offset) + base;
    if (!stream) parseDocumentInto(b, part, lineOf, base);
    else {
      try {
        if (!streamItems(b, { text: part, lineOf })) return undefined;
      } catch {
        return undefined;
      }
    }
    lineBase += local(part.length);
  }
  return b.finish();
}

/**
 * Splits the text before each line that starts a `{"nftables"` document (what `text.split(/\n(?=\{\s*"nftables")/)`
 * does, without running a look-ahead at every position of a 30 MB one-line dump).
 */
function splitDocuments(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = text.indexOf("\n{"); i !== -1; i = text.indexOf("\n{", i + 1)) {
    let j = i + 2;
    while (j < text.length && /\s/.test(text[j]!)) j++;
    if (!text.startsWith('"nftables"', j)) continue;
    out.push(text.slice(start, i));
    start = i + 1;
  }
  out.push(text.slice(start));
  return out;
}

/**
 * Parses one `{"nftables": [...]}` document into `b`: the spans of its elements first ({@link scanItems}), else
 * JSON.parse of the whole text. `lineOf` gives a document offset's line in the whole input, whose first `lineBase`
 * lines came before this document.
 */
function parseDocumentInto(b: Builder, text: string, lineOf: (offset: number) => number, lineBase: number): void {
  const spans = scanItems(text);
  if (spans !== undefined) {
    const doc: Doc = { text, lineOf };
    const { starts, ends } = spans;
    for (let i = 0; i < starts.length; i++) {
      const start = starts[i]!;
      const end = ends[i]!;
      if (b.fast(doc, start, end) < 0) b.item(parseSpan(doc, start, end), lineOf(start));
    }
    return;
  }
  // Not the plain shape: JSON.parse judges the whole text (and words the error).
  const whole = parseWhole(text, lineOf);
  if (!isObject(whole) || !Array.isArray(whole.nftables)) {
    throw new DumpParseError(FORMAT, lineBase + 1, 'not an nft -j document (expected {"nftables": [...]})', lineText(text, 1));
  }
  const items = whole.nftables;
  const offsets = elementOffsets(text);
  items.forEach((item, i) => b.item(item, offsets.length === items.length ? lineOf(offsets[i]!) : lineBase + 1));
}

/** Adds the `elem` array of a set/map object to `set`; undecodable elements are kept as text and listed. */
function addElements(set: NftSet, elems: J, line: number, unparsed: (NftRule | NftUnparsed)[]): void {
  if (elems === undefined) return;
  const list = Array.isArray(elems) ? elems : [elems];
  const keyHints = set.keyType.map(hintOfType);
  const dataHint = hintOfType(set.dataType ?? "");
  for (const raw of list) {
    try {
      set.elements.push(elementOf(set, raw, keyHints, dataHint));
    } catch (err) {
      if (err instanceof NestingTooDeep) throw tooDeep(line, `${set.kind} ${set.name}`);
      if (!(err instanceof Undecodable)) throw err;
      let text: string;
      try {
        text = jsonText(raw);
      } catch {
        throw tooDeep(line, `${set.kind} ${set.name}`);
      }
      set.elements.push({ keyText: text, key: [text], text });
      unparsed.push({ family: set.family, table: set.table, line, text, context: `${set.kind} ${set.name}` });
    }
  }
}

/** The text of one key part: scalars directly (most elements), anything else through valueOf. */
function partText(v: J, hint: Hint): string {
  if (typeof v === "string") return v.startsWith("@") || hint !== "string" ? v : quote(v);
  if (typeof v === "number") return hint === "mark" ? hex8(v) : String(v);
  if (typeof v === "boolean") return String(v);
  return valueOf(v, hint).text;
}

function elementOf(set: NftSet, raw: J, keyHints: Hint[], dataHint: Hint): NftElement {
  let keyJ: J = raw;
  let dataJ: J = undefined;
  if (set.kind === "map") {
    if (!Array.isArray(raw) || raw.length !== 2) throw new Undecodable();
    keyJ = raw[0];
    dataJ = raw[1];
  }
  // Key order as the text parser builds elements: comment, timeout, expires, verdict, data, keyText, key, text.
  const el: Partial<NftElement> = {};
  if (soleKey(keyJ) === "elem" && isObject(keyJ) && isObject(keyJ.elem)) {
    const e = keyJ.elem;
    if (typeof e.comment === "string") el.comment = e.comment;
    if (typeof e.timeout === "number") el.timeout = e.timeout;
    if (typeof e.expires === "number") el.expires = e.expires;
    keyJ = e.val;
  }
  let key: string[];
  if (isObject(keyJ) && Array.isArray(keyJ.concat) && soleKey(keyJ) === "concat") {
    const parts = keyJ.concat;
    key = new Array<string>(parts.length);
    for (let i = 0; i < parts.length; i++) key[i] = partText(parts[i], keyHints[i] ?? "default");
  } else {
    key = [partText(keyJ, keyHints[0] ?? "default")];
  }
  const keyText = key.length === 1 ? key[0]! : key.join(" . ");
  let text = keyText;
  if (set.kind === "map") {
    const v = verdictOf(dataJ);
    if (v) {
      el.verdict = v;
      el.data = verdictText(v);
    } else {
      el.data = valueOf(dataJ, dataHint).text;
    }
    text = `${keyText} : ${el.data}`;
  }
  el.keyText = keyText;
  el.key = key;
  el.text = text;
  return el as NftElement;
}
