/**
 * Answers `-m set --match-set NAME FLAGS` for a packet from `ipset list` output, as the kernel's ip_set match does:
 * each flag (`src`/`dst`) picks the packet field for the matching dimension of the set type, in order
 * (hash:ip,port with `dst,dst` → destination address and destination proto:port; hash:ip,port,ip with `dst,dst,src`
 * → destination address, destination proto:port, source address — kube-proxy's KUBE-LOOP-BACK hairpin set).
 * Types handled: hash:ip, hash:ip,port, hash:ip,port,ip, hash:ip,port,net, hash:net, hash:net,port, bitmap:port.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { IpsetSet } from "../../datapath/ipset.ts";
import { cidrContains } from "../../model/ip.ts";
import type { IpsetMembership } from "../iptables/rule_match.ts";
import type { TracePacket } from "../trace.ts";

function addr(p: TracePacket, flag: string | undefined): string {
  return flag === "src" ? p.src : p.dst;
}

function port(p: TracePacket, flag: string | undefined): number {
  return flag === "src" ? (p.sport ?? 40000) : p.dport;
}

function memberMatches(type: string, m: IpsetSet["members"][number], flags: string[], p: TracePacket): boolean {
  const dims = type.replace(/^(hash|bitmap|list):/, "").split(",");
  let ipUsed = false;
  for (let i = 0; i < dims.length; i++) {
    const dim = dims[i];
    const flag = flags[i] ?? flags[flags.length - 1];
    switch (dim) {
      case "ip":
        if (!ipUsed) {
          ipUsed = true;
          if (m.ip === undefined || !cidrContains(m.ip, addr(p, flag))) return false;
        } else if (m.ip2 === undefined || !cidrContains(m.ip2, addr(p, flag))) return false;
        break;
      case "net": {
        const net = m.net ?? (ipUsed ? m.ip2 : m.ip);
        if (net === undefined || !cidrContains(net, addr(p, flag))) return false;
        ipUsed = true;
        break;
      }
      case "port":
        if (m.port === undefined || m.port !== port(p, flag)) return false;
        if (m.proto !== undefined && m.proto !== p.proto) return false;
        break;
      default:
        return false;
    }
  }
  return !m.nomatch;
}

/**
 * Builds the membership oracle for the tracer from parsed sets.
 * @param sets the output of parseIpsetList.
 * @returns a function answering membership; undefined for a set that is not in the list (the tracer then reports
 *   the rule as depending on unknown state).
 */
export function ipsetMembership(sets: IpsetSet[]): IpsetMembership {
  const byName = new Map(sets.map((s) => [s.name, s]));
  return (name, flags, packet) => {
    const set = byName.get(name);
    if (!set || set.membersListed === false) return undefined;
    return set.members.some((m) => memberMatches(set.type, m, flags, packet));
  };
}
