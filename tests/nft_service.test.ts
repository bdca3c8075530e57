// svc/NAME in kube-proxy nftables mode: the tracer (src/service/nftables/trace.ts) and the datapath builder
// (src/service/nftables/datapath.ts) on kube-proxy's own nftables test rulesets (pkg/proxy/nftables/proxier_test.go @
// 81810de6), as real nft 1.0.6 prints them (tests/fixtures/nftables, scripts/gen-nft-fixtures.sh). Expected verdicts:
// the same as the iptables twin (tests/service_path.test.ts, TestOverallIPTablesRules) and the notes in
// ../shared/fixtures/real-dumps/nftables/*.md.
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { emptyBundle } from "../src/bundle/bundle.ts";
import { decodeKubeProxyNft, decodeKubeProxyTable, type KubeProxyNft } from "../src/datapath/kube_proxy_nft.ts";
import { parseNftJson } from "../src/datapath/nft_json.ts";
import { parseNftText } from "../src/datapath/nft_text.ts";
import { explainService } from "../src/service/explain.ts";
import { nftDatapath } from "../src/service/nftables/datapath.ts";
import { nftRuleRef } from "../src/service/nftables/evidence.ts";
import { traceNft } from "../src/service/nftables/trace.ts";
import { NftTraceError } from "../src/service/nftables/trace_types.ts";
import type { TraceResult } from "../src/service/trace.ts";
import type { TracePacket } from "../src/service/trace.ts";
import type { ClientVerdict, ServiceReport } from "../src/service/report.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import type { EndpointSlice, Service } from "../src/model/k8s.ts";
import { fixture, node, overallObjects, repeatedObjects, service, slice } from "./helpers/bundles.ts";

const NFTABLES_LAB = new URL("../examples/nftables-lab", import.meta.url).pathname;

type Section = "nft-json" | "nft-text" | "iptables-save" | "proxy-mode";

function nftBundle(opts: {
  sections: Partial<Record<Section, string>>;
  services: Service[];
  slices: EndpointSlice[];
  nodeIP?: string;
}): Bundle {
  const b = emptyBundle({ tool: "test" });
  b.objects.services.push(...opts.services);
  b.objects.endpointSlices.push(...opts.slices);
  b.objects.nodes.push(node("test-node", opts.nodeIP ?? "192.168.0.2"));
  const sections: Bundle["nodes"][number]["sections"] = {};
  for (const [k, v] of Object.entries(opts.sections)) sections[k as Section] = { stdout: v, exitCode: 0 };
  b.nodes.push({ name: "test-node", sections });
  return b;
}

function client(r: ServiceReport, port: number, kind: string, who: ClientVerdict["client"]): ClientVerdict {
  const pr = r.nodes[0]!.ports.find((p) => p.servicePort.port === port || p.servicePort.nodePort === port)!;
  const e = pr.entryPoints.find((x) => x.kind === kind)!;
  expect(e, `${kind} entry for port ${port}`).toBeDefined();
  const c = e.clients.find((x) => x.client === who)!;
  expect(c, `${who} at ${kind}`).toBeDefined();
  return c;
}

const shares = (c: ClientVerdict) => Object.fromEntries(c.endpoints.map((e) => [e.endpoint, e.share]));
const masqs = (c: ClientVerdict) => Object.fromEntries(c.endpoints.map((e) => [e.endpoint, e.masqueraded]));

/** 1-based line of the first line of `text` containing `needle`. */
function lineOf(text: string, needle: string): number {
  const i = text.split("\n").findIndex((l) => l.includes(needle));
  expect(i, needle).toBeGreaterThanOrEqual(0);
  return i + 1;
}

// ---------------------------------------------------------------------------------------------------------------
// TestOverallNFTablesRules in every form nft prints it (and kube-proxy writes it), same verdicts as the iptables twin.

const OVERALL = "nftables/TestOverallNFTablesRules";
// `at`: how the report names a rule of that form: by kernel handle where the input carries handles, else by line.
const forms: { form: string; section: Section; text: string; line: (needle: string, handle: number) => number; at: string }[] = [
  { form: "nft -j list ruleset", section: "nft-json", text: fixture(`${OVERALL}.json`), line: (_n, h) => h, at: "handle" },
  { form: "nft -a list ruleset", section: "nft-text", text: fixture(`${OVERALL}.nft-a.txt`), line: (_n, h) => h, at: "handle" },
  {
    form: "nft list ruleset",
    section: "nft-text",
    text: fixture(`${OVERALL}.nft.txt`),
    line: (n) => lineOf(fixture(`${OVERALL}.nft.txt`), n),
    at: "line",
  },
  {
    form: "kube-proxy's nft -f transaction",
    section: "nft-text",
    text: fixture(`${OVERALL}.nft`),
    line: (n) => lineOf(fixture(`${OVERALL}.nft`), n),
    at: "line",
  },
];

describe.each(forms)("TestOverallNFTablesRules, $form", ({ section, text, line, at }) => {
  const { services, slices } = overallObjects("test-node", true);
  const b = nftBundle({ sections: { [section]: text }, services, slices });

  it("mode nftables from the rules; balancing by numgen; cluster CIDR from the detector", () => {
    const r = explainService(b, "ns1", "svc1");
    const n = r.nodes[0]!;
    expect(n.proxyMode).toEqual({
      mode: "nftables",
      evidence: [{ source: "rules", value: "nftables", detail: "nftables table kube-proxy" }],
      conflicts: [],
    });
    expect(n.notes).toContain("cluster CIDR 10.0.0.0/8 (from the rules (local-traffic detector))");
    expect(n.ports[0]!.entryPoints[0]!.balancing.method).toBe("nftables-numgen");
    expect(r.findings).toEqual([]);
  });

  it("svc1 ClusterIP: pods → 10.180.0.1:80 unmasqueraded; sources outside 10.0.0.0/8 masqueraded", () => {
    const r = explainService(b, "ns1", "svc1");
    const pod = client(r, 80, "ClusterIP", "pod-same-node");
    expect(shares(pod)).toEqual({ "10.180.0.1:80": 1 });
    expect(pod.masquerade).toBe("never");
    const masqLine = line("ip daddr 172.30.0.41 ip saddr != 10.0.0.0/8", 64);
    expect(pod.reason).toBe(
      `not masqueraded: ${at} ${masqLine} (service-ULMVA6XW-ns1/svc1/tcp/p80) does not apply: source 10.0.0.200 is in 10.0.0.0/8`,
    );
    for (const who of ["external", "host-network"] as const) {
      const c = client(r, 80, "ClusterIP", who);
      expect(c.masquerade, who).toBe("always");
      expect(c.evidence.find((e) => e.role.startsWith("marks"))?.rule).toMatchObject({
        table: "ip kube-proxy",
        chain: "service-ULMVA6XW-ns1/svc1/tcp/p80",
        line: masqLine,
      });
      const snat = c.evidence.find((e) => e.role.startsWith("masquerades"))!.rule;
      expect(snat.chain).toBe("masquerading");
      expect(snat.raw).toMatch(/^masquerade fully-random/);
      expect(snat.line).toBe(line("masquerade fully-random", 55));
    }
    expect(client(r, 80, "ClusterIP", "external").source).toBe("203.0.113.10");
  });

  it("svc2 eTP=Local without local endpoints: external traffic dropped by the no-endpoint maps, pods short-circuited", () => {
    const r = explainService(b, "ns2", "svc2");
    for (
      const [kind, chain, element] of [
        [
          "LoadBalancer",
          "service-endpoints-check",
          '@no-endpoint-services element 1.2.3.4 . tcp . 80 comment "ns2/svc2:p80" : drop',
        ],
        [
          "ExternalIP",
          "service-endpoints-check",
          '@no-endpoint-services element 192.168.99.22 . tcp . 80 comment "ns2/svc2:p80" : drop',
        ],
        [
          "NodePort",
          "nodeport-endpoints-check",
          '@no-endpoint-nodeports element tcp . 3001 comment "ns2/svc2:p80" : drop',
        ],
      ] as const
    ) {
      const ext = client(r, kind === "NodePort" ? 3001 : 80, kind, "external");
      expect(ext.outcome, kind).toBe("dropped");
      const drop = ext.evidence.find((e) => e.role === "drops")!.rule;
      expect(drop.chain, kind).toBe(chain);
      expect(drop.raw.endsWith(element), drop.raw).toBe(true);
    }
    // a pod of this node: kube-proxy translates a pod's packet to the LB IP on the pod's own node
    const pod = client(r, 80, "LoadBalancer", "pod-same-node");
    expect(pod.outcome).toBe("forwarded");
    expect(shares(pod)).toEqual({ "10.180.0.2:80": 1 });
    expect(pod.masquerade).toBe("never");
    const host = client(r, 80, "LoadBalancer", "host-network");
    expect(host.outcome).toBe("forwarded");
    expect(host.masquerade).toBe("always");
    expect(host.evidence.find((e) => e.role.startsWith("marks"))!.rule.raw).toContain(
      'fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"',
    );
  });

  it("svc4 externalIP (eTP=Cluster): external clients split 1/2 : 1/2 over .4 and .5, always masqueraded; hairpin only to itself", () => {
    const r = explainService(b, "ns4", "svc4");
    const ext = client(r, 80, "ExternalIP", "external");
    expect(shares(ext)).toEqual({ "10.180.0.4:80": 0.5, "10.180.0.5:80": 0.5 });
    expect(ext.masquerade).toBe("always");
    expect(ext.reason).toContain("(external-LAUZTJTB-ns4/svc4/tcp/p80)");
    const hairpin = client(r, 80, "ClusterIP", "hairpin");
    expect(hairpin.source).toBe("10.180.0.5");
    expect(hairpin.masquerade).toBe("some");
    expect(masqs(hairpin)).toEqual({ "10.180.0.4:80": false, "10.180.0.5:80": true });
    expect(hairpin.evidence.find((e) => e.role.startsWith("marks"))!.rule.chain).toBe(
      "endpoint-5RFCDDV7-ns4/svc4/tcp/p80__10.180.0.5/80",
    );
    // The balancing is the decoder's exact numgen share.
    const cip = r.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!;
    expect(cip.balancing.shares.map((s) => [s.endpoint, s.share])).toEqual([["10.180.0.4:80", 0.5], [
      "10.180.0.5:80",
      0.5,
    ]]);
  });

  it("svc5 loadBalancerSourceRanges: an allowed client is forwarded (masqueraded), another is dropped by the firewall chain; affinity is a caveat", () => {
    const r = explainService(b, "ns5", "svc5");
    const ok = client(r, 80, "LoadBalancer", "external");
    expect(ok.source).toBe("203.0.113.2");
    expect(ok.outcome).toBe("forwarded");
    expect(ok.masquerade).toBe("always");
    expect(ok.endpoints[0]!.share).toBe(1);
    expect(
      ok.caveats.some((c) =>
        c.startsWith("session affinity:") &&
        c.includes("@affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 (entries last 3h)")
      ),
    ).toBe(true);
    const denied = client(r, 80, "LoadBalancer", "external-denied");
    expect(denied.source).toBe("198.51.100.10");
    expect(denied.outcome).toBe("dropped");
    const drop = denied.evidence.find((e) => e.role === "drops")!.rule;
    expect(drop.chain).toBe("firewall-HVFWP5L3-ns5/svc5/tcp/p80");
    expect(drop.raw).toMatch(/^ip saddr != (\{ )?203\.0\.113\.0\/25( \})? drop/);
    expect(r.limits.some((l) => l.includes("10800 s"))).toBe(true);
    // NodePort traffic is not subject to loadBalancerSourceRanges (firewall-ips holds the LB IP only).
    expect(client(r, 3002, "NodePort", "external-denied").outcome).toBe("forwarded");
  });

  it("svc6 without endpoints: rejected through reject-chain, and the evidence is the no-endpoint element", () => {
    const r = explainService(b, "ns6", "svc6");
    const pod = client(r, 80, "ClusterIP", "pod-same-node");
    expect(pod.outcome).toBe("rejected");
    const rej = pod.evidence.find((e) => e.role === "rejects")!.rule;
    expect(rej.chain).toBe("service-endpoints-check");
    expect(rej.raw).toContain(
      '@no-endpoint-services element 172.30.0.46 . tcp . 80 comment "ns6/svc6:p80" : goto reject-chain',
    );
    expect(pod.reason).toBe(
      `rejected by ${at} ${
        line("ip daddr . meta l4proto . th dport vmap @no-endpoint-services", 63)
      } (service-endpoints-check): no usable endpoints`,
    );
    expect(r.findings.map((f) => f.code)).toContain("NoEndpointSlices");
  });
});

describe("examples/nftables-lab", () => {
  const bundle = readBundle(NFTABLES_LAB);

  it("reads as a bundle with no warnings: one node, its nft -j ruleset, six Services", () => {
    expect(bundle.warnings).toEqual([]);
    expect(bundle.nodes.map((n) => [n.name, Object.keys(n.sections)])).toEqual([["test-node", ["nft-json"]]]);
    expect(bundle.objects.services.map((s) => `${s.metadata.namespace}/${s.metadata.name}`)).toEqual([
      "ns1/svc1",
      "ns2/svc2",
      "ns3/svc3",
      "ns4/svc4",
      "ns5/svc5",
      "ns6/svc6",
    ]);
    expect(bundle.nodes[0]!.sections["nft-json"]!.stdout).toBe(fixture(`${OVERALL}.json`));
  });

  it("gives the same report as the test's objects do, for every Service", () => {
    const { services, slices } = overallObjects("test-node", true);
    const b = nftBundle({ sections: { "nft-json": fixture(`${OVERALL}.json`) }, services, slices });
    for (let i = 1; i <= 6; i++) {
      const strip = (r: ServiceReport) => r.nodes.map((n) => ({ ...n, source: undefined }));
      expect(strip(explainService(bundle, `ns${i}`, `svc${i}`)), `svc${i}`).toEqual(
        strip(explainService(b, `ns${i}`, `svc${i}`)),
      );
    }
  });

  it("answers one packet: 203.0.113.7 → 192.168.99.33:80/tcp (svc4's externalIP)", () => {
    const r = explainService(bundle, "ns4", "svc4", {
      packet: { source: "203.0.113.7", destination: "192.168.99.33", port: 80, protocol: "tcp" },
    });
    const a = r.packet![0]!;
    expect(a.outcome).toBe("forwarded");
    expect(a.masquerade).toBe("always");
    expect(a.endpoints.map((e) => [e.endpoint, e.share])).toEqual([["10.180.0.4:80", 0.5], ["10.180.0.5:80", 0.5]]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Drift against the EndpointSlices: TestSyncProxyRulesRepeated stages (ClusterIP services, test-node).

const stage = (n: string) => fixture(`nftables/TestSyncProxyRulesRepeated-${n}.json`);

describe("drift against EndpointSlices (TestSyncProxyRulesRepeated)", () => {
  const cases: {
    name: string;
    stage: string;
    objects: ReturnType<typeof repeatedObjects>;
    svc: [string, string];
    want: [string, string | undefined][];
    outcome: ClientVerdict["outcome"];
  }[] = [
    {
      name: "08: the node balances svc3 over 10.0.3.2 and 10.0.3.3 as the API says",
      stage: "08-add-svc3-second-endpoint",
      objects: repeatedObjects(["10.0.3.2", "10.0.3.3"], { svc4: ["10.0.4.1"] }),
      svc: ["ns3", "svc3"],
      want: [],
      outcome: "forwarded",
    },
    {
      name: "07: the API still lists the old endpoint 10.0.3.1 while the node moved to 10.0.3.2",
      stage: "07-change-svc3-endpoint-old-chain-flushed",
      objects: repeatedObjects(["10.0.3.1"], { svc4: ["10.0.4.1"] }),
      svc: ["ns3", "svc3"],
      want: [["missing-on-node", "10.0.3.1:80"], ["stale-on-node", "10.0.3.2:80"]],
      outcome: "forwarded",
    },
    {
      name: "09: svc3's endpoints were emptied on the node (reject) while the API has two",
      stage: "09-svc3-endpoints-emptied-chains-flushed-not-deleted",
      objects: repeatedObjects(["10.0.3.2", "10.0.3.3"], { svc4: ["10.0.4.1"] }),
      svc: ["ns3", "svc3"],
      want: [["unexpected-reject", undefined], ["missing-on-node", "10.0.3.2:80"], ["missing-on-node", "10.0.3.3:80"]],
      outcome: "rejected",
    },
    {
      name: "03: svc2 is gone from the node (its chains flushed) but still in the API",
      stage: "03-delete-svc2-chains-flushed-not-deleted",
      objects: repeatedObjects(["10.0.3.1"], { svc2: true }),
      svc: ["ns2", "svc2"],
      // dropped as an unallocated ClusterIP: the whole Service is not programmed, not one endpoint
      want: [["service-missing", undefined]],
      outcome: "dropped",
    },
    {
      name: "05: svc4 has no EndpointSlice and the node rejects: no drift",
      stage: "05-add-svc4-no-endpoints",
      objects: repeatedObjects(["10.0.3.1"]),
      svc: ["ns4", "svc4"],
      want: [],
      outcome: "rejected",
    },
  ];
  it.each(cases)("$name", ({ stage: s, objects, svc, want, outcome }) => {
    const b = nftBundle({ sections: { "nft-json": stage(s) }, ...objects });
    const r = explainService(b, svc[0], svc[1]);
    const pod = client(r, svc[1] === "svc2" ? 8080 : 80, "ClusterIP", "pod-same-node");
    expect(pod.outcome).toBe(outcome);
    expect(r.nodes[0]!.drift.map((d) => [d.kind, d.endpoint])).toEqual(want);
  });

  it("09: the unexpected reject quotes the no-endpoint element that holds svc3", () => {
    const b = nftBundle({
      sections: { "nft-json": stage("09-svc3-endpoints-emptied-chains-flushed-not-deleted") },
      ...repeatedObjects(["10.0.3.2"]),
    });
    const d = explainService(b, "ns3", "svc3").nodes[0]!.drift.find((x) => x.kind === "unexpected-reject")!;
    expect(d.message).toBe(
      'ns3/svc3:p80: test-node rejects new connections to 172.30.0.43:80/tcp ("has no endpoints") but the API lists 1 usable endpoint(s): the node\'s rules are stale',
    );
    expect(d.evidence!.map((e) => e.raw)).toEqual([
      expect.stringContaining(
        '@no-endpoint-services element 172.30.0.43 . tcp . 80 comment "ns3/svc3:p80" : goto reject-chain',
      ),
    ]);
  });

  it("flushed chains awaiting deletion are a node note (03: svc2's two chains; 07: the old endpoint chain)", () => {
    const objects = repeatedObjects(["10.0.3.2"]);
    const note = (s: string) =>
      explainService(nftBundle({ sections: { "nft-json": stage(s) }, ...objects }), "ns3", "svc3").nodes[0]!.notes
        .find((n) => n.includes("flushed chain"));
    expect(note("03-delete-svc2-chains-flushed-not-deleted")).toBe(
      "2 flushed chain(s) in ip kube-proxy await deletion by kube-proxy (left by a Service or endpoint change; whether a map element still points to one is not checked: a packet sent into one falls through it to the next check): service-MHHHYRWA-ns2/svc2/tcp/p8080, endpoint-7RVP4LUQ-ns2/svc2/tcp/p8080__10.0.2.1/8080",
    );
    expect(note("07-change-svc3-endpoint-old-chain-flushed")).toMatch(
      /^1 flushed chain\(s\) .*: endpoint-2OCDJSZQ-ns3\/svc3\/tcp\/p80__10\.0\.3\.1\/80$/,
    );
    expect(note("08-add-svc3-second-endpoint")).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Mode detection: iptables leftovers on an nftables node, and an nftables leftover on an iptables node.

describe("proxy mode with leftovers of the other mode", () => {
  const { services, slices } = overallObjects("test-node", true);
  const json = fixture("nftables/synthetic/mixed-iptables-leftovers.json");
  const ipt = fixture("nftables/synthetic/mixed-iptables-leftovers.iptables-save");

  it("KUBE-SVC chains next to table ip kube-proxy: nftables answers, the leftovers are a ProxyModeConflict", () => {
    const r = explainService(
      nftBundle({ sections: { "nft-json": json, "iptables-save": ipt }, services, slices }),
      "ns4",
      "svc4",
    );
    const n = r.nodes[0]!;
    expect(n.proxyMode.mode).toBe("nftables");
    expect(n.proxyMode.evidence.map((e) => e.value)).toEqual(["iptables", "nftables"]);
    const conflict = r.findings.find((f) => f.code === "ProxyModeConflict")!;
    expect(conflict.message).toMatch(
      /^\d+ KUBE-SVC\/KUBE-SEP chain\(s\) remain in iptables nat although the node runs nftables: stale rules from iptables mode/,
    );
    expect(conflict.node).toBe("test-node");
    const ext = client(r, 80, "ExternalIP", "external");
    expect(n.ports[0]!.entryPoints[0]!.balancing.method).toBe("nftables-numgen");
    expect(ext.evidence.some((e) => e.rule.table === "ip kube-proxy")).toBe(true);
  });

  it("declared iptables (/proxyMode): traced from iptables-save; the nftables table is the leftover", () => {
    const r = explainService(
      nftBundle({ sections: { "nft-json": json, "iptables-save": ipt, "proxy-mode": "iptables\n" }, services, slices }),
      "ns4",
      "svc4",
    );
    const n = r.nodes[0]!;
    expect(n.proxyMode.mode).toBe("iptables");
    expect(r.findings.find((f) => f.code === "ProxyModeConflict")!.message).toMatch(
      /^the nftables table kube-proxy remains although the node runs iptables: leftovers of nftables mode/,
    );
    expect(n.ports[0]!.entryPoints[0]!.balancing.method).toBe("iptables-probability-cascade");
    expect(n.notes).toContain(
      "table ip kube-proxy exists but kube-proxy runs iptables here: traced from the iptables rules; the nftables table is a leftover",
    );
  });

  it("declared nftables (ConfigMap) with no iptables rules: no conflict", () => {
    const b = nftBundle({ sections: { "nft-json": fixture(`${OVERALL}.json`) }, services, slices });
    b.objects.configMaps.push({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "kube-proxy", namespace: "kube-system" },
      data: { "config.conf": "mode: nftables\nclusterCIDR: 10.0.0.0/8\n" },
    });
    const n = explainService(b, "ns1", "svc1").nodes[0]!;
    expect(n.proxyMode.mode).toBe("nftables");
    expect(n.proxyMode.conflicts).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The tracer itself: IPv6, the v1.33+ layout, interfaces, remembered affinity clients, NodePorts by fib, failure paths.

const pkt = (over: Partial<TracePacket>): TracePacket => ({
  family: 6,
  src: "2001:db8:ffff::10",
  dst: "fd00:10:96::10",
  proto: "tcp",
  dport: 80,
  srcLocal: false,
  dstLocal: false,
  mark: 0,
  ctstate: new Set(["NEW"]),
  ...over,
});

/** `{ "dnat [fd00:10::5]:8080 masq": 0.333… }` */
function summary(t: TraceResult): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of t.outcomes) {
    const k = `${o.verdict}${o.dnatTo ? ` ${o.dnatTo}` : ""}${o.masqueraded ? " masq" : ""}`;
    out[k] = (out[k] ?? 0) + o.probability;
  }
  return out;
}

describe("traceNft on the ip6 v1.33+ layout (synthetic, loaded through real nft)", () => {
  const layout: KubeProxyNft = decodeKubeProxyNft(
    parseNftJson(fixture("nftables/synthetic/ip6-newer-layout.json")),
  )[0]!;
  const third = 1 / 3;
  const cases: {
    name: string;
    packet: TracePacket;
    hook?: "PREROUTING" | "OUTPUT";
    want: Record<string, number>;
    caveat?: RegExp;
  }[] = [
    {
      name: "a new client of the ClusterIP: numgen mod 3, 1/3 each; the iifname detector cannot be decided",
      packet: pkt({}),
      want: { "dnat [fd00:10::5]:8080": third, "dnat [fd00:10::6]:8080": third, "dnat [fd00:10:1::7]:8080": third },
      caveat:
        /service-PLVUX2VM-web\/frontend\/tcp\/http rule \d+ \(.*iifname != "veth\*".*\): depends on the input interface .*; assumed not to match/,
    },
    {
      name: 'the same client arriving on eth0 is masqueraded (iifname != "veth*")',
      packet: pkt({ inInterface: "eth0" }),
      want: {
        "dnat [fd00:10::5]:8080 masq": third,
        "dnat [fd00:10::6]:8080 masq": third,
        "dnat [fd00:10:1::7]:8080 masq": third,
      },
    },
    {
      name: "a client remembered in an affinity set goes back to its endpoint",
      packet: pkt({ src: "2001:db8:5::77", inInterface: "veth0a1b" }),
      want: { "dnat [fd00:10::5]:8080": 1 },
      caveat:
        /^session affinity: 2001:db8:5::77 is remembered in @affinity-BZEKCJ4W-web\/frontend\/tcp\/http__fd00\.10\.\.5\/8080, .* left when captured/,
    },
    {
      name: "NodePort via fib daddr type local, eTP Local: the local- chain's two endpoints, not masqueraded",
      packet: pkt({ dst: "2001:db8::1", dport: 30080, dstLocal: true, inInterface: "eth0" }),
      want: { "dnat [fd00:10::5]:8080": 0.5, "dnat [fd00:10::6]:8080": 0.5 },
    },
    {
      name: "NodePort from a pod (veth): short-circuited to the cluster-wide chain",
      packet: pkt({ src: "fd00:10::99", dst: "2001:db8::1", dport: 30080, dstLocal: true, inInterface: "veth9" }),
      want: { "dnat [fd00:10::5]:8080": third, "dnat [fd00:10::6]:8080": third, "dnat [fd00:10:1::7]:8080": third },
    },
    {
      name: "a host process on the node reaching the NodePort: masqueraded, short-circuited",
      packet: pkt({ src: "2001:db8::1", dst: "2001:db8::1", dport: 30080, srcLocal: true, dstLocal: true }),
      hook: "OUTPUT",
      want: {
        "dnat [fd00:10::5]:8080 masq": third,
        "dnat [fd00:10::6]:8080 masq": third,
        "dnat [fd00:10:1::7]:8080 masq": third,
      },
    },
    {
      name: "localhost NodePorts are not served (ip6 daddr != ::1)",
      packet: pkt({ src: "::1", dst: "::1", dport: 30080, srcLocal: true, dstLocal: true }),
      hook: "OUTPUT",
      want: { "no-match": 1 },
    },
    {
      name: "UDP DNS: protocol and port from the concatenated key",
      packet: pkt({ dst: "fd00:10:96::a", proto: "udp", dport: 53, inInterface: "veth1" }),
      want: { "dnat [fd00:10::53]:53": 1 },
    },
    {
      name: "TCP to the DNS ClusterIP's UDP port is not in @service-ips: cluster-ips-check rejects it",
      packet: pkt({ dst: "fd00:10:96::a", proto: "tcp", dport: 53 }),
      want: { reject: 1 },
    },
    {
      name: "an unallocated address of the service CIDR is dropped",
      packet: pkt({ dst: "fd00:10:96::99" }),
      want: { drop: 1 },
    },
    {
      name: "an unnamed port without endpoints: reject-chain",
      packet: pkt({ dst: "fd00:10:96::20" }),
      want: { reject: 1 },
    },
    {
      name: "an IPv4 packet: the ip6 table does not see it",
      packet: pkt({ family: 4, src: "10.0.0.1", dst: "172.30.0.1" }),
      want: { "no-match": 1 },
    },
  ];
  it.each(cases)("$name", ({ packet, hook, want, caveat }) => {
    const t = traceNft(layout, packet, hook ?? "PREROUTING");
    const got = summary(t);
    expect(Object.keys(got).sort()).toEqual(Object.keys(want).sort());
    for (const [k, p] of Object.entries(want)) expect(got[k]!, k).toBeCloseTo(p, 12);
    expect(t.outcomes.reduce((s, o) => s + o.probability, 0)).toBeCloseTo(1, 12);
    if (caveat) {
      expect(
        t.outcomes.flatMap((o) => o.caveats).some((c) => caveat.test(c)),
        JSON.stringify(t.outcomes.flatMap((o) => o.caveats)),
      ).toBe(true);
    }
  });

  it("the reject of the unnamed port is decided by its no-endpoint element (comment shop/cart)", () => {
    const o = traceNft(layout, pkt({ dst: "fd00:10:96::20" }), "PREROUTING").outcomes[0]!;
    expect(o.decidedBy).toEqual({
      table: "ip6 kube-proxy",
      chain: "service-endpoints-check",
      line: expect.any(Number),
      handle: expect.any(Number),
      raw: expect.stringMatching(
        /^ip6 daddr \. meta l4proto \. th dport vmap @no-endpoint-services # handle \d+; @no-endpoint-services element fd00:10:96::20 \. tcp \. 80 comment "shop\/cart" : goto reject-chain$/,
      ),
    });
    expect(o.path.map((r) => r.chain)).toEqual([
      "filter-prerouting",
      "nat-prerouting",
      "filter-forward",
      "service-endpoints-check",
      "reject-chain",
    ]);
  });

  it("the IPv4 packet is noted", () => {
    expect(traceNft(layout, pkt({ family: 4, src: "10.0.0.1", dst: "172.30.0.1" }), "PREROUTING").notes).toEqual([
      "the packet is IPv4 but table ip6 kube-proxy handles IPv6: no rule of it applies",
    ]);
  });
});

/** A kube-proxy-like table from nft list text (the parser gives no handles: `line` is the text line). */
function table(body: string): KubeProxyNft {
  return decodeKubeProxyTable(parseNftText(`table ip kube-proxy {\n${body}\n}\n`).tables[0]!);
}
const v4 = (over: Partial<TracePacket> = {}): TracePacket => ({
  ...pkt({}),
  family: 4,
  src: "10.0.0.5",
  dst: "172.30.0.1",
  ...over,
});
const PRE = "\tchain nat-prerouting {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n";

describe("traceNft on hand-written tables: semantics and failure paths", () => {
  const cases: {
    name: string;
    body: string;
    packet?: TracePacket;
    want: Record<string, number>;
    caveat?: string;
    missing?: string;
  }[] = [
    {
      name: "goto does not come back: the end of the target chain returns to the caller of the chain that did the goto",
      body:
        `${PRE}\t\tjump a\n\t\tdnat to 10.9.9.9:9\n\t}\n\tchain a {\n\t\tgoto b\n\t\tdnat to 10.1.1.1:1\n\t}\n\tchain b {\n\t}`,
      want: { "dnat 10.9.9.9:9": 1 },
    },
    {
      name: "jump comes back and return ends the jumped-to chain",
      body: `${PRE}\t\tjump a\n\t\tdnat to 10.9.9.9:9\n\t}\n\tchain a {\n\t\treturn\n\t\tdnat to 10.1.1.1:1\n\t}`,
      want: { "dnat 10.9.9.9:9": 1 },
    },
    {
      name: "numgen values without an entry fall through to the next rule (exact thirds, counted by the tracer)",
      body:
        `${PRE}\t\tnumgen random mod 3 vmap { 0 : goto a, 1 : goto b }\n\t\tdrop\n\t}\n\tchain a {\n\t\tdnat to 10.1.1.1:80\n\t}\n\tchain b {\n\t\tdnat to 10.2.2.2:80\n\t}`,
      want: { "dnat 10.1.1.1:80": 1 / 3, "dnat 10.2.2.2:80": 1 / 3, drop: 1 / 3 },
    },
    {
      name: "numgen ranges and offsets",
      body:
        `${PRE}\t\tnumgen random mod 4 offset 1 vmap { 1-3 : goto a, 4 : goto b }\n\t}\n\tchain a {\n\t\tdnat to 10.1.1.1:80\n\t}\n\tchain b {\n\t\tdnat to 10.2.2.2:80\n\t}`,
      want: { "dnat 10.1.1.1:80": 3 / 4, "dnat 10.2.2.2:80": 1 / 4 },
    },
    {
      name: "a base chain with policy drop drops what reaches its end",
      body:
        "\tchain filter-forward {\n\t\ttype filter hook forward priority filter; policy drop;\n\t\tip daddr 10.0.0.0/8 accept\n\t}",
      want: { drop: 1 },
    },
    {
      name: "a base chain with policy drop lets accepted packets through",
      body:
        "\tchain filter-forward {\n\t\ttype filter hook forward priority filter; policy drop;\n\t\tip daddr 172.16.0.0/12 accept\n\t}",
      want: { "no-match": 1 },
    },
    {
      name: "the first nat chain that sets up DNAT wins; a later nat chain on the hook is not consulted",
      body:
        `${PRE}\t\tdnat to 10.1.1.1:80\n\t}\n\tchain nat-late {\n\t\ttype nat hook prerouting priority 0; policy accept;\n\t\tdnat to 10.2.2.2:80\n\t}`,
      want: { "dnat 10.1.1.1:80": 1 },
    },
    {
      name: "an address range, a port set and a ct state list",
      body:
        `${PRE}\t\tip daddr 172.30.0.0-172.30.0.9 tcp dport { 80, 443 } ct state established,related dnat to 10.3.3.3:80\n\t\tip daddr 172.30.0.0-172.30.0.9 tcp dport { 80, 443 } ct state new dnat to 10.1.1.1:80\n\t}`,
      want: { "dnat 10.1.1.1:80": 1 },
    },
    {
      name: "an unknown statement is assumed not to match, with a caveat",
      body: `${PRE}\t\tmeta skuid 0 dnat to 10.9.9.9:9\n\t\tdnat to 10.1.1.1:80\n\t}`,
      want: { "dnat 10.1.1.1:80": 1 },
      caveat: 'selector "meta skuid" is not modelled (meta skuid 0); assumed not to match',
    },
    {
      // `fib daddr type local` (kube-proxy's NodePorts on every local address, nodePortAddresses 0.0.0.0/0) for an
      // address the bundle cannot place: not a confident "not local"
      name: "fib daddr type local for an address whose locality was not collected: assumed not to match, said",
      body: `${PRE}\t\tfib daddr type local tcp dport 30080 dnat to 10.1.1.1:80\n\t}`,
      packet: v4({ dst: "10.99.0.7", dport: 30080, dstLocal: false, dstLocalAssumed: true, dstLocalUnknown: true }),
      want: { "no-match": 1 },
      caveat: "depends on whether 10.99.0.7 is a local address of the node (not collected: the node's `ip -o addr`) (fib daddr type local); assumed not to match",
    },
    {
      name: "fib daddr type local for the node's known address matches",
      body: `${PRE}\t\tfib daddr type local tcp dport 30080 dnat to 10.1.1.1:80\n\t}`,
      packet: v4({ dst: "192.168.0.2", dport: 30080, dstLocal: true }),
      want: { "dnat 10.1.1.1:80": 1 },
    },
    {
      name: "a jump to a chain the capture lacks is unresolved",
      body: `${PRE}\t\tjump endpoint-AAAAAAAA-ns/x/tcp/p__10.1.1.1/80\n\t}`,
      want: { unresolved: 1 },
      missing: "endpoint-AAAAAAAA-ns/x/tcp/p__10.1.1.1/80",
    },
  ];
  it.each(cases)("$name", ({ body, packet, want, caveat, missing }) => {
    const t = traceNft(table(body), packet ?? v4(), "PREROUTING");
    const got = summary(t);
    expect(Object.keys(got).sort()).toEqual(Object.keys(want).sort());
    for (const [k, p] of Object.entries(want)) expect(got[k]!, k).toBeCloseTo(p, 12);
    if (caveat) {
      expect(
        t.outcomes.flatMap((o) => o.caveats).some((c) => c.endsWith(caveat)),
        JSON.stringify(t.outcomes.map((o) => o.caveats)),
      ).toBe(true);
    }
    if (missing) expect(t.outcomes[0]!.missingChain).toBe(missing);
  });

  it("a policy-drop base chain is quoted as the evidence", () => {
    const t = traceNft(
      table("\tchain filter-forward {\n\t\ttype filter hook forward priority filter; policy drop;\n\t}"),
      v4(),
      "PREROUTING",
    );
    expect(t.outcomes[0]!.decidedBy).toEqual({
      table: "ip kube-proxy",
      chain: "filter-forward",
      line: 2,
      raw: "chain filter-forward { policy drop }",
    });
  });

  it("throws NftTraceError for chains that jump into each other", () => {
    const body = `${PRE}\t\tjump a\n\t}\n\tchain a {\n\t\tjump b\n\t}\n\tchain b {\n\t\tjump a\n\t}`;
    expect(() => traceNft(table(body), v4(), "PREROUTING")).toThrow(
      new NftTraceError("nftables chain nesting deeper than 64 at ip kube-proxy chain a (a loop?)"),
    );
  });

  it("throws NftTraceError when the branches exceed maxOutcomes", () => {
    const body =
      `${PRE}\t\tnumgen random mod 3 vmap { 0 : goto a, 1 : goto a, 2 : goto a }\n\t}\n\tchain a {\n\t\tdnat to 10.1.1.1:80\n\t}`;
    expect(() => traceNft(table(body), v4(), "PREROUTING", { maxOutcomes: 2 })).toThrow(
      new NftTraceError("trace has too many outcomes"),
    );
  });

  it("nftRuleRef quotes the rule as nft -a prints it", () => {
    const rs = parseNftText(fixture(`${OVERALL}.nft-a.txt`));
    const r = rs.tables[0]!.chains.get("external-42NFTM6N-ns2/svc2/tcp/p80")!.rules[0]!;
    expect(nftRuleRef(r)).toEqual({
      table: "ip kube-proxy",
      chain: "external-42NFTM6N-ns2/svc2/tcp/p80",
      line: 72,
      handle: 72,
      raw: 'ip saddr 10.0.0.0/8 goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit pod traffic" # handle 72',
    });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The datapath builder: which section, which family, and what goes wrong.

describe("loadBalancerSourceRanges not enforced", () => {
  it("a firewall-ips element missing: a client outside the ranges reaches the LoadBalancer IP, which is drift", () => {
    const { services, slices } = overallObjects("test-node", true);
    const text = fixture(`${OVERALL}.nft-a.txt`);
    const whole = explainService(nftBundle({ sections: { "nft-text": text }, services, slices }), "ns5", "svc5");
    expect(client(whole, 80, "LoadBalancer", "external-denied").outcome).toBe("dropped");
    expect(whole.nodes[0]!.drift.filter((d) => d.kind === "source-ranges-not-enforced")).toEqual([]);
    const edited = text.replace("elements = { 5.6.7.8 . tcp . 80 : goto firewall-HVFWP5L3-ns5/svc5/tcp/p80 }", "");
    expect(edited).not.toBe(text);
    const r = explainService(nftBundle({ sections: { "nft-text": edited }, services, slices }), "ns5", "svc5");
    const d = r.nodes[0]!.drift.filter((x) => x.kind === "source-ranges-not-enforced");
    expect(d).toHaveLength(1);
    expect(d[0]!.message).toMatch(/^ns5\/svc5:p80: test-node does not enforce loadBalancerSourceRanges \(203\.0\.113\.0\/25\) at 5\.6\.7\.8:80\/tcp: a client outside loadBalancerSourceRanges \(\S+\) reaches 10\.180\.0\.3:80/);
  });
});

describe("loadBalancerSourceRanges of one address, or inside the cluster CIDR", () => {
  // the allowed client is a host of a range: a /32 has only its own address (hostAt(r, 2) is none); with no allowed
  // host outside the cluster CIDR, the external client is outside the ranges and its drop at the LoadBalancer IP is the
  // firewall's (nftables/proxier.go: `ip saddr != { ranges } drop`), not a sign of another externalTrafficPolicy
  const withRange = (range: string) => {
    const { services, slices } = overallObjects("test-node", true);
    const svc5 = services.find((x) => x.metadata.name === "svc5")!;
    svc5.spec.loadBalancerSourceRanges = [range];
    const text = fixture(`${OVERALL}.nft-a.txt`).replace("ip saddr != 203.0.113.0/25 drop", `ip saddr != ${range} drop`);
    return explainService(nftBundle({ sections: { "nft-text": text }, services, slices }), "ns5", "svc5");
  };

  it("a /32: the allowed client is that address and is forwarded, the others dropped, no drift", () => {
    const r = withRange("203.0.113.7/32");
    const ext = client(r, 80, "LoadBalancer", "external");
    expect([ext.source, ext.outcome]).toEqual(["203.0.113.7", "forwarded"]);
    expect(client(r, 80, "LoadBalancer", "external-denied").outcome).toBe("dropped");
    expect(r.nodes[0]!.drift).toEqual([]);
  });

  it("a range that is the cluster CIDR: no allowed client outside it, said in a note, and its drop is no drift", () => {
    const r = withRange("10.0.0.0/8");
    expect(client(r, 80, "LoadBalancer", "external").outcome).toBe("dropped");
    expect(r.nodes[0]!.drift).toEqual([]);
    expect(r.nodes[0]!.notes.join("\n")).toMatch(/no address of loadBalancerSourceRanges \(10\.0\.0\.0\/8\) is outside the cluster CIDR/);
  });
});

describe("externalTrafficPolicy Local: the load balancer's health check", () => {
  it("says what kube-proxy answers on healthCheckNodePort here: 503 without a ready local endpoint, 200 with one", () => {
    const { services, slices } = overallObjects("test-node", true);
    const svc2 = services.find((s) => s.metadata.name === "svc2")!;
    expect(svc2.spec.healthCheckNodePort).toBe(30000);
    const text = fixture(`${OVERALL}.nft-a.txt`);
    const notes = (sl: typeof slices) => explainService(nftBundle({ sections: { "nft-text": text }, services, slices: sl }), "ns2", "svc2").nodes[0]!.notes;
    expect(notes(slices)).toContain(
      "healthCheckNodePort 30000: kube-proxy answers the load balancer's health check on test-node with 503 (no ready local endpoint), so the load balancer sends no client to this node (externalTrafficPolicy Local; pkg/proxy/healthcheck)",
    );
    const local = structuredClone(slices);
    for (const e of local.find((s) => s.metadata.labels?.["kubernetes.io/service-name"] === "svc2")!.endpoints!) e.nodeName = "test-node";
    expect(notes(local).find((n) => n.startsWith("healthCheckNodePort"))).toMatch(/with 200 while kube-proxy is healthy \(1 ready local endpoint\(s\)\)/);
  });
});

describe("session affinity in nftables mode: the node's affinity sets", () => {
  it("their timeout is compared with the API's (drift when it differs) and what they hold is noted", () => {
    const { services, slices } = overallObjects("test-node", true);
    const text = fixture(`${OVERALL}.nft-a.txt`);
    const svc5 = services.find((s) => s.metadata.name === "svc5")!;
    expect(svc5.spec.sessionAffinity).toBe("ClientIP");
    const run = () => explainService(nftBundle({ sections: { "nft-text": text }, services, slices }), "ns5", "svc5").nodes[0]!;
    const same = run();
    // the fixture's sets say `timeout 3h`: the API default, 10800 s
    expect(same.drift.filter((d) => d.kind === "affinity-timeout")).toEqual([]);
    expect(same.notes).toContain("ns5/svc5:p80: session affinity on test-node: 1 affinity set(s) in the dump holding 0 client(s) as captured (a held client returns to its endpoint; --source IP traces it)");
    svc5.spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 600 } };
    const d = run().drift.filter((x) => x.kind === "affinity-timeout");
    expect(d.map((x) => x.message)).toEqual([
      "ns5/svc5:p80: test-node's affinity sets keep a client for 10800 s (1 of 1 set(s), e.g. affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80), the API asks for ClientIP session affinity of 600 s: the node's rules are stale",
    ]);
  });
});

describe("NodePort addresses: what the node's set nodeport-ips holds, not an assumed default", () => {
  it("two addresses in the set: both are named (kube-proxy's configuration is not in the bundle)", () => {
    const { services, slices } = overallObjects("test-node", true);
    const text = fixture(`${OVERALL}.nft-a.txt`).replace("elements = { 192.168.0.2 }", "elements = { 192.168.0.2, 192.168.1.2 }");
    const notes = explainService(nftBundle({ sections: { "nft-text": text }, services, slices }), "ns3", "svc3").nodes[0]!.notes;
    expect(notes).toContain("NodePorts answer only on 192.168.0.2, 192.168.1.2 (set nodeport-ips of the node's kube-proxy table)");
    expect(notes.join("\n")).not.toMatch(/nodePortAddresses \[primary\]/);
  });
});

describe("the set cluster-ips", () => {
  it("a ClusterIP missing from it is drift (its unserved ports are dropped, not rejected); whole, no such drift", () => {
    const { services, slices } = overallObjects("test-node", true);
    const text = fixture(`${OVERALL}.nft-a.txt`);
    expect(explainService(nftBundle({ sections: { "nft-text": text }, services, slices }), "ns1", "svc1").nodes[0]!.drift).toEqual([]);
    const edited = text.replace("elements = { 172.30.0.41, 172.30.0.42,", "elements = { 172.30.0.42,");
    expect(edited).not.toBe(text);
    const d = explainService(nftBundle({ sections: { "nft-text": edited }, services, slices }), "ns1", "svc1").nodes[0]!.drift;
    expect(d.map((x) => x.kind)).toEqual(["ipset-missing"]);
    expect(d[0]!.message).toMatch(/^ns1\/svc1: set cluster-ips on test-node lacks ClusterIP 172\.30\.0\.41: traffic to a port of it the Service does not serve is dropped/);
    expect(d[0]!.evidence![0]!.chain).toBe("cluster-ips-check");
  });
});

describe("a Service the node never programmed (not in cluster-ips)", () => {
  // kube-proxy adds every Service's ClusterIP to cluster-ips at each sync, endpoints or not (nftables/proxier.go
  // syncProxyRules); one it lacks falls to cluster-ips-check's "Drop traffic to unallocated ClusterIPs"
  it("is service-missing drift (clients time out), with or without endpoints in the API; a Service it has is not", () => {
    const { services, slices } = overallObjects("test-node", true);
    const text = fixture(`${OVERALL}.nft-a.txt`);
    const extra = service("ns9", "svc9", { type: "ClusterIP", clusterIP: "172.30.0.49", ports: [{ name: "p80", port: 80, protocol: "TCP" }] });
    for (const eps of [[{ ip: "10.0.9.1" }], []]) {
      const b = nftBundle({ sections: { "nft-text": text }, services: [...services, extra], slices: [...slices, slice("ns9", "svc9", eps, [{ name: "p80", port: 80 }])] });
      const r = explainService(b, "ns9", "svc9");
      expect(client(r, 80, "ClusterIP", "pod-same-node").outcome).toBe("dropped");
      const d = r.nodes[0]!.drift;
      expect(d.map((x) => x.kind)).toEqual(["service-missing"]);
      expect(d[0]!.message).toMatch(/^ns9\/svc9:p80: test-node drops 172\.30\.0\.49:80\/tcp as an unallocated ClusterIP \(set cluster-ips lacks it\): kube-proxy has not programmed this Service here/);
      expect(d[0]!.evidence![0]!.chain).toBe("cluster-ips-check");
    }
    expect(explainService(nftBundle({ sections: { "nft-text": text }, services, slices }), "ns1", "svc1").nodes[0]!.drift).toEqual([]);
  });
});

describe("rejects say which of kube-proxy's rejects it is", () => {
  it("a ClusterIP port the rules do not serve (cluster-ips-check), not 'no usable endpoints'", () => {
    const { services, slices } = overallObjects("test-node", true);
    // the API moved svc1's port to 8080; the node's rules still serve 80
    const svc1 = services.find((s) => s.metadata.name === "svc1")!;
    svc1.spec.ports = svc1.spec.ports!.map((p) => ({ ...p, port: 8080 }));
    const r = explainService(nftBundle({ sections: { "nft-text": fixture(`${OVERALL}.nft-a.txt`) }, services, slices }), "ns1", "svc1");
    const pod = client(r, 8080, "ClusterIP", "pod-same-node");
    expect(pod.outcome).toBe("rejected");
    expect(pod.reason).toMatch(/^rejected by handle \d+ \(cluster-ips-check\): the node has no rule for this port of the ClusterIP/);
    const drift = r.nodes[0]!.drift.find((d) => d.kind === "unexpected-reject")!;
    expect(drift.message).toMatch(/rejects new connections to 172\.30\.0\.41:8080\/tcp: it has no rule for this port of the ClusterIP, but the API lists 1 usable endpoint\(s\)/);
    expect(drift.message).not.toMatch(/has no endpoints/);
  });
});

describe("a masquerade whose match cannot be told (the output interface)", () => {
  it("is named in the headline, as a marking rule of unknown match is, not only as a caveat", () => {
    const text = fixture(`${OVERALL}.nft-a.txt`);
    const edited = text.replace("\t\tmasquerade fully-random # handle 55", '\t\toifname "eth0" masquerade fully-random # handle 55');
    expect(edited).not.toBe(text);
    const { services, slices } = overallObjects("test-node", true);
    const host = client(explainService(nftBundle({ sections: { "nft-text": edited }, services, slices }), "ns1", "svc1"), 80, "ClusterIP", "host-network");
    expect(host.masquerade).toBe("never");
    expect(host.reason).toMatch(/^not masqueraded if handle 55 \(masquerading\) does not apply, which is not known: .*oifname/);
    expect(host.evidence.find((e) => e.rule.line === 55)!.role).toMatch(/^may masquerade \(SNAT\): /);
    // as printed, the same client is masqueraded by that rule
    const whole = client(explainService(nftBundle({ sections: { "nft-text": text }, services, slices }), "ns1", "svc1"), 80, "ClusterIP", "host-network");
    expect(whole.masquerade).toBe("always");
  });
});

describe("nftDatapath", () => {
  const capture = (
    sections: Partial<
      Record<Section, { stdout: string; exitCode?: number | null; stderr?: string; truncated?: boolean }>
    >,
  ) => ({ name: "n1", sections });
  const json = fixture(`${OVERALL}.json`);
  const text = fixture(`${OVERALL}.nft.txt`);
  const cases: {
    name: string;
    sections: Parameters<typeof capture>[0];
    family?: 4 | 6;
    iptablesDump?: boolean;
    traced: boolean;
    problems: (string | RegExp)[];
  }[] = [
    {
      name: "nft -j output: traced, no problems",
      sections: { "nft-json": { stdout: json } },
      traced: true,
      problems: [],
    },
    {
      name: "broken JSON falls back to the text listing",
      sections: { "nft-json": { stdout: '{"nftables": [' }, "nft-text": { stdout: text } },
      traced: true,
      problems: ['read the node\'s nftables state from nft-text (nft-json line 1: truncated JSON: "{"nftables": [")'],
    },
    {
      name: "a cut-off section is not analysed",
      sections: { "nft-json": { stdout: json.slice(0, 100), truncated: true } },
      traced: false,
      problems: ["the nft-json output was cut off (stream ended early); not analysed"],
    },
    {
      name: "nft missing on the node",
      sections: { "nft-json": { stdout: "", exitCode: 127, stderr: "sh: nft: not found\n" } },
      traced: false,
      problems: ["nft -j list ruleset failed (exit 127): sh: nft: not found"],
    },
    {
      name: "nft missing is not a problem when iptables answers",
      sections: { "nft-json": { stdout: "", exitCode: 127, stderr: "sh: nft: not found\n" } },
      iptablesDump: true,
      traced: false,
      problems: [],
    },
    {
      name: "IPv6 asked, only the ip table exists",
      sections: { "nft-json": { stdout: json } },
      family: 6,
      traced: false,
      problems: ["the nftables ruleset has no ip6 kube-proxy table: kube-proxy does not handle IPv6 on this node"],
    },
    {
      name: "an ip6 table with an interface detector: said once",
      sections: { "nft-json": { stdout: fixture("nftables/synthetic/ip6-newer-layout.json") } },
      family: 6,
      traced: true,
      problems: [
        /^1 flushed chain\(s\) in ip6 kube-proxy await deletion by kube-proxy .*: endpoint-PRZPYT4J-shop\/cart\/tcp\/__fd00\.10\.\.9\/80$/,
      ],
    },
    {
      name: "no kube-proxy table at all",
      sections: {
        "nft-json": {
          stdout:
            '{"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}]}',
        },
      },
      traced: false,
      problems: [],
    },
  ];
  it.each(cases)("$name", ({ sections, family, iptablesDump, traced, problems }) => {
    const dp = nftDatapath(capture(sections), family ?? 4, iptablesDump === undefined ? {} : { iptablesDump });
    expect(dp.trace !== undefined).toBe(traced);
    expect(dp.balancingMethod).toBe(traced ? "nftables-numgen" : undefined);
    expect(dp.problems).toHaveLength(problems.length);
    problems.forEach((
      p,
      i,
    ) => (typeof p === "string" ? expect(dp.problems[i]).toBe(p) : expect(dp.problems[i]).toMatch(p)));
  });

  it("the table's detector gives the cluster CIDR and the mode signal", () => {
    const dp = nftDatapath(capture({ "nft-json": { stdout: json } }), 4);
    expect(dp.clusterCIDRs).toEqual(["10.0.0.0/8"]);
    expect(dp.signals).toEqual({ nftablesTable: true });
  });
});
