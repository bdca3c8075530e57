// examples/lb-legacy (a layout before v1.25): a client outside loadBalancerSourceRanges at LB IP 172.6.6.6 is marked
// by KUBE-MARK-DROP; kubelet hooks KUBE-FIREWALL, which drops the mark, in INPUT and OUTPUT only. Whether 172.6.6.6 is
// a local address of the node (the node's `ip -o addr` was not collected) decides whether it is dropped or forwarded
// untranslated. The caveat said so, yet the headline and JSON `outcome` said "not handled by kube-proxy" as a fact.
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { renderPacketTree } from "../src/report/packet_tree.ts";
import { packetGraph } from "../src/report/path_graph.ts";

const LAB = new URL("../examples/lb-legacy", import.meta.url).pathname;
const question = { source: "203.0.113.10", destination: "172.6.6.6", port: 443, protocol: "tcp" as const };

describe("a packet whose fate rests on whether its destination is local, not collected", () => {
  const r = explainService(readBundle(LAB), "default", "testsvc", { packet: question });
  const a = r.packet![0]!;
  it("JSON: outcome unknown, and outcomeDependsOn names the fact and both outcomes; the caveat stays", () => {
    expect(a.outcome).toBe("unknown");
    expect(a.outcomeDependsOn).toEqual({
      fact: "172.6.6.6 is a local address of the node",
      notCollected: "the node's `ip -o addr` / local routing table",
      ifTrue: "dropped",
      ifFalse: "not-handled",
    });
    expect(a.caveats.some((c) => c.includes("whether 172.6.6.6 is a local address of the node decides it"))).toBe(true);
    expect(a.reason).toMatch(/^marked for drop by line 24 \(KUBE-XLB-M42ZCW2EYUCRBVAF\): forwarded untranslated if 172\.6\.6\.6 is not a local address of the node .*, dropped by INPUT's KUBE-FIREWALL if it is; which is not known/);
  });
  it("the headline says both ways and the fact", () => {
    const text = renderPacketTree(r, { color: false, width: 400 });
    expect(text).toContain("node node-1: DROPPED if 172.6.6.6 is a local address of the node, else not handled by kube-proxy (leaves untranslated); not known: the node's `ip -o addr` / local routing table was not collected");
  });
  it("the path's end says both ways too (it said \"leaves untranslated\" as a fact), in the tree and the picture", () => {
    expect(a.paths!.map((p) => [p.verdict, p.undecided?.taken, p.undecided?.otherwise])).toEqual([["no-match", false, "drop"]]);
    const end = "no kube-proxy rule took it: leaves untranslated if 172.6.6.6 is not a local address of the node, dropped by INPUT's KUBE-FIREWALL if it is (not known: the node's `ip -o addr` / local routing table was not collected)";
    expect(renderPacketTree(r, { color: false, width: 400 })).toContain(`→ ${end}`);
    expect(packetGraph(r).nodes.map((n) => n.label)).toContain(end);
  });
  it("with the node's addresses collected, the answer is definite again", () => {
    const b = readBundle(LAB);
    b.nodes[0]!.sections["ip-addr"] = { stdout: "2: eth0    inet 10.0.0.5/24 brd 10.0.0.255 scope global eth0\\       valid_lft forever preferred_lft forever\n", exitCode: 0 };
    const d = explainService(b, "default", "testsvc", { packet: question }).packet![0]!;
    expect(d.outcome).toBe("not-handled");
    expect(d.outcomeDependsOn).toBeUndefined();
    expect(d.paths!.map((p) => [p.verdict, p.undecided])).toEqual([["no-match", undefined]]);
  });
});
