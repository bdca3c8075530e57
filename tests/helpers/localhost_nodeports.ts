/**
 * A bundle of kube-proxy's TestEnableLocalhostNodePortsIPv4 (v1.27 iptables-save): NodePort Service ns1/svc1 (30001,
 * externalTrafficPolicy Local) with endpoints 10.244.0.1 (another node) and 10.244.2.1 (test-hostname), and the
 * node's addresses (`ip -o addr`: lo 127.0.0.1, eth0 192.168.0.2), so that 127.0.0.1 is a local process's source:
 * the case route_localnet decides (src/service/route_localnet.ts).
 * @module
 */
import type { Bundle } from "../../src/bundle/bundle.ts";
import { bundleOf, fixture, service, slice } from "./bundles.ts";

/**
 * The bundle, with the node's sysctls section when given.
 * @param sysctls the `sysctls` section's text (`net.ipv4.conf.all.route_localnet=0\n…`); undefined: not collected.
 */
export function localhostNodePortBundle(sysctls?: string): Bundle {
  const b = bundleOf({
    dump: fixture("kube-proxy/TestEnableLocalhostNodePortsIPv4.v1.27.iptables-save"),
    nodeName: "test-hostname",
    nodeIP: "192.168.0.2",
    services: [service("ns1", "svc1", { type: "NodePort", clusterIP: "10.69.0.10", clusterIPs: ["10.69.0.10"], externalTrafficPolicy: "Local", ports: [{ name: "p80", port: 80, protocol: "TCP", targetPort: 80, nodePort: 30001 }] })],
    slices: [slice("ns1", "svc1", [{ ip: "10.244.0.1" }, { ip: "10.244.2.1", node: "test-hostname" }], [{ name: "p80", port: 80 }])],
  });
  // the node's addresses (`ip -o addr`): 127.0.0.1 is its own, so the client is a local process (nat OUTPUT)
  b.nodes[0]!.sections["ip-addr"] = {
    stdout: "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n2: eth0    inet 192.168.0.2/24 brd 192.168.0.255 scope global eth0\\       valid_lft forever preferred_lft forever\n",
    exitCode: 0,
  };
  if (sysctls !== undefined) b.nodes[0]!.sections.sysctls = { stdout: sysctls, exitCode: 0 };
  return b;
}
