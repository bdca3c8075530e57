/**
 * `svc/NAME`: how each node of the bundle really balances and masquerades the Service, per ServicePort and entry
 * point (ClusterIP, NodePort, LoadBalancer IP, externalIP), for each kind of client, with drift against the API.
 *
 * The one entry point of the Service question, whatever the proxy mode: each node's capture is read into a
 * {@link Datapath} (datapath.ts: iptables, IPVS or nftables), every client kind's first packet is traced through it
 * (clients.ts, entry_points.ts), the traces become verdicts (client_verdict.ts) and are compared with the API
 * (drift.ts).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { collectionScope, collectionScopeNote, sectionCosts } from "./collection_scope.ts";
import { nodeEndpoints, topologyNode } from "./topology.ts";
import { ipvsBoundAddress } from "./ipvs/datapath.ts";
import { parseCiliumServiceList } from "../datapath/cilium_services.ts";
import { compareCiliumServices } from "./cilium_compare.ts";
import { ciliumAlongsideKubeProxy, ciliumAlongsideNote, hasKubeProxyState, noKubeProxyStateNote, otherDatapathNote, otherServiceDatapath } from "./service_datapath.ts";
import type { Bundle, NodeCapture } from "../bundle/bundle.ts";
import { DumpParseError } from "../datapath/errors.ts";
import { canonicalAddress, isIPv6 } from "../model/ip.ts";
import type { Node as KubeNode } from "../model/k8s.ts";
import type { PacketQuestion } from "../model/question.ts";
import { heldByAffinity, sayNoLocalDetector, verdictFromTrace } from "./client_verdict.ts";
import { chooseSources, clientsFor } from "./clients.ts";
import { detectClusterCIDRs, detectorCIDRScope, iptablesWithoutLocalDetector } from "./cluster_cidr.ts";
import { type Datapath, type DatapathBuilder, nodeDatapath } from "./datapath.ts";
import { affinitySetDrift, driftFor, externalPolicyDrift, ipsetDrift, nodeAffinityText, persistenceDrift, recentRuleDrift, recentRuleSeconds, schedulerDrift, unhandledEntryDrift } from "./drift.ts";
import { entryPoints, formatDestination, lowerProtocol, tracePacket } from "./entry_points.ts";
import { rulesInChains, type TraceContext, type TraceResult } from "./trace.ts";
import { nodePodCIDRs, readNodeFacts } from "./node_facts.ts";
import { asInterface, clientInterfaces, configPodInterface, iptablesPodInterface, noDetectorCause, podGatewayInterface } from "./local_detector.ts";
import { answerPacket, resolveNodeRefs } from "./packet_answer.ts";
import { checkReplyPath } from "./reply_path.ts";
import { diagnoseEndpoints } from "./endpoint_diagnosis.ts";
import { checkBridge } from "./bridge_checks.ts";
import { checkIpvsConntrack } from "./ipvs/conntrack_sysctl.ts";
import { detectProxyMode } from "./proxy_mode.ts";
import { effectiveIpvsScheduler, effectiveMode, effectiveNodePortAddresses, kubeProxyConfigFindings, readKubeProxyConfig } from "./proxy_config.ts";
import { ipModeHonoured, IPVS_DEPRECATION, kubeProxyIgnores, SERVICE_PROXY_NAME_LABEL, nodePortScope, nodePortScopeFromRules, proxyModeIngressFinding, proxyModeIngressIPs, scopeCaveats } from "./proxy_scope.ts";
import { nodeZone, type ResolvedService, resolveService } from "./resolve.ts";
import type { ClientVerdict, DriftItem, EntryPointReport, Finding, NodeServiceReport, PacketAnswer, PortReport, ServiceReport, ServiceSummary } from "./report.ts";
import { REPORT_API_VERSION } from "./report.ts";

export type { PacketQuestion };

/** Options of {@link explainService}. */
export interface ExplainServiceOptions {
  /** Only these nodes (default: every node in the bundle). */
  nodes?: string[];
  /** Answer one packet question on each node (`--source/--dest`); the same as `packets: [packet]`. */
  packet?: PacketQuestion;
  /**
   * Packet questions, each answered on each node of its address family, in order, after `packet` (`--from-pod`
   * without `--dest` asks one per destination of the Service, from_pod.ts servicePacketsFromPod).
   */
  packets?: PacketQuestion[];
  /** Reads a node's capture into its datapath. @default nodeDatapath (iptables, IPVS and nftables sections) */
  datapath?: DatapathBuilder;
}

/**
 * Explains how a Service is balanced and masqueraded on each node of a bundle: {@link prepareServiceExplain}, then
 * {@link explainServiceNode} for each node, then {@link finishServiceExplain}.
 *
 * @param bundle the bundle (API objects and node captures).
 * @param namespace the Service's namespace.
 * @param name the Service's name.
 * @param options {@link ExplainServiceOptions}.
 * @returns the {@link ServiceReport}.
 * @throws {NotFoundError} when the Service is not in the bundle (naming the namespaces where one of that name is).
 */
export function explainService(bundle: Bundle, namespace: string, name: string, options: ExplainServiceOptions = {}): ServiceReport {
  const ex = prepareServiceExplain(bundle, namespace, name, options);
  const nodeNames = options.nodes ?? bundle.nodes.map((n) => n.name);
  return finishServiceExplain(ex, bundle, nodeNames.map((n) => explainServiceNode(ex, bundle, n, nodeNames.length)));
}

/**
 * What a Service question fixes before any node is read: the Service resolved from the bundle's objects, the
 * findings that need no node, kube-proxy's configuration. Built by {@link prepareServiceExplain} from the API objects
 * alone, so a live run can read each node as its collection arrives (the objects are gathered first).
 */
export interface ServiceExplain {
  namespace: string;
  name: string;
  options: ExplainServiceOptions;
  resolved: ReturnType<typeof resolveService>;
  /** The findings that need no node's state, in report order. */
  findings: Finding[];
  /** @internal */
  ctx: {
    builder: DatapathBuilder;
    families: (4 | 6)[];
    notForKubeProxy: ReturnType<typeof kubeProxyIgnores>;
    proxyIngress: string[];
    proxyConfig: ReturnType<typeof readKubeProxyConfig>;
    /** The pod a packet question's source is, when the bundle has it; `ref` is how --from-pod names it from here. */
    sourcePod?: { name: string; node: string; ref: string };
  };
}

/** One node's part of a {@link ServiceReport}: its report, the findings it raised and its packet answers, in order. */
export interface NodeExplained {
  report: NodeServiceReport;
  findings: Finding[];
  packets: PacketAnswer[];
}

/**
 * The part of {@link explainService} that reads no node: resolves the Service and raises the findings of the API
 * side. Reads only `bundle.objects`.
 * @param bundle the bundle (its objects).
 * @param namespace the Service's namespace.
 * @param name the Service's name.
 * @param options {@link ExplainServiceOptions}.
 * @returns the prepared question.
 * @throws {NotFoundError} when the Service is not in the bundle (naming the namespaces where one of that name is).
 */
export function prepareServiceExplain(bundle: Pick<Bundle, "objects">, namespace: string, name: string, given: ExplainServiceOptions = {}): ServiceExplain {
  // a packet's IPv6 addresses in their canonical text, as the Service's (resolve.ts) and the rules' are written
  const asked = [...(given.packet ? [given.packet] : []), ...(given.packets ?? [])];
  const options: ExplainServiceOptions = { ...given };
  delete options.packet;
  delete options.packets;
  if (asked.length > 0) options.packets = asked.map((q) => ({ ...q, source: canonicalAddress(q.source), destination: canonicalAddress(q.destination) }));
  const resolved = resolveService(bundle.objects, namespace, name);
  const svc = resolved.summary;
  const findings: Finding[] = [];
  const builder = options.datapath ?? nodeDatapath;
  const families: (4 | 6)[] = [...new Set(svc.clusterIPs.map((ip) => (isIPv6(ip) ? 6 : 4) as 4 | 6))];
  if (families.length === 0) families.push(4);
  if (svc.type === "ExternalName") {
    findings.push({ severity: "info", code: "ExternalName", message: "an ExternalName Service is a DNS CNAME; kube-proxy programs nothing for it" });
  }
  if (svc.clusterIPs.length === 0 && svc.type !== "ExternalName") {
    findings.push({ severity: "info", code: "Headless", message: "a headless Service (clusterIP: None) has no virtual IP; clients resolve the endpoints' addresses by DNS, and kube-proxy programs nothing for it" });
  }
  // What kube-proxy takes on (proxy_scope.ts): a Service it ignores gets no drift; ipMode Proxy ingress IPs no rules.
  const notForKubeProxy = kubeProxyIgnores(resolved.service, svc);
  if (notForKubeProxy.finding) findings.push(notForKubeProxy.finding);
  const proxyIngress = svc.type === "LoadBalancer" ? proxyModeIngressIPs(resolved.service) : [];
  if (proxyIngress.length > 0) findings.push(proxyModeIngressFinding(proxyIngress, svc));
  // kube-proxy does no IP family translation: addresses of a family the Service has no ClusterIP of get no rule
  // (pkg/proxy/serviceport.go newBaseServiceInfo; util MapIPsByIPFamily)
  const otherFamily = svc.clusterIPs.length === 0 ? [] : [...svc.externalIPs, ...svc.loadBalancerIngress].filter((ip) => !families.includes(isIPv6(ip) ? 6 : 4));
  if (otherFamily.length > 0) {
    findings.push({
      severity: "warning",
      code: "OtherFamilyAddress",
      message: `${otherFamily.join(", ")} ${otherFamily.length === 1 ? "is an address" : "are addresses"} of an IP family the Service has no ClusterIP of (ipFamilies ${families.map((f) => `IPv${f}`).join(", ")}): kube-proxy does no family translation and programs no rule for ${otherFamily.length === 1 ? "it" : "them"}: a packet to ${otherFamily.length === 1 ? "it" : "them"} on a node is not the Service's (a load balancer in front may still forward to the NodePorts)`,
    });
  }
  const proxyConfig = readKubeProxyConfig(bundle.objects);
  if (proxyConfig) findings.push(...kubeProxyConfigFindings(proxyConfig));
  findings.push(...diagnoseEndpoints(resolved, bundle.objects));
  const readyCount = resolved.endpoints.filter((e) => e.ready).length;
  if (resolved.slices.length === 0) {
    findings.push({ severity: "warning", code: "NoEndpointSlices", message: `no EndpointSlice labelled kubernetes.io/service-name=${name} in the bundle` });
  } else if (readyCount === 0) {
    findings.push({ severity: "warning", code: "NoReadyEndpoints", message: "the Service has no ready endpoints: new connections to it are rejected (or go to serving-terminating endpoints, when there are any)" });
  }
  // The pod a packet question's source belongs to, if the bundle has it: its node handles the packet first.
  // (status.podIPs holds every family's address, podIP the first one only: a dual-stack pod's IPv6 source is in podIPs)
  // (a dual-stack pod's packets to each ClusterIP have one source each: any of them names the pod)
  const sources = new Set((options.packets ?? []).map((q) => q.source));
  const hasIP = (p: (typeof bundle.objects.pods)[number]) =>
    (p.status?.podIP !== undefined && sources.has(p.status.podIP)) || (p.status?.podIPs ?? []).some((x) => sources.has(x.ip));
  const srcPod = sources.size > 0 ? bundle.objects.pods.find((p) => hasIP(p) && !p.spec?.hostNetwork && p.spec?.nodeName) : undefined;
  const ctx: ServiceExplain["ctx"] = { builder, families, notForKubeProxy, proxyIngress, proxyConfig };
  if (srcPod) {
    const podNs = srcPod.metadata.namespace ?? "default";
    // --from-pod takes NAME in the Service's namespace, NAMESPACE/NAME elsewhere (from_pod.ts fromPodRef)
    ctx.sourcePod = { name: srcPod.metadata.name, node: srcPod.spec!.nodeName!, ref: podNs === namespace ? srcPod.metadata.name : `${podNs}/${srcPod.metadata.name}` };
  }
  return { namespace, name, options, resolved, findings, ctx };
}

/**
 * One node's part of the Service question: its datapath read from its capture, every client kind traced, drift
 * against the API. Reads `bundle.objects` and the node's own capture only, so it can run as soon as that node's
 * collection arrives.
 * @param ex the prepared question ({@link prepareServiceExplain}).
 * @param bundle the bundle: its objects and (at least) this node's capture.
 * @param nodeName the node.
 * @param nodeCount how many nodes the report covers (a finding's wording depends on it).
 * @returns the node's report, findings and packet answers; a malformed dump is the node's `error`, not a throw.
 * @throws only on a bug (an error that is not a dump's or a trace's).
 */
export function explainServiceNode(ex: ServiceExplain, bundle: Bundle, nodeName: string, nodeCount: number): NodeExplained {
  const { options, resolved } = ex;
  const svc = resolved.summary;
  const { builder, families, notForKubeProxy, proxyIngress, proxyConfig, sourcePod } = ex.ctx;
  const findings: Finding[] = [];
  const packets: PacketAnswer[] = [];
  const capture = bundle.nodes.find((n) => n.name === nodeName);
  const nodeObj = bundle.objects.nodes.find((n) => n.metadata.name === nodeName);
  const report: NodeServiceReport = {
    node: nodeName,
    proxyMode: { mode: "unknown", evidence: [], conflicts: [] },
    ports: [],
    drift: [],
    notes: [],
  };
  /**
   * The node's answer, with each drift item repeated as a finding (`Drift/<kind>`, docs/report.md), whichever
   * datapath gave it (kube-proxy's rules or another agent's service table): every return goes through here.
   */
  // Cilium next to kube-proxy's state (service_datapath.ts): said and compared below, before the kube-proxy analysis
  const alongside = capture && !capture.error ? ciliumAlongsideKubeProxy(bundle, capture) : undefined;
  const done = (): NodeExplained => {
    if (alongside) {
      // Cilium translates pod → ClusterIP connections before kube-proxy's rules (service_datapath.ts ciliumAlongsideKubeProxy)
      for (const p of report.ports) {
        for (const ep of p.entryPoints) {
          for (const c of ep.clients) {
            if ((c.client === "pod-same-node" || c.client === "pod-other-node") && ep.kind === "ClusterIP") {
              c.caveats.push("unverified: a Cilium agent runs on this node, and Cilium translates pod → ClusterIP connections in its BPF programs before kube-proxy's rules see them (kubeProxyReplacement decides how much it takes on): this is kube-proxy's answer, not necessarily the packet's");
            }
          }
        }
      }
    }
    for (const d of report.drift) {
      findings.push({ severity: d.kind === "quiesced" || d.kind === "unverifiable" ? "info" : "warning", code: `Drift/${d.kind}`, message: d.message, node: nodeName, ...(d.evidence ? { evidence: d.evidence } : {}) });
    }
    return { report, findings, packets };
  };
  const ipMode = ipModeHonoured(nodeObj, proxyConfig);
  // ipMode Proxy ingress IPs are no entry point of kube-proxy's where it honours ipMode.
  const svcHere = ipMode.honoured && proxyIngress.length > 0 ? { ...svc, loadBalancerIngress: svc.loadBalancerIngress.filter((ip) => !proxyIngress.includes(ip)) } : svc;
  if (!ipMode.honoured && proxyIngress.length > 0) report.notes.push(`ipMode Proxy of ${proxyIngress.join(", ")} is not honoured here (kube-proxy programs ${proxyIngress.length === 1 ? "it" : "them"} as a VIP, pkg/proxy/util IsVIPMode): ${ipMode.why}`);
  const z = nodeZone(nodeObj);
  if (z) report.zone = z.zone;
  if (!capture) {
    report.error = "no datapath state was collected from this node";
    return done();
  }
  if (capture.source) report.source = [capture.source.kind, capture.source.pod, capture.source.detail].filter(Boolean).join(": ");
  const costs = sectionCosts(capture);
  if (costs) report.collection = costs;
  const scope = collectionScope(capture);
  if (scope?.scope === "service") report.notes.push(collectionScopeNote(scope, !/awk|grep|-S CHAIN/.test(capture.sections["iptables-save"]?.command ?? "awk")));
  if (scope?.sectionTimeout?.unenforced) report.notes.push(`--section-timeout ${scope.sectionTimeout.seconds}s was not enforced on this node: ${scope.sectionTimeout.unenforced}`);
  if (capture.error) {
    report.error = capture.error;
    return done();
  }
  // Another Service datapath (Cilium, Calico eBPF, …): say so, and compare nothing with kube-proxy's (absent) rules.
  const other = otherServiceDatapath(bundle, capture);
  if (other) {
    report.notes.push(otherDatapathNote(other));
    report.proxyMode = { mode: other.mode, evidence: [{ source: "datapath agent", value: other.datapath, detail: other.evidence.join("; ") }], conflicts: [] };
    for (const q of options.packets ?? []) {
      // the agent's BPF programs (or its own rules) decide the packet, which the bundle does not hold: say so rather
      // than give no answer (service_datapath.ts)
      packets.push({
        node: nodeName,
        source: q.source,
        destination: formatDestination(q.destination, q.port, q.protocol),
        outcome: "unknown",
        endpoints: [],
        masquerade: "n/a",
        reason: `Services on ${nodeName} are served by ${other.datapath}, not kube-proxy: where this packet goes and whether it is masqueraded are decided by the agent's own datapath, which this report does not read${other.table ? " (its service table, compared above, lists the backends but not the path)" : ""}; ask the agent: ${other.ask}`,
        evidence: [],
        caveats: [],
      });
    }
    if (other.table && resolved.service.metadata.labels?.[SERVICE_PROXY_NAME_LABEL] !== undefined) {
      // Cilium, like kube-proxy, skips a Service labelled for another proxy (its --k8s-service-proxy-name, empty by
      // default, takes only unlabelled Services)
      report.notes.push(`Cilium's service table is not compared: the Service carries ${SERVICE_PROXY_NAME_LABEL}=${resolved.service.metadata.labels[SERVICE_PROXY_NAME_LABEL]}, which Cilium serves only when its --k8s-service-proxy-name is that value (empty by default: unlabelled Services only)`);
    } else if (other.table) {
      // Cilium's own table: compare it with the API as kube-proxy's rules are elsewhere
      compareCiliumTable(resolved, capture, nodeName, nodeObj, report);
    }
    {
      findings.push({
        severity: "info",
        code: "NotKubeProxyDatapath",
        message: `Services are served by ${other.datapath} on ${nodeName}${nodeCount > 1 ? " (and possibly other nodes)" : ""}, not kube-proxy: ` +
          (other.table ? "its service table is compared with the API instead of kube-proxy's rules" : `no drift is reported against kube-proxy's rules there; ${other.ask}`),
        node: nodeName,
      });
    }
    return done();
  }
  if (!hasKubeProxyState(capture) && (capture.sections["iptables-save"]?.exitCode ?? 0) === 0 && capture.sections["iptables-save"] !== undefined) {
    report.notes.push(noKubeProxyStateNote(bundle));
  }
  // Cilium next to kube-proxy's state: the analysis follows kube-proxy's rules, says so, and compares Cilium's table
  // when the bundle holds it (its drift items name their Cilium frontend)
  if (alongside) {
    report.notes.push(ciliumAlongsideNote(alongside));
    findings.push({
      severity: "warning",
      code: "CiliumNextToKubeProxy",
      message: `a Cilium agent runs next to kube-proxy's rules on ${nodeName} (${alongside.evidence.join("; ")}): the answers follow kube-proxy's rules, but Cilium translates pod → ClusterIP connections (and, with kubeProxyReplacement=true, every frontend) before them; its kube-proxy-replacement setting decides which path packets take`,
      node: nodeName,
    });
    if (alongside.table) {
      compareCiliumTable(resolved, capture, nodeName, nodeObj, report);
    }
  }
  const hc = healthCheckNote(svc, resolved, nodeName);
  if (hc) report.notes.push(hc);
  let current: 4 | 6 = families[0] ?? 4;
  try {
    // Each family's state first: kube-proxy runs one mode for both (NewDualStackProxier builds both proxiers of the
    // mode), so the mode is read from both families' signals together, once, not from whichever family came last
    const read: { family: 4 | 6; dp: ReturnType<typeof builder> }[] = [];
    for (const family of families) {
      current = family;
      read.push({ family, dp: builder(capture, family, bundle.objects) });
    }
    const signals = read.map((r) => r.dp.signals).reduce((a, b) => ({
      iptablesServiceChains: a.iptablesServiceChains + b.iptablesServiceChains,
      ipvsMatchSets: a.ipvsMatchSets || b.ipvsMatchSets,
      ipvsVirtualServers: Math.max(a.ipvsVirtualServers, b.ipvsVirtualServers),
      nftablesTable: a.nftablesTable || b.nftablesTable,
      ...(a.iptablesLayout ?? b.iptablesLayout ? { iptablesLayout: (a.iptablesLayout ?? b.iptablesLayout)! } : {}),
    }));
    report.proxyMode = detectProxyMode(capture, bundle.objects, signals);
    for (const c of report.proxyMode.conflicts) findings.push({ severity: "warning", code: "ProxyModeConflict", message: c, node: nodeName });
    // a family whose state is missing or unreadable while the other's was read: that family's half of the Service is
    // not compared (said per ServicePort), the other's answers stand (a node where kube-proxy runs IPv4 alone, its
    // IPv6 unsupported: server_linux.go platformCheckSupported; or an ip6tables-save not collected)
    const anyRead = read.some((r) => r.dp.datapath !== undefined);
    for (const { family, dp } of read) {
      current = family;
      const datapath = dp.datapath;
      if (datapath) report.notes.push(...dp.problems);
      // In IPVS mode the virtual servers decide where packets go: an unreadable ipvsadm dump leaves nothing to answer with.
      if (report.proxyMode.mode === "ipvs" && dp.ipvsadmError) throw dp.ipvsadmError;
      if (!datapath) {
        const why = dp.problems.length > 0 ? dp.problems.join("; ") : `no ${family === 6 ? "ip6tables-save" : "iptables-save"} output for this node`;
        if (!anyRead) {
          if (dp.problems.length > 0) report.error = why;
          else report.notes.push(why);
          continue;
        }
        report.notes.push(why);
        const addresses = svc.clusterIPs.filter((ip) => isIPv6(ip) === (family === 6));
        if (addresses.length > 0 || resolved.endpoints.some((e) => isIPv6(e.address) === (family === 6))) {
          for (const sp of svc.ports) {
            report.drift.push({
              portKey: sp.portKey,
              kind: "unverifiable",
              message: `${sp.portKey}: ${nodeName}'s IPv${family} state was not read (${why}): the Service's IPv${family} ${addresses.length > 0 ? `ClusterIP ${addresses.join(", ")} and ` : ""}endpoints cannot be compared with the API; its IPv${family === 6 ? 4 : 6} half is answered`,
            });
          }
        }
        continue;
      }
      const cidr = datapath.clusterCIDRs && datapath.clusterCIDRs.length > 0
        ? { cidrs: datapath.clusterCIDRs, source: "the rules (local-traffic detector)" }
        : detectClusterCIDRs(bundle, dp.iptables, family);
      // a CIDR detector is the cluster CIDR or, with detect-local-mode NodeCIDR, this node's own pod CIDR: the Nodes'
      // podCIDRs tell which (cluster_cidr.ts detectorCIDRScope)
      const ofFamily = (c: string) => isIPv6(c.split("/")[0]!) === (family === 6);
      const detectorScope = cidr.source === "the rules (local-traffic detector)"
        ? detectorCIDRScope(
          cidr.cidrs,
          nodePodCIDRs(nodeObj).filter(ofFamily),
          bundle.objects.nodes.filter((n) => n.metadata.name !== nodeName).flatMap(nodePodCIDRs).filter(ofFamily),
          proxyConfig?.detectLocalMode?.value,
        )
        : "cluster";
      // The rules show the detector kube-proxy runs: one that detects by CIDR there is not overridden by an
      // interface detector in the configuration (which takes effect at kube-proxy's next start: getLocalDetectors).
      const rulesDetectByCIDR = cidr.source === "the rules (local-traffic detector)";
      const fromRules = datapath.podInterface
        ? asInterface(datapath.podInterface, "the rules (kube-proxy's local-traffic detector)", datapath.podInterfaceRule)
        : iptablesPodInterface(dp.iptables);
      // kube-proxy without a local-traffic detector (local_detector.ts noDetectorCause says why): the cluster CIDR found elsewhere decides no
      // masquerade, it only places the report's sample clients (iptables and IPVS: cluster_cidr.ts
      // iptablesWithoutLocalDetector; nftables: the table's service chains, nftables/datapath.ts noLocalDetector)
      const mode = report.proxyMode.mode;
      const noDetectorMode = cidr.source === "the rules (local-traffic detector)" || datapath.podInterface
        ? undefined
        : (mode === "iptables" || mode === "ipvs") && iptablesWithoutLocalDetector(dp.iptables)
        ? mode
        : mode === "nftables" && datapath.noLocalDetector
        ? mode
        : undefined;
      // an interface detector in the configuration is not what the rules run: they show none (or one by CIDR)
      const configured = fromRules || noDetectorMode ? undefined : configPodInterface(bundle.objects);
      const podIf = fromRules ?? (rulesDetectByCIDR ? undefined : configured);
      // the rules of this family have none (getLocalDetectors decides per IP family)
      const noDetector = noDetectorMode ? { mode: noDetectorMode, cause: noDetectorCause(proxyConfig, nodeObj, nodeName, family) } : undefined;
      if (noDetector) {
        report.notes.push(
          `no local-traffic detector in ${nodeName}'s rules: kube-proxy runs without one (${noDetector.cause.why}), so ` +
            (noDetector.mode === "iptables"
              ? `it writes no ClusterIP masquerade rule and no externalTrafficPolicy Local "pod traffic" short-circuit (pkg/proxy/iptables/proxier.go syncProxyRules): no client is masqueraded at a ClusterIP, and pods reach externalTrafficPolicy Local addresses as clients from outside do`
              : noDetector.mode === "nftables"
              ? `it writes no ClusterIP masquerade rule (ip daddr … jump mark-for-masquerade) in the service chains and no externalTrafficPolicy Local "short-circuit pod traffic" rule in the external chains (pkg/proxy/nftables/proxier.go syncProxyRules): no client is masqueraded at a ClusterIP, and pods reach externalTrafficPolicy Local addresses as clients from outside do`
              : `it masquerades ClusterIP traffic only from a Service address (KUBE-CLUSTER-IP src,dst, "Masquerade all OUTPUT traffic coming from a service ip", pkg/proxy/ipvs/proxier.go)`) +
            `; ${noDetector.cause.fix}` +
            (cidr.cidrs.length > 0 ? `. The cluster CIDR ${cidr.cidrs.join(", ")} (from ${cidr.source}) only places this report's sample clients` : ""),
        );
      } else if (cidr.cidrs.length > 0 && !podIf) {
        // (an interface detector: its note says the CIDR only places the sample clients)
        const list = cidr.cidrs.join(", ");
        report.notes.push(
          detectorScope === "node"
            ? `local-traffic detector: ${nodeName}'s pod CIDR ${list} (from the rules; detect-local-mode NodeCIDR, built from the Node's spec.podCIDRs): only this node's pods count as local, so pods of other nodes are masqueraded at ClusterIPs and not short-circuited at externalTrafficPolicy Local addresses`
            : detectorScope === "undetermined"
            ? `local-traffic detector ${list} (from the rules): it is ${nodeName}'s podCIDR, and no other Node's podCIDR or kube-proxy configuration in the bundle tells whether it stands for the cluster CIDR or for this node's pods alone: kube-proxy's --detect-local-mode (ClusterCIDR or NodeCIDR) decides whether pods of other nodes count as local`
            : `cluster CIDR ${list} (from ${cidr.source})`,
        );
      }
      const facts = readNodeFacts(capture);
      const sources = chooseSources(bundle, resolved, nodeName, family, cidr.cidrs, facts.addresses?.isLocal);
      if (detectorScope === "node") sources.localRange = `${nodeName}'s pod CIDR`;
      report.notes.push(...facts.problems);
      // the node's own addresses, for endpoints on one of them (host-network pods of this node)
      const traceContext: TraceContext = { isLocalAddress: facts.addresses?.isLocal ?? ((ip) => ip === sources.nodeIP) };
      if (rulesDetectByCIDR && configured) {
        report.notes.push(`kube-proxy's configuration (${configured.source}) names an interface detector (${configured.kind === "bridge" ? configured.name : `${configured.name}*`}), but ${nodeName}'s rules detect local traffic by CIDR (${cidr.cidrs.join(", ")}): the rules are what runs; the configuration takes effect when kube-proxy restarts`);
      }
      // the interface of the pods' gateway (a bridge CNI's cni0): null when the addresses were read and none holds it
      const podCIDRsHere = nodePodCIDRs(nodeObj);
      const gatewayCIDRs = podCIDRsHere.length > 0 ? podCIDRsHere : cidr.cidrs;
      // (no pod CIDR known at all: where the gateway is cannot be told, so it is not taken as absent)
      const gateway = facts.addresses && !facts.noInterfaces && gatewayCIDRs.length > 0
        ? podGatewayInterface(facts.addresses.addresses, gatewayCIDRs) ?? null
        : undefined;
      const ifaces = podIf ? clientInterfaces(podIf, facts.addresses?.interfaceOf(sources.nodeIP!), facts.sysctls?.bridgePorts, gateway) : undefined;
      // An interface detector (BridgeInterface / InterfaceNamePrefix: pkg/proxy/util/localdetector.go
      // NewDetectLocalByBridgeInterface / NewDetectLocalByInterfaceNamePrefix) tests the input interface, never a
      // source CIDR: the note names it, with the rule that shows it, and what the cluster CIDR is still for
      const detectorText = podIf
        ? `${podIf.kind === "bridge" ? podIf.name : `${podIf.name}*`}, from ${podIf.source}${podIf.rule ? `: ${rulesInChains([podIf.rule])} \`${podIf.rule.raw}\`` : ""}`
        : "";
      const byInterface = "kube-proxy tells pod traffic from the rest by the interface a packet arrives on, not by a CIDR";
      const placesClients = cidr.cidrs.length > 0 && !noDetector
        ? `; the cluster CIDR ${cidr.cidrs.join(", ")} (from ${cidr.source}) only places this report's sample clients`
        : "";
      if (podIf && ifaces?.bridgedOn) {
        report.notes.push(
          `local traffic is detected by input interface (${detectorText}): ${byInterface}; but this node's pods sit behind bridge ${ifaces.bridgedOn} (${ifaces.why}): a pod's routed packets arrive on ${ifaces.bridgedOn}, which the prefix does not name, so the rules take them for traffic from outside the node; pods are traced arriving on ${ifaces.bridgedOn}${placesClients}`,
        );
      } else if (podIf && ifaces) {
        report.notes.push(
          `local traffic is detected by input interface (${detectorText}): ${byInterface}; pods of this node are traced arriving on ${ifaces.pod}, other clients on ${ifaces.uplink}${
            !facts.addresses ? " (the uplink's name is assumed: the node's addresses were not collected)" : facts.noInterfaces ? " (the uplink's name is assumed: the collecting image has no ip to tell the interface of the node's address)" : ""
          }${ifaces.undetermined ? `; ${ifaces.undetermined}` : ""}${placesClients}`,
        );
      }
      report.notes.push(...sources.notes);
      // nftables or iptables mode without kube-proxy's configuration in the bundle: the node's own rules say it (set
      // nodeport-ips; the `-d IP -j KUBE-NODEPORTS` jumps), not the default nodePortAddresses would have (a configured
      // value is shown as configured, with its source)
      const ruleMode = report.proxyMode.mode === "nftables" || report.proxyMode.mode === "iptables" ? report.proxyMode.mode : undefined;
      const nodePorts = svc.type !== "NodePort" && svc.type !== "LoadBalancer"
        ? undefined
        : ruleMode && datapath.nodePortIPs && !proxyConfig?.nodePortAddresses
        ? nodePortScopeFromRules(datapath.nodePortIPs, facts.addresses?.isLocal ?? ((ip) => ip === sources.nodeIP), ruleMode)
        : nodePortScope(effectiveNodePortAddresses(proxyConfig, report.proxyMode.mode), nodeObj);
      if (nodePorts) report.notes.push(nodePorts.describe);
      /** The KUBE-SVC-/KUBE-SVL- chain each client's trace entered (iptables mode), for recentRuleDrift. */
      const serviceChainOf = new Map<ClientVerdict, string>();
      /** Entry points kube-proxy does not take on this node (a NodePort on an address nodePortAddresses leaves out). */
      const outOfScope = new Set<EntryPointReport>();
      for (const sp of svc.ports) {
        const pr: PortReport = { servicePort: sp, entryPoints: [] };
        report.ports.push(pr);
        /** What this node does about session affinity for the port, when it differs from the API (iptables, nftables). */
        let nodeAffinity: string | undefined;
        // IPVS binds every service address to the kube-ipvs0 dummy interface: they are local addresses of the node.
        const ipvsMode = report.proxyMode.mode === "ipvs";
        for (const ep of entryPoints(svcHere, sp, family, sources.nodeIP!, facts.addresses?.isLocal)) {
          if (ipvsMode) ep.dstLocal = true;
          const proto = lowerProtocol(sp.protocol);
          const entry: EntryPointReport = {
            kind: ep.kind,
            destination: formatDestination(ep.ip, ep.port, proto),
            balancing: { method: datapath.balancingMethod, shares: [] },
            clients: [],
          };
          // iptables-save and ip6tables-save are numbered each from 1: say which one an IPv6 (or dual-stack) line is in
          if (dp.iptables && (family === 6 || families.length > 1)) entry.ruleLines = family === 6 ? "ip6tables-save" : "iptables-save";
          const ipvsBal = datapath.virtualServer?.(ep.ip, ep.port, proto);
          if (ipvsBal) entry.balancing = ipvsBal;
          if (svc.sessionAffinity === "ClientIP") entry.balancing.sessionAffinity = `ClientIP, ${svc.affinityTimeoutSeconds} s`;
          // IPVS: ClientIP affinity is the virtual server's persistence (drift.ts persistenceDrift)
          if (ipvsBal?.scheduler?.unlisted && svc.sessionAffinity === "ClientIP") {
            entry.balancing.sessionAffinity = `ClientIP, ${svc.affinityTimeoutSeconds} s in the API; on the node not shown (the listing has no persistence column)`;
          } else if (ipvsBal?.scheduler && !notForKubeProxy.ignored) {
            const d = persistenceDrift(svc, sp, entry.destination, nodeName, ipvsBal.scheduler.persistentSeconds);
            if (d) {
              const held = ipvsBal.scheduler.persistentSeconds;
              entry.balancing.sessionAffinity = held === undefined ? "none on the node (the virtual server is not persistent)" : `ClientIP on the node: persistent ${held} s`;
              report.drift.push(d);
            }
          }
          // IPVS: every virtual server kube-proxy syncs has its configured scheduler (drift.ts schedulerDrift); only
          // a configuration of IPVS mode says which (one of another mode is reported as such, not per virtual server)
          const configuredScheduler = ipvsMode && proxyConfig && effectiveMode(proxyConfig).value === "ipvs" ? effectiveIpvsScheduler(proxyConfig) : undefined;
          if (configuredScheduler && ipvsBal?.scheduler && !ipvsBal.scheduler.unlisted && ipvsBal.scheduler.name !== "unknown" && !notForKubeProxy.ignored) {
            const d = schedulerDrift(sp, entry.destination, nodeName, ipvsBal.scheduler.name, configuredScheduler);
            if (d) report.drift.push(d);
          }
          // IPVS binds the Service's addresses to kube-ipvs0: a local process connecting to one gets it as its source
          // too (the local route's preferred source; ipvs/proxier.go writeIptablesRules "the service VIP being picked
          // as the source IP", KUBE-IPVS-OUT-FILTER)
          const hostClients = clientsFor(ep.kind, sources, nodeName).map((c) =>
            ipvsMode && c.kind === "host-network" && ep.kind !== "NodePort" && ep.dstLocal
              ? { ...c, src: ep.ip, description: `host-network pod or process on ${nodeName} (${ep.ip}: the kernel's source for an address on kube-ipvs0)` }
              : c
          );
          for (const c of hostClients) {
            const pkt = tracePacket(c.src, ep.ip, ep.port, proto, family, c.hook === "OUTPUT", ep.dstLocal);
            if (ep.dstLocalAssumed && !ipvsMode) pkt.dstLocalAssumed = true;
            if (ifaces) pkt.inInterface = c.hook === "OUTPUT" ? "" : c.kind === "pod-same-node" || c.kind === "hairpin" ? ifaces.pod : ifaces.uplink;
            const trace = datapath.trace(pkt, c.hook, traceContext);
            const v = verdictFromTrace(c.kind, c.description, c.src, trace);
            if (noDetector && ep.kind === "ClusterIP") sayNoLocalDetector(v, noDetector.mode, noDetector.cause.short);
            const entered = serviceChainEntered(trace);
            if (entered) serviceChainOf.set(v, entered);
            if (ipvsMode) checkIpvsConntrack(v, nodeName, resolved.endpoints, facts.sysctls, [...svc.clusterIPs, ...svc.externalIPs, ...svc.loadBalancerIngress]);
            checkReplyPath(v, c.kind === "pod-other-node" || c.kind === "external" || c.kind === "external-denied" ? "elsewhere" : "this-node", nodeName, resolved.endpoints);
            if (c.kind === "pod-same-node" || c.kind === "hairpin") checkBridge(v, nodeName, resolved.endpoints, facts.sysctls, gateway);
            if (ipvsMode && !datapath.virtualServer && v.outcome === "not-handled") {
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
            if (ep.kind === "NodePort" && nodePorts && !nodePorts.serves(ep.ip)) {
              v.caveats.push(`NodePort ${ep.port} is not served on ${ep.ip}: ${nodePorts.describe}`);
              outOfScope.add(entry);
            }
            entry.clients.push(v);
          }
          // the shares shown for the entry point: of the clients it exists for (pods for a ClusterIP, clients from
          // outside for a NodePort, LoadBalancer IP or externalIP, which externalTrafficPolicy Local sends to this
          // node's endpoints only while pods are short-circuited to all of them)
          // A client the capture shows held by a session-affinity set (nftables mode) goes to its remembered endpoint:
          // its trace is that client's, not the balancing new clients get (proxier.go writeServiceToEndpointRules:
          // `ip saddr @affinity-… goto endpoint-…` before the numgen vmap), so it never stands for the entry point.
          const primary = ep.kind === "ClusterIP" ? "pod-same-node" : "external";
          const candidates = entry.clients.filter((c) => !heldByAffinity(c));
          const reference = candidates.find((c) => c.client === primary && c.endpoints.length > 0) ??
            (candidates.some((c) => c.client === primary) && ep.kind !== "ClusterIP"
              ? undefined
              : candidates.find((c) => c.endpoints.length > 0));
          if (!ipvsBal) {
            entry.balancing.shares = reference?.endpoints.map(({ masqueraded: _m, ...e }) => e) ?? [];
            if (entry.balancing.shares.length === 0) entry.balancing.method = "none";
          }
          // iptables mode: the recent rules of the Service chain the ClusterIP's pods take (drift.ts recentRuleDrift)
          if (ep.kind === "ClusterIP" && report.proxyMode.mode === "iptables" && dp.iptables && reference && !notForKubeProxy.ignored) {
            // the chain the trace entered, not one named in the evidence: without a local-traffic detector (no
            // clusterCIDR) no rule of KUBE-SVC marks for masquerade, and the evidence names none of its rules, while
            // writeServiceToEndpointRules writes the recent rules there whatever the detector (proxier.go, v1.27+)
            const svcChain = serviceChainOf.get(reference);
            const rules = svcChain ? dp.iptables.tables.get("nat")?.chains.get(svcChain)?.rawRules ?? [] : [];
            const d = svcChain ? recentRuleDrift(svc, sp, nodeName, svcChain, rules) : undefined;
            if (d) {
              report.drift.push(d);
              // the field sits under the node: what the node does, as in IPVS mode
              nodeAffinity = nodeAffinityText(recentRuleSeconds(rules), { none: "no recent rule", held: "-m recent" });
            }
          }
          pr.entryPoints.push(entry);
        }
        // topology-aware routing and kube-proxy's fallbacks decide what this node should program (topology.ts)
        // this family's endpoints only: kube-proxy's proxier of a family reads only its addressType's slices
        const familyEndpoints = resolved.endpoints.filter((e) => isIPv6(e.address) === (family === 6));
        const topo = topologyNode(nodeName, nodeObj, familyEndpoints, proxyConfig);
        const annotations = resolved.service.metadata.annotations ?? {};
        // IPVS mode: a Local policy without an endpoint on this node gives the virtual server the cluster endpoints
        // instead ("Allow access from local PODs even if no local endpoints exist", ipvs/proxier.go syncEndpoint,
        // kubernetes#97081); CategorizeEndpoints computes those only when the port uses them (ServicePort
        // UsesClusterEndpoints: internalTrafficPolicy Cluster, or reachable from outside by a NodePort, load-balancer
        // IP or externalIP), so a ClusterIP-only port with internalTrafficPolicy Local gets none
        const usesClusterEndpoints = resolved.summary.internalTrafficPolicy !== "Local" || pr.entryPoints.some((e) => e.kind !== "ClusterIP");
        const programs = (policy: "Cluster" | "Local") => {
          const set = nodeEndpoints(familyEndpoints, sp.portKey, policy, annotations, topo);
          if (policy === "Cluster" || set.endpoints.length > 0 || report.proxyMode.mode !== "ipvs" || !usesClusterEndpoints) return set;
          const all = nodeEndpoints(familyEndpoints, sp.portKey, "Cluster", annotations, topo);
          return all.endpoints.length === 0 ? set : { ...all, why: `no endpoint on this node for a Local traffic policy: in IPVS mode kube-proxy then gives the virtual server every endpoint (ipvs/proxier.go syncEndpoint), and clients from outside, not masqueraded, get replies that bypass this node` };
        };
        const usable = programs(resolved.summary.internalTrafficPolicy);
        const topologyNote = `${sp.portKey}: endpoints this node programs: ${usable.why} (kube-proxy pkg/proxy/topology.go)`;
        if (usable.why && !report.notes.includes(topologyNote)) report.notes.push(topologyNote);
        // IPVS mode: the KUBE-* ipsets the Service's entries need (an allowed client dropped for want of a
        // KUBE-LOAD-BALANCER-SOURCE-CIDR entry is that, not another externalTrafficPolicy)
        const ipsetItems = !notForKubeProxy.ignored && report.proxyMode.mode === "ipvs" && datapath.ipsets
          ? ipsetDrift({ ...resolved, summary: svcHere }, sp, nodeName, family, sources.nodeIP!, datapath.ipsets)
          : [];
        if (!notForKubeProxy.ignored) {
          const internal = driftFor(resolved, sp, pr, nodeName, report.proxyMode.mode === "ipvs" && !datapath.ipvsTableUnread, usable);
          report.drift.push(...internal);
          // an entry point for clients from outside that no rule takes, the ClusterIP being programmed: stale rules
          const mode = report.proxyMode.mode;
          if (mode === "iptables" || mode === "nftables") report.drift.push(...unhandledEntryDrift(sp, pr, nodeName, mode, internal, (e) => !outOfScope.has(e)));
          // clients from outside follow externalTrafficPolicy alone: Cluster sends them to the cluster endpoints even
          // when internalTrafficPolicy is Local (iptables/nftables proxier.go: externalPolicyChain is the cluster
          // chain unless ExternalPolicyLocal; ipvs syncEndpoint(…, ExternalPolicyLocal()))
          const external = programs(resolved.summary.externalTrafficPolicy === "Local" ? "Local" : "Cluster");
          report.drift.push(...externalPolicyDrift(resolved, sp, pr, nodeName, external, [...internal, ...ipsetItems]));
        }
        if (!notForKubeProxy.ignored && datapath.affinitySets) {
          // nftables mode: an affinity set per endpoint for ClientIP, with the Service's timeout; none for None
          // (drift.ts affinitySetDrift)
          const sets = datapath.affinitySets(svc.namespace, svc.name, sp.protocol, sp.name);
          const forwards = pr.entryPoints.some((e) => e.clients.some((c) => c.endpoints.length > 0));
          const d = affinitySetDrift(svc, sp, nodeName, sets, forwards);
          if (d) {
            report.drift.push(d);
            nodeAffinity = nodeAffinityText([...new Set(sets.flatMap((x) => (x.timeoutSeconds !== undefined ? [x.timeoutSeconds] : [])))], { none: "no affinity set", held: "affinity sets" });
          }
          const held = sets.reduce((n, s) => n + s.clients, 0);
          if (sets.length > 0) report.notes.push(`${sp.portKey}: session affinity on ${nodeName}: ${sets.length} affinity set(s) in the dump holding ${held} client(s) as captured (a held client returns to its endpoint; --source IP traces it)`);
        }
        if (nodeAffinity) for (const e of pr.entryPoints) e.balancing.sessionAffinity = nodeAffinity;
        report.drift.push(...ipsetItems);
      }
      // ipMode Proxy ingress IPs: kube-proxy (v1.30+, where it honours ipMode) writes no rule for them; a node whose
      // rules still take one from outside has stale rules (pkg/proxy/serviceport.go newBaseServiceInfo)
      if (!notForKubeProxy.ignored && ipMode.honoured && report.proxyMode.mode !== "ipvs") {
        for (const ip of proxyIngress.filter((x) => isIPv6(x) === (family === 6))) {
          for (const sp of svc.ports) {
            const t = datapath.trace(tracePacket(sources.external, ip, sp.port, lowerProtocol(sp.protocol), family, false, false), "PREROUTING", traceContext);
            const taken = t.outcomes.find((o) => o.verdict === "dnat" || o.verdict === "drop" || o.verdict === "reject");
            if (!taken) continue;
            report.drift.push({
              portKey: sp.portKey,
              kind: "stale-on-node",
              message: `${sp.portKey}: ${nodeName} has rules for LoadBalancer ingress ${formatDestination(ip, sp.port, lowerProtocol(sp.protocol))}, which has ipMode Proxy: kube-proxy here honours ipMode and writes no rule for it, so these are stale`,
              ...(taken.decidedBy ? { evidence: [taken.decidedBy] } : taken.path.length > 0 ? { evidence: [taken.path[0]!] } : {}),
            });
          }
        }
      }
      if (!notForKubeProxy.ignored && report.proxyMode.mode === "nftables") {
        // only for a ClusterIP the node serves (forwarded, or rejected for no endpoints): a Service gone from the
        // node's rules altogether has its own drift already
        const served = (vip: string) => {
          const at = isIPv6(vip) ? `[${vip}]:` : `${vip}:`;
          return report.ports.flatMap((p) => p.entryPoints).filter((e) => e.kind === "ClusterIP" && e.destination.startsWith(at))
            .some((e) => e.clients.some((c) => c.outcome === "forwarded" || (c.outcome === "rejected" && c.reason.endsWith("no usable endpoints"))));
        };
        report.drift.push(...clusterIPSetDrift(svc, family, nodeName, sources.podSameNode ?? sources.nodeIP!, datapath, served));
      }
      // IPVS mode: kube-proxy deletes every virtual server no Service port has at each sync (ipvs/proxier.go
      // cleanLegacyService): one left on this Service's addresses means its rules are not being synced
      if (!notForKubeProxy.ignored && report.proxyMode.mode === "ipvs" && datapath.virtualServersAt) {
        const own = new Set(svc.ports.map((p) => `${lowerProtocol(p.protocol)} ${p.port}`));
        // an externalIP or load-balancer IP that is also a node address holds every Service's NodePort virtual servers
        // (ipvs/proxier.go: NodePorts on each node address but kube-ipvs0's), which no port of this Service explains
        const nodeAddress = (ip: string) =>
          (nodeObj?.status?.addresses ?? []).some((a) => a.address === ip) ||
          (facts.addresses?.isLocal(ip) === true && ![undefined, "kube-ipvs0"].includes(facts.addresses.interfaceOf(ip)));
        for (const ip of [...svcHere.clusterIPs, ...svcHere.externalIPs, ...svcHere.loadBalancerIngress].filter((x) => isIPv6(x) === (family === 6) && !nodeAddress(x))) {
          for (const vs of datapath.virtualServersAt(ip)) {
            if (own.has(`${vs.proto} ${vs.port}`)) continue;
            report.drift.push({
              portKey: `${svc.namespace}/${svc.name}`,
              kind: "stale-virtual-server",
              message: `${svc.namespace}/${svc.name}: IPVS virtual server ${formatDestination(ip, vs.port, vs.proto as "tcp" | "udp" | "sctp")} (ipvsadm line ${vs.line}) is on an address of the Service but no ServicePort has it: kube-proxy deletes such virtual servers at every sync, so ${nodeName}'s are not being synced`,
            });
          }
        }
      }
      for (const q of (options.packets ?? []).filter((x) => isIPv6(x.destination) === (family === 6))) {
        // IPVS binds service addresses to kube-ipvs0: a packet to one is delivered locally (filter INPUT, KUBE-IPVS-FILTER)
        const bound = report.proxyMode.mode === "ipvs" ? ipvsBoundAddress(datapath.ipsets, [...svc.clusterIPs, ...svc.externalIPs, ...svc.loadBalancerIngress], family) : undefined;
        const isLocalQ = bound ? (ip: string) => (facts.addresses ? facts.addresses.isLocal(ip) : ip === sources.nodeIP) || bound(ip) : facts.addresses?.isLocal;
        const podCIDRs = bundle.objects.nodes.map((n) => ({ node: n.metadata.name, cidrs: nodePodCIDRs(n) }));
        const answer = answerPacket(q, (p, h) => datapath.trace(p, h, traceContext), nodeName, sources, svc, isLocalQ, sourcePod, ifaces, {
          endpoints: resolved.endpoints,
          ...(facts.sysctls ? { sysctls: facts.sysctls } : {}),
          ...(gateway !== undefined ? { podGateway: gateway } : {}),
          ...(report.proxyMode.mode === "ipvs" ? { ipvs: true } : {}),
          ...(noDetector ? { noLocalDetector: noDetector } : {}),
          podCIDRs,
          nodeAddresses: (nodeObj?.status?.addresses ?? []).map((a) => a.address),
          otherNodeAddresses: bundle.objects.nodes.filter((n) => n.metadata.name !== nodeName).flatMap((n) => (n.status?.addresses ?? []).map((a) => ({ node: n.metadata.name, address: a.address }))),
          ...(facts.addresses ? { localAddresses: facts.addresses } : {}),
          clusterCIDRSource: cidr.source,
        });
        if (dp.iptables && (family === 6 || families.length > 1)) answer.ruleLines = family === 6 ? "ip6tables-save" : "iptables-save";
        answer.caveats.push(...dp.answerCaveats);
        answer.caveats.push(...scopeCaveats(q, svc, proxyIngress, ipMode.honoured, nodePorts, facts.addresses?.isLocal ?? ((ip) => ip === sources.nodeIP || (nodeObj?.status?.addresses ?? []).some((a) => a.address === ip)), answer.outcome));
        packets.push(answer);
      }
    }
  } catch (e) {
    // One node's malformed dump: that node gets the error (node, section, line), the other nodes are still answered.
    const why = nodeDumpError(e, current);
    if (why === undefined) throw e;
    report.error = why;
    report.ports = [];
    report.drift = [];
    packets.length = 0;
    return done();
  }
  return done();
}

/**
 * Compares the node's Cilium service table (section `cilium-services`, `cilium-dbg service list -o json`) with the
 * API (cilium_compare.ts compareCiliumServices) and adds its drift and notes to the node's report; a table that
 * cannot be read becomes a note saying so and how to collect it again. Cilium reads the GA zone label only
 * (writer.go), not nodeZone's beta fallback; without the Node object, the zone of an endpoint on the node
 * (topologyNode).
 * @throws what compareCiliumServices throws other than {@link DumpParseError}.
 */
function compareCiliumTable(resolved: ResolvedService, capture: NodeCapture, nodeName: string, nodeObj: KubeNode | undefined, report: NodeServiceReport): void {
  try {
    const cmp = compareCiliumServices(resolved, parseCiliumServiceList(capture.sections["cilium-services"]!.stdout), nodeName, topologyNode(nodeName, nodeObj, resolved.endpoints).zone);
    report.drift.push(...cmp.drift);
    report.notes.push(...cmp.notes, ...cmp.frontends.map((f) => `Cilium frontend ${f}`));
  } catch (e) {
    if (!(e instanceof DumpParseError)) throw e;
    report.notes.push(`Cilium's service table could not be read (${e.message}): nothing compared; collect it again with cilium-dbg service list -o json`);
  }
}

/**
 * Puts the nodes' parts together into the {@link ServiceReport}: the API side's findings, then each node's in node
 * order (the note that another datapath serves Services once), and the limits of what the bundle shows.
 * @param ex the prepared question.
 * @param bundle the bundle (which nodes were captured, and with which sections).
 * @param nodes each node's part, in report order ({@link explainServiceNode}).
 * @returns the report, as {@link explainService} returns it.
 */
export function finishServiceExplain(ex: ServiceExplain, bundle: Bundle, nodes: NodeExplained[]): ServiceReport {
  const { options, resolved } = ex;
  const svc = resolved.summary;
  const nodeNames = nodes.map((n) => n.report.node);
  const udp = svc.ports.filter((p) => p.protocol === "UDP").map((p) => `${p.port}/UDP`);
  // Nodes whose Services another agent serves (Cilium: its own BPF connection tracking and socket-LB state, which
  // kube-proxy's conntrack cleanup does not touch; service_datapath.ts): kube-proxy's UDP cleanup is said only of the
  // nodes kube-proxy serves, and the agents' state is named for theirs.
  const agentNodes = nodes.filter((n) => n.report.proxyMode.mode === "cilium" || n.report.proxyMode.mode === "other");
  const kubeProxyNodes = nodes.length - agentNodes.length;
  const ciliumNodes = agentNodes.filter((n) => n.report.proxyMode.mode === "cilium").length;
  const limits = [
    (kubeProxyNodes > 0 || nodes.length === 0 ? "conntrack state" : "connection state") +
    ": connections that already exist keep the endpoint (and SNAT) they got when they started" +
    // pkg/proxy/conntrack/cleanup.go CleanStaleEntries, after every sync
    (udp.length > 0 && (kubeProxyNodes > 0 || nodes.length === 0)
      ? `; for UDP (${udp.join(", ")}) kube-proxy deletes the entries of endpoints it stops using, and of a Service's addresses when it gains endpoints, so those flows are balanced again${agentNodes.length > 0 ? " (on the nodes kube-proxy serves)" : ""}`
      : "") +
    (ciliumNodes > 0
      ? `; ${agentNodes.length === nodes.length ? "" : "on the nodes Cilium serves, "}Cilium keeps that state in its own BPF maps (connection tracking, and the socket-LB's for pod clients: cilium-dbg bpf ct list global), not in the kernel conntrack entries kube-proxy cleans`
      : agentNodes.length > 0
      ? `; on the nodes another agent serves, that state is the agent's own`
      : ""),
  ];
  const families = new Set(svc.clusterIPs.map((ip) => (isIPv6(ip) ? 6 : 4)));
  const withoutSysctls = (options.nodes ?? bundle.nodes.map((n) => n.name)).filter((n) => !bundle.nodes.find((c) => c.name === n)?.sections.sysctls);
  if (withoutSysctls.length > 0) {
    // IPVS mode masquerades only tracked connections: net.ipv4.vs.conntrack (ipvs/conntrack_sysctl.ts)
    const ipvsWithout = withoutSysctls.filter((n) => nodes.find((x) => x.report.node === n)?.report.proxyMode.mode === "ipvs");
    limits.push(
      `sysctls of ${withoutSysctls.length === 1 ? `node ${withoutSysctls[0]}` : `${withoutSysctls.length} nodes`} (not collected): with a bridge CNI, ${families.has(6) ? (families.has(4) ? "net.bridge.bridge-nf-call-iptables (IPv4) and bridge-nf-call-ip6tables (IPv6) decide" : "net.bridge.bridge-nf-call-ip6tables decides") : "net.bridge.bridge-nf-call-iptables decides"} whether replies between pods on the same bridge are un-NATed, and a bridge port's hairpin_mode whether a pod reaches itself through its Service` +
        (ipvsWithout.length > 0
          ? `; in IPVS mode${ipvsWithout.length === withoutSysctls.length ? "" : ` (${ipvsWithout.join(", ")})`}, net.ipv4.vs.conntrack decides whether the clients shown masqueraded are: with 0, IPVS untracks its packets and KUBE-POSTROUTING's MASQUERADE never SNATs them (kube-proxy sets it to 1 at start)`
          : "") +
        "; the answers that depend on them say so",
    );
  }
  // Nodes whose Node object the bundle lacks (e.g. a namespace-scoped Role could not read nodes): the endpoints' nodes
  // and the analysed ones. An endpoint's zone then comes from its EndpointSlice (`endpoint.zone`) when set; the analysed
  // node's kube-proxy version (status.nodeInfo) and zone label are not known (topology.ts topologyNode)
  const known = new Set(bundle.objects.nodes.map((n) => n.metadata.name));
  const analysed = new Set(nodeNames);
  const unknownNodes = [...new Set([...resolved.endpoints.map((e) => e.node), ...nodeNames].filter((n): n is string => n !== undefined && !known.has(n)))].sort();
  if (unknownNodes.length > 0) {
    const there = resolved.endpoints.filter((e) => e.node !== undefined && unknownNodes.includes(e.node));
    const noZone = there.filter((e) => e.zoneSource !== "endpoint" || !e.zone);
    const zones = there.length === 0
      ? []
      : noZone.length === 0
      ? [`the endpoints there take their zone from their EndpointSlice (endpoint.zone)`]
      : [`the zone${noZone.length === 1 ? "" : "s"} of ${noZone.map((e) => e.address).join(", ")} (no endpoint.zone in ${noZone.length === 1 ? "its" : "their"} EndpointSlice: shown as no zone)`];
    const analysedHere = unknownNodes.filter((n) => analysed.has(n));
    const own = analysedHere.length === 0
      ? []
      : [`for ${analysedHere.join(", ")}, analysed here: kube-proxy's version (status.nodeInfo; the topology answers say which version they rest on) and the topology.kubernetes.io/zone label (the zone of an endpoint on it stands for it, when one names one)`];
    limits.push(
      `the Node object${unknownNodes.length === 1 ? "" : "s"} of ${unknownNodes.join(", ")} (not in the bundle; reading them needs get on nodes, cluster-scoped): ` +
        [...zones, unknownNodes.length === 1 ? "that node's address and readiness" : "those nodes' addresses and readiness", ...own].join("; "),
    );
  }
  if (svc.sessionAffinity === "ClientIP") {
    limits.push(`session affinity: a client seen in the last ${svc.affinityTimeoutSeconds} s returns to its previous endpoint (in iptables and IPVS mode that table is kernel state, not in a dump; in nftables mode the affinity sets are, as captured); shares are for new clients`);
  }
  // ipMode Proxy: the finding says where kube-proxy does not honour it (there the IP is a VIP whose missing rule is
  // drift), so that it never calls "expected" what a node's drift calls stale (proxy_scope.ts ipModeHonoured)
  const proxyIngress = ex.ctx.proxyIngress;
  const notHonoured = proxyIngress.length === 0 ? [] : nodes
    .filter((n) => n.report.proxyMode.mode !== "cilium" && n.report.proxyMode.mode !== "other")
    .flatMap((n) => {
      const h = ipModeHonoured(bundle.objects.nodes.find((o) => o.metadata.name === n.report.node), ex.ctx.proxyConfig);
      return h.honoured ? [] : [{ node: n.report.node, why: h.why }];
    });
  const findings: Finding[] = ex.findings.map((f) => f.code === "LoadBalancerIPModeProxy" && notHonoured.length > 0 ? proxyModeIngressFinding(proxyIngress, svc, notHonoured) : f);
  const sourcePod = ex.ctx.sourcePod;
  if (sourcePod && !nodeNames.includes(sourcePod.node)) {
    findings.push({
      severity: "warning",
      code: "ClientNodeNotTraced",
      message: `${[...new Set(options.packets!.map((q) => q.source))].join(", ")} is pod ${sourcePod.name} on node ${sourcePod.node}, whose rules ${bundle.nodes.some((n) => n.name === sourcePod.node) ? "were not asked for" : "are not in the bundle"}: the packet is first handled there; this report's answers trace it on other nodes`,
    });
  }
  for (const n of nodes) {
    for (const f of n.findings) if (f.code !== "NotKubeProxyDatapath" || !findings.some((x) => x.code === "NotKubeProxyDatapath")) findings.push(f);
  }
  const reports = nodes.map((n) => n.report);
  const packets = nodes.flatMap((n) => n.packets);
  // caveats naming another node of a packet's path: a pointer to its answer here, --node, or "not collected"
  resolveNodeRefs(packets, new Set(bundle.nodes.map((n) => n.name)));
  // IPVS mode is deprecated (v1.35): said once per report.
  if (reports.some((r) => r.proxyMode.mode === "ipvs")) findings.push(IPVS_DEPRECATION);
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
  if (options.packets) out.packet = packets;
  // what the collection could not read reaches the report, not only stderr (the CLI prints them there too)
  if (bundle.warnings.length > 0) out.warnings = [...bundle.warnings];
  return out;
}

/**
 * What a node's report says when reading its dump failed part-way through the analysis (a rule on the path that cannot
 * be tokenised, a loop, a trace too large), naming the section and the line; undefined for any other error (a bug).
 * @param e the error thrown while analysing the node.
 * @param family the address family being analysed (4 or 6), which decides the section name of an iptables dump.
 */
export function nodeDumpError(e: unknown, family: 4 | 6): string | undefined {
  if (e instanceof DumpParseError) {
    const section = e.format === "iptables-save" && family === 6 ? "ip6tables-save" : e.format;
    return `${section} line ${e.line}: ${e.message.replace(/^\S+ line \d+: /, "")}`;
  }
  if (e instanceof Error && (e.name === "TraceError" || e.name === "NftTraceError")) return e.message;
  return undefined;
}

/**
 * nftables mode: every ClusterIP is in the set `cluster-ips` (pkg/proxy/nftables/proxier.go `clusterIPs.ensureElem`),
 * which `cluster-ips-check` reads to reject traffic to a port the Service does not serve ("Reject traffic to invalid
 * ports of ClusterIPs"); a ClusterIP missing from it falls to "Drop traffic to unallocated ClusterIPs", so such
 * clients time out instead of being refused. Checked by tracing a packet to a port the Service does not have.
 * @returns a drift item of kind `ipset-missing` (a named set lacks an element), or none.
 */
/**
 * The first of kube-proxy's Service chains (`KUBE-SVC-…`, or `KUBE-SVL-…` for internalTrafficPolicy Local;
 * pkg/proxy/iptables/proxier.go servicePortChainName / servicePortPolicyLocalChainName) a trace entered: the target of
 * a jump on its path, or the chain of a rule it took. Undefined for other datapaths and for a packet no Service chain
 * took.
 */
function serviceChainEntered(trace: TraceResult): string | undefined {
  for (const o of trace.outcomes) {
    for (const r of o.path) {
      const jump = / -[jg] (KUBE-SV[CL]-[A-Z0-9]+)(?:\s|$)/.exec(r.raw)?.[1];
      if (jump) return jump;
      if (/^KUBE-SV[CL]-/.test(r.chain)) return r.chain;
    }
  }
  return undefined;
}

function clusterIPSetDrift(svc: ServiceSummary, family: 4 | 6, node: string, src: string, datapath: Datapath, served: (vip: string) => boolean): DriftItem[] {
  const out: DriftItem[] = [];
  const used = new Set(svc.ports.map((p) => p.port));
  const port = [65535, 65534, 65533].find((p) => !used.has(p))!;
  for (const vip of svc.clusterIPs.filter((ip) => isIPv6(ip) === (family === 6) && served(ip))) {
    const t = datapath.trace(tracePacket(src, vip, port, "tcp", family, false, false), "PREROUTING");
    const dropped = t.outcomes.find((o) => o.verdict === "drop" && o.decidedBy?.chain === "cluster-ips-check");
    if (!dropped) continue;
    out.push({
      portKey: `${svc.namespace}/${svc.name}`,
      kind: "ipset-missing",
      message: `${svc.namespace}/${svc.name}: set cluster-ips on ${node} lacks ClusterIP ${vip}: traffic to a port of it the Service does not serve is dropped ("Drop traffic to unallocated ClusterIPs") instead of rejected, so such clients time out instead of being refused (stale rules)`,
      evidence: [dropped.decidedBy!],
    });
  }
  return out;
}

/**
 * externalTrafficPolicy Local on a LoadBalancer: the load balancer probes `healthCheckNodePort` on each node, and
 * kube-proxy answers 200 while the node has ready endpoints of the Service, 503 otherwise (pkg/proxy/healthcheck
 * service_health.go, fed with the endpoints map's LocalReadyEndpoints), so the load balancer sends clients only to
 * nodes with one. The endpoints map holds an endpoint only under a port of its slice (with a number); it is local
 * when the slice names this node (`nodeName`), ready when its `ready` condition is unset or true. Undefined for
 * other Services.
 */
function healthCheckNote(svc: ServiceSummary, resolved: ResolvedService, node: string): string | undefined {
  if (svc.type !== "LoadBalancer" || svc.externalTrafficPolicy !== "Local" || !svc.healthCheckNodePort) return undefined;
  const ready = new Set<string>();
  for (const slice of resolved.slices) {
    if (slice.addressType === "FQDN" || !(slice.ports ?? []).some((p) => typeof p.port === "number" && p.port > 0)) continue;
    for (const ep of slice.endpoints ?? []) {
      if (ep.nodeName === node && (ep.conditions?.ready ?? true) && ep.addresses[0] !== undefined) ready.add(ep.addresses[0]);
    }
  }
  const local = ready.size;
  return `healthCheckNodePort ${svc.healthCheckNodePort}: kube-proxy answers the load balancer's health check on ${node} with ${
    local > 0 ? `200 while kube-proxy is healthy (${local} ready local endpoint(s)), so the load balancer sends clients to this node` : "503 (no ready local endpoint), so the load balancer sends no client to this node"
  } (externalTrafficPolicy Local; pkg/proxy/healthcheck)`;
}
