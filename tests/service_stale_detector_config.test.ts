// The rules show the local-traffic detector kube-proxy runs; its ConfigMap, what it will run after a restart
// (cmd/kube-proxy getLocalDetectors reads it at start). iptables-lab's rules detect by CIDR (`! -s 10.244.0.0/16`);
// a ConfigMap saying InterfaceNamePrefix veth must not make every traced packet carry an input interface, and the
// report says the two disagree.
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { addObjects } from "../src/bundle/decode.ts";

const CONFIG = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "kube-proxy", namespace: "kube-system" },
  data: {
    "config.conf": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: iptables\nclusterCIDR: 10.244.0.0/16\ndetectLocalMode: InterfaceNamePrefix\ndetectLocal:\n  interfaceNamePrefix: veth\n",
  },
};

describe("a configured interface detector the rules do not run", () => {
  it("is not applied: no interface note, the CIDR detector decides, and a note says they disagree", () => {
    const b = readBundle("examples/iptables-lab");
    const before = explainService(b, "kube-system", "kube-dns").nodes[0]!;
    addObjects(b, CONFIG, "test");
    const after = explainService(b, "kube-system", "kube-dns").nodes[0]!;
    const notes = after.notes.join("\n");
    expect(notes).not.toContain("local traffic is detected by input interface");
    expect(notes).toContain("names an interface detector (veth*), but k8s1's rules detect local traffic by CIDR (10.244.0.0/16)");
    // the verdicts are those of the rules alone
    expect(after.ports).toEqual(before.ports);
  });
});
