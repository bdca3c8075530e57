// internalTrafficPolicy Local with externalTrafficPolicy Cluster, nftables mode: the ClusterIP takes the `local-`
// chain (or `no-endpoint-services` drop without a local endpoint), clients from outside the `service-` chain of every
// endpoint (pkg/proxy/nftables/proxier.go syncProxyRules: internalPolicyChain = localPolicyChain,
// externalPolicyChain = clusterPolicyChain, written from clusterEndpoints of pkg/proxy/topology.go
// CategorizeEndpoints). A stale `service-` chain is endpoint drift (missing-on-node / stale-on-node), as for any other
// Service; it used to be blamed on "rules written for another policy" because only the ClusterIP's chain was compared.
// The table: kube-proxy's fixed chains and maps of TestOverallNFTablesRules (tests/fixtures/nftables), then one
// Service's elements and chains as syncProxyRules writes them for these policies.
import { describe, expect, it } from "vitest";
import { emptyBundle } from "../src/bundle/bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { fixture, node, service, slice } from "./helpers/bundles.ts";

const BASE = fixture("nftables/TestOverallNFTablesRules.nft").split("\n# svc1\n")[0]!;
const SVC = "GYOC5QR7-a/itp3/tcp/http";
const LOC = "LQD4RZUM-a/itp3/tcp/http";
const ep = (ip: string) => `endpoint-${ip.replace(/\./g, "").slice(-8).padStart(8, "X")}-a/itp3/tcp/http__${ip}/80`;

/** kube-proxy's rules for a/itp3 (NodePort 30150) whose `service-` chain sends to `cluster`, `local-` chain to `local`. */
function table(cluster: string[], local: string[], opts: { externalToLocal?: boolean } = {}): string {
  const lines = [BASE, "# itp3"];
  const vmap = (eps: string[]) => `numgen random mod ${eps.length} vmap { ${eps.map((e, i) => `${i} : goto ${ep(e)}`).join(" , ")} }`;
  lines.push(`add chain ip kube-proxy service-${SVC}`, `add rule ip kube-proxy service-${SVC} ${vmap(cluster)}`);
  if (local.length > 0) {
    lines.push(`add chain ip kube-proxy local-${LOC}`, `add rule ip kube-proxy local-${LOC} ip daddr 172.30.0.150 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade`, `add rule ip kube-proxy local-${LOC} ${vmap(local)}`);
  }
  lines.push(`add chain ip kube-proxy external-${SVC}`);
  // policy Cluster: mark for masquerade, then the service- chain; a node still on policy Local: straight to local-
  if (opts.externalToLocal) lines.push(`add rule ip kube-proxy external-${SVC} goto local-${LOC}`);
  else lines.push(`add rule ip kube-proxy external-${SVC} jump mark-for-masquerade`, `add rule ip kube-proxy external-${SVC} goto service-${SVC}`);
  for (const e of new Set([...cluster, ...local])) {
    lines.push(`add chain ip kube-proxy ${ep(e)}`, `add rule ip kube-proxy ${ep(e)} ip saddr ${e} jump mark-for-masquerade`, `add rule ip kube-proxy ${ep(e)} meta l4proto tcp dnat to ${e}:80`);
  }
  lines.push("add element ip kube-proxy cluster-ips { 172.30.0.150 }");
  if (local.length > 0) lines.push(`add element ip kube-proxy service-ips { 172.30.0.150 . tcp . 80 : goto local-${LOC} }`);
  else lines.push('add element ip kube-proxy no-endpoint-services { 172.30.0.150 . tcp . 80 comment "a/itp3:http" : drop }');
  lines.push(`add element ip kube-proxy service-nodeports { tcp . 30150 : goto external-${SVC} }`);
  return lines.join("\n") + "\n";
}

function explain(rules: string, endpoints: { ip: string; node: string }[]) {
  const b = emptyBundle({ tool: "test" });
  b.objects.services.push(service("a", "itp3", { type: "NodePort", clusterIP: "172.30.0.150", internalTrafficPolicy: "Local", externalTrafficPolicy: "Cluster", ports: [{ name: "http", port: 80, protocol: "TCP", nodePort: 30150 }] }));
  b.objects.endpointSlices.push(slice("a", "itp3", endpoints, [{ name: "http", port: 80 }]));
  b.objects.nodes.push(node("test-node", "192.168.0.2"), node("n2", "192.168.0.3"));
  b.nodes.push({ name: "test-node", sections: { "nft-text": { stdout: rules, exitCode: 0 } } });
  return explainService(b, "a", "itp3").nodes[0]!.drift.map((d) => [d.kind, d.endpoint ?? "", d.message]);
}

describe("iTP Local, eTP Cluster: the service- chain of clients from outside against the API", () => {
  it("as kube-proxy writes it (no local endpoint: ClusterIP dropped, NodePort to every endpoint): no drift", () => {
    expect(explain(table(["10.0.1.6"], []), [{ ip: "10.0.1.6", node: "n2" }])).toEqual([]);
  });

  it("no local endpoint, service- chain still on a deleted endpoint: stale and missing, not another policy", () => {
    expect(explain(table(["10.0.1.9"], []), [{ ip: "10.0.1.6", node: "n2" }])).toEqual([
      ["missing-on-node", "10.0.1.6:80", "a/itp3:http: endpoint 10.0.1.6:80 is ready in the API but test-node does not send clients from outside at NodePort 192.168.0.2:30150/tcp to it (externalTrafficPolicy Cluster, internalTrafficPolicy Local: the chain of every endpoint that external traffic takes)"],
      ["stale-on-node", "10.0.1.9:80", "a/itp3:http: test-node sends clients from outside at NodePort 192.168.0.2:30150/tcp to 10.0.1.9:80, which is not a usable endpoint in the API (deleted, not ready, or outside this node's topology hints)"],
    ]);
  });

  it("a local endpoint (local- chain right), service- chain stale: the same, for the service- chain only", () => {
    const d = explain(table(["10.0.0.5", "10.0.1.9"], ["10.0.0.5"]), [{ ip: "10.0.0.5", node: "test-node" }, { ip: "10.0.1.6", node: "n2" }]);
    expect(d.map(([k, e]) => [k, e])).toEqual([["missing-on-node", "10.0.1.6:80"], ["stale-on-node", "10.0.1.9:80"]]);
  });

  it("external- chain still written for policy Local (local endpoints only, no masquerade): external-policy, as before", () => {
    const d = explain(table(["10.0.0.5", "10.0.1.6"], ["10.0.0.5"], { externalToLocal: true }), [{ ip: "10.0.0.5", node: "test-node" }, { ip: "10.0.1.6", node: "n2" }]);
    expect(d.map(([k]) => k)).toEqual(["external-policy"]);
    expect(d[0]![2]).toMatch(/externalTrafficPolicy Cluster, but test-node sends clients from outside at NodePort 192\.168\.0\.2:30150\/tcp to 10\.0\.0\.5:80 where the API has 10\.0\.0\.5:80, 10\.0\.1\.6:80: the node's rules look written for another policy/);
  });
});
