// canonicalPart (src/service/nftables/sets.ts) is how a map key and a packet's field are compared: its plain-word
// shortcut (lower-case letters, digits, dots) must give what the full steps give, and no key may reach Object's
// prototype through the protocol-number table.
import { describe, expect, it } from "vitest";
import { planCluster } from "../bench/cluster_plan.ts";
import { nftRulesetJson } from "../bench/gen_nftables.ts";
import { parseNftJson } from "../src/datapath/nft_json.ts";
import { normProto } from "../src/service/nftables/match.ts";
import { canonicalAddr, canonicalPart } from "../src/service/nftables/sets.ts";
import { isIPv6 } from "../src/model/ip.ts";

/** The full steps, as canonicalPart took them before its shortcut. */
function reference(s: string): string {
  const t = s.replace(/^"|"$/g, "").toLowerCase();
  if (/^0x[0-9a-f]+$/.test(t)) return String(parseInt(t, 16));
  if (isIPv6(t)) return canonicalAddr(t);
  const protos: Record<string, string> = { "6": "tcp", "17": "udp", "132": "sctp", "1": "icmp", "58": "ipv6-icmp", "136": "udplite" };
  return Object.hasOwn(protos, t) ? protos[t]! : t;
}

describe("canonicalPart", () => {
  it("gives the full steps' answer for plain words and everything else", () => {
    const words = [
      "10.96.0.10", "80", "6", "17", "132", "1", "58", "136", "7", "tcp", "udp", "sctp", "TCP", '"tcp"', "0x50", "0x06",
      "0", "fd00:10:96::a", "FD00:10:96:0:0:0:0:A", "::ffff:10.0.0.1", "eth0", "veth.12", "", ".", "a-b", "x_y",
      "constructor", "__proto__", "toString", "hasOwnProperty",
    ];
    for (const w of words) expect(canonicalPart(w), w).toBe(reference(w));
    expect(normProto("constructor")).toBe("constructor");
  });

  it("every key part of the generated 10,000-Service ruleset's maps: the same as the full steps", () => {
    const rs = parseNftJson(nftRulesetJson(planCluster({ services: 10000 })));
    let n = 0;
    for (const t of rs.tables) {
      for (const set of t.sets.values()) {
        for (const e of set.elements) {
          for (const part of e.key.length > 0 ? e.key : [e.keyText]) {
            n++;
            if (canonicalPart(part) !== reference(part)) expect(canonicalPart(part), part).toBe(reference(part));
          }
        }
      }
    }
    expect(n).toBeGreaterThan(30000);
  });
});
