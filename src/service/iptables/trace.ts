/**
 * The packet tracer: follows one new connection through a node's iptables dump the way the kernel does, as
 * kube-proxy's own tests do (pkg/proxy/iptables/proxier_test.go, tracePacket), but exact about probabilities.
 *
 * Path modelled, for the first packet of a connection:
 * 1. nat PREROUTING (client from the network / a pod) or nat OUTPUT (host-network process), starting at the builtin
 *    chain when it jumps to KUBE-SERVICES, else at KUBE-SERVICES (kube-proxy's restore buffers omit builtin jumps).
 *    KUBE-MARK-MASQ / MARK set the mark and continue; a `--probability` jump branches (taken with the kernel's
 *    probability, else the chain continues); DNAT, ACCEPT, DROP and REJECT end the table; RETURN and the end of a user
 *    chain go back to the caller.
 * 2. filter: only kube-proxy's and kubelet's chains (KUBE-PROXY-FIREWALL, KUBE-EXTERNAL-SERVICES, KUBE-SERVICES,
 *    KUBE-NODEPORTS, KUBE-FORWARD, KUBE-FIREWALL), hooked as kube-proxy hooks them, evaluated on the packet after DNAT:
 *    they decide "has no endpoints" REJECT, "has no local endpoints" DROP and loadBalancerSourceRanges DROP.
 *    Other components' filter rules are not evaluated (said in the notes).
 * 3. nat POSTROUTING (from the builtin chain when it jumps to KUBE-POSTROUTING, else KUBE-POSTROUTING): MASQUERADE or
 *    SNAT on the way out decides whether the endpoint sees the client's address.
 *
 * What a dump cannot show is reported, not guessed: conntrack state (existing connections keep their endpoint; UDP ones of endpoints kube-proxy stops using are deleted),
 * `-m recent` session-affinity entries (a returning client is not modelled), interface-dependent rules.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { DumpParseError } from "../../datapath/errors.ts";
import { isIPAddress } from "../../model/ip.ts";
import type { IptablesChain, IptablesDump, IptablesRule } from "../../datapath/iptables_save.ts";
import { findTargetOption } from "../../datapath/iptables_save.ts";
import { kernelProbability } from "./probability.ts";
import type { RuleCheck, RuleRef, ShortCircuitCheck, TraceOutcome, TracePacket, TraceResult, UndecidedFate } from "../trace.ts";
import { type AssumedIpsetMembership, type IpsetMembership, matchRule } from "./rule_match.ts";

/** Options of {@link traceIptables}. */
export interface TraceOptions {
  /** ipset membership for `-m set` (IPVS mode). */
  ipsets?: IpsetMembership;
  /**
   * Membership of the sets `ipsets` does not know (`ipset list` not read), taken as kube-proxy fills them: the rules
   * that read them are answered, with the assumption as a caveat and on the masquerade check.
   */
  assumedIpsets?: AssumedIpsetMembership;
  /**
   * The mark bit KUBE-MARK-MASQ sets. @default the dump's (see {@link masqueradeMarkOf}), else 0x4000 (kube-proxy's
   * masqueradeBit default 14)
   */
  masqueradeMark?: number;
  /** Maximum outcomes before the tracer gives up (protects against pathological dumps). @default 10000 */
  maxOutcomes?: number;
  /**
   * IPVS: the real servers a packet to `dst:dport/proto` is sent to, with probabilities, when `dst:dport` is an IPVS
   * virtual server (IPVS translates after nat PREROUTING/OUTPUT, at LOCAL_IN). Undefined when it is not one.
   */
  ipvsDispatch?: (packet: TracePacket) => { dnatTo: string; probability: number; fixed: boolean; caveat?: string }[] | undefined;
  /**
   * Reuse the filter and POSTROUTING part of one branch for another whose packet differs only in its destination
   * address and port (the endpoints of one ServicePort), when no rule those chains reach reads the destination: the
   * outcomes are the same as computing every branch. @default true (false computes every branch, for comparison)
   */
  reusePostNat?: boolean;
  /**
   * Whether an address is the node's own (see TraceContext): a packet from PREROUTING translated to one is delivered
   * locally (filter INPUT) and never meets nat POSTROUTING. Absent: translated destinations are taken as not local.
   */
  isLocalAddress?: (ip: string) => boolean;
}

/** Thrown when a dump makes the tracer loop (a chain that jumps to itself) or explode. */
export class TraceError extends Error {
  override name = "TraceError";
}

interface State {
  probability: number;
  packet: TracePacket;
  path: RuleRef[];
  checks: RuleCheck[];
  caveats: string[];
  /** Rules that would change the path, whose match is not known: assumed not to match (TraceOutcome assumedNotMatched). */
  assumed?: RuleRef[];
  /** Carries kubelet's drop mark that no KUBE-FIREWALL acts on where the packet goes (TraceOutcome markedForDrop). */
  markedForDrop?: TraceOutcome["markedForDrop"];
  /** The fate rests on a fact not collected (TraceOutcome undecided). */
  undecided?: TraceOutcome["undecided"];
  /** The raw-table rule that untracked the packet (TraceOutcome untrackedBy): nat, kube-proxy's DNAT, is skipped. */
  untrackedBy?: RuleRef;
  /** ipsets whose members were not read, answered as kube-proxy fills them (TraceOutcome assumedIpsets). */
  assumedIpsets?: string[];
  /** externalTrafficPolicy Local short-circuit rules met, taken or not (TraceOutcome shortCircuits). */
  shortCircuits?: ShortCircuitCheck[];
}

interface Ended extends State {
  how: "return" | "dnat" | "accept" | "drop" | "reject" | "masquerade" | "snat" | "policy-end" | "missing";
  missingChain?: string;
  dnatTo?: string;
  decidedBy?: RuleRef;
}

/** IPVS mode's nat chain of NodePorts (iptables mode's is KUBE-NODEPORTS): pkg/proxy/ipvs/proxier.go kubeNodePortChain. */
const IPVS_NODE_PORT_CHAIN = "KUBE-NODE-PORT";

const TERMINAL_NAT = new Set(["DNAT", "ACCEPT", "DROP", "REJECT", "MASQUERADE", "SNAT", "REDIRECT"]);
/** Extension targets that do not end the chain; any other unknown name is a user chain missing from the dump. */
const NON_TERMINAL_TARGETS = new Set([
  "LOG", "NFLOG", "ULOG", "CHECKSUM", "CONNMARK", "NOTRACK", "CT", "TCPMSS", "TOS", "DSCP", "CLASSIFY", "AUDIT",
  "TRACE", "SET", "TTL", "HL", "NFQUEUE", "TEE", "CONNSECMARK", "SECMARK", "IDLETIMER", "LED", "RATEEST", "SYNPROXY",
]);
/**
 * kube-proxy's default masquerade mark, 1 << 14 (--iptables-masquerade-bit / iptables.masqueradeBit default 14;
 * pkg/proxy/iptables/proxier.go NewProxier: `masqueradeValue := 1 << uint(masqueradeBit)`), used when the dump shows
 * neither KUBE-MARK-MASQ nor KUBE-POSTROUTING.
 */
const DEFAULT_MASQUERADE_MARK = 0x4000;
/**
 * kubelet's default drop mark, 1 << 15 (--iptables-drop-bit default 15; pkg/kubelet/kubelet_network_linux.go
 * syncIPTablesRules, before v1.28 when IPTablesOwnershipCleanup removed KUBE-MARK-DROP), used only for a nat-only
 * listing that jumps to KUBE-MARK-DROP without showing the chain.
 */
const DEFAULT_DROP_MARK = 0x8000;

/** The mark bits a `-m mark --mark VALUE[/MASK]` spec tests, when it tests set bits (`X/X` or `X`); else undefined. */
function markBitsOf(spec: string | undefined): number | undefined {
  if (spec === undefined) return undefined;
  const [v, m] = spec.split("/");
  const value = Number(v);
  const mask = m === undefined ? 0xffffffff : Number(m);
  if (!Number.isInteger(value) || !Number.isInteger(mask) || value === 0 || (value & mask) >>> 0 !== value >>> 0) return undefined;
  return value >>> 0;
}

/** The `--mark` option of a rule's `-m mark` match, with its negation. */
function markMatchOf(rule: IptablesRule): { bits: number; negated: boolean } | undefined {
  for (const m of rule.matches) {
    if (m.name !== "mark") continue;
    const o = m.options.find((x) => x.name === "mark");
    const bits = markBitsOf(o?.values[0]);
    if (o && bits !== undefined) return { bits, negated: o.negated };
  }
  return undefined;
}

/** The rules of a chain, or none when one cannot be tokenised (the trace reports that rule when it reaches it). */
function rulesOf(chain: IptablesChain | undefined): IptablesRule[] {
  if (!chain) return [];
  try {
    return chain.rules;
  } catch (e) {
    if (e instanceof DumpParseError) return [];
    throw e;
  }
}

/**
 * The mark kube-proxy sets to have a packet masqueraded, as the dump writes it: the bits nat KUBE-MARK-MASQ's MARK
 * rule sets (kube-proxy writes `-j MARK --or-mark MARK`, saved `--set-xmark MARK/MARK`), else the bits KUBE-POSTROUTING
 * tests (`-m mark ! --mark MARK/MARK -j RETURN` since v1.20, `-m mark --mark MARK/MARK -j MASQUERADE` before).
 * kube-proxy makes MARK as `1 << masqueradeBit` (pkg/proxy/iptables/proxier.go NewProxier, syncProxyRules; ipvs
 * likewise), so any --iptables-masquerade-bit / iptables.masqueradeBit is read from the node, not assumed.
 * @param dump a node's parsed iptables rules (a whole iptables-save or a partial listing).
 * @returns the mark (one bit, e.g. 0x4000 for bit 14), or undefined when neither chain shows it.
 */
export function masqueradeMarkOf(dump: IptablesDump): number | undefined {
  const nat = dump.tables.get("nat");
  for (const r of rulesOf(nat?.chains.get("KUBE-MARK-MASQ"))) {
    if (r.target !== "MARK" || r.targetOptions.some((o) => o.name === "xor-mark" || o.name === "and-mark")) continue;
    const m = applyMark(r, 0);
    if (m !== 0) return m;
  }
  for (const r of rulesOf(nat?.chains.get("KUBE-POSTROUTING"))) {
    const mm = markMatchOf(r);
    if (mm && ((mm.negated && r.target === "RETURN") || (!mm.negated && (r.target === "MASQUERADE" || r.target === "SNAT")))) return mm.bits;
  }
  return undefined;
}

/**
 * The mark a packet is dropped for, as the dump shows it: kubelet's filter KUBE-FIREWALL
 * `-m mark --mark DROP/DROP -j DROP` (kubelet before v1.28, pkg/kubelet/kubelet_network_linux.go syncIPTablesRules /
 * syncIPTablesRulesDeprecated, DROP = 1 << --iptables-drop-bit), the mark nat KUBE-MARK-DROP sets. Since v1.28
 * (IPTablesOwnershipCleanup GA) kubelet writes neither: KUBE-FIREWALL holds only the localnet rule, and no mark is a
 * drop mark. Without a filter table (a nat-only listing), the mark the nat KUBE-MARK-DROP chain sets, else kubelet's
 * default 0x8000 when it is not the masquerade mark.
 */
function dropMarkOf(t: Tracer): number | undefined {
  return t.once("drop mark", () => {
    if (t.hasTable("filter")) {
      for (const r of rulesOf(t.chain("filter", "KUBE-FIREWALL"))) {
        const mm = markMatchOf(r);
        if (r.target === "DROP" && mm && !mm.negated) return mm.bits;
      }
      return undefined;
    }
    const chain = t.chain("nat", "KUBE-MARK-DROP");
    if (chain) {
      for (const r of rulesOf(chain)) if (r.target === "MARK" && applyMark(r, 0) !== 0) return applyMark(r, 0);
      return undefined;
    }
    return DEFAULT_DROP_MARK === t.masqueradeMark ? undefined : DEFAULT_DROP_MARK;
  });
}
const FILTER_CHAINS_BY_HOOK: Record<"INPUT" | "FORWARD" | "OUTPUT", string[]> = {
  // Order as kube-proxy (pkg/proxy/iptables/proxier.go, iptablesJumpChains) and kubelet insert their jumps; IPVS mode
  // (pkg/proxy/ipvs/proxier.go, iptablesJumpChain, v1.27+) prepends KUBE-IPVS-FILTER, KUBE-PROXY-FIREWALL and its
  // filter KUBE-NODE-PORT (health check node ports) to INPUT, and KUBE-IPVS-OUT-FILTER to OUTPUT.
  INPUT: ["KUBE-IPVS-FILTER", "KUBE-PROXY-FIREWALL", "KUBE-NODE-PORT", "KUBE-NODEPORTS", "KUBE-EXTERNAL-SERVICES", "KUBE-FIREWALL"],
  FORWARD: ["KUBE-PROXY-FIREWALL", "KUBE-FORWARD", "KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES"],
  OUTPUT: ["KUBE-IPVS-OUT-FILTER", "KUBE-PROXY-FIREWALL", "KUBE-SERVICES", "KUBE-FIREWALL"],
};

/** The filter chains of kube-proxy and kubelet a builtin hook may jump to (other components' chains are not traced). */
const KUBE_FILTER_CHAINS = new Set(Object.values(FILTER_CHAINS_BY_HOOK).flat());

/**
 * The kube-proxy/kubelet filter chains a hook traverses, in order: first as the dump's builtin chain jumps to them
 * (the order a node really has: kube-proxy prepends its jumps), then, in the releases' order above, those the dump
 * holds without a jump from the builtin chain (kube-proxy's own test dumps and partial listings declare the builtin
 * chains empty).
 */
function kubeFilterChains(t: Tracer, hook: "INPUT" | "FORWARD" | "OUTPUT"): string[] {
  return t.once(`filter chains ${hook}`, () => listKubeFilterChains(t, hook));
}

function listKubeFilterChains(t: Tracer, hook: "INPUT" | "FORWARD" | "OUTPUT"): string[] {
  const out: string[] = [];
  for (const r of t.chain("filter", hook)?.rawRules ?? []) {
    const m = /-j (KUBE-[A-Z0-9-]+)(\s|$)/.exec(r);
    if (m && KUBE_FILTER_CHAINS.has(m[1]!) && !out.includes(m[1]!)) out.push(m[1]!);
  }
  for (const c of FILTER_CHAINS_BY_HOOK[hook]) if (!out.includes(c)) out.push(c);
  return out;
}

/**
 * Converts a parsed rule to its evidence reference.
 */
export function ruleRef(r: IptablesRule): RuleRef {
  return { table: r.table, chain: r.chain, line: r.line, raw: r.raw };
}

function clonePacket(p: TracePacket): TracePacket {
  return { ...p, ctstate: new Set(p.ctstate) };
}

function applyMark(rule: IptablesRule, mark: number): number {
  for (const o of rule.targetOptions) {
    const v = o.values[0] ?? "0";
    const [a, b] = v.split("/");
    const value = Number(a);
    switch (o.name) {
      case "set-xmark": {
        const mask = b === undefined ? 0xffffffff : Number(b);
        return ((mark & ~mask) ^ value) >>> 0;
      }
      case "set-mark": {
        const mask = b === undefined ? 0xffffffff : Number(b);
        return ((mark & ~mask) | value) >>> 0;
      }
      case "or-mark":
        return (mark | value) >>> 0;
      case "xor-mark":
        return (mark ^ value) >>> 0;
      case "and-mark":
        return (mark & value) >>> 0;
    }
  }
  return mark;
}

class Tracer {
  private steps = 0;
  /** Answers that depend on the dump alone, asked once per trace branch: computed once per trace. */
  private readonly memo = new Map<string, unknown>();

  once<T>(key: string, compute: () => T): T {
    if (this.memo.has(key)) return this.memo.get(key) as T;
    const v = compute();
    this.memo.set(key, v);
    return v;
  }

  get masqueradeMark(): number {
    return this.opts.masqueradeMark;
  }

  constructor(
    private readonly dump: IptablesDump,
    private readonly opts: Required<Pick<TraceOptions, "masqueradeMark" | "maxOutcomes">> & TraceOptions,
  ) {}

  chain(table: string, name: string): IptablesChain | undefined {
    return this.dump.tables.get(table)?.chains.get(name);
  }

  /** Runs `states` through chain `name`; returns ended states (returned ones have how = "return"/"policy-end"). */
  run(table: string, name: string, states: State[], depth: number): Ended[] {
    if (depth > 64) throw new TraceError(`iptables chain nesting deeper than 64 at ${table}/${name} (a loop?)`);
    const chain = this.chain(table, name);
    const ended: Ended[] = [];
    if (!chain) return states.map((s) => ({ ...s, how: "return" }));
    let live = states;
    for (const index of this.candidates(chain, live)) {
      if (live.length === 0) break;
      const rule = chain.rule(index);
      const next: State[] = [];
      const marks = this.isMasqueradeMarking(table, rule);
      // a MASQUERADE or SNAT whose match cannot be told (an ipset not read, the output interface) decides masquerade
      // as much as a marking rule: recorded as an unknown check, so the answer names it (client_verdict.ts)
      const snats = table === "nat" && (rule.target === "MASQUERADE" || rule.target === "SNAT");
      const short = table === "nat" ? shortCircuitOf(rule) : undefined;
      for (const s of live) {
        if (++this.steps > this.opts.maxOutcomes * 1000) throw new TraceError("trace too large: the dump branches too much");
        // the words of a miss are worked out only for the rules whose miss a verdict names: marking rules and
        // externalTrafficPolicy Local short-circuits
        const r = matchRule(rule, s.packet, this.opts.ipsets, marks || short !== undefined, this.opts.assumedIpsets);
        if (r.kind !== "unknown" && r.assumed !== undefined) {
          s.caveats = [...s.caveats, `line ${rule.line} (${rule.chain}) reads ${r.assumed.assumption}`];
          if (!s.assumedIpsets?.includes(r.assumed.set)) s.assumedIpsets = [...(s.assumedIpsets ?? []), r.assumed.set];
        }
        if (r.kind === "no" || r.kind === "unknown") {
          if (marks) s.checks = [...s.checks, { rule: ruleRef(rule), matched: r.kind === "no" ? false : "unknown", why: r.why, ...(r.kind === "no" && r.assumed !== undefined ? { assumed: r.assumed.assumption } : {}) }];
          else if (snats && r.kind === "unknown") s.checks = [...s.checks, { rule: ruleRef(rule), matched: "unknown", why: r.why, snat: true }];
          if (short) s.shortCircuits = [...(s.shortCircuits ?? []), { rule: ruleRef(rule), ...short, matched: r.kind === "no" ? false : "unknown", why: r.why }];
          if (r.kind === "unknown" && rule.target !== undefined && !rule.target.startsWith("KUBE-MARK-")) {
            s.caveats = [...s.caveats, `line ${rule.line} (${rule.chain} -j ${rule.target}) ${r.why}; assumed not to match`];
            if (!marks && !snats) s.assumed = [...(s.assumed ?? []), ruleRef(rule)];
          } else if (r.kind === "unknown" && marks) {
            s.caveats = [...s.caveats, `line ${rule.line} (${rule.chain}) ${r.why}; assumed not to match`];
          }
          next.push(s);
          continue;
        }
        let taken = s;
        if (r.kind === "random") {
          const p = probabilityOf(r.probability, rule);
          if (p < 1) {
            next.push({ ...s, probability: s.probability * (1 - p) });
          }
          if (p === 0) continue;
          taken = { ...s, probability: s.probability * p };
        }
        if (marks) taken = { ...taken, checks: [...taken.checks, { rule: ruleRef(rule), matched: true, ...(r.assumed !== undefined ? { assumed: r.assumed.assumption } : {}) }] };
        if (short) taken = { ...taken, shortCircuits: [...(taken.shortCircuits ?? []), { rule: ruleRef(rule), ...short, matched: true }] };
        if (rule.target === "RETURN" && table === "nat") {
          // a RETURN that skips the chain's marking rule decides masquerade as much as that rule's own match (IPVS
          // mode's KUBE-NODE-PORT: `KUBE-NODE-PORT-LOCAL-TCP dst -j RETURN` before `-j KUBE-MARK-MASQ`): say so
          const later = this.laterMarking(chain, index);
          if (later) taken = { ...taken, checks: [...taken.checks, { rule: ruleRef(later), matched: false, why: `not reached: line ${rule.line} returns before it (${rule.raw.replace(/^-A \S+ /, "")})`, bypassedBy: ruleRef(rule) }] };
        }
        const res = this.take(table, rule, taken, depth);
        for (const e of res.cont) next.push(e);
        if (res.ended.length > 0 && table === "nat" && rule.target !== undefined && !TERMINAL_NAT.has(rule.target) && this.chain(table, rule.target)) {
          // a jump into a chain that translates the packet skips this chain's later marking rule just as a RETURN
          // does: kube-proxy's external chain of externalTrafficPolicy Local sends pods on with `-s CLUSTER-CIDR
          // "pod traffic for … external destinations" -j KUBE-SVC-…` before `"masquerade LOCAL traffic …"
          // -j KUBE-MARK-MASQ` (pkg/proxy/iptables/proxier.go syncProxyRules, the external chain, v1.24+; KUBE-XLB
          // before): that jump, not a rule of KUBE-SVC, decides that the pod is not masqueraded
          const later = this.laterMarking(chain, index);
          if (later) {
            const check: RuleCheck = { rule: ruleRef(later), matched: false, why: `not reached: line ${rule.line} jumps to ${rule.target}, which translates the packet (DNAT) before it returns (${rule.raw.replace(/^-A \S+ /, "")})`, bypassedBy: ruleRef(rule) };
            for (const e of res.ended) if (e.how === "dnat") e.checks = [...e.checks, check];
          }
        }
        for (const e of res.ended) ended.push(e);
      }
      live = next;
      if (ended.length + live.length > this.opts.maxOutcomes) throw new TraceError("trace has too many outcomes");
    }
    for (const s of live) {
      const drop = chain.incomplete !== undefined ? dropMarkOf(this) : undefined;
      if (chain.incomplete !== undefined && (drop === undefined || (s.packet.mark & drop) === 0)) {
        // The dump shows only part of this chain: a packet reaching its end might have matched a rule not shown.
        ended.push({ ...s, how: "missing", missingChain: `the rest of ${chain.name}`, caveats: [...s.caveats, `${chain.name} is shown incompletely (${chain.incomplete})`] });
      } else {
        ended.push({ ...s, how: chain.policy !== undefined ? "policy-end" : "return" });
      }
    }
    return ended;
  }

  /**
   * Rule indexes worth evaluating, in order. In a long chain (KUBE-SERVICES holds a rule per Service port,
   * KUBE-NODEPORTS one per NodePort) a rule whose only destination is one host address (`-d 10.96.0.10/32`), or,
   * without one, one destination port (`--dport 30080`), cannot match a packet to another address or port, so it is
   * skipped without being tokenised; the raw text gives the address or port. Order, and so first-match semantics, is
   * kept.
   */
  private candidates(chain: IptablesChain, live: State[]): Iterable<number> {
    const n = chain.ruleCount;
    if (n < 64) return range(n);
    let idx = DESTINATION_INDEXES.get(chain);
    if (!idx) {
      idx = indexByDestination(chain);
      DESTINATION_INDEXES.set(chain, idx);
    }
    const lists = [idx.other];
    for (const d of new Set(live.map((s) => s.packet.dst))) lists.push(idx.byHost.get(d) ?? []);
    for (const p of new Set(live.map((s) => s.packet.dport))) lists.push(idx.byPort.get(p) ?? []);
    return mergeSorted(lists);
  }

  /**
   * The first masquerade-marking rule after rule `index` of a short nat chain (at most 64 rules: kube-proxy's per-Service
   * chains, not KUBE-SERVICES) that selects no destination (a rule with `-d` or `--dport` is about another Service's
   * address); undefined when there is none.
   */
  private laterMarking(chain: IptablesChain, index: number): IptablesRule | undefined {
    if (chain.ruleCount > 64) return undefined;
    return this.once(`later marking ${chain.name} ${index}`, () => {
      for (let j = index + 1; j < chain.ruleCount; j++) {
        const raw = chain.rawRules[j]!;
        const later = chain.rule(j);
        if (!this.isMasqueradeMarking("nat", later)) continue;
        if (later.destination !== undefined || destinationPort(raw) !== undefined) continue;
        return later;
      }
      return undefined;
    });
  }

  private isMasqueradeMarking(table: string, rule: IptablesRule): boolean {
    if (table !== "nat" || rule.target === undefined) return false;
    if (rule.target === "KUBE-MARK-MASQ") return true;
    if (rule.target === "MARK" && rule.chain !== "KUBE-MARK-MASQ" && rule.chain !== "KUBE-POSTROUTING") {
      if (rule.targetOptions.some((o) => o.name === "xor-mark" || o.name === "and-mark")) return false;
      const m = applyMark(rule, 0);
      return (m & this.opts.masqueradeMark) !== 0;
    }
    return false;
  }

  /** Applies a matched rule's target. */
  private take(table: string, rule: IptablesRule, s: State, depth: number): { cont: State[]; ended: Ended[] } {
    const ref = ruleRef(rule);
    const target = rule.target;
    if (target === undefined) return { cont: [s], ended: [] };
    if (target === "MARK") {
      const p = clonePacket(s.packet);
      p.mark = applyMark(rule, p.mark);
      return { cont: [{ ...s, packet: p, path: [...s.path, ref] }], ended: [] };
    }
    if (target === "RETURN") return { cont: [], ended: [{ ...s, path: [...s.path, ref], how: "return" }] };
    if (TERMINAL_NAT.has(target)) {
      const path = [...s.path, ref];
      switch (target) {
        case "DNAT": {
          const to = findTargetOption(rule, "to-destination")?.values[0];
          if (to !== undefined) checkDnatTarget(to, rule);
          return { cont: [], ended: [{ ...s, path, how: "dnat", dnatTo: to, decidedBy: ref }] };
        }
        case "ACCEPT":
          return { cont: [], ended: [{ ...s, path, how: "accept", decidedBy: ref }] };
        case "DROP":
          return { cont: [], ended: [{ ...s, path, how: "drop", decidedBy: ref }] };
        case "REJECT":
          return { cont: [], ended: [{ ...s, path, how: "reject", decidedBy: ref }] };
        case "MASQUERADE":
          return { cont: [], ended: [{ ...s, path, how: "masquerade", decidedBy: ref }] };
        case "SNAT":
          return { cont: [], ended: [{ ...s, path, how: "snat", decidedBy: ref }] };
        default:
          return { cont: [], ended: [{ ...s, path, how: "accept", decidedBy: ref }] };
      }
    }
    const sub = this.chain(table, target);
    if (!sub) {
      if (NON_TERMINAL_TARGETS.has(target)) {
        // An extension target that does not end the chain (LOG, CHECKSUM, CONNMARK, NOTRACK, …).
        return { cont: [{ ...s, path: [...s.path, ref] }], ended: [] };
      }
      if (target === "KUBE-MARK-DROP") {
        // Pre-1.25 layouts: kubelet's KUBE-MARK-DROP sets its drop mark and filter KUBE-FIREWALL drops it; the chain
        // is not in this (partial) dump, so the mark is KUBE-FIREWALL's, else kubelet's default.
        const drop = dropMarkOf(this) ?? DEFAULT_DROP_MARK;
        const p = clonePacket(s.packet);
        p.mark = (p.mark | drop) >>> 0;
        const caveats = this.chain("filter", "KUBE-FIREWALL") ? s.caveats : [...s.caveats, `chain KUBE-MARK-DROP is not in the dump: assumed to set ${hex(drop)}, kubelet's --iptables-drop-bit 15 default`];
        return { cont: [{ ...s, packet: p, path: [...s.path, ref], caveats }], ended: [] };
      }
      if (table === "nat" && target === IPVS_NODE_PORT_CHAIN) {
        const st = this.ipvsNodePortAsWritten(rule, { ...s, path: [...s.path, ref] });
        return rule.goto ? { cont: [], ended: [{ ...st, how: "return" }] } : { cont: [st], ended: [] };
      }
      return { cont: [], ended: [{ ...s, path: [...s.path, ref], how: "missing", missingChain: target, decidedBy: ref }] };
    }
    const results = this.run(table, target, [{ ...s, path: [...s.path, ref] }], depth + 1);
    const cont: State[] = [];
    const ended: Ended[] = [];
    for (const e of results) {
      if (e.how === "return" || e.how === "policy-end") {
        const { how: _how, ...st } = e;
        if (rule.goto) ended.push({ ...st, how: "return" });
        else cont.push(st);
      } else {
        ended.push(e);
      }
    }
    return { cont, ended };
  }

  private jumpsTo(chain: IptablesChain, target: string): boolean {
    for (let i = 0; i < chain.ruleCount; i++) {
      try {
        if (chain.rule(i).target === target) return true;
      } catch (e) {
        if (!(e instanceof DumpParseError)) throw e;
      }
    }
    return false;
  }

  /**
   * IPVS mode's nat KUBE-NODE-PORT when the dump lacks it (a partial listing), as kube-proxy writes it: its only rules
   * are those of ipsetWithIptablesChain (pkg/proxy/ipvs/proxier.go, v1.11–v1.35), written for each non-empty set,
   * `-p PROTO -m set --match-set KUBE-NODE-PORT-LOCAL-PROTO dst -j RETURN` before `-p PROTO -m set --match-set
   * KUBE-NODE-PORT-PROTO dst -j KUBE-MARK-MASQ` (SCTP: the `-SCTP-HASH` sets, `dst,dst`). It neither translates nor
   * drops (IPVS chooses the endpoint after nat) and can only add the masquerade mark, never clear it: the packet goes
   * on with the mark set when the NodePort set holds its port, as it was when it does not, and, when that is not
   * known, as it was with the rule's match recorded as unknown (already marked, the answer is the same either way).
   */
  private ipvsNodePortAsWritten(jump: IptablesRule, s: State): State {
    const ref = ruleRef(jump);
    const proto = s.packet.proto.toUpperCase();
    const sctp = proto === "SCTP";
    const flags = sctp ? ["dst", "dst"] : ["dst"];
    const setOf = (local: boolean) => `KUBE-NODE-PORT-${local ? "LOCAL-" : ""}${proto}${sctp ? "-HASH" : ""}`;
    const rule = (set: string, target: string): IptablesRule => ({
      table: "nat", chain: IPVS_NODE_PORT_CHAIN, line: jump.line, raw: `-A ${IPVS_NODE_PORT_CHAIN} -p ${s.packet.proto} -m set --match-set ${set} ${flags.join(",")} -j ${target}`,
      protocol: { negated: false, value: s.packet.proto }, matches: [{ name: "set", options: [{ name: "match-set", negated: false, values: [set, flags.join(",")] }] }], target, targetOptions: [],
    });
    const mark = this.opts.masqueradeMark;
    const marked = (s.packet.mark & mark) !== 0;
    const port = `${s.packet.dport}/${s.packet.proto}`;
    const written = `${IPVS_NODE_PORT_CHAIN} is not in the dump: taken as kube-proxy's IPVS mode writes it (pkg/proxy/ipvs/proxier.go ipsetWithIptablesChain): RETURN for ports in ${setOf(true)}, KUBE-MARK-MASQ for ports in ${setOf(false)}; it neither translates nor drops, IPVS chooses the endpoint`;
    let st: State = { ...s, caveats: [...s.caveats, written] };
    const local = matchRule(rule(setOf(true), "RETURN"), s.packet, this.opts.ipsets, true, this.opts.assumedIpsets);
    const nodePort = matchRule(rule(setOf(false), "KUBE-MARK-MASQ"), s.packet, this.opts.ipsets, true, this.opts.assumedIpsets);
    for (const r of [local, nodePort]) {
      if (r.kind !== "unknown" && r.assumed !== undefined && !st.assumedIpsets?.includes(r.assumed.set)) st = { ...st, assumedIpsets: [...(st.assumedIpsets ?? []), r.assumed.set] };
    }
    // RETURN first; a port in no NodePort set is not marked, whatever the local set holds
    if (local.kind === "yes" || nodePort.kind === "no") return st;
    if (local.kind === "no" && nodePort.kind === "yes") {
      const p = clonePacket(st.packet);
      p.mark = (p.mark | mark) >>> 0;
      return { ...st, packet: p, checks: [...st.checks, { rule: ref, matched: true, why: `${port} is in ipset ${setOf(false)}: ${IPVS_NODE_PORT_CHAIN} jumps to KUBE-MARK-MASQ` }] };
    }
    if (marked) return st;
    const unknown = [local, nodePort].flatMap((r) => (r.kind === "unknown" ? [r.why] : []));
    const why = `${IPVS_NODE_PORT_CHAIN}, which the dump lacks, marks it for masquerade when ${port} is a NodePort (in ipset ${setOf(false)}, not in ${setOf(true)}): ${unknown.join("; ")}`;
    return { ...st, checks: [...st.checks, { rule: ref, matched: "unknown", why }] };
  }

  /** Whether the dump holds this table with any chain. */
  hasTable(table: string): boolean {
    return (this.dump.tables.get(table)?.chains.size ?? 0) > 0;
  }

  /**
   * The chain to start a hook at: the builtin chain if one of its rules jumps to `kubeChain`, else `kubeChain`.
   * The jump is read from each rule's parsed target, not its text: an `iptables -nL` listing writes the target as a
   * column (`KUBE-SERVICES  all  --  0.0.0.0/0 …`, iptables(8) "-L, --list"), iptables-save as `-j KUBE-SERVICES`.
   * A rule that cannot be tokenised is skipped here; the walk reports it where it meets it.
   */
  entry(table: string, builtin: string, kubeChain: string, notes: string[]): string {
    const b = this.chain(table, builtin);
    if (b && this.jumpsTo(b, kubeChain)) return builtin;
    if (this.chain(table, kubeChain)) {
      notes.push(`${table} ${builtin} has no jump to ${kubeChain} in this dump; traced from ${kubeChain} as kube-proxy installs it`);
    }
    return kubeChain;
  }
}

/**
 * Traces the first packet of a new connection through a node's iptables dump.
 *
 * @param dump the node's iptables-save (IPv4 or IPv6, matching `packet.family`).
 * @param packet the packet as it arrives: `hook` PREROUTING for a client from the network or a pod, OUTPUT for a
 *   host-network process. `mark` should be 0 and `ctstate` `{NEW}`.
 * @param hook "PREROUTING" or "OUTPUT".
 * @param options {@link TraceOptions}.
 * @returns every possible outcome with its probability (summing to 1), and notes.
 * @throws {TraceError} when the dump loops or branches beyond `maxOutcomes`.
 * @throws {DumpParseError} when a rule on the path cannot be tokenised.
 */
export function traceIptables(
  dump: IptablesDump,
  packet: TracePacket,
  hook: "PREROUTING" | "OUTPUT",
  options: TraceOptions = {},
): TraceResult {
  const readMark = options.masqueradeMark ?? masqueradeMarkOf(dump);
  const t = new Tracer(dump, { ...options, masqueradeMark: readMark ?? DEFAULT_MASQUERADE_MARK, maxOutcomes: options.maxOutcomes ?? 10000 });
  const reuse = options.reusePostNat ?? true;
  const postNat = new Map<string, { parts: PostNatPart[]; otherFilterRules: boolean }>();
  const notes: string[] = [];
  const start: State = { probability: 1, packet: clonePacket(packet), path: [], checks: [], caveats: [] };
  // A locally generated packet has no input interface (iptables(8): -i applies to INPUT, FORWARD and PREROUTING only;
  // the kernel's OUTPUT hooks run with no in-device): in nat/filter OUTPUT and POSTROUTING `-i X` never matches and
  // `! -i X` always does, whatever kube-proxy's local-traffic detector, so the input interface is known (none)
  if (hook === "OUTPUT") start.packet.inInterface = "";
  // The raw table runs before nat: a packet it untracks (NOTRACK, `CT --notrack`: NodeLocal DNSCache's rules for the
  // kube-dns ClusterIP) never traverses nat, so kube-proxy's DNAT does not apply (netfilter: nat sees only tracked
  // connections; nf_nat_inet_fn returns NF_ACCEPT without a conntrack entry)
  const raw = rawUntracked(dump, start.packet, hook, options.ipsets);
  start.caveats.push(...raw.caveats);
  let afterNatRaw: Ended[];
  if (raw.rule) {
    start.untrackedBy = raw.rule;
    start.caveats.push(`untracked by raw ${raw.rule.chain}:${raw.rule.line} (${raw.text}): the packet skips nat, so kube-proxy's rules do not translate it; it goes to ${start.packet.dst}:${start.packet.dport} as addressed (NodeLocal DNSCache, for one, listens on the kube-dns ClusterIP this way)`);
    afterNatRaw = [{ ...start, how: "return" }];
  } else {
    const natEntry = t.entry("nat", hook, "KUBE-SERVICES", notes);
    afterNatRaw = t.run("nat", natEntry, [start], 0);
  }
  const afterNat: Ended[] = [];
  let sharesFixed = true;
  for (const e of afterNatRaw) {
    // IPVS translates what nat let through; a branch into a chain the dump lacks stays unresolved (that chain may mark
    // for masquerade, drop, or DNAT itself).
    const rs = e.how === "dnat" || e.how === "drop" || e.how === "reject" || e.how === "missing" ? undefined : options.ipvsDispatch?.(e.packet);
    if (!rs) {
      afterNat.push(e);
      continue;
    }
    if (rs.length === 0) {
      // a virtual server without a real server of weight > 0: its scheduler finds no destination and IPVS refuses the
      // connection, TCP or UDP (net/netfilter/ipvs/ip_vs_core.c ip_vs_leave: ICMP port unreachable, then drop)
      afterNat.push({ ...e, how: "reject", decidedBy: undefined, caveats: [...e.caveats, `IPVS virtual server ${e.packet.dst}:${e.packet.dport} has no real server with weight > 0: IPVS answers port unreachable`] });
      continue;
    }
    if (rs.some((r) => !r.fixed)) sharesFixed = false;
    for (const r of rs) {
      const packet = { ...clonePacket(e.packet), ipvsVirtual: { ip: e.packet.dst, port: e.packet.dport } };
      afterNat.push({ ...e, packet, probability: e.probability * r.probability, how: "dnat", dnatTo: r.dnatTo, decidedBy: undefined, ...(r.caveat ? { caveats: [...e.caveats, r.caveat] } : {}) });
    }
  }
  const outcomes: TraceOutcome[] = [];
  let otherFilterRules = false;
  for (const e of afterNat) {
    const p = clonePacket(e.packet);
    let verdict: TraceOutcome["verdict"] = "no-match";
    let dnatTo: string | undefined;
    let decidedBy: RuleRef | undefined;
    if (e.how === "dnat" && e.dnatTo) {
      verdict = "dnat";
      dnatTo = e.dnatTo;
      const [ip, port] = splitDnat(e.dnatTo);
      p.dst = ip;
      if (port !== undefined) p.dport = port;
      // a host-network endpoint on this node: the translated packet is routed to this node itself
      p.dstLocal = e.packet.ipvsVirtual === undefined && (options.isLocalAddress?.(ip) ?? false);
      p.ctstate.add("DNAT");
    } else if (e.how === "accept") {
      verdict = "accept";
      decidedBy = e.decidedBy;
    } else if (e.how === "drop" || e.how === "reject") {
      outcomes.push(finish(e, e.how, undefined, undefined, e.decidedBy));
      continue;
    } else if (e.how === "missing") {
      const o = finish(e, "unresolved", undefined, undefined, e.decidedBy);
      o.missingChain = e.missingChain!;
      o.caveats.push(`chain ${e.missingChain} is not in the dump (a partial listing?): where this branch goes cannot be told`);
      outcomes.push(o);
      continue;
    }
    // filter
    // IPVS translates an arriving packet at LOCAL_IN after filtering (net/netfilter/ipvs/ip_vs_core.c ip_vs_ops4:
    // ip_vs_remote_request4 at NF_IP_PRI_NAT_SRC - 1): filter INPUT sees it to the virtual server's address (where
    // kube-proxy's KUBE-PROXY-FIREWALL and KUBE-IPVS-FILTER read it), and the translated packet leaves through
    // LOCAL_OUT (filter OUTPUT) and POSTROUTING, never FORWARD.
    const ipvsIn = hook === "PREROUTING" && e.packet.ipvsVirtual !== undefined;
    // …unless the real server is an address of this node (a host-network endpoint): IPVS then hands the translated
    // packet on in LOCAL_IN (ip_vs_xmit.c __ip_vs_get_out_rt: RTCF_LOCAL, ip_vs_nat_send_or_cont: NF_ACCEPT), so it
    // is delivered here, through neither filter OUTPUT nor POSTROUTING, and not masqueraded
    const ipvsLocal = ipvsIn && verdict === "dnat" && (options.isLocalAddress?.(p.dst) ?? false);
    const filterHook = hook === "OUTPUT" ? "OUTPUT" : p.dstLocal || ipvsIn ? "INPUT" : "FORWARD";
    // A local process's packet to a local address (not translated away from it) loops back through lo into INPUT:
    // kube-proxy's INPUT chains see it too (KUBE-EXTERNAL-SERVICES rejects a NodePort without endpoints there;
    // iptables proxier.go iptablesJumpChains hooks it from INPUT and FORWARD, not OUTPUT).
    const filterHooks: ("INPUT" | "FORWARD" | "OUTPUT")[] = hook === "OUTPUT" && p.dstLocal ? ["OUTPUT", "INPUT"] : ipvsIn ? (ipvsLocal ? ["INPUT"] : ["INPUT", "OUTPUT"]) : [filterHook];
    /** The packet each filter hook sees: before IPVS's translation in INPUT, after it in OUTPUT. */
    const seenBy = (h: "INPUT" | "FORWARD" | "OUTPUT"): TracePacket => {
      // a local process's packet looped back to a local address arrives in INPUT on lo
      if (hook === "OUTPUT" && h === "INPUT") return { ...clonePacket(p), inInterface: "lo" };
      if (!ipvsIn || h !== "INPUT") return p;
      const before = clonePacket(p);
      before.dst = e.packet.ipvsVirtual!.ip;
      before.dport = e.packet.ipvsVirtual!.port;
      before.dstLocal = true;
      before.ctstate.delete("DNAT");
      return before;
    };
    const dropMark = dropMarkOf(t);
    const dropMarked = dropMark !== undefined && (e.packet.mark & dropMark) !== 0;
    if (dropMarked) {
      // The mark of kubelet's KUBE-MARK-DROP (0x8000 by default; layouts before v1.25) drops only where kubelet's filter
      // KUBE-FIREWALL sees it: kubelet jumps to it from INPUT and OUTPUT (pkg/kubelet/kubelet_network_linux.go, up to
      // v1.24), not FORWARD. A packet to an address that is not local to the node is forwarded, untranslated, marked.
      const marker = e.path.find((r) => r.raw.includes("KUBE-MARK-DROP"));
      const hooked = firewallHooked(t, filterHook);
      // From a local process (OUTPUT) the hook is OUTPUT whatever the destination; from outside, locality decides.
      const where = p.dstLocalAssumed && hook === "PREROUTING"
        ? `whether ${p.dst} is a local address of the node decides it (not collected: the node's \`ip -o addr\` / local routing table)`
        : undefined;
      // the other way of that fact: a local destination goes to INPUT, where KUBE-FIREWALL drops the mark, else to FORWARD
      const undecided = (taken: boolean): UndecidedFate => ({
        fact: `${p.dst} is a local address of the node`,
        notFact: `${p.dst} is not a local address of the node`,
        taken,
        notCollected: "the node's `ip -o addr` / local routing table",
        otherwise: taken ? "no-match" : "drop",
        ...(taken ? {} : { otherwiseBy: "INPUT's KUBE-FIREWALL" }),
      });
      if (hooked) {
        const o = finish(e, "drop", undefined, undefined, marker);
        if (where && filterHook === "INPUT" && !firewallHooked(t, "FORWARD")) o.undecided = undecided(true);
        o.caveats.push(`marked ${hex(dropMark)} by KUBE-MARK-DROP: kubelet's filter KUBE-FIREWALL, jumped to from ${filterHook}, drops it (\`-m mark --mark ${hex(dropMark)}/${hex(dropMark)} -j DROP\`)`);
        if (where) o.caveats.push(`${where}: were it not local, the packet would be forwarded untranslated (FORWARD has no KUBE-FIREWALL)`);
        outcomes.push(o);
        continue;
      }
      e.markedForDrop = marker ? { mark: dropMark, by: marker } : { mark: dropMark };
      e.caveats = [
        ...e.caveats,
        `marked ${hex(dropMark)} by KUBE-MARK-DROP, but the packet is ${filterHook === "FORWARD" ? "forwarded" : `in ${filterHook}`} and KUBE-FIREWALL is not hooked there: it is not dropped, and leaves untranslated`,
        ...(where ? [`${where}: were it local, INPUT's KUBE-FIREWALL would drop it`] : []),
      ];
      if (where && filterHook === "FORWARD" && firewallHooked(t, "INPUT")) e.undecided = undecided(false);
    }
    // Translated in PREROUTING to an address of this node: routed to INPUT, delivered, never in nat POSTROUTING.
    const deliveredHere = (hook === "PREROUTING" && verdict === "dnat" && p.dstLocal && !ipvsIn) || ipvsLocal;
    // the filter and POSTROUTING part, reused between branches that differ only in destination (see postNatKey)
    const key = reuse && !deliveredHere && !dropMarked && filterHooks.length === 1 ? postNatKey(t, p, filterHook) : undefined;
    const known = key === undefined ? undefined : postNat.get(key);
    if (known) {
      for (const r of known.parts) outcomes.push(replayPostNat(r, e, verdict, dnatTo, decidedBy));
      if (known.otherFilterRules) otherFilterRules = true;
      continue;
    }
    let recorded: PostNatPart[] | undefined = key === undefined ? undefined : [];
    let filtered: Ended | undefined;
    let filterState: State = { ...e, packet: p };
    hooks: for (const h of filterHooks) {
      filterState = { ...filterState, packet: seenBy(h) };
      for (const name of kubeFilterChains(t, h)) {
        const ch = t.chain("filter", name);
        // an empty chain (kube-proxy declares them all) returns the packet unchanged, unless the dump shows it in part
        if (!ch || (ch.ruleCount === 0 && ch.incomplete === undefined)) continue;
        const res = t.run("filter", name, [filterState], 0);
        const stop = res.find((r) => r.how === "drop" || r.how === "reject");
        if (stop) {
          filtered = stop;
          break hooks;
        }
        const cont = res.find((r) => r.how === "return" || r.how === "policy-end");
        if (cont) filterState = { ...filterState, caveats: cont.caveats, ...(cont.assumedIpsets ? { assumedIpsets: cont.assumedIpsets } : {}) };
        if (res.some((r) => r.how === "accept")) break; // ACCEPT ends the builtin chain's kube part (of this hook)
      }
    }
    const other = filterHooks.some((h) => t.once(`other filter rules ${h}`, () => t.chain("filter", h)?.rawRules.some((r) => !/-j KUBE-/.test(r)) ?? false));
    if (other) otherFilterRules = true;
    if (filtered) {
      outcomes.push(finish({ ...filtered, probability: e.probability }, filtered.how as "drop" | "reject", dnatTo, undefined, filtered.decidedBy));
      if (recorded) {
        recorded.push({ ...suffixOf(filtered, e), filtered: filtered.how as "drop" | "reject", decidedBy: filtered.decidedBy, mark: filtered.packet.mark, masq: false });
        postNat.set(key!, { parts: recorded, otherFilterRules: other });
      }
      continue;
    }
    if (deliveredHere) {
      const out = finish(filterState, verdict, dnatTo, false, decidedBy);
      out.mark = e.packet.mark;
      out.deliveredLocally = true;
      if ((e.packet.mark & t.masqueradeMark) !== 0) {
        out.caveats.push(`${p.dst} is an address of this node: the translated packet is delivered here (filter INPUT${ipvsLocal ? ", IPVS hands it on in LOCAL_IN" : ""}) and never reaches nat POSTROUTING, so the ${hex(t.masqueradeMark)} mark masquerades nothing: the endpoint sees the client's own address`);
      }
      outcomes.push(out);
      continue;
    }
    // POSTROUTING
    if (!t.chain("nat", "POSTROUTING") && !t.chain("nat", "KUBE-POSTROUTING")) {
      // A partial dump (a listing of some chains): kube-proxy's KUBE-POSTROUTING masquerades every packet carrying
      // the KUBE-MARK-MASQ bit, in every release; say that this is assumed.
      const masq = (e.packet.mark & t.masqueradeMark) !== 0;
      const out = finish(filterState, verdict, dnatTo, masq, decidedBy);
      out.mark = e.packet.mark;
      out.caveats.push(`KUBE-POSTROUTING is not in the dump: assumed, as kube-proxy writes it, to masquerade packets marked ${hex(t.masqueradeMark)}${readMark === undefined ? " (kube-proxy's iptables.masqueradeBit / --iptables-masquerade-bit decides the mark; not shown, its default 14 assumed)" : ""}`);
      outcomes.push(out);
      continue;
    }
    const postEntry = t.once("postrouting entry", () => t.entry("nat", "POSTROUTING", "KUBE-POSTROUTING", []));
    const post = t.run("nat", postEntry, [filterState], 0);
    for (const q of post) {
      const masq = q.how === "masquerade" || q.how === "snat";
      const out = finish(q, verdict, dnatTo, masq, masq ? q.decidedBy : decidedBy);
      out.mark = e.packet.mark;
      out.path = [...filterState.path, ...q.path.slice(filterState.path.length)];
      outcomes.push(out);
      // a branch taken with a probability of its own here is not replayed (its share would be recomputed)
      if (q.probability !== e.probability) recorded = undefined;
      recorded?.push({ ...suffixOf(q, e), decidedBy: q.decidedBy, mark: e.packet.mark, masq });
    }
    if (recorded) postNat.set(key!, { parts: recorded, otherFilterRules: other });
  }
  if (otherFilterRules) notes.push("filter rules of other components (CNI, Docker, host firewall) were not evaluated");
  return sharesFixed ? { outcomes, notes } : { outcomes, notes, sharesFixed: false };
}

/** The filter hooks kubelet jumps to KUBE-FIREWALL from (pkg/kubelet/kubelet_network_linux.go, v1.10–v1.24). */
const KUBELET_FIREWALL_HOOKS = new Set(["INPUT", "OUTPUT"]);

/**
 * Whether filter KUBE-FIREWALL (which drops kubelet's drop mark, see dropMarkOf) is jumped to from a filter hook: as the dump shows when it
 * holds the filter table, else kubelet's own hooks.
 */
function firewallHooked(t: Tracer, hook: "INPUT" | "FORWARD" | "OUTPUT"): boolean {
  if (!t.hasTable("filter")) return KUBELET_FIREWALL_HOOKS.has(hook);
  return t.chain("filter", hook)?.rawRules.some((r) => /-j KUBE-FIREWALL(\s|$)/.test(r)) ?? false;
}

function range(n: number): number[] {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}

/** Rules of a long chain grouped by the one destination host, or else the one destination port, they require. */
interface DestinationIndex {
  byHost: Map<string, number[]>;
  byPort: Map<number, number[]>;
  /** Rules that may match any destination. */
  other: number[];
}

/**
 * Destination indexes of long chains, kept per chain object: a report traces tens of packets through the same dump,
 * and a parsed dump never changes.
 */
const DESTINATION_INDEXES = new WeakMap<IptablesChain, DestinationIndex>();

const DEST_RE = /(?:^| )(!\s+)?(?:-d|--destination|--dst) (\S+)/;

/**
 * Where the option `flag` (e.g. ` -d `, ` --dport `) starts in a raw rule, when it occurs once, outside the quoted
 * comment, and not negated; -1 otherwise (the rule then goes to the index's `other` list, which is always safe).
 */
function optionAt(raw: string, flag: string): number {
  const i = raw.indexOf(flag);
  if (i === -1 || raw.indexOf(flag, i + 1) !== -1) return -1;
  const q = raw.indexOf('"');
  if (q !== -1 && i > q && i < raw.lastIndexOf('"')) return -1;
  return raw.charCodeAt(i - 1) === 33 /* ! */ ? -1 : i;
}

/** The word of a raw rule that starts at position `at`. */
function wordAt(raw: string, at: number): string {
  const end = raw.indexOf(" ", at);
  return raw.slice(at, end === -1 ? raw.length : end);
}

/** The host a rule's raw text requires as destination (`-d 10.96.0.10/32` → "10.96.0.10"); undefined otherwise. */
function destinationHost(raw: string): string | undefined {
  let value: string | undefined;
  if (!raw.includes(" --destination ") && !raw.includes(" --dst ")) {
    // iptables-save's and kube-proxy's spelling: one `-d`, negated as `! -d`.
    const i = optionAt(raw, " -d ");
    if (i === -1) return undefined;
    value = wordAt(raw, i + 4);
  } else {
    const m = DEST_RE.exec(raw);
    if (!m || m[1]) return undefined;
    value = m[2]!;
  }
  return hostOf(value);
}

/** The host a `-d` value names (`10.96.0.10/32` → "10.96.0.10"); undefined for a wider prefix. */
function hostOf(value: string): string | undefined {
  if (value.endsWith("/32")) return value.slice(0, -3);
  if (value.endsWith("/128")) return value.slice(0, -4);
  return value.includes("/") ? undefined : value;
}

/** The one destination port a rule's raw text requires (`--dport 30080`); undefined for none, a range or a list. */
function destinationPort(raw: string): number | undefined {
  if (raw.includes(" --destination-port ")) return undefined;
  const i = optionAt(raw, " --dport ");
  if (i === -1) return undefined;
  const word = wordAt(raw, i + 9);
  return /^\d+$/.test(word) ? Number(word) : undefined;
}

/** Groups a chain's rules by the single host, else the single port, they require as destination. */
function indexByDestination(chain: IptablesChain): DestinationIndex {
  const idx: DestinationIndex = { byHost: new Map(), byPort: new Map(), other: [] };
  const raws = chain.rawRules;
  // iptables-save and kube-proxy print `-d` first when a rule has one (`-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp …`),
  // and iptables refuses a second `-d`/`--destination`: a rule that starts so needs none of destinationHost's checks.
  const first = 4 + chain.name.length;
  for (let i = 0; i < raws.length; i++) {
    const raw = raws[i]!;
    const host = raw.startsWith("-d ", first) ? hostOf(wordAt(raw, first + 3)) : destinationHost(raw);
    const port = host === undefined ? destinationPort(raw) : undefined;
    const list = host !== undefined ? idx.byHost.get(host) : port !== undefined ? idx.byPort.get(port) : idx.other;
    if (list) list.push(i);
    else if (host !== undefined) idx.byHost.set(host, [i]);
    else idx.byPort.set(port!, [i]);
  }
  return idx;
}

/** Merges ascending lists into one ascending list without duplicates. */
function mergeSorted(lists: number[][]): number[] {
  const nonEmpty = lists.filter((l) => l.length > 0);
  if (nonEmpty.length === 1) return nonEmpty[0]!;
  return [...new Set(nonEmpty.flat())].sort((a, b) => a - b);
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

/**
 * A DNAT target the tracer can follow: `IP[:PORT]` or `[IPv6][:PORT]`, the address an IP address and the port
 * 1–65535 (what iptables itself accepts, and kube-proxy writes as `--to-destination ENDPOINT`).
 * @throws {DumpParseError} naming the rule's line: the dump was edited or cut, and an endpoint read from it would be
 *   a confident wrong answer.
 */
function checkDnatTarget(to: string, rule: IptablesRule): void {
  const [ip, port] = splitDnat(to);
  if (!isIPAddress(ip) || (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65535))) {
    throw new DumpParseError("iptables-save", rule.line, `--to-destination "${to}" is not IP[:PORT]`, rule.raw);
  }
}

function splitDnat(to: string): [string, number | undefined] {
  if (to.startsWith("[")) {
    const close = to.indexOf("]");
    const port = to.slice(close + 2);
    return [to.slice(1, close), port ? Number(port) : undefined];
  }
  const i = to.lastIndexOf(":");
  if (i === -1 || to.indexOf(":") !== i) return [to, undefined];
  return [to.slice(0, i), Number(to.slice(i + 1))];
}

/**
 * Whether the raw table untracks the packet at `hook`: the builtin chain's rules in order, jumps followed (RETURN and
 * ACCEPT end the walk), the first matching `-j NOTRACK` or `-j CT --notrack` decides. A rule whose match cannot be
 * told is assumed not to match, said. No raw table, or no such rule: tracked.
 * @returns the untracking rule and its text, and caveats.
 */
function rawUntracked(dump: IptablesDump, packet: TracePacket, hook: "PREROUTING" | "OUTPUT", ipsets: TraceOptions["ipsets"]): { rule?: RuleRef; text?: string; caveats: string[] } {
  const raw = dump.tables.get("raw");
  const caveats: string[] = [];
  if (!raw) return { caveats };
  const untracks = (r: IptablesRule) => r.target === "NOTRACK" || (r.target === "CT" && r.raw.includes("--notrack"));
  // raw chains carry few rules: only those that untrack, or jump to a chain, are read
  const walk = (name: string, depth: number): { rule?: IptablesRule; stop?: true } => {
    const chain = raw.chains.get(name);
    if (!chain || depth > 16) return {};
    for (let i = 0; i < chain.ruleCount; i++) {
      if (!chain.rawRules[i]!.includes(" -j ")) continue;
      const r = chain.rule(i);
      const user = r.target !== undefined && raw.chains.has(r.target);
      if (!untracks(r) && !user && r.target !== "RETURN" && r.target !== "ACCEPT") continue;
      const m = matchRule(r, packet, ipsets, false);
      if (m.kind === "no") continue;
      if (m.kind !== "yes") {
        if (untracks(r) || user) caveats.push(`raw ${name}:${r.line} (${r.raw.replace(/^-A \S+ /, "")}) ${m.kind === "unknown" ? m.why : "matches by chance"}; assumed not to match`);
        continue;
      }
      if (untracks(r)) return { rule: r };
      if (r.target === "RETURN") return {};
      if (r.target === "ACCEPT") return { stop: true };
      const inner = walk(r.target!, depth + 1);
      if (inner.rule || inner.stop) return inner;
    }
    return {};
  };
  const found = walk(hook, 0).rule;
  return found ? { rule: ruleRef(found), text: found.raw.replace(/^-A \S+ /, ""), caveats } : { caveats };
}

/**
 * Whether a nat rule is one of kube-proxy's externalTrafficPolicy Local short-circuits ({@link ShortCircuitCheck}), and
 * which: in an external chain (`KUBE-EXT-…`, `KUBE-XLB-…` before v1.24), a jump to the cluster policy chain
 * (`KUBE-SVC-…`) that selects the node's own traffic (`-m addrtype --src-type LOCAL`, "route LOCAL traffic for …
 * external destinations") or pod traffic (`localDetector.IfLocal()`: `-s CLUSTER-CIDR`, `-i cni0`, `-i veth+`, "pod
 * traffic for … external destinations"); pkg/proxy/iptables/proxier.go syncProxyRules. The external chain's last rule,
 * an unconditional jump to the policy chain (`KUBE-SVC-…` under the Cluster policy), is none.
 * @returns the kind of traffic and the chain it is sent to; undefined for any other rule.
 */
function shortCircuitOf(rule: IptablesRule): Pick<ShortCircuitCheck, "traffic" | "to"> | undefined {
  if (!/^KUBE-(?:EXT|XLB)-/.test(rule.chain) || rule.target === undefined || !rule.target.startsWith("KUBE-SVC-")) return undefined;
  const fromNode = rule.matches.some((m) => m.name === "addrtype" && m.options.some((o) => o.name === "src-type" && !o.negated && o.values.includes("LOCAL")));
  if (fromNode) return { traffic: "node", to: rule.target };
  if ((rule.source !== undefined && !rule.source.negated) || (rule.inInterface !== undefined && !rule.inInterface.negated)) return { traffic: "pod", to: rule.target };
  return undefined;
}

function finish(
  s: State,
  verdict: TraceOutcome["verdict"],
  dnatTo: string | undefined,
  masqueraded: boolean | undefined,
  decidedBy: RuleRef | undefined,
): TraceOutcome {
  const o: TraceOutcome = {
    probability: s.probability,
    verdict,
    mark: s.packet.mark,
    path: s.path,
    masqueradeChecks: s.checks,
    caveats: [...new Set(s.caveats)],
  };
  if (dnatTo !== undefined) o.dnatTo = dnatTo;
  if (masqueraded !== undefined) o.masqueraded = masqueraded;
  if (decidedBy) o.decidedBy = decidedBy;
  if (s.assumed && s.assumed.length > 0) o.assumedNotMatched = s.assumed;
  if (s.markedForDrop) o.markedForDrop = s.markedForDrop;
  if (s.undecided) o.undecided = s.undecided;
  if (s.untrackedBy) o.untrackedBy = s.untrackedBy;
  if (s.assumedIpsets) o.assumedIpsets = s.assumedIpsets;
  if (s.shortCircuits) o.shortCircuits = s.shortCircuits;
  return o;
}

/**
 * What the filter and POSTROUTING part added to a branch, to be added again to another branch: the rules it went
 * through, the masquerade checks and caveats, how it ended (dropped or rejected in filter, or leaving with or without
 * masquerade) and the mark the outcome shows.
 */
interface PostNatPart {
  path: RuleRef[];
  checks: RuleCheck[];
  caveats: string[];
  filtered?: "drop" | "reject";
  masq: boolean;
  decidedBy?: RuleRef;
  mark: number;
}

/** What `q` added to `e`'s path, checks and caveats (the tracer only ever appends to them). */
function suffixOf(q: State, e: State): Pick<PostNatPart, "path" | "checks" | "caveats"> {
  return { path: q.path.slice(e.path.length), checks: q.checks.slice(e.checks.length), caveats: q.caveats.slice(e.caveats.length) };
}

/** An outcome of branch `e` from a part recorded on another branch (see {@link postNatKey}). */
function replayPostNat(r: PostNatPart, e: Ended, verdict: TraceOutcome["verdict"], dnatTo: string | undefined, decidedBy: RuleRef | undefined): TraceOutcome {
  const s: State = { probability: e.probability, packet: e.packet, path: [...e.path, ...r.path], checks: [...e.checks, ...r.checks], caveats: [...e.caveats, ...r.caveats], ...(e.assumed ? { assumed: e.assumed } : {}), ...(e.shortCircuits ? { shortCircuits: e.shortCircuits } : {}) };
  const o = r.filtered ? finish(s, r.filtered, dnatTo, undefined, r.decidedBy) : finish(s, verdict, dnatTo, r.masq, r.masq ? r.decidedBy : decidedBy);
  o.mark = r.mark;
  return o;
}

/**
 * The key under which the filter and POSTROUTING part of a branch is reused: the packet without its destination
 * address and port, and the filter hook; undefined (not reused) when a rule those chains reach could read the
 * destination or is not plain (see {@link destinationBlind}).
 */
function postNatKey(t: Tracer, p: TracePacket, filterHook: "INPUT" | "FORWARD" | "OUTPUT"): string | undefined {
  if (!t.once(`destination-blind ${filterHook}`, () => destinationBlind(t, filterHook))) return undefined;
  const { dst: _dst, dport: _dport, ctstate, ...rest } = p;
  return JSON.stringify([filterHook, [...ctstate].sort(), Object.entries(rest).sort((a, b) => (a[0] < b[0] ? -1 : 1))]);
}

/**
 * Match modules whose tests (and the reasons they give, which end up in checks and caveats) read no destination;
 * the port modules and conntrack only with the options listed, addrtype only about the source.
 */
const BLIND_MODULES = new Set(["comment", "nfacct", "mark", "state"]);
const PORT_MODULES = new Set(["tcp", "udp", "sctp", "udplite"]);
const BLIND_PORT_OPTIONS = new Set(["sport", "source-port", "tcp-flags", "syn"]);
const BLIND_CONNTRACK_OPTIONS = new Set(["ctstate", "state", "ctstatus"]);
const BLIND_ADDRTYPE_OPTIONS = new Set(["src-type", "limit-iface-in", "limit-iface-out"]);

/**
 * Whether no rule reachable from the filter hook's kube chains and from nat POSTROUTING reads the packet's
 * destination address or port: no `-d`, only the match modules and options above, no DNAT/REDIRECT/TPROXY target,
 * and every chain whole (not a partial listing). A rule that cannot be tokenised makes it false (the branch is then traced and the
 * error reported as usual).
 */
function destinationBlind(t: Tracer, filterHook: "INPUT" | "FORWARD" | "OUTPUT"): boolean {
  const roots: [string, string][] = [...kubeFilterChains(t, filterHook).map((c): [string, string] => ["filter", c]), ["nat", "POSTROUTING"], ["nat", "KUBE-POSTROUTING"]];
  const seen = new Set<string>();
  const queue = roots.filter(([table, c]) => t.chain(table, c) !== undefined);
  try {
    while (queue.length > 0) {
      const [table, name] = queue.pop()!;
      if (seen.has(`${table} ${name}`)) continue;
      seen.add(`${table} ${name}`);
      const chain = t.chain(table, name)!;
      if (chain.incomplete !== undefined) return false;
      for (let i = 0; i < chain.ruleCount; i++) {
        const rule = chain.rule(i);
        if (rule.destination !== undefined) return false;
        for (const m of rule.matches) {
          if (BLIND_MODULES.has(m.name)) continue;
          if (PORT_MODULES.has(m.name) && m.options.every((o) => BLIND_PORT_OPTIONS.has(o.name))) continue;
          if (m.name === "conntrack" && m.options.every((o) => BLIND_CONNTRACK_OPTIONS.has(o.name))) continue;
          if (m.name === "addrtype" && m.options.every((o) => BLIND_ADDRTYPE_OPTIONS.has(o.name))) continue;
          return false;
        }
        if (rule.target === "DNAT" || rule.target === "REDIRECT" || rule.target === "TPROXY") return false;
        if (rule.target !== undefined && t.chain(table, rule.target)) queue.push([table, rule.target]);
      }
    }
  } catch (e) {
    if (e instanceof DumpParseError) return false;
    throw e;
  }
  return true;
}

/** The kernel probability of a rule's `--probability`, or the rule's line as a {@link DumpParseError} when malformed. */
function probabilityOf(written: string, rule: IptablesRule): number {
  try {
    return kernelProbability(written);
  } catch (e) {
    if (e instanceof RangeError) throw new DumpParseError("iptables-save", rule.line, e.message, rule.raw);
    throw e;
  }
}
