/**
 * Evaluating one nftables match expression against a packet (`ip saddr`, `tcp dport`, `fib daddr type`, `meta mark`, `iifname`, sets): yes, no with the failing condition, or unknown with what a capture cannot show.
 *
 * Part of the nftables tracer (trace.ts has the whole story). Runtime-neutral: no I/O.
 * @module
 */
import type { NftElement, NftSet, NftStatement, NftValue } from "../../datapath/nft_model.ts";
import { cidrContains, isIPv6 } from "../../model/ip.ts";
import type { TracePacket } from "../trace.ts";
import { hex } from "./trace_types.ts";

/** A packet field a selector reads, typed for comparison. */
export type Field =
  | { kind: "addr"; who: string; value: string }
  | { kind: "proto"; value: string }
  | { kind: "port"; who: string; value: number }
  /** `shown`: how a failed match words the packet's value, e.g. `packet mark 0x4000`. */
  | { kind: "number"; shown: string; value: number }
  | { kind: "flags"; who: string; value: string[] }
  | { kind: "word"; who: string; value: string }
  | { kind: "iface"; who: string; value: string };

export type FieldResult = Field | { no: string } | { unknown: string };

/** IP protocol numbers nft may print for a protocol, to its name; no prototype, so `constructor` is not a key. */
export const PROTO_NUMBERS: Record<string, string> = Object.assign(Object.create(null) as Record<string, string>, {
  "6": "tcp",
  "17": "udp",
  "132": "sctp",
  "1": "icmp",
  "58": "ipv6-icmp",
  "136": "udplite",
});
export const PORT_PROTOS = new Set(["tcp", "udp", "sctp", "udplite", "dccp"]);

export function normProto(s: string): string {
  const t = s.toLowerCase();
  return PROTO_NUMBERS[t] ?? (t === "icmpv6" ? "ipv6-icmp" : t);
}

export function parseNumber(s: string): number | undefined {
  const t = s.trim();
  if (/^0x[0-9a-f]+$/i.test(t)) return parseInt(t, 16);
  if (/^\d+$/.test(t)) return Number(t);
  return undefined;
}

/** Reads the packet field a selector names (`ip saddr`, `th dport`, `meta mark & 0x00004000`, `fib daddr type`). */
export function fieldOf(selector: string, p: TracePacket): FieldResult {
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
    // the node's addresses were not collected and the destination is not its known address: whether it is local is
    // not known (kube-proxy's `fib daddr type local … @service-nodeports` answers on every local address)
    if (!src && p.dstLocalUnknown && !p.dstLocal) {
      return { unknown: `depends on whether ${p.dst} is a local address of the node (not collected: the node's \`ip -o addr\`)` };
    }
    return {
      kind: "word",
      who: src ? `source ${p.src}` : `destination ${p.dst}`,
      value: (src ? p.srcLocal : p.dstLocal) ? "local" : "unicast",
    };
  }
  if (selector === "meta nfproto") return { kind: "word", who: "family", value: p.family === 6 ? "ipv6" : "ipv4" };
  // `iif`/`oif` compare the interface's index, nft shows it by name: the same test as the name for an interface that
  // exists (kube-proxy v1.29–v1.34 wrote `iif` for the BridgeInterface local-traffic detector, localdetector.go)
  if (/^(?:meta )?[io]if(?:name)?$/.test(selector)) {
    const input = /^(?:meta )?iif/.test(selector);
    const known = input ? p.inInterface : p.outInterface;
    if (known === undefined) return { unknown: `depends on the ${input ? "input" : "output"} interface` };
    return { kind: "iface", who: input ? "input interface" : "output interface", value: known };
  }
  return { unknown: `selector "${selector}" is not modelled` };
}

/** Whether the field's value equals one scalar text as nft prints it (address, prefix, range, name, number). */
export function scalarHas(f: Field, text: string): boolean | undefined {
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

export function addrBits(a: string): bigint | undefined {
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

export function inAddrRange(a: string, from: string, to: string): boolean | undefined {
  const x = addrBits(a);
  const lo = addrBits(from);
  const hi = addrBits(to);
  if (x === undefined || lo === undefined || hi === undefined) return undefined;
  return x >= lo && x <= hi;
}

export interface SetLookup {
  set(name: string): NftSet | undefined;
  /** The set's elements that are plain addresses, by value, and the others (prefixes, ranges, …). */
  addresses(set: NftSet): AddressIndex;
}

/**
 * Membership of a named set for an address, without testing each of its (10,000+) elements: elements that are a
 * plain IPv4 or IPv6 address match exactly when they equal the address (what cidrContains decides for them); the
 * others are tested one by one.
 */
export interface AddressIndex {
  /** IPv4 elements as written; IPv6 elements as `v6:` + their value in hex. */
  plain: Set<string>;
  others: NftElement[];
}

export const IPV4_TEXT = /^\d{1,3}(?:\.\d{1,3}){3}$/;
export const IPV6_TEXT = /^(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}$/i;

/** The key of a plain address in an AddressIndex, or undefined when the text is not one. */
export function plainAddressKey(text: string): string | undefined {
  if (IPV4_TEXT.test(text)) return text;
  if (!IPV6_TEXT.test(text) || text.indexOf("::") !== text.lastIndexOf("::")) return undefined;
  const bits = addrBits(text.toLowerCase());
  return bits === undefined ? undefined : `v6:${bits.toString(16)}`;
}

export function addressIndex(set: NftSet): AddressIndex {
  const ix: AddressIndex = { plain: new Set(), others: [] };
  for (const e of set.elements) {
    const key = e.key.length === 1 ? plainAddressKey(e.key[0]!) : undefined;
    if (key !== undefined) ix.plain.add(key);
    else ix.others.push(e);
  }
  return ix;
}

/** Whether the field's value is in an NftValue (literal, prefix, range, anonymous set, named set, flag list). */
export function valueHas(f: Field, v: NftValue, sets: SetLookup): boolean | undefined {
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
export function shownField(f: Field): string {
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

/**
 * A match statement's result. `heldBy`: the packet's source address is an element of this session-affinity set (the
 * capture shows the client remembered there), so the rule that matched sends it to its remembered endpoint.
 */
export type MatchResult = { kind: "yes"; caveat?: string; heldBy?: string } | { kind: "no"; why: string; caveat?: string } | {
  kind: "unknown";
  why: string;
};

export function isAffinitySet(s: NftSet): boolean {
  return s.name.startsWith("affinity-") || s.flags.includes("timeout") || s.flags.includes("dynamic");
}

export function affinityWords(s: NftSet): string {
  return s.timeout !== undefined ? ` (entries last ${formatSeconds(s.timeout)})` : "";
}

export function formatSeconds(s: number): string {
  if (s % 3600 === 0) return `${s / 3600}h`;
  if (s % 60 === 0) return `${s / 60}m`;
  return `${Math.round(s * 1000) / 1000}s`;
}

/** Evaluates one match statement against a packet. */
export function evalMatch(st: Extract<NftStatement, { kind: "match" }>, p: TracePacket, sets: SetLookup): MatchResult {
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
  let heldBy: string | undefined;
  if (st.value.kind === "set-ref") {
    const s = sets.set(st.value.name);
    if (s && isAffinitySet(s) && f.kind === "addr") {
      if (has) {
        const e = s.elements.find((x) => scalarHas(f, x.key[0] ?? x.keyText) === true);
        const exp = e?.expires !== undefined ? `, ${formatSeconds(e.expires)} left when captured` : "";
        caveat =
          `session affinity: ${f.value} is remembered in @${s.name}${exp}; it returns to the same endpoint until the entry expires`;
        heldBy = s.name;
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
  if (ok) {
    if (caveat === undefined) return { kind: "yes" };
    return heldBy !== undefined ? { kind: "yes", caveat, heldBy } : { kind: "yes", caveat };
  }
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
