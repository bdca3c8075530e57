/**
 * Long chains: in a chain of 64 rules or more (KUBE-SERVICES holds one per Service port, KUBE-NODEPORTS one per
 * NodePort), the tracer evaluates only the rules whose destination address or port can be the packet's (an index
 * read from the raw rule text). On a generated 700-Service dump (70 NodePorts), the report must be the one given when both chains
 * are cut down to the rules not restricted to another Service's address or NodePort (chains short enough to be read
 * rule by rule).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { writeFixture } from "../bench/write_fixture.ts";
import { explainService } from "../src/service/explain.ts";
import { readBundle } from "../src/io/read_bundle.ts";

/** The report without line numbers (the cut-down dump has fewer lines). */
function withoutLines(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutLines);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).filter(([k]) => k !== "line" && k !== "lines").map(([k, x]) => [k, withoutLines(x)]));
  }
  if (typeof v === "string") return v.replace(/\bline \d+/g, "line N").replace(/:\d+\b(?=\))/g, ":N").replace(/iptables-700(-cut)?/g, "DIR");
  return v;
}

describe("destination index of long chains", () => {
  const out = mkdtempSync(join(tmpdir(), "knp-long-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  test("700 Services: same verdicts, shares, masquerade and rules as with the other Services' rules removed", () => {
    const m = writeFixture(out, "iptables", { services: 700 }, "all");
    const text = readFileSync(m.dumpPath, "utf8");
    const q = m.query;
    const kubeServices = text.split("\n").filter((l) => l.startsWith("-A KUBE-SERVICES "));
    expect(kubeServices.length).toBeGreaterThanOrEqual(700);
    const nodePorts = text.split("\n").filter((l) => l.startsWith("-A KUBE-NODEPORTS "));
    expect(nodePorts.length).toBeGreaterThanOrEqual(64);
    // Keep a KUBE-SERVICES rule unless it is tied to one host address that is not the queried Service's, and a
    // KUBE-NODEPORTS rule unless it is tied to another Service's NodePort.
    const ours = `"${q.namespace}/${q.name}:`;
    const keep = (l: string) => {
      if (l.startsWith("-A KUBE-SERVICES ")) {
        const d = / -d (\S+)\/32 /.exec(l);
        return !d || d[1] === q.clusterIP || l.includes(ours);
      }
      if (l.startsWith("-A KUBE-NODEPORTS ")) return !l.includes(" --dport ") || l.includes(ours);
      return true;
    };
    const cut = text.split("\n").filter(keep).join("\n");
    for (const chain of ["KUBE-SERVICES", "KUBE-NODEPORTS"]) {
      const kept = cut.split("\n").filter((l) => l.startsWith(`-A ${chain} `)).length;
      expect(kept, chain).toBeLessThan(64);
      expect(kept, chain).toBeGreaterThan(0);
    }
    const small = join(out, "iptables-700-cut");
    cpSync(m.dir, small, { recursive: true });
    writeFileSync(join(small, "nodes", "node-1", "iptables-save.txt"), cut);

    const long = explainService(readBundle(m.dir), q.namespace, q.name);
    const short = explainService(readBundle(small), q.namespace, q.name);
    expect(JSON.stringify(long)).toContain(q.endpoints[0]);
    expect(long.service.type).toBe("NodePort");
    expect(withoutLines(long)).toEqual(withoutLines(short));
  });
});
