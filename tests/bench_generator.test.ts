/**
 * The benchmark's fixture generator (bench/*.ts), at small sizes: the synthetic cluster plan, kube-proxy's chain-name
 * hashes and probabilities checked against real kube-proxy output, the iptables-save and nft -j dumps checked rule by
 * rule against the shapes real dumps have (tests/fixtures/node-format, tests/fixtures/nftables), the API objects read
 * back by the bundle reader, and, as root with the netns harness, real `iptables-nft-restore` / `nft -j -f` accepting
 * a generated 50-Service dump and printing it back unchanged (and `nft list table` printing what the bench's text form
 * holds).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { ipv4, permutation, planCluster, PlanError, servicePortName } from "../bench/cluster_plan.ts";
import { iptablesSave, LARGE_CLUSTER_ENDPOINTS, savedProbability, serviceChains } from "../bench/gen_iptables.ts";
import { nftJsonText, nftRulesetJson, nftRulesetText, nftServiceChains } from "../bench/gen_nftables.ts";
import { objectFiles, uid } from "../bench/gen_objects.ts";
import { base32, endpointHash, nftChainBase, servicePortHash } from "../bench/kube_hash.ts";
import { fixtureDir, GENERATOR_VERSION, MANIFEST, readManifest, writeFixture } from "../bench/write_fixture.ts";
import { bundleFromFiles } from "../src/bundle/decode.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { parseIptablesSave } from "../src/datapath/iptables_save.ts";
import { parseNftJson } from "../src/datapath/nft_json.ts";
import type { NftRuleset } from "../src/datapath/nft_model.ts";
import { parseNftText } from "../src/datapath/nft_text.ts";
import { decodeKubeProxyNft } from "../src/datapath/kube_proxy_nft.ts";
import { createNetns, loadIptables, readIptables, requireNetns } from "./helpers/netns.ts";

const FIX = join(import.meta.dirname, "fixtures");
const read = (p: string): string => readFileSync(join(FIX, p), "utf8");

describe("cluster plan", () => {
  test("20 Services: sizes, address plan, NodePorts, names", () => {
    const plan = planCluster({ services: 20 });
    expect(plan.services).toHaveLength(20);
    expect(plan.nodes.map((n) => n.name)).toEqual(["node-1", "node-2", "node-3"]);
    expect(plan.dumpNode.name).toBe("node-1");
    expect(plan.services.filter((s) => s.type === "NodePort").map((s) => [s.index, s.nodePort])).toEqual([[0, 30000], [10, 30001]]);
    expect(plan.services[3]).toMatchObject({
      namespace: "team-000",
      name: "app-00003",
      clusterIP: "10.96.0.13",
      portName: "http",
      port: 80,
      targetPort: 8080,
      type: "ClusterIP",
    });
    expect(plan.services.map((s) => s.portName).slice(0, 3)).toEqual(["http", "https", "grpc"]);
    for (const s of plan.services) {
      expect(s.endpoints).toHaveLength(5);
      // every endpoint IP inside its node's podCIDR /24
      for (const e of s.endpoints) {
        const node = plan.nodes.find((n) => n.name === e.nodeName)!;
        expect(e.ip.split(".").slice(0, 3).join(".") + ".0/24").toBe(node.podCIDR);
      }
      // kube-proxy's order: sorted by "IP:port" text
      const texts = s.endpoints.map((e) => `${e.ip}:${s.targetPort}`);
      expect(texts).toEqual([...texts].sort());
    }
    const allIps = plan.services.flatMap((s) => s.endpoints.map((e) => e.ip));
    expect(new Set(allIps).size).toBe(100);
    expect([...plan.writeOrder].sort((a, b) => a - b)).toEqual([...Array(20).keys()]);
  });

  test("10,000 Services fit 250 nodes of at most 200 pods, and the middle Service spreads over 5 nodes", () => {
    const plan = planCluster({ services: 10000 });
    expect(plan.nodes).toHaveLength(250);
    const perNode = new Map<string, number>();
    for (const s of plan.services) for (const e of s.endpoints) perNode.set(e.nodeName, (perNode.get(e.nodeName) ?? 0) + 1);
    expect(Math.max(...perNode.values())).toBe(200);
    const mid = plan.services[5000]!;
    expect(servicePortName(mid)).toBe("team-025/app-05000:grpc");
    expect(new Set(mid.endpoints.map((e) => e.nodeName)).size).toBe(5);
    expect(plan.nodes[249]!.internalIP).toBe("172.18.0.251");
  });

  test("deterministic: the same N gives the same plan", () => {
    expect(planCluster({ services: 37 })).toEqual(planCluster({ services: 37 }));
    expect(permutation(10, 3)).toEqual(permutation(10, 3));
    expect(permutation(10, 3)).not.toEqual(permutation(10, 4));
  });

  test.each([
    { name: "zero Services", input: { services: 0 }, want: "services must be a positive integer, got 0" },
    { name: "fractional Services", input: { services: 2.5 }, want: "services must be a positive integer, got 2.5" },
    { name: "no endpoints", input: { services: 3, endpointsPerService: 0 }, want: "endpointsPerService must be a positive integer, got 0" },
    {
      name: "too many pods per node",
      input: { services: 3, podsPerNode: 300 },
      want: "podsPerNode must be 1…252 (a node's /24 minus network, gateway and broadcast), got 300",
    },
    {
      name: "more pods than the /9 holds",
      input: { services: 1_400_000 },
      want: "1400000 services × 5 endpoints need 35000 nodes of 200 pods; the pod CIDR 10.128.0.0/9 has room for 32768",
    },
  ])("rejects $name", ({ input, want }) => {
    expect(() => planCluster(input)).toThrow(PlanError);
    expect(() => planCluster(input)).toThrow(want);
  });

  test("30,000 and 100,000 Services (issue 12): a /9 pod CIDR clear of the Service CIDR, unique pod IPs and NodePorts", () => {
    for (const services of [30_000, 100_000]) {
      const plan = planCluster({ services });
      expect(plan.clusterCIDR).toBe("10.128.0.0/9");
      expect(plan.nodes).toHaveLength(services * 5 / 200);
      const ips = new Set<string>();
      for (const svc of plan.services) {
        for (const e of svc.endpoints) {
          const node = plan.nodes.find((n) => n.name === e.nodeName)!;
          expect(e.ip.split(".").slice(0, 3).join(".") + ".0/24").toBe(node.podCIDR);
          ips.add(e.ip);
        }
      }
      expect(ips.size).toBe(services * 5);
      const ports = plan.services.filter((s) => s.type === "NodePort").map((s) => s.nodePort!);
      expect(new Set(ports).size).toBe(ports.length);
      expect(Math.min(...ports)).toBeGreaterThanOrEqual(30000);
      expect(Math.max(...ports)).toBeLessThanOrEqual(32767);
      // no pod address inside the Service CIDR 10.96.0.0/12 (10.96.0.0-10.111.255.255)
      expect([...ips].some((ip) => { const b = Number(ip.split(".")[1]); return ip.startsWith("10.") && b >= 96 && b <= 111; })).toBe(false);
    }
  });

  test.each([
    { input: 0, want: "0.0.0.0" },
    { input: (10 << 24 | 96 << 16) + 266, want: "10.96.1.10" },
    { input: 0xffffffff, want: "255.255.255.255" },
  ])("ipv4($input) = $want", ({ input, want }) => expect(ipv4(input)).toBe(want));
});

describe("kube-proxy hashes and probabilities, against real kube-proxy output", () => {
  test.each([
    { input: "", want: "" },
    { input: "f", want: "MY" },
    { input: "fo", want: "MZXQ" },
    { input: "foo", want: "MZXW6" },
    { input: "foob", want: "MZXW6YQ" },
    { input: "fooba", want: "MZXW6YTB" },
    { input: "foobar", want: "MZXW6YTBOI" },
  ])("base32($input) = $want (RFC 4648 vectors, unpadded)", ({ input, want }) => {
    expect(base32(new TextEncoder().encode(input))).toBe(want);
  });

  test("every KUBE-SVC / KUBE-EXT / KUBE-SEP name in a real kube-proxy dump is reproduced", () => {
    const text = read("kube-proxy/TestOverallIPTablesRulesWithMultipleServices.v1.27.iptables-save");
    let checked = 0;
    for (const line of text.split("\n")) {
      // KUBE-SERVICES -> KUBE-SVC/KUBE-EXT: comment "ns/svc:port cluster IP" (or external IP / loadbalancer IP)
      const svc = /--comment "?(\S+?) (?:cluster IP|external IP|loadbalancer IP)"? .*-p (\w+).* -j KUBE-(?:SVC|EXT|FW)-([A-Z2-7]{16})$/
        .exec(line);
      if (svc) {
        expect(servicePortHash(svc[1]!, svc[2]!), line).toBe(svc[3]);
        checked++;
      }
      // KUBE-SEP DNAT rule: chain hash from servicePortName + protocol + endpoint
      const sep = /^-A KUBE-SEP-([A-Z2-7]{16}) .*--comment "?([^" ]+)"? .*-p (\w+) .*--to-destination (\S+)$/.exec(line);
      if (sep) {
        expect(endpointHash(sep[2]!, sep[3]!, sep[4]!), line).toBe(sep[1]);
        checked++;
      }
    }
    expect(checked).toBe(15);
  });

  test("every service/endpoint chain name in a real kube-proxy nftables ruleset is reproduced", () => {
    const doc = JSON.parse(read("nftables/TestOverallNFTablesRules.json")) as { nftables: Record<string, { name?: string }>[] };
    const names = doc.nftables.flatMap((o) => (o.chain?.name ? [o.chain.name] : []));
    const perService = names.filter((n) => /^(service|external|endpoint|firewall)-[A-Z2-7]{8}-/.test(n));
    expect(perService.length).toBe(16);
    for (const n of perService) {
      const m = /^(\w+)-([A-Z2-7]{8})-(.+)$/.exec(n)!;
      expect(`${m[1]}-${nftChainBase(m[3]!)}`).toBe(n);
    }
  });

  test.each([
    { input: 5, want: "0.20000000019" },
    { input: 4, want: "0.25000000000" },
    { input: 3, want: "0.33333333349" },
    { input: 2, want: "0.50000000000" },
  ])("savedProbability($input) = $want", ({ input, want }) => expect(savedProbability(input)).toBe(want));

  test("probabilities match what iptables-save printed on a real kernel (node-format fixtures)", () => {
    // kube-proxy wrote 0.3333333333 / 0.5000000000 for 3 endpoints; the kernel printed these back.
    const text = read("node-format/TestEndpointSliceE2E.v1.20.nft.iptables-save");
    const printed = [...text.matchAll(/--probability (\S+)/g)].map((m) => m[1]);
    expect(printed).toEqual([savedProbability(3), savedProbability(2)]);
  });
});

/** A rule's layout with names, addresses, ports and hashes replaced, to compare generated and real rules. */
function shape(rule: string): string {
  return rule
    .replace(/KUBE-(SVC|SEP|EXT|FW|SVL)-[A-Z2-7]{16}/g, "KUBE-$1-H")
    .replace(/[a-z0-9-]+\/[a-z0-9-]+:[a-z0-9-]+/g, "SPN")
    .replace(/\d+\.\d+\.\d+\.\d+(\/\d+)?/g, "IP")
    .replace(/IP:\d+/g, "IP:PORT")
    .replace(/--dport \d+/g, "--dport PORT")
    .replace(/--probability \S+/g, "--probability P")
    .replace(/"(SPN)"/g, "$1");
}

describe("iptables-save dump", () => {
  const plan = planCluster({ services: 30 });
  const text = iptablesSave(plan);

  test("parses, tables and chains in iptables-nft-save order, every declared chain present", () => {
    const dump = parseIptablesSave(text);
    expect([...dump.tables.keys()]).toEqual(["mangle", "filter", "nat"]);
    expect(dump.generatedBy).toBe("v1.8.9 (nf_tables)");
    expect(dump.backend).toBe("nf_tables");
    const nat = dump.tables.get("nat")!;
    const names = [...nat.chains.keys()];
    expect(names.slice(0, 4)).toEqual(["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"]);
    const user = names.slice(4);
    expect(user).toEqual([...user].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    // 30 KUBE-SVC, 150 KUBE-SEP, 3 KUBE-EXT (NodePorts 0, 10, 20) + 6 fixed chains
    expect(user.filter((c) => c.startsWith("KUBE-SVC-"))).toHaveLength(30);
    expect(user.filter((c) => c.startsWith("KUBE-SEP-"))).toHaveLength(150);
    expect(user.filter((c) => c.startsWith("KUBE-EXT-"))).toHaveLength(3);
    expect(nat.chains.get("PREROUTING")!.counters).toEqual({ packets: 1180532, bytes: 72194410 });
    const services = nat.chains.get("KUBE-SERVICES")!;
    expect(services.rules).toHaveLength(31);
    expect(services.rules.at(-1)!.target).toBe("KUBE-NODEPORTS");
  });

  test("one Service's rules, in kube-proxy's layout as iptables-save prints it", () => {
    const svc = plan.services[10]!; // a NodePort
    const ch = serviceChains(svc);
    const eps = svc.endpoints.map((e) => `${e.ip}:${svc.targetPort}`);
    const lines = text.split("\n");
    expect(lines.filter((l) => l.startsWith(`-A ${ch.svc} `))).toEqual([
      `-A ${ch.svc} ! -s 10.244.0.0/16 -d 10.96.0.20/32 -p tcp -m comment --comment "team-000/app-00010:https cluster IP" -m tcp --dport 443 -j KUBE-MARK-MASQ`,
      `-A ${ch.svc} -m comment --comment "team-000/app-00010:https -> ${eps[0]}" -m statistic --mode random --probability 0.20000000019 -j ${ch.seps[0]}`,
      `-A ${ch.svc} -m comment --comment "team-000/app-00010:https -> ${eps[1]}" -m statistic --mode random --probability 0.25000000000 -j ${ch.seps[1]}`,
      `-A ${ch.svc} -m comment --comment "team-000/app-00010:https -> ${eps[2]}" -m statistic --mode random --probability 0.33333333349 -j ${ch.seps[2]}`,
      `-A ${ch.svc} -m comment --comment "team-000/app-00010:https -> ${eps[3]}" -m statistic --mode random --probability 0.50000000000 -j ${ch.seps[3]}`,
      `-A ${ch.svc} -m comment --comment "team-000/app-00010:https -> ${eps[4]}" -j ${ch.seps[4]}`,
    ]);
    expect(lines.filter((l) => l.startsWith(`-A ${ch.seps[0]} `))).toEqual([
      `-A ${ch.seps[0]} -s ${svc.endpoints[0]!.ip}/32 -m comment --comment "team-000/app-00010:https" -j KUBE-MARK-MASQ`,
      `-A ${ch.seps[0]} -p tcp -m comment --comment "team-000/app-00010:https" -m tcp -j DNAT --to-destination ${eps[0]}`,
    ]);
    expect(lines.filter((l) => l.includes(`-j ${ch.ext}`))).toEqual([
      `-A KUBE-NODEPORTS -p tcp -m comment --comment "team-000/app-00010:https" -m tcp --dport 30001 -j ${ch.ext}`,
    ]);
    expect(lines.filter((l) => l.startsWith(`-A ${ch.ext} `))).toEqual([
      `-A ${ch.ext} -m comment --comment "masquerade traffic for team-000/app-00010:https external destinations" -j KUBE-MARK-MASQ`,
      `-A ${ch.ext} -j ${ch.svc}`,
    ]);
  });

  test("above 1,000 endpoints (kube-proxy's large cluster mode) the endpoint jumps and KUBE-SEP rules carry no comment, and nothing else changes", () => {
    // pkg/proxy/iptables/proxier.go: largeClusterMode = totalEndpoints > largeClusterEndpointsThreshold (1000);
    // appendServiceCommentLocked then writes no `-m comment` (KUBE-SVC's endpoint jumps, both rules of a KUBE-SEP)
    expect(LARGE_CLUSTER_ENDPOINTS).toBe(1000);
    const at = (services: number) => {
      const p = planCluster({ services });
      return { p, t: iptablesSave(p), endpoints: p.services.reduce((n, x) => n + x.endpoints.length, 0) };
    };
    const small = at(200); // 1,000 endpoints: not above the threshold
    const big = at(201); // 1,005
    expect([small.endpoints, big.endpoints]).toEqual([1000, 1005]);
    const svc = big.p.services[10]!;
    const ch = serviceChains(svc);
    const eps = svc.endpoints.map((e) => `${e.ip}:${svc.targetPort}`);
    const lines = big.t.split("\n");
    expect(lines.filter((l) => l.startsWith(`-A ${ch.svc} `))).toEqual([
      `-A ${ch.svc} ! -s 10.244.0.0/16 -d ${svc.clusterIP}/32 -p tcp -m comment --comment "${ch.servicePortName} cluster IP" -m tcp --dport ${svc.port} -j KUBE-MARK-MASQ`,
      `-A ${ch.svc} -m statistic --mode random --probability 0.20000000019 -j ${ch.seps[0]}`,
      `-A ${ch.svc} -m statistic --mode random --probability 0.25000000000 -j ${ch.seps[1]}`,
      `-A ${ch.svc} -m statistic --mode random --probability 0.33333333349 -j ${ch.seps[2]}`,
      `-A ${ch.svc} -m statistic --mode random --probability 0.50000000000 -j ${ch.seps[3]}`,
      `-A ${ch.svc} -j ${ch.seps[4]}`,
    ]);
    expect(lines.filter((l) => l.startsWith(`-A ${ch.seps[0]} `))).toEqual([
      `-A ${ch.seps[0]} -s ${svc.endpoints[0]!.ip}/32 -j KUBE-MARK-MASQ`,
      `-A ${ch.seps[0]} -p tcp -m tcp -j DNAT --to-destination ${eps[0]}`,
    ]);
    // every other line is the same as below the threshold
    const uncomment = (t: string) => t.split("\n").map((l) => (/^-A KUBE-(SVC|SEP)-/.test(l) && !l.includes(" cluster IP\"") ? l.replace(/ -m comment --comment "[^"]*"/, "") : l));
    expect(small.t.split("\n").filter((l) => /^-A KUBE-SEP-/.test(l)).every((l) => l.includes("-m comment"))).toBe(true);
    expect(uncomment(big.t)).toEqual(lines);
    // the analysis reads no comment: a Service answers the same on the small plan's dump with those comments taken out
    const nodeName = small.p.dumpNode.name;
    const bundle = (dump: string) =>
      bundleFromFiles([
        ...Object.entries(objectFiles(small.p)).map(([path, text]) => ({ path, text })),
        { path: `nodes/${nodeName}/iptables-save.txt`, text: dump },
        { path: `nodes/${nodeName}/proxy-mode.txt`, text: "iptables\n" },
      ], "bench");
    const answer = (dump: string) =>
      explainService(bundle(dump), "team-000", "app-00010").nodes.map((n) => ({
        drift: n.drift.map((d) => d.kind),
        entries: n.ports.flatMap((p) => p.entryPoints.map((e) => ({
          kind: e.kind,
          shares: e.balancing.shares.map((x) => [x.endpoint, x.share]),
          clients: e.clients.map((c) => [c.client, c.outcome, c.masquerade, c.endpoints.map((x) => [x.endpoint, x.share, x.masqueraded])]),
        }))),
      }));
    const withComments = answer(small.t);
    expect(withComments[0]!.entries.find((e) => e.kind === "ClusterIP")!.shares).toHaveLength(5);
    expect(answer(uncomment(small.t).join("\n"))).toEqual(withComments);
  });

  test("every KUBE-* rule has a shape that real iptables-save output of kube-proxy rules has", () => {
    const real = new Set<string>();
    for (const f of readdirSync(join(FIX, "node-format")).filter((f) => f.endsWith(".nft.iptables-save"))) {
      for (const l of read(`node-format/${f}`).split("\n")) if (l.startsWith("-A KUBE-")) real.add(shape(l));
    }
    const generated = new Set(text.split("\n").filter((l) => l.startsWith("-A KUBE-")).map(shape));
    expect(generated.size).toBe(18);
    expect([...generated].filter((s) => !real.has(s))).toEqual([]);
  });

  test("the cascade gives each endpoint 1/5 of new connections, as the kernel applies the printed values", () => {
    const dump = parseIptablesSave(text);
    const chain = dump.tables.get("nat")!.chains.get(serviceChains(plan.services[7]!).svc)!;
    let rest = 1;
    const shares: number[] = [];
    for (const r of chain.rules.slice(1)) {
      const p = r.raw.match(/--probability (\S+)/)?.[1];
      const q = p === undefined ? 1 : Number(p);
      shares.push(rest * q);
      rest *= 1 - q;
    }
    expect(shares).toHaveLength(5);
    for (const s of shares) expect(s).toBeCloseTo(0.2, 9);
  });

  test("options: iptables-nft-save header, zero counters", () => {
    const t = iptablesSave(planCluster({ services: 1 }), { program: "iptables-nft-save", zeroCounters: true, date: "Sat Nov 21 05:16:50 2026" });
    expect(t.split("\n")[0]).toBe("# Generated by iptables-nft-save v1.8.9 (nf_tables) on Sat Nov 21 05:16:50 2026");
    expect(t).toContain(":PREROUTING ACCEPT [0:0]");
    expect(t).not.toMatch(/ACCEPT \[[1-9]/);
  });
});

/** JSON text with object keys sorted at every level. */
function sortedJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(",")}]`;
  return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${sortedJson((v as Record<string, unknown>)[k])}`).join(",")}}`;
}

/** nft -j objects without handles, with set elements sorted: what must survive a load + list round trip. */
function normaliseNft(text: string): string[] {
  const doc = JSON.parse(text) as { nftables: Record<string, Record<string, unknown>>[] };
  return doc.nftables.flatMap((o) => {
    const [k, body] = Object.entries(o)[0]!;
    if (k === "metainfo") return [];
    const b: Record<string, unknown> = { ...body };
    delete b.handle;
    if (k === "set" || k === "map") {
      delete b.comment; // nft 1.0.6 drops set comments given in JSON input
      if (Array.isArray(b.elem)) b.elem = b.elem.map(sortedJson).sort();
    }
    return [sortedJson({ [k]: b })];
  });
}

/** A rule's chain kind (per-Service chains by prefix, base chains by name) and expressions, with values replaced. */
function nftShape(rule: Record<string, unknown>): string {
  const chain = String(rule.chain);
  const kind = /^(service|external|endpoint)-[A-Z2-7]{8}-/.exec(chain)?.[1] ?? chain;
  const expr = JSON.stringify(rule.expr)
    .replace(/"(service|external|endpoint)-[A-Z2-7]{8}-[^"]+"/g, '"$1-CHAIN"')
    .replace(/"\d+\.\d+\.\d+\.\d+"/g, '"IP"')
    .replace(/"(len|port|mod)":\d+/g, '"$1":N')
    .replace(/\[\d+,\{"goto"/g, '[I,{"goto"')
    // a numgen vmap of N endpoints has the shape of one of 1 endpoint
    .replace(/(\[I,\{"goto":\{"target":"endpoint-CHAIN"\}\}\])(,\1)+/g, "$1");
  return `${kind} ${rule.comment ?? ""} ${expr}`;
}

type NftDoc = { nftables: Record<string, Record<string, unknown>>[] };

describe("nft -j ruleset", () => {
  const plan = planCluster({ services: 12 });
  const text = nftRulesetJson(plan);
  const doc = JSON.parse(text) as NftDoc;

  test("one line with nft's separators, objects in listing order, unique increasing handles", () => {
    expect(text.endsWith("\n")).toBe(true);
    expect(text.trimEnd()).not.toContain("\n");
    expect(text.startsWith('{"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}, ')).toBe(true);
    const kinds = doc.nftables.map((o) => Object.keys(o)[0]);
    const firstRule = kinds.indexOf("rule");
    const firstChain = kinds.indexOf("chain");
    expect(kinds.slice(firstChain, firstRule).every((k) => k === "chain")).toBe(true);
    expect(kinds.slice(firstRule).every((k) => k === "rule")).toBe(true);
    const handles = doc.nftables.slice(2).map((o) => Object.values(o)[0]!.handle as number);
    expect(handles).toEqual([...handles].sort((a, b) => a - b));
    expect(new Set(handles).size).toBe(handles.length);
  });

  test("keys of every object kind in the same order real nft prints them", () => {
    const real = JSON.parse(read("nftables/TestOverallNFTablesRules.json")) as typeof doc;
    const keysOf = (d: typeof doc) => new Set(d.nftables.map((o) => `${Object.keys(o)[0]}: ${Object.keys(Object.values(o)[0]!).join(",")}`));
    const want = keysOf(real);
    for (const k of keysOf(JSON.parse(read("nftables/baseRules.json")) as typeof doc)) want.add(k);
    expect([...keysOf(doc)].filter((k) => !want.has(k))).toEqual([]);
  });

  test("every rule has a shape real kube-proxy rulesets have", () => {
    const shapes = (d: NftDoc) => new Set(d.nftables.flatMap((o) => (o.rule ? [nftShape(o.rule)] : [])));
    const real = shapes(JSON.parse(read("nftables/TestOverallNFTablesRules.json")) as NftDoc);
    for (const x of shapes(JSON.parse(read("nftables/baseRules.json")) as NftDoc)) real.add(x);
    const got = shapes(doc);
    expect(got.size).toBe(29);
    expect([...got].filter((x) => !real.has(x))).toEqual([]);
  });

  test("the project's nft -j parser and kube-proxy decoder read it: every ServicePort, 1/5 shares, no anomalies", () => {
    const [t] = decodeKubeProxyNft(parseNftJson(text));
    expect(t!.anomalies).toEqual([]);
    expect(t!.localDetector).toMatchObject({ kind: "cidr", value: "10.244.0.0/16" });
    expect(t!.servicePorts).toHaveLength(12);
    const mid = t!.servicePorts.find((s) => s.servicePortName === servicePortName(plan.services[6]!))!;
    expect(mid.clusterIPs).toEqual(["10.96.0.16"]);
    expect(mid.clusterChain!.endpoints.map((e) => [e.dnatTo?.text, e.share])).toEqual(
      plan.services[6]!.endpoints.map((e) => [`${e.ip}:8080`, { num: 1, den: 5 }]),
    );
    expect(t!.servicePorts.find((s) => s.servicePortName === servicePortName(plan.services[10]!))!.nodePorts).toEqual([30001]);
  });

  test("chain names and jansson-style text", () => {
    expect(nftServiceChains(plan.services[0]!)).toMatchObject({
      service: `service-${nftChainBase("team-000/app-00000/tcp/http")}`,
      external: `external-${nftChainBase("team-000/app-00000/tcp/http")}`,
    });
    expect(nftJsonText({ a: [1, "x/y", null], b: { c: true } })).toBe('{"a": [1, "x/y", null], "b": {"c": true}}');
  });
});

describe("API objects", () => {
  const plan = planCluster({ services: 15 });
  const files = objectFiles(plan);

  test("the bundle reader takes them: every Service, EndpointSlice and Node, no warnings", () => {
    const b = bundleFromFiles(Object.entries(files).map(([path, text]) => ({ path, text })), "bench");
    expect(b.warnings).toEqual([]);
    expect(b.objects.services).toHaveLength(15);
    expect(b.objects.endpointSlices).toHaveLength(15);
    expect(b.objects.nodes).toHaveLength(3);
    const slice = b.objects.endpointSlices.find((s) => s.metadata.labels?.["kubernetes.io/service-name"] === "app-00010")!;
    expect(slice.endpoints!.map((e) => e.addresses[0])).toEqual(plan.services[10]!.endpoints.map((e) => e.ip));
    expect(slice.ports).toEqual([{ name: "https", port: 8443, protocol: "TCP" }]);
    const svc = b.objects.services.find((s) => s.metadata.name === "app-00010")!;
    expect(svc.spec).toMatchObject({ type: "NodePort", clusterIP: "10.96.0.20", ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: 8443, nodePort: 30001 }] });
  });

  test("kubectl's JSON form: sorted keys, 4-space indent, List wrapper", () => {
    const s = files["services.json"];
    expect(s.startsWith('{\n    "apiVersion": "v1",\n    "items": [\n')).toBe(true);
    expect(s.endsWith('    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')).toBe(true);
    expect(uid("x")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(uid("x")).toBe(uid("x"));
  });
});

describe("fixture directory", () => {
  const out = mkdtempSync(join(tmpdir(), "knp-bench-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  test.each([
    { name: "iptables, every object", mode: "iptables" as const, objects: "all" as const, dir: "iptables-20", dump: "iptables-save.txt", services: 20 },
    { name: "iptables, the query's objects", mode: "iptables" as const, objects: "query" as const, dir: "iptables-20-query", dump: "iptables-save.txt", services: 1 },
    { name: "nftables", mode: "nftables" as const, objects: "all" as const, dir: "nftables-20", dump: "nft-json.txt", services: 20 },
    { name: "nftables, nft list text", mode: "nftables-text" as const, objects: "all" as const, dir: "nftables-text-20", dump: "nft-text.txt", services: 20 },
  ])("$name", ({ mode, objects, dir, dump, services }) => {
    const m = writeFixture(out, mode, { services: 20 }, objects);
    expect(m.dir).toBe(join(out, dir));
    expect(fixtureDir(out, mode, 20, objects)).toBe(m.dir);
    expect(m.dumpPath).toBe(join(out, dir, "nodes", "node-1", dump));
    expect(m.query).toMatchObject({ namespace: "team-000", name: "app-00010", servicePortName: "team-000/app-00010:https", clusterIP: "10.96.0.20" });
    expect(readFileSync(join(m.dir, "nodes/node-1/proxy-mode.txt"), "utf8")).toBe(mode === "iptables" ? "iptables" : "nftables");
    expect(readdirSync(m.dir).sort()).toEqual([MANIFEST, "capture.yaml", "endpointslices.json", "nodes", "nodes.json", "services.json"]);
    const svcs = JSON.parse(readFileSync(join(m.dir, "services.json"), "utf8")) as { items: unknown[] };
    expect(svcs.items).toHaveLength(services);
    expect(readManifest(m.dir)).toEqual(m);
  });

  test("the nft list text fixture answers as the nft -j one does, Service by Service (rule numbers aside)", () => {
    const json = readBundle(writeFixture(out, "nftables", { services: 20 }).dir);
    const text = readBundle(writeFixture(out, "nftables-text", { services: 20 }).dir);
    const plan = planCluster({ services: 20 });
    // nft -j rules are known by kernel handle, text ones by line: drop both numbers, and the source directory
    const strip = (r: unknown) =>
      JSON.stringify(r).replace(/,"handle":\d+/g, "").replace(/ # handle \d+/g, "").replace(/"line":\d+/g, '"line":0')
        .replace(/\b(line|handle) \d+(, \d+)*/g, "at N").replace(/"source":"[^"]*"/g, "");
    for (const svc of plan.services) {
      const a = explainService(json, svc.namespace, svc.name);
      const b = explainService(text, svc.namespace, svc.name);
      expect(b.nodes[0]!.proxyMode.mode).toBe("nftables");
      expect(strip(b)).toBe(strip(a));
    }
  });

  test("readManifest refuses a missing, broken or older manifest", () => {
    const m = writeFixture(out, "iptables", { services: 3 });
    writeFileSync(join(m.dir, MANIFEST), JSON.stringify({ ...m, generatorVersion: GENERATOR_VERSION - 1 }));
    expect(readManifest(m.dir)).toBeUndefined();
    writeFileSync(join(m.dir, MANIFEST), "{");
    expect(readManifest(m.dir)).toBeUndefined();
    expect(readManifest(join(out, "nope"))).toBeUndefined();
  });
});

describe.runIf(requireNetns(["nft"]))("real iptables and nft accept the generated 50-Service dumps", () => {
  const plan = planCluster({ services: 50 });
  const out = mkdtempSync(join(tmpdir(), "knp-bench-nft-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  test("iptables-nft-restore loads the iptables-save dump and iptables-nft-save prints it back unchanged", async () => {
    const ns = await createNetns("bench");
    try {
      const text = iptablesSave(plan, { program: "iptables-nft-save" });
      await loadIptables(ns, text, { backend: "nft", family: 4, noflush: false });
      const saved = await readIptables(ns, "nft", 4);
      const strip = (t: string) => t.split("\n").filter((l) => !l.startsWith("#")).join("\n").replace(/ACCEPT \[\d+:\d+\]/g, "ACCEPT [0:0]");
      expect(strip(saved)).toBe(strip(text));
    } finally {
      await ns.destroy();
    }
  });

  test("nft -j -f loads the ruleset and nft -j list ruleset prints the same objects", async () => {
    const ns = await createNetns("bench");
    try {
      const text = nftRulesetJson(plan);
      // nft's JSON input resolves map elements' goto targets at once: give it the chains before the sets and maps.
      const doc = JSON.parse(text) as NftDoc;
      const rank: Record<string, number> = { metainfo: 0, table: 1, chain: 2, set: 3, map: 3, rule: 4 };
      const input = JSON.stringify({ nftables: [...doc.nftables].sort((a, b) => rank[Object.keys(a)[0]!]! - rank[Object.keys(b)[0]!]!) });
      const file = join(out, "ruleset.json");
      writeFileSync(file, input);
      const load = await ns.exec(["nft", "-j", "-f", file]);
      expect(load.stderr).toBe("");
      expect(load.code).toBe(0);
      const listed = await ns.run(["nft", "-j", "list", "ruleset"]);
      expect(normaliseNft(listed)).toEqual(normaliseNft(text));
      // nftRulesetText, the bench's `nft list` text of the same ruleset, reads as nft's own listing does: the same
      // chains, base chains and rule texts, and the same set elements (nft lists those in the kernel's order)
      const own = textShape(parseNftText(nftRulesetText(plan)));
      const real = textShape(parseNftText(await ns.run(["nft", "list", "table", "ip", "kube-proxy"])));
      expect(own.chains.length).toBeGreaterThan(100);
      expect(own).toEqual(real);
    } finally {
      await ns.destroy();
    }
  });
});

/** What a parsed `nft list` text holds, element order aside: chains (base chain, rule texts and comments) and sets. */
function textShape(rs: NftRuleset): { chains: unknown[]; sets: unknown[] } {
  const t = rs.tables.find((x) => x.name === "kube-proxy")!;
  return {
    chains: [...t.chains.values()].map((c) => [c.name, c.base ?? null, c.rules.map((r) => `${r.text} ${r.comment ?? ""}`)]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    sets: [...t.sets.values()].map((x) => [x.kind, x.name, x.type, x.dataType ?? null, x.elements.map((e) => e.text).sort()]).sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
  };
}
