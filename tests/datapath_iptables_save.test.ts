// iptables-save parser on real dumps: seed 001 (iptables v1.8.4 on a v1.22 node), kube-proxy's restore buffers, and
// what iptables-nft-save / iptables-legacy-save print after loading them (node-format, produced by the kernel).
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DumpParseError } from "../src/datapath/errors.ts";
import { findOption, isKubeServiceChain, parseIptablesSave, parseRuleLine, splitRuleWords } from "../src/datapath/iptables_save.ts";
import { iptablesSaveProbability, kernelProbability } from "../src/service/iptables/probability.ts";
import { fixture, fixturePath } from "./helpers/bundles.ts";

describe("seed 001: complete iptables-save of node k8s1", () => {
  const dump = parseIptablesSave(fixture("seeds/001-k8s1.iptables-save"), { eager: true });

  it("reads the header, the three tables, policies and counters", () => {
    expect(dump.generatedBy).toBe("v1.8.4");
    expect([...dump.tables.keys()]).toEqual(["mangle", "filter", "nat"]);
    const pre = dump.tables.get("mangle")!.chains.get("PREROUTING")!;
    expect(pre.policy).toBe("ACCEPT");
    expect(pre.counters).toEqual({ packets: 85611925, bytes: 14193920045 });
    expect(dump.tables.get("nat")!.chains.get("KUBE-SERVICES")!.policy).toBeUndefined();
    expect(dump.ruleCount).toBe(115);
  });

  it("keeps negation, modules, quoted comments, targets and their options, with line numbers", () => {
    const svc = dump.tables.get("nat")!.chains.get("KUBE-SVC-TCOU7JCQXEZGVUNU")!.rules;
    expect(svc[0]!.line).toBe(171);
    expect(svc[0]!.source).toEqual({ negated: true, value: "10.244.0.0/16" });
    expect(svc[0]!.destination).toEqual({ negated: false, value: "10.96.0.10/32" });
    expect(svc[0]!.protocol).toEqual({ negated: false, value: "udp" });
    expect(svc[0]!.comment).toBe("kube-system/kube-dns:dns cluster IP");
    expect(findOption(svc[0]!, "udp", "dport")?.values).toEqual(["53"]);
    expect(svc[0]!.target).toBe("KUBE-MARK-MASQ");
    expect(findOption(svc[1]!, "statistic", "probability")?.values).toEqual(["0.50000000000"]);
    const post = dump.tables.get("nat")!.chains.get("KUBE-POSTROUTING")!.rules;
    expect(post[0]!.matches).toEqual([{ name: "mark", options: [{ name: "mark", negated: true, values: ["0x4000/0x4000"] }] }]);
    expect(post[1]!.targetOptions).toEqual([{ name: "set-xmark", negated: false, values: ["0x4000/0x0"] }]);
    expect(post[2]!.targetOptions).toEqual([{ name: "random-fully", negated: false, values: [] }]);
    const fw = dump.tables.get("filter")!.chains.get("KUBE-FIREWALL")!.rules[1]!;
    expect(findOption(fw, "conntrack", "ctstate")).toEqual({ name: "ctstate", negated: true, values: ["RELATED,ESTABLISHED,DNAT"] });
  });

  it("reads non-Kubernetes rules too (Docker, libvirt, flannel)", () => {
    const lib = dump.tables.get("nat")!.chains.get("LIBVIRT_PRT")!.rules;
    expect(lib[2]!.targetOptions).toEqual([{ name: "to-ports", negated: false, values: ["1024-65535"] }]);
    const flannel = dump.tables.get("nat")!.chains.get("POSTROUTING")!.rules.filter((r) => r.comment === "flanneld masq");
    expect(flannel).toHaveLength(4);
  });
});

describe("every kube-proxy dump, in both forms, parses completely", () => {
  const names = readdirSync(fixturePath("kube-proxy")).filter((f) => /\.ip6?tables-save$/.test(f));
  it("has the 40 dumps", () => expect(names).toHaveLength(40));
  it.each(names)("%s", (name) => {
    const buffer = parseIptablesSave(fixture(`kube-proxy/${name}`), { eager: true });
    const base = name.replace(/\.(ip6?tables-save)$/, "");
    const ext = name.endsWith(".ip6tables-save") ? "ip6tables-save" : "iptables-save";
    const nft = parseIptablesSave(fixture(`node-format/${base}.nft.${ext}`), { eager: true });
    const legacy = parseIptablesSave(fixture(`node-format/${base}.legacy.${ext}`), { eager: true });
    // partial restores (TestSyncProxyRulesRepeated-2..9) hold only changed chains; the node-format file has the
    // cumulative state, so compare counts only for full buffers.
    if (!/TestSyncProxyRulesRepeated-[2-9]/.test(name)) {
      expect(nft.ruleCount).toBe(buffer.ruleCount);
      expect(legacy.ruleCount).toBe(buffer.ruleCount);
    }
    expect(nft.backend ?? "nf_tables").toBe("nf_tables");
  });
});

describe("probabilities: what the kernel stores and iptables-save prints", () => {
  it.each([
    ["0.3333333333", "0.33333333349"],
    ["0.5000000000", "0.50000000000"],
    ["0.2000000000", "0.20000000019"],
    ["0.2500000000", "0.25000000000"],
    ["0.33333", "0.33332999982"],
  ])("%s → %s", (written, printed) => {
    expect(iptablesSaveProbability(written)).toBe(printed);
    expect(kernelProbability(printed)).toBe(kernelProbability(written));
  });
  it("matches what the kernel printed for the v1.20 dump (node-format fixture)", () => {
    const text = fixture("node-format/TestEndpointSliceE2E.v1.20.nft.iptables-save");
    expect(text).toContain("--probability 0.33333333349");
    expect(text).toContain("--probability 0.50000000000");
  });
  it("rejects nonsense", () => {
    expect(() => kernelProbability("1.5")).toThrow('invalid --probability "1.5"');
    expect(() => kernelProbability("abc")).toThrow(RangeError);
  });
});

describe("tokenising rules", () => {
  it.each([
    { name: "escaped quote in a comment", line: String.raw`-A X -m comment --comment "a \"b\" c" -j RETURN`, comment: 'a "b" c' },
    { name: "unquoted comment", line: "-A X -m comment --comment ns1/svc1:p80 -j RETURN", comment: "ns1/svc1:p80" },
    { name: "empty quoted comment", line: '-A X -m comment --comment "" -j RETURN', comment: "" },
  ])("$name", ({ line, comment }) => {
    expect(parseRuleLine(line, 1, "nat").comment).toBe(comment);
  });
  it("attaches --dport written after core options to the implicit protocol match (kube-proxy order)", () => {
    const r = parseRuleLine('-A KUBE-SERVICES -m comment --comment "x" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-X', 7, "nat");
    expect(findOption(r, "tcp", "dport")?.values).toEqual(["80"]);
    expect(r.destination?.value).toBe("172.30.0.41");
  });
  it("reads [packets:bytes] counters of iptables-save -c", () => {
    const r = parseRuleLine("[12:720] -A KUBE-SERVICES -j RETURN", 3, "nat");
    expect(r.counters).toEqual({ packets: 12, bytes: 720 });
  });
  it("splits words", () => {
    expect(splitRuleWords('-A X -m comment --comment "a b"', 1)).toEqual(["-A", "X", "-m", "comment", "--comment", "a b"]);
  });
});

describe("bad input gets a clear error naming the line", () => {
  const cases: { name: string; input: string; message: string; line: number }[] = [
    { name: "empty", input: "", message: "iptables-save line 0: empty input (was iptables-save run, and as root?)", line: 0 },
    { name: "binary", input: "\u0000\u0001ELF", message: "binary data, not iptables-save text", line: 0 },
    { name: "cut mid-rule (no COMMIT)", input: "*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -m comment --comment \"ns1/sv", message: "without COMMIT: it was truncated, this last line may be cut: \"-A KUBE-SERVICES -m comment --comment \"ns1/sv\"", line: 3 },
    { name: "missing COMMIT", input: "*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -j RETURN\n", message: 'iptables-save line 3: the dump ends inside table "nat"', line: 3 },
    { name: "rule outside a table", input: "-A KUBE-SERVICES -j RETURN\n", message: 'iptables-save line 1: rule outside of a table (missing "*nat"?): "-A KUBE-SERVICES -j RETURN"', line: 1 },
    { name: "undeclared chain", input: "*nat\n-A NOPE -j RETURN\nCOMMIT\n", message: 'rule for chain "NOPE" that was not declared in table "nat"', line: 2 },
    { name: "an iptables -L listing", input: "Chain KUBE-SERVICES (2 references)\ntarget prot opt source destination\n", message: "this is an `iptables -L` listing, not iptables-save output", line: 1 },
    { name: "bad declaration", input: "*nat\n:KUBE-SERVICES\nCOMMIT\n", message: 'malformed chain declaration (want ":CHAIN POLICY [p:b]")', line: 2 },
    { name: "two tables open", input: "*nat\n*filter\nCOMMIT\n", message: 'table "nat" (line 1) not closed by COMMIT before this one', line: 2 },
    { name: "prose", input: "hello world\n", message: "unexpected line", line: 1 },
  ];
  it.each(cases)("$name", ({ input, message, line }) => {
    let err: unknown;
    try {
      parseIptablesSave(input, { eager: true });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DumpParseError);
    expect((err as DumpParseError).message).toContain(message);
    expect((err as DumpParseError).line).toBe(line);
  });
  it.each([
    ['-A X ! -j RETURN', 'cannot negate "-j"'],
    ["-A X -s", '"-s" needs a value'],
    ["-A X --dport 80 -j RETURN", 'option "--dport" outside of any "-m" match or target'],
    ["-A X -j RETURN !", 'dangling "!" at end of rule'],
    ["-I X -j RETURN", 'expected "-A CHAIN"'],
  ])("rule %s", (line, message) => {
    expect(() => parseRuleLine(line, 9, "nat")).toThrow(`iptables-save line 9: ${message}`);
  });
  it("lazy parsing still reports the bad rule when its chain is read", () => {
    const d = parseIptablesSave("*nat\n:X - [0:0]\n-A X -s\nCOMMIT\n");
    expect(() => d.tables.get("nat")!.chains.get("X")!.rules).toThrow('iptables-save line 3: "-s" needs a value');
  });
  it("records the legacy-tables warning of iptables-nft", () => {
    const d = parseIptablesSave("# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n*nat\n:X - [0:0]\nCOMMIT\n");
    expect(d.legacyTablesPresent).toBe(true);
  });
});

/**
 * A reference grouping written independently of the parser: every `-A CHAIN …` line of each table, in order, with
 * its 1-based line number. The parser locates rules as runs of consecutive lines and finds a run's chain by the
 * declaration order when it can; this must give the same rules whatever the layout.
 */
function referenceRules(text: string): Map<string, { raw: string; line: number }[]> {
  const out = new Map<string, { raw: string; line: number }[]>();
  let table = "";
  text.split("\n").forEach((l, i) => {
    const line = l.replace(/\r$/, "");
    if (line.startsWith("*")) table = line.slice(1).trim();
    const m = /^-A (\S+)/.exec(line);
    if (!m) return;
    const key = `${table}/${m[1]}`;
    if (!out.has(key)) out.set(key, []);
    out.get(key)!.push({ raw: line, line: i + 1 });
  });
  return out;
}

function parsedRules(text: string): Map<string, { raw: string; line: number }[]> {
  const out = new Map<string, { raw: string; line: number }[]>();
  for (const t of parseIptablesSave(text).tables.values()) {
    for (const c of t.chains.values()) {
      if (c.ruleCount === 0) continue;
      out.set(`${t.name}/${c.name}`, c.rawRules.map((raw, i) => ({ raw, line: c.ruleLines[i]! })));
      expect(c.rules.map((r) => r.line)).toEqual(c.ruleLines);
    }
  }
  return out;
}

/** The same dump with each table's rule blocks in reverse chain order (declarations unchanged). */
function reverseRuleBlocks(text: string): string {
  const lines = text.split("\n");
  const out: string[] = [];
  let blocks: string[][] = [];
  let current = "";
  const flush = () => {
    for (const b of blocks.reverse()) out.push(...b);
    blocks = [];
    current = "";
  };
  for (const line of lines) {
    const m = /^-A (\S+)/.exec(line);
    if (m) {
      if (m[1] !== current) blocks.push([]);
      current = m[1]!;
      blocks[blocks.length - 1]!.push(line);
      continue;
    }
    flush();
    out.push(line);
  }
  flush();
  return out.join("\n");
}

describe("rule location: runs of lines and declaration order", () => {
  const kubeProxy = readdirSync(fixturePath("kube-proxy")).filter((f) => f.endsWith("tables-save"));
  const nodeFormat = readdirSync(fixturePath("node-format")).filter((f) => f.endsWith("tables-save"));
  it("kube-proxy restore buffers (chains interleaved) give every chain's rules in order, with their lines", () => {
    for (const f of kubeProxy) {
      const text = fixture(`kube-proxy/${f}`);
      expect(parsedRules(text), f).toEqual(referenceRules(text));
    }
  });
  it("iptables-nft-save and iptables-legacy-save output (one block per chain, in declaration order)", () => {
    for (const f of nodeFormat) {
      const text = fixture(`node-format/${f}`);
      expect(parsedRules(text), f).toEqual(referenceRules(text));
    }
    const seed = fixture("seeds/001-k8s1.iptables-save");
    expect(parsedRules(seed)).toEqual(referenceRules(seed));
  });
  it("rule blocks out of declaration order, and CRLF line ends", () => {
    for (const f of nodeFormat.slice(0, 20)) {
      const reversed = reverseRuleBlocks(fixture(`node-format/${f}`));
      expect(parsedRules(reversed), f).toEqual(referenceRules(reversed));
      const crlf = fixture(`node-format/${f}`).replace(/\n/g, "\r\n");
      expect(parsedRules(crlf), f).toEqual(referenceRules(crlf));
    }
  });
  it("a chain whose name prefixes the next one's, and a rule with no options after the chain name", () => {
    const text = [
      "*nat",
      ":KUBE-A - [0:0]",
      ":KUBE-AB - [0:0]",
      ":KUBE-ABC - [0:0]",
      "-A KUBE-AB -j KUBE-ABC",
      "-A KUBE-AB",
      "-A KUBE-ABC -j RETURN",
      "-A KUBE-A -j KUBE-AB",
      "-A KUBE-A -j RETURN",
      "COMMIT",
      "",
    ].join("\n");
    const nat = parseIptablesSave(text).tables.get("nat")!;
    expect(nat.chains.get("KUBE-A")!.rules.map((r) => [r.line, r.target])).toEqual([[8, "KUBE-AB"], [9, "RETURN"]]);
    expect(nat.chains.get("KUBE-AB")!.rules.map((r) => [r.line, r.target])).toEqual([[5, "KUBE-ABC"], [6, undefined]]);
    expect(nat.chains.get("KUBE-ABC")!.rules.map((r) => [r.line, r.target])).toEqual([[7, "RETURN"]]);
  });
  it("the chains map: declaration order, -X and -N, one object per chain, policies and counters kept", () => {
    const text = [
      "*filter",
      ":INPUT DROP [12:3400]",
      ":KUBE-A - [0:0]",
      ":KUBE-B - [0:0]",
      ":KUBE-C - [0:0]",
      "-A INPUT -j KUBE-A",
      "-A KUBE-A -j RETURN",
      "-X KUBE-B",
      "-N KUBE-D",
      "-A KUBE-D -j ACCEPT",
      "COMMIT",
      "",
    ].join("\n");
    const chains = parseIptablesSave(text).tables.get("filter")!.chains;
    expect([...chains.keys()]).toEqual(["INPUT", "KUBE-A", "KUBE-C", "KUBE-D"]);
    expect(chains.size).toBe(4);
    expect(chains.has("KUBE-B")).toBe(false);
    expect(chains.get("KUBE-B")).toBeUndefined();
    expect(chains.get("KUBE-A")).toBe(chains.get("KUBE-A"));
    expect([...chains.values()].map((c) => [c.name, c.ruleCount])).toEqual([["INPUT", 1], ["KUBE-A", 1], ["KUBE-C", 0], ["KUBE-D", 1]]);
    expect([...chains.entries()].map(([k, c]) => k === c.name)).toEqual([true, true, true, true]);
    const seen: string[] = [];
    chains.forEach((c, k) => seen.push(`${k}:${c.line}`));
    expect(seen).toEqual(["INPUT:2", "KUBE-A:3", "KUBE-C:5", "KUBE-D:9"]);
    expect(chains.get("INPUT")).toMatchObject({ policy: "DROP", counters: { packets: 12, bytes: 3400 } });
    expect(chains.get("KUBE-C")).toMatchObject({ counters: { packets: 0, bytes: 0 } });
    expect(chains.get("KUBE-C")!.policy).toBeUndefined();
    expect(chains.get("KUBE-D")!.counters).toBeUndefined();
    expect(chains.get("KUBE-D")!.rules[0]!.target).toBe("ACCEPT");
  });
  it("counts kube-proxy's Service chains as it declares them, as a walk of the names would", () => {
    const text = [
      "*nat",
      ":KUBE-SVC-AAAA - [0:0]",
      ":KUBE-SEP-BBBB - [0:0]",
      ":KUBE-SVL-CCCC [3:180]",
      ":KUBE-SVX-DDDD - [0:0]",
      ":KUBE-SERVICES - [0:0]",
      ":KUBE-SEP-EEEE - [0:0]",
      ":KUBE-SVC-AAAA - [0:0]",
      "-X KUBE-SEP-EEEE",
      "-X KUBE-SEP-EEEE",
      "-N KUBE-SEP-FFFF",
      "COMMIT",
      "",
    ].join("\n");
    const nat = parseIptablesSave(text).tables.get("nat")!;
    const walked = [...nat.chains.keys()].filter(isKubeServiceChain);
    expect(walked).toEqual(["KUBE-SVC-AAAA", "KUBE-SEP-BBBB", "KUBE-SVL-CCCC", "KUBE-SEP-FFFF"]);
    expect(nat.kubeServiceChains).toBe(4);
    for (const name of readdirSync(fixturePath("kube-proxy")).filter((f) => /\.ip6?tables-save$/.test(f))) {
      for (const t of parseIptablesSave(fixture(`kube-proxy/${name}`)).tables.values()) {
        expect([t.name, t.kubeServiceChains], name).toEqual([t.name, [...t.chains.keys()].filter(isKubeServiceChain).length]);
      }
    }
  });
  it("a chain declared twice keeps only the rules after its second declaration", () => {
    const text = "*nat\n:KUBE-X - [0:0]\n-A KUBE-X -j RETURN\n:KUBE-X - [0:0]\n-A KUBE-X -j ACCEPT\nCOMMIT\n";
    const x = parseIptablesSave(text).tables.get("nat")!.chains.get("KUBE-X")!;
    expect(x.rules.map((r) => [r.line, r.target])).toEqual([[5, "ACCEPT"]]);
  });
});
