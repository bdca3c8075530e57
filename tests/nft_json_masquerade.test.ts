// The ClusterIP masquerade request recognised from a rule's `expr` JSON text (src/datapath/nft_json_masquerade.ts)
// must say exactly what the statement decoder says of the same rule: checked on every rule of kube-proxy's own
// rulesets as nft prints them (tests/fixtures/nftables, synthetic ones included), on crafted variants of each part,
// and on the bench's generated 10,000-Service ruleset, where the lazy overview must equal the fully decoded one.
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { planCluster } from "../bench/cluster_plan.ts";
import { nftRulesetJson } from "../bench/gen_nftables.ts";
import { decodeKubeProxyNft, type KubeProxyNft } from "../src/datapath/kube_proxy_nft.ts";
import { parseNftJson } from "../src/datapath/nft_json.ts";
import { masqueradeRuleFromJson } from "../src/datapath/nft_json_masquerade.ts";
import type { NftRuleset } from "../src/datapath/nft_model.ts";
import { fixture, fixturePath } from "./helpers/bundles.ts";

const names = [
  ...readdirSync(fixturePath("nftables")).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5)),
  ...readdirSync(fixturePath("nftables/synthetic")).filter((f) => f.endsWith(".json")).map((f) =>
    `synthetic/${f.slice(0, -5)}`
  ),
];

/** The decoder's masquerade rules of every service/local chain, by rule handle, without evidence. */
function decodedByHandle(layout: KubeProxyNft): Map<number, unknown> {
  const out = new Map<number, unknown>();
  for (const c of layout.table.chains.values()) {
    const p = layout.policyChain(c.name);
    for (const m of p?.masquerade ?? []) {
      const { evidence, ...parts } = m;
      out.set(evidence.handle!, parts);
    }
  }
  return out;
}

/** Every rule of the kube-proxy tables the recogniser accepts, with its parts, by handle. */
function recognisedByHandle(rs: NftRuleset): Map<number, unknown> {
  const out = new Map<number, unknown>();
  for (const t of rs.tables) {
    if (t.name !== "kube-proxy") continue;
    for (const c of t.chains.values()) {
      for (const r of c.rules) {
        const expr = r.exprJson?.();
        expect(expr, `rule ${r.handle} of ${c.name} offers its expr text`).toBeDefined();
        const parts = masqueradeRuleFromJson(expr!);
        if (parts) out.set(r.handle!, parts);
      }
    }
  }
  return out;
}

describe("the masquerade request read from JSON text equals the decoded one", () => {
  it.each(names)("%s: every recognised rule is a decoded masquerade rule with the same parts, and none is missed", (name) => {
    const text = fixture(`nftables/${name}.json`);
    const recognised = recognisedByHandle(parseNftJson(text));
    const decoded = new Map<number, unknown>();
    for (const layout of decodeKubeProxyNft(parseNftJson(text))) {
      for (const [h, p] of decodedByHandle(layout)) decoded.set(h, p);
    }
    // nft prints kube-proxy's rules in the one form the recogniser knows: it finds every one the decoder finds.
    expect(recognised).toEqual(decoded);
  });

  it("the fixtures hold the forms that matter: kube-proxy's (no port, CIDR), and IPv6 with a port and an interface prefix", () => {
    const all = names.flatMap((n) => [...recognisedByHandle(parseNftJson(fixture(`nftables/${n}.json`))).values()]);
    expect(all.length).toBeGreaterThan(20);
    expect(all).toContainEqual({ daddr: "172.30.0.41", notLocal: { kind: "cidr", cidr: "10.0.0.0/8" } });
    expect(all).toContainEqual({
      daddr: "fd00:10:96::a",
      protocol: "udp",
      dport: 53,
      notLocal: { kind: "interface-prefix", prefix: "veth" },
    });
  });

  const rule = (expr: string) =>
    `{"nftables": [{"table": {"family": "ip", "name": "kube-proxy", "handle": 1}}, {"chain": {"family": "ip", "table": "kube-proxy", "name": "mark-for-masquerade", "handle": 2}}, {"chain": {"family": "ip", "table": "kube-proxy", "name": "service-ULMVA6XW-ns1/svc1/tcp/p80", "handle": 3}}, {"rule": {"family": "ip", "table": "kube-proxy", "chain": "service-ULMVA6XW-ns1/svc1/tcp/p80", "handle": 4, "expr": ${expr}}}]}`;
  const daddr = '{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "daddr"}}, "right": "172.30.0.41"}}';
  const jump = '{"jump": {"target": "mark-for-masquerade"}}';
  const port = (proto: string, p: string) =>
    `{"match": {"op": "==", "left": {"payload": {"protocol": "${proto}", "field": "dport"}}, "right": ${p}}}`;
  const saddr = '{"match": {"op": "!=", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": {"prefix": {"addr": "10.0.0.0", "len": 8}}}}';
  const iif = (name: string) => `{"match": {"op": "!=", "left": {"meta": {"key": "iifname"}}, "right": "${name}"}}`;

  it.each([
    { name: "daddr, port, CIDR", expr: [daddr, port("tcp", "80"), saddr, jump], want: { daddr: "172.30.0.41", protocol: "tcp", dport: 80, notLocal: { kind: "cidr", cidr: "10.0.0.0/8" } } },
    { name: "no port (masquerade-all or a layout without it)", expr: [daddr, jump], want: { daddr: "172.30.0.41" } },
    { name: "th dport: no protocol", expr: [daddr, port("th", "53"), saddr, jump], want: { daddr: "172.30.0.41", dport: 53, notLocal: { kind: "cidr", cidr: "10.0.0.0/8" } } },
    { name: "an interface", expr: [daddr, port("udp", "53"), iif("cbr0"), jump], want: { daddr: "172.30.0.41", protocol: "udp", dport: 53, notLocal: { kind: "interface", name: "cbr0" } } },
    { name: "an interface prefix", expr: [daddr, port("sctp", "9"), iif("veth*"), jump], want: { daddr: "172.30.0.41", protocol: "sctp", dport: 9, notLocal: { kind: "interface-prefix", prefix: "veth" } } },
  ])("recognised: $name, as the decoder says it", ({ expr, want }) => {
    const text = rule(`[${expr.join(", ")}]`);
    const r = parseNftJson(text).tables[0]!.chains.get("service-ULMVA6XW-ns1/svc1/tcp/p80")!.rules[0]!;
    expect(masqueradeRuleFromJson(r.exprJson!()!)).toEqual(want);
    const layout = decodeKubeProxyNft(parseNftJson(text))[0]!;
    const { evidence: _e, ...decoded } = layout.policyChain("service-ULMVA6XW-ns1/svc1/tcp/p80")!.masquerade[0]!;
    expect(decoded).toEqual(want);
  });

  it.each([
    { name: "a set reference as the address", expr: [daddr.replace('"172.30.0.41"', '"@cluster-ips"'), jump] },
    { name: "a named port", expr: [daddr, port("tcp", '"http"'), jump] },
    { name: "a counter among the statements", expr: [daddr, '{"counter": {"packets": 0, "bytes": 0}}', jump] },
    { name: "the matches in another order", expr: [port("tcp", "80"), daddr, jump] },
    { name: "an escape sequence in the interface", expr: [daddr, iif('a\\"b'), jump] },
    { name: "another jump", expr: [daddr, '{"jump": {"target": "mark-for-masquerade-x"}}'] },
    { name: "a goto", expr: [daddr, '{"goto": {"target": "mark-for-masquerade"}}'] },
  ])("not recognised (decoded instead): $name", ({ expr }) => {
    const text = rule(`[${expr.join(", ")}]`);
    const r = parseNftJson(text).tables[0]!.chains.get("service-ULMVA6XW-ns1/svc1/tcp/p80")!.rules[0]!;
    expect(masqueradeRuleFromJson(r.exprJson!()!)).toBeUndefined();
  });

  it("a rule the recogniser passes over is still decoded by the overview (a counter before the jump)", () => {
    const text = rule(`[${[daddr, port("tcp", "80"), saddr, '{"counter": {"packets": 0, "bytes": 0}}', jump].join(", ")}]`);
    const ov = decodeKubeProxyNft(parseNftJson(text))[0]!.overview();
    expect(ov.localDetector).toMatchObject({ kind: "cidr", value: "10.0.0.0/8" });
    expect(ov.localDetector.evidence[0]!.text).toBe("ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 counter packets 0 bytes 0 jump mark-for-masquerade");
  });

  it("a generated 10,000-Service ruleset: the lazy overview equals the fully decoded one, evidence text included", () => {
    const text = nftRulesetJson(planCluster({ services: 10000 }));
    const lazy = decodeKubeProxyNft(parseNftJson(text))[0]!;
    const ov = lazy.overview();
    const full = decodeKubeProxyNft(parseNftJson(text))[0]!;
    expect(full.servicePorts).toHaveLength(10000);
    expect(ov).toEqual(full.overview());
    expect(ov.localDetector).toMatchObject({ kind: "cidr", value: "10.244.0.0/16" });
    expect(ov.localDetector.evidence).toHaveLength(10000);
    expect(ov.localDetector.evidence[9999]!.text).toMatch(/^ip daddr [0-9.]+ ip saddr != 10\.244\.0\.0\/16 jump mark-for-masquerade$/);
    expect(JSON.stringify(ov.localDetector.evidence[0])).toContain('"text":"ip daddr ');
  });
});
