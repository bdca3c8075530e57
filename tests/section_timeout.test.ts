// Issue 12, point 3: a time limit per section of the node collection, reported per section. The wire format (`ms=`,
// `timeout=N` on a section's end marker) and its parser; the script's `timeout:N` argument; and the real script on a
// real slow section: a 4,000-Service node on the iptables nft backend, where `iptables-nft-save` takes seconds of
// CPU (~5 s on this machine class), collected whole with a 1 s limit per section — that section is stopped on the
// node and marked, the sections after it still run and say what they cost, and the CLI says which flag decides it.
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planCluster } from "../bench/cluster_plan.ts";
import { iptablesSave } from "../bench/gen_iptables.ts";
import { objectFiles } from "../bench/gen_objects.ts";
import { type Bundle, emptyBundle } from "../src/bundle/bundle.ts";
import { parseCollectionOutput } from "../src/bundle/collection_output.ts";
import { bundleFromFiles, decodeBundle } from "../src/bundle/decode.ts";
import { nodeTargetKeys, serviceTargetKeys } from "../src/kube/target_keys.ts";
import { nodeCommand, targetedCommand, TARGETED_SCRIPT } from "../src/kube/targeted_script.ts";
import { explainService } from "../src/service/explain.ts";
import { readIptables } from "../src/service/iptables/datapath.ts";
import type { ServiceReport } from "../src/service/report.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { type FakeNode, startFakeNode } from "./helpers/fake_nodes.ts";
import { run } from "./helpers/live_cli.ts";
import { findTool, loadIptables, requireNetns } from "./helpers/netns.ts";

const M = "### kubectl-netpath:";

describe("section times and limits on the wire", () => {
  const out = [
    `${M}collect version=1`,
    `${M}begin iptables-save cmd=iptables-nft-save`,
    "*nat",
    ":KUBE-SERVICES - [0:0]",
    "",
    `${M}end iptables-save exit=124 ms=1010 timeout=1`,
    `${M}begin ip-addr cmd=ip -o addr show`,
    "1: lo    inet 127.0.0.1/8 scope host lo",
    "",
    `${M}end ip-addr exit=0 ms=20`,
    `${M}begin sysctls cmd=read`,
    "",
    `${M}end sysctls exit=0`,
    `${M}done`,
    "",
  ].join("\n");

  it("ms= becomes durationMs; timeout=N marks the section timed out and truncated, and the run still complete", () => {
    const r = parseCollectionOutput(out, "", []);
    expect(r.complete).toBe(true);
    expect(r.sections["iptables-save"]).toMatchObject({ exitCode: 124, durationMs: 1010, timedOutAfterSeconds: 1, truncated: true });
    expect(r.sections["ip-addr"]).toMatchObject({ exitCode: 0, durationMs: 20 });
    expect(r.sections["ip-addr"]!.truncated).toBeUndefined();
    expect(r.sections.sysctls!.durationMs).toBeUndefined(); // an end marker without ms= (an older script)
    expect(r.timedOut).toEqual(["iptables-save"]);
    expect(r.truncated).toEqual(["iptables-save"]);
  });

  it("a malformed tail on the end marker is a cut section, not a number read loosely", () => {
    const r = parseCollectionOutput(out.replace("exit=0 ms=20", "exit=0 ms=2x"), "", []);
    expect(r.sections["ip-addr"]).toMatchObject({ truncated: true, exitCode: null });
  });

  it("the analysis says the section timed out and which flag decides it, not that the stream was cut", () => {
    const r = parseCollectionOutput(out, "", []);
    const reading = readIptables({ name: "n", sections: r.sections }, 4);
    expect(reading.dump).toBeUndefined();
    expect(reading.problems).toEqual([
      "the iptables-save output timed out on the node after 1 s (--section-timeout; raise it, and --timeout, for this node); not analysed",
    ]);
  });

  it("bundles keep the figures, and refuse a timed-out section that claims to be whole", () => {
    const node = { name: "n", sections: { "iptables-save": { stdout: "x", exitCode: 124, durationMs: 1010, timedOutAfterSeconds: 1, truncated: true } } };
    const b = decodeBundle(JSON.stringify({ format: "kubectl-netpath/bundle", version: 1, nodes: [node] }), "b.json");
    expect(b.nodes[0]!.sections["iptables-save"]).toMatchObject({ durationMs: 1010, timedOutAfterSeconds: 1 });
    const whole = { ...node, sections: { "iptables-save": { stdout: "x", exitCode: 124, timedOutAfterSeconds: 1 } } };
    expect(() => decodeBundle(JSON.stringify({ format: "kubectl-netpath/bundle", version: 1, nodes: [whole] }), "b.json")).toThrow(/timedOutAfterSeconds but not truncated/);
    const bad = { ...node, sections: { "iptables-save": { stdout: "x", durationMs: "1s" } } };
    expect(() => decodeBundle(JSON.stringify({ format: "kubectl-netpath/bundle", version: 1, nodes: [bad] }), "b.json")).toThrow(/durationMs is .*want a number/);
  });

  it("the script's argument: whole seconds, rounded up; none for 0", () => {
    expect(targetedCommand({ addresses: ["10.96.0.10"], ports: [53] }, 1500).command).toEqual(["sh", "-s", "timeout:2", "ip:10.96.0.10", "port:53"]);
    expect(targetedCommand({ addresses: ["10.96.0.10"], ports: [] }, 0).command).toEqual(["sh", "-s", "ip:10.96.0.10"]);
    expect(nodeCommand(45_000).command.slice(-2)).toEqual(["scope:node", "timeout:45"]);
    expect(nodeCommand().command.at(-1)).toBe("scope:node");
  });
});

describe.runIf(requireNetns(["nc", "curl", "timeout"]))("a slow section on a real node: 4,000 Services, nft backend", () => {
  const plan = planCluster({ services: 4000 });
  const dump = iptablesSave(plan);
  const files = objectFiles(plan);
  const objects: Bundle["objects"] = bundleFromFiles(Object.entries(files).map(([path, text]) => ({ path, text })), "plan").objects;
  const svc = plan.services[2000]!;
  let node: FakeNode;
  let api: FakeApiServer;

  beforeAll(async () => {
    node = await startFakeNode("node-1", { proxyMode: "iptables" });
    await loadIptables(node.netns, dump, { backend: "nft", family: 4, noflush: false });
    await loadIptables(node.netns, "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n", { backend: "nft", family: 4 });
    api = await startFakeApiServer({ objects, exec: { netnsFor: (n) => (n === "node-1" ? node.netns.name : undefined) } });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await node?.stop();
  });

  it("the whole-node script with timeout:1 stops iptables-nft-save on the node; the sections after it run and report their time", async () => {
    const r = await node.netns.exec(["sh", "-c", 'sh -s "$@"', "sh", "scope:node", "timeout:1"], { input: TARGETED_SCRIPT, timeoutMs: 120_000 });
    const c = parseCollectionOutput(r.stdout, r.stderr, []);
    expect(c.complete, r.stderr.slice(-400)).toBe(true);
    const save = c.sections["iptables-save"]!;
    expect(save).toMatchObject({ command: "iptables-nft-save", timedOutAfterSeconds: 1, truncated: true });
    expect(save.exitCode).not.toBe(0);
    expect(save.durationMs).toBeGreaterThanOrEqual(1000);
    // stopped part-way: far less than the whole dump came out
    expect(save.stdout.length).toBeLessThan(dump.length * 0.9);
    expect(c.timedOut).toEqual(["iptables-save"]);
    for (const s of ["ip6tables-save", "ip-addr", "ip-route-local", "sysctls", "proxy-mode", "iptables-backend"] as const) {
      expect(c.sections[s], s).toBeDefined();
      expect(c.sections[s]!.truncated, s).toBeUndefined();
      expect(c.sections[s]!.durationMs, s).toBeGreaterThanOrEqual(0);
    }
  }, 120_000);

  it("an image without timeout(1): the collection says the limit is not enforced there, and so does the report", async () => {
    const bin = mkdtempSync(join(tmpdir(), "knp-bin-"));
    try {
      const tools = ["sh", "awk", "sed", "tr", "grep", "cat", "printf", "basename", "dirname", "readlink", "ip", "curl", "nft",
        "iptables-nft", "ip6tables-nft", "iptables-nft-save", "ip6tables-nft-save"];
      for (const t of tools) {
        const p = findTool(t);
        if (p) symlinkSync(p, join(bin, t));
      }
      const nodeObj = objects.nodes.find((n) => n.metadata.name === "node-1")!;
      const { command, stdin } = targetedCommand(nodeTargetKeys(serviceTargetKeys(objects, svc.namespace, svc.name), nodeObj), 5000);
      const r = await node.netns.exec(["env", "-i", `PATH=${bin}`, ...command], { input: stdin, timeoutMs: 60_000 });
      const c = parseCollectionOutput(r.stdout, r.stderr, []);
      expect(c.complete, r.stderr.slice(-400)).toBe(true);
      expect(c.sections["collection-scope"]!.stdout).toContain("section-timeout=5 (no timeout command in this image: a single command that hangs is stopped by the node's --timeout only)");
      const bundle: Bundle = { ...emptyBundle(), objects, nodes: [{ name: "node-1", sections: c.sections }] };
      const rep = explainService(bundle, svc.namespace, svc.name);
      expect(rep.nodes[0]!.notes).toContain("--section-timeout 5s was not enforced on this node: no timeout command in this image: a single command that hangs is stopped by the node's --timeout only");
      // with timeout(1) on PATH the limit is in force and the scope says only that
      const withTimeout = await node.netns.exec(command, { input: stdin, timeoutMs: 60_000 });
      expect(parseCollectionOutput(withTimeout.stdout, withTimeout.stderr, []).sections["collection-scope"]!.stdout).toMatch(/^section-timeout=5$/m);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  }, 120_000);

  it("CLI, --whole-node --section-timeout 1s: the node's error names the section and the flag; nothing is analysed as whole", async () => {
    const out = await run(["svc/" + svc.name, "-n", svc.namespace, "--kubeconfig", api.kubeconfig, "--node", "node-1", "--whole-node", "--section-timeout", "1s", "-o", "json"]);
    const rep = JSON.parse(out.stdout) as ServiceReport;
    const n = rep.nodes.find((x) => x.node === "node-1")!;
    expect(n.error).toMatch(/^in kube-proxy pod kube-proxy-node-1, section iptables-save \(stopped after 1 s\) reached the per-section limit on the node \(--section-timeout\); it is marked truncated and not analysed as complete; run again with a larger --section-timeout \(and --timeout\)$/);
    expect(n.ports).toEqual([]);
    expect(n.collection!.find((s) => s.section === "iptables-save")).toMatchObject({ timedOutAfterSeconds: 1 });
  }, 120_000);

  it("CLI, the Service's question at the default limits: targeted, complete, each section's time in the report", async () => {
    const out = await run(["svc/" + svc.name, "-n", svc.namespace, "--kubeconfig", api.kubeconfig, "--node", "node-1", "-o", "json"]);
    expect(out.code, out.stderr).toBe(0);
    const n = (JSON.parse(out.stdout) as ServiceReport).nodes.find((x) => x.node === "node-1")!;
    expect(n.error).toBeUndefined();
    const names = n.collection!.map((s) => s.section);
    expect(names).toEqual(["proxy-mode", "collection-scope", "iptables-backend", "iptables-save", "ip-addr", "ip-route-local", "sysctls"]);
    for (const s of n.collection!) {
      expect(s.timedOutAfterSeconds, s.section).toBeUndefined();
      expect(s.ms, s.section).toBeGreaterThanOrEqual(0);
    }
    expect(n.collection!.find((s) => s.section === "iptables-save")!.bytes).toBeGreaterThan(0);
  }, 120_000);
});
