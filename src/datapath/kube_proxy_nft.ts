/**
 * The kube-proxy nftables layout, decoded from a parsed ruleset: tables `ip kube-proxy` / `ip6 kube-proxy` as written
 * by kube-proxy's nftables mode (kubernetes/kubernetes pkg/proxy/nftables/proxier.go, v1.29 alpha – v1.33 GA and
 * later; the fixtures are the proxier's own unit-test expectations at 81810de6 and the v1.33+ layout at b0f823e6).
 *
 * Layout, as proxier.go writes it:
 * - dispatch: chain `services` (jumped to from `nat-prerouting` / `nat-output`) does
 *   `ip daddr . meta l4proto . th dport vmap @service-ips` (ClusterIPs → `goto service-…` or `local-…`; externalIPs and
 *   LoadBalancer IPs → `goto external-…`) and, for NodePorts, `ip daddr @nodeport-ips meta l4proto . th dport vmap
 *   @service-nodeports` (or `fib daddr type local ip daddr != 127.0.0.0/8 …` when nodePortAddresses is unset);
 * - filter side: `no-endpoint-services` / `no-endpoint-nodeports` (`drop` for externalTrafficPolicy Local without local
 *   endpoints, `goto reject-chain` for no endpoints at all), `firewall-ips` (LoadBalancerSourceRanges → `firewall-…`),
 *   `cluster-ips` (+ `cluster-ips-check`);
 * - per ServicePort (`service-HASH-ns/name/proto/port` for Cluster policy, `local-…` for Local policy, `external-…`,
 *   `firewall-…`): the ClusterIP masquerade rule (`ip daddr VIP [tcp dport P] ip saddr != CIDR jump
 *   mark-for-masquerade`), session affinity (`ip saddr @affinity-… goto endpoint-…`), and the load balancing
 *   `numgen random mod N vmap { 0 : goto endpoint-…, … }` whose shares are exact (k of N values → k/N);
 * - per endpoint (`endpoint-HASH-ns/name/proto/port__IP/PORT`): hairpin masquerade (`ip saddr IP jump
 *   mark-for-masquerade`), affinity refresh (`update @affinity-… { ip saddr }`), `meta l4proto tcp dnat to IP:PORT`;
 * - masquerade: `mark-for-masquerade` (`mark set mark or 0x4000`) and `masquerading` (return if unmarked, clear the
 *   bit, `masquerade fully-random`);
 * - stale chains: service/endpoint chains kube-proxy flushed and deletes a second later (they exist, empty).
 *
 * Everything decoded keeps its evidence (table, chain, handle, line, rule or element text). Rules that do not fit the
 * layout are listed per chain (`otherRules`) and in `anomalies`, never dropped.
 *
 * Decoded on demand (a node with 10,000 Services has 60,000 chains and a `svc/NAME` question needs about ten): every
 * part of {@link KubeProxyNft} is decoded when first read, a per-Service chain on its own (`policyChain`,
 * `chainAnomalies`), and `overview()` gives the table-wide facts reading only the maps, the fixed chains and the rules
 * that show the local-traffic detector. The result is the same as decoding everything at once.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import {
  chainEvidence,
  elementEvidence,
  type NftChain,
  type NftElement,
  type NftEvidence,
  type NftRule,
  type NftRuleset,
  type NftSet,
  type NftStatement,
  type NftTable,
  type NftValue,
  type NftVerdict,
  lazyRuleEvidence,
  ruleEvidence,
} from "./nft_model.ts";
import { masqueradeRuleFromJson } from "./nft_json_masquerade.ts";
import { masqueradeRuleFromText } from "./nft_text_masquerade.ts";
import { compareCollated, sortCollated } from "../model/order.ts";

/** The chain kube-proxy jumps to to request masquerade (sets the mark bit). */
export const MARK_FOR_MASQUERADE_CHAIN = "mark-for-masquerade";
/** The nat postrouting helper chain that masquerades marked packets. */
export const MASQUERADING_CHAIN = "masquerading";
/** Helper chain `no-endpoint-*` entries goto to reject. */
export const REJECT_CHAIN = "reject-chain";
/** The table kube-proxy owns in each IP family. */
export const KUBE_PROXY_TABLE = "kube-proxy";

/** An exact fraction `num/den`, reduced (`den` > 0). */
export interface Fraction {
  num: number;
  den: number;
}

/** Kinds of per-service / per-endpoint chains, by name prefix (proxier.go `servicePort…ChainNamePrefix`). */
export type KubeProxyChainKind = "service" | "local" | "external" | "firewall" | "endpoint";

/** A decoded per-service or per-endpoint chain name. */
export interface KubeProxyChainName {
  kind: KubeProxyChainKind;
  /** First 8 characters of base32(sha256(base)). */
  hash: string;
  /** `ns/name/proto/portName` (endpoint chains: `…__IP/PORT`), without the hash. */
  base: string;
  namespace?: string;
  name?: string;
  /** Lower-case protocol: `tcp`, `udp`, `sctp`. */
  protocol?: string;
  /** ServicePort name ("" for an unnamed port). */
  portName?: string;
  /** kube-proxy's ServicePortName string, used in element comments: `ns/name:port` (or `ns/name` when unnamed). */
  servicePortName?: string;
  /** Endpoint chains: the endpoint IP from the name (IPv6 colons restored). */
  endpointIP?: string;
  /** Endpoint chains: the endpoint port from the name. */
  endpointPort?: number;
  /** true when kube-proxy truncated the name (`...` at the end): the parts above may be missing. */
  truncated: boolean;
}

/** How kube-proxy tells pod traffic from the rest (`--detect-local-mode`), as seen in the rules. */
export type LocalTrafficMatch =
  /** ClusterCIDR or NodeCIDR: `ip saddr [!=] 10.0.0.0/8`. */
  | { kind: "cidr"; cidr: string }
  /** BridgeInterface: `iifname [!=] "cni0"`. */
  | { kind: "interface"; name: string }
  /** InterfaceNamePrefix: `iifname [!=] "veth*"`. */
  | { kind: "interface-prefix"; prefix: string };

/** The local-traffic detector deduced from the rules. */
export interface LocalTrafficDetector {
  /**
   * `cidr` / `interface` / `interface-prefix` as in {@link LocalTrafficMatch}; `none` when service chains exist but no
   * rule tests the source (no-op detector); `unknown` when there is nothing to tell from (no service chains).
   */
  kind: LocalTrafficMatch["kind"] | "none" | "unknown";
  /** The CIDR, interface name or prefix. */
  value?: string;
  /** Rules that show it (ClusterIP masquerade rules and pod short-circuit rules). */
  evidence: NftEvidence[];
}

/** Which of kube-proxy's maps an entry belongs to. */
export type KubeProxyMapName =
  | "service-ips"
  | "service-nodeports"
  | "firewall-ips"
  | "no-endpoint-services"
  | "no-endpoint-nodeports";

/** One element of a kube-proxy dispatch map: `172.30.0.41 . tcp . 80 : goto service-…`, `tcp . 3001 : drop`. */
export interface DispatchEntry {
  map: KubeProxyMapName;
  /** Destination IP (absent for NodePort maps). */
  ip?: string;
  protocol: string;
  port: number;
  verdict: NftVerdict;
  /**
   * What the verdict does: `service`/`local`/`external`/`firewall` = goto that kind of per-service chain, `reject` =
   * goto reject-chain, `drop`, or `other`.
   */
  action: KubeProxyChainKind | "reject" | "drop" | "other";
  /** Target chain of goto/jump. */
  target?: string;
  /** The element comment kube-proxy writes on no-endpoint entries: `ns/name:port`. */
  comment?: string;
  evidence: NftEvidence;
}

/** `ip daddr VIP [tcp dport P] [ip saddr != CIDR | iifname != IF] jump mark-for-masquerade` in a service chain. */
export interface ClusterIPMasqueradeRule {
  daddr?: string;
  protocol?: string;
  dport?: number;
  /** The source condition: masquerade traffic NOT matching it. Undefined = masquerade all (masqueradeAll). */
  notLocal?: LocalTrafficMatch;
  evidence: NftEvidence;
}

/** `ip saddr @affinity-… goto endpoint-…` (ClientIP session affinity). */
export interface AffinityRule {
  set: string;
  endpointChain: string;
  /** The set's timeout (sessionAffinityConfig.clientIP.timeoutSeconds). */
  timeoutSeconds?: number;
  evidence: NftEvidence;
}

/** The endpoint a share of new connections goes to. */
export interface EndpointShare {
  endpointChain: string;
  /** Exact share of new connections (without affinity): values of the numgen that map here / N. */
  share: Fraction;
  /** `share` as a number. */
  probability: number;
  /** The numgen values mapped here. */
  indexes: number[];
  /** The DNAT destination of the endpoint chain (undefined if the chain is missing, flushed or has no dnat). */
  dnatTo?: DnatTarget;
}

/** `numgen random mod N vmap { … }`. */
export interface LoadBalancingRule {
  mod: number;
  offset: number;
  /** Share of numgen values with no entry: such packets fall through to the next rule. */
  unmatched: Fraction;
  evidence: NftEvidence;
}

/** A `service-…` (Cluster traffic policy) or `local-…` (Local traffic policy) chain. */
export interface PolicyChain {
  chain: string;
  kind: "service" | "local";
  /** The chain exists but has no rules (flushed by kube-proxy, awaiting deletion). */
  flushed: boolean;
  masquerade: ClusterIPMasqueradeRule[];
  affinity: AffinityRule[];
  loadBalancing?: LoadBalancingRule;
  /** Endpoints reached through the numgen vmap, in vmap order. */
  endpoints: EndpointShare[];
  otherRules: NftEvidence[];
  evidence: NftEvidence;
}

/** An `external-…` chain: what NodePort / externalIP / LoadBalancer traffic goes through. */
export interface ExternalChain {
  chain: string;
  flushed: boolean;
  /** Unconditional `jump mark-for-masquerade` (externalTrafficPolicy Cluster: all external traffic masqueraded). */
  masquerade?: NftEvidence;
  /** `ip saddr 10.0.0.0/8 goto service-…` "short-circuit pod traffic" (eTP Local). */
  podShortCircuit?: { local: LocalTrafficMatch; target: string; evidence: NftEvidence };
  /** `fib saddr type local jump mark-for-masquerade` "masquerade local traffic" (eTP Local). */
  localMasquerade?: NftEvidence;
  /** `fib saddr type local goto service-…` "short-circuit local traffic" (eTP Local). */
  localShortCircuit?: { target: string; evidence: NftEvidence };
  /** The final unconditional `goto service-…` / `goto local-…`; absent for eTP Local without local endpoints. */
  target?: { chain: string; evidence: NftEvidence };
  /** Local when the chain short-circuits pod/node traffic or ends in a `local-` chain; Cluster otherwise. */
  externalTrafficPolicy: "Cluster" | "Local";
  otherRules: NftEvidence[];
  evidence: NftEvidence;
}

/** A `firewall-…` chain: `ip saddr != { ranges } drop` (loadBalancerSourceRanges). */
export interface FirewallChain {
  chain: string;
  flushed: boolean;
  /** Allowed sources (loadBalancerSourceRanges, plus LB IPs when a range contains the node IP). */
  allowedSources: string[];
  drop?: NftEvidence;
  otherRules: NftEvidence[];
  evidence: NftEvidence;
}

/** The DNAT of an endpoint chain. */
export interface DnatTarget {
  ip: string;
  port?: number;
  /** `10.180.0.1:80`, `[fd00:10::5]:8080`. */
  text: string;
  /** The `meta l4proto` it is restricted to. */
  protocol?: string;
  evidence: NftEvidence;
}

/** An `endpoint-…` chain. */
export interface EndpointChain {
  chain: string;
  name: KubeProxyChainName;
  flushed: boolean;
  /** `ip saddr EP jump mark-for-masquerade`: an endpoint reaching itself through the Service is masqueraded. */
  hairpin?: { saddr: string; evidence: NftEvidence };
  /** `update @affinity-… { ip saddr }`. */
  affinityUpdate?: { set: string; evidence: NftEvidence };
  dnat?: DnatTarget;
  otherRules: NftEvidence[];
  evidence: NftEvidence;
}

/** An `affinity-…` set: clients with session affinity to one endpoint. */
export interface AffinitySet {
  name: string;
  /** `endpoint-` + the same suffix. */
  endpointChain: string;
  timeoutSeconds?: number;
  flags: string[];
  /** Client IPs currently remembered, with seconds left when nft printed them. */
  clients: { ip: string; expiresSeconds?: number }[];
  evidence: NftEvidence;
}

/** Everything kube-proxy programs for one ServicePort. */
export interface ServicePortNft {
  /** kube-proxy's ServicePortName: `ns/name:port` (`ns/name` for an unnamed port). */
  servicePortName: string;
  namespace?: string;
  name?: string;
  portName?: string;
  protocol?: string;
  /** The chain-name hash (absent for a port known only from no-endpoint entries). */
  hash?: string;
  /** Service port number, from the dispatch entries. */
  port?: number;
  /** ClusterIPs: `service-ips` entries to the service/local chain, or no-endpoint entries of an IP in `cluster-ips`. */
  clusterIPs: string[];
  /** externalIPs and LoadBalancer ingress IPs: entries to the external chain, or other no-endpoint entries. */
  externalAddresses: string[];
  nodePorts: number[];
  clusterChain?: PolicyChain;
  localChain?: PolicyChain;
  externalChain?: ExternalChain;
  firewallChain?: FirewallChain;
  /** Every map entry leading to this ServicePort's chains or carrying its comment. */
  dispatch: DispatchEntry[];
}

/** The `services` chain's NodePort rule. */
export interface NodePortDispatch {
  /** `nodeport-ips`: `ip daddr @nodeport-ips …`; `fib-local`: `fib daddr type local …` (nodePortAddresses unset). */
  via: "nodeport-ips" | "fib-local";
  /** `ip daddr != 127.0.0.0/8` / `ip6 daddr != ::1` present (localhost NodePorts not supported). */
  excludesLocalhost: boolean;
  evidence: NftEvidence;
}

/** A finding about the ruleset that does not fit kube-proxy's layout. */
export interface KubeProxyNftAnomaly {
  message: string;
  evidence: NftEvidence[];
}

/**
 * What {@link KubeProxyNft.overview} tells about a whole table without decoding every per-Service chain: the
 * table-wide anomalies (the dispatch maps' elements, the fixed chains, and rules that disagree on the local-traffic
 * detector), the local-traffic detector and `--masquerade-all`.
 */
export interface KubeProxyNftOverview {
  /** The same as {@link KubeProxyNft.localDetector}. */
  localDetector: LocalTrafficDetector;
  /** The same as {@link KubeProxyNft.masqueradeAll}. */
  masqueradeAll: boolean;
  /**
   * The anomalies of {@link KubeProxyNft.anomalies} that are not about one chain of a ServicePort or endpoint: map
   * elements (shape, missing target chain), the fixed chains, the detector. Those of one chain:
   * {@link KubeProxyNft.chainAnomalies}.
   */
  anomalies: KubeProxyNftAnomaly[];
}

/**
 * The decoded kube-proxy table of one IP family.
 *
 * Decoded on demand: each field is computed the first time it is read (and kept), and a per-Service question reads
 * only what it needs: {@link KubeProxyNft.policyChain} decodes one `service-`/`local-` chain (and its endpoint
 * chains), {@link KubeProxyNft.overview} the table-wide facts. Reading `servicePorts`, `endpointChains`,
 * `localDetector` or `anomalies` decodes every chain of the table (100,000+ on a node with 10,000 Services).
 */
export interface KubeProxyNft {
  family: "ip" | "ip6";
  /** The parsed table, for tracing packets rule by rule. */
  table: NftTable;
  clusterIPs: { ip: string; evidence: NftEvidence }[];
  /** Undefined when the `nodeport-ips` set does not exist (nodePortAddresses unset: every local IP). */
  nodePortIPs?: { ip: string; evidence: NftEvidence }[];
  serviceIPs: DispatchEntry[];
  serviceNodePorts: DispatchEntry[];
  firewallIPs: DispatchEntry[];
  noEndpointServices: DispatchEntry[];
  noEndpointNodePorts: DispatchEntry[];
  dispatch: {
    /** `services`: `ip daddr . meta l4proto . th dport vmap @service-ips`. */
    serviceIPs?: NftEvidence;
    nodePorts?: NodePortDispatch;
    /** `firewall-check`: `… vmap @firewall-ips`. */
    firewall?: NftEvidence;
    /** `service-endpoints-check`: `… vmap @no-endpoint-services`. */
    serviceEndpointsCheck?: NftEvidence;
    /** `nodeport-endpoints-check`: `… vmap @no-endpoint-nodeports`. */
    nodePortEndpointsCheck?: NftEvidence;
    /** `cluster-ips-check`: reject unknown ports of ClusterIPs. */
    rejectUnknownClusterIPPorts?: NftEvidence;
    /** `cluster-ips-check`: drop traffic to unallocated IPs of the service CIDRs. */
    dropUnallocatedClusterIPs?: { cidrs: string[]; evidence: NftEvidence };
  };
  masquerade: {
    /** The mark bit `mark-for-masquerade` sets (0x4000 by default, --iptables-masquerade-bit 14). */
    mark?: number;
    markRule?: NftEvidence;
    /**
     * What leaves unmarked packets alone: `mark and 0x4000 == 0 return`, or the masquerade rule itself when it is
     * written as one rule conditioned on `mark and 0x4000 != 0`.
     */
    skipUnmarked?: NftEvidence;
    /** `mark set mark xor 0x4000` (a rule of its own, or part of the one-rule form). */
    clearMark?: NftEvidence;
    rule?: { fullyRandom: boolean; flags: string[]; evidence: NftEvidence };
  };
  localDetector: LocalTrafficDetector;
  /** ClusterIP masquerade rules without a source condition (--masquerade-all). */
  masqueradeAll: boolean;
  servicePorts: ServicePortNft[];
  endpointChains: Map<string, EndpointChain>;
  affinitySets: AffinitySet[];
  /** Flushed service/endpoint chains (exist, no rules): kube-proxy deletes them after a delay. */
  staleChains: { chain: string; kind?: KubeProxyChainKind; evidence: NftEvidence }[];
  /**
   * Everything that does not fit the layout, in this order: map elements, fixed chains, endpoint chains, ServicePort
   * chains (each in listing order), the local-traffic detector.
   */
  anomalies: KubeProxyNftAnomaly[];
  /**
   * One `service-…` or `local-…` chain, decoded on first use (with the endpoint chains its numgen rule points to):
   * the same object as the `clusterChain` / `localChain` of its ServicePort in `servicePorts`.
   * @param chain the chain name.
   * @returns the decoded chain; undefined when the table has no such chain or the name is not a service/local one.
   */
  policyChain(chain: string): PolicyChain | undefined;
  /**
   * One `external-…` chain, decoded on first use: the same object as the `externalChain` of its ServicePort in
   * `servicePorts` (its externalTrafficPolicy Local short-circuit rules, pkg/proxy/nftables/proxier.go syncProxyRules).
   * @param chain the chain name, e.g. `external-42NFTM6N-ns2/svc2/tcp/p80`.
   * @returns the decoded chain; undefined when the table has no such chain or the name is not an external one.
   * @throws {DumpParseError} when a rule of the chain cannot be read.
   */
  externalChain(chain: string): ExternalChain | undefined;
  /**
   * The anomalies found in one per-ServicePort or endpoint chain (decoding it on first use); [] for other chains.
   * @param chain the chain name, e.g. `service-ULMVA6XW-ns1/svc1/tcp/p80`.
   * @returns the chain's entries of `anomalies`, in the same order.
   */
  chainAnomalies(chain: string): KubeProxyNftAnomaly[];
  /**
   * Table-wide facts, decoding only the maps, the fixed chains and the rules that show the local-traffic detector
   * (ClusterIP masquerade rules, pod short-circuits): what a per-node summary needs on a table of any size.
   * @returns the detector, `--masquerade-all` and the table-wide anomalies.
   */
  overview(): KubeProxyNftOverview;
}

/** Thrown by {@link decodeKubeProxyTable} for a table that is not kube-proxy's. */
export class KubeProxyNftError extends Error {
  override name = "KubeProxyNftError";
}

// ---------------------------------------------------------------------------------------------------------------

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return Math.abs(a);
}

/**
 * Builds a reduced fraction.
 * @param num numerator (≥ 0).
 * @param den denominator (> 0).
 * @returns `{ num, den }` reduced; `0/1` for zero.
 */
export function fraction(num: number, den: number): Fraction {
  if (num === 0) return { num: 0, den: 1 };
  const g = gcd(num, den);
  return { num: num / g, den: den / g };
}

const PREFIXES: [string, KubeProxyChainKind][] = [
  ["service-", "service"],
  ["local-", "local"],
  ["external-", "external"],
  ["firewall-", "firewall"],
  ["endpoint-", "endpoint"],
];

/**
 * Decodes a per-service / per-endpoint chain name (proxier.go servicePortChainNameBase /
 * servicePortEndpointChainNameBase: `PREFIX` + `HASH8-ns/name/proto/portName[__IP/PORT]`, IPv6 `:` written as `.`).
 * @param chain a chain name, e.g. `endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80`.
 * @returns the parts, or undefined for a name that is not one of kube-proxy's per-service chains (no `/`).
 */
export function parseKubeProxyChainName(chain: string): KubeProxyChainName | undefined {
  if (!chain.includes("/")) return undefined;
  const p = PREFIXES.find(([prefix]) => chain.startsWith(prefix));
  if (!p) return undefined;
  const rest = chain.slice(p[0].length);
  const m = /^([A-Z2-7]{8})-(.+)$/.exec(rest);
  if (!m) return undefined;
  const base = m[2]!;
  const truncated = base.endsWith("...");
  const out: KubeProxyChainName = { kind: p[1], hash: m[1]!, base, truncated };
  const [svcPart, epPart] = base.split("__");
  const parts = svcPart!.split("/");
  if (parts.length >= 4 && !(truncated && epPart === undefined)) {
    out.namespace = parts[0]!;
    out.name = parts[1]!;
    out.protocol = parts[2]!;
    out.portName = parts.slice(3).join("/");
    out.servicePortName = servicePortName(out.namespace, out.name, out.portName);
  }
  if (p[1] === "endpoint" && epPart !== undefined && !truncated) {
    const slash = epPart.lastIndexOf("/");
    if (slash > 0) {
      const ip = epPart.slice(0, slash);
      out.endpointIP = /^\d{1,3}(\.\d{1,3}){3}$/.test(ip) ? ip : ip.replace(/\./g, ":");
      const port = Number(epPart.slice(slash + 1));
      if (Number.isInteger(port)) out.endpointPort = port;
    }
  }
  return out;
}

function servicePortName(ns: string, name: string, port: string): string {
  return port === "" ? `${ns}/${name}` : `${ns}/${name}:${port}`;
}

/** `ns/name:port` → parts; undefined when it is not shaped so. */
function parseServicePortName(s: string): { namespace: string; name: string; portName: string } | undefined {
  const m = /^([^/:]+)\/([^/:]+)(?::([^/:]*))?$/.exec(s);
  if (!m) return undefined;
  return { namespace: m[1]!, name: m[2]!, portName: m[3] ?? "" };
}

const matches = (r: NftRule) => r.statements.filter((s) => s.kind === "match");

function lastVerdict(r: NftRule): NftVerdict | undefined {
  const last = r.statements[r.statements.length - 1];
  return last?.kind === "verdict" ? last.verdict : undefined;
}

function isJumpToMarkMasq(r: NftRule): boolean {
  const v = lastVerdict(r);
  return v?.kind === "jump" && v.target === MARK_FOR_MASQUERADE_CHAIN;
}

/** Statements other than counters (kube-proxy writes none; `nft` may show them when a user added some). */
function effective(r: NftRule): NftStatement[] {
  return r.statements.filter((s) => s.kind !== "counter");
}

/** The source-condition of a local-traffic match statement (`ip saddr 10.0.0.0/8`, `iifname "veth*"`). */
function localMatchOf(st: Extract<NftStatement, { kind: "match" }>): LocalTrafficMatch | undefined {
  if ((st.selector === "ip saddr" || st.selector === "ip6 saddr") && st.value.kind === "prefix") {
    return { kind: "cidr", cidr: st.value.text };
  }
  // `iif "cni0"`: kube-proxy v1.29–v1.34's BridgeInterface detector (localdetector.go ifLocalNFT, by index; `iifname`
  // since kubernetes#134024)
  if ((st.selector === "iifname" || st.selector === "iif" || st.selector === "meta iif") && st.value.kind === "literal") {
    const v = st.value.value;
    return v.endsWith("*") ? { kind: "interface-prefix", prefix: v.slice(0, -1) } : { kind: "interface", name: v };
  }
  return undefined;
}

function localMatchText(m: LocalTrafficMatch): string {
  return m.kind === "cidr" ? m.cidr : m.kind === "interface" ? m.name : m.prefix;
}

function valueTexts(v: NftValue): string[] {
  return v.kind === "set" ? v.elements.map((e) => e.text) : [v.text];
}

/**
 * numgen vmap keys → the indexes they cover (integers, ranges `a-b`, anonymous sets).
 * @returns the indexes, or undefined when a key is not a number, range or set of them.
 */
export function indexesOf(v: NftValue): number[] | undefined {
  if (v.kind === "literal" && /^\d+$/.test(v.value)) return [Number(v.value)];
  if (v.kind === "range" && /^\d+$/.test(v.from) && /^\d+$/.test(v.to)) {
    const out: number[] = [];
    for (let i = Number(v.from); i <= Number(v.to); i++) out.push(i);
    return out;
  }
  if (v.kind === "set") {
    const all: number[] = [];
    for (const e of v.elements) {
      const x = indexesOf(e);
      if (!x) return undefined;
      all.push(...x);
    }
    return all;
  }
  return undefined;
}

function dnatText(ip: string, port: number | undefined): string {
  if (port === undefined) return ip;
  return ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * Decodes every kube-proxy table (`ip kube-proxy`, `ip6 kube-proxy`) of a ruleset.
 * @param ruleset a ruleset from parseNftJson / parseNftText.
 * @returns one decoded layout per kube-proxy table, IPv4 first; [] when the node has none (not in nftables mode).
 *   Each is decoded on demand (see {@link KubeProxyNft}).
 */
export function decodeKubeProxyNft(ruleset: NftRuleset): KubeProxyNft[] {
  return ruleset.tables
    .filter((t) => t.name === KUBE_PROXY_TABLE && (t.family === "ip" || t.family === "ip6"))
    .sort((a, b) => compareCollated(a.family, b.family))
    .map(decodeKubeProxyTable);
}

/**
 * Decodes one kube-proxy table into its maps, per-ServicePort chains with exact endpoint shares, endpoint chains,
 * affinity sets, masquerade setup, local-traffic detector, stale chains and anomalies, each on first use.
 *
 * @param table the `ip kube-proxy` or `ip6 kube-proxy` table.
 * @returns the decoded layout.
 * @throws {KubeProxyNftError} `not a kube-proxy table: inet filter` when the table is not `ip|ip6 kube-proxy`.
 */
export function decodeKubeProxyTable(table: NftTable): KubeProxyNft {
  if (table.name !== KUBE_PROXY_TABLE || (table.family !== "ip" && table.family !== "ip6")) {
    throw new KubeProxyNftError(`not a kube-proxy table: ${table.family} ${table.name}`);
  }
  return new LazyKubeProxyNft(table, table.family);
}

type Anomaly = (message: string, ...evidence: NftEvidence[]) => void;

/** What the chain decoders read besides the chain: the table, and the endpoint chains a numgen rule points to. */
interface DecodeContext {
  table: NftTable;
  endpointChain(name: string): EndpointChain | undefined;
}

/** A decoded per-ServicePort or endpoint chain, with the anomalies found in it. */
type DecodedChain =
  | { kind: "service" | "local"; value: PolicyChain; anomalies: KubeProxyNftAnomaly[] }
  | { kind: "external"; value: ExternalChain; anomalies: KubeProxyNftAnomaly[] }
  | { kind: "firewall"; value: FirewallChain; anomalies: KubeProxyNftAnomaly[] }
  | { kind: "endpoint"; value: EndpointChain; anomalies: KubeProxyNftAnomaly[] };

/** The dispatch maps' entries, and the anomalies of their elements. */
type MapsDecoded = { entries: Record<KubeProxyMapName, DispatchEntry[]>; anomalies: KubeProxyNftAnomaly[] };
/** The fixed chains' dispatch and masquerade setup, and their anomalies. */
type FixedDecoded = Pick<KubeProxyNft, "dispatch" | "masquerade"> & { anomalies: KubeProxyNftAnomaly[] };

/** kube-proxy's dispatch maps, in the order their entries and anomalies are listed; true: keyed by IP too. */
const MAPS: [KubeProxyMapName, boolean][] = [
  ["service-ips", true],
  ["service-nodeports", false],
  ["firewall-ips", true],
  ["no-endpoint-services", true],
  ["no-endpoint-nodeports", false],
];

/** {@link KubeProxyNft} whose parts are decoded the first time they are read. */
class LazyKubeProxyNft implements KubeProxyNft {
  readonly table: NftTable;
  readonly family: "ip" | "ip6";
  readonly #names = new Map<string, KubeProxyChainName | undefined>();
  readonly #chains = new Map<string, DecodedChain | undefined>();
  readonly #ctx: DecodeContext;
  #maps?: MapsDecoded;
  #mapAnomalies?: KubeProxyNftAnomaly[];
  #fixed?: FixedDecoded;
  #overview?: KubeProxyNftOverview;
  #ports?: ServicePortNft[];
  #endpointChains?: Map<string, EndpointChain>;
  #affinitySets?: AffinitySet[];
  #stale?: KubeProxyNft["staleChains"];
  #anomalies?: KubeProxyNftAnomaly[];
  #clusterIPs?: KubeProxyNft["clusterIPs"];
  #nodePortIPs?: { value: KubeProxyNft["nodePortIPs"] };

  constructor(table: NftTable, family: "ip" | "ip6") {
    this.table = table;
    this.family = family;
    this.#ctx = { table, endpointChain: (name) => this.#endpointChain(name) };
  }

  get clusterIPs(): KubeProxyNft["clusterIPs"] {
    return this.#clusterIPs ??= this.#addrSet("cluster-ips") ?? [];
  }

  get nodePortIPs(): KubeProxyNft["nodePortIPs"] {
    this.#nodePortIPs ??= { value: this.#addrSet("nodeport-ips") };
    return this.#nodePortIPs.value;
  }

  get serviceIPs(): DispatchEntry[] {
    return this.#mapsDecoded().entries["service-ips"];
  }

  get serviceNodePorts(): DispatchEntry[] {
    return this.#mapsDecoded().entries["service-nodeports"];
  }

  get firewallIPs(): DispatchEntry[] {
    return this.#mapsDecoded().entries["firewall-ips"];
  }

  get noEndpointServices(): DispatchEntry[] {
    return this.#mapsDecoded().entries["no-endpoint-services"];
  }

  get noEndpointNodePorts(): DispatchEntry[] {
    return this.#mapsDecoded().entries["no-endpoint-nodeports"];
  }

  get dispatch(): KubeProxyNft["dispatch"] {
    return this.#fixedDecoded().dispatch;
  }

  get masquerade(): KubeProxyNft["masquerade"] {
    return this.#fixedDecoded().masquerade;
  }

  get localDetector(): LocalTrafficDetector {
    return this.overview().localDetector;
  }

  get masqueradeAll(): boolean {
    return this.overview().masqueradeAll;
  }

  get affinitySets(): AffinitySet[] {
    if (this.#affinitySets) return this.#affinitySets;
    const out: AffinitySet[] = [];
    for (const s of this.table.sets.values()) {
      if (!s.name.startsWith("affinity-")) continue;
      const a: AffinitySet = {
        name: s.name,
        endpointChain: "endpoint-" + s.name.slice("affinity-".length),
        flags: s.flags,
        clients: s.elements.map((e) => {
          const c: { ip: string; expiresSeconds?: number } = { ip: e.key[0] ?? e.keyText };
          if (e.expires !== undefined) c.expiresSeconds = e.expires;
          return c;
        }),
        evidence: { family: s.family, table: s.table, set: s.name, line: s.line, text: `set ${s.name}` },
      };
      if (s.timeout !== undefined) a.timeoutSeconds = s.timeout;
      out.push(a);
    }
    return this.#affinitySets = out;
  }

  get staleChains(): KubeProxyNft["staleChains"] {
    if (this.#stale) return this.#stale;
    const out: KubeProxyNft["staleChains"] = [];
    const unnamed: NftChain[] = [];
    for (const c of this.table.chains.values()) {
      if (c.rules.length !== 0) continue;
      const name = this.#name(c.name);
      if (name) out.push({ chain: c.name, kind: name.kind, evidence: chainEvidence(c) });
      else if (c.name.includes("/")) unnamed.push(c);
    }
    for (const c of unnamed) out.push({ chain: c.name, evidence: chainEvidence(c) });
    return this.#stale = out;
  }

  get endpointChains(): Map<string, EndpointChain> {
    if (this.#endpointChains) return this.#endpointChains;
    const out = new Map<string, EndpointChain>();
    for (const c of this.table.chains.values()) {
      const ep = this.#endpointChain(c.name);
      if (ep) out.set(c.name, ep);
    }
    return this.#endpointChains = out;
  }

  get servicePorts(): ServicePortNft[] {
    if (this.#ports) return this.#ports;
    const ports = new Map<string, ServicePortNft>();
    const portFor = (key: string, n?: KubeProxyChainName): ServicePortNft => {
      let sp = ports.get(key);
      if (!sp) {
        sp = { servicePortName: key, clusterIPs: [], externalAddresses: [], nodePorts: [], dispatch: [] };
        const parsed = n?.namespace !== undefined ? n : parseServicePortName(key);
        if (parsed?.namespace !== undefined) {
          sp.namespace = parsed.namespace;
          sp.name = parsed.name;
          sp.portName = parsed.portName;
        }
        ports.set(key, sp);
      }
      if (n) {
        sp.hash ??= n.hash;
        if (n.protocol !== undefined) sp.protocol ??= n.protocol;
      }
      return sp;
    };
    const chainOwner = new Map<string, ServicePortNft>();
    for (const c of this.table.chains.values()) {
      const name = this.#name(c.name);
      if (!name || name.kind === "endpoint") continue;
      const sp = portFor(portKey(name), name);
      chainOwner.set(c.name, sp);
      const d = this.#chain(c.name)!;
      if (d.kind === "service") sp.clusterChain = d.value;
      else if (d.kind === "local") sp.localChain = d.value;
      else if (d.kind === "external") sp.externalChain = d.value;
      else if (d.kind === "firewall") sp.firewallChain = d.value;
    }

    // Attach map entries to ServicePorts.
    const clusterIPSet = new Set(this.clusterIPs.map((x) => x.ip));
    const m = this.#mapsDecoded().entries;
    for (const [map] of MAPS) {
      for (const d of m[map]) {
        let sp = d.target !== undefined ? chainOwner.get(d.target) : undefined;
        if (!sp && d.comment !== undefined) sp = portFor(d.comment);
        if (!sp) continue;
        sp.dispatch.push(d);
        sp.port ??= d.map === "service-nodeports" || d.map === "no-endpoint-nodeports" ? undefined : d.port;
        sp.protocol ??= d.protocol;
        if (d.map === "service-nodeports" || d.map === "no-endpoint-nodeports") {
          if (!sp.nodePorts.includes(d.port)) sp.nodePorts.push(d.port);
        } else if (d.ip !== undefined && d.map !== "firewall-ips") {
          const internal = d.action === "service" || d.action === "local" ||
            (d.map === "no-endpoint-services" && clusterIPSet.has(d.ip));
          const list = internal ? sp.clusterIPs : sp.externalAddresses;
          if (!list.includes(d.ip)) list.push(d.ip);
        }
      }
    }
    return this.#ports = sortCollated([...ports.values()], (p) => p.servicePortName);
  }

  get anomalies(): KubeProxyNftAnomaly[] {
    if (this.#anomalies) return this.#anomalies;
    const out = [...this.#mapsDecoded().anomalies, ...this.#fixedDecoded().anomalies];
    const perService: KubeProxyNftAnomaly[] = [];
    for (const c of this.table.chains.values()) {
      const d = this.#chain(c.name);
      if (!d) continue;
      (d.kind === "endpoint" ? out : perService).push(...d.anomalies);
    }
    out.push(...perService, ...this.#detectorAnomalies());
    return this.#anomalies = out;
  }

  policyChain(chain: string): PolicyChain | undefined {
    const d = this.#chain(chain);
    return d?.kind === "service" || d?.kind === "local" ? d.value : undefined;
  }

  externalChain(chain: string): ExternalChain | undefined {
    const d = this.#chain(chain);
    return d?.kind === "external" ? d.value : undefined;
  }

  chainAnomalies(chain: string): KubeProxyNftAnomaly[] {
    return this.#chain(chain)?.anomalies ?? [];
  }

  overview(): KubeProxyNftOverview {
    if (this.#overview) return this.#overview;
    // The chains of each ServicePort, as servicePorts would hold them (the last chain of each kind wins), in
    // servicePortName order: the detector and its evidence come out exactly as from the fully decoded servicePorts.
    const slots = new Map<string, { service?: NftChain; local?: NftChain; external?: NftChain }>();
    for (const c of this.table.chains.values()) {
      if (!isServicePortChainName(c.name)) continue; // most chains are endpoint chains: not parsed here
      const name = this.#chains.has(c.name) ? this.#name(c.name) : parseKubeProxyChainName(c.name);
      if (!name || (name.kind !== "service" && name.kind !== "local" && name.kind !== "external")) continue;
      const key = portKey(name);
      let slot = slots.get(key);
      if (!slot) slots.set(key, slot = {});
      slot[name.kind] = c;
    }
    const keys = sortCollated([...slots.keys()], (k) => k);
    const seen: { m: LocalTrafficMatch; ev: NftEvidence }[] = [];
    const masqRules: ClusterIPMasqueradeRule[] = [];
    let policyChainsWithRules = 0;
    for (const key of keys) {
      const slot = slots.get(key)!;
      for (const c of [slot.service, slot.local]) {
        if (!c) continue;
        // A decoded chain has them already; otherwise only the rules that can be masquerade requests are decoded.
        const d = this.#chains.get(c.name);
        const masq = d?.kind === "service" || d?.kind === "local" ? d.value.masquerade : masqueradeRulesOf(c);
        masqRules.push(...masq);
        if (c.rules.length === 0) continue;
        policyChainsWithRules++;
        for (const m of masq) if (m.notLocal) seen.push({ m: m.notLocal, ev: m.evidence });
      }
      if (slot.external) {
        const d = this.#chains.get(slot.external.name);
        const sc = d?.kind === "external" ? d.value.podShortCircuit : podShortCircuitOf(slot.external);
        if (sc) seen.push({ m: sc.local, ev: sc.evidence });
      }
    }
    const detector = detectLocal(seen, policyChainsWithRules);
    this.#detectorAnomaly = detector.anomaly;
    const ov: KubeProxyNftOverview = {
      localDetector: detector.detector,
      masqueradeAll: masqRules.length > 0 && masqRules.every((m) => m.notLocal === undefined),
      anomalies: [
        ...this.#mapShapeAnomalies(),
        ...this.#fixedDecoded().anomalies,
        ...(detector.anomaly ? [detector.anomaly] : []),
      ],
    };
    return this.#overview = ov;
  }

  #detectorAnomaly?: KubeProxyNftAnomaly;

  #detectorAnomalies(): KubeProxyNftAnomaly[] {
    if (!this.#overview) this.overview();
    return this.#detectorAnomaly ? [this.#detectorAnomaly] : [];
  }

  #name(chain: string): KubeProxyChainName | undefined {
    if (this.#names.has(chain)) return this.#names.get(chain);
    const n = parseKubeProxyChainName(chain);
    this.#names.set(chain, n);
    return n;
  }

  #chain(chain: string): DecodedChain | undefined {
    if (this.#chains.has(chain)) return this.#chains.get(chain);
    const c = this.table.chains.get(chain);
    const name = c ? this.#name(chain) : undefined;
    let d: DecodedChain | undefined;
    if (c && name) {
      const anomalies: KubeProxyNftAnomaly[] = [];
      const anomaly: Anomaly = (message, ...evidence) => anomalies.push({ message, evidence });
      switch (name.kind) {
        case "endpoint":
          d = { kind: "endpoint", value: decodeEndpointChain(c, name, anomaly), anomalies };
          break;
        case "service":
        case "local":
          d = { kind: name.kind, value: decodePolicyChain(c, name.kind, this.#ctx, anomaly), anomalies };
          break;
        case "external":
          d = { kind: "external", value: decodeExternalChain(c, anomaly), anomalies };
          break;
        case "firewall":
          d = { kind: "firewall", value: decodeFirewallChain(c, anomaly), anomalies };
          break;
      }
    }
    this.#chains.set(chain, d);
    return d;
  }

  #endpointChain(chain: string): EndpointChain | undefined {
    const d = this.#chain(chain);
    return d?.kind === "endpoint" ? d.value : undefined;
  }

  #addrSet(name: string): { ip: string; evidence: NftEvidence }[] | undefined {
    const s = this.table.sets.get(name);
    return s?.elements.map((e) => ({ ip: e.key[0] ?? e.keyText, evidence: elementEvidence(s, e) }));
  }

  /** The dispatch maps' entries, and their anomalies (a shape kube-proxy does not write, a missing target chain). */
  #mapsDecoded(): MapsDecoded {
    if (this.#maps) return this.#maps;
    const anomalies: KubeProxyNftAnomaly[] = [];
    const entries = {} as Record<KubeProxyMapName, DispatchEntry[]>;
    for (const [name, withIP] of MAPS) {
      entries[name] = [];
      const s = this.table.sets.get(name);
      if (!s) continue;
      for (const e of s.elements) {
        const d = dispatchEntry(name, s, e, withIP, (target) => this.#name(target)?.kind);
        const bad = mapElementAnomaly(name, s, e, withIP, this.table);
        if (bad) anomalies.push(bad);
        if (d) entries[name].push(d);
      }
    }
    this.#mapAnomalies ??= anomalies;
    return this.#maps = { entries, anomalies };
  }

  /** The map anomalies alone: shape and target chain, without building the dispatch entries. */
  #mapShapeAnomalies(): KubeProxyNftAnomaly[] {
    if (this.#mapAnomalies) return this.#mapAnomalies;
    const out: KubeProxyNftAnomaly[] = [];
    for (const [name, withIP] of MAPS) {
      const s = this.table.sets.get(name);
      if (!s) continue;
      for (const e of s.elements) {
        const bad = mapElementAnomaly(name, s, e, withIP, this.table);
        if (bad) out.push(bad);
      }
    }
    return this.#mapAnomalies = out;
  }

  #fixedDecoded(): FixedDecoded {
    if (this.#fixed) return this.#fixed;
    const f: FixedDecoded = { dispatch: {}, masquerade: {}, anomalies: [] };
    decodeFixedChains(this.table, f, (message, ...evidence) => f.anomalies.push({ message, evidence }));
    return this.#fixed = f;
  }
}

/** Whether a chain name starts like a `service-`, `local-` or `external-` chain (a cheap test before parsing it). */
function isServicePortChainName(chain: string): boolean {
  switch (chain.charCodeAt(0)) {
    case 115: // s
      return chain.startsWith("service-");
    case 108: // l
      return chain.startsWith("local-");
    case 101: // e
      return chain.charCodeAt(1) === 120 /* x */ && chain.startsWith("external-");
  }
  return false;
}

/** The key of a chain's ServicePort in `servicePorts`: its ServicePortName, else hash and base. */
function portKey(name: KubeProxyChainName): string {
  return name.servicePortName ?? `${name.hash}-${name.base}`;
}

/** `ns/name/proto/port . PORT` key parts of a dispatch element, or undefined when it is not shaped so. */
function dispatchShape(e: NftElement, withIP: boolean): { protocol: string; port: number } | undefined {
  const n = withIP ? 3 : 2;
  if (e.key.length !== n || !e.verdict) return undefined;
  const port = Number(e.key[n - 1]);
  if (!Number.isInteger(port)) return undefined;
  return { protocol: e.key[n - 2]!, port };
}

/** The anomaly of one dispatch map element, if any (the same checks as the full decode, in the same order). */
function mapElementAnomaly(
  map: KubeProxyMapName,
  set: NftSet,
  e: NftElement,
  withIP: boolean,
  table: NftTable,
): KubeProxyNftAnomaly | undefined {
  if (!dispatchShape(e, withIP)) {
    return {
      message: `${map} element is not "${withIP ? "IP . " : ""}PROTO . PORT : VERDICT"`,
      evidence: [elementEvidence(set, e)],
    };
  }
  const v = e.verdict!;
  if ((v.kind === "goto" || v.kind === "jump") && v.target !== undefined && !table.chains.has(v.target)) {
    return { message: `${map} element points to missing chain ${v.target}`, evidence: [elementEvidence(set, e)] };
  }
  return undefined;
}

function dispatchEntry(
  map: KubeProxyMapName,
  set: NftSet,
  e: NftElement,
  withIP: boolean,
  kindOf: (chain: string) => KubeProxyChainKind | undefined,
): DispatchEntry | undefined {
  const shape = dispatchShape(e, withIP);
  if (!shape || !e.verdict) return undefined;
  const d: DispatchEntry = {
    map,
    protocol: shape.protocol,
    port: shape.port,
    verdict: e.verdict,
    action: "other",
    evidence: elementEvidence(set, e),
  };
  if (withIP) d.ip = e.key[0]!;
  if (e.comment !== undefined) d.comment = e.comment;
  const v = e.verdict;
  if (v.kind === "drop") d.action = "drop";
  if ((v.kind === "goto" || v.kind === "jump") && v.target !== undefined) {
    d.target = v.target;
    if (v.target === REJECT_CHAIN) d.action = "reject";
    else d.action = kindOf(v.target) ?? "other";
  }
  return d;
}

/** The fixed chains: services, *-check, mark-for-masquerade, masquerading. */
function decodeFixedChains(
  table: NftTable,
  out: Pick<KubeProxyNft, "dispatch" | "masquerade">,
  anomaly: Anomaly,
): void {
  const vmapRule = (chain: string, map: string): NftRule | undefined =>
    table.chains.get(chain)?.rules.find((r) => r.statements.some((s) => s.kind === "vmap" && s.map === map));
  const ev = (r: NftRule | undefined) => (r ? ruleEvidence(r) : undefined);
  const set = <K extends keyof KubeProxyNft["dispatch"]>(k: K, v: KubeProxyNft["dispatch"][K] | undefined) => {
    if (v !== undefined) out.dispatch[k] = v;
  };
  set("serviceIPs", ev(vmapRule("services", "service-ips")));
  set("firewall", ev(vmapRule("firewall-check", "firewall-ips")));
  set("serviceEndpointsCheck", ev(vmapRule("service-endpoints-check", "no-endpoint-services")));
  set("nodePortEndpointsCheck", ev(vmapRule("nodeport-endpoints-check", "no-endpoint-nodeports")));
  const npRule = vmapRule("services", "service-nodeports");
  if (npRule) {
    const ms = matches(npRule);
    const viaSet = ms.some((m) => m.value.kind === "set-ref" && m.value.name === "nodeport-ips");
    const viaFib = ms.some((m) => m.selector === "fib daddr type" && m.value.text === "local");
    const excludesLocalhost = ms.some((m) =>
      (m.selector === "ip daddr" || m.selector === "ip6 daddr") && m.op === "!=" &&
      (m.value.text === "127.0.0.0/8" || m.value.text === "::1")
    );
    out.dispatch.nodePorts = {
      via: viaSet ? "nodeport-ips" : "fib-local",
      excludesLocalhost,
      evidence: ruleEvidence(npRule),
    };
    if (!viaSet && !viaFib) {
      anomaly("NodePort dispatch rule tests neither @nodeport-ips nor fib daddr type local", ruleEvidence(npRule));
    }
  }
  for (const r of table.chains.get("cluster-ips-check")?.rules ?? []) {
    const st = effective(r);
    const m = st[0];
    const last = st[st.length - 1];
    if (m?.kind !== "match") continue;
    if (m.value.kind === "set-ref" && m.value.name === "cluster-ips" && last?.kind === "reject") {
      out.dispatch.rejectUnknownClusterIPPorts = ruleEvidence(r);
    } else if (last?.kind === "verdict" && last.verdict.kind === "drop") {
      out.dispatch.dropUnallocatedClusterIPs = { cidrs: valueTexts(m.value), evidence: ruleEvidence(r) };
    }
  }
  for (const r of table.chains.get(MARK_FOR_MASQUERADE_CHAIN)?.rules ?? []) {
    const m = r.statements.find((s) => s.kind === "mark");
    if (m?.kind === "mark" && m.op === "or") {
      out.masquerade.mark = m.value;
      out.masquerade.markRule = ruleEvidence(r);
    }
  }
  for (const r of table.chains.get(MASQUERADING_CHAIN)?.rules ?? []) {
    const st = effective(r);
    const masq = st.find((s) => s.kind === "masquerade");
    const mark = st.find((s) => s.kind === "mark");
    const v = lastVerdict(r);
    if (masq?.kind === "masquerade") {
      out.masquerade.rule = {
        fullyRandom: masq.flags.includes("fully-random"),
        flags: masq.flags,
        evidence: ruleEvidence(r),
      };
      // The one-rule form `mark and 0x4000 != 0 mark set mark xor 0x4000 masquerade fully-random`.
      if (mark?.kind === "mark" && mark.op === "xor") out.masquerade.clearMark = ruleEvidence(r);
      const cond = st.find((x) => x.kind === "match" && x.selector.startsWith("meta mark &") && x.op === "!=");
      if (cond) out.masquerade.skipUnmarked = ruleEvidence(r);
    } else if (mark?.kind === "mark" && mark.op === "xor") {
      out.masquerade.clearMark = ruleEvidence(r);
    } else if (v?.kind === "return") {
      out.masquerade.skipUnmarked = ruleEvidence(r);
    }
  }
  if (out.masquerade.mark === undefined && table.chains.has(MARK_FOR_MASQUERADE_CHAIN)) {
    anomaly(
      `${MARK_FOR_MASQUERADE_CHAIN} does not set a mark bit`,
      chainEvidence(table.chains.get(MARK_FOR_MASQUERADE_CHAIN)!),
    );
  }
}

function decodeEndpointChain(c: NftChain, name: KubeProxyChainName, anomaly: Anomaly): EndpointChain {
  const ep: EndpointChain = {
    chain: c.name,
    name,
    flushed: c.rules.length === 0,
    otherRules: [],
    evidence: chainEvidence(c),
  };
  for (const r of c.rules) {
    const st = effective(r);
    const ms = matches(r);
    const nat = st.find((s) => s.kind === "nat");
    const upd = st.find((s) => s.kind === "set-update");
    if (
      isJumpToMarkMasq(r) && ms.length === 1 && /^ip6? saddr$/.test(ms[0]!.selector) && ms[0]!.value.kind === "literal"
    ) {
      ep.hairpin = { saddr: ms[0]!.value.value, evidence: ruleEvidence(r) };
    } else if (upd?.kind === "set-update" && st.length === 1) {
      ep.affinityUpdate = { set: upd.set, evidence: ruleEvidence(r) };
    } else if (nat?.kind === "nat" && nat.nat === "dnat" && nat.addr !== undefined) {
      const d: DnatTarget = { ip: nat.addr, text: dnatText(nat.addr, nat.port), evidence: ruleEvidence(r) };
      if (nat.port !== undefined) d.port = nat.port;
      const proto = ms.find((m) => m.selector === "meta l4proto");
      if (proto) d.protocol = proto.value.text;
      ep.dnat = d;
    } else {
      ep.otherRules.push(ruleEvidence(r));
      anomaly(`unexpected rule in endpoint chain ${c.name}`, ruleEvidence(r));
    }
  }
  if (!ep.flushed && !ep.dnat) anomaly(`endpoint chain ${c.name} has no dnat rule`, chainEvidence(c));
  if (ep.hairpin && ep.dnat && ep.hairpin.saddr !== ep.dnat.ip) {
    anomaly(
      `hairpin source ${ep.hairpin.saddr} differs from the DNAT address ${ep.dnat.ip}`,
      ep.hairpin.evidence,
      ep.dnat.evidence,
    );
  }
  return ep;
}

function decodePolicyChain(
  c: NftChain,
  kind: "service" | "local",
  ctx: DecodeContext,
  anomaly: Anomaly,
): PolicyChain {
  const pc: PolicyChain = {
    chain: c.name,
    kind,
    flushed: c.rules.length === 0,
    masquerade: [],
    affinity: [],
    endpoints: [],
    otherRules: [],
    evidence: chainEvidence(c),
  };
  for (const r of c.rules) {
    const st = effective(r);
    const ms = matches(r);
    const vm = st.find((s) => s.kind === "vmap");
    const v = lastVerdict(r);
    if (isJumpToMarkMasq(r)) {
      const m = masqueradeRuleOf(r);
      if (m) {
        pc.masquerade.push(m);
        continue;
      }
    } else if (
      v?.kind === "goto" && v.target !== undefined && ms.length === 1 && /^ip6? saddr$/.test(ms[0]!.selector) &&
      ms[0]!.value.kind === "set-ref" && st.length === 2
    ) {
      const setName = ms[0]!.value.name;
      const a: AffinityRule = { set: setName, endpointChain: v.target, evidence: ruleEvidence(r) };
      const s = ctx.table.sets.get(setName);
      if (s?.timeout !== undefined) a.timeoutSeconds = s.timeout;
      if (!s) anomaly(`affinity set ${setName} does not exist`, ruleEvidence(r));
      pc.affinity.push(a);
      continue;
    } else if (vm?.kind === "vmap" && vm.numgen && vm.entries && st.length === 1) {
      if (pc.loadBalancing) anomaly(`more than one numgen rule in ${c.name}`, ruleEvidence(r));
      decodeNumgen(pc, vm.numgen.mod, vm.numgen.offset, vm.entries, r, ctx, anomaly);
      continue;
    }
    pc.otherRules.push(ruleEvidence(r));
    anomaly(`unexpected rule in ${kind} chain ${c.name}`, ruleEvidence(r));
  }
  if (!pc.flushed && !pc.loadBalancing) {
    anomaly(`${kind} chain ${c.name} has no numgen load-balancing rule`, chainEvidence(c));
  }
  return pc;
}

function decodeNumgen(
  pc: PolicyChain,
  mod: number,
  offset: number,
  entries: { key: NftValue; verdict: NftVerdict }[],
  r: NftRule,
  ctx: DecodeContext,
  anomaly: Anomaly,
): void {
  const ev = ruleEvidence(r);
  const covered = new Set<number>();
  const byTarget = new Map<string, number[]>();
  for (const e of entries) {
    const idx = indexesOf(e.key);
    const target = e.verdict.target;
    if (!idx || (e.verdict.kind !== "goto" && e.verdict.kind !== "jump") || target === undefined) {
      anomaly(`numgen entry "${e.key.text}" is not "N : goto endpoint-…"`, ev);
      continue;
    }
    const usable = idx.filter((i) => i >= offset && i < offset + mod && !covered.has(i));
    if (usable.length < idx.length) {
      anomaly(`numgen random mod ${mod} never yields ${e.key.text} for ${target}`, ev);
    }
    usable.forEach((i) => covered.add(i));
    const list = byTarget.get(target) ?? [];
    list.push(...usable);
    byTarget.set(target, list);
    if (!ctx.table.chains.has(target)) anomaly(`numgen entry points to missing chain ${target}`, ev);
  }
  const unmatched = mod - covered.size;
  pc.loadBalancing = { mod, offset, unmatched: fraction(unmatched, mod), evidence: ev };
  if (unmatched > 0) {
    anomaly(
      `numgen random mod ${mod} maps only ${covered.size} of ${mod} values: ${unmatched}/${mod} of new connections fall through`,
      ev,
    );
  }
  for (const [target, indexes] of byTarget) {
    const share = fraction(indexes.length, mod);
    const es: EndpointShare = { endpointChain: target, share, probability: share.num / share.den, indexes };
    const ep = ctx.endpointChain(target);
    if (ep?.dnat) es.dnatTo = ep.dnat;
    pc.endpoints.push(es);
  }
}

function decodeExternalChain(c: NftChain, anomaly: Anomaly): ExternalChain {
  const ex: ExternalChain = {
    chain: c.name,
    flushed: c.rules.length === 0,
    externalTrafficPolicy: "Cluster",
    otherRules: [],
    evidence: chainEvidence(c),
  };
  for (const r of c.rules) {
    const st = effective(r);
    const ms = matches(r);
    const v = lastVerdict(r);
    const ev = ruleEvidence(r);
    const fibLocal = ms.length === 1 && ms[0]!.selector === "fib saddr type" && ms[0]!.value.text === "local";
    let pod: ExternalChain["podShortCircuit"];
    if (st.length === 1 && isJumpToMarkMasq(r)) ex.masquerade = ev;
    else if (st.length === 1 && v?.kind === "goto" && v.target) ex.target = { chain: v.target, evidence: ev };
    else if (st.length === 2 && fibLocal && isJumpToMarkMasq(r)) ex.localMasquerade = ev;
    else if (st.length === 2 && fibLocal && v?.kind === "goto" && v.target) {
      ex.localShortCircuit = { target: v.target, evidence: ev };
    } else if ((pod = podShortCircuitRule(r)) !== undefined) {
      ex.podShortCircuit = pod;
    } else {
      ex.otherRules.push(ev);
      anomaly(`unexpected rule in external chain ${c.name}`, ev);
    }
  }
  const toLocal = ex.target !== undefined && parseKubeProxyChainName(ex.target.chain)?.kind === "local";
  if (ex.podShortCircuit || ex.localShortCircuit || ex.localMasquerade || toLocal) ex.externalTrafficPolicy = "Local";
  return ex;
}

function decodeFirewallChain(c: NftChain, anomaly: Anomaly): FirewallChain {
  const fw: FirewallChain = {
    chain: c.name,
    flushed: c.rules.length === 0,
    allowedSources: [],
    otherRules: [],
    evidence: chainEvidence(c),
  };
  for (const r of c.rules) {
    const ms = matches(r);
    const v = lastVerdict(r);
    if (ms.length === 1 && /^ip6? saddr$/.test(ms[0]!.selector) && ms[0]!.op === "!=" && v?.kind === "drop") {
      fw.allowedSources.push(...valueTexts(ms[0]!.value));
      fw.drop = ruleEvidence(r);
    } else {
      fw.otherRules.push(ruleEvidence(r));
      anomaly(`unexpected rule in firewall chain ${c.name}`, ruleEvidence(r));
    }
  }
  return fw;
}

/**
 * The ClusterIP masquerade rule `ip daddr VIP [tcp dport P] [ip saddr != CIDR | iifname != IF] jump
 * mark-for-masquerade` of a service/local chain, or undefined when the rule is not one (or has other matches).
 */
function masqueradeRuleOf(r: NftRule): ClusterIPMasqueradeRule | undefined {
  if (!isJumpToMarkMasq(r)) return undefined;
  const m: ClusterIPMasqueradeRule = { evidence: ruleEvidence(r) };
  for (const x of matches(r)) {
    if (/^ip6? daddr$/.test(x.selector) && x.op === "==" && x.value.kind === "literal") m.daddr = x.value.value;
    else if (/^(tcp|udp|sctp|th) dport$/.test(x.selector) && x.op === "==") {
      m.dport = Number(x.value.text);
      if (!x.selector.startsWith("th")) m.protocol = x.selector.split(" ")[0]!;
    } else if (x.op === "!=" && localMatchOf(x)) m.notLocal = localMatchOf(x)!;
    else return undefined;
  }
  return m;
}

/**
 * The masquerade rules {@link decodePolicyChain} finds in a chain, decoding only rules that may jump to mark: a rule
 * read in kube-proxy's exact form is recognised from its JSON text (`nft -j`, nft_json_masquerade.ts) or its line
 * (`nft list`, nft_text_masquerade.ts), its evidence text decoded only when read.
 */
function masqueradeRulesOf(c: NftChain): ClusterIPMasqueradeRule[] {
  const out: ClusterIPMasqueradeRule[] = [];
  for (const r of c.rules) {
    const expr = r.exprJson?.();
    const line = expr === undefined ? r.lineText?.() : undefined;
    const f = expr !== undefined ? masqueradeRuleFromJson(expr) : line !== undefined ? masqueradeRuleFromText(line) : undefined;
    if (f !== undefined) {
      const m: ClusterIPMasqueradeRule = { evidence: lazyRuleEvidence(r), daddr: f.daddr };
      if (f.dport !== undefined) m.dport = f.dport;
      if (f.protocol !== undefined) m.protocol = f.protocol;
      if (f.notLocal !== undefined) m.notLocal = f.notLocal;
      out.push(m);
      continue;
    }
    if (expr !== undefined ? !expr.includes(MARK_FOR_MASQUERADE_CHAIN) && !expr.includes("\\") : r.mayContain?.(MARK_FOR_MASQUERADE_CHAIN) === false) continue;
    const m = masqueradeRuleOf(r);
    if (m) out.push(m);
  }
  return out;
}

/** `ip saddr 10.0.0.0/8 goto service-…` (short-circuit pod traffic) in an external chain; undefined otherwise. */
function podShortCircuitRule(r: NftRule): ExternalChain["podShortCircuit"] {
  const st = effective(r);
  const ms = matches(r);
  const v = lastVerdict(r);
  const local = ms.length === 1 && ms[0]!.op === "==" ? localMatchOf(ms[0]!) : undefined;
  if (st.length === 2 && local && v?.kind === "goto" && v.target) {
    return { local, target: v.target, evidence: ruleEvidence(r) };
  }
  return undefined;
}

/** The `podShortCircuit` {@link decodeExternalChain} finds (the last one), decoding only rules that may be one. */
function podShortCircuitOf(c: NftChain): ExternalChain["podShortCircuit"] {
  let out: ExternalChain["podShortCircuit"];
  for (const r of c.rules) {
    if (r.mayContain?.("goto") === false) continue;
    if (r.mayContain && !r.mayContain("saddr") && !r.mayContain("iif")) continue;
    out = podShortCircuitRule(r) ?? out;
  }
  return out;
}

/**
 * The local-traffic detector most rules show (ties: the first seen), from the ClusterIP masquerade rules and pod
 * short-circuits in servicePorts order; an anomaly when rules disagree.
 */
function detectLocal(
  seen: { m: LocalTrafficMatch; ev: NftEvidence }[],
  policyChainsWithRules: number,
): { detector: LocalTrafficDetector; anomaly?: KubeProxyNftAnomaly } {
  if (seen.length === 0) {
    return { detector: { kind: policyChainsWithRules > 0 ? "none" : "unknown", evidence: [] } };
  }
  const key = (m: LocalTrafficMatch) => `${m.kind}:${localMatchText(m)}`;
  const keys = seen.map((s) => key(s.m)); // one per Service on a big node: made once
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  const best = Math.max(...counts.values());
  const at = keys.findIndex((k) => counts.get(k) === best);
  const first = seen[at]!.m;
  const firstKey = keys[at]!;
  const differing = seen.filter((_, i) => keys[i] !== firstKey);
  const detector: LocalTrafficDetector = {
    kind: first.kind,
    value: localMatchText(first),
    evidence: seen.filter((_, i) => keys[i] === firstKey).map((s) => s.ev),
  };
  if (differing.length === 0) return { detector };
  return {
    detector,
    anomaly: {
      message: `rules disagree on the local-traffic detector: ${[...counts.keys()].join(", ")}`,
      evidence: differing.map((d) => d.ev),
    },
  };
}
