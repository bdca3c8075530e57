/**
 * Parser of `nft -j list ruleset` (libnftables JSON, schema version 1, see libnftables-json(5)) into the
 * {@link NftRuleset} model. Every rule gets a text form rendered the way `nft list ruleset` prints the same kernel
 * state (checked against real nft 1.0.6 output in the tests), and its statements decoded into {@link NftStatement}s.
 * Expressions outside the decoded vocabulary are rendered as text, kept as `unknown` statements and listed in
 * `unparsed`; nothing is dropped.
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
  if (k !== undefined && isObject(e)) return e[k] === null ? k : `${k} ${JSON.stringify(e[k])}`;
  return JSON.stringify(e);
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

/**
 * Start offsets of the elements of the top-level `"nftables"` array, for line numbers in errors and evidence.
 * A linear scan that tracks strings and nesting; returns [] when the document is not shaped as expected.
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
  return text.split("\n")[line - 1] ?? "";
}

function str(v: J): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function num(v: J): number | undefined {
  return typeof v === "number" ? v : undefined;
}

/**
 * Parses `nft -j list ruleset` output (also `nft -j list table …`).
 *
 * Tables, chains, sets, maps and rules are taken in document order; a chain or rule whose table (or chain) was not
 * listed before it gets one created, so partial listings parse too. Objects other than tables, chains, rules, sets,
 * maps and elements (counters, quotas, flowtables, ct helpers…) are kept in `unparsed`.
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
  const lineOf = lineIndex(text);
  let doc: J;
  try {
    doc = JSON.parse(text);
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
  if (!isObject(doc) || !Array.isArray(doc.nftables)) {
    throw new DumpParseError(FORMAT, 1, 'not an nft -j document (expected {"nftables": [...]})', lineText(text, 1));
  }
  const items = doc.nftables;
  const offsets = elementOffsets(text);
  const lineAt = (i: number) => offsets.length === items.length ? lineOf(offsets[i]!) : 1;

  const ruleset: NftRuleset = { format: FORMAT, tables: [], unparsed: [] };
  const tables = new Map<string, NftTable>();
  const getTable = (family: string, name: string, line: number): NftTable => {
    const key = `${family} ${name}`;
    let t = tables.get(key);
    if (!t) {
      t = { family, name, line, flags: [], chains: new Map(), sets: new Map() };
      tables.set(key, t);
      ruleset.tables.push(t);
    }
    return t;
  };
  const getChain = (t: NftTable, name: string, line: number): NftChain => {
    let c = t.chains.get(name);
    if (!c) {
      c = { family: t.family, table: t.name, name, line, rules: [] };
      t.chains.set(name, c);
    }
    return c;
  };

  items.forEach((item, i) => {
    const line = lineAt(i);
    const key = soleKey(item);
    if (key === undefined || !isObject(item)) {
      throw new DumpParseError(
        FORMAT,
        line,
        'expected an object with one key such as {"rule": {...}}',
        JSON.stringify(item),
      );
    }
    const body = item[key];
    const fail = (what: string): never => {
      throw new DumpParseError(FORMAT, line, what, JSON.stringify(item));
    };
    switch (key) {
      case "metainfo":
        if (isObject(body) && typeof body.version === "string") ruleset.nftVersion = body.version;
        return;
      case "table": {
        if (!isObject(body) || !str(body.family) || !str(body.name)) return fail("table without family or name");
        const t = getTable(body.family as string, body.name as string, line);
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
        const t = getTable(body.family as string, body.table as string, line);
        const c = getChain(t, body.name as string, line);
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
        const t = getTable(body.family as string, body.table as string, line);
        const c = getChain(t, body.chain as string, line);
        const rule: NftRule = { family: t.family, table: t.name, chain: c.name, line, text: "", statements: [] };
        if (num(body.handle) !== undefined) rule.handle = body.handle as number;
        if (str(body.comment) !== undefined) rule.comment = body.comment as string;
        const ctx: Ctx = { family: t.family };
        for (const e of body.expr) {
          let st: NftStatement;
          try {
            st = statementOf(e, ctx);
          } catch (err) {
            if (!(err instanceof Undecodable)) throw err;
            st = { kind: "unknown", text: unknownText(e) };
          }
          rule.statements.push(st);
        }
        rule.text = rule.statements.map((s) => s.text).join(" ");
        for (const st of rule.statements) {
          if (st.kind !== "unknown") continue;
          const u = { family: t.family, table: t.name, chain: c.name, line, text: st.text, context: rule.text };
          ruleset.unparsed.push(rule.handle === undefined ? u : { ...u, handle: rule.handle });
        }
        c.rules.push(rule);
        return;
      }
      case "set":
      case "map": {
        if (!isObject(body) || !str(body.family) || !str(body.table) || !str(body.name)) {
          return fail("set without family, table or name");
        }
        const t = getTable(body.family as string, body.table as string, line);
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
        addElements(set, body.elem, line, ruleset);
        return;
      }
      case "element": {
        if (!isObject(body) || !str(body.family) || !str(body.table) || !str(body.name)) {
          return fail("element without family, table or name");
        }
        const t = getTable(body.family as string, body.table as string, line);
        const set = t.sets.get(body.name as string);
        if (!set) return fail(`element of undeclared set ${String(body.name)}`);
        addElements(set, body.elem, line, ruleset);
        return;
      }
      default: {
        const b = isObject(body) ? body : {};
        ruleset.unparsed.push({
          family: str(b.family) ?? "",
          table: str(b.table) ?? "",
          line,
          text: `${key} ${str(b.name) ?? ""}`.trim(),
          context: JSON.stringify(item).slice(0, 200),
        });
      }
    }
  });
  return ruleset;
}

/** Adds the `elem` array of a set/map object to `set`; undecodable elements are kept as text and listed. */
function addElements(set: NftSet, elems: J, line: number, ruleset: NftRuleset): void {
  if (elems === undefined) return;
  const list = Array.isArray(elems) ? elems : [elems];
  const keyHints = set.keyType.map(hintOfType);
  for (const raw of list) {
    try {
      set.elements.push(elementOf(set, raw, keyHints));
    } catch (err) {
      if (!(err instanceof Undecodable)) throw err;
      const text = JSON.stringify(raw);
      set.elements.push({ keyText: text, key: [text], text });
      ruleset.unparsed.push({ family: set.family, table: set.table, line, text, context: `${set.kind} ${set.name}` });
    }
  }
}

function elementOf(set: NftSet, raw: J, keyHints: Hint[]): NftElement {
  let keyJ: J = raw;
  let dataJ: J = undefined;
  if (set.kind === "map") {
    if (!Array.isArray(raw) || raw.length !== 2) throw new Undecodable();
    keyJ = raw[0];
    dataJ = raw[1];
  }
  const el: Partial<NftElement> = {};
  if (soleKey(keyJ) === "elem" && isObject(keyJ) && isObject(keyJ.elem)) {
    const e = keyJ.elem;
    if (typeof e.comment === "string") el.comment = e.comment;
    if (typeof e.timeout === "number") el.timeout = e.timeout;
    if (typeof e.expires === "number") el.expires = e.expires;
    keyJ = e.val;
  }
  let parts: NftValue[];
  if (soleKey(keyJ) === "concat" && isObject(keyJ) && Array.isArray(keyJ.concat)) {
    parts = keyJ.concat.map((p, i) => valueOf(p, keyHints[i] ?? "default"));
  } else {
    parts = [valueOf(keyJ, keyHints[0] ?? "default")];
  }
  const key = parts.map((p) => p.text);
  const keyText = key.join(" . ");
  let text = keyText;
  if (set.kind === "map") {
    const v = verdictOf(dataJ);
    if (v) {
      el.verdict = v;
      el.data = verdictText(v);
    } else {
      el.data = valueOf(dataJ, hintOfType(set.dataType ?? "")).text;
    }
    text = `${keyText} : ${el.data}`;
  }
  return { ...el, keyText, key, text } as NftElement;
}
