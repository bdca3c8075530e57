// Scale is part of correctness: every datapath feature kube-proxy's own unit tests write (externalTrafficPolicy Local,
// internalTrafficPolicy Local, session affinity, loadBalancerSourceRanges, externalIPs, Services without endpoints,
// serving-terminating fallback, SCTP, localhost NodePorts, masquerade --random-fully, hairpin…) is analysed on the
// fixture's small node and on the same node carrying 10,000 more Services from the bench generator
// (tests/helpers/scale_merge.ts lays them out together as kube-proxy would), and the two answers must be the same:
// iptables mode in both backends' iptables-save text (tests/fixtures/node-format), nftables mode in `nft -j` and
// `nft list` text (tests/fixtures/nftables). Each case also checks that the feature is in the answer, so two empty
// answers cannot pass.
//
// Compared: the JSON report (`-o json`, serializeReport) of explainService for the fixture's node, with what names a
// rule's place in the dump removed: `line` (a line of the file, or an nftables handle) and `handle` fields, and the
// "line N" / "handle N" words in reasons, caveats and messages (inserting 10,000 Services moves every rule below the
// insertion point). Everything else — the rules' text, chains, verdicts, shares, masquerade, drift, findings, limits,
// notes — must be equal.
//
// A scale-only defect makes it fail: with the destination index of long chains (src/service/iptables/trace.ts
// candidates) dropping the rules that match any destination, TestNodePort and TestOnlyLocalLoadBalancing fail here
// and nowhere else (KUBE-SERVICES is indexed only past 64 rules); with nftables map lookups indexing only a map's last
// 1,000 elements (src/service/nftables/tracer.ts index), TestSyncProxyRulesRepeated-08's svc3 is rejected in both forms.
//
// Fixtures not paired, and why:
// - TestSyncProxyRulesRepeated-1…9 (iptables): cumulative partial restores whose API objects per stage no test pairs.
// - nftables TestSyncProxyRulesRepeated-01/02/04/06/10 and TestSyncProxyRulesStartup-*: intermediate states no test
//   pairs with objects; 07 (paired in nft_service.test.ts) shows the flushed-chain and stale-endpoint features 03 and
//   09 already cover here, and each nftables stage costs ~2 s of JSON parsing at this size.
// - TestBadIPs (iptables, nftables), baseRules (nftables): bad input / the bare table, no feature Service.
// - TestEnable/DisableLocalhostNodePortsIPv6 (.ip6tables-save): the generator writes IPv4 only, and an ip6tables dump is
//   a section of its own that IPv4 Services do not join.
// A kernel round trip of the merged legacy dump is not done here: the offline equality is the check, and the kernel
// agreement of these fixtures' verdicts is kernel_agreement.test.ts's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { emptyBundle } from "../src/bundle/bundle.ts";
import type { EndpointSlice, Service } from "../src/model/k8s.ts";
import { serializeReport } from "../src/report/serialize.ts";
import { explainService } from "../src/service/explain.ts";
import type { ClientVerdict, ServiceReport } from "../src/service/report.ts";
import { servicePortName } from "../bench/cluster_plan.ts";
import {
  fixture,
  node,
  notServingEndpoint,
  overallObjects,
  readyEndpoint,
  repeatedObjects,
  service,
  servingTerminatingEndpoint,
  slice,
  terminatingLocalService,
  type TestEndpoint,
} from "./helpers/bundles.ts";
import {
  assertClear,
  iptablesParts,
  type IptablesParts,
  mergeIptablesSave,
  mergeNftJson,
  mergeNftText,
  nftParts,
  type NftParts,
  planObjects,
  relocatedPlan,
  withDetector,
} from "./helpers/scale_merge.ts";

const N = 10_000;

type Objects = { services: Service[]; slices: EndpointSlice[] };
type Check = (r: ServiceReport) => void;

interface Case {
  /** Fixture base name (tests/fixtures/kube-proxy, node-format, nftables). */
  fixture: string;
  node: string;
  nodeIP: string;
  /** The fixture's local-traffic detector CIDR (CONVENTIONS.md), undefined for a no-op detector. */
  detector: string | undefined;
  /** The capture's cluster CIDRs (kube-proxy's --cluster-cidr), as the test that pairs the fixture sets them. */
  clusterCIDRs?: string[];
  objects: Objects;
  /** Services asked about, each with what must be seen in its answer. */
  ask: [ns: string, name: string, sees: Check][];
}

// ------------------------------------------------------------------------------------------------------------------
// What each feature looks like in the answer.

function client(r: ServiceReport, port: number, kind: string, who: ClientVerdict["client"]): ClientVerdict {
  const n = r.nodes[0]!;
  const pr = n.ports.find((p) => p.servicePort.port === port || p.servicePort.nodePort === port);
  expect(pr, `port ${port}`).toBeDefined();
  const e = pr!.entryPoints.find((x) => x.kind === kind);
  expect(e, `${kind} entry for port ${port}`).toBeDefined();
  const c = e!.clients.find((x) => x.client === who);
  expect(c, `${who} at ${kind}`).toBeDefined();
  return c!;
}
const eps = (c: ClientVerdict) => c.endpoints.map((e) => e.endpoint);
const by = (c: ClientVerdict, role: string) => c.evidence.find((e) => e.role === role)?.rule;

const forwardsTo = (port: number, kind: string, who: ClientVerdict["client"], endpoints: string[], masquerade?: ClientVerdict["masquerade"]): Check => (r) => {
  const c = client(r, port, kind, who);
  expect(c.outcome).toBe("forwarded");
  expect(eps(c)).toEqual(endpoints);
  if (masquerade !== undefined) expect(c.masquerade).toBe(masquerade);
};
const stops = (port: number, kind: string, who: ClientVerdict["client"], outcome: "rejected" | "dropped", chainOrText: string): Check => (r) => {
  const c = client(r, port, kind, who);
  expect(c.outcome).toBe(outcome);
  const rule = by(c, outcome === "rejected" ? "rejects" : "drops");
  expect(rule, `${outcome} by a rule`).toBeDefined();
  expect(`${rule!.chain} ${rule!.raw}`).toContain(chainOrText);
};
const all = (...checks: Check[]): Check => (r) => checks.forEach((c) => c(r));
const affinity = (seconds: number): Check => (r) => expect(r.limits.some((l) => l.startsWith("session affinity") && l.includes(`${seconds} s`))).toBe(true);

// ------------------------------------------------------------------------------------------------------------------
// Fixtures and their API objects (as the tests named beside each pair them; objects from the fixture's notes where no
// test did: the notes' Inputs lines are quoted).

const p80 = [{ name: "p80", port: 80 }];
const T = "test-hostname";
const V127 = { node: T, nodeIP: "192.168.0.2", detector: "10.0.0.0/8", clusterCIDRs: ["10.0.0.0/8"] };
const svc1 = (spec: Service["spec"], status?: Service["status"]) => service("ns1", "svc1", spec, status);

const overall127 = overallObjects(T, false);
const itp = (p: "Cluster" | "Local") => svc1({ type: "ClusterIP", clusterIP: "172.30.1.1", internalTrafficPolicy: p, selector: { foo: "bar" }, ports: [{ port: 80, protocol: "TCP" }] });
const itpSlice = (nodes: string[]) => slice("ns1", "svc1", nodes.map((n, i) => ({ ip: `10.0.1.${i + 1}`, node: n })), [{ port: 80 }]);
// service_path.test.ts "terminating endpoints with externalTrafficPolicy Local (v1.27)"
const termSvc = terminatingLocalService();
const term = (eps: TestEndpoint[]): Objects => ({ services: [termSvc], slices: [slice("ns1", "svc1", eps, [{ port: 80 }])] });
// packet_answer_checks.test.ts (TestEnableLocalhostNodePortsIPv4); TestLocalhostNodePorts.md: the Disable files have
// the same inputs
const localhostNP: Objects = {
  services: [svc1({ type: "NodePort", clusterIP: "10.69.0.10", clusterIPs: ["10.69.0.10"], externalTrafficPolicy: "Local", ports: [{ name: "p80", port: 80, protocol: "TCP", targetPort: 80, nodePort: 30001 }] })],
  slices: [slice("ns1", "svc1", [{ ip: "10.244.0.1" }, { ip: "10.244.2.1", node: T }], p80)],
};
// service_external_policy.test.ts (TestOnlyLocalNodePorts)
const onlyLocalNP: Objects = {
  services: [svc1({ type: "NodePort", clusterIP: "172.30.0.41", externalTrafficPolicy: "Local", ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }] })],
  slices: [slice("ns1", "svc1", [{ ip: "10.180.0.1", node: "other" }, { ip: "10.180.2.1", node: T }], p80)],
};

const IPTABLES: Case[] = [
  {
    // service_path.test.ts, kernel_agreement.test.ts
    fixture: "TestOverallIPTablesRules",
    node: "test-node",
    nodeIP: "192.168.0.2",
    detector: "10.0.0.0/8",
    objects: overallObjects("test-node", true),
    ask: [
      ["ns1", "svc1", forwardsTo(80, "ClusterIP", "pod-same-node", ["10.180.0.1:80"], "never")],
      ["ns2", "svc2", all(stops(80, "LoadBalancer", "external", "dropped", "KUBE-EXTERNAL-SERVICES"), stops(3001, "NodePort", "external", "dropped", "KUBE-EXTERNAL-SERVICES"), forwardsTo(80, "LoadBalancer", "pod-same-node", ["10.180.0.2:80"], "never"))],
      ["ns3", "svc3", forwardsTo(3003, "NodePort", "external", ["10.180.0.3:80"], "always")],
      ["ns4", "svc4", all(forwardsTo(80, "ExternalIP", "external", ["10.180.0.4:80", "10.180.0.5:80"], "always"), (r) => expect(client(r, 80, "ClusterIP", "hairpin").masquerade).not.toBe("never"))],
      ["ns5", "svc5", all(stops(80, "LoadBalancer", "external-denied", "dropped", "KUBE-PROXY-FIREWALL"), forwardsTo(80, "LoadBalancer", "external", ["10.180.0.3:80"], "always"), affinity(10800))],
      ["ns6", "svc6", stops(80, "ClusterIP", "pod-same-node", "rejected", "has no endpoints")],
    ],
  },
  {
    // overallObjects: "Objects of TestOverallIPTablesRules (master) and TestOverallIPTablesRulesWithMultipleServices (v1.27)"
    fixture: "TestOverallIPTablesRulesWithMultipleServices.v1.27",
    ...V127,
    objects: overall127,
    ask: [
      ["ns2", "svc2", all(stops(3001, "NodePort", "external", "dropped", "KUBE-EXTERNAL-SERVICES"), forwardsTo(80, "ClusterIP", "pod-same-node", ["10.180.0.2:80"], "never"))],
      ["ns4", "svc4", forwardsTo(80, "ExternalIP", "external", ["10.180.0.4:80", "10.180.0.5:80"], "always")],
      ["ns5", "svc5", all(stops(80, "LoadBalancer", "external-denied", "dropped", "KUBE-PROXY-FIREWALL"), forwardsTo(80, "LoadBalancer", "external", ["10.180.0.3:80"], "always"))],
      ["ns6", "svc6", stops(80, "ClusterIP", "pod-same-node", "rejected", "has no endpoints")],
    ],
  },
  {
    // service_path.test.ts "LoadBalancer source ranges (v1.27)"
    fixture: "TestLoadBalancer-source-ranges.v1.27",
    ...V127,
    objects: {
      services: [svc1({ type: "LoadBalancer", clusterIP: "172.30.0.41", loadBalancerSourceRanges: ["192.168.0.0/24", "203.0.113.0/25"], ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }] }, { loadBalancer: { ingress: [{ ip: "1.2.3.4" }, { ip: "5.6.7.8" }] } })],
      slices: [slice("ns1", "svc1", [{ ip: "10.180.0.1" }], p80)],
    },
    ask: [["ns1", "svc1", all(stops(80, "LoadBalancer", "external-denied", "dropped", "KUBE-PROXY-FIREWALL"), forwardsTo(80, "LoadBalancer", "external", ["10.180.0.1:80"], "always"), forwardsTo(3001, "NodePort", "external-denied", ["10.180.0.1:80"], "always"))]],
  },
  {
    // TestInternalTrafficPolicyE2E.v1.27.md: "-1-cluster: internalTrafficPolicy Cluster; 10.0.1.1 on test-hostname,
    // 10.0.1.2 on host1, 10.0.1.3 on host2" (service_path.test.ts's Service and slice)
    fixture: "TestInternalTrafficPolicyE2E-1-cluster.v1.27",
    ...V127,
    objects: { services: [itp("Cluster")], slices: [itpSlice([T, "host1", "host2"])] },
    ask: [["ns1", "svc1", forwardsTo(80, "ClusterIP", "pod-same-node", ["10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80"], "never")]],
  },
  {
    // service_path.test.ts "internalTrafficPolicy (v1.27)"
    fixture: "TestInternalTrafficPolicyE2E-2-local-with-local-endpoint.v1.27",
    ...V127,
    objects: { services: [itp("Local")], slices: [itpSlice([T, "host1", "host2"])] },
    ask: [["ns1", "svc1", all(forwardsTo(80, "ClusterIP", "pod-same-node", ["10.0.1.1:80"], "never"), (r) => expect(client(r, 80, "ClusterIP", "external").reason).toMatch(/KUBE-SVL-/))]],
  },
  {
    fixture: "TestInternalTrafficPolicyE2E-3-local-no-local-endpoints.v1.27",
    ...V127,
    objects: { services: [itp("Local")], slices: [itpSlice(["host0", "host1", "host2"])] },
    ask: [["ns1", "svc1", stops(80, "ClusterIP", "pod-same-node", "dropped", "has no local endpoints")]],
  },
  {
    // service_path.test.ts "no endpoints: REJECT (v1.27)"
    fixture: "TestClusterIPReject.v1.27",
    ...V127,
    objects: { services: [svc1({ type: "ClusterIP", clusterIP: "172.30.0.41", ports: [{ name: "p80", port: 80, protocol: "TCP" }] })], slices: [] },
    ask: [["ns1", "svc1", stops(80, "ClusterIP", "pod-same-node", "rejected", "has no endpoints")]],
  },
  {
    // service_path.test.ts "terminating endpoints with externalTrafficPolicy Local (v1.27)"
    fixture: "TestEndpointSliceWithTerminatingEndpointsTrafficPolicyLocal-1-ready-exist.v1.27",
    ...V127,
    objects: term([readyEndpoint("10.0.1.1", T), readyEndpoint("10.0.1.2", T), servingTerminatingEndpoint("10.0.1.3", T), notServingEndpoint("10.0.1.4", T), readyEndpoint("10.0.1.5", "host-1")]),
    ask: [["ns1", "svc1", all(forwardsTo(80, "ClusterIP", "pod-same-node", ["10.0.1.1:80", "10.0.1.2:80", "10.0.1.5:80"]), forwardsTo(80, "LoadBalancer", "external", ["10.0.1.1:80", "10.0.1.2:80"], "never"), (r) => expect(r.limits.some((l) => l.startsWith("session affinity"))).toBe(true))]],
  },
  {
    fixture: "TestEndpointSliceWithTerminatingEndpointsTrafficPolicyLocal-3-only-terminating-local.v1.27",
    ...V127,
    objects: term([servingTerminatingEndpoint("10.0.1.2", T), servingTerminatingEndpoint("10.0.1.3", T), notServingEndpoint("10.0.1.4", T), readyEndpoint("10.0.1.5", "host-1")]),
    ask: [["ns1", "svc1", all(forwardsTo(80, "ClusterIP", "pod-same-node", ["10.0.1.5:80"]), forwardsTo(80, "LoadBalancer", "external", ["10.0.1.2:80", "10.0.1.3:80"], "never"))]],
  },
  {
    fixture: "TestEndpointSliceWithTerminatingEndpointsTrafficPolicyLocal-5-terminating-remote-only.v1.27",
    ...V127,
    objects: term([servingTerminatingEndpoint("10.0.1.5", "host-1")]),
    ask: [["ns1", "svc1", all(forwardsTo(80, "ClusterIP", "pod-same-node", ["10.0.1.5:80"]), stops(80, "LoadBalancer", "external", "dropped", "KUBE-"))]],
  },
  {
    fixture: "TestEndpointSliceWithTerminatingEndpointsTrafficPolicyLocal-6-no-usable-endpoints.v1.27",
    ...V127,
    objects: term([notServingEndpoint("10.0.1.5", T), notServingEndpoint("10.0.1.5", "host-1")]),
    ask: [["ns1", "svc1", all(stops(80, "ClusterIP", "pod-same-node", "rejected", "KUBE-"), stops(80, "LoadBalancer", "external", "rejected", "KUBE-"))]],
  },
  {
    // kernel_agreement.test.ts "TestOnlyLocalExternalIPs (v1.27, eTP=Local)"
    fixture: "TestOnlyLocalExternalIPs.v1.27",
    ...V127,
    objects: {
      services: [svc1({ type: "ClusterIP", clusterIP: "172.30.0.41", externalIPs: ["192.168.99.11"], externalTrafficPolicy: "Local", ports: [{ name: "p80", port: 80, protocol: "TCP" }] })],
      slices: [slice("ns1", "svc1", [{ ip: "10.180.0.1" }, { ip: "10.180.2.1", node: T }], p80)],
    },
    ask: [["ns1", "svc1", all(forwardsTo(80, "ExternalIP", "external", ["10.180.2.1:80"], "never"), forwardsTo(80, "ClusterIP", "pod-same-node", ["10.180.0.1:80", "10.180.2.1:80"]))]],
  },
  {
    // TestNonLocalExternalIPs.v1.27.md: "ns1/svc1 ClusterIP 172.30.0.41, externalIPs [192.168.99.11], port p80 TCP 80
    // targetPort 80, eTP Cluster; endpoints 10.180.0.1 (remote) and 10.180.2.1 (test-hostname)"
    fixture: "TestNonLocalExternalIPs.v1.27",
    ...V127,
    objects: {
      services: [svc1({ type: "ClusterIP", clusterIP: "172.30.0.41", externalIPs: ["192.168.99.11"], externalTrafficPolicy: "Cluster", ports: [{ name: "p80", port: 80, protocol: "TCP", targetPort: 80 }] })],
      slices: [slice("ns1", "svc1", [{ ip: "10.180.0.1" }, { ip: "10.180.2.1", node: T }], p80)],
    },
    ask: [["ns1", "svc1", forwardsTo(80, "ExternalIP", "external", ["10.180.0.1:80", "10.180.2.1:80"], "always")]],
  },
  {
    // TestExternalIPsReject.v1.27.md: "ns1/svc1 ClusterIP 172.30.0.41, externalIPs [192.168.99.11], port p80 TCP 80
    // targetPort 80, no endpoints"
    fixture: "TestExternalIPsReject.v1.27",
    ...V127,
    objects: { services: [svc1({ type: "ClusterIP", clusterIP: "172.30.0.41", externalIPs: ["192.168.99.11"], ports: [{ name: "p80", port: 80, protocol: "TCP", targetPort: 80 }] })], slices: [] },
    ask: [["ns1", "svc1", all(stops(80, "ExternalIP", "external", "rejected", "KUBE-EXTERNAL-SERVICES"), stops(80, "ClusterIP", "pod-same-node", "rejected", "KUBE-SERVICES"))]],
  },
  {
    // TestHealthCheckNodePort.v1.27.md: "nodePortAddresses ["127.0.0.0/8"]; ns1/svc1 LoadBalancer, clusterIP
    // 172.30.0.42, port p80 TCP 80, nodePort 3001, healthCheckNodePort 30000, eTP Local, no LB ingress, no endpoints"
    fixture: "TestHealthCheckNodePort.v1.27",
    ...V127,
    objects: { services: [svc1({ type: "LoadBalancer", clusterIP: "172.30.0.42", externalTrafficPolicy: "Local", healthCheckNodePort: 30000, ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }] })], slices: [] },
    ask: [["ns1", "svc1", stops(80, "ClusterIP", "pod-same-node", "rejected", "has no endpoints")]],
  },
  {
    // TestLoadBalancerReject.v1.27.md: "ns1/svc1 LoadBalancer, clusterIP 172.30.0.41, port p80 TCP 80, nodePort 3001,
    // healthCheckNodePort 30000, LB ingress 1.2.3.4, eTP Local, sessionAffinity ClientIP 10800 s, no endpoints"
    fixture: "TestLoadBalancerReject.v1.27",
    ...V127,
    objects: {
      services: [svc1({ type: "LoadBalancer", clusterIP: "172.30.0.41", externalTrafficPolicy: "Local", healthCheckNodePort: 30000, sessionAffinity: "ClientIP", sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } }, ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }] }, { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } })],
      slices: [],
    },
    ask: [["ns1", "svc1", all(stops(80, "LoadBalancer", "external", "rejected", "KUBE-EXTERNAL-SERVICES"), stops(3001, "NodePort", "external", "rejected", "KUBE-EXTERNAL-SERVICES"))]],
  },
  {
    // TestOnlyLocalLoadBalancing-affinity.v1.27.md: "ns1/svc1 LoadBalancer, clusterIP 172.30.0.41, port p80 TCP 80,
    // nodePort 3001, healthCheckNodePort 30000, LB ingress 1.2.3.4, eTP Local, sessionAffinity ClientIP timeout 10800;
    // endpoints 10.180.0.1 (no nodeName, remote) and 10.180.2.1 (test-hostname, local)"
    fixture: "TestOnlyLocalLoadBalancing-affinity.v1.27",
    ...V127,
    objects: {
      services: [svc1({ type: "LoadBalancer", clusterIP: "172.30.0.41", externalTrafficPolicy: "Local", healthCheckNodePort: 30000, sessionAffinity: "ClientIP", sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } }, ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }] }, { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } })],
      slices: [slice("ns1", "svc1", [{ ip: "10.180.0.1" }, { ip: "10.180.2.1", node: T }], p80)],
    },
    ask: [["ns1", "svc1", all(forwardsTo(80, "LoadBalancer", "external", ["10.180.2.1:80"], "never"), forwardsTo(3001, "NodePort", "external", ["10.180.2.1:80"], "never"), affinity(10800))]],
  },
  {
    // service_external_policy.test.ts (TestOnlyLocalNodePorts)
    fixture: "TestOnlyLocalNodePorts.v1.27",
    ...V127,
    objects: onlyLocalNP,
    ask: [["ns1", "svc1", forwardsTo(3001, "NodePort", "external", ["10.180.2.1:80"], "never")]],
  },
  {
    // TestOnlyLocalNodePorts.v1.27.md: "The NoClusterCIDR variant uses the no-op local detector" (same objects)
    fixture: "TestOnlyLocalNodePortsNoClusterCIDR.v1.27",
    ...V127,
    detector: undefined,
    objects: onlyLocalNP,
    ask: [["ns1", "svc1", forwardsTo(3001, "NodePort", "external", ["10.180.2.1:80"], "never")]],
  },
  {
    // kernel_agreement.test.ts "TestNodePortReject (v1.27, NodePort without endpoints)"
    fixture: "TestNodePortReject.v1.27",
    ...V127,
    objects: { services: [svc1({ type: "NodePort", clusterIP: "172.30.0.41", ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }] })], slices: [] },
    ask: [["ns1", "svc1", stops(3001, "NodePort", "external", "rejected", "KUBE-EXTERNAL-SERVICES")]],
  },
  {
    // TestNodePort.v1.27.md: "ns1/svc1 NodePort, clusterIP 172.30.0.41, port p80 TCP 80, nodePort 3001, eTP Cluster;
    // endpoint 10.180.0.1 (no nodeName)"
    fixture: "TestNodePort.v1.27",
    ...V127,
    objects: {
      services: [svc1({ type: "NodePort", clusterIP: "172.30.0.41", externalTrafficPolicy: "Cluster", ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }] })],
      slices: [slice("ns1", "svc1", [{ ip: "10.180.0.1" }], p80)],
    },
    ask: [["ns1", "svc1", forwardsTo(3001, "NodePort", "external", ["10.180.0.1:80"], "always")]],
  },
  {
    // TestClusterIPEndpointsMore-sctp.v1.27.md: "ns1/svc1 ClusterIP 172.30.0.41, port p80 SCTP 80; EndpointSlice
    // endpoint 10.180.0.1 (no nodeName), port p80/80/SCTP"
    fixture: "TestClusterIPEndpointsMore-sctp.v1.27",
    ...V127,
    objects: {
      services: [svc1({ type: "ClusterIP", clusterIP: "172.30.0.41", ports: [{ name: "p80", port: 80, protocol: "SCTP" }] })],
      slices: [slice("ns1", "svc1", [{ ip: "10.180.0.1" }], [{ name: "p80", port: 80, protocol: "SCTP" }])],
    },
    ask: [["ns1", "svc1", all(forwardsTo(80, "ClusterIP", "pod-same-node", ["10.180.0.1:80"], "never"), (r) => expect(r.nodes[0]!.ports[0]!.entryPoints[0]!.destination).toBe("172.30.0.41:80/sctp"))]],
  },
  {
    // kernel_agreement.test.ts "TestEndpointSliceE2E (v1.20, 3 endpoints)"; v1.20 detector 10.0.0.0/24
    fixture: "TestEndpointSliceE2E.v1.20",
    node: T,
    nodeIP: "192.168.0.2",
    detector: "10.0.0.0/24",
    objects: {
      services: [svc1({ type: "ClusterIP", clusterIP: "172.20.1.1", ports: [{ port: 0, protocol: "TCP" }] })],
      slices: [slice("ns1", "svc1", [{ ip: "10.0.1.1", node: T }, { ip: "10.0.1.2", node: "n2" }, { ip: "10.0.1.3", node: "n3" }], [{ port: 80 }])],
    },
    ask: [["ns1", "svc1", forwardsTo(0, "ClusterIP", "pod-same-node", ["10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80"], "never")]],
  },
  ...["TestEnableLocalhostNodePortsIPv4", "TestDisableLocalhostNodePortsIPv4", "TestDisableLocalhostNodePortsIPv4WithNodeAddress"].map((f): Case => ({
    // packet_answer_checks.test.ts (localhost NodePorts; no-op local detector)
    fixture: `${f}.v1.27`,
    ...V127,
    detector: undefined,
    objects: localhostNP,
    ask: [["ns1", "svc1", forwardsTo(80, "ClusterIP", "pod-same-node", ["10.244.0.1:80", "10.244.2.1:80"])]],
  })),
];

// TestMasqueradeRule-*: no Service in the fixture. The feature (KUBE-POSTROUTING's MASQUERADE with or without
// --random-fully) is asked through one generated Service: the small node is the fixture plus that Service alone.
const MASQUERADE = ["TestMasqueradeRule-random-fully.v1.27", "TestMasqueradeRule-no-random-fully.v1.27"];

const NFT: { fixture: string; objects: Objects; ask: Case["ask"] }[] = [
  {
    // service_external_policy.test.ts "nftables mode (TestOverallNFTablesRules)"
    fixture: "TestOverallNFTablesRules",
    objects: overallObjects("test-node", true),
    ask: [
      ["ns1", "svc1", forwardsTo(80, "ClusterIP", "pod-same-node", ["10.180.0.1:80"], "never")],
      ["ns2", "svc2", all(stops(80, "LoadBalancer", "external", "dropped", "drop"), forwardsTo(80, "LoadBalancer", "pod-same-node", ["10.180.0.2:80"], "never"))],
      ["ns3", "svc3", forwardsTo(3003, "NodePort", "external", ["10.180.0.3:80"], "always")],
      ["ns4", "svc4", forwardsTo(80, "ExternalIP", "external", ["10.180.0.4:80", "10.180.0.5:80"], "always")],
      ["ns5", "svc5", all(stops(80, "LoadBalancer", "external-denied", "dropped", "firewall-"), forwardsTo(80, "LoadBalancer", "external", ["10.180.0.3:80"], "always"), affinity(10800))],
      ["ns6", "svc6", stops(80, "ClusterIP", "pod-same-node", "rejected", "reject")],
    ],
  },
  // nft_service.test.ts "drift against EndpointSlices (TestSyncProxyRulesRepeated)"
  {
    fixture: "TestSyncProxyRulesRepeated-08-add-svc3-second-endpoint",
    objects: repeatedObjects(["10.0.3.2", "10.0.3.3"], { svc4: ["10.0.4.1"] }),
    ask: [["ns3", "svc3", forwardsTo(80, "ClusterIP", "pod-same-node", ["10.0.3.2:80", "10.0.3.3:80"], "never")]],
  },
  {
    fixture: "TestSyncProxyRulesRepeated-09-svc3-endpoints-emptied-chains-flushed-not-deleted",
    objects: repeatedObjects(["10.0.3.2", "10.0.3.3"], { svc4: ["10.0.4.1"] }),
    ask: [["ns3", "svc3", all(stops(80, "ClusterIP", "pod-same-node", "rejected", "reject"), (r) => expect(r.nodes[0]!.drift.map((d) => d.kind)).toContain("unexpected-reject"))]],
  },
  {
    fixture: "TestSyncProxyRulesRepeated-03-delete-svc2-chains-flushed-not-deleted",
    objects: repeatedObjects(["10.0.3.1"], { svc2: true }),
    ask: [["ns2", "svc2", all(stops(8080, "ClusterIP", "pod-same-node", "dropped", "drop"), (r) => expect(r.nodes[0]!.drift.map((d) => d.kind)).toEqual(["service-missing"]))]],
  },
  {
    fixture: "TestSyncProxyRulesRepeated-05-add-svc4-no-endpoints",
    objects: repeatedObjects(["10.0.3.1"]),
    ask: [["ns4", "svc4", stops(80, "ClusterIP", "pod-same-node", "rejected", "reject")]],
  },
];

// ------------------------------------------------------------------------------------------------------------------
// Comparison

/**
 * The `-o json` report (serializeReport) with what depends on the rest of the node's table taken out:
 * - `line` / `handle` fields and "line N" / "handle N" words: a rule's place in the dump (10,000 Services inserted
 *   before it move it; its text, table and chain are kept and compared);
 * - the proxy-mode evidence's `detail`: it counts the node's KUBE-SVC/KUBE-SEP chains, every Service's (the mode and
 *   where it was read stay compared);
 * - with `cidrSource`, the provenance of the "cluster CIDR …" note, for a fixture that has no local-traffic detector
 *   rule of its own (a reject-only table): alone the CIDR comes from the capture, beside the generated Services from
 *   their `! -s` rules; the CIDR itself stays compared.
 */
function comparable(r: ServiceReport, cidrSource = false): unknown {
  const json = JSON.parse(serializeReport(r, "json")) as { nodes: { proxyMode: { evidence: { detail?: string }[] }; notes: string[] }[] };
  for (const n of json.nodes) {
    for (const e of n.proxyMode.evidence) delete e.detail;
    if (cidrSource) n.notes = n.notes.map((x) => x.replace(/^(cluster CIDR \S+) \(from .*\)$/, "$1"));
  }
  const strip = (v: unknown): unknown => {
    if (typeof v === "string") return v.replace(/\b(lines?|handles?) \d+(?:(?:, | and |-)\d+)*/g, "$1 #");
    if (Array.isArray(v)) return v.map(strip);
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).filter(([k]) => k !== "line" && k !== "handle").map(([k, x]) => [k, strip(x)]));
    }
    return v;
  };
  return strip(json);
}

/** Where two comparable reports differ: `path: small → merged`, at most 20. */
function differences(small: unknown, big: unknown): string[] {
  const out: string[] = [];
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (out.length >= 20) return;
    if (a !== null && b !== null && typeof a === "object" && typeof b === "object") {
      const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
      for (const k of keys) walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
    } else if (a !== b) out.push(`${path}: ${JSON.stringify(a)} → ${JSON.stringify(b)}`);
  };
  walk(small, big, "");
  return out;
}

/**
 * A bundle of one node's dump, the fixture's objects, and the generated cluster's Nodes; `extra` adds the generated
 * Services and EndpointSlices. Both bundles of a comparison hold the same Nodes: the representative clients (a pod of
 * another node is a host of another Node's podCIDR, src/service/clients.ts chooseSources) depend on the cluster's
 * Nodes, not on the node's table.
 */
function bundle(section: "iptables-save" | "nft-json" | "nft-text", dump: string, c: { node: string; nodeIP: string; clusterCIDRs?: string[] }, objects: Objects, extra?: { services: Service[]; slices: EndpointSlice[] }): Bundle {
  const b = emptyBundle({ tool: "test" });
  if (c.clusterCIDRs) b.capture.clusterCIDRs = c.clusterCIDRs;
  b.objects.services.push(...objects.services);
  b.objects.endpointSlices.push(...objects.slices);
  b.objects.nodes.push(node(c.node, c.nodeIP));
  for (const n of generated.nodes) b.objects.nodes.push(n);
  if (extra) {
    for (const s of extra.services) b.objects.services.push(s);
    for (const s of extra.slices) b.objects.endpointSlices.push(s);
  }
  b.nodes.push({ name: c.node, sections: { [section]: { stdout: dump, exitCode: 0 } } });
  return b;
}

const timings: string[] = [];
function timed<T>(what: string, f: () => T): T {
  const t0 = performance.now();
  const out = f();
  timings.push(`${what} ${Math.round(performance.now() - t0)} ms`);
  return out;
}

let generated: ReturnType<typeof planObjects>;
const ipt = new Map<string, IptablesParts>();
let nft: NftParts;
let plan: ReturnType<typeof relocatedPlan>;
function iptParts(detector: string | undefined): IptablesParts {
  const key = detector ?? "none";
  let p = ipt.get(key);
  if (!p) ipt.set(key, p = timed(`iptables parts (${key})`, () => withDetector(ipt.get("10.0.0.0/8")!, "10.0.0.0/8", detector)));
  return p;
}

beforeAll(() => {
  plan = timed("plan", () => relocatedPlan(N, "10.0.0.0/8"));
  generated = timed("objects", () => planObjects(plan));
  ipt.set("10.0.0.0/8", timed("iptables parts", () => iptablesParts(plan)));
  nft = timed("nft parts", () => nftParts(plan));
}, 120_000);

describe(`iptables mode: each feature Service alone and beside ${N} generated Services`, () => {
  describe.each(IPTABLES)("$fixture", (c) => {
    it.each(["nft", "legacy"] as const)("iptables-%s-save", (backend) => {
      const small = fixture(`node-format/${c.fixture}.${backend}.iptables-save`);
      assertClear(c.fixture, small);
      const ownDetector = c.detector !== undefined && small.includes(` ! -s ${c.detector} `);
      const big = timed(`${c.fixture} ${backend} merge`, () => mergeIptablesSave(small, iptParts(c.detector)));
      expect(big.length).toBeGreaterThan(small.length + 10_000_000);
      const smallBundle = bundle("iptables-save", small, c, c.objects);
      const bigBundle = bundle("iptables-save", big, c, c.objects, generated);
      for (const [ns, name, sees] of c.ask) {
        const a = explainService(smallBundle, ns, name);
        sees(a);
        const b = timed(`${c.fixture} ${backend} ${ns}/${name}`, () => explainService(bigBundle, ns, name));
        sees(b);
        expect(differences(comparable(a, !ownDetector), comparable(b, !ownDetector))).toEqual([]);
      }
    });
  });

  describe.each(MASQUERADE)("%s (asked through a generated Service)", (f) => {
    it.each(["nft", "legacy"] as const)("iptables-%s-save", (backend) => {
      const text = fixture(`node-format/${f}.${backend}.iptables-save`);
      const svc = plan.services[Math.floor(N / 2)]!;
      const one = { ...plan, services: [svc], writeOrder: [0] };
      const c = { node: T, nodeIP: "192.168.0.2", clusterCIDRs: ["10.0.0.0/8"] };
      const none = { services: [], slices: [] };
      const oneObjects = planObjects(one);
      // the Service's rules as kube-proxy writes them on the large cluster (no per-endpoint comments), alone
      const small = bundle("iptables-save", mergeIptablesSave(text, iptablesParts(one, true)), c, none, oneObjects);
      const big = bundle("iptables-save", mergeIptablesSave(text, iptParts("10.0.0.0/8")), c, none, generated);
      const sees: Check = (r) => {
        const ext = client(r, svc.port, "ClusterIP", "external");
        expect(ext.masquerade).toBe("always");
        const masq = ext.evidence.find((e) => / -j MASQUERADE/.test(e.rule.raw));
        expect(masq, "the MASQUERADE rule").toBeDefined();
        expect(masq!.rule.raw.endsWith("--random-fully")).toBe(f.includes("-random-fully") && !f.includes("no-random"));
      };
      const a = explainService(small, svc.namespace, svc.name);
      sees(a);
      const b = timed(`${f} ${backend} ${servicePortName(svc)}`, () => explainService(big, svc.namespace, svc.name));
      sees(b);
      expect(differences(comparable(a), comparable(b))).toEqual([]);
    });
  });
});

describe(`nftables mode: each feature Service alone and beside ${N} generated Services`, () => {
  describe.each(NFT)("$fixture", (c) => {
    it.each([["nft-json", "json"], ["nft-text", "nft.txt"]] as const)("%s", (section, ext) => {
      const small = fixture(`nftables/${c.fixture}.${ext}`);
      assertClear(c.fixture, small);
      const big = timed(`${c.fixture} ${section} merge`, () => (section === "nft-json" ? mergeNftJson(small, nft) : mergeNftText(small, nft)));
      const at = { node: "test-node", nodeIP: "192.168.0.2" };
      const smallBundle = bundle(section, small, at, c.objects);
      const bigBundle = bundle(section, big, at, c.objects, generated);
      for (const [ns, name, sees] of c.ask) {
        const a = explainService(smallBundle, ns, name);
        sees(a);
        const b = timed(`${c.fixture} ${section} ${ns}/${name}`, () => explainService(bigBundle, ns, name));
        sees(b);
        expect(differences(comparable(a), comparable(b))).toEqual([]);
      }
    });
  });
});

// the generated Services are really there: one of them is analysed on the merged node like any other
describe("the generated Services are on the merged node", () => {
  it("a generated NodePort Service is balanced over its 5 endpoints in every form", () => {
    const svc = plan.services.find((s) => s.nodePort !== undefined && s.index > N / 2)!;
    const want = svc.endpoints.map((e) => `${e.ip}:${svc.targetPort}`);
    const c = { node: T, nodeIP: "192.168.0.2" };
    const none = { services: [], slices: [] };
    for (
      const [section, dump] of [
        ["iptables-save", mergeIptablesSave(fixture("node-format/TestNodePort.v1.27.nft.iptables-save"), iptParts("10.0.0.0/8"))],
        ["nft-json", mergeNftJson(fixture("nftables/TestOverallNFTablesRules.json"), nft)],
        ["nft-text", mergeNftText(fixture("nftables/TestOverallNFTablesRules.nft.txt"), nft)],
      ] as const
    ) {
      const r = explainService(bundle(section, dump, c, none, generated), svc.namespace, svc.name);
      expect(r.service.clusterIPs, section).toEqual([svc.clusterIP]);
      forwardsTo(svc.nodePort!, "NodePort", "external", want, "always")(r);
    }
  });
});

afterAll(() => console.log(`[scale-features] ${timings.join("\n")}`));
