/**
 * IPVS mode: how a virtual server spreads new connections over its real servers, from `ipvsadm -Ln` output.
 *
 * Scheduler semantics follow the kernel's net/netfilter/ipvs/ip_vs_*.c and ipvsadm(8):
 * - rr: round robin over real servers with weight > 0 — equal shares;
 * - wrr: weighted round robin — share = weight / Σ weights;
 * - sh / mh: hash of the source address — one client always lands on the same real server (which one, the hash
 *   decides), over many clients in proportion to weight; with the `sh-port` / `mh-port` flag (IP_VS_SVC_F_SCHED2,
 *   which kube-proxy sets for them: FlagSourceHash in pkg/proxy/ipvs/util) the source port is hashed too, so each
 *   connection of a client may land elsewhere; dh: hash of the destination — every client of a virtual server lands
 *   on the same real server. No share is fixed for a client: the report shows none (null);
 * - lc, wlc, sed, nq, lblc, lblcr, fo, ovf, twos: decided by live connection counts (or randomness), so no fixed
 *   share exists; the dump's ActiveConn/InActConn only tell where the next connection would go.
 * A real server with weight 0 is quiesced: it keeps its connections and gets no new ones.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { IpvsTable, VirtualServer } from "../../datapath/ipvsadm.ts";
import { joinHostPort } from "../../model/ip.ts";
import type { EndpointShare, EntryPointReport } from "../report.ts";

/** The IPVS virtual servers of a node: their balancing, and their real servers as DNAT alternatives for the tracer. */
export interface IpvsBalancer {
  /** The virtual server for `ip:port/proto`, its scheduler and real servers with shares. */
  lookup(ip: string, port: number, proto: string): EntryPointReport["balancing"] | undefined;
  /**
   * Real servers as DNAT alternatives `{ dnatTo, probability, fixed }` for the tracer; `fixed` false when the scheduler
   * gives no fixed share (the probabilities are then even placeholders, to evaluate masquerade per real server).
   * `[]` for a virtual server without a real server of weight > 0; undefined for no virtual server.
   */
  dispatch(ip: string, port: number, proto: string): { dnatTo: string; probability: number; fixed: boolean; caveat?: string }[] | undefined;
  /** The virtual servers on address `ip`: port, protocol (lower case), ipvsadm line. */
  at(ip: string): { port: number; proto: string; line: number }[];
}

/** What each scheduler does, and whether it gives fixed shares. */
export const SCHEDULERS: Record<string, { description: string; shares: "equal" | "weight" | "hash" | "live" }> = {
  rr: { description: "round robin: each real server with weight > 0 in turn", shares: "equal" },
  wrr: { description: "weighted round robin: shares proportional to weight", shares: "weight" },
  lc: { description: "least connection: depends on live connection counts", shares: "live" },
  wlc: { description: "weighted least connection: depends on live connection counts and weights", shares: "live" },
  lblc: { description: "locality-based least connection: depends on destination and live counts", shares: "live" },
  lblcr: { description: "locality-based least connection with replication: depends on live counts", shares: "live" },
  dh: { description: "destination hashing: every connection to one destination address (this virtual server's) goes to the same real server, which the hash picks", shares: "hash" },
  sh: { description: "source hashing: one client always lands on the same real server, which the hash of its address picks; over many clients, shares proportional to weight", shares: "hash" },
  sed: { description: "shortest expected delay: depends on live connection counts", shares: "live" },
  nq: { description: "never queue: an idle server if any, else shortest expected delay", shares: "live" },
  mh: { description: "Maglev hashing: one client always lands on the same real server, which a consistent hash of its address picks; over many clients, shares proportional to weight", shares: "hash" },
  fo: { description: "weighted failover: all new connections to the available server with the highest weight", shares: "live" },
  ovf: { description: "weighted overflow: the highest-weight server until its connections exceed its weight", shares: "live" },
  twos: { description: "weighted random twos choice: random, weighted by live counts", shares: "live" },
};

function key(proto: string, ip: string, port: number): string {
  return `${proto.toLowerCase()} ${ip} ${port}`;
}

/**
 * sh and dh give a weight-0 real server hash buckets too, and refuse the clients that land there (ip_vs_sh_get,
 * ip_vs_dh_schedule: an unavailable destination is no destination; port unreachable) unless sh-fallback is set, which
 * kube-proxy does not set; mh leaves such a server out of its table. The sentence saying so, or undefined.
 */
function refusalOf(vs: VirtualServer): string | undefined {
  const quiesced = vs.realServers.filter((r) => r.weight === 0).map((r) => joinHostPort(r.address, r.port));
  if (quiesced.length === 0 || !(vs.scheduler === "dh" || (vs.scheduler === "sh" && !vs.flags.includes("sh-fallback")))) return undefined;
  const them = quiesced.length > 1 ? `the weight-0 real servers ${quiesced.join(", ")} keep their hash buckets` : `the weight-0 real server ${quiesced[0]} keeps its hash buckets`;
  return vs.scheduler === "dh"
    ? `${them}: if the virtual server's address hashes to one, every new connection is refused (port unreachable)`
    : `${them}: clients whose address hashes to one are refused (port unreachable), not balanced (no sh-fallback flag)`;
}

function sharesOf(vs: VirtualServer): EndpointShare[] {
  const sched = SCHEDULERS[vs.scheduler ?? ""]?.shares ?? "live";
  const live = vs.realServers.filter((r) => (r.weight ?? 1) > 0);
  const totalWeight = live.reduce((s, r) => s + (r.weight ?? 1), 0);
  return vs.realServers.map((r) => {
    const w = r.weight ?? 1;
    let share: number | null = null;
    if (w === 0) share = 0;
    else if (sched === "equal") share = 1 / live.length;
    else if (sched === "weight") share = totalWeight > 0 ? w / totalWeight : null;
    const e: EndpointShare = { endpoint: joinHostPort(r.address, r.port), share, via: `ipvsadm line ${r.line}` };
    if (r.weight !== undefined) e.weight = r.weight;
    if (r.activeConn !== undefined) e.activeConn = r.activeConn;
    if (r.inactiveConn !== undefined) e.inactiveConn = r.inactiveConn;
    return e;
  });
}

/**
 * Builds the IPVS balancer of a node from its ipvsadm table.
 * @param table parsed `ipvsadm -Ln` output.
 * @returns lookup (balancing of one virtual server) and dispatch (real servers as DNAT alternatives for the tracer:
 *   the scheduler's shares where fixed; for live-count schedulers every real server with weight > 0 equally, which
 *   only serves to evaluate masquerade per real server — the report shows their share as null).
 */
export function ipvsBalancer(table: IpvsTable): IpvsBalancer & { virtualServers: number } {
  const index = new Map<string, VirtualServer>();
  for (const vs of table.virtualServers) {
    if (vs.address !== undefined && vs.port !== undefined) index.set(key(vs.protocol, vs.address, vs.port), vs);
  }
  return {
    virtualServers: table.virtualServers.length,
    lookup(ip, port, proto): EntryPointReport["balancing"] | undefined {
      const vs = index.get(key(proto, ip, port));
      if (!vs) return undefined;
      if (table.columns === "stats" || table.columns === "rate") {
        // ipvsadm.c print_service_entry: the --stats and --rate layouts print counters, not the scheduler, the
        // persistence or the weights; none of them is known from this listing
        return {
          method: "ipvs",
          scheduler: {
            name: "unknown",
            description: `not shown: the listing is \`ipvsadm -Ln --${table.columns}\`, which prints neither the scheduler, nor persistence, nor weights (the default \`ipvsadm -Ln\` does)`,
            deterministicShares: false,
            unlisted: true,
          },
          shares: sharesOf(vs),
        };
      }
      const name = vs.scheduler ?? "unknown";
      const info = SCHEDULERS[name];
      const refusal = refusalOf(vs);
      // sh-port / mh-port: the source port is hashed with the address (ip_vs_sh.c, ip_vs_mh.c: IP_VS_SVC_F_SCHED_*_PORT)
      const byPort = (name === "sh" || name === "mh") && vs.flags.includes(`${name}-port`);
      const hashing = name === "sh" ? "source hashing" : "Maglev hashing";
      // A persistent virtual server (kube-proxy: FlagPersistent for ClientIP affinity, next to FlagSourceHash for mh in
      // pkg/proxy/ipvs/proxier.go syncProxyRules) calls its scheduler only for a client without a persistence
      // template; every later connection of that client follows the template to the same real server
      // (net/netfilter/ipvs/ip_vs_core.c ip_vs_schedule → ip_vs_sched_persist: ip_vs_ct_in_get, then
      // sched->schedule only when none). So with persistence the source port only matters for the first connection.
      const described = byPort && vs.persistent
        ? `${hashing} of the client's address and source port (${name}-port), applied only to a client's first connection: the virtual server is persistent, so IPVS keeps every later connection of that client on the same real server while its persistence template lives (not spread per connection); over many clients, shares proportional to weight`
        : byPort
        ? `${hashing} of the client's address and source port (${name}-port): each new connection, not each client, lands on the real server the hash picks, so one client's connections spread; over many, shares proportional to weight`
        : info?.description ?? "scheduler not known to kubectl-netpath";
      const scheduler: NonNullable<EntryPointReport["balancing"]["scheduler"]> = {
        name,
        description: described + (refusal ? `; ${refusal}` : ""),
        deterministicShares: info?.shares === "equal" || info?.shares === "weight",
      };
      if (info?.shares === "hash") {
        scheduler.shareDependsOn = name === "dh"
          ? "the destination's hash"
          : !byPort
          ? "the client's address"
          : vs.persistent
          ? "the client's address and its first connection's source port"
          : "the client's address and source port";
      }
      if (vs.persistent) scheduler.persistentSeconds = vs.persistent.timeoutSeconds;
      return { method: "ipvs", scheduler, shares: sharesOf(vs) };
    },
    at(ip) {
      return table.virtualServers.filter((vs) => vs.address === ip && vs.port !== undefined).map((vs) => ({ port: vs.port!, proto: vs.protocol.toLowerCase(), line: vs.line }));
    },
    dispatch(ip, port, proto) {
      const vs = index.get(key(proto, ip, port));
      if (!vs) return undefined;
      const shares = sharesOf(vs);
      const known = shares.every((s) => s.share !== null);
      const live = shares.filter((s) => (s.weight ?? 1) > 0);
      if (live.length === 0) return [];
      const caveat = refusalOf(vs);
      return live.map((s) => ({ dnatTo: s.endpoint, probability: known ? s.share! : 1 / live.length, fixed: known, ...(caveat ? { caveat } : {}) }));
    },
  };
}
