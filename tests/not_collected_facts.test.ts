// A verdict that rests on a setting of the node that was not collected names it, in the data (`notCollected`) and in
// the default text, not only in -o wide's caveats. The report's trailer says "the answers that depend on them say
// so"; before this, the default text said nothing next to those answers, and an IPVS answer on a node without
// sysctls did not name net.ipv4.vs.conntrack anywhere but in the trailer (kube-proxy sets it to 1 at start:
// pkg/proxy/ipvs/proxier.go NewProxier; with 0 nothing IPVS forwards is SNATed: ip_vs_xmit.c ip_vs_nat_send_or_cont).
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { renderServiceText } from "../src/report/service_text.ts";
import { explainService } from "../src/service/explain.ts";
import type { ClientVerdict, PacketAnswer } from "../src/service/report.ts";
import { localhostNodePortBundle } from "./helpers/localhost_nodeports.ts";

/** An example bundle, with the node's sysctls section set (or left out: undefined). */
function example(name: string, sysctls: string | undefined): Bundle {
  const b = structuredClone(readBundle(`examples/${name}`));
  if (sysctls !== undefined) b.nodes[0]!.sections.sysctls = { stdout: sysctls, exitCode: 0 };
  return b;
}

/** The clients of a Service's first ClusterIP entry point of protocol `protocol` on the bundle's first node. */
function clients(b: Bundle, ns: string, name: string, protocol = "TCP"): Map<string, ClientVerdict> {
  const r = explainService(b, ns, name);
  const cip = r.nodes[0]!.ports.find((p) => p.servicePort.protocol === protocol)!.entryPoints.find((e) => e.kind === "ClusterIP")!;
  return new Map(cip.clients.map((c) => [c.client, c]));
}

/** The lines of a text report from `header` (a client's line) to the next client's line. */
function clientBlock(text: string, header: string): string {
  const lines = text.split("\n");
  const i = lines.findIndex((l) => l.trimStart().startsWith(header));
  if (i === -1) throw new Error(`no line starts with ${header}`);
  const indent = lines[i]!.length - lines[i]!.trimStart().length;
  const out = [lines[i]!];
  for (const l of lines.slice(i + 1)) {
    if (l.length - l.trimStart().length <= indent) break;
    out.push(l);
  }
  return out.join("\n");
}

describe("IPVS mode: net.ipv4.vs.conntrack decides the masqueraded clients", () => {
  it("sysctls not collected: each masqueraded client names it, with a caveat; an unmasqueraded one does not", () => {
    const c = clients(example("ipvs-lab", undefined), "kube-system", "kube-dns");
    for (const k of ["external", "host-network"]) {
      expect(c.get(k)!.masquerade).toBe("always");
      expect(c.get(k)!.notCollected).toEqual(["net.ipv4.vs.conntrack"]);
      expect(c.get(k)!.caveats.join("\n")).toContain("masqueraded only if net.ipv4.vs.conntrack is 1 (the node's sysctls were not collected)");
    }
    expect(c.get("pod-same-node")!.masquerade).toBe("never");
    expect(c.get("pod-same-node")!.notCollected ?? []).not.toContain("net.ipv4.vs.conntrack");
  });
  it("sysctls collected without the key: named, the caveat says it is absent from them", () => {
    const c = clients(example("ipvs-lab", "net.bridge.bridge-nf-call-iptables=1\n"), "kube-system", "kube-dns");
    expect(c.get("external")!.notCollected).toEqual(["net.ipv4.vs.conntrack"]);
    expect(c.get("external")!.caveats.join("\n")).toContain("(absent from the node's collected sysctls)");
  });
  it("collected at 1 (kube-proxy's setting): nothing rests on it", () => {
    const c = clients(example("ipvs-lab", "net.ipv4.vs.conntrack=1\nnet.bridge.bridge-nf-call-iptables=1\n"), "kube-system", "kube-dns");
    for (const v of c.values()) expect(v.notCollected ?? []).not.toContain("net.ipv4.vs.conntrack");
  });
  it("the default text says it under the client's line; collected, it does not", () => {
    const text = renderServiceText(explainService(example("ipvs-lab", undefined), "kube-system", "kube-dns"));
    expect(clientBlock(text, "client outside the cluster CIDR")).toContain("depends on what was not collected: net.ipv4.vs.conntrack (-o wide says how)");
    // the pod on the node masquerades nothing: its reply's bridge is what rests on the sysctls there
    expect(clientBlock(text, "pod on k8s-01")).toContain("depends on what was not collected: net.bridge.bridge-nf-call-iptables (-o wide says how)");
    const known = renderServiceText(explainService(example("ipvs-lab", "net.ipv4.vs.conntrack=1\nnet.bridge.bridge-nf-call-iptables=1\n"), "kube-system", "kube-dns"));
    expect(clientBlock(known, "client outside the cluster CIDR")).not.toContain("depends on what was not collected");
  });
  it("a packet question carries it too", () => {
    const r = explainService(example("ipvs-lab", undefined), "kube-system", "kube-dns", { packet: { source: "203.0.113.10", destination: "10.96.0.10", port: 53, protocol: "tcp" } });
    const a: PacketAnswer = r.packet![0]!;
    expect(a.masquerade).toBe("always");
    expect(a.notCollected).toEqual(["net.ipv4.vs.conntrack"]);
  });
});

describe("a bridge between pods: bridge-nf-call-iptables and hairpin_mode", () => {
  it("sysctls not collected: the same-node pod and the endpoint reaching itself name what decides their replies", () => {
    const c = clients(example("iptables-lab", undefined), "kube-system", "kube-dns");
    expect(c.get("pod-same-node")!.notCollected).toEqual(["net.bridge.bridge-nf-call-iptables"]);
    expect(c.get("hairpin")!.notCollected).toEqual(["net.bridge.bridge-nf-call-iptables", "hairpin_mode of the pod's bridge port"]);
    // a client whose reply does not cross the pods' bridge rests on neither
    expect(c.get("external")!.notCollected).toBeUndefined();
  });
  it("sysctls collected, no bridge has a port (a routed CNI): nothing rests on them", () => {
    const c = clients(example("iptables-lab", "net.bridge.bridge-nf-call-iptables=1\n"), "kube-system", "kube-dns");
    for (const v of c.values()) expect(v.notCollected).toBeUndefined();
  });
  it("a bridge with ports and the node's addresses not collected: which interface holds the pods' gateway decides", () => {
    const c = clients(example("iptables-lab", "net.bridge.bridge-nf-call-iptables=0\nbrport.cni0.veth1.hairpin_mode=1\n"), "kube-system", "kube-dns");
    expect(c.get("pod-same-node")!.notCollected).toEqual(["the node's addresses (ip -o addr)"]);
    expect(c.get("pod-same-node")!.caveats.join("\n")).toContain("if the pods sit on bridge cni0");
  });
});

describe("route_localnet: a loopback source to a localhost NodePort", () => {
  const base = (sysctls?: string): PacketAnswer =>
    explainService(localhostNodePortBundle(sysctls), "ns1", "svc1", { packet: { source: "127.0.0.1", destination: "127.0.0.1", port: 30001, protocol: "tcp" } }).packet![0]!;
  it("not collected: named", () => {
    expect(base().notCollected).toEqual(["net.ipv4.conf.all.route_localnet"]);
  });
  it("all at 0, no interface's value collected: the interfaces' own settings decide", () => {
    expect(base("net.ipv4.conf.all.route_localnet=0\n").notCollected).toEqual(["the route_localnet of the node's interfaces"]);
  });
  it("all at 1: nothing rests on it", () => {
    expect(base("net.ipv4.conf.all.route_localnet=1\n").notCollected).toBeUndefined();
  });
});
