// externalTrafficPolicy Local: which rule decides that a client at the NodePort / LoadBalancer IP / external IP reaches
// every endpoint or only this node's, quoted in the client's evidence (and, when it was not short-circuited, its reason).
//
// kube-proxy's external chain under the Local policy (pkg/proxy/iptables/proxier.go and pkg/proxy/nftables/proxier.go
// syncProxyRules, `svcInfo.ExternalPolicyLocal()`):
//   iptables  -A KUBE-EXT-X -m comment --comment "pod traffic for ns/svc:p external destinations" <IfLocal()> -j KUBE-SVC-X
//             -A KUBE-EXT-X -m comment --comment "masquerade LOCAL traffic for …" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ
//             -A KUBE-EXT-X -m comment --comment "route LOCAL traffic for …" -m addrtype --src-type LOCAL -j KUBE-SVC-X
//             -A KUBE-EXT-X -j KUBE-SVL-X                         (only with local endpoints)
//   nftables  <IfLocalNFT()> goto service-… comment "short-circuit pod traffic"
//             fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"
//             fib saddr type local goto service-… comment "short-circuit local traffic"
//             goto local-…                                        (only with local endpoints)
// A pod (IfLocal: `-s CLUSTER-CIDR`, `-i cni0`; nft `ip saddr CIDR`, `iifname "cni0"`) and the node itself go to the
// cluster chain, every endpoint; anything else goes on to this node's endpoints, or is dropped when it has none.
// Dumps: kube-proxy's own unit-test outputs (TestOverallIPTablesRules, TestOnlyLocalNodePorts v1.27) and
// TestOverallNFTablesRules with each detector loaded into nft 1.0.6 (tests/fixtures/nftables/interface-detectors).
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { explainService } from "../src/service/explain.ts";
import type { ClientVerdict } from "../src/service/report.ts";
import { bundleOf, fixture, node, overallObjects, service, slice } from "./helpers/bundles.ts";
import { nftDetectorBundle } from "./helpers/nft_detector_bundles.ts";

const roleOfLine = (c: ClientVerdict, line: number) => c.evidence.find((e) => e.rule.line === line)?.role;

describe("iptables mode", () => {
  describe("TestOverallIPTablesRules ns2/svc2 (Local, its one endpoint on another node)", () => {
    const dump = fixture("kube-proxy/TestOverallIPTablesRules.iptables-save");
    const lines = dump.split("\n");
    const lineOf = (needle: string) => lines.findIndex((l) => l.includes(needle)) + 1;
    const EXT = "KUBE-EXT-GNZBNJ2PO5MGZ6GT";
    const SVC = "KUBE-SVC-GNZBNJ2PO5MGZ6GT";
    const podRule = lineOf(`-A ${EXT} -m comment --comment "pod traffic for ns2/svc2:p80 external destinations" -s 10.0.0.0/8 -j ${SVC}`);
    const masqLocal = lineOf(`-A ${EXT} -m comment --comment "masquerade LOCAL traffic for ns2/svc2:p80 external destinations"`);
    const routeLocal = lineOf(`-A ${EXT} -m comment --comment "route LOCAL traffic for ns2/svc2:p80 external destinations" -m addrtype --src-type LOCAL -j ${SVC}`);
    const { services, slices } = overallObjects("test-node", false);
    const r = explainService(bundleOf({ dump, nodeName: "test-node", nodeIP: "192.168.1.2", services, slices }), "ns2", "svc2");
    const entry = (kind: string) => r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === kind)!;

    it.each(["NodePort", "LoadBalancer", "ExternalIP"])("%s: a pod is short-circuited by the pod-traffic rule, quoted as what sends it to every endpoint", (kind) => {
      expect(podRule).toBeGreaterThan(0);
      const pods = entry(kind).clients.filter((c) => c.client === "pod-same-node" || c.client === "pod-other-node");
      expect(pods.length).toBeGreaterThan(0);
      for (const pod of pods) {
        expect(pod.endpoints.map((e) => e.endpoint)).toEqual(["10.180.0.2:80"]);
        expect(roleOfLine(pod, podRule)).toBe(
          `short-circuits pod traffic to ${SVC}, every endpoint of the Service: kube-proxy exempts it from externalTrafficPolicy Local; takes the packet past line ${masqLocal}, a rule that marks for masquerade`,
        );
        expect(pod.reason).not.toContain("not short-circuited");
      }
    });

    it.each(["NodePort", "LoadBalancer", "ExternalIP"])("%s: the host takes \"masquerade LOCAL traffic\" and \"route LOCAL traffic\", both quoted", (kind) => {
      const host = entry(kind).clients.find((c) => c.client === "host-network")!;
      expect(host.masquerade).toBe("always");
      expect(roleOfLine(host, masqLocal)).toBe("marks for masquerade (KUBE-MARK-MASQ)");
      expect(roleOfLine(host, routeLocal)).toBe(`short-circuits the node's own traffic to ${SVC}, every endpoint of the Service: kube-proxy exempts it from externalTrafficPolicy Local`);
      // the pod rule it missed does not decide: the route LOCAL rule took it
      expect(roleOfLine(host, podRule)).toBeUndefined();
    });

    it("NodePort: a client from outside misses both short-circuits and is dropped; its evidence and reason name them", () => {
      const ext = entry("NodePort").clients.find((c) => c.client === "external")!;
      expect(ext.outcome).toBe("dropped");
      expect(roleOfLine(ext, podRule)).toBe(`does not short-circuit it to ${SVC} (every endpoint): source 203.0.113.10 is not in 10.0.0.0/8`);
      expect(roleOfLine(ext, routeLocal)).toBe(`does not short-circuit it to ${SVC} (every endpoint): source 203.0.113.10 is not a local address of the node (rule wants --src-type LOCAL)`);
      // each fact once, with the rules it decides (audit s20b finding 6)
      expect(ext.reason).toMatch(new RegExp(
        `; not short-circuited to every endpoint \\(${SVC}\\) in ${EXT}: source 203\\.0\\.113\\.10 is not in 10\\.0\\.0\\.0/8 \\(line ${podRule}\\) nor a local address of the node \\(line ${routeLocal}; rule wants --src-type LOCAL\\)$`,
      ));
      expect(ext.reason.match(/--src-type LOCAL/g)).toHaveLength(1);
    });
  });

  describe("TestOnlyLocalNodePorts (Local, one endpoint here, one elsewhere)", () => {
    const svc = service("ns1", "svc1", { type: "NodePort", clusterIP: "172.30.0.41", externalTrafficPolicy: "Local", ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }] });
    const eps = [slice("ns1", "svc1", [{ ip: "10.180.0.1", node: "other" }, { ip: "10.180.2.1", node: "test-hostname" }], [{ name: "p80", port: 80 }])];
    const EXT = "KUBE-EXT-XPGD46QRK7WJZT7O";
    const SVC = "KUBE-SVC-XPGD46QRK7WJZT7O";
    const run = (dump: string, extra?: (b: Bundle) => void) => {
      const b = bundleOf({ dump, nodeName: "test-hostname", nodeIP: "192.168.0.2", services: [svc], slices: eps, clusterCIDRs: ["10.0.0.0/8"] });
      b.objects.nodes.push(node("other", "192.168.0.3"));
      extra?.(b);
      const np = explainService(b, "ns1", "svc1").nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "NodePort")!;
      return (who: string) => np.clients.find((c) => c.client === who)!;
    };
    const original = fixture("kube-proxy/TestOnlyLocalNodePorts.v1.27.iptables-save");
    const lineOf = (dump: string, needle: string) => dump.split("\n").findIndex((l) => l.includes(needle)) + 1;

    it("ClusterCIDR detector: a pod reaches both endpoints by the pod-traffic rule; a client from outside only the local one, as it misses it", () => {
      const at = run(original);
      const podRule = lineOf(original, `"pod traffic for ns1/svc1:p80 external destinations" -s 10.0.0.0/8 -j ${SVC}`);
      const routeLocal = lineOf(original, `"route LOCAL traffic for ns1/svc1:p80 external destinations"`);
      const pod = at("pod-same-node");
      expect(pod.endpoints.map((e) => e.endpoint)).toEqual(["10.180.0.1:80", "10.180.2.1:80"]);
      expect(roleOfLine(pod, podRule)).toMatch(new RegExp(`^short-circuits pod traffic to ${SVC}, every endpoint of the Service: `));
      const ext = at("external");
      expect(ext.endpoints.map((e) => e.endpoint)).toEqual(["10.180.2.1:80"]);
      expect(roleOfLine(ext, podRule)).toBe(`does not short-circuit it to ${SVC} (every endpoint): source 203.0.113.10 is not in 10.0.0.0/8`);
      // the "masquerade LOCAL traffic" rule, missed for the same fact as "route LOCAL traffic", is said with it, once
      const masqLocal = lineOf(original, `"masquerade LOCAL traffic for ns1/svc1:p80 external destinations"`);
      expect(ext.reason).toBe(
        `not masqueraded and not short-circuited to every endpoint (${SVC}) in ${EXT}: source 203.0.113.10 is not in 10.0.0.0/8 (line ${podRule}) nor a local address of the node (line ${masqLocal}, ${routeLocal}; rule wants --src-type LOCAL)`,
      );
      expect(pod.reason).toBe(`bypasses externalTrafficPolicy Local: line ${podRule} (${EXT}) short-circuits pod traffic to ${SVC}, every endpoint; not masqueraded: it skips line ${masqLocal}, a mark for masquerade; no rule on its path marks it`);
    });

    it("BridgeInterface detector (-i cni0): a pod of another node arrives on eth0, misses the pod-traffic rule: only the local endpoint", () => {
      // localDetector.IfLocal() / IfNotLocal() of NewDetectLocalByBridgeInterface: `-i cni0` / `! -i cni0`
      const dump = original
        .replace(`"pod traffic for ns1/svc1:p80 external destinations" -s 10.0.0.0/8 -j`, `"pod traffic for ns1/svc1:p80 external destinations" -i cni0 -j`)
        .replaceAll("! -s 10.0.0.0/8 -j KUBE-MARK-MASQ", "! -i cni0 -j KUBE-MARK-MASQ");
      expect(dump).not.toContain("10.0.0.0/8");
      const addr = (i: number, ifname: string, cidr: string) => `${i}: ${ifname}    inet ${cidr} scope global ${ifname}\\       valid_lft forever preferred_lft forever\n`;
      const at = run(dump, (b) => {
        b.nodes[0]!.sections["ip-addr"] = { command: "ip -o addr show", stdout: addr(1, "lo", "127.0.0.1/8") + addr(2, "eth0", "192.168.0.2/24") + addr(5, "cni0", "10.0.0.1/24"), exitCode: 0 };
        b.objects.nodes[0]!.spec = { podCIDR: "10.0.0.0/24", podCIDRs: ["10.0.0.0/24"] };
        b.objects.nodes[1]!.spec = { podCIDR: "10.0.1.0/24", podCIDRs: ["10.0.1.0/24"] };
      });
      const podRule = lineOf(dump, `"pod traffic for ns1/svc1:p80 external destinations" -i cni0 -j ${SVC}`);
      const same = at("pod-same-node");
      expect(same.endpoints.map((e) => e.endpoint)).toEqual(["10.180.0.1:80", "10.180.2.1:80"]);
      expect(roleOfLine(same, podRule)).toMatch(new RegExp(`^short-circuits pod traffic to ${SVC}, every endpoint of the Service: `));
      const other = at("pod-other-node");
      expect(other.endpoints.map((e) => e.endpoint)).toEqual(["10.180.2.1:80"]);
      expect(roleOfLine(other, podRule)).toBe(`does not short-circuit it to ${SVC} (every endpoint): interface eth0 (rule wants cni0)`);
      expect(other.reason).toMatch(new RegExp(`not short-circuited to every endpoint \\(${SVC}\\) in ${EXT}: interface eth0 \\(line ${podRule}; rule wants cni0\\); `));
    });
  });
});

describe.each(["json", "text"] as const)("nftables mode, nft %s", (form) => {
  type Detector = "ClusterCIDR" | "BridgeInterface" | "InterfaceNamePrefix";
  /** As tests/nft_interface_detector.test.ts builds it: nftables-lab with the detector's ruleset, a second node n2. */
  const bundle = (detector: Detector): Bundle => nftDetectorBundle(detector, form);
  const SVC = "service-42NFTM6N-ns2/svc2/tcp/p80";
  const EXT = "external-42NFTM6N-ns2/svc2/tcp/p80";
  const POD_RULE: Record<Detector, string> = {
    ClusterCIDR: `ip saddr 10.0.0.0/8 goto ${SVC} comment "short-circuit pod traffic"`,
    BridgeInterface: `iifname "cni0" goto ${SVC} comment "short-circuit pod traffic"`,
    InterfaceNamePrefix: `iifname "veth*" goto ${SVC} comment "short-circuit pod traffic"`,
  };
  const LOCAL_RULE = `fib saddr type local goto ${SVC} comment "short-circuit local traffic"`;
  const text = (raw: string) => raw.replace(/ # handle \d+$/, "");
  const ev = (c: ClientVerdict, rule: string) => c.evidence.find((e) => text(e.rule.raw) === rule);

  describe.each(["ClusterCIDR", "BridgeInterface", "InterfaceNamePrefix"] as const)("%s detector, ns2/svc2 (Local, its one endpoint on another node)", (detector) => {
    const n = explainService(bundle(detector), "ns2", "svc2").nodes[0]!;
    const at = (kind: string, who: string) => n.ports[0]!.entryPoints.find((e) => e.kind === kind)!.clients.find((c) => c.client === who)!;

    it.each(["NodePort", "LoadBalancer", "ExternalIP"])("%s: the pod of the node is short-circuited: the rule is quoted as what sends it to every endpoint", (kind) => {
      const pod = at(kind, "pod-same-node");
      expect(pod.endpoints.map((e) => e.endpoint)).toEqual(["10.180.0.2:80"]);
      expect(ev(pod, POD_RULE[detector])?.role).toBe(`short-circuits pod traffic to ${SVC}, every endpoint of the Service: kube-proxy exempts it from externalTrafficPolicy Local`);
      expect(ev(pod, POD_RULE[detector])?.rule.chain).toBe(EXT);
      // the reason cites the short-circuit, not the ClusterIP masquerade rule of the service chain (audit s20b finding 6)
      const r = ev(pod, POD_RULE[detector])!.rule;
      expect(pod.reason).toBe(`bypasses externalTrafficPolicy Local: ${r.handle !== undefined ? "handle" : "line"} ${r.line} (${EXT}) short-circuits pod traffic to ${SVC}, every endpoint; not masqueraded: no rule on its path marks it`);
    });

    it.each(["NodePort", "LoadBalancer", "ExternalIP"])("%s: the host takes \"short-circuit local traffic\", quoted with \"masquerade local traffic\"", (kind) => {
      const host = at(kind, "host-network");
      expect(ev(host, LOCAL_RULE)?.role).toBe(`short-circuits the node's own traffic to ${SVC}, every endpoint of the Service: kube-proxy exempts it from externalTrafficPolicy Local`);
      expect(ev(host, `fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"`)?.role).toBe("marks for masquerade (mark-for-masquerade)");
      expect(ev(host, POD_RULE[detector])).toBeUndefined();
    });

    it("NodePort: a client from outside misses the short-circuits and is dropped: its evidence and reason name them", () => {
      const ext = at("NodePort", "external");
      expect(ext.outcome).toBe("dropped");
      const why = detector === "ClusterCIDR" ? "source 203.0.113.10 is not in 10.0.0.0/8" : `input interface eth0 (rule wants iifname "${detector === "BridgeInterface" ? "cni0" : "veth*"}")`;
      const pod = ev(ext, POD_RULE[detector])!;
      expect(pod.role).toBe(`does not short-circuit it to ${SVC} (every endpoint): ${why}`);
      const local = ev(ext, LOCAL_RULE)!;
      expect(local.role).toBe(`does not short-circuit it to ${SVC} (every endpoint): source 203.0.113.10 is not a local address of the node (rule wants fib saddr type local)`);
      const ref = (e: typeof pod) => `${e.rule.handle !== undefined ? "handle" : "line"} ${e.rule.line}`;
      const podWords = detector === "ClusterCIDR" ? `source 203.0.113.10 is not in 10.0.0.0/8 (${ref(pod)}) nor` : `${why.replace(/ \((rule wants [^()]*)\)$/, ` (${ref(pod)}; $1)`)}; source 203.0.113.10 is not`;
      expect(ext.reason).toBe(
        `dropped by ${form === "json" ? "handle" : "line"} ${ext.evidence.find((e) => e.role === "drops")!.rule.line} (nodeport-endpoints-check); not short-circuited to every endpoint (${SVC}) in ${EXT}: ${podWords} a local address of the node (${ref(local)}; rule wants fib saddr type local)`,
      );
    });

    if (detector !== "ClusterCIDR") {
      it("NodePort: a pod of another node arrives on eth0, misses the pod short-circuit, and is dropped: the rule is named", () => {
        const other = at("NodePort", "pod-other-node");
        expect(other.outcome).toBe("dropped");
        expect(ev(other, POD_RULE[detector])?.role).toBe(`does not short-circuit it to ${SVC} (every endpoint): input interface eth0 (rule wants iifname "${detector === "BridgeInterface" ? "cni0" : "veth*"}")`);
        expect(other.reason).toContain(`; not short-circuited to every endpoint (${SVC}) in ${EXT}: input interface eth0 (`);
      });
    }
  });
});
