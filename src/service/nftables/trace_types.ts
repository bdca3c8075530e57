/**
 * The state a packet carries through the nftables tracer, and the tracer's options and errors.
 *
 * Part of the nftables tracer (trace.ts has the whole story). Runtime-neutral: no I/O.
 * @module
 */
import type { RuleCheck, RuleRef, ShortCircuitCheck, TracePacket } from "../trace.ts";

/** Options of {@link traceNft}. */
export interface NftTraceOptions {
  /** The mark bit `mark-for-masquerade` sets. @default the decoded bit, else 0x4000 */
  masqueradeMark?: number;
  /** Maximum outcomes before the tracer gives up (protects against pathological rulesets). @default 10000 */
  maxOutcomes?: number;
  /** Notes to add to every result (e.g. other tables hooking the same points). @default [] */
  notes?: string[];
  /** Whether an address is the node's own: a destination translated to one is routed to input (see TraceContext). */
  isLocalAddress?: (ip: string) => boolean;
}

/** Thrown when a ruleset makes the tracer loop (chains nested deeper than the kernel allows) or explode. */
export class NftTraceError extends Error {
  override name = "NftTraceError";
}

/** Hooks in the order a packet meets them; `input` / `forward` are chosen by the routing decision. */
export type Hook = "prerouting" | "input" | "forward" | "output" | "postrouting";

/** How a chain run ended for one branch. */
export type How = "return" | "accept" | "drop" | "reject" | "dnat" | "masquerade" | "snat" | "missing";

export interface State {
  probability: number;
  packet: TracePacket;
  path: RuleRef[];
  checks: RuleCheck[];
  caveats: string[];
  /** The map element that sent the packet into the current chain (for kube-proxy's `reject-chain` helper). */
  via?: RuleRef;
  /** A session-affinity set the capture shows the source in, whose rule this branch took (match.ts `heldBy`). */
  heldByAffinity?: string;
  /** Rules that would change the path, whose match is not known: assumed not to match (TraceOutcome assumedNotMatched). */
  assumed?: RuleRef[];
  /** externalTrafficPolicy Local short-circuit rules met, taken or not (TraceOutcome shortCircuits). */
  shortCircuits?: ShortCircuitCheck[];
}

export interface Ended extends State {
  how: How;
  dnatTo?: string;
  decidedBy?: RuleRef;
  missingChain?: string;
  /** how = "missing" because the chain is in the dump but cannot be read: the parse error. */
  unreadable?: string;
}

/** A branch between base chains: its NAT bindings so far. */
export interface Flow extends State {
  dnatTo?: string;
  snatBy?: RuleRef;
  /** Mark after the first hook's chains (what the outcome reports). */
  markAfterNat?: number;
}

export interface FlowEnd extends Flow {
  how: "drop" | "reject" | "missing";
  decidedBy?: RuleRef;
  missingChain?: string;
  unreadable?: string;
}

/** The chain kube-proxy uses to request masquerade, and the helpers that are not themselves requests. */
export const MARK_CHAIN = "mark-for-masquerade";
export const MASQ_CHAIN = "masquerading";
/** kube-proxy's reject helper (`goto reject-chain` from @no-endpoint-services / @no-endpoint-nodeports). */
export const REJECT_CHAIN = "reject-chain";
export const MAX_DEPTH = 64;


export function clonePacket(p: TracePacket): TracePacket {
  return { ...p, ctstate: new Set(p.ctstate) };
}


export function hex(n: number): string {
  return `0x${n.toString(16)}`;
}
