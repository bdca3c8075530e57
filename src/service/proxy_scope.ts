/**
 * What kube-proxy takes on, and so what a node's rules can be compared with:
 * - Services it ignores: the label `service.kubernetes.io/service-proxy-name` (another proxy serves them), headless
 *   Services and `type: ExternalName` — no rule is the right answer, and no drift is reported;
 * - LoadBalancer ingress IPs with `ipMode: Proxy`: not programmed (the load balancer proxies to NodePorts/endpoints);
 * - `nodePortAddresses`: NodePorts answer only on those node addresses;
 * - IPVS mode's deprecation (v1.35), said once per report.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { cidrContains, isIPv6 } from "../model/ip.ts";
import type { Node, Service } from "../model/k8s.ts";
import type { PacketQuestion } from "../model/question.ts";
import type { ConfigSetting, KubeProxySettings } from "./proxy_config.ts";
import type { Finding, ServiceSummary } from "./report.ts";
import { featureGate, kubeProxyMinor } from "./topology.ts";

/** The label that hands a Service to another proxy (KEP-2447 / kubernetes#71355, v1.14+). */
export const SERVICE_PROXY_NAME_LABEL = "service.kubernetes.io/service-proxy-name";

/**
 * Why kube-proxy programs nothing for this Service, when it does not: the service-proxy-name label (kube-proxy's
 * informers select `!service.kubernetes.io/service-proxy-name` on Services and EndpointSlices,
 * cmd/kube-proxy/app/server.go, v1.14–v1.35), a headless Service (no ClusterIP; its slices carry
 * `service.kubernetes.io/headless`, also excluded) or an ExternalName Service (no ClusterIP; pkg/proxy/serviceport.go
 * skips it).
 * @returns the finding that says so for the service-proxy-name label (headless and ExternalName already have
 *   theirs), and `ignored` true whenever no kube-proxy rule is expected.
 */
export function kubeProxyIgnores(service: Service, summary: ServiceSummary): { ignored: boolean; finding?: Finding } {
  const proxy = service.metadata.labels?.[SERVICE_PROXY_NAME_LABEL];
  if (proxy !== undefined) {
    return {
      ignored: true,
      finding: {
        severity: "info",
        code: "ServiceProxyName",
        message: `label ${SERVICE_PROXY_NAME_LABEL}=${proxy}: kube-proxy ignores this Service and its EndpointSlices (it watches only objects without that label, cmd/kube-proxy/app/server.go); the proxy "${proxy}" serves it. No kube-proxy rule is expected on any node, so none is compared (no drift is reported); ask ${proxy} how it routes the Service`,
      },
    };
  }
  return { ignored: summary.type === "ExternalName" || summary.clusterIPs.length === 0 };
}

/** LoadBalancer ingress IPs with `ipMode: Proxy` (core/v1 LoadBalancerIngress). */
export function proxyModeIngressIPs(service: Service): string[] {
  return (service.status?.loadBalancer?.ingress ?? []).filter((i) => i.ipMode === "Proxy" && i.ip).map((i) => i.ip!);
}

/**
 * Whether kube-proxy on a node honours `ipMode: Proxy`, and the clause saying what decided it. kube-proxy skips an
 * ingress IP when `!IsVIPMode(ing)` (pkg/proxy/serviceport.go newBaseServiceInfo); IsVIPMode (pkg/proxy/util) returns
 * true for every ingress while feature gate LoadBalancerIPMode is off. That gate (pkg/features/kube_features.go) is
 * alpha (off by default) in v1.29, beta (on) in v1.30–v1.31, GA and locked on from v1.32; before v1.29 kube-proxy has
 * no ipMode and programs every ingress IP. Where the gate can be set (v1.29–v1.31), kube-proxy's configured gates
 * (`featureGates` of its configuration file, `--feature-gates`; proxy_config.ts) decide, as topology.ts featureGate
 * applies them; without them the version's default, and the clause says the configuration was not read. The node's
 * kubeProxyVersion, else kubeletVersion, stands for kube-proxy's; unknown: taken as current (honoured).
 * @param node the Node object, when in the bundle.
 * @param proxyConfig kube-proxy's configuration as read from the bundle (proxy_config.ts readKubeProxyConfig).
 * @returns `honoured`, and `why`: one clause naming the version and the gate's setting or default.
 */
export function ipModeHonoured(node: Node | undefined, proxyConfig?: Pick<KubeProxySettings, "featureGates" | "unread">): { honoured: boolean; why: string } {
  const version = kubeProxyMinor(node);
  const minor = version?.minor;
  const from = version?.from;
  const g = featureGate(IP_MODE_GATE, minor, from, proxyConfig?.featureGates, proxyConfig !== undefined && !proxyConfig.unread);
  if (minor === undefined) return { honoured: true, why: `${g.why} (on by default from v1.30, GA in v1.32)` };
  if (g.why === "") return { honoured: true, why: `kube-proxy v1.${minor} (${from}): feature gate ${IP_MODE_GATE} is GA and locked on from v1.32` };
  return { honoured: g.on, why: g.why };
}

/** The feature gate of `ipMode` (pkg/features/kube_features.go, KEP-1860). */
const IP_MODE_GATE = "LoadBalancerIPMode";

/**
 * The finding for ingress IPs with `ipMode: Proxy` (pkg/proxy/serviceport.go newBaseServiceInfo skips
 * `!IsVIPMode(ing)`, v1.29+ behind feature gate LoadBalancerIPMode).
 * @param ips the ingress IPs with ipMode Proxy.
 * @param summary the Service.
 * @param notHonoured the analysed kube-proxy nodes where kube-proxy does not honour ipMode ({@link ipModeHonoured}),
 *   each with the clause saying why: there the IPs are programmed as VIPs, and a rule missing is drift. Empty (the
 *   default, before any node is read): the absence of rules is expected on every node.
 */
export function proxyModeIngressFinding(ips: string[], summary: ServiceSummary, notHonoured: readonly { node: string; why: string }[] = []): Finding {
  const nodePorts = summary.ports.filter((p) => p.nodePort !== undefined).map((p) => `${p.nodePort}/${p.protocol}`);
  const lb = `The load balancer terminates clients' connections and opens its own to ${nodePorts.length > 0 ? `the NodePort (${nodePorts.join(", ")}) on the nodes` : "the endpoints"} (or to the endpoints directly, by provider); those arrive as NodePort or pod traffic, answered above`;
  const head = `LoadBalancer ingress ${ips.join(", ")} has ipMode Proxy`;
  if (notHonoured.length === 0) {
    return {
      severity: "info",
      code: "LoadBalancerIPModeProxy",
      message: `${head}: kube-proxy programs no rule for it (only VIP-mode ingress IPs get rules, pkg/proxy/serviceport.go, v1.30+), so its absence from the nodes is expected, not drift. ${lb}`,
    };
  }
  return {
    severity: "info",
    code: "LoadBalancerIPModeProxy",
    message: `${head}, which kube-proxy honours (programs no rule for it) only with feature gate ${IP_MODE_GATE} on (pkg/proxy/util IsVIPMode; on by default from v1.30, GA in v1.32). It does not on ${notHonoured.map((n) => `${n.node} (${n.why})`).join(", ")}: there kube-proxy programs the IP as a VIP, so a rule missing there is drift; on a node that honours ipMode its absence is expected. ${lb}`,
  };
}

/** NodePort addresses on one node: which of its addresses answer NodePorts. */
export interface NodePortScope {
  /** Whether kube-proxy accepts NodePorts on this address. */
  serves(ip: string): boolean;
  /** `nodePortAddresses [primary] (from …): NodePorts answer only on 192.168.1.10`. */
  describe: string;
}

/**
 * The node's primary IPs, as kube-proxy takes them (pkg/proxy/util GetNodeIPs → the first InternalIP of each family,
 * else ExternalIP).
 */
export function primaryNodeIPs(node: Node | undefined): string[] {
  const addrs = node?.status?.addresses ?? [];
  const out: string[] = [];
  for (const fam of [4, 6]) {
    const pick = (type: string) => addrs.find((a) => a.type === type && isIPv6(a.address) === (fam === 6))?.address;
    const ip = pick("InternalIP") ?? pick("ExternalIP");
    if (ip) out.push(ip);
  }
  return out;
}

/**
 * Where NodePorts answer on a node under `nodePortAddresses` (CIDRs and/or `primary`; pkg/proxy/util
 * NodePortAddresses, v1.29+ for `primary`).
 * @param setting the effective nodePortAddresses (proxy_config.ts effectiveNodePortAddresses), undefined: all local addresses.
 * @param node the Node object (for `primary`).
 * @returns undefined when NodePorts answer on every local address.
 */
export function nodePortScope(setting: ConfigSetting<string[]> | undefined, node: Node | undefined): NodePortScope | undefined {
  if (!setting || setting.value.length === 0) return undefined;
  const primary = setting.value.includes("primary") ? primaryNodeIPs(node) : [];
  const cidrs = setting.value.filter((v) => v !== "primary");
  const serves = (ip: string) => primary.includes(ip) || cidrs.some((c) => cidrContains(c, ip));
  const known = (node?.status?.addresses ?? []).filter((a) => a.type === "InternalIP" || a.type === "ExternalIP").map((a) => a.address);
  const on = known.filter(serves);
  return {
    serves,
    describe: `nodePortAddresses [${setting.value.join(", ")}] (${setting.source}): NodePorts answer only on ${on.length > 0 ? on.join(", ") : "addresses in those ranges"}${primary.length > 0 ? ` (primary: ${primary.join(", ")})` : ""}`,
  };
}

/**
 * NodePort addresses as the node's rules have them, which is what the node does whatever the configuration says.
 * nftables mode: its set `nodeport-ips` (pkg/proxy/nftables/proxier.go, from nodePortAddresses, `primary` by
 * default), or, when the table has none, every local address (the `services` rule matches `fib daddr type local`).
 * iptables mode: the `-d IP` of the nat KUBE-SERVICES jumps to KUBE-NODEPORTS, one per address nodePortAddresses
 * selects (pkg/proxy/iptables/proxier.go syncProxyRules, "create nodeport rules for each IP one by one").
 * @param ips the addresses, or `"local"` (nftables: no set nodeport-ips).
 * @param isLocal whether an address is the node's (its collected addresses, else its InternalIP).
 * @param mode the proxy mode whose rules gave `ips` (the description names where they were read).
 */
export function nodePortScopeFromRules(ips: string[] | "local", isLocal: (ip: string) => boolean, mode: "nftables" | "iptables" = "nftables"): NodePortScope {
  if (ips === "local") {
    return { serves: (ip) => isLocal(ip) && !/^127\.|^::1$/.test(ip), describe: "NodePorts answer on every local address of the node but loopback (its kube-proxy table has no set nodeport-ips: `fib daddr type local`)" };
  }
  const set = new Set(ips);
  const where = mode === "iptables"
    ? "the node's nat KUBE-SERVICES jumps to KUBE-NODEPORTS only for those destinations (`-d IP`): kube-proxy's nodePortAddresses leaves the other addresses out"
    : "set nodeport-ips of the node's kube-proxy table";
  return { serves: (ip) => set.has(ip), describe: `NodePorts answer only on ${ips.length > 0 ? ips.join(", ") : "no address"} (${where})` };
}

/**
 * The note for a report with a node in IPVS mode: IPVS mode is deprecated since v1.35 (KEP-5495; kube-proxy logs a
 * warning when it runs it), with the migration to nftables mode.
 */
export const IPVS_DEPRECATION: Finding = {
  severity: "info",
  code: "IPVSDeprecated",
  message:
    "kube-proxy's IPVS mode is deprecated since Kubernetes v1.35 (KEP-5495, kubernetes/enhancements#5495: kube-proxy warns when it runs it; it is to be removed): migrate to nftables mode (GA in v1.33, Linux kernel 5.13 or later) — set mode: nftables in the kube-proxy configuration (or --proxy-mode=nftables) and restart kube-proxy on each node (https://kubernetes.io/docs/reference/networking/virtual-ips/#proxy-mode-nftables). In nftables mode NodePorts answer only on the node's primary IPs unless nodePortAddresses says otherwise; IPVS-only settings (ipvs.scheduler, ipvs.strictARP) no longer apply",
};

/**
 * What a packet answer adds when its destination is outside kube-proxy's scope: an ingress IP with ipMode Proxy, or a
 * NodePort on a node address nodePortAddresses leaves out.
 * @param isLocal whether an address is the node's (its collected addresses, else its InternalIP).
 * @param outcome the answer's outcome (`not-handled`, `forwarded`, …): rules that take an ipMode Proxy address are said
 *   to be stale, not "not handled (expected)".
 */
export function scopeCaveats(
  q: PacketQuestion,
  svc: ServiceSummary,
  proxyIngress: string[],
  honoured: boolean,
  nodePorts: NodePortScope | undefined,
  isLocal: (ip: string) => boolean,
  outcome?: string,
): string[] {
  const out: string[] = [];
  if (honoured && proxyIngress.includes(q.destination)) {
    const np = svc.ports.filter((p) => p.nodePort !== undefined && p.port === q.port).map((p) => p.nodePort);
    const via = `Clients reach the Service through the load balancer, which connects to ${np.length > 0 ? `NodePort ${np.join(", ")} on the nodes` : "the NodePort on the nodes"} or to the endpoints (ask: --dest NODE-IP:NODEPORT)`;
    out.push(
      outcome === undefined || outcome === "not-handled"
        ? `${q.destination} is a LoadBalancer ingress IP with ipMode Proxy: kube-proxy programs no rule for it, so a packet to it is not handled by kube-proxy here (expected). ${via}`
        : `${q.destination} is a LoadBalancer ingress IP with ipMode Proxy, for which kube-proxy programs no rule, yet this node's rules take it (above): they are stale (written before ipMode Proxy was set), or kube-proxy here does not honour ipMode (its version is read from the Node). ${via}`,
    );
  }
  const isNodePort = svc.ports.some((p) => p.nodePort === q.port && p.protocol.toLowerCase() === q.protocol);
  if (isNodePort && nodePorts && isLocal(q.destination) && !nodePorts.serves(q.destination)) {
    out.push(`NodePort ${q.port} is not served on ${q.destination}: ${nodePorts.describe}`);
  }
  return out;
}
