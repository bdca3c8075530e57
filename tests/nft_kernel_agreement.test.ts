// The kernel is the oracle for nftables mode too: for each client kind and entry point the svc/NAME analysis reports
// from a node's `nft -j list ruleset`, load that very JSON into a network namespace with `nft -j -f`, send the same
// packet(s), read conntrack, and require the same verdict: forwarded (same endpoints, numgen shares within 4 binomial
// sigma, same SNAT per endpoint), dropped, rejected (ICMP), or not handled.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptyBundle } from "../src/bundle/bundle.ts";
import type { Bundle } from "../src/bundle/bundle.ts";
import { parseNftJson } from "../src/datapath/nft_json.ts";
import { explainService } from "../src/service/explain.ts";
import type { EndpointSlice, Service } from "../src/model/k8s.ts";
import type { KernelOracle } from "./helpers/kernel_oracle.ts";
import { requireNetns } from "./helpers/netns.ts";
import {
  type Compared,
  compareWithKernel,
  NFT_ORACLE_TOOLS,
  nftLoadOrder,
  openNftOracle,
} from "./helpers/nft_oracle.ts";
import { fixture, node, overallObjects, service, slice } from "./helpers/bundles.ts";

function bundle(json: string, services: Service[], slices: EndpointSlice[]): Bundle {
  const b = emptyBundle({ tool: "test" });
  b.objects.services.push(...services);
  b.objects.endpointSlices.push(...slices);
  b.objects.nodes.push(node("test-node", "192.168.0.2"));
  b.nodes.push({ name: "test-node", sections: { "nft-json": { stdout: json, exitCode: 0 } } });
  return b;
}

interface Case {
  name: string;
  json: string;
  bundle: Bundle;
  services: [string, string][];
}

const overall = fixture("nftables/TestOverallNFTablesRules.json");
const { services, slices } = overallObjects("test-node", true);
const p80 = [{ name: "p80", port: 80 }];
const repeated = (svc3: string[]) => ({
  services: [
    service("ns1", "svc1", {
      type: "ClusterIP",
      clusterIP: "172.30.0.41",
      ports: [{ name: "p80", port: 80, protocol: "TCP" }],
    }),
    service("ns3", "svc3", {
      type: "ClusterIP",
      clusterIP: "172.30.0.43",
      ports: [{ name: "p80", port: 80, protocol: "TCP" }],
    }),
    service("ns4", "svc4", {
      type: "ClusterIP",
      clusterIP: "172.30.0.44",
      ports: [{ name: "p80", port: 80, protocol: "TCP" }],
    }),
  ],
  slices: [
    slice("ns1", "svc1", [{ ip: "10.0.1.1" }], p80),
    slice("ns3", "svc3", svc3.map((ip) => ({ ip })), p80),
    slice("ns4", "svc4", [{ ip: "10.0.4.1" }], p80),
  ],
});
const stage = (n: string) => fixture(`nftables/TestSyncProxyRulesRepeated-${n}.json`);

const cases: Case[] = [
  {
    name: "TestOverallNFTablesRules",
    json: overall,
    bundle: bundle(overall, services, slices),
    services: [["ns1", "svc1"], ["ns2", "svc2"], ["ns3", "svc3"], ["ns4", "svc4"], ["ns5", "svc5"], ["ns6", "svc6"]],
  },
  {
    name: "TestSyncProxyRulesRepeated 08 (svc3: numgen mod 2)",
    json: stage("08-add-svc3-second-endpoint"),
    bundle: bundle(
      stage("08-add-svc3-second-endpoint"),
      ...Object.values(repeated(["10.0.3.2", "10.0.3.3"])) as [Service[], EndpointSlice[]],
    ),
    services: [["ns1", "svc1"], ["ns3", "svc3"], ["ns4", "svc4"]],
  },
  {
    name: "TestSyncProxyRulesRepeated 09 (svc3 emptied: reject; stale flushed chains)",
    json: stage("09-svc3-endpoints-emptied-chains-flushed-not-deleted"),
    bundle: bundle(
      stage("09-svc3-endpoints-emptied-chains-flushed-not-deleted"),
      ...Object.values(repeated(["10.0.3.2", "10.0.3.3"])) as [Service[], EndpointSlice[]],
    ),
    services: [["ns3", "svc3"]],
  },
];

const tally: { name: string; compared: Compared[] }[] = [];

describe.runIf(requireNetns(NFT_ORACLE_TOOLS))("nftables analysis agrees with the kernel", () => {
  for (const c of cases) {
    describe(c.name, () => {
      let oracle: KernelOracle;
      beforeAll(async () => {
        oracle = await openNftOracle({ json: c.json });
      });
      afterAll(async () => {
        await oracle?.close();
      });

      it("the namespace holds the very ruleset the analysis read (nft -j list ruleset back)", async () => {
        const back = parseNftJson(await oracle.node.run(["nft", "-j", "list", "ruleset"]));
        const want = parseNftJson(c.json);
        const rules = (rs: typeof back) =>
          rs.tables.flatMap((t) =>
            [...t.chains.values()].flatMap((ch) =>
              ch.rules.map((r) => `${ch.name}: ${r.text}${r.comment ? ` "${r.comment}"` : ""}`)
            )
          );
        const elements = (rs: typeof back) =>
          rs.tables.flatMap((t) =>
            [...t.sets.values()].flatMap((s) => s.elements.map((e) => `${s.name}: ${e.text} ${e.comment ?? ""}`))
          );
        expect(rules(back)).toEqual(rules(want));
        expect(elements(back).sort()).toEqual(elements(want).sort());
      });

      for (const [ns, name] of c.services) {
        it(`${ns}/${name}: every client verdict matches conntrack`, async () => {
          const report = explainService(c.bundle, ns, name);
          const compared = await compareWithKernel(oracle, report);
          expect(compared.length).toBeGreaterThan(0);
          tally.push({ name: `${c.name} ${ns}/${name}`, compared });
        });
      }
    });
  }

  afterAll(() => {
    const n = tally.reduce((s, t) => s + t.compared.length, 0);
    const kinds = new Map<string, number>();
    for (const t of tally) for (const c of t.compared) kinds.set(c.analysis, (kinds.get(c.analysis) ?? 0) + 1);
    console.log(
      `nft kernel agreement: ${n} client verdicts compared (${[...kinds].map(([k, v]) => `${v} ${k}`).join(", ")})`,
    );
  });
});

describe("nftLoadOrder", () => {
  it("puts chains before the maps whose elements name them, and keeps each chain's rule order", () => {
    const doc = JSON.parse(nftLoadOrder(overall)) as {
      nftables: Record<string, { name?: string; chain?: string; handle?: number }>[];
    };
    const kinds = doc.nftables.map((o) => Object.keys(o)[0]!);
    const last = (k: string) => kinds.lastIndexOf(k);
    const first = (k: string) => kinds.indexOf(k);
    expect(kinds[0]).toBe("metainfo");
    expect(last("table")).toBeLessThan(first("chain"));
    expect(last("chain")).toBeLessThan(first("map"));
    expect(Math.max(last("map"), last("set"))).toBeLessThan(first("rule"));
    const handles = doc.nftables.filter((o) => o.rule?.chain === "masquerading").map((o) => o.rule!.handle);
    expect(handles).toEqual([53, 54, 55]);
    expect(doc.nftables).toHaveLength((JSON.parse(overall) as { nftables: unknown[] }).nftables.length);
  });

  it("refuses what is not an nft -j document", () => {
    expect(() => nftLoadOrder('{"tables": []}')).toThrow(
      new Error('not an nft -j document: expected {"nftables": [...]}'),
    );
  });
});
