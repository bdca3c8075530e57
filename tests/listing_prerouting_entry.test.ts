// Bundles whose nat table is an `iptables -t nat -nL` / `-nvL` listing (examples/lb-legacy, examples/ipvs-kind): the
// listing writes a rule's target as a column (`KUBE-SERVICES  all  --  0.0.0.0/0 …`, iptables(8) "-L, --list"), not
// as `-j KUBE-SERVICES`. Their PREROUTING and OUTPUT chains do jump to KUBE-SERVICES (lines 3 and 7 of lb-legacy's, 3 and 14 of ipvs-kind's):
// the trace starts at the builtin chain, with no "has no jump" caveat.
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import type { ServiceReport } from "../src/service/report.ts";
import { readBundle } from "../src/io/read_bundle.ts";

const example = (name: string) => new URL(`../examples/${name}`, import.meta.url).pathname;

function everyCaveat(r: ServiceReport): string[] {
  const out: string[] = [];
  for (const n of r.nodes) for (const p of n.ports) for (const e of p.entryPoints) for (const c of e.clients) out.push(...c.caveats);
  for (const a of r.packet ?? []) out.push(...a.caveats);
  return out;
}

const cases = [
  { bundle: "lb-legacy", ns: "default", svc: "testsvc", source: "203.0.113.10", dest: "172.6.6.6", port: 443 },
  { bundle: "ipvs-kind", ns: "default", svc: "web", source: "203.0.113.10", dest: "10.96.119.228", port: 80 },
];

describe("listing bundles: the builtin chain's jump to KUBE-SERVICES is read from the listing", () => {
  for (const c of cases) {
    const r = explainService(readBundle(example(c.bundle)), c.ns, c.svc, {
      packet: { source: c.source, destination: c.dest, port: c.port, protocol: "tcp" },
    });

    it(`${c.bundle}: no client or packet answer says nat PREROUTING/OUTPUT lacks the jump`, () => {
      expect(everyCaveat(r).filter((x) => /has no jump to KUBE-SERVICES/.test(x))).toEqual([]);
    });

    it(`${c.bundle}: the packet's path starts at nat PREROUTING:3, the listing's jump`, () => {
      const paths = r.packet?.[0]?.paths ?? [];
      expect(paths.length).toBeGreaterThan(0);
      for (const p of paths) expect(p.rules[0], JSON.stringify(p.rules[0])).toMatchObject({ table: "nat", chain: "PREROUTING", line: 3 });
    });

  }
});
