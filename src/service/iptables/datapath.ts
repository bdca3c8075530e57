/**
 * kube-proxy's iptables mode as a {@link Datapath}: the node's iptables-save (or ip6tables-save) parsed, or, failing
 * that, an `iptables -t nat -L` listing; traced by iptables/trace.ts. IPVS mode is the same rules plus the IPVS table
 * and ipsets (ipvs/datapath.ts), which this datapath takes as trace options: kube-proxy's IPVS mode still marks for
 * masquerade, filters and accepts in iptables, and IPVS translates after nat PREROUTING/OUTPUT.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { type CommandOutput, cutReason, exitWords, failedSection, type NodeCapture, stderrLine } from "../../bundle/bundle.ts";
import { DumpParseError } from "../../datapath/errors.ts";
import { parseIptablesListing } from "../../datapath/iptables_list.ts";
import { listingToDump } from "../../datapath/iptables_list_convert.ts";
import { type IptablesDump, isKubeServiceChain, parseIptablesSave } from "../../datapath/iptables_save.ts";
import { canonicalAddress, hostAddress } from "../../model/ip.ts";
import type { Datapath } from "../datapath.ts";
import type { IpvsReading } from "../ipvs/datapath.ts";
import type { RuleModeSignals } from "../proxy_mode.ts";
import type { AssumedIpsetMembership } from "./rule_match.ts";
import { masqueradeMarkOf, traceIptables } from "./trace.ts";

/** What a node's iptables sections hold for one family. */
export interface IptablesReading {
  /** The parsed dump, when a section could be read. */
  dump?: IptablesDump;
  /** Rule-based proxy-mode signals. */
  signals: RuleModeSignals;
  /** Why a section could not be read, or what its partial form cannot show. */
  problems: string[];
  /** What every answer on this node depends on and the section lacks (the other iptables backend's tables). */
  answerCaveats: string[];
}

function usable(s: CommandOutput | undefined): string | undefined {
  if (!s || s.truncated) return undefined;
  if (failedSection(s)) return undefined;
  return s.stdout;
}

/**
 * Dumps parsed lately, by their text: the nodes of one Service question often hold the very same rules (a targeted
 * collection of a Service whose rules do not name the node), and a parsed dump is read-only, so each distinct text is
 * parsed (and its rules tokenised) once. Only small texts (a node's whole dump is parsed once anyway), at most
 * {@link SHARED_MAX}.
 */
const shared = new Map<string, IptablesDump>();
const SHARED_MAX = 16;
const SHARED_MAX_CHARS = 1 << 20;

function parseShared(text: string): IptablesDump {
  if (text.length > SHARED_MAX_CHARS) return parseIptablesSave(text);
  let d = shared.get(text);
  if (d === undefined) {
    d = parseIptablesSave(text);
    if (shared.size >= SHARED_MAX) shared.delete(shared.keys().next().value!);
    shared.set(text, d);
  }
  return d;
}

/**
 * Reads the node's iptables-save (or ip6tables-save) section; for IPv4 without one, its `iptables -t nat -L` listing.
 * @param node the node capture.
 * @param family 4 or 6.
 * @returns the dump and signals; never throws for bad input (parse errors become `problems`, quoting the line).
 */
export function readIptables(node: NodeCapture, family: 4 | 6): IptablesReading {
  const dp: IptablesReading = {
    signals: { iptablesServiceChains: 0, ipvsMatchSets: false, ipvsVirtualServers: 0, nftablesTable: false },
    problems: [],
    answerCaveats: [],
  };
  const name = family === 6 ? "ip6tables-save" : "iptables-save";
  const section = node.sections[name];
  if (section) {
    if (section.truncated) {
      dp.problems.push(`the ${name} output ${cutReason(section)}; not analysed`);
    } else if (failedSection(section)) {
      dp.problems.push(`${name} failed (${exitWords(section.exitCode)}): ${stderrLine(section)}`);
    } else {
      const other = otherFormat(section.stdout);
      if (other) {
        dp.problems.push(`the ${name} section holds ${other}, not iptables-save output: save it under its own section name (docs/bundle.md)`);
        return dp;
      }
      try {
        // ip6tables-save prints nothing where the node has no IPv6 tables (kube-proxy handles no IPv6 there)
        if (family === 6 && section.stdout.trim() === "") {
          dp.problems.push(`${name} printed nothing: the node has no IPv6 tables, so kube-proxy handles no IPv6 here`);
          return dp;
        }
        dp.dump = parseShared(section.stdout);
        countSignals(dp);
        // iptables-nft-save warns when the other backend holds tables too (in its output or on stderr): both backends'
        // hooks see every packet, so rules there (a NOTRACK, a DNAT, a DROP) act as well and are not in this dump
        if (dp.dump.legacyTablesPresent || /iptables-legacy tables present/.test(section.stderr ?? "")) {
          const why = `${name} says iptables-legacy tables are present on this node besides these nf_tables ones: their rules see every packet too and were not collected, so what they do (untrack, translate, drop) is not in these answers; \`iptables-legacy-save\` on the node shows them`;
          dp.problems.push(why);
          dp.answerCaveats.push(why);
        }
      } catch (e) {
        // the parser names its format "iptables-save": the IPv6 section is ip6tables-save
        if (e instanceof DumpParseError) dp.problems.push(family === 6 ? e.message.replace(/^iptables-save /, `${name} `) : e.message);
        else throw e;
      }
    }
  }
  if (node.sections["nft-json"] || node.sections["nft-text"]) {
    const t = node.sections["nft-json"]?.stdout ?? node.sections["nft-text"]?.stdout ?? "";
    if (/"name":\s*"kube-proxy"|table ip6? kube-proxy/.test(t)) dp.signals.nftablesTable = true;
  }
  const listing = usable(node.sections["iptables-list"]);
  if (!dp.dump && listing !== undefined && family === 4 && !node.sections["iptables-save"]) {
    try {
      dp.dump = listingToDump(parseIptablesListing(listing));
      dp.problems.push("iptables state comes from an `iptables -t nat -L` listing: the nat table only, and only the chains listed");
      countSignals(dp);
    } catch (e) {
      if (e instanceof DumpParseError) dp.problems.push(e.message);
      else throw e;
    }
  }
  return dp;
}

/** Service chains (iptables mode) and the KUBE-CLUSTER-IP ipset match (IPVS mode) in the nat table. */
function countSignals(dp: IptablesReading): void {
  const nat = dp.dump?.tables.get("nat");
  if (!nat) return;
  // KUBE-SVC-, KUBE-SEP-, KUBE-SVL-: counted by the parser (a 10,000-Service node has 60,000 chain names); tested
  // by character here for tables built otherwise (an `iptables -L` listing).
  let n = nat.kubeServiceChains ?? 0;
  if (nat.kubeServiceChains === undefined) for (const name of nat.chains.keys()) if (isKubeServiceChain(name)) n++;
  dp.signals.iptablesServiceChains = n;
  if (nat.chains.get("KUBE-SERVICES")?.rawRules.some((r) => r.includes("KUBE-CLUSTER-IP"))) dp.signals.ipvsMatchSets = true;
  // iptables mode's own chains, for a node without any Service chain (every Service without endpoints): the nat
  // KUBE-NODEPORTS chain (IPVS mode's is KUBE-NODE-PORT), or a "has no endpoints" REJECT (pkg/proxy/iptables/proxier.go)
  const filter = dp.dump?.tables.get("filter");
  const rejects = ["KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES"].some((c) => filter?.chains.get(c)?.rawRules.some((r) => /has no endpoints/.test(r) && /-j REJECT\b/.test(r)));
  if (n === 0 && rejects) dp.signals.iptablesLayout = 'filter "… has no endpoints" REJECT rules (iptables mode)';
  else if (n === 0 && nat.chains.has("KUBE-NODEPORTS")) dp.signals.iptablesLayout = "the nat chain KUBE-NODEPORTS (iptables mode; IPVS names it KUBE-NODE-PORT)";
}

/**
 * The iptables datapath of a dump, with the IPVS table and ipsets of the node when captured (IPVS mode).
 * @param dump the node's parsed iptables rules.
 * @param ipvs what ipvs/datapath.ts read from the node (its balancer answers `virtualServer`).
 * @param assumedIpsets when the node's ipsets were not read: the membership kube-proxy gives its own sets
 *   (ipvs/kube_proxy_ipsets.ts), which the trace uses and says it assumed.
 * @returns a {@link Datapath} whose trace is {@link traceIptables}.
 */
export function iptablesDatapath(dump: IptablesDump, ipvs: IpvsReading = { problems: [] }, assumedIpsets?: AssumedIpsetMembership): Datapath {
  const options: Parameters<typeof traceIptables>[3] = {};
  // kube-proxy's mark, 1 << masqueradeBit (proxier.go NewProxier), as the node's KUBE-MARK-MASQ / KUBE-POSTROUTING
  // write it: read once per dump, not per traced packet
  const mark = masqueradeMarkOf(dump);
  if (mark !== undefined) options.masqueradeMark = mark;
  if (ipvs.ipsets) options.ipsets = ipvs.ipsets;
  else if (assumedIpsets) options.assumedIpsets = assumedIpsets;
  const balancer = ipvs.balancer;
  if (balancer) options.ipvsDispatch = (p) => balancer.dispatch(p.dst, p.dport, p.proto);
  return {
    balancingMethod: "iptables-probability-cascade",
    trace: (packet, hook, context) => traceIptables(dump, packet, hook, context?.isLocalAddress ? { ...options, isLocalAddress: context.isLocalAddress } : options),
    ...(balancer ? { virtualServer: (ip: string, port: number, proto: string) => balancer.lookup(ip, port, proto), virtualServersAt: (ip: string) => balancer.at(ip) } : {}),
    ...(ipvs.ipsets ? { ipsets: ipvs.ipsets } : {}),
    ...(ipvs.tableUnread ? { ipvsTableUnread: true } : {}),
    ...nodePortJumps(dump),
  };
}

/**
 * The node addresses iptables mode serves NodePorts on, as its rules say: kube-proxy ends nat KUBE-SERVICES with the
 * jump to KUBE-NODEPORTS, one `-m addrtype --dst-type LOCAL` rule when nodePortAddresses matches every address, else
 * one `-d IP -j KUBE-NODEPORTS` rule per node address nodePortAddresses selects (pkg/proxy/iptables/proxier.go
 * syncProxyRules "Finally, tail-call to the nodeports chain": `create nodeport rules for each IP one by one`,
 * v1.10–v1.35, GetNodeAddresses / nodePortAddresses.GetNodeIPs). IPVS mode names its chain KUBE-NODE-PORT: not read.
 * @param dump the node's parsed rules.
 * @returns `{ nodePortIPs }` with the `-d` addresses when every jump has one; `{}` when a jump takes every local
 *   address, or when the dump has no such jump (no NodePort scope can be read from it).
 */
export function nodePortJumps(dump: IptablesDump): { nodePortIPs?: string[] } {
  const chain = dump.tables.get("nat")?.chains.get("KUBE-SERVICES");
  if (!chain) return {};
  const ips: string[] = [];
  let jumps = 0;
  for (const [i, raw] of chain.rawRules.entries()) {
    if (!/-[jg] KUBE-NODEPORTS\b/.test(raw)) continue;
    let r;
    try {
      r = chain.rule(i);
    } catch (e) {
      // a rule that cannot be tokenised: the trace says so where it meets it; no scope is read
      if (e instanceof DumpParseError) return {};
      throw e;
    }
    if (r.target !== "KUBE-NODEPORTS") continue;
    jumps++;
    const d = r.destination && !r.destination.negated ? hostAddress(r.destination.value) : undefined;
    // `--dst-type LOCAL` (with or without `! -d 127.0.0.0/8`), or a -d that is no single address: every local address
    if (d === undefined || r.matches.some((m) => m.name === "addrtype")) return {};
    ips.push(canonicalAddress(d));
  }
  return jumps > 0 ? { nodePortIPs: ips } : {};
}

/** Recognises dumps of another format put where iptables-save was expected. */
function otherFormat(text: string): string | undefined {
  const head = text.slice(0, 2000);
  if (/^Prot LocalAddress:Port|^IP Virtual Server version/m.test(head)) return "ipvsadm output (section ipvsadm)";
  if (/^Chain \S+ \((policy|\d+ references)/m.test(head) && !/^\*(nat|filter)/m.test(head)) return "an `iptables -L` listing (section iptables-list)";
  if (/^table (ip|ip6|inet) /m.test(head) || /^add (table|rule|chain) /m.test(head)) return "nftables text (section nft-text)";
  if (/^\s*\{\s*"nftables"/.test(head)) return "nft -j JSON (section nft-json)";
  if (/^Name: \S+\nType: /m.test(head)) return "`ipset list` output (section ipset)";
  return undefined;
}
