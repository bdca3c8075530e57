/**
 * Text rendering of a {@link ServiceReport}: verdicts first (where new connections go, with shares; who is
 * masqueraded and by which rule line), then drift and findings, then what a dump cannot show. `wide` adds the rule
 * text of every piece of evidence.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { ClientVerdict, EndpointShare, EntryPointReport, NodeServiceReport, PortReport, ServiceReport } from "../service/report.ts";
import { formatShare } from "../service/iptables/probability.ts";
import { rulesAt, rulesInChains } from "../service/trace.ts";
import { NO_ZONE } from "../service/resolve.ts";
import { makeStyle, type Style, table } from "./style.ts";
import { printableLines } from "./printable.ts";

/** Options of {@link renderServiceText}. */
export interface ServiceTextOptions {
  /** ANSI colour. @default false */
  color?: boolean;
  /** `-o wide`: print the rule text of every piece of evidence. @default false */
  wide?: boolean;
}

/** Words for each outcome, where a sentence shows one (never the raw enum). */
const OUTCOME_WORDS: Record<ClientVerdict["outcome"], string> = {
  forwarded: "forwarded",
  dropped: "dropped",
  rejected: "rejected",
  "not-handled": "not handled by kube-proxy (leaves untranslated)",
  mixed: "split between several fates",
  unknown: "unknown (the state that decides it was not captured)",
};

/**
 * An endpoint's share; without one, what decides it: what the IPVS hashing scheduler hashes (its `shareDependsOn`:
 * the client's address, with the sh-port / mh-port flag its source port too) or live counts.
 */
function shareText(e: EndpointShare, scheduler?: { name: string; shareDependsOn?: string }): string {
  if (e.share !== null) return formatShare(e.share);
  if (scheduler?.shareDependsOn) return `depends on ${scheduler.shareDependsOn}`;
  const name = scheduler?.name;
  return name === "sh" || name === "mh" ? "depends on the client's address" : name === "dh" ? "depends on the destination's hash" : "depends on live connections";
}

function masqText(v: ClientVerdict, st: Style): string {
  switch (v.masquerade) {
    case "always":
      return st.yellow("masqueraded (SNAT)");
    case "never":
      return st.green("not masqueraded");
    case "some":
      return st.yellow("masqueraded on some paths");
    default:
      return "";
  }
}

function outcomeText(v: ClientVerdict, st: Style): string {
  switch (v.outcome) {
    case "forwarded":
      return v.endpoints.length === 1 ? `→ ${v.endpoints[0]!.endpoint}` : `→ ${v.endpoints.length} endpoints`;
    case "dropped":
      return st.red("DROPPED");
    case "rejected":
      return st.red("REJECTED");
    case "not-handled":
      return st.red("not handled by kube-proxy");
    case "unknown":
      return st.yellow("unknown (state not captured)");
    default: {
      const parts = [];
      if (v.endpoints.length) parts.push(`→ ${v.endpoints.length} endpoints`);
      if (v.dropped) parts.push(st.red(`dropped ${formatShare(v.dropped)}`));
      if (v.rejected) parts.push(st.red(`rejected ${formatShare(v.rejected)}`));
      if (v.notHandled) parts.push(st.red(`not handled ${formatShare(v.notHandled)}`));
      return parts.join(", ");
    }
  }
}

/** Few words for each way a forwarded branch fails ({@link EndpointShare.replyFails}); -o wide's caveats say why. */
function replyFailsWords(kind: NonNullable<EndpointShare["replyFails"]>, node: string): string {
  switch (kind) {
    case "bypasses-node":
      return `the reply bypasses ${node}`;
    case "bridge-not-filtered":
      return "the bridged reply is never un-NATed";
    case "hairpin-off":
      return "hairpin_mode is 0";
    case "route-localnet-off":
      return "route_localnet is 0";
    case "ipvs-untracked":
      return "net.ipv4.vs.conntrack is 0";
  }
}

/**
 * The share of a verdict's new connections that are forwarded and still do not complete (`replyFails` on its
 * endpoints), in a few words for the client's headline: e.g. `50% do not complete: 10.180.0.1:80 (the reply bypasses
 * test-hostname; -o wide)`. Empty when every branch completes.
 */
function replyFailsText(v: ClientVerdict, node: string, st: Style): string {
  const failed = v.endpoints.filter((e) => e.replyFails !== undefined);
  if (failed.length === 0) return "";
  const share = failed.every((e) => e.share !== null) ? failed.reduce((a, e) => a + e.share!, 0) : undefined;
  const all = failed.length === v.endpoints.length && v.outcome === "forwarded";
  const how = all ? "no connection completes" : share !== undefined ? `${formatShare(share)} do not complete` : "some connections do not complete";
  const why = [...new Set(failed.map((e) => replyFailsWords(e.replyFails!, node)))].join(", ");
  return st.red(`${how}: ${failed.map((e) => e.endpoint).join(", ")} (${why}; -o wide)`);
}

function sameEndpoints(a: EndpointShare[], b: EndpointShare[]): boolean {
  return a.length === b.length && a.every((e, i) => e.endpoint === b[i]!.endpoint && Math.abs((e.share ?? -1) - (b[i]!.share ?? -1)) < 1e-9);
}

function renderEntry(e: EntryPointReport, node: string, st: Style, wide: boolean, lines: string[]): void {
  lines.push(`    ${st.bold(e.kind)} ${e.destination}` + (e.ruleLines ? st.dim(`  (lines of ${e.ruleLines})`) : ""));
  const b = e.balancing;
  if (b.method === "ipvs" && b.scheduler) {
    lines.push(`      balancing: IPVS scheduler ${st.bold(b.scheduler.name)} — ${b.scheduler.description}` +
      (b.scheduler.persistentSeconds ? `; persistent ${b.scheduler.persistentSeconds} s` : ""));
  } else if (b.method === "iptables-probability-cascade") {
    lines.push(`      balancing: iptables random probability cascade (shares as the kernel applies them)`);
  } else if (b.method === "nftables-numgen") {
    lines.push(`      balancing: nftables numgen random mod N`);
  }
  if (b.sessionAffinity) lines.push(`      session affinity: ${b.sessionAffinity} (shares are for new clients)`);
  if (b.shares.length > 0) {
    lines.push(...table(
      b.shares.map((s) => [s.endpoint, shareText(s, b.scheduler), s.weight !== undefined ? `weight ${s.weight}` : "", s.via ?? ""]),
      "        ",
    ));
  }
  const ref = b.shares;
  const rows: string[][] = [];
  const extra: string[][] = [];
  for (const c of e.clients) {
    const endpointsDiffer = c.outcome === "forwarded" && !sameEndpoints(c.endpoints, ref.map(({ endpoint, share }) => ({ endpoint, share })));
    const fails = replyFailsText(c, node, st);
    rows.push([`${c.description}:`, [outcomeText(c, st), masqText(c, st)].filter(Boolean).join(", ") + (fails ? `; ${fails}` : "")]);
    const more: string[] = [];
    if (endpointsDiffer) more.push(st.dim("only " + c.endpoints.map((x) => `${x.endpoint} ${shareText(x, b.scheduler)}`).join(", ")));
    if (c.reason) more.push(st.dim(c.reason));
    // the endpoints rest on rules whose match is not modelled: said in the default text, not only in -o wide/json
    if (c.assumedNotMatched && c.assumedNotMatched.length > 0) {
      more.push(st.yellow(`assumes ${rulesInChains(c.assumedNotMatched)} does not match: it is not modelled, so these endpoints may not be where the node sends it`));
    }
    // settings of the node that decide it and were not collected: named here, not only in -o wide's caveats
    if (c.notCollected && c.notCollected.length > 0) {
      const how = wide ? "caveats below" : "-o wide says how";
      more.push(st.yellow(`depends on what was not collected: ${c.notCollected.join(", ")} (${how})`));
    }
    extra.push(more);
  }
  lines.push("      clients:");
  rows.forEach((r, i) => {
    lines.push(`        ${r.join(" ")}`);
    for (const m of extra[i] ?? []) lines.push("          " + m);
  });
  if (wide) {
    const seen = new Set<string>();
    const ev = e.clients.flatMap((c) => c.evidence).filter((x) => {
      const k = `${x.rule.table}/${x.rule.line}/${x.role}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
    if (ev.length > 0) {
      lines.push("      evidence:");
      for (const x of ev) lines.push(`        ${x.rule.table} ${rulesAt([x.rule])} ${st.dim(`(${x.role})`)}: ${x.rule.raw}`);
    }
    const cav = [...new Set(e.clients.flatMap((c) => c.caveats))];
    if (cav.length > 0) {
      lines.push("      caveats:");
      for (const c of cav) lines.push(`        - ${c}`);
    }
  }
}

/** What a port block says, without what always differs between ports (port numbers, chain names, rule lines). */
function portSignature(p: PortReport): string {
  const norm = (t: string) => t.replace(/KUBE-[A-Z]+-[A-Z0-9]{16}/g, "CHAIN").replace(/line \d+/g, "line N").replace(/:\d+(\/\w+)?/g, ":P").replace(/\b\d+\/(TCP|UDP|SCTP|tcp|udp|sctp)\b/g, "P");
  return JSON.stringify(p.entryPoints.map((e) => ({
    k: e.kind,
    m: e.balancing.method,
    s: e.balancing.scheduler?.name,
    sh: e.balancing.shares.map((x) => [x.endpoint.replace(/:\d+$/, ""), x.share, x.weight]),
    c: e.clients.map((c) => [c.client, c.outcome, c.masquerade, norm(c.reason), c.endpoints.map((x) => [x.endpoint.replace(/:\d+$/, ""), x.share, x.masqueraded, x.replyFails]), c.caveats.map(norm)]),
  })));
}

function renderNode(n: NodeServiceReport, st: Style, wide: boolean, lines: string[]): void {
  const mode = n.proxyMode.mode;
  const from = n.proxyMode.evidence.map((e) => `${e.source}: ${e.value}`).join("; ");
  lines.push("");
  const agent = mode === "cilium" || mode === "other" ? n.proxyMode.evidence.find((e) => e.source === "datapath agent")?.value : undefined;
  lines.push(
    st.bold(`Node ${n.node}`) + (n.zone ? ` (zone ${n.zone})` : "") +
      (agent ? ` — Services served by ${st.bold(agent)}, not kube-proxy` : ` — kube-proxy mode ${st.bold(mode)}` + (from ? st.dim(` [${from}]`) : "")),
  );
  if (n.source) lines.push(st.dim(`  state from ${n.source}`));
  if (n.error) {
    lines.push(st.red(`  not analysed: ${n.error}`));
    return;
  }
  for (const note of n.notes) lines.push(st.dim(`  note: ${note}`));
  // Ports whose blocks say the same thing (same entry kinds, endpoints' addresses and shares, client verdicts; only
  // port numbers, chain names and rule lines differ) are printed once, the others named after it. Not under -o wide.
  const shown: { sig: string; label: string; folded: string[] }[] = [];
  for (const p of n.ports) {
    const sp = p.servicePort;
    const label = `${sp.name ? `${sp.name} ` : ""}${sp.port}/${sp.protocol}`;
    const sig = wide ? `${shown.length}` : portSignature(p);
    const same = shown.find((x) => x.sig === sig);
    if (same) {
      same.folded.push(label);
      continue;
    }
    const entry = { sig, label, folded: [] as string[] };
    shown.push(entry);
    lines.push(`  port ${label}` + (sp.targetPort !== undefined ? ` → targetPort ${sp.targetPort}` : "") + st.dim(`  (${sp.portKey})`));
    entry.folded = [];
    const at = lines.length;
    for (const e of p.entryPoints) renderEntry(e, n.node, st, wide, lines);
    (entry as { at?: number }).at = at;
  }
  for (const x of shown) {
    if (x.folded.length === 0) continue;
    const i = lines.findIndex((l) => l.startsWith(`  port ${x.label}`));
    lines.splice(i + 1, 0, st.dim(`    (port${x.folded.length > 1 ? "s" : ""} ${x.folded.join(", ")}: the same, with ${x.folded.length > 1 ? "their" : "its"} own chains and rule lines; -o wide shows each)`));
  }
  if (n.drift.length === 0 && n.ports.length > 0) lines.push(st.green("  drift: none — the node's rules match the API's usable endpoints"));
  for (const d of n.drift) lines.push(st.yellow(`  drift: ${d.message}`));
}

/**
 * Renders a ServiceReport as text.
 * @param r the report.
 * @param options {@link ServiceTextOptions}.
 * @returns the text, ending with a newline.
 */
export function renderServiceText(r: ServiceReport, options: ServiceTextOptions = {}): string {
  const st = makeStyle(options.color ?? false);
  const wide = options.wide ?? false;
  const s = r.service;
  const lines: string[] = [];
  lines.push(st.bold(`Service ${s.namespace}/${s.name}`) + `  type ${s.type}` + (s.clusterIPs.length ? `  ClusterIP ${s.clusterIPs.join(", ")}` : ""));
  const pol = [`externalTrafficPolicy ${s.externalTrafficPolicy}`, `internalTrafficPolicy ${s.internalTrafficPolicy}`, `sessionAffinity ${s.sessionAffinity}`];
  if (s.trafficDistribution) pol.push(`trafficDistribution ${s.trafficDistribution}`);
  lines.push(st.dim("  " + pol.join(", ")));
  if (s.loadBalancerIngress.length) lines.push(`  LoadBalancer ingress ${s.loadBalancerIngress.join(", ")}` + (s.loadBalancerSourceRanges.length ? `  sourceRanges ${s.loadBalancerSourceRanges.join(", ")}` : ""));
  if (s.externalIPs.length) lines.push(`  externalIPs ${s.externalIPs.join(", ")}`);
  const ready = r.endpoints.filter((e) => e.ready).length;
  lines.push("");
  lines.push(st.bold(`Endpoints: ${ready} ready of ${r.endpoints.length}`) + (r.zones.length ? `, zones: ${r.zones.map((z) => `${z.zone ?? NO_ZONE} ${z.ready}${z.notReady ? `(+${z.notReady} not ready)` : ""}`).join(", ")}` : ""));
  if (r.endpoints.length > 0) {
    // The ZONE column only when some endpoint has a zone (kubectl's columns likewise come and go with the data).
    const zoned = r.endpoints.some((e) => e.zone);
    lines.push(...table(
      [["ADDRESS", "PORTS", "POD", "NODE", ...(zoned ? ["ZONE"] : []), "STATE"]].concat(r.endpoints.map((e) => [
        e.address,
        e.ports.map((p) => `${p.port}/${p.protocol.toUpperCase()}`).join(",") || "-",
        e.pod ?? "-",
        e.node ?? "-",
        ...(zoned ? [e.zone ? e.zone + (e.zoneSource === "node-beta-label" ? " (beta label)" : "") : "-"] : []),
        e.ready ? st.green("ready") : e.serving ? st.yellow("serving, terminating") : st.red(e.terminating ? "terminating" : "not ready"),
      ])),
      "  ",
    ));
  }
  for (const n of r.nodes) renderNode(n, st, wide, lines);
  if (r.packet) {
    lines.push("");
    lines.push(st.bold("Packet"));
    for (const a of r.packet) {
      lines.push(`  on ${a.node}: ${a.source} → ${a.destination}: ${OUTCOME_WORDS[a.outcome]}` + (a.endpoints.length ? ` → ${a.endpoints.map((e) => `${e.endpoint} ${shareText(e)}${e.masqueraded ? " (masqueraded)" : ""}`).join(", ")}` : ""));
      if (a.reason) lines.push(`    ${a.reason}`);
      for (const x of a.evidence) lines.push(st.dim(`    ${x.rule.table} ${rulesAt([x.rule])} (${x.role}): ${x.rule.raw}`));
      for (const c of a.caveats) lines.push(st.dim(`    caveat: ${c}`));
    }
  }
  if (r.findings.length > 0) {
    lines.push("");
    lines.push(st.bold("Findings"));
    for (const f of r.findings) {
      const tag = f.severity === "error" ? st.red("ERROR") : f.severity === "warning" ? st.yellow("WARN") : st.cyan("INFO");
      lines.push(`  ${tag} ${f.node ? `[${f.node}] ` : ""}${f.message}`);
    }
  }
  if (r.warnings && r.warnings.length > 0) {
    lines.push("");
    lines.push(st.bold("Collection warnings"));
    for (const w of r.warnings) lines.push(`  ${st.yellow("WARN")} ${w}`);
  }
  lines.push("");
  lines.push(st.dim("Not visible in a dump: " + r.limits.join("; ") + "."));
  if (!wide) lines.push(st.dim("Use -o wide for the rule text behind each verdict."));
  return printableLines(lines);
}
