import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DumpParseError } from "../src/datapath/errors.ts";
import type { NftRuleset, NftStatement } from "../src/datapath/nft_model.ts";
import { formatNftTime, parseNftTime, resolvePriority } from "../src/datapath/nft_model.ts";
import { parseNftText } from "../src/datapath/nft_text.ts";

const read = (p: string) => readFileSync(new URL(`./fixtures/nftables/${p}`, import.meta.url), "utf8");

/** Parses one rule given as `add rule` body text and returns its statements. */
function stmts(body: string, family = "ip"): NftStatement[] {
  const rs = parseNftText(`add table ${family} t\nadd chain ${family} t c\nadd rule ${family} t c ${body}\n`);
  return rs.tables[0]!.chains.get("c")!.rules[0]!.statements;
}

function chainTexts(rs: NftRuleset, chain: string, family = "ip", table = "kube-proxy"): string[] {
  const t = rs.tables.find((x) => x.family === family && x.name === table)!;
  return t.chains.get(chain)!.rules.map((r) => r.text);
}

describe("parseNftText on `nft list ruleset` output", () => {
  it("TestOverallNFTablesRules: structure, multi-line element lists, comments, symbolic priorities", () => {
    const rs = parseNftText(read("TestOverallNFTablesRules.nft.txt"));
    expect(rs.format).toBe("nft-list");
    expect(rs.unparsed).toEqual([]);
    const t = rs.tables[0]!;
    expect(t).toMatchObject({ family: "ip", name: "kube-proxy", comment: "rules for kube-proxy", line: 1 });
    expect(t.handle).toBeUndefined();
    expect(t.sets.get("cluster-ips")!.elements.map((e) => e.text)).toEqual([
      "172.30.0.41",
      "172.30.0.42",
      "172.30.0.43",
      "172.30.0.44",
      "172.30.0.45",
      "172.30.0.46",
    ]);
    const aff = t.sets.get("affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80")!;
    expect(aff).toMatchObject({ flags: ["dynamic", "timeout"], timeout: 10800, size: 65535, elements: [] });
    // `type filter hook prerouting priority dstnat - 10; policy accept;`
    expect(t.chains.get("filter-prerouting-pre-dnat")!.base).toEqual({
      type: "filter",
      hook: "prerouting",
      priority: -110,
      policy: "accept",
    });
    expect(t.chains.get("nat-postrouting")!.base).toMatchObject({ priority: 100 }); // srcnat
    expect(t.chains.get("filter-forward")!.base).toMatchObject({ priority: 0 }); // filter
    expect(t.chains.get("reject-chain")!.comment).toBe("helper for @no-endpoint-services / @no-endpoint-nodeports");
    const ext = t.chains.get("external-42NFTM6N-ns2/svc2/tcp/p80")!;
    expect(ext.rules.map((r) => [r.text, r.comment, r.line])).toEqual([
      ["ip saddr 10.0.0.0/8 goto service-42NFTM6N-ns2/svc2/tcp/p80", "short-circuit pod traffic", 162],
      ["fib saddr type local jump mark-for-masquerade", "masquerade local traffic", 163],
      ["fib saddr type local goto service-42NFTM6N-ns2/svc2/tcp/p80", "short-circuit local traffic", 164],
    ]);
    expect(read("TestOverallNFTablesRules.nft.txt").split("\n")[161]!.trim()).toBe(
      'ip saddr 10.0.0.0/8 goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit pod traffic"',
    );
  });

  it("nft -a: handles of tables, chains, sets and rules", () => {
    const rs = parseNftText(read("synthetic/ip6-newer-layout.nft-a.txt"));
    const t = rs.tables[0]!;
    expect(t.handle).toBe(1);
    expect(t.sets.get("cluster-ips")!.handle).toBe(17);
    expect(t.chains.get("filter-output-post-dnat")!.handle).toBe(5);
    expect(t.chains.get("services")!.rules.map((r) => [r.text, r.handle])).toEqual([
      ["ip6 daddr . meta l4proto . th dport vmap @service-ips", 56],
      ["fib daddr type local ip6 daddr != ::1 meta l4proto . th dport vmap @service-nodeports", 57],
    ]);
    expect(t.chains.get("filter-output-post-dnat")!.base).toEqual({
      type: "filter",
      hook: "output",
      priority: -90,
      policy: "accept",
    });
    const aff = t.sets.get("affinity-BZEKCJ4W-web/frontend/tcp/http__fd00.10..5/8080")!;
    expect(aff.elements).toHaveLength(1);
    expect(aff.elements[0]!.key).toEqual(["2001:db8:5::77"]);
    expect(aff.elements[0]!.expires).toBeGreaterThan(0);
  });

  it("iptables-nft tables: nft 1.0.6 prints nothing for xt matches; the rest still decodes", () => {
    const rs = parseNftText(read("synthetic/mixed-iptables-leftovers.nft.txt"));
    expect(rs.tables.map((t) => `${t.family} ${t.name}`)).toEqual(["ip filter", "ip nat", "ip kube-proxy"]);
    expect(chainTexts(rs, "KUBE-SERVICES", "ip", "filter")).toEqual([
      "meta l4proto tcp ip daddr 172.30.0.46 tcp dport 80 counter packets 0 bytes 0 reject",
    ]);
    expect(rs.unparsed).toEqual([]);
  });

  it("skips `# Warning: table ip nat is managed by iptables-nft` lines and other comments", () => {
    const rs = parseNftText(
      "# Warning: table ip nat is managed by iptables-nft, do not touch!\n" +
        "table ip nat {\n\t# a comment\n\tchain POSTROUTING {\n\t\ttype nat hook postrouting priority srcnat; policy accept;\n" +
        "\t\tmasquerade\n\t}\n}\n",
    );
    expect(rs.tables[0]!.chains.get("POSTROUTING")!.rules.map((r) => r.text)).toEqual(["masquerade"]);
  });

  it("keeps stateful objects it does not model (counter, quota) as unparsed text", () => {
    const rs = parseNftText(read("synthetic/expressions.nft.txt"));
    expect(rs.unparsed).toEqual([
      { family: "inet", table: "misc", line: 2, text: "counter hits", context: "counter hits { packets 0 bytes 0 }" },
    ]);
    expect(rs.tables[0]!.sets.get("portmap")).toMatchObject({
      kind: "map",
      type: "inet_service",
      dataType: "ipv4_addr",
    });
  });
});

describe("parseNftText on nft -f transactions (knftables / kube-proxy test syntax)", () => {
  it("TestOverallNFTablesRules.nft: declarations in any order, rules in chain order, comments on elements", () => {
    const rs = parseNftText(read("TestOverallNFTablesRules.nft"));
    expect(rs.format).toBe("nft-transaction");
    const t = rs.tables[0]!;
    expect(t.comment).toBe("rules for kube-proxy");
    expect(t.chains.get("filter-prerouting-pre-dnat")!.base).toEqual({
      type: "filter",
      hook: "prerouting",
      priority: -110,
    });
    expect(t.sets.get("affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80")).toMatchObject({
      flags: ["dynamic", "timeout"],
      timeout: 10800,
    });
    expect(t.sets.get("no-endpoint-services")!.elements.map((e) => [e.text, e.comment])).toEqual([
      ["1.2.3.4 . tcp . 80 : drop", "ns2/svc2:p80"],
      ["192.168.99.22 . tcp . 80 : drop", "ns2/svc2:p80"],
      ["172.30.0.46 . tcp . 80 : goto reject-chain", "ns6/svc6:p80"],
    ]);
    expect(chainTexts(rs, "service-HVFWP5L3-ns5/svc5/tcp/p80")).toEqual([
      "ip daddr 172.30.0.45 ip saddr != 10.0.0.0/8 jump mark-for-masquerade",
      "ip saddr @affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 goto endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80",
      "numgen random mod 1 vmap { 0 : goto endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 }",
    ]);
    // ` , ` between vmap entries is written back as nft prints it.
    expect(chainTexts(rs, "service-LAUZTJTB-ns4/svc4/tcp/p80")[1]).toBe(
      "numgen random mod 2 vmap { 0 : goto endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80, 1 : goto endpoint-5RFCDDV7-ns4/svc4/tcp/p80__10.180.0.5/80 }",
    );
    // The rule keeps the -f spelling; the decoded statement is canonical.
    expect(t.chains.get("mark-for-masquerade")!.rules[0]).toMatchObject({
      text: "mark set mark or 0x4000",
      statements: [{ kind: "mark", target: "meta mark", op: "or", value: 0x4000 }],
    });
    expect(t.chains.get("masquerading")!.rules[0]!.statements[0]).toEqual({
      kind: "match",
      text: "mark and 0x4000 == 0",
      selector: "meta mark & 0x00004000",
      op: "==",
      value: { kind: "literal", text: "0x00000000", value: "0x00000000" },
    });
    expect(t.chains.get("cluster-ips-check")!.rules[1]!.statements[0]).toMatchObject({
      selector: "ip daddr",
      value: { kind: "set", elements: [{ kind: "prefix", addr: "172.30.0.0", len: 16 }] },
    });
  });

  it("TestSyncProxyRulesRepeated-03: flushed service and endpoint chains exist with no rules", () => {
    const rs = parseNftText(read("TestSyncProxyRulesRepeated-03-delete-svc2-chains-flushed-not-deleted.nft"));
    const t = rs.tables[0]!;
    expect(t.chains.get("service-MHHHYRWA-ns2/svc2/tcp/p8080")!.rules).toEqual([]);
    expect(t.chains.get("endpoint-7RVP4LUQ-ns2/svc2/tcp/p8080__10.0.2.1/8080")!.rules).toEqual([]);
  });

  it("flush, delete, insert, create, multi-line commands, default family", () => {
    const rs = parseNftText(
      [
        "add table nat",
        "create chain nat post { type nat hook postrouting priority srcnat ; policy accept ; }",
        "add chain ip nat c",
        "add rule ip nat c jump post",
        "insert rule ip nat c counter",
        "add set ip nat s {",
        "  type ipv4_addr ; flags interval ;",
        "  elements = { 10.0.0.0/8, 192.168.0.1 } ;",
        "}",
        "add element ip nat s { 172.16.0.0/12 }",
        "delete element ip nat s { 192.168.0.1 }",
        "add map ip nat m { type inet_service : verdict ; }",
        "add element ip nat m { 80 : jump c }",
        "flush map ip nat m",
        "add table ip6 gone",
        "delete table ip6 gone",
        "add chain ip nat old",
        "delete chain ip nat old",
        "add set ip nat olds { type ipv4_addr ; }",
        "delete set ip nat olds",
        "add counter ip nat hits",
      ].join("\n"),
    );
    expect(rs.tables.map((t) => `${t.family} ${t.name}`)).toEqual(["ip nat"]);
    const t = rs.tables[0]!;
    expect(t.chains.get("post")!.base).toEqual({ type: "nat", hook: "postrouting", priority: 100, policy: "accept" });
    expect(t.chains.get("c")!.rules.map((r) => [r.text, r.line])).toEqual([["counter", 5], ["jump post", 4]]);
    expect(t.sets.get("s")!.elements.map((e) => e.text)).toEqual(["10.0.0.0/8", "172.16.0.0/12"]);
    expect(t.sets.get("s")!.flags).toEqual(["interval"]);
    expect(t.sets.get("m")!.elements).toEqual([]);
    expect([...t.chains.keys()]).toEqual(["post", "c"]);
    expect([...t.sets.keys()]).toEqual(["s", "m"]);
    expect(rs.unparsed).toEqual([
      { family: "ip", table: "nat", line: 21, text: "add counter ip nat hits", context: "add counter ip nat hits" },
    ]);
    const flushed = parseNftText("add table ip t\nadd chain ip t c\nadd rule ip t c drop\nflush chain ip t c\n");
    expect(flushed.tables[0]!.chains.get("c")!.rules).toEqual([]);
    const all = parseNftText(
      "add table ip t\nadd set ip t s { type mark ; }\nadd element ip t s { 16384 }\nflush table ip t\n",
    );
    expect(all.tables[0]!.sets.get("s")!.elements).toEqual([]);
    expect(parseNftText("add table ip t\nflush ruleset\n").tables).toEqual([]);
  });

  it("mark-typed set elements are printed in hex, ifname elements quoted", () => {
    const rs = parseNftText(
      "add table ip t\nadd set ip t marks { type mark ; }\nadd element ip t marks { 16384 }\n" +
        'add set ip t ifs { type ifname ; }\nadd element ip t ifs { "eth0" }\n',
    );
    expect(rs.tables[0]!.sets.get("marks")!.elements[0]!.key).toEqual(["0x00004000"]);
    expect(rs.tables[0]!.sets.get("ifs")!.elements[0]!.key).toEqual(['"eth0"']);
  });
});

describe("parseNftText statement decoding (nft -f input spellings)", () => {
  const cases: { name: string; input: string; family?: string; want: NftStatement[] }[] = [
    {
      name: "bare l4proto and explicit eq",
      input: "l4proto eq tcp",
      want: [{
        kind: "match",
        text: "l4proto eq tcp",
        selector: "meta l4proto",
        op: "==",
        value: { kind: "literal", text: "tcp", value: "tcp" },
      }],
    },
    {
      name: "meta iifname prints unqualified; prefix wildcard",
      input: 'meta iifname != "veth*" jump x',
      want: [
        {
          kind: "match",
          text: 'meta iifname != "veth*"',
          selector: "iifname",
          op: "!=",
          value: { kind: "literal", text: '"veth*"', value: "veth*" },
        },
        { kind: "verdict", text: "jump x", verdict: { kind: "jump", target: "x" } },
      ],
    },
    {
      name: "ip6 dnat with brackets and port",
      input: "meta l4proto tcp dnat to [fd00:10::5]:8080",
      family: "ip6",
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
          text: "dnat to [fd00:10::5]:8080",
          nat: "dnat",
          flags: [],
          addr: "fd00:10::5",
          port: 8080,
          to: "[fd00:10::5]:8080",
        },
      ],
    },
    {
      name: "dnat ip to ADDR (inet), no port; snat with flags",
      input: "dnat ip to 10.0.0.1 snat to 192.0.2.1:1024 fully-random,persistent",
      family: "inet",
      want: [
        {
          kind: "nat",
          text: "dnat ip to 10.0.0.1",
          nat: "dnat",
          family: "ip",
          flags: [],
          addr: "10.0.0.1",
          to: "10.0.0.1",
        },
        {
          kind: "nat",
          text: "snat to 192.0.2.1:1024 fully-random,persistent",
          nat: "snat",
          flags: ["fully-random", "persistent"],
          addr: "192.0.2.1",
          port: 1024,
          to: "192.0.2.1:1024",
        },
      ],
    },
    {
      name: "ip6 dnat to a bare address",
      input: "dnat to fd00::1",
      family: "ip6",
      want: [{ kind: "nat", text: "dnat to fd00::1", nat: "dnat", flags: [], addr: "fd00::1", to: "fd00::1" }],
    },
    {
      name: "ct mark set and mark set mark and",
      input: "ct mark set 1 mark set mark and 0xff",
      want: [
        { kind: "mark", text: "ct mark set 1", target: "ct mark", op: "set", value: 1 },
        { kind: "mark", text: "mark set mark and 0xff", target: "meta mark", op: "and", value: 0xff },
      ],
    },
    {
      name: "update with a timeout; delete from a set",
      input: "update @aff { ip saddr timeout 3h } delete @aff { ip saddr }",
      want: [
        {
          kind: "set-update",
          text: "update @aff { ip saddr timeout 3h }",
          op: "update",
          set: "aff",
          key: "ip saddr",
          timeout: 10800,
        },
        { kind: "set-update", text: "delete @aff { ip saddr }", op: "delete", set: "aff", key: "ip saddr" },
      ],
    },
    {
      name: "fib with two flags and an oif result",
      input: "fib daddr . iif oif missing drop",
      want: [
        {
          kind: "match",
          text: "fib daddr . iif oif missing",
          selector: "fib daddr . iif oif",
          op: "==",
          value: { kind: "literal", text: "missing", value: "missing" },
        },
        { kind: "verdict", text: "drop", verdict: { kind: "drop" } },
      ],
    },
    {
      name: "numgen with offset and a set of indexes",
      input: "numgen inc mod 4 offset 1 vmap { { 1, 2 } : goto a, 3 : goto b }",
      want: [{
        kind: "vmap",
        text: "numgen inc mod 4 offset 1 vmap { { 1, 2 } : goto a, 3 : goto b }",
        selector: "numgen inc mod 4 offset 1",
        numgen: { mode: "inc", mod: 4, offset: 1 },
        entries: [
          {
            key: {
              kind: "set",
              text: "{ 1, 2 }",
              elements: [{ kind: "literal", text: "1", value: "1" }, { kind: "literal", text: "2", value: "2" }],
            },
            verdict: { kind: "goto", target: "a" },
          },
          { key: { kind: "literal", text: "3", value: "3" }, verdict: { kind: "goto", target: "b" } },
        ],
      }],
    },
    {
      name: "raw payload, concatenated value, ct original",
      input: "@nh,96,32 1.2.3.4 ct original saddr 10.0.0.1 ip daddr . tcp dport { 10.0.0.1 . 80 }",
      want: [
        {
          kind: "match",
          text: "@nh,96,32 1.2.3.4",
          selector: "@nh,96,32",
          op: "==",
          value: { kind: "literal", text: "1.2.3.4", value: "1.2.3.4" },
        },
        {
          kind: "match",
          text: "ct original saddr 10.0.0.1",
          selector: "ct original saddr",
          op: "==",
          value: { kind: "literal", text: "10.0.0.1", value: "10.0.0.1" },
        },
        {
          kind: "match",
          text: "ip daddr . tcp dport { 10.0.0.1 . 80 }",
          selector: "ip daddr . tcp dport",
          op: "==",
          value: {
            kind: "set",
            text: "{ 10.0.0.1 . 80 }",
            elements: [{
              kind: "concat",
              text: "10.0.0.1 . 80",
              parts: [{ kind: "literal", text: "10.0.0.1", value: "10.0.0.1" }, {
                kind: "literal",
                text: "80",
                value: "80",
              }],
            }],
          },
        },
      ],
    },
    {
      name: "reject with icmp type (older spelling), log flags, limit burst, named counter, notrack, masquerade to",
      input:
        'reject with icmp type host-unreachable log prefix "x" level info flags all limit rate 5/minute burst 10 packets counter name "c" notrack masquerade to :1024-2048',
      want: [
        { kind: "reject", text: "reject with icmp type host-unreachable", with: "icmp host-unreachable" },
        { kind: "log", text: 'log prefix "x" level info flags all', prefix: "x" },
        { kind: "limit", text: "limit rate 5/minute burst 10 packets" },
        { kind: "counter", text: 'counter name "c"', name: "c" },
        { kind: "notrack", text: "notrack" },
        { kind: "masquerade", text: "masquerade to :1024-2048", flags: [], to: ":1024-2048" },
      ],
    },
    {
      name: "unknown pieces are kept and parsing resumes at the next statement",
      input: "tcp option maxseg size set rt mtu ip saddr counter ip daddr 10.0.0.1 counter accept",
      want: [
        { kind: "unknown", text: "tcp option maxseg size set rt mtu" },
        // `ip saddr` without a value is not a match: kept too.
        { kind: "unknown", text: "ip saddr" },
        { kind: "counter", text: "counter" },
        {
          kind: "match",
          text: "ip daddr 10.0.0.1",
          selector: "ip daddr",
          op: "==",
          value: { kind: "literal", text: "10.0.0.1", value: "10.0.0.1" },
        },
        { kind: "counter", text: "counter" },
        { kind: "verdict", text: "accept", verdict: { kind: "accept" } },
      ],
    },
    {
      name: "a statement keyword without its arguments is unknown",
      input: "dnat jump",
      want: [
        { kind: "unknown", text: "dnat" },
        { kind: "unknown", text: "jump" },
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(stmts(c.input, c.family)).toEqual(c.want);
    });
  }

  it("unknown statements are listed in unparsed with their line and rule", () => {
    const rs = parseNftText(
      "add table ip t\nadd chain ip t c\nadd rule ip t c meta l4proto tcp tproxy to :50080 accept\n",
    );
    expect(rs.unparsed).toEqual([
      {
        family: "ip",
        table: "t",
        chain: "c",
        line: 3,
        text: "tproxy to :50080",
        context: "meta l4proto tcp tproxy to :50080 accept",
      },
    ]);
    expect(rs.tables[0]!.chains.get("c")!.rules[0]!.statements.map((x) => x.kind)).toEqual([
      "match",
      "unknown",
      "verdict",
    ]);
    // jhash / symhash keys are decoded (as nft prints them), not unknown.
    expect(stmts("jhash ip saddr . tcp dport mod 4 seed 0xdead offset 1 vmap { 1 : accept }")[0]).toMatchObject({
      kind: "vmap",
      selector: "jhash ip saddr . tcp dport mod 4 seed 0xdead offset 1",
    });
  });
});

describe("nft model helpers", () => {
  it("resolvePriority", () => {
    const cases: [string, string, number | undefined][] = [
      ["-110", "ip", -110],
      ["dstnat - 10", "ip", -110],
      ["dstnat", "ip6", -100],
      ["srcnat", "inet", 100],
      ["filter + 5", "ip", 5],
      ["mangle", "ip", -150],
      ["raw", "ip", -300],
      ["security", "ip", 50],
      ["dstnat", "bridge", -300],
      ["out", "bridge", 100],
      ["bogus", "ip", undefined],
      ["out", "ip", undefined],
      ["", "ip", undefined],
    ];
    for (const [text, family, want] of cases) expect(resolvePriority(text, family), text).toBe(want);
  });

  it("parseNftTime / formatNftTime", () => {
    const cases: [string, number | undefined][] = [
      ["10800s", 10800],
      ["3h", 10800],
      ["1h30m", 5400],
      ["9m49s412ms", 589.412],
      ["2d", 172800],
      ["600", 600],
      ["3x", undefined],
      ["h", undefined],
      ["", undefined],
    ];
    for (const [text, want] of cases) expect(parseNftTime(text), text).toBe(want);
    expect([10800, 600, 5400, 0, 0.5, 90061].map(formatNftTime)).toEqual([
      "3h",
      "10m",
      "1h30m",
      "0s",
      "500ms",
      "1d1h1m1s",
    ]);
  });
});

describe("parseNftText errors", () => {
  const table = (body: string) => `table ip t {\n${body}\n}\n`;
  const cases: { name: string; input: string; want: string; line: number }[] = [
    { name: "empty", input: "", want: 'nft-text line 0: empty input: ""', line: 0 },
    { name: "blank", input: "\n  \n", want: 'nft-text line 0: empty input: ""', line: 0 },
    {
      name: "stray text at top level",
      input: "hello world\n",
      want:
        'nft-text line 1: expected "table FAMILY NAME {" or an nft command (add, insert, flush, delete): "hello world"',
      line: 1,
    },
    {
      name: "JSON given to the text parser",
      input: '{"nftables": []}',
      want:
        'nft-text line 1: expected "table FAMILY NAME {" or an nft command (add, insert, flush, delete): "{"nftables": []}"',
      line: 1,
    },
    {
      name: "table header with an unknown family",
      input: "table foo t {\n}\n",
      want: 'nft-text line 1: expected "table FAMILY NAME {": "table foo t {"',
      line: 1,
    },
    {
      name: "truncated listing: table not closed",
      input: read("TestOverallNFTablesRules.nft.txt").split("\n").slice(0, 57).join("\n"),
      want: "nft-text line 57: truncated: table ip kube-proxy not closed ('}' missing): \"\t}\"",
      line: 57,
    },
    {
      name: "truncated listing: cut inside a chain",
      input: "table ip t {\n\tchain c {\n\t\tjump x\n",
      want: "nft-text line 3: truncated: chain c not closed ('}' missing): \"\t\tjump x\"",
      line: 3,
    },
    {
      name: "truncated listing: cut inside a set",
      input: "table ip t {\n\tset s {\n\t\ttype ipv4_addr\n",
      want: "nft-text line 3: truncated: set s not closed ('}' missing): \"\t\ttype ipv4_addr\"",
      line: 3,
    },
    {
      name: "truncated listing: cut inside a multi-line element list",
      input: read("TestOverallNFTablesRules.nft.txt").split("\n").slice(0, 7).join("\n"),
      want: "nft-text line 7: truncated: '}' missing at end of input: \"\t\t\t     172.30.0.43, 172.30.0.44,\"",
      line: 7,
    },
    {
      name: "unterminated string",
      input: table('\tchain c {\n\t\tjump x comment "oops\n\t}'),
      want: 'nft-text line 3: unterminated string: "\t\tjump x comment "oops"',
      line: 3,
    },
    {
      name: "unexpected line in a table",
      input: table("\tjump x"),
      want: 'nft-text line 2: unexpected line in table ip t: "\tjump x"',
      line: 2,
    },
    {
      name: "unknown priority",
      input: table("\tchain c {\n\t\ttype filter hook input priority bogus; policy accept;\n\t}"),
      want:
        'nft-text line 3: unknown chain priority "bogus": "\t\ttype filter hook input priority bogus; policy accept;"',
      line: 3,
    },
    {
      name: "base chain without hook",
      input: table("\tchain c {\n\t\ttype filter priority 0;\n\t}"),
      want: 'nft-text line 3: expected "type T hook H [device D] priority P": "\t\ttype filter priority 0;"',
      line: 3,
    },
    {
      name: "unbalanced brace in a rule",
      input: table("\tchain c {\n\t\tip daddr 1.2.3.4 }\n\t}"),
      want: "nft-text line 3: unbalanced '}' in rule: \"\t\tip daddr 1.2.3.4 }\"",
      line: 3,
    },
    {
      name: "unreadable element list",
      input: table("\tset s {\n\t\ttype ipv4_addr\n\t\telements = { 1.2.3.4 : : }\n\t}"),
      want: 'nft-text line 4: cannot read the elements of set s: "\t\telements = { 1.2.3.4 : : }"',
      line: 4,
    },
    {
      name: "transaction: rule before its table",
      input: "add rule ip t c drop\n",
      want: 'nft-text line 1: table ip t does not exist: "add rule ip t c drop"',
      line: 1,
    },
    {
      name: "transaction: rule before its chain",
      input: "add table ip t\nadd rule ip t c drop\n",
      want: 'nft-text line 2: chain c does not exist in table ip t: "add rule ip t c drop"',
      line: 2,
    },
    {
      name: "transaction: element before its set",
      input: "add table ip t\nadd element ip t s { 1.2.3.4 }\n",
      want: 'nft-text line 2: set s does not exist in table ip t: "add element ip t s { 1.2.3.4 }"',
      line: 2,
    },
    {
      name: "transaction: element list without braces",
      input: "add table ip t\nadd set ip t s { type ipv4_addr ; }\nadd element ip t s 1.2.3.4\n",
      want: 'nft-text line 3: expected { … }: "add element ip t s 1.2.3.4"',
      line: 3,
    },
    {
      name: "transaction: bad element",
      input: "add table ip t\nadd map ip t m { type ipv4_addr : verdict ; }\nadd element ip t m { 1.2.3.4 : }\n",
      want: 'nft-text line 3: cannot read the elements of map m: "add element ip t m { 1.2.3.4 : }"',
      line: 3,
    },
    {
      name: "transaction: flush of a missing chain",
      input: "add table ip t\nflush chain ip t c\n",
      want: 'nft-text line 2: chain c does not exist: "flush chain ip t c"',
      line: 2,
    },
    {
      name: "transaction: flush of a missing set",
      input: "add table ip t\nflush set ip t s\n",
      want: 'nft-text line 2: set s does not exist: "flush set ip t s"',
      line: 2,
    },
    {
      name: "transaction: flush of a missing table",
      input: "flush table ip t\n",
      want: 'nft-text line 1: table ip t does not exist: "flush table ip t"',
      line: 1,
    },
    {
      name: "transaction: delete rule is not supported (needs a handle)",
      input: "add table ip t\nadd chain ip t c\ndelete rule ip t c handle 4\n",
      want: 'nft-text line 3: expected "add rule FAMILY TABLE CHAIN STATEMENTS": "delete rule ip t c handle 4"',
      line: 3,
    },
    {
      name: "transaction: unsupported object",
      input: "add table ip t\nadd gizmo ip t g\n",
      want: 'nft-text line 2: unsupported command "add gizmo": "add gizmo ip t g"',
      line: 2,
    },
    {
      name: "transaction: missing table name",
      input: "add table\n",
      want: 'nft-text line 1: expected "add table FAMILY TABLE …": "add table"',
      line: 1,
    },
    {
      name: "transaction: chain without a name",
      input: "add table ip t\nadd chain ip t\n",
      want: 'nft-text line 2: expected "add chain FAMILY TABLE NAME": "add chain ip t"',
      line: 2,
    },
    {
      name: "transaction: policy on a regular chain",
      input: "add table ip t\nadd chain ip t c { policy drop ; }\n",
      want: 'nft-text line 2: policy of a chain that is not a base chain: "add chain ip t c { policy drop ; }"',
      line: 2,
    },
    {
      name: "transaction: unknown chain property",
      input: "add table ip t\nadd chain ip t c { colour red ; }\n",
      want: 'nft-text line 2: unknown chain property "colour": "add chain ip t c { colour red ; }"',
      line: 2,
    },
    {
      name: "transaction: multi-line command never closed",
      input: "add table ip t\nadd set ip t s {\n type ipv4_addr ;\n",
      want: "nft-text line 3: truncated: '}' missing at end of input: \" type ipv4_addr ;\"",
      line: 3,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      let err: unknown;
      try {
        parseNftText(c.input);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DumpParseError);
      const e = err as DumpParseError;
      expect(e.message).toBe(c.want);
      expect(e.format).toBe("nft-text");
      expect(e.line).toBe(c.line);
    });
  }

  it("an unknown set property is kept as unparsed, not an error", () => {
    const rs = parseNftText(table("\tset s {\n\t\ttype ipv4_addr\n\t\tauto-merge\n\t}"));
    expect(rs.unparsed).toEqual([{ family: "ip", table: "t", line: 4, text: "auto-merge", context: "set s" }]);
  });
});
