import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DumpParseError } from "../src/datapath/errors.ts";
import {
  type IptablesListing,
  type ListingChain,
  type ListingRule,
  parseIptablesListing,
} from "../src/datapath/iptables_list.ts";

const fixture = (p: string) => readFileSync(new URL(`./fixtures/listing/${p}`, import.meta.url), "utf8");

function chain(l: IptablesListing, name: string): ListingChain {
  const found = l.chains.filter((c) => c.name === name);
  expect(found, name).toHaveLength(1);
  return found[0] as ListingChain;
}
const rule = (l: IptablesListing, name: string, i: number) => chain(l, name).rules[i] as ListingRule;
/** The facts of a rule that do not depend on the listing flags (-v, -x, --line-numbers). */
function facts(r: ListingRule) {
  const { line: _l, raw: _r, num: _n, pkts: _p, bytes: _b, approximateCounters: _a, opt: _o, ...rest } = r;
  return rest;
}
const NEG = (value: string) => ({ negated: true, value });
const POS = (value: string) => ({ negated: false, value });

describe("parseIptablesListing on the seeds' listings", () => {
  it("seed 003: IPVS mode with --cluster-cidr masquerades what is not from 10.244.16.0/24", () => {
    const l = parseIptablesListing(fixture("seed-003-ipvs-cluster-cidr.nat-nL.txt"));
    expect(l.unparsed).toEqual([]);
    expect(l.chains.map((c) => c.name)).toEqual([
      "PREROUTING",
      "OUTPUT",
      "POSTROUTING",
      "KUBE-MARK-MASQ",
      "KUBE-POSTROUTING",
      "KUBE-SERVICES",
    ]);
    const svc = chain(l, "KUBE-SERVICES");
    expect(svc.references).toBe(2);
    expect(svc.columns).toEqual(["target", "prot", "opt", "source", "destination"]);
    expect(svc.rules[0]).toEqual({
      chain: "KUBE-SERVICES",
      line: 24,
      raw: "KUBE-MARK-MASQ  all  -- !10.244.16.0/24       0.0.0.0/0            match-set KUBE-CLUSTER-IP dst,dst",
      target: "KUBE-MARK-MASQ",
      prot: POS("all"),
      protocol: "all",
      opt: "--",
      source: NEG("10.244.16.0/24"),
      destination: POS("0.0.0.0/0"),
      matchText: "match-set KUBE-CLUSTER-IP dst,dst",
      matchSets: [{ negated: false, name: "KUBE-CLUSTER-IP", flags: "dst,dst" }],
    });
    expect(svc.rules[1]).toMatchObject({ target: "ACCEPT", source: POS("0.0.0.0/0"), matchSets: [{ name: "KUBE-CLUSTER-IP" }] });
    expect(chain(l, "PREROUTING")).toMatchObject({ policy: "ACCEPT", line: 1 });
    expect(chain(l, "PREROUTING").policyPackets).toBeUndefined();
    expect(rule(l, "KUBE-MARK-MASQ", 0).markTarget).toEqual({ op: "or", value: "0x4000" });
    expect(rule(l, "KUBE-POSTROUTING", 0)).toMatchObject({
      target: "MASQUERADE",
      comment: "kubernetes service traffic requiring SNAT",
      markMatch: POS("0x4000/0x4000"),
    });
    expect(rule(l, "KUBE-POSTROUTING", 1).matchSets).toEqual([{ negated: false, name: "KUBE-LOOP-BACK", flags: "dst,dst,src" }]);
  });

  it("seed 002 (kind, -nvL): counters, interfaces, the cluster-CIDR masquerade and the hairpin MASQUERADE", () => {
    const l = parseIptablesListing(fixture("seed-002-kind-ipvs.nat-nvL.txt"));
    expect(l.unparsed).toEqual([]);
    expect(chain(l, "OUTPUT")).toMatchObject({ policy: "ACCEPT", policyPackets: 5, policyBytes: 300 });
    expect(chain(l, "KUBE-MARK-MASQ").references).toBe(13);
    expect(chain(l, "KUBE-SERVICES").columns).toEqual(["pkts", "bytes", "target", "prot", "opt", "in", "out", "source", "destination"]);
    const masq = rule(l, "KUBE-SERVICES", 0);
    expect(masq).toMatchObject({
      pkts: 0,
      bytes: 0,
      target: "KUBE-MARK-MASQ",
      source: NEG("10.244.0.0/16"),
      comment: "Kubernetes service cluster ip + port for masquerade purpose",
      matchSets: [{ negated: false, name: "KUBE-CLUSTER-IP", flags: "dst,dst" }],
    });
    expect([masq.in, masq.out, masq.approximateCounters]).toEqual([undefined, undefined, undefined]);
    expect(rule(l, "KUBE-SERVICES", 1)).toMatchObject({ target: "KUBE-NODE-PORT", addrtype: { dst: POS("LOCAL") } });
    expect(rule(l, "PREROUTING", 0)).toMatchObject({ pkts: 128, bytes: 12020, target: "KUBE-SERVICES" });
    expect(rule(l, "PREROUTING", 1)).toMatchObject({ target: "DOCKER_OUTPUT", destination: POS("192.168.224.1") });
    expect(rule(l, "PREROUTING", 1).matchText).toBeUndefined();
    expect(rule(l, "POSTROUTING", 2)).toMatchObject({
      pkts: 920,
      bytes: 61751,
      target: "KIND-MASQ-AGENT",
      addrtype: { dst: NEG("LOCAL") },
      comment:
        "kind-masq-agent: ensure nat POSTROUTING directs all non-LOCAL destination traffic to our custom KIND-MASQ-AGENT chain",
    });
    const post = chain(l, "KUBE-POSTROUTING").rules;
    expect(post.map((r) => r.target)).toEqual(["MASQUERADE", "RETURN", "MARK", "MASQUERADE"]);
    expect(post[0]?.matchSets).toEqual([{ negated: false, name: "KUBE-LOOP-BACK", flags: "dst,dst,src" }]);
    expect(post[1]).toMatchObject({ pkts: 1, bytes: 60, markMatch: NEG("0x4000/0x4000") });
    expect(post[2]?.markTarget).toEqual({ op: "xor", value: "0x4000" });
    expect(post[3]).toMatchObject({ comment: "kubernetes service traffic requiring SNAT", randomFully: true });
  });

  it("seed 004 (iptables mode, v1.12): the 7-endpoint probability cascade and the DNAT to the pod", () => {
    const l = parseIptablesListing(fixture("seed-004-aliyun-lb.nat-nL.txt"));
    const svc = chain(l, "KUBE-SVC-M42ZCW2EYUCRBVAF");
    expect(svc.rules.map((r) => [r.target, r.probability])).toEqual([
      ["KUBE-SEP-EA7TYKWK2S6G4PQR", 0.14286000002],
      ["KUBE-SEP-ZJI36FVTROQF5MX7", 0.16667000018],
      ["KUBE-SEP-JLGUPWE7JCRU2AGG", 0.20000000019],
      ["KUBE-SEP-GCNPY23RDN22AOTX", 0.25],
      ["KUBE-SEP-FNDISD3HQYKEHL3T", 0.33332999982],
      ["KUBE-SEP-3RWVMCKITDQWELSA", 0.5],
      ["KUBE-SEP-BVMKBOC4GGNJ3567", undefined],
    ]);
    const sep = chain(l, "KUBE-SEP-BVMKBOC4GGNJ3567").rules;
    expect(sep[0]).toMatchObject({ target: "KUBE-MARK-MASQ", source: POS("172.31.9.52") });
    expect(sep[1]).toMatchObject({
      target: "DNAT",
      protocol: "tcp",
      portMatchProtocol: "tcp",
      toDestination: { raw: "172.31.9.52:80", address: "172.31.9.52", port: 80 },
    });
    const services = chain(l, "KUBE-SERVICES").rules;
    expect(services.map((r) => [r.target, r.source, r.destination.value, r.comment, r.dport])).toEqual([
      ["KUBE-MARK-MASQ", NEG("172.31.0.0/16"), "172.30.5.207", "default/testsvc: cluster IP", { negated: false, first: 443, last: 443 }],
      ["KUBE-SVC-M42ZCW2EYUCRBVAF", POS("0.0.0.0/0"), "172.30.5.207", "default/testsvc: cluster IP", { negated: false, first: 443, last: 443 }],
      ["KUBE-FW-M42ZCW2EYUCRBVAF", POS("0.0.0.0/0"), "172.6.6.6", "default/testsvc: loadbalancer IP", { negated: false, first: 443, last: 443 }],
    ]);
    // The seed elides the long chain with "......": reported, the rules around it kept.
    expect(l.unparsed).toEqual([{ line: 14, text: "......", reason: "not a rule line" }]);
    expect(rule(l, "OUTPUT", 1)).toMatchObject({ target: "DOCKER", destination: NEG("127.0.0.0/8"), addrtype: { dst: POS("LOCAL") } });
    expect(rule(l, "KUBE-XLB-M42ZCW2EYUCRBVAF", 1)).toMatchObject({
      target: "KUBE-MARK-DROP",
      comment: "default/testsvc: has no local endpoints",
    });
    expect(rule(l, "KUBE-MARK-DROP", 0).markTarget).toEqual({ op: "or", value: "0x8000" });
    expect(chain(l, "KUBE-MARK-MASQ").references).toBe(522);
  });
});

describe("parseIptablesListing on the kubernetes IPVS README listings", () => {
  const cases: {
    file: string;
    chain: string;
    want: { target?: string; source?: unknown; matchSets?: unknown; addrtype?: unknown; extra?: unknown }[];
    unparsed: string[];
  }[] = [
    {
      file: "readme-masquerade-all.iptables-t-nat-nL.txt",
      chain: "KUBE-SERVICES",
      want: [
        { target: "KUBE-MARK-MASQ", source: POS("0.0.0.0/0"), matchSets: [{ negated: false, name: "KUBE-CLUSTER-IP", flags: "dst,dst" }] },
        { target: "ACCEPT", matchSets: [{ negated: false, name: "KUBE-CLUSTER-IP", flags: "dst,dst" }] },
      ],
      unparsed: ["comment or shell prompt"],
    },
    {
      file: "readme-cluster-cidr.iptables-t-nat-nL.txt",
      chain: "KUBE-SERVICES",
      want: [{ target: "KUBE-MARK-MASQ", source: NEG("10.244.16.0/24") }, { target: "ACCEPT" }],
      unparsed: ["comment or shell prompt"],
    },
    {
      file: "readme-nodeport.iptables-t-nat-nL.txt",
      chain: "KUBE-NODE-PORT",
      want: [
        { target: "RETURN", matchSets: [{ negated: false, name: "KUBE-NODE-PORT-LOCAL-TCP", flags: "dst" }] },
        { target: "KUBE-MARK-MASQ", matchSets: [] },
      ],
      unparsed: [],
    },
    {
      file: "readme-loadbalancer.iptables-t-nat-nL.txt",
      chain: "KUBE-FIREWALL",
      want: [
        { target: "RETURN", matchSets: [{ negated: false, name: "KUBE-LOAD-BALANCER-SOURCE-CIDR", flags: "dst,dst,src" }] },
        { target: "KUBE-MARK-DROP", matchSets: [] },
      ],
      unparsed: ["comment or shell prompt"],
    },
    {
      file: "readme-externalips.iptables-t-nat-nL.txt",
      chain: "KUBE-SERVICES",
      want: [
        { target: "KUBE-MARK-MASQ", matchSets: [{ negated: false, name: "KUBE-EXTERNAL-IP", flags: "dst,dst" }] },
        { target: "ACCEPT", extra: ["PHYSDEV match ! --physdev-is-in"], addrtype: { src: NEG("LOCAL") } },
        { target: "ACCEPT", addrtype: { dst: POS("LOCAL") } },
      ],
      unparsed: [`match text not understood: "PHYSDEV match ! --physdev-is-in"`],
    },
  ];
  for (const c of cases) {
    it(`${c.file}: ${c.chain}`, () => {
      const l = parseIptablesListing(fixture(c.file));
      const rules = chain(l, c.chain).rules;
      expect(rules).toHaveLength(c.want.length);
      c.want.forEach((w, i) => expect(rules[i], `${c.chain} rule ${i + 1}`).toMatchObject(w));
      expect(l.unparsed.map((u) => u.reason)).toEqual(c.unparsed);
    });
  }
});

describe("parseIptablesListing on real iptables 1.8.9 listings of kube-proxy's rules", () => {
  const nL = parseIptablesListing(fixture("generated/kp-overall.nft.nat-nL.txt"));
  const nvL = parseIptablesListing(fixture("generated/kp-overall.nft.nat-nvL-line-numbers.txt"));
  const nvxL = parseIptablesListing(fixture("generated/kp-overall.nft.nat-nvxL.txt"));

  it("-nL, -nvL --line-numbers and -nvxL describe the same rules", () => {
    for (const l of [nL, nvL, nvxL]) expect(l.unparsed).toEqual([]);
    expect(nvL.chains.map((c) => c.name)).toEqual(nL.chains.map((c) => c.name));
    expect(nvxL.chains.flatMap((c) => c.rules.map(facts))).toEqual(nL.chains.flatMap((c) => c.rules.map(facts)));
    expect(nvL.chains.flatMap((c) => c.rules.map(facts))).toEqual(nL.chains.flatMap((c) => c.rules.map(facts)));
    for (const c of nvL.chains) expect(c.rules.map((r) => r.num)).toEqual(c.rules.map((_r, i) => i + 1));
    expect(nL.chains.flatMap((c) => c.rules)).toHaveLength(58);
  });

  it("abbreviated counters are within half a unit of the exact ones", () => {
    const exact = nvxL.chains.flatMap((c) => c.rules);
    const abbreviated = nvL.chains.flatMap((c) => c.rules);
    expect(exact.some((r) => r.approximateCounters)).toBe(false);
    expect(abbreviated.filter((r) => r.approximateCounters).length).toBeGreaterThan(40);
    const UNIT: Record<string, number> = { K: 1e3, M: 1e6, G: 1e9, T: 1e12 };
    abbreviated.forEach((r, i) => {
      const x = exact[i] as ListingRule;
      // Columns of `-nvL --line-numbers`: num pkts bytes …; iptables rounds to the printed unit.
      const [, pkts, bytes] = r.raw.trim().split(/\s+/);
      for (const [k, printed] of [["pkts", pkts], ["bytes", bytes]] as const) {
        const unit = UNIT[(printed ?? "").slice(-1)] ?? 1;
        expect(Math.abs((r[k] ?? -1) - (x[k] ?? -2)), `${r.chain} ${k} ${r.raw}`).toBeLessThanOrEqual(unit / 2);
      }
    });
    expect(chain(nvL, "PREROUTING")).toMatchObject({ policyPackets: 1235000, policyBytes: 99000000 });
    expect(chain(nvxL, "PREROUTING")).toMatchObject({ policyPackets: 1234567, policyBytes: 98765432 });
    expect(chain(nvxL, "POSTROUTING")).toMatchObject({ policyPackets: 123456789, policyBytes: 9876543210 });
  });

  it("protocol numbers printed by iptables 1.8.9 are normalised", () => {
    const r = rule(nL, "KUBE-SERVICES", 0);
    expect([r.prot, r.protocol, r.dport, r.destination.value]).toEqual([POS("6"), "tcp", { negated: false, first: 80, last: 80 }, "172.30.0.41"]);
    expect([rule(nL, "KUBE-MARK-MASQ", 0).prot.value, rule(nL, "KUBE-MARK-MASQ", 0).protocol]).toEqual(["0", "all"]);
  });

  it("a rule without a target (the KUBE-FW fall-through) has target undefined", () => {
    for (const l of [nL, nvL, nvxL]) {
      const r = rule(l, "KUBE-FW-NUKIZ6OKUXPJNT4C", 1);
      expect(r.target).toBeUndefined();
      expect(r.comment).toBe("other traffic to ns5/svc5:p80 will be dropped by KUBE-PROXY-FIREWALL");
    }
    expect(rule(nvL, "KUBE-FW-NUKIZ6OKUXPJNT4C", 1)).toMatchObject({ num: 2, pkts: 729000000, approximateCounters: true });
  });

  it("ClientIP affinity: recent CHECK in KUBE-SVC, recent SET with the DNAT in KUBE-SEP", () => {
    expect(rule(nL, "KUBE-SVC-NUKIZ6OKUXPJNT4C", 1)).toMatchObject({
      target: "KUBE-SEP-I77PXRDZVX7PMWMN",
      comment: "ns5/svc5:p80 -> 10.180.0.3:80",
      recent: {
        negated: false,
        command: "CHECK",
        seconds: 10800,
        reap: true,
        ttl: false,
        name: "KUBE-SEP-I77PXRDZVX7PMWMN",
        side: "source",
        mask: "255.255.255.255",
      },
    });
    const dnat = rule(nL, "KUBE-SEP-I77PXRDZVX7PMWMN", 1);
    expect(dnat).toMatchObject({
      target: "DNAT",
      recent: { command: "SET", reap: false, name: "KUBE-SEP-I77PXRDZVX7PMWMN", side: "source" },
      toDestination: { address: "10.180.0.3", port: 80 },
    });
    expect(dnat.recent?.seconds).toBeUndefined();
    const affinity = parseIptablesListing(fixture("generated/kp-affinity.nft.nat-nvL.txt"));
    expect(affinity.unparsed).toEqual([]);
    expect(affinity.chains.flatMap((c) => c.rules).filter((r) => r.recent?.command === "CHECK").map((r) => r.recent?.seconds))
      .toEqual([10800, 10800, 10800]);
  });

  it("the KUBE-SVC cluster-IP masquerade rule and the 2-endpoint cascade", () => {
    const svc = chain(nL, "KUBE-SVC-4SW47YFZTEDKD3PK").rules;
    expect(svc[0]).toMatchObject({ target: "KUBE-MARK-MASQ", source: NEG("10.0.0.0/8"), destination: POS("172.30.0.44") });
    expect(svc.map((r) => r.probability)).toEqual([undefined, 0.5, undefined]);
    expect(rule(nL, "KUBE-POSTROUTING", 0)).toMatchObject({ target: "RETURN", markMatch: NEG("0x4000/0x4000") });
  });

  it("nf_tables and legacy backends print the same listing", () => {
    const legacy = parseIptablesListing(fixture("generated/kp-overall.legacy.nat-nvxL.txt"));
    expect(legacy.chains.flatMap((c) => c.rules.map(facts))).toEqual(nvxL.chains.flatMap((c) => c.rules.map(facts)));
  });

  it("MASQUERADE --random-fully (legacy backend)", () => {
    const l = parseIptablesListing(fixture("generated/kp-random-fully.legacy.nat-nL.txt"));
    expect(rule(l, "KUBE-POSTROUTING", 2)).toMatchObject({ target: "MASQUERADE", randomFully: true });
    expect(chain(l, "KUBE-MARK-MASQ").references).toBe(0);
  });

  it("ip6tables: ::/0, a negated ::1 destination and bracketed DNAT addresses", () => {
    const l = parseIptablesListing(fixture("generated/kp-localhost-ipv6.nft.nat-nvL.txt"));
    expect(l.unparsed).toEqual([]);
    const rules = l.chains.flatMap((c) => c.rules);
    expect(rules.filter((r) => r.target === "DNAT").map((r) => r.toDestination)).toEqual([
      { raw: "[ff06::c1]:80", address: "ff06::c1", port: 80 },
      { raw: "[ff06::c2]:80", address: "ff06::c2", port: 80 },
    ]);
    const nodeports = rules.find((r) => r.target === "KUBE-NODEPORTS");
    expect(nodeports).toMatchObject({ source: POS("::/0"), destination: NEG("::1"), addrtype: { dst: POS("LOCAL") } });
  });

  it("filter table: conntrack state, REJECT, DROP policy", () => {
    const l = parseIptablesListing(fixture("generated/kp-overall.nft.filter-nvL.txt"));
    expect(l.unparsed).toEqual([]);
    expect(chain(l, "FORWARD").policy).toBe("DROP");
    expect(rule(l, "KUBE-FIREWALL", 0)).toMatchObject({
      target: "DROP",
      source: NEG("127.0.0.0/8"),
      destination: POS("127.0.0.0/8"),
      comment: "block incoming localnet connections",
      ctstate: NEG("RELATED,ESTABLISHED,DNAT"),
    });
    expect(rule(l, "INPUT", 0)).toMatchObject({ target: "KUBE-PROXY-FIREWALL", ctstate: POS("NEW") });
    expect(rule(l, "KUBE-SERVICES", 0)).toMatchObject({
      target: "REJECT",
      destination: POS("172.30.0.46"),
      comment: "ns6/svc6:p80 has no endpoints",
      rejectWith: "icmp-port-unreachable",
    });
    expect(rule(l, "KUBE-EXTERNAL-SERVICES", 2)).toMatchObject({ addrtype: { dst: POS("LOCAL") }, dport: { first: 3001 } });
  });

  it("IPVS-mode rules of seed 000 listed with line numbers", () => {
    const l = parseIptablesListing(fixture("generated/seed-000-ipvs.nft.nat-nvL-line-numbers.txt"));
    expect(l.unparsed).toEqual([]);
    expect(chain(l, "KUBE-SERVICES").rules.map((r) => [r.num, r.target, r.source, r.matchSets.map((s) => s.name)])).toEqual([
      [1, "KUBE-MARK-MASQ", NEG("192.168.0.0/16"), ["KUBE-CLUSTER-IP"]],
      [2, "KUBE-NODE-PORT", POS("0.0.0.0/0"), []],
      [3, "ACCEPT", POS("0.0.0.0/0"), ["KUBE-CLUSTER-IP"]],
    ]);
    expect(rule(l, "KUBE-MARK-DROP", 0).markTarget).toEqual({ op: "or", value: "0x8000" });
    expect(chain(l, "KUBE-NODE-PORT").rules).toEqual([]);
  });
});

it("the JSDoc example holds", () => {
  const l = parseIptablesListing(
    "Chain KUBE-MARK-MASQ (1 references)\ntarget prot opt source destination\nMARK all -- 0.0.0.0/0 0.0.0.0/0 MARK or 0x4000\n",
  );
  expect(l.chains[0]?.rules[0]?.markTarget).toEqual({ op: "or", value: "0x4000" });
});

describe("parseIptablesListing match and column forms", () => {
  const HEAD = "Chain X (1 references)\n pkts bytes target     prot opt in     out     source               destination\n";
  const one = (line: string) => parseIptablesListing(HEAD + line + "\n");
  const cases: { name: string; line: string; want: Record<string, unknown> }[] = [
    {
      name: "SNAT to-source",
      line: "    0     0 SNAT       all  --  *      eth0    10.244.0.0/16        0.0.0.0/0            to:192.168.1.10",
      want: { target: "SNAT", toSource: "192.168.1.10", out: POS("eth0") },
    },
    {
      name: "MASQUERADE with ports and random",
      line: "    0     0 MASQUERADE  tcp  --  *      *       0.0.0.0/0            0.0.0.0/0            masq ports: 1024-65535 random",
      want: { masqPorts: "1024-65535", random: true },
    },
    {
      name: "DNAT with a port range keeps the text, no single port",
      line: "    0     0 DNAT       tcp  --  *      *       0.0.0.0/0            0.0.0.0/0            tcp to:10.0.0.1:80-90 persistent",
      want: { toDestination: { raw: "10.0.0.1:80-90", address: "10.0.0.1" }, persistent: true },
    },
    {
      name: "negated port ranges",
      line: "    0     0 ACCEPT     udp  --  *      *       0.0.0.0/0            0.0.0.0/0            udp spts:!1000:2000 dpt:!53",
      want: {
        portMatchProtocol: "udp",
        sport: { negated: true, first: 1000, last: 2000 },
        dport: { negated: true, first: 53, last: 53 },
      },
    },
    {
      name: "negated match-set, several sets",
      line:
        "    0     0 RETURN     all  --  *      *       0.0.0.0/0            0.0.0.0/0            ! match-set KUBE-LOAD-BALANCER-SOURCE-CIDR dst,dst,src match-set KUBE-LOAD-BALANCER-FW dst,dst",
      want: {
        matchSets: [
          { negated: true, name: "KUBE-LOAD-BALANCER-SOURCE-CIDR", flags: "dst,dst,src" },
          { negated: false, name: "KUBE-LOAD-BALANCER-FW", flags: "dst,dst" },
        ],
      },
    },
    {
      name: "older `! mark match` form",
      line: "    0     0 RETURN     all  --  *      *       0.0.0.0/0            0.0.0.0/0            ! mark match 0x4000/0x4000",
      want: { markMatch: NEG("0x4000/0x4000") },
    },
    {
      name: "MARK set and xset",
      line: "    0     0 MARK       all  --  *      *       0.0.0.0/0            0.0.0.0/0            MARK set 0x8000",
      want: { markTarget: { op: "set", value: "0x8000" } },
    },
    {
      name: "MARK xset with a mask",
      line: "    0     0 MARK       all  --  *      *       0.0.0.0/0            0.0.0.0/0            MARK xset 0x4000/0xc000",
      want: { markTarget: { op: "xset", value: "0x4000/0xc000" } },
    },
    {
      name: "state module, ADDRTYPE with limit-in",
      line:
        "    0     0 ACCEPT     all  --  *      *       0.0.0.0/0            0.0.0.0/0            state NEW ADDRTYPE match src-type LOCAL,BROADCAST limit-in",
      want: { ctstate: POS("NEW"), addrtype: { src: POS("LOCAL,BROADCAST"), limitIn: true } },
    },
    {
      name: "negated protocol and interfaces, fragment opt",
      line: "    0     0 DROP      !tcp  -f  !eth0  cali+   10.0.0.0/255.0.255.0  fd00::/64",
      want: { prot: NEG("tcp"), protocol: "tcp", opt: "-f", in: NEG("eth0"), out: POS("cali+"), source: POS("10.0.0.0/255.0.255.0"), destination: POS("fd00::/64") },
    },
    {
      name: "abbreviated counters",
      line: " 4000K  701M KUBE-EXT-GNZBNJ2PO5MGZ6GT  6    --  *      *       0.0.0.0/0            0.0.0.0/0",
      want: { pkts: 4000000, bytes: 701000000, approximateCounters: true, protocol: "tcp" },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const l = one(c.line);
      expect(l.unparsed).toEqual([]);
      expect(l.chains[0]?.rules[0]).toMatchObject({ ...c.want, line: 3, raw: c.line });
    });
  }

  const partial: { name: string; line: string; extra: string[]; want: Record<string, unknown> }[] = [
    {
      name: "tcp flags are kept as extra, the port is parsed",
      line: "    0     0 ACCEPT     tcp  --  *      *       0.0.0.0/0            0.0.0.0/0            tcp dpt:22 flags:0x17/0x02",
      extra: ["tcp flags:0x17/0x02"],
      want: { dport: { negated: false, first: 22, last: 22 } },
    },
    {
      name: "statistic nth mode is not a probability",
      line: "    0     0 KUBE-SEP-A  all  --  *      *       0.0.0.0/0            0.0.0.0/0            statistic mode nth every 2",
      extra: ["statistic mode nth every 2"],
      want: { target: "KUBE-SEP-A" },
    },
    {
      name: "unknown module between known ones",
      line:
        "    0     0 LOG        all  --  *      *       0.0.0.0/0            0.0.0.0/0            /* audit */ LOG flags 0 level 4 prefix \"k8s: \" match-set S src",
      extra: [`LOG flags 0 level 4 prefix "k8s: "`],
      want: { comment: "audit", matchSets: [{ negated: false, name: "S", flags: "src" }] },
    },
  ];
  for (const c of partial) {
    it(c.name, () => {
      const l = one(c.line);
      const r = l.chains[0]?.rules[0];
      expect(r).toMatchObject(c.want);
      expect(r?.extra).toEqual(c.extra);
      expect(l.unparsed).toEqual(c.extra.map((e) => ({ line: 3, text: c.line, reason: `match text not understood: "${e}"` })));
    });
  }

  it("reports chain information it does not understand, comments and the iptables-nft legacy warning", () => {
    const l = parseIptablesListing(
      "# Warning: iptables-legacy tables present, use iptables-legacy to see them\n" +
        "Chain X (ERROR obtaining refs)\ntarget     prot opt source               destination\n",
    );
    expect(l.chains.map((c) => [c.name, c.references, c.rules.length])).toEqual([["X", undefined, 0]]);
    expect(l.unparsed.map((u) => [u.line, u.reason])).toEqual([
      [1, "comment or shell prompt"],
      [2, `chain information "ERROR obtaining refs" not understood`],
    ]);
  });
});

describe("parseIptablesListing errors name the line and what was expected", () => {
  const C = "Chain KUBE-SERVICES (2 references)\n";
  const H = "target     prot opt source               destination\n";
  const V = " pkts bytes target     prot opt in     out     source               destination\n";
  const cases: { name: string; input: string; line: number; message: string }[] = [
    { name: "empty", input: "", line: 0, message: `iptables-list line 0: empty input, expected "iptables -L" output: ""` },
    {
      name: "binary",
      input: "Chain X (1 references)\n\u0000\u0000",
      line: 2,
      message: `iptables-list line 2: binary data, expected iptables listing text: "\u0000\u0000"`,
    },
    {
      name: "rule line before any Chain header (cut at the start)",
      input: "KUBE-MARK-MASQ  all  -- !10.244.16.0/24       0.0.0.0/0            match-set KUBE-CLUSTER-IP dst,dst\n" + C + H,
      line: 1,
      message:
        `iptables-list line 1: expected "Chain NAME (…)" before any rule (listing cut at the start?): "KUBE-MARK-MASQ  all  -- !10.244.16.0/24       0.0.0.0/0            match-set KUBE-CLUSTER-IP dst,dst"`,
    },
    {
      name: "iptables-save text",
      input: "*nat\n:KUBE-SERVICES - [0:0]\n",
      line: 1,
      message: `iptables-list line 1: expected "Chain NAME (…)" before any rule (listing cut at the start?): "*nat"`,
    },
    {
      name: "chain without its column header",
      input: C + "Chain KUBE-MARK-MASQ (1 references)\n" + H,
      line: 2,
      message: `iptables-list line 2: chain KUBE-SERVICES has no column header before the next "Chain" line: "Chain KUBE-MARK-MASQ (1 references)"`,
    },
    {
      name: "rule where the column header belongs",
      input: C + "ACCEPT     all  --  0.0.0.0/0            0.0.0.0/0\n",
      line: 2,
      message:
        `iptables-list line 2: expected the column header "target prot opt source destination", found "ACCEPT": "ACCEPT     all  --  0.0.0.0/0            0.0.0.0/0"`,
    },
    {
      name: "column header without destination",
      input: C + "target     prot opt source\n",
      line: 2,
      message: `iptables-list line 2: column header without "destination": "target     prot opt source"`,
    },
    {
      name: "listing ends after a Chain line",
      input: C,
      line: 1,
      message: `iptables-list line 1: listing ends after "Chain KUBE-SERVICES" (expected its column header): "Chain KUBE-SERVICES (2 references)"`,
    },
    {
      name: "rule cut inside the source",
      input: C + H + "KUBE-MARK-MASQ  all  -- !10.244",
      line: 3,
      message:
        `iptables-list line 3: source "!10.244" is not a numeric address (list with -n) (expected columns "target prot opt source destination"; line cut?): "KUBE-MARK-MASQ  all  -- !10.244"`,
    },
    {
      name: "rule cut before the destination",
      input: C + H + "KUBE-MARK-MASQ  all  -- !10.244.16.0/24",
      line: 3,
      message:
        `iptables-list line 3: missing "destination" column (expected columns "target prot opt source destination"; line cut?): "KUBE-MARK-MASQ  all  -- !10.244.16.0/24"`,
    },
    {
      name: "names instead of addresses (listed without -n)",
      input: C + H + "ACCEPT     all  --  anywhere             kubernetes.default\n",
      line: 3,
      message:
        `iptables-list line 3: destination "kubernetes.default" is not a numeric address (list with -n) (expected columns "target prot opt source destination"; line cut?): "ACCEPT     all  --  anywhere             kubernetes.default"`,
    },
    {
      name: "counter that is not a number",
      input: C + V + "   12X     0 ACCEPT     all  --  *      *       0.0.0.0/0            0.0.0.0/0\n",
      line: 3,
      message:
        `iptables-list line 3: pkts counter "12X" is not a number (expected columns "pkts bytes target prot opt in out source destination"; line cut?): "   12X     0 ACCEPT     all  --  *      *       0.0.0.0/0            0.0.0.0/0"`,
    },
    {
      name: "line number that is not a number",
      input: C + "num  target     prot opt source               destination\n" + "x    ACCEPT     all  --  0.0.0.0/0            0.0.0.0/0\n",
      line: 3,
      message:
        `iptables-list line 3: line number "x" is not a number (expected columns "num target prot opt source destination"; line cut?): "x    ACCEPT     all  --  0.0.0.0/0            0.0.0.0/0"`,
    },
    {
      name: "policy counters that are not numbers",
      input: "Chain INPUT (policy ACCEPT many packets, 0 bytes)\n" + V,
      line: 1,
      message: `iptables-list line 1: chain policy counters are not numbers: "Chain INPUT (policy ACCEPT many packets, 0 bytes)"`,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      let err: unknown;
      try {
        parseIptablesListing(c.input);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DumpParseError);
      const e = err as DumpParseError;
      expect(e.message).toBe(c.message);
      expect([e.format, e.line]).toEqual(["iptables-list", c.line]);
      expect(e.text).toBe(c.line === 0 ? "" : c.input.split("\n")[c.line - 1]);
    });
  }
});
