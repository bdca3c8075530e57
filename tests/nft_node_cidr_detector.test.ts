// kube-proxy --detect-local-mode=NodeCIDR builds its local-traffic detector from the Node's own spec.podCIDRs, not the
// cluster CIDR (pkg/proxy/util/localdetector.go GetLocalTrafficDetectors, case LocalModeNodeCIDR), so its rules read
// `ip saddr != <this node's podCIDR>`. The report called that CIDR "the cluster CIDR", as if every pod of the cluster
// were in it; the Nodes' podCIDRs tell the two apart (cluster_cidr.ts detectorCIDRScope).
// Ruleset: kube-proxy's TestOverallNFTablesRules transaction (tests/fixtures/nftables), its detector 10.0.0.0/8
// rewritten to the CIDR the case's kube-proxy would write.
import { describe, expect, it } from "vitest";
import { emptyBundle } from "../src/bundle/bundle.ts";
import type { ConfigMap, Node } from "../src/model/k8s.ts";
import { explainService } from "../src/service/explain.ts";
import { fixture, node, overallObjects } from "./helpers/bundles.ts";

const withPodCIDR = (n: Node, cidr: string): Node => ({ ...n, spec: { ...n.spec, podCIDR: cidr, podCIDRs: [cidr] } });

function explain(detector: string, nodes: Node[], configMap?: ConfigMap) {
  const { services, slices } = overallObjects("test-node", true);
  const b = emptyBundle({ tool: "test" });
  b.objects.services.push(...services);
  b.objects.endpointSlices.push(...slices);
  b.objects.nodes.push(...nodes);
  if (configMap) b.objects.configMaps.push(configMap);
  b.nodes.push({ name: "test-node", sections: { "nft-text": { stdout: fixture("nftables/TestOverallNFTablesRules.nft").replaceAll("10.0.0.0/8", detector), exitCode: 0 } } });
  const n = explainService(b, "ns1", "svc1").nodes[0]!;
  const external = n.ports[0]!.entryPoints[0]!.clients.find((c) => c.client === "external")!;
  return { notes: n.notes, external: external.description };
}

const n1 = withPodCIDR(node("test-node", "192.168.0.2"), "10.0.0.0/24");
const n2 = withPodCIDR(node("n2", "192.168.0.3"), "10.0.1.0/24");

describe("the CIDR of the local-traffic detector", () => {
  it("NodeCIDR: the node's pod CIDR, another node's outside it: named so, and the client from outside worded by it", () => {
    const r = explain("10.0.0.0/24", [n1, n2]);
    expect(r.notes).toContain(
      "local-traffic detector: test-node's pod CIDR 10.0.0.0/24 (from the rules; detect-local-mode NodeCIDR, built from the Node's spec.podCIDRs): only this node's pods count as local, so pods of other nodes are masqueraded at ClusterIPs and not short-circuited at externalTrafficPolicy Local addresses",
    );
    expect(r.notes.filter((x) => x.startsWith("cluster CIDR"))).toEqual([]);
    expect(r.external).toBe("client outside test-node's pod CIDR routed to test-node (203.0.113.10)");
  });

  it("ClusterCIDR: a CIDR holding every node's pod CIDR is the cluster CIDR, as before", () => {
    const r = explain("10.0.0.0/16", [n1, n2]);
    expect(r.notes).toContain("cluster CIDR 10.0.0.0/16 (from the rules (local-traffic detector))");
    expect(r.external).toBe("client outside the cluster CIDR routed to test-node (203.0.113.10)");
  });

  it("the node's pod CIDR and no other Node in the bundle: says what decides instead of guessing", () => {
    const r = explain("10.0.0.0/24", [n1]);
    expect(r.notes).toContain(
      "local-traffic detector 10.0.0.0/24 (from the rules): it is test-node's podCIDR, and no other Node's podCIDR or kube-proxy configuration in the bundle tells whether it stands for the cluster CIDR or for this node's pods alone: kube-proxy's --detect-local-mode (ClusterCIDR or NodeCIDR) decides whether pods of other nodes count as local",
    );
  });

  it("the same with kube-proxy's configuration saying NodeCIDR: the node's pod CIDR", () => {
    const cm: ConfigMap = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "kube-proxy", namespace: "kube-system" }, data: { "config.conf": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\ndetectLocalMode: NodeCIDR\n" } };
    const r = explain("10.0.0.0/24", [n1], cm);
    expect(r.notes.some((x) => x.startsWith("local-traffic detector: test-node's pod CIDR 10.0.0.0/24"))).toBe(true);
  });
});
