import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DumpParseError } from "../src/datapath/errors.ts";
import { parseNftJson } from "../src/datapath/nft_json.ts";
import type { NftRule, NftRuleset, NftStatement } from "../src/datapath/nft_model.ts";
import { parseNftText } from "../src/datapath/nft_text.ts";

// Fixtures: kube-proxy's nftables test rulesets loaded into real nft 1.0.6 in a network namespace
// (scripts/gen-nft-fixtures.sh): <name>.json = `nft -j list ruleset`, <name>.nft.txt = `nft list ruleset`.
const dir = new URL("./fixtures/nftables/", import.meta.url);
const read = (p: string) => readFileSync(new URL(p, dir), "utf8");
const names = [
  ...readdirSync(dir).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5)),
  ...readdirSync(new URL("synthetic/", dir)).filter((f) => f.endsWith(".json")).map((f) =>
    `synthetic/${f.slice(0, -5)}`
  ),
];

function rule(rs: NftRuleset, chain: string, index: number, family = "ip", table = "kube-proxy"): NftRule {
  const t = rs.tables.find((x) => x.family === family && x.name === table);
  const c = t?.chains.get(chain);
  const r = c?.rules[index];
  expect(r, `${family} ${table} ${chain}[${index}]`).toBeDefined();
  return r as NftRule;
}

const doc = (...items: unknown[]) => JSON.stringify({ nftables: items });
const ruleDoc = (expr: unknown[], family = "ip") =>
  doc(
    { table: { family, name: "t", handle: 1 } },
    { chain: { family, table: "t", name: "c", handle: 1 } },
    { rule: { family, table: "t", chain: "c", handle: 2, expr } },
  );
const only = (text: string) => parseNftJson(text).tables[0]!.chains.get("c")!.rules[0]!;

describe("parseNftJson on real nft -j output", () => {
  it("finds all 18 fixtures", () => {
    expect(names).toHaveLength(18);
  });

  it("TestOverallNFTablesRules: tables, base chains, sets and maps as nft 1.0.6 printed them", () => {
    const rs = parseNftJson(read("TestOverallNFTablesRules.json"));
    expect(rs.format).toBe("nft-json");
    expect(rs.nftVersion).toBe("1.0.6");
    expect(rs.unparsed).toEqual([]);
    expect(rs.tables.map((t) => `${t.family} ${t.name} #${t.handle}`)).toEqual(["ip kube-proxy #1"]);
    const t = rs.tables[0]!;
    expect(t.chains.get("filter-prerouting-pre-dnat")!.base).toEqual({
      type: "filter",
      hook: "prerouting",
      priority: -110,
      policy: "accept",
    });
    expect(t.chains.get("nat-postrouting")!.base).toEqual({
      type: "nat",
      hook: "postrouting",
      priority: 100,
      policy: "accept",
    });
    expect(t.chains.get("services")!.base).toBeUndefined();
    const sips = t.sets.get("service-ips")!;
    expect(sips).toMatchObject({
      kind: "map",
      type: "ipv4_addr . inet_proto . inet_service",
      keyType: ["ipv4_addr", "inet_proto", "inet_service"],
      dataType: "verdict",
      comment: "ClusterIP, ExternalIP and LoadBalancer IP traffic",
    });
    expect(sips.elements).toHaveLength(9);
    expect(sips.elements.find((e) => e.key[0] === "172.30.0.41")).toEqual({
      keyText: "172.30.0.41 . tcp . 80",
      key: ["172.30.0.41", "tcp", "80"],
      verdict: { kind: "goto", target: "service-ULMVA6XW-ns1/svc1/tcp/p80" },
      data: "goto service-ULMVA6XW-ns1/svc1/tcp/p80",
      text: "172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80",
    });
    expect(t.sets.get("no-endpoint-services")!.elements.map((e) => [e.text, e.comment])).toEqual([
      ["1.2.3.4 . tcp . 80 : drop", "ns2/svc2:p80"],
      ["192.168.99.22 . tcp . 80 : drop", "ns2/svc2:p80"],
      ["172.30.0.46 . tcp . 80 : goto reject-chain", "ns6/svc6:p80"],
    ]);
    const aff = t.sets.get("affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80")!;
    expect(aff).toMatchObject({ kind: "set", type: "ipv4_addr", flags: ["timeout"], timeout: 10800, size: 65535 });
    expect(t.sets.get("cluster-ips")!.elements.map((e) => e.text)).toEqual([
      "172.30.0.41",
      "172.30.0.42",
      "172.30.0.43",
      "172.30.0.44",
      "172.30.0.45",
      "172.30.0.46",
    ]);
  });

  it("decodes the kube-proxy statements into structured fields", () => {
    const rs = parseNftJson(read("TestOverallNFTablesRules.json"));
    const cases: { name: string; rule: NftRule; want: NftStatement[]; comment?: string }[] = [
      {
        name: "ClusterIP masquerade with != prefix",
        rule: rule(rs, "service-ULMVA6XW-ns1/svc1/tcp/p80", 0),
        want: [
          {
            kind: "match",
            text: "ip daddr 172.30.0.41",
            selector: "ip daddr",
            op: "==",
            value: { kind: "literal", text: "172.30.0.41", value: "172.30.0.41" },
          },
          {
            kind: "match",
            text: "ip saddr != 10.0.0.0/8",
            selector: "ip saddr",
            op: "!=",
            value: { kind: "prefix", text: "10.0.0.0/8", addr: "10.0.0.0", len: 8 },
          },
          {
            kind: "verdict",
            text: "jump mark-for-masquerade",
            verdict: { kind: "jump", target: "mark-for-masquerade" },
          },
        ],
      },
      {
        name: "numgen vmap with two endpoints",
        rule: rule(rs, "service-LAUZTJTB-ns4/svc4/tcp/p80", 1),
        want: [{
          kind: "vmap",
          text:
            "numgen random mod 2 vmap { 0 : goto endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80, 1 : goto endpoint-5RFCDDV7-ns4/svc4/tcp/p80__10.180.0.5/80 }",
          selector: "numgen random mod 2",
          numgen: { mode: "random", mod: 2, offset: 0 },
          entries: [
            {
              key: { kind: "literal", text: "0", value: "0" },
              verdict: { kind: "goto", target: "endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80" },
            },
            {
              key: { kind: "literal", text: "1", value: "1" },
              verdict: { kind: "goto", target: "endpoint-5RFCDDV7-ns4/svc4/tcp/p80__10.180.0.5/80" },
            },
          ],
        }],
      },
      {
        name: "dnat to IP:PORT after meta l4proto",
        rule: rule(rs, "endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80", 1),
        want: [
          {
            kind: "match",
            text: "meta l4proto tcp",
            selector: "meta l4proto",
            op: "==",
            value: { kind: "literal", text: "tcp", value: "tcp" },
          },
          {
            kind: "nat",
            text: "dnat to 10.180.0.1:80",
            nat: "dnat",
            flags: [],
            addr: "10.180.0.1",
            port: 80,
            to: "10.180.0.1:80",
          },
        ],
      },
      {
        name: "mark set mark or 0x4000",
        rule: rule(rs, "mark-for-masquerade", 0),
        want: [{
          kind: "mark",
          text: "meta mark set meta mark | 0x00004000",
          target: "meta mark",
          op: "or",
          value: 0x4000,
        }],
      },
      {
        name: "masquerading: return unless marked",
        rule: rule(rs, "masquerading", 0),
        want: [
          {
            kind: "match",
            text: "meta mark & 0x00004000 == 0x00000000",
            selector: "meta mark & 0x00004000",
            op: "==",
            value: { kind: "literal", text: "0x00000000", value: "0x00000000" },
          },
          { kind: "verdict", text: "return", verdict: { kind: "return" } },
        ],
      },
      {
        name: "masquerade fully-random",
        rule: rule(rs, "masquerading", 2),
        want: [{ kind: "masquerade", text: "masquerade fully-random", flags: ["fully-random"] }],
      },
      {
        name: "affinity check: ip saddr @set goto",
        rule: rule(rs, "service-HVFWP5L3-ns5/svc5/tcp/p80", 1),
        want: [
          {
            kind: "match",
            text: "ip saddr @affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80",
            selector: "ip saddr",
            op: "==",
            value: {
              kind: "set-ref",
              text: "@affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80",
              name: "affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80",
            },
          },
          {
            kind: "verdict",
            text: "goto endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80",
            verdict: { kind: "goto", target: "endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80" },
          },
        ],
      },
      {
        name: "affinity refresh: update @set { ip saddr }",
        rule: rule(rs, "endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80", 1),
        want: [{
          kind: "set-update",
          text: "update @affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 { ip saddr }",
          op: "update",
          set: "affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80",
          key: "ip saddr",
        }],
      },
      {
        name: "eTP Local: fib saddr type local, with a rule comment",
        rule: rule(rs, "external-42NFTM6N-ns2/svc2/tcp/p80", 1),
        comment: "masquerade local traffic",
        want: [
          {
            kind: "match",
            text: "fib saddr type local",
            selector: "fib saddr type",
            op: "==",
            value: { kind: "literal", text: "local", value: "local" },
          },
          {
            kind: "verdict",
            text: "jump mark-for-masquerade",
            verdict: { kind: "jump", target: "mark-for-masquerade" },
          },
        ],
      },
      {
        name: "firewall: ip saddr != prefix drop",
        rule: rule(rs, "firewall-HVFWP5L3-ns5/svc5/tcp/p80", 0),
        want: [
          {
            kind: "match",
            text: "ip saddr != 203.0.113.0/25",
            selector: "ip saddr",
            op: "!=",
            value: { kind: "prefix", text: "203.0.113.0/25", addr: "203.0.113.0", len: 25 },
          },
          { kind: "verdict", text: "drop", verdict: { kind: "drop" } },
        ],
      },
      {
        name: "NodePort dispatch: @nodeport-ips, concatenated vmap key",
        rule: rule(rs, "services", 1),
        want: [
          {
            kind: "match",
            text: "ip daddr @nodeport-ips",
            selector: "ip daddr",
            op: "==",
            value: { kind: "set-ref", text: "@nodeport-ips", name: "nodeport-ips" },
          },
          {
            kind: "vmap",
            text: "meta l4proto . th dport vmap @service-nodeports",
            selector: "meta l4proto . th dport",
            map: "service-nodeports",
          },
        ],
      },
      {
        name: "reject with the family default prints bare",
        rule: rule(rs, "reject-chain", 0),
        want: [{ kind: "reject", text: "reject" }],
      },
      {
        name: "ct state new (libnftables 'in') is ==",
        rule: rule(rs, "filter-input", 0),
        want: [
          {
            kind: "match",
            text: "ct state new",
            selector: "ct state",
            op: "==",
            value: { kind: "literal", text: "new", value: "new" },
          },
          {
            kind: "verdict",
            text: "jump nodeport-endpoints-check",
            verdict: { kind: "jump", target: "nodeport-endpoints-check" },
          },
        ],
      },
    ];
    for (const c of cases) {
      expect(c.rule.statements, c.name).toEqual(c.want);
      expect(c.rule.text, c.name).toBe(c.want.map((s) => s.text).join(" "));
      expect(c.rule.comment, c.name).toBe(c.comment);
      expect(c.rule.handle, c.name).toBeTypeOf("number");
    }
  });

  it("ip6 layout: [IPv6]:port dnat, iifname wildcard, fib daddr, element expiry", () => {
    const rs = parseNftJson(read("synthetic/ip6-newer-layout.json"));
    const ep = rule(rs, "endpoint-BZEKCJ4W-web/frontend/tcp/http__fd00.10..5/8080", 2, "ip6");
    expect(ep.text).toBe("meta l4proto tcp dnat to [fd00:10::5]:8080");
    expect(ep.statements[1]).toMatchObject({ kind: "nat", addr: "fd00:10::5", port: 8080, to: "[fd00:10::5]:8080" });
    const masq = rule(rs, "service-PLVUX2VM-web/frontend/tcp/http", 0, "ip6");
    expect(masq.text).toBe('ip6 daddr fd00:10:96::10 tcp dport 80 iifname != "veth*" jump mark-for-masquerade');
    expect(masq.statements[2]).toEqual({
      kind: "match",
      text: 'iifname != "veth*"',
      selector: "iifname",
      op: "!=",
      value: { kind: "literal", text: '"veth*"', value: "veth*" },
    });
    expect(rule(rs, "services", 1, "ip6").text).toBe(
      "fib daddr type local ip6 daddr != ::1 meta l4proto . th dport vmap @service-nodeports",
    );
    const aff = rs.tables[0]!.sets.get("affinity-BZEKCJ4W-web/frontend/tcp/http__fd00.10..5/8080")!;
    expect(aff.timeout).toBe(600);
    expect(aff.elements).toHaveLength(1);
    expect(aff.elements[0]!.key).toEqual(["2001:db8:5::77"]);
    expect(aff.elements[0]!.expires).toBeGreaterThan(0);
    expect(aff.elements[0]!.expires).toBeLessThanOrEqual(600);
  });

  it("statements outside kube-proxy's vocabulary (inet table)", () => {
    const rs = parseNftJson(read("synthetic/expressions.json"));
    const texts = (chain: string) => [...rs.tables[0]!.chains.get(chain)!.rules].map((r) => r.text);
    expect(texts("pre")).toEqual([
      "meta nfproto ipv4 tcp dport 8080 dnat ip to 10.2.0.1:80",
      "meta nfproto ipv6 tcp dport 8080 dnat ip6 to [fd00::1]:80",
      "tcp dport 2222 redirect to :22",
      "meta nfproto ipv4 dnat ip to tcp dport map @portmap",
    ]);
    expect(rule(rs, "pre", 0, "inet", "misc").statements[2]).toEqual({
      kind: "nat",
      text: "dnat ip to 10.2.0.1:80",
      nat: "dnat",
      family: "ip",
      flags: [],
      addr: "10.2.0.1",
      port: 80,
      to: "10.2.0.1:80",
    });
    expect(rule(rs, "pre", 3, "inet", "misc").statements[1]).toEqual({
      kind: "nat",
      text: "dnat ip to tcp dport map @portmap",
      nat: "dnat",
      family: "ip",
      flags: [],
      to: "tcp dport map @portmap",
    });
    expect(texts("forwarding")).toEqual([
      "ct state established,related accept",
      "ct state invalid counter packets 0 bytes 0 drop",
      'ip saddr @blocked log prefix "blocked: " drop',
      "tcp dport { 22, 80, 443 } limit rate 10/second accept",
      'udp dport 53 counter name "hits" accept',
      "ip protocol icmp reject with icmp host-unreachable",
      "meta l4proto tcp reject with tcp reset",
      "ip6 nexthdr ipv6-icmp reject with icmpv6 port-unreachable",
      'iif "lo" accept',
      "meta mark & 0x0000ff00 == 0x00000100 jump sub",
      "add @recent { ip saddr timeout 10m }",
      "ip daddr 203.0.113.7 ip saddr != { 192.0.2.0/24, 198.51.100.0/24 } drop",
    ]);
    expect(rule(rs, "forwarding", 0, "inet", "misc").statements[0]).toMatchObject({
      value: { kind: "list", items: ["established", "related"] },
    });
    expect(rule(rs, "forwarding", 1, "inet", "misc").statements[1]).toEqual({
      kind: "counter",
      text: "counter packets 0 bytes 0",
      packets: 0,
      bytes: 0,
    });
    expect(rule(rs, "forwarding", 10, "inet", "misc").statements[0]).toMatchObject({
      kind: "set-update",
      op: "add",
      set: "recent",
      key: "ip saddr",
      timeout: 600,
    });
    expect(rule(rs, "sub", 0, "inet", "misc").statements[0]).toEqual({
      kind: "mark",
      text: "ct mark set 0x00000002",
      target: "ct mark",
      op: "set",
      value: 2,
    });
    const t = rs.tables[0]!;
    expect(t.sets.get("blocked")!.elements.map((e) => e.text)).toEqual(["192.0.2.0/24", "198.51.100.1-198.51.100.9"]);
    expect(t.sets.get("portmap")!.elements.map((e) => e.text)).toEqual(["80 : 10.1.0.1", "443 : 10.1.0.2"]);
    expect(t.sets.get("recent")!.elements[0]).toMatchObject({ key: ["192.0.2.55"], timeout: 1200 });
    expect(t.chains.get("forwarding")!.base).toEqual({ type: "filter", hook: "forward", priority: 0, policy: "drop" });
    // The named counter object is not modelled: kept, listed.
    expect(rs.unparsed).toEqual([
      { family: "inet", table: "misc", line: 1, text: "counter hits", context: expect.stringContaining('"counter"') },
    ]);
  });

  it("iptables-nft leftovers: xt expressions are kept as text, listed as unparsed, never dropped", () => {
    const rs = parseNftJson(read("synthetic/mixed-iptables-leftovers.json"));
    expect(rs.tables.map((t) => `${t.family} ${t.name}`)).toEqual(["ip filter", "ip nat", "ip kube-proxy"]);
    const r = rule(rs, "KUBE-SERVICES", 0, "ip", "filter");
    expect(r.text).toBe(
      'meta l4proto tcp ip daddr 172.30.0.46 xt match "comment" tcp dport 80 counter packets 0 bytes 0 xt target "REJECT"',
    );
    expect(r.statements.map((s) => s.kind)).toEqual(["match", "match", "unknown", "match", "counter", "unknown"]);
    const listed = rs.unparsed.filter((u) => u.chain === "KUBE-SERVICES" && u.table === "filter");
    expect(listed.map((u) => u.text)).toEqual(['xt match "comment"', 'xt target "REJECT"']);
    expect(listed[0]).toMatchObject({ family: "ip", handle: r.handle, context: r.text });
    // Every unknown statement of every rule is listed exactly once.
    const unknowns = rs.tables.flatMap((t) => [...t.chains.values()].flatMap((c) => c.rules))
      .flatMap((x) => x.statements).filter((s) => s.kind === "unknown");
    expect(rs.unparsed).toHaveLength(unknowns.length);
    expect(unknowns.length).toBe(78);
    // The kube-proxy table next to them decodes fully.
    expect(rs.unparsed.filter((u) => u.table === "kube-proxy")).toEqual([]);
  });
});

describe("parseNftJson agrees with nft's own text rendering (nft list ruleset) on every fixture", () => {
  for (const name of names) {
    it(name, () => {
      const j = parseNftJson(read(`${name}.json`));
      const t = parseNftText(read(`${name}.nft.txt`));
      const a = parseNftText(read(`${name}.nft-a.txt`));
      expect(j.tables.map((x) => `${x.family} ${x.name}`)).toEqual(t.tables.map((x) => `${x.family} ${x.name}`));
      let compared = 0;
      for (const tj of j.tables) {
        const tt = t.tables.find((x) => x.family === tj.family && x.name === tj.name)!;
        const ta = a.tables.find((x) => x.family === tj.family && x.name === tj.name)!;
        expect(ta.handle).toBe(tj.handle);
        expect([...tj.chains.keys()]).toEqual([...tt.chains.keys()]);
        for (const cj of tj.chains.values()) {
          const ct = tt.chains.get(cj.name)!;
          expect(ct.base, cj.name).toEqual(cj.base);
          expect(ct.rules).toHaveLength(cj.rules.length);
          expect(ta.chains.get(cj.name)!.handle).toBe(cj.handle);
          cj.rules.forEach((rj, i) => {
            expect(a.tables.length && ta.chains.get(cj.name)!.rules[i]!.handle, rj.text).toBe(rj.handle);
            // nft 1.0.6 prints nothing for iptables-nft's xt expressions, so those rules cannot match.
            if (rj.statements.some((s) => s.kind === "unknown")) return;
            const rt = ct.rules[i]!;
            expect(rt.statements, rj.text).toEqual(rj.statements);
            expect(rt.text).toBe(rj.text);
            expect(rt.comment).toBe(rj.comment);
            compared++;
          });
        }
        expect([...tj.sets.keys()]).toEqual([...tt.sets.keys()]);
        for (const sj of tj.sets.values()) {
          const st = tt.sets.get(sj.name)!;
          expect({ kind: st.kind, type: st.type, dataType: st.dataType, timeout: st.timeout, comment: st.comment })
            .toEqual({ kind: sj.kind, type: sj.type, dataType: sj.dataType, timeout: sj.timeout, comment: sj.comment });
          // `expires` counts down between the two nft invocations; everything else must agree.
          const norm = (els: typeof sj.elements) =>
            els.map((e) => JSON.stringify({ ...e, expires: e.expires === undefined ? undefined : "set" })).sort();
          expect(norm(st.elements), sj.name).toEqual(norm(sj.elements));
        }
      }
      expect(compared).toBeGreaterThan(0);
    });
  }
});

describe("parseNftJson expression rendering (libnftables-json shapes)", () => {
  const cases: { name: string; expr: unknown[]; family?: string; want: string; kinds: string[] }[] = [
    {
      name: "raw payload and a range",
      expr: [{
        match: {
          op: "==",
          left: { payload: { base: "nh", offset: 96, len: 32 } },
          right: { range: ["10.0.0.1", "10.0.0.9"] },
        },
      }],
      want: "@nh,96,32 10.0.0.1-10.0.0.9",
      kinds: ["match"],
    },
    {
      name: "ct original direction, relational <",
      expr: [{ match: { op: "<", left: { ct: { key: "bytes", dir: "original" } }, right: 1000 } }, { accept: null }],
      want: "ct original bytes < 1000 accept",
      kinds: ["match", "verdict"],
    },
    {
      name: "numgen with offset, inline vmap with a range key",
      expr: [{
        vmap: {
          key: { numgen: { mode: "inc", mod: 4, offset: 1 } },
          data: { set: [[{ range: [1, 2] }, { goto: { target: "a" } }], [3, { jump: { target: "b" } }]] },
        },
      }],
      want: "numgen inc mod 4 offset 1 vmap { 1-2 : goto a, 3 : jump b }",
      kinds: ["vmap"],
    },
    {
      name: "snat with a port and flags; masquerade to ports",
      expr: [{ snat: { addr: "192.0.2.1", port: 1024, flags: ["persistent"] } }, {
        masquerade: { port: { range: [1024, 2048] }, flags: "random" },
      }],
      want: "snat to 192.0.2.1:1024 persistent masquerade to :1024-2048 random",
      kinds: ["nat", "masquerade"],
    },
    {
      name: "reject in an ip6 table: icmpv6 port-unreachable is the default",
      family: "ip6",
      expr: [{ reject: { type: "icmpv6", expr: "port-unreachable" } }],
      want: "reject",
      kinds: ["reject"],
    },
    {
      name: "reject with a non-default ICMP code; bare reject",
      expr: [{ reject: { type: "icmp", expr: "admin-prohibited" } }, { reject: null }],
      want: "reject with icmp admin-prohibited reject",
      kinds: ["reject", "reject"],
    },
    {
      name: "mark set mark xor / and, notrack, log level, limit over with burst",
      expr: [
        { mangle: { key: { meta: { key: "mark" } }, value: { "^": [{ meta: { key: "mark" } }, 16384] } } },
        { mangle: { key: { meta: { key: "mark" } }, value: { "&": [{ meta: { key: "mark" } }, 255] } } },
        { notrack: null },
        { log: { level: "warn" } },
        { limit: { rate: 5, per: "minute", burst: 10, inv: true } },
      ],
      want:
        "meta mark set meta mark ^ 0x00004000 meta mark set meta mark & 0x000000ff notrack log level warn limit rate over 5/minute burst 10 packets",
      kinds: ["mark", "mark", "notrack", "log", "limit"],
    },
    {
      name: "unknown statements are rendered compactly and kept",
      expr: [{ queue: { num: 1 } }, { "tproxy": { addr: "10.0.0.1" } }, {
        mangle: { key: { payload: { protocol: "ip", field: "ttl" } }, value: 1 },
      }],
      want: 'queue tproxy {"addr":"10.0.0.1"} mangle {"key":{"payload":{"protocol":"ip","field":"ttl"}},"value":1}',
      kinds: ["verdict", "unknown", "unknown"],
    },
    {
      name: "an undecodable left side turns the match into an unknown statement",
      expr: [{ match: { op: "==", left: { socket: { key: "transparent" } }, right: 1 } }, { drop: null }],
      want: 'match {"op":"==","left":{"socket":{"key":"transparent"}},"right":1} drop',
      kinds: ["unknown", "verdict"],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = only(ruleDoc(c.expr, c.family));
      expect(r.text).toBe(c.want);
      expect(r.statements.map((s) => s.kind)).toEqual(c.kinds);
    });
  }

  it("unknown statements carry the rule's handle and line in unparsed", () => {
    const rs = parseNftJson(ruleDoc([{ tproxy: { addr: "10.0.0.1" } }]));
    expect(rs.unparsed).toEqual([
      {
        family: "ip",
        table: "t",
        chain: "c",
        handle: 2,
        line: 1,
        text: 'tproxy {"addr":"10.0.0.1"}',
        context: 'tproxy {"addr":"10.0.0.1"}',
      },
    ]);
  });

  it("line numbers of pretty-printed JSON point at each object", () => {
    const text = JSON.stringify(
      {
        nftables: [
          { table: { family: "ip", name: "t" } },
          { chain: { family: "ip", table: "t", name: "c" } },
          { rule: { family: "ip", table: "t", chain: "c", expr: [{ accept: null }] } },
        ],
      },
      null,
      2,
    );
    const rs = parseNftJson(text);
    const t = rs.tables[0]!;
    expect(text.split("\n")[t.line - 1]).toContain("{");
    expect(text.split("\n")[t.line]).toContain('"table"');
    const r = t.chains.get("c")!.rules[0]!;
    expect(text.split("\n")[r.line]).toContain('"rule"');
    expect(r.line).toBeGreaterThan(t.chains.get("c")!.line);
  });

  it("creates tables and chains a partial listing did not declare", () => {
    const rs = parseNftJson(doc({ rule: { family: "ip", table: "t", chain: "c", expr: [{ drop: null }] } }));
    expect(rs.tables[0]!.chains.get("c")!.rules.map((r) => r.text)).toEqual(["drop"]);
  });

  it("adds separate element objects to their set", () => {
    const rs = parseNftJson(doc(
      { set: { family: "ip", table: "t", name: "s", type: "ipv4_addr" } },
      {
        element: { family: "ip", table: "t", name: "s", elem: ["10.0.0.1", { prefix: { addr: "10.1.0.0", len: 16 } }] },
      },
    ));
    expect(rs.tables[0]!.sets.get("s")!.elements.map((e) => e.text)).toEqual(["10.0.0.1", "10.1.0.0/16"]);
  });

  it("keeps an undecodable set element as text and lists it", () => {
    const rs = parseNftJson(
      doc({ map: { family: "ip", table: "t", name: "m", type: "ipv4_addr", map: "verdict", elem: ["bad"] } }),
    );
    expect(rs.tables[0]!.sets.get("m")!.elements).toEqual([{ keyText: '"bad"', key: ['"bad"'], text: '"bad"' }]);
    expect(rs.unparsed).toEqual([{ family: "ip", table: "t", line: 1, text: '"bad"', context: "map m" }]);
  });
});

describe("parseNftJson errors", () => {
  const full = read("TestOverallNFTablesRules.json");
  const cases: { name: string; input: string; want: string; line: number }[] = [
    { name: "empty", input: "", want: 'nft-json line 0: empty input: ""', line: 0 },
    { name: "blank", input: " \n\n", want: 'nft-json line 0: empty input: ""', line: 0 },
    {
      name: "truncated (cut in the middle of a rule)",
      input: full.slice(0, 5000),
      want: `nft-json line 1: truncated JSON: "${full.slice(0, 200)}…"`,
      line: 1,
    },
    {
      name: "truncated pretty-printed: the last line is quoted",
      input: '{\n  "nftables": [\n    {"table": {"family": "ip",',
      want: 'nft-json line 3: truncated JSON: "    {"table": {"family": "ip","',
      line: 3,
    },
    {
      name: "malformed (stray character) on line 2",
      input: '{"nftables": [\n{"table": {"family": "ip" "name": "t"}}]}',
      want: 'nft-json line 2: malformed JSON: "{"table": {"family": "ip" "name": "t"}}]}"',
      line: 2,
    },
    {
      name: "not JSON at all (nft text given to the JSON parser)",
      input: "table ip kube-proxy {\n}\n",
      want: 'nft-json line 1: malformed JSON: "table ip kube-proxy {"',
      line: 1,
    },
    {
      name: "JSON but not an nft document",
      input: '{"items": []}',
      want: 'nft-json line 1: not an nft -j document (expected {"nftables": [...]}): "{"items": []}"',
      line: 1,
    },
    {
      name: "array element that is not a one-key object",
      input: doc({ table: { family: "ip", name: "t" }, chain: {} }),
      want:
        'nft-json line 1: expected an object with one key such as {"rule": {...}}: "{"table":{"family":"ip","name":"t"},"chain":{}}"',
      line: 1,
    },
    {
      name: "table without a name",
      input: doc({ table: { family: "ip" } }),
      want: 'nft-json line 1: table without family or name: "{"table":{"family":"ip"}}"',
      line: 1,
    },
    {
      name: "chain without a table",
      input: doc({ chain: { family: "ip", name: "c" } }),
      want: 'nft-json line 1: chain without family, table or name: "{"chain":{"family":"ip","name":"c"}}"',
      line: 1,
    },
    {
      name: "rule without a chain",
      input: doc({ rule: { family: "ip", table: "t", expr: [] } }),
      want: 'nft-json line 1: rule without family, table or chain: "{"rule":{"family":"ip","table":"t","expr":[]}}"',
      line: 1,
    },
    {
      name: "rule without expr",
      input: doc({ rule: { family: "ip", table: "t", chain: "c" } }),
      want: 'nft-json line 1: rule without an expr array: "{"rule":{"family":"ip","table":"t","chain":"c"}}"',
      line: 1,
    },
    {
      name: "set without a name",
      input: doc({ set: { family: "ip", table: "t" } }),
      want: 'nft-json line 1: set without family, table or name: "{"set":{"family":"ip","table":"t"}}"',
      line: 1,
    },
    {
      name: "element without a set name",
      input: doc({ element: { family: "ip", table: "t" } }),
      want: 'nft-json line 1: element without family, table or name: "{"element":{"family":"ip","table":"t"}}"',
      line: 1,
    },
    {
      name: "element of a set that was not listed",
      input: doc({ element: { family: "ip", table: "t", name: "s", elem: [] } }),
      want:
        'nft-json line 1: element of undeclared set s: "{"element":{"family":"ip","table":"t","name":"s","elem":[]}}"',
      line: 1,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      let err: unknown;
      try {
        parseNftJson(c.input);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DumpParseError);
      const e = err as DumpParseError;
      expect(e.message).toBe(c.want);
      expect(e.format).toBe("nft-json");
      expect(e.line).toBe(c.line);
    });
  }
});

// `nft list` prints each table once; a section holding two listings joined (a copy appended, two captures in one
// file) would count every rule twice: each endpoint 100% of new connections. Refused, naming both lines.
describe("a table listed twice is two listings joined, not one ruleset", () => {
  const lab = (f: string) => readFileSync(new URL(`../examples/nftables-lab/nodes/test-node/${f}`, import.meta.url), "utf8");
  it("nft -j", () => {
    const once = lab("nft-json.txt");
    expect(() => parseNftJson(once)).not.toThrow();
    expect(() => parseNftJson(once + once)).toThrow(DumpParseError);
    expect(() => parseNftJson(once + once)).toThrow(/table ip kube-proxy is listed twice \(first at line 1\): two listings joined into one section\? capture it again/);
  });
  it("nft list (text); `add table` commands of a restore buffer may repeat a table, and still do", () => {
    const once = readFileSync(new URL("./fixtures/nftables/affinity-held/nodes/test-node/nft-text.txt", import.meta.url), "utf8");
    expect(() => parseNftText(once)).not.toThrow();
    expect(() => parseNftText(once + once)).toThrow(/table ip kube-proxy is listed twice \(first at line 1\)/);
    expect(() => parseNftText("add table ip t\nadd chain ip t c\nadd table ip t\nadd rule ip t c counter\n")).not.toThrow();
  });
});
