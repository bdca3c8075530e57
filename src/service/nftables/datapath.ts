/**
 * The nftables part of a node's datapath: from the node capture's `nft-json` section (`nft -j list ruleset`,
 * preferred) or `nft-text` section (`nft list ruleset`), the fields that make {@link explainService} answer from
 * kube-proxy's nftables table (`ip kube-proxy` for IPv4, `ip6 kube-proxy` for IPv6; pkg/proxy/nftables/proxier.go):
 * the packet tracer (nft_trace.ts), the balancing method, the cluster CIDR the table's local-traffic detector uses,
 * the mode signal, and the problems worth a note (parse errors, table-wide layout anomalies, flushed chains awaiting
 * deletion, other tables hooking the same points).
 *
 * Sized for nodes with 10,000+ Services: the table is decoded on demand (kube_proxy_nft.ts), so the node notes hold
 * what the whole table shows without decoding every chain: anomalies of the maps and fixed chains, rules that disagree
 * on the local-traffic detector (KubeProxyNft.overview), flushed chains. An anomaly inside one Service's chains (an
 * unmapped numgen value, an unexpected rule) is a caveat of each packet the tracer runs through that chain.
 *
 * Whether the nftables table answers for the node: when kube-proxy says (the `/proxyMode` section) or is configured
 * (kube-system/kube-proxy ConfigMap) to run nftables, or says nothing; not when it runs iptables or IPVS and an
 * iptables dump was captured (then the table is a leftover, which proxy_mode.ts reports as a conflict).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { type BundleObjects, type CommandOutput, cutReason, exitWords, failedSection, type NodeCapture, stderrLine } from "../../bundle/bundle.ts";
import { DumpParseError } from "../../datapath/errors.ts";
import { decodeKubeProxyNft, type KubeProxyNft, type KubeProxyNftOverview } from "../../datapath/kube_proxy_nft.ts";
import { parseNftJson } from "../../datapath/nft_json.ts";
import type { NftRuleset } from "../../datapath/nft_model.ts";
import { parseNftText } from "../../datapath/nft_text.ts";
import type { TraceResult } from "../trace.ts";
import { nftAnomalyNote, nftTableLabel } from "./evidence.ts";
import { traceNft } from "./trace.ts";
import { configMapMode } from "../proxy_mode.ts";
import type { RuleRef, TraceContext, TracePacket } from "../trace.ts";

/** What {@link nftDatapath} contributes to a node's datapath (service_path.ts `NodeDatapath`). */
export interface NftDatapath {
  /** Set when the nftables table answers for this node and family. */
  trace?: (packet: TracePacket, hook: "PREROUTING" | "OUTPUT", context?: TraceContext) => TraceResult;
  /** `nftables-numgen` when `trace` is set. */
  balancingMethod?: "nftables-numgen";
  /** The CIDR of the table's local-traffic detector (`ip saddr != 10.0.0.0/8 jump mark-for-masquerade`). */
  clusterCIDRs?: string[];
  /** The pod interface of an interface-based detector (`iifname != "veth*"`): `veth*` or `cni0`. */
  podInterface?: string;
  /**
   * A rule that shows {@link podInterface}: the first ClusterIP masquerade rule (`… iifname != "cni0" jump
   * mark-for-masquerade`, `localDetector.IfNotLocalNFT()`) or "short-circuit pod traffic" rule (`IfLocalNFT()`) that
   * carries it (pkg/proxy/nftables/proxier.go syncProxyRules).
   */
  podInterfaceRule?: RuleRef;
  /**
   * Set when the table shows kube-proxy running without a local-traffic detector and without masqueradeAll: its
   * service chains have rules, yet none marks ClusterIP traffic for masquerade (`ip daddr VIP tcp dport P [ip saddr !=
   * CIDR | iifname != IF] jump mark-for-masquerade`) and no external chain has a "short-circuit pod traffic" rule.
   * kube-proxy writes those only `if proxier.masqueradeAll` / `else if proxier.localDetector.IsImplemented()`
   * (pkg/proxy/nftables/proxier.go syncProxyRules, v1.29+), and the detector is a no-op e.g. when detect-local-mode is
   * ClusterCIDR with clusterCIDR unset (pkg/proxy/util/localdetector.go; local_detector.ts noDetectorCause).
   */
  noLocalDetector?: boolean;
  signals: {
    /** A kube-proxy table (`ip` or `ip6`) is in the ruleset. */
    nftablesTable: boolean;
  };
  /** Problems and notes about the node's nftables state (shown as node notes). */
  problems: string[];
  /** The decoded table of this family, when there is one. */
  layout?: KubeProxyNft;
}

/** Options of {@link nftDatapath}. */
export interface NftDatapathOptions {
  /** The bundle's objects (for the kube-proxy ConfigMap's `mode`). */
  objects?: BundleObjects;
  /** Whether an iptables dump of this family was captured (an alternative answer when kube-proxy runs iptables). */
  iptablesDump?: boolean;
}

/** Anomalies quoted per node before "and N more". */
const MAX_ANOMALIES = 10;
/** Flushed chains named per node before "…". */
const MAX_STALE = 5;

function usable(s: CommandOutput | undefined): boolean {
  return s !== undefined && !s.truncated && !failedSection(s);
}

function failure(name: string, s: CommandOutput): string {
  if (s.truncated) return `the ${name} output ${cutReason(s)}; not analysed`;
  return `${s.command ?? (name === "nft-json" ? "nft -j list ruleset" : "nft list ruleset")} failed (${exitWords(s.exitCode)}): ${stderrLine(s)}`;
}

/** The mode kube-proxy declares for the node: its `/proxyMode` answer, else the ConfigMap. */
function declaredMode(node: NodeCapture, objects: BundleObjects | undefined): string | undefined {
  const ep = node.sections["proxy-mode"];
  if (ep && (ep.exitCode ?? 0) === 0 && ep.stdout.trim() !== "") return ep.stdout.trim();
  return objects ? configMapMode(objects)?.mode : undefined;
}

/**
 * Reads the node's nftables ruleset and builds the nftables tracer for one IP family.
 *
 * @param node the node capture; its `nft-json` section is used when it parses, else `nft-text`.
 * @param family 4 (table `ip kube-proxy`) or 6 (table `ip6 kube-proxy`).
 * @param options {@link NftDatapathOptions}.
 * @returns the fields to merge into the node's datapath; `trace` only when the table exists and answers for the
 *   node (see the module doc). Never throws for bad input: parse errors become `problems`, e.g.
 *   `nft-json line 1: truncated JSON: "…"`.
 * @example
 * ```ts
 * const part = nftDatapath(capture, 4, { objects: bundle.objects, iptablesDump: false });
 * part.trace?.(packet, "PREROUTING").outcomes;
 * ```
 */
export function nftDatapath(node: NodeCapture, family: 4 | 6, options: NftDatapathOptions = {}): NftDatapath {
  const out: NftDatapath = { signals: { nftablesTable: false }, problems: [] };
  const declared = declaredMode(node, options.objects);
  const otherModeAnswers = (declared === "iptables" || declared === "ipvs") && options.iptablesDump === true;
  const attempts: [string, CommandOutput | undefined, (t: string) => NftRuleset][] = [
    ["nft-json", node.sections["nft-json"], parseNftJson],
    ["nft-text", node.sections["nft-text"], parseNftText],
  ];
  const want = family === 6 ? "ip6" : "ip";
  let read: ReadTable | undefined;
  const failures: string[] = [];
  for (const [name, section, parse] of attempts) {
    if (!section) continue;
    if (!usable(section)) {
      failures.push(failure(name, section));
      continue;
    }
    try {
      read = readTable(parse(section.stdout), want, !otherModeAnswers, section.command);
      break;
    } catch (e) {
      // nft_json.ts decodes a rule's statements when first read: a malformed rule shows while reading the table.
      if (e instanceof DumpParseError) failures.push(e.message);
      else throw e;
    }
  }
  if (!read) {
    // A failed nft command matters only where nftables could be the answer.
    if (!otherModeAnswers && (declared === "nftables" || options.iptablesDump !== true)) out.problems.push(...failures);
    return out;
  }
  if (failures.length > 0) out.problems.push(`read the node's nftables state from nft-text (${failures.join("; ")})`);
  const { layouts, layout } = read;
  out.signals.nftablesTable = layouts.length > 0;
  if (!layout) {
    if (layouts.length > 0 && !otherModeAnswers) {
      out.problems.push(
        `the nftables ruleset has no ${want} kube-proxy table: kube-proxy does not handle IPv${family} on this node`,
      );
    }
    return out;
  }
  out.layout = layout;
  if (otherModeAnswers || !read.overview) {
    out.problems.push(
      `table ${
        nftTableLabel(layout.table)
      } exists but kube-proxy runs ${declared} here: traced from the iptables rules; the nftables table is a leftover`,
    );
    return out;
  }

  const { overview, notes } = read;
  out.trace = (packet, hook, context) => traceNft(layout, packet, hook, { notes, ...(context?.isLocalAddress ? { isLocalAddress: context.isLocalAddress } : {}) });
  out.balancingMethod = "nftables-numgen";
  const detector = overview.localDetector;
  if (detector.kind === "cidr" && detector.value !== undefined) {
    out.clusterCIDRs = [detector.value];
  } else if ((detector.kind === "interface" || detector.kind === "interface-prefix") && detector.value !== undefined) {
    out.podInterface = detector.kind === "interface-prefix" ? `${detector.value}*` : detector.value;
    const ev = detector.evidence[0];
    if (ev) {
      out.podInterfaceRule = {
        table: `${ev.family} ${ev.table}`,
        chain: ev.chain ?? "",
        line: ev.handle ?? ev.line,
        ...(ev.handle !== undefined ? { handle: ev.handle } : {}),
        raw: ev.text + (ev.comment !== undefined ? ` comment "${ev.comment}"` : ""),
      };
    }
    // the node's note (explain.ts) names this detector with its rule, as for iptables and IPVS mode
  }
  if (detector.kind === "none" && !overview.masqueradeAll) out.noLocalDetector = true;
  if (overview.masqueradeAll) {
    out.problems.push(
      "kube-proxy masquerades all traffic to ClusterIPs here (--masquerade-all: no source condition on the ClusterIP masquerade rules)",
    );
  }
  for (const a of overview.anomalies.slice(0, MAX_ANOMALIES)) out.problems.push(nftAnomalyNote(a));
  if (overview.anomalies.length > MAX_ANOMALIES) {
    out.problems.push(`nftables: and ${overview.anomalies.length - MAX_ANOMALIES} more layout anomalies`);
  }
  const stale = layout.staleChains;
  if (stale.length > 0) {
    const names = stale.slice(0, MAX_STALE).map((s) => s.chain);
    const more = stale.length > MAX_STALE ? `, … (${stale.length - MAX_STALE} more)` : "";
    out.problems.push(
      `${stale.length} flushed chain(s) in ${
        nftTableLabel(layout.table)
      } await deletion by kube-proxy (left by a Service or endpoint change; whether a map element still points to one is not checked: a packet sent into one falls through it to the next check): ${
        names.join(", ")
      }${more}`,
    );
  }
  return out;
}

/** A parsed ruleset's kube-proxy tables, the one of the family asked for, and what the node notes need of it. */
interface ReadTable {
  layouts: KubeProxyNft[];
  layout?: KubeProxyNft;
  /** Set when asked for (the table answers for the node). */
  overview?: KubeProxyNftOverview;
  notes: string[];
}

/**
 * Decodes the kube-proxy tables and, when `answers`, the table-wide facts of the family's table (which read rules:
 * with nft -j input, a malformed rule throws its DumpParseError here).
 */
function readTable(ruleset: NftRuleset, want: "ip" | "ip6", answers: boolean, command: string | undefined): ReadTable {
  const layouts = decodeKubeProxyNft(ruleset);
  const layout = layouts.find((l) => l.family === want);
  const out: ReadTable = { layouts, notes: [] };
  if (!layout) return out;
  out.layout = layout;
  if (!answers) return out;
  out.overview = layout.overview();
  out.notes = otherTableNotes(ruleset, layout, command);
  return out;
}

/** What hooks the same points as kube-proxy's table on common nodes, for the notes on what was not collected. */
const OTHER_HOOKS = "firewalld's inet firewalld, iptables-nft rules of a CNI or ip-masq-agent in ip nat and ip filter, another agent's own nftables";

/**
 * Notes about other tables whose base chains hook the points a Service packet crosses (not evaluated), and, when
 * the dump cannot show them, that they were not collected: live collection in nftables mode lists only
 * `nft list table ip kube-proxy` and `… ip6 kube-proxy` (src/kube/targeted_script.ts `nt`; docs/bundle.md), so any
 * other table — whose base chains the kernel runs at the same hooks, by priority — is absent from the bundle.
 * @param command the section's recorded command (`CommandOutput.command`); undefined for a file of a bundle
 *   directory, which may be a whole `nft list ruleset` or one table.
 * @returns the notes, each one line, given as caveats of every packet traced.
 */
function otherTableNotes(ruleset: NftRuleset, layout: KubeProxyNft, command: string | undefined): string[] {
  const notes: string[] = [];
  const kubeProxy = (t: NftRuleset["tables"][number]) => t.name === "kube-proxy" && (t.family === "ip" || t.family === "ip6");
  if (command !== undefined && /\blist table\b/.test(command) && !/\blist ruleset\b/.test(command)) {
    notes.push(`only kube-proxy's tables were collected (${command}): other tables hooking the same points (${OTHER_HOOKS}) were not, and their rules were not evaluated: they may drop, accept or rewrite the packet before or after kube-proxy's chains; \`nft list ruleset\` on the node lists them`);
  } else if (command === undefined && ruleset.tables.every(kubeProxy)) {
    notes.push(`the dump holds no nftables table but kube-proxy's, and how it was listed is not recorded: unless it is a whole \`nft list ruleset\`, other tables hooking the same points (${OTHER_HOOKS}) were not collected, and their rules were not evaluated`);
  }
  const fams = layout.family === "ip6" ? ["ip6", "inet"] : ["ip", "inet"];
  for (const t of ruleset.tables) {
    if (t === layout.table || !fams.includes(t.family)) continue;
    const hooks = [...t.chains.values()].filter((c) =>
      c.base && ["prerouting", "input", "forward", "output", "postrouting"].includes(c.base.hook)
    );
    if (hooks.length === 0) continue;
    const nat = hooks.filter((c) =>
      c.base!.type === "nat" && (c.base!.hook === "prerouting" || c.base!.hook === "output")
    );
    const what = hooks.map((c) => `${c.name} (${c.base!.type} ${c.base!.hook} ${c.base!.priority})`).join(", ");
    let note = `table ${nftTableLabel(t)} also hooks ${what}; its rules were not evaluated`;
    if (
      nat.some((c) =>
        c.base!.priority === -100 || c.rules.some((r) => r.text.includes("dnat") || /jump KUBE-/.test(r.text))
      )
    ) {
      note += `: its nat chains run at the same hooks as kube-proxy's (priority ${
        nat.map((c) => c.base!.priority).join(", ")
      }); whichever chain sets up DNAT first decides`;
    }
    notes.push(note);
  }
  return notes;
}
