// A listing killed on the node (exit 137: SIGKILL, in a pod the out-of-memory killer at the container's memory limit)
// is a failed section, never a cut listing analysed as whole:
// - the collection script: `nft list table ip kube-proxy` killed while the ip6 table lists fine used to leave the
//   section at exit 0 with the ip table cut; now the section ends 137, says which listing was killed, and counts map
//   service-ips so the next debug pod can be sized (real nft in a network namespace, an nft that kills itself
//   part-way through the ip table's listing);
// - a chain listing that fails otherwise than "no such chain" (exit 1) ends the section too (real iptables-nft); so
//   does an `ipset list -n` that fails (IPVS mode: it used to leave the section at exit 0 with no set; real ipset),
//   and an awk killed while it picks the Service's rules out of a save (its status, not the save's);
// - the analysis: a failed section (non-zero exit) is a problem line even with output (real dumps, whole or cut);
// - the sizing of a second debug pod (debug_pod.ts retryMemoryMiB) and the parse of what a run says (killedSections).
// The end-to-end retry through the fake API server, with pods held to their memory limits by cgroups, is in
// tests/live_whole_node_size.test.ts.
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planCluster } from "../bench/cluster_plan.ts";
import { iptablesSave } from "../bench/gen_iptables.ts";
import { nftRulesetText } from "../bench/gen_nftables.ts";
import type { CommandOutput, NodeCapture } from "../src/bundle/bundle.ts";
import { parseCollectionOutput } from "../src/bundle/collection_output.ts";
import { killedSections } from "../src/kube/collect_node.ts";
import { DEBUG_RESOURCES, DEFAULT_DEBUG_MEMORY_MIB, MAX_DEBUG_MEMORY_MIB, nftListingMemoryMiB, retryMemoryMiB } from "../src/kube/debug_pod.ts";
import { targetedCommand, TARGETED_SCRIPT } from "../src/kube/targeted_script.ts";
import { readIptables } from "../src/service/iptables/datapath.ts";
import { nftDatapath } from "../src/service/nftables/datapath.ts";
import { type FakeNode, startFakeNode } from "./helpers/fake_nodes.ts";
import { findTool, loadIptables, requireNetns } from "./helpers/netns.ts";

/** A real kube-proxy dump kept in the repository (tests/fixtures, from ../shared/fixtures/real-dumps with provenance). */
function realDump(path: string): string {
  return readFileSync(join("tests/fixtures", path), "utf8");
}

const KILLED_STDERR = "nft list table ip kube-proxy: killed by signal 9\nmap service-ips lists about 12000 elements";

/** An image's userland: a new directory of links to the host's `tools` (a test writes its shims next to them). */
function userland(tools: string[]): string {
  const bin = mkdtempSync(join(tmpdir(), "knp-killed-bin-"));
  for (const t of tools) {
    const p = findTool(t);
    if (p) symlinkSync(p, join(bin, t));
  }
  return bin;
}

/** A network namespace playing a node of `plan` on the iptables nft backend, kubelet's hint chain included. */
async function iptablesNftNode(plan: ReturnType<typeof planCluster>): Promise<FakeNode> {
  const node = await startFakeNode("node-1", { proxyMode: "iptables" });
  await loadIptables(node.netns, iptablesSave(plan), { backend: "nft", family: 4, noflush: false });
  await loadIptables(node.netns, "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n", { backend: "nft", family: 4 });
  return node;
}

describe("the memory of a second debug pod", () => {
  it("is twice the limit the first was killed at, or what nft's listing of the counted elements needs when more", () => {
    expect(retryMemoryMiB(512)).toBe(1024);
    expect(retryMemoryMiB(512, 3205)).toBe(1024); // 64 + 163 MiB: the doubling asks for more
    expect(retryMemoryMiB(512, 30_000)).toBe(nftListingMemoryMiB(30_000));
    expect(nftListingMemoryMiB(30_000)).toBe(64 + Math.ceil((30_000 * 52) / 1024));
    expect(retryMemoryMiB(674, 12_000)).toBe(1348);
  });

  it(`is not asked beyond ${MAX_DEBUG_MEMORY_MIB}Mi`, () => {
    expect(retryMemoryMiB(MAX_DEBUG_MEMORY_MIB / 2)).toBe(MAX_DEBUG_MEMORY_MIB);
    expect(retryMemoryMiB(MAX_DEBUG_MEMORY_MIB / 2 + 1)).toBeUndefined();
    expect(retryMemoryMiB(512, 200_000)).toBeUndefined();
  });

  it("starts from the limit the debug pod is created with", () => {
    expect(DEBUG_RESOURCES.limits!.memory).toBe(`${DEFAULT_DEBUG_MEMORY_MIB}Mi`);
  });
});

describe("what a run says was killed", () => {
  const out = (exitCode: number, stderr = ""): CommandOutput => ({ command: "x", stdout: "partial", stderr, exitCode });

  it("the sections that ended 137, and the element count printed after a killed nft listing", () => {
    expect(killedSections({ "nft-text": out(137, KILLED_STDERR), "ip-addr": out(0), sysctls: out(1) })).toEqual({ sections: ["nft-text"], elements: 12000 });
    expect(killedSections({ "iptables-save": out(137, "iptables-nft-save: killed") })).toEqual({ sections: ["iptables-save"] });
  });

  it("nothing when nothing was killed; a count in a section that was not killed is not one", () => {
    expect(killedSections({ "nft-text": out(0, "map service-ips lists about 9 elements"), "iptables-save": out(124) })).toEqual({ sections: [] });
  });
});

describe("a failed section is a problem, not a listing analysed as whole (real dumps)", () => {
  const capture = (sections: NodeCapture["sections"]): NodeCapture => ({ name: "n1", sections });

  it("iptables-save: exit 137 with half a dump", () => {
    const dump = realDump("kube-proxy/TestClusterIPReject.v1.27.iptables-save");
    const half = dump.slice(0, Math.floor(dump.length / 2));
    const r = readIptables(capture({ "iptables-save": { command: "iptables-nft-save", stdout: half, stderr: "line one\nline two", exitCode: 137 } }), 4);
    expect(r.dump).toBeUndefined();
    expect(r.problems).toContain("iptables-save failed (exit 137: killed (SIGKILL), most often by the out-of-memory killer at the memory limit of the container it ran in): line one; line two");
  });

  it("iptables-save: any other non-zero exit with a whole dump (a chain listing that failed left its chain out)", () => {
    const dump = realDump("kube-proxy/TestClusterIPReject.v1.27.iptables-save");
    const r = readIptables(capture({ "iptables-save": { command: "iptables-nft -t TABLE -S CHAIN", stdout: dump, stderr: "iptables-nft -t nat -S KUBE-SVC-X: exit 4", exitCode: 4 } }), 4);
    expect(r.dump).toBeUndefined();
    expect(r.problems).toEqual(["iptables-save failed (exit 4): iptables-nft -t nat -S KUBE-SVC-X: exit 4"]);
    // the same dump at exit 0, and from a file (no exit status), is read
    expect(readIptables(capture({ "iptables-save": { command: "iptables-nft-save", stdout: dump, stderr: "", exitCode: 0 } }), 4).dump).toBeDefined();
    expect(readIptables(capture({ "iptables-save": { stdout: dump } }), 4).dump).toBeDefined();
  });

  it("nft-text: exit 137 with the first lines of a real listing", () => {
    const text = realDump("nftables/TestOverallNFTablesRules.nft.txt");
    const part = text.split("\n").slice(0, 40).join("\n");
    const r = nftDatapath(capture({ "nft-text": { command: "nft list table ip kube-proxy; nft list table ip6 kube-proxy", stdout: part, stderr: KILLED_STDERR, exitCode: 137 } }), 4);
    expect(r.trace).toBeUndefined();
    expect(r.problems).toEqual([
      "nft list table ip kube-proxy; nft list table ip6 kube-proxy failed (exit 137: killed (SIGKILL), most often by the out-of-memory killer at the memory limit of the container it ran in): nft list table ip kube-proxy: killed by signal 9; map service-ips lists about 12000 elements",
    ]);
    // the same listing whole, exit 0, is read
    const whole = nftDatapath(capture({ "nft-text": { command: "nft list table ip kube-proxy", stdout: text, stderr: "", exitCode: 0 } }), 4);
    expect(whole.trace).toBeDefined();
  });
});

describe.runIf(requireNetns(["nft", "curl"]))("the collection script on a real nftables node whose ip table's listing is killed", () => {
  const plan = planCluster({ services: 50 });
  let node: FakeNode;
  let bin = "";

  beforeAll(async () => {
    node = await startFakeNode("node-1", { proxyMode: "nftables" });
    const file = join(tmpdir(), `knp-killed-${process.pid}.nft`);
    writeFileSync(file, nftRulesetText(plan) + "table ip6 kube-proxy {\n}\n");
    try {
      const load = await node.netns.exec(["nft", "-f", file]);
      expect(load.code, load.stderr).toBe(0);
    } finally {
      rmSync(file, { force: true });
    }
    // an image whose nft prints part of the ip table's listing and is then killed (SIGKILL), as the out-of-memory
    // killer does at a pod's memory limit; every other nft command is the real one
    bin = userland(["sh", "awk", "grep", "cat", "wc", "head", "curl", "ip", "timeout", "gzip"]);
    writeFileSync(
      join(bin, "nft"),
      `#!${findTool("sh")}\nif [ "$*" = "list table ip kube-proxy" ]; then ${findTool("nft")} "$@" | ${findTool("head")} -c 3000; kill -9 $$; fi\nexec ${findTool("nft")} "$@"\n`,
      { mode: 0o755 },
    );
  }, 60_000);
  afterAll(async () => {
    await node?.stop();
    if (bin) rmSync(bin, { recursive: true, force: true });
  });

  it("the nft-text section ends 137, names the killed listing and counts map service-ips; the analysis reads nothing from it", async () => {
    const r = await node.netns.exec(["env", "-i", `PATH=${bin}`, "sh", "-c", 'sh -s "$@"', "sh", "scope:node"], { input: TARGETED_SCRIPT, timeoutMs: 60_000 });
    const c = parseCollectionOutput(r.stdout, r.stderr, []);
    expect(c.complete, r.stderr.slice(-400)).toBe(true);
    const s = c.sections["nft-text"]!;
    expect(s.exitCode).toBe(137);
    expect(s.stdout).toContain("table ip kube-proxy {"); // the part printed before the kill
    const elements = Number(/map service-ips lists about (\d+) elements/.exec(s.stderr ?? "")?.[1]);
    const real = await node.netns.run(["nft", "list", "map", "ip", "kube-proxy", "service-ips"]);
    expect(elements).toBe(real.trimEnd().split("\n").length);
    expect(s.stderr).toContain("nft list table ip kube-proxy: killed by signal 9");
    expect(killedSections(c.sections)).toEqual({ sections: ["nft-text"], elements });
    const dp = nftDatapath({ name: "node-1", sections: c.sections }, 4);
    expect(dp.trace).toBeUndefined();
    expect(dp.problems[0]).toMatch(/failed \(exit 137: killed \(SIGKILL\)/);
  }, 60_000);

  it("with the real nft the same script lists both tables whole (exit 0)", async () => {
    const r = await node.netns.exec(["sh", "-c", 'sh -s "$@"', "sh", "scope:node"], { input: TARGETED_SCRIPT, timeoutMs: 60_000 });
    const c = parseCollectionOutput(r.stdout, r.stderr, []);
    expect(c.sections["nft-text"]!.exitCode).toBe(0);
    expect(nftDatapath({ name: "node-1", sections: c.sections }, 4).trace).toBeDefined();
  }, 60_000);
});

describe.runIf(requireNetns(["iptables-nft", "iptables-nft-save", "awk"]))("the collection script on a node of the iptables nft backend whose listing tools fail", () => {
  const plan = planCluster({ services: 50 });
  const svc = plan.services[7]!;
  let node: FakeNode;
  let bin = "";
  /** The image's userland for the next run: the common tools, plus `extra` (name → host path); shims are added after. */
  const image = (extra: Record<string, string>) => {
    for (const t of ["iptables-nft", "awk"]) rmSync(join(bin, t), { force: true });
    for (const [name, path] of Object.entries(extra)) symlinkSync(path, join(bin, name));
  };

  beforeAll(async () => {
    node = await iptablesNftNode(plan);
    bin = userland(["sh", "grep", "cat", "wc", "curl", "ip", "timeout", "ip6tables-nft", "iptables-nft-save", "ip6tables-nft-save"]);
  }, 60_000);
  afterAll(async () => {
    await node?.stop();
    if (bin) rmSync(bin, { recursive: true, force: true });
  });

  for (const c of [
    { fails: "is killed (SIGKILL)", action: "kill -9 $$", exit: 137, says: "killed by signal 9" },
    { fails: "fails with exit 4 (a resource problem)", action: "exit 4", exit: 4, says: "exit 4" },
  ]) {
    it(`a chain listing that ${c.fails}: the iptables-save section ends ${c.exit} and names it (it used to skip that chain and end 0)`, async () => {
      // an image whose iptables-nft fails so listing the Service's KUBE-SVC- chain; all else is the real one
      image({ awk: findTool("awk")! });
      writeFileSync(join(bin, "iptables-nft"), `#!${findTool("sh")}\ncase "$*" in *"-S KUBE-SVC-"*) ${c.action} ;; esac\nexec ${findTool("iptables-nft")} "$@"\n`, { mode: 0o755 });
      const keys = { addresses: [svc.clusterIP], ports: [] as number[] };
      const { command, stdin } = targetedCommand(keys, undefined, { chainWalkFrom: 0 });
      const r = await node.netns.exec(["env", "-i", `PATH=${bin}`, ...command], { input: stdin, timeoutMs: 60_000 });
      const col = parseCollectionOutput(r.stdout, r.stderr, []);
      expect(col.complete, r.stderr.slice(-400)).toBe(true);
      const s = col.sections["iptables-save"]!;
      expect(s.exitCode).toBe(c.exit);
      expect(s.stderr).toMatch(new RegExp(`^iptables-nft -t nat -S KUBE-SVC-[A-Z0-9]{16}: ${c.says}$`, "m"));
      const read = readIptables({ name: "node-1", sections: col.sections }, 4);
      expect(read.dump).toBeUndefined();
      expect(read.problems[0]).toMatch(new RegExp(`^iptables-save failed \\(exit ${c.exit}`));
      // with the real iptables-nft the same listing is whole
      const whole = await node.netns.exec(command, { input: stdin, timeoutMs: 60_000 });
      expect(parseCollectionOutput(whole.stdout, whole.stderr, []).sections["iptables-save"]!.exitCode).toBe(0);
    }, 60_000);
  }

  // with iptables-nft the save is read first (under a time budget), then piped to awk; without, piped as it runs
  for (const piped of [false, true]) {
    it(`${piped ? "no iptables-nft in the image, the save piped to awk" : "the save read first"}: the iptables-save section ends with awk's status 137${piped ? " and names awk (it used to end with the save's SIGPIPE, 141, or 0 when the save had finished)" : ""}`, async () => {
      // an awk killed (SIGKILL) as it filters a save; awk is otherwise the real one
      image(piped ? {} : { "iptables-nft": findTool("iptables-nft")! });
      writeFileSync(join(bin, "awk"), `#!${findTool("sh")}\n[ "$NP_MODE" = save ] && kill -9 $$\nexec ${findTool("awk")} "$@"\n`, { mode: 0o755 });
      const { command, stdin } = targetedCommand({ addresses: [svc.clusterIP], ports: [] });
      const r = await node.netns.exec(["env", "-i", `PATH=${bin}`, ...command], { input: stdin, timeoutMs: 60_000 });
      const c = parseCollectionOutput(r.stdout, r.stderr, []);
      expect(c.complete, r.stderr.slice(-400)).toBe(true);
      const s = c.sections["iptables-save"]!;
      expect(s.command).toMatch(/^iptables-nft-save \| awk/);
      expect(s.exitCode).toBe(137);
      if (piped) expect(s.stderr).toMatch(/^awk \(the Service's rules from iptables-nft-save\): exit 137$/m);
      expect(readIptables({ name: "node-1", sections: c.sections }, 4).dump).toBeUndefined();
      // with the real awk: exit 0, and the Service's chain selected
      const whole = await node.netns.exec(command, { input: stdin, timeoutMs: 60_000 });
      const ok = parseCollectionOutput(whole.stdout, whole.stderr, []).sections["iptables-save"]!;
      expect(ok.exitCode).toBe(0);
      expect(ok.stdout).toContain(`-A KUBE-SERVICES -d ${svc.clusterIP}/32`);
    }, 60_000);
  }
});

describe.runIf(requireNetns(["ipset", "curl"]))("the collection script on an IPVS node whose `ipset list -n` fails", () => {
  let node: FakeNode;
  let bin = "";

  beforeAll(async () => {
    node = await startFakeNode("node-1", { proxyMode: "ipvs", ipsets: "create KUBE-CLUSTER-IP hash:ip,port family inet\nadd KUBE-CLUSTER-IP 10.96.0.10,udp:53\ncreate KUBE-LOOP-BACK hash:ip,port,ip family inet\n" });
    bin = userland(["sh", "awk", "grep", "cat", "curl", "ip", "timeout", "iptables-nft", "ip6tables-nft", "iptables-nft-save", "ip6tables-nft-save"]);
  }, 60_000);
  afterAll(async () => {
    await node?.stop();
    if (bin) rmSync(bin, { recursive: true, force: true });
  });

  it("killed listing the set names: the ipset section ends 137 and says so (it used to list no set and end 0)", async () => {
    writeFileSync(join(bin, "ipset"), `#!${findTool("sh")}\n[ "$*" = "list -n" ] && kill -9 $$\nexec ${findTool("ipset")} "$@"\n`, { mode: 0o755 });
    const r = await node.netns.exec(["env", "-i", `PATH=${bin}`, "sh", "-c", 'sh -s "$@"', "sh", "scope:node"], { input: TARGETED_SCRIPT, timeoutMs: 60_000 });
    const c = parseCollectionOutput(r.stdout, r.stderr, []);
    expect(c.complete, r.stderr.slice(-400)).toBe(true);
    expect(c.sections.ipset).toMatchObject({ exitCode: 137 });
    expect(c.sections.ipset!.stderr).toContain("ipset list -n: exit 137");
    // the real ipset: both KUBE-* sets, exit 0
    writeFileSync(join(bin, "ipset"), `#!${findTool("sh")}\nexec ${findTool("ipset")} "$@"\n`, { mode: 0o755 });
    const whole = await node.netns.exec(["env", "-i", `PATH=${bin}`, "sh", "-c", 'sh -s "$@"', "sh", "scope:node"], { input: TARGETED_SCRIPT, timeoutMs: 60_000 });
    const ok = parseCollectionOutput(whole.stdout, whole.stderr, []);
    expect(ok.sections.ipset).toMatchObject({ exitCode: 0 });
    expect(ok.sections.ipset!.stdout).toContain("Name: KUBE-CLUSTER-IP");
    expect(ok.sections.ipset!.stdout).toContain("Name: KUBE-LOOP-BACK");
  }, 60_000);
});
