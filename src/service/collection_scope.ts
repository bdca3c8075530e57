/**
 * What a node's capture holds when it was a targeted collection (the `collection-scope` section written by
 * src/kube/targeted_script.ts): which proxy mode the collection followed, from what, and what it left out; and the
 * note the report carries so that no answer built on it is read as a check of the whole node; and what each section
 * cost on the node (time, size), as the report shows it.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { NodeCapture } from "../bundle/bundle.ts";
import type { SectionCost } from "./report.ts";

/** A parsed `collection-scope` section. */
export interface CollectionScope {
  /** `service`: only the rules one Service's packets can traverse. */
  scope: string;
  /** The proxy mode the collection followed (`iptables`, `ipvs`, `nftables`). */
  mode?: string;
  /** How that mode was learnt (kube-proxy's /proxyMode, or which tables/interfaces exist). */
  modeSource?: string;
  /** The addresses and ports whose rules were kept (`ip:ADDR`, `port:N`). */
  keys: string[];
  /** Sections left out, with why. */
  skipped: { section: string; why: string }[];
  /** `section-timeout=`: the per-section limit in seconds, and why it could not be enforced (no timeout(1)). */
  sectionTimeout?: { seconds: number; unenforced?: string };
}

/**
 * Reads the `collection-scope` section of a node capture.
 * @param capture the node capture.
 * @returns the scope, or undefined when the capture has no such section (whole tables were collected).
 */
export function collectionScope(capture: NodeCapture): CollectionScope | undefined {
  const text = capture.sections["collection-scope"]?.stdout;
  if (text === undefined) return undefined;
  const out: CollectionScope = { scope: "service", keys: [], skipped: [] };
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq <= 0) continue;
    const key = line.slice(0, eq);
    const value = line.slice(eq + 1).trim();
    if (key === "scope") out.scope = value;
    else if (key === "mode") out.mode = value;
    else if (key === "mode-source") out.modeSource = value;
    else if (key === "keys") out.keys = value.split(/\s+/).filter((k) => k !== "");
    else if (key === "section-timeout") {
      const m = /^(\d+)(?: \((.*)\))?$/.exec(value);
      if (m) out.sectionTimeout = m[2] !== undefined ? { seconds: Number(m[1]), unenforced: m[2] } : { seconds: Number(m[1]) };
    }
    else if (key === "skipped") {
      const colon = value.indexOf(": ");
      out.skipped.push(colon > 0 ? { section: value.slice(0, colon), why: value.slice(colon + 2) } : { section: value, why: "" });
    }
  }
  return out;
}

/**
 * The report note of a targeted collection: what was collected, and what it cannot show.
 * @param s the scope.
 * @param whole true when the iptables section is whole tables after all (an image without awk and grep, on the legacy
 *   backend or below the chain-walk threshold of the nft backend: src/kube/targeted_script.ts).
 */
export function collectionScopeNote(s: CollectionScope, whole: boolean): string {
  const mode = s.mode ? `kube-proxy ${s.mode} mode (from ${s.modeSource ?? "?"})` : "the node's proxy mode";
  const what = s.mode === "nftables"
    ? "table ip/ip6 kube-proxy only, not the iptables tables"
    : whole
    ? "whole iptables tables (the collecting image lacks awk and grep)"
    : `only the iptables rules this Service's packets can traverse (keys ${s.keys.join(" ") || "none"}${s.skipped.some((x) => x.section === "ip6tables-save") ? "; ip6tables not read: no IPv6 address among them" : ""})`;
  // the rules' line numbers are those of the listing collected (the filtered save, or the chain-by-chain `-S`
  // listing: src/kube/targeted_script.ts), which a live run does not keep; an nftables rule is cited by its handle
  const lines = s.mode !== "nftables" && !whole
    ? "; rule line numbers are lines of this targeted listing, not of the node's iptables-save (-o wide prints each rule's text; with --whole-node or capture the lines are the node's iptables-save lines)"
    : "";
  return `targeted collection for this Service in ${mode}: ${what}${lines}; chains of deleted Services, other Services' rules and leftovers of another proxy mode are not checked: collect whole tables with --whole-node or kubectl netpath capture`;
}

/**
 * What a live collection read on the node, per section (collection order): time on the node, output size, and the
 * limit it was stopped at.
 * @param capture the node capture.
 * @returns the sections' costs, or undefined when no section carries a time (a file, an older bundle).
 */
export function sectionCosts(capture: NodeCapture): SectionCost[] | undefined {
  const entries = Object.entries(capture.sections).filter(([, s]) => s?.durationMs !== undefined || s?.timedOutAfterSeconds !== undefined);
  if (entries.length === 0) return undefined;
  return entries.map(([section, s]) => {
    const c: SectionCost = { section, bytes: s!.stdout.length };
    if (s!.durationMs !== undefined) c.ms = s!.durationMs;
    if (s!.timedOutAfterSeconds !== undefined) c.timedOutAfterSeconds = s!.timedOutAfterSeconds;
    return c;
  });
}
