// Large nftables rulesets (issue 6, "Speed"): parseNftJson decodes a rule when it is first read, the kube-proxy
// layout is decoded chain by chain, the tracer indexes sets once per table. These tests pin that the lazy paths give
// exactly what reading everything gives, on kube-proxy's own rulesets as real nft 1.0.6 prints them
// (tests/fixtures/nftables) and on the bench's generated 1,000-Service ruleset; and that errors still surface.
import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { planCluster } from "../bench/cluster_plan.ts";
import { nftRulesetJson } from "../bench/gen_nftables.ts";
import { DumpParseError } from "../src/datapath/errors.ts";
import { decodeKubeProxyNft, type KubeProxyNft } from "../src/datapath/kube_proxy_nft.ts";
import { parseNftJson } from "../src/datapath/nft_json.ts";
import type { NftRuleset } from "../src/datapath/nft_model.ts";
import { parseNftText } from "../src/datapath/nft_text.ts";
import { nftDatapath } from "../src/service/nftables/datapath.ts";
import { traceNft } from "../src/service/nftables/trace.ts";
import type { TracePacket } from "../src/service/trace.ts";
import { fixture, fixturePath } from "./helpers/bundles.ts";

const names = [
  ...readdirSync(fixturePath("nftables")).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5)),
  ...readdirSync(fixturePath("nftables/synthetic")).filter((f) => f.endsWith(".json")).map((f) =>
    `synthetic/${f.slice(0, -5)}`
  ),
];

/** Everything parseNftJson reads, as plain data (rules' text and statements included), without line numbers. */
function snapshot(rs: NftRuleset) {
  return {
    format: rs.format,
    nftVersion: rs.nftVersion,
    tables: rs.tables.map((t) => ({
      family: t.family,
      name: t.name,
      handle: t.handle,
      comment: t.comment,
      flags: t.flags,
      chains: [...t.chains.values()].map((c) => ({
        name: c.name,
        handle: c.handle,
        comment: c.comment,
        base: c.base,
        rules: c.rules.map((r) => ({
          where: [r.family, r.table, r.chain],
          handle: r.handle,
          comment: r.comment,
          text: r.text,
          statements: r.statements,
        })),
      })),
      sets: [...t.sets.values()].map(({ line: _line, ...s }) => s),
    })),
    unparsed: rs.unparsed.map(({ line: _line, ...u }) => u),
  };
}

const lines = (rs: NftRuleset) =>
  rs.tables.flatMap((t) => [t.line, ...[...t.chains.values()].flatMap((c) => [c.line, ...c.rules.map((r) => r.line)])]);

describe("parseNftJson reads the same ruleset by every path", () => {
  it("finds the 18 fixtures", () => {
    expect(names).toHaveLength(18);
  });

  // nft's one-line output takes the fast path (rule heads read in place, `expr` parsed when first read); the same
  // document pretty-printed is parsed element by element; with one more top-level key it is parsed whole.
  for (const name of names) {
    it(name, () => {
      const text = fixture(`nftables/${name}.json`);
      const doc = JSON.parse(text) as { nftables: unknown[] };
      const fast = parseNftJson(text);
      const pretty = parseNftJson(JSON.stringify(doc, null, 2));
      const whole = parseNftJson(JSON.stringify({ ...doc, extra: true }));
      const want = snapshot(fast);
      expect(want.tables.flatMap((t) => t.chains).flatMap((c) => c.rules).length).toBeGreaterThan(0);
      expect(snapshot(pretty)).toEqual(want);
      expect(snapshot(whole)).toEqual(want);
      expect(lines(whole)).toEqual(lines(fast));
      expect(new Set(lines(fast))).toEqual(new Set([1]));
      expect(Math.min(...lines(pretty))).toBeGreaterThan(1);
    });
  }

  it("a rule taken from a pretty-printed document points at its own line", () => {
    const text = JSON.stringify(JSON.parse(fixture("nftables/TestOverallNFTablesRules.json")), null, 2);
    const r = parseNftJson(text).tables[0]!.chains.get("masquerading")!.rules[2]!;
    expect(r.text).toBe("masquerade fully-random");
    expect(text.split("\n")[r.line]).toBe('      "rule": {');
  });
});

describe("a rule of nft -j output is decoded when first read", () => {
  const plan = planCluster({ services: 1000 });
  const text = nftRulesetJson(plan);
  const parsedChars = (run: () => void): number => {
    const spy = vi.spyOn(JSON, "parse");
    try {
      run();
      return spy.mock.calls.reduce((n, [s]) => n + (typeof s === "string" ? s.length : 0), 0);
    } finally {
      spy.mockRestore();
    }
  };
  afterEach(() => vi.restoreAllMocks());

  it("parsing a 1,000-Service ruleset JSON-parses its sets and base chains only (< 10% of the text)", () => {
    let rs: NftRuleset | undefined;
    const chars = parsedChars(() => rs = parseNftJson(text));
    expect(chars / text.length).toBeLessThan(0.1);
    const t = rs!.tables[0]!;
    expect(t.chains.size).toBeGreaterThan(6000);
    expect(t.sets.get("service-ips")!.elements).toHaveLength(1000);
    // Reading one rule parses that rule's expr only.
    const svc = plan.services[500]!;
    const chain = [...t.chains.keys()].find((n) => n.startsWith("service-") && n.includes(`/${svc.name}/`))!;
    const one = parsedChars(() => t.chains.get(chain)!.rules[0]!.text);
    expect(one).toBeGreaterThan(50);
    expect(one).toBeLessThan(1000);
  });

  it("a svc/NAME question (node summary + a dozen traces) parses < 25% of the text, with the exact 1/5 shares", () => {
    const svc = plan.services[500]!;
    const capture = { name: plan.dumpNode.name, sections: { "nft-json": { stdout: text, exitCode: 0 } } };
    let shares: Record<string, number> = {};
    const chars = parsedChars(() => {
      const dp = nftDatapath(capture, 4);
      expect(dp.problems).toEqual([]);
      expect(dp.clusterCIDRs).toEqual([plan.clusterCIDR]);
      for (const src of ["10.244.0.200", "203.0.113.10", plan.dumpNode.internalIP]) {
        const pkt: TracePacket = {
          family: 4,
          src,
          dst: svc.clusterIP,
          proto: "tcp",
          dport: svc.port,
          srcLocal: src === plan.dumpNode.internalIP,
          dstLocal: false,
          mark: 0,
          ctstate: new Set(["NEW"]),
        };
        const t = dp.trace!(pkt, src === plan.dumpNode.internalIP ? "OUTPUT" : "PREROUTING");
        shares = Object.fromEntries(t.outcomes.map((o) => [o.dnatTo!, o.probability]));
      }
    });
    expect(chars / text.length).toBeLessThan(0.25);
    expect(Object.keys(shares).sort()).toEqual(svc.endpoints.map((e) => `${e.ip}:${svc.targetPort}`).sort());
    for (const p of Object.values(shares)) expect(p).toBeCloseTo(0.2, 12);
  });

  it("the layout decoded chain by chain equals the layout decoded whole", () => {
    const lazy = decodeKubeProxyNft(parseNftJson(text))[0]!;
    const full = decodeKubeProxyNft(parseNftJson(text))[0]!;
    expect(full.servicePorts).toHaveLength(1000);
    expect(full.anomalies).toEqual([]);
    const ov = lazy.overview();
    expect(ov).toEqual(full.overview());
    expect(ov.localDetector.evidence).toHaveLength(1000);
    for (const sp of [full.servicePorts[0]!, full.servicePorts[499]!, full.servicePorts[999]!]) {
      expect(lazy.policyChain(sp.clusterChain!.chain)).toEqual(sp.clusterChain);
      expect(full.policyChain(sp.clusterChain!.chain)).toBe(sp.clusterChain);
    }
  });
});

describe("errors inside a rule's expr surface when the rule is read, with the message of a whole parse", () => {
  const head = '{"nftables": [{"table": {"family": "ip", "name": "t", "handle": 1}}, ' +
    '{"chain": {"family": "ip", "table": "t", "name": "c", "handle": 1}}, ';
  const cases: { name: string; rule: string; want: string }[] = [
    {
      name: "a trailing comma in expr",
      rule: '{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 2, "expr": [{"accept": null},]}}',
      want: 'nft-json line 1: malformed JSON: "' +
        `${head}{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 2, "ex`
          .slice(0, 200) +
        '…"',
    },
    {
      name: "a second key after the rule object",
      rule: '{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 2, "expr": [{"accept": null}]}, ' +
        '"x": {"y": [1]}}',
      want: 'nft-json line 1: expected an object with one key such as {"rule": {...}}: ' +
        '"{"rule":{"family":"ip","table":"t","chain":"c","handle":2,"expr":[{"accept":null}]},"x":{"y":[1]}}"',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const rs = parseNftJson(`${head}${c.rule}]}`);
      const r = rs.tables[0]!.chains.get("c")!.rules[0]!;
      expect(r.handle).toBe(2);
      let err: unknown;
      try {
        void r.statements;
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DumpParseError);
      expect((err as DumpParseError).message).toBe(c.want);
      expect(() => rs.unparsed).toThrow(DumpParseError);
    });
  }

  it("nftDatapath: a malformed rule read by the node summary makes nft-text the source", () => {
    const json = fixture("nftables/TestOverallNFTablesRules.json");
    const masq = '"right": {"prefix": {"addr": "10.0.0.0", "len": 8}}}}, {"jump": {"target": "mark-for-masquerade"}}';
    expect(json.split(masq).length).toBeGreaterThan(2);
    const broken = json.replace(masq, masq.replace("}}}}, {", "}}}} {"));
    expect(() => parseNftJson(broken)).not.toThrow();
    const dp = nftDatapath({
      name: "n1",
      sections: {
        "nft-json": { stdout: broken, exitCode: 0 },
        "nft-text": { stdout: fixture("nftables/TestOverallNFTablesRules.nft.txt"), exitCode: 0 },
      },
    }, 4);
    expect(dp.trace).toBeDefined();
    expect(dp.problems).toHaveLength(1);
    expect(dp.problems[0]).toMatch(
      /^read the node's nftables state from nft-text \(nft-json line 1: malformed JSON: "\{"nftables": \[.*…"\)$/,
    );
  });
});

describe("a node-side listing that failed", () => {
  it("killed at the memory limit (exit 137, as a 10,000-Service nft -j listing is in a 512Mi debug pod): the note says what killed it", () => {
    const command = "nft list table ip kube-proxy; nft list table ip6 kube-proxy";
    const dp = nftDatapath({ name: "n1", sections: { "nft-text": { command, stdout: "", stderr: "", exitCode: 137 } } }, 4);
    expect(dp.trace).toBeUndefined();
    expect(dp.problems).toEqual([
      `${command} failed (exit 137: killed (SIGKILL), most often by the out-of-memory killer at the memory limit of the container it ran in): nothing on stderr`,
    ]);
  });
  it("another exit status: the command and its stderr", () => {
    const dp = nftDatapath({ name: "n1", sections: { "nft-text": { command: "nft list table ip kube-proxy", stdout: "", stderr: "Error: No such file or directory\n", exitCode: 1 } } }, 4);
    expect(dp.problems).toEqual(["nft list table ip kube-proxy failed (exit 1): Error: No such file or directory"]);
  });
});

describe("a malformed rule the node summary does not read: the branch through its chain is unresolved", () => {
  it("svc1's endpoint chain cannot be read: its share is unresolved, with the parse error; other Services are traced", () => {
    const json = fixture("nftables/TestOverallNFTablesRules.json");
    const dnat = '{"dnat": {"addr": "10.180.0.1", "port": 80}}';
    expect(json.split(dnat)).toHaveLength(2);
    const dp = nftDatapath({
      name: "n1",
      sections: { "nft-json": { stdout: json.replace(dnat, dnat.replace(", ", " ")), exitCode: 0 } },
    }, 4);
    expect(dp.problems).toEqual([]);
    const pkt = (dst: string): TracePacket => ({
      family: 4,
      src: "10.0.0.200",
      dst,
      proto: "tcp",
      dport: 80,
      srcLocal: false,
      dstLocal: false,
      mark: 0,
      ctstate: new Set(["NEW"]),
    });
    const [o, ...more] = dp.trace!(pkt("172.30.0.41"), "PREROUTING").outcomes;
    expect(more).toEqual([]);
    expect(o).toMatchObject({
      verdict: "unresolved",
      probability: 1,
      missingChain: "endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80",
    });
    expect(o!.caveats).toContainEqual(
      expect.stringMatching(
        /^chain endpoint-5OJB2KTY-ns1\/svc1\/tcp\/p80__10\.180\.0\.1\/80 cannot be read \(nft-json line 1: malformed JSON: "\{"nftables": \[.*…"\): where this branch goes cannot be told$/,
      ),
    );
    expect(dp.trace!(pkt("172.30.0.44"), "PREROUTING").outcomes.map((x) => [x.dnatTo, x.probability])).toEqual([
      ["10.180.0.4:80", 0.5],
      ["10.180.0.5:80", 0.5],
    ]);
  });
});

describe("mayContain: which rules a decoder may skip", () => {
  const rs = parseNftJson(fixture("nftables/TestOverallNFTablesRules.json"));
  const t = rs.tables[0]!;
  const cases: { name: string; chain: string; rule: number; word: string; want: boolean }[] = [
    {
      name: "a jump to mark-for-masquerade",
      chain: "service-ULMVA6XW-ns1/svc1/tcp/p80",
      rule: 0,
      word: "mark-for-masquerade",
      want: true,
    },
    {
      name: "the numgen rule has no such jump",
      chain: "service-ULMVA6XW-ns1/svc1/tcp/p80",
      rule: 1,
      word: "mark-for-masquerade",
      want: false,
    },
    {
      name: "a word of the comment",
      chain: "external-42NFTM6N-ns2/svc2/tcp/p80",
      rule: 0,
      word: "short-circuit",
      want: true,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = t.chains.get(c.chain)!.rules[c.rule]!;
      expect(r.mayContain!(c.word)).toBe(c.want);
      // Never false for a word of the decoded rule.
      if (!c.want) expect(`${r.text} ${r.comment ?? ""}`).not.toContain(c.word);
      else expect(`${r.text} ${r.comment ?? ""}`).toContain(c.word);
    });
  }

  it("an escape sequence anywhere in the rule makes every word possible", () => {
    const rs2 = parseNftJson(
      '{"nftables": [{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 2, "comment": "say \\"hi\\"", ' +
        '"expr": [{"accept": null}]}}]}',
    );
    const r = rs2.tables[0]!.chains.get("c")!.rules[0]!;
    expect(r.comment).toBe('say "hi"');
    expect(r.mayContain?.("mark-for-masquerade") ?? true).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The kube-proxy layout decoded on demand, on a hand-made table with findings of every kind.

const SVC = "service-AAAAAAAA-ns/web/tcp/http";
const EXT = "external-AAAAAAAA-ns/web/tcp/http";
const OTHER = "service-DDDDDDDD-ns/api/tcp/http";
const EP1 = "endpoint-BBBBBBBB-ns/web/tcp/http__10.0.0.1/80";
const EP2 = "endpoint-CCCCCCCC-ns/web/tcp/http__10.0.0.2/80";
const EP3 = "endpoint-EEEEEEEE-ns/api/tcp/http__10.0.0.3/80";
const GONE = "service-ZZZZZZZZ-ns/gone/tcp/http";

/** nft list syntax: a kube-proxy table whose service-ips map points to a missing chain (a table-wide finding), whose
 * web chain leaves a numgen value unmapped (a finding of that chain) and whose api chain uses another detector. */
const ANOMALOUS = `table ip kube-proxy {
	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		elements = { 172.30.0.1 . tcp . 80 : goto ${SVC},
			     172.30.0.2 . tcp . 80 : goto ${OTHER},
			     172.30.0.9 . tcp . 80 : goto ${GONE} }
	}
	chain nat-prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		jump services
	}
	chain nat-postrouting {
		type nat hook postrouting priority srcnat; policy accept;
		jump masquerading
	}
	chain mark-for-masquerade {
		meta mark set meta mark | 0x00004000
	}
	chain masquerading {
		meta mark & 0x00004000 == 0x00000000 return
		meta mark set meta mark ^ 0x00004000
		masquerade fully-random
	}
	chain services {
		ip daddr . meta l4proto . th dport vmap @service-ips
	}
	chain ${SVC} {
		ip daddr 172.30.0.1 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
		numgen random mod 4 vmap { 0 : goto ${EP1}, 1-2 : goto ${EP2} }
	}
	chain ${EXT} {
		ip saddr 10.0.0.0/8 goto ${SVC}
		goto ${SVC}
	}
	chain ${OTHER} {
		ip daddr 172.30.0.2 tcp dport 80 iifname != "veth*" jump mark-for-masquerade
		numgen random mod 1 vmap { 0 : goto ${EP3} }
	}
	chain ${EP1} {
		ip saddr 10.0.0.1 jump mark-for-masquerade
		meta l4proto tcp dnat to 10.0.0.1:80
	}
	chain ${EP2} {
		meta l4proto tcp dnat to 10.0.0.2:80
		counter packets 0 bytes 0 accept
	}
	chain ${EP3} {
		meta l4proto tcp dnat to 10.0.0.3:80
	}
}
`;

describe("KubeProxyNft decoded on demand", () => {
  const fresh = () => decodeKubeProxyNft(parseNftText(ANOMALOUS))[0]!;

  it("the full decode lists every finding: maps, endpoint chains, ServicePort chains, the detector", () => {
    expect(fresh().anomalies.map((a) => [a.message, a.evidence[0]?.chain ?? `@${a.evidence[0]?.set}`])).toEqual([
      [`service-ips element points to missing chain ${GONE}`, "@service-ips"],
      [`unexpected rule in endpoint chain ${EP2}`, EP2],
      [
        "numgen random mod 4 maps only 3 of 4 values: 1/4 of new connections fall through",
        SVC,
      ],
      ["rules disagree on the local-traffic detector: interface-prefix:veth, cidr:10.0.0.0/8", OTHER],
    ]);
  });

  it("overview: the same detector, masquerade-all and table-wide findings, before or after the full decode", () => {
    const k = fresh();
    const ov = k.overview();
    const full = fresh();
    void full.servicePorts;
    expect(ov).toEqual(full.overview());
    expect(ov.localDetector).toEqual(full.localDetector);
    expect(ov.localDetector).toMatchObject({ kind: "cidr", value: "10.0.0.0/8" });
    expect(ov.localDetector.evidence.map((e) => e.chain)).toEqual([SVC, EXT]);
    expect(ov.masqueradeAll).toBe(false);
    expect(ov.anomalies.map((a) => a.message)).toEqual([
      `service-ips element points to missing chain ${GONE}`,
      "rules disagree on the local-traffic detector: interface-prefix:veth, cidr:10.0.0.0/8",
    ]);
  });

  it("chainAnomalies: a chain's own findings; with the overview's they make up anomalies", () => {
    const k = fresh();
    const cases: { chain: string; want: string[] }[] = [
      { chain: SVC, want: ["numgen random mod 4 maps only 3 of 4 values: 1/4 of new connections fall through"] },
      { chain: EP2, want: [`unexpected rule in endpoint chain ${EP2}`] },
      { chain: EP1, want: [] },
      { chain: "services", want: [] },
      { chain: GONE, want: [] },
    ];
    for (const c of cases) expect(k.chainAnomalies(c.chain).map((a) => a.message), c.chain).toEqual(c.want);
    const perChain = [...k.table.chains.keys()].flatMap((n) => k.chainAnomalies(n));
    const key = (a: { message: string }) => a.message;
    expect([...k.overview().anomalies, ...perChain].map(key).sort()).toEqual(k.anomalies.map(key).sort());
  });

  it("policyChain: one service/local chain, the very object servicePorts holds", () => {
    const k = fresh();
    const pc = k.policyChain(SVC)!;
    expect(pc.endpoints.map((e) => [e.endpointChain, e.share, e.dnatTo?.text])).toEqual([
      [EP1, { num: 1, den: 4 }, "10.0.0.1:80"],
      [EP2, { num: 1, den: 2 }, "10.0.0.2:80"],
    ]);
    expect(k.servicePorts.find((p) => p.servicePortName === "ns/web:http")!.clusterChain).toBe(pc);
    expect(k.policyChain(EXT)).toBeUndefined();
    expect(k.policyChain(EP1)).toBeUndefined();
    expect(k.policyChain(GONE)).toBeUndefined();
  });

  it("node notes carry the table-wide findings; a traced packet carries those of the chains it crosses", () => {
    const dp = nftDatapath({ name: "n1", sections: { "nft-text": { stdout: ANOMALOUS, exitCode: 0 } } }, 4);
    expect(dp.problems).toEqual([
      `nftables: service-ips element points to missing chain ${GONE} (@service-ips: 172.30.0.9 . tcp . 80 : goto ${GONE})`,
      `nftables: rules disagree on the local-traffic detector: interface-prefix:veth, cidr:10.0.0.0/8 (${OTHER}: ip daddr 172.30.0.2 tcp dport 80 iifname != "veth*" jump mark-for-masquerade)`,
    ]);
    const pkt = (dst: string): TracePacket => ({
      family: 4,
      src: "10.0.0.7",
      dst,
      proto: "tcp",
      dport: 80,
      srcLocal: false,
      dstLocal: false,
      mark: 0,
      ctstate: new Set(["NEW"]),
    });
    const web = dp.trace!(pkt("172.30.0.1"), "PREROUTING");
    const numgen =
      `nftables: numgen random mod 4 maps only 3 of 4 values: 1/4 of new connections fall through (${SVC}: numgen random mod 4 vmap { 0 : goto ${EP1}, 1-2 : goto ${EP2} })`;
    for (const o of web.outcomes) expect(o.caveats, o.dnatTo).toContain(numgen);
    const ep2 = web.outcomes.find((o) => o.dnatTo === "10.0.0.2:80")!;
    expect(ep2.probability).toBeCloseTo(0.5, 12);
    expect(ep2.caveats.filter((c) => c.startsWith("nftables:"))).toEqual([
      numgen,
      `nftables: unexpected rule in endpoint chain ${EP2} (${EP2}: counter packets 0 bytes 0 accept)`,
    ]);
    const api = dp.trace!(pkt("172.30.0.2"), "PREROUTING");
    expect(api.outcomes.map((o) => [o.dnatTo, o.caveats.filter((c) => c.startsWith("nftables:"))])).toEqual([
      ["10.0.0.3:80", []],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Set membership by index: plain addresses match by value, the other elements one by one.

describe("traceNft: `ip daddr @set` on an indexed set", () => {
  const layout = (family: "ip" | "ip6", type: string, elements: string): KubeProxyNft =>
    decodeKubeProxyNft(parseNftText(`table ${family} kube-proxy {
	set s {
		type ${type}
		flags interval
		elements = { ${elements} }
	}
	chain filter-forward {
		type filter hook forward priority filter; policy accept;
		${family} daddr @s drop
	}
}
`))[0]!;
  const v4 = layout("ip", "ipv4_addr", "10.96.0.10, 10.96.0.11, 192.168.0.0/16, 172.16.0.1-172.16.0.9");
  const v6 = layout("ip6", "ipv6_addr", "fd00:10:0:0::5, fd00:20::/64, 2001:db8::1-2001:db8::9");
  const cases: { name: string; layout: KubeProxyNft; dst: string; want: string }[] = [
    { name: "a plain IPv4 element", layout: v4, dst: "10.96.0.11", want: "drop" },
    { name: "an IPv4 address no element holds", layout: v4, dst: "10.96.0.12", want: "no-match" },
    { name: "an IPv4 prefix element", layout: v4, dst: "192.168.7.7", want: "drop" },
    { name: "an IPv4 range element", layout: v4, dst: "172.16.0.5", want: "drop" },
    { name: "a plain IPv6 element, written another way", layout: v6, dst: "fd00:10::5", want: "drop" },
    { name: "an IPv6 prefix element", layout: v6, dst: "fd00:20::abcd", want: "drop" },
    { name: "an IPv6 range element", layout: v6, dst: "2001:db8::7", want: "drop" },
    { name: "an IPv6 address no element holds", layout: v6, dst: "fd00:10::6", want: "no-match" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const t = traceNft(c.layout, {
        family: c.layout.family === "ip6" ? 6 : 4,
        src: c.layout.family === "ip6" ? "2001:db8:ffff::10" : "203.0.113.10",
        dst: c.dst,
        proto: "tcp",
        dport: 80,
        srcLocal: false,
        dstLocal: false,
        mark: 0,
        ctstate: new Set(["NEW"]),
      }, "PREROUTING");
      expect(t.outcomes.map((o) => o.verdict)).toEqual([c.want]);
    });
  }
});
