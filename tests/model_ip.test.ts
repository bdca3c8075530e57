// src/model/ip.ts answers containment from ranges and numbers it reads from ip-cidr once per CIDR and per address:
// on a grid of CIDRs and addresses (both families, host prefixes, host bits set, IPv4-mapped IPv6, invalid input) it
// must give ip-cidr's own `contains` answer, with the host fast path (a /32 or bare IPv4 address compared as a string).
import IPCIDR from "ip-cidr";
import { describe, expect, it } from "vitest";
import { cidrContains, isIPAddress } from "../src/model/ip.ts";

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
