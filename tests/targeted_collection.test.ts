// Issue 12, "targeted collection for one Service": the analysis of the rules the targeted script keeps for a Service
// equals the analysis of the whole dump for that Service. The selection is the script's own awk program
// (src/kube/rule_select_awk.ts, run by the real awk), on every Service of the example bundles and of the real
// kube-proxy dumps (both backends' node format), and on a sample of the generated 10,000-Service dump.
// tests/targeted_kernel.test.ts runs the whole script against real iptables in network namespaces.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Bundle, NodeCapture } from "../src/bundle/bundle.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { requireTools } from "./helpers/netns.ts";
import { keyWords, realDumps, selectSave } from "./helpers/targeted_selection.ts";

const HAVE_AWK = requireTools("targeted selection (awk)", ["awk"]);

function withSections(bundle: Bundle, f: (node: NodeCapture) => NodeCapture): Bundle {
  return { ...bundle, nodes: bundle.nodes.map(f) };
}

/** The bundle with every node's iptables sections cut down to the Service's rules. */
function targeted(bundle: Bundle, ns: string, name: string): Bundle {
  return withSections(bundle, (n) => {
    const keys = keyWords(bundle.objects, ns, name, n.name);
    const sections = { ...n.sections };
    for (const k of ["iptables-save", "ip6tables-save"] as const) {
      const s = sections[k];
      if (s && s.stdout.trim() !== "" && s.exitCode !== 127) sections[k] = { ...s, stdout: selectSave(s.stdout, keys) };
    }
    return { ...n, sections };
  });
}

/**
 * The report as JSON, without line numbers: they point into the section the rule was read from, and the targeted
 * section is shorter (the rules and chains are the same). The proxy-mode evidence "N KUBE-SVC/KUBE-SEP chain(s) in
 * nat" counts the chains of the section, so its number is left out too (a targeted node's report says the count is
 * of the collected chains: tests/targeted_kernel.test.ts).
 */
function reportJson(bundle: Bundle, ns: string, name: string): unknown {
  try {
    const text = JSON.stringify(explainService(bundle, ns, name), (k, v) => (k === "line" && typeof v === "number" ? undefined : v));
    return JSON.parse(text.replace(/\b(line|lines) \d+(?:(?:, | and |-)\d+)*/g, "$1 N").replace(/"\d+ (KUBE-SVC\/KUBE-SEP chain\(s\) in nat)"/g, '"N $1"'));
  } catch (e) {
    return { error: (e as Error).message };
  }
}

function sizes(bundle: Bundle): number {
  return bundle.nodes.reduce((n, c) => n + (c.sections["iptables-save"]?.stdout.length ?? 0) + (c.sections["ip6tables-save"]?.stdout.length ?? 0), 0);
}

// azure-zones is a Pending example (no Service); nftables-lab's rules are kube-proxy's nft tables, collected whole.
const EXAMPLES = ["iptables-lab", "lb-legacy", "ipvs-lab", "ipvs-kind"];

describe.runIf(HAVE_AWK)("targeted selection: same analysis as the whole dump", () => {
  for (const ex of EXAMPLES) {
    it(`every Service of examples/${ex}`, () => {
      const bundle = readBundle(join("examples", ex));
      const services = bundle.objects.services;
      expect(services.length).toBeGreaterThan(0);
      for (const s of services) {
        const ns = s.metadata.namespace ?? "default";
        const t = targeted(bundle, ns, s.metadata.name);
        expect(reportJson(t, ns, s.metadata.name), `${ns}/${s.metadata.name}`).toEqual(reportJson(bundle, ns, s.metadata.name));
      }
    });
  }

  // The real kube-proxy dumps carry no API objects: the Services are made from the dump's own comments
  // ("ns/name:port cluster IP", NodePorts from KUBE-NODEPORTS), the same objects for both analyses.
  const dumps = realDumps();
  it(`every Service of the ${dumps.length} real dumps in node format (nft and legacy backends)`, () => {
    expect(dumps.length).toBeGreaterThan(40);
    let services = 0;
    for (const { file: f, bundle } of dumps) {
      for (const s of bundle.objects.services) {
        services++;
        const ns = s.metadata.namespace!;
        const t = targeted(bundle, ns, s.metadata.name);
        expect(reportJson(t, ns, s.metadata.name), `${f}: ${ns}/${s.metadata.name}`).toEqual(reportJson(bundle, ns, s.metadata.name));
      }
    }
    expect(services).toBeGreaterThan(80);
  });

  const BIG = "bench/out/iptables-10000";
  it.runIf(existsSync(join(BIG, "capture.yaml")) || process.env.CI === "true")("a sample of the 10,000-Service dump (every 500th Service)", () => {
    if (!existsSync(join(BIG, "capture.yaml"))) {
      const r = spawnSync(process.execPath, ["scripts/bench.mjs", "--sizes", "10000", "--runs", "1", "--no-deno", "--no-nft"], { stdio: "ignore" });
      expect(r.status).toBe(0);
    }
    const bundle = readBundle(BIG, { maxBytes: 2 ** 32 });
    const full = sizes(bundle);
    const services = bundle.objects.services.filter((_, i) => i % 500 === 250);
    expect(services.length).toBe(20);
    for (const s of services) {
      const ns = s.metadata.namespace!;
      const t = targeted(bundle, ns, s.metadata.name);
      expect(sizes(t)).toBeLessThan(full / 1000); // a few chains, not the table
      expect(reportJson(t, ns, s.metadata.name), `${ns}/${s.metadata.name}`).toEqual(reportJson(bundle, ns, s.metadata.name));
    }
  }, 300_000);
});
