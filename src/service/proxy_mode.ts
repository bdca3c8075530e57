/**
 * Which proxy mode a node's kube-proxy runs, from three sources, and where they disagree:
 * - the `/proxyMode` endpoint of kube-proxy's metrics server (127.0.0.1:10249), the running process's own word;
 * - kube-proxy's configuration (proxy_config.ts: the kube-proxy DaemonSet's `--proxy-mode` or the ConfigMap of its
 *   `--config` file, kubeadm `kube-proxy`/`config.conf`, EKS `kube-proxy-config`/`config`; `mode: ""` is iptables on
 *   Linux in every release through v1.35, cmd/kube-proxy/app/server_linux.go platformApplyDefaults);
 * - the rules on the node: KUBE-SVC-/KUBE-SEP- chains (iptables), ipvsadm virtual servers and KUBE-CLUSTER-IP match-sets
 *   (ipvs), the `kube-proxy` nftables table (nftables).
 * Leftovers of another mode (e.g. KUBE-SVC chains left on a node switched to IPVS) are reported as conflicts.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { BundleObjects, NodeCapture } from "../bundle/bundle.ts";
import { effectiveMode, readKubeProxyConfig } from "./proxy_config.ts";
import type { ProxyModeInfo } from "./report.ts";

type Mode = ProxyModeInfo["mode"];

/** What the rules show, as far as mode goes. */
export interface RuleModeSignals {
  /** Number of KUBE-SVC-/KUBE-SVL-/KUBE-SEP- chains in iptables nat. */
  iptablesServiceChains: number;
  /** KUBE-SERVICES uses `--match-set KUBE-CLUSTER-IP` (the IPVS layout). */
  ipvsMatchSets: boolean;
  /** Virtual servers in ipvsadm output. */
  ipvsVirtualServers: number;
  /** A `kube-proxy` nftables table is present. */
  nftablesTable: boolean;
  /**
   * What shows kube-proxy's iptables-mode layout without any Service chain (a node whose Services all lack endpoints):
   * the nat chain KUBE-NODEPORTS (iptables mode's; IPVS mode's is KUBE-NODE-PORT, pkg/proxy/iptables/proxier.go and
   * pkg/proxy/ipvs/proxier.go chain constants), or a `"… has no endpoints" -j REJECT` rule in filter KUBE-SERVICES /
   * KUBE-EXTERNAL-SERVICES (iptables syncProxyRules). Absent when there is none.
   */
  iptablesLayout?: string;
}

/**
 * The mode and cluster CIDR kube-proxy's configuration declares (proxy_config.ts: the DaemonSet's flags and the
 * ConfigMap of its `--config` file, as kube-proxy resolves them; `mode: ""` is the Linux default, iptables).
 * @returns "iptables" | "ipvs" | "nftables" | other text, with where it came from; undefined when the bundle holds no
 *   kube-proxy configuration.
 */
export function configMapMode(objects: BundleObjects): { mode: string; clusterCIDR?: string; source: string; fromFlags: boolean } | undefined {
  const cfg = readKubeProxyConfig(objects);
  if (!cfg) return undefined;
  const m = effectiveMode(cfg);
  const out: { mode: string; clusterCIDR?: string; source: string; fromFlags: boolean } = { mode: m.value, source: m.source, fromFlags: cfg.origin.startsWith("the command line") };
  if (cfg.clusterCIDRs) out.clusterCIDR = cfg.clusterCIDRs.value.join(",");
  return out;
}

/**
 * Decides a node's proxy mode.
 * @param node the node's capture (its `proxy-mode` section).
 * @param objects the bundle's objects (for the ConfigMap).
 * @param signals what the parsed rules show.
 * @returns the mode, the evidence for it, and conflicts.
 */
export function detectProxyMode(node: NodeCapture, objects: BundleObjects, signals: RuleModeSignals): ProxyModeInfo {
  const info: ProxyModeInfo = { mode: "unknown", evidence: [], conflicts: [] };
  const endpoint = node.sections["proxy-mode"];
  let fromEndpoint: Mode | undefined;
  if (endpoint && (endpoint.exitCode ?? 0) === 0 && endpoint.stdout.trim() !== "") {
    const v = endpoint.stdout.trim();
    info.evidence.push({ source: "proxyMode endpoint", value: v, detail: "http://127.0.0.1:10249/proxyMode" });
    if (v === "iptables" || v === "ipvs" || v === "nftables") fromEndpoint = v;
  }
  const cm = configMapMode(objects);
  let fromConfig: Mode | undefined;
  if (cm) {
    info.evidence.push({ source: cm.fromFlags ? "kube-proxy flags" : "kube-proxy ConfigMap", value: cm.mode, detail: cm.source });
    if (cm.mode === "iptables" || cm.mode === "ipvs" || cm.mode === "nftables") fromConfig = cm.mode;
  }
  const ruleModes: Mode[] = [];
  if (signals.ipvsVirtualServers > 0 || signals.ipvsMatchSets) {
    ruleModes.push("ipvs");
    info.evidence.push({
      source: "rules",
      value: "ipvs",
      detail: `${signals.ipvsVirtualServers} IPVS virtual server(s)${signals.ipvsMatchSets ? ", KUBE-CLUSTER-IP match-set in KUBE-SERVICES" : ""}`,
    });
  }
  if (signals.iptablesServiceChains > 0) {
    ruleModes.push("iptables");
    info.evidence.push({ source: "rules", value: "iptables", detail: `${signals.iptablesServiceChains} KUBE-SVC/KUBE-SEP chain(s) in nat` });
  } else if (signals.iptablesLayout && !signals.nftablesTable && signals.ipvsVirtualServers === 0 && !signals.ipvsMatchSets) {
    // no Service chain (no Service has endpoints), but the layout is iptables mode's alone
    ruleModes.push("iptables");
    info.evidence.push({ source: "rules", value: "iptables", detail: `no KUBE-SVC/KUBE-SEP chain, but ${signals.iptablesLayout}` });
  }
  if (signals.nftablesTable) {
    ruleModes.push("nftables");
    info.evidence.push({ source: "rules", value: "nftables", detail: "nftables table kube-proxy" });
  }
  const declared = fromEndpoint ?? fromConfig;
  if (declared) info.mode = declared;
  else if (ruleModes.length === 1) info.mode = ruleModes[0]!;
  else if (ruleModes.includes("ipvs")) info.mode = "ipvs"; // IPVS mode also leaves iptables chains for helpers
  // The kube-proxy nftables table next to KUBE-SVC chains: the table is what nft_datapath.ts traces, so say nftables
  // and report the iptables chains as leftovers (nothing tells which one is current without /proxyMode or ConfigMap).
  else if (ruleModes.includes("nftables")) info.mode = "nftables";
  else if (ruleModes.length > 0) info.mode = ruleModes[0]!;
  if (fromEndpoint && fromConfig && fromEndpoint !== fromConfig) {
    info.conflicts.push(
      `the configuration (${cm!.source}) says mode "${fromConfig}" but kube-proxy on this node runs "${fromEndpoint}" (not restarted since the change, or a per-node flag)`,
    );
  }
  for (const m of ruleModes) {
    if (m === info.mode) continue;
    if (m === "iptables" && info.mode === "ipvs") {
      info.conflicts.push(
        `${signals.iptablesServiceChains} KUBE-SVC/KUBE-SEP chain(s) remain in iptables nat although the node runs IPVS: stale rules from iptables mode (run kube-proxy --cleanup or reboot the node)`,
      );
    } else if (m === "iptables" && info.mode === "nftables") {
      info.conflicts.push(
        `${signals.iptablesServiceChains} KUBE-SVC/KUBE-SEP chain(s) remain in iptables nat although the node runs nftables: stale rules from iptables mode (run kube-proxy --cleanup or reboot the node). Their nat chains hook prerouting and output at the same priority as table ip kube-proxy (-100, dstnat); the chain registered first sets up DNAT for a new connection, so they can still take traffic`,
      );
    } else if (m === "nftables" && info.mode !== "nftables") {
      info.conflicts.push(
        `the nftables table kube-proxy remains although the node runs ${info.mode}: leftovers of nftables mode (run kube-proxy --cleanup or reboot the node); its nat chains hook the same points at priority -100 and can still DNAT new connections`,
      );
    } else if (m === "ipvs" && info.mode !== "ipvs") {
      info.conflicts.push(`IPVS virtual servers exist although the node runs ${info.mode}: leftovers from IPVS mode`);
    } else {
      info.conflicts.push(`rules of ${m} mode exist although the node runs ${info.mode}: leftovers of a mode switch`);
    }
  }
  if (declared && ruleModes.length > 0 && !ruleModes.includes(declared)) {
    info.conflicts.push(`the node is declared to run ${declared} but no ${declared} rules were captured`);
  }
  return info;
}
