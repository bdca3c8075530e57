// A rule whose match (or statement) kubectl-netpath does not model, on the way a Service's packets take: the tracer
// assumes it does not match, and says so where the answer rests on it. The endpoints shown are then not a fact: the
// client says which rule it assumes (default text too, not only -o wide/json), and no drift is claimed from it (an
// unverifiable item names the rule). Before, the endpoint the assumption skipped was reported "missing on the node".
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { renderServiceText } from "../src/report/service_text.ts";

describe("iptables: a match module not modelled in the probability cascade", () => {
  const b = readBundle(new URL("../examples/iptables-lab", import.meta.url).pathname);
  const s = b.nodes[0]!.sections["iptables-save"]!;
  const rule = s.stdout.split("\n").find((l) => /^-A KUBE-SVC-\S+ .*"kube-system\/kube-dns:dns" .*--probability/.test(l))!;
  s.stdout = s.stdout.replace(rule, rule.replace(" -m statistic", " -m frobnicate --foo 1 -m statistic"));
  const r = explainService(b, "kube-system", "kube-dns");
  const node = r.nodes[0]!;
  it("the pod client names the rule it assumes; no missing-on-node drift, one unverifiable item", () => {
    const cip = node.ports.find((p) => p.servicePort.portKey === "kube-system/kube-dns:dns")!.entryPoints.find((e) => e.kind === "ClusterIP")!;
    const pod = cip.clients.find((c) => c.client === "pod-same-node")!;
    expect(pod.assumedNotMatched!.map((x) => x.chain)).toEqual([expect.stringMatching(/^KUBE-SVC-/)]);
    const dns = node.drift.filter((d) => d.portKey === "kube-system/kube-dns:dns");
    expect(dns.map((d) => d.kind)).toEqual(["unverifiable"]);
    expect(dns[0]!.message).toMatch(/depends on line \d+ \(KUBE-SVC-\w+\), which kubectl-netpath does not model \(assumed not to match\)/);
  });
  it("the default text says it under the client", () => {
    expect(renderServiceText(r, { color: false })).toMatch(/assumes line \d+ \(KUBE-SVC-\w+\) does not match: it is not modelled/);
  });
});

describe("nftables: a statement not modelled where the numgen map was", () => {
  const b = readBundle(new URL("../examples/nftables-lab", import.meta.url).pathname);
  const s = b.nodes[0]!.sections["nft-json"]!;
  const numgen = '"handle": 86, "expr": [{"vmap": {"key": {"numgen": {"mode": "random", "mod": 2, "offset": 0}}, "data": {"set": [[0, {"goto": {"target": "endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80"}}], [1, {"goto": {"target": "endpoint-5RFCDDV7-ns4/svc4/tcp/p80__10.180.0.5/80"}}]]}}}]';
  s.stdout = s.stdout.replace(numgen, '"handle": 86, "expr": [{"frobnicate": 12}]');
  it("the answer rests on it: said, and no drift claimed", () => {
    expect(s.stdout).toContain('"frobnicate": 12');
    const node = explainService(b, "ns4", "svc4").nodes[0]!;
    expect(node.drift.map((d) => d.kind)).toEqual(["unverifiable"]);
    expect(node.drift[0]!.message).toMatch(/depends on handle 86 \(service-LAUZTJTB-ns4\/svc4\/tcp\/p80\)/);
  });
});
