/**
 * `svc/NAME`: how each node of the bundle really balances and masquerades the Service, per ServicePort and entry
 * point (ClusterIP, NodePort, LoadBalancer IP, externalIP), for each kind of client, with drift against the API.
 *
 * iptables mode is answered by tracing packets through the node's iptables-save (see iptables_trace.ts); IPVS mode
 * by the same trace (kube-proxy's IPVS mode still marks for masquerade in iptables, with ipsets) followed by the
 * IPVS virtual server's scheduler (see ipvs_balance.ts); nftables mode by the nftables analysis when present.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Bundle, NodeCapture } from "../bundle/bundle.ts";
import { DumpParseError } from "../datapath/errors.ts";
import { type IptablesDump, parseIptablesSave } from "../datapath/iptables_save.ts";
import type { Node } from "../model/k8s.ts";
import { verdictFromTrace } from "./client_verdict.ts";
import { cidrContains, isIPv6 } from "./ip.ts";
import { traceIptables, type TraceOptions, type TraceResult } from "./iptables_trace.ts";
import { configMapMode, detectProxyMode, type RuleModeSignals } from "./proxy_mode.ts";
import type { TracePacket } from "./rule_match.ts";
import { nodeZone, type ResolvedService, resolveService, usableEndpoints } from "./service_resolve.ts";
import type {
  ClientKind,
  DriftItem,
  EntryPointReport,
  Finding,
  NodeServiceReport,
  PacketAnswer,
  PortReport,
  ServicePortSummary,
  ServiceReport,
} from "./service_report.ts";
import { REPORT_API_VERSION } from "./service_report.ts";

/** A datapath backend able to answer for one node: built from the node's capture. */
export interface NodeDatapath {
  /** Rule-based mode signals. */
  signals: RuleModeSignals;
  /** The iptables dump of the node's family, when captured. */
  iptables?: IptablesDump;
  /** Options for the tracer (ipsets, IPVS dispatch). */
  traceOptions: TraceOptions;
  /** Shares and scheduler for IPVS virtual servers, when IPVS. */
  ipvs?: IpvsBalancer;
  /** The node's IPVS table could not be read (ipvsadm failed or was cut off). */
  ipvsUnavailable?: boolean;
  /**
   * A tracer for a datapath other than iptables (nftables mode). When set, it answers instead of the iptables
   * tracer: same packet in, same {@link TraceResult} out (outcomes with probabilities, evidence, caveats).
   */
  trace?: (packet: TracePacket, hook: "PREROUTING" | "OUTPUT") => TraceResult;
  /** The balancing method the tracer implements. @default "iptables-probability-cascade" */
  balancingMethod?: EntryPointReport["balancing"]["method"];
  /** Cluster CIDRs the datapath's own local-traffic detector uses, when it has one (nftables `ip saddr != CIDR`). */
  clusterCIDRs?: string[];
  /** Problems reading the node's sections. */
  problems: string[];
}

/** IPVS support plugged in by ipvs_balance.ts (kept as an interface so this module does not depend on it). */
export interface IpvsBalancer {
  /** The virtual server for `ip:port/proto`, its scheduler and real servers with shares. */
  lookup(ip: string, port: number, proto: string): EntryPointReport["balancing"] | undefined;
  /** Real servers as DNAT alternatives `{ dnatTo, probability }` for the tracer. */
  dispatch(ip: string, port: number, proto: string): { dnatTo: string; probability: number }[] | undefined;
}

/** Builds a node's datapath from its capture; replaceable so IPVS/nftables support can be layered in. */
export type DatapathBuilder = (node: NodeCapture, family: 4 | 6) => NodeDatapath;

/** A packet question: `--source IP --dest IP:PORT[/proto]`. */
export interface PacketQuestion {
  source: string;
  destination: string;
  port: number;
  protocol: "tcp" | "udp" | "sctp";
}

/** Options of {@link explainService}. */
export interface ExplainServiceOptions {
  /** Only these nodes (default: every node in the bundle). */
  nodes?: string[];
  /** Answer one packet question on each node. */
  packet?: PacketQuestion;
  /** Build the datapath of a node (default: iptables-save only; mod.ts wires IPVS and nftables). */
  datapath?: DatapathBuilder;
}

/**
 * The default datapath builder: parses the node's iptables-save (or ip6tables-save).
 * @throws never: parse errors become `problems`.
 */
export function iptablesDatapath(node: NodeCapture, family: 4 | 6): NodeDatapath {
  const dp: NodeDatapath = {
    signals: { iptablesServiceChains: 0, ipvsMatchSets: false, ipvsVirtualServers: 0, nftablesTable: false },
    traceOptions: {},
    problems: [],
  };
  const section = node.sections[family === 6 ? "ip6tables-save" : "iptables-save"];
  if (section) {
    if (section.truncated) {
      dp.problems.push(`the ${family === 6 ? "ip6tables-save" : "iptables-save"} output was cut off (stream ended early); not analysed`);
    } else if ((section.exitCode ?? 0) !== 0 && section.stdout.trim() === "") {
      dp.problems.push(`iptables-save failed (exit ${section.exitCode}): ${section.stderr?.trim() || "no output"}`);
    } else {
      const other = otherFormat(section.stdout);
      if (other) {
        dp.problems.push(`the ${family === 6 ? "ip6tables-save" : "iptables-save"} section holds ${other}, not iptables-save output: save it under its own section name (docs/bundle.md)`);
        return dp;
      }
      try {
        dp.iptables = parseIptablesSave(section.stdout);
        const nat = dp.iptables.tables.get("nat");
        if (nat) {
          for (const name of nat.chains.keys()) {
            if (name.startsWith("KUBE-SVC-") || name.startsWith("KUBE-SEP-") || name.startsWith("KUBE-SVL-")) dp.signals.iptablesServiceChains++;
          }
          const svcs = nat.chains.get("KUBE-SERVICES");
          if (svcs?.rawRules.some((r) => r.includes("KUBE-CLUSTER-IP"))) dp.signals.ipvsMatchSets = true;
        }
      } catch (e) {
        if (e instanceof DumpParseError) dp.problems.push(e.message);
        else throw e;
      }
    }
  }
  if (node.sections["nft-json"] || node.sections["nft-text"]) {
    const t = node.sections["nft-json"]?.stdout ?? node.sections["nft-text"]?.stdout ?? "";
    if (/"name":\s*"kube-proxy"|table ip6? kube-proxy/.test(t)) dp.signals.nftablesTable = true;
  }
  return dp;
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

function internalIP(node: Node | undefined, family: 4 | 6): string | undefined {
  const addrs = node?.status?.addresses ?? [];
  const pick = (type: string) => addrs.find((a) => a.type === type && isIPv6(a.address) === (family === 6))?.address;
  return pick("InternalIP") ?? pick("ExternalIP");
}

/** Picks the addresses that represent each kind of client on a node. */
interface Sources {
  clusterCIDRs: string[];
  podSameNode?: string;
  podOtherNode?: string;
  hostNetwork?: string;
  nodeIP?: string;
  external: string;
  externalDenied?: string;
  hairpin?: string;
  notes: string[];
}

/** Expands an IPv6 address into its 8 groups (numbers); undefined when malformed. */
function v6Groups(a: string): number[] | undefined {
  const [head, tail] = a.includes("::") ? a.split("::") : [a, undefined];
  const h = head ? head.split(":") : [];
  const t = tail !== undefined && tail !== "" ? tail.split(":") : [];
  const fill = tail !== undefined ? 8 - h.length - t.length : 0;
  const groups = [...h, ...Array(Math.max(fill, 0)).fill("0"), ...t].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

function hostIn(cidr: string, offset: number): string | undefined {
  const [base, lenS] = cidr.split("/");
  if (!base) return undefined;
  if (isIPv6(base)) {
    // Offsets here are small (< 2^16): add them to the last group of the prefix's first address.
    const g = v6Groups(base);
    if (!g || Number(lenS ?? 128) > 112) return undefined;
    g[7] = offset;
    return g.map((x) => x.toString(16)).join(":");
  }
  const len = Number(lenS ?? 32);
  const n = base.split(".").reduce((a, o) => (a << 8) + Number(o), 0) >>> 0;
  const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  const ip = ((n & mask) + offset) >>> 0;
  return [ip >>> 24, (ip >>> 16) & 255, (ip >>> 8) & 255, ip & 255].join(".");
}

function chooseSources(
  bundle: Bundle,
  resolved: ResolvedService,
  nodeName: string,
  family: 4 | 6,
  clusterCIDRs: string[],
): Sources {
  const objects = bundle.objects;
  const node = objects.nodes.find((n) => n.metadata.name === nodeName);
  const notes: string[] = [];
  const inCluster = (ip: string) => clusterCIDRs.some((c) => cidrContains(c, ip));
  const podIPs = objects.pods
    .filter((p) => !p.spec?.hostNetwork && p.status?.podIP && isIPv6(p.status.podIP) === (family === 6))
    .map((p) => ({ ip: p.status!.podIP!, node: p.spec?.nodeName }));
  const endpointIPs = new Set(resolved.endpoints.map((e) => e.address));
  const s: Sources = { clusterCIDRs, external: family === 6 ? "2001:db8:ffff::10" : "203.0.113.10", notes };
  // A pod on this node that is not an endpoint (so hairpin does not blur the verdict).
  s.podSameNode = podIPs.find((p) => p.node === nodeName && !endpointIPs.has(p.ip))?.ip ??
    (node?.spec?.podCIDR ? hostIn(node.spec.podCIDR, 200) : undefined) ??
    (clusterCIDRs[0] ? hostIn(clusterCIDRs[0], 200) : undefined);
  s.podOtherNode = podIPs.find((p) => p.node !== nodeName && p.node !== undefined && !endpointIPs.has(p.ip))?.ip ??
    objects.nodes.filter((n) => n.metadata.name !== nodeName && n.spec?.podCIDR).map((n) => hostIn(n.spec!.podCIDR!, 201))[0] ??
    (clusterCIDRs[0] ? hostIn(clusterCIDRs[0], 201 + 256) : undefined);
  s.nodeIP = internalIP(node, family);
  s.hostNetwork = s.nodeIP;
  if (!s.nodeIP) {
    s.nodeIP = family === 6 ? "2001:db8::2" : "192.0.2.2";
    s.hostNetwork = s.nodeIP;
    notes.push(`node ${nodeName} has no InternalIP in the bundle; ${s.nodeIP} stands for its address`);
  }
  if (s.podSameNode === undefined) {
    notes.push("the cluster CIDR is unknown (no detector rule, ConfigMap clusterCIDR or node podCIDR): pod clients are not traced");
  }
  const local = resolved.endpoints.find((e) => e.node === nodeName && isIPv6(e.address) === (family === 6));
  s.hairpin = local?.address;
  // External clients: outside the cluster CIDR, and outside/inside the LB source ranges.
  const ranges = resolved.summary.loadBalancerSourceRanges;
  if (ranges.length > 0) {
    const allowed = ranges.filter((r) => isIPv6(r.trim()) === (family === 6)).map((r) => r.trim());
    if (allowed.length > 0) {
      // An allowed client: a host of a source range that is neither the node nor a pod.
      const a = allowed.flatMap((r) => [2, 10, 100].map((k) => hostIn(r, k)))
        .find((ip) => ip !== undefined && ip !== s.nodeIP && !inCluster(ip));
      if (a) s.external = a;
      const candidates = family === 6 ? ["2001:db8:eeee::10"] : ["198.51.100.10", "203.0.113.130", "192.0.2.130"];
      s.externalDenied = candidates.find((c) => !ranges.some((r) => cidrContains(r, c)) && !inCluster(c));
    }
  } else if (inCluster(s.external)) {
    s.external = family === 6 ? "2001:db8:eeee::10" : "198.51.100.10";
  }
  return s;
}

/** Detects the cluster CIDR(s) the node's rules use for masquerade decisions, else from the bundle. */
function detectClusterCIDRs(bundle: Bundle, dump: IptablesDump | undefined, family: 4 | 6): { cidrs: string[]; source: string } {
  if (dump) {
    const nat = dump.tables.get("nat");
    const found = new Set<string>();
    // kube-proxy detect-local-mode=ClusterCIDR writes `! -s <clusterCIDR> … -j KUBE-MARK-MASQ` for ClusterIPs
    // (in KUBE-SVC-* since ~v1.21, in KUBE-SERVICES before) and `-s <clusterCIDR>` "pod traffic" in KUBE-EXT-*.
    const scan = (raw: readonly string[]) => {
      for (const r of raw) {
        const m = /! -s (\S+) .*-j KUBE-MARK-MASQ/.exec(r) ?? /"pod traffic for .*" -s (\S+) /.exec(r) ??
          /-s (\S+) -m comment --comment "pod traffic for /.exec(r);
        if (m && m[1]!.includes("/") && !m[1]!.endsWith("/32") && !m[1]!.endsWith("/128")) found.add(m[1]!);
        if (found.size > 0) break;
      }
    };
    if (nat) {
      const svcs = nat.chains.get("KUBE-SERVICES");
      const head = svcs?.rawRules.slice(0, 2000) ?? [];
      scan(head);
      // The detector rule is the first rule of KUBE-SVC/KUBE-SVL chains (v1.21+) or in KUBE-EXT "pod traffic" rules:
      // look at the first rule of up to 200 such chains (chains of Services without endpoints have none).
      // Those chains are found through the jumps of KUBE-SERVICES (a dump has tens of thousands of chains; walking
      // them all would cost more than the rest of the analysis), then, for chains no rule there jumps to, by name.
      const jumpedTo = head.map((r) => / -j (KUBE-\S+)/.exec(r)?.[1]).filter((t): t is string => t !== undefined);
      const named = function* (prefix: string): Generator<string> {
        for (const name of nat.chains.keys()) if (name.startsWith(prefix)) yield name;
      };
      for (const prefix of ["KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-"]) {
        if (found.size > 0) break;
        const jumped = jumpedTo.filter((n) => n.startsWith(prefix));
        let looked = 0;
        for (const name of jumped.length > 0 ? jumped : named(prefix)) {
          const ch = nat.chains.get(name);
          if (!ch || ch.ruleCount === 0) continue;
          scan(ch.rawRules.slice(0, 3));
          if (found.size > 0 || ++looked >= 200) break;
        }
      }
    }
    if (found.size > 0) return { cidrs: [...found], source: "the rules (local-traffic detector)" };
  }
  const fromCapture = (bundle.capture.clusterCIDRs ?? []).filter((c) => isIPv6(c) === (family === 6));
  if (fromCapture.length > 0) return { cidrs: fromCapture, source: "the bundle's capture info" };
  const cm = configMapMode(bundle.objects)?.clusterCIDR;
  if (cm) {
    const c = cm.split(",").filter((x) => isIPv6(x) === (family === 6));
    if (c.length > 0) return { cidrs: c, source: "the kube-proxy ConfigMap clusterCIDR" };
  }
  const podCIDRs = bundle.objects.nodes.flatMap((n) => n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []))
    .filter((c) => isIPv6(c) === (family === 6));
  if (podCIDRs.length > 0) return { cidrs: podCIDRs, source: "the nodes' podCIDRs" };
  return { cidrs: [], source: "nowhere" };
}

function packet(src: string, dst: string, port: number, proto: "tcp" | "udp" | "sctp", family: 4 | 6, srcLocal: boolean, dstLocal: boolean): TracePacket {
  return { family, src, dst, proto, dport: port, srcLocal, dstLocal, mark: 0, ctstate: new Set(["NEW"]) };
}

interface Client {
  kind: ClientKind;
  description: string;
  src: string;
  hook: "PREROUTING" | "OUTPUT";
}

function clientsFor(kind: EntryPointReport["kind"], s: Sources, node: string): Client[] {
  const out: Client[] = [];
  if (s.podSameNode) out.push({ kind: "pod-same-node", description: `pod on ${node} (${s.podSameNode})`, src: s.podSameNode, hook: "PREROUTING" });
  if (kind !== "ClusterIP" && s.podOtherNode) {
    out.push({ kind: "pod-other-node", description: `pod on another node (${s.podOtherNode}), arriving at ${node}`, src: s.podOtherNode, hook: "PREROUTING" });
  }
  if (s.hostNetwork) out.push({ kind: "host-network", description: `host-network pod or process on ${node} (${s.hostNetwork})`, src: s.hostNetwork, hook: "OUTPUT" });
  out.push({
    kind: "external",
    description: kind === "ClusterIP"
      ? `client outside the cluster CIDR routed to ${node} (${s.external})`
      : `client outside the cluster (${s.external})`,
    src: s.external,
    hook: "PREROUTING",
  });
  if (kind !== "ClusterIP" && s.externalDenied) {
    out.push({ kind: "external-denied", description: `client outside loadBalancerSourceRanges (${s.externalDenied})`, src: s.externalDenied, hook: "PREROUTING" });
  }
  if (s.hairpin) out.push({ kind: "hairpin", description: `endpoint ${s.hairpin} on ${node} reaching its own Service`, src: s.hairpin, hook: "PREROUTING" });
  return out;
}

function lower(p: string): "tcp" | "udp" | "sctp" {
  return p.toLowerCase() as "tcp" | "udp" | "sctp";
}

function entryPoints(svc: ResolvedService["summary"], sp: ServicePortSummary, family: 4 | 6, nodeIP: string): { kind: EntryPointReport["kind"]; ip: string; port: number; dstLocal: boolean }[] {
  const out: { kind: EntryPointReport["kind"]; ip: string; port: number; dstLocal: boolean }[] = [];
  const fam = (ip: string) => isIPv6(ip) === (family === 6);
  for (const ip of svc.clusterIPs.filter(fam)) out.push({ kind: "ClusterIP", ip, port: sp.port, dstLocal: false });
  if (sp.nodePort && (svc.type === "NodePort" || svc.type === "LoadBalancer")) {
    out.push({ kind: "NodePort", ip: nodeIP, port: sp.nodePort, dstLocal: true });
  }
  if (svc.type === "LoadBalancer") {
    for (const ip of svc.loadBalancerIngress.filter(fam)) out.push({ kind: "LoadBalancer", ip, port: sp.port, dstLocal: false });
  }
  for (const ip of svc.externalIPs.filter(fam)) out.push({ kind: "ExternalIP", ip, port: sp.port, dstLocal: ip === nodeIP });
  return out;
}

function fmtDest(ip: string, port: number, proto: string): string {
  return `${isIPv6(ip) ? `[${ip}]` : ip}:${port}/${proto.toLowerCase()}`;
}

/**
 * Explains how a Service is balanced and masqueraded on each node of a bundle.
 *
 * @param bundle the bundle (API objects and node captures).
 * @param namespace the Service's namespace.
 * @param name the Service's name.
 * @param options {@link ExplainServiceOptions}.
 * @returns the {@link ServiceReport}.
 * @throws {NotFoundError} when the Service is not in the bundle (naming the namespaces where one of that name is).
 */
export function explainService(bundle: Bundle, namespace: string, name: string, options: ExplainServiceOptions = {}): ServiceReport {
  const resolved = resolveService(bundle.objects, namespace, name);
  const svc = resolved.summary;
  const findings: Finding[] = [];
  const limits = [
    "conntrack state: connections that already exist keep the endpoint (and SNAT) they got when they started",
    "sysctls such as net.bridge.bridge-nf-call-iptables and the bridge's hairpin mode, which decide whether hairpin traffic reaches these rules",
  ];
  if (svc.sessionAffinity === "ClientIP") {
    limits.push(`session affinity: a client seen in the last ${svc.affinityTimeoutSeconds} s returns to its previous endpoint (the -m recent / affinity table is kernel state, not in a dump); shares are for new clients`);
  }
  const builder = options.datapath ?? iptablesDatapath;
  const families: (4 | 6)[] = [...new Set(svc.clusterIPs.map((ip) => (isIPv6(ip) ? 6 : 4) as 4 | 6))];
  if (families.length === 0) families.push(4);
  if (svc.type === "ExternalName") {
    findings.push({ severity: "info", code: "ExternalName", message: "an ExternalName Service is a DNS CNAME; kube-proxy programs nothing for it" });
  }
  if (svc.clusterIPs.length === 0 && svc.type !== "ExternalName") {
    findings.push({ severity: "info", code: "Headless", message: "a headless Service (clusterIP: None) has no virtual IP; clients resolve the endpoints' addresses by DNS, and kube-proxy programs nothing for it" });
  }
  const readyCount = resolved.endpoints.filter((e) => e.ready).length;
  if (resolved.slices.length === 0) {
    findings.push({ severity: "warning", code: "NoEndpointSlices", message: `no EndpointSlice labelled kubernetes.io/service-name=${name} in the bundle` });
  } else if (readyCount === 0) {
    findings.push({ severity: "warning", code: "NoReadyEndpoints", message: "the Service has no ready endpoints: new connections to it are rejected (or go to serving-terminating endpoints, when there are any)" });
  }
  const nodeNames = options.nodes ?? bundle.nodes.map((n) => n.name);
  const reports: NodeServiceReport[] = [];
  const packets: PacketAnswer[] = [];
  for (const nodeName of nodeNames) {
    const capture = bundle.nodes.find((n) => n.name === nodeName);
    const nodeObj = bundle.objects.nodes.find((n) => n.metadata.name === nodeName);
    const report: NodeServiceReport = {
      node: nodeName,
      proxyMode: { mode: "unknown", evidence: [], conflicts: [] },
      ports: [],
      drift: [],
      notes: [],
    };
    const z = nodeZone(nodeObj);
    if (z) report.zone = z.zone;
    reports.push(report);
    if (!capture) {
      report.error = "no datapath state was collected from this node";
      continue;
    }
    if (capture.source) report.source = [capture.source.kind, capture.source.pod, capture.source.detail].filter(Boolean).join(": ");
    if (capture.error) {
      report.error = capture.error;
      continue;
    }
    for (const family of families) {
      const dp = builder(capture, family);
      const tracer = dp.trace ??
        (dp.iptables ? ((pkt: TracePacket, hook: "PREROUTING" | "OUTPUT") => traceIptables(dp.iptables!, pkt, hook, dp.traceOptions)) : undefined);
      if (tracer) report.notes.push(...dp.problems);
      report.proxyMode = detectProxyMode(capture, bundle.objects, dp.signals);
      for (const c of report.proxyMode.conflicts) findings.push({ severity: "warning", code: "ProxyModeConflict", message: c, node: nodeName });
      if (!tracer) {
        if (dp.problems.length > 0) report.error = dp.problems.join("; ");
        else report.notes.push(`no ${family === 6 ? "ip6tables-save" : "iptables-save"} output for this node`);
        continue;
      }
      const cidr = dp.clusterCIDRs && dp.clusterCIDRs.length > 0
        ? { cidrs: dp.clusterCIDRs, source: "the rules (local-traffic detector)" }
        : detectClusterCIDRs(bundle, dp.iptables, family);
      if (cidr.cidrs.length > 0) report.notes.push(`cluster CIDR ${cidr.cidrs.join(", ")} (from ${cidr.source})`);
      const sources = chooseSources(bundle, resolved, nodeName, family, cidr.cidrs);
      report.notes.push(...sources.notes);
      for (const sp of svc.ports) {
        const pr: PortReport = { servicePort: sp, entryPoints: [] };
        report.ports.push(pr);
        // IPVS binds every service address to the kube-ipvs0 dummy interface: they are local addresses of the node.
        const ipvsMode = report.proxyMode.mode === "ipvs";
        for (const ep of entryPoints(svc, sp, family, sources.nodeIP!)) {
          if (ipvsMode) ep.dstLocal = true;
          const proto = lower(sp.protocol);
          const entry: EntryPointReport = {
            kind: ep.kind,
            destination: fmtDest(ep.ip, ep.port, proto),
            balancing: { method: dp.balancingMethod ?? "iptables-probability-cascade", shares: [] },
            clients: [],
          };
          const ipvsBal = dp.ipvs?.lookup(ep.ip, ep.port, proto);
          if (ipvsBal) entry.balancing = ipvsBal;
          if (svc.sessionAffinity === "ClientIP") entry.balancing.sessionAffinity = `ClientIP, ${svc.affinityTimeoutSeconds} s`;
          for (const c of clientsFor(ep.kind, sources, nodeName)) {
            const pkt = packet(c.src, ep.ip, ep.port, proto, family, c.hook === "OUTPUT", ep.dstLocal);
            const trace = tracer(pkt, c.hook);
            const v = verdictFromTrace(c.kind, c.description, c.src, trace);
            if (ipvsMode && !dp.ipvs && v.outcome === "not-handled") {
              // nat let the packet through for IPVS to translate, but the IPVS table is not in the bundle.
              v.outcome = "unknown";
              v.reason = "accepted for IPVS, but this node's IPVS table was not captured (ipvsadm failed or is missing): where it goes cannot be told";
            }
            if (ipvsBal) {
              // The tracer split IPVS connections evenly where the scheduler depends on live counts: show its shares.
              for (const e of v.endpoints) {
                const s = ipvsBal.shares.find((x) => x.endpoint === e.endpoint);
                if (s) e.share = s.share;
              }
            }
            entry.clients.push(v);
          }
          const reference = entry.clients.find((c) => c.client === "pod-same-node" && c.endpoints.length > 0) ??
            entry.clients.find((c) => c.endpoints.length > 0);
          if (!ipvsBal) {
            entry.balancing.shares = reference?.endpoints.map(({ masqueraded: _m, ...e }) => e) ?? [];
            if (entry.balancing.shares.length === 0) entry.balancing.method = "none";
          }
          pr.entryPoints.push(entry);
        }
        report.drift.push(...driftFor(resolved, sp, pr, nodeName, report.proxyMode.mode === "ipvs" && !dp.ipvsUnavailable));
        if (report.proxyMode.mode === "ipvs" && dp.traceOptions.ipsets) {
          report.drift.push(...ipsetDrift(resolved, sp, nodeName, family, sources.nodeIP!, dp.traceOptions.ipsets));
        }
      }
      if (options.packet && isIPv6(options.packet.destination) === (family === 6)) {
        packets.push(answerPacket(options.packet, tracer, nodeName, sources, svc));
      }
    }
    for (const d of report.drift) {
      findings.push({ severity: d.kind === "quiesced" || d.kind === "unverifiable" ? "info" : "warning", code: `Drift/${d.kind}`, message: d.message, node: nodeName, ...(d.evidence ? { evidence: d.evidence } : {}) });
    }
  }
  const out: ServiceReport = {
    apiVersion: REPORT_API_VERSION,
    kind: "ServiceReport",
    service: svc,
    endpoints: resolved.endpoints,
    zones: resolved.zones,
    nodes: reports,
    findings,
    limits,
  };
  if (options.packet) out.packet = packets;
  return out;
}

function answerPacket(
  q: PacketQuestion,
  tracer: (packet: TracePacket, hook: "PREROUTING" | "OUTPUT") => TraceResult,
  node: string,
  s: Sources,
  svc: ResolvedService["summary"],
): PacketAnswer {
  const srcLocal = q.source === s.nodeIP;
  const dstLocal = q.destination === s.nodeIP;
  const pkt = packet(q.source, q.destination, q.port, q.protocol, isIPv6(q.destination) ? 6 : 4, srcLocal, dstLocal);
  const trace = tracer(pkt, srcLocal ? "OUTPUT" : "PREROUTING");
  const v = verdictFromTrace("custom", `${q.source} → ${q.destination}:${q.port}/${q.protocol}`, q.source, trace);
  const a: PacketAnswer = {
    node,
    source: q.source,
    destination: fmtDest(q.destination, q.port, q.protocol),
    outcome: v.outcome,
    endpoints: v.endpoints,
    masquerade: v.masquerade,
    reason: v.reason,
    evidence: v.evidence,
    caveats: v.caveats,
  };
  if (v.dropped) a.dropped = v.dropped;
  if (v.rejected) a.rejected = v.rejected;
  if (v.notHandled) a.notHandled = v.notHandled;
  if (srcLocal) a.caveats.push(`${q.source} is this node's address: traced as a host-network client (nat OUTPUT)`);
  if (!svc.clusterIPs.includes(q.destination) && !dstLocal && !svc.externalIPs.includes(q.destination) && !svc.loadBalancerIngress.includes(q.destination)) {
    a.caveats.push(`${q.destination} is not an address of Service ${svc.namespace}/${svc.name}`);
  }
  return a;
}

/**
 * IPVS mode keeps per-Service state in ipsets that the iptables rules match (pkg/proxy/ipvs/proxier.go):
 * KUBE-CLUSTER-IP (`vip,proto:port`), KUBE-LOOP-BACK (`ep,proto:port,ep` for local endpoints, hairpin),
 * KUBE-NODE-PORT-TCP/UDP/SCTP (the NodePort), KUBE-LOAD-BALANCER (`lbip,proto:port`), KUBE-EXTERNAL-IP.
 * A missing entry changes masquerade (or hairpin) without any other symptom: report it.
 */
function ipsetDrift(
  resolved: ResolvedService,
  sp: ServicePortSummary,
  node: string,
  family: 4 | 6,
  nodeIP: string,
  has: NonNullable<TraceOptions["ipsets"]>,
): DriftItem[] {
  const out: DriftItem[] = [];
  const proto = lower(sp.protocol);
  const six = family === 6 ? "KUBE-6-" : "KUBE-";
  const pkt = (src: string, dst: string, port: number) => packet(src, dst, port, proto, family, false, true);
  const check = (set: string, flags: string, p: TracePacket, entry: string, why: string) => {
    const name = set.replace(/^KUBE-/, six);
    if (has(name, flags.split(","), p) === false) {
      out.push({ portKey: sp.portKey, kind: "ipset-missing", message: `${sp.portKey}: ipset ${name} on ${node} lacks ${entry}: ${why}` });
    }
  };
  const svc = resolved.summary;
  const fam = (ip: string) => isIPv6(ip) === (family === 6);
  for (const vip of svc.clusterIPs.filter(fam)) {
    check("KUBE-CLUSTER-IP", "dst,dst", pkt("0.0.0.0", vip, sp.port), `${vip},${proto}:${sp.port}`, "traffic to the ClusterIP from outside the cluster CIDR is not masqueraded (and not accepted in KUBE-SERVICES)");
  }
  for (const e of resolved.endpoints.filter((x) => x.node === node && x.ready && fam(x.address))) {
    const p = e.ports.find((x) => x.portKey === sp.portKey);
    if (!p) continue;
    check("KUBE-LOOP-BACK", "dst,dst,src", pkt(e.address, e.address, p.port), `${e.address},${proto}:${p.port},${e.address}`, "an endpoint reaching its own Service and sent to itself is not masqueraded (hairpin fails)");
  }
  if (sp.nodePort && (svc.type === "NodePort" || svc.type === "LoadBalancer")) {
    const set = `KUBE-NODE-PORT-${sp.protocol}`;
    const local = svc.externalTrafficPolicy === "Local" ? `KUBE-NODE-PORT-LOCAL-${sp.protocol}` : undefined;
    check(set, "dst", pkt("0.0.0.0", nodeIP, sp.nodePort), `${sp.nodePort}`, "NodePort traffic is not marked for masquerade");
    if (local) check(local, "dst", pkt("0.0.0.0", nodeIP, sp.nodePort), `${sp.nodePort}`, "externalTrafficPolicy Local is not applied to the NodePort (clients are masqueraded)");
  }
  if (svc.type === "LoadBalancer") {
    for (const ip of svc.loadBalancerIngress.filter(fam)) {
      check("KUBE-LOAD-BALANCER", "dst,dst", pkt("0.0.0.0", ip, sp.port), `${ip},${proto}:${sp.port}`, "LoadBalancer traffic is not handled by kube-proxy's rules");
    }
  }
  for (const ip of svc.externalIPs.filter(fam)) {
    check("KUBE-EXTERNAL-IP", "dst,dst", pkt("0.0.0.0", ip, sp.port), `${ip},${proto}:${sp.port}`, "externalIP traffic is not marked for masquerade");
  }
  return out;
}

function driftFor(resolved: ResolvedService, sp: ServicePortSummary, pr: PortReport, node: string, ipvsMode: boolean): DriftItem[] {
  const out: DriftItem[] = [];
  const cip = pr.entryPoints.find((e) => e.kind === "ClusterIP");
  if (!cip) return out;
  const ref = cip.clients.find((c) => c.client === "pod-same-node") ?? cip.clients[0];
  if (!ref) return out;
  const expected = new Set(usableEndpoints(resolved.endpoints, sp.portKey, resolved.summary.internalTrafficPolicy, node));
  const onNode = new Set(
    cip.balancing.method === "ipvs"
      ? cip.balancing.shares.filter((s) => (s.weight ?? 1) > 0).map((s) => s.endpoint)
      : ref.endpoints.map((e) => e.endpoint),
  );
  if (cip.balancing.method !== "ipvs" && ref.outcome !== "rejected" && ref.outcome !== "dropped" && ipvsMode) {
    out.push({
      portKey: sp.portKey,
      kind: "service-missing",
      message: `${sp.portKey}: no IPVS virtual server for ${cip.destination} on ${node}; kube-proxy has not programmed this Service here`,
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
  if (ref.outcome === "rejected" && expected.size > 0) {
    out.push({
      portKey: sp.portKey,
      kind: "unexpected-reject",
      message: `${sp.portKey}: ${node} rejects new connections to ${cip.destination} ("has no endpoints") but the API lists ${expected.size} usable endpoint(s): the node's rules are stale`,
      evidence: ref.evidence.filter((e) => e.role === "rejects").map((e) => e.rule),
    });
  }
  for (const e of expected) {
    if (!onNode.has(e)) {
      out.push({ portKey: sp.portKey, kind: "missing-on-node", endpoint: e, message: `${sp.portKey}: endpoint ${e} is ready in the API but ${node} does not send traffic to it` });
    }
  }
  const unknown = [...onNode].filter((e) => e.startsWith("unknown ("));
  if (unknown.length > 0) {
    out.push({
      portKey: sp.portKey,
      kind: "unverifiable",
      message: `${sp.portKey}: ${unknown.length} branch(es) on ${node} lead to chains the dump does not contain; their endpoints cannot be compared with the API`,
    });
  }
  for (const e of onNode) {
    if (e.startsWith("unknown (")) continue;
    if (!expected.has(e)) {
      out.push({ portKey: sp.portKey, kind: "stale-on-node", endpoint: e, message: `${sp.portKey}: ${node} sends traffic to ${e}, which is not a usable endpoint in the API (deleted, not ready, or on another node under a Local policy)` });
    }
  }
  if (cip.balancing.method === "ipvs") {
    for (const s of cip.balancing.shares) {
      if (s.weight === 0) {
        out.push({ portKey: sp.portKey, kind: "quiesced", endpoint: s.endpoint, message: `${sp.portKey}: real server ${s.endpoint} has weight 0 on ${node}: it gets no new connections (being drained)` });
      }
    }
  }
  return out;
}
