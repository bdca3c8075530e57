/**
 * A client with a loopback source (`127.0.0.1` reaching `127.0.0.1:NODEPORT`, kube-proxy's localhost NodePorts) whose
 * packet is DNATed to an endpoint outside the node: the kernel refuses to route a packet with a 127.0.0.0/8 source out
 * of a non-loopback interface unless `route_localnet` is on for that interface or for all (net/ipv4/route.c
 * `__mkroute_output`, IN_DEV_NET_ROUTE_LOCALNET = conf `all` OR the device's). kube-proxy's iptables mode sets
 * net.ipv4.conf.all.route_localnet=1 when localhost NodePorts are on (v1.26+: only when nodePortAddresses includes
 * 127.0.0.0/8 or is unset; every release before): a node where it is 0 answers no such connection.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { NodeSysctls } from "../datapath/sysctls.ts";
import { splitHostPort } from "../model/ip.ts";
import { type ClientVerdict, dependsOnNotCollected } from "./report.ts";

const LOOPBACK4 = /^127\./;
const ROUTE_LOCALNET = /^net\.ipv4\.conf\.(.+)\.route_localnet$/;

/**
 * Marks the branches of a loopback-source verdict that leave the node and cannot: `replyFails: "route-localnet-off"`
 * when every interface but lo (and `all`) has route_localnet 0; a caveat naming the setting when the collected values
 * leave it to the interface the route takes, or when they were not collected.
 * @param v the verdict (mutated: `endpoints[].replyFails`, caveats, `notCollected` (the setting, when not
 *   collected), and the reason when every branch fails).
 * @param sysctls the node's settings; undefined when not collected.
 * @param isLocal whether an address is the node's own (a host-network endpoint here: the packet stays on the node).
 */
export function checkRouteLocalnet(v: ClientVerdict, sysctls: NodeSysctls | undefined, isLocal: (ip: string) => boolean): void {
  if (!LOOPBACK4.test(v.source) || v.outcome === "dropped" || v.outcome === "rejected" || v.outcome === "not-handled") return;
  const leaving = v.endpoints.filter((e) => {
    const ip = splitHostPort(e.endpoint).ip;
    return !e.endpoint.startsWith("unknown (") && !LOOPBACK4.test(ip) && !isLocal(ip);
  });
  if (leaving.length === 0) return;
  const list = leaving.map((e) => e.endpoint).join(", ");
  if (!sysctls) {
    v.caveats.push(`the packet from ${v.source} leaves the node for ${list}: the kernel routes a 127.0.0.0/8 source out of an interface only with net.ipv4.conf.all.route_localnet=1 or the interface's own (not collected; kube-proxy sets all to 1 for localhost NodePorts)`);
    dependsOnNotCollected(v, "net.ipv4.conf.all.route_localnet");
    return;
  }
  if (sysctls.values.get("net.ipv4.conf.all.route_localnet") === "1") return;
  const on: string[] = [];
  let any = false;
  for (const [name, value] of sysctls.values) {
    const m = ROUTE_LOCALNET.exec(name);
    if (!m || m[1] === "all" || m[1] === "default" || m[1] === "lo") continue;
    any = true;
    if (value === "1") on.push(m[1]!);
  }
  if (!any) {
    v.caveats.push(`the packet from ${v.source} leaves the node for ${list}: net.ipv4.conf.all.route_localnet is ${sysctls.values.get("net.ipv4.conf.all.route_localnet") ?? "not collected"} and no interface's value was collected: whether the kernel routes it depends on the interface the route takes`);
    const all = sysctls.values.has("net.ipv4.conf.all.route_localnet");
    dependsOnNotCollected(v, all ? "the route_localnet of the node's interfaces" : "net.ipv4.conf.all.route_localnet");
    return;
  }
  if (on.length > 0) {
    v.caveats.push(`the packet from ${v.source} leaves the node for ${list}: net.ipv4.conf.all.route_localnet is 0; it is routed only out of an interface with route_localnet 1 (${on.join(", ")}), else refused`);
    return;
  }
  for (const e of leaving) e.replyFails = "route-localnet-off";
  v.caveats.push(
    `net.ipv4.conf.all.route_localnet=0 and no interface of the node has it: the kernel refuses to route the packet from ${v.source} out of the node to ${list}, and the connection fails (kube-proxy sets it to 1 for localhost NodePorts: was it started with them off, or reset by another agent?)`,
  );
  const ok = v.endpoints.filter((e) => e.replyFails === undefined);
  v.reason = `${v.reason}; but ${ok.length === 0 ? "no" : "not every"} connection completes: ${list} (see caveats)`;
}
