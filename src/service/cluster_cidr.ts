/**
 * The cluster CIDR a node's masquerade decisions depend on, and where it was learnt.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Bundle } from "../bundle/bundle.ts";
import type { IptablesDump } from "../datapath/iptables_save.ts";
import { cidrContains, isIPv6 } from "../model/ip.ts";
import { nodePodCIDRs } from "./node_facts.ts";
import { readKubeProxyConfig } from "./proxy_config.ts";

export function detectClusterCIDRs(bundle: Bundle, dump: IptablesDump | undefined, family: 4 | 6): { cidrs: string[]; source: string } {
  if (dump) {
    const nat = dump.tables.get("nat");
    const found = new Set<string>();
    // kube-proxy detect-local-mode=ClusterCIDR writes `! -s <clusterCIDR> … -j KUBE-MARK-MASQ` for ClusterIPs
    // (in KUBE-SVC-* since ~v1.21, in KUBE-SERVICES before) and `-s <clusterCIDR>` "pod traffic" in KUBE-EXT-*.
    const scan = (raw: readonly string[]) => {
      for (const r of raw) {
        // Most rules name neither (a KUBE-SERVICES jump): a substring test is much cheaper than three regular expressions.
        if (!r.includes("KUBE-MARK-MASQ") && !r.includes("pod traffic for ")) continue;
        const m = /! -s (\S+) .*-j KUBE-MARK-MASQ/.exec(r) ?? /"pod traffic for .*" -s (\S+) /.exec(r) ??
          /-s (\S+) -m comment --comment "pod traffic for /.exec(r);
        if (m && m[1]!.includes("/") && !m[1]!.endsWith("/32") && !m[1]!.endsWith("/128")) found.add(m[1]!);
        if (found.size > 0) break;
      }
    };
    if (nat) {
      const svcs = nat.chains.get("KUBE-SERVICES");
      const head = svcs?.rawRules.slice(0, 2000) ?? [];
      scan(head);
      // The detector rule is the first rule of KUBE-SVC/KUBE-SVL chains (v1.21+) or in KUBE-EXT "pod traffic" rules:
      // look at the first rule of up to 200 such chains (chains of Services without endpoints have none).
      // Those chains are found through the jumps of KUBE-SERVICES (a dump has tens of thousands of chains; walking
      // them all would cost more than the rest of the analysis), then, for chains no rule there jumps to, by name.
      const jumpedTo = head.map((r) => / -j (KUBE-\S+)/.exec(r)?.[1]).filter((t): t is string => t !== undefined);
      const named = function* (prefix: string): Generator<string> {
        for (const name of nat.chains.keys()) if (name.startsWith(prefix)) yield name;
      };
      for (const prefix of ["KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-"]) {
        if (found.size > 0) break;
        const jumped = jumpedTo.filter((n) => n.startsWith(prefix));
        let looked = 0;
        for (const name of jumped.length > 0 ? jumped : named(prefix)) {
          const ch = nat.chains.get(name);
          if (!ch || ch.ruleCount === 0) continue;
          scan(ch.rawRules.slice(0, 3));
          if (found.size > 0 || ++looked >= 200) break;
        }
      }
    }
    if (found.size > 0) return { cidrs: [...found], source: "the rules (local-traffic detector)" };
  }
  const fromCapture = (bundle.capture.clusterCIDRs ?? []).filter((c) => isIPv6(c) === (family === 6));
  if (fromCapture.length > 0) return { cidrs: fromCapture, source: "the bundle's capture info" };
  const cfg = readKubeProxyConfig(bundle.objects)?.clusterCIDRs;
  if (cfg) {
    const c = cfg.value.filter((x) => isIPv6(x) === (family === 6));
    if (c.length > 0) return { cidrs: c, source: cfg.source };
  }
  const podCIDRs = bundle.objects.nodes.flatMap(nodePodCIDRs)
    .filter((c) => isIPv6(c) === (family === 6));
  if (podCIDRs.length > 0) return { cidrs: podCIDRs, source: "the nodes' podCIDRs" };
  return { cidrs: [], source: "nowhere" };
}

/**
 * What the CIDR of a node's local-traffic detector stands for. kube-proxy builds a CIDR detector from the cluster CIDR
 * (`--detect-local-mode=ClusterCIDR`, `detectLocal.clusterCIDRs`) or from the Node's own `spec.podCIDRs`
 * (`NodeCIDR`) (pkg/proxy/util/localdetector.go GetLocalTrafficDetectors: NewDetectLocalByCIDR of the cluster CIDR
 * or of the node's first podCIDR of the family), and the rules show only the CIDR (`ip saddr != CIDR`, `! -s CIDR`). A cluster CIDR holds
 * every node's pod CIDR; a NodeCIDR detector is this node's pod CIDR, which another node's pod CIDR lies outside.
 * @param detected the detector's CIDRs, as the rules show them (one family).
 * @param ownPodCIDRs this node's `spec.podCIDRs` of that family.
 * @param otherPodCIDRs the other Nodes' `spec.podCIDRs` of that family (those in the bundle).
 * @param configuredMode kube-proxy's configured `detectLocalMode` (proxy_config.ts), when the bundle holds it: it
 *   decides only what the Nodes cannot.
 * @returns `node` (detect-local-mode NodeCIDR: only this node's pods are local), `cluster`, or `undetermined` (the
 *   CIDR is this node's pod CIDR, and neither another Node nor the configuration tells the two modes apart).
 */
export function detectorCIDRScope(detected: readonly string[], ownPodCIDRs: readonly string[], otherPodCIDRs: readonly string[], configuredMode?: string): "node" | "cluster" | "undetermined" {
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  if (detected.length === 0 || !detected.every((d) => ownPodCIDRs.some((p) => same(p, d)))) return "cluster";
  // another node's pod CIDR outside the detected one: it cannot be the cluster CIDR
  const outside = otherPodCIDRs.some((c) => !detected.some((d) => cidrContains(d, c.split("/")[0]!)));
  if (outside) return "node";
  if (configuredMode === "NodeCIDR") return "node";
  if (configuredMode === "ClusterCIDR") return "cluster";
  return "undetermined";
}
