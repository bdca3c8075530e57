/**
 * What a bridge between pods does to a verdict (issue 14 point 4), for clients on this node whose connection is
 * DNATed to an endpoint on this node without masquerade. With a bridge CNI (cni0, cbr0, docker0: ports in the
 * node's `sysctls` section) the endpoint's reply crosses the bridge at layer 2:
 * - it is un-NATed only if bridged packets pass netfilter: net.bridge.bridge-nf-call-iptables = 1 for IPv4,
 *   net.bridge.bridge-nf-call-ip6tables = 1 for IPv6 (br_netfilter loaded; net/bridge/br_netfilter_hooks.c
 *   br_nf_pre_routing tests call_ip6tables for IPv6 frames and call_iptables for IPv4 ones). With 0, or the module
 *   absent, the client gets a reply from the endpoint's address instead of the Service address it sent to, and the
 *   connection never completes;
 * - an endpoint reaching itself through its Service (hairpin): with that family's key 1, br_netfilter DNATs the
 *   frame inside the bridge, which must then send it back out the port it came in on: only if that port has
 *   hairpin_mode 1 (kubelet's --hairpin-mode / the bridge plugin's hairpinMode). With 0 the packet is DNATed at the
 *   node's IP layer and routed back out of the bridge device itself, and hairpin_mode does not matter (the kernel says
 *   so: tests/kernel_bridge.test.ts).
 * Known values decide the answer; unknown ones (no `sysctls` section) add a caveat to that answer only.
 * Only the pods' own bridge counts, the one that holds their gateway ({@link podBridge}): kube-proxy needs
 * br_netfilter "when containers are connected to a Linux bridge (but not SDN bridges)" (pkg/proxy/iptables/proxier.go
 * NewProxier, and pkg/proxy/ipvs/proxier.go NewProxier / initializeKernelConfig, in every release). A node whose pods are routed (Calico, Cilium, ptp: the pods'
 * gateway on no bridge) is not affected, whatever other bridge it has (Docker's docker0, libvirt's virbr0): a reply
 * between two of its pods is routed through the node's IP layer, where conntrack reverses the DNAT.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { InterfaceAddress } from "../datapath/ip_addr.ts";
import type { BridgePort, NodeSysctls } from "../datapath/sysctls.ts";
import { isIPv6 } from "../model/ip.ts";
import { type ClientVerdict, dependsOnNotCollected, type EndpointInfo } from "./report.ts";

/** The facts a verdict names when they decide it and were not collected (report.ts ClientVerdict.notCollected). */
const ADDRESSES = "the node's addresses (ip -o addr)";
const HAIRPIN = "hairpin_mode of the pod's bridge port";
const POD_PORT = "which bridge port the pod is attached to";

/** The address of `IP:PORT` or `[IPv6]:PORT` (unchanged when there is no `:PORT`). */
function ipOf(ep: string): string {
  const c = ep.lastIndexOf(":");
  if (c <= 0 || c === ep.length - 1) return ep;
  for (let i = c + 1; i < ep.length; i++) {
    const d = ep.charCodeAt(i);
    if (d < 48 || d > 57) return ep;
  }
  return ep.charCodeAt(0) === 91 /* [ */ && ep.charCodeAt(c - 1) === 93 /* ] */ ? ep.slice(1, c - 1) : ep.slice(0, c);
}

/**
 * Whether this node's pods sit on a Linux bridge, as the node's facts tell:
 * - `bridged`: the interface holding the pods' gateway (local_detector.ts podGatewayInterface: `cni0` with
 *   `10.244.1.1/24`) is a bridge with ports (the sysctls' `brport.BRIDGE.PORT` entries); `ports` are that bridge's;
 * - `routed`: no bridge has a port, or the node's addresses show the pods' gateway on no bridge (a routed CNI's pods
 *   reach the node through their own veth or a tunnel device holding a host-length address: Calico's `tunl0`
 *   `10.180.2.192/32`); another bridge of the node (docker0, virbr0) holds no pod;
 * - `unknown`: `why` says which fact that decides it was not collected (a clause).
 * @param sysctls the node's settings; undefined when not collected.
 * @param gateway the interface holding the pods' gateway; `null` when the node's addresses were collected and none
 *   holds it, undefined when they were not collected (or the collecting image has no `ip` to name interfaces).
 */
export function podBridge(
  sysctls: NodeSysctls | undefined,
  gateway: InterfaceAddress | null | undefined,
): { kind: "bridged"; bridge: string; ports: BridgePort[] } | { kind: "routed" } | { kind: "unknown"; why: string } {
  if (gateway === null) return { kind: "routed" };
  if (!sysctls) return { kind: "unknown", why: "the node's sysctls (bridge ports, bridge-nf-call-iptables) were not collected" };
  if (sysctls.bridgePorts.length === 0) return { kind: "routed" };
  if (gateway) {
    const ports = sysctls.bridgePorts.filter((p) => p.bridge === gateway.ifname);
    return ports.length > 0 ? { kind: "bridged", bridge: gateway.ifname, ports } : { kind: "routed" };
  }
  return { kind: "unknown", why: "the node's addresses (ip -o addr), which show the interface holding the pods' gateway, were not collected" };
}

/**
 * Checks a verdict of a client on this node (a pod of this node, or an endpoint reaching its own Service).
 * @param v the verdict (mutated: `endpoints[].replyFails`, caveats, `notCollected` (the facts not collected that
 *   decide it), and the reason when every branch fails).
 * @param node this node.
 * @param endpoints the Service's endpoints with their nodes.
 * @param sysctls the node's settings; undefined when not collected.
 * @param gateway the interface holding the pods' gateway ({@link podBridge}): `null` when the node's addresses show
 *   none, undefined when they were not collected. Only a failure on the pods' own bridge is definite; without the
 *   addresses the caveat names the fact that decides it and no branch is marked failed.
 */
export function checkBridge(v: ClientVerdict, node: string, endpoints: EndpointInfo[], sysctls: NodeSysctls | undefined, gateway?: InterfaceAddress | null): void {
  if (v.outcome === "dropped" || v.outcome === "rejected" || v.outcome === "not-handled") return;
  // the setting of the verdict's address family: br_nf_pre_routing (net/bridge/br_netfilter_hooks.c) passes IPv6
  // frames to ip6tables only with call_ip6tables, IPv4 frames to iptables only with call_iptables
  const key = isIPv6(v.source) ? "net.bridge.bridge-nf-call-ip6tables" : "net.bridge.bridge-nf-call-iptables";
  const self = v.endpoints.filter((e) => ipOf(e.endpoint) === v.source);
  // endpoints whose masquerade is not known (a rule that would masquerade could not be told to match:
  // client_verdict.ts masqueradeNotKnown) are not masqueraded if that rule does not apply: what follows for them is
  // said on that condition, never marked failed
  const unmasqueraded = v.endpoints.filter((e) => e.masqueraded === false || (e.masqueraded === undefined && !e.endpoint.startsWith("unknown (")));
  // the first endpoint of each address, as a find over `endpoints` would give (a Service can have hundreds)
  const nodeOf = new Map<string, string | undefined>();
  if (unmasqueraded.length > 0) for (let i = endpoints.length - 1; i >= 0; i--) nodeOf.set(endpoints[i]!.address, endpoints[i]!.node);
  const sameBridge = unmasqueraded.filter((e) => {
    const ip = ipOf(e.endpoint);
    return ip !== v.source && nodeOf.get(ip) === node;
  });
  if (self.length === 0 && sameBridge.length === 0) return;
  const where = podBridge(sysctls, gateway);
  if (where.kind === "routed") return; // the pods are routed: replies cross the node's IP layer, through netfilter
  // the bridge the pods sit on when the addresses tell it; otherwise every bridge with ports, each a possibility
  const ports = where.kind === "bridged" ? where.ports : sysctls?.bridgePorts ?? [];
  const bridges = [...new Set(ports.map((p) => p.bridge))].join(" or ");
  const value = sysctls?.values.get(key);
  const setting = value === undefined ? "br_netfilter is not loaded" : `${key}=${value}`;
  const failed: string[] = [];
  const unsure = sameBridge.filter((e) => e.masqueraded === undefined);
  if (unsure.length > 0) {
    const list = unsure.map((e) => e.endpoint).join(", ");
    const at = (words: string) => `if ${v.source} is not masqueraded to ${list} (not known: see the reason), ${words}`;
    if (!sysctls) {
      v.caveats.push(at(`replies from ${list} reach the client at layer 2 when the CNI puts both pods on a bridge: they are un-NATed then only with ${key}=1 (not collected; with 0 the connection does not complete)`));
      dependsOnNotCollected(v, key);
    } else if (value !== "1" && where.kind === "unknown") {
      dependsOnNotCollected(v, ADDRESSES);
      v.caveats.push(at(`replies from ${list} do not complete if the pods sit on bridge ${bridges} (${where.why}): they would cross it at layer 2 and ${setting}, so conntrack would never un-NAT them`));
    } else if (value !== "1") {
      v.caveats.push(at(`replies from ${list} cross bridge ${bridges} at layer 2 and ${setting}: conntrack never un-NATs them, and the connection does not complete`));
    }
  }
  const sure = sameBridge.filter((e) => e.masqueraded === false);
  if (sure.length > 0) {
    const list = sure.map((e) => e.endpoint).join(", ");
    if (!sysctls) {
      v.caveats.push(`replies from ${list} reach the client at layer 2 when the CNI puts both pods on a bridge: they are un-NATed then only with ${key}=1 (not collected; with 0 the connection does not complete)`);
      dependsOnNotCollected(v, key);
    } else if (value !== "1" && where.kind === "unknown") {
      dependsOnNotCollected(v, ADDRESSES);
      v.caveats.push(
        `replies from ${list} do not complete if the pods sit on bridge ${bridges} (${where.why}): they would cross it at layer 2 and ${setting}, so conntrack would never un-NAT them; ` +
          `if the pods are routed (a routed CNI: Calico, Cilium, ptp), the replies cross the node's IP layer and complete`,
      );
    } else if (value !== "1") {
      for (const e of sure) e.replyFails = "bridge-not-filtered";
      failed.push(list);
      v.caveats.push(
        `replies from ${list} cross bridge ${bridges} at layer 2 and ${setting}: ` +
          `conntrack never un-NATs them, so ${v.source} gets them from the endpoint's address and the connection does not complete`,
      );
    }
  }
  if (self.length > 0) {
    const list = self.map((e) => e.endpoint).join(", ");
    if (!sysctls) {
      v.caveats.push(`the branch to itself (${list}) works only if this pod's bridge port has hairpin_mode 1, when the pods are on a bridge and ${key} is 1 (not collected)`);
      dependsOnNotCollected(v, key);
      dependsOnNotCollected(v, HAIRPIN);
    } else if (value !== "1") {
      // Bridged frames skip netfilter: the packet to the Service goes up to the node's IP layer, is DNATed there and
      // routed back out of the bridge device itself, which needs no hairpin (kernel-checked: tests/kernel_bridge.test.ts).
    } else {
      const off = ports.filter((p) => !p.hairpin);
      if (where.kind === "unknown" && off.length > 0) {
        dependsOnNotCollected(v, ADDRESSES);
        v.caveats.push(`hairpin_mode is 0 on bridge port(s) ${off.map((p) => `${p.bridge}/${p.port}`).join(", ")}: if ${v.source} is attached there, the branch to itself (${list}) does not complete (${where.why})`);
      } else if (off.length === ports.length) {
        for (const e of self) e.replyFails = "hairpin-off";
        failed.push(list);
        v.caveats.push(`hairpin_mode is 0 on every port of bridge ${bridges}: the branch to itself (${list}) never comes back to the pod; that connection does not complete`);
      } else if (off.length > 0) {
        dependsOnNotCollected(v, POD_PORT);
        v.caveats.push(`hairpin_mode is 0 on bridge port(s) ${off.map((p) => `${p.bridge}/${p.port}`).join(", ")}: if ${v.source} is attached there, the branch to itself (${list}) does not complete`);
      }
    }
  }
  if (failed.length > 0) {
    const ok = v.endpoints.filter((e) => e.replyFails === undefined);
    v.reason = `${v.reason}; but ${ok.length === 0 ? "no" : "not every"} connection completes: ${failed.join(", ")} (see caveats)`;
  }
}
