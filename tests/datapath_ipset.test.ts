import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DumpParseError } from "../src/datapath/errors.ts";
import { type IpsetSet, parseIpsetList } from "../src/datapath/ipset.ts";

const fixture = (p: string) => readFileSync(new URL(`./fixtures/ipvs/${p}`, import.meta.url), "utf8");

function set(sets: IpsetSet[], name: string): IpsetSet {
  const found = sets.filter((s) => s.name === name);
  expect(found, name).toHaveLength(1);
  return found[0] as IpsetSet;
}

describe("parseIpsetList on real listings", () => {
  it("seed 000: the 14 KUBE-* sets of an IPVS node, hairpin entries in KUBE-LOOP-BACK", () => {
    const sets = parseIpsetList(fixture("seed-000-azure-ipset-list.txt"));
    expect(sets.map((s) => s.name)).toEqual([
      "KUBE-LOOP-BACK",
      "KUBE-LOAD-BALANCER-SOURCE-IP",
      "KUBE-NODE-PORT-LOCAL-TCP",
      "KUBE-NODE-PORT-LOCAL-UDP",
      "KUBE-NODE-PORT-SCTP",
      "KUBE-LOAD-BALANCER",
      "KUBE-LOAD-BALANCER-LOCAL",
      "KUBE-LOAD-BALANCER-SOURCE-CIDR",
      "KUBE-NODE-PORT-TCP",
      "KUBE-NODE-PORT-UDP",
      "KUBE-CLUSTER-IP",
      "KUBE-EXTERNAL-IP",
      "KUBE-LOAD-BALANCER-FW",
      "KUBE-NODE-PORT-LOCAL-SCTP",
    ]);
    const loop = set(sets, "KUBE-LOOP-BACK");
    expect(loop).toMatchObject({
      type: "hash:ip,port,ip",
      revision: 5,
      header: { family: "inet", hashsize: "1024", maxelem: "65536" },
      headerFlags: [],
      sizeInMemory: 416,
      references: 1,
      numberOfEntries: 4,
      membersListed: true,
      line: 1,
      unparsed: [],
    });
    expect(loop.members[0]).toEqual({
      raw: "192.168.0.18,udp:53,192.168.0.18",
      ip: "192.168.0.18",
      proto: "udp",
      port: 53,
      ip2: "192.168.0.18",
      line: 9,
    });
    expect(loop.members.map((m) => `${m.ip} ${m.proto}:${m.port} ${m.ip2}`)).toEqual([
      "192.168.0.18 udp:53 192.168.0.18",
      "192.168.0.18 tcp:53 192.168.0.18",
      "192.168.0.17 tcp:53 192.168.0.17",
      "192.168.0.17 udp:53 192.168.0.17",
    ]);
    expect(set(sets, "KUBE-CLUSTER-IP").members.map((m) => `${m.ip},${m.proto}:${m.port}`)).toEqual([
      "10.96.0.1,tcp:443",
      "10.96.0.10,udp:53",
      "10.106.42.178,tcp:44134",
      "10.96.0.10,tcp:53",
    ]);
    expect(set(sets, "KUBE-NODE-PORT-TCP")).toMatchObject({
      type: "bitmap:port",
      revision: 3,
      header: { range: "0-65535" },
      sizeInMemory: 8268,
      numberOfEntries: 0,
      members: [],
    });
    expect(set(sets, "KUBE-LOAD-BALANCER-SOURCE-CIDR")).toMatchObject({ type: "hash:ip,port,net", revision: 7 });
    // The dump ends with "Members:" and no newline: the last, empty set is complete.
    expect(set(sets, "KUBE-NODE-PORT-LOCAL-SCTP")).toMatchObject({ membersListed: true, members: [], line: 126 });
  });

  it("seed 002 (kind): KUBE-CLUSTER-IP holds the web Service, KUBE-LOOP-BACK its hairpin entry", () => {
    const sets = parseIpsetList(fixture("seed-002-kind-ipset-list.txt"));
    const cip = set(sets, "KUBE-CLUSTER-IP");
    expect(cip.numberOfEntries).toBe(9);
    expect(cip.members).toHaveLength(9);
    expect(cip.members.find((m) => m.ip === "10.96.119.228")).toMatchObject({ proto: "tcp", port: 80, line: 17 });
    expect(set(sets, "KUBE-LOOP-BACK").members.map((m) => m.raw)).toEqual([
      "10.244.1.2,tcp:3030,10.244.1.2",
      "10.244.1.6,tcp:80,10.244.1.6",
    ]);
    expect(sets.every((s) => s.unparsed.length === 0)).toBe(true);
  });

  it("ipset 7.17 lists the same members for seed 000's sets as the seed's older ipset", () => {
    const old = parseIpsetList(fixture("seed-000-azure-ipset-list.txt"));
    const now = parseIpsetList(fixture("generated/seed-000-sets.ipset-list.txt"));
    for (const s of now) {
      const before = set(old, s.name);
      expect(s.type, s.name).toBe(before.type);
      const facts = (x: IpsetSet) => x.members.map((m) => JSON.stringify([m.ip, m.proto, m.port, m.ip2, m.net])).sort();
      expect(facts(s), s.name).toEqual(facts(before));
    }
    // Newer ipset adds bucketsize and initval to hash headers.
    expect(set(now, "KUBE-CLUSTER-IP").header).toMatchObject({ family: "inet", bucketsize: "12" });
    expect(set(now, "KUBE-CLUSTER-IP").header.initval).toMatch(/^0x[0-9a-f]{8}$/);
  });

  it("modern options: comment flag, IPv6 KUBE-6- sets, source CIDRs, counters, timeouts, nomatch", () => {
    const sets = parseIpsetList(fixture("generated/modern-options.ipset-list.txt"));
    expect(sets.flatMap((s) => s.unparsed)).toEqual([]);
    const v6 = set(sets, "KUBE-6-CLUSTER-IP");
    expect(v6.header.family).toBe("inet6");
    expect(v6.headerFlags).toEqual(["comment"]);
    // Hash sets list in hash order; compare as a set.
    expect(v6.members.map((m) => [m.ip, m.proto, m.port]).sort()).toEqual([["fd00:10:96::1", "tcp", 443], ["fd00:10:96::a", "udp", 53]]);
    expect(set(sets, "KUBE-6-LOOP-BACK").members[0]).toMatchObject({
      ip: "fd00:10:244:1::6",
      proto: "tcp",
      port: 80,
      ip2: "fd00:10:244:1::6",
    });
    expect(set(sets, "KUBE-LOAD-BALANCER-SOURCE-CIDR").members.map((m) => [m.ip, m.port, m.net, m.comment])).toEqual([
      ["1.2.3.4", 80, "10.0.0.0/8", "ns1/svc1:p80 source range"],
      ["1.2.3.4", 80, "203.0.113.7", "single host"],
    ]);
    const hc = set(sets, "KUBE-HEALTH-CHECK-NODE-PORT");
    expect([hc.header, hc.headerFlags, hc.members.map((m) => m.port)]).toEqual([{ range: "0-65535" }, ["comment"], [30000, 30001]]);
    const t = set(sets, "NETPATH-TIMEOUTS");
    expect(t.header.timeout).toBe("600");
    expect(t.headerFlags).toEqual(["counters"]);
    expect(t.members).toEqual([
      { raw: "10.244.0.0/16 timeout 300 packets 12 bytes 720", net: "10.244.0.0/16", timeout: 300, packets: 12, bytes: 720, line: 52 },
      {
        raw: "192.168.1.1 timeout 0 nomatch packets 0 bytes 0",
        net: "192.168.1.1",
        timeout: 0,
        nomatch: true,
        packets: 0,
        bytes: 0,
        line: 53,
      },
    ]);
  });

  it("ipset list -t (terse) lists headers only", () => {
    const sets = parseIpsetList(fixture("generated/modern-options.ipset-list-terse.txt"));
    expect(sets.map((s) => [s.name, s.membersListed, s.numberOfEntries, s.members.length])).toEqual([
      ["KUBE-6-CLUSTER-IP", false, 2, 0],
      ["KUBE-6-LOOP-BACK", false, 1, 0],
      ["KUBE-LOAD-BALANCER-SOURCE-CIDR", false, 2, 0],
      ["KUBE-HEALTH-CHECK-NODE-PORT", false, 2, 0],
      ["NETPATH-TIMEOUTS", false, 2, 0],
    ]);
  });

  it("no sets: `ipset list` prints nothing", () => {
    expect(parseIpsetList("")).toEqual([]);
    expect(parseIpsetList("\n")).toEqual([]);
  });

  it("pkg/util/ipset's example listing (no Number of entries line)", () => {
    const sets = parseIpsetList(
      "Name: foobar\nType: hash:ip,port\nRevision: 2\nHeader: family inet hashsize 1024 maxelem 65536\n" +
        "Size in memory: 16592\nReferences: 0\nMembers:\n192.168.1.2,tcp:8080\n192.168.1.1,udp:53\n",
    );
    expect(sets).toHaveLength(1);
    expect(sets[0]?.numberOfEntries).toBeUndefined();
    expect(sets[0]?.members.map((m) => [m.ip, m.proto, m.port])).toEqual([["192.168.1.2", "tcp", 8080], ["192.168.1.1", "udp", 53]]);
  });
});

it("the JSDoc example holds", () => {
  const [s] = parseIpsetList("Name: KUBE-CLUSTER-IP\nType: hash:ip,port\nMembers:\n10.96.0.10,udp:53\n");
  expect(s?.members[0]?.port).toBe(53);
});

describe("parseIpsetList member forms", () => {
  const one = (type: string, member: string, header = "family inet hashsize 1024 maxelem 65536") =>
    parseIpsetList(`Name: S\nType: ${type}\nHeader: ${header}\nMembers:\n${member}\n`)[0] as IpsetSet;
  const cases: { name: string; type: string; member: string; want: Record<string, unknown> }[] = [
    { name: "hash:ip", type: "hash:ip", member: "10.1.1.0", want: { ip: "10.1.1.0" } },
    { name: "hash:ip,port", type: "hash:ip,port", member: "10.96.0.10,udp:53", want: { ip: "10.96.0.10", proto: "udp", port: 53 } },
    { name: "hash:ip,port sctp", type: "hash:ip,port", member: "10.96.0.9,sctp:3868", want: { ip: "10.96.0.9", proto: "sctp", port: 3868 } },
    {
      name: "hash:ip,port,ip",
      type: "hash:ip,port,ip",
      member: "10.244.1.6,tcp:80,10.244.1.6",
      want: { ip: "10.244.1.6", proto: "tcp", port: 80, ip2: "10.244.1.6" },
    },
    {
      name: "hash:ip,port,net",
      type: "hash:ip,port,net",
      member: "1.2.3.4,udp:80,10.0.1.0/24",
      want: { ip: "1.2.3.4", proto: "udp", port: 80, net: "10.0.1.0/24" },
    },
    {
      name: "icmp type instead of a port",
      type: "hash:ip,port,net",
      member: "1.2.3.4,icmp:echo-request,10.0.1.0/24",
      want: { ip: "1.2.3.4", proto: "icmp", icmpType: "echo-request", net: "10.0.1.0/24" },
    },
    { name: "bitmap:port", type: "bitmap:port", member: "30031", want: { port: 30031 } },
    { name: "hash:net", type: "hash:net", member: "10.0.0.0/8", want: { net: "10.0.0.0/8" } },
    { name: "hash:net,port", type: "hash:net,port", member: "fd00::/64,tcp:443", want: { net: "fd00::/64", proto: "tcp", port: 443 } },
    {
      name: "comment with spaces and a timeout",
      type: "hash:ip",
      member: `10.0.0.1 timeout 100 comment "hair pin"`,
      want: { ip: "10.0.0.1", timeout: 100, comment: "hair pin" },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const s = one(c.type, c.member);
      expect(s.unparsed).toEqual([]);
      expect(s.members[0]).toEqual({ raw: c.member, line: 5, ...c.want });
    });
  }

  it("keeps members of types it does not interpret, and reports them", () => {
    const s = one("hash:mac", "00:11:22:33:44:55");
    expect(s.members).toEqual([{ raw: "00:11:22:33:44:55", line: 5 }]);
    expect(s.unparsed).toEqual([{ line: 5, text: "00:11:22:33:44:55", reason: "members of type hash:mac are not interpreted" }]);
  });

  it("keeps member options it does not interpret in extra, and reports them", () => {
    const s = one("hash:ip", "10.0.0.1 skbmark 0x1/0xff packets 3 bytes 180", "family inet skbinfo");
    expect(s.headerFlags).toEqual(["skbinfo"]);
    expect(s.members[0]).toMatchObject({ ip: "10.0.0.1", extra: "skbmark 0x1/0xff", packets: 3, bytes: 180 });
    expect(s.unparsed).toEqual([
      { line: 5, text: "10.0.0.1 skbmark 0x1/0xff packets 3 bytes 180", reason: `member options not interpreted: "skbmark 0x1/0xff"` },
    ]);
  });

  it("reports unknown header lines and a header option without a value", () => {
    const sets = parseIpsetList("Name: S\nType: hash:ip\nHeader: family inet maxelem\nFrobs: 3\nMembers:\n");
    expect(sets[0]?.header).toEqual({ family: "inet" });
    expect(sets[0]?.unparsed).toEqual([
      { line: 3, text: "Header: family inet maxelem", reason: `header option "maxelem" without a value` },
      { line: 4, text: "Frobs: 3", reason: `unknown header line "Frobs:"` },
    ]);
  });
});

describe("parseIpsetList errors name the line and what was expected", () => {
  const HEAD = "Name: KUBE-LOOP-BACK\nType: hash:ip,port,ip\nRevision: 5\nHeader: family inet hashsize 1024 maxelem 65536\n";
  const cases: { name: string; input: string; line: number; message: string }[] = [
    {
      name: "binary",
      input: "Name: X\n\u0000\u0001\u0002",
      line: 2,
      message: `ipset line 2: binary data, expected ipset text output: "\u0000\u0001\u0002"`,
    },
    {
      name: "not ipset output",
      input: "Chain KUBE-SERVICES (2 references)\n",
      line: 1,
      message: `ipset line 1: expected "Name: SETNAME" (not ipset list output, or cut at the start): "Chain KUBE-SERVICES (2 references)"`,
    },
    {
      name: "cut at the start, mid-header",
      input: "Type: hash:ip,port\nMembers:\n10.96.0.10,udp:53\n",
      line: 1,
      message: `ipset line 1: expected "Name: SETNAME" (not ipset list output, or cut at the start): "Type: hash:ip,port"`,
    },
    { name: "empty set name", input: "Name:\n", line: 1, message: `ipset line 1: "Name:" without a set name: "Name:"` },
    {
      name: "Members: before Type:",
      input: "Name: X\nMembers:\n",
      line: 2,
      message: `ipset line 2: set X: "Members:" before "Type:": "Members:"`,
    },
    {
      name: "non-numeric revision",
      input: "Name: X\nType: hash:ip\nRevision: five\n",
      line: 3,
      message: `ipset line 3: "Revision:" is not a number: "Revision: five"`,
    },
    {
      name: "member cut after the protocol",
      input: HEAD + "Members:\n192.168.0.18,udp:",
      line: 6,
      message:
        `ipset line 6: set KUBE-LOOP-BACK: 2 part(s) in "192.168.0.18,udp:", expected a hash:ip,port,ip member "ip,proto:port,ip" (cut mid-entry?): "192.168.0.18,udp:"`,
    },
    {
      name: "member cut inside the second address",
      input: HEAD + "Members:\n192.168.0.18,udp:53,192.168.",
      line: 6,
      message:
        `ipset line 6: set KUBE-LOOP-BACK: "192.168." is not an IP address, expected a hash:ip,port,ip member "ip,proto:port,ip" (cut mid-entry?): "192.168.0.18,udp:53,192.168."`,
    },
    {
      name: "member with an empty port",
      input: "Name: C\nType: hash:ip,port\nMembers:\n10.96.0.10,udp:\n",
      line: 4,
      message: `ipset line 4: set C: "udp:" is not PROTO:PORT, expected a hash:ip,port member "ip,proto:port" (cut mid-entry?): "10.96.0.10,udp:"`,
    },
    {
      name: "port out of range",
      input: "Name: C\nType: bitmap:port\nMembers:\n70000\n",
      line: 4,
      message: `ipset line 4: set C: "70000" is not a port, expected a bitmap:port member "port" (cut mid-entry?): "70000"`,
    },
    {
      name: "fewer members than Number of entries (cut between entries)",
      input: HEAD + "Number of entries: 4\nMembers:\n192.168.0.18,udp:53,192.168.0.18\n192.168.0.18,tcp:53,192.168.0.18\n",
      line: 8,
      message:
        `ipset line 8: set KUBE-LOOP-BACK: "Number of entries: 4" but 2 member(s) listed (dump cut?): "192.168.0.18,tcp:53,192.168.0.18"`,
    },
    {
      name: "no members at all although entries were announced",
      input: HEAD + "Number of entries: 1\nMembers:\n\nName: Y\nType: bitmap:port\nMembers:\n",
      line: 6,
      message: `ipset line 6: set KUBE-LOOP-BACK: "Number of entries: 1" but 0 member(s) listed (dump cut?): "Members:"`,
    },
    {
      name: "unterminated comment",
      input: "Name: S\nType: hash:ip\nMembers:\n10.0.0.1 comment \"hair",
      line: 4,
      message: `ipset line 4: set S: unterminated comment "…" (cut mid-entry?): "10.0.0.1 comment "hair"`,
    },
    {
      name: "timeout without its value",
      input: "Name: S\nType: hash:ip\nMembers:\n10.0.0.1 timeout",
      line: 4,
      message: `ipset line 4: set S: "timeout" needs a number (cut mid-entry?): "10.0.0.1 timeout"`,
    },
    {
      name: "last set cut before Members: while the others listed theirs",
      input: "Name: A\nType: bitmap:port\nMembers:\n53\n\nName: B\nType: hash:ip,port\nReferences: 0\n",
      line: 8,
      message: `ipset line 8: set B: listing ends before "Members:" (dump cut?): "References: 0"`,
    },
    {
      name: "last set cut before Type:",
      input: "Name: A\nType: bitmap:port\nMembers:\n\nName: B\n",
      line: 5,
      message: `ipset line 5: set B: listing ends before "Type:" (dump cut?): "Name: B"`,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      let err: unknown;
      try {
        parseIpsetList(c.input);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DumpParseError);
      const e = err as DumpParseError;
      expect(e.message).toBe(c.message);
      expect([e.format, e.line]).toEqual(["ipset", c.line]);
      expect(e.text).toBe(c.input.split("\n")[c.line - 1]);
    });
  }
});
