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
import type { BridgePort } from "../datapath/sysctls.ts";
import { readKubeProxyConfig } from "./proxy_config.ts";

/** The pod interface kube-proxy's detector names, and where it was learnt. */
export interface PodInterface {
  /** `bridge`: one interface (`cni0`); `prefix`: every interface whose name starts with `name` (`veth`). */
  kind: "bridge" | "prefix";
  name: string;
  source: string;
}

/**
 * Finds the interface detector in a node's iptables rules (the first rules of KUBE-SVC/SVL/EXT chains, where kube-proxy
 * v1.21+ writes it).
 * @returns the pod interface, or undefined when the rules detect local traffic otherwise (by CIDR) or not at all.
 */
export function iptablesPodInterface(dump: IptablesDump | undefined): PodInterface | undefined {
  const nat = dump?.tables.get("nat");
  if (!nat) return undefined;
  let looked = 0;
  for (const [name, chain] of nat.chains) {
    if (!/^KUBE-(SVC|SVL|EXT|SERVICES)/.test(name)) continue;
    for (const r of chain.rawRules.slice(0, name === "KUBE-SERVICES" ? 50 : 3)) {
      const m = /(?:^|\s)! -i (\S+) .*-j KUBE-MARK-MASQ/.exec(r) ?? /(?:^|\s)-i (\S+) -m comment --comment "pod traffic for /.exec(r) ??
        /-m comment --comment "pod traffic for [^"]*" -i (\S+) /.exec(r);
      if (m) return asInterface(m[1]!, "the rules (kube-proxy's local-traffic detector)");
    }
    if (++looked > 200) break;
  }
  return undefined;
}

/** An iptables `-i` value (`veth+` is a prefix) or an nftables `iifname` value (`veth*`). */
export function asInterface(value: string, source: string): PodInterface {
  return /[+*]$/.test(value) ? { kind: "prefix", name: value.slice(0, -1), source } : { kind: "bridge", name: value, source };
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
   * The detector names the pods' own interfaces (`veth+`) but they are ports of this bridge (the node's sysctls list
   * them): a routed packet from a pod arrives on the bridge, so `-i veth+` never sees it (br_netfilter
   * setup_pre_routing; without it the IP layer sees the bridge as well).
   */
  bridgedOn?: string;
}

/**
 * Names the interfaces clients arrive on.
 * @param pod the detector's pod interface.
 * @param uplink the interface holding the node's address, when the node's addresses were collected.
 * @param bridgePorts the node's bridge ports (the sysctls section), when collected.
 */
export function clientInterfaces(pod: PodInterface, uplink: string | undefined, bridgePorts: readonly BridgePort[] = []): ClientInterfaces {
  const bridged = pod.kind === "prefix" ? bridgePorts.find((p) => p.port.startsWith(pod.name))?.bridge : undefined;
  if (bridged !== undefined && !bridged.startsWith(pod.name)) {
    const up = uplink && uplink !== bridged ? uplink : ["eth0", "ens3", "uplink0"].find((n) => !n.startsWith(pod.name))!;
    return { pod: bridged, uplink: up, bridgedOn: bridged };
  }
  const podIf = pod.kind === "bridge" ? pod.name : `${pod.name}0a1b2c3d`;
  const matchesPod = (n: string) => (pod.kind === "bridge" ? n === pod.name : n.startsWith(pod.name));
  const up = uplink && !matchesPod(uplink) ? uplink : ["eth0", "ens3", "uplink0"].find((n) => !matchesPod(n))!;
  return { pod: podIf, uplink: up };
}
