// Issue 14 point 3: interface-based detect-local (kube-proxy --detect-local-mode=BridgeInterface writes
// `! -i <bridge> -j KUBE-MARK-MASQ` and `-i <bridge> … "pod traffic for …"` where ClusterCIDR mode writes
// `! -s <cidr>` / `-s <cidr>`, pkg/proxy/util/localdetector.go). kube-proxy's own TestOverallIPTablesRules dump with
// the CIDR detector rewritten that way, checked against the kernel: in the oracle's topology a pod of the node
// arrives on cli0 (the "bridge"), a host process starts in OUTPUT with no input interface.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import type { ClientVerdict, ServiceReport } from "../src/service/report.ts";
import { bundleOf, fixture, overallObjects } from "./helpers/bundles.ts";
import { type KernelOracle, openKernelOracle, ORACLE_TOOLS, TOPOLOGY_MASTER } from "./helpers/kernel_oracle.ts";
import { requireNetns } from "./helpers/netns.ts";

const cidrDump = fixture("kube-proxy/TestOverallIPTablesRules.iptables-save");
const bridgeDump = cidrDump
  .replaceAll("! -s 10.0.0.0/8 -j KUBE-MARK-MASQ", "! -i cli0 -j KUBE-MARK-MASQ")
  .replaceAll('external destinations" -s 10.0.0.0/8 -j', 'external destinations" -i cli0 -j');

function report(dump: string): ServiceReport {
  const { services, slices } = overallObjects("test-node", true);
  // The pods' addresses come from the nodes' podCIDRs here (the bundle's capture info), as kube-proxy's rules no longer name them.
  return explainService(bundleOf({ dump, nodeName: "test-node", nodeIP: "192.168.1.2", services, slices, clusterCIDRs: ["10.0.0.0/8"] }), "ns1", "svc1");
}
function clusterIP(r: ServiceReport, c: ClientVerdict["client"]): ClientVerdict {
  return r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!.clients.find((x) => x.client === c)!;
}

describe("BridgeInterface detect-local", () => {
  it("the rewrite really changed the detector (the test can fail)", () => {
    expect(bridgeDump).not.toBe(cidrDump);
    expect(bridgeDump).toContain("! -i cli0 -j KUBE-MARK-MASQ");
  });
  it("each client arrives on the interface of its kind: no verdict is left to an unknown interface", () => {
    const r = report(bridgeDump);
    expect(r.nodes[0]!.notes).toContainEqual(expect.stringMatching(/^local traffic is detected by input interface \(cli0, from the rules/));
    for (const e of r.nodes[0]!.ports[0]!.entryPoints) {
      for (const c of e.clients) expect(c.caveats.filter((x) => x.includes("input interface")), `${e.kind} ${c.client}`).toEqual([]);
    }
    expect(clusterIP(r, "pod-same-node").masquerade).toBe("never");
    expect(clusterIP(r, "host-network").masquerade).toBe("always");
  });
});

describe.runIf(requireNetns(ORACLE_TOOLS))("BridgeInterface detect-local agrees with the kernel", () => {
  let oracle: KernelOracle;
  beforeAll(async () => {
    oracle = await openKernelOracle({ text: bridgeDump, backend: "nft" }, TOPOLOGY_MASTER);
  });
  afterAll(async () => {
    await oracle?.close();
  });
  it.each([
    { client: "pod-same-node" as const, oracle: "pod-local" as const },
    { client: "host-network" as const, oracle: "node-local" as const },
  ])("$client at the ClusterIP", async ({ client, oracle: kind }) => {
    const v = clusterIP(report(bridgeDump), client);
    const src = kind === "node-local" ? "192.168.0.2" : v.source;
    const k = await oracle.trace({ client: kind, src, dst: "172.30.0.41", dport: 80, proto: "tcp" });
    expect(k.dropped).toBe(false);
    // The kernel masquerades a host process whose source is not the address MASQUERADE picks; for one that is, the
    // mark is what the plugin reports: compare the KUBE-MARK-MASQ decision through the SNAT of a non-primary source.
    if (kind === "pod-local") expect(k.snat).toBe(v.masquerade === "always");
    else expect(v.masquerade).toBe("always");
  });
});
