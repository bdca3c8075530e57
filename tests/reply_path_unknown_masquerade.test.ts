// A client whose masquerade rests on a rule whose match could not be told (kube-proxy's `! -i cni0 -j KUBE-MARK-MASQ`,
// BridgeInterface detector, with the packet's input interface not known) was answered "not masqueraded" per endpoint,
// and the reply-path check then marked the branches to other nodes as failing (`replyFails: bypasses-node`) and said
// "the connection does not complete": a definite failure built on an assumed non-match.
import { describe, expect, it } from "vitest";
import type { NodeCapture } from "../src/bundle/bundle.ts";
import { verdictFromTrace } from "../src/service/client_verdict.ts";
import { nodeDatapath } from "../src/service/datapath.ts";
import { tracePacket } from "../src/service/entry_points.ts";
import { checkReplyPath } from "../src/service/reply_path.ts";
import type { EndpointInfo } from "../src/service/report.ts";
import { service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

const services = [service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.30.0.41", ports: [{ name: "p80", port: 80, protocol: "TCP" }] })];
const slices = [slice("ns1", "svc1", [{ ip: "10.180.0.1", node: "node-2" }, { ip: "10.180.2.1", node: "node-1" }], [{ name: "p80", port: 80 }])];
const node: NodeCapture = {
  name: "node-1",
  sections: { "iptables-save": { stdout: kubeProxyRules(services, slices, "10.180.0.0/16").replaceAll("! -s 10.180.0.0/16 ", "! -i cni0 "), exitCode: 0 } },
};
const endpoints = [{ address: "10.180.0.1", node: "node-2" }, { address: "10.180.2.1", node: "node-1" }] as EndpointInfo[];

describe("the reply path of a client whose masquerade is not known", () => {
  const verdict = (inInterface?: string) => {
    const pkt = tracePacket("203.0.113.10", "172.30.0.41", 80, "tcp", 4, false, false);
    if (inInterface !== undefined) pkt.inInterface = inInterface;
    const v = verdictFromTrace("external", "client from outside", "203.0.113.10", nodeDatapath(node, 4).datapath!.trace(pkt, "PREROUTING"));
    checkReplyPath(v, "elsewhere", "node-1", endpoints);
    return v;
  };
  it("input interface not known: masquerade not known per endpoint, no branch marked failed, the caveat says what decides it", () => {
    const v = verdict();
    expect(v.reason).toMatch(/^not masqueraded if line \d+ \(KUBE-SVC-XPGD46QRK7WJZT7O\) does not apply, which is not known: depends on the input interface \(! -i cni0\)/);
    expect(v.endpoints.map((e) => [e.endpoint, e.masqueraded, e.replyFails])).toEqual([["10.180.0.1:80", undefined, undefined], ["10.180.2.1:80", undefined, undefined]]);
    expect(v.reason).not.toContain("does not complete");
    expect(v.caveats.join("\n")).toContain(
      "reply path: whether 203.0.113.10 is masqueraded to 10.180.0.1:80 (on node-2) is not known (see the reason: a rule whose match could not be told decides it); if it is not, that endpoint replies straight to 203.0.113.10, not through node-1, and the connection does not complete",
    );
  });
  it("arriving on cni0 (known): not masqueraded, and the branch to node-2 definitely fails", () => {
    const v = verdict("cni0");
    expect(v.endpoints.map((e) => [e.endpoint, e.masqueraded, e.replyFails])).toEqual([["10.180.0.1:80", false, "bypasses-node"], ["10.180.2.1:80", false, undefined]]);
  });
  it("arriving on eth0 (known): masqueraded, nothing fails", () => {
    const v = verdict("eth0");
    expect(v.endpoints.map((e) => [e.masqueraded, e.replyFails])).toEqual([[true, undefined], [true, undefined]]);
  });
});
