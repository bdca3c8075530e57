// src/model/ip.ts answers containment from ranges and numbers it reads from ip-cidr once per CIDR and per address:
// on a grid of CIDRs and addresses (both families, host prefixes, host bits set, IPv4-mapped IPv6, invalid input) it
// must give ip-cidr's own `contains` answer, with the host fast path (a /32 or bare IPv4 address compared as a string).
import IPCIDR from "ip-cidr";
import { describe, expect, it } from "vitest";
import { cidrContains, hostAt, isIPAddress } from "../src/model/ip.ts";

const CIDRS = [
  "10.244.0.0/16", "10.244.1.5/16", "10.96.0.10/32", "10.96.0.10", "0.0.0.0/0", "192.168.0.0/24", "10.0.0.0/8",
  "172.16.0.0/12", "10.244.3.0/24", "100.64.0.0/10", "fd00::/64", "fd00:10:244::/56", "2001:db8::1/128", "::/0",
  "::ffff:10.0.0.0/104", "bogus/8", "10.0.0.256/8", "10.0.0.0/33",
];
const ADDRESSES = [
  "10.244.3.38", "10.244.0.0", "10.244.255.255", "10.245.0.1", "10.96.0.10", "192.168.0.255", "192.168.1.0",
  "100.127.255.255", "100.128.0.0", "fd00::1", "fd00:10:244:ff::1", "fd00:10:245::1", "2001:db8::1", "2001:db8::2",
  "8.8.8.8", "172.31.255.255", "172.32.0.0", "bogus", "10.0.0.1/32", "::ffff:10.0.0.5", "010.1.1.1", "",
];

/** ip-cidr's answer, with the string comparison cidrContains documents for IPv4 hosts. */
function reference(cidr: string, address: string): boolean {
  if (cidr.includes(":") !== address.includes(":")) return false;
  const v6 = cidr.includes(":");
  if (!v6 && (!cidr.includes("/") || cidr.endsWith("/32"))) return cidr.replace(/\/32$/, "") === address;
  const withLen = cidr.includes("/") ? cidr : `${cidr}/${v6 ? 128 : 32}`;
  try {
    return IPCIDR.isValidCIDR(withLen) ? new IPCIDR(withLen).contains(address) : false;
  } catch {
    return false;
  }
}

describe("cidrContains and isIPAddress agree with ip-cidr", () => {
  it("every pair of the grid, asked twice (the second time from the caches)", () => {
    let inside = 0;
    for (const round of [1, 2]) {
      for (const c of CIDRS) {
        for (const a of ADDRESSES) {
          const want = reference(c, a);
          expect(cidrContains(c, a), `${c} ∋ ${a} (round ${round})`).toBe(want);
          if (want && round === 1) inside++;
        }
      }
    }
    // the grid holds both answers in both families
    expect(inside).toBeGreaterThan(20);
    expect(cidrContains("fd00:10:244::/56", "fd00:10:244:ff::1")).toBe(true);
    expect(cidrContains("10.244.0.0/16", "10.245.0.1")).toBe(false);
  });

  it("isIPAddress is ip-cidr's isValidAddress for anything without a prefix", () => {
    for (const a of [...ADDRESSES, "1.2.3.4", "::", "1.2.3", "fd00::g"]) {
      expect(isIPAddress(a), a).toBe(!a.includes("/") && IPCIDR.isValidAddress(a));
      expect(isIPAddress(a), `${a} (cached)`).toBe(!a.includes("/") && IPCIDR.isValidAddress(a));
    }
  });
});

describe("hostAt: the address at an offset of a CIDR, in canonical text", () => {
  it("counts from the CIDR's first address, in both families, and says so when the CIDR is too small", () => {
    expect(hostAt("10.244.0.0/24", 200)).toBe("10.244.0.200");
    expect(hostAt("10.244.0.5/16", 457)).toBe("10.244.1.201");
    // fd00:10:244:0:0:0:0:c8 is not how iptables, nft or the kernel write it
    expect(hostAt("fd00:10:244::/64", 200)).toBe("fd00:10:244::c8");
    expect(hostAt("fd00:10:244:1::/64", 201)).toBe("fd00:10:244:1::c9");
    // a /24 has 256 addresses: offset 300 would be outside it (a client said to be in a range it is not in)
    expect(hostAt("10.244.0.0/24", 300)).toBeUndefined();
    expect(hostAt("203.0.113.7/32", 2)).toBeUndefined();
    expect(hostAt("bogus/8", 1)).toBeUndefined();
    for (const [cidr, k] of [["10.96.0.0/12", 70000], ["fd00:10:96::/112", 65535]] as const) {
      expect(cidrContains(cidr, hostAt(cidr, k)!), cidr).toBe(true);
    }
  });

  it("gives ip-cidr's own answer for a grid of CIDRs and offsets, asked twice (the second time from its cache)", () => {
    let found = 0;
    for (const round of [1, 2]) {
      for (const c of [...CIDRS, "10.244.1.0/26", "10.0.0.0/31", "fd00:10:244:1::/120"]) {
        for (const k of [0, 1, 2, 63, 64, 200, 255, 256, 300]) {
          let want: string | undefined;
          if (c.includes("/") && IPCIDR.isValidCIDR(c)) {
            const [h] = new IPCIDR(c).toArray({ from: k, limit: 1 });
            want = typeof h === "string" ? (h.includes(":") ? new IPCIDR(`${h}/128`).address.correctForm() : h) : undefined;
          }
          expect(hostAt(c, k), `${c} @${k} (round ${round})`).toBe(want);
          if (want !== undefined && round === 1) found++;
        }
      }
    }
    expect(found).toBeGreaterThan(40);
  });
});
