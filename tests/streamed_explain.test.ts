// A live Service question analysed node by node as the collections end (src/cli/streamed_explain.ts): the report put
// together from the parts must be the report of the whole bundle, whatever order the nodes arrive in, and a part
// computed for another question must not be used.
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { streamedExplain } from "../src/cli/streamed_explain.ts";
import { type Bundle, emptyBundle } from "../src/bundle/bundle.ts";
import { spread } from "./helpers/spread_cluster.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

/** `n` nodes, one Service with an endpoint on each, every node holding kube-proxy's rules for it (as the live bench). */
function spreadBundle(n: number): Bundle {
  const b = emptyBundle();
  const objects = spread(n);
  b.objects = { ...b.objects, ...objects };
  const rules = kubeProxyRules(objects.services, objects.endpointSlices, "10.244.0.0/16");
  b.nodes = objects.nodes.map((x) => ({ name: x.metadata.name, sections: { "proxy-mode": { stdout: "iptables", exitCode: 0 }, "iptables-save": { stdout: rules, exitCode: 0 } } }));
  return b;
}

/** Plays the gather: every node's capture handed over in `order`, the objects already there, no node yet. */
function stream(bundle: Bundle, namespace: string, name: string, order: string[], sofarNodes?: string[]) {
  const s = streamedExplain(name);
  const sofar = { bundle: { ...bundle, nodes: [] }, namespace, ...(sofarNodes ? { nodes: sofarNodes } : {}) };
  for (const n of order) s.hooks.nodeCaptured!(bundle.nodes.find((c) => c.name === n)!, sofar, order.length);
  return s;
}

const CASES: [string | (() => Bundle), string, string][] = [
  [() => spreadBundle(6), "default", "spread"],
  ["examples/iptables-lab", "kube-system", "kube-dns"],
  ["examples/ipvs-lab", "default", "web"],
  ["examples/nftables-lab", "default", "web"],
  ["examples/lb-legacy", "default", "web"],
];

describe("a Service question analysed as each node's collection ends", () => {
  for (const [dir, ns, name] of CASES) {
    it(`${typeof dir === "string" ? dir : "6 nodes"} ${ns}/${name}: the same report as the whole bundle's, in any arrival order`, () => {
      const bundle = typeof dir === "string" ? readBundle(dir) : dir();
      const svc = bundle.objects.services.find((s) => s.metadata.namespace === ns && s.metadata.name === name) ?? bundle.objects.services[0]!;
      const namespace = svc.metadata.namespace!;
      const names = bundle.nodes.map((n) => n.name);
      expect(names.length).toBeGreaterThan(0);
      const whole = explainService(bundle, namespace, svc.metadata.name);
      for (const order of [names, [...names].reverse()]) {
        const s = stream(bundle, namespace, svc.metadata.name, order);
        expect(s.report(bundle, namespace, {})).toEqual(whole);
      }
    });
  }

  it("a packet question (--source/--dest): the same packet answers, node by node", () => {
    const bundle = spreadBundle(4);
    const names = bundle.nodes.map((n) => n.name);
    const packet = { source: "10.244.1.5", destination: "10.96.50.50", port: 80, protocol: "tcp" as const };
    const s = streamedExplain("spread");
    const sofar = { bundle: { ...bundle, nodes: [] }, namespace: "default", packets: [packet] };
    for (const n of [...names].reverse()) s.hooks.nodeCaptured!(bundle.nodes.find((c) => c.name === n)!, sofar, names.length);
    const whole = explainService(bundle, "default", "spread", { packet });
    expect(whole.packet!.length).toBe(names.length);
    expect(s.report(bundle, "default", { packet })).toEqual(whole);
    // asked without the packet, the parts (made for the packet) are not used
    expect(s.report(bundle, "default", {})).toEqual(explainService(bundle, "default", "spread"));
  });

  it("a part computed for other nodes (a narrower question) is not used: the report is the whole bundle's", () => {
    const bundle = spreadBundle(3);
    const names = bundle.nodes.map((n) => n.name);
    // the parts were computed for --node <first>; the report is asked for every node
    const s = stream(bundle, "default", "spread", [names[0]!], [names[0]!]);
    const all = s.report(bundle, "default", {});
    expect(all.nodes.map((n) => n.node)).toEqual(names);
    expect(all).toEqual(explainService(bundle, "default", "spread"));
    expect(s.report(bundle, "default", { nodes: [names[0]!] })).toEqual(explainService(bundle, "default", "spread", { nodes: [names[0]!] }));
  });

  it("a node whose capture arrives but whose analysis fails early is analysed again, and errors as it always does", () => {
    const bundle = readBundle("examples/iptables-lab");
    const s = streamedExplain("no-such-service");
    s.hooks.nodeCaptured!(bundle.nodes[0]!, { bundle: { ...bundle, nodes: [] }, namespace: "kube-system" }, bundle.nodes.length);
    expect(() => s.report(bundle, "kube-system", {})).toThrow(/no-such-service/);
  });
});
