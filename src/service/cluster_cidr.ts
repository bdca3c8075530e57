/**
 * The cluster CIDR a node's masquerade decisions depend on, and where it was learnt.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Bundle } from "../bundle/bundle.ts";
import type { IptablesDump, IptablesTable } from "../datapath/iptables_save.ts";
import { cidrContains, isIPv6 } from "../model/ip.ts";
import { nodePodCIDRs } from "./node_facts.ts";
import { readKubeProxyConfig } from "./proxy_config.ts";

/**
 * The raw rules of a node's iptables nat table where kube-proxy writes its local-traffic detector, in the order to
 * look at them: the first 2,000 rules of KUBE-SERVICES (layouts before v1.21 put the ClusterIP's masquerade rule
 * there), then the first 3 rules of up to 200 non-empty `KUBE-SVC-` chains (the ClusterIP rule
 * `… ! -s CIDR / ! -i cni0 -j KUBE-MARK-MASQ`, `localDetector.IfNotLocal()`), `KUBE-SVL-` chains, and `KUBE-EXT-` chains
 * (the "pod traffic for … external destinations" short-circuit, `IfLocal()`, written for externalTrafficPolicy Local
 * only) (pkg/proxy/iptables/proxier.go syncProxyRules, v1.21+). Those chains are the ones KUBE-SERVICES and
 * KUBE-NODEPORTS jump to; only when none of a prefix is jumped to, the table's chains of that prefix by name. Never
 * the chains in declaration order: iptables-legacy-save lists user chains by name, so a dump's hundreds of
 * `KUBE-EXT-` chains of externalTrafficPolicy Cluster Services (no detector rule) come before every `KUBE-SVC-` one.
 * Lazy: a caller stops as soon as it has what it looks for (a dump has tens of thousands of chains).
 * @param nat the nat table.
 * @returns the rules, one at a time: raw text, 1-based line in the dump and chain.
 */
export function* detectorRuleCandidates(nat: IptablesTable): Generator<DetectorCandidate> {
  const rulesOf = function* (chain: string, count: number): Generator<DetectorCandidate> {
    const ch = nat.chains.get(chain);
    if (!ch) return;
    const raw = ch.rawRules;
    for (let i = 0; i < Math.min(count, raw.length); i++) yield { text: raw[i]!, line: ch.ruleLines[i] ?? ch.line, chain };
  };
  yield* rulesOf("KUBE-SERVICES", 2000);
  const head = nat.chains.get("KUBE-SERVICES")?.rawRules.slice(0, 2000) ?? [];
  const nodePorts = nat.chains.get("KUBE-NODEPORTS")?.rawRules.slice(0, 2000) ?? [];
  const jumpedTo = [...new Set([...head, ...nodePorts].map((r) => / -j (KUBE-\S+)/.exec(r)?.[1]).filter((t): t is string => t !== undefined))];
  const named = function* (prefix: string): Generator<string> {
    for (const name of nat.chains.keys()) if (name.startsWith(prefix)) yield name;
  };
  for (const prefix of ["KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-"]) {
    const jumped = jumpedTo.filter((n) => n.startsWith(prefix));
    let looked = 0;
    for (const name of jumped.length > 0 ? jumped : named(prefix)) {
      const ch = nat.chains.get(name);
      if (!ch || ch.ruleCount === 0) continue;
      yield* rulesOf(name, 3);
      if (++looked >= 200) break;
    }
  }
}

/** One rule {@link detectorRuleCandidates} yields. */
export interface DetectorCandidate {
  /** The rule as the dump prints it (`-A KUBE-SVC-… ! -i cni0 -j KUBE-MARK-MASQ`). */
  text: string;
  /** Its 1-based line in the dump. */
  line: number;
  /** Its chain. */
  chain: string;
}

/**
 * The cluster CIDR a node's masquerade decisions depend on, and where it was learnt: kube-proxy's CIDR detector in
 * the rules ({@link detectorRuleCandidates}), else the bundle's capture info, kube-proxy's configuration, the Nodes'
 * podCIDRs.
 * @param bundle the bundle (capture info, objects).
 * @param dump the node's iptables dump of that family, if any.
 * @param family 4 or 6.
 * @returns the CIDRs and their source (`"nowhere"` with none).
 */
export function detectClusterCIDRs(bundle: Bundle, dump: IptablesDump | undefined, family: 4 | 6): { cidrs: string[]; source: string } {
  if (dump) {
    const nat = dump.tables.get("nat");
    const found = new Set<string>();
    // kube-proxy detect-local-mode=ClusterCIDR writes `! -s <clusterCIDR> … -j KUBE-MARK-MASQ` for ClusterIPs
    // (in KUBE-SVC-* since ~v1.21, in KUBE-SERVICES before) and `-s <clusterCIDR>` "pod traffic" in KUBE-EXT-*.
    if (nat) {
      for (const { text: r } of detectorRuleCandidates(nat)) {
        // Most rules name neither (a KUBE-SERVICES jump): a substring test is much cheaper than three regular expressions.
        if (!r.includes("KUBE-MARK-MASQ") && !r.includes("pod traffic for ")) continue;
        const m = /! -s (\S+) .*-j KUBE-MARK-MASQ/.exec(r) ?? /"pod traffic for .*" -s (\S+) /.exec(r) ??
          /-s (\S+) -m comment --comment "pod traffic for /.exec(r);
        if (m && m[1]!.includes("/") && !m[1]!.endsWith("/32") && !m[1]!.endsWith("/128")) found.add(m[1]!);
        if (found.size > 0) break;
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

/**
 * Whether a node's iptables rules show kube-proxy running without a local-traffic detector (a no-op detector whose
 * IsImplemented() is false, pkg/proxy/util/localdetector.go: e.g. `detectLocalMode` ClusterCIDR with `clusterCIDR`
 * unset; local_detector.ts noDetectorCause says which setting) and without masqueradeAll. kube-proxy then writes (pkg/proxy/iptables/proxier.go and ipvs/proxier.go
 * syncProxyRules):
 * - iptables mode: no ClusterIP masquerade rule in KUBE-SVC-/KUBE-SVL- chains (`… cluster IP … -j KUBE-MARK-MASQ`,
 *   only `if masqueradeAll … else if localDetector.IsImplemented()`) and no "pod traffic" short-circuit in KUBE-EXT-;
 * - IPVS mode: `-m set --match-set KUBE-CLUSTER-IP src,dst -j KUBE-MARK-MASQ` ("Masquerade all OUTPUT traffic coming
 *   from a service ip") in place of the detector's `… dst,dst -j KUBE-MARK-MASQ`.
 * @param dump the node's iptables dump of one family.
 * @returns true only when the rules show it: KUBE-SERVICES marks nothing for masquerade (IPVS: only the `src,dst`
 *   rule) and none of the first 3 rules of up to 200 KUBE-SVC-/KUBE-SVL- chains it jumps to does; false otherwise,
 *   including when there is nothing to tell by.
 */
export function iptablesWithoutLocalDetector(dump: IptablesDump | undefined): boolean {
  const nat = dump?.tables.get("nat");
  const head = nat?.chains.get("KUBE-SERVICES")?.rawRules.slice(0, 2000) ?? [];
  if (!nat || head.length === 0) return false;
  const marking = head.filter((r) => r.includes("-j KUBE-MARK-MASQ"));
  if (marking.some((r) => / KUBE-CLUSTER-IP src,dst /.test(r))) return !marking.some((r) => / KUBE-CLUSTER-IP dst,dst /.test(r));
  if (marking.length > 0) return false;
  const jumped = [...new Set(head.map((r) => / -j (KUBE-SV[CL]-\S+)/.exec(r)?.[1]).filter((t): t is string => t !== undefined))];
  let looked = 0;
  for (const name of jumped) {
    const ch = nat.chains.get(name);
    if (!ch || ch.ruleCount === 0) continue;
    if (ch.rawRules.slice(0, 3).some((r) => r.includes("-j KUBE-MARK-MASQ"))) return false;
    if (++looked >= 200) break;
  }
  return looked > 0;
}
