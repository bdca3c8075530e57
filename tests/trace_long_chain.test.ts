/**
 * Long chains: in a chain of 64 rules or more (KUBE-SERVICES holds one per Service port), the tracer evaluates only
 * the rules whose destination can be the packet's (an index read from the raw rule text). On a generated
 * 200-Service dump, the report must be the one given when KUBE-SERVICES is cut down to the rules that are not
 * restricted to another Service's address (a chain short enough to be read rule by rule).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { writeFixture } from "../bench/write_fixture.ts";
import { explainServiceFull } from "../src/explain/explain_service_full.ts";
import { readBundle } from "../src/io/read_bundle.ts";

/** The report without line numbers (the cut-down dump has fewer lines). */
function withoutLines(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutLines);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).filter(([k]) => k !== "line" && k !== "lines").map(([k, x]) => [k, withoutLines(x)]));
  }
  if (typeof v === "string") return v.replace(/\bline \d+/g, "line N").replace(/:\d+\b(?=\))/g, ":N").replace(/iptables-200(-cut)?/g, "DIR");
  return v;
}

describe("destination index of long chains", () => {
  const out = mkdtempSync(join(tmpdir(), "knp-long-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  test("200 Services: same verdicts, shares, masquerade and rules as with the other Services' rules removed", () => {
    const m = writeFixture(out, "iptables", { services: 200 }, "all");
    const text = readFileSync(m.dumpPath, "utf8");
    const q = m.query;
    const kubeServices = text.split("\n").filter((l) => l.startsWith("-A KUBE-SERVICES "));
    expect(kubeServices.length).toBeGreaterThanOrEqual(200);
    // Keep a KUBE-SERVICES rule unless it is tied to one host address that is not the queried Service's.
    const keep = (l: string) => {
      if (!l.startsWith("-A KUBE-SERVICES ")) return true;
      const d = / -d (\S+)\/32 /.exec(l);
      return !d || d[1] === q.clusterIP || l.includes(`"${q.servicePortName}`);
    };
    const cut = text.split("\n").filter(keep).join("\n");
    const kept = cut.split("\n").filter((l) => l.startsWith("-A KUBE-SERVICES ")).length;
    expect(kept).toBeLessThan(64);
    expect(kept).toBeGreaterThan(0);
    const small = join(out, "iptables-200-cut");
    cpSync(m.dir, small, { recursive: true });
    writeFileSync(join(small, "nodes", "node-1", "iptables-save.txt"), cut);

    const long = explainServiceFull(readBundle(m.dir), q.namespace, q.name);
    const short = explainServiceFull(readBundle(small), q.namespace, q.name);
    expect(JSON.stringify(long)).toContain(q.endpoints[0]);
    expect(withoutLines(long)).toEqual(withoutLines(short));
  });
});
