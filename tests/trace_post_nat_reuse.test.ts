// The iptables tracer reuses the filter and POSTROUTING part of one branch for the other branches of a ServicePort
// (their packets differ only in destination) when no rule there reads the destination (src/service/iptables/trace.ts
// `reusePostNat`). On every dump of the fixtures (seeds, the real dumps in node format, kube-proxy's own test dumps) and
// on the generated 10,000-Service dump when the bench has built it, every frontend of KUBE-SERVICES and KUBE-NODEPORTS,
// traced from several kinds of client and with masquerade and drop marks already set, must give exactly the outcomes
// of tracing every branch.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseIptablesSave } from "../src/datapath/iptables_save.ts";
import { traceIptables } from "../src/service/iptables/trace.ts";
import type { TracePacket } from "../src/service/trace.ts";

const DIRS = ["tests/fixtures/seeds", "tests/fixtures/node-format", "tests/fixtures/kube-proxy"];

/** `-d VIP/32 … --dport N` of nat KUBE-SERVICES and `--dport N` of KUBE-NODEPORTS: the frontends a client aims at. */
function frontends(text: string): { dst: string; port: number; proto: "tcp" | "udp" | "sctp"; local: boolean }[] {
  const out = new Map<string, { dst: string; port: number; proto: "tcp" | "udp" | "sctp"; local: boolean }>();
  for (const line of text.split("\n")) {
    const m = /^-A KUBE-(SERVICES|NODEPORTS) .*?-p (tcp|udp|sctp)\b.*?--dport (\d+)/.exec(line);
    if (!m) continue;
    const d = / -d ([0-9a-f.:]+)\/(?:32|128)\b/.exec(line)?.[1];
    const dst = d ?? (line.includes(":") && / -d [0-9a-f]*:/.test(line) ? "fd00::10" : "192.0.2.2");
    out.set(`${dst} ${m[3]} ${m[2]}`, { dst, port: Number(m[3]), proto: m[2] as "tcp", local: d === undefined });
  }
  return [...out.values()];
}

function packets(f: { dst: string; port: number; proto: "tcp" | "udp" | "sctp"; local: boolean }): [TracePacket, "PREROUTING" | "OUTPUT"][] {
  const v6 = f.dst.includes(":");
  const srcs = v6 ? ["fd00:10:244::5", "2001:db8::7", "fd00::2"] : ["10.244.1.5", "10.0.0.5", "203.0.113.10", "192.168.0.2"];
  const out: [TracePacket, "PREROUTING" | "OUTPUT"][] = [];
  for (const src of srcs) {
    for (const mark of [0, 0x4000, 0x8000]) {
      const p: TracePacket = { family: v6 ? 6 : 4, src, dst: f.dst, proto: f.proto, dport: f.port, srcLocal: false, dstLocal: f.local, mark, ctstate: new Set(["NEW"]) };
      out.push([p, "PREROUTING"], [{ ...p, ctstate: new Set(p.ctstate), inInterface: "eth0" }, "PREROUTING"], [{ ...p, ctstate: new Set(p.ctstate), srcLocal: true }, "OUTPUT"]);
    }
  }
  return out;
}

function compare(text: string, where: string): { traces: number; branching: number } {
  let traces = 0;
  let branching = 0;
  let dump;
  try {
    dump = parseIptablesSave(text);
  } catch {
    return { traces, branching };
  }
  for (const f of frontends(text)) {
    for (const [p, hook] of packets(f)) {
      const run = (reusePostNat: boolean) => {
        try {
          return traceIptables(dump, { ...p, ctstate: new Set(p.ctstate) }, hook, { reusePostNat });
        } catch (e) {
          return { error: (e as Error).message };
        }
      };
      const every = run(false);
      const reused = run(true);
      expect(reused, `${where}: ${hook} ${p.src} -> ${p.dst}:${p.dport}/${p.proto} mark ${p.mark}`).toEqual(every);
      traces++;
      if ("outcomes" in every && every.outcomes.filter((o) => o.verdict === "dnat").length > 1) branching++;
    }
  }
  return { traces, branching };
}

/** One Service, three endpoints (two pods, one host address); `extra` goes into nat POSTROUTING's own chain. */
function threeEndpoints(extra: string): string {
  return `*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]
:KUBE-SEP-AAAAAAAAAAAAAAA1 - [0:0]
:KUBE-SEP-AAAAAAAAAAAAAAA2 - [0:0]
:KUBE-SEP-AAAAAAAAAAAAAAA3 - [0:0]
:CNI-POSTRTG - [0:0]
-A PREROUTING -j KUBE-SERVICES
-A OUTPUT -j KUBE-SERVICES
-A POSTROUTING -j KUBE-POSTROUTING
-A POSTROUTING -j CNI-POSTRTG
${extra}-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0
-A KUBE-POSTROUTING -j MASQUERADE
-A KUBE-SERVICES -d 10.96.0.50/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA
-A KUBE-SVC-AAAAAAAAAAAAAAAA -m statistic --mode random --probability 0.33333333349 -j KUBE-SEP-AAAAAAAAAAAAAAA1
-A KUBE-SVC-AAAAAAAAAAAAAAAA -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-AAAAAAAAAAAAAAA2
-A KUBE-SVC-AAAAAAAAAAAAAAAA -j KUBE-SEP-AAAAAAAAAAAAAAA3
-A KUBE-SEP-AAAAAAAAAAAAAAA1 -s 10.244.1.5/32 -j KUBE-MARK-MASQ
-A KUBE-SEP-AAAAAAAAAAAAAAA1 -p tcp -m tcp -j DNAT --to-destination 10.244.1.5:8080
-A KUBE-SEP-AAAAAAAAAAAAAAA2 -s 10.244.2.6/32 -j KUBE-MARK-MASQ
-A KUBE-SEP-AAAAAAAAAAAAAAA2 -p tcp -m tcp -j DNAT --to-destination 10.244.2.6:8080
-A KUBE-SEP-AAAAAAAAAAAAAAA3 -s 192.168.0.10/32 -j KUBE-MARK-MASQ
-A KUBE-SEP-AAAAAAAAAAAAAAA3 -p tcp -m tcp -j DNAT --to-destination 192.168.0.10:6443
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-FORWARD - [0:0]
-A FORWARD -j KUBE-FORWARD
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-A KUBE-FORWARD -m mark --mark 0x4000/0x4000 -j ACCEPT
COMMIT
`;
}

describe("reusing the filter and POSTROUTING part between branches changes no outcome", () => {
  it("branches that differ in what POSTROUTING does: a rule reading the destination, a hairpin's mark", () => {
    const masqueradedTo = (text: string, src: string) => {
      const p: TracePacket = { family: 4, src, dst: "10.96.0.50", proto: "tcp", dport: 80, srcLocal: false, dstLocal: false, mark: 0, ctstate: new Set(["NEW"]) };
      const every = traceIptables(parseIptablesSave(text), { ...p, ctstate: new Set(["NEW"]) }, "PREROUTING", { reusePostNat: false });
      const reused = traceIptables(parseIptablesSave(text), { ...p, ctstate: new Set(["NEW"]) }, "PREROUTING", { reusePostNat: true });
      expect(reused).toEqual(every);
      return every.outcomes.map((o) => `${o.dnatTo} ${o.masqueraded}`).sort();
    };
    // flannel's rule masquerades what leaves the pod network: the host endpoint's branch only
    const cni = threeEndpoints("-A CNI-POSTRTG -s 10.244.0.0/16 ! -d 10.244.0.0/16 -j MASQUERADE\n");
    expect(masqueradedTo(cni, "10.244.3.7")).toEqual(["10.244.1.5:8080 false", "10.244.2.6:8080 false", "192.168.0.10:6443 true"]);
    // the same without the destination in the rule: every branch alike, and reused
    const blind = threeEndpoints("-A CNI-POSTRTG -s 10.244.3.0/24 -j MASQUERADE\n");
    expect(masqueradedTo(blind, "10.244.3.7")).toEqual(["10.244.1.5:8080 true", "10.244.2.6:8080 true", "192.168.0.10:6443 true"]);
    // a pod reaching itself: its own branch carries KUBE-MARK-MASQ's mark and is masqueraded, the others not
    expect(masqueradedTo(threeEndpoints(""), "10.244.1.5")).toEqual(["10.244.1.5:8080 true", "10.244.2.6:8080 false", "192.168.0.10:6443 false"]);
  });

  it("every frontend of every fixture dump, from several clients and marks", () => {
    let traces = 0;
    let branching = 0;
    let files = 0;
    for (const dir of DIRS) {
      for (const f of readdirSync(dir).filter((x) => /tables-save$|\.txt$/.test(x))) {
        const r = compare(readFileSync(join(dir, f), "utf8"), `${dir}/${f}`);
        traces += r.traces;
        branching += r.branching;
        if (r.traces > 0) files++;
      }
    }
    expect(files).toBeGreaterThan(60);
    expect(traces).toBeGreaterThan(5000);
    // thousands of traces branch to several endpoints: the reuse is exercised, not only each trace's first branch
    expect(branching).toBeGreaterThan(1000);
  }, 300_000);

  const BIG = "bench/out/iptables-10000/nodes/node-1/iptables-save.txt";
  it.runIf(existsSync(BIG))("a sample of the generated 10,000-Service dump", () => {
    const text = readFileSync(BIG, "latin1");
    const lines = text.split("\n");
    // 40 frontends spread over the dump, traced in the whole dump
    const all = lines.filter((l) => l.startsWith("-A KUBE-SERVICES -d "));
    const sample = all.filter((_, i) => i % Math.ceil(all.length / 40) === 0).join("\n");
    const dump = parseIptablesSave(text);
    let n = 0;
    for (const f of frontends(sample)) {
      for (const [p, hook] of packets(f).slice(0, 9)) {
        expect(traceIptables(dump, { ...p, ctstate: new Set(p.ctstate) }, hook, { reusePostNat: true }), `${p.src} -> ${f.dst}:${f.port}`)
          .toEqual(traceIptables(dump, { ...p, ctstate: new Set(p.ctstate) }, hook, { reusePostNat: false }));
        n++;
      }
    }
    expect(n).toBeGreaterThan(300);
  }, 300_000);
});
