/**
 * Generates, for the Services and EndpointSlices a fake cluster holds, the iptables-restore buffer kube-proxy's
 * iptables mode writes on a node (layout of kubernetes v1.27+, pkg/proxy/iptables/proxier.go, as in the
 * TestOverallIPTablesRulesWithMultipleServices fixture), plus kubelet's mangle hint chains:
 * - chain names: `KUBE-SVC-` + base32(sha256(servicePortName + protocol))[:16] (servicePortChainName),
 *   `KUBE-SEP-` + base32(sha256(servicePortName + protocol + "ip:port"))[:16] (servicePortEndpointChainName),
 *   `KUBE-EXT-` for NodePorts; servicePortName is `ns/name:port` (`ns/name` for an unnamed port), protocol lower case;
 * - probabilities `%0.10f` of 1/(n-i) for each endpoint but the last;
 * - `! -s <clusterCIDR> -j KUBE-MARK-MASQ` on the ClusterIP rule (detect-local-mode ClusterCIDR);
 * - Services without usable endpoints get the filter-table REJECT.
 * Only what the test bed needs: ClusterIP and NodePort Services with externalTrafficPolicy Cluster, IPv4.
 *
 * Test helper; runtime-neutral (node:crypto only).
 * @module
 */
import { createHash } from "node:crypto";
import type { EndpointSlice, Service } from "../../src/model/k8s.ts";

const B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** RFC 4648 base32 (as Go's base32.StdEncoding, padding irrelevant for the 16-character prefix). */
export function base32(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

function hash16(text: string): string {
  return base32(createHash("sha256").update(text).digest()).slice(0, 16);
}

/** `KUBE-SVC-…` for a servicePortName (`ns/name:port`) and protocol (`tcp`). */
export function svcChain(servicePortName: string, protocol: string): string {
  return `KUBE-SVC-${hash16(servicePortName + protocol)}`;
}

/** `KUBE-SEP-…` for a servicePortName, protocol and endpoint `ip:port`. */
export function sepChain(servicePortName: string, protocol: string, endpoint: string): string {
  return `KUBE-SEP-${hash16(servicePortName + protocol + endpoint)}`;
}

/** `KUBE-EXT-…` (same hash as the SVC chain). */
export function extChain(servicePortName: string, protocol: string): string {
  return `KUBE-EXT-${hash16(servicePortName + protocol)}`;
}

function q(comment: string): string {
  return /\s/.test(comment) ? `"${comment}"` : comment;
}

/**
 * The restore buffer kube-proxy (iptables mode) writes for these Services on any node (Cluster policy: every node
 * has the same rules).
 * @param services the Services.
 * @param slices their EndpointSlices (label kubernetes.io/service-name).
 * @param clusterCIDR the pod CIDR for the masquerade rule, e.g. `10.244.0.0/16`.
 * @returns the buffer, with `*mangle` (kubelet's KUBE-IPTABLES-HINT/KUBE-KUBELET-CANARY), `*filter` and `*nat`.
 */
export function kubeProxyRules(services: readonly Service[], slices: readonly EndpointSlice[], clusterCIDR: string): string {
  const filter: string[] = [];
  const natChains = new Set<string>(["KUBE-NODEPORTS", "KUBE-SERVICES", "KUBE-MARK-MASQ", "KUBE-POSTROUTING"]);
  const nodeports: string[] = [];
  const svcRules: string[] = [];
  const body: string[] = [];
  for (const svc of services) {
    if (!svc.spec.clusterIP || svc.spec.clusterIP === "None" || svc.spec.type === "ExternalName") continue;
    const ns = svc.metadata.namespace ?? "default";
    const name = svc.metadata.name;
    const mine = slices.filter((s) => s.metadata.namespace === ns && s.metadata.labels?.["kubernetes.io/service-name"] === name && s.addressType === "IPv4");
    for (const sp of svc.spec.ports ?? []) {
      const proto = (sp.protocol ?? "TCP").toLowerCase();
      const spn = `${ns}/${name}${sp.name ? `:${sp.name}` : ""}`;
      const eps: string[] = [];
      for (const s of mine) {
        const port = s.ports?.find((p) => (p.name ?? "") === (sp.name ?? "") && (p.protocol ?? "TCP").toLowerCase() === proto)?.port;
        if (port === undefined) continue;
        for (const e of s.endpoints ?? []) {
          if (e.conditions?.ready === false) continue;
          for (const a of e.addresses.slice(0, 1)) eps.push(`${a}:${port}`);
        }
      }
      eps.sort();
      const svcC = svcChain(spn, proto);
      const extC = extChain(spn, proto);
      if (eps.length === 0) {
        filter.push(`-A KUBE-SERVICES -m comment --comment "${spn} has no endpoints" -m ${proto} -p ${proto} -d ${svc.spec.clusterIP} --dport ${sp.port} -j REJECT`);
        continue;
      }
      natChains.add(svcC);
      svcRules.push(`-A KUBE-SERVICES -m comment --comment "${spn} cluster IP" -m ${proto} -p ${proto} -d ${svc.spec.clusterIP} --dport ${sp.port} -j ${svcC}`);
      if (sp.nodePort && (svc.spec.type === "NodePort" || svc.spec.type === "LoadBalancer")) {
        natChains.add(extC);
        nodeports.push(`-A KUBE-NODEPORTS -m comment --comment ${q(spn)} -m ${proto} -p ${proto} --dport ${sp.nodePort} -j ${extC}`);
        body.push(`-A ${extC} -m comment --comment "masquerade traffic for ${spn} external destinations" -j KUBE-MARK-MASQ`);
        body.push(`-A ${extC} -j ${svcC}`);
      }
      body.push(`-A ${svcC} -m comment --comment "${spn} cluster IP" -m ${proto} -p ${proto} -d ${svc.spec.clusterIP} --dport ${sp.port} ! -s ${clusterCIDR} -j KUBE-MARK-MASQ`);
      eps.forEach((ep, i) => {
        const sep = sepChain(spn, proto, ep);
        natChains.add(sep);
        const prob = i < eps.length - 1 ? ` -m statistic --mode random --probability ${(1 / (eps.length - i)).toFixed(10)}` : "";
        body.push(`-A ${svcC} -m comment --comment "${spn} -> ${ep}"${prob} -j ${sep}`);
        const ip = ep.slice(0, ep.lastIndexOf(":"));
        body.push(`-A ${sep} -m comment --comment ${q(spn)} -s ${ip} -j KUBE-MARK-MASQ`);
        body.push(`-A ${sep} -m comment --comment ${q(spn)} -m ${proto} -p ${proto} -j DNAT --to-destination ${ep}`);
      });
    }
  }
  const nat = [
    "*nat",
    ...[...natChains].map((c) => `:${c} - [0:0]`),
    ...nodeports,
    ...svcRules,
    `-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS`,
    "-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000",
    "-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN",
    "-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000",
    `-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE`,
    ...body,
    "COMMIT",
  ];
  return [
    "*mangle",
    ":KUBE-IPTABLES-HINT - [0:0]",
    ":KUBE-KUBELET-CANARY - [0:0]",
    "COMMIT",
    "*filter",
    ":KUBE-NODEPORTS - [0:0]",
    ":KUBE-SERVICES - [0:0]",
    ":KUBE-EXTERNAL-SERVICES - [0:0]",
    ":KUBE-FORWARD - [0:0]",
    ":KUBE-PROXY-FIREWALL - [0:0]",
    ...filter,
    "-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP",
    `-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT`,
    `-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    "COMMIT",
    ...nat,
  ].join("\n") + "\n";
}

/**
 * A restore buffer as iptables-legacy-save prints it back: in each table, builtin chains first, then user chains in
 * name order (libiptc keeps user chains sorted by name), each chain's rules together in that chain order, the rules of
 * a chain in their own order.
 * @param buffer an iptables-restore buffer (`*table`, `:CHAIN`, `-A CHAIN …`, `COMMIT`).
 * @returns the buffer in save order.
 */
export function legacySaveOrder(buffer: string): string {
  const out: string[] = [];
  const BUILTIN = ["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"];
  let decls: string[] = [];
  let rules = new Map<string, string[]>();
  const order = (a: string, b: string) => {
    const ba = BUILTIN.indexOf(a);
    const bb = BUILTIN.indexOf(b);
    if (ba >= 0 || bb >= 0) return (ba < 0 ? 99 : ba) - (bb < 0 ? 99 : bb);
    return a < b ? -1 : a > b ? 1 : 0;
  };
  for (const line of buffer.split("\n")) {
    if (line.startsWith("*")) {
      out.push(line);
      decls = [];
      rules = new Map();
    } else if (line.startsWith(":")) decls.push(line);
    else if (line.startsWith("-A ")) {
      const chain = line.split(" ")[1]!;
      rules.set(chain, [...(rules.get(chain) ?? []), line]);
    } else if (line === "COMMIT") {
      const name = (d: string) => d.slice(1).split(" ")[0]!;
      decls.sort((a, b) => order(name(a), name(b)));
      out.push(...decls);
      for (const chain of [...rules.keys()].sort(order)) out.push(...rules.get(chain)!);
      out.push(line);
    }
  }
  return out.join("\n") + "\n";
}
