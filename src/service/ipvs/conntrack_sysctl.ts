/**
 * IPVS mode and `net.ipv4.vs.conntrack`: kube-proxy's masquerade in IPVS mode is iptables nat's (KUBE-MARK-MASQ, then
 * KUBE-POSTROUTING's MASQUERADE; KUBE-LOOP-BACK for hairpin), which acts only on tracked packets. IPVS keeps conntrack
 * entries for its connections only with net.ipv4.vs.conntrack=1: ip_vs_conn_new (net/netfilter/ipvs/ip_vs_conn.c) sets
 * IP_VS_CONN_F_NFCT only when ip_vs_conntrack_enabled, and ip_vs_nat_send_or_cont (ip_vs_xmit.c) untracks every packet
 * of a connection without it (`ip_vs_notrack(skb)`), so nat POSTROUTING never SNATs it. kube-proxy sets the sysctl to 1
 * at start (pkg/proxy/ipvs/proxier.go NewProxier, "Set the conntrack sysctl we need for", EnsureSysctl(sysctlVSConnTrack,
 * 1), every release); a node where it reads 0 had it reset after kube-proxy started.
 * With it 0, IPVS still reverses its own DNAT for the replies that cross this node (ip_vs_out / ip_vs_reply4), so a
 * branch fails only where the missing SNAT sent the reply elsewhere: an endpoint reaching itself (it replies to itself
 * inside its own namespace), and a host client whose source is a Service address on kube-ipvs0 reaching an endpoint of
 * another node (the reply goes to that address, which the endpoint's node holds itself). An endpoint of another node
 * for a client from outside the node is the reply-path check's (reply_path.ts), once the branch is known unmasqueraded.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { NodeSysctls } from "../../datapath/sysctls.ts";
import { type ClientVerdict, dependsOnNotCollected, type EndpointInfo } from "../report.ts";

/** The sysctl that decides whether IPVS's connections are tracked (net/netfilter/ipvs/ip_vs_ctl.c, `conntrack`). */
export const VS_CONNTRACK = "net.ipv4.vs.conntrack";

/** The address of `IP:PORT` or `[IPv6]:PORT`. */
function ipOf(ep: string): string {
  const m = /^\[(.*)\]:\d+$/.exec(ep) ?? /^(.*):\d+$/.exec(ep);
  return m ? m[1]! : ep;
}

/**
 * Applies the node's net.ipv4.vs.conntrack to a verdict of IPVS mode (call it before reply_path.ts checkReplyPath).
 * @param v the verdict (mutated: `endpoints[].masqueraded` and `replyFails` (`ipvs-untracked`), `masquerade`,
 *   `reason`, caveats; `notCollected` names the sysctl when its value is not known).
 * @param node this node.
 * @param endpoints the Service's endpoints with their nodes.
 * @param sysctls the node's settings; undefined when not collected (the report's limits name the sysctl too).
 * @param serviceAddresses the Service's addresses, which IPVS binds to kube-ipvs0 (a host client's source when it
 *   connects to one of them).
 */
export function checkIpvsConntrack(v: ClientVerdict, node: string, endpoints: readonly EndpointInfo[], sysctls: NodeSysctls | undefined, serviceAddresses: readonly string[]): void {
  if (v.outcome === "dropped" || v.outcome === "rejected" || v.outcome === "not-handled") return;
  const masqueraded = v.endpoints.filter((e) => e.masqueraded === true);
  if (masqueraded.length === 0) return;
  const value = sysctls?.values.get(VS_CONNTRACK);
  if (value === "1") return;
  if (value === undefined) {
    const why = sysctls ? "absent from the node's collected sysctls" : "the node's sysctls were not collected";
    v.caveats.push(`masqueraded only if ${VS_CONNTRACK} is 1 (${why}): with 0, IPVS untracks its packets and nat POSTROUTING's MASQUERADE never SNATs them`);
    dependsOnNotCollected(v, VS_CONNTRACK);
    return;
  }
  const before = v.reason;
  const failed: string[] = [];
  for (const e of masqueraded) {
    e.masqueraded = false;
    const ip = ipOf(e.endpoint);
    const where = endpoints.find((x) => x.address === ip)?.node;
    if (ip === v.source || (serviceAddresses.includes(v.source) && where !== undefined && where !== node)) {
      e.replyFails = "ipvs-untracked";
      failed.push(e.endpoint);
    }
  }
  const all = v.endpoints.every((e) => e.masqueraded !== true);
  v.masquerade = all ? "never" : "some";
  v.reason = `${all ? "not masqueraded" : `not masqueraded when sent to ${masqueraded.map((e) => e.endpoint).join(", ")}`}: ${VS_CONNTRACK}=${value} untracks IPVS's packets, so the SNAT the rules ask for never happens (the rules alone: ${before})`;
  v.caveats.push(
    `${VS_CONNTRACK}=${value}: IPVS keeps no conntrack entry for its connections and untracks their packets (ip_vs_conn.c ip_vs_conn_new, ip_vs_xmit.c ip_vs_nat_send_or_cont), ` +
      `so KUBE-POSTROUTING's MASQUERADE never SNATs them and ${masqueraded.map((e) => e.endpoint).join(", ")} ${masqueraded.length === 1 ? "sees" : "see"} ${v.source} itself; kube-proxy sets it to 1 at start (pkg/proxy/ipvs/proxier.go NewProxier): it was reset since`,
  );
  if (failed.length > 0) {
    v.caveats.push(
      `without that SNAT the replies from ${failed.join(", ")} do not come back through IPVS: ${
        failed.some((f) => ipOf(f) === v.source) ? "an endpoint reaching itself replies to itself inside its own namespace" : `they go to ${v.source}, which the endpoint's node holds on its own kube-ipvs0`
      }; the connection does not complete`,
    );
    const ok = v.endpoints.filter((e) => e.replyFails === undefined);
    v.reason = `${v.reason}; but ${ok.length === 0 ? "no" : "not every"} connection completes: ${failed.join(", ")} (see caveats)`;
  }
}
