/**
 * Text rendering of a {@link PendingReport}: the answer first, then each claim (state, StorageClass, static-binding
 * candidates) with its PersistentVolume's node × term table, then each pod's node × rule table with the verdict per
 * node, the summary in the scheduler's own words next to its last FailedScheduling event, and the findings with
 * their evidence and fix. Colour only when asked (`{ color: true }`); the CLI decides from the TTY and `NO_COLOR`.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type {
  ClaimReport,
  Finding,
  NodeState,
  PendingReport,
  PodNodeRow,
  PodReport,
  RuleCheck,
  VolumeReport,
} from "../pending/report.ts";
import { formatTerm, type TermEvaluation } from "../pending/node_selector.ts";
import { makeStyle, type Style, table } from "./style.ts";
import { printableLines } from "./printable.ts";

/** Options of {@link renderPendingText}. */
export interface PendingTextOptions {
  /** ANSI colour. */
  color: boolean;
  /** Most per-node "why" lines printed per table before eliding the rest. @default 30 */
  maxWhyLines?: number;
}

function shortKey(key: string): string {
  return key.slice(key.lastIndexOf("/") + 1);
}

function termCell(t: TermEvaluation, st: Style): string {
  if (t.empty) return st.red("no: empty term");
  if (t.parseErrors.length > 0) return st.red("no: invalid term");
  if (t.matched) return st.green("yes");
  const failed = t.requirements.filter((r) => !r.matched);
  return st.red(
    "no: " + failed.map((r) => (r.actual === null ? `${shortKey(r.key)} absent` : `${shortKey(r.key)}=${r.actual}`)).join(", "),
  );
}

function nodeZone(nodes: NodeState[], name: string): string {
  return nodes.find((n) => n.name === name)?.zone ?? "-";
}

function volumeSection(v: VolumeReport, report: PendingReport, st: Style): string[] {
  const out: string[] = [];
  const facts = [v.source, v.capacity, v.accessModes.join(","), v.phase].filter((x) => x);
  out.push(st.bold(`PersistentVolume ${v.name}`) + (facts.length ? ` (${facts.join(", ")})` : ""));
  if (!v.found) {
    out.push(st.red("  not in the bundle"));
    return out;
  }
  if (!v.nodeAffinity) {
    out.push("  no node affinity: usable on every node");
    return out;
  }
  out.push("  node affinity (terms ORed, expressions ANDed):");
  v.terms.forEach((t, i) => out.push(`    term ${i}: ${t}`));
  if (v.nodes.length === 0) {
    out.push(st.dim("  (no Node objects: no node × term table)"));
    return out;
  }
  const head = ["NODE", "ZONE", ...v.terms.map((_, i) => `TERM ${i}`), "VOLUME USABLE"];
  const rows = v.nodes.map((r) => [
    r.node,
    nodeZone(report.nodes, r.node),
    ...r.evaluation.terms.map((t) => termCell(t, st)),
    r.matched ? st.green("yes") : st.red("no"),
  ]);
  out.push("", ...table([head, ...rows], "  "));
  return out;
}

function claimSection(c: ClaimReport, report: PendingReport, st: Style): string[] {
  const out: string[] = [];
  const status = c.state.status === "Bound" && c.state.reason === "Bound" ? st.green(c.state.status) : st.red(c.state.status);
  out.push(st.bold(`PersistentVolumeClaim ${c.namespace}/${c.name}`) + `  ${status}`);
  out.push(`  ${c.state.message}`);
  if (c.found) {
    const req = [c.request.storage, c.request.accessModes.join(","), c.request.volumeMode].filter((x) => x).join(", ");
    out.push(`  requests ${req}`);
    if (c.storageClass) {
      const sc = c.storageClass;
      const params = Object.entries(sc.parameters).map(([k, v]) => `${k}=${v}`).join(" ");
      const topo = sc.allowedTopologies.length
        ? ` allowedTopologies ${sc.allowedTopologies.map((t) => (t.matchLabelExpressions ?? []).map((e) => `${e.key} in [${e.values.join(", ")}]`).join(", ")).join(" | ")}`
        : "";
      out.push(`  StorageClass ${sc.name}${sc.isDefault ? " (default)" : ""}: ${sc.provisioner}, ${sc.volumeBindingMode}` +
        (params ? `, ${params}` : "") + topo);
    } else if (c.storageClassName !== null) {
      out.push(`  StorageClass ${JSON.stringify(c.storageClassName)}${c.storageClassName === "" ? " (static binding only)" : ": not found"}`);
    }
    if (c.state.event) out.push(`  event ${c.state.event.reason}: ${c.state.event.message}`);
  }
  if (c.staticCandidates.length > 0) {
    out.push("  PersistentVolumes considered for static binding:");
    for (const s of c.staticCandidates.slice(0, 10)) {
      out.push(`    ${s.volume}: ` + (s.mismatches.length === 0
        ? st.green("matches")
        : s.mismatches.map((m) => `${m.field} ${m.got} (wants ${m.want})`).join("; ")));
    }
    if (c.staticCandidates.length > 10) out.push(st.dim(`    … ${c.staticCandidates.length - 10} more`));
  }
  if (c.volume) out.push("", ...volumeSection(c.volume, report, st).map((l) => (l === "" ? l : "  " + l)));
  return out;
}

function check(row: PodNodeRow, rule: RuleCheck["rule"], claim?: string): RuleCheck | undefined {
  return row.checks.find((c) => c.rule === rule && (claim === undefined || c.claim === claim));
}

function yesNo(c: RuleCheck | undefined, st: Style, pass: string, fail: string): string {
  if (!c) return "-";
  return c.passed ? st.green(pass) : st.red(fail);
}

function podSection(p: PodReport, report: PendingReport, st: Style, maxWhy: number): string[] {
  const out: string[] = [];
  const where = p.nodeMissing
    ? `bound to ${p.nodeName}, which is not among the bundle's nodes`
    : p.nodeName
    ? `scheduled on ${p.nodeName}`
    : `not scheduled (${p.schedulerName})`;
  out.push(st.bold(`Pod ${p.namespace}/${p.name}`) + `  ${p.phase ?? "?"}, ${where}`);
  for (const u of p.claims) {
    out.push(`  volume ${u.volume} → claim ${u.claim}: ` +
      (u.found ? `${u.binding}${u.volumeName ? ` (${u.volumeName})` : ""}` : st.red("not found")));
  }
  const rules: string[] = [];
  for (const [k, v] of Object.entries(p.nodeSelector)) rules.push(`nodeSelector ${k}=${v}`);
  // both matchExpressions and matchFields (a DaemonSet pod's term is `matchFields metadata.name In [node]` alone);
  // `<empty>` only for a term with neither, which matches no node (component-helpers nodeaffinity nodeSelectorTerm.match)
  (p.requiredNodeAffinity?.nodeSelectorTerms ?? []).forEach((t, i) => {
    rules.push(`required node affinity term ${i}: ${formatTerm(t ?? {})}`);
  });
  for (const r of rules) out.push(`  ${r}`);
  for (const t of p.topologySpread ?? []) out.push(`  topology spread ${t}`);
  for (const c of p.resourceClaims ?? []) {
    const what = c.state === "allocated"
      ? st.green(`allocated${c.devices.length ? ` (${c.devices.join(", ")})` : ""}`)
      : c.state === "unallocated"
      ? st.yellow(`not allocated (${c.deviceClasses.join(", ") || "?"})`)
      : c.state === "not-created"
      ? st.yellow(`not created yet (template ${c.template ?? "?"})`)
      : c.state === "not-needed"
      ? st.dim(`none needed (template ${c.template ?? "?"}: the pod's status lists it without a ResourceClaim)`)
      : st.red("not found");
    out.push(`  resource claim ${c.podClaimName} → ${c.claimName ? `ResourceClaim ${c.claimName}` : c.state === "not-needed" ? "no ResourceClaim" : "?"}: ${what}`);
  }
  if (p.gang) {
    const g = p.gang;
    const stage = g.stage === "pre-enqueue"
      ? st.red("held at PreEnqueue")
      : g.stage === "permit"
      ? st.red("held at Permit")
      : g.stage === "pod-group-cycle"
      ? st.red("rejected by the pod group cycle")
      : g.stage === "undecided"
      ? st.yellow("undecided")
      : st.green("not held");
    const what = g.via === "schedulingGroup"
      ? `PodGroup ${g.podGroup}${g.workload ? ` (Workload ${g.workload})` : ""}`
      : `Workload ${g.workload}, pod group ${g.podGroup}${g.podGroupReplicaKey ? ` (replica ${g.podGroupReplicaKey})` : ""}`;
    out.push(`  gang: ${what} ` +
      `(${g.plugin}${g.minCount !== null ? `, minCount ${g.minCount}` : g.policy === "basic" ? ", basic policy" : ""}): ${stage}` + (g.message ? ` — "${g.message}"` : ""));
    const c = g.podGroupCondition;
    if (c) out.push(`    condition ${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ""}${c.message ? `: ${c.message}` : ""}`);
    const shown = g.members.slice(0, 10);
    for (const m of shown) {
      const name = m.pod.split("/")[1];
      out.push(`    ${name}: ${m.nodeName ? `bound to ${m.nodeName}` : m.fits ? "fits a node" : m.fits === false ? `does not fit (${m.why})` : "not checked"}`);
    }
    if (g.members.length > shown.length) out.push(st.dim(`    … and ${g.members.length - shown.length} more pod(s) of the group`));
    for (const n of g.notes) out.push(`    note: ${n}`);
  }
  if (p.nodeMissing) {
    out.push(st.dim(`  (bound to ${p.nodeName}: no node × rule table, the other nodes' verdicts are not about this pod)`));
  } else if (p.nodes.length === 0) {
    out.push(st.dim("  (no Node objects: no node × rule table)"));
  } else {
    const hasSel = p.nodes.some((r) => check(r, "nodeSelector") || check(r, "nodeAffinity"));
    const hasZone = p.nodes.some((r) => check(r, "volumeZone"));
    // the filters that run only when the pod or the bundle gives them something to check
    const optional: [RuleCheck["rule"], string][] = (
      [["hostPorts", "HOST PORTS"], ["resources", "RESOURCES"], ["volumeRestrictions", "RWOP"], ["topologySpread", "SPREAD"], ["podAffinity", "POD AFFINITY"], ["dra", "DRA"]] as [RuleCheck["rule"], string][]
    ).filter(([rule]) => p.nodes.some((r) => check(r, rule)));
    const claimCols = p.claims.map((u) => u.claim);
    const head = [
      "NODE",
      "ZONE",
      "READY",
      "CORDONED",
      "TAINTS",
      ...(hasSel ? ["NODE RULES"] : []),
      ...claimCols.map((c) => `CLAIM ${c}`),
      ...(hasZone ? ["VOLUME ZONE"] : []),
      ...optional.map(([, h]) => h),
      "VERDICT",
    ];
    const rows = p.nodes.map((r) => {
      const ready = check(r, "ready");
      const taints = check(r, "taints");
      const sel = [check(r, "nodeSelector"), check(r, "nodeAffinity")].filter((c): c is RuleCheck => !!c);
      return [
        r.node,
        nodeZone(report.nodes, r.node),
        ready?.passed ? st.green("True") : st.red(report.nodes.find((n) => n.name === r.node)?.ready ?? "Unknown"),
        yesNo(check(r, "cordoned"), st, "no", "cordoned"),
        taints ? (taints.passed ? st.green(taints.detail === "no taints" ? "none" : "tolerated") : st.red(`${taints.untoleratedTaints?.length ?? 0} untolerated`)) : "-",
        ...(hasSel ? [sel.length === 0 ? "-" : sel.every((c) => c.passed) ? st.green("match") : st.red("no match")] : []),
        ...claimCols.map((c) => yesNo(check(r, "volume", c), st, "ok", "no")),
        ...(hasZone ? [yesNo(check(r, "volumeZone"), st, "ok", "no")] : []),
        ...optional.map(([rule]) => yesNo(check(r, rule), st, "ok", "no")),
        r.fits ? st.green("fits") : st.red(`rejected by ${r.rejectedBy?.plugin ?? "?"}`),
      ];
    });
    out.push("", ...table([head, ...rows], "  "));
    const why: string[] = [];
    for (const r of p.nodes) {
      for (const c of r.checks) {
        if (c.passed || c.rule === "ready") continue;
        why.push(`  ${r.node}: ${c.rule === "volume" ? `claim ${c.claim}` : c.rule}: ${c.detail}`);
      }
      const ready = check(r, "ready");
      if (ready && !ready.passed) why.push(`  ${r.node}: ready: ${ready.detail}`);
    }
    if (why.length > 0) {
      out.push("", "  why:");
      out.push(...why.slice(0, maxWhy).map((l) => "  " + l));
      if (why.length > maxWhy) out.push(st.dim(`    … ${why.length - maxWhy} more (see -o yaml)`));
    }
  }
  out.push("");
  if (p.summary) out.push(`  computed:  ${p.summary.message}`);
  const uncounted = p.nodes.filter((n) => n.rejectedBy?.uncounted);
  if (p.summary && uncounted.length > 0) {
    const names = uncounted.slice(0, 5).map((n) => n.node).join(", ") + (uncounted.length > 5 ? ` and ${uncounted.length - 5} more` : "");
    out.push(st.dim(`             (not counted: ${names}, left out by the PreFilterResult of ${uncounted[0]!.rejectedBy!.plugin}, for which this scheduler's release writes no reason)`));
  }
  for (const n of p.notes ?? []) out.push(`  note: ${n}`);
  if (p.lastFailedScheduling) {
    const e = p.lastFailedScheduling;
    const when = [e.lastSeen, e.count !== null ? `x${e.count}` : null].filter((x) => x).join(", ");
    out.push(`  scheduler: ${e.message}` + (when ? st.dim(` (${when})`) : ""));
  }
  const rec = p.reconciliation;
  const recWord = rec.status === "agree" ? st.green("agree") : rec.status === "disagree" ? st.yellow("disagree") : st.dim(rec.status);
  out.push(`  ${recWord}: ${rec.details.join(" ")}`);
  return out;
}

function findingLines(f: Finding, st: Style): string[] {
  const tag = f.severity === "error" ? st.red("error") : f.severity === "warning" ? st.yellow("warning") : st.cyan("info");
  const out = [`  ${tag}: ${st.bold(f.title)}`, `    ${f.detail}`];
  for (const e of f.evidence) out.push(st.dim(`    · ${e}`));
  if (f.suggestion) out.push(`    fix: ${f.suggestion}`);
  return out;
}

/**
 * Renders a PendingReport as text.
 * @param report the report from `explainPending`.
 * @param options `{ color }`: ANSI colour or not.
 * @returns the text, ending with a newline.
 * @example
 * import { renderPendingText } from "./pending_text.ts";
 * console.log(renderPendingText(report, { color: false }));
 */
export function renderPendingText(report: PendingReport, options: PendingTextOptions): string {
  const st = makeStyle(options.color);
  const maxWhy = options.maxWhyLines ?? 30;
  const out: string[] = [];
  out.push(report.answer, "");
  if (!report.nodesListed) out.push(st.yellow("No Node objects in the bundle: per-node tables are left out."), "");
  for (const c of report.claims) out.push(...claimSection(c, report, st), "");
  for (const p of report.pods) out.push(...podSection(p, report, st, maxWhy), "");
  if (report.findings.length > 0) {
    out.push(st.bold("Findings"));
    for (const f of report.findings) out.push(...findingLines(f, st));
    out.push("");
  }
  if (report.warnings && report.warnings.length > 0) {
    out.push(st.bold("Collection warnings"));
    for (const w of report.warnings) out.push(`  ${st.yellow("WARN")} ${w}`);
    out.push("");
  }
  while (out.length > 0 && out[out.length - 1] === "") out.pop();
  return printableLines(out);
}
