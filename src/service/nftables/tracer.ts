/**
 * The nftables chain walker: rules in order, jumps and gotos, vmaps and `numgen` branches with exact shares, verdicts, and the hooks a packet crosses.
 *
 * Part of the nftables tracer (trace.ts has the whole story). Runtime-neutral: no I/O.
 * @module
 */
import { DumpParseError } from "../../datapath/errors.ts";
import { type Fraction, type KubeProxyNft, indexesOf } from "../../datapath/kube_proxy_nft.ts";
import type { NftChain, NftElement, NftRule, NftSet, NftStatement, NftTable, NftVerdict } from "../../datapath/nft_model.ts";
import { isIPAddress, joinHostPort } from "../../model/ip.ts";
import type { RuleCheck, RuleRef, ShortCircuitCheck, TraceOutcome, TracePacket } from "../trace.ts";
import { chainRef, elementRef, nftAnomalyNote, nftRuleRef, nftTableLabel } from "./evidence.ts";
import { type Field, type SetLookup, addressIndex, evalMatch, fieldOf, scalarHas, valueHas } from "./match.ts";
import { type SetIndex, addressIndexCache, baseChainsByHook, canonicalPart, isPlainPart, keyPart, setIndexCache } from "./sets.ts";
import { type Ended, type Flow, type FlowEnd, type Hook, MARK_CHAIN, MASQ_CHAIN, MAX_DEPTH, NftTraceError, REJECT_CHAIN, type State, clonePacket } from "./trace_types.ts";

/**
 * `read()`, or undefined when it meets a rule that cannot be read: decoding a service chain decodes the endpoint
 * chains it points to, and an unreadable one is reported where the trace reaches it.
 */
export function readable<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (e) {
    if (e instanceof DumpParseError) return undefined;
    throw e;
  }
}

export class NftTracer {
  private steps = 0;
  readonly markBit: number;
  readonly sets: SetLookup;

  constructor(
    private readonly layout: KubeProxyNft,
    private readonly maxOutcomes: number,
    markBit: number,
    private readonly isLocalAddress?: (ip: string) => boolean,
  ) {
    this.markBit = markBit;
    this.sets = {
      set: (n) => this.layout.table.sets.get(n),
      addresses: (set) => {
        let ix = addressIndexCache.get(set);
        if (!ix) addressIndexCache.set(set, ix = addressIndex(set));
        return ix;
      },
    };
  }

  get table(): NftTable {
    return this.layout.table;
  }

  /** Base chains hooked at `hook`, in the order the kernel runs them. */
  baseChains(hook: Hook): NftChain[] {
    return baseChainsByHook(this.table).get(hook) ?? [];
  }

  /** Whether evaluating `rule` is a masquerade request (for RuleCheck records). */
  private isMarking(rule: NftRule): boolean {
    if (rule.chain === MARK_CHAIN || rule.chain === MASQ_CHAIN) return false;
    for (const st of rule.statements) {
      if (
        st.kind === "verdict" && (st.verdict.kind === "jump" || st.verdict.kind === "goto") &&
        st.verdict.target === MARK_CHAIN
      ) return true;
      if (
        st.kind === "mark" && st.target === "meta mark" && (st.op === "or" || st.op === "set") &&
        (st.value & this.markBit) !== 0
      ) return true;
    }
    return false;
  }

  /**
   * Whether a rule is one of kube-proxy's externalTrafficPolicy Local short-circuits in an `external-…` chain
   * (ShortCircuitCheck), as the layout decodes the chain: `podShortCircuit` (`ip saddr CIDR` / `iifname "IF"` `goto
   * service-…` comment "short-circuit pod traffic", `localDetector.IfLocalNFT()`) or `localShortCircuit` (`fib saddr
   * type local goto service-…` comment "short-circuit local traffic"); pkg/proxy/nftables/proxier.go syncProxyRules.
   */
  private shortCircuitOf(rule: NftRule): Pick<ShortCircuitCheck, "traffic" | "to"> | undefined {
    if (!rule.chain.startsWith("external-")) return undefined;
    const ex = readable(() => this.layout.externalChain(rule.chain));
    if (!ex) return undefined;
    const same = (ev: { handle?: number; line: number }) => ev.handle === undefined ? ev.line === rule.line : ev.handle === rule.handle;
    if (ex.podShortCircuit && same(ex.podShortCircuit.evidence)) return { traffic: "pod", to: ex.podShortCircuit.target };
    if (ex.localShortCircuit && same(ex.localShortCircuit.evidence)) return { traffic: "node", to: ex.localShortCircuit.target };
    return undefined;
  }

  private index(set: NftSet): SetIndex {
    let ix = setIndexCache.get(set);
    if (ix) return ix;
    ix = { exact: new Map(), patterns: [] };
    for (const e of set.elements) {
      const parts = e.key.length > 0 ? e.key : [e.keyText];
      if (parts.every(isPlainPart)) {
        const k = parts.map(canonicalPart).join("\u0000");
        if (!ix.exact.has(k)) ix.exact.set(k, e);
      } else ix.patterns.push(e);
    }
    setIndexCache.set(set, ix);
    return ix;
  }

  /** Looks a packet up in a named map by a (possibly concatenated) selector. */
  private lookup(
    selector: string,
    set: NftSet,
    p: TracePacket,
  ): { element?: NftElement; no?: string; unknown?: string } {
    const fields: Field[] = [];
    for (const part of selector.split(" . ")) {
      const f = fieldOf(part, p);
      if ("no" in f) return { no: f.no };
      if ("unknown" in f) return { unknown: f.unknown };
      fields.push(f);
    }
    const ix = this.index(set);
    const hit = ix.exact.get(fields.map(keyPart).join("\u0000"));
    if (hit) return { element: hit };
    for (const e of ix.patterns) {
      const parts = e.key.length > 0 ? e.key : [e.keyText];
      if (parts.length !== fields.length) continue;
      if (parts.every((k, i) => scalarHas(fields[i]!, k) === true)) return { element: e };
    }
    return {};
  }

  /** Runs states through a chain; returned branches have how = "return" when the chain ended or returned. */
  run(name: string, states: State[], depth: number): Ended[] {
    if (depth > MAX_DEPTH) {
      throw new NftTraceError(
        `nftables chain nesting deeper than ${MAX_DEPTH} at ${nftTableLabel(this.table)} chain ${name} (a loop?)`,
      );
    }
    const chain = this.table.chains.get(name);
    if (!chain) return states.map((s) => ({ ...s, how: "missing", missingChain: name }));
    const ended: Ended[] = [];
    // What does not fit kube-proxy's layout in this chain (a numgen value without an entry, an unexpected rule) is a
    // caveat of every branch that runs it.
    try {
      for (const r of chain.rules) void r.statements; // nft -j rules are decoded when first read (nft_json.ts)
    } catch (e) {
      if (!(e instanceof DumpParseError)) throw e;
      return states.map((s) => ({ ...s, how: "missing", missingChain: name, unreadable: e.message }));
    }
    const anomalies = readable(() => this.layout.chainAnomalies(name)) ?? [];
    let live = anomalies.length === 0
      ? states
      : states.map((s) => ({ ...s, caveats: [...s.caveats, ...anomalies.map(nftAnomalyNote)] }));
    for (const rule of chain.rules) {
      if (live.length === 0) break;
      const next: State[] = [];
      for (const s of live) {
        const r = this.rule(rule, 0, s, depth);
        next.push(...r.cont);
        ended.push(...r.ended);
      }
      live = next;
      if (live.length + ended.length > this.maxOutcomes) throw new NftTraceError("trace has too many outcomes");
    }
    for (const s of live) ended.push({ ...s, how: "return" });
    return ended;
  }

  /** Evaluates statements `i..` of a rule for one branch. `cont`: the chain goes on with its next rule. */
  private rule(rule: NftRule, i: number, s: State, depth: number): { cont: State[]; ended: Ended[] } {
    if (++this.steps > this.maxOutcomes * 1000) {
      throw new NftTraceError("trace too large: the ruleset branches too much");
    }
    const st = rule.statements[i];
    if (st === undefined) return { cont: [s], ended: [] };
    const ref = (): RuleRef => nftRuleRef(rule);
    const check = (matched: RuleCheck["matched"], why?: string): State => {
      // a masquerade or snat whose match cannot be told decides masquerade as a marking rule does (client_verdict.ts)
      const snat = !this.isMarking(rule) && matched === "unknown" && snats(rule);
      if (!this.isMarking(rule) && !snat) return s;
      const c: RuleCheck = { rule: ref(), matched };
      if (snat) c.snat = true;
      if (why !== undefined) c.why = why;
      return { ...s, checks: [...s.checks, c] };
    };
    const miss = (why: string, unknown: boolean, caveat?: string): { cont: State[]; ended: Ended[] } => {
      let n = check(unknown ? "unknown" : false, why);
      const short = this.shortCircuitOf(rule);
      if (short) n = { ...n, shortCircuits: [...(n.shortCircuits ?? []), { rule: ref(), ...short, matched: unknown ? "unknown" : false, why }] };
      const cav: string[] = [];
      if (caveat !== undefined) cav.push(caveat);
      if (unknown) cav.push(`${ref().chain} rule ${ref().line} (${rule.text}): ${why}; assumed not to match`);
      if (cav.length > 0) n = { ...n, caveats: [...n.caveats, ...cav] };
      // a rule that would have sent the packet elsewhere (a verdict, a map, a translation) and is not a marking one
      if (unknown && !this.isMarking(rule) && !snats(rule) && rule.statements.some((x) => x.kind === "verdict" || x.kind === "vmap" || x.kind === "nat" || x.kind === "reject" || x.kind === "unknown")) {
        n = { ...n, assumed: [...(n.assumed ?? []), ref()] };
      }
      return { cont: [n], ended: [] };
    };
    switch (st.kind) {
      case "match": {
        const r = evalMatch(st, s.packet, this.sets);
        if (r.kind === "no") return miss(r.why, false, r.caveat);
        if (r.kind === "unknown") return miss(r.why, true);
        let n = r.caveat !== undefined ? { ...s, caveats: [...s.caveats, r.caveat] } : s;
        if (r.heldBy !== undefined) n = { ...n, heldByAffinity: r.heldBy };
        return this.rule(rule, i + 1, n, depth);
      }
      case "counter":
      case "log":
      case "notrack":
      case "set-update":
        return this.rule(rule, i + 1, s, depth);
      case "limit":
        return this.rule(rule, i + 1, {
          ...s,
          caveats: [...s.caveats, `${rule.chain} rule ${ref().line}: "${st.text}" assumed not exceeded`],
        }, depth);
      case "mark": {
        const p = clonePacket(s.packet);
        if (st.target !== "meta mark") {
          return this.rule(rule, i + 1, {
            ...s,
            caveats: [...s.caveats, `${rule.chain} rule ${ref().line}: "${st.text}" (ct mark) is not modelled`],
          }, depth);
        }
        p.mark =
          (st.op === "set"
            ? st.value
            : st.op === "or"
            ? p.mark | st.value
            : st.op === "and"
            ? p.mark & st.value
            : p.mark ^ st.value) >>> 0;
        let n: State = { ...s, packet: p, path: [...s.path, ref()] };
        if (this.isMarking(rule) && (st.value & this.markBit) !== 0 && st.op !== "and" && st.op !== "xor") {
          n = { ...n, checks: [...n.checks, { rule: ref(), matched: true }] };
        }
        return this.rule(rule, i + 1, n, depth);
      }
      case "nat": {
        const path = [...s.path, ref()];
        if (st.nat === "dnat") {
          if (st.addr === undefined) {
            return {
              cont: [],
              ended: [{ ...s, path, how: "missing", missingChain: `the target of "${st.text}"`, decidedBy: ref() }],
            };
          }
          checkDnatTarget(st.addr, st.port, rule, st.text);
          const to = joinHostPort(st.addr, st.port ?? s.packet.dport);
          return { cont: [], ended: [{ ...s, path, how: "dnat", dnatTo: to, decidedBy: ref() }] };
        }
        if (st.nat === "snat") return { cont: [], ended: [{ ...s, path, how: "snat", decidedBy: ref() }] };
        // redirect: DNAT to the node itself.
        return {
          cont: [],
          ended: [{
            ...s,
            path,
            how: "accept",
            decidedBy: ref(),
            caveats: [
              ...s.caveats,
              `${rule.chain} rule ${ref().line}: "${st.text}" (redirect to the node) is not modelled`,
            ],
          }],
        };
      }
      case "masquerade":
        return { cont: [], ended: [{ ...s, path: [...s.path, ref()], how: "masquerade", decidedBy: ref() }] };
      case "reject": {
        const decidedBy = rule.chain === REJECT_CHAIN && s.via ? s.via : ref();
        return { cont: [], ended: [{ ...s, path: [...s.path, ref()], how: "reject", decidedBy }] };
      }
      case "verdict": {
        const short = st.verdict.kind === "goto" || st.verdict.kind === "jump" ? this.shortCircuitOf(rule) : undefined;
        const n: State = short ? { ...s, shortCircuits: [...(s.shortCircuits ?? []), { rule: ref(), ...short, matched: true }] } : s;
        return this.verdict(st.verdict, rule, ref(), n, depth);
      }
      case "vmap":
        return this.vmap(st, rule, s, depth);
      case "unknown":
        return miss(`statement "${st.text}" is not modelled`, true);
    }
  }

  private vmap(
    st: Extract<NftStatement, { kind: "vmap" }>,
    rule: NftRule,
    s: State,
    depth: number,
  ): { cont: State[]; ended: Ended[] } {
    const ref = nftRuleRef(rule);
    if (st.numgen) {
      const branches = this.numgenBranches(rule, st);
      const cont: State[] = [];
      const ended: Ended[] = [];
      let caveats = s.caveats;
      if (st.numgen.mode !== "random") {
        caveats = [
          ...caveats,
          `${rule.chain} rule ${ref.line}: "numgen inc" is a round-robin counter: shares are long-run averages`,
        ];
      }
      const covered = branches.reduce((a, b) => a + b.share.num / b.share.den, 0);
      if (covered < 1 - 1e-12) cont.push({ ...s, caveats, probability: s.probability * (1 - covered) });
      for (const b of branches) {
        const p = b.share.num / b.share.den;
        if (p === 0) continue;
        const r = this.verdict(b.verdict, rule, ref, { ...s, caveats, probability: s.probability * p }, depth);
        cont.push(...r.cont);
        ended.push(...r.ended);
      }
      return { cont, ended };
    }
    if (st.map !== undefined) {
      const set = this.table.sets.get(st.map);
      if (!set) {
        return {
          cont: [{
            ...s,
            caveats: [
              ...s.caveats,
              `${rule.chain} rule ${ref.line}: map @${st.map} is not in the ruleset; assumed not to match`,
            ],
          }],
          ended: [],
        };
      }
      const r = this.lookup(st.selector, set, s.packet);
      if (r.unknown !== undefined) {
        return {
          cont: [{
            ...s,
            caveats: [
              ...s.caveats,
              `${rule.chain} rule ${ref.line} (${rule.text}): ${r.unknown}; assumed not to match`,
            ],
          }],
          ended: [],
        };
      }
      if (!r.element?.verdict) return { cont: [s], ended: [] };
      const eref = elementRef(rule, set, r.element);
      return this.verdict(r.element.verdict, rule, eref, s, depth, eref);
    }
    // Inline vmap { key : verdict, … } with a non-numgen key.
    const fields: Field[] = [];
    for (const part of st.selector.split(" . ")) {
      const f = fieldOf(part, s.packet);
      if ("no" in f) return { cont: [s], ended: [] };
      if ("unknown" in f) {
        return {
          cont: [{
            ...s,
            caveats: [
              ...s.caveats,
              `${rule.chain} rule ${ref.line} (${rule.text}): ${f.unknown}; assumed not to match`,
            ],
          }],
          ended: [],
        };
      }
      fields.push(f);
    }
    for (const e of st.entries ?? []) {
      const parts = e.key.kind === "concat" ? e.key.parts : [e.key];
      if (parts.length !== fields.length) continue;
      if (parts.every((k, i) => valueHas(fields[i]!, k, this.sets) === true)) {
        return this.verdict(e.verdict, rule, ref, s, depth);
      }
    }
    return { cont: [s], ended: [] };
  }

  /** The branches of a numgen vmap: the decoder's exact shares for kube-proxy's service chains, else counted here. */
  private numgenBranches(
    rule: NftRule,
    st: Extract<NftStatement, { kind: "vmap" }>,
  ): { verdict: NftVerdict; share: Fraction }[] {
    const pc = readable(() => this.layout.policyChain(rule.chain));
    const ev = pc?.loadBalancing?.evidence;
    if (pc && ev && (ev.handle === undefined ? ev.line === rule.line : ev.handle === rule.handle)) {
      return pc.endpoints.map((e) => ({ verdict: verdictOf(st, e.endpointChain), share: e.share }));
    }
    const ng = st.numgen!;
    const seen = new Set<number>();
    const out: { verdict: NftVerdict; share: Fraction }[] = [];
    for (const e of st.entries ?? []) {
      const idx = indexesOf(e.key)?.filter((x) => x >= ng.offset && x < ng.offset + ng.mod && !seen.has(x)) ?? [];
      idx.forEach((x) => seen.add(x));
      if (idx.length > 0) out.push({ verdict: e.verdict, share: { num: idx.length, den: ng.mod } });
    }
    return out;
  }

  /**
   * Applies a verdict (of a rule, a map element or a numgen branch). `via`: the map element it came from, remembered
   * in the target chain (kube-proxy's `reject-chain` rejects on behalf of that element).
   */
  private verdict(
    v: NftVerdict,
    rule: NftRule,
    ref: RuleRef,
    s: State,
    depth: number,
    via?: RuleRef,
  ): { cont: State[]; ended: Ended[] } {
    const path = [...s.path, ref];
    switch (v.kind) {
      case "accept":
        return { cont: [], ended: [{ ...s, path, how: "accept", decidedBy: ref }] };
      case "drop":
        return { cont: [], ended: [{ ...s, path, how: "drop", decidedBy: ref }] };
      case "return":
        return { cont: [], ended: [{ ...s, path, how: "return" }] };
      case "continue":
        return { cont: [s], ended: [] };
      case "queue":
        return {
          cont: [],
          ended: [{
            ...s,
            path,
            how: "accept",
            decidedBy: ref,
            caveats: [
              ...s.caveats,
              `${rule.chain} rule ${ref.line}: queued to userspace; what that program decides is not in the ruleset`,
            ],
          }],
        };
      case "jump":
      case "goto": {
        const target = v.target ?? "";
        let n: State = { ...s, path };
        if (this.isMarking(rule) && target === MARK_CHAIN) {
          n = { ...n, checks: [...n.checks, { rule: nftRuleRef(rule), matched: true }] };
        }
        if (!this.table.chains.has(target)) {
          return { cont: [], ended: [{ ...n, how: "missing", missingChain: target, decidedBy: ref }] };
        }
        if (via) n.via = via;
        else delete n.via;
        const results = this.run(target, [n], depth + 1);
        const cont: State[] = [];
        const ended: Ended[] = [];
        for (const e of results) {
          if (e.how === "return") {
            const { how: _h, ...st } = e;
            const back: State = { ...st };
            if (s.via) back.via = s.via;
            else delete back.via;
            if (v.kind === "goto") ended.push({ ...back, how: "return" });
            else cont.push(back);
          } else ended.push(e);
        }
        return { cont, ended };
      }
    }
  }

  /** Runs the base chains of one hook for every flow; flows that are dropped, rejected or unresolved stop. */
  hook(hook: Hook, flows: Flow[], notes: Set<string>): { passed: Flow[]; stopped: FlowEnd[] } {
    const stopped: FlowEnd[] = [];
    let live = flows;
    let chains = this.baseChains(hook);
    if (chains.length === 0) {
      // A partial capture (one chain listed, or a table without its base chains): start where kube-proxy hooks.
      const entry = hook === "prerouting" || hook === "output"
        ? "services"
        : hook === "postrouting"
        ? MASQ_CHAIN
        : undefined;
      const c = entry !== undefined ? this.table.chains.get(entry) : undefined;
      if (c) {
        notes.add(
          `${
            nftTableLabel(this.table)
          } has no base chain on the ${hook} hook in this capture; traced from chain ${entry}, as kube-proxy hooks it`,
        );
        chains = [c];
      }
    }
    for (const c of chains) {
      const isNat = c.base === undefined ? hook !== "postrouting" || c.name === MASQ_CHAIN : c.base.type === "nat";
      const next: Flow[] = [];
      for (const f of live) {
        const destNat = hook === "prerouting" || hook === "output";
        if (isNat && (destNat ? f.dnatTo !== undefined : f.snatBy !== undefined)) {
          next.push(f);
          continue;
        }
        const start: State = {
          probability: f.probability,
          packet: f.packet,
          path: f.path,
          checks: f.checks,
          caveats: f.caveats,
          ...(f.heldByAffinity !== undefined ? { heldByAffinity: f.heldByAffinity } : {}),
          ...(f.assumed !== undefined ? { assumed: f.assumed } : {}),
          ...(f.shortCircuits !== undefined ? { shortCircuits: f.shortCircuits } : {}),
        };
        for (const e of this.run(c.name, [start], 0)) {
          const { how, dnatTo, decidedBy, missingChain } = e;
          const flow: Flow = {
            ...f,
            probability: e.probability,
            packet: e.packet,
            path: e.path,
            checks: e.checks,
            caveats: e.caveats,
            ...(e.heldByAffinity !== undefined ? { heldByAffinity: e.heldByAffinity } : {}),
            ...(e.assumed !== undefined ? { assumed: e.assumed } : {}),
            ...(e.shortCircuits !== undefined ? { shortCircuits: e.shortCircuits } : {}),
          };
          switch (how) {
            case "return":
            case "accept":
              if (how === "return" && c.base?.policy === "drop") {
                stopped.push({ ...flow, how: "drop", decidedBy: chainRef(c, `policy drop`) });
              } else next.push(flow);
              break;
            case "dnat": {
              if (!isNat) {
                next.push(flow);
                break;
              }
              const p = clonePacket(flow.packet);
              const at = dnatTo!.startsWith("[") ? dnatTo!.lastIndexOf("]:") : dnatTo!.lastIndexOf(":");
              p.dst = dnatTo!.startsWith("[") ? dnatTo!.slice(1, at) : dnatTo!.slice(0, at);
              p.dport = Number(dnatTo!.slice(at + (dnatTo!.startsWith("[") ? 2 : 1)));
              // routed to input when the endpoint is one of the node's addresses (a host-network endpoint here)
              p.dstLocal = this.isLocalAddress?.(p.dst) ?? false;
              p.ctstate.add("DNAT");
              next.push({ ...flow, packet: p, dnatTo: dnatTo! });
              break;
            }
            case "masquerade":
            case "snat":
              next.push({ ...flow, snatBy: decidedBy! });
              break;
            case "drop":
            case "reject": {
              const end: FlowEnd = { ...flow, how };
              if (decidedBy) end.decidedBy = decidedBy;
              stopped.push(end);
              break;
            }
            case "missing": {
              const end: FlowEnd = { ...flow, how: "missing", missingChain: missingChain! };
              if (decidedBy) end.decidedBy = decidedBy;
              if (e.unreadable !== undefined) end.unreadable = e.unreadable;
              stopped.push(end);
              break;
            }
          }
        }
      }
      live = next;
    }
    return { passed: live, stopped };
  }
}

export function verdictOf(st: Extract<NftStatement, { kind: "vmap" }>, target: string): NftVerdict {
  const e = st.entries?.find((x) => x.verdict.target === target);
  return e?.verdict ?? { kind: "goto", target };
}


export function outcomeOf(
  f: Flow,
  verdict: TraceOutcome["verdict"],
  masqueraded: boolean | undefined,
  decidedBy: RuleRef | undefined,
): TraceOutcome {
  const o: TraceOutcome = {
    probability: f.probability,
    verdict,
    mark: f.markAfterNat ?? f.packet.mark,
    path: f.path,
    masqueradeChecks: f.checks,
    caveats: [...new Set(f.caveats)],
  };
  if (f.dnatTo !== undefined) o.dnatTo = f.dnatTo;
  if (masqueraded !== undefined) o.masqueraded = masqueraded;
  if (decidedBy) o.decidedBy = decidedBy;
  if (f.heldByAffinity !== undefined) o.heldBySessionAffinity = f.heldByAffinity;
  if (f.assumed && f.assumed.length > 0) o.assumedNotMatched = f.assumed;
  if (f.shortCircuits !== undefined) o.shortCircuits = f.shortCircuits;
  return o;
}

/**
 * A `dnat to` the tracer can follow: an IP address and, when given, a port 1–65535 (what nft itself accepts, and
 * kube-proxy writes as `dnat to ENDPOINT`), as iptables/trace.ts checks `--to-destination`.
 * @throws {NftTraceError} naming the table, chain and handle (or line) of the rule: the dump was edited or cut, and
 *   an endpoint read from it would be a confident wrong answer (the node is then reported not analysed).
 */
function checkDnatTarget(addr: string, port: number | undefined, rule: NftRule, text: string): void {
  if (isIPAddress(addr) && (port === undefined || (Number.isInteger(port) && port >= 1 && port <= 65535))) return;
  const at = rule.handle !== undefined ? `handle ${rule.handle}` : `line ${rule.line}`;
  throw new NftTraceError(`nftables ${rule.family} ${rule.table} chain ${rule.chain} ${at}: "${text}" is not an IP address and port 1-65535: "${nftRuleRef(rule).raw}"`);
}

/** Whether a rule ends in `masquerade` or `snat` (it decides masquerade itself, without the mark). */
function snats(rule: NftRule): boolean {
  return rule.statements.some((st) => st.kind === "masquerade" || (st.kind === "nat" && st.nat === "snat"));
}
