// A dual-stack Service on a node whose IPv6 state is missing, empty or lacks the Service: kube-proxy runs one mode for
// both families (NewDualStackProxier), and a node without IPv6 support runs the IPv4 proxier alone
// (cmd/kube-proxy/app/server_linux.go platformCheckSupported). The IPv4 half is answered; the IPv6 half is said not to
// be compared (it threw the whole node away: "fix or re-capture that node's dump"); the mode is read from both
// families (it came from the last one: "kube-proxy mode unknown" on a working iptables node).
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";

const fixture = () => readBundle("tests/fixtures/dual-stack");
const k8s1 = (edit: (s: ReturnType<typeof fixture>["nodes"][number]["sections"]) => void) => {
  const b = fixture();
  edit(b.nodes.find((n) => n.name === "k8s1")!.sections);
  return explainService(b, "default", "web", { nodes: ["k8s1"] }).nodes[0]!;
};

describe("a dual-stack Service, the node's IPv6 state missing or empty", () => {
  it.each([
    ["no ip6tables-save section", (s: Parameters<Parameters<typeof k8s1>[0]>[0]) => void delete s["ip6tables-save"], /no ip6tables-save output for this node/],
    ["an empty ip6tables-save (no IPv6 tables)", (s: Parameters<Parameters<typeof k8s1>[0]>[0]) => void (s["ip6tables-save"]!.stdout = ""), /ip6tables-save printed nothing: the node has no IPv6 tables/],
  ])("%s: IPv4 answered, IPv6 unverifiable per ServicePort, no node error", (_, edit, why) => {
    const n = k8s1(edit);
    expect(n.error).toBeUndefined();
    expect(n.proxyMode.mode).toBe("iptables");
    expect(n.ports[0]!.entryPoints.some((e) => e.kind === "ClusterIP" && e.destination.startsWith("10."))).toBe(true);
    expect(n.drift.map((d) => d.kind)).toEqual(["unverifiable"]);
    expect(n.drift[0]!.message).toMatch(why);
    expect(n.drift[0]!.message).toMatch(/the Service's IPv6 ClusterIP fd00:10:96::a and endpoints cannot be compared with the API/);
  });

  it("an ip6tables-save without the Service's chains: the mode is still iptables (read from both families)", () => {
    const n = k8s1((s) => {
      s["ip6tables-save"]!.stdout = s["ip6tables-save"]!.stdout.split("\n").filter((l) => !/KUBE-(SVC|SEP)-/.test(l) && !/default\/web/.test(l)).join("\n");
    });
    expect(n.proxyMode.mode).toBe("iptables");
    expect(n.drift.map((d) => d.kind)).toContain("service-missing");
  });
});
