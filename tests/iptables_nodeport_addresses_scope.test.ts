// iptables mode with nodePortAddresses: kube-proxy ends nat KUBE-SERVICES with one `-d IP -j KUBE-NODEPORTS` jump per
// node address nodePortAddresses selects, instead of the `-m addrtype --dst-type LOCAL` jump (pkg/proxy/iptables/
// proxier.go syncProxyRules, "create nodeport rules for each IP one by one", v1.10–v1.35). A NodePort on another
// address of the node is not kube-proxy's to take there, so its absence is no drift, even when the bundle holds no
// kube-proxy configuration (a static-pod kube-proxy, a config file on the host): the node's rules tell the scope.
// The ruleset is kube-proxy's own TestOnlyLocalNodePorts (v1.27), written with nodePortAddresses [192.168.0.0/24].
import { describe, expect, it } from "vitest";
import { emptyBundle } from "../src/bundle/bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { fixture, node, service, slice } from "./helpers/bundles.ts";

const RULES = fixture("kube-proxy/TestOnlyLocalNodePorts.v1.27.iptables-save");
const IP_ADDR = "1: lo    inet 127.0.0.1/8 scope host lo\n2: eth0    inet 172.16.0.5/24 brd 172.16.0.255 scope global eth0\n3: eth1    inet 192.168.0.2/24 brd 192.168.0.255 scope global eth1\n";

function explain(rules: string, internalIP: string) {
  const b = emptyBundle({ tool: "test" });
  b.capture.clusterCIDRs = ["10.0.0.0/8"];
  b.objects.services.push(service("ns1", "svc1", { type: "NodePort", clusterIP: "172.30.0.41", externalTrafficPolicy: "Local", ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }] }));
  b.objects.endpointSlices.push(slice("ns1", "svc1", [{ ip: "10.180.0.1" }, { ip: "10.180.2.1", node: "test-hostname" }], [{ name: "p80", port: 80 }]));
  b.objects.nodes.push(node("test-hostname", internalIP));
  b.nodes.push({ name: "test-hostname", sections: { "iptables-save": { stdout: rules, exitCode: 0 }, "ip-addr": { stdout: IP_ADDR, exitCode: 0 } } });
  return explainService(b, "ns1", "svc1");
}

describe("iptables mode: NodePorts served on the addresses of the -d IP -j KUBE-NODEPORTS jumps", () => {
  it("InternalIP outside nodePortAddresses, no kube-proxy configuration in the bundle: no drift, the scope read from the rules", () => {
    const r = explain(RULES, "172.16.0.5");
    expect(r.nodes[0]!.drift).toEqual([]);
    expect(r.findings.filter((f) => f.code.startsWith("Drift/"))).toEqual([]);
    expect(r.nodes[0]!.notes).toContainEqual(expect.stringMatching(/^NodePorts answer only on 192\.168\.0\.2 \(the node's nat KUBE-SERVICES jumps to KUBE-NODEPORTS only for those destinations/));
    const np = r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "NodePort")!;
    expect(np.clients.find((c) => c.client === "external")!.caveats).toContainEqual(expect.stringMatching(/^NodePort 3001 is not served on 172\.16\.0\.5: NodePorts answer only on 192\.168\.0\.2/));
  });

  it("the port's own KUBE-NODEPORTS rule gone, on an address the jump serves: still entry-missing drift", () => {
    const stale = RULES.split("\n").filter((l) => !l.includes("--dport 3001")).join("\n");
    const r = explain(stale, "192.168.0.2");
    expect(r.nodes[0]!.drift.map((d) => d.kind)).toEqual(["entry-missing"]);
    expect(r.nodes[0]!.drift[0]!.message).toMatch(/no kube-proxy rule for NodePort 192\.168\.0\.2:3001\/tcp on test-hostname/);
  });

  it("a --dst-type LOCAL jump (nodePortAddresses unset): every local address, no scope note", () => {
    const local = RULES.replace("-d 192.168.0.2 -j KUBE-NODEPORTS", "-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS");
    const r = explain(local, "172.16.0.5");
    expect(r.nodes[0]!.drift).toEqual([]);
    expect(r.nodes[0]!.notes.filter((n) => /NodePorts answer/.test(n))).toEqual([]);
  });
});
