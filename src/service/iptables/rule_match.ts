/**
 * Evaluates one iptables rule's matches against one packet, in three values: the rule matches, does not match, or
 * depends on something a dump cannot show (input/output interface, conntrack `recent` table, physdev). Every "no" and
 * "unknown" carries the reason, so a verdict can say *why* a KUBE-MARK-MASQ rule did not fire.
 *
 * Semantics follow iptables-extensions(8) for the modules kube-proxy and CNIs write: comment, tcp/udp/sctp,
 * multiport, statistic, mark, conntrack, addrtype, set, recent, nfacct, physdev, ipvs (--vaddr, --vport, --vproto).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { IptablesRule, MatchModule, Negatable, RuleOption } from "../../datapath/iptables_save.ts";
import { cidrContains, isAddressOrCIDR } from "../../model/ip.ts";
import { DumpParseError } from "../../datapath/errors.ts";
import type { TracePacket } from "../trace.ts";

/**
 * How an ipset member test is answered (IPVS mode matches `-m set --match-set KUBE-CLUSTER-IP dst,dst`).
 * Returns undefined when the set is unknown (the node's `ipset list` was not read: not collected, failed or unparsable).
 */
export type IpsetMembership = (setName: string, flags: string[], packet: TracePacket) => boolean | undefined;

/**
 * Membership of a set whose contents were not read, taken from what its owner writes into it (kube-proxy's IPVS
 * KUBE-CLUSTER-IP and KUBE-LOOP-BACK, from the API objects: ipvs/kube_proxy_ipsets.ts): the answer and the assumption
 * it rests on (a clause naming the set, that it was not read, and the source of truth), or undefined when the objects
 * do not tell either.
 */
export type AssumedIpsetMembership = (setName: string, flags: string[], packet: TracePacket) => { member: boolean; assumption: string } | undefined;

/** An ipset a match answer rests on though its members were not read: its name and the assumption, in words. */
export interface AssumedSet {
  set: string;
  assumption: string;
}

/**
 * Result of evaluating a rule: `yes`, `no` with the failing condition, or `unknown` with what is missing. `assumed`:
 * the answer rests on an ipset not read, taken as its owner fills it ({@link AssumedIpsetMembership}), said so.
 */
export type MatchResult =
  | { kind: "yes"; assumed?: AssumedSet }
  | { kind: "no"; why: string; assumed?: AssumedSet }
  | { kind: "unknown"; why: string }
  | { kind: "random"; probability: string; assumed?: AssumedSet };

const YES: MatchResult = { kind: "yes" };
/** A "no" whose reason nobody will read (see matchRule's `explain`). */
const NO: MatchResult = { kind: "no", why: "" };

function neg(n: Negatable | RuleOption, ok: boolean): boolean {
  return n.negated ? !ok : ok;
}

function shown(n: { negated: boolean }, text: string): string {
  return (n.negated ? "! " : "") + text;
}

function portIn(spec: string, port: number, rule?: IptablesRule): boolean {
  // "80", "1000:2000", multiport "80,443,8000:8080"
  for (const part of spec.split(",")) {
    const [a, b] = part.split(":");
    const lo = a === "" ? 0 : Number(a);
    const hi = b === undefined ? lo : b === "" ? 65535 : Number(b);
    if (!(Number.isInteger(lo) && Number.isInteger(hi) && lo >= 0 && hi <= 65535 && lo <= hi) && rule) {
      throw new DumpParseError("iptables-save", rule.line, `port "${spec}" is not a port or a range of 0–65535`, rule.raw);
    }
    if (port >= lo && port <= hi) return true;
  }
  return false;
}

/** A `-s`/`-d` that matched nothing because it is no address: the dump's line, not a "does not match" answer. */
function checkCidr(rule: IptablesRule, flag: string, value: string): void {
  if (!isAddressOrCIDR(value)) throw new DumpParseError("iptables-save", rule.line, `${flag} "${value}" is not an address or CIDR`, rule.raw);
}

/** Parsed `VALUE[/MASK]` specs by text: a node's rules use a handful (kube-proxy's 0x4000/0x4000, 0x8000/0x8000). */
const MARK_SPECS = new Map<string, { value: number; mask: number }>();

function parseMarkSpec(spec: string): { value: number; mask: number } {
  let r = MARK_SPECS.get(spec);
  if (!r) {
    const [v, m] = spec.split("/");
    r = { value: Number(v), mask: m === undefined ? 0xffffffff : Number(m) };
    if (MARK_SPECS.size < 1024) MARK_SPECS.set(spec, r);
  }
  return r;
}

/**
 * Evaluates the rule's matches (not its target) against a packet.
 * @param rule the rule.
 * @param p the packet.
 * @param ipsets membership oracle for `-m set`.
 * @param explain whether a `no` needs its reason: false gives a `no` with an empty `why` (a trace keeps the reasons of
 *   masquerade-marking rules only; building the others' text cost it more than the matching).
 * @param assumedIpsets membership of sets `ipsets` does not know (not read), taken as their owner fills them: an
 *   answer from it carries `assumed`.
 * @returns `yes`, `no` (+why), `unknown` (+why), or `random` when everything else matches and the rule carries a
 *   `-m statistic --mode random --probability P` (the caller branches on P).
 * @throws {DumpParseError} naming the rule's line when a `-s`/`-d` it did not match is no address or CIDR, or a port
 *   spec is no port or range: no iptables prints those, and "does not match" would be a confident wrong answer.
 */
export function matchRule(rule: IptablesRule, p: TracePacket, ipsets?: IpsetMembership, explain = true, assumedIpsets?: AssumedIpsetMembership): MatchResult {
  if (rule.protocol) {
    const want = rule.protocol.value.toLowerCase();
    const ok = want === "all" || want === p.proto;
    if (!neg(rule.protocol, ok)) return explain ? { kind: "no", why: `protocol ${p.proto} (rule wants ${shown(rule.protocol, want)})` } : NO;
  }
  if (rule.destination) {
    const ok = cidrContains(rule.destination.value, p.dst);
    if (!ok) checkCidr(rule, "-d", rule.destination.value);
    if (!neg(rule.destination, ok)) {
      return explain ? { kind: "no", why: `destination ${p.dst} ${ok ? "is" : "is not"} in ${rule.destination.value}` } : NO;
    }
  }
  if (rule.source) {
    const ok = cidrContains(rule.source.value, p.src);
    if (!ok) checkCidr(rule, "-s", rule.source.value);
    if (!neg(rule.source, ok)) {
      return explain ? { kind: "no", why: `source ${p.src} ${ok ? "is" : "is not"} in ${rule.source.value}` } : NO;
    }
  }
  for (const [iface, known, flag] of [
    [rule.inInterface, p.inInterface, "-i"],
    [rule.outInterface, p.outInterface, "-o"],
  ] as const) {
    if (!iface) continue;
    if (known === undefined) return { kind: "unknown", why: `depends on the ${flag === "-i" ? "input" : "output"} interface (${shown(iface, `${flag} ${iface.value}`)})` };
    const pat = iface.value;
    const ok = pat.endsWith("+") ? known.startsWith(pat.slice(0, -1)) : known === pat;
    if (!neg(iface, ok)) return explain ? { kind: "no", why: `interface ${known} (rule wants ${shown(iface, pat)})` } : NO;
  }
  if (rule.fragment && rule.fragment.negated === false) return explain ? { kind: "no", why: "packet is not a fragment" } : NO;
  let random: string | undefined;
  let assumed: AssumedSet | undefined;
  for (const m of rule.matches) {
    const r = matchModule(m, p, ipsets, explain, rule, assumedIpsets);
    if (r.kind === "random") random = r.probability;
    else if (r.kind !== "yes") return r;
    else if (r.assumed !== undefined) assumed = r.assumed;
  }
  if (assumed !== undefined) return random !== undefined ? { kind: "random", probability: random, assumed } : { kind: "yes", assumed };
  return random !== undefined ? { kind: "random", probability: random } : YES;
}

function opt(m: MatchModule, name: string): RuleOption | undefined {
  return m.options.find((o) => o.name === name);
}

function matchModule(m: MatchModule, p: TracePacket, ipsets: IpsetMembership | undefined, explain: boolean, rule: IptablesRule, assumedIpsets?: AssumedIpsetMembership): MatchResult {
  switch (m.name) {
    case "comment":
    case "nfacct":
      return YES;
    case "tcp":
    case "udp":
    case "sctp":
    case "udplite": {
      if (m.name !== p.proto) return explain ? { kind: "no", why: `protocol ${p.proto} (rule matches -m ${m.name})` } : NO;
      for (const o of m.options) {
        if (o.name === "dport" || o.name === "destination-port") {
          const ok = portIn(o.values[0] ?? "", p.dport, rule);
          if (!neg(o, ok)) return explain ? { kind: "no", why: `destination port ${p.dport} (rule wants ${shown(o, `--dport ${o.values[0]}`)})` } : NO;
        } else if (o.name === "sport" || o.name === "source-port") {
          const ok = portIn(o.values[0] ?? "", p.sport ?? 40000, rule);
          if (!neg(o, ok)) return explain ? { kind: "no", why: `source port (rule wants ${shown(o, `--sport ${o.values[0]}`)})` } : NO;
        }
      }
      return YES;
    }
    case "multiport": {
      for (const o of m.options) {
        if (o.name === "dports" || o.name === "destination-ports" || o.name === "ports") {
          const ok = portIn(o.values[0] ?? "", p.dport, rule);
          if (!neg(o, ok)) return explain ? { kind: "no", why: `destination port ${p.dport} (rule wants ${shown(o, `--dports ${o.values[0]}`)})` } : NO;
        }
      }
      return YES;
    }
    case "statistic": {
      const mode = opt(m, "mode")?.values[0];
      if (mode === "random") {
        const prob = opt(m, "probability");
        if (!prob || prob.values[0] === undefined) return { kind: "unknown", why: "statistic random without --probability" };
        if (prob.negated) return { kind: "unknown", why: "negated --probability is not modelled" };
        return { kind: "random", probability: prob.values[0] };
      }
      return { kind: "unknown", why: `statistic mode ${mode ?? "?"} depends on packet counts` };
    }
    case "mark": {
      const o = opt(m, "mark");
      if (!o) return YES;
      const { value, mask } = parseMarkSpec(o.values[0] ?? "0");
      const ok = ((p.mark & mask) >>> 0) === (value >>> 0);
      if (!neg(o, ok)) return explain ? { kind: "no", why: `packet mark 0x${p.mark.toString(16)} (rule wants ${shown(o, `--mark ${o.values[0]}`)})` } : NO;
      return YES;
    }
    case "conntrack":
    case "state": {
      const o = opt(m, "ctstate") ?? opt(m, "state");
      if (!o) {
        return m.options.length === 0 ? YES : { kind: "unknown", why: `conntrack match ${m.options.map((x) => "--" + x.name).join(" ")}` };
      }
      const states = (o.values[0] ?? "").split(",");
      const ok = states.some((s) => p.ctstate.has(s));
      if (!neg(o, ok)) return explain ? { kind: "no", why: `connection state ${[...p.ctstate].join(",")} (rule wants ${shown(o, `--ctstate ${o.values[0]}`)})` } : NO;
      return YES;
    }
    case "addrtype": {
      for (const o of m.options) {
        const type = o.values[0];
        if (o.name !== "dst-type" && o.name !== "src-type") continue;
        const isLocal = o.name === "dst-type" ? p.dstLocal : p.srcLocal;
        if (type !== "LOCAL") return { kind: "unknown", why: `addrtype ${o.name} ${type} is not modelled` };
        if (o.name === "dst-type" && p.dstLocalUnknown && !p.dstLocal) {
          return { kind: "unknown", why: `depends on whether ${p.dst} is a local address of the node (not collected: the node's \`ip -o addr\`)` };
        }
        if (!neg(o, isLocal)) {
          const who = o.name === "dst-type" ? `destination ${p.dst}` : `source ${p.src}`;
          return explain ? { kind: "no", why: `${who} is ${isLocal ? "" : "not "}a local address of the node (rule wants ${shown(o, `--${o.name} LOCAL`)})` } : NO;
        }
      }
      return YES;
    }
    case "set": {
      const o = opt(m, "match-set");
      if (!o) return YES;
      const [name, flags] = o.values;
      let member = ipsets?.(name ?? "", (flags ?? "").split(","), p);
      let assumed: AssumedSet | undefined;
      if (member === undefined && assumedIpsets) {
        const a = assumedIpsets(name ?? "", (flags ?? "").split(","), p);
        if (a) [member, assumed] = [a.member, { set: name ?? "", assumption: a.assumption }];
      }
      // no oracle: the node's `ipset list` was not read; an oracle that does not know the set: the list read lacks it
      if (member === undefined) return { kind: "unknown", why: `membership in ipset ${name} (${ipsets ? "not in the node's `ipset list` as collected" : "the node's `ipset list` was not read"})` };
      if (!neg(o, member)) {
        const why = `${member ? "in" : "not in"} ipset ${name} ${flags} (rule wants ${shown(o, `--match-set ${name} ${flags}`)})`;
        return assumed !== undefined ? { kind: "no", why, assumed } : explain ? { kind: "no", why } : NO;
      }
      return assumed !== undefined ? { kind: "yes", assumed } : YES;
    }
    case "recent": {
      if (m.options.some((o) => o.name === "set")) return YES; // --set records and matches
      if (m.options.some((o) => o.name === "rcheck" || o.name === "update")) {
        const name = opt(m, "name")?.values[0] ?? "DEFAULT";
        const secs = opt(m, "seconds")?.values[0];
        return explain ? { kind: "no", why: `session affinity: a new client is not yet in the recent list ${name}${secs ? ` (entries last ${secs} s)` : ""}` } : NO;
      }
      return { kind: "unknown", why: "recent match is not modelled" };
    }
    case "ipvs": {
      // kube-proxy's KUBE-IPVS-OUT-FILTER: `-m ipvs --vaddr IP --vproto P --vport N`, the IPVS virtual service the
      // packet's connection belongs to; a packet IPVS did not take belongs to none
      const v = p.ipvsVirtual;
      for (const o of m.options) {
        let ok: boolean;
        if (o.name === "vaddr") ok = v !== undefined && cidrContains(o.values[0] ?? "", v.ip);
        else if (o.name === "vport") ok = v !== undefined && Number(o.values[0]) === v.port;
        else if (o.name === "vproto") ok = ["6", "tcp"].includes((o.values[0] ?? "").toLowerCase()) ? p.proto === "tcp" : ["17", "udp"].includes((o.values[0] ?? "").toLowerCase()) ? p.proto === "udp" : ["132", "sctp"].includes((o.values[0] ?? "").toLowerCase()) && p.proto === "sctp";
        else return { kind: "unknown", why: `ipvs match --${o.name} is not modelled` };
        if (!neg(o, ok)) return explain ? { kind: "no", why: `${v ? `IPVS virtual service ${v.ip}:${v.port}/${p.proto}` : "not an IPVS connection"} (rule wants ${shown(o, `--${o.name} ${o.values[0]}`)})` } : NO;
      }
      return YES;
    }
    case "physdev":
      return { kind: "unknown", why: "depends on the bridge port (physdev)" };
    case "icmp":
    case "icmp6":
    case "icmpv6":
      return explain ? { kind: "no", why: `protocol ${p.proto} is not ICMP` } : NO;
    default:
      return { kind: "unknown", why: `match module "${m.name}" is not modelled` };
  }
}
