/**
 * kube-proxy's IPVS mode: what a node's `ipvsadm -Ln` and `ipset list` sections add to its iptables rules — the
 * virtual servers with their scheduler and real servers (balance.ts), and the KUBE-* ipsets the rules match
 * (ipset_membership.ts). iptables/datapath.ts layers them onto the iptables trace.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { cutReason, type CommandOutput, exitWords, failedSection, type NodeCapture } from "../../bundle/bundle.ts";
import { DumpParseError } from "../../datapath/errors.ts";
import { parseIpsetList } from "../../datapath/ipset.ts";
import { parseIpvsadm } from "../../datapath/ipvsadm.ts";
import type { IpsetMembership } from "../iptables/rule_match.ts";
import { type IpvsBalancer, ipvsBalancer } from "./balance.ts";
import { ipsetMembership } from "./ipset_membership.ts";

/** The IPVS state of a node, as read from its capture. */
export interface IpvsReading {
  /** The virtual servers, when ipvsadm output was captured and parsed. */
  balancer?: IpvsBalancer & { virtualServers: number };
  /** ipset membership, when `ipset list` was captured and parsed. */
  ipsets?: IpsetMembership;
  /** ipvsadm ran but its output is unusable (failed or cut off): IPVS verdicts are "unknown". */
  tableUnread?: boolean;
  /** The ipvsadm output could not be parsed (the line at fault): a node in IPVS mode cannot be answered. */
  ipvsadmError?: DumpParseError;
  /** Why a section could not be read. */
  problems: string[];
}

function usable(s: CommandOutput | undefined): string | undefined {
  if (!s || s.truncated) return undefined;
  if (failedSection(s)) return undefined;
  return s.stdout;
}

/**
 * Whether a listing stops inside its last line: `ipvsadm -Ln` and `ipset list` end every line with a newline, and have
 * no end marker of their own, so output that does not end with one was cut (a copy, or a stream, that stopped).
 */
function cutInLine(text: string): boolean {
  return text !== "" && !text.endsWith("\n");
}

/**
 * Reads the node's ipvsadm and ipset sections.
 * @param node the node capture.
 * @returns the IPVS state; never throws for bad input (parse errors become `problems`).
 */
export function readIpvs(node: NodeCapture): IpvsReading {
  const out: IpvsReading = { problems: [] };
  const ipvsSection = node.sections.ipvsadm;
  if (ipvsSection && (ipvsSection.truncated || failedSection(ipvsSection))) {
    // The IPVS table was not read: say so, so that IPVS verdicts are "unknown", not "not programmed".
    const why = ipvsSection.truncated ? `its output ${cutReason(ipvsSection)}` : `${exitWords(ipvsSection.exitCode)}: ${ipvsSection.stderr?.trim().split("\n")[0] || "nothing on stderr"}`;
    out.problems.push(`ipvsadm failed (${why}): the IPVS virtual servers of this node are unknown`);
    out.tableUnread = true;
  }
  let ipvsText = usable(ipvsSection);
  if (ipvsText !== undefined && cutInLine(ipvsText)) {
    out.problems.push("the ipvsadm output ends inside a line (no final newline): it was cut, so the IPVS virtual servers of this node are unknown; collect it again (or, if the file is whole, end it with a newline)");
    out.tableUnread = true;
    ipvsText = undefined;
  }
  if (ipvsText !== undefined && ipvsText.trim() !== "") {
    try {
      out.balancer = ipvsBalancer(parseIpvsadm(ipvsText));
    } catch (e) {
      if (!(e instanceof DumpParseError)) throw e;
      out.problems.push(e.message);
      out.tableUnread = true;
      out.ipvsadmError = e;
    }
  }
  const ipsetSection = node.sections.ipset;
  if (ipsetSection && failedSection(ipsetSection) && ipsetSection.exitCode !== 127) {
    out.problems.push(`ipset list failed (${exitWords(ipsetSection.exitCode)}): ${ipsetSection.stderr?.trim().split("\n")[0] || "nothing on stderr"}; the KUBE-* ipsets of this node are unknown`);
  }
  let ipsetText = usable(ipsetSection);
  if (ipsetText !== undefined && cutInLine(ipsetText)) {
    out.problems.push("the ipset list output ends inside a line (no final newline): it was cut, so the KUBE-* ipsets of this node are unknown; collect it again (or, if the file is whole, end it with a newline)");
    ipsetText = undefined;
  }
  if (ipsetText !== undefined) {
    try {
      out.ipsets = ipsetMembership(parseIpsetList(ipsetText));
    } catch (e) {
      if (e instanceof DumpParseError) out.problems.push(e.message);
      else throw e;
    }
  }
  return out;
}

/**
 * Whether IPVS mode has bound an address to the node's kube-ipvs0 dummy interface, which makes it a local address
 * (packets to it go through filter INPUT, where KUBE-IPVS-FILTER rejects ports that are no virtual service):
 * membership in the ipset KUBE-IPVS-IPS (kube-proxy v1.26+) when the bundle has it, else whether it is one of the
 * Service's own ClusterIPs, externalIPs or LoadBalancer IPs (kube-proxy binds every one of them; pkg/proxy/ipvs/proxier.go).
 * @param ipsets the node's ipset membership oracle, if `ipset list` was collected.
 * @param own the Service's addresses.
 * @param family 4 or 6.
 */
export function ipvsBoundAddress(ipsets: IpsetMembership | undefined, own: readonly string[], family: 4 | 6): (ip: string) => boolean {
  return (ip) => {
    const probe = { family, src: family === 6 ? "::" : "0.0.0.0", dst: ip, proto: "tcp" as const, dport: 0, srcLocal: false, dstLocal: false, mark: 0, ctstate: new Set(["NEW"]) };
    const member = ipsets?.("KUBE-IPVS-IPS", ["dst"], probe);
    return member ?? own.includes(ip);
  };
}
