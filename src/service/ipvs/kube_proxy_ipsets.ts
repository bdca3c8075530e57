/**
 * The two KUBE-* ipsets of kube-proxy's IPVS mode whose contents follow from the API objects alone, for a node whose
 * `ipset list` was not read. kube-proxy rewrites them at every sync (pkg/proxy/ipvs/proxier.go syncProxyRules,
 * v1.11–v1.35):
 * - KUBE-CLUSTER-IP (`hash:ip,port`): "Capture the clusterIP": every ClusterIP of every Service port it serves,
 *   `CLUSTER-IP,PROTO:PORT` — matched `dst,dst` by `KUBE-SERVICES … -j KUBE-MARK-MASQ` (masquerade of clients outside
 *   the cluster CIDR) and `KUBE-SERVICES … -j ACCEPT`;
 * - KUBE-LOOP-BACK (`hash:ip,port,ip`): "Handle traffic that loops back to the originator with SNAT": every endpoint on
 *   this node (`ep.IsLocal()`), `EP-IP,PROTO:PORT,EP-IP` — matched `dst,dst,src` by `KUBE-POSTROUTING … -j MASQUERADE`
 *   (a pod reaching itself through its Service).
 * Only what the bundle's objects decide is answered: a packet to an address no Service of the bundle has as a
 * ClusterIP (and no node has) is left unknown, as is a hairpin to an endpoint the bundle does not list.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { BundleObjects } from "../../bundle/bundle.ts";
import type { IpsetSet } from "../../datapath/ipset.ts";
import type { AssumedIpsetMembership } from "../iptables/rule_match.ts";
import { SERVICE_PROXY_NAME_LABEL } from "../proxy_scope.ts";
import { ipsetMembership } from "./ipset_membership.ts";

const SOURCE = "pkg/proxy/ipvs/proxier.go syncProxyRules";

/**
 * The membership kube-proxy gives KUBE-CLUSTER-IP and KUBE-LOOP-BACK on a node, from the bundle's Services and
 * EndpointSlices, for a node whose `ipset list` was not read.
 * @param objects the bundle's objects (Services, EndpointSlices, Nodes).
 * @param nodeName the node (its endpoints are the KUBE-LOOP-BACK entries).
 * @returns the membership with the assumption it rests on; undefined for other sets, and where the objects do not
 *   decide.
 */
export function kubeProxyIpsets(objects: BundleObjects, nodeName: string): AssumedIpsetMembership {
  const clusterIP: IpsetSet["members"] = [];
  const clusterIPs = new Set<string>();
  for (const svc of objects.services) {
    // kube-proxy watches no Service with the service-proxy-name label, and a headless or ExternalName one has no
    // ClusterIP (pkg/proxy/serviceport.go)
    if (svc.metadata.labels?.[SERVICE_PROXY_NAME_LABEL] !== undefined || svc.spec?.type === "ExternalName") continue;
    const ips = (svc.spec?.clusterIPs ?? (svc.spec?.clusterIP ? [svc.spec.clusterIP] : [])).filter((ip) => ip !== "None" && ip !== "");
    for (const ip of ips) {
      clusterIPs.add(ip);
      for (const p of svc.spec?.ports ?? []) {
        clusterIP.push({ raw: "", ip, proto: (p.protocol ?? "TCP").toLowerCase(), port: p.port, line: 0 });
      }
    }
  }
  const loopBack: IpsetSet["members"] = [];
  for (const sl of objects.endpointSlices) {
    if (sl.addressType === "FQDN" || sl.metadata.labels?.[SERVICE_PROXY_NAME_LABEL] !== undefined || sl.metadata.labels?.["service.kubernetes.io/headless"] !== undefined) continue;
    for (const ep of sl.endpoints ?? []) {
      if (ep.nodeName !== nodeName) continue;
      for (const ip of ep.addresses) {
        for (const p of sl.ports ?? []) {
          if (p.port === undefined) continue;
          loopBack.push({ raw: "", ip, proto: (p.protocol ?? "TCP").toLowerCase(), port: p.port, ip2: ip, line: 0 });
        }
      }
    }
  }
  const set = (name: string, type: string, members: IpsetSet["members"]): IpsetSet => ({ name, type, header: {}, headerFlags: [], membersListed: true, members, line: 0, unparsed: [] });
  const oracle = ipsetMembership([set("KUBE-CLUSTER-IP", "hash:ip,port", clusterIP), set("KUBE-LOOP-BACK", "hash:ip,port,ip", loopBack)]);
  const nodeAddresses = new Set(objects.nodes.flatMap((n) => (n.status?.addresses ?? []).map((a) => a.address)));
  const notRead = (name: string, holds: string) => `ipset ${name}, whose members were not read (the node's \`ipset list\` is not in the bundle, or could not be read): taken to hold what kube-proxy writes into it at every sync, ${holds} (${SOURCE})`;
  return (name, flags, packet) => {
    const pick = (flag: string | undefined) => (flag === "src" ? packet.src : packet.dst);
    if (name === "KUBE-CLUSTER-IP") {
      const member = oracle(name, flags, packet)!;
      const ip = pick(flags[0]);
      // no: a ClusterIP of the bundle on another port (a ClusterIP belongs to one Service, whose ports are all known),
      // or a node's address (never a ClusterIP); any other address may be another Service's ClusterIP
      if (!member && !clusterIPs.has(ip) && !nodeAddresses.has(ip)) return undefined;
      return { member, assumption: notRead(name, "every Service's ClusterIP,PROTO:PORT") };
    }
    if (name === "KUBE-LOOP-BACK") {
      const member = oracle(name, flags, packet)!;
      const [a, b] = [pick(flags[0]), pick(flags[2] ?? flags[flags.length - 1])];
      // every entry is EP-IP,PROTO:PORT,EP-IP: a packet whose two addresses differ is in none; one to itself that is
      // no endpoint of this node in the bundle (a Service the bundle does not hold) is not decided
      if (!member && a === b) return undefined;
      return { member, assumption: notRead(name, `each endpoint on ${nodeName} as EP-IP,PROTO:PORT,EP-IP`) };
    }
    return undefined;
  };
}
