// examples/iptables-lab: `-A POSTROUTING -o eth0 -j MASQUERADE` (line 128, another component's rule, before flannel's
// RETURN) masquerades a packet only if it leaves by eth0, and the route out (the output interface) is not collected.
// The pod client's reason said "not masqueraded if line 128 … does not apply, which is not known", yet its endpoints
// carried `masqueraded: false` (docs/report.md: absent when not known) and the packet paths too; the endpoint pod
// reaching its own Service (hairpin client, --from-pod) got a flat "masqueraded only when sent to 10.244.0.5:53" for
// the branch to k8s2, which leaves by the same interface, with line 128 only in a caveat.
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";

const LAB = new URL("../examples/iptables-lab", import.meta.url).pathname;
const LINE_128 = "not masqueraded if line 128 (POSTROUTING) does not apply, which is not known: depends on the output interface (-o eth0)";
const ask = (source: string) => explainService(readBundle(LAB), "kube-system", "kube-dns", { packet: { source, destination: "10.96.0.10", port: 53, protocol: "udp" } }).packet![0]!;

describe("a masquerade rule whose output interface is not known (iptables-lab line 128)", () => {
  it("a pod client: masqueraded left out on every endpoint and path, the reason names line 128", () => {
    const a = ask("10.244.0.200");
    expect(a.reason.startsWith(LINE_128)).toBe(true);
    expect(a.endpoints.map((e) => [e.endpoint, "masqueraded" in e])).toEqual([["10.244.0.5:53", false], ["10.244.2.21:53", false]]);
    expect(a.paths!.map((p) => "masqueraded" in p)).toEqual([false, false]);
    // the bridge caveat holds only if the client is not masqueraded: said so, not as a fact
    expect(a.caveats).toContain(
      "if 10.244.0.200 is not masqueraded to 10.244.0.5:53 (not known: see the reason), replies from 10.244.0.5:53 reach the client at layer 2 when the CNI puts both pods on a bridge: they are un-NATed then only with net.bridge.bridge-nf-call-iptables=1 (not collected; with 0 the connection does not complete)",
    );
  });
  it("the endpoint pod itself: the branch to k8s2 is hedged by the same rule, the branch to itself is masqueraded", () => {
    const a = ask("10.244.0.5");
    expect(a.masquerade).toBe("some");
    expect(a.reason).toBe(`masqueraded only when sent to 10.244.0.5:53 (50% of new connections): marked by line 151 (KUBE-SEP-LPGSDLJ3FDW46N4W), SNATed by line 138; to 10.244.2.21:53: ${LINE_128}`);
    expect(a.endpoints.map((e) => [e.endpoint, e.masqueraded])).toEqual([["10.244.0.5:53", true], ["10.244.2.21:53", undefined]]);
    expect(a.paths!.map((p) => [p.dnatTo, p.masqueraded])).toEqual([["10.244.0.5:53", true], ["10.244.2.21:53", undefined]]);
  });
  it("the overview's hairpin client says the same", () => {
    const r = explainService(readBundle(LAB), "kube-system", "kube-dns");
    const cip = r.nodes[0]!.ports.find((p) => p.servicePort.portKey === "kube-system/kube-dns:dns")!.entryPoints[0]!;
    const hairpin = cip.clients.find((c) => c.client === "hairpin")!;
    expect(hairpin.reason).toContain(`; to 10.244.2.21:53: ${LINE_128}`);
    expect(hairpin.endpoints.find((e) => e.endpoint === "10.244.2.21:53")!.masqueraded).toBeUndefined();
    const pod = cip.clients.find((c) => c.client === "pod-same-node")!;
    expect(pod.endpoints.every((e) => e.masqueraded === undefined)).toBe(true);
  });
  it("bridge sysctls and addresses collected: the unfiltered bridge fails the same-node branch only if not masqueraded", () => {
    const b = readBundle(LAB);
    const k8s1 = b.nodes.find((n) => n.name === "k8s1")!;
    k8s1.sections.sysctls = { stdout: "net.bridge.bridge-nf-call-iptables=0\nbrport.cni0.veth1.hairpin_mode=1\n", exitCode: 0 };
    k8s1.sections["ip-addr"] = {
      stdout: "2: eth0    inet 10.210.40.172/24 brd 10.210.40.255 scope global eth0\\       valid_lft forever preferred_lft forever\n" +
        "3: cni0    inet 10.244.0.1/24 brd 10.244.0.255 scope global cni0\\       valid_lft forever preferred_lft forever\n",
      exitCode: 0,
    };
    const a = explainService(b, "kube-system", "kube-dns", { nodes: ["k8s1"], packet: { source: "10.244.0.77", destination: "10.96.0.10", port: 53, protocol: "udp" } }).packet![0]!;
    expect(a.endpoints.map((e) => [e.endpoint, e.masqueraded, e.replyFails])).toEqual([["10.244.0.5:53", undefined, undefined], ["10.244.2.21:53", undefined, undefined]]);
    expect(a.caveats).toContain(
      "if 10.244.0.77 is not masqueraded to 10.244.0.5:53 (not known: see the reason), replies from 10.244.0.5:53 cross bridge cni0 at layer 2 and net.bridge.bridge-nf-call-iptables=0: conntrack never un-NATs them, and the connection does not complete",
    );
  });
});
