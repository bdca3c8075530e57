import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  decodeKubeProxyNft,
  decodeKubeProxyTable,
  fraction,
  type KubeProxyNft,
  KubeProxyNftError,
  parseKubeProxyChainName,
  type ServicePortNft,
} from "../src/datapath/kube_proxy_nft.ts";
import { parseNftJson } from "../src/datapath/nft_json.ts";
import { parseNftText } from "../src/datapath/nft_text.ts";

// Real kube-proxy nftables rulesets (pkg/proxy/nftables/proxier_test.go @ 81810de6), loaded into nft 1.0.6 in a
// network namespace and read back (scripts/gen-nft-fixtures.sh). The JSON form is the primary input.
const read = (p: string) => readFileSync(new URL(`./fixtures/nftables/${p}`, import.meta.url), "utf8");
const fromJson = (name: string): KubeProxyNft => {
  const all = decodeKubeProxyNft(parseNftJson(read(`${name}.json`)));
  expect(all).toHaveLength(1);
  return all[0]!;
};

function port(k: KubeProxyNft, name: string): ServicePortNft {
  const p = k.servicePorts.find((x) => x.servicePortName === name);
  expect(p, name).toBeDefined();
  return p as ServicePortNft;
}

/** `10.180.0.4:80 1/2` for each endpoint of a policy chain. */
const shares = (p: ServicePortNft | undefined, which: "clusterChain" | "localChain" = "clusterChain") =>
  p?.[which]?.endpoints.map((e) => `${e.dnatTo?.text ?? "-"} ${e.share.num}/${e.share.den}`);

/** A compact, evidence-free summary of a decoded table (the same for JSON, nft list and nft -f input). */
function summary(k: KubeProxyNft) {
  const sorted = <T>(xs: T[]) => [...xs].map((x) => JSON.stringify(x)).sort();
  return {
    family: k.family,
    clusterIPs: sorted(k.clusterIPs.map((x) => x.ip)),
    nodePortIPs: k.nodePortIPs?.map((x) => x.ip),
    maps: [k.serviceIPs, k.serviceNodePorts, k.firewallIPs, k.noEndpointServices, k.noEndpointNodePorts].map((m) =>
      sorted(m.map((d) => [d.ip, d.protocol, d.port, d.action, d.target, d.comment]))
    ),
    dispatch: {
      serviceIPs: k.dispatch.serviceIPs !== undefined,
      nodePorts: k.dispatch.nodePorts && { via: k.dispatch.nodePorts.via, lo: k.dispatch.nodePorts.excludesLocalhost },
      firewall: k.dispatch.firewall !== undefined,
      serviceEndpointsCheck: k.dispatch.serviceEndpointsCheck !== undefined,
      nodePortEndpointsCheck: k.dispatch.nodePortEndpointsCheck !== undefined,
      reject: k.dispatch.rejectUnknownClusterIPPorts !== undefined,
      drop: k.dispatch.dropUnallocatedClusterIPs?.cidrs,
    },
    masquerade: {
      mark: k.masquerade.mark,
      fullyRandom: k.masquerade.rule?.fullyRandom,
      skip: k.masquerade.skipUnmarked !== undefined,
      clear: k.masquerade.clearMark !== undefined,
    },
    detector: [k.localDetector.kind, k.localDetector.value, k.localDetector.evidence.length],
    masqueradeAll: k.masqueradeAll,
    ports: k.servicePorts.map((p) => ({
      name: p.servicePortName,
      protocol: p.protocol,
      port: p.port,
      clusterIPs: [...p.clusterIPs].sort(),
      externalAddresses: [...p.externalAddresses].sort(),
      nodePorts: [...p.nodePorts].sort(),
      dispatch: sorted(p.dispatch.map((d) => `${d.map} ${d.action}`)),
      cluster: p.clusterChain && policy(p.clusterChain),
      local: p.localChain && policy(p.localChain),
      external: p.externalChain && {
        etp: p.externalChain.externalTrafficPolicy,
        masq: p.externalChain.masquerade !== undefined,
        pod: p.externalChain.podShortCircuit &&
          [p.externalChain.podShortCircuit.local, p.externalChain.podShortCircuit.target],
        localMasq: p.externalChain.localMasquerade !== undefined,
        local: p.externalChain.localShortCircuit?.target,
        target: p.externalChain.target?.chain,
      },
      firewall: p.firewallChain?.allowedSources,
    })),
    endpoints: [...k.endpointChains.values()].map((
      e,
    ) => [e.chain, e.flushed, e.hairpin?.saddr, e.affinityUpdate?.set, e.dnat?.text]),
    affinity: k.affinitySets.map((a) => [a.name, a.endpointChain, a.timeoutSeconds, a.clients.map((c) => c.ip)]),
    stale: k.staleChains.map((s) => s.chain).sort(),
    anomalies: k.anomalies.map((a) => a.message),
  };
}

function policy(pc: NonNullable<ServicePortNft["clusterChain"]>) {
  return {
    flushed: pc.flushed,
    masq: pc.masquerade.map((m) => [m.daddr, m.protocol, m.dport, m.notLocal]),
    affinity: pc.affinity.map((a) => [a.set, a.endpointChain, a.timeoutSeconds]),
    lb: pc.loadBalancing && [pc.loadBalancing.mod, pc.loadBalancing.unmatched],
    endpoints: pc.endpoints.map((e) => [e.endpointChain, e.share, e.indexes, e.dnatTo?.text]),
  };
}

const REAL = [
  "TestBadIPs",
  "TestOverallNFTablesRules",
  "TestSyncProxyRulesRepeated-01-initial-svc1-svc2",
  "TestSyncProxyRulesRepeated-02-add-svc3",
  "TestSyncProxyRulesRepeated-03-delete-svc2-chains-flushed-not-deleted",
  "TestSyncProxyRulesRepeated-04-stale-chains-deleted",
  "TestSyncProxyRulesRepeated-05-add-svc4-no-endpoints",
  "TestSyncProxyRulesRepeated-06-add-svc4-endpoints",
  "TestSyncProxyRulesRepeated-07-change-svc3-endpoint-old-chain-flushed",
  "TestSyncProxyRulesRepeated-08-add-svc3-second-endpoint",
  "TestSyncProxyRulesRepeated-09-svc3-endpoints-emptied-chains-flushed-not-deleted",
  "TestSyncProxyRulesRepeated-10-svc3-endpoints-restored",
  "TestSyncProxyRulesStartup-1-preexisting-state",
  "TestSyncProxyRulesStartup-2-after-first-sync",
  "baseRules",
];

describe("decodeKubeProxyNft: TestOverallNFTablesRules (six services of every type)", () => {
  const k = fromJson("TestOverallNFTablesRules");

  it("shared setup: mark 0x4000, masquerade fully-random, pod-CIDR detector, NodePorts on @nodeport-ips", () => {
    expect(k.family).toBe("ip");
    expect(k.table.name).toBe("kube-proxy");
    expect(k.masquerade.mark).toBe(0x4000);
    expect(k.masquerade.markRule?.text).toBe("meta mark set meta mark | 0x00004000");
    expect(k.masquerade.rule).toMatchObject({ fullyRandom: true, flags: ["fully-random"] });
    expect(k.masquerade.skipUnmarked?.text).toBe("meta mark & 0x00004000 == 0x00000000 return");
    expect(k.masquerade.clearMark?.text).toBe("meta mark set meta mark ^ 0x00004000");
    expect(k.localDetector.kind).toBe("cidr");
    expect(k.localDetector.value).toBe("10.0.0.0/8");
    // five ClusterIP masquerade rules + svc2's pod short-circuit
    expect(k.localDetector.evidence).toHaveLength(6);
    expect(k.masqueradeAll).toBe(false);
    expect(k.nodePortIPs?.map((x) => x.ip)).toEqual(["192.168.0.2"]);
    expect(k.dispatch.nodePorts).toMatchObject({ via: "nodeport-ips", excludesLocalhost: false });
    expect(k.dispatch.nodePorts?.evidence.text).toBe(
      "ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports",
    );
    expect(k.dispatch.serviceIPs?.text).toBe("ip daddr . meta l4proto . th dport vmap @service-ips");
    expect(k.dispatch.dropUnallocatedClusterIPs?.cidrs).toEqual(["172.30.0.0/16"]);
    expect(k.dispatch.rejectUnknownClusterIPPorts?.comment).toBe("Reject traffic to invalid ports of ClusterIPs");
    expect(k.clusterIPs.map((x) => x.ip)).toEqual([
      "172.30.0.41",
      "172.30.0.42",
      "172.30.0.43",
      "172.30.0.44",
      "172.30.0.45",
      "172.30.0.46",
    ]);
    expect(k.anomalies).toEqual([]);
    expect(k.staleChains).toEqual([]);
    expect(k.servicePorts.map((p) => p.servicePortName)).toEqual([
      "ns1/svc1:p80",
      "ns2/svc2:p80",
      "ns3/svc3:p80",
      "ns4/svc4:p80",
      "ns5/svc5:p80",
      "ns6/svc6:p80",
    ]);
  });

  it("svc1 (ClusterIP): 172.30.0.41:80 → 10.180.0.1:80, non-pod sources masqueraded, hairpin", () => {
    const p = port(k, "ns1/svc1:p80");
    expect(p).toMatchObject({
      namespace: "ns1",
      name: "svc1",
      portName: "p80",
      protocol: "tcp",
      hash: "ULMVA6XW",
      port: 80,
    });
    expect(p.clusterIPs).toEqual(["172.30.0.41"]);
    expect(shares(p)).toEqual(["10.180.0.1:80 1/1"]);
    expect(p.clusterChain!.masquerade).toEqual([{
      daddr: "172.30.0.41",
      notLocal: { kind: "cidr", cidr: "10.0.0.0/8" },
      evidence: expect.objectContaining({
        text: "ip daddr 172.30.0.41 ip saddr != 10.0.0.0/8 jump mark-for-masquerade",
      }),
    }]);
    const ep = k.endpointChains.get("endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80")!;
    expect(ep.hairpin?.saddr).toBe("10.180.0.1");
    expect(ep.dnat).toMatchObject({ ip: "10.180.0.1", port: 80, protocol: "tcp", text: "10.180.0.1:80" });
    expect(ep.name).toMatchObject({
      kind: "endpoint",
      endpointIP: "10.180.0.1",
      endpointPort: 80,
      servicePortName: "ns1/svc1:p80",
    });
  });

  it("svc4: externalIP 192.168.99.33 → external chain (eTP Cluster: masquerade) → 2 endpoints, 1/2 each", () => {
    const p = port(k, "ns4/svc4:p80");
    const entry = k.serviceIPs.find((d) => d.ip === "192.168.99.33")!;
    expect(entry).toMatchObject({
      protocol: "tcp",
      port: 80,
      action: "external",
      target: "external-LAUZTJTB-ns4/svc4/tcp/p80",
    });
    expect(entry.evidence).toEqual({
      family: "ip",
      table: "kube-proxy",
      set: "service-ips",
      line: 1,
      text: "192.168.99.33 . tcp . 80 : goto external-LAUZTJTB-ns4/svc4/tcp/p80",
    });
    expect(p.externalAddresses).toEqual(["192.168.99.33"]);
    expect(p.nodePorts).toEqual([]);
    expect(p.externalChain).toMatchObject({
      externalTrafficPolicy: "Cluster",
      target: { chain: "service-LAUZTJTB-ns4/svc4/tcp/p80" },
    });
    expect(p.externalChain!.masquerade?.text).toBe("jump mark-for-masquerade");
    expect(shares(p)).toEqual(["10.180.0.4:80 1/2", "10.180.0.5:80 1/2"]);
    expect(p.clusterChain!.endpoints.map((e) => [e.indexes, e.probability])).toEqual([[[0], 0.5], [[1], 0.5]]);
    const lb = p.clusterChain!.loadBalancing!;
    expect(lb).toMatchObject({ mod: 2, offset: 0, unmatched: { num: 0, den: 1 } });
    expect(lb.evidence).toMatchObject({
      family: "ip",
      table: "kube-proxy",
      chain: "service-LAUZTJTB-ns4/svc4/tcp/p80",
    });
    expect(lb.evidence.handle).toBeTypeOf("number");
    expect(lb.evidence.text).toMatch(/^numgen random mod 2 vmap \{ 0 : goto endpoint-UNZV3OEC/);
  });

  it("svc2 (LoadBalancer, eTP Local, no local endpoint): short-circuits, then drop entries", () => {
    const p = port(k, "ns2/svc2:p80");
    expect(p.clusterIPs).toEqual(["172.30.0.42"]);
    expect(p.externalAddresses.sort()).toEqual(["1.2.3.4", "192.168.99.22"]);
    expect(p.nodePorts).toEqual([3001]);
    const ex = p.externalChain!;
    expect(ex.externalTrafficPolicy).toBe("Local");
    expect(ex.masquerade).toBeUndefined();
    expect(ex.target).toBeUndefined();
    expect(ex.podShortCircuit).toMatchObject({
      local: { kind: "cidr", cidr: "10.0.0.0/8" },
      target: "service-42NFTM6N-ns2/svc2/tcp/p80",
    });
    expect(ex.podShortCircuit!.evidence.comment).toBe("short-circuit pod traffic");
    expect(ex.localMasquerade?.comment).toBe("masquerade local traffic");
    expect(ex.localShortCircuit?.target).toBe("service-42NFTM6N-ns2/svc2/tcp/p80");
    const drops = p.dispatch.filter((d) => d.action === "drop");
    expect(drops.map((d) => `${d.map} ${d.ip ?? ""} ${d.protocol}/${d.port} ${d.comment}`).sort()).toEqual([
      "no-endpoint-nodeports  tcp/3001 ns2/svc2:p80",
      "no-endpoint-services 1.2.3.4 tcp/80 ns2/svc2:p80",
      "no-endpoint-services 192.168.99.22 tcp/80 ns2/svc2:p80",
    ]);
    expect(shares(p)).toEqual(["10.180.0.2:80 1/1"]);
  });

  it("svc3 (NodePort 3003, eTP Cluster)", () => {
    const p = port(k, "ns3/svc3:p80");
    expect(p.nodePorts).toEqual([3003]);
    expect(k.serviceNodePorts.find((d) => d.port === 3003)).toMatchObject({
      action: "external",
      target: "external-4AT6LBPK-ns3/svc3/tcp/p80",
    });
    expect(p.externalChain?.externalTrafficPolicy).toBe("Cluster");
    expect(shares(p)).toEqual(["10.180.0.3:80 1/1"]);
  });

  it("svc5: ClientIP affinity 10800 s, loadBalancerSourceRanges firewall, NodePort 3002", () => {
    const p = port(k, "ns5/svc5:p80");
    expect(p.clusterChain!.affinity).toEqual([{
      set: "affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80",
      endpointChain: "endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80",
      timeoutSeconds: 10800,
      evidence: expect.objectContaining({ chain: "service-HVFWP5L3-ns5/svc5/tcp/p80" }),
    }]);
    expect(k.affinitySets).toEqual([{
      name: "affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80",
      endpointChain: "endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80",
      timeoutSeconds: 10800,
      flags: ["timeout"],
      clients: [],
      evidence: expect.objectContaining({ set: "affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80" }),
    }]);
    expect(k.endpointChains.get("endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80")!.affinityUpdate?.evidence.text)
      .toBe(
        "update @affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 { ip saddr }",
      );
    expect(p.firewallChain?.allowedSources).toEqual(["203.0.113.0/25"]);
    expect(p.firewallChain?.drop?.text).toBe("ip saddr != 203.0.113.0/25 drop");
    expect(k.firewallIPs.map((d) => [d.ip, d.port, d.action, d.target])).toEqual([
      ["5.6.7.8", 80, "firewall", "firewall-HVFWP5L3-ns5/svc5/tcp/p80"],
    ]);
    expect(p.externalAddresses).toEqual(["5.6.7.8"]);
    expect(p.nodePorts).toEqual([3002]);
    expect(shares(p)).toEqual(["10.180.0.3:80 1/1"]);
  });

  it("svc6 (no endpoints): known only from no-endpoint-services → reject-chain", () => {
    const p = port(k, "ns6/svc6:p80");
    expect(p).toMatchObject({ namespace: "ns6", name: "svc6", portName: "p80", protocol: "tcp", port: 80 });
    expect(p.hash).toBeUndefined();
    expect(p.clusterChain).toBeUndefined();
    expect(p.clusterIPs).toEqual(["172.30.0.46"]);
    expect(p.dispatch.map((d) => [d.map, d.action, d.target, d.evidence.text])).toEqual([
      ["no-endpoint-services", "reject", "reject-chain", "172.30.0.46 . tcp . 80 : goto reject-chain"],
    ]);
  });
});

describe("decodeKubeProxyNft gives the same layout from nft -j, nft list and the nft -f transaction", () => {
  for (const name of [...REAL, "synthetic/ip6-newer-layout"]) {
    it(name, () => {
      const j = decodeKubeProxyNft(parseNftJson(read(`${name}.json`)));
      const l = decodeKubeProxyNft(parseNftText(read(`${name}.nft.txt`)));
      const x = decodeKubeProxyNft(parseNftText(read(`${name}.nft`)));
      expect(j).toHaveLength(1);
      const want = summary(j[0]!);
      // The JSON of nft 1.0.6 omits the `dynamic` set flag and counts `expires` separately: compare the rest.
      const strip = (s: ReturnType<typeof summary>) => ({ ...s, affinity: s.affinity.map((a) => a.slice(0, 3)) });
      expect(strip(summary(l[0]!))).toEqual(strip(want));
      expect(strip(summary(x[0]!))).toEqual(strip(want));
      expect(want.anomalies).toEqual([]);
    });
  }

  it("an iptables-mode leftover (ip nat / ip filter from iptables-nft) does not disturb the kube-proxy table", () => {
    const rs = parseNftJson(read("synthetic/mixed-iptables-leftovers.json"));
    const all = decodeKubeProxyNft(rs);
    expect(all.map((x) => `${x.family} ${x.table.name}`)).toEqual(["ip kube-proxy"]);
    expect(summary(all[0]!)).toEqual(summary(fromJson("TestOverallNFTablesRules")));
    expect(rs.tables.find((t) => t.name === "nat")!.chains.has("KUBE-SERVICES")).toBe(true);
  });
});

describe("decodeKubeProxyNft: TestSyncProxyRulesRepeated and TestSyncProxyRulesStartup steps", () => {
  const cases: { name: string; file: string; want: Record<string, string[] | string>; stale: string[] }[] = [
    {
      name: "01 initial: svc1 and svc2",
      file: "TestSyncProxyRulesRepeated-01-initial-svc1-svc2",
      want: { "ns1/svc1:p80": ["10.0.1.1:80 1/1"], "ns2/svc2:p8080": ["10.0.2.1:8080 1/1"] },
      stale: [],
    },
    {
      name: "03 svc2 deleted: its chains are flushed, present and empty",
      file: "TestSyncProxyRulesRepeated-03-delete-svc2-chains-flushed-not-deleted",
      want: { "ns1/svc1:p80": ["10.0.1.1:80 1/1"], "ns2/svc2:p8080": "flushed", "ns3/svc3:p80": ["10.0.3.1:80 1/1"] },
      stale: ["endpoint-7RVP4LUQ-ns2/svc2/tcp/p8080__10.0.2.1/8080", "service-MHHHYRWA-ns2/svc2/tcp/p8080"],
    },
    {
      name: "04 stale chains deleted",
      file: "TestSyncProxyRulesRepeated-04-stale-chains-deleted",
      want: { "ns1/svc1:p80": ["10.0.1.1:80 1/1"], "ns3/svc3:p80": ["10.0.3.1:80 1/1"] },
      stale: [],
    },
    {
      name: "05 svc4 without endpoints: reject",
      file: "TestSyncProxyRulesRepeated-05-add-svc4-no-endpoints",
      want: { "ns1/svc1:p80": ["10.0.1.1:80 1/1"], "ns3/svc3:p80": ["10.0.3.1:80 1/1"], "ns4/svc4:p80": "reject" },
      stale: [],
    },
    {
      name: "07 svc3 endpoint changed: the old endpoint chain is flushed",
      file: "TestSyncProxyRulesRepeated-07-change-svc3-endpoint-old-chain-flushed",
      want: {
        "ns1/svc1:p80": ["10.0.1.1:80 1/1"],
        "ns3/svc3:p80": ["10.0.3.2:80 1/1"],
        "ns4/svc4:p80": ["10.0.4.1:80 1/1"],
      },
      stale: ["endpoint-2OCDJSZQ-ns3/svc3/tcp/p80__10.0.3.1/80"],
    },
    {
      name: "08 svc3 gets a second endpoint: 1/2 each",
      file: "TestSyncProxyRulesRepeated-08-add-svc3-second-endpoint",
      want: {
        "ns1/svc1:p80": ["10.0.1.1:80 1/1"],
        "ns3/svc3:p80": ["10.0.3.2:80 1/2", "10.0.3.3:80 1/2"],
        "ns4/svc4:p80": ["10.0.4.1:80 1/1"],
      },
      stale: [],
    },
    {
      name: "09 svc3 endpoints emptied: reject, its three chains flushed",
      file: "TestSyncProxyRulesRepeated-09-svc3-endpoints-emptied-chains-flushed-not-deleted",
      want: {
        "ns1/svc1:p80": ["10.0.1.1:80 1/1"],
        "ns3/svc3:p80": "reject+flushed",
        "ns4/svc4:p80": ["10.0.4.1:80 1/1"],
      },
      stale: [
        "endpoint-SWWHDC7X-ns3/svc3/tcp/p80__10.0.3.2/80",
        "endpoint-TQ2QKHCZ-ns3/svc3/tcp/p80__10.0.3.3/80",
        "service-4AT6LBPK-ns3/svc3/tcp/p80",
      ],
    },
    {
      name: "Startup 2: svc1 two endpoints, svc3 no endpoints",
      file: "TestSyncProxyRulesStartup-2-after-first-sync",
      want: {
        "ns1/svc1:p80": ["10.0.1.1:80 1/2", "10.0.1.2:80 1/2"],
        "ns2/svc2:p8080": ["10.0.2.1:8080 1/1"],
        "ns3/svc3:p80": "reject",
      },
      stale: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const k = fromJson(c.file);
      const got: Record<string, string[] | string> = {};
      for (const p of k.servicePorts) {
        const reject = p.dispatch.some((d) => d.action === "reject");
        const flushed = p.clusterChain?.flushed === true;
        got[p.servicePortName] = reject && flushed
          ? "reject+flushed"
          : reject
          ? "reject"
          : flushed
          ? "flushed"
          : shares(p)!;
      }
      expect(got).toEqual(c.want);
      expect(k.staleChains.map((s) => s.chain).sort()).toEqual(c.stale);
      for (const s of k.staleChains) expect(s.evidence.text).toBe(`chain ${s.chain}`);
      expect(k.anomalies).toEqual([]);
    });
  }

  it("10 endpoints restored: the same layout as 08", () => {
    expect(summary(fromJson("TestSyncProxyRulesRepeated-10-svc3-endpoints-restored")))
      .toEqual(summary(fromJson("TestSyncProxyRulesRepeated-08-add-svc3-second-endpoint")));
  });

  it("TestBadIPs: leading-zero addresses appear canonicalised", () => {
    const k = fromJson("TestBadIPs");
    const p = port(k, "ns1/svc1:p80");
    expect(p.clusterIPs).toEqual(["172.30.0.41"]);
    expect(p.externalAddresses.sort()).toEqual(["1.2.3.4", "192.168.99.22"]);
    expect(p.firewallChain?.allowedSources).toEqual(["203.0.113.0/25"]);
    expect(shares(p)).toEqual(["10.180.0.1:80 1/1"]);
  });

  it("baseRules: no services", () => {
    const k = fromJson("baseRules");
    expect(k.servicePorts).toEqual([]);
    expect(k.localDetector).toEqual({ kind: "unknown", evidence: [] });
    expect(k.dispatch.nodePorts?.via).toBe("nodeport-ips");
  });
});

describe("decodeKubeProxyNft: ip6 table in the v1.33+ layout (synthetic, loaded through real nft)", () => {
  const k = fromJson("synthetic/ip6-newer-layout");

  it("fib-local NodePorts, interface-prefix detector, no nodeport-ips set", () => {
    expect(k.family).toBe("ip6");
    expect(k.nodePortIPs).toBeUndefined();
    expect(k.dispatch.nodePorts).toMatchObject({ via: "fib-local", excludesLocalhost: true });
    expect(k.localDetector).toMatchObject({ kind: "interface-prefix", value: "veth" });
    expect(k.localDetector.evidence.map((e) => e.chain)).toEqual([
      "service-ROFMTVVF-dns/coredns/udp/dns",
      "service-PLVUX2VM-web/frontend/tcp/http",
      "external-PLVUX2VM-web/frontend/tcp/http",
    ]);
    expect(k.dispatch.dropUnallocatedClusterIPs?.cidrs).toEqual(["fd00:10:96::/112"]);
    expect(k.anomalies).toEqual([]);
  });

  it("web/frontend: Cluster chain 1/3 each, Local chain 1/2 each, external → local chain, affinity 600 s", () => {
    const p = port(k, "web/frontend:http");
    expect(p.clusterIPs).toEqual(["fd00:10:96::10"]);
    expect(p.externalAddresses).toEqual(["2001:db8:99::10"]);
    expect(p.nodePorts).toEqual([30080]);
    expect(p.clusterChain!.masquerade).toEqual([{
      daddr: "fd00:10:96::10",
      protocol: "tcp",
      dport: 80,
      notLocal: { kind: "interface-prefix", prefix: "veth" },
      evidence: expect.anything(),
    }]);
    expect(shares(p)).toEqual(["[fd00:10::5]:8080 1/3", "[fd00:10::6]:8080 1/3", "[fd00:10:1::7]:8080 1/3"]);
    expect(shares(p, "localChain")).toEqual(["[fd00:10::5]:8080 1/2", "[fd00:10::6]:8080 1/2"]);
    expect(p.localChain!.masquerade).toEqual([]);
    expect(p.localChain!.affinity.map((a) => a.timeoutSeconds)).toEqual([600, 600]);
    expect(p.externalChain).toMatchObject({
      externalTrafficPolicy: "Local",
      podShortCircuit: {
        local: { kind: "interface-prefix", prefix: "veth" },
        target: "service-PLVUX2VM-web/frontend/tcp/http",
      },
      target: { chain: "local-PLVUX2VM-web/frontend/tcp/http" },
    });
    const a = k.affinitySets.find((s) =>
      s.endpointChain === "endpoint-BZEKCJ4W-web/frontend/tcp/http__fd00.10..5/8080"
    )!;
    expect(a.clients.map((c) => c.ip)).toEqual(["2001:db8:5::77"]);
    expect(a.clients[0]!.expiresSeconds).toBeGreaterThan(0);
  });

  it("an unnamed port with no endpoints, its flushed endpoint chain, and a UDP service", () => {
    const cart = port(k, "shop/cart");
    expect(cart).toMatchObject({ namespace: "shop", name: "cart", portName: "", protocol: "tcp", port: 80 });
    expect(cart.dispatch.map((d) => d.action)).toEqual(["reject"]);
    expect(k.staleChains.map((s) => [s.chain, s.kind])).toEqual([[
      "endpoint-PRZPYT4J-shop/cart/tcp/__fd00.10..9/80",
      "endpoint",
    ]]);
    expect(k.endpointChains.get("endpoint-PRZPYT4J-shop/cart/tcp/__fd00.10..9/80")!.name.endpointIP).toBe("fd00:10::9");
    const dns = port(k, "dns/coredns:dns");
    expect(dns.protocol).toBe("udp");
    expect(shares(dns)).toEqual(["[fd00:10::53]:53 1/1"]);
  });
});

/** A kube-proxy table in nft -f syntax with the given extra lines (chains must be declared by the caller). */
function table(...lines: string[]): KubeProxyNft {
  const text = [
    "add table ip kube-proxy",
    "add chain ip kube-proxy mark-for-masquerade",
    "add rule ip kube-proxy mark-for-masquerade mark set mark or 0x4000",
    "add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }",
    ...lines,
  ].join("\n");
  return decodeKubeProxyNft(parseNftText(text))[0]!;
}
const chains = (...names: string[]) => names.map((n) => `add chain ip kube-proxy ${n}`);
const SVC = "service-AAAAAAAA-ns/web/tcp/http";
const EP1 = "endpoint-BBBBBBBB-ns/web/tcp/http__10.0.0.1/80";
const EP2 = "endpoint-CCCCCCCC-ns/web/tcp/http__10.0.0.2/80";
const eps = [
  `add rule ip kube-proxy ${EP1} ip saddr 10.0.0.1 jump mark-for-masquerade`,
  `add rule ip kube-proxy ${EP1} meta l4proto tcp dnat to 10.0.0.1:80`,
  `add rule ip kube-proxy ${EP2} ip saddr 10.0.0.2 jump mark-for-masquerade`,
  `add rule ip kube-proxy ${EP2} meta l4proto tcp dnat to 10.0.0.2:80`,
];

describe("decodeKubeProxyNft: exact shares and findings on hand-made layouts", () => {
  it("a target repeated in the numgen vmap gets every value it is mapped to: 2/3 and 1/3", () => {
    const k = table(
      ...chains(SVC, EP1, EP2),
      ...eps,
      `add rule ip kube-proxy ${SVC} numgen random mod 3 vmap { 0 : goto ${EP1} , 1 : goto ${EP2} , 2 : goto ${EP1} }`,
    );
    const pc = port(k, "ns/web:http").clusterChain!;
    expect(pc.endpoints.map((e) => [e.endpointChain, e.share, e.indexes, e.dnatTo?.text])).toEqual([
      [EP1, { num: 2, den: 3 }, [0, 2], "10.0.0.1:80"],
      [EP2, { num: 1, den: 3 }, [1], "10.0.0.2:80"],
    ]);
    expect(pc.endpoints[0]!.probability).toBeCloseTo(2 / 3, 12);
    expect(k.anomalies).toEqual([]);
  });

  it("numgen values without an entry fall through: unmatched share and a finding", () => {
    const k = table(
      ...chains(SVC, EP1, EP2),
      ...eps,
      `add rule ip kube-proxy ${SVC} numgen random mod 4 vmap { 0 : goto ${EP1} , 1-2 : goto ${EP2} }`,
    );
    const pc = port(k, "ns/web:http").clusterChain!;
    expect(pc.loadBalancing?.unmatched).toEqual({ num: 1, den: 4 });
    expect(pc.endpoints.map((e) => [e.share, e.indexes])).toEqual([[{ num: 1, den: 4 }, [0]], [{ num: 1, den: 2 }, [
      1,
      2,
    ]]]);
    expect(k.anomalies.map((a) => a.message)).toEqual([
      "numgen random mod 4 maps only 3 of 4 values: 1/4 of new connections fall through",
    ]);
    expect(k.anomalies[0]!.evidence[0]!.chain).toBe(SVC);
  });

  it("findings: value out of range, missing chains, missing dnat, stray rules, hairpin mismatch, missing affinity set", () => {
    const k = table(
      ...chains(SVC, EP1, EP2),
      `add rule ip kube-proxy ${EP1} ip saddr 10.0.0.9 jump mark-for-masquerade`,
      `add rule ip kube-proxy ${EP1} meta l4proto tcp dnat to 10.0.0.1:80`,
      `add rule ip kube-proxy ${EP2} log prefix "ep2"`,
      `add rule ip kube-proxy ${SVC} ip saddr @affinity-BBBBBBBB-ns/web/tcp/http__10.0.0.1/80 goto ${EP1}`,
      `add rule ip kube-proxy ${SVC} ip daddr 172.30.0.1 tcp dport 80 meta mark 0x1 jump mark-for-masquerade`,
      `add rule ip kube-proxy ${SVC} numgen random mod 2 vmap { 0 : goto ${EP1} , 1 : goto ${EP2} , 5 : goto ${EP1} , 1 : accept }`,
      `add rule ip kube-proxy ${SVC} numgen random mod 1 vmap { 0 : goto endpoint-DDDDDDDD-ns/web/tcp/http__10.0.0.3/80 }`,
      `add element ip kube-proxy service-ips { 172.30.0.1 . tcp . 80 : goto service-EEEEEEEE-ns/gone/tcp/http }`,
      `add element ip kube-proxy service-ips { 172.30.0.2 . tcp . http : drop }`,
    );
    expect(k.anomalies.map((a) => a.message)).toEqual([
      "service-ips element points to missing chain service-EEEEEEEE-ns/gone/tcp/http",
      'service-ips element is not "IP . PROTO . PORT : VERDICT"',
      `hairpin source 10.0.0.9 differs from the DNAT address 10.0.0.1`,
      `unexpected rule in endpoint chain ${EP2}`,
      `endpoint chain ${EP2} has no dnat rule`,
      "affinity set affinity-BBBBBBBB-ns/web/tcp/http__10.0.0.1/80 does not exist",
      `unexpected rule in service chain ${SVC}`,
      `numgen random mod 2 never yields 5 for ${EP1}`,
      'numgen entry "1" is not "N : goto endpoint-…"',
      `more than one numgen rule in ${SVC}`,
      "numgen entry points to missing chain endpoint-DDDDDDDD-ns/web/tcp/http__10.0.0.3/80",
    ]);
    const pc = port(k, "ns/web:http").clusterChain!;
    expect(pc.otherRules.map((e) => e.text)).toEqual([
      "ip daddr 172.30.0.1 tcp dport 80 meta mark 0x1 jump mark-for-masquerade",
    ]);
    expect(k.endpointChains.get(EP2)!.otherRules.map((e) => e.text)).toEqual(['log prefix "ep2"']);
    // The second numgen rule replaces the first in loadBalancing (both are findings above).
    expect(pc.loadBalancing?.mod).toBe(1);
  });

  it("masqueradeAll: ClusterIP masquerade rules without a source condition; no-op detector", () => {
    const k = table(
      ...chains(SVC, EP1),
      eps[1]!,
      `add rule ip kube-proxy ${SVC} ip daddr 172.30.0.1 tcp dport 80 jump mark-for-masquerade`,
      `add rule ip kube-proxy ${SVC} numgen random mod 1 vmap { 0 : goto ${EP1} }`,
    );
    expect(k.masqueradeAll).toBe(true);
    expect(k.localDetector).toEqual({ kind: "none", evidence: [] });
    expect(port(k, "ns/web:http").clusterChain!.masquerade[0]).toMatchObject({
      daddr: "172.30.0.1",
      protocol: "tcp",
      dport: 80,
    });
    expect(port(k, "ns/web:http").clusterChain!.masquerade[0]!.notLocal).toBeUndefined();
  });

  it("BridgeInterface detector; rules that disagree on the detector are a finding", () => {
    const k = table(
      ...chains(SVC, EP1, "service-FFFFFFFF-ns/api/tcp/http", "external-FFFFFFFF-ns/api/tcp/http"),
      eps[1]!,
      `add rule ip kube-proxy ${SVC} ip daddr 172.30.0.1 iifname != "cni0" jump mark-for-masquerade`,
      `add rule ip kube-proxy ${SVC} numgen random mod 1 vmap { 0 : goto ${EP1} }`,
      `add rule ip kube-proxy service-FFFFFFFF-ns/api/tcp/http ip daddr 172.30.0.2 ip saddr != 10.0.0.0/8 jump mark-for-masquerade`,
      `add rule ip kube-proxy service-FFFFFFFF-ns/api/tcp/http numgen random mod 1 vmap { 0 : goto ${EP1} }`,
      `add rule ip kube-proxy external-FFFFFFFF-ns/api/tcp/http iifname "cni0" goto service-FFFFFFFF-ns/api/tcp/http`,
    );
    expect(k.localDetector.kind).toBe("interface");
    expect(k.localDetector.value).toBe("cni0");
    expect(k.localDetector.evidence).toHaveLength(2);
    expect(k.anomalies.map((a) => a.message)).toEqual([
      "rules disagree on the local-traffic detector: cidr:10.0.0.0/8, interface:cni0",
    ]);
    // The finding points at the rules that disagree with the majority.
    expect(k.anomalies[0]!.evidence.map((e) => e.chain)).toEqual(["service-FFFFFFFF-ns/api/tcp/http"]);
  });

  it("stray rules in external and firewall chains are kept and reported; a flushed firewall chain", () => {
    const k = table(
      ...chains(
        "external-AAAAAAAA-ns/web/tcp/http",
        "firewall-AAAAAAAA-ns/web/tcp/http",
        "firewall-GGGGGGGG-ns/x/tcp/p",
      ),
      "add rule ip kube-proxy external-AAAAAAAA-ns/web/tcp/http counter accept",
      "add rule ip kube-proxy firewall-AAAAAAAA-ns/web/tcp/http ip saddr { 10.0.0.0/8 } accept",
    );
    expect(k.anomalies.map((a) => a.message)).toEqual([
      "unexpected rule in external chain external-AAAAAAAA-ns/web/tcp/http",
      "unexpected rule in firewall chain firewall-AAAAAAAA-ns/web/tcp/http",
    ]);
    expect(port(k, "ns/web:http").externalChain!.otherRules.map((e) => e.text)).toEqual(["counter accept"]);
    expect(port(k, "ns/x:p").firewallChain).toMatchObject({ flushed: true, allowedSources: [] });
    expect(k.staleChains.map((s) => s.chain)).toEqual(["firewall-GGGGGGGG-ns/x/tcp/p"]);
  });

  it("a NodePort rule that tests neither @nodeport-ips nor fib is a finding; mark-for-masquerade without a mark", () => {
    const text = [
      "add table ip kube-proxy",
      "add chain ip kube-proxy services",
      "add chain ip kube-proxy mark-for-masquerade",
      "add rule ip kube-proxy mark-for-masquerade counter",
      "add map ip kube-proxy service-nodeports { type inet_proto . inet_service : verdict ; }",
      "add rule ip kube-proxy services meta l4proto . th dport vmap @service-nodeports",
    ].join("\n");
    const k = decodeKubeProxyNft(parseNftText(text))[0]!;
    expect(k.dispatch.nodePorts).toMatchObject({ via: "fib-local", excludesLocalhost: false });
    expect(k.anomalies.map((a) => a.message)).toEqual([
      "NodePort dispatch rule tests neither @nodeport-ips nor fib daddr type local",
      "mark-for-masquerade does not set a mark bit",
    ]);
  });

  it("masquerading written as one rule (mark and 0x4000 != 0 … masquerade)", () => {
    const k = table(
      "add chain ip kube-proxy masquerading",
      "add rule ip kube-proxy masquerading mark and 0x4000 != 0 mark set mark xor 0x4000 masquerade fully-random",
    );
    const one = "mark and 0x4000 != 0 mark set mark xor 0x4000 masquerade fully-random";
    expect(k.masquerade.rule).toMatchObject({ fullyRandom: true, evidence: { text: one } });
    expect(k.masquerade.clearMark?.text).toBe(one);
    expect(k.masquerade.skipUnmarked?.text).toBe(one);
    expect(k.masquerade.mark).toBe(0x4000);
  });

  it("chains with '/' in their name that are not kube-proxy's are stale only when empty", () => {
    const k = table(...chains("custom/empty", "KUBE-SVC-XPGD46QRK7WJZT7O"));
    expect(k.staleChains.map((s) => [s.chain, s.kind])).toEqual([["custom/empty", undefined]]);
  });
});

describe("decodeKubeProxyNft / decodeKubeProxyTable inputs", () => {
  it("returns [] for a node without kube-proxy tables, IPv4 first otherwise", () => {
    expect(decodeKubeProxyNft(parseNftText("table inet filter {\n}\n"))).toEqual([]);
    const both = decodeKubeProxyNft(
      parseNftText("add table ip6 kube-proxy\nadd table ip kube-proxy\nadd table inet kube-proxy\n"),
    );
    expect(both.map((k) => k.family)).toEqual(["ip", "ip6"]);
  });

  it("throws KubeProxyNftError for another table", () => {
    const rs = parseNftText("add table inet kube-proxy\nadd table ip nat\n");
    expect(() => decodeKubeProxyTable(rs.tables[0]!)).toThrow(
      new KubeProxyNftError("not a kube-proxy table: inet kube-proxy"),
    );
    expect(() => decodeKubeProxyTable(rs.tables[1]!)).toThrow(KubeProxyNftError);
    expect(() => decodeKubeProxyTable(rs.tables[1]!)).toThrow("not a kube-proxy table: ip nat");
  });
});

describe("parseKubeProxyChainName", () => {
  const cases: { input: string; want: ReturnType<typeof parseKubeProxyChainName> }[] = [
    {
      input: "service-ULMVA6XW-ns1/svc1/tcp/p80",
      want: {
        kind: "service",
        hash: "ULMVA6XW",
        base: "ns1/svc1/tcp/p80",
        truncated: false,
        namespace: "ns1",
        name: "svc1",
        protocol: "tcp",
        portName: "p80",
        servicePortName: "ns1/svc1:p80",
      },
    },
    {
      input: "local-PLVUX2VM-web/frontend/tcp/http",
      want: {
        kind: "local",
        hash: "PLVUX2VM",
        base: "web/frontend/tcp/http",
        truncated: false,
        namespace: "web",
        name: "frontend",
        protocol: "tcp",
        portName: "http",
        servicePortName: "web/frontend:http",
      },
    },
    {
      input: "endpoint-JO2XBXZR-testing/service/tcp/http__10.180.0.1/80",
      want: {
        kind: "endpoint",
        hash: "JO2XBXZR",
        base: "testing/service/tcp/http__10.180.0.1/80",
        truncated: false,
        namespace: "testing",
        name: "service",
        protocol: "tcp",
        portName: "http",
        servicePortName: "testing/service:http",
        endpointIP: "10.180.0.1",
        endpointPort: 80,
      },
    },
    {
      input: "endpoint-T52T2ZYW-web/frontend/tcp/http__fd00.10.1..7/8080",
      want: {
        kind: "endpoint",
        hash: "T52T2ZYW",
        base: "web/frontend/tcp/http__fd00.10.1..7/8080",
        truncated: false,
        namespace: "web",
        name: "frontend",
        protocol: "tcp",
        portName: "http",
        servicePortName: "web/frontend:http",
        endpointIP: "fd00:10:1::7",
        endpointPort: 8080,
      },
    },
    {
      input: "external-IJTWSMUZ-shop/cart/tcp/",
      want: {
        kind: "external",
        hash: "IJTWSMUZ",
        base: "shop/cart/tcp/",
        truncated: false,
        namespace: "shop",
        name: "cart",
        protocol: "tcp",
        portName: "",
        servicePortName: "shop/cart",
      },
    },
    {
      input: "firewall-HVFWP5L3-ns5/svc5/tcp/p80",
      want: expect.objectContaining({ kind: "firewall", servicePortName: "ns5/svc5:p80" }),
    },
    {
      input: "endpoint-ABCDEFGH-ns/name/tcp/port__fd00.1.2.3.4.5.6.7...",
      // kube-proxy cut the name: the endpoint part is not read.
      want: expect.objectContaining({ kind: "endpoint", truncated: true, servicePortName: "ns/name:port" }),
    },
    { input: "services", want: undefined },
    { input: "mark-for-masquerade", want: undefined },
    { input: "KUBE-SVC-XPGD46QRK7WJZT7O", want: undefined },
    { input: "service-lowercase-ns/svc/tcp/p", want: undefined },
    { input: "other-ULMVA6XW-ns1/svc1/tcp/p80", want: undefined },
  ];
  for (const c of cases) {
    it(c.input, () => {
      expect(parseKubeProxyChainName(c.input)).toEqual(c.want);
    });
  }

  it("a truncated endpoint name has no endpoint IP or port", () => {
    const n = parseKubeProxyChainName("endpoint-ABCDEFGH-ns/name/tcp/port__fd00.1.2.3.4.5.6.7...")!;
    expect(n).not.toHaveProperty("endpointIP");
    expect(n).not.toHaveProperty("endpointPort");
    // …and a truncated service part leaves the name parts unset.
    expect(parseKubeProxyChainName("service-ABCDEFGH-ns/very-long-name...")).toEqual({
      kind: "service",
      hash: "ABCDEFGH",
      base: "ns/very-long-name...",
      truncated: true,
    });
  });

  it("fraction reduces", () => {
    expect([fraction(2, 4), fraction(0, 3), fraction(3, 3), fraction(6, 9)]).toEqual([
      { num: 1, den: 2 },
      { num: 0, den: 1 },
      { num: 1, den: 1 },
      { num: 2, den: 3 },
    ]);
  });
});
