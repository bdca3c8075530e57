// A locally generated packet has no input interface: iptables(8) says -i applies to INPUT, FORWARD and PREROUTING
// only, and nftables' iifname reads an empty name where the hook has no in-device (net/netfilter/nft_meta.c
// nft_meta_store_ifname). So kube-proxy's BridgeInterface / InterfaceNamePrefix detector (`! -i cni0 -j
// KUBE-MARK-MASQ`, `iif != "cni0" jump mark-for-masquerade`: localDetector.IfNotLocal() on the ClusterIP rule,
// pkg/proxy/iptables/proxier.go syncProxyRules) masquerades every host-network client. Traced from OUTPUT without an
// interface named by the caller (no detector found in the rules), the trace answered "depends on the input interface"
// and the host client "not masqueraded".
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { NodeCapture } from "../src/bundle/bundle.ts";
import { nodeDatapath } from "../src/service/datapath.ts";
import { tracePacket } from "../src/service/entry_points.ts";
import { service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

/** kube-proxy's iptables rules for ns1/svc1 with --detect-local-mode=BridgeInterface --pod-bridge-interface=cni0. */
function bridgeDetectorNode(): NodeCapture {
  const services = [service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.30.0.41", ports: [{ name: "p80", port: 80, protocol: "TCP" }] })];
  const slices = [slice("ns1", "svc1", [{ ip: "10.180.0.1", node: "node-2" }, { ip: "10.180.2.1", node: "node-1" }], [{ name: "p80", port: 80 }])];
  const dump = kubeProxyRules(services, slices, "10.180.0.0/16").replaceAll("! -s 10.180.0.0/16 ", "! -i cni0 ");
  expect(dump).toContain("! -i cni0 -j KUBE-MARK-MASQ");
  return { name: "node-1", sections: { "iptables-save": { stdout: dump, exitCode: 0 } } };
}

describe("a host-network client (nat OUTPUT) has no input interface, whatever the caller knows of the detector", () => {
  it("iptables: `! -i cni0` on the ClusterIP rule matches: masqueraded, by that rule", () => {
    const dp = nodeDatapath(bridgeDetectorNode(), 4).datapath!;
    const pkt = tracePacket("192.168.0.2", "172.30.0.41", 80, "tcp", 4, true, false);
    expect(pkt.inInterface).toBeUndefined();
    const t = dp.trace(pkt, "OUTPUT");
    expect(t.outcomes.map((o) => [o.dnatTo, o.masqueraded])).toEqual([["10.180.0.1:80", true], ["10.180.2.1:80", true]]);
    expect(t.outcomes.flatMap((o) => o.path.map((r) => r.raw)).some((r) => r.includes("! -i cni0 -j KUBE-MARK-MASQ"))).toBe(true);
    expect(JSON.stringify(t)).not.toContain("depends on the input interface");
  });
  it("iptables: the same packet from a pod (PREROUTING) with no interface named stays unknown", () => {
    const dp = nodeDatapath(bridgeDetectorNode(), 4).datapath!;
    const t = dp.trace(tracePacket("10.180.2.200", "172.30.0.41", 80, "tcp", 4, false, false), "PREROUTING");
    expect(JSON.stringify(t)).toContain("depends on the input interface (! -i cni0)");
  });
  it("nftables: `iif != \"cni0\" jump mark-for-masquerade` matches: masqueraded", () => {
    const node: NodeCapture = {
      name: "test-node",
      sections: { "nft-json": { stdout: readFileSync("tests/fixtures/nftables/bridge-iif/TestOverallNFTablesRules-iif.json", "utf8"), exitCode: 0 } },
    };
    const dp = nodeDatapath(node, 4).datapath!;
    const t = dp.trace(tracePacket("192.168.0.2", "172.30.0.41", 80, "tcp", 4, true, false), "OUTPUT");
    expect(t.outcomes.length).toBeGreaterThan(0);
    expect(t.outcomes.every((o) => o.verdict === "dnat" && o.masqueraded === true)).toBe(true);
  });
});
