// nftables mode: live collection lists only kube-proxy's tables (`nft list table ip kube-proxy; nft list table ip6
// kube-proxy`, src/kube/targeted_script.ts nt; docs/bundle.md), so firewalld's inet firewalld, iptables-nft rules of
// a CNI or ip-masq-agent and other agents' nftables, which the kernel runs at the same hooks, are never read. Every
// verdict used to be given without a word about them; the caveat about other tables came only when the dump held them.
// Ruleset: kube-proxy's own TestOverallNFTablesRules transaction (tests/fixtures/nftables) with its objects.
import { describe, expect, it } from "vitest";
import type { CommandOutput } from "../src/bundle/bundle.ts";
import { emptyBundle } from "../src/bundle/bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { fixture, node, overallObjects } from "./helpers/bundles.ts";

const RULES = fixture("nftables/TestOverallNFTablesRules.nft");
const LIVE = "nft list table ip kube-proxy; nft list table ip6 kube-proxy";
const FIREWALLD = `add table inet firewalld
add chain inet firewalld filter_FORWARD { type filter hook forward priority 10 ; policy drop ; }
`;

function answer(section: CommandOutput) {
  const { services, slices } = overallObjects("test-node", true);
  const b = emptyBundle({ tool: "test" });
  b.objects.services.push(...services);
  b.objects.endpointSlices.push(...slices);
  b.objects.nodes.push(node("test-node", "192.168.0.2"));
  b.nodes.push({ name: "test-node", sections: { "nft-text": section } });
  const r = explainService(b, "ns1", "svc1", { packet: { source: "203.0.113.9", destination: "172.30.0.41", port: 80, protocol: "tcp" } });
  return r.packet![0]!;
}

describe("tables other than kube-proxy's that the dump cannot show", () => {
  it("live collection (only kube-proxy's tables listed): the forwarded verdict says the other tables were not collected", () => {
    const a = answer({ stdout: RULES, exitCode: 0, command: LIVE });
    expect(a.outcome).toBe("forwarded");
    expect(a.caveats).toContain(
      `only kube-proxy's tables were collected (${LIVE}): other tables hooking the same points (firewalld's inet firewalld, iptables-nft rules of a CNI or ip-masq-agent in ip nat and ip filter, another agent's own nftables) were not, and their rules were not evaluated: they may drop, accept or rewrite the packet before or after kube-proxy's chains; \`nft list ruleset\` on the node lists them`,
    );
  });

  it("a file whose command is not recorded and holds kube-proxy's table only: said it may not be the whole ruleset", () => {
    const a = answer({ stdout: RULES, exitCode: 0 });
    expect(a.caveats.filter((c) => c.startsWith("the dump holds no nftables table but kube-proxy's, and how it was listed is not recorded: unless it is a whole `nft list ruleset`"))).toHaveLength(1);
  });

  it("a whole `nft list ruleset` with no other table: nothing else could run, no caveat", () => {
    const a = answer({ stdout: RULES, exitCode: 0, command: "nft list ruleset" });
    expect(a.caveats.filter((c) => /tables? hooking|other tables/.test(c))).toEqual([]);
  });

  it("a ruleset holding firewalld: its own caveat, as before", () => {
    const a = answer({ stdout: RULES + FIREWALLD, exitCode: 0 });
    expect(a.caveats).toContain("table inet firewalld also hooks filter_FORWARD (filter forward 10); its rules were not evaluated");
    expect(a.caveats.filter((c) => c.startsWith("the dump holds no nftables table"))).toEqual([]);
  });
});
