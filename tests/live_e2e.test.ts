// The whole live pipeline against the test bed: kubeconfig → TLS → API → kube-proxy pod exec or debug pod
// lifecycle → WebSocket exec (v5 and v4) → the real collection script inside network namespaces that play the
// nodes, holding real iptables state (kube-proxy-layout rules generated for the served objects, and seed 001's real
// node dump as-is) → parsing → analysis → report. Also: capture → --from gives the same report; a stream cut
// mid-way; kubectl's own plugin dispatch; the same run under Deno.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_IMAGE } from "../src/kube/debug_pod.ts";
import { decodeBundle } from "../src/bundle/decode.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import type { ServiceReport } from "../src/service/report.ts";
import { type FakeApiOptions, type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { type FakeNode, startFakeNode } from "./helpers/fake_nodes.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";
import { buildCli, captureIo, run, runLiveCli } from "./helpers/live_cli.ts";
import { findTool, requireNetns } from "./helpers/netns.ts";

const web = readBundle("tests/fixtures/live/web");
const lab = readBundle("examples/iptables-lab");
const seed = readFileSync("tests/fixtures/seeds/001-k8s1.iptables-save", "utf8");

/** Runs a command without blocking the event loop (the fake API server lives in this process). */
function exec(cmd: string, args: string[], env: Record<string, string | undefined>, timeoutMs = 120_000): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString("utf8")));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString("utf8")));
    const t = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (status) => {
      clearTimeout(t);
      resolve({ status, stdout, stderr });
    });
  });
}

describe.runIf(requireNetns(["nc", "curl", "ss"]))("live pipeline end to end on real iptables", () => {
  const nodes = new Map<string, FakeNode>();
  const servers: FakeApiServer[] = [];
  let cli: Awaited<ReturnType<typeof buildCli>> | undefined;

  beforeAll(async () => {
    const webRules = kubeProxyRules(web.objects.services, web.objects.endpointSlices, "10.244.0.0/16");
    const labRules = kubeProxyRules(lab.objects.services, lab.objects.endpointSlices, "10.244.0.0/16");
    const specs: [string, Parameters<typeof startFakeNode>[1]][] = [
      ["k8s-guide-control-plane", { rules: { text: webRules, backend: "nft" }, proxyMode: "iptables" }],
      ["k8s-guide-worker", { rules: { text: webRules, backend: "nft" }, proxyMode: "iptables" }],
      ["k8s-guide-worker2", { rules: { text: webRules, backend: "nft" }, proxyMode: "iptables" }],
      ["k8s1", { rules: { text: seed, backend: "legacy" }, proxyMode: "iptables" }],
      ["k8s2", { rules: { text: labRules, backend: "nft" } }],
    ];
    for (const [name, o] of specs) nodes.set(name, await startFakeNode(name, o));
    cli = await buildCli();
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const n of nodes.values()) await n.stop();
    cli?.remove();
  });

  async function cluster(o: FakeApiOptions = {}): Promise<FakeApiServer> {
    const s = await startFakeApiServer({
      objects: web.objects,
      ...o,
      exec: { netnsFor: (n) => nodes.get(n)?.netns.name, noShell: (_ns, pod) => pod === "kube-proxy-k8s-guide-worker2" || pod === "kube-proxy-k8s2", ...o.exec },
    });
    servers.push(s);
    return s;
  }

  const SMALL_SAVE = "iptables-nft-save | awk: the chains of the Service's packets (nat KUBE-SERVICES holds 2 rules, fewer than 500: one save costs less than listing chain by chain)";

  it("svc/web: kube-proxy pod on one node, debug pod on the other (its kube-proxy image has no shell), v5 exec", async () => {
    const s = await cluster();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "-o", "json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const rep = JSON.parse(r.stdout) as ServiceReport;
    expect(rep.nodes.map((n) => [n.node, n.source, n.proxyMode.mode])).toEqual([
      // a question about one Service collects the chains of its packets (issue 12); on the nft backend, with so few
      // Services, from one save filtered on the node (chain by chain from CHAIN_WALK_FROM Service rules)
      ["k8s-guide-worker", `kube-proxy-pod: kube-proxy-k8s-guide-worker: iptables nft backend (kubelet chain found by iptables-nft -t mangle -S); iptables-save via ${SMALL_SAVE}`, "iptables"],
      [
        "k8s-guide-worker2",
        `debug-pod: iptables nft backend (kubelet chain found by iptables-nft -t mangle -S); iptables-save via ${SMALL_SAVE}; image ${DEFAULT_IMAGE}; ` +
        `why not the kube-proxy pod: its image cannot run the collection script (OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": executable file not found in $PATH: unknown)`,
        "iptables",
      ],
    ]);
    for (const n of rep.nodes) {
      expect(n.error).toBeUndefined();
      expect(n.drift).toEqual([]);
      const [clusterIP, nodePort] = n.ports[0]!.entryPoints;
      expect(clusterIP!.destination).toBe("10.96.119.228:80/tcp");
      expect(clusterIP!.balancing.shares.map((x) => [x.endpoint, x.share])).toEqual([["10.244.1.6:80", 0.5], ["10.244.2.4:80", 0.5]]);
      expect(nodePort!.kind).toBe("NodePort");
      expect(nodePort!.clients.find((c) => c.client === "external")!.masquerade).toBe("always");
    }
    // the debug pod lived and died; the kube-proxy pod was used read-only
    expect(s.debugPods()).toEqual([]);
    const execs = s.requests.filter((x) => x.kind === "exec").map((x) => x.path.split("/")[6]);
    expect(execs.slice(0, 2).sort()).toEqual(["kube-proxy-k8s-guide-worker", "kube-proxy-k8s-guide-worker2"]);
    expect(execs[2]).toMatch(/^kubectl-netpath-k8s-guide-worker2-[a-z0-9]{5}$/);
    expect(s.requests.filter((x) => x.method === "POST" && x.path.endsWith("/pods")).length).toBe(1);
    expect(s.requests.filter((x) => x.method === "DELETE").length).toBe(1);
  });

  it("--via kube-proxy: the node whose kube-proxy pod can collect answers, the other says why; no pod is created", async () => {
    const s = await cluster({ denials: [{ verb: "create", resource: "pods", namespace: "kube-system" }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "-o", "json", "--via", "kube-proxy"]);
    expect(r.code).toBe(1);
    const rep = JSON.parse(r.stdout) as ServiceReport;
    const ok = rep.nodes.find((n) => n.node === "k8s-guide-worker")!;
    expect(ok.error).toBeUndefined();
    expect(ok.source).toMatch(/^kube-proxy-pod: kube-proxy-k8s-guide-worker: /);
    expect(ok.ports[0]!.entryPoints[0]!.balancing.shares.map((x) => [x.endpoint, x.share])).toEqual([["10.244.1.6:80", 0.5], ["10.244.2.4:80", 0.5]]);
    expect(rep.nodes.find((n) => n.node === "k8s-guide-worker2")!.error).toMatch(
      /^the kube-proxy pod cannot collect node k8s-guide-worker2 \(its image cannot run the collection script \(.+\)\), and --via kube-proxy creates no debug pod: run with --via auto to let one collect$/,
    );
    expect(s.requests.filter((x) => x.method === "POST" && x.path.endsWith("/pods"))).toEqual([]);
    expect(s.debugPods()).toEqual([]);
  });

  it("--via debug-pod: a debug pod collects each node, even where the kube-proxy pod could; the same verdicts", async () => {
    const s = await cluster();
    const auto = JSON.parse((await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "-o", "json"])).stdout) as ServiceReport;
    const from = s.requests.length;
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "-o", "json", "--via", "debug-pod"]);
    expect(r.code).toBe(0);
    const rep = JSON.parse(r.stdout) as ServiceReport;
    expect(rep.nodes.map((n) => n.source)).toEqual([
      `debug-pod: iptables nft backend (kubelet chain found by iptables-nft -t mangle -S); iptables-save via ${SMALL_SAVE}; image ${DEFAULT_IMAGE}; why not the kube-proxy pod: --via debug-pod`,
      `debug-pod: iptables nft backend (kubelet chain found by iptables-nft -t mangle -S); iptables-save via ${SMALL_SAVE}; image ${DEFAULT_IMAGE}; why not the kube-proxy pod: --via debug-pod`,
    ]);
    const verdicts = (x: ServiceReport) => x.nodes.map((n) => ({ node: n.node, ports: n.ports, drift: n.drift }));
    expect(verdicts(rep)).toEqual(verdicts(auto));
    const mine = s.requests.slice(from);
    // no exec into the kube-proxy pods: the debug image lacked nothing
    expect(mine.filter((x) => x.kind === "exec").map((x) => x.path.split("/")[6]!.replace(/-[a-z0-9]{5}$/, "")).sort()).toEqual(["kubectl-netpath-k8s-guide-worker", "kubectl-netpath-k8s-guide-worker2"]);
    expect(mine.filter((x) => x.method === "POST" && x.path.endsWith("/pods")).length).toBe(2);
    expect(mine.filter((x) => x.method === "DELETE").length).toBe(2);
    expect(s.debugPods()).toEqual([]);
  });

  it("capture, then --from the capture: the same report, text and JSON; the bundle holds raw sections with exit codes", async () => {
    const s = await cluster();
    const file = join(s.dir, "web.bundle.json");
    const c = await run(["capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "-o", file]);
    expect(c.code).toBe(0);
    const b = decodeBundle(readFileSync(file, "utf8"), file);
    const w1 = b.nodes.find((n) => n.name === "k8s-guide-worker")!;
    expect(w1.sections["iptables-backend"]).toMatchObject({ stdout: "nft\n", exitCode: 0 });
    expect(w1.sections["proxy-mode"]).toMatchObject({ stdout: "iptables", exitCode: 0 });
    expect(w1.sections["iptables-save"]!.stdout).toContain(":KUBE-SVC-");
    // mode first (issue 12): kube-proxy answers /proxyMode iptables, so only what iptables mode programs is listed, whole
    expect(w1.sections["collection-scope"]!.stdout).toContain("scope=node\nmode=iptables\nmode-source=/proxyMode\n");
    expect(w1.sections["collection-scope"]!.stdout).toContain("skipped=nft-text: kube-proxy runs in iptables mode; nft list ruleset would list the iptables-nft tables again\nskipped=ipvsadm: kube-proxy runs in iptables mode\n");
    expect(w1.sections.ipvsadm).toBeUndefined();
    expect(w1.sections["nft-text"]).toBeUndefined();
    expect(w1.sections["iptables-save"]!.command).toBe("iptables-nft-save");
    // each section's time on the node (/proc/uptime, 10 ms steps), none stopped at the default limit (¾ of --timeout)
    expect(w1.sections["iptables-save"]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(Object.values(w1.sections).some((x) => x?.timedOutAfterSeconds !== undefined)).toBe(false);
    for (const fmt of [[], ["-o", "json"]]) {
      // --whole-node: whole tables, as capture collects them (the targeted run's report is compared in
      // tests/targeted_kernel.test.ts)
      const live = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--whole-node", ...fmt]);
      const offline = await run(["svc/web", "-n", "default", "--from", file, ...fmt]);
      expect(live.code).toBe(0);
      // two collections: each section's time on the node (collection[].ms, JSON only) is that run's own
      const untimed = (r: typeof live) => ({ ...r, stdout: r.stdout.replace(/"ms": \d+/g, '"ms": N') });
      expect(untimed(offline)).toEqual(untimed(live));
      if (fmt.length > 0) expect(live.stdout).toMatch(/"section": "iptables-save",\s+"bytes": \d+,\s+"ms": \d+/);
    }
  });

  it("a server that speaks only v4.channel.k8s.io, and client-certificate auth: the same report", async () => {
    const v5 = await cluster();
    const v4 = await cluster({ exec: { protocols: ["v4.channel.k8s.io"] } });
    const a = await run(["svc/web", "-n", "default", "--kubeconfig", v5.kubeconfig]);
    const b = await run(["svc/web", "-n", "default", "--kubeconfig", v4.kubeconfigCert]);
    expect(b).toEqual(a);
    expect(v4.requests.every((x) => x.user === "cert-user")).toBe(true);
  });

  it("iptables-lab: a real v1.22 node dump (legacy backend, via the kube-proxy pod) and a generated nft node (via a debug pod) give the example's verdicts", async () => {
    const s = await cluster({ objects: lab.objects });
    const r = await run(["svc/kube-dns", "-n", "kube-system", "--kubeconfig", s.kubeconfig, "-o", "json"]);
    expect(r.code).toBe(0);
    const live = JSON.parse(r.stdout) as ServiceReport;
    const offline = JSON.parse((await run(["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab", "-o", "json"])).stdout) as ServiceReport;
    const verdicts = (rep: ServiceReport, node: string) =>
      rep.nodes.find((n) => n.node === node)!.ports.map((p) => p.entryPoints.map((e) => ({ dest: e.destination, shares: e.balancing.shares.map((x) => [x.endpoint, x.share]), clients: e.clients.map((c) => [c.client, c.masquerade, c.endpoints.length]) })));
    expect(verdicts(live, "k8s1")).toEqual(verdicts(offline, "k8s1"));
    expect(live.nodes.find((n) => n.node === "k8s1")!.source).toMatch(/^kube-proxy-pod: kube-proxy-k8s1: iptables legacy backend \(.*\); iptables-save via iptables-legacy-save \| awk: the chains of the Service's packets$/);
    expect(live.nodes.find((n) => n.node === "k8s2")!.source).toMatch(/^debug-pod: iptables nft backend/);
    // the rules generated for k8s2 in kube-proxy's layout behave like the real node's
    expect(verdicts(live, "k8s2")).toEqual(verdicts(offline, "k8s1"));
    expect(live.nodes.find((n) => n.node === "k8s2")!.drift).toEqual([]);
  });

  it("--from-pod: the client's node and address, one packet traced", async () => {
    const s = await cluster();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--from-pod", "client", "-o", "json"]);
    expect(r.code).toBe(0);
    const rep = JSON.parse(r.stdout) as ServiceReport;
    expect(rep.nodes.map((n) => n.node)).toEqual(["k8s-guide-worker2"]);
    expect(rep.packet?.map((p) => [p.node, p.source, p.destination])).toEqual([["k8s-guide-worker2", "10.244.2.9", "10.96.119.228:80/tcp"]]);
    expect(rep.packet![0]!.endpoints.map((e) => e.endpoint).sort()).toEqual(["10.244.1.6:80", "10.244.2.4:80"]);
  });

  it("--from-pod --dest at another node's NodePort: the client's node and the destination's are collected, each answers", async () => {
    // kube-proxy takes a NodePort only for packets addressed to the node itself (pkg/proxy/iptables/proxier.go, the
    // "kubernetes service nodeports" rule `-m addrtype --dst-type LOCAL`): worker2 routes the packet out unchanged,
    // worker's rules DNAT it (tests/packet_dest_node_path.test.ts offline); the control plane, with no endpoint, is
    // found among the cluster's Nodes
    const s = await cluster();
    for (const [node, ip] of [["k8s-guide-worker", "192.168.224.4"], ["k8s-guide-control-plane", "192.168.224.2"]] as const) {
      // the node's InternalIP on an interface of its namespace, as on a real node (addrtype LOCAL then matches it)
      const ns = nodes.get(node)!.netns;
      await ns.run(["ip", "-batch", "-"], { input: `link add eth0 type veth peer name peer0\nlink set eth0 up\naddr add ${ip}/24 dev eth0\n` });
      const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--from-pod", "client", "--dest", `${ip}:31730/tcp`, "-o", "json"]).finally(() => ns.run(["ip", "link", "del", "eth0"]));
      expect(r.code, r.stderr).toBe(0);
      const rep = JSON.parse(r.stdout) as ServiceReport;
      expect(rep.nodes.map((n) => n.node)).toEqual(["k8s-guide-worker2", node]);
      const [a, b] = rep.packet!;
      expect([a!.node, a!.source, a!.outcome]).toEqual(["k8s-guide-worker2", "10.244.2.9", "not-handled"]);
      expect(a!.caveats).toContain(
        `${ip} is an address of node ${node} (NodePort 31730/tcp of Service default/web there): k8s-guide-worker2's NodePort rules take only packets addressed to k8s-guide-worker2 itself, so the packet is routed to ${node} as this answer leaves it and handled there by its rules: see node ${node}'s answer below`,
      );
      expect([b!.node, b!.source, b!.outcome, b!.masquerade]).toEqual([node, "10.244.2.9", "forwarded", "always"]);
      expect(b!.endpoints.map((e) => e.endpoint).sort()).toEqual(["10.244.1.6:80", "10.244.2.4:80"]);
      expect(b!.caveats.join("\n")).toContain(`so it reaches ${node} as traced here (node k8s-guide-worker2's answer above traces it on k8s-guide-worker2)`);
    }
  });

  it("progress goes to stderr only when it is a terminal", async () => {
    const s = await cluster();
    const io = captureIo({}, true);
    const code = await runLiveCli(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig], io);
    expect(code).toBe(0);
    const err = io.err.join("");
    expect(err).toContain("node k8s-guide-worker: exec into kube-proxy pod kube-system/kube-proxy-k8s-guide-worker\n");
    expect(err).toMatch(/node k8s-guide-worker2: using a debug pod \(its image cannot run the collection script \(OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": executable file not found in \$PATH: unknown\)\)\n/);
    expect(err).toMatch(new RegExp(`node k8s-guide-worker2: creating debug pod kube-system/kubectl-netpath-k8s-guide-worker2-[a-z0-9]{5} \\(image ${DEFAULT_IMAGE.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\)\n`));
    expect(err).toContain("node k8s-guide-worker2: collecting\n");
    expect(err).toContain("node k8s-guide-worker2: deleting the debug pod\n");
  });

  it("--all-nodes collects every node, at most --parallel at once", async () => {
    const s = await cluster();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--all-nodes", "--parallel", "2", "-o", "json"]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as ServiceReport).nodes.map((n) => n.node)).toEqual(["k8s-guide-control-plane", "k8s-guide-worker", "k8s-guide-worker2"]);
  });

  it("the exec stream cut mid-way: detected, reported, and the partial dump is not analysed", async () => {
    // the whole-node collection's stdout is gzip (the lab node: ~1 kB compressed): cut inside it
    const s = await cluster({ exec: { cutAfterBytes: 400 } });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker", "--whole-node"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("not analysed: the exec in kube-proxy pod kube-proxy-k8s-guide-worker ended before the collection finished (stream cut); sections iptables-save, ip6tables-save, ip-addr, ip-route-local, sysctls are marked truncated and not analysed as complete; run again");
    expect(r.stdout).not.toContain("balancing:");
    // the targeted collection cut in its iptables-save section: the sections it had not begun are marked too
    const cut = await startFakeApiServer({
      objects: web.objects,
      exec: { netnsFor: (n) => nodes.get(n)?.netns.name, cutAfterBytes: 1200 },
    });
    servers.push(cut);
    const t = await run(["svc/web", "-n", "default", "--kubeconfig", cut.kubeconfig, "--node", "k8s-guide-worker"]);
    expect(t.code).toBe(1);
    // an IPv4 Service's question skips ip6tables-save (collection-scope says so): it is not among the sections marked
    expect(t.stdout).toContain("not analysed: the exec in kube-proxy pod kube-proxy-k8s-guide-worker ended before the collection finished (stream cut); sections iptables-save, ip-addr, ip-route-local, sysctls are marked truncated and not analysed as complete; run again");
    const file = join(s.dir, "cut.json");
    await run(["capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker", "-o", file]);
    const node = decodeBundle(readFileSync(file, "utf8"), file).nodes[0]!;
    expect(node.sections["iptables-save"]).toMatchObject({ truncated: true, exitCode: null });
    expect(node.sections["iptables-save"]!.stdout.length).toBeGreaterThan(0);
  });

  it("the exec stream cut before the first section (10 bytes, no Status): the stream is blamed, not the image, and the kube-proxy pod is not given up on", async () => {
    // worker: its kube-proxy pod; worker2: a debug pod (its kube-proxy image has no shell)
    const s = await cluster({ exec: { cutAfterBytes: 10 } });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("not analysed: the exec in kube-proxy pod kube-proxy-k8s-guide-worker ended before the collection began (stream cut after 10 bytes, without the exec's Status); nothing was collected: run again");
    expect(r.stdout).toMatch(/not analysed: the exec in debug pod kubectl-netpath-k8s-guide-worker2-[a-z0-9]{5} ended before the collection began \(stream cut after 10 bytes, without the exec's Status\); nothing was collected: run again/);
    expect(r.stdout + r.stderr).not.toMatch(/cannot run the collection script|--image/);
    // no debug pod for the node whose kube-proxy pod's stream was cut
    expect(s.requests.filter((x) => x.method === "POST" && x.path.endsWith("/pods")).length).toBe(1);
  });

  it("kubectl's plugin dispatch: `kubectl netpath svc/web --whole-node` prints the same report as --from the captured bundle", async () => {
    const kubectl = findTool("kubectl");
    expect(kubectl, "kubectl must be installed (scripts/ci-setup.sh)").toBeDefined();
    const s = await cluster();
    const env = { ...process.env, PATH: `${cli!.binDir}:${process.env.PATH}`, KUBECONFIG: s.kubeconfig, NO_COLOR: "1" };
    const list = await exec(kubectl!, ["plugin", "list"], env);
    expect(list.stdout).toContain(join(cli!.binDir, "kubectl-netpath"));
    const file = join(s.dir, "dispatch.json");
    const cap = await exec(kubectl!, ["netpath", "capture", "svc/web", "-n", "default", "-o", file], env);
    expect(cap.status, cap.stderr).toBe(0);
    const live = await exec(kubectl!, ["netpath", "svc/web", "-n", "default", "--whole-node"], env);
    expect(live.status, live.stderr).toBe(0);
    const offline = await exec(kubectl!, ["netpath", "svc/web", "-n", "default", "--from", file], env);
    expect(offline.status).toBe(0);
    expect(live.stdout).toBe(offline.stdout);
    expect(live.stdout).toContain("Node k8s-guide-worker2 — kube-proxy mode iptables");
    expect(s.debugPods()).toEqual([]);
  });

  it("the same end-to-end run under Deno", async () => {
    const s = await cluster();
    const node = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig]);
    const deno = await exec("node_modules/.bin/deno", ["run", "-A", "--quiet", "src/cli/main.ts", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig], { ...process.env, NO_COLOR: "1", COLUMNS: "1000" });
    // Deno may print Node deprecation notices of dependencies (DEP0040 punycode); nothing else
    expect(deno.stderr.split("\n").filter((l) => l !== "" && !/DeprecationWarning|--trace-deprecation/.test(l))).toEqual([]);
    expect(deno.status).toBe(0);
    expect(deno.stdout).toBe(node.stdout);
    expect(s.debugPods()).toEqual([]);
  }, 180_000);
});
