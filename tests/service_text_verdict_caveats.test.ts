// The default `svc/NAME` text says, on a client's headline, what changes its answer and is otherwise only in -o wide
// and JSON (audit s20b finding 1): the share of its connections that are forwarded and still do not complete
// (`replyFails`); and what the externalTrafficPolicy Local short-circuit did to a client (finding 6).
//
// Data: kube-proxy's own TestOnlyLocalNodePorts output (pkg/proxy/iptables/proxier_test.go, v1.27): svc1 with
// externalTrafficPolicy Local, one endpoint on this node (10.180.2.1) and one on another (10.180.0.1). kube-proxy's
// "pod traffic for … external destinations" rule (`proxier.localDetector.IfLocal()` → clusterPolicyChain, no
// masquerade) sends a pod of another node to both; the reply of 10.180.0.1 goes straight back to it, not through this
// node, and that half of its connections never completes.
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import { renderServiceText } from "../src/report/service_text.ts";
import { bundleOf, fixture, node, service, slice } from "./helpers/bundles.ts";

const svc = service("ns1", "svc1", { type: "NodePort", clusterIP: "172.30.0.41", externalTrafficPolicy: "Local", ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }] });
const eps = [slice("ns1", "svc1", [{ ip: "10.180.0.1", node: "other" }, { ip: "10.180.2.1", node: "test-hostname" }], [{ name: "p80", port: 80 }])];

function report() {
  const b = bundleOf({ dump: fixture("kube-proxy/TestOnlyLocalNodePorts.v1.27.iptables-save"), nodeName: "test-hostname", nodeIP: "192.168.0.2", services: [svc], slices: eps, clusterCIDRs: ["10.0.0.0/8"] });
  b.objects.nodes.push(node("other", "192.168.0.3"));
  return explainService(b, "ns1", "svc1");
}

/** The client's block in the NodePort section of the default text, its wrapped lines joined. */
function clientBlock(text: string, description: RegExp): string {
  const lines = text.split("\n");
  const np = lines.findIndex((l) => /^ {4}NodePort /.test(l));
  const start = lines.findIndex((l, i) => i > np && description.test(l));
  expect(start, text).toBeGreaterThan(np);
  const out = [lines[start]!];
  for (let i = start + 1; i < lines.length && /^ {10}/.test(lines[i]!); i++) out.push(lines[i]!);
  return out.map((l) => l.trim()).join(" ");
}

describe("default text: connections that do not complete", () => {
  it("a pod of another node at the eTP=Local NodePort: the headline says half its connections do not complete, and why in few words", () => {
    const r = report();
    const np = r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "NodePort")!;
    const other = np.clients.find((c) => c.client === "pod-other-node")!;
    expect(other.endpoints.map((e) => [e.endpoint, e.replyFails])).toEqual([["10.180.0.1:80", "bypasses-node"], ["10.180.2.1:80", undefined]]);
    const block = clientBlock(renderServiceText(r), /pod on another node/);
    expect(block).toMatch(/: → 2 endpoints, not masqueraded; 50% do not complete: 10\.180\.0\.1:80 \(the reply bypasses test-hostname; -o wide\)/);
  });

  it("clients whose connections all complete carry no such words", () => {
    const text = renderServiceText(report());
    expect(clientBlock(text, /pod on test-hostname/)).not.toContain("do not complete");
    expect(clientBlock(text, /client outside the cluster/)).not.toContain("do not complete");
  });
});

describe("default text: the externalTrafficPolicy Local short-circuit", () => {
  const text = renderServiceText(report());
  it("a pod taken by the pod-traffic rule: it bypasses externalTrafficPolicy Local and reaches every endpoint, without the rule's raw text", () => {
    const block = clientBlock(text, /pod on test-hostname/);
    expect(block).toMatch(/bypasses externalTrafficPolicy Local: line \d+ \(KUBE-EXT-XPGD46QRK7WJZT7O\) short-circuits pod traffic to KUBE-SVC-XPGD46QRK7WJZT7O, every endpoint; not masqueraded/);
    expect(block).not.toContain("-m comment");
  });
  it("a client from outside: the rules it missed and the fact that decides, each once", () => {
    const block = clientBlock(text, /client outside the cluster/);
    expect(block.match(/--src-type LOCAL/g)).toHaveLength(1);
    expect(block.match(/203\.0\.113\.10/g)).toHaveLength(2); // the description and the one fact
  });
});
