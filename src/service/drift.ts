/**
 * Where a node's datapath disagrees with the API: per ServicePort, endpoints missing or stale on the node, rejects
 * despite endpoints, Services not programmed, quiesced IPVS real servers, and IPVS ipsets missing entries.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { cidrContains, isIPv6 } from "../model/ip.ts";
import type { IpsetMembership } from "./iptables/rule_match.ts";
import { heldByAffinity, rejectReason } from "./client_verdict.ts";
import { lowerProtocol, tracePacket } from "./entry_points.ts";
import { isLocalEndpoint, type ResolvedService, usableEndpoints } from "./resolve.ts";
import type { DriftItem, EndpointShare, PortReport, ServicePortSummary, ServiceSummary } from "./report.ts";
import type { NodeEndpointSet } from "./topology.ts";
import { rulesInChains, type TracePacket } from "./trace.ts";

/**
 * IPVS mode keeps per-Service state in ipsets that the iptables rules match (pkg/proxy/ipvs/proxier.go):
 * KUBE-CLUSTER-IP (`vip,proto:port`), KUBE-LOOP-BACK (`ep,proto:port,ep` for local endpoints, hairpin),
 * KUBE-NODE-PORT-TCP/UDP (the NodePort) and KUBE-NODE-PORT-SCTP-HASH (`nodeIP,sctp:port`), KUBE-LOAD-BALANCER (`lbip,proto:port`), KUBE-EXTERNAL-IP.
 * A missing entry changes masquerade (or hairpin) without any other symptom: report it.
 */
export function ipsetDrift(
  resolved: ResolvedService,
  sp: ServicePortSummary,
  node: string,
  family: 4 | 6,
  nodeIP: string,
  has: IpsetMembership,
): DriftItem[] {
  const out: DriftItem[] = [];
  const proto = lowerProtocol(sp.protocol);
  const six = family === 6 ? "KUBE-6-" : "KUBE-";
  const pkt = (src: string, dst: string, port: number) => tracePacket(src, dst, port, proto, family, false, true);
  // an IPv6 set is named KUBE-6-…, cut to ipset's 31 characters (ipvs/ipset.go NewIPSet): KUBE-6-LOAD-BALANCER-SOURCE-CID
  const check = (set: string, flags: string, p: TracePacket, entry: string, why: string) => {
    const name = family === 6 ? set.replace(/^KUBE-/, six).slice(0, 31) : set;
    if (has(name, flags.split(","), p) === false) {
      out.push({ portKey: sp.portKey, kind: "ipset-missing", ipset: name, message: `${sp.portKey}: ipset ${name} on ${node} lacks ${entry}: ${why}` });
    }
  };
  const svc = resolved.summary;
  const fam = (ip: string) => isIPv6(ip) === (family === 6);
  for (const vip of svc.clusterIPs.filter(fam)) {
    check("KUBE-CLUSTER-IP", "dst,dst", pkt("0.0.0.0", vip, sp.port), `${vip},${proto}:${sp.port}`, "traffic to the ClusterIP from outside the cluster CIDR is not masqueraded (and not accepted in KUBE-SERVICES)");
  }
  for (const e of resolved.endpoints.filter((x) => isLocalEndpoint(x, node) && x.ready && fam(x.address))) {
    const p = e.ports.find((x) => x.portKey === sp.portKey);
    if (!p) continue;
    check("KUBE-LOOP-BACK", "dst,dst,src", pkt(e.address, e.address, p.port), `${e.address},${proto}:${p.port},${e.address}`, "an endpoint reaching its own Service and sent to itself is not masqueraded (hairpin fails)");
  }
  if (sp.nodePort && (svc.type === "NodePort" || svc.type === "LoadBalancer")) {
    // TCP and UDP: bitmap:port sets of the port. SCTP: hash:ip,port sets of `nodeIP,sctp:port`, one entry per node
    // address (ipvs/ipset.go kubeNodePortSetSCTP "KUBE-NODE-PORT-SCTP-HASH"); releases before them kept SCTP in a
    // bitmap:port "KUBE-NODE-PORT-SCTP" (now the legacy name kube-proxy no longer creates): read when no -HASH set is.
    const p = pkt("0.0.0.0", nodeIP, sp.nodePort);
    const hashed = proto === "sctp" && has(`${six}NODE-PORT-SCTP-HASH`, ["dst", "dst"], p) !== undefined;
    const kind = (local: boolean) => `KUBE-NODE-PORT-${local ? "LOCAL-" : ""}${sp.protocol}${hashed ? "-HASH" : ""}`;
    const flags = hashed ? "dst,dst" : "dst";
    const entry = hashed ? `${nodeIP},sctp:${sp.nodePort}` : `${sp.nodePort}`;
    check(kind(false), flags, p, entry, "NodePort traffic is not marked for masquerade");
    if (svc.externalTrafficPolicy === "Local") check(kind(true), flags, p, entry, "externalTrafficPolicy Local is not applied to the NodePort (clients are masqueraded)");
  }
  if (svc.type === "LoadBalancer") {
    for (const ip of svc.loadBalancerIngress.filter(fam)) {
      const entry = `${ip},${proto}:${sp.port}`;
      check("KUBE-LOAD-BALANCER", "dst,dst", pkt("0.0.0.0", ip, sp.port), entry, "LoadBalancer traffic is not handled by kube-proxy's rules");
      // ipvs/proxier.go: externalTrafficPolicy Local, loadBalancerSourceRanges
      if (svc.externalTrafficPolicy === "Local") check("KUBE-LOAD-BALANCER-LOCAL", "dst,dst", pkt("0.0.0.0", ip, sp.port), entry, "externalTrafficPolicy Local is not applied to the LoadBalancer IP (clients are masqueraded: their source address is lost)");
      const ranges = svc.loadBalancerSourceRanges.filter((r) => fam(r.trim()));
      if (ranges.length > 0) {
        check("KUBE-LOAD-BALANCER-FW", "dst,dst", pkt("0.0.0.0", ip, sp.port), entry, "loadBalancerSourceRanges are not enforced at the LoadBalancer IP");
        for (const r of ranges.map((x) => x.trim())) {
          check("KUBE-LOAD-BALANCER-SOURCE-CIDR", "dst,dst,src", pkt(r.split("/")[0]!, ip, sp.port), `${entry},${r}`, `clients in the source range ${r} are dropped at the LoadBalancer IP`);
        }
      }
    }
  }
  // an externalIP is in KUBE-EXTERNAL-IP-LOCAL under externalTrafficPolicy Local, else in KUBE-EXTERNAL-IP, never
  // both (ipvs/proxier.go syncProxyRules, "Capture externalIPs")
  for (const ip of svc.externalIPs.filter(fam)) {
    if (svc.externalTrafficPolicy === "Local") check("KUBE-EXTERNAL-IP-LOCAL", "dst,dst", pkt("0.0.0.0", ip, sp.port), `${ip},${proto}:${sp.port}`, "externalTrafficPolicy Local is not applied to the externalIP (clients are masqueraded)");
    else check("KUBE-EXTERNAL-IP", "dst,dst", pkt("0.0.0.0", ip, sp.port), `${ip},${proto}:${sp.port}`, "externalIP traffic is not marked for masquerade");
  }
  return out;
}

/**
 * Drift of one ServicePort on a node: endpoints the API lists as usable on this node (`usable`, from topology.ts
 * nodeEndpoints: its topology hints and kube-proxy's fallbacks) that the node does not send to, and the reverse; a node that rejects although endpoints exist; a Service not programmed; IPVS real servers with weight 0.
 * `pr` holds the entry points of one address family (the rules of one family): only the endpoints of that family are
 * expected there, as kube-proxy runs a proxier per family, each reading only the EndpointSlices of its addressType
 * (pkg/proxy/proxier.go NewDualStackProxier; endpointslicecache.go). Before, a dual-stack Service's other-family
 * endpoints were all "missing" from each family's rules.
 */
export function driftFor(resolved: ResolvedService, sp: ServicePortSummary, pr: PortReport, node: string, ipvsMode: boolean, usable?: NodeEndpointSet): DriftItem[] {
  const out: DriftItem[] = [];
  const cip = pr.entryPoints.find((e) => e.kind === "ClusterIP");
  if (!cip) return out;
  // a client held by a session-affinity set goes to its remembered endpoint only: it tells nothing of the others
  const fresh = cip.clients.filter((c) => !heldByAffinity(c));
  const ref = fresh.find((c) => c.client === "pod-same-node") ?? fresh[0];
  if (!ref) return out;
  // what kube-proxy on this node programs (topology.ts: hints, serving-terminating fallback), else without topology
  const v6 = cip.destination.startsWith("[");
  const expected = new Set(
    (usable?.endpoints ?? usableEndpoints(resolved.endpoints, sp.portKey, resolved.summary.internalTrafficPolicy, node)).filter((e) => e.startsWith("[") === v6),
  );
  const onNode = new Set(
    cip.balancing.method === "ipvs"
      ? cip.balancing.shares.filter((s) => (s.weight ?? 1) > 0).map((s) => s.endpoint)
      : ref.endpoints.map((e) => e.endpoint),
  );
  if (ref.assumedNotMatched && ref.assumedNotMatched.length > 0) {
    // where the node sends the packet rests on rules whose match is not known: no drift can be claimed from it
    out.push({
      portKey: sp.portKey,
      kind: "unverifiable",
      message: `${sp.portKey}: where ${node} sends ${cip.destination} depends on ${rulesInChains(ref.assumedNotMatched)}, which kubectl-netpath does not model (assumed not to match): its endpoints cannot be compared with the API`,
      evidence: ref.assumedNotMatched,
    });
    return out;
  }
  if (usable?.undetermined !== undefined) {
    // the API's side cannot be told (topology hints, and the node's zone not known): nothing to compare against
    out.push({ portKey: sp.portKey, kind: "unverifiable", message: `${sp.portKey}: ${usable.undetermined}` });
    return out;
  }
  if (ref.outcome === "unknown" && cip.balancing.method !== "ipvs") {
    // the state that decides it was not read (a failed or missing section): nothing to compare, and no drift to claim
    out.push({
      portKey: sp.portKey,
      kind: "unverifiable",
      message: `${sp.portKey}: what ${node} does with ${cip.destination} is not known${ref.reason ? ` (${ref.reason})` : ""}: its endpoints cannot be compared with the API`,
    });
    return out;
  }
  if (cip.balancing.method !== "ipvs" && ref.outcome !== "rejected" && ref.outcome !== "dropped" && ipvsMode) {
    out.push({
      portKey: sp.portKey,
      kind: "service-missing",
      message: `${sp.portKey}: no IPVS virtual server for ${cip.destination} on ${node}; kube-proxy has not programmed this Service here`,
    });
    return out;
  }
  // nftables mode: a ClusterIP missing from set cluster-ips falls to cluster-ips-check's "Drop traffic to unallocated
  // ClusterIPs" (nftables/proxier.go setupNFTables); kube-proxy adds every Service's ClusterIP to that set at each
  // sync (syncProxyRules, clusterIPs.ensureElem), with or without endpoints (those reject): the Service is not programmed
  const unallocated = ref.outcome === "dropped" ? ref.evidence.find((e) => e.role === "drops" && e.rule.chain === "cluster-ips-check") : undefined;
  if (unallocated) {
    out.push({
      portKey: sp.portKey,
      kind: "service-missing",
      message: `${sp.portKey}: ${node} drops ${cip.destination} as an unallocated ClusterIP (set cluster-ips lacks it): kube-proxy has not programmed this Service here (not running, failing to sync, or the dump is of another node/mode); clients time out instead of ${expected.size > 0 ? "reaching its endpoints" : "being refused"}`,
      evidence: [unallocated.rule],
    });
    return out;
  }
  // a raw-table NOTRACK before kube-proxy (NodeLocal DNSCache on the kube-dns ClusterIP): the node's own choice, not
  // kube-proxy's state: its rules cannot be compared from these clients
  if (ref.outcome === "not-handled" && ref.untrackedBy) {
    out.push({
      portKey: sp.portKey,
      kind: "unverifiable",
      message: `${sp.portKey}: ${node} untracks packets to ${cip.destination} in its raw table (${ref.untrackedBy.chain} line ${ref.untrackedBy.line}, NOTRACK), before kube-proxy's nat rules: they go to whatever listens on that address on the node (NodeLocal DNSCache, for one), so kube-proxy's endpoints for it cannot be compared with the API`,
      evidence: [ref.untrackedBy],
    });
    return out;
  }
  if (ref.outcome === "not-handled" && cip.balancing.method !== "ipvs") {
    out.push({
      portKey: sp.portKey,
      kind: "service-missing",
      message: `${sp.portKey}: no rule for ClusterIP ${cip.destination} on ${node}; kube-proxy has not programmed this Service here (not running, failing to sync, or the dump is of another node/mode)`,
    });
    return out;
  }
  // loadBalancerSourceRanges: kube-proxy drops clients outside them at each LoadBalancer IP (iptables KUBE-FW-*, IPVS
  // KUBE-LOAD-BALANCER-SOURCE-CIDR, nftables firewall-ips / firewall-* chains); the client traced from outside them
  // getting through means those rules are missing on this node
  const ranges = resolved.summary.loadBalancerSourceRanges;
  for (const e of ranges.length > 0 ? pr.entryPoints.filter((x) => x.kind === "LoadBalancer") : []) {
    const denied = e.clients.find((c) => c.client === "external-denied");
    if (denied?.outcome !== "forwarded") continue;
    out.push({
      portKey: sp.portKey,
      kind: "source-ranges-not-enforced",
      message: `${sp.portKey}: ${node} does not enforce loadBalancerSourceRanges (${ranges.join(", ")}) at ${e.destination}: a ${denied.description} reaches ${denied.endpoints.map((x) => x.endpoint).join(", ")}; the rules that drop it are missing (stale rules)`,
      evidence: denied.evidence.map((x) => x.rule),
    });
  }
  if (ref.outcome === "rejected" && expected.size > 0) {
    const rejects = ref.evidence.filter((e) => e.role === "rejects").map((e) => e.rule);
    const why = rejectReason(rejects[0]);
    out.push({
      portKey: sp.portKey,
      kind: "unexpected-reject",
      message: ref.reason.startsWith("rejected by IPVS")
        ? `${sp.portKey}: ${node} rejects new connections to ${cip.destination}: its IPVS virtual server has no real server to send to, but the API lists ${expected.size} usable endpoint(s): the node's rules are stale`
        : why.startsWith(": the address is bound to kube-ipvs0")
        ? `${sp.portKey}: ${node} rejects new connections to ${cip.destination} in KUBE-IPVS-FILTER${why}, though the API lists ${expected.size} usable endpoint(s): the node's ipsets are stale`
        : why.startsWith(": the node has no rule")
        ? `${sp.portKey}: ${node} rejects new connections to ${cip.destination}: it has no rule for this port of the ClusterIP, but the API lists ${expected.size} usable endpoint(s): the node's rules are stale (the Service's ports changed since kube-proxy last synced, or it failed to)`
        : why
        ? `${sp.portKey}: ${node} rejects new connections to ${cip.destination} ("has no endpoints") but the API lists ${expected.size} usable endpoint(s): the node's rules are stale`
        : `${sp.portKey}: ${node} rejects new connections to ${cip.destination} by a rule that is not kube-proxy's, though the API lists ${expected.size} usable endpoint(s)`,
      evidence: rejects,
    });
  }
  const unknown = [...onNode].filter((e) => e.startsWith("unknown ("));
  // kube-proxy's version, which the API does not hold, decides between two sets (topology.ts nodeEndpoints
  // `alternative`): a node programming the other one is not shown as drift; the item says what decides
  const alt = usable?.alternative;
  const altSet = new Set((alt?.endpoints ?? []).filter((e) => e.startsWith("[") === v6));
  const sameSet = (a: Set<string>) => a.size === onNode.size && [...onNode].every((e) => a.has(e));
  if (alt && unknown.length === 0 && ref.outcome === "forwarded" && sameSet(altSet) && !sameSet(expected)) {
    out.push({
      portKey: sp.portKey,
      kind: "unverifiable",
      message: `${sp.portKey}: ${node} sends traffic to ${[...onNode].join(", ")}, as ${alt.when.replace(/:.*$/, "")}; the API's reading for it (${[...expected].join(", ")}) assumes the other side of v1.31: kube-proxy's version, which the API does not hold, decides whether this is drift (the kube-proxy image of this node's pod says it)`,
    });
    expected.clear();
    onNode.clear();
  }
  // a branch into a chain the dump lacks may lead to any endpoint: none can be said missing then
  for (const e of unknown.length > 0 ? [] : expected) {
    if (!onNode.has(e)) {
      const state = usable?.ready === false ? "serving and terminating in the API (kube-proxy's fallback when no endpoint is ready)" : "ready in the API";
      out.push({ portKey: sp.portKey, kind: "missing-on-node", endpoint: e, message: `${sp.portKey}: endpoint ${e} is ${state} but ${node} does not send traffic to it` });
    }
  }
  if (unknown.length > 0) {
    out.push({
      portKey: sp.portKey,
      kind: "unverifiable",
      message: `${sp.portKey}: ${unknown.length} branch(es) on ${node} lead to chains the dump does not contain; their endpoints cannot be compared with the API, so none is said missing`,
    });
  }
  for (const e of onNode) {
    if (e.startsWith("unknown (")) continue;
    if (!expected.has(e)) {
      out.push({ portKey: sp.portKey, kind: "stale-on-node", endpoint: e, message: `${sp.portKey}: ${node} sends traffic to ${e}, which is not a usable endpoint in the API (deleted, not ready, on another node under a Local policy, or outside this node's topology hints)` });
    }
  }
  if (cip.balancing.method === "ipvs") {
    for (const s of cip.balancing.shares) {
      if (s.weight === 0) {
        out.push(quiescedDrift(sp, node, s));
      } else if (s.weight !== undefined && s.weight !== 1) {
        // kube-proxy adds every real server with weight 1 and rewrites another weight only in its first sync after a
        // restart (pkg/proxy/ipvs/proxier.go syncEndpoint, `proxier.initialSync`): any other weight was set by
        // something else, and stays until kube-proxy restarts.
        out.push({
          portKey: sp.portKey,
          kind: "weight",
          endpoint: s.endpoint,
          message: `${sp.portKey}: real server ${s.endpoint} has weight ${s.weight} on ${node}, where kube-proxy sets 1: changed by something other than kube-proxy (it resets weights only when it restarts); the shares above follow the node's weights`,
        });
      }
    }
  }
  return out;
}

/**
 * An IPVS real server of weight 0, as kube-proxy's graceful termination explains it (pkg/proxy/ipvs/
 * graceful_termination.go): syncEndpoint hands a real server whose endpoint left the set to `GracefulDeleteRS`, which
 * first tries `deleteRsFunc`: a UDP or SCTP real server is deleted at once ("For UDP and SCTP traffic, no graceful
 * termination", `utilipvs.IsRsGracefulTerminationNeeded`; UDP since v1.15, kubernetes#77802), a TCP one when its
 * ActiveConn + InactiveConn is 0; only a TCP real server still holding connections is set to weight 0 and retried
 * every minute (`rsCheckDeleteInterval`) until they are gone.
 * @param share the real server as the balancing lists it (weight 0; `activeConn` / `inactiveConn` as the dump shows).
 * @returns `quiesced` (info) for a TCP real server being drained, or past it (no connection left: deleted at
 *   kube-proxy's next check); `weight` (warning) for a UDP or SCTP one, which kube-proxy never leaves at weight 0.
 */
export function quiescedDrift(sp: ServicePortSummary, node: string, share: EndpointShare): DriftItem {
  const rs = `real server ${share.endpoint} has weight 0 on ${node}`;
  const proto = sp.protocol.toUpperCase();
  if (proto === "UDP" || proto === "SCTP") {
    return {
      portKey: sp.portKey,
      kind: "weight",
      endpoint: share.endpoint,
      message: `${sp.portKey}: ${rs}, which is not a drain: kube-proxy deletes a ${proto} real server at once instead of draining it (pkg/proxy/ipvs/graceful_termination.go deleteRsFunc: no graceful termination for UDP and SCTP${proto === "UDP" ? ", since v1.15" : ""}); it is left by a failed delete (kube-proxy retries every minute and logs the error), by kube-proxy not syncing this node, or set by something other than kube-proxy`,
    };
  }
  const counts = share.activeConn !== undefined && share.inactiveConn !== undefined ? { active: share.activeConn, inactive: share.inactiveConn } : undefined;
  const message = counts === undefined
    ? `${sp.portKey}: ${rs}: it gets no new connections (being drained: kube-proxy deletes it once it has no connection left, checking every minute; the dump has no connection counts)`
    : counts.active + counts.inactive > 0
    ? `${sp.portKey}: ${rs}: it gets no new connections (being drained: ${counts.active} active and ${counts.inactive} inactive connection(s) left; kube-proxy deletes it once both are 0, checking every minute)`
    : `${sp.portKey}: ${rs} and no connection left (ActiveConn 0, InActConn 0): past draining, kube-proxy deletes it at its next check (every minute, graceful_termination.go rsCheckDeleteInterval); still there later, kube-proxy is not running that check on ${node}`;
  return { portKey: sp.portKey, kind: "quiesced", endpoint: share.endpoint, message };
}

/**
 * Entry points for clients from outside (NodePort, each LoadBalancer ingress IP, each externalIP) that the node's
 * rules do not take at all, while the Service's ClusterIP is programmed. kube-proxy writes a rule for every one of
 * them at each sync, endpoints or not: nftables mode (pkg/proxy/nftables/proxier.go syncProxyRules, v1.29–v1.35,
 * "Capture externalIPs", "Capture load-balancer ingress", "Capture nodeports") a `service-ips` /
 * `service-nodeports` element `goto external-…` when the Service has endpoints (hasEndpoints), a
 * `no-endpoint-services` / `no-endpoint-nodeports` drop or reject when none serves clients from outside
 * (!hasExternalEndpoints); iptables mode (pkg/proxy/iptables/proxier.go syncProxyRules, same headings) a nat
 * KUBE-SERVICES / KUBE-NODEPORTS rule to KUBE-EXT-… or a filter KUBE-EXTERNAL-SERVICES REJECT/DROP. A client from
 * outside that no kube-proxy rule handles there therefore means the node's rules are stale for that address (an
 * address assigned after kube-proxy last synced, or kube-proxy failing to sync): clients sent there by a load
 * balancer or a route get no answer from the Service. Each entry point is checked (one LoadBalancer IP may be
 * missing where another is not). Not for IPVS mode, whose sets ipsetDrift checks.
 * @param internalDrift the items driftFor gave this ServicePort: a Service not programmed at all (`service-missing`)
 *   is said there once, not again per entry point.
 * @param scoped whether kube-proxy is expected to take this entry point on this node: false for a NodePort on an
 *   address nodePortAddresses leaves out (proxy_scope.ts nodePortScope).
 * @returns one `entry-missing` item per entry point not handled (`service-missing` is the Service not programmed at
 *   all, its ClusterIP without a rule: driftFor's).
 */
export function unhandledEntryDrift(
  sp: ServicePortSummary,
  pr: PortReport,
  node: string,
  mode: "iptables" | "nftables",
  internalDrift: readonly DriftItem[],
  scoped: (entry: PortReport["entryPoints"][number]) => boolean = () => true,
): DriftItem[] {
  if (internalDrift.some((d) => d.kind === "service-missing")) return [];
  const cip = pr.entryPoints.find((e) => e.kind === "ClusterIP");
  // the ClusterIP programmed (forwarded, rejected or dropped by kube-proxy's rules): kube-proxy syncs this Service
  if (cip && !cip.clients.some((c) => c.outcome === "forwarded" || c.outcome === "rejected" || c.outcome === "dropped")) return [];
  const out: DriftItem[] = [];
  const what = mode === "nftables"
    ? (kind: string) => kind === "NodePort" ? "a service-nodeports element (or a no-endpoint-nodeports one when no endpoint serves clients from outside)" : "a service-ips element (or a no-endpoint-services one when no endpoint serves clients from outside)"
    : (kind: string) => `a nat ${kind === "NodePort" ? "KUBE-NODEPORTS" : "KUBE-SERVICES"} rule (or a filter KUBE-EXTERNAL-SERVICES REJECT/DROP when no endpoint serves clients from outside)`;
  for (const entry of pr.entryPoints) {
    if (entry.kind === "ClusterIP" || !scoped(entry)) continue;
    const client = entry.clients.find((c) => c.client === "external");
    // no rule of kube-proxy's took the packet at all (no evidence): one that marked it and let it through (v1.12's
    // KUBE-XLB mark for drop, dropped only at a local address) is a verdict of its own, not a missing entry point
    if (!client || client.outcome !== "not-handled" || client.evidence.length > 0 || client.untrackedBy || (client.assumedNotMatched?.length ?? 0) > 0) continue;
    const name = entry.kind === "ExternalIP" ? "externalIP" : entry.kind === "LoadBalancer" ? "LoadBalancer IP" : "NodePort";
    out.push({
      portKey: sp.portKey,
      kind: "entry-missing",
      message: `${sp.portKey}: no kube-proxy rule for ${name} ${entry.destination} on ${node}, though its ClusterIP is programmed: kube-proxy writes ${what(entry.kind)} for it at every sync, so the node's rules are stale (kube-proxy has not synced since the address was assigned, or fails to); clients from outside sent there leave untranslated and get no answer from the Service`,
    });
  }
  return out;
}

/**
 * Drift of external traffic (NodePort, LoadBalancer IP, externalIP) against the Service's externalTrafficPolicy, which
 * the ClusterIP comparison of {@link driftFor} cannot see: under `Local` kube-proxy sends clients from outside only to
 * this node's endpoints and does not masquerade them, or drops them when it has none (iptables proxier.go: no
 * `KUBE-MARK-MASQ` in KUBE-EXT-* and a DROP in KUBE-EXTERNAL-SERVICES; nftables `external-` chains and
 * `no-endpoint-nodeports`); under `Cluster` it sends them where it sends ClusterIP traffic. A node still programming
 * the other policy (rules not resynced) is reported once per ServicePort.
 * @param external the endpoints kube-proxy programs for external traffic on this node (topology.ts nodeEndpoints with
 *   the externalTrafficPolicy).
 * @param internalDrift the items driftFor gave this ServicePort: under `Cluster` a difference already reported there
 *   is not reported again.
 */
export function externalPolicyDrift(resolved: ResolvedService, sp: ServicePortSummary, pr: PortReport, node: string, external: NodeEndpointSet, internalDrift: DriftItem[]): DriftItem[] {
  // each kind of entry point for clients from outside, each address of it until one differs: one may be stale where
  // another is not (IPVS keeps them in separate sets; an address without any rule is unhandledEntryDrift's, and
  // the next one of its kind still tells the policy)
  const out: DriftItem[] = [];
  // not comparable when the API's side is undetermined (said once, by driftFor)
  if (external.undetermined !== undefined) return out;
  for (const kind of ["NodePort", "LoadBalancer", "ExternalIP"] as const) {
    for (const entry of pr.entryPoints.filter((e) => e.kind === kind && e.clients.some((c) => c.client === "external"))) {
      out.push(...externalEntryDrift(resolved, sp, entry, node, external, internalDrift));
      if (out.length > 0) return out;
    }
  }
  return out;
}

function externalEntryDrift(resolved: ResolvedService, sp: ServicePortSummary, entry: PortReport["entryPoints"][number], node: string, external: NodeEndpointSet, internalDrift: DriftItem[]): DriftItem[] {
  const policy = resolved.summary.externalTrafficPolicy;
  const client = entry.clients.find((c) => c.client === "external");
  if (!client || client.outcome === "unknown" || client.outcome === "not-handled" || client.outcome === "mixed") return [];
  // a client outside loadBalancerSourceRanges is dropped at a LoadBalancer IP whatever the policy (KUBE-FW-*,
  // nftables firewall chains): no policy can be read from it (the ranges' own check is driftFor's)
  // kube-proxy keeps the ranges of its own family (serviceport.go MapCIDRsByIPFamily): none of it, no firewall
  const ranges = resolved.summary.loadBalancerSourceRanges.map((r) => r.trim()).filter((r) => isIPv6(r) === isIPv6(client.source));
  if (entry.kind === "LoadBalancer" && ranges.length > 0 && !ranges.some((r) => cidrContains(r, client.source))) return [];
  // IPVS: a source-range ipset entry missing (KUBE-LOAD-BALANCER-SOURCE-CIDR, KUBE-LOAD-BALANCER-FW) already explains a client
  // dropped or sent elsewhere at the LoadBalancer IP: not also blamed on the policy
  if (entry.kind === "LoadBalancer" && internalDrift.some((d) => /^KUBE-(6-)?LOAD-BALANCER-(SOURCE-C|FW)/.test(d.ipset ?? ""))) return [];
  const v6 = entry.destination.startsWith("[");
  const expected = new Set(external.endpoints.filter((e) => e.startsWith("[") === v6));
  const actual = new Set(client.outcome === "forwarded" ? client.endpoints.map((e) => e.endpoint) : []);
  if ([...actual].some((e) => e.startsWith("unknown ("))) return [];
  const same = expected.size === actual.size && [...expected].every((e) => actual.has(e));
  // the other set kube-proxy's version may give (topology.ts nodeEndpoints `alternative`, said by driftFor)
  const alt = new Set((external.alternative?.endpoints ?? []).filter((e) => e.startsWith("[") === v6));
  if (external.alternative && alt.size === actual.size && [...alt].every((e) => actual.has(e))) return [];
  const where = `${entry.kind} ${entry.destination}`;
  if (policy === "Cluster") {
    if (same) return [];
    // clients from outside go to the cluster policy chain (iptables KUBE-SVC-, nftables service-; proxier.go
    // syncProxyRules: externalPolicyChain := clusterPolicyChain unless ExternalPolicyLocal), built from
    // clusterEndpoints (pkg/proxy/topology.go CategorizeEndpoints). With internalTrafficPolicy Cluster the ClusterIP
    // takes that chain too, and driftFor compared it; with Local the ClusterIP takes the local chain (or is dropped
    // with no local endpoint), so this chain's endpoints are compared here, as any other Service's are.
    if (resolved.summary.internalTrafficPolicy === "Local") {
      const drift = clusterChainDrift(resolved, sp, entry, client, node, expected, actual, internalDrift);
      if (drift) return drift;
    } else if (internalDrift.some((d) => d.kind === "missing-on-node" || d.kind === "stale-on-node" || d.kind === "unexpected-reject")) {
      return [];
    }
    return [{
      portKey: sp.portKey,
      kind: "external-policy",
      message: `${sp.portKey}: externalTrafficPolicy Cluster, but ${node} sends clients from outside at ${where} to ${actual.size > 0 ? [...actual].join(", ") : "no endpoint"} where the API has ${[...expected].join(", ") || "none"}: the node's rules look written for another policy (stale)`,
      evidence: client.evidence.map((x) => x.rule),
    }];
  }
  if (!same) {
    const want = expected.size > 0 ? `only to this node's endpoints (${[...expected].join(", ")})` : "nowhere: this node has no endpoint, so they are dropped";
    return [{
      portKey: sp.portKey,
      kind: "external-policy",
      message: `${sp.portKey}: externalTrafficPolicy Local should send clients from outside at ${where} ${want}, but ${node} ${actual.size > 0 ? `sends them to ${[...actual].join(", ")}` : `${client.outcome === "rejected" ? "rejects" : "drops"} them`}: the node's rules are stale (written for another policy or other endpoints)`,
      evidence: client.evidence.map((x) => x.rule),
    }];
  }
  if (actual.size > 0 && client.masquerade !== "never") {
    return [{
      portKey: sp.portKey,
      kind: "external-policy",
      message: `${sp.portKey}: externalTrafficPolicy Local keeps the client's source address, but ${node} masquerades clients from outside at ${where}${client.masquerade === "some" ? " on some paths" : ""}: the node's rules are stale (written for policy Cluster)`,
      evidence: client.evidence.map((x) => x.rule),
    }];
  }
  return [];
}

/**
 * internalTrafficPolicy Local, externalTrafficPolicy Cluster: the endpoints of the chain clients from outside take
 * (the cluster policy chain, which the ClusterIP does not use) against the API's cluster endpoints for this node.
 * @returns the node's rules written for policy Local (clients sent only to this node's endpoints, or dropped without
 *   one, and not masqueraded: undefined, for the caller's `external-policy` item); else `unexpected-reject` when the
 *   node rejects them though endpoints exist, or `missing-on-node` / `stale-on-node` per endpoint (an item driftFor
 *   already gave for the same endpoint is not repeated); [] when nothing differs.
 */
function clusterChainDrift(
  resolved: ResolvedService,
  sp: ServicePortSummary,
  entry: PortReport["entryPoints"][number],
  client: PortReport["entryPoints"][number]["clients"][number],
  node: string,
  expected: Set<string>,
  actual: Set<string>,
  internalDrift: DriftItem[],
): DriftItem[] | undefined {
  const v6 = entry.destination.startsWith("[");
  const local = new Set(
    usableEndpoints(resolved.endpoints, sp.portKey, "Local", node).filter((e) => e.startsWith("[") === v6),
  );
  const onlyLocal = actual.size === local.size && [...actual].every((e) => local.has(e));
  // written for policy Local: only this node's endpoints (none: dropped), the client's address kept
  if (onlyLocal && client.masquerade !== "always" && client.masquerade !== "some" && client.outcome !== "rejected") return undefined;
  const where = `${entry.kind} ${entry.destination}`;
  if (client.outcome === "rejected" || (actual.size === 0 && expected.size > 0)) {
    return [{
      portKey: sp.portKey,
      kind: "unexpected-reject",
      message: `${sp.portKey}: ${node} ${client.outcome === "rejected" ? "rejects" : "drops"} clients from outside at ${where}, but the API lists ${expected.size} usable endpoint(s) for them (externalTrafficPolicy Cluster: the service- chain of every endpoint): the node's rules are stale`,
      evidence: client.evidence.map((x) => x.rule),
    }];
  }
  const said = (kind: DriftItem["kind"], e: string) => internalDrift.some((d) => d.kind === kind && d.endpoint === e);
  const out: DriftItem[] = [];
  for (const e of expected) {
    if (actual.has(e) || said("missing-on-node", e)) continue;
    out.push({ portKey: sp.portKey, kind: "missing-on-node", endpoint: e, message: `${sp.portKey}: endpoint ${e} is ready in the API but ${node} does not send clients from outside at ${where} to it (externalTrafficPolicy Cluster, internalTrafficPolicy Local: the chain of every endpoint that external traffic takes)` });
  }
  for (const e of actual) {
    if (expected.has(e) || said("stale-on-node", e)) continue;
    out.push({ portKey: sp.portKey, kind: "stale-on-node", endpoint: e, message: `${sp.portKey}: ${node} sends clients from outside at ${where} to ${e}, which is not a usable endpoint in the API (deleted, not ready, or outside this node's topology hints)` });
  }
  return out;
}

/** The session affinity the API asks for: the timeout in seconds for ClientIP, undefined for None. */
function wantedAffinity(svc: ServiceSummary): number | undefined {
  return svc.sessionAffinity === "ClientIP" ? svc.affinityTimeoutSeconds : undefined;
}

/**
 * IPVS mode: ClientIP session affinity is the virtual server's persistence, its timeout the Service's
 * (ipvs/proxier.go: FlagPersistent, Timeout = StickyMaxAgeSeconds); None sets neither. The kernel keeps clients as the
 * virtual server says, whatever the API says now.
 * @param persistentSeconds the virtual server's `persistent N` (undefined: not persistent).
 * @returns the drift, or undefined when the node does as the API asks.
 */
export function persistenceDrift(svc: ServiceSummary, sp: ServicePortSummary, destination: string, node: string, persistentSeconds: number | undefined): DriftItem | undefined {
  const want = wantedAffinity(svc);
  if (persistentSeconds === want) return undefined;
  return {
    portKey: sp.portKey,
    kind: "affinity-timeout",
    message: `${sp.portKey}: IPVS virtual server ${destination} on ${node} ${persistentSeconds === undefined ? "is not persistent" : `is persistent for ${persistentSeconds} s`}, the API asks for ${want === undefined ? "no session affinity" : `ClientIP session affinity of ${want} s`}: ${persistentSeconds === undefined ? "clients are balanced per connection" : "clients are kept on one real server"}; the node's rules are stale`,
  };
}

/**
 * IPVS mode: kube-proxy builds every virtual server with its configured scheduler (pkg/proxy/ipvs/proxier.go
 * syncProxyRules: `Scheduler: proxier.ipvsScheduler`) and updates one whose scheduler differs at every sync
 * (syncService: `UpdateVirtualServer` when `!appliedVirtualServer.Equal(vs)`; pkg/proxy/ipvs/util/ipvs.go
 * `VirtualServer.Equal` compares Scheduler). A virtual server keeping another scheduler is not being synced by a
 * kube-proxy running with that configuration.
 * @param actual the scheduler the listing shows for the virtual server (`ipvsadm -Ln`).
 * @param configured the scheduler of kube-proxy's configuration ({@link effectiveIpvsScheduler}), with its source.
 * @returns the drift (`ipvs-scheduler`), or undefined when they agree.
 */
export function schedulerDrift(sp: ServicePortSummary, destination: string, node: string, actual: string, configured: { value: string; source: string }): DriftItem | undefined {
  if (actual === configured.value) return undefined;
  return {
    portKey: sp.portKey,
    kind: "ipvs-scheduler",
    message: `${sp.portKey}: IPVS virtual server ${destination} on ${node} uses scheduler ${actual}, kube-proxy's configuration says ${configured.value} (${configured.source}): kube-proxy sets its scheduler on every virtual server it syncs, so kube-proxy on ${node} is not running with this configuration (not restarted since it changed, or started with another) or is not syncing; the balancing shown is the node's (${actual}), not the configured one`,
  };
}

/**
 * nftables mode: ClientIP affinity is one `affinity-…` set per endpoint the node can reach, whose timeout is the
 * Service's (pkg/proxy/nftables/proxier.go syncProxyRules: activeAffinitySets gets `epInfo.affinitySetName` only when
 * `SessionAffinityType() == ClientIP`, Timeout = StickyMaxAgeSeconds; writeServiceToEndpointRules writes the
 * `ip saddr @affinity-… goto` rules under the same condition); a Service without it has none, as kube-proxy deletes
 * any other affinity set at once ("we can immediately delete any stale affinity sets", v1.29+).
 * @param sets the ServicePort's affinity sets in the dump (Datapath.affinitySets).
 * @param forwards whether the node sends some client of the port to an endpoint (it has endpoint chains, which the
 *   sets go with); a port without one has no set either way.
 * @returns the drift (`affinity-timeout`), or undefined when the node does as the API asks.
 */
export function affinitySetDrift(svc: ServiceSummary, sp: ServicePortSummary, node: string, sets: readonly { name: string; timeoutSeconds?: number }[], forwards: boolean): DriftItem | undefined {
  const want = wantedAffinity(svc);
  const drift = (what: string): DriftItem => ({
    portKey: sp.portKey,
    kind: "affinity-timeout",
    message: `${sp.portKey}: ${node}${what}, the API asks for ${want === undefined ? "no session affinity" : `ClientIP session affinity of ${want} s`}: the node's rules are stale`,
  });
  if (want === undefined) {
    if (sets.length === 0) return undefined;
    const held = [...new Set(sets.flatMap((x) => (x.timeoutSeconds !== undefined ? [x.timeoutSeconds] : [])))];
    return drift(` has ${sets.length} affinity set(s) (e.g. ${sets[0]!.name}${held.length > 0 ? `, keeping a client for ${held.join(", ")} s` : ""}) that keep clients on their endpoint`);
  }
  if (sets.length === 0) return forwards ? drift(" has no affinity set for the port's endpoints (clients are balanced per connection)") : undefined;
  const other = sets.filter((x) => x.timeoutSeconds !== undefined && x.timeoutSeconds !== want);
  if (other.length === 0) return undefined;
  return drift(`'s affinity sets keep a client for ${[...new Set(other.map((x) => x.timeoutSeconds))].join(", ")} s (${other.length} of ${sets.length} set(s), e.g. ${other[0]!.name})`);
}

/**
 * What the node does about session affinity, for `balancing.sessionAffinity` where it differs from the API: `none on
 * the node (WHY)` or `ClientIP on the node: N s (HOW)`.
 * @param seconds the timeouts the node keeps clients for (empty: it keeps none).
 * @param how where it shows: `no recent rule` / `-m recent`, `no affinity set` / `affinity sets`.
 */
export function nodeAffinityText(seconds: readonly number[], how: { none: string; held: string }): string {
  return seconds.length === 0 ? `none on the node (${how.none})` : `ClientIP on the node: ${seconds.join(", ")} s (${how.held})`;
}

/** The timeouts of a Service chain's `-m recent --rcheck --seconds N` rules (iptables mode), each once. */
export function recentRuleSeconds(rules: readonly string[]): number[] {
  return [...new Set(rules.filter((r) => / -m recent /.test(r) && /--rcheck\b/.test(r)).map((r) => Number(/--seconds (\d+)/.exec(r)?.[1] ?? NaN)))];
}

/**
 * iptables mode: ClientIP affinity is a `-m recent --rcheck --seconds N` rule per endpoint in the Service's
 * KUBE-SVC/KUBE-SVL chain (iptables/proxier.go writeServiceToEndpointRules, N = StickyMaxAgeSeconds); None writes none.
 * @param svcChain the Service chain the ClusterIP's pods take.
 * @param rules its rules, as the dump prints them.
 * @returns the drift, or undefined when the node does as the API asks.
 */
export function recentRuleDrift(svc: ServiceSummary, sp: ServicePortSummary, node: string, svcChain: string, rules: readonly string[]): DriftItem | undefined {
  const held = recentRuleSeconds(rules);
  const want = wantedAffinity(svc);
  if ((held.length === 0 && want === undefined) || (held.length === 1 && held[0] === want)) return undefined;
  return {
    portKey: sp.portKey,
    kind: "affinity-timeout",
    message: `${sp.portKey}: ${svcChain} on ${node} ${held.length === 0 ? "has no session-affinity (recent) rule" : `keeps a client on its endpoint for ${held.join(", ")} s (-m recent --rcheck)`}, the API asks for ${want === undefined ? "no session affinity" : `ClientIP session affinity of ${want} s`}: the node's rules are stale`,
  };
}
