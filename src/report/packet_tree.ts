/**
 * The answer to one packet question as a compact tree, the default text of `--source/--dest` and `--from-pod`:
 * per node, the verdict in one line, then each rule whose target the packet takes (paths merged where they share a
 * prefix, so the probability branches show where they split), each endpoint with its share, pod, node and zone, the
 * masquerade decision with the rule that makes it, and the caveats. `-o wide` prints the full report before it.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { formatShare } from "../service/iptables/probability.ts";
import type { PacketAnswer, PacketPath, ServiceReport } from "../service/report.ts";
import type { RuleRef } from "../service/trace.ts";
import { endpointWhere, pathEnd, routingRules, ruleLabel } from "./path_graph.ts";
import { makeStyle, type Style } from "./style.ts";
import { printableLines } from "./printable.ts";

/** Options of {@link renderPacketTree}. */
export interface PacketTreeOptions {
  /** ANSI colour. @default false */
  color?: boolean;
  /** Full rule text however long. @default false */
  wide?: boolean;
  /** Terminal width in columns; rule texts are cut to fit (not with `wide`). @default 80 */
  width?: number;
}

interface Trie {
  rule?: RuleRef;
  children: Map<string, Trie>;
  ends: PacketPath[];
}

function trieOf(paths: PacketPath[]): Trie {
  const root: Trie = { children: new Map(), ends: [] };
  for (const p of paths) {
    let t = root;
    for (const r of routingRules(p)) {
      const k = `${r.table}/${r.chain}/${r.line}`;
      let c = t.children.get(k);
      if (!c) {
        c = { rule: r, children: new Map(), ends: [] };
        t.children.set(k, c);
      }
      t = c;
    }
    t.ends.push(p);
  }
  return root;
}

/** An outcome in a headline's words, as {@link verdictLine} says it. */
function outcomeWords(a: PacketAnswer, outcome: PacketAnswer["outcome"]): string {
  switch (outcome) {
    case "forwarded":
      return a.endpoints.length === 1 ? `forwarded to ${a.endpoints[0]!.endpoint}` : `forwarded to ${a.endpoints.length} endpoints`;
    case "dropped":
      return "DROPPED";
    case "rejected":
      return "REJECTED";
    case "not-handled":
      return "not handled by kube-proxy (leaves untranslated)";
    case "unknown":
      return "unknown";
    default:
      return "split between several fates";
  }
}

function verdictLine(a: PacketAnswer): string {
  const d = a.outcomeDependsOn;
  // the fate rests on a fact not collected: both ways, and the fact that decides (service/packet_answer.ts)
  if (a.outcome === "unknown" && d) {
    return `${outcomeWords(a, d.ifTrue)} if ${d.fact}, else ${outcomeWords(a, d.ifFalse)}; not known: ${d.notCollected} was not collected`;
  }
  const parts = [a.outcome === "unknown" ? "unknown: the state that decides it was not captured" : outcomeWords(a, a.outcome)];
  parts.push(a.masquerade === "always" ? "masqueraded" : a.masquerade === "never" ? "not masqueraded" : a.masquerade === "some" ? "masqueraded on some paths" : "");
  return parts.filter(Boolean).join(", ");
}

/**
 * Renders the packet answers of a report as trees.
 * @param r a ServiceReport made with a packet question (`packet` set).
 * @param o options.
 * @returns the text, ending in a newline.
 */
export function renderPacketTree(r: ServiceReport, o: PacketTreeOptions = {}): string {
  const st = makeStyle(o.color === true);
  const width = o.width ?? 80;
  const out: string[] = [];
  const answers = r.packet ?? [];
  const q = answers[0];
  // --from-pod without --dest asks one packet per destination of the Service: each answer then names its own
  const questions = [...new Set(answers.map((a) => `${a.source} → ${a.destination}`))];
  const several = questions.length > 1;
  const sources = [...new Set(answers.map((a) => a.source))];
  const title = !q ? "no answer" : several ? `packets from ${sources.join(", ")} to ${[...new Set(answers.map((a) => a.destination))].join(", ")}` : `packet ${questions[0]}`;
  out.push(st.bold(`Service ${r.service.namespace}/${r.service.name}: ${title}`));
  for (const a of answers) {
    out.push("");
    const which = several ? ` ${sources.length > 1 ? `${a.source} → ` : "→ "}${a.destination}` : "";
    out.push(`${st.bold(`node ${a.node}${which}`)}: ${verdictLine(a)}` + (a.ruleLines ? st.dim(`  (lines of ${a.ruleLines})`) : ""));
    renderTrie(trieOf(a.paths ?? []), "  ", out, st, r, o.wide === true, width, a.sharesFixed !== false);
    // a packet no branch forwards (dropped, rejected, not handled) has no masquerade: its reason says its fate, which
    // is not a masquerade decision (the picture's note reads the same: path_graph.ts masqueradeText)
    out.push(a.masquerade === "n/a" ? `  masquerade: does not apply${a.reason ? ` — ${a.reason}` : ""}` : `  masquerade: ${a.reason}`);
    for (const c of a.caveats) out.push(st.dim(`  caveat: ${c}`));
  }
  if (answers.length === 0) {
    // why no node answered: the nodes' own errors (a node the bundle holds no capture of), else the address family
    const failed = r.nodes.filter((n) => n.error !== undefined).map((n) => `node ${n.node}: ${n.error}`);
    out.push(failed.length > 0 ? `no node answered: ${failed.join("; ")}` : "no node of the bundle answers for this packet's address family");
  }
  // what no dump shows (conntrack: an existing connection keeps its endpoint and SNAT; the sysctls when not collected)
  if (answers.length > 0 && r.limits.length > 0) {
    out.push("");
    out.push(st.dim("Not visible in a dump: " + r.limits.join("; ") + "."));
  }
  const warnings = r.findings.filter((f) => f.severity !== "info");
  if (warnings.length > 0) out.push("");
  for (const f of warnings) out.push(`${f.severity === "error" ? st.red("ERROR") : st.yellow("WARN")} ${f.node ? `[${f.node}] ` : ""}${f.message}`);
  return printableLines(out);
}

/** Share of new connections that reach a subtree. */
function weight(t: Trie): number {
  let w = t.ends.reduce((a, p) => a + p.probability, 0);
  for (const c of t.children.values()) w += weight(c);
  return w;
}

function endText(p: PacketPath, st: Style, r: ServiceReport): string {
  if (p.dnatTo && (p.verdict === "dnat" || p.verdict === "accept")) {
    return `→ ${st.green(p.dnatTo)}  ${endpointWhere(r.endpoints, p.dnatTo)}${p.masqueraded ? st.yellow(" (masqueraded)") : ""}`;
  }
  const text = pathEnd(p);
  return `→ ${p.verdict === "drop" || p.verdict === "reject" ? st.red(text) : st.yellow(text)}`;
}

/**
 * Prints a subtree: a run of rules every path takes as a plain list, then, where the paths split, one branch each
 * (`├─ 50% …`) with the share of new connections that take it.
 */
function renderTrie(t: Trie, indent: string, out: string[], st: Style, r: ServiceReport, wide: boolean, width: number, fixed = true): void {
  // IPVS schedulers without a fixed share: the branches are shown without one
  const share = (p: number) => (fixed ? formatShare(p) : "?");
  const room = (prefix: string) => (wide ? Infinity : Math.max(40, width - prefix.length));
  let cur = t;
  while (cur.children.size === 1 && cur.ends.length === 0) {
    cur = [...cur.children.values()][0]!;
    out.push(indent + ruleLabel(cur.rule!, room(indent)));
  }
  const items: ({ kind: "rule"; t: Trie } | { kind: "end"; p: PacketPath })[] = [
    ...[...cur.children.values()].map((c) => ({ kind: "rule" as const, t: c })),
    ...cur.ends.map((p) => ({ kind: "end" as const, p })),
  ];
  if (items.length === 1 && items[0]!.kind === "end") {
    out.push(indent + endText(items[0]!.p, st, r));
    return;
  }
  items.forEach((item, i) => {
    const last = i === items.length - 1;
    const next = indent + (last ? "   " : "│  ");
    if (item.kind === "end") {
      out.push(`${indent}${last ? "└─" : "├─"} ${share(item.p.probability)} ${endText(item.p, st, r)}`);
      return;
    }
    const head = `${indent}${last ? "└─" : "├─"} ${share(weight(item.t))} `;
    out.push(head + ruleLabel(item.t.rule!, room(head)));
    renderTrie(item.t, next, out, st, r, wide, width, fixed);
  });
}
