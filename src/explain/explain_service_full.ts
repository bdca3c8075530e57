/**
 * `svc/NAME` with every datapath the bundle holds: iptables-save (or, failing that, an `iptables -t nat -L`
 * listing), plus IPVS (ipvsadm virtual servers and ipset sets) when captured, and kube-proxy's nftables table
 * (`nft -j list ruleset` / `nft list ruleset`, nft_datapath.ts). This is the analysis the CLI runs;
 * {@link explainService} alone reads iptables-save only.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Bundle, BundleObjects, NodeCapture } from "../bundle/bundle.ts";
import { DumpParseError } from "../datapath/errors.ts";
import { parseIpsetList } from "../datapath/ipset.ts";
import { parseIptablesListing } from "../datapath/iptables_list.ts";
import { listingToDump } from "../datapath/iptables_list_convert.ts";
import { parseIpvsadm } from "../datapath/ipvsadm.ts";
import { ipsetMembership } from "./ipset_membership.ts";
import { ipvsBalancer } from "./ipvs_balance.ts";
import { nftDatapath } from "./nft_datapath.ts";
import { type ExplainServiceOptions, explainService, iptablesDatapath, type NodeDatapath } from "./service_path.ts";
import type { ServiceReport } from "./service_report.ts";

function usable(node: NodeCapture, section: keyof NodeCapture["sections"]): string | undefined {
  const s = node.sections[section];
  if (!s || s.truncated) return undefined;
  if ((s.exitCode ?? 0) !== 0 && s.stdout.trim() === "") return undefined;
  return s.stdout;
}

/**
 * Builds a node's datapath from all its sections: iptables-save or listing, ipvsadm, ipset, nft.
 * Parse errors become `problems` (reported per node), never exceptions.
 * @param node the node capture.
 * @param family 4 or 6.
 * @param objects the bundle's objects (the kube-proxy ConfigMap decides whether an nftables table answers when
 *   iptables rules exist too).
 */
export function fullDatapath(node: NodeCapture, family: 4 | 6, objects?: BundleObjects): NodeDatapath {
  const dp = iptablesDatapath(node, family);
  const listing = usable(node, "iptables-list");
  if (!dp.iptables && listing !== undefined && family === 4 && !node.sections["iptables-save"]) {
    try {
      dp.iptables = listingToDump(parseIptablesListing(listing));
      dp.problems.push("iptables state comes from an `iptables -t nat -L` listing: the nat table only, and only the chains listed");
      const nat = dp.iptables.tables.get("nat")!;
      for (const name of nat.chains.keys()) {
        if (/^KUBE-(SVC|SEP|SVL)-/.test(name)) dp.signals.iptablesServiceChains++;
      }
      if (nat.chains.get("KUBE-SERVICES")?.rawRules.some((r) => r.includes("KUBE-CLUSTER-IP"))) dp.signals.ipvsMatchSets = true;
    } catch (e) {
      if (e instanceof DumpParseError) dp.problems.push(e.message);
      else throw e;
    }
  }
  const ipvsSection = node.sections.ipvsadm;
  if (ipvsSection && (ipvsSection.truncated || ((ipvsSection.exitCode ?? 0) !== 0 && ipvsSection.stdout.trim() === ""))) {
    // The IPVS table was not read: say so, so that IPVS verdicts are "unknown", not "not programmed".
    const why = ipvsSection.truncated ? "its output was cut off" : `exit ${ipvsSection.exitCode}: ${ipvsSection.stderr?.trim().split("\n")[0] || "no output"}`;
    dp.problems.push(`ipvsadm failed (${why}): the IPVS virtual servers of this node are unknown`);
    dp.ipvsUnavailable = true;
  }
  const ipvsText = usable(node, "ipvsadm");
  if (ipvsText !== undefined && ipvsText.trim() !== "") {
    try {
      const bal = ipvsBalancer(parseIpvsadm(ipvsText));
      dp.ipvs = bal;
      dp.signals.ipvsVirtualServers = bal.virtualServers;
      dp.traceOptions.ipvsDispatch = (p) => bal.dispatch(p.dst, p.dport, p.proto);
    } catch (e) {
      if (e instanceof DumpParseError) dp.problems.push(e.message);
      else throw e;
    }
  }
  const ipsetText = usable(node, "ipset");
  if (ipsetText !== undefined) {
    try {
      dp.traceOptions.ipsets = ipsetMembership(parseIpsetList(ipsetText));
    } catch (e) {
      if (e instanceof DumpParseError) dp.problems.push(e.message);
      else throw e;
    }
  }
  if (node.sections["nft-json"] || node.sections["nft-text"]) {
    const nft = nftDatapath(node, family, { ...(objects ? { objects } : {}), iptablesDump: dp.iptables !== undefined });
    dp.signals.nftablesTable = dp.signals.nftablesTable || nft.signals.nftablesTable;
    dp.problems.push(...nft.problems);
    if (nft.trace) {
      dp.trace = nft.trace;
      dp.balancingMethod = "nftables-numgen";
      if (nft.clusterCIDRs) dp.clusterCIDRs = nft.clusterCIDRs;
    }
  }
  return dp;
}

/**
 * Explains a Service using every datapath section of the bundle.
 * @param bundle the bundle.
 * @param namespace the Service's namespace.
 * @param name the Service's name.
 * @param options nodes and packet question.
 * @returns the report.
 * @throws {NotFoundError} when the Service is not in the bundle.
 */
export function explainServiceFull(
  bundle: Bundle,
  namespace: string,
  name: string,
  options: Omit<ExplainServiceOptions, "datapath"> = {},
): ServiceReport {
  return explainService(bundle, namespace, name, { ...options, datapath: (node, family) => fullDatapath(node, family, bundle.objects) });
}
