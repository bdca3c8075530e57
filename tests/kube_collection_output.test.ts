// The collection script's wire format: a pure parser, tested on hand-written outputs (every way a stream can end),
// and the real script, run in network namespaces holding real iptables state (nft and legacy backends, a node with
// kube-proxy's /proxyMode server, an image without iptables-legacy, an image without curl).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COLLECTED_SECTIONS, parseCollectionOutput } from "../src/bundle/collection_output.ts";
import { TARGETED_SCRIPT } from "../src/kube/targeted_script.ts";
import { parseIptablesSave } from "../src/datapath/iptables_save.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { findTool, requireNetns } from "./helpers/netns.ts";
import { busyboxUserland, kubeProxyImageUserland } from "./helpers/userlands.ts";
import { type FakeNode, ipsetRestoreFromList, startFakeNode } from "./helpers/fake_nodes.ts";
import { parseIpsetList } from "../src/datapath/ipset.ts";
import { readNodeFacts } from "../src/service/node_facts.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

const M = "### kubectl-netpath:";
const section = (name: string, cmd: string, body: string, exit: number) => `${M}begin ${name} cmd=${cmd}\n${body}\n${M}end ${name} exit=${exit}\n`;
const HEAD = `${M}collect version=1\n`;
const DONE = `${M}done\n`;

describe("parseCollectionOutput", () => {
  it("a complete run: each section's text, command, exit status and its own stderr", () => {
    const out = HEAD + section("iptables-backend", "detect as iptables-wrappers", "nft\n", 0) + section("iptables-save", "iptables-nft-save", "*nat\nCOMMIT\n", 0) +
      section("ipvsadm", "ipvsadm -Ln --exact", "", 2) + section("proxy-mode", "curl -sS -m 5 http://127.0.0.1:10249/proxyMode", "iptables", 0) + DONE;
    const err = HEAD + section("iptables-backend", "detect as iptables-wrappers", "found by iptables-nft-save -t mangle\n", 0) + section("iptables-save", "iptables-nft-save", "", 0) +
      section("ipvsadm", "ipvsadm -Ln --exact", "Can't initialize ipvs: Protocol not available\n", 2) + section("proxy-mode", "curl", "", 0) + DONE;
    const r = parseCollectionOutput(out, err);
    expect(r.complete).toBe(true);
    expect(r.started).toBe(true);
    expect(r.truncated).toEqual([]);
    expect(r.problems).toEqual([]);
    expect(r.sections).toEqual({
      "iptables-backend": { command: "detect as iptables-wrappers", stdout: "nft\n", stderr: "found by iptables-nft-save -t mangle\n", exitCode: 0 },
      "iptables-save": { command: "iptables-nft-save", stdout: "*nat\nCOMMIT\n", stderr: "", exitCode: 0 },
      ipvsadm: { command: "ipvsadm -Ln --exact", stdout: "", stderr: "Can't initialize ipvs: Protocol not available\n", exitCode: 2 },
      "proxy-mode": { command: "curl -sS -m 5 http://127.0.0.1:10249/proxyMode", stdout: "iptables", stderr: "", exitCode: 0 },
    });
  });

  const full = HEAD + section("iptables-backend", "d", "nft\n", 0) + section("iptables-save", "iptables-nft-save", "*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n", 0) +
    section("ip6tables-save", "ip6tables-nft-save", "", 0) + DONE;
  it.each([
    {
      name: "cut inside a section's output",
      input: full.slice(0, full.indexOf(":INPUT") + 4),
      want: { truncated: ["iptables-save", "ip6tables-save", "ipvsadm", "ipset", "nft-text", "proxy-mode"], save: { stdout: "*filter\n:INP", exitCode: null, truncated: true } },
    },
    {
      name: "cut inside the end marker",
      input: full.slice(0, full.indexOf(`${M}end iptables-save`) + 10),
      want: { truncated: ["iptables-save", "ip6tables-save", "ipvsadm", "ipset", "nft-text", "proxy-mode"], save: { stdout: "*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n\n", exitCode: null, truncated: true } },
    },
    {
      name: "cut inside the end marker's exit status",
      input: full.slice(0, full.indexOf("exit=0", full.indexOf(`${M}end iptables-save`)) + 5),
      want: { truncated: ["iptables-save", "ip6tables-save", "ipvsadm", "ipset", "nft-text", "proxy-mode"], save: { stdout: "*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n", exitCode: null, truncated: true } },
    },
    {
      name: "cut between sections",
      input: full.slice(0, full.indexOf(`${M}begin ip6tables-save`)),
      want: { truncated: ["ip6tables-save", "ipvsadm", "ipset", "nft-text", "proxy-mode"], save: { stdout: "*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n", exitCode: 0 } },
    },
    {
      name: "complete but the done marker is missing",
      input: full.slice(0, full.indexOf(`${M}done`)),
      want: { truncated: ["ipvsadm", "ipset", "nft-text", "proxy-mode"], save: { stdout: "*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n", exitCode: 0 } },
    },
  ])("$name", ({ input, want }) => {
    const r = parseCollectionOutput(input, "");
    expect(r.complete).toBe(false);
    expect(r.truncated).toEqual(want.truncated);
    expect(r.sections["iptables-save"]).toMatchObject(want.save);
    for (const t of want.truncated) expect(r.sections[t as keyof typeof r.sections]).toMatchObject({ truncated: true, exitCode: null });
    if (want.save.truncated) {
      // what was cut is never handed to a parser as if complete: the analysis sees `truncated`
      expect(r.sections["iptables-save"]!.truncated).toBe(true);
    }
  });

  it("nothing at all (the exec never ran the script): not started, every section truncated", () => {
    const r = parseCollectionOutput("", 'OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": executable file not found in $PATH: unknown\r\n');
    expect(r.started).toBe(false);
    expect(r.complete).toBe(false);
    expect(r.truncated).toEqual([...COLLECTED_SECTIONS]);
  });

  it("output that looks like a marker but is not at a line start stays data", () => {
    const body = `-A X -m comment --comment "x ${M}end iptables-save exit=0" -j RETURN\n`;
    const r = parseCollectionOutput(HEAD + section("iptables-save", "s", body, 0) + DONE);
    expect(r.sections["iptables-save"]!.stdout).toBe(body);
  });

  it("an output without a final newline keeps its exact bytes", () => {
    const r = parseCollectionOutput(HEAD + section("proxy-mode", "curl", "ipvs", 0) + DONE);
    expect(r.sections["proxy-mode"]!.stdout).toBe("ipvs");
  });

  it.each([
    { name: "unknown section", input: HEAD + section("conntrack", "conntrack -L", "x\n", 0) + DONE, want: ['unknown section "conntrack" in the collection output; ignored'] },
    { name: "version mismatch", input: `${M}collect version=9\n` + DONE, want: ["collection script version 9 (this kubectl-netpath reads version 1)"] },
  ])("problems: $name", ({ input, want }) => {
    expect(parseCollectionOutput(input).problems).toEqual(want);
  });
});

describe("the collection script is a constant", () => {
  it("is POSIX sh", () => {
    const sh = findTool("dash") ?? findTool("sh") ?? "sh";
    expect(spawnSync(sh, ["-n", "-c", TARGETED_SCRIPT]).status).toBe(0);
    expect(spawnSync(sh, ["-n", "-c", `${TARGETED_SCRIPT}\nif then`]).status).not.toBe(0); // the check can fail
  });
});

// The whole-node collection as capture runs it (targeted_script.ts nodeCommand without the gzip wrapper): the script
// on stdin, scope:node.
const NODE_SCOPE = ["sh", "-c", 'sh -s "$@"', "sh", "scope:node"];
const nodeScope = { input: TARGETED_SCRIPT };

describe.runIf(requireNetns(["nc", "curl", "ss", "busybox"]))("the collection script on real iptables state", () => {
  const lab = readBundle("examples/iptables-lab");
  const seed = readFileSync("tests/fixtures/seeds/001-k8s1.iptables-save", "utf8");
  let legacyNode: FakeNode;
  let nftNode: FakeNode;
  beforeAll(async () => {
    legacyNode = await startFakeNode("k8s1", { rules: { text: seed, backend: "legacy" }, proxyMode: "iptables" });
    nftNode = await startFakeNode("k8s2", { rules: { text: kubeProxyRules(lab.objects.services, lab.objects.endpointSlices, "10.244.0.0/16"), backend: "nft" } });
  });
  afterAll(async () => {
    await legacyNode?.stop();
    await nftNode?.stop();
  });

  it("legacy node (seed 001): detected legacy as iptables-wrappers does, iptables-legacy-save, proxyMode from :10249", async () => {
    const r = await legacyNode.netns.exec(NODE_SCOPE, nodeScope);
    expect(r.code).toBe(0);
    const c = parseCollectionOutput(r.stdout, r.stderr);
    expect(c.complete).toBe(true);
    expect(c.sections["iptables-backend"]).toMatchObject({ stdout: "legacy\n", exitCode: 0 });
    expect(c.sections["iptables-backend"]!.stderr).toContain("found by iptables-legacy-save");
    expect(c.sections["iptables-save"]).toMatchObject({ command: "iptables-legacy-save", exitCode: 0 });
    expect(c.sections["proxy-mode"]).toMatchObject({ stdout: "iptables", exitCode: 0 });
    // the kernel's save of the seed, with every KUBE-SVC chain of the seed
    const dump = parseIptablesSave(c.sections["iptables-save"]!.stdout);
    const seedChains = [...parseIptablesSave(seed).tables.get("nat")!.chains.keys()].filter((n) => n.startsWith("KUBE-SVC-")).sort();
    expect([...dump.tables.get("nat")!.chains.keys()].filter((n) => n.startsWith("KUBE-SVC-")).sort()).toEqual(seedChains);
    // mode first (issue 12): in iptables mode the IPVS and nftables state is not listed, and the scope says why
    expect(c.sections.ipset).toBeUndefined();
    expect(c.sections["nft-text"]).toBeUndefined();
    expect(c.sections["collection-scope"]!.stdout).toContain("scope=node\nmode=iptables\nmode-source=/proxyMode\n");
    expect(c.sections["collection-scope"]!.stdout).toContain("skipped=ipset: kube-proxy runs in iptables mode");
  });

  it("nft node: detected nft (kubelet's KUBE-IPTABLES-HINT in mangle), iptables-nft-save, no /proxyMode server → bash's /dev/tcp refused, exit 7", async () => {
    const r = await nftNode.netns.exec(NODE_SCOPE, nodeScope);
    const c = parseCollectionOutput(r.stdout, r.stderr);
    expect(c.sections["iptables-backend"]).toMatchObject({ stdout: "nft\n", exitCode: 0 });
    expect(c.sections["iptables-save"]).toMatchObject({ command: "iptables-nft-save", exitCode: 0 });
    expect(c.sections["iptables-save"]!.stdout).toContain("-A KUBE-SVC-TCOU7JCQXEZGVUNU");
    expect(c.sections["proxy-mode"]).toMatchObject({ exitCode: 7, stdout: "" });
    // the per-interface settings are read through globs (the script turns globbing off for its rule walk)
    expect(c.sections.sysctls!.stdout).toMatch(/^net\.ipv4\.conf\.lo\.route_localnet=0$/m);
    // a setting the node does not have (no IPVS module here, no bridge ports) is left out without a word
    expect([c.sections.sysctls!.stdout.includes("vs.conntrack"), c.sections.sysctls!.stderr]).toEqual([false, ""]);
    expect(c.sections["proxy-mode"]!.stderr).toMatch(/connect: Connection refused/);
  });

  it("an image without iptables-legacy on a legacy node: legacy from /proc/net/ip_tables_names, iptables-save exit 127 with the hint", async () => {
    // PATH with only what netshoot-like images have: sh, grep, iptables-nft-*, no legacy binaries, no curl/wget/bash
    const bin = mkdtempSync(join(tmpdir(), "knp-bin-"));
    for (const t of ["sh", "grep", "iptables-nft-save", "ip6tables-nft-save", "cat", "printf"]) {
      const p = findTool(t);
      if (p) symlinkSync(p, join(bin, t));
    }
    const r = await legacyNode.netns.exec(["env", "-i", `PATH=${bin}`, ...NODE_SCOPE], nodeScope);
    const c = parseCollectionOutput(r.stdout, r.stderr);
    expect(c.complete).toBe(true);
    expect(c.sections["iptables-backend"]!.stdout).toBe("legacy\n");
    expect(c.sections["iptables-backend"]!.stderr).toContain("no kubelet chain found by the nft backend; /proc/net/ip_tables_names lists legacy tables; iptables-legacy-save is not in this image");
    expect(c.sections["iptables-save"]).toMatchObject({ command: "iptables-legacy-save", exitCode: 127 });
    expect(c.sections["iptables-save"]!.stderr).toContain("iptables-legacy-save: not found (the node uses the legacy iptables backend: use the kube-proxy pod");
    expect(c.sections["proxy-mode"]).toMatchObject({ exitCode: 127, stderr: "curl: not found (nor wget, nor bash)\n" });
  });

  /** The whole-node script on the legacy node with only `tools` on PATH. */
  async function withOnly(tools: string[]) {
    const bin = mkdtempSync(join(tmpdir(), "knp-bin-"));
    for (const t of tools) symlinkSync(findTool(t)!, join(bin, t));
    const r = await legacyNode.netns.exec(["env", "-i", `PATH=${bin}`, ...NODE_SCOPE], nodeScope);
    return parseCollectionOutput(r.stdout, r.stderr);
  }

  it("bash's /dev/tcp with builtins only reads /proxyMode (no curl, wget, tr, sed, timeout on PATH)", async () => {
    const c = await withOnly(["sh", "grep", "bash", "iptables-nft-save", "ip6tables-nft-save"]);
    expect(c.sections["proxy-mode"]).toMatchObject({ stdout: "iptables", exitCode: 0, stderr: "" });
    // the answer came through bash's /dev/tcp (the section names the URL, not a tool)
    expect(c.sections["proxy-mode"]!.command).toBe("GET http://127.0.0.1:10249/proxyMode");
  });

  it("no bash: curl reads /proxyMode", async () => {
    const c = await withOnly(["sh", "grep", "curl", "iptables-nft-save", "ip6tables-nft-save"]);
    expect(c.sections["proxy-mode"]).toMatchObject({ stdout: "iptables", exitCode: 0, stderr: "" });
  });

  // Other userlands than the host's (dash, mawk, GNU tools, curl, bash): the same sections.
  it.each([
    { name: "busybox userland (Alpine images: busybox sh, awk, sed, tr, timeout, wget; no bash, no curl): /proxyMode read by wget", userland: "busybox" },
    { name: "bash as sh (images whose /bin/sh is bash)", userland: "bash" },
  ])("$name: the same sections as with the host's sh", async ({ userland }) => {
    const bb = userland === "busybox" ? busyboxUserland()! : undefined;
    const bashDir = mkdtempSync(join(tmpdir(), "knp-bash-sh-"));
    symlinkSync(findTool("bash")!, join(bashDir, "sh"));
    try {
      // iptables-save's dated comments, and the counters (the /proxyMode requests themselves are packets)
      const strip = (t: string | undefined) => t?.replace(/^#.*\n/gm, "").replace(/\[\d+:\d+\]/g, "[p:b]");
      const r0 = await legacyNode.netns.exec(NODE_SCOPE, nodeScope);
      const host = parseCollectionOutput(r0.stdout, r0.stderr);
      const path = bb ? bb.dir : `${bashDir}:${process.env.PATH}`;
      // the shell that runs the script is the userland's: `sh` found on its PATH
      expect((await legacyNode.netns.exec(["env", "-i", `PATH=${path}`, "sh", "-c", "echo ${BASH_VERSION:-no bash}"])).stdout.startsWith("no bash")).toBe(userland === "busybox");
      const r = await legacyNode.netns.exec(["env", "-i", `PATH=${path}`, ...NODE_SCOPE], nodeScope);
      const c = parseCollectionOutput(r.stdout, r.stderr);
      expect([r.code, c.complete, c.problems]).toEqual([0, true, []]);
      expect(c.sections["proxy-mode"]).toMatchObject({ stdout: "iptables", exitCode: 0 });
      expect(Object.keys(c.sections).sort()).toEqual(Object.keys(host.sections).sort());
      for (const [k, s] of Object.entries(host.sections) as [keyof typeof host.sections, { exitCode: number; stdout: string }][]) {
        expect([k, c.sections[k]!.exitCode, strip(c.sections[k]!.stdout)]).toEqual([k, s.exitCode, strip(s.stdout)]);
      }
      expect(c.sections["iptables-save"]!.stdout).toContain("-A KUBE-SERVICES");
      expect(c.sections.sysctls!.stderr).toBe("");
    } finally {
      bb?.remove();
      rmSync(bashDir, { recursive: true, force: true });
    }
  });

  it("a /proxyMode server that accepts and never answers: the section fails after 2 s, and the mode comes from the rules", async () => {
    const silent = spawn(findTool("ip") ?? "ip", ["netns", "exec", nftNode.netns.name, "nc", "-l", "127.0.0.1", "10249"], { stdio: ["pipe", "ignore", "ignore"] });
    try {
      for (let i = 0; i < 50 && !/127\.0\.0\.1:10249/.test((await nftNode.netns.exec(["ss", "-ltn"])).stdout); i++) await new Promise((r) => setTimeout(r, 20));
      const r = await nftNode.netns.exec(NODE_SCOPE, nodeScope);
      const c = parseCollectionOutput(r.stdout, r.stderr);
      const pm = c.sections["proxy-mode"]!;
      expect(pm.exitCode).not.toBe(0);
      expect(pm.stdout).toBe("");
      expect(pm.durationMs).toBeGreaterThanOrEqual(1900);
      expect(pm.durationMs).toBeLessThan(4000);
      expect(c.sections["collection-scope"]!.stdout).toContain("mode-source=no table ip kube-proxy, no interface kube-ipvs0 (/proxyMode did not answer)");
    } finally {
      silent.kill("SIGKILL");
    }
  });

  it("kube-proxy's image (dash, grep, iptables, nft; no ip, bash, curl or wget): the mode comes from the node's state, kube-ipvs0 found in /sys/class/net", async () => {
    const kp = kubeProxyImageUserland()!;
    const scope = async () => {
      const r = await legacyNode.netns.exec(["env", "-i", `PATH=${kp.dir}`, ...NODE_SCOPE], nodeScope);
      const c = parseCollectionOutput(r.stdout, r.stderr);
      expect([r.code, c.complete, c.sections["proxy-mode"]?.exitCode]).toEqual([0, true, 127]);
      return c.sections["collection-scope"]!.stdout;
    };
    try {
      expect(await scope()).toContain("mode=iptables\nmode-source=no table ip kube-proxy, no interface kube-ipvs0 (/proxyMode did not answer)\n");
      // no ip: the local routes come from /proc/net/fib_trie and /proc/net/ipv6_route, those `ip route show table local` lists
      const r = await legacyNode.netns.exec(["env", "-i", `PATH=${kp.dir}`, ...NODE_SCOPE], nodeScope);
      const c = parseCollectionOutput(r.stdout, r.stderr);
      expect(c.sections["ip-addr"]).toMatchObject({ exitCode: 127 });
      const routes = c.sections["ip-route-local"]!;
      expect([routes.command, routes.exitCode]).toEqual(["read /proc/net/fib_trie and /proc/net/ipv6_route (no ip in this image)", 0]);
      const byIp4 = (await legacyNode.netns.run(["ip", "-4", "route", "show", "table", "local"])).split("\n").filter((l) => l.startsWith("local ")).map((l) => l.split(" ")[1]);
      expect(byIp4.length).toBeGreaterThan(1);
      expect(routes.stdout.split("\n").filter((l) => l !== "" && !l.includes(":")).map((l) => l.replace(/^local /, "")).sort()).toEqual(byIp4.sort());
      const facts = readNodeFacts({ name: "k8s1", sections: c.sections });
      expect([facts.noInterfaces, facts.addresses?.isLocal("127.0.0.1"), facts.addresses?.isLocal("127.1.2.3"), facts.addresses?.isLocal("192.0.2.1")]).toEqual([true, true, true, false]);
      // the IPv6 ones, in full hexadecimal groups, answer for the same addresses
      const byIp6 = (await legacyNode.netns.run(["ip", "-6", "route", "show", "table", "local"])).split("\n").filter((l) => l.startsWith("local ")).map((l) => l.split(" ")[1]!);
      for (const d of byIp6) expect(facts.addresses!.isLocal(d.split("/")[0]!), d).toBe(true);
      // (kube-proxy makes it a dummy interface; this kernel has no dummy driver, and the script looks only at the name)
      await legacyNode.netns.run(["ip", "link", "add", "kube-ipvs0", "type", "veth", "peer", "name", "kube-ipvs0-peer"]);
      expect(await scope()).toContain("mode=ipvs\nmode-source=interface kube-ipvs0 exists (/proxyMode did not answer)\n");
    } finally {
      await legacyNode.netns.exec(["ip", "link", "del", "kube-ipvs0"]);
      kp.remove();
    }
  });

  it("an IPVS-mode node's IP sets (seed 000's KUBE-* sets, loaded into the kernel) come back in the ipset section", async () => {
    const listed = readFileSync("tests/fixtures/ipvs/seed-000-azure-ipset-list.txt", "utf8");
    // an IPVS-mode node: /proxyMode says ipvs, so its KUBE-* sets are listed
    const node = await startFakeNode("k8s-01", { ipsets: ipsetRestoreFromList(listed), proxyMode: "ipvs" });
    try {
      const r = await node.netns.exec(NODE_SCOPE, nodeScope);
      const c = parseCollectionOutput(r.stdout, r.stderr);
      expect(c.sections.ipset).toMatchObject({ command: "ipset list KUBE-*", exitCode: 0 });
      const got = parseIpsetList(c.sections.ipset!.stdout);
      const want = parseIpsetList(listed);
      const view = (sets: typeof got) => sets.map((x) => [x.name, x.type, [...x.members.map((m) => m.raw)].sort()]).sort();
      expect(view(got)).toEqual(view(want));
      expect(got.length).toBeGreaterThan(5);
      expect(got.find((x) => x.name === "KUBE-LOOP-BACK")!.members.map((m) => m.raw).sort()).toEqual(["192.168.0.17,tcp:53,192.168.0.17", "192.168.0.17,udp:53,192.168.0.17", "192.168.0.18,tcp:53,192.168.0.18", "192.168.0.18,udp:53,192.168.0.18"]);
    } finally {
      await node.stop();
    }
  });

  it("plain iptables-save whose --version names the backend is used for it", async () => {
    const bin = mkdtempSync(join(tmpdir(), "knp-bin-"));
    for (const t of ["sh", "grep"]) symlinkSync(findTool(t)!, join(bin, t));
    symlinkSync(findTool("iptables-legacy-save")!, join(bin, "iptables-save"));
    const r = await legacyNode.netns.exec(["env", "-i", `PATH=${bin}`, ...NODE_SCOPE], nodeScope);
    const c = parseCollectionOutput(r.stdout, r.stderr);
    expect(c.sections["iptables-backend"]!.stdout).toBe("legacy\n");
    expect(c.sections["iptables-save"]).toMatchObject({ command: "iptables-save", exitCode: 0 });
    expect(c.sections["ip6tables-save"]).toMatchObject({ exitCode: 127 });
    expect(c.sections["ip6tables-save"]!.stderr).toContain("ip6tables-legacy-save: not found (the node uses the legacy iptables backend");
  });
});
