/**
 * What every datapath's tracer takes and gives (iptables, IPVS, nftables): one packet in, the possible fates of its
 * connection out, each with its probability and the rules that decided it. A {@link Datapath} (datapath.ts) is
 * anything that can answer {@link TraceResult}s for packets; the verdicts (client_verdict.ts), the drift and the
 * report are computed from these alone, so they do not depend on which proxy mode programmed the node.
 *
 * Runtime-neutral: no I/O.
 * @module
 */

/** Where a new connection enters the node's datapath: from the network or a pod (PREROUTING) or a local process (OUTPUT). */
export type TraceHook = "PREROUTING" | "OUTPUT";

/** What a tracer is told of the node beyond its rules. */
export interface TraceContext {
  /**
   * Whether an address is the node's own (its collected addresses, else its InternalIP): a packet arriving from
   * outside and translated to one (a host-network endpoint on this node) is delivered locally (filter INPUT) and never
   * meets nat POSTROUTING, so a masquerade mark on it masquerades nothing. Absent: translated destinations are taken
   * as not local.
   */
  isLocalAddress?: (ip: string) => boolean;
}

/** A packet as the tracer sees it at one point of its path. */
export interface TracePacket {
  /** 4 or 6. */
  family: 4 | 6;
  src: string;
  dst: string;
  proto: "tcp" | "udp" | "sctp";
  dport: number;
  /** Client source port; matters only for `--sport` matches (rare). @default 40000 */
  sport?: number;
  /** `-m addrtype --src-type LOCAL`: the source is an address of this node. */
  srcLocal: boolean;
  /** `-m addrtype --dst-type LOCAL`: the destination is an address of this node (NodePort, IPVS VIPs on kube-ipvs0). */
  dstLocal: boolean;
  /**
   * `dstLocal` is an assumption, not a fact: the node's local addresses were not collected (an address such as a
   * LoadBalancer IP may or may not be bound on the node). Verdicts that depend on it say so.
   */
  dstLocalAssumed?: boolean;
  /**
   * Whether the destination is local cannot be told at all (a one-packet question to an address that is none of the
   * node's known ones nor the Service's, the node's addresses not collected): `--dst-type LOCAL` and `fib daddr type
   * local` are then unknown (assumed not to match, said), not a confident "not local".
   */
  dstLocalUnknown?: boolean;
  /**
   * Input interface when known (`-i`, `iifname`); unknown interfaces make those matches "unknown". `""` is none: the
   * tracers set it for a packet traced from OUTPUT (a locally generated packet has no input interface), whatever the
   * caller gave.
   */
  inInterface?: string;
  /** Output interface when known (`-o`). */
  outInterface?: string;
  /** Packet mark (`-m mark`), e.g. 0x4000 after KUBE-MARK-MASQ. */
  mark: number;
  /** conntrack states for `-m conntrack --ctstate`: NEW, plus DNAT/SNAT once translated. */
  ctstate: Set<string>;
  /** The IPVS virtual service that took the packet (`-m ipvs --vaddr/--vport/--vproto`), once IPVS translated it. */
  ipvsVirtual?: { ip: string; port: number };
}

/** A reference to one rule in a dump: the evidence behind a verdict. */
export interface RuleRef {
  table: string;
  chain: string;
  /** 1-based line in the dump; for an nftables rule or chain whose kernel handle is known, that handle (see `handle`). */
  line: number;
  /**
   * The nftables kernel handle of the rule (or chain), when the input carries handles (`nft -j`, `nft -a`): `line` is
   * then this handle, not a line of the file (`nft -a list ruleset` prints it as `# handle N`).
   */
  handle?: number;
  raw: string;
}

/**
 * How a report names where rules are: `line 12, 40` in a dump, `handle 7, 9` for nftables rules known by handle.
 * @param refs one or more rules of one node's ruleset (all of one kind).
 * @returns the words, e.g. "line 159983" or "handle 61038, 61040"; "" for none.
 */
export function rulesAt(refs: readonly RuleRef[]): string {
  if (refs.length === 0) return "";
  const nums = [...new Set(refs.map((r) => r.line))];
  return `${refs.every((r) => r.handle !== undefined) ? "handle" : "line"} ${nums.join(", ")}`;
}

/**
 * Rules with the chain each is in, for a reason an operator checks against the dump: `line 23, 26 (KUBE-SERVICES)`
 * when they share a chain, `line 23 (KUBE-SERVICES), line 26 (KUBE-SEP-…)` when not (grouped by chain, in the order the
 * chains first appear).
 * @param refs one or more rules of one node's ruleset.
 * @returns the words; "" for none.
 */
export function rulesInChains(refs: readonly RuleRef[]): string {
  const byChain = new Map<string, RuleRef[]>();
  for (const r of refs) {
    const key = `${r.table}\u0000${r.chain}`;
    const list = byChain.get(key);
    if (list) list.push(r);
    else byChain.set(key, [r]);
  }
  return [...byChain.values()].map((g) => `${rulesAt(g)} (${g[0]!.chain})`).join(", ");
}

/** A rule that was evaluated for a decision (e.g. a KUBE-MARK-MASQ jump), whether it fired, and why not. */
export interface RuleCheck {
  rule: RuleRef;
  matched: boolean | "unknown";
  why?: string;
  /**
   * The rule masquerades itself (iptables `-j MASQUERADE` / `-j SNAT`, nft `masquerade` / `snat`) rather than marking
   * the packet for KUBE-POSTROUTING; recorded only when its match could not be told.
   */
  snat?: true;
  /**
   * A marking rule the packet never reached: the rule that took it past (iptables: a RETURN before it, or a jump to a
   * chain that translated the packet, DNAT, before returning), which is what decided that it was not marked.
   */
  bypassedBy?: RuleRef;
  /**
   * The match rests on an ipset that was not read, taken as kube-proxy fills it (IPVS KUBE-CLUSTER-IP,
   * KUBE-LOOP-BACK): the assumption, in words ("ipset KUBE-CLUSTER-IP (not read: …)").
   */
  assumed?: string;
}

/**
 * A rule by which kube-proxy takes some clients of an externalTrafficPolicy Local Service past that policy at its
 * NodePort, LoadBalancer and external IPs: the Service's external chain sends them to its cluster policy chain (every
 * endpoint) rather than on to its local one (this node's endpoints only, or a drop when it has none). Source:
 * pkg/proxy/iptables/proxier.go and pkg/proxy/nftables/proxier.go syncProxyRules, the external traffic chain when
 * `svcInfo.ExternalPolicyLocal()`:
 * - `pod`, written only `if proxier.localDetector.IsImplemented()`: iptables `-A KUBE-EXT-X -m comment --comment "pod
 *   traffic for NS/SVC:PORT external destinations" -s CLUSTER-CIDR -j KUBE-SVC-X` (`localDetector.IfLocal()`, also
 *   `-i cni0` / `-i veth+`; in KUBE-XLB-X "Redirect pods trying to reach external loadbalancer VIP to clusterIP" before
 *   v1.24), nftables `ip saddr CIDR goto service-…` / `iifname "cni0" goto service-…` comment "short-circuit pod
 *   traffic" (`localDetector.IfLocalNFT()`);
 * - `node`, the node's own traffic: iptables "route LOCAL traffic for NS/SVC:PORT external destinations" `-m addrtype
 *   --src-type LOCAL -j KUBE-SVC-X`, nftables `fib saddr type local goto service-…` comment "short-circuit local
 *   traffic" (after the "masquerade LOCAL traffic" / "masquerade local traffic" marking rule).
 */
export interface ShortCircuitCheck {
  rule: RuleRef;
  traffic: "pod" | "node";
  /** The chain it sends to: the cluster policy chain (`KUBE-SVC-…`, `service-…`). */
  to: string;
  /** Whether the packet matched it (and went to `to`); "unknown" when the tracer cannot tell (an interface not known). */
  matched: boolean | "unknown";
  /** Why it did not match, or why that cannot be told (the matcher's words, e.g. "source 203.0.113.10 is not in 10.0.0.0/8"). */
  why?: string;
}

/** One possible fate of the connection, with its probability. Probabilities of all outcomes sum to 1. */
export interface TraceOutcome {
  /** Probability of this outcome in [0, 1], from the `--probability` cascade as the kernel applies it. */
  probability: number;
  /**
   * - `dnat`: translated to `dnatTo` by an iptables DNAT rule;
   * - `accept`: accepted in nat without DNAT (IPVS mode: IPVS translates next; or not a service address);
   * - `no-match`: no kube-proxy rule took the packet (it leaves untranslated);
   * - `drop` / `reject`: dropped (e.g. no local endpoints, loadBalancerSourceRanges) or rejected (no endpoints).
   */
  verdict: "dnat" | "accept" | "no-match" | "drop" | "reject" | "unresolved";
  /** `unresolved`: the path jumps to this chain, which the dump does not contain (a partial listing or grep). */
  missingChain?: string;
  /** `IP:PORT` the connection is DNATed to. */
  dnatTo?: string;
  /** Whether the packet leaves with its source rewritten (MASQUERADE/SNAT in POSTROUTING). Undefined if dropped. */
  masqueraded?: boolean;
  /** The packet mark after nat PREROUTING/OUTPUT (0x4000 set by KUBE-MARK-MASQ). */
  mark: number;
  /** Rules whose target was taken, in order (jumps, MARK, DNAT, the filter verdict, the POSTROUTING verdict). */
  path: RuleRef[];
  /** Rules that mark for masquerade (targets KUBE-MARK-MASQ or MARK) met on the way, fired or not, with why. */
  masqueradeChecks: RuleCheck[];
  /**
   * The externalTrafficPolicy Local short-circuit rules the packet met in an external chain, in order: the one it took
   * (it then reaches every endpoint) or those it missed (it goes on to this node's endpoints only). Absent: none met.
   */
  shortCircuits?: ShortCircuitCheck[];
  /** The rule that dropped/rejected the packet, or that masqueraded/SNATed it. */
  decidedBy?: RuleRef;
  /** Things this outcome depends on that the dump cannot show. */
  caveats: string[];
  /**
   * nftables mode: the source is in this session-affinity set when captured (`affinity-…`, kernel state), and this
   * outcome is its remembered endpoint, not the balancing a new client gets.
   */
  heldBySessionAffinity?: string;
  /**
   * Translated to an address of this node in PREROUTING (a host-network endpoint here; IPVS with a local real server):
   * delivered through INPUT, never through POSTROUTING, so a masquerade mark is not acted on.
   */
  deliveredLocally?: true;
  /**
   * Rules on the way whose match the tracer cannot tell (a match module it does not model) and that would change the
   * packet's path; the outcome assumes they did not match.
   */
  assumedNotMatched?: RuleRef[];
  /**
   * iptables: a raw-table rule untracked the packet (NOTRACK, `CT --notrack`), so nat, kube-proxy's DNAT, never saw it
   * (the verdict is then `no-match`).
   */
  untrackedBy?: RuleRef;
  /**
   * iptables layouts before v1.25: the packet carries kubelet's drop mark (`mark`, set by `by`, normally a jump to
   * KUBE-MARK-DROP; the mark is the one the dump's filter KUBE-FIREWALL drops), but goes where KUBE-FIREWALL is not
   * hooked (FORWARD), so it is not dropped.
   */
  markedForDrop?: { mark: number; by?: RuleRef };
  /**
   * The fate rests on a fact the bundle does not hold: the trace took one way, `otherwise` is the verdict the other
   * way. Iptables layouts before v1.25: whether a destination is a local address of the node (the node's addresses
   * not collected) decides whether the packet carrying kubelet's drop mark goes to INPUT, where kubelet's KUBE-FIREWALL
   * drops it, or is forwarded, where nothing does.
   */
  undecided?: UndecidedFate;
  /**
   * IPVS mode without the node's `ipset list`: the ipsets the path's rules read whose members were taken as
   * kube-proxy writes them (KUBE-CLUSTER-IP, KUBE-LOOP-BACK), not read; the caveats say so rule by rule.
   */
  assumedIpsets?: string[];
}

/** A fate that rests on a fact the bundle does not hold (TraceOutcome `undecided`). */
export interface UndecidedFate {
  /** The fact, as a clause that is true one way: `172.6.6.6 is a local address of the node`. */
  fact: string;
  /** The same clause, negated: `172.6.6.6 is not a local address of the node`. */
  notFact: string;
  /** Whether the trace took the fact as true. */
  taken: boolean;
  /** What would show it, not collected: `the node's \`ip -o addr\` / local routing table`. */
  notCollected: string;
  /** The verdict the other way. */
  otherwise: "drop" | "no-match";
  /** The rule that decides the other way (for a drop: the chain that drops), as words: `INPUT's KUBE-FIREWALL`. */
  otherwiseBy?: string;
}

/** The result of a trace. */
export interface TraceResult {
  /**
   * The outcomes. With `sharesFixed` false their probabilities split IPVS real servers evenly where the scheduler
   * gives no fixed share (least-connection, hashing): they only serve to tell each real server's masquerade.
   */
  outcomes: TraceOutcome[];
  /** false when a probability of `outcomes` is such a placeholder. */
  sharesFixed?: false;
  /** Notes that apply to every outcome (e.g. "started at KUBE-SERVICES: no PREROUTING jump in the dump"). */
  notes: string[];
}

