// nftables mode, per local-traffic detector: which clients of a Service kube-proxy masquerades, and by which rule.
//
// kube-proxy writes its detector into the `kube-proxy` table twice (pkg/proxy/nftables/proxier.go @ b0f823e6,
// syncProxyRules):
//   - "Set up internal traffic handling": `ipX daddr <ClusterIP> <proto> dport <port>
//     proxier.localDetector.IfNotLocalNFT() jump mark-for-masquerade` in each service chain, written only
//     `if proxier.masqueradeAll … else if proxier.localDetector.IsImplemented()`;
//   - externalTrafficPolicy Local: `proxier.localDetector.IfLocalNFT() goto <cluster policy chain>` comment
//     "short-circuit pod traffic" in the external chain, written only `if proxier.localDetector.IsImplemented()`.
// The detector's words are pkg/proxy/util/localdetector.go's (GetLocalTrafficDetectors):
//   ClusterCIDR          NewDetectLocalByCIDR                  `ip saddr != 10.0.0.0/8` / `ip saddr 10.0.0.0/8`
//   BridgeInterface      NewDetectLocalByBridgeInterface       `iifname != cni0` / `iifname cni0`
//   InterfaceNamePrefix  NewDetectLocalByInterfaceNamePrefix   `iifname != veth*` / `iifname veth*`
//   (clusterCIDR unset)  NewNoOpLocalDetector, IsImplemented() false: neither rule
// (`ifNotLocalNFT: []string{"iifname", "!=", interfaceName}`, `[]string{"iifname", "!=", interfacePrefix + "*"}`;
// pkg/proxy/util/localdetector_test.go TestDetectLocalNFTByBridgeInterface expects `{"iifname", "!=", "eth0"}`.)
// The masquerade itself: mark-for-masquerade sets the mark, the masquerading chain (postrouting) does `masquerade
// fully-random` for marked packets (proxier.go setupNFTables; the `masquerading` chain of kube-proxy's baseRules in
// proxier_test.go / helpers_test.go).
//
// The rulesets: kube-proxy's TestOverallNFTablesRules with each detector, loaded into real nft 1.0.6 and read back in
// both forms a bundle holds, nft -j (nft-json) and nft list (nft-text): tests/fixtures/nftables/interface-detectors.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { explainService } from "../src/service/explain.ts";
import type { ClientVerdict } from "../src/service/report.ts";
import { BRIDGE_CNI, nftDetectorBundle, type NftDetector, type NftForm } from "./helpers/nft_detector_bundles.ts";

type Detector = NftDetector;
type Form = NftForm;
const DIR = "tests/fixtures/nftables/interface-detectors";

const bundle = nftDetectorBundle;

function explain(b: Bundle, ns: string, svc: string) {
  const n = explainService(b, ns, svc).nodes[0]!;
  const at = (kind: string, client: string): ClientVerdict =>
    n.ports[0]!.entryPoints.find((e) => e.kind === kind)!.clients.find((c) => c.client === client)!;
  return { notes: n.notes, at };
}

/** A rule's text as nft prints it (the JSON form's evidence carries its `# handle N`). */
const text = (raw: string) => raw.replace(/ # handle \d+$/, "");
/** The role the rule of this text plays for the client (undefined: not in its evidence). */
const roleOf = (c: ClientVerdict, rule: string) => c.evidence.find((e) => text(e.rule.raw) === rule)?.role;
const masqueraded = (c: ClientVerdict) => c.endpoints.map((e) => e.masqueraded);

/** svc1's ClusterIP masquerade rule as each detector has kube-proxy write it (nft's own printing). */
const SVC1_RULE: Record<Exclude<Detector, "none">, string> = {
  ClusterCIDR: "ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade",
  BridgeInterface: 'ip daddr 172.30.0.41 tcp dport 80 iifname != "cni0" jump mark-for-masquerade',
  InterfaceNamePrefix: 'ip daddr 172.30.0.41 tcp dport 80 iifname != "veth*" jump mark-for-masquerade',
};
/** Why the detector rule leaves the pod of the node alone: its source (CIDR) or the interface it arrives on. */
const POD_EXEMPT: Record<Exclude<Detector, "none">, string> = {
  ClusterCIDR: "does not mark: source 10.0.0.200 is in 10.0.0.0/8",
  BridgeInterface: 'does not mark: input interface cni0 (rule wants iifname != "cni0")',
  InterfaceNamePrefix: 'does not mark: input interface veth0a1b2c3d (rule wants iifname != "veth*")',
};

describe.each(["json", "text"] as const)("nft %s", (form) => {
  it("the premise: each ruleset holds its detector's rules exactly as kube-proxy writes them, and none holds another's", () => {
    const read = (d: Detector) => readFileSync(`${DIR}/${d}.${form === "json" ? "json" : "nft.txt"}`, "utf8");
    if (form === "text") {
      expect(read("ClusterCIDR")).toContain(`\t\t${SVC1_RULE.ClusterCIDR}\n`);
      expect(read("ClusterCIDR")).toContain('\t\tip saddr 10.0.0.0/8 goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit pod traffic"\n');
      expect(read("BridgeInterface")).toContain(`\t\t${SVC1_RULE.BridgeInterface}\n`);
      expect(read("BridgeInterface")).toContain('\t\tiifname "cni0" goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit pod traffic"\n');
      expect(read("InterfaceNamePrefix")).toContain(`\t\t${SVC1_RULE.InterfaceNamePrefix}\n`);
      expect(read("InterfaceNamePrefix")).toContain('\t\tiifname "veth*" goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit pod traffic"\n');
    } else {
      const iif = (op: string, v: string) => `{"match": {"op": "${op}", "left": {"meta": {"key": "iifname"}}, "right": "${v}"}}`;
      expect(read("BridgeInterface")).toContain(`${iif("!=", "cni0")}, {"jump": {"target": "mark-for-masquerade"}}`);
      expect(read("BridgeInterface")).toContain(`${iif("==", "cni0")}, {"goto": {"target": "service-42NFTM6N-ns2/svc2/tcp/p80"}}`);
      expect(read("InterfaceNamePrefix")).toContain(`${iif("!=", "veth*")}, {"jump": {"target": "mark-for-masquerade"}}`);
      expect(read("InterfaceNamePrefix")).toContain(`${iif("==", "veth*")}, {"goto": {"target": "service-42NFTM6N-ns2/svc2/tcp/p80"}}`);
    }
    expect(read("ClusterCIDR")).not.toContain("iifname");
    expect(read("BridgeInterface")).not.toMatch(/10\.0\.0\.0|veth/);
    expect(read("InterfaceNamePrefix")).not.toMatch(/10\.0\.0\.0|cni0/);
    const none = read("none");
    expect(none).not.toMatch(/iifname|10\.0\.0\.0|short-circuit pod traffic/);
    // no service chain rule marks ClusterIP traffic: only the endpoints' hairpin rules and the external chains' do
    expect(none).not.toMatch(form === "text" ? /ip daddr 172\.30\.0\.\d+ .*jump mark-for-masquerade/ : /"right": "172\.30\.0\.\d+"\}\}, [^\]]*\{"jump": \{"target": "mark-for-masquerade"/);
    expect(read("ClusterCIDR")).toMatch(form === "text" ? /ip daddr 172\.30\.0\.\d+ .*jump mark-for-masquerade/ : /"right": "172\.30\.0\.\d+"\}\}, [^\]]*\{"jump": \{"target": "mark-for-masquerade"/);
  });

  describe.each(["ClusterCIDR", "BridgeInterface", "InterfaceNamePrefix"] as const)("%s detector", (detector) => {
    const r = explain(bundle(detector, form), "ns1", "svc1");
    const rule = SVC1_RULE[detector];

    it("ClusterIP: a pod of the node is not masqueraded, the detector rule being what lets it through", () => {
      const pod = r.at("ClusterIP", "pod-same-node");
      expect(pod.source).toBe("10.0.0.200");
      expect(pod.outcome).toBe("forwarded");
      expect(masqueraded(pod)).toEqual([false]);
      expect(pod.masquerade).toBe("never");
      expect(roleOf(pod, rule)).toBe(POD_EXEMPT[detector]);
      expect(pod.reason).toMatch(/^not masqueraded: (line|handle) \d+ \(service-ULMVA6XW-ns1\/svc1\/tcp\/p80\) does not apply: /);
    });

    it.each(["host-network", "external"] as const)("ClusterIP: the %s client is masqueraded, marked by the detector rule", (who) => {
      const c = r.at("ClusterIP", who);
      expect(c.outcome).toBe("forwarded");
      expect(masqueraded(c)).toEqual([true]);
      expect(c.masquerade).toBe("always");
      expect(roleOf(c, rule)).toBe("marks for masquerade (mark-for-masquerade)");
      expect(roleOf(c, "masquerade fully-random")).toBe("masquerades (SNAT to the node's address)");
      expect(c.reason).toMatch(/^masqueraded: marked by (line|handle) \d+ \(service-ULMVA6XW-ns1\/svc1\/tcp\/p80\), SNATed by (line|handle) \d+$/);
    });

    it("the node's note names the detector and quotes its rule", () => {
      if (detector === "ClusterCIDR") {
        expect(r.notes).toContain("cluster CIDR 10.0.0.0/8 (from the rules (local-traffic detector))");
        expect(r.notes.join("\n")).not.toContain("detected by input interface");
      } else {
        const name = detector === "BridgeInterface" ? "cni0" : "veth*";
        const note = r.notes.find((n) => n.startsWith("local traffic is detected by input interface"));
        expect(note).toMatch(new RegExp(`^local traffic is detected by input interface \\(${name.replace("*", "\\*")}, from the rules \\(kube-proxy's local-traffic detector\\): (line|handle) \\d+ \\(service-ULMVA6XW-ns1/svc1/tcp/p80\\) \``));
        expect(note).toContain(`\`${rule}\`)`);
        expect(note).toContain(`pods of this node are traced arriving on ${detector === "BridgeInterface" ? "cni0" : "veth0a1b2c3d"}, other clients on eth0`);
        expect(r.notes.filter((n) => n.startsWith("cluster CIDR "))).toEqual([]);
      }
      expect(r.notes.join("\n")).not.toContain("no local-traffic detector");
    });

    // svc2: externalTrafficPolicy Local, its one endpoint (10.180.0.2) on another node. Only what the short-circuit
    // rule takes (IfLocalNFT) reaches it; the rest is dropped (no local endpoint).
    const np = explain(bundle(detector, form), "ns2", "svc2");
    it("eTP Local NodePort: a pod of the node is short-circuited to the endpoint", () => {
      const pod = np.at("NodePort", "pod-same-node");
      expect(pod.outcome).toBe("forwarded");
      expect(pod.endpoints.map((e) => [e.endpoint, e.masqueraded])).toEqual([["10.180.0.2:80", false]]);
    });
    it(detector === "ClusterCIDR"
      ? "eTP Local NodePort: a pod of another node (in 10.0.0.0/8) is short-circuited too"
      : "eTP Local NodePort: a pod of another node arrives on eth0, not the pods' interface: not short-circuited, dropped", () => {
      const other = np.at("NodePort", "pod-other-node");
      expect(other.source).toBe("10.0.1.201");
      if (detector === "ClusterCIDR") {
        expect(other.outcome).toBe("forwarded");
        expect(other.endpoints.map((e) => [e.endpoint, e.masqueraded])).toEqual([["10.180.0.2:80", false]]);
      } else {
        expect(other.outcome).toBe("dropped");
        // the short-circuit rule it missed is what leaves it to the local policy (no local endpoint: dropped)
        const want = detector === "BridgeInterface" ? "cni0" : "veth*";
        expect(other.reason).toMatch(/^dropped by (line|handle) \d+ \(nodeport-endpoints-check\); not short-circuited to every endpoint \(service-42NFTM6N-ns2\/svc2\/tcp\/p80\) in external-42NFTM6N-ns2\/svc2\/tcp\/p80: input interface eth0 \((line|handle) \d+; rule wants /);
        expect(roleOf(other, `iifname "${want}" goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit pod traffic"`)).toBe(
          `does not short-circuit it to service-42NFTM6N-ns2/svc2/tcp/p80 (every endpoint): input interface eth0 (rule wants iifname "${want}")`,
        );
      }
    });
  });

  describe("InterfaceNamePrefix detector, pods behind a bridge (cni0 holds their gateway, its ports are veths)", () => {
    // the pods' routed packets arrive on cni0, which `iifname != "veth*"` does not exempt: kube-proxy masquerades them
    const r = explain(bundle("InterfaceNamePrefix", form, BRIDGE_CNI, "net.bridge.bridge-nf-call-iptables=1\nbrport.cni0.veth1a2b3c4d.hairpin_mode=1\n"), "ns1", "svc1");
    it("ClusterIP: a pod of the node arrives on cni0 and is masqueraded by the detector rule", () => {
      const pod = r.at("ClusterIP", "pod-same-node");
      expect(masqueraded(pod)).toEqual([true]);
      expect(roleOf(pod, SVC1_RULE.InterfaceNamePrefix)).toBe("marks for masquerade (mark-for-masquerade)");
      expect(r.notes.join("\n")).toContain("this node's pods sit behind bridge cni0 (cni0 holds the pods' gateway 10.0.0.1/24 and is a bridge (the node's sysctls))");
    });
  });

  describe("no detector (kube-proxy without clusterCIDR: no ClusterIP masquerade rule, no short-circuit rule)", () => {
    const r = explain(bundle("none", form), "ns1", "svc1");
    it.each(["pod-same-node", "host-network", "external"] as const)("ClusterIP: the %s client is not masqueraded, for want of a detector", (who) => {
      const c = r.at("ClusterIP", who);
      expect(c.outcome).toBe("forwarded");
      expect(masqueraded(c)).toEqual([false]);
      expect(c.masquerade).toBe("never");
      expect(c.reason).toBe(
        "not masqueraded: no rule on the path marks it: the node's rules have no local-traffic detector (kube-proxy's clusterCIDR has no IPv4 range, as far as the bundle tells: its configuration is not in it), so kube-proxy writes no ClusterIP masquerade rule (pkg/proxy/nftables/proxier.go syncProxyRules: only with masqueradeAll or localDetector.IsImplemented())",
      );
      // the only marking rule on the path is the endpoint's hairpin rule, which does not apply
      expect(c.evidence.map((e) => text(e.rule.raw))).toEqual(["ip saddr 10.180.0.1 jump mark-for-masquerade"]);
    });
    it("the node's note says the decisions depend on the missing detector", () => {
      const note = r.notes.find((n) => n.startsWith("no local-traffic detector in test-node's rules"));
      // no kube-proxy configuration in the bundle; the Node's podCIDR rules out NodeCIDR (it would give a detector)
      expect(note).toContain(
        "kube-proxy runs without one (detect-local-mode ClusterCIDR (the default) with no IPv4 clusterCIDR: pkg/proxy/util/localdetector.go; with NodeCIDR, Node test-node's spec.podCIDRs 10.0.0.0/24 would give it one; kube-proxy's configuration, not in the bundle, would say)",
      );
      expect(note).toContain("no client is masqueraded at a ClusterIP, and pods reach externalTrafficPolicy Local addresses as clients from outside do");
      expect(note).toMatch(/The cluster CIDR 10\.0\.0\.0\/8 \(from the bundle's capture info\) only places this report's sample clients$/);
      expect(r.notes.filter((n) => n.startsWith("cluster CIDR ") || n.startsWith("local traffic is detected by input interface"))).toEqual([]);
    });
    it("eTP Local NodePort: a pod of the node is not short-circuited: dropped like a client from outside", () => {
      const np = explain(bundle("none", form), "ns2", "svc2");
      expect(np.at("NodePort", "pod-same-node").outcome).toBe("dropped");
      expect(np.at("NodePort", "external").outcome).toBe("dropped");
    });
  });
});
