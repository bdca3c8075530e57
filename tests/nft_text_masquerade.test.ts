// The ClusterIP masquerade request recognised from a rule's line as `nft list ruleset` prints it
// (src/datapath/nft_text_masquerade.ts) must say exactly what the statement decoder says of the same rule: checked on
// every rule of kube-proxy's own rulesets as nft printed them (tests/fixtures/nftables/*.nft.txt, synthetic ones
// included), on crafted variants, and the lazy overview of a text ruleset equals the one of its JSON twin.
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { decodeKubeProxyNft, type KubeProxyNft } from "../src/datapath/kube_proxy_nft.ts";
import { parseNftJson } from "../src/datapath/nft_json.ts";
import type { NftRuleset } from "../src/datapath/nft_model.ts";
import { parseNftText } from "../src/datapath/nft_text.ts";
import { masqueradeRuleFromText } from "../src/datapath/nft_text_masquerade.ts";
import { fixture, fixturePath } from "./helpers/bundles.ts";

const names = [
  ...readdirSync(fixturePath("nftables")).filter((f) => f.endsWith(".nft.txt")).map((f) => f.slice(0, -8)),
  ...readdirSync(fixturePath("nftables/synthetic")).filter((f) => f.endsWith(".nft.txt")).map((f) => `synthetic/${f.slice(0, -8)}`),
];

/** The decoder's masquerade rules of every service/local chain, by chain and line, without evidence. */
function decoded(layout: KubeProxyNft): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const c of layout.table.chains.values()) {
    for (const m of layout.policyChain(c.name)?.masquerade ?? []) {
      const { evidence, ...parts } = m;
      out.set(`${evidence.chain}:${evidence.line}`, parts);
    }
  }
  return out;
}

/** Every rule line of the kube-proxy tables the recogniser accepts, with its parts; and how many lines were offered. */
function recognised(rs: NftRuleset): { parts: Map<string, unknown>; offered: Set<string> } {
  const parts = new Map<string, unknown>();
  const offered = new Set<string>();
  for (const t of rs.tables) {
    if (t.name !== "kube-proxy") continue;
    for (const c of t.chains.values()) {
      for (const r of c.rules) {
        const line = r.lineText?.();
        if (line === undefined) continue;
        offered.add(`${c.name}:${r.line}`);
        const p = masqueradeRuleFromText(line);
        if (p) parts.set(`${c.name}:${r.line}`, p);
      }
    }
  }
  return { parts, offered };
}

/** A copy of `text` in which every rule is decoded now (a `"` in a trailing comment line makes nothing lazy). */
function eagerly(rs: NftRuleset): KubeProxyNft[] {
  for (const t of rs.tables) for (const c of t.chains.values()) for (const r of c.rules) void r.statements;
  return decodeKubeProxyNft(rs);
}

describe("the masquerade request read from nft's line equals the decoded one", () => {
  it("has the fixtures, whose kube-proxy masquerade rules are offered as lines and recognised", () => {
    expect(names.length).toBeGreaterThan(10);
    const found = names.reduce((n, name) => n + recognised(parseNftText(fixture(`nftables/${name}.nft.txt`))).parts.size, 0);
    expect(found).toBeGreaterThan(20);
  });

  it.each(names)("%s: every recognised line is a decoded masquerade rule with the same parts, and none is missed", (name) => {
    const text = fixture(`nftables/${name}.nft.txt`);
    const { parts, offered } = recognised(parseNftText(text));
    const want = new Map<string, unknown>();
    const quoted: string[] = [];
    for (const layout of eagerly(parseNftText(text))) {
      for (const [k, p] of decoded(layout)) {
        if (offered.has(k)) want.set(k, p);
        else quoted.push(k);
      }
    }
    // the recogniser finds every masquerade rule the decoder finds among the lines the parser offers; the others are
    // the interface forms (`iifname != "veth*"`), whose quotes keep their lines from being offered (decoded at once)
    expect(parts).toEqual(want);
    const lines = text.split("\n");
    for (const k of quoted) expect(lines[Number(k.slice(k.lastIndexOf(":") + 1)) - 1], k).toContain('"');
  });

  it.each(names)("%s: the overview of the lazily read text equals the JSON twin's, the local-traffic detector included", (name) => {
    const fromText = decodeKubeProxyNft(parseNftText(fixture(`nftables/${name}.nft.txt`)));
    const fromJson = decodeKubeProxyNft(parseNftJson(fixture(`nftables/${name}.json`)));
    expect(fromText.map((l) => l.family)).toEqual(fromJson.map((l) => l.family));
    for (let i = 0; i < fromText.length; i++) {
      const t = fromText[i]!.overview();
      const j = fromJson[i]!.overview();
      expect(t.localDetector.kind).toBe(j.localDetector.kind);
      expect(t.localDetector.value).toBe(j.localDetector.value);
      expect(t.localDetector.evidence.map((e) => e.text)).toEqual(j.localDetector.evidence.map((e) => e.text));
      expect(t.masqueradeAll).toBe(j.masqueradeAll);
      expect(t.anomalies.map((a) => a.message)).toEqual(j.anomalies.map((a) => a.message));
    }
  });

  const line = (s: string) => masqueradeRuleFromText(s);
  it.each([
    { text: "\t\tip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade", want: { daddr: "172.30.0.41", protocol: "tcp", dport: 80, notLocal: { kind: "cidr", cidr: "10.0.0.0/8" } } },
    { text: "\t\tip daddr 172.30.0.41 jump mark-for-masquerade", want: { daddr: "172.30.0.41" } },
    { text: "\t\tip daddr 172.30.0.41 th dport 53 ip saddr != 10.0.0.0/8 jump mark-for-masquerade", want: { daddr: "172.30.0.41", dport: 53, notLocal: { kind: "cidr", cidr: "10.0.0.0/8" } } },
    { text: "\t\tip6 daddr fd00:10:96::a udp dport 53 ip6 saddr != fd00:10::/64 jump mark-for-masquerade", want: { daddr: "fd00:10:96::a", protocol: "udp", dport: 53, notLocal: { kind: "cidr", cidr: "fd00:10::/64" } } },
  ])("recognised: $text", ({ text, want }) => expect(line(text)).toEqual(want));

  it.each([
    "\t\tip daddr @cluster-ips jump mark-for-masquerade",
    "\t\tip daddr 172.30.0.41 tcp dport http jump mark-for-masquerade",
    "\t\tip daddr 172.30.0.41 counter packets 0 bytes 0 jump mark-for-masquerade",
    "\t\ttcp dport 80 ip daddr 172.30.0.41 jump mark-for-masquerade",
    "\t\tip daddr 172.30.0.41 jump mark-for-masquerade-x",
    "\t\tip daddr 172.30.0.41 goto mark-for-masquerade",
    '\t\tip daddr 172.30.0.41 iifname != "veth*" jump mark-for-masquerade',
  ])("not recognised (decoded instead): %s", (text) => expect(line(text)).toBeUndefined());
});
