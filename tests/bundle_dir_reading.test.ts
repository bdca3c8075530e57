// Small cases of reading a bundle directory (src/bundle/decode.ts bundleFromFiles): what is warned about, and how.
import { describe, expect, it } from "vitest";
import { bundleFromFiles } from "../src/bundle/decode.ts";

const svc = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec: {clusterIP: 10.96.0.1, ports: [{port: 80}]}\n";

describe("a List with no items", () => {
  it("`items: null` is said to be an empty list, not an unknown kind", () => {
    const b = bundleFromFiles([{ path: "services.yaml", text: svc }, { path: "empty.yaml", text: "apiVersion: v1\nkind: List\nitems: null\n" }], "B");
    expect(b.warnings).toEqual(["B/empty.yaml: a List with no items (items is null); nothing read from it"]);
    expect(b.objects.services).toHaveLength(1);
  });
});

describe("two files for one section of a node", () => {
  const ipt = "*nat\n:KUBE-SERVICES - [0:0]\nCOMMIT\n";
  it("iptables-save.out and iptables-save.txt: refused, both named (one of them was dropped in silence)", () => {
    const files = [
      { path: "services.yaml", text: svc },
      { path: "nodes/k8s1/iptables-save.txt", text: ipt },
      { path: "nodes/k8s1/iptables-save.out", text: ipt.replace("KUBE-SERVICES", "KUBE-OTHER") },
    ];
    expect(() => bundleFromFiles(files, "B")).toThrow(
      "B: nodes/k8s1/iptables-save.out and nodes/k8s1/iptables-save.txt are both the iptables-save dump of node k8s1: keep one (remove or rename the other) (docs/bundle.md)",
    );
  });

  it("nft-json.json and nft-json.txt too; a section's .exit file beside its dump is not a second dump", () => {
    expect(() => bundleFromFiles([{ path: "nodes/n/nft-json.json", text: "{}" }, { path: "nodes/n/nft-json.txt", text: "{}" }], "B")).toThrow(/both the nft-json dump of node n/);
    const b = bundleFromFiles([{ path: "services.yaml", text: svc }, { path: "nodes/k8s1/iptables-save.txt", text: ipt }, { path: "nodes/k8s1/iptables-save.exit", text: "1\n" }, { path: "nodes/k8s2/iptables-save.txt", text: ipt }], "B");
    expect(b.nodes.map((n) => [n.name, n.sections["iptables-save"]?.exitCode])).toEqual([["k8s1", 1], ["k8s2", undefined]]);
  });
});
