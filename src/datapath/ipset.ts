/**
 * Parser of `ipset list` output: the sets kube-proxy's IPVS mode matches in iptables (`-m set --match-set
 * KUBE-CLUSTER-IP dst,dst`), with their type, header and members.
 *
 * Layout as printed by ipset(8) v6.x–v7.x (lib/session.c list/`print_set`, the type's `print` functions):
 * ```
 * Name: KUBE-LOOP-BACK
 * Type: hash:ip,port,ip
 * Revision: 5
 * Header: family inet hashsize 1024 maxelem 65536
 * Size in memory: 416
 * References: 1
 * Number of entries: 4
 * Members:
 * 192.168.0.18,udp:53,192.168.0.18
 * ```
 * Sets are separated by a blank line. `Number of entries:` appears from ipset 6.30 on; `ipset list -t` (terse)
 * prints no `Members:` line at all. Member entry forms follow kube-proxy's `Entry.String()`
 * (pkg/proxy/ipvs/ipset, pkg/util/ipset): `ip`, `ip,proto:port`, `ip,proto:port,ip`, `ip,proto:port,net/len`,
 * `port` (bitmap:port), `net[/len]`; each may be followed by ipset's options `timeout N`, `packets N`, `bytes N`,
 * `comment "…"`, `nomatch`, `skbmark …`, `skbprio …`, `skbqueue …`.
 *
 * Every set and member keeps its 1-based line number; lines not understood are kept in the set's `unparsed`.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { DumpParseError } from "./errors.ts";

const FORMAT = "ipset";

/**
 * One member (entry) of a set, as listed under `Members:`. Which fields are set depends on the set type:
 * `hash:ip,port` → `ip`, `proto`, `port`; `hash:ip,port,ip` (KUBE-LOOP-BACK) → plus `ip2`;
 * `hash:ip,port,net` (KUBE-LOAD-BALANCER-SOURCE-CIDR) → plus `net`; `bitmap:port` (KUBE-NODE-PORT-*) → `port`;
 * `hash:net` → `net`. Members of types this parser does not interpret keep only `raw` (and are listed in the set's
 * `unparsed`).
 */
export interface IpsetMember {
  /** The member line as printed, e.g. `10.244.1.6,tcp:80,10.244.1.6`. */
  raw: string;
  /** First IP address (IPv4 or IPv6, as printed; hash:ip with a netmask prints the network address). */
  ip?: string;
  /** Protocol of a `proto:port` part: `tcp`, `udp`, `sctp`, `icmp`, `icmpv6`, … */
  proto?: string;
  /** Port of a `proto:port` part, or the bitmap:port member. */
  port?: number;
  /** ICMP type of an `icmp:TYPE` / `icmpv6:TYPE` part (name such as `echo-request`, or `TYPE/CODE`). */
  icmpType?: string;
  /** Second IP address (hash:ip,port,ip: the source a KUBE-LOOP-BACK hairpin entry matches). */
  ip2?: string;
  /** Network, `10.0.0.0/8`, or a bare address for a host entry (`203.0.113.7`), as printed. */
  net?: string;
  /** `comment "…"` text, without the quotes. */
  comment?: string;
  /** Seconds left before the entry expires (`timeout N`; 0 = permanent in a set with a default timeout). */
  timeout?: number;
  /** Counters of a set created with `counters`. */
  packets?: number;
  bytes?: number;
  /** `nomatch`: the entry is an exception inside a larger net of a hash:net* set. */
  nomatch?: boolean;
  /** Member options this parser does not interpret (`skbmark 0x1`, …), as printed. */
  extra?: string;
  /** 1-based line number. */
  line: number;
}

/** One set of `ipset list`. Absent header lines are `undefined`. */
export interface IpsetSet {
  name: string;
  /** `hash:ip,port`, `hash:ip,port,ip`, `hash:ip,port,net`, `bitmap:port`, `hash:net`, … */
  type: string;
  revision?: number;
  /**
   * The `Header:` line as key → value: `family` (`inet`/`inet6`), `hashsize`, `maxelem`, `bucketsize`, `initval`,
   * `timeout`, `netmask`, `range` (bitmap types, `0-65535`), `size` (list:set), …
   */
  header: Record<string, string>;
  /** Valueless header flags: `comment`, `counters`, `skbinfo`, `forceadd`. */
  headerFlags: string[];
  /** `Size in memory:` in bytes. */
  sizeInMemory?: number;
  /** `References:`: how many iptables rules (or list:set sets) use the set; 0 means nothing matches on it. */
  references?: number;
  /** `Number of entries:` (ipset >= 6.30). */
  numberOfEntries?: number;
  /** false for `ipset list -t` (terse) output, which lists no members. */
  membersListed: boolean;
  members: IpsetMember[];
  /** 1-based line of the `Name:` line. */
  line: number;
  /** Lines of this set that were not understood, with why. */
  unparsed: { line: number; text: string; reason: string }[];
}

const HEADER_FLAGS = new Set(["comment", "counters", "skbinfo", "forceadd"]);
const IPV4 = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(?:\\.(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}";
const IPV6 = "[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*";
const NET_RE = new RegExp(`^(?:${IPV4}(?:/(?:3[0-2]|[12]?\\d))?|${IPV6}(?:/(?:12[0-8]|1[01]\\d|[1-9]?\\d))?)$`);
const INT_RE = /^\d+$/;
/** Dimensions of set types whose members this parser interprets. */
const KNOWN_DIMS = new Set(["ip", "port", "net"]);

/**
 * Parses the output of `ipset list` (all sets, one set, or `-t` terse).
 *
 * @param text the command's standard output. Empty output is valid: `ipset list` prints nothing when no set exists
 *   (an iptables-mode node), and the result is `[]`.
 * @returns the sets in listing order.
 * @throws {DumpParseError} when the input is binary; when its first line is not `Name: …` (not ipset output, or cut
 *   at the start); when a set has no `Type:` line before its members; when a header line is malformed (`Revision:`,
 *   `Size in memory:`, `References:`, `Number of entries:` not numeric); when a member does not have the form of its
 *   set type or an option is cut (`timeout` without a number, an unterminated `comment "…`) — a `Members:` section
 *   cut mid-entry; when fewer members are listed than `Number of entries:` announced; when the last set stops before
 *   `Members:` while the other sets listed theirs.
 * @example
 * ```ts
 * import { parseIpsetList } from "./ipset.ts";
 * const [set] = parseIpsetList("Name: KUBE-CLUSTER-IP\nType: hash:ip,port\nMembers:\n10.96.0.10,udp:53\n");
 * set?.members[0]?.port; // 53
 * ```
 */
export function parseIpsetList(text: string): IpsetSet[] {
  const lines = text.split("\n");
  const sets: IpsetSet[] = [];
  let set: IpsetSet | undefined;
  /** Whether the current set is past its `Members:` line (a blank line ends the section). */
  let inMembers = false;
  /** The current set's `Members:` line, quoted when its member count falls short. */
  let membersAt = { line: 0, raw: "" };
  let lastLine = 0;
  let lastText = "";

  const finish = () => {
    if (!set) return;
    if (set.membersListed && set.numberOfEntries !== undefined && set.members.length < set.numberOfEntries) {
      const lastMember = set.members[set.members.length - 1];
      throw new DumpParseError(
        FORMAT,
        lastMember?.line ?? membersAt.line,
        `set ${set.name}: "Number of entries: ${set.numberOfEntries}" but ${set.members.length} member(s) listed (dump cut?)`,
        lastMember?.raw ?? membersAt.raw,
      );
    }
  };

  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const raw = (lines[i] ?? "").replace(/\r$/, "");
    if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(raw)) {
      throw new DumpParseError(FORMAT, lineNo, "binary data, expected ipset text output", raw);
    }
    const t = raw.trim();
    if (t === "") {
      inMembers = false;
      continue;
    }
    lastLine = lineNo;
    lastText = raw;

    const kv = /^([A-Z][A-Za-z ]*):(?:\s+(.*))?$/.exec(t);
    if (kv && kv[1] === "Name") {
      finish();
      const name = (kv[2] ?? "").trim();
      if (name === "") throw new DumpParseError(FORMAT, lineNo, `"Name:" without a set name`, raw);
      set = {
        name,
        type: "",
        header: {},
        headerFlags: [],
        membersListed: false,
        members: [],
        line: lineNo,
        unparsed: [],
      };
      sets.push(set);
      inMembers = false;
      continue;
    }
    if (!set) {
      throw new DumpParseError(FORMAT, lineNo, `expected "Name: SETNAME" (not ipset list output, or cut at the start)`, raw);
    }
    if (inMembers) {
      set.members.push(parseMember(t, set, lineNo, raw));
      continue;
    }
    if (!kv) {
      set.unparsed.push({ line: lineNo, text: raw, reason: "not an ipset header line" });
      continue;
    }
    const key = kv[1] as string;
    const value = (kv[2] ?? "").trim();
    switch (key) {
      case "Type":
        if (value === "") throw new DumpParseError(FORMAT, lineNo, `"Type:" without a set type`, raw);
        set.type = value;
        break;
      case "Revision":
        set.revision = headerInt(value, key, lineNo, raw);
        break;
      case "Header":
        parseHeader(value, set, lineNo, raw);
        break;
      case "Size in memory":
        set.sizeInMemory = headerInt(value, key, lineNo, raw);
        break;
      case "References":
        set.references = headerInt(value, key, lineNo, raw);
        break;
      case "Number of entries":
        set.numberOfEntries = headerInt(value, key, lineNo, raw);
        break;
      case "Members":
        if (set.type === "") {
          throw new DumpParseError(FORMAT, lineNo, `set ${set.name}: "Members:" before "Type:"`, raw);
        }
        if (value !== "") set.unparsed.push({ line: lineNo, text: raw, reason: "text after \"Members:\"" });
        set.membersListed = true;
        inMembers = true;
        membersAt = { line: lineNo, raw };
        break;
      default:
        set.unparsed.push({ line: lineNo, text: raw, reason: `unknown header line "${key}:"` });
    }
  }
  finish();

  const last = sets[sets.length - 1];
  if (last && last.type === "") {
    throw new DumpParseError(FORMAT, lastLine, `set ${last.name}: listing ends before "Type:" (dump cut?)`, lastText);
  }
  if (last && !last.membersListed && sets.some((s) => s.membersListed)) {
    throw new DumpParseError(FORMAT, lastLine, `set ${last.name}: listing ends before "Members:" (dump cut?)`, lastText);
  }
  return sets;
}

function headerInt(value: string, key: string, lineNo: number, raw: string): number {
  if (!INT_RE.test(value)) throw new DumpParseError(FORMAT, lineNo, `"${key}:" is not a number`, raw);
  return Number(value);
}

/** `family inet hashsize 1024 maxelem 65536 comment bucketsize 12 initval 0x…` → key/values and flags. */
function parseHeader(value: string, set: IpsetSet, lineNo: number, raw: string): void {
  const words = value.split(/\s+/).filter((w) => w !== "");
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    if (HEADER_FLAGS.has(w)) {
      set.headerFlags.push(w);
      continue;
    }
    const v = words[i + 1];
    if (v === undefined) {
      set.unparsed.push({ line: lineNo, text: raw, reason: `header option "${w}" without a value` });
      continue;
    }
    set.header[w] = v;
    i++;
  }
}

/** Parses one member line against the set type's dimensions (`hash:ip,port,net` → ip, port, net). */
function parseMember(t: string, set: IpsetSet, lineNo: number, raw: string): IpsetMember {
  const member: IpsetMember = { raw, line: lineNo };
  const sp = t.search(/\s/);
  const element = sp < 0 ? t : t.slice(0, sp);
  const options = sp < 0 ? "" : t.slice(sp).trim();
  const dims = (set.type.split(":")[1] ?? "").split(",");
  const form = dims.map((d) => (d === "port" && !set.type.startsWith("bitmap:") ? "proto:port" : d)).join(",");
  const bad = (why: string): never => {
    throw new DumpParseError(FORMAT, lineNo, `set ${set.name}: ${why}, expected a ${set.type} member "${form}" (cut mid-entry?)`, raw);
  };

  if (!dims.every((d) => KNOWN_DIMS.has(d))) {
    set.unparsed.push({ line: lineNo, text: raw, reason: `members of type ${set.type} are not interpreted` });
    if (options !== "") parseOptions(options, member, set, lineNo, raw);
    return member;
  }

  const parts = element.split(",");
  if (parts.length !== dims.length) bad(`${parts.length} part(s) in "${element}"`);
  let ipCount = 0;
  dims.forEach((dim, k) => {
    const part = parts[k] as string;
    if (dim === "ip") {
      // hash:ip with a netmask and bitmap:ip list networks as ADDRESS/LEN.
      if (!NET_RE.test(part)) bad(`"${part}" is not an IP address`);
      if (ipCount++ === 0) member.ip = part;
      else member.ip2 = part;
    } else if (dim === "net") {
      if (!NET_RE.test(part)) bad(`"${part}" is not a network`);
      member.net = part;
    } else {
      parsePort(part, member, bad);
    }
  });
  if (options !== "") parseOptions(options, member, set, lineNo, raw);
  return member;
}

function parsePort(part: string, member: IpsetMember, bad: (why: string) => never): void {
  const colon = part.indexOf(":");
  if (colon < 0) {
    // bitmap:port members, and hash:*,port entries of protocol 0 / omitted protocol, are a bare port.
    if (!INT_RE.test(part) || Number(part) > 65535) bad(`"${part}" is not a port`);
    member.port = Number(part);
    return;
  }
  const proto = part.slice(0, colon);
  const port = part.slice(colon + 1);
  if (!/^[a-z][a-z0-9-]*$/.test(proto) || port === "") bad(`"${part}" is not PROTO:PORT`);
  member.proto = proto;
  if (proto === "icmp" || proto === "icmpv6") {
    member.icmpType = port;
    return;
  }
  if (!INT_RE.test(port) || Number(port) > 65535) bad(`"${part}" has no numeric port`);
  member.port = Number(port);
}

/** Member options: `timeout N`, `packets N`, `bytes N`, `comment "…"`, `nomatch`, `skbmark …` (kept in extra). */
function parseOptions(options: string, member: IpsetMember, set: IpsetSet, lineNo: number, raw: string): void {
  const extra: string[] = [];
  let rest = options;
  while (rest !== "") {
    let m: RegExpExecArray | null;
    if ((m = /^comment "([^"]*)"(?:\s+|$)/.exec(rest))) {
      member.comment = m[1];
    } else if (rest.startsWith("comment")) {
      throw new DumpParseError(FORMAT, lineNo, `set ${set.name}: unterminated comment "…" (cut mid-entry?)`, raw);
    } else if ((m = /^(timeout|packets|bytes)(?:\s+(\S+))?(?:\s+|$)/.exec(rest))) {
      const v = m[2];
      if (v === undefined || !INT_RE.test(v)) {
        throw new DumpParseError(FORMAT, lineNo, `set ${set.name}: "${m[1]}" needs a number (cut mid-entry?)`, raw);
      }
      member[m[1] as "timeout" | "packets" | "bytes"] = Number(v);
    } else if ((m = /^nomatch(?:\s+|$)/.exec(rest))) {
      member.nomatch = true;
    } else {
      m = /^\S+(?:\s+|$)/.exec(rest) as RegExpExecArray;
      extra.push(m[0].trim());
    }
    rest = rest.slice(m[0].length);
  }
  if (extra.length > 0) {
    member.extra = extra.join(" ");
    set.unparsed.push({ line: lineNo, text: raw, reason: `member options not interpreted: "${member.extra}"` });
  }
}
