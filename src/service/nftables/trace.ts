/**
 * The nftables packet tracer: follows the first packet of a new connection through kube-proxy's nftables table
 * (`ip kube-proxy` / `ip6 kube-proxy`, kubernetes/kubernetes pkg/proxy/nftables/proxier.go, v1.29+) the way the kernel
 * evaluates it, and returns the same {@link TraceResult} as the iptables tracer (iptables_trace.ts), so the
 * per-client verdicts (client_verdict.ts) read the same for both modes.
 *
 * Kernel semantics modelled (nft(8), net/netfilter/nf_tables_core.c, nft_nat.c, nf_nat_core.c):
 * - Base chains are run per hook in priority order (ties: chain handle, i.e. creation order): for a client from the
 *   network or a pod, prerouting (`filter-prerouting-pre-dnat` at dstnat-10 = -110, `nat-prerouting` at dstnat = -100),
 *   then the routing decision (a destination that is a local address after DNAT goes to input, anything else to
 *   forward: `filter-input` / `filter-forward` at priority filter = 0), then postrouting (`nat-postrouting` at
 *   srcnat = 100); for a host-network process, output (`filter-output-pre-dnat` -110, `nat-output` -100,
 *   `filter-output` 0), then postrouting.
 * - A rule's statements run left to right: a match that fails ends the rule (the chain goes on with the next rule);
 *   `jump` runs the target chain and comes back; `goto` does not come back (the end of the target chain, or its
 *   `return`, goes back to whoever called the chain holding the goto); `accept` ends the current base chain (later base
 *   chains on the hook still run); `drop` and `reject` end the packet; the end of a base chain applies its policy.
 * - `dnat to` and `masquerade` end their base chain (accept) and bind the connection's NAT: once a nat chain has set up
 *   the destination (or source) mapping, later nat chains on that hook are not consulted (nf_nat_inet_fn).
 * - `KEY vmap @map` / `KEY vmap { … }` look the packet up; no element → the rule does not match.
 *   `numgen random mod N vmap { 0 : goto A, 1 : goto B, … }` branches: each value 0..N-1 is equally likely, so an
 *   endpoint mapped from k values gets exactly k/N of new connections (the shares come from the decoder,
 *   kube_proxy_nft.ts; values with no entry fall through to the next rule). The kernel draws the value as
 *   `reciprocal_scale(get_random_u32(), N)`, which is k/N to within N/2^32.
 * - `meta mark set meta mark | 0x4000` (`mark-for-masquerade`) and `meta mark & 0x4000 == 0 return` / `masquerade`
 *   (`masquerading`) are evaluated on the packet mark; every rule that requests masquerade (`jump
 *   mark-for-masquerade`, or a mark statement setting the masquerade bit) met on the way is recorded as a
 *   {@link RuleCheck}, fired or not, with the reason, like the iptables tracer does for KUBE-MARK-MASQ.
 *
 * What a ruleset cannot show is reported, not guessed: conntrack state (existing connections keep their endpoint; UDP ones of endpoints kube-proxy stops using are deleted),
 * session affinity (a new client is not in an `affinity-…` set; a client listed in the captured set is, until its
 * entry expires), interface matches (`iifname`), `numgen inc` (a round-robin counter), rate limits. Only the
 * kube-proxy table is evaluated; the caller says which other tables hook the same points.
 *
 * A chain that does not fit kube-proxy's layout (KubeProxyNft.chainAnomalies: an unmapped numgen value, an unexpected
 * rule) adds its findings as caveats of the branches that run it, worded like the node notes: `nftables: MESSAGE
 * (CHAIN handle N: RULE)`. What a trace derives from a table (base chains per hook, set indexes) is kept for the next
 * trace of the same table; per-Service chains are decoded as the trace reaches them. A chain whose rules cannot be
 * read (nft -j input with a syntax error inside a rule, found when the rule is first read) ends its branches as
 * `unresolved`, like a chain missing from the dump, with the parse error as a caveat.
 *
 * Evidence: every decision carries a {@link RuleRef} `{ table: "ip kube-proxy", chain, line, raw }` where `line` is
 * the rule's kernel handle when known (JSON input, `nft -a` listings) and its line in the input otherwise, and `raw`
 * is the rule as `nft -a list ruleset` prints it (`… comment "…" # handle 64`). A decision taken by a named map
 * element (`@no-endpoint-services`, `@service-ips`) quotes the element after the rule: `…; element 172.30.0.46 . tcp
 * . 80 comment "ns6/svc6:p80" : goto reject-chain`.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { KubeProxyNft } from "../../datapath/kube_proxy_nft.ts";
import type { TraceOutcome, TracePacket, TraceResult } from "../trace.ts";
import { nftTableLabel } from "./evidence.ts";
import { type Flow, type FlowEnd, type NftTraceOptions, clonePacket } from "./trace_types.ts";
import { NftTracer, outcomeOf } from "./tracer.ts";

/**
 * Traces the first packet of a new connection through a node's kube-proxy nftables table.
 *
 * @param layout the decoded table (decodeKubeProxyNft / decodeKubeProxyTable): its `table` is evaluated rule by
 *   rule; its per-ServicePort `numgen` shares give the branch probabilities.
 * @param packet the packet as it arrives (`family` must match the table: 4 for `ip`, 6 for `ip6`); `mark` 0 and
 *   `ctstate` `{NEW}` for a new connection; `srcLocal`/`dstLocal` answer `fib saddr/daddr type local`.
 * @param hook "PREROUTING" for a client from the network or a pod, "OUTPUT" for a host-network process.
 * @param options {@link NftTraceOptions}.
 * @returns every possible outcome with its probability (summing to 1) and notes, in the shapes of the iptables
 *   tracer: `dnat` (with `dnatTo` and `masqueraded`), `drop`, `reject`, `no-match` (leaves untranslated), `unresolved`.
 * @throws {NftTraceError} `nftables chain nesting deeper than 64 at ip kube-proxy chain X (a loop?)`, `trace has too
 *   many outcomes`, `trace too large: the ruleset branches too much`.
 * @example
 * ```ts
 * import { decodeKubeProxyNft } from "../../datapath/kube_proxy_nft.ts";
 * import { parseNftJson } from "../../datapath/nft_json.ts";
 * const [layout] = decodeKubeProxyNft(parseNftJson(json));
 * const t = traceNft(layout!, { family: 4, src: "10.0.0.5", dst: "172.30.0.41", proto: "tcp", dport: 80,
 *   srcLocal: false, dstLocal: false, mark: 0, ctstate: new Set(["NEW"]) }, "PREROUTING");
 * // t.outcomes[0].dnatTo === "10.180.0.1:80", t.outcomes[0].masqueraded === false
 * ```
 */
export function traceNft(
  layout: KubeProxyNft,
  packet: TracePacket,
  hook: "PREROUTING" | "OUTPUT",
  options: NftTraceOptions = {},
): TraceResult {
  const t = new NftTracer(
    layout,
    options.maxOutcomes ?? 10000,
    options.masqueradeMark ?? layout.masquerade.mark ?? 0x4000,
    options.isLocalAddress,
  );
  const notes = new Set<string>(options.notes ?? []);
  const wantFamily = layout.family === "ip6" ? 6 : 4;
  if (packet.family !== wantFamily) {
    notes.add(
      `the packet is IPv${packet.family} but table ${
        nftTableLabel(layout.table)
      } handles IPv${wantFamily}: no rule of it applies`,
    );
    return {
      outcomes: [
        outcomeOf({ probability: 1, packet, path: [], checks: [], caveats: [] }, "no-match", false, undefined),
      ],
      notes: [...notes],
    };
  }
  const start: Flow = { probability: 1, packet: clonePacket(packet), path: [], checks: [], caveats: [] };
  // A locally generated packet has no input interface: nftables' `iifname` reads the hook state's in-device, which the
  // output and postrouting hooks do not have (net/netfilter/nft_meta.c nft_meta_store_ifname: `dev ? dev->name : ""`
  // with nft_in(pkt) NULL, so the name compared is empty), so `iifname != "veth*"` matches and `iifname "cni0"` does not, whatever kube-proxy's
  // local-traffic detector: the input interface is known (none)
  if (hook === "OUTPUT") start.packet.inInterface = "";
  const outcomes: TraceOutcome[] = [];
  const stop = (ends: FlowEnd[]) => {
    for (const e of ends) {
      if (e.how === "missing") {
        const o = outcomeOf(e, "unresolved", undefined, e.decidedBy);
        o.missingChain = e.missingChain!;
        o.caveats.push(
          e.unreadable !== undefined
            ? `chain ${e.missingChain} cannot be read (${e.unreadable}): where this branch goes cannot be told`
            : `chain ${e.missingChain} is not in the dump (a partial listing?): where this branch goes cannot be told`,
        );
        outcomes.push(o);
      } else outcomes.push(outcomeOf(e, e.how, undefined, e.decidedBy));
    }
  };
  const first = t.hook(hook === "OUTPUT" ? "output" : "prerouting", [start], notes);
  stop(first.stopped);
  const toPost: Flow[] = [];
  const delivered: Flow[] = [];
  const translatedHere = new Set<Flow>();
  for (const f of first.passed) {
    const g: Flow = { ...f, markAfterNat: f.packet.mark };
    if (hook === "OUTPUT") toPost.push(g);
    else {
      // The routing decision: to this node (input) or through it (forward).
      const r = t.hook(g.packet.dstLocal ? "input" : "forward", [g], notes);
      stop(r.stopped);
      if (!g.packet.dstLocal) toPost.push(...r.passed);
      else {
        for (const f of r.passed) {
          // translated to an address of this node (a host-network endpoint): delivered, never in nat-postrouting
          if (f.dnatTo !== undefined && (f.packet.mark & t.markBit) !== 0) {
            f.caveats = [...f.caveats, `${f.packet.dst} is an address of this node: the translated packet is delivered here (input) and never reaches nat-postrouting, so the masquerade mark masquerades nothing: the endpoint sees the client's own address`];
          }
          if (f.dnatTo !== undefined) translatedHere.add(f);
          delivered.push(f);
        }
      }
    }
  }
  const post = t.hook("postrouting", toPost, notes);
  stop(post.stopped);
  for (const f of post.passed) {
    if (hook === "OUTPUT" && f.packet.dstLocal) {
      // A host process reaching one of the node's own addresses loops back through input, arriving on lo.
      const r = t.hook("input", [{ ...f, packet: { ...clonePacket(f.packet), inInterface: "lo" } }], notes);
      stop(r.stopped);
      delivered.push(...r.passed);
    } else delivered.push(f);
  }
  for (const f of delivered) {
    const masq = f.snatBy !== undefined;
    const o = outcomeOf(f, f.dnatTo !== undefined ? "dnat" : "no-match", masq, masq ? f.snatBy : undefined);
    if (translatedHere.has(f)) o.deliveredLocally = true;
    outcomes.push(o);
  }
  return { outcomes, notes: [...notes] };
}
