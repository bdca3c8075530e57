/**
 * Address helpers for the analyses: CIDR containment through `ip-cidr` (cached per CIDR string), with a fast path for
 * host addresses (`10.0.0.1`, `10.0.0.1/32`, `fd00::1/128`) that are compared as canonical strings.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import IPCIDR from "ip-cidr";

const cidrCache = new Map<string, Range | null>();

/** true when `s` is an IPv6 address or prefix. */
export function isIPv6(s: string): boolean {
  return s.includes(":");
}

/**
 * Whether `s` is one literal IPv4 or IPv6 address (no prefix length), as ip-cidr validates it.
 * @example isIPAddress("10.0.0.1") // true; isIPAddress(":::::") // false; isIPAddress("10.0.0.0/8") // false
 */
export function isIPAddress(s: string): boolean {
  if (s.includes("/")) return false;
  let v = validCache.get(s);
  if (v === undefined) {
    v = IPCIDR.isValidAddress(s);
    remember(validCache, s, v);
  }
  return v;
}

/** Answers of {@link isIPAddress} (ip-cidr builds an address object to tell). */
const validCache = new Map<string, boolean>();

/**
 * The canonical text of an IPv6 address, RFC 5952 as ip-cidr writes it (lower case, leading zeros dropped, the
 * longest run of zero groups as `::`): `2001:DB8:0:0::10` → `2001:db8::10`, the form iptables-save, nft and the
 * kernel print. IPv4 addresses, and text that is not an address, are returned unchanged.
 * @param s an address.
 * @returns its canonical text.
 */
export function canonicalAddress(s: string): string {
  if (!isIPv6(s) || s.includes("/") || !isIPAddress(s)) return s;
  let c = canonicalCache.get(s);
  if (c === undefined) {
    c = new IPCIDR(`${s}/128`).address.correctForm();
    remember(canonicalCache, s, c);
  }
  return c;
}

/**
 * The address `offset` places into `cidr` (0: its first address), in canonical text; ip-cidr's arithmetic.
 * @param cidr e.g. `10.244.1.0/24`, `fd00:10:244:1::/64`.
 * @param offset a whole number ≥ 0.
 * @returns e.g. `10.244.1.200`, `fd00:10:244:1::c8`; undefined when the CIDR is malformed or holds fewer than
 *   `offset + 1` addresses.
 * @example hostAt("10.244.0.0/24", 200) // "10.244.0.200"; hostAt("10.244.0.0/24", 300) // undefined
 */
export function hostAt(cidr: string, offset: number): string | undefined {
  // the clients of a report are placed at the same few offsets of the same podCIDRs on every node: ip-cidr builds an
  // address object and big-integer arithmetic for each answer, so each (CIDR, offset) is asked of it once
  const key = `${cidr} ${offset}`;
  const known = hostCache.get(key);
  if (known !== undefined) return known === null ? undefined : known;
  let host: string | undefined;
  if (cidr.includes("/") && isAddressOrCIDR(cidr)) {
    const [h] = new IPCIDR(cidr).toArray({ from: offset, limit: 1 });
    host = typeof h === "string" ? canonicalAddress(h) : undefined;
  }
  remember(hostCache, key, host ?? null);
  return host;
}

/** Answers of {@link hostAt} by `CIDR offset` (null: none). */
const hostCache = new Map<string, string | null>();

/**
 * A host address of `cidr` at `offset`, wrapped into the prefix when it holds fewer addresses (a /26 node podCIDR
 * has 64: offset 200 gives its 8th address), and kept off the network address and the last (IPv4 broadcast) of a
 * prefix of 4 addresses or more; a /31, /32 (/127, /128) gives its first address.
 * @param cidr e.g. `10.0.1.0/26`, `fd00:10:244:1::/64`.
 * @param offset a whole number ≥ 0.
 * @returns an address inside `cidr` (canonical text), e.g. `10.0.1.8` for (`10.0.1.0/26`, 200); undefined when the
 *   CIDR is malformed.
 */
export function hostWithin(cidr: string, offset: number): string | undefined {
  if (!cidr.includes("/") || !isAddressOrCIDR(cidr)) return undefined;
  const bits = isIPv6(cidr) ? 128 : 32;
  const prefix = Number(cidr.slice(cidr.indexOf("/") + 1));
  const size = 1n << BigInt(bits - prefix);
  let o = BigInt(offset) % size;
  if (size >= 4n) {
    if (o === 0n) o = 1n;
    if (o === size - 1n) o = size - 2n;
  } else o = 0n;
  return hostAt(cidr, Number(o));
}

/** Answers of {@link canonicalAddress}. */
const canonicalCache = new Map<string, string>();

/**
 * Strips a host-length prefix (`/32` for IPv4, `/128` for IPv6) and returns the address part.
 * @param s an address, with or without prefix.
 * @returns the address when `s` denotes one host, else undefined.
 */
export function hostAddress(s: string): string | undefined {
  const slash = s.indexOf("/");
  if (slash === -1) return s;
  const len = s.slice(slash + 1);
  if ((len === "32" && !isIPv6(s)) || len === "128") return s.slice(0, slash);
  return undefined;
}

/**
 * Whether `address` lies in `cidr` (`cidr` may be a plain address, meaning one host).
 * Addresses of different families never match.
 * @param cidr e.g. `10.244.0.0/16`, `10.96.0.10/32`, `10.96.0.10`, `fd00::/64`.
 * @param address e.g. `10.244.3.38`.
 * @returns true when contained; false when not, or when either is not a valid address (iptables would have
 *   rejected such a rule, so it cannot match).
 */
export function cidrContains(cidr: string, address: string): boolean {
  if (isIPv6(cidr) !== isIPv6(address)) return false;
  const host = hostAddress(cidr);
  if (host !== undefined && !isIPv6(host)) return host === address;
  let c = cidrCache.get(cidr);
  if (c === undefined) {
    const withLen = cidr.includes("/") ? cidr : `${cidr}/${isIPv6(cidr) ? 128 : 32}`;
    c = IPCIDR.isValidCIDR(withLen) ? rangeOf(new IPCIDR(withLen)) : null;
    remember(cidrCache, cidr, c);
  }
  if (c === null) return false;
  const a = addressNumber(address);
  if (a === null) return false;
  if (a === undefined || a.v6 !== c.v6) {
    // an address with a prefix, an IPv4-mapped IPv6 address or families that differ: ip-cidr's own answer
    try {
      return c.cidr.contains(address);
    } catch {
      return false;
    }
  }
  return c.start <= a.n && a.n <= c.end;
}

/**
 * Whether text is an IP address or a CIDR (`10.96.0.10`, `10.0.0.0/8`, `fd00::/64`), as iptables prints `-s`/`-d`.
 * @param s the text.
 * @returns false for anything else (`10.96.0.999/32`, `banana`).
 */
export function isAddressOrCIDR(s: string): boolean {
  if (!s.includes("/")) return isIPAddress(s);
  let c = cidrCache.get(s);
  if (c === undefined) {
    c = IPCIDR.isValidCIDR(s) ? rangeOf(new IPCIDR(s)) : null;
    remember(cidrCache, s, c);
  }
  return c !== null;
}

/** A CIDR as ip-cidr spans it: its first and last address as numbers, and its family. */
interface Range {
  cidr: IPCIDR;
  v6: boolean;
  start: bigint;
  end: bigint;
}

/** An address as ip-cidr reads it (IPv4-mapped IPv6 as IPv4), as a number. */
interface AddressNumber {
  v6: boolean;
  n: bigint;
}

// ip-cidr's contains parses the address and compares bit strings on every call; a trace asks the same CIDRs about
// the same few addresses again and again: each CIDR's range and each address's number are read from ip-cidr once.
const addressCache = new Map<string, AddressNumber | null | undefined>();
const CACHE_MAX = 65536;

function remember<V>(m: Map<string, V>, k: string, v: V): void {
  if (m.size >= CACHE_MAX) m.clear();
  m.set(k, v);
}

function rangeOf(c: IPCIDR): Range {
  return { cidr: c, v6: !c.address.v4, start: c.start({ type: "bigInteger" }) as bigint, end: c.end({ type: "bigInteger" }) as bigint };
}

/**
 * The number of a plain address (null: not an address); undefined for what the fast path leaves to ip-cidr: an
 * address with a prefix, or one whose family ip-cidr reads otherwise than it is written (IPv4-mapped IPv6).
 */
function addressNumber(address: string): AddressNumber | null | undefined {
  if (addressCache.has(address)) return addressCache.get(address);
  let a: AddressNumber | null | undefined;
  if (address.includes("/")) a = undefined;
  else {
    try {
      const parsed = IPCIDR.createAddress(address);
      a = parsed.v4 === isIPv6(address) ? undefined : { v6: !parsed.v4, n: BigInt(parsed.bigInteger()) };
    } catch {
      a = null;
    }
  }
  remember(addressCache, address, a);
  return a;
}

/**
 * Splits `IP:PORT` (IPv4) or `[IP]:PORT` (IPv6) as used in DNAT targets and ipvsadm output.
 * @returns `{ ip, port }`, port undefined when absent.
 */
export function splitHostPort(s: string): { ip: string; port?: number } {
  if (s.startsWith("[")) {
    const close = s.indexOf("]");
    const ip = s.slice(1, close);
    const rest = s.slice(close + 1);
    return rest.startsWith(":") ? { ip, port: Number(rest.slice(1)) } : { ip };
  }
  const colons = s.split(":").length - 1;
  if (colons === 1) {
    const [ip, port] = s.split(":");
    return { ip: ip!, port: Number(port) };
  }
  return { ip: s };
}

/**
 * Formats an endpoint address the way kube-proxy writes it (`10.0.0.1:80`, `[fd00::1]:80`).
 */
export function joinHostPort(ip: string, port: number): string {
  return isIPv6(ip) ? `[${ip}]:${port}` : `${ip}:${port}`;
}
