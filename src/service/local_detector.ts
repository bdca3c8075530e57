/**
 * Interface-based local-traffic detection (kube-proxy `--detect-local-mode=BridgeInterface|InterfaceNamePrefix`,
 * pkg/proxy/util/localdetector.go): kube-proxy tells pod traffic from the rest by the input interface — iptables
 * `! -i cni0 -j KUBE-MARK-MASQ` / `-i veth+ … "pod traffic for …"`, nftables `iifname != "veth*" jump
 * mark-for-masquerade`. A traced packet then needs an input interface, which depends on the kind of client:
 * a pod of this node arrives on the pod interface (the bridge, or its own `veth…`), anything from outside the node
 * on the uplink (the interface holding the node's address), and a host process on none (it starts in OUTPUT, where
 * `-i` never matches and `! -i` always does).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { BundleObjects } from "../bundle/bundle.ts";
import type { IptablesDump } from "../datapath/iptables_save.ts";
import type { InterfaceAddress } from "../datapath/ip_addr.ts";
import type { BridgePort } from "../datapath/sysctls.ts";
import { cidrContains } from "../model/ip.ts";
import { detectorRuleCandidates } from "./cluster_cidr.ts";
import type { Node } from "../model/k8s.ts";
import { nodePodCIDRs } from "./node_facts.ts";
import { type KubeProxySettings, readKubeProxyConfig } from "./proxy_config.ts";
import type { RuleRef } from "./trace.ts";

/** The pod interface kube-proxy's detector names, and where it was learnt. */
export interface PodInterface {
  /** `bridge`: one interface (`cni0`); `prefix`: every interface whose name starts with `name` (`veth`). */
  kind: "bridge" | "prefix";
  name: string;
  source: string;
  /**
   * The rule that shows the detector, when it was read from the rules: iptables `! -i cni0 … -j KUBE-MARK-MASQ` /
   * `-i cni0 … "pod traffic for …"`, nftables `iifname != "cni0" jump mark-for-masquerade` /
   * `iifname "cni0" goto service-… comment "short-circuit pod traffic"`.
   */
  rule?: RuleRef;
}

/**
 * Finds the interface detector in a node's iptables rules: `! -i cni0 … -j KUBE-MARK-MASQ` (BridgeInterface /
 * InterfaceNamePrefix `IfNotLocal()` on the ClusterIP rule of KUBE-SVC/SVL chains, KUBE-SERVICES before v1.21) or
 * `-i cni0 … "pod traffic for …"` (`IfLocal()` in KUBE-EXT chains), in the rules where kube-proxy writes its detector,
 * reached through the jumps of KUBE-SERVICES and KUBE-NODEPORTS (cluster_cidr.ts detectorRuleCandidates; a legacy
 * dump lists hundreds of KUBE-EXT chains without a detector rule before any KUBE-SVC one).
 * @param dump the node's iptables dump of one family.
 * @returns the pod interface, or undefined when the rules detect local traffic otherwise (by CIDR: `! -s CIDR`) or not
 *   at all.
 */
export function iptablesPodInterface(dump: IptablesDump | undefined): PodInterface | undefined {
  const nat = dump?.tables.get("nat");
  if (!nat) return undefined;
  for (const c of detectorRuleCandidates(nat)) {
    const r = c.text;
    // most rules name no interface (a KUBE-SERVICES jump, a KUBE-SEP jump): a substring test first
    if (!r.includes("-i ")) {
      // a CIDR detector (`! -s 10.244.0.0/16 … -j KUBE-MARK-MASQ`): kube-proxy runs one detector, not an interface one
      if (/(?:^|\s)! -s \S+\/\d+ .*-j KUBE-MARK-MASQ/.test(r)) return undefined;
      continue;
    }
    const m = /(?:^|\s)! -i (\S+) .*-j KUBE-MARK-MASQ/.exec(r) ?? /(?:^|\s)-i (\S+) -m comment --comment "pod traffic for /.exec(r) ??
      /-m comment --comment "pod traffic for [^"]*" -i (\S+) /.exec(r);
    if (m) return asInterface(m[1]!, "the rules (kube-proxy's local-traffic detector)", { table: "nat", chain: c.chain, line: c.line, raw: r });
  }
  return undefined;
}

/**
 * The pod interface of an iptables `-i` value (`veth+` is a prefix) or an nftables `iifname` value (`veth*`).
 * @param value the value as the rule writes it.
 * @param source where it was learnt, for the node's notes.
 * @param rule the rule that shows it, when read from the rules.
 */
export function asInterface(value: string, source: string, rule?: RuleRef): PodInterface {
  const out: PodInterface = /[+*]$/.test(value) ? { kind: "prefix", name: value.slice(0, -1), source } : { kind: "bridge", name: value, source };
  if (rule) out.rule = rule;
  return out;
}

/**
 * The detector kube-proxy's configuration sets (proxy_config.ts: `detectLocalMode` with
 * `detectLocal.bridgeInterface` / `detectLocal.interfaceNamePrefix`, or `--detect-local-mode` with
 * `--pod-bridge-interface` / `--pod-interface-name-prefix`).
 */
export function configPodInterface(objects: BundleObjects): PodInterface | undefined {
  const cfg = readKubeProxyConfig(objects);
  if (cfg?.detectLocalMode?.value === "BridgeInterface" && cfg.bridgeInterface) {
    return { kind: "bridge", name: cfg.bridgeInterface.value, source: `${cfg.detectLocalMode.source} BridgeInterface, ${cfg.bridgeInterface.source}` };
  }
  if (cfg?.detectLocalMode?.value === "InterfaceNamePrefix" && cfg.interfaceNamePrefix) {
    return { kind: "prefix", name: cfg.interfaceNamePrefix.value, source: `${cfg.detectLocalMode.source} InterfaceNamePrefix, ${cfg.interfaceNamePrefix.source}` };
  }
  return undefined;
}

/** The input interface of each kind of client, for a node whose detector tests interfaces. */
export interface ClientInterfaces {
  /** A pod of this node (and an endpoint reaching its own Service). */
  pod: string;
  /** A client from outside the node (another node's pod, an external client). */
  uplink: string;
  /**
   * The detector names the pods' own interfaces (`veth+`) but the pods sit behind this bridge: a routed packet from a
   * pod arrives on the bridge, so `-i veth+` never sees it (br_netfilter setup_pre_routing; without it the IP layer
   * sees the bridge as well).
   */
  bridgedOn?: string;
  /** How `bridgedOn` (or its absence) was told: one clause for the node's notes. */
  why?: string;
  /**
   * Set when whether the pods sit behind a bridge was not collected (neither the node's sysctls nor its addresses):
   * the fact that decides it. The pods are then traced on their own interfaces.
   */
  undetermined?: string;
}

/**
 * The interface that holds the pods' gateway: an address of the node inside `podCIDRs` on a subnet (a prefix shorter
 * than a host's, e.g. `cni0` with `10.244.1.1/24`), as bridge CNIs give their bridge. Host-length addresses do not
 * count: tunnel devices (`flannel.1`, `tunl0`, `vxlan.calico`) and a point-to-point CNI's veths hold /32 or /128 ones.
 * @param addresses the node's addresses (`ip -o addr`).
 * @param podCIDRs the node's pod CIDRs, else the cluster CIDRs.
 * @returns the address and its interface, or undefined.
 */
export function podGatewayInterface(addresses: readonly InterfaceAddress[], podCIDRs: readonly string[]): InterfaceAddress | undefined {
  return addresses.find((a) => a.prefixLength < (a.family === 6 ? 128 : 32) && podCIDRs.some((c) => cidrContains(c, a.address)));
}

/**
 * Names the interfaces clients arrive on. For a prefix detector (`veth+`), whether the pods sit behind a bridge: with
 * the node's addresses, the bridge that holds the pods' gateway ({@link podGatewayInterface}; a bridge whose ports
 * match the prefix but that holds no pod address, such as Docker's `docker0`, is not the pods'); without them, a
 * bridge the sysctls show with ports matching the prefix (assumed, said).
 * @param pod the detector's pod interface.
 * @param uplink the interface holding the node's address, when the node's addresses were collected.
 * @param bridgePorts the node's bridge ports (the sysctls section); undefined when not collected.
 * @param gateway the interface holding the pods' gateway ({@link podGatewayInterface}); `null` when the node's
 *   addresses were collected and none does, undefined when they were not collected.
 */
export function clientInterfaces(
  pod: PodInterface,
  uplink: string | undefined,
  bridgePorts: readonly BridgePort[] | undefined,
  gateway?: InterfaceAddress | null,
): ClientInterfaces {
  const upFor = (taken: (n: string) => boolean) => (uplink && !taken(uplink) ? uplink : ["eth0", "ens3", "uplink0"].find((n) => !taken(n))!);
  if (pod.kind === "prefix") {
    const matchesPrefix = (n: string) => n.startsWith(pod.name);
    const bridges = new Set((bridgePorts ?? []).map((p) => p.bridge));
    let bridged: string | undefined;
    let why: string | undefined;
    let undetermined: string | undefined;
    if (gateway && !matchesPrefix(gateway.ifname)) {
      // the pods' gateway on an interface the prefix does not name: they sit behind it
      if (bridgePorts === undefined || bridges.has(gateway.ifname)) {
        bridged = gateway.ifname;
        why = `${gateway.ifname} holds the pods' gateway ${gateway.address}/${gateway.prefixLength}${bridgePorts === undefined ? " (the node's addresses; its sysctls, which list bridge ports, were not collected)" : " and is a bridge (the node's sysctls)"}`;
      }
    } else if (gateway === undefined && bridgePorts !== undefined) {
      bridged = bridgePorts.find((p) => matchesPrefix(p.port) && !matchesPrefix(p.bridge))?.bridge;
      if (bridged) why = `${bridged} has ${pod.name}* ports (the node's sysctls; its addresses were not collected, so that it is the pods' bridge is assumed)`;
    } else if (gateway === undefined && bridgePorts === undefined) {
      undetermined = `whether this node's pods sit behind a bridge (then their packets arrive on it, not on ${pod.name}*, and are masqueraded) was not collected: the node's sysctls and addresses decide it`;
    }
    if (bridged !== undefined) return { pod: bridged, uplink: upFor((n) => n === bridged), bridgedOn: bridged, ...(why ? { why } : {}) };
    return { pod: `${pod.name}0a1b2c3d`, uplink: upFor(matchesPrefix), ...(undetermined ? { undetermined } : {}) };
  }
  return { pod: pod.name, uplink: upFor((n) => n === pod.name) };
}

/** Why a node's kube-proxy runs without a local-traffic detector, as far as the bundle tells ({@link noDetectorCause}). */
export interface NoDetectorCause {
  /** For the node's note: the setting that made it so, with its source (`detect-local-mode ClusterCIDR (…) with clusterCIDR unset`). */
  why: string;
  /** For the node's note: what would give kube-proxy one (`setting kube-proxy's --cluster-cidr (clusterCIDR) …`). */
  fix: string;
  /** For a client's reason, in parentheses (`kube-proxy's clusterCIDR is unset`). */
  short: string;
}

/**
 * Why kube-proxy runs without a local-traffic detector for IP `family`, from its configuration (when the bundle holds
 * it) and the Node's `spec.podCIDRs`. kube-proxy starts every family with a no-op detector and replaces it
 * (cmd/kube-proxy/app/server_linux.go getLocalDetectors; pkg/proxy/util/localdetector.go from v1.33) only for:
 * detect-local-mode ClusterCIDR (the default, `""`) with a clusterCIDR of that family; NodeCIDR with a podCIDR of
 * that family on the Node; BridgeInterface and InterfaceNamePrefix always. With NodeCIDR it writes no rule before the
 * Node has a podCIDR (it waits, then fails: "timeout waiting for PodCIDR allocation", waitForPodCIDR / the node
 * manager), and it exits to restart when the Node's podCIDRs change; any other mode value fails validation
 * (pkg/proxy/apis/config/validation validateDetectLocalMode), so kube-proxy does not run with it. A configuration read
 * that would give a detector, or could not run, is therefore not the one the running kube-proxy uses, and is said so.
 * When the configuration was not collected, the causes the Node allows are named, and the configuration is said to
 * decide.
 * @param config kube-proxy's settings (proxy_config.ts readKubeProxyConfig), undefined when the bundle holds none.
 * @param node the Node whose rules have no detector (its `spec.podCIDRs`); undefined when the bundle lacks it.
 * @param nodeName the node's name.
 * @param family the IP family of the rules without a detector.
 * @returns the cause, in the three wordings the report uses.
 */
export function noDetectorCause(config: KubeProxySettings | undefined, node: Node | undefined, nodeName: string, family: 4 | 6): NoDetectorCause {
  const fam = `IPv${family}`;
  const ofFamily = (cidr: string) => cidr.includes(":") === (family === 6);
  const podCIDRs = nodePodCIDRs(node);
  const podCIDRText = podCIDRs.length > 0 ? `spec.podCIDRs ${podCIDRs.join(", ")}` : "no spec.podCIDRs";
  const source = "pkg/proxy/util/localdetector.go";
  const clusterFix = `setting kube-proxy's --cluster-cidr (clusterCIDR) to the pods' ${fam} range gives it one`;
  const nodeFix = `an ${fam} podCIDR on Node ${nodeName} gives it one (kube-proxy restarts when the Node's podCIDRs change)`;
  // NodeCIDR is possible only for a family the Node has no podCIDR of while it has one of the other family
  const nodeCIDRPossible = node === undefined || (podCIDRs.length > 0 && !podCIDRs.some(ofFamily));
  const notRunning = (what: string) => ({
    why: `${what}: the configuration read is not the one the running kube-proxy uses (it reads it at start)`,
    fix: "restarting kube-proxy applies the configuration read",
    short: "kube-proxy runs with another configuration than the one read",
  });
  if (!config || config.unread) {
    if (!nodeCIDRPossible) {
      const ruledOut = podCIDRs.length > 0
        ? `with NodeCIDR, Node ${nodeName}'s ${podCIDRText} would give it one`
        : `with NodeCIDR, kube-proxy writes no rule before Node ${nodeName} has a podCIDR (it has none)`;
      return {
        why: `detect-local-mode ClusterCIDR (the default) with no ${fam} clusterCIDR: ${source}; ${ruledOut}; kube-proxy's configuration, not in the bundle, would say`,
        fix: clusterFix,
        short: `kube-proxy's clusterCIDR has no ${fam} range, as far as the bundle tells: its configuration is not in it`,
      };
    }
    return {
      why: `detect-local-mode ClusterCIDR (the default) with no ${fam} clusterCIDR, or NodeCIDR with no ${fam} podCIDR on Node ${nodeName} (${node ? podCIDRText : "its Node is not in the bundle"}): ${source}; kube-proxy's configuration, not in the bundle, says which`,
      fix: `with ClusterCIDR, ${clusterFix}; with NodeCIDR, ${nodeFix}`,
      short: `kube-proxy's clusterCIDR has no ${fam} range, or with detect-local-mode NodeCIDR the Node has no ${fam} podCIDR: its configuration, not in the bundle, says which`,
    };
  }
  const mode = config.detectLocalMode?.value ?? "";
  const modeText = config.detectLocalMode ? `detect-local-mode ${mode} (${config.detectLocalMode.source})` : "detect-local-mode ClusterCIDR (unset: the default)";
  if (mode === "" || mode === "ClusterCIDR") {
    const cidrs = config.clusterCIDRs?.value ?? [];
    if (cidrs.some(ofFamily)) return notRunning(`${modeText} with clusterCIDR ${cidrs.join(",")} (${config.clusterCIDRs!.source}) would give it one (${source})`);
    const set = cidrs.length === 0 ? "clusterCIDR unset" : `clusterCIDR ${cidrs.join(",")} (${config.clusterCIDRs!.source}), none of it ${fam}`;
    return { why: `${modeText} with ${set}: ${source}`, fix: clusterFix, short: cidrs.length === 0 ? "kube-proxy's clusterCIDR is unset" : `kube-proxy's clusterCIDR has no ${fam} range` };
  }
  if (mode === "NodeCIDR") {
    if (podCIDRs.some(ofFamily)) return notRunning(`${modeText} with Node ${nodeName}'s ${podCIDRText} would give it one (${source})`);
    if (node && podCIDRs.length === 0) {
      return notRunning(`${modeText}: kube-proxy writes no rule before Node ${nodeName} has a podCIDR (waitForPodCIDR), and it has none`);
    }
    return { why: `${modeText} and Node ${nodeName} has no ${fam} podCIDR (${node ? podCIDRText : "its Node is not in the bundle"}): ${source}`, fix: nodeFix, short: `detect-local-mode NodeCIDR and Node ${nodeName} has no ${fam} podCIDR` };
  }
  if (mode === "BridgeInterface" || mode === "InterfaceNamePrefix") return notRunning(`${modeText} always gives it one (${source})`);
  return notRunning(`${modeText} is none of ClusterCIDR, NodeCIDR, BridgeInterface, InterfaceNamePrefix: kube-proxy refuses it (validateDetectLocalMode)`);
}
