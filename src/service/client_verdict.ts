/**
 * Turns the outcomes of one trace into a verdict for one kind of client: where new connections go (with shares),
 * whether they are masqueraded, and the rules that decide it, in words an operator can check against the dump.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { type RuleCheck, type RuleRef, rulesAt, rulesInChains, type ShortCircuitCheck, type TraceOutcome, type TraceResult } from "./trace.ts";
import type { ClientKind, ClientVerdict, EndpointShare, Evidence } from "./report.ts";
import { compareNatural, compareText } from "../model/order.ts";

const EPS = 1e-9;

/** Shares closer than this to 0 or 1 are snapped (kernel fixed-point remainders of ~1e-10). */
function snap(x: number): number {
  if (Math.abs(x) < EPS) return 0;
  if (Math.abs(1 - x) < EPS) return 1;
  return x;
}

/**
 * Builds a {@link ClientVerdict} from a trace.
 * @param client the kind of client.
 * @param description human description ("pod on k8s1 (10.244.0.10)").
 * @param source the source address traced.
 * @param trace the tracer's result.
 * @returns the verdict; `endpoints` sorted by address.
 */
export function verdictFromTrace(client: ClientKind, description: string, source: string, trace: TraceResult): ClientVerdict {
  const byEndpoint = new Map<string, EndpointShare>();
  let dropped = 0;
  let rejected = 0;
  let notHandled = 0;
  const forwarded: TraceOutcome[] = [];
  /**
   * Endpoints reached by a branch that was not masqueraded only if a rule whose match could not be told did not match:
   * one marking for masquerade (kube-proxy's local-traffic detector, KUBE-MARK-MASQ / mark-for-masquerade) or one that
   * masquerades itself (another component's POSTROUTING `-o eth0 -j MASQUERADE`, the output interface not being
   * collected): {@link masqueradeNotKnown}.
   */
  const maybeMasqueraded = new Set<string>();
  for (const o of trace.outcomes) {
    if (o.verdict === "dnat" && o.dnatTo) {
      forwarded.push(o);
      if (masqueradeNotKnown(o)) maybeMasqueraded.add(o.dnatTo);
      const cur = byEndpoint.get(o.dnatTo);
      const via = o.path.find((r) => r.chain.startsWith("KUBE-SEP-") || r.chain.startsWith("endpoint-"))?.chain;
      if (cur) {
        cur.share = (cur.share ?? 0) + o.probability;
        cur.masqueraded = cur.masqueraded || o.masqueraded === true;
      } else {
        const e: EndpointShare = { endpoint: o.dnatTo, share: o.probability, masqueraded: o.masqueraded === true };
        if (via) e.via = via;
        byEndpoint.set(o.dnatTo, e);
      }
    } else if (o.verdict === "unresolved") {
      const key = `unknown (${o.missingChain} not in the dump)`;
      const cur = byEndpoint.get(key);
      if (cur) cur.share = (cur.share ?? 0) + o.probability;
      else byEndpoint.set(key, { endpoint: key, share: o.probability, via: o.missingChain! });
    } else if (o.verdict === "drop") dropped += o.probability;
    else if (o.verdict === "reject") rejected += o.probability;
    else notHandled += o.probability;
  }
  // IPVS schedulers without a fixed share (trace.sharesFixed false): the tracer's even split is no share to show
  const endpoints = [...byEndpoint.values()].map((e) => ({ ...e, share: trace.sharesFixed === false ? null : snap(e.share ?? 0) }));
  // an endpoint whose branches were marked by no rule but one whose match is not known: `masqueraded` is left
  // out (not known), so that what follows from "not masqueraded" (a reply that bypasses the node) is not asserted
  // from an assumption (the reason says which rule decides)
  for (const e of endpoints) if (e.masqueraded === false && maybeMasqueraded.has(e.endpoint)) delete e.masqueraded;
  endpoints.sort((a, b) => compareNatural(a.endpoint, b.endpoint));
  dropped = snap(dropped);
  rejected = snap(rejected);
  notHandled = snap(notHandled);
  // the forwarded share from the outcomes themselves (an endpoint's share may be unknown: IPVS live schedulers)
  const fwd = snap(forwarded.reduce((s, o) => s + o.probability, 0) + endpoints.filter((e) => e.endpoint.startsWith("unknown (")).reduce((s, e) => s + (e.share ?? 0), 0));
  let outcome: ClientVerdict["outcome"] = "mixed";
  if (fwd === 1) outcome = "forwarded";
  else if (dropped === 1) outcome = "dropped";
  else if (rejected === 1) outcome = "rejected";
  else if (notHandled === 1) outcome = "not-handled";
  const masqFlags = forwarded.map((o) => o.masqueraded === true);
  const masquerade: ClientVerdict["masquerade"] = masqFlags.length === 0
    ? "n/a"
    : masqFlags.every((x) => x)
    ? "always"
    : masqFlags.some((x) => x)
    ? "some"
    : "never";
  const evidence = collectEvidence(trace.outcomes);
  const caveats = [...new Set([...trace.notes, ...trace.outcomes.flatMap((o) => o.caveats)])];
  const v: ClientVerdict = {
    client,
    description,
    source,
    outcome,
    endpoints,
    masquerade,
    reason: shortCircuitReason(explain(outcome, masquerade, forwarded, trace.outcomes, endpoints), masquerade, forwarded, trace.outcomes) +
      assumedSets(forwarded.length > 0 ? forwarded : trace.outcomes),
    evidence,
    caveats,
  };
  if (dropped > 0) v.dropped = dropped;
  if (rejected > 0) v.rejected = rejected;
  if (notHandled > 0) v.notHandled = notHandled;
  const assumed = new Map(trace.outcomes.flatMap((o) => o.assumedNotMatched ?? []).map((r) => [`${r.table}/${r.line}/${r.handle ?? ""}`, r] as const));
  if (assumed.size > 0) v.assumedNotMatched = [...assumed.values()];
  const held = trace.outcomes.find((o) => o.heldBySessionAffinity !== undefined)?.heldBySessionAffinity;
  if (held !== undefined) v.heldBySessionAffinity = held;
  const untracked = trace.outcomes.find((o) => o.untrackedBy !== undefined)?.untrackedBy;
  if (untracked !== undefined) v.untrackedBy = untracked;
  return v;
}

/**
 * Whether a branch's masquerade is not known: it was not masqueraded, but a rule on its way that would have masqueraded
 * it could not be told to match or not — a rule marking for masquerade (`! -i cni0 -j KUBE-MARK-MASQ` with the input
 * interface not known) or one masquerading itself (`-o eth0 -j MASQUERADE`, nft `oifname … masquerade`, with the
 * output interface not known: the route the packet takes out, which decides it, is not collected). The trace went on
 * as if it did not match (its caveat says "assumed not to match"); the answer must not state "not masqueraded" as a
 * fact: the endpoint's `masqueraded` is left out and the reason says which rule decides (docs/report.md).
 * A branch delivered to an address of this node never reaches POSTROUTING, so nothing there can masquerade it.
 * @param o one outcome of a trace.
 * @returns true when its masquerade rests on a rule whose match is not known.
 */
export function masqueradeNotKnown(o: TraceOutcome): boolean {
  return o.masqueraded !== true && o.deliveredLocally !== true && o.masqueradeChecks.some((c) => c.matched === "unknown");
}

/**
 * The words of the rule a branch not known to be masqueraded rests on ({@link masqueradeNotKnown}):
 * `not masqueraded if line N (CHAIN) does not apply, which is not known: WHY`.
 */
function ifNotApplies(c: RuleCheck): string {
  return `not masqueraded if ${rulesAt([c.rule])} (${c.rule.chain}) does not apply, which is not known: ${c.why}`;
}

/**
 * IPVS mode without the node's `ipset list`: the ipsets the answer took as kube-proxy fills them (iptables/trace.ts
 * assumedIpsets), said in the headline (the caveats name each rule), since the answer rests on them.
 */
function assumedSets(outcomes: TraceOutcome[]): string {
  const sets = [...new Set(outcomes.flatMap((o) => o.assumedIpsets ?? []))];
  if (sets.length === 0) return "";
  return ` (assuming ${sets.length === 1 ? `ipset ${sets[0]} holds` : `ipsets ${sets.join(", ")} hold`} what kube-proxy writes into ${sets.length === 1 ? "it" : "them"}: the node's members were not collected)`;
}

/**
 * The externalTrafficPolicy Local short-circuit rules (trace.ts ShortCircuitCheck) that decide a client's endpoints:
 * the one each outcome took (it reaches every endpoint), else, for an outcome that took none, those it missed (it
 * goes on to this node's endpoints only, or is dropped when there are none).
 */
function decidingShortCircuits(o: TraceOutcome): ShortCircuitCheck[] {
  const all = o.shortCircuits ?? [];
  const taken = all.filter((c) => c.matched === true);
  return taken.length > 0 ? taken : all;
}

/** The role of a short-circuit rule in a client's evidence, in the words of "does not mark: …" for marking rules. */
function shortCircuitRole(c: ShortCircuitCheck): string {
  const who = c.traffic === "pod" ? "pod traffic" : "the node's own traffic";
  if (c.matched === true) {
    return `short-circuits ${who} to ${c.to}, every endpoint of the Service: kube-proxy exempts it from externalTrafficPolicy Local`;
  }
  return c.matched === "unknown"
    ? `may short-circuit it to ${c.to} (every endpoint): ${c.why}`
    : `does not short-circuit it to ${c.to} (every endpoint): ${c.why}`;
}

/**
 * The externalTrafficPolicy Local short-circuit in a client's reason (pkg/proxy/iptables/proxier.go and
 * pkg/proxy/nftables/proxier.go syncProxyRules, the external chain when `svcInfo.ExternalPolicyLocal()`: "pod traffic
 * for … external destinations" `IfLocal()` → clusterPolicyChain, nft comment "short-circuit pod traffic"):
 * - a pod the pod-traffic rule took: the reason says first that it bypasses externalTrafficPolicy Local and reaches
 *   every endpoint, by that rule; when it is not masqueraded, that no rule on its path marks it, naming the marking
 *   rule the short-circuit jumped past where the trace knows it (iptables "masquerade LOCAL traffic", RuleCheck
 *   `bypassedBy`), not the first marking rule it missed (in nftables mode the ClusterIP masquerade rule of the service
 *   chain, which concerns other clients);
 * - a client every short-circuit rule left to the local policy (from outside; a pod of another node under an interface
 *   detector): `; not short-circuited to every endpoint (KUBE-SVC-…) in KUBE-EXT-…: <fact> (line N) nor <fact> (lines
 *   M, P; rule wants …)`, each fact once with every rule it decides: the "masquerade LOCAL traffic" rule the reason
 *   names for its masquerade, missed for the same fact as the "route LOCAL traffic" one, is folded in.
 * @param base the reason {@link explain} gives.
 * @param masquerade the verdict's masquerade.
 * @param forwarded the outcomes translated to an endpoint.
 * @param all every outcome of the trace.
 * @returns the reason.
 */
function shortCircuitReason(base: string, masquerade: ClientVerdict["masquerade"], forwarded: TraceOutcome[], all: TraceOutcome[]): string {
  const taken = forwarded.flatMap((o) => o.shortCircuits ?? []).filter((c) => c.matched === true && c.traffic === "pod");
  if (taken.length > 0) {
    const c = taken[0]!;
    const unknownMark = forwarded.some((o) => o.masqueradeChecks.some((m) => m.matched === "unknown"));
    // iptables: the marking rule the short-circuit jumped past (RuleCheck bypassedBy: "masquerade LOCAL traffic")
    const skipped = forwarded.flatMap((o) => o.masqueradeChecks).filter((m) => m.matched === false && m.bypassedBy?.line === c.rule.line && m.bypassedBy.table === c.rule.table).map((m) => m.rule);
    const masq = masquerade === "never" && !unknownMark && base.startsWith("not masqueraded: ")
      ? `not masqueraded: ${skipped.length > 0 ? `it skips ${rulesAt(skipped)}, a mark for masquerade; ` : ""}no rule on its path marks it`
      : base;
    return `bypasses externalTrafficPolicy Local: ${rulesInChains([c.rule])} short-circuits pod traffic to ${c.to}, every endpoint; ${masq}`;
  }
  const checks = all.flatMap((o) => o.shortCircuits ?? []);
  if (checks.length === 0 || checks.some((c) => c.matched === true)) return base;
  // each fact once, with the rules it decides (a rule met on several branches counted once)
  const facts = new Map<string, RuleRef[]>();
  const seen = new Set<string>();
  const note = (why: string, rule: RuleRef) => {
    const key = `${rule.table}/${rule.line}/${rule.handle ?? ""}`;
    if (seen.has(key)) return;
    seen.add(key);
    facts.set(why, [...(facts.get(why) ?? []), rule]);
  };
  const unknown: string[] = [];
  for (const c of checks) {
    if (c.matched === "unknown") {
      const key = `${c.rule.table}/${c.rule.line}/${c.rule.handle ?? ""}`;
      if (!seen.has(key)) unknown.push(`${rulesAt([c.rule])} may apply, which is not known: ${c.why}`);
      seen.add(key);
    } else note(c.why ?? "it does not match", c.rule);
  }
  // the reason's masquerade clause "not masqueraded: line N (CHAIN) does not apply: WHY" for a marking rule of the same
  // chain missed for a fact already said: folded into that fact
  let head = base;
  const chain = checks[0]!.rule.chain;
  const m = /^not masqueraded: (?:line|handle) (\d+) \(([^)]*)\) does not apply: (.*)$/.exec(base);
  if (m && m[2] === chain && facts.has(m[3]!)) {
    const rule = forwarded.flatMap((o) => o.masqueradeChecks).find((c) => c.matched === false && String(c.rule.line) === m[1] && c.rule.chain === chain)?.rule;
    if (rule) {
      facts.get(m[3]!)!.push(rule);
      facts.get(m[3]!)!.sort((a, b) => a.line - b.line);
      head = "not masqueraded and";
    }
  }
  const words = [...facts].map(([why, rules]) => {
    const at = rulesAt(rules);
    const wants = /^(.*) \((rule wants [^()]*)\)$/.exec(why);
    return wants ? `${wants[1]} (${at}; ${wants[2]})` : `${why} (${at})`;
  });
  // "source X is not in A" + "source X is not a local address …" → "source X is not in A (…) nor a local address …"
  const prefix = /^source \S+ is not /.exec(words[0] ?? "")?.[0];
  const said = prefix && words.every((w) => w.startsWith(prefix)) ? prefix + words.map((w) => w.slice(prefix.length)).join(" nor ") : words.join("; ");
  const to = [...new Set(checks.map((c) => c.to))].join(", ");
  const text = [said, ...unknown].filter(Boolean).join("; ");
  return head === base ? `${base}; not short-circuited to every endpoint (${to}) in ${chain}: ${text}` : `${head} not short-circuited to every endpoint (${to}) in ${chain}: ${text}`;
}

function checkKey(c: RuleCheck): string {
  return `${c.rule.table}/${c.rule.line}/${c.matched}`;
}

function collectEvidence(outcomes: TraceOutcome[]): Evidence[] {
  const seen = new Set<string>();
  const out: Evidence[] = [];
  /** Evidence by rule (table, line, handle): a rule with a second role says both, in one entry. */
  const byRule = new Map<string, Evidence>();
  const add = (e: Evidence, key: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    const rk = `${e.rule.table}/${e.rule.line}/${e.rule.handle ?? ""}`;
    const same = byRule.get(rk);
    if (same) {
      if (!same.role.split("; ").includes(e.role)) same.role = `${same.role}; ${e.role}`;
      return;
    }
    byRule.set(rk, e);
    out.push(e);
  };
  for (const o of outcomes) {
    // the externalTrafficPolicy Local short-circuit decides which endpoints (all, or this node's), before masquerade
    for (const c of decidingShortCircuits(o)) add({ rule: c.rule, role: shortCircuitRole(c) }, `s/${c.rule.table}/${c.rule.line}/${c.matched}`);
    for (const c of o.masqueradeChecks) {
      const role = (c.matched === true
        ? c.rule.table.includes("kube-proxy") ? "marks for masquerade (mark-for-masquerade)" : "marks for masquerade (KUBE-MARK-MASQ)"
        : c.matched === "unknown"
        ? `${c.snat ? "may masquerade (SNAT)" : "may mark for masquerade"}: ${c.why}`
        : `does not mark: ${c.why}`) + (c.assumed !== undefined ? "; its ipset's members were not collected, taken as kube-proxy writes them" : "");
      add({ rule: c.rule, role }, checkKey(c));
      // the rule that took the packet past a marking rule decided that it was not marked: named too
      if (c.bypassedBy) add({ rule: c.bypassedBy, role: `takes the packet past line ${c.rule.line}, a rule that marks for masquerade` }, `b/${c.bypassedBy.table}/${c.bypassedBy.line}`);
    }
    if (o.decidedBy) {
      const role = o.verdict === "drop"
        ? "drops"
        : o.verdict === "reject"
        ? "rejects"
        : o.masqueraded
        ? "masquerades (SNAT to the node's address)"
        : o.verdict === "accept"
        ? "accepts without DNAT"
        : "decides";
      add({ rule: o.decidedBy, role }, `d/${o.decidedBy.table}/${o.decidedBy.line}`);
    }
  }
  out.sort((a, b) => compareText(a.rule.table, b.rule.table) || a.rule.line - b.rule.line);
  return out;
}

/**
 * Why kube-proxy's rule rejects, from the rule itself: `: no usable endpoints` for the Service's no-endpoints reject
 * (iptables `-m comment --comment "… has no endpoints" -j REJECT`; nftables the `no-endpoint-services` /
 * `no-endpoint-nodeports` maps of `service-endpoints-check` / `nodeport-endpoints-check`, and `reject-chain`),
 * the invalid-port reject of nftables mode (`cluster-ips-check`: `ip daddr @cluster-ips reject comment "Reject traffic
 * to invalid ports of ClusterIPs"`, pkg/proxy/nftables/proxier.go), else nothing (a rule of another component).
 */
export function rejectReason(rule: RuleRef | undefined): string {
  if (!rule) return "";
  if (rule.chain === "cluster-ips-check" || /invalid ports of ClusterIPs/.test(rule.raw)) {
    return ": the node has no rule for this port of the ClusterIP (kube-proxy rejects packets to a ClusterIP on a port it does not serve)";
  }
  if (/has no endpoints|@no-endpoint-/.test(rule.raw) || ["reject-chain", "service-endpoints-check", "nodeport-endpoints-check"].includes(rule.chain)) {
    return ": no usable endpoints";
  }
  if (rule.chain === "KUBE-IPVS-FILTER") {
    // ipvs/proxier.go: new connections to an address bound to kube-ipvs0 that is in no Service set are rejected
    return ": the address is bound to kube-ipvs0 (KUBE-IPVS-IPS) but in none of the sets of Service addresses and ports (KUBE-CLUSTER-IP, KUBE-EXTERNAL-IP, KUBE-LOAD-BALANCER, KUBE-HEALTH-CHECK-NODE-PORT)";
  }
  return "";
}

function lineOf(o: TraceOutcome | undefined): string {
  return o?.decidedBy ? rulesAt([o.decidedBy]) : "";
}
/**
 * Why a client has no masquerade answer ("n/a": no path reaches an endpoint the dump shows). A branch into a chain the
 * dump lacks (a partial listing) is not known, and that chain is what decides; otherwise no path is forwarded.
 */
function notApplicable(all: TraceOutcome[]): string {
  const unresolved = all.filter((o) => o.verdict === "unresolved");
  if (unresolved.length > 0) {
    const seen = new Set<string>();
    const words: string[] = [];
    for (const o of unresolved) {
      const chain = o.missingChain ?? "a chain";
      if (seen.has(chain)) continue;
      seen.add(chain);
      const rest = chain.startsWith("the rest of ");
      const where = rest ? `${chain}, which the dump shows incompletely` : `${chain}, which the dump lacks`;
      const via = !rest && o.decidedBy ? ` (${lineOf(o)} (${o.decidedBy.chain}) jumps to it)` : "";
      words.push(`${where}${via}`);
    }
    return `not known: the packet goes on into ${words.join(", and ")}: what is there decides where it goes and whether it is masqueraded`;
  }
  return "does not apply: no path forwards the packet to an endpoint";
}

function explain(
  outcome: ClientVerdict["outcome"],
  masquerade: ClientVerdict["masquerade"],
  forwarded: TraceOutcome[],
  all: TraceOutcome[],
  endpoints: EndpointShare[],
): string {
  if (outcome === "rejected") {
    const o = all.find((x) => x.verdict === "reject");
    // IPVS: a virtual server without a real server to send to refuses the connection itself (no rule decides it)
    if (o && !o.decidedBy) return `rejected by IPVS: ${o.caveats.find((c) => c.startsWith("IPVS virtual server")) ?? "no real server to send to"}`;
    return `rejected by ${lineOf(o)} (${o?.decidedBy?.chain})${rejectReason(o?.decidedBy)}`;
  }
  if (outcome === "dropped") {
    const o = all.find((x) => x.verdict === "drop");
    return `dropped by ${lineOf(o)} (${o?.decidedBy?.chain})`;
  }
  if (outcome === "not-handled") {
    // Layouts before v1.25: KUBE-MARK-DROP marked it, but only INPUT/OUTPUT jump to kubelet's KUBE-FIREWALL.
    // the mark is the one the node's KUBE-FIREWALL drops (iptables/trace.ts dropMarkOf), not a fixed 0x8000
    const marked = all.find((o) => o.markedForDrop !== undefined);
    if (marked) {
      const by = marked.markedForDrop!.by;
      const head = `marked for drop by ${lineOf({ ...marked, decidedBy: by })} (${by?.chain})`;
      // forwarded only because the destination was taken as not local, which was not collected (trace.ts undecided)
      const u = marked.undecided;
      if (u && !u.taken && u.otherwise === "drop") {
        return `${head}: forwarded untranslated if ${u.notFact} (KUBE-FIREWALL, which drops the mark, is hooked in INPUT and OUTPUT only), dropped by ${u.otherwiseBy ?? "KUBE-FIREWALL"} if it is; which is not known: ${u.notCollected} was not collected`;
      }
      return `${head}, but forwarded: KUBE-FIREWALL, which drops the mark, is hooked in INPUT and OUTPUT only; the packet leaves untranslated`;
    }
    const untracked = all.find((o) => o.untrackedBy !== undefined)?.untrackedBy;
    if (untracked) return `untracked by raw ${lineOf({ ...all[0]!, decidedBy: untracked })} (${untracked.chain}, NOTRACK): nat is skipped, so kube-proxy's rules do not translate it; it goes where it is addressed`;
    return "no kube-proxy rule matches this destination on this node: the packet leaves untranslated";
  }
  if (masquerade === "n/a") return notApplicable(all);
  const fired = forwarded.flatMap((o) => o.masqueradeChecks.filter((c) => c.matched === true));
  // a marking rule a RETURN skipped names the decision more closely than an earlier rule that did not match
  const missed = forwarded.flatMap((o) => o.masqueradeChecks.filter((c) => c.matched === false))
    .sort((a, b) => Number(b.why?.startsWith("not reached") ?? false) - Number(a.why?.startsWith("not reached") ?? false));
  const snatRules = forwarded.filter((o) => o.masqueraded && o.decidedBy).map((o) => o.decidedBy!);
  const snat = snatRules.length > 0 ? `SNATed by ${rulesAt(snatRules)}` : "SNATed by KUBE-POSTROUTING (not in the dump; assumed as kube-proxy writes it)";
  const by = (rules: RuleRef[]) =>
    rules.length > 0
      ? `marked by ${rulesInChains(rules)}, ${snat}`
      : `${snat} (${forwarded.find((o) => o.masqueraded)?.decidedBy?.chain ?? "POSTROUTING"})`;
  if (masquerade === "always") {
    return `masqueraded: ${by(fired.map((c) => c.rule))}`;
  }
  if (masquerade === "never" && fired.length > 0 && forwarded.every((o) => o.deliveredLocally)) {
    // marked, but translated to this node's own address: delivered in INPUT, the mark never meets POSTROUTING
    return `not masqueraded: marked by ${rulesInChains(fired.map((c) => c.rule))}, but the endpoint is an address of this node: the translated packet is delivered here and never reaches POSTROUTING, where the mark would be acted on; the endpoint sees the client's own address`;
  }
  if (masquerade === "never") {
    // a marking rule whose match could not be told (an ipset not read, an interface not known): the answer rests on
    // the assumption that it did not match, which the headline says
    const maybe = forwarded.flatMap((o) => o.masqueradeChecks.filter((c) => c.matched === "unknown"));
    const first = missed[0];
    if (maybe[0]) {
      const known = first ? `; ${rulesAt([first.rule])} (${first.rule.chain}) does not apply: ${first.why}` : "";
      return `${ifNotApplies(maybe[0])}${known}`;
    }
    return first
      ? `not masqueraded: ${rulesAt([first.rule])} (${first.rule.chain}) does not apply: ${first.why}`
      : "not masqueraded: no rule on the path marks the packet for masquerade";
  }
  const masqEps = endpoints.filter((e) => e.masqueraded).map((e) => e.endpoint);
  const share = endpoints.filter((e) => e.masqueraded).reduce((s, e) => s + (e.share ?? 0), 0);
  const marked = forwarded.filter((o) => o.masqueraded).flatMap((o) => o.masqueradeChecks.filter((c) => c.matched === true).map((c) => c.rule));
  const howMany = endpoints.some((e) => e.share === null) ? "the IPVS scheduler decides how often: no fixed share" : `${Math.round(share * 10000) / 100}% of new connections`;
  // the other branches, when one leaves by a rule whose match is not known (the output interface of `-o eth0 -j
  // MASQUERADE`): said as for "never", so that no client reads a flat "not masqueraded" for them
  const unsure = forwarded.filter((o) => masqueradeNotKnown(o));
  const notKnown = unsure.length === 0
    ? ""
    : `; to ${[...new Set(unsure.map((o) => o.dnatTo!))].sort(compareNatural).join(", ")}: ${ifNotApplies(unsure[0]!.masqueradeChecks.find((c) => c.matched === "unknown")!)}`;
  return `masqueraded only when sent to ${masqEps.join(", ")} (${howMany}): ${by(marked)}${notKnown}`;
}

/**
 * Whether a client's trace took a session-affinity set's remembered endpoint (nftables mode: the capture shows the
 * client in an `affinity-…` set, ClientVerdict `heldBySessionAffinity`): its endpoints are that client's, not the
 * balancing new clients get, so it never stands for an entry point's shares or for drift.
 */
export function heldByAffinity(v: ClientVerdict): boolean {
  return v.heldBySessionAffinity !== undefined;
}

/**
 * Words a ClusterIP verdict of a node whose rules have no local-traffic detector (cluster_cidr.ts
 * iptablesWithoutLocalDetector, nftables/datapath.ts `noLocalDetector`; local_detector.ts noDetectorCause). A client
 * that is not masqueraded is so because kube-proxy wrote no ClusterIP masquerade rule, not because of the rule the
 * trace happened to miss last (an endpoint's own hairpin rule, `-s <endpoint> -j KUBE-MARK-MASQ` / `ip saddr
 * <endpoint> jump mark-for-masquerade`, which concerns that endpoint only).
 * Call it right after {@link verdictFromTrace}, before the checks that add to the reason.
 * @param v the verdict (mutated: `reason`, when not masqueraded and the answer rests on no unknown match).
 * @param mode the node's proxy mode: iptables or nftables (no masquerade rule at all for ClusterIPs: pkg/proxy/iptables
 *   and pkg/proxy/nftables proxier.go syncProxyRules) or ipvs (only `KUBE-CLUSTER-IP src,dst`, for sources that are
 *   Service addresses).
 * @param cause why kube-proxy has no detector, as far as the bundle tells (local_detector.ts NoDetectorCause `short`).
 */
export function sayNoLocalDetector(v: ClientVerdict, mode: "iptables" | "ipvs" | "nftables", cause: string): void {
  if (v.masquerade !== "never" || !v.reason.startsWith("not masqueraded: ")) return;
  v.reason = mode !== "ipvs"
    ? `not masqueraded: no rule on the path marks it: the node's rules have no local-traffic detector (${cause}), so kube-proxy writes no ClusterIP masquerade rule (pkg/proxy/${mode}/proxier.go syncProxyRules: only with masqueradeAll or localDetector.IsImplemented())`
    : `${v.reason}; the node's rules have no local-traffic detector (${cause}), so kube-proxy masquerades ClusterIP traffic only from a Service address (KUBE-CLUSTER-IP src,dst, pkg/proxy/ipvs/proxier.go)`;
}
