/**
 * Drift between the API and Cilium's service table on one node (issue 15): where Cilium replaces kube-proxy, its
 * agent's table (`cilium-dbg service list -o json`, parsed by src/datapath/cilium_services.ts) is what the node
 * balances with, so it is compared with the Service and its EndpointSlices as kube-proxy's rules are elsewhere.
 *
 * Expected, per ServicePort and per frontend Cilium programs for it (ClusterIP per cluster IP, NodePort per node
 * address, ExternalIPs, LoadBalancer per ingress IP whose ipMode is not Proxy): the endpoints that are ready (else, when none is, the
 * serving-terminating ones, which Cilium keeps as `terminating` backends), with the endpoint port of that ServicePort;
 * restricted to this node's endpoints under a Local traffic policy (`intTrafficPolicy` for ClusterIP, `extTrafficPolicy`
 * for the others: Cilium lists only the node's local backends then). Compared with the frontend's `active` backends:
 * a ready endpoint that is no active backend is `missing-on-node`; an active backend the API does not list is
 * `stale-on-node`; a frontend Cilium does not have is `service-missing` (the Service not programmed: its ClusterIP
 * frontend of that port missing), or `entry-missing` (a NodePort, LoadBalancer or ExternalIPs frontend missing while
 * that ClusterIP frontend is there). EndpointSlice zone hints are honoured by
 * Cilium only with `--enable-service-topology`, which a dump does not show, not at all by 1.14–1.17 for a Service
 * with a Local traffic policy (pkg/k8s/service_cache.go filterEndpoints: such backends absent are `unverifiable`,
 * the agent's version decides), and then all or none per frontend
 * (pkg/loadbalancer/writer/writer.go DefaultSelectBackends): only when the local Node has a
 * `topology.kubernetes.io/zone` label (`node.Labels[corev1.LabelTopologyZone]`; the beta label is not read), every
 * backend of the frontend has a zone hint (`missingHints` → no filtering) and one is hinted for this zone. Then absent
 * backends of other zones are not called drift, and a note says which setting decides; otherwise Cilium filters
 * nothing and every backend is expected.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { CiliumBackend, CiliumService } from "../datapath/cilium_services.ts";
import { isIPv6 } from "../model/ip.ts";
import { proxyModeIngressIPs } from "./proxy_scope.ts";
import type { CiliumFrontendRef, DriftItem, EndpointInfo, ServicePortSummary } from "./report.ts";
import type { ResolvedService } from "./resolve.ts";

/** The comparison for one node. */
export interface CiliumComparison {
  drift: DriftItem[];
  notes: string[];
  /** The frontends of this Service in Cilium's table: `ClusterIP 10.96.0.10:53/UDP → 10.0.0.220:53, 10.0.1.184:53`. */
  frontends: string[];
}

const hostPort = (ip: string, port: number) => (ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`);
/**
 * Frontend protocols that stand for every protocol: `ANY` (an agent that writes none), and `NONE`, which Cilium 1.14–1.16
 * gives a frontend restored from its BPF maps after an agent restart (pkg/maps/lbmap svcFrontend:
 * `loadbalancer.NONE`; pkg/service/service.go createSVCInfoIfNotExist keeps that frontend on the next upsert) and
 * 1.17–1.18 every frontend when --bpf-lb-proto-diff=false (cilium/cilium#33434).
 */
const ANY_PROTOCOL = new Set(["ANY", "NONE"]);
const protoMatch = (a: string, b: string) => ANY_PROTOCOL.has(a) || ANY_PROTOCOL.has(b) || a === b;

function backendText(b: CiliumBackend): string {
  return hostPort(b.ip, b.port) + (b.state !== "active" ? ` (${b.state})` : "");
}

/**
 * Compares one node's Cilium service table with the API.
 * @param resolved the Service, its endpoints and slices.
 * @param table the node's parsed `cilium-dbg service list -o json`.
 * @param node the node's name.
 * @param nodeZone the node's `topology.kubernetes.io/zone` label (the GA label only: Cilium reads no other), else the
 *   zone of an EndpointSlice endpoint on it (the controller copies that label), when known (for topology hints).
 */
export function compareCiliumServices(resolved: ResolvedService, table: readonly CiliumService[], node: string, nodeZone?: string): CiliumComparison {
  const s = resolved.summary;
  const named = table.some((e) => e.name !== undefined);
  const addresses = new Set([...s.clusterIPs, ...s.externalIPs, ...s.loadBalancerIngress]);
  // A CiliumLocalRedirectPolicy's frontend on a ClusterIP of the Service: before Cilium 1.18 the redirect manager
  // upserts it under the policy's name (pkg/redirectpolicy/manager.go upsertService, `<policy>-local-redirect`), which
  // then overrides the ClusterIP entry (pkg/service/service.go createSVCInfoIfNotExist); 1.18 keeps the Service's name.
  const clusterIPs = new Set(s.clusterIPs);
  const mine = table.filter((e) =>
    named ? (e.namespace === s.namespace && e.name === s.name) || (e.type === "LocalRedirect" && clusterIPs.has(e.frontend.ip)) : addresses.has(e.frontend.ip)
  );
  // A ClusterMesh global Service (annotation service.cilium.io/global, io.cilium/global-service before 1.12): the agent
  // merges the endpoints of the same Service in other clusters into its backends (pkg/k8s/service_cache.go, external
  // endpoints): backends this cluster's API does not list are expected there.
  const annotations = resolved.service.metadata.annotations ?? {};
  const global = annotations["service.cilium.io/global"] === "true" || annotations["io.cilium/global-service"] === "true";
  const out: CiliumComparison = { drift: [], notes: [], frontends: [] };
  out.notes.push(`compared with Cilium's service table on this node (${mine.length} frontend(s) of ${s.namespace}/${s.name}, ${table.length} in all)`);
  const hinted = resolved.endpoints.some((e) => (e.hintsForZones ?? []).length > 0);
  /**
   * Whether Cilium, with --enable-service-topology, filters these backends by zone (writer.go DefaultSelectBackends):
   * the node's zone known, every backend hinted, one hinted for this zone; else why not.
   */
  const zoneFilter = (pool: readonly EndpointInfo[]): { filters: boolean; why: string } => {
    if (!nodeZone) return { filters: false, why: `${node} has no topology.kubernetes.io/zone label in the bundle (Cilium reads only that label, not the beta failure-domain.beta.kubernetes.io/zone)` };
    const unhinted = pool.filter((e) => (e.hintsForZones ?? []).length === 0);
    if (unhinted.length > 0) return { filters: false, why: `${unhinted.map((e) => e.address).join(", ")} ha${unhinted.length > 1 ? "ve" : "s"} no zone hint, and Cilium filters only when every backend has one` };
    if (!pool.some((e) => (e.hintsForZones ?? []).includes(nodeZone))) return { filters: false, why: `no backend is hinted for zone ${nodeZone}` };
    return { filters: true, why: "" };
  };
  // the backends Cilium holds: ready endpoints and serving-terminating ones
  const backendPool = (list: readonly EndpointInfo[]) => list.filter((e) => e.ready || (e.serving && e.terminating));
  // Cilium 1.14–1.17 (pkg/k8s/service_cache.go filterEndpoints) ignores the hints of a Service with either traffic
  // policy Local ("Topology Aware Hints are not used when either externalTrafficPolicy or internalTrafficPolicy is set
  // to Local"); 1.18+ selects per frontend in writer.go DefaultSelectBackends, without that exception. The agent's
  // version is not in the bundle: a backend absent there only by its hint is then neither hidden nor called drift.
  const localPolicy = s.externalTrafficPolicy === "Local" || s.internalTrafficPolicy === "Local";
  if (hinted) {
    const f = zoneFilter(backendPool(resolved.endpoints));
    out.notes.push(
      !f.filters
        ? `the EndpointSlices carry zone hints, but Cilium does not filter by them here whatever --enable-service-topology says: ${f.why} (pkg/loadbalancer/writer DefaultSelectBackends), so every backend is expected`
        : localPolicy
        ? `the EndpointSlices carry zone hints for every backend, and the Service has a Local traffic policy: Cilium 1.14–1.17 then ignores the hints (pkg/k8s/service_cache.go filterEndpoints), so every backend is expected; 1.18+ follows them with --enable-service-topology (pkg/loadbalancer/writer DefaultSelectBackends). A backend hinted for another zone than ${nodeZone} that is absent is listed as unverifiable: the agent's version (cilium-dbg version) and that setting decide`
        : `the EndpointSlices carry zone hints for every backend: Cilium follows them only with --enable-service-topology (a setting of the agent, not in the dump), so backends hinted for other zones than ${nodeZone} may be absent and are not called drift`,
    );
  }
  for (const e of mine) {
    const scope = e.frontend.scope === "internal" ? " (internal scope)" : "";
    out.frontends.push(`${e.type || "?"} ${hostPort(e.frontend.ip, e.frontend.port)}/${e.frontend.protocol}${scope} → ${e.backends.map(backendText).join(", ") || "no backend"}`);
  }

  // A frontend's backends are of its own IP family only (writer.go DefaultSelectBackends); under a Local policy Cilium
  // keeps the backends on this node and those without a node name (writer.go: `len(be.NodeName) != 0 && be.NodeName
  // != w.nodeName` is skipped; pkg/service/service.go filterBackends before 1.18).
  const expectedFor = (sp: ServicePortSummary, local: boolean, v6: boolean): Map<string, EndpointInfo> => {
    const withPort = resolved.endpoints.filter((ep) => ep.ports.some((p) => p.portKey === sp.portKey) && isIPv6(ep.address) === v6);
    const pool = local ? withPort.filter((ep) => ep.node === undefined || ep.node === "" || ep.node === node) : withPort;
    // Cilium marks a backend terminating whenever the endpoint's terminating condition is true, ready or not (a Service
    // with publishNotReadyAddresses has ready and terminating endpoints; pkg/k8s/endpoints.go ParseEndpointSliceV1):
    // active backends are the ready endpoints that are not terminating, else the terminating ones
    const ready = pool.filter((ep) => ep.ready && !ep.terminating);
    const chosen = ready.length > 0 ? ready : pool.filter((ep) => ep.serving && ep.terminating);
    const m = new Map<string, EndpointInfo>();
    for (const ep of chosen) {
      const p = ep.ports.find((x) => x.portKey === sp.portKey)!;
      m.set(hostPort(ep.address, p.port), ep);
    }
    return m;
  };

  // A frontend the table lacks. ClusterIP frontends are always programmed (unless service.cilium.io/type says
  // otherwise, handled before); NodePort and LoadBalancer ones only with the agent's NodePort support
  // (option.Config.EnableNodePort: enable-node-port / nodePort.enabled, flags removed in 1.19), ExternalIPs ones with
  // enable-external-ips too (pkg/k8s/service.go ParseService; NewService keeps external and LoadBalancer IPs only with
  // EnableNodePort); kubeProxyReplacement=true turns them on
  // (initKubeProxyReplacementOptions). Those settings are not in the bundle: when the table shows a frontend whose
  // type needs the same settings (a NodePort frontend proves enable-node-port, which LoadBalancer frontends need too,
  // and the reverse; only an ExternalIPs frontend proves enable-external-ips) the setting is on and the frontend is
  // missing; else the setting decides.
  const typesInTable = new Set(table.map((e) => e.type));
  /** The frontend types whose presence proves the settings `type` needs are on. */
  const provenBy = (type: CiliumFrontendRef["type"]): CiliumFrontendRef["type"][] =>
    type === "NodePort" || type === "LoadBalancer" ? ["NodePort", "LoadBalancer"] : [type];
  const missingFrontend = (sp: ServicePortSummary, type: CiliumFrontendRef["type"], kind: string, frontend: CiliumFrontendRef, wantText: string): DriftItem => {
    const head = `Cilium's table has no ${kind} frontend ${wantText} for ${sp.portKey}`;
    const proof = typesInTable.has(type) ? type : provenBy(type).find((t) => typesInTable.has(t));
    if (type === "ClusterIP" || proof) {
      const why = type === "ClusterIP"
        ? "(no service.cilium.io/type annotation restricts it)"
        : proof === type
        ? `(it programs ${type} frontends: its table has some)`
        : `(enable-node-port is on: its table has ${proof} frontends, which Cilium programs only under that setting, as it does ${type} ones: pkg/k8s/service.go ParseService, NewService)`;
      // one entry point of a Service whose ClusterIP frontend for this port is there: `entry-missing`, as kube-proxy's
      // (drift.ts unhandledEntryDrift); the Service's ClusterIP frontend missing too, or this frontend being the
      // ClusterIP: the Service is not programmed, `service-missing`
      const entryOnly = type !== "ClusterIP" && mine.some((e) =>
        (e.type === "ClusterIP" || e.type === "LocalRedirect") && clusterIPs.has(e.frontend.ip) && e.frontend.port === sp.port &&
        (protoMatch(e.frontend.protocol, sp.protocol) || protoDiff !== "yes")
      );
      return { portKey: sp.portKey, kind: entryOnly ? "entry-missing" : "service-missing", frontend, message: `${head}: the agent has not programmed it ${why}; cilium-dbg service list; its logs` };
    }
    const setting = type === "ExternalIPs" ? "enable-external-ips (externalIPs.enabled) and enable-node-port (nodePort.enabled)" : "enable-node-port (nodePort.enabled)";
    return {
      portKey: sp.portKey,
      kind: "unverifiable",
      frontend,
      message: `${head}, nor any ${provenBy(type).join(" or ")} frontend at all: Cilium programs them only when ${setting} is on (kubeProxyReplacement=true turns it on), a setting of the agent that the bundle does not hold ` +
        `(kubectl -n kube-system get configmap cilium-config; cilium-dbg status --verbose): off, the frontend is not Cilium's (kube-proxy's, or nobody's); on, the agent has not programmed it`,
    };
  };

  const compare = (sp: ServicePortSummary, type: CiliumFrontendRef["type"], scope: "external" | "internal", fe: CiliumService | undefined, wantText: string, local: boolean) => {
    const kind = scope === "internal" ? `${type} (internal scope)` : type;
    // which frontend each item is about, for scripts (the message says it in words)
    const frontend: CiliumFrontendRef = { type, address: wantText, ...(scope === "internal" ? { scope } : {}) };
    if (!fe) {
      out.drift.push(missingFrontend(sp, type, kind, frontend, wantText));
      return;
    }
    const expected = expectedFor(sp, local, isIPv6(fe.frontend.ip));
    const active = new Map(fe.backends.filter((b) => b.state === "active").map((b) => [hostPort(b.ip, b.port), b] as const));
    const all = new Set(fe.backends.map((b) => hostPort(b.ip, b.port)));
    const anyReady = [...expected.values()].some((ep) => ep.ready && !ep.terminating);
    // all or none for this frontend: the backends it could hold (its family; the node's own under a Local policy)
    const v6 = isIPv6(fe.frontend.ip);
    const candidates = backendPool(resolved.endpoints.filter((ep) => ep.ports.some((p) => p.portKey === sp.portKey) && isIPv6(ep.address) === v6 && (!local || ep.node === undefined || ep.node === "" || ep.node === node)));
    const filters = hinted && zoneFilter(candidates).filters;
    for (const [addr, ep] of expected) {
      const present = anyReady ? active.has(addr) : all.has(addr);
      if (present) continue;
      if (filters && !(ep.hintsForZones ?? []).includes(nodeZone!)) {
        if (localPolicy) {
          out.drift.push({
            portKey: sp.portKey,
            kind: "unverifiable",
            endpoint: addr,
            frontend,
            message: `${addr}${ep.pod ? ` (pod ${ep.pod})` : ""} is ready in the API but no active backend of Cilium's ${kind} frontend ${wantText}: drift on Cilium 1.14–1.17, which ignores zone hints under a Local traffic policy (pkg/k8s/service_cache.go filterEndpoints); expected on 1.18+ with --enable-service-topology, as it is hinted for ${(ep.hintsForZones ?? []).join(", ")}, not ${nodeZone} (cilium-dbg version decides)`,
          });
        }
        continue;
      }
      out.drift.push({
        portKey: sp.portKey,
        kind: "missing-on-node",
        endpoint: addr,
        frontend,
        message: `${addr}${ep.pod ? ` (pod ${ep.pod})` : ""} is ${ep.ready && !ep.terminating ? "ready" : "serving-terminating"} in the API but ${all.has(addr) ? `not active (${fe.backends.find((b) => hostPort(b.ip, b.port) === addr)!.state})` : "no backend"} of Cilium's ${kind} frontend ${wantText}`,
      });
    }
    const apiAll = new Set(resolved.endpoints.flatMap((ep) => ep.ports.filter((p) => p.portKey === sp.portKey).map((p) => hostPort(ep.address, p.port))));
    const remote: string[] = [];
    for (const [addr] of active) {
      if (expected.has(addr)) continue;
      if (global && !apiAll.has(addr)) {
        remote.push(addr);
        continue;
      }
      const why = apiAll.has(addr) ? "the API has it but not as a ready endpoint for this node's traffic policy" : "the API does not list it";
      out.drift.push({ portKey: sp.portKey, kind: "stale-on-node", endpoint: addr, frontend, message: `Cilium's ${kind} frontend ${wantText} still balances to ${addr}: ${why}` });
    }
    if (remote.length > 0) {
      out.notes.push(`${kind} frontend ${wantText} also balances to ${remote.join(", ")}, which this cluster's API does not list: the Service is a ClusterMesh global Service (service.cilium.io/global), whose backends include the other clusters' endpoints, so they are not called stale`);
    }
  };

  // Whether the agent keys frontends by protocol. Before Cilium 1.17 (and with --bpf-lb-proto-diff=false before 1.19)
  // a frontend is its address, port and scope only (pkg/loadbalancer/loadbalancer.go L3n4Addr.Hash: "proto is omitted
  // for now"): 53/UDP and 53/TCP of kube-dns are one entry, listed with the protocol of whichever port came first (or
  // NONE), and the datapath serves both protocols there. 1.17+ by default lists one frontend per protocol. A table shows
  // which: a NONE frontend (no protocol kept), or the same address, port and scope listed with two protocols.
  const scopeOf = (e: CiliumService) => (e.frontend.scope === "internal" ? "internal" : "external");
  const protocolsAt = new Map<string, Set<string>>();
  for (const e of table) {
    if (ANY_PROTOCOL.has(e.frontend.protocol)) continue;
    const k = `${e.type}|${e.frontend.ip}|${e.frontend.port}|${scopeOf(e)}`;
    protocolsAt.set(k, (protocolsAt.get(k) ?? new Set()).add(e.frontend.protocol));
  }
  const protoDiff = table.some((e) => e.frontend.protocol === "NONE") ? "no" : [...protocolsAt.values()].some((p) => p.size > 1) ? "yes" : "unknown";
  // service.cilium.io/type: Cilium programs only the frontends of that type (ClusterIP, NodePort or LoadBalancer; any
  // other value is ignored with a warning), pkg/k8s/service.go NewSvcExposureType / CanExpose in ParseService;
  // externalIPs are not restricted by it. An agent that lists such a frontend anyway (one older than the annotation)
  // is compared.
  const exposure = annotations["service.cilium.io/type"];
  const exposed = exposure === "ClusterIP" || exposure === "NodePort" || exposure === "LoadBalancer" ? exposure : undefined;
  const exposureNotes = new Set<string>();
  /** Whether the annotation keeps Cilium from programming frontends of this type (and the table has none here). */
  const notExposed = (type: "ClusterIP" | "NodePort" | "LoadBalancer", ip: string | undefined, port: number, what: string): boolean => {
    if (exposed === undefined || exposed === type) return false;
    if (mine.some((e) => e.type === type && (ip === undefined || e.frontend.ip === ip) && e.frontend.port === port)) return false;
    exposureNotes.add(`the Service's annotation service.cilium.io/type=${exposed} has Cilium program only its ${exposed} frontends (pkg/k8s/service.go CanExpose): ${what}, not programmed, is not drift`);
    return true;
  };
  const sharedNotes = new Set<string>();
  const proxyIngress = new Set(proxyModeIngressIPs(resolved.service));
  const proxyNotes = new Set<string>();
  for (const sp of s.ports) {
    // External scope unless said otherwise: with different external and internal traffic policies Cilium lists each
    // NodePort and LoadBalancer frontend twice, `scope: internal` holding the backends of the internal policy
    // (the service reflector's twoScopes; writer.go shouldUseLocalBackends).
    const find = (type: string, ip: string | undefined, port: number, scope = "external", v6?: boolean) => {
      const at = (e: CiliumService) =>
        e.type === type && (ip === undefined || e.frontend.ip === ip) && (v6 === undefined || isIPv6(e.frontend.ip) === v6) && e.frontend.port === port && scopeOf(e) === scope;
      const own = mine.find((e) => at(e) && protoMatch(e.frontend.protocol, sp.protocol));
      if (own || protoDiff === "yes") return own;
      // an agent that does not tell protocols apart: the one entry of this address and port serves this protocol too
      const shared = mine.find(at);
      if (shared) {
        const fe = `${hostPort(shared.frontend.ip, shared.frontend.port)}/${shared.frontend.protocol}`;
        if (protoDiff === "no") {
          sharedNotes.add(`${type} frontend ${fe} stands for every protocol of that address and port (${sp.portKey} too): this agent keeps no protocol in its frontends (a NONE frontend: Cilium before 1.17, or --bpf-lb-proto-diff=false), and its datapath serves them all there`);
        } else if (type === "ClusterIP" || type === "NodePort" || type === "LoadBalancer" || type === "ExternalIPs") {
          // the table does not tell which (no NONE frontend, no address and port listed with two protocols): the
          // entry serves this protocol on an agent before 1.17 or with --bpf-lb-proto-diff=false; on 1.17+ with the
          // default bpf-lb-proto-diff=true (cilium/cilium#33434) this protocol's frontend is missing. The agent's
          // version and setting decide, which the bundle does not hold: an unverifiable item, compared through the
          // shared entry meanwhile (its backends are the same Service's)
          const want = `${ip === undefined ? (v6 ? "[::]" : "*") + `:${port}` : hostPort(ip, port)}/${sp.protocol}`;
          out.drift.push({
            portKey: sp.portKey,
            kind: "unverifiable",
            frontend: { type, address: want, ...(scope === "internal" ? { scope: "internal" as const } : {}) },
            message: `Cilium's table has no ${type}${scope === "internal" ? " (internal scope)" : ""} frontend ${want} for ${sp.portKey}, only ${fe} of the same address and port: an agent before Cilium 1.17, or one with --bpf-lb-proto-diff=false, keys a frontend by address and port only (pkg/loadbalancer L3n4Addr.Hash) and serves ${sp.protocol} there too; an agent 1.17+ with the default bpf-lb-proto-diff=true keys it by protocol as well (cilium/cilium#33434), so ${sp.protocol} clients of ${want} are not balanced on this node: the frontend is missing. The table does not tell which (no NONE frontend, no address and port listed with two protocols): cilium-dbg version, and bpf-lb-proto-diff in the cilium-config ConfigMap, decide`,
          });
        }
      }
      return shared;
    };
    const intLocal = s.internalTrafficPolicy === "Local";
    const extLocal = s.externalTrafficPolicy === "Local";
    /** Compares the external frontend, and the internal-scope one when Cilium lists it. */
    const scoped = (type: "NodePort" | "LoadBalancer", ip: string | undefined, port: number, want: string, v6?: boolean) => {
      compare(sp, type, "external", find(type, ip, port, "external", v6), want, extLocal);
      const internal = find(type, ip, port, "internal", v6);
      if (internal) compare(sp, type, "internal", internal, want, intLocal);
    };
    if (s.type !== "ExternalName") {
      for (const ip of s.clusterIPs.filter((x) => x !== "None")) {
        if (notExposed("ClusterIP", ip, sp.port, `ClusterIP ${hostPort(ip, sp.port)}/${sp.protocol}`)) continue;
        const fe = find("ClusterIP", ip, sp.port);
        // a CiliumLocalRedirectPolicy keeps the address and lists it as LocalRedirect, to the redirect's own pods
        const redirect = fe ? undefined : find("LocalRedirect", ip, sp.port);
        if (redirect) {
          out.notes.push(`${hostPort(ip, sp.port)}/${sp.protocol} is redirected on this node by a CiliumLocalRedirectPolicy (frontend type LocalRedirect) to ${redirect.backends.map(backendText).join(", ") || "no backend"}: its backends are the policy's pods, not the Service's endpoints, so they are not compared`);
          continue;
        }
        compare(sp, "ClusterIP", "external", fe, `${hostPort(ip, sp.port)}/${sp.protocol}`, intLocal);
      }
    }
    if (sp.nodePort !== undefined && (s.type === "NodePort" || s.type === "LoadBalancer")) {
      // one NodePort frontend per IP family of the Service (0.0.0.0, ::)
      const families = [...new Set(s.clusterIPs.filter((x) => x !== "None").map((ip) => isIPv6(ip)))];
      for (const v6 of families.length > 0 ? families : [false]) {
        const want = `${v6 ? "[::]" : "*"}:${sp.nodePort}/${sp.protocol}`;
        if (!notExposed("NodePort", undefined, sp.nodePort, `NodePort ${want}`)) scoped("NodePort", undefined, sp.nodePort, want, v6);
      }
    }
    for (const ip of s.externalIPs) compare(sp, "ExternalIPs", "external", find("ExternalIPs", ip, sp.port), `${hostPort(ip, sp.port)}/${sp.protocol}`, extLocal);
    if (s.type === "LoadBalancer") {
      for (const ip of s.loadBalancerIngress) {
        // Cilium programs a LoadBalancer frontend for an ingress IP only when its ipMode is unset or VIP
        // (pkg/k8s/service.go ParseService): a Proxy one is the load balancer's own; an agent that lists it anyway
        // (one without that check) is compared
        if (proxyIngress.has(ip) && !mine.some((e) => e.type === "LoadBalancer" && e.frontend.ip === ip)) {
          proxyNotes.add(`LoadBalancer ingress ${ip} has ipMode Proxy: Cilium programs no frontend for it (pkg/k8s/service.go ParseService keeps ingress IPs whose ipMode is unset or VIP), so its absence is not drift`);
          continue;
        }
        if (notExposed("LoadBalancer", ip, sp.port, `LoadBalancer ${hostPort(ip, sp.port)}/${sp.protocol}`)) continue;
        scoped("LoadBalancer", ip, sp.port, `${hostPort(ip, sp.port)}/${sp.protocol}`);
      }
    }
  }
  out.notes.push(...sharedNotes, ...proxyNotes, ...exposureNotes);
  const unrealized = mine.filter((e) => !e.realized);
  if (unrealized.length > 0) {
    out.notes.push(`${unrealized.length} frontend(s) of this Service have no status.realized: the agent has not written them to its BPF maps yet (${unrealized.map((e) => hostPort(e.frontend.ip, e.frontend.port)).join(", ")})`);
  }
  return out;
}
