// The node's addresses (issue 14 point 2): `ip -o addr show` and `ip route show table local`, read from a real network
// namespace (veth, secondary /32, IPv6, an AnyIP local route), decide `--dst-type LOCAL`.
import { afterAll, describe, expect, it } from "vitest";
import { DumpParseError } from "../src/datapath/errors.ts";
import { nodeAddresses, parseIpAddr, parseLocalRoutes } from "../src/datapath/ip_addr.ts";
import { SCRIPT_NODE_FACTS } from "../src/kube/collection_script.ts";
import { createNetns, type Netns, requireNetns } from "./helpers/netns.ts";

describe.runIf(requireNetns())("ip -o addr / ip route show table local, from the kernel", () => {
  let ns: Netns | undefined;
  afterAll(async () => {
    await ns?.destroy();
  });
  it("every address, secondary and IPv6 ones included, and locally routed prefixes are LOCAL", async () => {
    ns = await createNetns("npt-addr");
    await ns.run(["ip", "-batch", "-"], {
      input: [
        "link set lo up",
        "link add eth0 type veth peer name peer0",
        "link set eth0 up",
        "addr add 10.1.2.3/24 dev eth0",
        "addr add 203.0.113.100/32 dev eth0",
        "addr add 2001:db8::5/64 dev eth0 nodad",
        "route add local 198.51.100.0/24 dev lo table local",
      ].join("\n") + "\n",
    });
    const addrText = await ns.run(["ip", "-o", "addr", "show"]);
    const routeText = await ns.run(["ip", "route", "show", "table", "local"]);
    const addrs = parseIpAddr(addrText);
    expect(addrs.filter((a) => a.ifname === "eth0").map((a) => [a.family, a.address, a.prefixLength])).toEqual([
      [4, "10.1.2.3", 24],
      [4, "203.0.113.100", 32],
      [6, "2001:db8::5", 64],
    ]);
    expect(parseLocalRoutes(routeText).some((r) => r.type === "local" && r.destination === "198.51.100.0/24" && r.device === "lo")).toBe(true);
    const n = nodeAddresses(addrText, routeText);
    for (const ip of ["10.1.2.3", "203.0.113.100", "2001:db8::5", "127.0.0.1", "198.51.100.77"]) expect(n.isLocal(ip), ip).toBe(true);
    for (const ip of ["10.1.2.4", "203.0.113.101", "198.51.101.1"]) expect(n.isLocal(ip), ip).toBe(false);
    expect(n.interfaceOf("203.0.113.100")).toBe("eth0");

    // an image without ip (kube-proxy's): the collection script reads the local routes from /proc/net/fib_trie and
    // /proc/net/ipv6_route
    const ft = SCRIPT_NODE_FACTS.slice(0, SCRIPT_NODE_FACTS.indexOf("\nif have ip;"));
    const fib = await ns.run(["sh", "-c", `have() { command -v "$1" >/dev/null 2>&1; }\n${ft}\nft`]);
    expect(fib).toMatch(/^local 198\.51\.100\.0\/24$/m);
    expect(fib).toMatch(/^local 2001:0db8:0000:0000:0000:0000:0000:0005\/128$/m);
    const f = nodeAddresses("", fib);
    for (const ip of ["10.1.2.3", "203.0.113.100", "127.0.0.1", "198.51.100.77", "2001:db8::5", "::1"]) expect(f.isLocal(ip), ip).toBe(true);
    for (const ip of ["10.1.2.4", "203.0.113.101", "198.51.101.1", "2001:db8::6"]) expect(f.isLocal(ip), ip).toBe(false);
    expect(f.interfaceOf("203.0.113.100")).toBeUndefined();
  });
});

describe("parseIpAddr", () => {
  it("reads veth names with their peer suffix", () => {
    const a = parseIpAddr("5: veth1a2b3c@if4    inet 10.244.0.1/32 scope global veth1a2b3c\\       valid_lft forever preferred_lft forever\n");
    expect(a).toEqual([{ ifindex: 5, ifname: "veth1a2b3c", family: 4, address: "10.244.0.1", prefixLength: 32, scope: "global" }]);
  });
  it("names the line of a malformed address", () => {
    expect(() => parseIpAddr("1: lo    inet 127.0.0.1/8 scope host lo\n2: eth0    inet bogus/24 scope global eth0\n")).toThrow(DumpParseError);
    expect(() => parseIpAddr("2: eth0    inet bogus/24 scope global eth0\n")).toThrow(/^ip-addr line 1: "bogus\/24" is not an IPv4 address/);
    // text that is not `ip -o addr show` output is an error, not a node without addresses
    expect(() => parseIpAddr("blah blah\n")).toThrow(/^ip-addr line 1: not a line of "ip -o addr show" \(IFINDEX: IFNAME …\)/);
    expect(() => parseIpAddr("1: lo    inet 127.0.0.1/8 scope host lo\nError: Device does not exist.\n")).toThrow(/^ip-addr line 2: not a line of "ip -o addr show"/);
    expect(parseIpAddr("1: lo    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n\n")).toEqual([]);
  });
});

describe("parseSysctls", () => {
  it("reads NAME=VALUE and bridge ports", async () => {
    const { parseSysctls } = await import("../src/datapath/sysctls.ts");
    const s = parseSysctls("net.bridge.bridge-nf-call-iptables=1\nbrport.cni0.veth1.hairpin_mode=0\nbrport.cni0.veth2.hairpin_mode=1\n\n");
    expect(s.values.get("net.bridge.bridge-nf-call-iptables")).toBe("1");
    expect(s.bridgePorts).toEqual([{ bridge: "cni0", port: "veth1", hairpin: false }, { bridge: "cni0", port: "veth2", hairpin: true }]);
    expect(() => parseSysctls("net.ipv4.ip_forward 1\n")).toThrow(/^sysctls line 1: want NAME=VALUE/);
  });
});
