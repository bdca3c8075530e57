// IPVS mode, as the kernel and kube-proxy's IPVS proxier make it (bundles in kube-proxy v1.30's layout:
// tests/fixtures/ipvs/v1.30-layout/README.md). Each case was answered wrong before (an audit against
// pkg/proxy/ipvs/proxier.go and net/netfilter/ipvs/ip_vs_core.c).
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { renderPacketTree } from "../src/report/packet_tree.ts";
import { renderServiceText } from "../src/report/service_text.ts";
import { explainService } from "../src/service/explain.ts";
import { parseIpvsadm } from "../src/datapath/ipvsadm.ts";
import { ipvsBalancer } from "../src/service/ipvs/balance.ts";
import type { ServiceReport } from "../src/service/report.ts";

const DIR = (name: string) => new URL(`./fixtures/ipvs/v1.30-layout/${name}`, import.meta.url).pathname;
const entry = (r: ServiceReport, kind: string) => r.nodes[0]!.ports.flatMap((p) => p.entryPoints).find((e) => e.kind === kind)!;
const client = (r: ServiceReport, kind: string, who: string) => entry(r, kind).clients.find((c) => c.client === who)!;

describe("filter hooks: IPVS translates at LOCAL_IN after filter INPUT, then LOCAL_OUT", () => {
  it("loadBalancerSourceRanges are enforced in INPUT on the LoadBalancer IP: a client outside them is dropped, and that is no drift", () => {
    const r = explainService(readBundle(DIR("base")), "default", "lbsrc");
    const denied = client(r, "LoadBalancer", "external-denied");
    expect(denied.outcome).toBe("dropped");
    expect(denied.reason).toMatch(/^dropped by line \d+ \(KUBE-SOURCE-RANGES-FIREWALL\)/);
    expect(client(r, "LoadBalancer", "external").outcome).toBe("forwarded");
    expect(r.nodes[0]!.drift.filter((d) => d.kind === "source-ranges-not-enforced")).toEqual([]);
  });
  it("a ClusterIP missing from KUBE-CLUSTER-IP: KUBE-IPVS-FILTER rejects a pod's new connection to it (INPUT, before translation)", () => {
    const r = explainService(readBundle(DIR("drift")), "default", "web", { packet: { source: "10.244.1.200", destination: "10.96.0.50", port: 80, protocol: "tcp" } });
    expect(r.packet![0]!.outcome).toBe("rejected");
    expect(r.packet![0]!.reason).toMatch(/\(KUBE-IPVS-FILTER\)/);
    // rejected before IPVS chose a real server: one path, not one per real server
    expect(r.packet![0]!.paths!.map((p) => [p.verdict, p.probability, p.dnatTo])).toEqual([["reject", 1, undefined]]);
  });
});

describe("a virtual server without a real server refuses the connection (ip_vs_leave: port unreachable)", () => {
  it("no endpoints: rejected by IPVS, not 'not handled'", () => {
    const r = explainService(readBundle(DIR("base")), "default", "noeps");
    const pod = client(r, "ClusterIP", "pod-same-node");
    expect(pod.outcome).toBe("rejected");
    expect(pod.reason).toMatch(/^rejected by IPVS: IPVS virtual server 10\.96\.0\.56:80 has no real server with weight > 0/);
  });
  // pkg/proxy/topology.go CategorizeEndpoints computes cluster endpoints only when the ServicePort uses them
  // (UsesClusterEndpoints: !internalPolicyLocal || ExternallyAccessible), so syncEndpoint's fallback to them finds none
  it("internalTrafficPolicy Local, ClusterIP only, only a remote endpoint: the empty virtual server is what kube-proxy programs (no fallback), no drift", () => {
    const r = explainService(readBundle(DIR("itp")), "default", "itponly");
    expect(client(r, "ClusterIP", "pod-same-node").outcome).toBe("rejected");
    expect(r.nodes[0]!.drift).toEqual([]);
  });
});

describe("a Local policy without an endpoint on the node: IPVS gives the virtual server every endpoint (syncEndpoint, kubernetes#97081)", () => {
  it("no drift for internalTrafficPolicy Local (itpnp) nor externalTrafficPolicy Local (nplocalremote), and a note says why", () => {
    const itp = explainService(readBundle(DIR("itp")), "default", "itpnp");
    expect(itp.nodes[0]!.drift).toEqual([]);
    expect(itp.nodes[0]!.notes.join("\n")).toMatch(/in IPVS mode kube-proxy then gives the virtual server every endpoint/);
    expect(explainService(readBundle(DIR("base")), "default", "nplocalremote").nodes[0]!.drift).toEqual([]);
  });
});

describe("schedulers without a fixed share show none", () => {
  it("wlc: shares null, the packet's branches without a percentage, still forwarded", () => {
    const r = explainService(readBundle(DIR("sched-wlc")), "default", "web", { packet: { source: "10.244.1.200", destination: "10.96.0.50", port: 80, protocol: "tcp" } });
    expect(entry(r, "ClusterIP").balancing.shares.map((s) => s.share)).toEqual([null, null]);
    expect(client(r, "ClusterIP", "pod-same-node").endpoints.map((e) => e.share)).toEqual([null, null]);
    expect(r.packet![0]!.outcome).toBe("forwarded");
    expect(r.packet![0]!.sharesFixed).toBe(false);
    const tree = renderPacketTree(r, { color: false });
    expect(tree).toMatch(/├─ \? → 10\.244\./);
    expect(tree).not.toMatch(/50%/);
  });
  it("sh: one client always lands on the same real server, which its hash picks: no share", () => {
    const r = explainService(readBundle(DIR("sched-sh")), "default", "web");
    const b = entry(r, "ClusterIP").balancing;
    expect(b.scheduler!.deterministicShares).toBe(false);
    expect(b.shares.map((s) => s.share)).toEqual([null, null]);
    const hairpin = client(r, "ClusterIP", "hairpin");
    if (hairpin.masquerade === "some") expect(hairpin.reason).toMatch(/the IPVS scheduler decides how often: no fixed share/);
  });
});

describe("drift only IPVS shows", () => {
  it("a virtual server left on the Service's ClusterIP for a port it no longer has: not being synced (cleanLegacyService)", () => {
    const r = explainService(readBundle(DIR("drift")), "default", "web");
    const stale = r.nodes[0]!.drift.filter((d) => d.kind === "stale-virtual-server").map((d) => d.message);
    expect(stale).toEqual([expect.stringMatching(/^default\/web: IPVS virtual server 10\.96\.0\.50:81\/tcp \(ipvsadm line \d+\) is on an address of the Service but no ServicePort has it/)]);
    // the ClusterIP missing from KUBE-CLUSTER-IP: KUBE-IPVS-FILTER, kube-proxy's own rule, rejects; said so
    expect(r.nodes[0]!.drift.find((d) => d.kind === "unexpected-reject")!.message).toMatch(/in KUBE-IPVS-FILTER: the address is bound to kube-ipvs0 \(KUBE-IPVS-IPS\) but in none of the sets/);
  });
  it("a healthy node: no stale virtual server", () => {
    expect(explainService(readBundle(DIR("base")), "default", "web").nodes[0]!.drift).toEqual([]);
  });
});

describe("the LoadBalancer sets of externalTrafficPolicy Local and loadBalancerSourceRanges (ipvs/proxier.go)", () => {
  it("KUBE-LOAD-BALANCER-LOCAL without the ingress IP: clients from outside masqueraded, drift; KUBE-LOAD-BALANCER-FW without it: ranges not enforced, drift", () => {
    const local = explainService(readBundle(DIR("setdrift")), "default", "lblocal").nodes[0]!.drift.map((d) => d.message);
    expect(local).toContain("default/lblocal:http: ipset KUBE-LOAD-BALANCER-LOCAL on n1 lacks 203.0.113.10,tcp:80: externalTrafficPolicy Local is not applied to the LoadBalancer IP (clients are masqueraded: their source address is lost)");
    expect(local.some((m) => /externalTrafficPolicy Local keeps the client's source address, but n1 masquerades clients from outside at LoadBalancer/.test(m))).toBe(true);
    const fw = explainService(readBundle(DIR("setdrift")), "default", "lbsrc").nodes[0]!.drift.map((d) => d.message);
    expect(fw).toContain("default/lbsrc:http: ipset KUBE-LOAD-BALANCER-FW on n1 lacks 203.0.113.11,tcp:80: loadBalancerSourceRanges are not enforced at the LoadBalancer IP");
  });
  it("the complete sets: no drift", () => {
    for (const name of ["lblocal", "lbsrc", "nplocal"]) expect(explainService(readBundle(DIR("base")), "default", name).nodes[0]!.drift, name).toEqual([]);
  });
});

describe("a host-network client of an address on kube-ipvs0 has that address as its source (the local route's src)", () => {
  it("no cluster CIDR: KUBE-CLUSTER-IP src,dst matches it, masqueraded; a LoadBalancer IP with source ranges: KUBE-IPVS-OUT-FILTER drops it", () => {
    const web = client(explainService(readBundle(DIR("nocidr")), "default", "web"), "ClusterIP", "host-network");
    expect(web.source).toBe("10.96.0.50");
    expect(web.masquerade).toBe("always");
    const lb = client(explainService(readBundle(DIR("base")), "default", "lbsrc"), "LoadBalancer", "host-network");
    expect(lb.source).toBe("203.0.113.11");
    expect(lb.outcome).toBe("dropped");
    expect(lb.reason).toMatch(/\(KUBE-IPVS-OUT-FILTER\)/);
    // a NodePort on the node's address: the node's address
    expect(client(explainService(readBundle(DIR("base")), "default", "np"), "NodePort", "host-network").source).toBe("10.0.0.11");
  });
});

describe("the rule that decides 'not masqueraded' under externalTrafficPolicy Local", () => {
  it("is the RETURN of KUBE-NODE-PORT / KUBE-LOAD-BALANCER that skips their KUBE-MARK-MASQ, not KUBE-SERVICES' ClusterIP rule", () => {
    const r = explainService(readBundle(DIR("base")), "default", "lblocal");
    for (const kind of ["NodePort", "LoadBalancer"]) {
      const c = client(r, kind, "external");
      expect(c.masquerade, kind).toBe("never");
      expect(c.reason, kind).toMatch(/^not masqueraded: line \d+ \(KUBE-(NODE-PORT|LOAD-BALANCER)\) does not apply: not reached: line \d+ returns before it \(.*KUBE-(NODE-PORT-LOCAL-TCP|LOAD-BALANCER-LOCAL) .*-j RETURN\)/);
    }
  });
});

describe("sh with a weight-0 real server (ip_vs_sh_reassign keeps its buckets; ip_vs_sh_get refuses them without sh-fallback)", () => {
  it("says that the clients hashing to it are refused, on the balancing line and as a caveat of each client", () => {
    const r = explainService(readBundle(DIR("sh-quiesce")), "default", "web");
    const e = entry(r, "ClusterIP");
    expect(e.balancing.scheduler!.description).toMatch(/the weight-0 real server 10\.244\.2\.6:8080 keeps its hash buckets: clients whose address hashes to one are refused \(port unreachable\), not balanced \(no sh-fallback flag\)$/);
    expect(client(r, "ClusterIP", "pod-same-node").caveats.join("\n")).toMatch(/weight-0 real server 10\.244\.2\.6:8080 keeps its hash buckets/);
    // rr with a weight-0 real server: none of that
    expect(entry(explainService(readBundle(DIR("base")), "default", "web"), "ClusterIP").balancing.scheduler!.description).not.toMatch(/hash buckets/);
  });
});

// Bundles written by gen/gen.py after kube-proxy's IPVS proxier (v1.30), each a state kube-proxy itself leaves, so none
// is drift (pkg/proxy/ipvs/proxier.go syncProxyRules, ipset.go NewIPSet; net/netfilter/ipvs/ip_vs_xmit.c)
describe("states kube-proxy's IPVS proxier writes are not drift", () => {
  const drift = (svc: string, dir: string) => explainService(readBundle(DIR(dir)), "default", svc).nodes[0]!.drift.map((d) => d.message);
  it("externalTrafficPolicy Local: an externalIP is in KUBE-EXTERNAL-IP-LOCAL only, not KUBE-EXTERNAL-IP", () => {
    expect(drift("extlocal", "extlocal")).toEqual([]);
  });
  it("internalTrafficPolicy Local with externalTrafficPolicy Cluster: the NodePort's virtual server has every endpoint", () => {
    expect(drift("itpmix", "itpmix")).toEqual([]);
  });
  it("an externalIP that is the node's own address holds other Services' NodePort virtual servers too", () => {
    expect(drift("extnode", "extnode")).toEqual([]);
  });
  it("IPv6 set names are cut to 31 characters (KUBE-6-LOAD-BALANCER-SOURCE-CID): a missing member is found in both families", () => {
    expect(drift("lb6", "v4src").filter((m) => m.includes("ipset"))).toEqual([expect.stringContaining("ipset KUBE-LOAD-BALANCER-SOURCE-CIDR on n1 lacks 203.0.113.20,tcp:80,198.51.100.0/24")]);
    expect(drift("lb6", "v6src").filter((m) => m.includes("ipset"))).toEqual([expect.stringContaining("ipset KUBE-6-LOAD-BALANCER-SOURCE-CID on n1 lacks 2001:db8::10,tcp:80,2001:db8:1::/48")]);
  });
  it("the missing source-range entry is the one drift: the allowed client it drops is not also blamed on externalTrafficPolicy", () => {
    // KUBE-LOAD-BALANCER-FW drops a client without a KUBE-LOAD-BALANCER-SOURCE-CIDR entry (ipvs/proxier.go)
    for (const dir of ["v4src", "v6src"]) {
      const drift = explainService(readBundle(DIR(dir)), "default", "lb6").nodes[0]!.drift;
      expect(drift.map((d) => d.kind), dir).toEqual(["ipset-missing"]);
      expect(drift[0]!.ipset, dir).toBe(dir === "v6src" ? "KUBE-6-LOAD-BALANCER-SOURCE-CID" : "KUBE-LOAD-BALANCER-SOURCE-CIDR");
    }
  });
});

describe("a real server that is an address of this node (host-network endpoint): IPVS delivers in LOCAL_IN, not masqueraded", () => {
  it("clients from outside keep their address at the NodePort and the ClusterIP; the reason says why", () => {
    const r = explainService(readBundle(DIR("hostep")), "default", "hostep");
    for (const kind of ["NodePort", "ClusterIP"]) {
      const c = client(r, kind, "external");
      expect([kind, c.masquerade, c.endpoints.map((e) => e.endpoint)]).toEqual([kind, "never", ["10.0.0.11:6443"]]);
      expect(c.reason).toMatch(/^not masqueraded: marked by line \d+ \(KUBE-[A-Z-]+\), but the endpoint is an address of this node: the translated packet is delivered here and never reaches POSTROUTING/);
    }
  });
});

describe("a listing cut inside its last line (ipvsadm and ipset end every line with a newline, and have no end marker)", () => {
  it("a cut ipvsadm: the node's virtual servers are unknown, said, and its ports unverifiable (not missing) on the node", () => {
    const b = readBundle(new URL("../examples/ipvs-lab", import.meta.url).pathname);
    const s = b.nodes[0]!.sections.ipvsadm!;
    s.stdout = s.stdout.slice(0, Math.floor(s.stdout.length / 2)).replace(/\s+$/, "");
    const n = explainService(b, "kube-system", "kube-dns").nodes[0]!;
    expect(n.drift.map((d) => d.kind)).toEqual(["unverifiable", "unverifiable"]);
    expect(JSON.stringify(n)).toContain("the ipvsadm output ends inside a line (no final newline): it was cut");
  });
});

// ipvs/proxier.go: sessionAffinity ClientIP sets FlagPersistent and Timeout = StickyMaxAgeSeconds on each virtual server
describe("session affinity is the virtual server's persistence: compared with the API", () => {
  const withLine = (from: string, to: string) => {
    const b = readBundle(DIR("base"));
    const s = b.nodes[0]!.sections.ipvsadm!;
    expect(s.stdout).toContain(from);
    s.stdout = s.stdout.replace(from, to);
    return explainService(b, "default", "aff");
  };
  const LINE = "TCP  10.96.0.58:80 rr persistent 10800";
  it("as the API asks (persistent 10800): no drift", () => {
    expect(withLine(LINE, LINE).nodes[0]!.drift).toEqual([]);
  });
  it("not persistent, or for another time: drift, and the entry point says what the node does", () => {
    const none = withLine(LINE, "TCP  10.96.0.58:80 rr");
    expect(none.nodes[0]!.drift.map((d) => [d.kind, d.message])).toEqual([["affinity-timeout", "default/aff:http: IPVS virtual server 10.96.0.58:80/tcp on n1 is not persistent, the API asks for ClientIP session affinity of 10800 s: clients are balanced per connection; the node's rules are stale"]]);
    expect(entry(none, "ClusterIP").balancing.sessionAffinity).toBe("none on the node (the virtual server is not persistent)");
    expect(withLine(LINE, "TCP  10.96.0.58:80 rr persistent 60").nodes[0]!.drift.map((d) => d.message)).toEqual([expect.stringContaining("is persistent for 60 s, the API asks for ClientIP session affinity of 10800 s")]);
  });
});

// kube-proxy with --ipvs-scheduler=mh sets FlagSourceHash (0x10 = IP_VS_SVC_F_SCHED2, printed `mh-port`;
// pkg/proxy/ipvs/proxier.go "Set the source hash flag needed for the distribution method mh"): ip_vs_mh.c then hashes
// the source port too
describe("sh/mh with the -port flag hash the source port: per connection, not per client", () => {
  const table = (flags: string) => parseIpvsadm(`IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.96.0.50:80 mh${flags}
  -> 10.244.1.5:8080           Masq    1      0          0
  -> 10.244.2.6:8080           Masq    1      0          0
`);
  it("mh (mh-port): each new connection; mh alone: one client always to one real server", () => {
    expect(ipvsBalancer(table(" (mh-port)")).lookup("10.96.0.50", 80, "tcp")!.scheduler!.description).toMatch(/^Maglev hashing of the client's address and source port \(mh-port\): each new connection, not each client/);
    expect(ipvsBalancer(table("")).lookup("10.96.0.50", 80, "tcp")!.scheduler!.description).toMatch(/one client always lands on the same real server/);
  });
});

// kube-proxy with ipvs.scheduler mh and ClientIP affinity sets both FlagSourceHash (mh-port) and FlagPersistent
// (pkg/proxy/ipvs/proxier.go syncProxyRules); a persistent virtual server calls its scheduler only for a client
// without a persistence template (net/netfilter/ipvs/ip_vs_core.c ip_vs_sched_persist), so the client's later
// connections do not spread
describe("mh (mh-port) on a persistent virtual server: the hash picks for a client's first connection only", () => {
  const LINE = "TCP  10.96.0.58:80 rr persistent 10800";
  const report = (to: string) => {
    const b = readBundle(DIR("base"));
    const s = b.nodes[0]!.sections.ipvsadm!;
    expect(s.stdout).toContain(LINE);
    s.stdout = s.stdout.replace(LINE, to);
    return explainService(b, "default", "aff");
  };
  it("ClientIP affinity: no 'one client's connections spread'; the share column names the first connection's port", () => {
    const r = report("TCP  10.96.0.58:80 mh (mh-port) persistent 10800");
    const sched = entry(r, "ClusterIP").balancing.scheduler!;
    expect(sched.persistentSeconds).toBe(10800);
    expect(sched.description).not.toMatch(/connections spread/);
    expect(sched.description).toMatch(/applied only to a client's first connection: the virtual server is persistent, so IPVS keeps every later connection of that client on the same real server/);
    expect(sched.shareDependsOn).toBe("the client's address and its first connection's source port");
    const text = renderServiceText(r);
    expect(text).toMatch(/10\.244\.1\.19:8080 +depends on the client's address and its first connection's source port +weight 1/);
    expect(r.nodes[0]!.drift).toEqual([]);
  });
  it("without affinity (not persistent): each connection is hashed, and the share column says the port counts", () => {
    const b = readBundle(DIR("base"));
    const s = b.nodes[0]!.sections.ipvsadm!;
    s.stdout = s.stdout.replace("TCP  10.96.0.50:80 rr", "TCP  10.96.0.50:80 mh (mh-port)");
    const r = explainService(b, "default", "web");
    expect(entry(r, "ClusterIP").balancing.scheduler!.description).toMatch(/each new connection, not each client/);
    expect(renderServiceText(r)).toMatch(/10\.244\.1\.5:8080 +depends on the client's address and source port +weight 1/);
  });
});

// pkg/proxy/ipvs/proxier.go: every virtual server gets `Scheduler: proxier.ipvsScheduler` (NewProxier: rr when unset),
// and syncService updates one that is not Equal (pkg/proxy/ipvs/util/ipvs.go VirtualServer.Equal compares Scheduler)
describe("a virtual server's scheduler is compared with kube-proxy's ipvs.scheduler", () => {
  const withConfig = (conf: string | undefined, flags?: string[]) => {
    const b = readBundle(DIR("base"));
    if (conf !== undefined) {
      b.objects.configMaps.push({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "kube-proxy", namespace: "kube-system" }, data: { "config.conf": conf } } as never);
    }
    if (flags) {
      b.objects.daemonSets = [...(b.objects.daemonSets ?? []), {
        apiVersion: "apps/v1",
        kind: "DaemonSet",
        metadata: { name: "kube-proxy", namespace: "kube-system" },
        spec: { template: { spec: { containers: [{ name: "kube-proxy", command: ["/usr/local/bin/kube-proxy", ...flags] }] } } },
      } as never];
    }
    return explainService(b, "default", "web");
  };
  const KPC = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n";
  it("ipvs.scheduler lc, the node's virtual server rr: drift, and the configuration finding names the setting", () => {
    const r = withConfig(KPC + "ipvs:\n  scheduler: lc\n");
    expect(r.nodes[0]!.drift.map((d) => [d.kind, d.message])).toEqual([[
      "ipvs-scheduler",
      expect.stringMatching(/^default\/web:http: IPVS virtual server 10\.96\.0\.50:80\/tcp on n1 uses scheduler rr, kube-proxy's configuration says lc \(ConfigMap kube-system\/kube-proxy key config\.conf ipvs\.scheduler\): .*not running with this configuration/),
    ]]);
    expect(r.findings.find((f) => f.code === "KubeProxyConfiguration")!.message).toContain("ipvs.scheduler lc (ConfigMap kube-system/kube-proxy key config.conf ipvs.scheduler)");
    expect(r.findings.some((f) => f.code === "Drift/ipvs-scheduler" && f.severity === "warning")).toBe(true);
  });
  it("no ipvs.scheduler: kube-proxy's default rr, which the node has: no drift; no configuration at all: nothing compared", () => {
    expect(withConfig(KPC).nodes[0]!.drift).toEqual([]);
    expect(withConfig(KPC + "ipvs:\n  scheduler: rr\n").nodes[0]!.drift).toEqual([]);
    expect(withConfig(undefined).nodes[0]!.drift).toEqual([]);
  });
  it("--ipvs-scheduler on the DaemonSet's command line (no --config) counts the same", () => {
    const r = withConfig(undefined, ["--proxy-mode=ipvs", "--ipvs-scheduler=wrr"]);
    expect(r.nodes[0]!.drift.map((d) => d.message)).toEqual([expect.stringContaining("uses scheduler rr, kube-proxy's configuration says wrr (flag --ipvs-scheduler of DaemonSet kube-system/kube-proxy)")]);
  });
});

// pkg/proxy/ipvs/graceful_termination.go GracefulDeleteRS → deleteRsFunc: UDP and SCTP real servers are deleted at
// once (IsRsGracefulTerminationNeeded), a TCP one once ActiveConn + InactiveConn is 0; only a TCP real server with
// connections is left at weight 0, rechecked every minute (rsCheckDeleteInterval)
describe("a weight-0 real server: a drain only for TCP with connections", () => {
  const withRealServer = (svc: string, from: string, to: string, terminating?: string) => {
    const b = readBundle(DIR("base"));
    const s = b.nodes[0]!.sections.ipvsadm!;
    expect(s.stdout).toContain(from);
    s.stdout = s.stdout.replace(from, to);
    if (terminating) {
      const ep = b.objects.endpointSlices.flatMap((x) => x.endpoints ?? []).find((e) => e.addresses.includes(terminating))!;
      ep.conditions = { ready: false, serving: true, terminating: true };
    }
    return explainService(b, "default", svc).nodes[0]!.drift;
  };
  it("UDP (dns), the terminating endpoint at weight 0: not 'being drained' but a warning that kube-proxy never leaves it so", () => {
    const drift = withRealServer("dns", "  -> 10.244.2.18:53            Masq    1      0          0", "  -> 10.244.2.18:53            Masq    0      0          3", "10.244.2.18");
    expect(drift.map((d) => [d.kind, d.endpoint])).toEqual([["weight", "10.244.2.18:53"]]);
    expect(drift[0]!.message).toMatch(/^default\/dns:dns: real server 10\.244\.2\.18:53 has weight 0 on n1, which is not a drain: kube-proxy deletes a UDP real server at once instead of draining it/);
    expect(drift[0]!.message).not.toMatch(/being drained/);
  });
  it("TCP with connections: being drained, with the counts; TCP without any: past draining, deleted at kube-proxy's next check", () => {
    const draining = withRealServer("web", "  -> 10.244.2.6:8080           Masq    1      0          0", "  -> 10.244.2.6:8080           Masq    0      2          1", "10.244.2.6");
    expect(draining.map((d) => [d.kind, d.message])).toEqual([["quiesced", expect.stringContaining("being drained: 2 active and 1 inactive connection(s) left")]]);
    const done = withRealServer("web", "  -> 10.244.2.6:8080           Masq    1      0          0", "  -> 10.244.2.6:8080           Masq    0      0          0", "10.244.2.6");
    expect(done.map((d) => [d.kind, d.message])).toEqual([["quiesced", expect.stringMatching(/no connection left \(ActiveConn 0, InActConn 0\): past draining, kube-proxy deletes it at its next check/)]]);
  });
});

// A client from outside is traced from a documentation address; it must not be an address of the node or of a
// Service (IPVS binds every Service address to kube-ipvs0): the kernel drops an arriving packet with a local source
// as a martian (net/ipv4/fib_frontend.c __fib_validate_source)
describe("the client outside the cluster is no address the node owns", () => {
  it("lblocal's LoadBalancer IP is 203.0.113.10: the outside client is another address, at every entry point", () => {
    const r = explainService(readBundle(DIR("base")), "default", "lblocal");
    expect(r.service.loadBalancerIngress).toContain("203.0.113.10");
    const externals = r.nodes[0]!.ports.flatMap((p) => p.entryPoints).map((e) => e.clients.find((c) => c.client === "external")!.description);
    expect(externals.length).toBeGreaterThan(0);
    for (const d of externals) expect(d).not.toContain("203.0.113.10");
    expect(client(r, "LoadBalancer", "external").description).toBe("client outside the cluster (198.51.100.10)");
  });
});
