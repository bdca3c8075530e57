/**
 * The real-kernel harness: network namespaces, iptables round-trips (nft and legacy backends) of kube-proxy's
 * restore buffers against the committed node-format fixtures, kube-proxy's builtin-chain jumps, and the kernel
 * oracle's masquerade / DNAT / probability verdicts on real kube-proxy test dumps.
 *
 * Needs root + iptables + conntrack + nfacct (scripts/ci-setup.sh). Skipped without them on a developer machine;
 * under CI=true a missing capability fails (requireNetns).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  CommandError,
  createNetns,
  declaredChains,
  installKubeProxyJumps,
  IptablesRestoreError,
  liveNetnsNames,
  loadIptables,
  NetnsUnavailableError,
  netnsUnavailableReason,
  NetnsUsageError,
  nodeFormatPlan,
  readIptables,
  requireNetns,
  stripSaveComments,
} from "./helpers/netns.ts";
import {
  type KernelOracle,
  openKernelOracle,
  ORACLE_TOOLS,
  OracleError,
  type OraclePacket,
  parseConntrack,
  TOPOLOGY_MASTER,
  TOPOLOGY_V127,
  traceInKernel,
} from "./helpers/kernel_oracle.ts";

const KP = new URL("./fixtures/kube-proxy/", import.meta.url);
const NF = new URL("./fixtures/node-format/", import.meta.url);
const dump = (name: string): string => readFileSync(new URL(name, KP), "utf8");
const nodeFormat = (name: string): string => readFileSync(new URL(name, NF), "utf8");
const TOOLS = [...ORACLE_TOOLS, "nfacct"];

/** The pids inside namespace `name` (`ip netns pids`; none when it does not exist). */
function pidsIn(name: string): number[] {
  const r = spawnSync("ip", ["netns", "pids", name], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.split("\n").filter((l) => l.trim() !== "").map(Number) : [];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `ok` every 20 ms for up to 5 s (returns either way: the caller's expect says what was wanted). */
async function waitFor(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
}

function netnsListed(name: string): boolean {
  const out = spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout ?? "";
  return out.split("\n").some((l) => l.split(" ")[0] === name);
}

// ------------------------------------------------------------------------------------------------------------
// Runs everywhere (no root needed)

describe("gating and fixture plan", () => {
  test("requireNetns: skips off CI, throws under CI=true, naming the missing tool", () => {
    const saved = process.env.CI;
    try {
      delete process.env.CI;
      expect(requireNetns(["no-such-tool-knp"])).toBe(false);
      process.env.CI = "true";
      expect(() => requireNetns(["no-such-tool-knp"])).toThrow(NetnsUnavailableError);
      const reason = netnsUnavailableReason(["no-such-tool-knp"]);
      expect(() => requireNetns(["no-such-tool-knp"])).toThrow(
        `network namespace harness required under CI=true but unavailable: ${reason}`,
      );
      if (process.getuid?.() === 0) {
        expect(reason).toBe("missing tools: no-such-tool-knp (run scripts/ci-setup.sh as root)");
      }
    } finally {
      if (saved === undefined) delete process.env.CI;
      else process.env.CI = saved;
    }
  });

  test("every kube-proxy dump has both node-format fixtures; partial restores load all earlier stages", () => {
    const dumps = readdirSync(KP).filter((f) => /\.ip6?tables-save$/.test(f)).sort();
    expect(dumps).toHaveLength(40);
    const plan = nodeFormatPlan(dumps);
    const committed = new Set(readdirSync(NF));
    for (const item of plan) {
      for (const backend of ["nft", "legacy"] as const) expect(committed.has(item.output(backend))).toBe(true);
    }
    expect(committed.size).toBe(81); // 80 fixtures + README.md
    const stage5 = plan.find((p) => p.source.startsWith("TestSyncProxyRulesRepeated-5-"))!;
    expect(stage5.inputs).toEqual([
      "TestSyncProxyRulesRepeated-1-initial.iptables-save",
      "TestSyncProxyRulesRepeated-2-add-svc3.iptables-save",
      "TestSyncProxyRulesRepeated-3-delete-svc2.iptables-save",
      "TestSyncProxyRulesRepeated-4-add-svc4-no-endpoints.iptables-save",
      "TestSyncProxyRulesRepeated-5-add-svc4-endpoints.iptables-save",
    ]);
    const v6 = plan.find((p) => p.source === "TestEnableLocalhostNodePortsIPv6.v1.27.ip6tables-save")!;
    expect([v6.family, v6.output("legacy")]).toEqual([6, "TestEnableLocalhostNodePortsIPv6.v1.27.legacy.ip6tables-save"]);
  });

  test("committed node-format fixtures carry the iptables re-printing facts", () => {
    const cases = [
      { name: "1/3 of three endpoints", file: "TestEndpointSliceE2E.v1.20", from: "--probability 0.3333333333 ", to: "--probability 0.33333333349 " },
      { name: "1/2 of the remaining two", file: "TestEndpointSliceE2E.v1.20", from: "--probability 0.5000000000 ", to: "--probability 0.50000000000 " },
      { name: "KUBE-MARK-MASQ --or-mark", file: "TestNodePort.v1.27", from: "-j MARK --or-mark 0x4000", to: "-j MARK --set-xmark 0x4000/0x4000" },
      { name: "KUBE-POSTROUTING --xor-mark", file: "TestNodePort.v1.27", from: "-j MARK --xor-mark 0x4000", to: "-j MARK --set-xmark 0x4000/0x0" },
      { name: "/32 on a ClusterIP", file: "TestOverallIPTablesRules", from: "-d 172.30.0.41 --dport 80", to: "-d 172.30.0.41/32 -p tcp" },
    ];
    for (const c of cases) {
      const input = dump(`${c.file}.iptables-save`);
      expect(input, c.name).toContain(c.from);
      expect(input, c.name).not.toContain(c.to);
      for (const backend of ["nft", "legacy"]) {
        const out = nodeFormat(`${c.file}.${backend}.iptables-save`);
        expect(out, `${c.name} (${backend})`).toContain(c.to);
        expect(out, `${c.name} (${backend})`).not.toContain(c.from);
      }
    }
  });

  test("parseConntrack reads original and reply tuples, skips summary lines", () => {
    const text = [
      "tcp      6 119 SYN_SENT src=203.0.113.2 dst=172.30.0.41 sport=40603 dport=80 [UNREPLIED] src=10.180.0.1 dst=192.168.0.2 sport=80 dport=40603 mark=0 use=1",
      "udp      17 29 src=10.0.0.5 dst=5.6.7.8 sport=59131 dport=80 [UNREPLIED] src=5.6.7.8 dst=10.0.0.5 sport=80 dport=59131 mark=0 use=1",
      "conntrack v1.4.7 (conntrack-tools): 2 flow entries have been shown.",
    ].join("\n");
    const got = parseConntrack(text).map((e) => [e.proto, e.orig.src, e.orig.dport, e.reply.src, e.reply.dst]);
    expect(got).toEqual([
      ["tcp", "203.0.113.2", "80", "10.180.0.1", "192.168.0.2"],
      ["udp", "10.0.0.5", "80", "5.6.7.8", "10.0.0.5"],
    ]);
  });
});

// ------------------------------------------------------------------------------------------------------------
// Needs root and the tools

describe.runIf(requireNetns(TOOLS))("network namespaces", () => {
  test("createNetns: unique name, isolated, exec with input, run errors, destroy idempotent", async () => {
    const a = await createNetns("harness");
    const b = await createNetns("harness");
    try {
      expect(a.name).toMatch(new RegExp(`^knp-harness-${process.pid}-\\d+$`));
      expect(b.name).not.toBe(a.name);
      expect(netnsListed(a.name)).toBe(true);
      expect(liveNetnsNames()).toEqual(expect.arrayContaining([a.name, b.name]));
      const links = await a.run(["ip", "-o", "link", "show"]);
      expect(links.trim().split("\n").map((l) => l.split(": ")[1])).toEqual(["lo"]);
      expect((await a.exec(["cat"], { input: "kube-proxy\n" })).stdout).toBe("kube-proxy\n");
      const failed = await a.exec(["sh", "-c", "echo boom >&2; exit 3"]);
      expect([failed.code, failed.stderr]).toEqual([3, "boom\n"]);
      await expect(a.run(["sh", "-c", "echo boom >&2; exit 3"])).rejects.toThrow(
        new CommandError(
          `sh -c echo boom >&2; exit 3 failed in netns ${a.name} (exit 3): boom`,
          ["sh", "-c", "echo boom >&2; exit 3"],
          3,
          "boom\n",
        ),
      );
      await expect(a.run(["sleep", "5"], { timeoutMs: 100 })).rejects.toThrow("timed out after 100 ms");
    } finally {
      await a.destroy();
      await a.destroy();
      await b.destroy();
    }
    expect(netnsListed(a.name)).toBe(false);
    expect(liveNetnsNames()).not.toContain(a.name);
    await expect(a.exec(["true"])).rejects.toThrow(`netns ${a.name} was destroyed`);
  });

  test("destroy kills what still runs inside the namespace (deleting a namespace does not stop it)", async () => {
    const ns = await createNetns("harness");
    const loop = spawn("ip", ["netns", "exec", ns.name, "sh", "-c", "while :; do sleep 1; done"], { detached: true, stdio: "ignore" });
    loop.unref();
    try {
      await waitFor(() => pidsIn(ns.name).includes(loop.pid!));
    } finally {
      await ns.destroy();
    }
    expect(netnsListed(ns.name)).toBe(false);
    await waitFor(() => !alive(loop.pid!));
    expect(alive(loop.pid!)).toBe(false);
  });

  test("a harness process stopped by SIGTERM or SIGINT leaves no namespace and nothing running in one", async () => {
    // the helper as a program of its own: bundled, it makes a namespace, starts a loop inside and waits for a signal
    const dir = mkdtempSync(join(tmpdir(), "knp-harness-"));
    try {
      const entry = join(dir, "hold.ts");
      writeFileSync(
        entry,
        `import { spawn } from "node:child_process";\n` +
          `import { createNetns } from ${JSON.stringify(fileURLToPath(new URL("./helpers/netns.ts", import.meta.url)))};\n` +
          `const ns = await createNetns("harness");\n` +
          `const c = spawn("ip", ["netns", "exec", ns.name, "sh", "-c", "while :; do sleep 1; done"], { detached: true, stdio: "ignore" });\n` +
          `c.unref();\n` +
          `process.stdout.write(ns.name + " " + c.pid + "\\n");\n` +
          `setInterval(() => {}, 1000);\n`,
      );
      const { build } = await import("esbuild");
      await build({ entryPoints: [entry], outfile: join(dir, "hold.mjs"), bundle: true, platform: "node", format: "esm", target: "node20", packages: "external", logLevel: "error" });
      for (const signal of ["SIGTERM", "SIGINT"] as const) {
        const child = spawn(process.execPath, [join(dir, "hold.mjs")], { stdio: ["ignore", "pipe", "inherit"] });
        const line = await new Promise<string>((resolve, reject) => {
          let out = "";
          child.stdout!.on("data", (d: Buffer) => {
            out += d.toString();
            if (out.includes("\n")) resolve(out.trim());
          });
          child.once("exit", (code) => reject(new Error(`hold.mjs exited (${code}) before it was ready: ${out}`)));
        });
        const [name, pid] = line.split(" ") as [string, string];
        await waitFor(() => pidsIn(name).includes(Number(pid)));
        const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_c, s) => resolve(s)));
        child.kill(signal);
        expect(await exited, signal).toBe(signal); // the default action still ends the process
        expect(netnsListed(name), signal).toBe(false);
        await waitFor(() => !alive(Number(pid)));
        expect(alive(Number(pid)), signal).toBe(false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test("createNetns rejects a prefix ip netns would mangle", async () => {
    await expect(createNetns("Bad Prefix")).rejects.toThrow(
      new NetnsUsageError(`invalid netns prefix "Bad Prefix": use 1-20 of [a-z0-9-]`),
    );
  });
});

describe.runIf(requireNetns(TOOLS))("iptables round-trip (kube-proxy buffer → node format)", () => {
  const FILES = [
    "TestEndpointSliceE2E.v1.20.iptables-save",
    "TestOverallIPTablesRules.iptables-save",
    "TestLoadBalancer-source-ranges.v1.27.iptables-save",
    "TestSyncProxyRulesRepeated-5-add-svc4-endpoints.iptables-save",
    "TestEnableLocalhostNodePortsIPv6.v1.27.ip6tables-save",
  ];
  const plan = nodeFormatPlan(readdirSync(KP).filter((f) => /\.ip6?tables-save$/.test(f)).sort())
    .filter((p) => FILES.includes(p.source));
  const cases = plan.flatMap((item) => (["nft", "legacy"] as const).map((backend) => ({ item, backend })));

  test.each(cases)("$item.source with $backend: the kernel still prints the committed fixture", async ({ item, backend }) => {
    const ns = await createNetns("roundtrip");
    try {
      for (const input of item.inputs) await loadIptables(ns, dump(input), { backend, family: item.family });
      const got = await readIptables(ns, backend, item.family);
      const want = nodeFormat(item.output(backend));
      const tool = `${item.family === 6 ? "ip6tables" : "iptables"}${backend === "nft" ? "-nft" : ""}-save`;
      expect(want.split("\n")[0]).toMatch(new RegExp(`^# Generated by ${tool} v`));
      expect(stripSaveComments(got)).toBe(stripSaveComments(want));
    } finally {
      await ns.destroy();
    }
  });

  test("the kernel's probability is lround(p·2^31)/2^31 printed with 11 decimals", async () => {
    const ns = await createNetns("prob");
    try {
      const ps = ["0.3333333333", "0.5000000000", "0.33333", "0.2000000000", "0.2500000000", "0.1428571429"];
      const rules = ps.map((p) => `-A KUBE-SVC-PROB -m statistic --mode random --probability ${p} -j ACCEPT`);
      await loadIptables(ns, ["*filter", ":KUBE-SVC-PROB - [0:0]", ...rules, "COMMIT", ""].join("\n"), {
        backend: "nft",
        family: 4,
      });
      const printed = [...(await readIptables(ns, "nft", 4)).matchAll(/--probability (\S+)/g)].map((m) => m[1]);
      const want = ps.map((p) => (Math.round(Number(p) * 2 ** 31) / 2 ** 31).toFixed(11));
      expect(printed).toEqual(want);
      expect(printed.slice(0, 4)).toEqual(["0.33333333349", "0.50000000000", "0.33332999982", "0.20000000019"]);
    } finally {
      await ns.destroy();
    }
  });

  test.each([
    {
      name: "nft: a partial restore alone names a chain it does not declare",
      backend: "nft" as const,
      want: /^iptables-nft-restore failed in netns knp-restorefail-\d+-\d+ \(exit 2\): .*Chain 'KUBE-SVC-XPGD46QRK7WJZT7O' does not exist/,
    },
    {
      name: "legacy: same buffer",
      backend: "legacy" as const,
      want: /^iptables-legacy-restore failed in netns knp-restorefail-\d+-\d+ \(exit 2\): .*Couldn't load target `KUBE-SVC-XPGD46QRK7WJZT7O'/,
    },
  ])("$name", async ({ backend, want }) => {
    const ns = await createNetns("restorefail");
    try {
      const err = await loadIptables(ns, dump("TestSyncProxyRulesRepeated-2-add-svc3.iptables-save"), { backend, family: 4 })
        .then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(IptablesRestoreError);
      expect((err as Error).message).toMatch(want);
      expect((await readIptables(ns, backend, 4)).includes("KUBE-SVC-X27LE4BHSL4DOUIK")).toBe(false);
    } finally {
      await ns.destroy();
    }
  });
});

describe.runIf(requireNetns(TOOLS))("installKubeProxyJumps", () => {
  test("master dump (nft): kube-proxy's prepend order, after kubelet's KUBE-FIREWALL; idempotent", async () => {
    const ns = await createNetns("jumps");
    try {
      await loadIptables(ns, dump("TestOverallIPTablesRules.iptables-save"), { backend: "nft", family: 4 });
      const added = await installKubeProxyJumps(ns, "nft");
      expect(added.map((j) => `${j.table} ${j.chain} ${j.target}`)).toEqual([
        "filter INPUT KUBE-FIREWALL",
        "filter OUTPUT KUBE-FIREWALL",
        "filter INPUT KUBE-EXTERNAL-SERVICES",
        "filter FORWARD KUBE-EXTERNAL-SERVICES",
        "filter INPUT KUBE-NODEPORTS",
        "filter FORWARD KUBE-SERVICES",
        "filter OUTPUT KUBE-SERVICES",
        "filter FORWARD KUBE-FORWARD",
        "filter INPUT KUBE-PROXY-FIREWALL",
        "filter OUTPUT KUBE-PROXY-FIREWALL",
        "filter FORWARD KUBE-PROXY-FIREWALL",
        "nat OUTPUT KUBE-SERVICES",
        "nat PREROUTING KUBE-SERVICES",
        "nat POSTROUTING KUBE-POSTROUTING",
      ]);
      const saved = await readIptables(ns, "nft", 4);
      const builtin = saved.split("\n").filter((l) => /^-A (INPUT|FORWARD|OUTPUT|PREROUTING|POSTROUTING) /.test(l));
      expect(builtin).toEqual([
        `-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL`,
        `-A INPUT -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS`,
        `-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES`,
        `-A INPUT -j KUBE-FIREWALL`,
        `-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL`,
        `-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD`,
        `-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
        `-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES`,
        `-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL`,
        `-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
        `-A OUTPUT -j KUBE-FIREWALL`,
        `-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
        `-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
        `-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING`,
      ]);
      expect(await installKubeProxyJumps(ns, "nft")).toEqual([]);
      expect(stripSaveComments(await readIptables(ns, "nft", 4))).toBe(stripSaveComments(saved));
    } finally {
      await ns.destroy();
    }
  });

  test("v1.20 dump (legacy): only jumps to chains the dump declares", async () => {
    const ns = await createNetns("jumps");
    try {
      await loadIptables(ns, dump("TestEndpointSliceE2E.v1.20.iptables-save"), { backend: "legacy", family: 4 });
      const chains = declaredChains(await readIptables(ns, "legacy", 4));
      expect([...chains.get("filter")!].filter((c) => c.startsWith("KUBE-"))).toEqual([
        "KUBE-EXTERNAL-SERVICES",
        "KUBE-FORWARD",
        "KUBE-SERVICES",
      ]);
      const added = await installKubeProxyJumps(ns, "legacy");
      expect(added.map((j) => `${j.table} ${j.chain} ${j.target}`)).toEqual([
        "filter INPUT KUBE-EXTERNAL-SERVICES",
        "filter FORWARD KUBE-EXTERNAL-SERVICES",
        "filter FORWARD KUBE-SERVICES",
        "filter OUTPUT KUBE-SERVICES",
        "filter FORWARD KUBE-FORWARD",
        "nat OUTPUT KUBE-SERVICES",
        "nat PREROUTING KUBE-SERVICES",
        "nat POSTROUTING KUBE-POSTROUTING",
      ]);
    } finally {
      await ns.destroy();
    }
  });
});

// ------------------------------------------------------------------------------------------------------------
// The kernel oracle

/** Binomial 4-sigma band around n·p. */
function within4Sigma(count: number, n: number, p: number): boolean {
  return Math.abs(count - n * p) <= 4 * Math.sqrt(n * p * (1 - p));
}

interface VerdictCase {
  name: string;
  packet: OraclePacket;
  want: { dnatTo?: string; snat: boolean; snatTo?: string; dropped: boolean; rejected: boolean };
}

describe.runIf(requireNetns(TOOLS))("kernel oracle: TestOverallIPTablesRules (master), nft", () => {
  let oracle: KernelOracle;
  beforeAll(async () => {
    oracle = await openKernelOracle({ text: dump("TestOverallIPTablesRules.iptables-save"), backend: "nft" }, TOPOLOGY_MASTER);
  });
  afterAll(async () => {
    await oracle?.close();
  });

  const cases: VerdictCase[] = [
    {
      name: "svc1 ClusterIP from a pod in 10.0.0.0/8: DNAT, not masqueraded",
      packet: { client: "pod-local", src: "10.0.0.5", dst: "172.30.0.41", dport: 80, proto: "tcp" },
      want: { dnatTo: "10.180.0.1:80", snat: false, dropped: false, rejected: false },
    },
    {
      name: "svc1 ClusterIP from outside the cluster CIDR: masqueraded to the node IP",
      packet: { client: "external", src: "203.0.113.2", dst: "172.30.0.41", dport: 80, proto: "tcp" },
      want: { dnatTo: "10.180.0.1:80", snat: true, snatTo: "192.168.0.2", dropped: false, rejected: false },
    },
    {
      name: "svc1 hairpin: the endpoint reaching its own Service is masqueraded",
      packet: { client: "hairpin", src: "10.180.0.1", dst: "172.30.0.41", dport: 80, proto: "tcp" },
      want: { dnatTo: "10.180.0.1:80", snat: true, snatTo: "192.168.0.2", dropped: false, rejected: false },
    },
    {
      name: "svc3 NodePort 3003 from an external client: masqueraded (eTP=Cluster)",
      packet: { client: "external", src: "203.0.113.2", dst: "192.168.0.2", dport: 3003, proto: "tcp" },
      want: { dnatTo: "10.180.0.3:80", snat: true, snatTo: "192.168.0.2", dropped: false, rejected: false },
    },
    {
      name: "svc3 NodePort 3003 from a host-network process on another node address: OUTPUT DNAT, masqueraded",
      packet: { client: "node-local", src: "192.168.1.2", dst: "192.168.0.2", dport: 3003, proto: "tcp" },
      want: { dnatTo: "10.180.0.3:80", snat: true, snatTo: "192.168.0.2", dropped: false, rejected: false },
    },
    {
      name: "svc2 LoadBalancer IP, eTP=Local without local endpoints: external client dropped (not rejected)",
      packet: { client: "external", src: "203.0.113.2", dst: "1.2.3.4", dport: 80, proto: "tcp" },
      want: { snat: false, dropped: true, rejected: false },
    },
    {
      name: "svc2 LoadBalancer IP from a pod: short-circuited to KUBE-SVC, not masqueraded",
      packet: { client: "pod-local", src: "10.0.0.5", dst: "1.2.3.4", dport: 80, proto: "tcp" },
      want: { dnatTo: "10.180.0.2:80", snat: false, dropped: false, rejected: false },
    },
    {
      name: "svc5 LoadBalancer IP from an allowed source range: DNAT + masquerade",
      packet: { client: "external", src: "203.0.113.2", dst: "5.6.7.8", dport: 80, proto: "tcp" },
      want: { dnatTo: "10.180.0.3:80", snat: true, snatTo: "192.168.0.2", dropped: false, rejected: false },
    },
    {
      name: "svc5 LoadBalancer IP from outside loadBalancerSourceRanges: dropped by KUBE-PROXY-FIREWALL",
      packet: { client: "external", src: "203.0.113.130", dst: "5.6.7.8", dport: 80, proto: "tcp" },
      want: { snat: false, dropped: true, rejected: false },
    },
    {
      name: "svc6 without endpoints: REJECT",
      packet: { client: "pod-local", src: "10.0.0.5", dst: "172.30.0.46", dport: 80, proto: "tcp" },
      want: { snat: false, dropped: true, rejected: true },
    },
    {
      name: "UDP to a TCP-only ClusterIP port: no rule matches, forwarded unchanged",
      packet: { client: "pod-local", src: "10.0.0.5", dst: "172.30.0.41", dport: 80, proto: "udp" },
      want: { snat: false, dropped: false, rejected: false },
    },
  ];

  test.each(cases)("$name", async ({ packet, want }) => {
    const t = await oracle.trace(packet);
    expect({ dnatTo: t.dnatTo, snat: t.snat, snatTo: t.snatTo, dropped: t.dropped, rejected: t.rejected }).toEqual({
      dnatTo: undefined,
      snatTo: undefined,
      ...want,
    });
    if (!want.dropped) {
      expect(t.conntrack).toMatch(new RegExp(`^${packet.proto}\\s+\\d+ .*src=${packet.src} dst=${packet.dst} `));
    } else {
      expect(t.conntrack).toBe("");
    }
  });

  test("svc4 externalIP 192.168.99.33 from outside: 0.5 / 0.5 over 10.180.0.4 and .5, every packet masqueraded", async () => {
    const n = 200;
    const t = await oracle.trace({ client: "external", src: "203.0.113.2", dst: "192.168.99.33", dport: 80, proto: "tcp", samples: n });
    expect(Object.keys(t.counts).sort()).toEqual(["10.180.0.4:80", "10.180.0.5:80"]);
    expect(t.samples).toBe(n);
    expect(t.snatCount).toBe(n);
    for (const c of Object.values(t.counts)) expect(within4Sigma(c, n, 0.5), `count ${c} of ${n}`).toBe(true);
  });

  test.each([
    { name: "src not IPv4", packet: { src: "10.0.0", client: "pod-local" }, msg: `packet.src "10.0.0" is not an IPv4 address (the kernel oracle is IPv4 only)` },
    { name: "IPv6 dst", packet: { dst: "fd00::1", client: "pod-local" }, msg: `packet.dst "fd00::1" is not an IPv4 address (the kernel oracle is IPv4 only)` },
    { name: "port out of range", packet: { dport: 70000, client: "pod-local" }, msg: "packet.dport 70000 is not a port in 0-65535" },
    { name: "zero samples", packet: { samples: 0, client: "pod-local" }, msg: "packet.samples 0 is not an integer in 1-5000" },
    {
      name: "pod client using a node address",
      packet: { src: "192.168.0.2", client: "external" },
      msg: `external client src 192.168.0.2 is an address of the node or its gateway; use client "node-local"`,
    },
    {
      name: "node-local client using a foreign address",
      packet: { src: "10.0.0.5", client: "node-local" },
      msg: "node-local client src 10.0.0.5 is not a node address (192.168.0.2, 192.168.1.2, 192.168.99.11, 127.0.0.1)",
    },
  ] as const)("rejects bad packets: $name", async ({ packet, msg }) => {
    const base: OraclePacket = { client: "pod-local", src: "10.0.0.5", dst: "172.30.0.41", dport: 80, proto: "tcp" };
    const p = { ...base, ...packet } as OraclePacket;
    await expect(oracle.trace(p)).rejects.toThrow(new OracleError(msg));
  });
});

describe.runIf(requireNetns(TOOLS))("kernel oracle: other dumps and backends", () => {
  test("TestEndpointSliceE2E.v1.20 (legacy): three endpoints, 1/3 each; pod not masqueraded, outsider is", async () => {
    const oracle = await openKernelOracle({ text: dump("TestEndpointSliceE2E.v1.20.iptables-save"), backend: "legacy" });
    try {
      const n = 300;
      const pod = await oracle.trace({ client: "pod-local", src: "10.0.0.5", dst: "172.20.1.1", dport: 0, proto: "tcp", samples: n });
      expect(Object.keys(pod.counts).sort()).toEqual(["10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80"]);
      for (const c of Object.values(pod.counts)) expect(within4Sigma(c, n, 1 / 3), `count ${c} of ${n}`).toBe(true);
      expect(pod.snatCount).toBe(0);
      // v1.20 detects local traffic with 10.0.0.0/24: 10.0.1.9 is a pod IP outside it, so it is masqueraded.
      const other = await oracle.trace({ client: "pod-remote", src: "10.0.1.9", dst: "172.20.1.1", dport: 0, proto: "tcp" });
      expect([other.snat, other.snatTo]).toEqual([true, "192.168.0.2"]);
    } finally {
      await oracle.close();
    }
  });

  test("TestOverallIPTablesRulesWithMultipleServices.v1.27 (legacy) via traceInKernel: svc1 verdicts", async () => {
    const rules = { text: dump("TestOverallIPTablesRulesWithMultipleServices.v1.27.iptables-save"), backend: "legacy" as const };
    const pod = await traceInKernel(rules, { client: "pod-local", src: "10.0.0.5", dst: "172.30.0.41", dport: 80, proto: "tcp" }, TOPOLOGY_V127);
    expect([pod.dnatTo, pod.snat]).toEqual(["10.180.0.1:80", false]);
    const ext = await traceInKernel(rules, { client: "external", src: "203.0.113.2", dst: "172.30.0.41", dport: 80, proto: "tcp" }, TOPOLOGY_V127);
    expect([ext.dnatTo, ext.snat, ext.snatTo]).toEqual(["10.180.0.1:80", true, "192.168.0.2"]);
  });

  test("TestOnlyLocalLoadBalancing-affinity.v1.27 (nft): ClientIP affinity pins a client; eTP=Local LB IP keeps the source", async () => {
    const oracle = await openKernelOracle({ text: dump("TestOnlyLocalLoadBalancing-affinity.v1.27.iptables-save"), backend: "nft" }, TOPOLOGY_V127);
    try {
      // Without `-m recent` the chance that 30 connections all pick the same of two endpoints is 2·0.5^30.
      const pod = await oracle.trace({ client: "pod-local", src: "10.0.0.5", dst: "172.30.0.41", dport: 80, proto: "tcp", samples: 30 });
      expect(Object.values(pod.counts)).toEqual([30]);
      expect(["10.180.0.1:80", "10.180.2.1:80"]).toContain(Object.keys(pod.counts)[0]);
      const ext = await oracle.trace({ client: "external", src: "203.0.113.2", dst: "1.2.3.4", dport: 80, proto: "tcp", samples: 20 });
      expect([ext.counts, ext.snatCount]).toEqual([{ "10.180.2.1:80": 20 }, 0]);
    } finally {
      await oracle.close();
    }
  });

  test("TestSyncProxyRulesRepeated stages 1..7 applied in order: svc3 split 0.5 / 0.5 over 10.0.3.2 and 10.0.3.3", async () => {
    const stages = readdirSync(KP).filter((f) => /^TestSyncProxyRulesRepeated-[1-7]-/.test(f)).sort();
    expect(stages).toHaveLength(7);
    const oracle = await openKernelOracle({ text: stages.map(dump), backend: "nft" });
    try {
      const n = 200;
      const t = await oracle.trace({ client: "pod-local", src: "10.0.0.5", dst: "172.30.0.43", dport: 80, proto: "tcp", samples: n });
      expect(Object.keys(t.counts).sort()).toEqual(["10.0.3.2:80", "10.0.3.3:80"]);
      for (const c of Object.values(t.counts)) expect(within4Sigma(c, n, 0.5), `count ${c} of ${n}`).toBe(true);
      const svc2 = await oracle.trace({ client: "pod-local", src: "10.0.0.5", dst: "172.30.0.42", dport: 8080, proto: "tcp" });
      expect([svc2.dropped, svc2.dnatTo]).toEqual([false, undefined]); // deleted in stage 3: no rule left
    } finally {
      await oracle.close();
    }
  });

  test("openKernelOracle failures leave no namespace behind", async () => {
    const before = liveNetnsNames();
    await expect(openKernelOracle({ text: "x", backend: "nft" }, { nodeAddresses: ["192.168.0.2/24"], gateway: "10.0.0.1" }))
      .rejects.toThrow(new OracleError("gateway 10.0.0.1 is not inside the first node subnet 192.168.0.2/24"));
    const err = await openKernelOracle({ text: dump("TestSyncProxyRulesRepeated-2-add-svc3.iptables-save"), backend: "nft" })
      .then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(IptablesRestoreError);
    expect((err as Error).message).toContain("Chain 'KUBE-SVC-XPGD46QRK7WJZT7O' does not exist");
    expect(liveNetnsNames()).toEqual(before);
  });
});
