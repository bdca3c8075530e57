/**
 * The one interface every datapath of a node implements — kube-proxy's iptables mode, its IPVS mode (iptables rules
 * plus the IPVS table), its nftables mode, and datapaths to come — and the builder that reads a node's capture into
 * the one that programs it. {@link explainService} (explain.ts) takes any of them: it asks a {@link Datapath} how one
 * packet traverses it (`trace`), what its own scheduler balances (`virtualServer`, IPVS), and learns what it could
 * not read (`problems`, `ipvsTableUnread`).
 *
 * Which one answers for a node: the nftables table when kube-proxy runs (or says nothing and has) nftables mode
 * (nftables/datapath.ts); else the iptables rules (iptables/datapath.ts), with the IPVS table and ipsets layered on
 * when captured (ipvs/datapath.ts). The proxy mode reported is decided separately from all the signals
 * (proxy_mode.ts), so a disagreement between them is a finding rather than a silent choice.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { BundleObjects, NodeCapture } from "../bundle/bundle.ts";
import type { DumpParseError } from "../datapath/errors.ts";
import type { IptablesDump } from "../datapath/iptables_save.ts";
import type { KubeProxyNft } from "../datapath/kube_proxy_nft.ts";
import { iptablesDatapath, readIptables } from "./iptables/datapath.ts";
import type { IpsetMembership } from "./iptables/rule_match.ts";
import { readIpvs } from "./ipvs/datapath.ts";
import { kubeProxyIpsets } from "./ipvs/kube_proxy_ipsets.ts";
import { nftDatapath } from "./nftables/datapath.ts";
import type { RuleModeSignals } from "./proxy_mode.ts";
import type { EntryPointReport } from "./report.ts";
import type { RuleRef, TraceContext, TraceHook, TracePacket, TraceResult } from "./trace.ts";

/** How one node (one IP family) handles Service traffic, whatever programs it. */
export interface Datapath {
  /** The balancing method `trace` implements (shown per entry point). */
  readonly balancingMethod: EntryPointReport["balancing"]["method"];
  /**
   * How one new connection traverses the datapath: every possible fate with its probability, the rules that decided
   * it, and what the captured state cannot show (caveats). Never throws for a well-formed packet.
   */
  trace(packet: TracePacket, hook: TraceHook, context?: TraceContext): TraceResult;
  /**
   * What the datapath's own scheduler balances for `ip:port/proto` (IPVS virtual servers: scheduler, real servers,
   * weights); undefined when the datapath has no such table or no virtual server for it. Absent: the shares are those
   * of `trace`.
   */
  virtualServer?(ip: string, port: number, proto: string): EntryPointReport["balancing"] | undefined;
  /** Every IPVS virtual server on address `ip`: its port, protocol (lower case) and ipvsadm line. */
  virtualServersAt?(ip: string): { port: number; proto: string; line: number }[];
  /** ipset membership the rules match (IPVS mode), for the ipset drift check. */
  readonly ipsets?: IpsetMembership;
  /** The IPVS table was expected but could not be read: IPVS verdicts are "unknown", never "not programmed". */
  readonly ipvsTableUnread?: boolean;
  /** Cluster CIDRs the datapath's own local-traffic detector uses, when it has one (nftables `ip saddr != CIDR`). */
  readonly clusterCIDRs?: string[];
  /** The pod interface of an interface-based local-traffic detector (`cni0`, `veth*`), when it has one. */
  readonly podInterface?: string;
  /** A rule that shows {@link podInterface} (nftables/datapath.ts `NftDatapath.podInterfaceRule`). */
  readonly podInterfaceRule?: RuleRef;
  /**
   * nftables mode: the table shows kube-proxy running without a local-traffic detector (nftables/datapath.ts
   * `NftDatapath.noLocalDetector`). iptables and IPVS mode tell it from the dump instead
   * (cluster_cidr.ts iptablesWithoutLocalDetector).
   */
  readonly noLocalDetector?: boolean;
  /**
   * nftables mode: the session-affinity sets of a ServicePort (`affinity-…-NS/NAME/PROTO/PORT__…`, one per endpoint):
   * each set's timeout (s) and the clients it holds; in iptables and IPVS mode that state is the kernel's, not in a dump.
   */
  affinitySets?(namespace: string, name: string, protocol: string, portName: string | undefined): { name: string; timeoutSeconds?: number; clients: number }[];
  /**
   * The addresses the node's rules serve NodePorts on. nftables mode: its set `nodeport-ips`; `"local"` when the
   * table has no such set (its rule matches `fib daddr type local`: every local address). iptables mode: the `-d IP`
   * of each nat KUBE-SERVICES jump to KUBE-NODEPORTS (iptables/datapath.ts nodePortJumps); absent when the jump is
   * `--dst-type LOCAL` (every local address).
   */
  readonly nodePortIPs?: string[] | "local";
}

/** What a node's capture yields for one IP family: its datapath (when one could be read) and what was seen on the way. */
export interface NodeDatapath {
  /** The datapath that answers for the node; undefined when no section of the capture could be read. */
  datapath?: Datapath;
  /** Rule-based proxy-mode signals (proxy_mode.ts). */
  signals: RuleModeSignals;
  /** The iptables dump of the family, when captured (its local-traffic detector gives the cluster CIDR). */
  iptables?: IptablesDump;
  /** Problems reading the node's sections: shown as node notes, or as the node's error when nothing answers. */
  problems: string[];
  /** What every answer on this node depends on and the bundle lacks: said under each packet answer. */
  answerCaveats: string[];
  /** The ipvsadm section could not be parsed: the node's error when it runs kube-proxy in IPVS mode. */
  ipvsadmError?: DumpParseError;
}

/** Reads a node's capture into its datapath. Replaceable in {@link ExplainServiceOptions} (e.g. for tests). */
export type DatapathBuilder = (node: NodeCapture, family: 4 | 6, objects: BundleObjects) => NodeDatapath;

/**
 * Reads every datapath section of a node's capture for one family: iptables-save (or an `iptables -t nat -L`
 * listing), ipvsadm and ipset list, and kube-proxy's nftables table (`nft -j list ruleset` / `nft list ruleset`).
 * Parse errors become `problems`, never exceptions.
 * @param node the node capture.
 * @param family 4 or 6.
 * @param objects the bundle's objects (the kube-proxy ConfigMap decides whether an nftables table answers when
 *   iptables rules exist too).
 * @returns the node's datapath and signals.
 */
export function nodeDatapath(node: NodeCapture, family: 4 | 6, objects?: BundleObjects): NodeDatapath {
  const read = readIptables(node, family);
  const out: NodeDatapath = { signals: read.signals, problems: read.problems, answerCaveats: read.answerCaveats };
  if (read.dump) out.iptables = read.dump;
  const ipvs = readIpvs(node);
  out.problems.push(...ipvs.problems);
  if (ipvs.ipvsadmError) out.ipvsadmError = ipvs.ipvsadmError;
  if (ipvs.balancer) out.signals.ipvsVirtualServers = ipvs.balancer.virtualServers;
  // IPVS mode without the node's ipsets: KUBE-CLUSTER-IP and KUBE-LOOP-BACK hold what kube-proxy writes into them from
  // the API objects at every sync (pkg/proxy/ipvs/proxier.go syncProxyRules), taken as such and said so
  if (read.dump) out.datapath = iptablesDatapath(read.dump, ipvs, !ipvs.ipsets && objects ? kubeProxyIpsets(objects, node.name) : undefined);
  if (node.sections["nft-json"] || node.sections["nft-text"]) {
    const nft = nftDatapath(node, family, { ...(objects ? { objects } : {}), iptablesDump: read.dump !== undefined });
    out.signals.nftablesTable = out.signals.nftablesTable || nft.signals.nftablesTable;
    out.problems.push(...nft.problems);
    if (nft.trace) {
      out.datapath = {
        balancingMethod: "nftables-numgen",
        trace: nft.trace,
        ...(nft.clusterCIDRs ? { clusterCIDRs: nft.clusterCIDRs } : {}),
        ...(nft.podInterface ? { podInterface: nft.podInterface } : {}),
        ...(nft.podInterfaceRule ? { podInterfaceRule: nft.podInterfaceRule } : {}),
        ...(nft.noLocalDetector ? { noLocalDetector: true } : {}),
        ...(nft.layout ? { affinitySets: affinitySetsOf(nft.layout), nodePortIPs: nft.layout.nodePortIPs?.map((x) => x.ip) ?? "local" } : {}),
      };
    }
  }
  return out;
}

/**
 * The affinity sets of a ServicePort in kube-proxy's nftables table: kube-proxy names them after the endpoint chain,
 * `affinity-HASH-NS/NAME/PROTO/PORTNAME__IP/PORT` (pkg/proxy/nftables/proxier.go servicePortEndpointChainNameBase).
 */
function affinitySetsOf(layout: KubeProxyNft): NonNullable<Datapath["affinitySets"]> {
  return (namespace, name, protocol, portName) => {
    const needle = `-${namespace}/${name}/${protocol.toLowerCase()}/${portName ?? ""}__`;
    return layout.affinitySets.filter((s) => s.name.includes(needle)).map((s) => ({
      name: s.name,
      ...(s.timeoutSeconds !== undefined ? { timeoutSeconds: s.timeoutSeconds } : {}),
      clients: s.clients.length,
    }));
  };
}
