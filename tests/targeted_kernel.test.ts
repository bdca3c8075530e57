// Issue 12: the targeted collection script itself (src/kube/targeted_script.ts, `sh -s KEYS` with the script on
// stdin), run in network namespaces that hold real kube-proxy rules, on both iptables backends and in nftables mode:
// the report built from what it collected equals the report of the whole dump, for every Service of the real dumps
// and of the nftables example, and for a sample of the 10,000-Service dump; the sections it skips say why; and it
// never runs a whole-table listing on the nft backend.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Bundle, NodeCapture } from "../src/bundle/bundle.ts";
import { parseCollectionOutput } from "../src/bundle/collection_output.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { nodeTargetKeys, serviceTargetKeys } from "../src/kube/target_keys.ts";
import { CHAIN_WALK_FROM, SAVE_BUDGET_S, targetedCommand, type TargetedOptions } from "../src/kube/targeted_script.ts";
import type { Node } from "../src/model/k8s.ts";
import { explainService } from "../src/service/explain.ts";
import { createNetns, findTool, type IptablesBackend, loadIptables, type Netns, requireNetns } from "./helpers/netns.ts";
import { bundleFromDump } from "./helpers/targeted_selection.ts";
import { busyboxUserland, kubeProxyImageUserland } from "./helpers/userlands.ts";

const READY = requireNetns(["nft", "awk", "sed", "tr", "busybox", "dash", "grep"]);
const spaces: Netns[] = [];
// The default debug image is Alpine-based: the script also runs with busybox's sh, awk, sed, tr and timeout.
const busybox = READY ? busyboxUserland() : undefined;
// The node's kube-proxy pod, which collection prefers, has dash and grep but no awk (distroless-iptables).
const kpImage = READY ? kubeProxyImageUserland() : undefined;
afterAll(async () => {
  for (const ns of spaces) await ns.destroy();
  busybox?.remove();
  kpImage?.remove();
});

/** A way to run the script: options, and the userland it runs with (undefined: the host's). */
type Way = TargetedOptions & { env?: string[]; userland?: "busybox" | "kube-proxy image" };

/** Runs the targeted script for Service ns/name in `netns` and returns the node capture it yields. */
async function collect(
  netns: Netns,
  bundle: Bundle,
  ns: string,
  name: string,
  nodeName: string,
  options: TargetedOptions & { env?: string[] } = {},
): Promise<{ capture: NodeCapture; ms: number; bytes: number }> {
  const node = bundle.objects.nodes.find((n) => n.metadata.name === nodeName) ?? ({ apiVersion: "v1", kind: "Node", metadata: { name: nodeName } } as Node);
  const { command, stdin } = targetedCommand(nodeTargetKeys(serviceTargetKeys(bundle.objects, ns, name), node), undefined, options);
  const t0 = performance.now();
  const r = await netns.exec([...(options.env ? ["env", ...options.env] : []), ...command], { input: stdin, timeoutMs: 120_000 });
  const ms = performance.now() - t0;
  expect(r.code).toBe(0);
  const parsed = parseCollectionOutput(r.stdout, r.stderr, []);
  expect(parsed.complete, r.stderr.slice(-500)).toBe(true);
  expect(parsed.problems).toEqual([]);
  return { capture: { name: nodeName, sections: parsed.sections }, ms, bytes: Buffer.byteLength(r.stdout) + Buffer.byteLength(r.stderr) };
}

/**
 * The report as JSON with rule line numbers, chain counts, section costs and the targeted-collection note left out, and evidence
 * lists in a fixed order: the report orders evidence by line, and the nft backend's targeted section lists chains
 * in the order they were reached, not the kernel's (the rules of each chain keep their order).
 */
function reportJson(bundle: Bundle, ns: string, name: string): unknown {
  const rep = explainService(bundle, ns, name);
  for (const n of rep.nodes) {
    n.notes = n.notes.filter((x) => !x.startsWith("targeted collection for this Service"));
    delete n.collection; // what each collection cost on the node (the whole dump has no such figures)
  }
  const text = JSON.stringify(rep, (k, v) => {
    if (k === "line" && typeof v === "number") return undefined;
    if (k === "evidence" && Array.isArray(v)) return [...v].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    return v;
  });
  return JSON.parse(text.replace(/\b(line|lines) \d+(?:(?:, | and |-)\d+)*/g, "$1 N").replace(/"\d+ (KUBE-SVC\/KUBE-SEP chain\(s\) in nat)"/g, '"N $1"'));
}

/** The bundle whose node-1 holds what the script collected instead of the whole dump. */
function withCapture(bundle: Bundle, capture: NodeCapture): Bundle {
  return { ...bundle, nodes: bundle.nodes.map((n) => (n.name === capture.name ? { ...capture, sections: { ...capture.sections } } : n)) };
}

const NODE_FORMAT = "tests/fixtures/node-format";

describe.runIf(READY)("the targeted script on real iptables, both backends", () => {
  for (const backend of ["nft", "legacy"] as IptablesBackend[]) {
    it(`${backend} backend: every Service of the real dumps in node format`, async () => {
      const files = readdirSync(NODE_FORMAT).filter((f) => f.includes(`.${backend}.`) && f.endsWith("tables-save"));
      expect(files.length).toBeGreaterThan(35);
      let services = 0;
      for (const f of files) {
        const text = readFileSync(join(NODE_FORMAT, f), "utf8");
        const family = f.endsWith("ip6tables-save") ? 6 : 4;
        const section = family === 6 ? "ip6tables-save" : "iptables-save";
        const bundle = bundleFromDump(text, section);
        if (bundle.objects.services.length === 0) continue;
        const netns = await createNetns("tgt");
        spaces.push(netns);
        await loadIptables(netns, text, { backend, family, noflush: false });
        // kubelet's hint chain, so the script detects this backend as it would on a node
        await loadIptables(netns, "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n", { backend, family: 4 });
        // the whole dump as the kernel holds it, read back, is the reference
        const whole = (await netns.run([`${family === 6 ? "ip6tables" : "iptables"}-${backend}-save`])).replace(/^#.*\n/gm, "");
        // these dumps hold fewer than CHAIN_WALK_FROM Service rules: on the nft backend the default filters one save;
        // `walk:0` makes the script list chain by chain, and both must give the same report
        // and each way again with busybox's sh, awk, sed, tr and timeout as the only userland, and with the kube-proxy
        // image's (no awk: the chain walk filters with sh builtins; a save is collected whole)
        const base: Way[] = backend === "nft" ? [{}, { chainWalkFrom: 0 }] : [{}];
        const ways: Way[] = [
          ...base,
          ...base.map((w): Way => ({ ...w, env: [`PATH=${busybox!.dir}`], userland: "busybox" })),
          ...base.map((w): Way => ({ ...w, env: [`PATH=${kpImage!.dir}`], userland: "kube-proxy image" })),
        ];
        for (const s of bundle.objects.services) for (const way of ways) {
          services++;
          const ns = s.metadata.namespace!;
          const { capture } = await collect(netns, bundle, ns, s.metadata.name, "node-1", way);
          expect(capture.sections["iptables-backend"]?.stdout.trim()).toBe(backend);
          expect(capture.sections["collection-scope"]?.stdout).toContain("mode=iptables\n");
          const cmd = capture.sections[section]?.command;
          // kube-proxy's image has no awk: its saves are walked with grep, the chain walk filtered with sh builtins
          const grepped = way.userland === "kube-proxy image" && way.chainWalkFrom !== 0;
          if (grepped && backend === "legacy") expect(cmd).toBe(`${family === 6 ? "ip6tables" : "iptables"}-legacy-save | grep: the chains of the Service's packets (no awk in this image)`);
          else if (grepped) expect(cmd).toMatch(new RegExp(`^ip6?tables-nft-save \\| grep: the chains of the Service's packets \\(nat KUBE-SERVICES holds \\d+ rules, fewer than ${CHAIN_WALK_FROM}: one save costs less than listing chain by chain; no awk in this image\\)$`));
          else if (backend === "legacy") expect(cmd).toBe(`${family === 6 ? "ip6tables" : "iptables"}-legacy-save | awk: the chains of the Service's packets`);
          else if (way.chainWalkFrom === 0) expect(cmd).toMatch(/^ip6?tables-nft -t TABLE -S CHAIN: the chains of the Service's packets \(nat KUBE-SERVICES holds \d+ rules, at least 0: a listing per chain costs less than a save\)$/);
          else expect(cmd).toMatch(new RegExp(`^ip6?tables-nft-save \\| awk: the chains of the Service's packets \\(nat KUBE-SERVICES holds \\d+ rules, fewer than ${CHAIN_WALK_FROM}: one save costs less than listing chain by chain\\)$`));
          // ip6tables only for a question with an IPv6 address; an IPv4 Service's scope says why it was left out
          const v6skip = "skipped=ip6tables-save: the question has no IPv6 address (the packets of an IPv4 Service never meet ip6tables)";
          if (family === 6) expect([capture.sections["ip6tables-save"]?.exitCode, capture.sections["collection-scope"]?.stdout.includes(v6skip)]).toEqual([0, false]);
          else expect([capture.sections["ip6tables-save"], capture.sections["collection-scope"]?.stdout.includes(v6skip)]).toEqual([undefined, true]);
          const sections = { ...capture.sections, "proxy-mode": { stdout: "iptables", exitCode: 0 } };
          const targeted = withCapture(bundle, { ...capture, sections });
          const { "collection-scope": _scope, ...rest } = sections;
          const ref = withCapture(bundle, { ...capture, sections: { ...rest, [section]: { stdout: whole, exitCode: 0 } } });
          expect(reportJson(targeted, ns, s.metadata.name), `${f}: ${ns}/${s.metadata.name} (${way.userland ?? "host"}, walk ${way.chainWalkFrom ?? "default"})`).toEqual(reportJson(ref, ns, s.metadata.name));
          expect(explainService(ref, ns, s.metadata.name).nodes[0]!.notes.some((n) => n.startsWith("targeted collection"))).toBe(false);
          const note = explainService(targeted, ns, s.metadata.name).nodes[0]!.notes.find((n) => n.startsWith("targeted collection for this Service in kube-proxy iptables mode"));
          expect(note).toBeDefined();
          expect(note!.includes("; ip6tables not read: no IPv6 address among them)")).toBe(family === 4);
        }
        await netns.destroy();
      }
      expect(services).toBeGreaterThan(40);
    }, 600_000);
  }

  it(`nft backend, a save slower than ${SAVE_BUDGET_S} s below ${CHAIN_WALK_FROM} Service rules: the script lists chain by chain after all, says why, same report`, async () => {
    const f = readdirSync(NODE_FORMAT).find((x) => x.includes(".nft.") && x.endsWith(".iptables-save") && bundleFromDump(readFileSync(join(NODE_FORMAT, x), "utf8"), "iptables-save").objects.services.length > 0)!;
    const text = readFileSync(join(NODE_FORMAT, f), "utf8");
    const bundle = bundleFromDump(text, "iptables-save");
    const netns = await createNetns("tgtslow");
    spaces.push(netns);
    await loadIptables(netns, text, { backend: "nft", family: 4, noflush: false });
    await loadIptables(netns, "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n", { backend: "nft", family: 4 });
    const whole = (await netns.run(["iptables-nft-save"])).replace(/^#.*\n/gm, "");
    // a node whose save is slow (few Services, many endpoints): the same binaries, the saves behind a sleep
    const bin = mkdtempSync(join(tmpdir(), "knp-slow-"));
    try {
      for (const t of ["iptables-nft-save", "ip6tables-nft-save"]) {
        writeFileSync(join(bin, t), `#!/bin/sh\nsleep ${SAVE_BUDGET_S + 1}\nexec ${findTool(t)} "$@"\n`, { mode: 0o755 });
      }
      const s = bundle.objects.services[0]!;
      const ns = s.metadata.namespace!;
      const { capture, ms } = await collect(netns, bundle, ns, s.metadata.name, "node-1", { env: [`PATH=${bin}:${process.env.PATH}`] });
      expect(capture.sections["iptables-save"]!.command).toMatch(
        new RegExp(`^iptables-nft -t TABLE -S CHAIN: the chains of the Service's packets \\(nat KUBE-SERVICES holds \\d+ rules, fewer than ${CHAIN_WALK_FROM}, but iptables-nft-save did not succeed within ${SAVE_BUDGET_S} s\\)$`),
      );
      // the time it spent on the save counts in the section's time
      expect(capture.sections["iptables-save"]!.durationMs).toBeGreaterThanOrEqual(SAVE_BUDGET_S * 1000);
      expect(ms).toBeLessThan((SAVE_BUDGET_S + 1) * 2000);
      const sections = { ...capture.sections, "proxy-mode": { stdout: "iptables", exitCode: 0 } };
      const targeted = withCapture(bundle, { ...capture, sections });
      const { "collection-scope": _scope, ...rest } = sections;
      const ref = withCapture(bundle, { ...capture, sections: { ...rest, "iptables-save": { stdout: whole, exitCode: 0 } } });
      expect(reportJson(targeted, ns, s.metadata.name)).toEqual(reportJson(ref, ns, s.metadata.name));
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  }, 120_000);

  it("nftables mode: the kube-proxy tables only (nftables-lab, every Service), iptables skipped with the reason", async () => {
    const lab = readBundle("examples/nftables-lab");
    const node = lab.nodes.find((n) => n.sections["nft-json"])!;
    const netns = await createNetns("tgtnft");
    spaces.push(netns);
    const file = join(tmpdir(), `knp-tgt-${process.pid}.json`);
    // `nft -j -f` takes objects in order: the lab's dump lists the verdict maps (whose elements `goto` service
    // chains) before the chains, so load tables, then chains, then sets and maps, then rules.
    const order: Record<string, number> = { metainfo: 0, table: 1, chain: 2, set: 3, map: 3, element: 4, rule: 5 };
    const doc = JSON.parse(node.sections["nft-json"]!.stdout) as { nftables: Record<string, unknown>[] };
    doc.nftables.sort((a, b) => (order[Object.keys(a)[0]!] ?? 9) - (order[Object.keys(b)[0]!] ?? 9));
    writeFileSync(file, JSON.stringify(doc));
    const load = await netns.exec(["nft", "-j", "-f", file]);
    expect(load.code, load.stderr).toBe(0);
    for (const s of lab.objects.services) {
      const ns = s.metadata.namespace ?? "default";
      const { capture } = await collect(netns, lab, ns, s.metadata.name, node.name);
      const scope = capture.sections["collection-scope"]!.stdout;
      expect(scope).toContain("mode=nftables\nmode-source=table ip kube-proxy exists");
      expect(scope).toContain("skipped=iptables-save: kube-proxy runs in nftables mode");
      expect(capture.sections["iptables-save"]).toBeUndefined();
      const whole = (await netns.run(["nft", "-j", "list", "ruleset"]));
      const sections = { ...node.sections, ...capture.sections, "proxy-mode": node.sections["proxy-mode"]! };
      const targeted = withCapture(lab, { ...capture, sections });
      const { "collection-scope": _scope, ...rest } = sections;
      const ref = withCapture(lab, { ...capture, sections: { ...rest, "nft-json": { stdout: whole, exitCode: 0 } } });
      expect(reportJson(targeted, ns, s.metadata.name), `${ns}/${s.metadata.name}`).toEqual(reportJson(ref, ns, s.metadata.name));
    }
  }, 120_000);

  const BIG = "bench/out/iptables-10000";
  for (const backend of ["nft", "legacy"] as IptablesBackend[]) {
    it.runIf(existsSync(join(BIG, "capture.yaml")))(`the 10,000-Service node, ${backend} backend: 5 Services, each a few kB, same report`, async () => {
      const bundle = readBundle(BIG, { maxBytes: 2 ** 32 });
      const node = bundle.nodes[0]!;
      const text = node.sections["iptables-save"]!.stdout;
      const netns = await createNetns("tgtbig");
      spaces.push(netns);
      await loadIptables(netns, text, { backend, family: 4, noflush: false });
      await loadIptables(netns, "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n", { backend, family: 4 });
      const picks = bundle.objects.services.filter((_, i) => i % 2000 === 1000);
      expect(picks.length).toBe(5);
      for (const s of picks) {
        const ns = s.metadata.namespace!;
        const { capture, ms, bytes } = await collect(netns, bundle, ns, s.metadata.name, node.name);
        expect(bytes).toBeLessThan(64 * 1024); // the table is 26 MB
        expect(capture.sections["iptables-save"]!.stdout).toContain(`"${ns}/${s.metadata.name}:`);
        expect(capture.sections["iptables-save"]!.command).toMatch(
          backend === "nft" ? /^iptables-nft -t TABLE -S CHAIN: .* \(nat KUBE-SERVICES holds 1\d{4} rules, at least 500: a listing per chain costs less than a save\)$/ : /^iptables-legacy-save \| awk: /,
        );
        const sections = { ...node.sections, ...capture.sections };
        const targeted = withCapture(bundle, { ...capture, sections });
        const { "collection-scope": _scope, ...rest } = sections;
        const ref = withCapture(bundle, { ...capture, sections: { ...rest, "iptables-save": node.sections["iptables-save"]! } });
        expect(reportJson(targeted, ns, s.metadata.name), `${ns}/${s.metadata.name}`).toEqual(reportJson(ref, ns, s.metadata.name));
        console.log(`[targeted] 10k ${backend}: ${ns}/${s.metadata.name} ${Math.round(ms)} ms, ${bytes} bytes`);
      }
      // kube-proxy's image (dash and grep, no awk): on the nft backend the same chain walk, each listing filtered with
      // sh builtins; on the legacy backend the save walked with grep
      for (const s of picks.slice(0, 2)) {
        const ns = s.metadata.namespace!;
        const { capture, ms, bytes } = await collect(netns, bundle, ns, s.metadata.name, node.name, { env: [`PATH=${kpImage!.dir}`] });
        const cmd = capture.sections["iptables-save"]!.command;
        expect(bytes).toBeLessThan(64 * 1024);
        expect(cmd).toMatch(backend === "nft"
          ? /^iptables-nft -t TABLE -S CHAIN: .* \(nat KUBE-SERVICES holds 1\d{4} rules, at least 500: a listing per chain costs less than a save\)$/
          : /^iptables-legacy-save \| grep: the chains of the Service's packets \(no awk in this image\)$/);
        const sections = { ...node.sections, ...capture.sections };
        const targeted = withCapture(bundle, { ...capture, sections });
        const { "collection-scope": _scope, ...rest } = sections;
        const ref = withCapture(bundle, { ...capture, sections: { ...rest, "iptables-save": node.sections["iptables-save"]! } });
        expect(reportJson(targeted, ns, s.metadata.name), `${ns}/${s.metadata.name} (kube-proxy image)`).toEqual(reportJson(ref, ns, s.metadata.name));
        console.log(`[targeted] 10k ${backend}, kube-proxy image (no awk): ${ns}/${s.metadata.name} ${Math.round(ms)} ms, ${bytes} bytes`);
      }
    }, 300_000);
  }
});
