/**
 * The kernel as the oracle for kube-proxy's masquerade and load-balancing verdicts: load a ruleset into a network
 * namespace that plays the node, send real TCP SYNs / UDP datagrams through it, and read the verdict back from
 * conntrack. Tests compare the pure analysis (src/service) with what netfilter really does.
 *
 * Topology (all addresses live only inside the namespaces created here; nothing leaves them):
 *
 * ```
 *   client ns                      node ns (the rules)                       endpoints ns
 *   eth0: <packet.src>/32  ──veth── cli0 (no address, proxy_arp)
 *   default via 169.254.1.1 onlink  eth0: node addresses (192.168.0.2/24) ──veth── eth0: gateway 192.168.0.1/24
 *                                   default via 192.168.0.1                       (nothing listens: SYNs go unanswered)
 *                                   <packet.src>/32 dev cli0
 * ```
 *
 * - Pod and external clients send from the client namespace, so the packet enters the node's PREROUTING and FORWARD
 *   chains; a node-local (host-network) client sends from the node namespace itself, so OUTPUT sees it.
 * - Every destination (endpoint/pod IPs, external IPs, unmatched ClusterIPs) is routed through the node's eth0, so
 *   POSTROUTING runs and MASQUERADE picks the node's primary address on that link (the first of `nodeAddresses`).
 * - Reading the verdict: conntrack's reply tuple. Its source is the DNAT target; SNAT happened iff its destination
 *   differs from the original source. No confirmed conntrack entry means a filter rule dropped or rejected the packet.
 *
 * Needs root, iproute2, iptables, conntrack (and nfacct for master-era dumps); see scripts/ci-setup.sh. Test helper
 * (node:child_process); the packet sender runs under Node (`process.execPath`, or `node` on PATH under Deno).
 * @module
 */
import process from "node:process";
import {
  createNetns,
  findTool,
  installKubeProxyJumps,
  type IptablesBackend,
  loadIptables,
  type Netns,
} from "./netns.ts";

/**
 * Who sends the packet, as the masquerade analysis names clients:
 * - `pod-local`: a pod on this node (source in the cluster CIDR), enters PREROUTING from a pod interface;
 * - `pod-remote`: a pod on another node, arriving routed through this node (PREROUTING);
 * - `external`: a client outside the cluster (NodePort, LoadBalancer, externalIP traffic), PREROUTING;
 * - `hairpin`: an endpoint pod reaching its own Service (source = the endpoint IP), PREROUTING; when chosen, the
 *   DNATed packet goes back out the interface it came from;
 * - `node-local`: a host-network process on the node; the packet starts in OUTPUT. Its `src` must be a node address.
 */
export type ClientKind = "pod-local" | "pod-remote" | "external" | "hairpin" | "node-local";

/** The ruleset the node namespace holds. */
export interface OracleRules {
  /** An iptables-restore buffer, or several applied in order (partial restores, TestSyncProxyRulesRepeated). */
  text: string | readonly string[];
  backend: IptablesBackend;
  /**
   * Add the jumps from builtin chains kube-proxy installs outside its buffer (netns.ts installKubeProxyJumps).
   * Idempotent, so node-format dumps that already have them are fine. @default true
   */
  jumps?: boolean;
  /** `ipset restore` input loaded before the rules (IPVS-mode rules match KUBE-* sets). */
  ipsets?: string;
}

/** One packet (or `samples` packets of the same shape, each from a new source port). IPv4 only. */
export interface OraclePacket {
  client: ClientKind;
  /** Source IPv4 address, e.g. `"10.0.0.5"`. For `node-local` it must be one of the node addresses or 127.0.0.1. */
  src: string;
  /** Destination IPv4 address: ClusterIP, node IP (NodePort), LoadBalancer IP, externalIP. */
  dst: string;
  /** Destination port (the ServicePort's port, or the NodePort). */
  dport: number;
  proto: "tcp" | "udp";
  /** How many packets to send, each a new connection (new source port), to sample the probability cascade. @default 1 */
  samples?: number;
}

/** Node addressing; defaults follow the kube-proxy v1.27 test conventions (CONVENTIONS.md: eth0 192.168.0.2/24). */
export interface OracleTopology {
  /** Addresses (CIDR) on the node's eth0; the first one is what MASQUERADE picks. @default ["192.168.0.2/24"] */
  nodeAddresses?: readonly string[];
  /** The gateway on eth0 (held by the endpoints namespace); must be inside the first node subnet. @default "192.168.0.1" */
  gateway?: string;
  /**
   * sysctl net.ipv4.conf.all.route_localnet=1, which kube-proxy sets in iptables mode when localhost NodePorts are
   * enabled (the default since v1.26), so `127.0.0.1:<nodePort>` can be DNATed off the node. @default true
   */
  routeLocalnet?: boolean;
  /**
   * Milliseconds the sender keeps its sockets open after sending (conntrack entries are confirmed synchronously in
   * the packet path, so this only needs to cover the sockets' connect() calls). @default 50
   */
  waitMs?: number;
}

/** Addressing of the kube-proxy v1.27 unit tests (node IP 192.168.0.2 on eth0). */
export const TOPOLOGY_V127: OracleTopology = { nodeAddresses: ["192.168.0.2/24"], gateway: "192.168.0.1" };

/** Addressing of the kube-proxy master (v1.3x) unit tests: eth0 192.168.0.2/24, 192.168.1.2/24, 192.168.99.11/24. */
export const TOPOLOGY_MASTER: OracleTopology = {
  nodeAddresses: ["192.168.0.2/24", "192.168.1.2/24", "192.168.99.11/24"],
  gateway: "192.168.0.1",
};

/** What netfilter did with one packet, read from its conntrack entry. */
export interface KernelVerdict {
  /** DNAT target `"ip:port"` (conntrack reply source), or undefined when the destination was not rewritten. */
  dnatTo?: string;
  /** True iff the reply tuple's destination differs from the original source (MASQUERADE/SNAT took effect). */
  snat: boolean;
  /** The address the source was rewritten to (conntrack reply destination), when `snat`. */
  snatTo?: string;
  /** True when no conntrack entry was confirmed: a filter rule (DROP or REJECT) discarded the packet. */
  dropped: boolean;
  /** True when dropped and the node answered with ICMP destination-unreachable (REJECT, not DROP). */
  rejected: boolean;
  /** The raw `conntrack -L` line, or "" when dropped. */
  conntrack: string;
}

/** Result of {@link KernelOracle.trace}: the first packet's verdict plus tallies over all samples. */
export interface KernelTrace extends KernelVerdict {
  /** Packets sent. */
  samples: number;
  /** Per outcome: the DNAT target `"ip:port"`, `"no-dnat"` (forwarded unchanged) or `"dropped"`. */
  counts: Record<string, number>;
  /** How many of the samples were SNATed. */
  snatCount: number;
  /** One verdict per sample (conntrack order; dropped ones last). */
  verdicts: KernelVerdict[];
}

/** A node namespace with rules loaded, plus its client and endpoints namespaces. */
export interface KernelOracle {
  /** The namespace holding the rules (e.g. to `readIptables` it, or run `conntrack -L` yourself). */
  readonly node: Netns;
  /**
   * Sends the packet(s) and reads the verdicts. conntrack is flushed first, so traces do not see each other;
   * `-m recent` affinity lists (sessionAffinity: ClientIP) are kept, as on a node.
   * @throws {OracleError} on an invalid packet (see messages there) or when packets never reached the node.
   */
  trace(packet: OraclePacket): Promise<KernelTrace>;
  /** Deletes the three namespaces. Idempotent. */
  close(): Promise<void>;
}

/** Invalid oracle input or a harness failure; the message names the offending value. */
export class OracleError extends Error {
  override name = "OracleError";
}

const GATEWAY_LINK_LOCAL = "169.254.1.1";
const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const MAX_SAMPLES = 5000;

function addressOf(cidr: string): string {
  return cidr.split("/")[0]!;
}

async function ipBatch(ns: Netns, commands: readonly string[]): Promise<void> {
  await ns.run(["ip", "-batch", "-"], { input: commands.join("\n") + "\n" });
}

async function linkInfo(ns: Netns, dev: string): Promise<{ mac: string; rxPackets: number }> {
  const out = await ns.run(["ip", "-j", "-s", "link", "show", "dev", dev]);
  const info = (JSON.parse(out) as Array<{ address: string; stats64?: { rx?: { packets?: number } } }>)[0];
  if (info === undefined) throw new OracleError(`no link ${dev} in netns ${ns.name}`);
  return { mac: info.address, rxPackets: info.stats64?.rx?.packets ?? 0 };
}

/**
 * Builds the three namespaces, loads the rules into the node one and adds kube-proxy's builtin-chain jumps.
 * Call {@link KernelOracle.close} when done (the namespaces are also removed at process exit).
 * @throws {OracleError} `gateway <gw> is not inside the first node subnet <cidr>` / invalid addresses.
 * @throws {IptablesRestoreError} when the rules do not load (the message quotes iptables-restore's error line).
 * @example
 * ```ts
 * const oracle = await openKernelOracle({ text: dump, backend: "nft" }, TOPOLOGY_V127);
 * const t = await oracle.trace({ client: "pod-local", src: "10.0.0.5", dst: "172.30.0.41", dport: 80, proto: "tcp" });
 * // t.dnatTo === "10.180.0.1:80", t.snat === false
 * await oracle.close();
 * ```
 */
export async function openKernelOracle(rules: OracleRules, topo: OracleTopology = {}): Promise<KernelOracle> {
  const nodeAddresses = topo.nodeAddresses ?? ["192.168.0.2/24"];
  const gateway = topo.gateway ?? "192.168.0.1";
  const waitMs = topo.waitMs ?? 50;
  const first = nodeAddresses[0];
  if (first === undefined) throw new OracleError("nodeAddresses must name at least one address");
  for (const a of [...nodeAddresses.map(addressOf), gateway]) {
    if (!IPV4.test(a)) throw new OracleError(`not an IPv4 address: "${a}" (the kernel oracle is IPv4 only)`);
  }
  const prefix = Number(first.split("/")[1] ?? "32");
  if (!sameSubnet(addressOf(first), gateway, prefix)) {
    throw new OracleError(`gateway ${gateway} is not inside the first node subnet ${first}`);
  }
  const nodeIps = new Set([...nodeAddresses.map(addressOf), "127.0.0.1"]);

  const created: Netns[] = [];
  const close = async (): Promise<void> => {
    for (const ns of created.splice(0)) await ns.destroy();
  };
  try {
    const node = await createNetns("oracle-node");
    created.push(node);
    const client = await createNetns("oracle-client");
    created.push(client);
    const endpoints = await createNetns("oracle-ep");
    created.push(endpoints);

    await ipBatch(node, [
      `link add eth0 type veth peer name eth0 netns ${endpoints.name}`,
      `link add cli0 type veth peer name eth0 netns ${client.name}`,
      ...nodeAddresses.map((a) => `addr add ${a} dev eth0`),
      "link set eth0 up",
      "link set cli0 up",
      `route add default via ${gateway} dev eth0`,
    ]);
    await ipBatch(endpoints, [`addr add ${gateway}/${prefix} dev eth0`, "link set eth0 up"]);
    await ipBatch(client, ["link set eth0 up"]);
    // The client must not answer what comes back to it: a hairpin SYN answered with RST makes conntrack delete the
    // unassured entry at once (nf_conntrack_proto_tcp: "only reply is a RST"). Drop new inbound TCP and all UDP;
    // ICMP errors (REJECT's port-unreachable) still reach the sender.
    await loadIptables(
      client,
      "*filter\n-A INPUT -p tcp -m tcp --tcp-flags SYN,ACK SYN -j DROP\n-A INPUT -p udp -j DROP\nCOMMIT\n",
      { backend: "nft", family: 4 },
    );
    await node.run([
      "sysctl",
      "-qw",
      "net.ipv4.ip_forward=1",
      "net.ipv4.conf.all.rp_filter=0",
      "net.ipv4.conf.default.rp_filter=0",
      "net.ipv4.conf.eth0.rp_filter=0",
      "net.ipv4.conf.cli0.rp_filter=0",
      "net.ipv4.conf.cli0.proxy_arp=1",
      "net.ipv4.neigh.cli0.proxy_delay=0",
      `net.ipv4.conf.all.route_localnet=${topo.routeLocalnet ?? true ? 1 : 0}`,
    ]);
    // Static neighbours: a burst of SYNs must not wait on ARP (the unresolved queue holds few packets).
    const cliMac = (await linkInfo(node, "cli0")).mac;
    const epMac = (await linkInfo(endpoints, "eth0")).mac;
    const clientMac = (await linkInfo(client, "eth0")).mac;
    await ipBatch(node, [`neigh replace ${gateway} lladdr ${epMac} dev eth0 nud permanent`]);

    if (rules.ipsets) await node.run(["ipset", "restore"], { input: rules.ipsets });
    const texts = typeof rules.text === "string" ? [rules.text] : rules.text;
    for (const text of texts) await loadIptables(node, text, { backend: rules.backend, family: 4 });
    if (rules.jumps ?? true) await installKubeProxyJumps(node, rules.backend, 4);

    const trace = async (packet: OraclePacket): Promise<KernelTrace> => {
      const samples = validatePacket(packet, nodeIps, gateway);
      const fromNode = packet.client === "node-local";
      if (fromNode && !nodeIps.has(packet.src)) {
        throw new OracleError(
          `node-local client src ${packet.src} is not a node address (${[...nodeIps].join(", ")})`,
        );
      }
      await node.run(["conntrack", "-F"]).catch(() => {/* empty table: conntrack -F exits 0 or 1 by version */});
      if (!fromNode) {
        await ipBatch(client, [
          "addr flush dev eth0",
          `addr add ${packet.src}/32 dev eth0`,
          `route replace default via ${GATEWAY_LINK_LOCAL} dev eth0 onlink`,
          // Removing the device's last address flushed its neighbours, the static one included: put it back.
          `neigh replace ${GATEWAY_LINK_LOCAL} lladdr ${cliMac} dev eth0 nud permanent`,
        ]);
        await ipBatch(node, [
          `route replace ${packet.src}/32 dev cli0`,
          `neigh replace ${packet.src} lladdr ${clientMac} dev cli0 nud permanent`,
        ]);
      }
      try {
        const rxBefore = (await linkInfo(node, "cli0")).rxPackets;
        const unreachBefore = await icmpOutDestUnreachs(node);
        const sent = await sendPackets(fromNode ? node : client, packet, samples, waitMs);
        const entries = parseConntrack(await node.run(["conntrack", "-L"]))
          .filter((e) =>
            e.proto === packet.proto && e.orig.src === packet.src && e.orig.dst === packet.dst &&
            e.orig.dport === String(packet.dport)
          );
        const rxDelta = (await linkInfo(node, "cli0")).rxPackets - rxBefore;
        if (!fromNode && entries.length < samples && rxDelta < samples) {
          throw new OracleError(
            `only ${rxDelta} of ${samples} packets from ${packet.src} reached the node namespace (sender: ${
              JSON.stringify(sent)
            })`,
          );
        }
        // REJECT answers with ICMP port-unreachable from the node; count those rather than trusting the sender's
        // socket errors (an ICMP error that races the connect() syscall only sets a soft error on the socket).
        const rejected = (await icmpOutDestUnreachs(node)) - unreachBefore;
        // A node-local packet to a local address is confirmed in conntrack on its way out (POSTROUTING) before it
        // loops back through lo into INPUT: a REJECT there leaves its entry behind, and only the ICMP error tells.
        // (A DROP in INPUT of such a packet is not seen by this oracle.)
        return tally(fromNode && rejected > 0 ? entries.slice(Math.min(rejected, entries.length)) : entries, samples, rejected);
      } finally {
        if (!fromNode) {
          await ipBatch(node, [`route del ${packet.src}/32 dev cli0`, `neigh del ${packet.src} dev cli0`]);
        }
      }
    };
    return { node, trace, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/**
 * One-shot: builds a {@link KernelOracle}, traces `packet` (with `packet.samples` connections), and tears it down.
 * @throws {OracleError} / {@link IptablesRestoreError} as {@link openKernelOracle} and {@link KernelOracle.trace}.
 */
export async function traceInKernel(
  rules: OracleRules,
  packet: OraclePacket,
  topo?: OracleTopology,
): Promise<KernelTrace> {
  const oracle = await openKernelOracle(rules, topo);
  try {
    return await oracle.trace(packet);
  } finally {
    await oracle.close();
  }
}

function sameSubnet(a: string, b: string, prefix: number): boolean {
  const toInt = (ip: string): number => ip.split(".").reduce((acc, o) => acc * 256 + Number(o), 0);
  const block = 2 ** (32 - prefix);
  return Math.floor(toInt(a) / block) === Math.floor(toInt(b) / block);
}

/** @returns the sample count. */
function validatePacket(packet: OraclePacket, nodeIps: Set<string>, gateway: string): number {
  for (const [field, value] of [["src", packet.src], ["dst", packet.dst]] as const) {
    if (!IPV4.test(value)) {
      throw new OracleError(`packet.${field} "${value}" is not an IPv4 address (the kernel oracle is IPv4 only)`);
    }
  }
  // Port 0 is allowed: the v1.20 test dump matches `--dport 0`, and Linux sends a SYN to port 0.
  if (!Number.isInteger(packet.dport) || packet.dport < 0 || packet.dport > 65535) {
    throw new OracleError(`packet.dport ${packet.dport} is not a port in 0-65535`);
  }
  if (packet.proto !== "tcp" && packet.proto !== "udp") {
    throw new OracleError(`packet.proto "${String(packet.proto)}" is not tcp or udp`);
  }
  const samples = packet.samples ?? 1;
  if (!Number.isInteger(samples) || samples < 1 || samples > MAX_SAMPLES) {
    throw new OracleError(`packet.samples ${samples} is not an integer in 1-${MAX_SAMPLES}`);
  }
  if (packet.client !== "node-local" && (nodeIps.has(packet.src) || packet.src === gateway)) {
    throw new OracleError(
      `${packet.client} client src ${packet.src} is an address of the node or its gateway; use client "node-local"`,
    );
  }
  return samples;
}

/** The node's `Icmp: OutDestUnreachs` counter (/proc/net/snmp is per network namespace). */
async function icmpOutDestUnreachs(ns: Netns): Promise<number> {
  const lines = (await ns.run(["cat", "/proc/net/snmp"])).split("\n").filter((l) => l.startsWith("Icmp: "));
  const names = (lines[0] ?? "").split(/\s+/);
  const values = (lines[1] ?? "").split(/\s+/);
  const i = names.indexOf("OutDestUnreachs");
  if (i < 0 || values[i] === undefined) throw new OracleError(`no Icmp OutDestUnreachs in /proc/net/snmp of ${ns.name}`);
  return Number(values[i]);
}

/** What the sender saw (diagnostics only): sockets refused (ICMP unreachable / RST / EPERM), other error codes. */
interface SendReport {
  refused: number;
  errors: Record<string, number>;
}

// Runs under `node -e` inside the namespace. argv: proto dst port src samples waitMs.
const SENDER = `
const [proto, dst, portS, src, nS, waitS] = process.argv.slice(-6);
const port = Number(portS), n = Number(nS), wait = Number(waitS);
const errors = {}; let refused = 0;
const note = (e) => {
  const c = (e && e.code) || String(e);
  if (c === "ECONNREFUSED" || c === "EHOSTUNREACH" || c === "ENETUNREACH" || c === "EPERM") refused++;
  else errors[c] = (errors[c] || 0) + 1;
};
if (proto === "tcp") {
  const net = require("node:net");
  for (let i = 0; i < n; i++) {
    const s = net.connect({ host: dst, port, localAddress: src });
    s.on("error", note);
    s.on("connect", () => s.destroy());
  }
} else {
  const dgram = require("node:dgram");
  for (let i = 0; i < n; i++) {
    const s = dgram.createSocket("udp4");
    s.on("error", note);
    s.bind({ address: src, port: 0 }, () => s.send("x", port, dst, (e) => { if (e) note(e); }));
  }
}
setTimeout(() => { process.stdout.write(JSON.stringify({ refused, errors })); process.exit(0); }, wait);
`;

function nodeBinary(): string {
  const isDeno = "Deno" in globalThis;
  const bin = isDeno ? findTool("node") : process.execPath;
  if (bin === undefined) throw new OracleError("the packet sender needs Node.js (node not found on PATH)");
  return bin;
}

async function sendPackets(ns: Netns, p: OraclePacket, samples: number, waitMs: number): Promise<SendReport> {
  const out = await ns.run([nodeBinary(), "-e", SENDER, p.proto, p.dst, String(p.dport), p.src, String(samples), String(waitMs)], {
    timeoutMs: waitMs + 30_000,
  });
  try {
    return JSON.parse(out) as SendReport;
  } catch {
    throw new OracleError(`packet sender printed no report: ${JSON.stringify(out.slice(0, 200))}`);
  }
}

/** A 5-tuple side of a conntrack entry. */
export interface ConntrackTuple {
  src: string;
  dst: string;
  sport: string;
  dport: string;
}

/** One `conntrack -L` line, parsed. */
export interface ConntrackEntry {
  /** Layer-4 protocol name as printed (`tcp`, `udp`, `icmp`, …). */
  proto: string;
  orig: ConntrackTuple;
  reply: ConntrackTuple;
  raw: string;
}

/**
 * Parses `conntrack -L` output (conntrack-tools 1.4 default format): the first src/dst/sport/dport group is the
 * original tuple, the second the reply tuple. Lines without two full tuples (e.g. icmp, the summary) are skipped.
 */
export function parseConntrack(text: string): ConntrackEntry[] {
  const entries: ConntrackEntry[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("conntrack v")) continue;
    const proto = line.split(/\s+/)[0]!;
    const tuples: Array<Partial<ConntrackTuple>> = [{}, {}];
    let idx = 0;
    for (const tok of line.split(/\s+/)) {
      const m = /^(src|dst|sport|dport)=(.*)$/.exec(tok);
      if (m === null) continue;
      const key = m[1] as keyof ConntrackTuple;
      if (tuples[idx]![key] !== undefined) idx += 1;
      if (idx > 1) break;
      tuples[idx]![key] = m[2]!;
    }
    const [o, r] = tuples as [Partial<ConntrackTuple>, Partial<ConntrackTuple>];
    if ([o.src, o.dst, o.sport, o.dport, r.src, r.dst, r.sport, r.dport].some((v) => v === undefined)) continue;
    entries.push({ proto, orig: o as ConntrackTuple, reply: r as ConntrackTuple, raw: line });
  }
  return entries;
}

/** The verdict one conntrack entry shows. */
export function verdictOf(e: ConntrackEntry): KernelVerdict {
  const dnat = e.reply.src !== e.orig.dst || e.reply.sport !== e.orig.dport;
  const snat = e.reply.dst !== e.orig.src;
  return {
    ...(dnat ? { dnatTo: `${e.reply.src}:${e.reply.sport}` } : {}),
    snat,
    ...(snat ? { snatTo: e.reply.dst } : {}),
    dropped: false,
    rejected: false,
    conntrack: e.raw,
  };
}

function tally(entries: ConntrackEntry[], samples: number, rejected: number): KernelTrace {
  const verdicts = entries.slice(0, samples).map(verdictOf);
  const droppedCount = samples - verdicts.length;
  for (let i = 0; i < droppedCount; i++) {
    verdicts.push({ snat: false, dropped: true, rejected: i < rejected, conntrack: "" });
  }
  const counts: Record<string, number> = {};
  for (const v of verdicts) {
    const key = v.dropped ? "dropped" : v.dnatTo ?? "no-dnat";
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return {
    ...verdicts[0]!,
    samples,
    counts,
    snatCount: verdicts.filter((v) => v.snat).length,
    verdicts,
  };
}

/** Tools the oracle needs besides netns.ts's base set: gate suites with `requireNetns(ORACLE_TOOLS)`. */
export const ORACLE_TOOLS: readonly string[] = ["conntrack", "sysctl"];
