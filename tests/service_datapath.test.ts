// Issue 15: a node where kube-proxy is not the Service datapath. A bundle built like a Cilium kube-proxy-replacement
// cluster (the iptables-lab objects; the node's iptables-save has Cilium's chains and no KUBE-SERVICES; DaemonSet
// kube-system/cilium, no kube-proxy DaemonSet) is reported as served by Cilium, with the agent's command, and no drift;
// the same node with kube-proxy deployed is drift (kube-proxy has not programmed it), and a node without kube-proxy
// state and no known agent says what the drift assumes.
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import type { DaemonSet } from "../src/model/k8s.ts";
import { explainService } from "../src/service/explain.ts";
import { hasKubeProxyState } from "../src/service/service_datapath.ts";

// The nat and filter chains Cilium (kube-proxy replacement, iptables masquerading) installs, as in its
// bpf/iptables docs and `cilium-dbg` troubleshooting pages: CILIUM_* chains only.
const CILIUM_SAVE = `*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:CILIUM_OUTPUT_nat - [0:0]
:CILIUM_POST_nat - [0:0]
:CILIUM_PRE_nat - [0:0]
-A PREROUTING -m comment --comment "cilium-feeder: CILIUM_PRE_nat" -j CILIUM_PRE_nat
-A OUTPUT -m comment --comment "cilium-feeder: CILIUM_OUTPUT_nat" -j CILIUM_OUTPUT_nat
-A POSTROUTING -m comment --comment "cilium-feeder: CILIUM_POST_nat" -j CILIUM_POST_nat
-A CILIUM_POST_nat -s 10.244.0.0/24 ! -d 10.244.0.0/16 ! -o cilium_+ -m comment --comment "cilium masquerade non-cluster" -j MASQUERADE
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:CILIUM_FORWARD - [0:0]
:CILIUM_INPUT - [0:0]
:CILIUM_OUTPUT - [0:0]
-A INPUT -m comment --comment "cilium-feeder: CILIUM_INPUT" -j CILIUM_INPUT
-A FORWARD -m comment --comment "cilium-feeder: CILIUM_FORWARD" -j CILIUM_FORWARD
-A OUTPUT -m comment --comment "cilium-feeder: CILIUM_OUTPUT" -j CILIUM_OUTPUT
-A CILIUM_FORWARD -o cilium_host -m comment --comment "cilium: any->cluster on cilium_host forward accept" -j ACCEPT
COMMIT
`;

const ds = (name: string): DaemonSet => ({ apiVersion: "apps/v1", kind: "DaemonSet", metadata: { name, namespace: "kube-system" }, spec: { template: { spec: { containers: [] } } } } as DaemonSet);

function ciliumNode(daemonSets: DaemonSet[]): Bundle {
  const b = readBundle("examples/iptables-lab");
  b.nodes = [{ name: "k8s1", sections: { "iptables-save": { stdout: CILIUM_SAVE, exitCode: 0 } } }];
  b.objects.daemonSets = daemonSets;
  return b;
}

describe("kube-proxy is not the datapath", () => {
  it("Cilium: named with its evidence and command; no drift", () => {
    const r = explainService(ciliumNode([ds("cilium"), ds("coredns")]), "kube-system", "kube-dns", { nodes: ["k8s1"] });
    const n = r.nodes[0]!;
    expect(n.drift).toEqual([]);
    expect(n.notes.join("\n")).toContain("Services on this node are served by Cilium (eBPF kube-proxy replacement), not kube-proxy (no KUBE-SERVICES chain in the node's nat table and no nftables table kube-proxy; DaemonSet kube-system/cilium; no kube-system/kube-proxy DaemonSet)");
    expect(r.findings.find((f) => f.code === "NotKubeProxyDatapath")!.message).toContain("cilium-dbg service list");
  });

  it("Calico installed by its operator (calico-system): found there, and the command names that namespace", () => {
    const calico = { ...ds("calico-node"), metadata: { name: "calico-node", namespace: "calico-system" } } as DaemonSet;
    const r = explainService(ciliumNode([calico]), "kube-system", "kube-dns", { nodes: ["k8s1"] });
    expect(r.nodes[0]!.notes.join("\n")).toContain("Calico (eBPF data plane)");
    expect(r.findings.find((f) => f.code === "NotKubeProxyDatapath")!.message).toContain("kubectl -n calico-system exec ds/calico-node");
    expect(r.nodes[0]!.drift).toEqual([]);
  });

  it("GKE Dataplane V2 (anetd)", () => {
    const r = explainService(ciliumNode([ds("anetd")]), "kube-system", "kube-dns", { nodes: ["k8s1"] });
    expect(r.nodes[0]!.notes.join("\n")).toContain("GKE Dataplane V2 (Cilium, anetd)");
    expect(r.nodes[0]!.drift).toEqual([]);
  });

  it("kube-proxy deployed but absent from the node: that is drift", () => {
    const r = explainService(ciliumNode([ds("kube-proxy"), ds("cilium")]), "kube-system", "kube-dns", { nodes: ["k8s1"] });
    const n = r.nodes[0]!;
    expect(n.drift.some((d) => d.kind === "service-missing")).toBe(true);
    expect(n.notes.join("\n")).toContain("kube-proxy is deployed (DaemonSet kube-system/kube-proxy) but has not programmed this node");
  });

  it("no kube-proxy state and no known agent: the drift says what it assumes", () => {
    const r = explainService(ciliumNode([]), "kube-system", "kube-dns", { nodes: ["k8s1"] });
    expect(r.nodes[0]!.notes.join("\n")).toContain("kube-proxy is not running here, or another component serves Services");
  });

  it("a kube-proxy node is unchanged (the example's own dump)", () => {
    const b = readBundle("examples/iptables-lab");
    b.objects.daemonSets = [ds("cilium")]; // Cilium as CNI only, kube-proxy still programs the node
    const r = explainService(b, "kube-system", "kube-dns", { nodes: ["k8s1"] });
    expect(r.findings.some((f) => f.code === "NotKubeProxyDatapath")).toBe(false);
    expect(r.nodes[0]!.ports.length).toBeGreaterThan(0);
  });
});

// The datapath in machine-readable form (proxyMode), and a packet question on such a node answered with why there
// is no packet path rather than with nothing (audit of the -o json contract, defect 5).
describe("the agent in proxyMode, and the packet question", () => {
  const packet = { source: "10.244.1.7", destination: "10.96.0.10", port: 53, protocol: "udp" as const };
  it("Cilium and GKE Dataplane V2: mode cilium; Calico: mode other; each names the agent as evidence", () => {
    const mode = (d: DaemonSet) => explainService(ciliumNode([d]), "kube-system", "kube-dns", { nodes: ["k8s1"] }).nodes[0]!.proxyMode;
    expect(mode(ds("cilium"))).toEqual({
      mode: "cilium",
      evidence: [{ source: "datapath agent", value: "Cilium (eBPF kube-proxy replacement)", detail: "no KUBE-SERVICES chain in the node's nat table and no nftables table kube-proxy; DaemonSet kube-system/cilium; no kube-system/kube-proxy DaemonSet" }],
      conflicts: [],
    });
    expect(mode(ds("anetd")).mode).toBe("cilium");
    expect(mode(ds("calico-node"))).toMatchObject({ mode: "other", evidence: [{ source: "datapath agent", value: "Calico (eBPF data plane)" }] });
  });

  it("a --source/--dest question gets an unknown answer that says which datapath decides it and how to ask it", () => {
    const r = explainService(ciliumNode([ds("cilium")]), "kube-system", "kube-dns", { nodes: ["k8s1"], packet });
    expect(r.packet).toEqual([{
      node: "k8s1",
      source: "10.244.1.7",
      destination: "10.96.0.10:53/udp",
      outcome: "unknown",
      endpoints: [],
      masquerade: "n/a",
      reason: "Services on k8s1 are served by Cilium (eBPF kube-proxy replacement), not kube-proxy: where this packet goes and whether it is masqueraded are decided by the agent's own datapath, which this report does not read; ask the agent: kubectl -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg service list",
      evidence: [],
      caveats: [],
    }]);
  });

  it("with Cilium's service table (tests/fixtures/cilium/compare/scope): mode cilium, and the packet answer says the table has no path", () => {
    const r = explainService(readBundle("tests/fixtures/cilium/compare/scope"), "shop", "web", { packet: { source: "10.244.0.5", destination: "10.96.120.7", port: 80, protocol: "tcp" } });
    expect(r.nodes[0]!.proxyMode.mode).toBe("cilium");
    expect(r.packet!.map((a) => [a.node, a.outcome])).toEqual([["kind-worker", "unknown"]]);
    expect(r.packet![0]!.reason).toContain("its service table, compared above, lists the backends but not the path");
  });
});

// Audit (Cilium) defect 1: kube-proxy in nftables mode with Cilium as the CNI. A live run collects kube-proxy's table as
// nft-text only (docs/bundle.md), and Cilium, even with kubeProxyReplacement=false, lists ClusterIP Services in its
// table (kubeproxy-free.rst, "kube-proxy hybrid modes"): the node was called kube-proxy-free and its analysis dropped.
describe("kube-proxy's nftables table in nft-text is kube-proxy state", () => {
  const CILIUM_TABLE = JSON.stringify([{
    spec: {
      id: 9,
      "frontend-address": { ip: "172.30.0.44", port: 80, protocol: "TCP", scope: "external" },
      "backend-addresses": [{ ip: "10.180.0.4", port: 80, protocol: "TCP", state: "active" }, { ip: "10.180.0.5", port: 80, protocol: "TCP", state: "active" }],
      flags: { type: "ClusterIP", trafficPolicy: "Cluster", name: "svc4", namespace: "ns4" },
    },
    status: { realized: { id: 9 } },
  }]);
  it("hasKubeProxyState reads `table ip kube-proxy {` and `table ip6 kube-proxy {` in nft-text, and nothing else", () => {
    const text = readBundle("tests/fixtures/nftables/affinity-held").nodes[0]!.sections["nft-text"]!.stdout;
    expect(hasKubeProxyState({ name: "n", sections: { "nft-text": { stdout: text, exitCode: 0 } } })).toBe(true);
    expect(hasKubeProxyState({ name: "n", sections: { "nft-text": { stdout: "table ip6 kube-proxy { # handle 4\n}\n", exitCode: 0 } } })).toBe(true);
    expect(hasKubeProxyState({ name: "n", sections: { "nft-text": { stdout: "table inet cilium {\n}\ntable ip kube-proxy-old {\n}\n", exitCode: 0 } } })).toBe(false);
  });
  it("an nftables-mode node with Cilium's table is analysed as kube-proxy nftables mode", () => {
    const b = readBundle("tests/fixtures/nftables/affinity-held");
    b.nodes[0]!.sections["cilium-services"] = { stdout: CILIUM_TABLE, exitCode: 0, command: "cilium-dbg service list -o json" };
    const r = explainService(b, "ns4", "svc4");
    const n = r.nodes[0]!;
    expect(n.proxyMode.mode).toBe("nftables");
    expect(r.findings.some((f) => f.code === "NotKubeProxyDatapath")).toBe(false);
    const cip = n.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!;
    expect(cip.balancing.shares.map((s) => [s.endpoint, s.share])).toEqual([["10.180.0.4:80", 0.5], ["10.180.0.5:80", 0.5]]);
  });
});

// Audit (Cilium) defect 2: Cilium next to kube-proxy (kube-proxy still deployed, or its rules left behind). Cilium
// translates pod → ClusterIP connections before kube-proxy's rules (kubeproxy-free.rst, kube-proxy hybrid modes), so the
// report must say both are there, which one it follows, what decides, and compare Cilium's table when it was collected
// (it was dropped without a word, and "drift: none" printed while Cilium balanced to a backend the API does not list).
describe("Cilium next to kube-proxy's rules", () => {
  // examples/iptables-lab's my-nginx-svc (ClusterIP 10.98.69.149:3000 → 10.244.3.38:80) in Cilium's table, balanced
  // to 10.244.3.99 instead
  const ciliumTable = JSON.stringify([{
    spec: {
      id: 12,
      "frontend-address": { ip: "10.98.69.149", port: 3000, protocol: "TCP", scope: "external" },
      "backend-addresses": [{ ip: "10.244.3.99", port: 80, protocol: "TCP", state: "active" }],
      flags: { type: "ClusterIP", trafficPolicy: "Cluster", name: "my-nginx-svc", namespace: "default" },
    },
    status: { realized: { id: 12 } },
  }]);
  const lab = (daemonSets: DaemonSet[], table?: string) => {
    const b = readBundle("examples/iptables-lab");
    b.objects.daemonSets = daemonSets;
    if (table !== undefined) b.nodes.find((n) => n.name === "k8s1")!.sections["cilium-services"] = { stdout: table, exitCode: 0, command: "cilium-dbg service list -o json" };
    return explainService(b, "default", "my-nginx-svc", { nodes: ["k8s1"] });
  };

  it("kube-proxy and Cilium deployed, Cilium's table collected: kube-proxy's analysis, a note and a warning, Cilium's table compared", () => {
    const r = lab([ds("kube-proxy"), ds("cilium")], ciliumTable);
    const n = r.nodes[0]!;
    expect(n.proxyMode.mode).toBe("iptables");
    expect(n.notes.join("\n")).toContain("a Cilium agent runs next to kube-proxy's rules on this node (the node's Cilium agent lists its service table (cilium-dbg service list); DaemonSet kube-system/cilium): the analysis below follows kube-proxy's rules");
    expect(n.notes.join("\n")).toContain("the agent's kube-proxy-replacement setting decides");
    expect(r.findings.find((f) => f.code === "CiliumNextToKubeProxy")).toMatchObject({ severity: "warning", node: "k8s1" });
    expect(n.drift.filter((d) => d.frontend).map((d) => [d.kind, d.endpoint])).toEqual([["missing-on-node", "10.244.3.38:80"], ["stale-on-node", "10.244.3.99:80"]]);
    const pod = n.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!.clients.find((c) => c.client === "pod-same-node")!;
    expect(pod.caveats.join("\n")).toMatch(/^unverified: a Cilium agent runs on this node, and Cilium translates pod → ClusterIP connections/m);
  });

  it("kube-proxy's rules without its DaemonSet, and a Cilium DaemonSet: the rules may be left over, and Cilium's table was not collected", () => {
    const n = lab([ds("cilium")]).nodes[0]!;
    expect(n.proxyMode.mode).toBe("iptables");
    expect(n.notes.join("\n")).toContain("the bundle holds no kube-system/kube-proxy DaemonSet, so these rules may be left over from before a move to Cilium's kube-proxy replacement");
    expect(n.notes.join("\n")).toContain("its table was not collected: kubectl -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg service list");
  });

  it("Cilium's table collected, a bundle without DaemonSets: both named, no claim that kube-proxy's rules are left over", () => {
    const notes = lab([], ciliumTable).nodes[0]!.notes.join("\n");
    expect(notes).toContain("a Cilium agent runs next to kube-proxy's rules on this node (the node's Cilium agent lists its service table (cilium-dbg service list)): the analysis below follows kube-proxy's rules");
    expect(notes).not.toContain("left over");
  });

  it("control: no Cilium in the bundle, nothing said", () => {
    const r = lab([ds("kube-proxy")]);
    expect(r.findings.some((f) => f.code === "CiliumNextToKubeProxy")).toBe(false);
    expect(r.nodes[0]!.notes.join("\n")).not.toContain("Cilium");
  });

  it("kube-proxy and Cilium deployed, a node without kube-proxy state: the note says Cilium may serve it, and what decides", () => {
    const n = explainService(ciliumNode([ds("kube-proxy"), ds("cilium")]), "kube-system", "kube-dns", { nodes: ["k8s1"] }).nodes[0]!;
    expect(n.notes.join("\n")).toContain("a Cilium agent is deployed too (DaemonSet kube-system/cilium): with kubeProxyReplacement=true it serves this node's Services itself");
  });
});
