/**
 * Named sets and maps of kube-proxy's table: exact-key indexes for map lookups (`ip daddr . meta l4proto . th dport vmap @service-ips`), address indexes, and the base chains of each hook.
 *
 * Part of the nftables tracer (trace.ts has the whole story). Runtime-neutral: no I/O.
 * @module
 */
import type { NftChain, NftElement, NftSet, NftTable } from "../../datapath/nft_model.ts";
import { isIPv6 } from "../../model/ip.ts";
import { type AddressIndex, type Field, PROTO_NUMBERS, addrBits } from "./match.ts";

/** An exact-key index of a named set/map: key parts joined by NUL → element; elements with intervals apart. */
export interface SetIndex {
  exact: Map<string, NftElement>;
  patterns: NftElement[];
}

export function keyPart(f: Field): string {
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

export function isPlainPart(s: string): boolean {
  return !s.includes("/") && !/^[^:]*\d-\d/.test(s) && !s.includes("*") && !s.includes("{");
}

/** IPv6 addresses are compared by value (`fd00:10::5` = `fd00:10:0:0::5`); IPv4 as written. */
export function canonicalAddr(a: string): string {
  if (!isIPv6(a)) return a;
  const bits = addrBits(a.toLowerCase());
  return bits === undefined ? a.toLowerCase() : `v6:${bits.toString(16)}`;
}

export function canonicalPart(s: string): string {
  // Most keys of kube-proxy's maps (IPv4 addresses, ports, protocol names) are lower-case letters, digits and dots:
  // what the steps below leave as they are, but for a protocol number. (10,000 Services: 30,000 keys per map.)
  if (isPlainWord(s)) return PROTO_NUMBERS[s] ?? s;
  const t = s.replace(/^"|"$/g, "").toLowerCase();
  if (/^0x[0-9a-f]+$/.test(t)) return String(parseInt(t, 16));
  if (isIPv6(t)) return canonicalAddr(t);
  return PROTO_NUMBERS[t] ?? t;
}

/** Only `a-z`, `0-9` and `.`, not empty, not `0x…`: no quotes, upper case, hex or `:` for canonicalPart to handle. */
function isPlainWord(s: string): boolean {
  if (s.length === 0 || (s.charCodeAt(0) === 48 && s.charCodeAt(1) === 120)) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 46)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * What a tracer derives from a parsed table and keeps for the next trace of the same table (a `svc/NAME` question
 * traces a dozen packets through a table of 100,000+ chains): base chains per hook, map indexes.
 */
export const baseChainCache = new WeakMap<NftTable, Map<string, NftChain[]>>();
export const setIndexCache = new WeakMap<NftSet, SetIndex>();
export const addressIndexCache = new WeakMap<NftSet, AddressIndex>();

/** Base chains of a table by hook, each in the order the kernel runs them. */
export function baseChainsByHook(table: NftTable): Map<string, NftChain[]> {
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
