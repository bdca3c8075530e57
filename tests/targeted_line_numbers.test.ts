// Audit roundtrip finding 5: a live run's default (targeted) collection keeps only the rules of the Service's packets
// (src/kube/rule_select_awk.ts), so the line numbers its answers cite (`marked by line 64`) are lines of that filtered
// listing, which the live run does not keep, and not of the node's iptables-save (where that rule is line 82). The
// node's targeted-collection note now says whose lines they are; a whole dump (capture, --whole-node) carries no such
// note and its lines are the dump's.
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { explainService } from "../src/service/explain.ts";
import type { ServiceReport } from "../src/service/report.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";
import { keyWords, selectSave } from "./helpers/targeted_selection.ts";

const api = service("shop", "api", { type: "ClusterIP", clusterIP: "10.96.10.20", clusterIPs: ["10.96.10.20"], ports: [{ name: "grpc", port: 9090, targetPort: 9090, protocol: "TCP" }] } as never);
const web = service("shop", "web", { type: "NodePort", clusterIP: "10.96.10.10", clusterIPs: ["10.96.10.10"], ports: [{ name: "http", port: 80, targetPort: 8080, nodePort: 30080, protocol: "TCP" }] } as never);
const slices = [
  slice("shop", "api", [{ ip: "10.244.1.20", node: "na" }, { ip: "10.244.2.20", node: "nb" }], [{ name: "grpc", port: 9090 }]),
  slice("shop", "web", [{ ip: "10.244.1.10", node: "na" }, { ip: "10.244.2.10", node: "nb" }, { ip: "10.244.3.10", node: "nc" }], [{ name: "http", port: 8080 }]),
];
// api sorts before web: its chains come first in the save, so the filtered listing numbers web's rules differently
const whole = kubeProxyRules([api, web], slices, "10.244.0.0/16");
const NOTE_LINES = "rule line numbers are lines of this targeted listing, not of the node's iptables-save (-o wide prints each rule's text; with --whole-node or capture the lines are the node's iptables-save lines)";

function wholeBundle(): Bundle {
  return bundleOf({ dump: whole, nodeName: "na", nodeIP: "192.168.50.11", services: [api, web], slices, clusterCIDRs: ["10.244.0.0/16"] });
}

/** What the targeted collection script leaves in the bundle of a live run: the awk selection, and its scope section. */
function targetedBundle(mode: "iptables" | "nftables" = "iptables", command = "iptables-nft-save | awk: the chains of the Service's packets"): Bundle {
  const b = wholeBundle();
  const keys = keyWords(b.objects, "shop", "web", "na");
  b.nodes[0]!.sections = {
    "collection-scope": { stdout: `scope=service\nmode=${mode}\nmode-source=/proxyMode\nkeys=${keys}\n`, exitCode: 0 },
    "iptables-save": { stdout: selectSave(whole, keys), exitCode: 0, command },
  };
  return b;
}

/** The evidence rule that marks the host-network client's ClusterIP packet for masquerade. */
function markRule(r: ServiceReport) {
  const e = r.nodes[0]!.ports[0]!.entryPoints.find((x) => x.kind === "ClusterIP")!;
  const c = e.clients.find((x) => x.client === "host-network")!;
  return c.evidence.find((x) => /KUBE-MARK-MASQ/.test(x.rule.raw) && /^-A KUBE-SVC-/.test(x.rule.raw))!.rule;
}

describe("the rule lines of a targeted collection say whose lines they are", () => {
  it("targeted (iptables mode, awk selection): the note says the lines are the listing's; they differ from the node's save", () => {
    const b = targetedBundle();
    const r = explainService(b, "shop", "web");
    const note = r.nodes[0]!.notes.find((n) => n.startsWith("targeted collection for this Service"))!;
    expect(note).toContain(`; ${NOTE_LINES}; chains of deleted Services`);
    const rule = markRule(r);
    const listing = b.nodes[0]!.sections["iptables-save"]!.stdout.split("\n");
    expect(listing[rule.line - 1]).toBe(rule.raw); // the line of the listing collected...
    const inSave = whole.split("\n").indexOf(rule.raw) + 1;
    expect(inSave).toBeGreaterThan(0);
    expect(inSave).not.toBe(rule.line); // ...which is not the node's iptables-save line of that rule
    // from a whole dump the same rule is cited by its save line, and no such note is given
    const w = explainService(wholeBundle(), "shop", "web");
    expect(markRule(w).line).toBe(inSave);
    expect(w.nodes[0]!.notes.join("\n")).not.toContain("rule line numbers");
  });

  it("nftables mode (rules cited by handle) and an image that saved whole tables: no such sentence", () => {
    const nft = explainService(targetedBundle("nftables"), "shop", "web").nodes[0]!.notes.find((n) => n.startsWith("targeted collection"))!;
    expect(nft).not.toContain("rule line numbers");
    const wholeSave = explainService(targetedBundle("iptables", "iptables-legacy-save"), "shop", "web").nodes[0]!.notes.find((n) => n.startsWith("targeted collection"))!;
    expect(wholeSave).toContain("whole iptables tables");
    expect(wholeSave).not.toContain("rule line numbers");
  });
});
