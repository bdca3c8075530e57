// The two live-collection paths that need a node environment the other suites do not build:
// 1. a node whose kube-proxy uses the legacy iptables backend, collected by a debug pod whose image (like
//    nicolaka/netshoot) has no iptables-legacy: with --profile sysadmin the host's iptables-legacy-save runs through
//    `chroot /host`; with the default netadmin profile the report says to use the kube-proxy pod or --profile sysadmin;
// 2. an IPVS node whose kube-proxy image lacks ipvsadm: collection falls back to a debug pod, whose `ipvsadm -Ln`
//    fails here (no IP_VS in this kernel), and that failure is a finding with its exit status.
//
// Each pod's exec environment is made from the pod the fake API server stores: its image decides PATH (a directory
// of symlinks to the tools that image has), and a pod that mounts hostPath "/" at /host (profile sysadmin) runs the
// script under `unshare --mount` with the machine's root bound (rbind, read-only, as the kubelet mounts a hostPath
// volume) at /host, in a private mount namespace. The environment is chosen when the fake server records the exec
// request, which it does synchronously before spawning the command.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_IMAGE } from "../src/kube/debug_pod.ts";
/** The default debug image as a regular expression source. */
const IMG = DEFAULT_IMAGE.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
import { decodeBundle } from "../src/bundle/decode.ts";
import type { ServiceReport } from "../src/service/report.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import type { Pod } from "../src/model/k8s.ts";
import { type FakeApiOptions, type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { type FakeNode, startFakeNode } from "./helpers/fake_nodes.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";
import { captureIo, run, runLiveCli } from "./helpers/live_cli.ts";
import { findTool, requireNetns } from "./helpers/netns.ts";

const lab = readBundle("examples/iptables-lab");
const seed = readFileSync("tests/fixtures/seeds/001-k8s1.iptables-save", "utf8");

/** Tools of a netshoot-like debug image: iptables with the nft backend only, no iptables-legacy. */
const NETSHOOT_TOOLS = ["grep", "awk", "sed", "tr", "chroot", "curl", "iptables-nft", "ip6tables-nft", "iptables-nft-save", "ip6tables-nft-save", "iptables-save", "ip6tables-save", "ipset", "ipvsadm", "nft"];
/** Tools of a kube-proxy image built without ipvsadm. */
const KUBE_PROXY_NO_IPVSADM = ["sh", "grep", "curl", "iptables-nft-save", "ip6tables-nft-save", "iptables-legacy-save", "ip6tables-legacy-save", "ipset", "nft"];

describe.runIf(requireNetns(["nc", "curl", "ss", "ipvsadm", "chroot", "unshare", "mount"]))("live collection: sysadmin chroot /host on a legacy node, IPVS without ipvsadm", () => {
  const nodes = new Map<string, FakeNode>();
  const servers: FakeApiServer[] = [];
  const savedPath = process.env.PATH;
  let work = "";
  let createdHost = false;
  let netshootBin = "";
  let sysadminBin = "";
  let kubeProxyBin = "";

  /** A directory with a symlink per tool (absolute targets, found on this machine). */
  function image(name: string, tools: string[]): string {
    const dir = join(work, name);
    mkdirSync(dir);
    for (const t of tools) {
      const p = findTool(t);
      if (!p) throw new Error(`tool ${t} is not installed`);
      symlinkSync(p, join(dir, t));
    }
    return dir;
  }

  beforeAll(async () => {
    // /host must exist on the real root for the bind mount made inside each sysadmin exec's own mount namespace
    if (!existsSync("/host")) {
      mkdirSync("/host");
      createdHost = true;
    }
    work = mkdtempSync(join(tmpdir(), "knp-sysadmin-"));
    netshootBin = image("netshoot", ["sh", ...NETSHOOT_TOOLS]);
    sysadminBin = image("netshoot-sysadmin", NETSHOOT_TOOLS);
    const [unshare, mount, sh] = ["unshare", "mount", "sh"].map((t) => findTool(t)!);
    writeFileSync(
      join(sysadminBin, "sh"),
      `#!${sh}\nexec ${unshare} --mount --propagation private -- ${sh} -c '${mount} --rbind / /host && ${mount} -o remount,bind,ro /host && exec ${sh} "$@"' sh "$@"\n`,
      { mode: 0o755 },
    );
    kubeProxyBin = image("kube-proxy-no-ipvsadm", KUBE_PROXY_NO_IPVSADM);
    const labRules = kubeProxyRules(lab.objects.services, lab.objects.endpointSlices, "10.244.0.0/16");
    nodes.set("k8s1", await startFakeNode("k8s1", { rules: { text: seed, backend: "legacy" }, proxyMode: "iptables" }));
    nodes.set("k8s2", await startFakeNode("k8s2", { rules: { text: labRules, backend: "nft" }, proxyMode: "ipvs" }));
  });
  afterEach(() => {
    process.env.PATH = savedPath;
  });
  afterAll(async () => {
    process.env.PATH = savedPath;
    for (const s of servers) await s.close();
    for (const n of nodes.values()) await n.stop();
    if (work) rmSync(work, { recursive: true, force: true });
    if (createdHost) rmdirSync("/host");
  });

  /**
   * A cluster with the iptables-lab objects whose execs run in the environment of the pod's image: the debug pod
   * (netshoot; sysadmin when it mounts hostPath "/" at /host), or the kube-proxy pod (`kubeProxyBin` when given,
   * else the machine's PATH).
   */
  async function cluster(o: { kubeProxyBin?: string; noShell?: string[] } = {}, extra: FakeApiOptions = {}): Promise<FakeApiServer> {
    const s = await startFakeApiServer({
      objects: lab.objects,
      ...extra,
      exec: { netnsFor: (n) => nodes.get(n)?.netns.name, noShell: (_ns, pod) => (o.noShell ?? []).includes(pod) },
    });
    servers.push(s);
    s.onRequest((r) => {
      if (r.kind !== "exec") return;
      const [, , , , ns = "", , pod = ""] = r.path.split("/");
      const stored = s.get("pods", ns, pod) as Pod | undefined;
      const spec = stored?.spec as { volumes?: { hostPath?: { path?: string } }[]; containers?: { volumeMounts?: { mountPath?: string }[] }[] } | undefined;
      if (stored?.metadata.labels?.["app.kubernetes.io/managed-by"] === "kubectl-netpath") {
        const hostRoot = spec?.volumes?.some((v) => v.hostPath?.path === "/") && spec.containers?.[0]?.volumeMounts?.some((m) => m.mountPath === "/host");
        process.env.PATH = hostRoot ? sysadminBin : netshootBin;
      } else {
        process.env.PATH = o.kubeProxyBin ?? savedPath;
      }
    });
    return s;
  }

  const verdicts = (rep: ServiceReport, node: string) =>
    rep.nodes.find((n) => n.node === node)!.ports.map((p) =>
      p.entryPoints.map((e) => ({ dest: e.destination, shares: e.balancing.shares.map((x) => [x.endpoint, x.share]), clients: e.clients.map((c) => [c.client, c.masquerade, c.endpoints.length]) }))
    );

  it("--profile sysadmin on a legacy node: the host's iptables-legacy-save through chroot /host, source host-chroot, the example's verdicts", async () => {
    const s = await cluster({ noShell: ["kube-proxy-k8s1"] });
    const file = join(s.dir, "k8s1.bundle.json");
    const args = ["svc/kube-dns", "-n", "kube-system", "--kubeconfig", s.kubeconfig, "--node", "k8s1", "--profile", "sysadmin"];
    const c = await run(["capture", ...args, "-o", file]);
    expect(c.stderr).not.toMatch(/error|warning: node/);
    expect(c.code).toBe(0);
    const node = decodeBundle(readFileSync(file, "utf8"), file).nodes.find((n) => n.name === "k8s1")!;
    expect(node.error).toBeUndefined();
    expect(node.source).toMatchObject({ kind: "host-chroot", namespace: "kube-system", image: DEFAULT_IMAGE });
    expect(node.sections["iptables-backend"]).toMatchObject({ stdout: "legacy\n", exitCode: 0 });
    expect(node.sections["iptables-backend"]!.stderr).toContain("found by chroot /host /usr/sbin/iptables-legacy-save");
    expect(node.sections["iptables-save"]).toMatchObject({ command: "chroot /host /usr/sbin/iptables-legacy-save", exitCode: 0 });
    expect(node.sections["iptables-save"]!.stdout).toContain(":KUBE-SVC-");
    expect(node.sections["proxy-mode"]).toMatchObject({ stdout: "iptables", exitCode: 0 });

    const live = await run([...args, "-o", "json"]);
    expect(live.code).toBe(0);
    const rep = JSON.parse(live.stdout) as ServiceReport;
    const k8s1 = rep.nodes.find((n) => n.node === "k8s1")!;
    expect(k8s1.error).toBeUndefined();
    expect(k8s1.source).toMatch(new RegExp(`^host-chroot: iptables legacy backend \\(.*\\); iptables-save via chroot /host /usr/sbin/iptables-legacy-save \\| awk: the chains of the Service's packets; image ${IMG}; why not the kube-proxy pod: its image cannot run the collection script \\(.+\\)$`));
    // the rules the host binary read are the seed's: the same verdicts as the example's offline bundle of that node
    const offline = JSON.parse((await run(["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab", "-o", "json"])).stdout) as ServiceReport;
    expect(verdicts(rep, "k8s1")).toEqual(verdicts(offline, "k8s1"));
    expect(verdicts(rep, "k8s1").flat().length).toBeGreaterThan(0);
    // and --from the captured bundle gives the same report, text and JSON
    for (const fmt of [[], ["-o", "json"]]) {
      const a = await run([...args, "--whole-node", ...fmt]); // whole tables, as capture collects them
      const b = await run(["svc/kube-dns", "-n", "kube-system", "--node", "k8s1", "--from", file, ...fmt]);
      expect(a.code).toBe(0);
      // two collections: each section's time and size on the node (collection[], JSON only; iptables-save's header
      // carries the time it ran) are each run's own
      const uncosted = (r: typeof a) => ({ ...r, stdout: fmt.length === 0 ? r.stdout : JSON.stringify({ ...JSON.parse(r.stdout), nodes: (JSON.parse(r.stdout) as ServiceReport).nodes.map(({ collection: _, ...n }) => n) }) });
      expect(uncosted(b)).toEqual(uncosted(a));
    }
    // the debug pod was privileged with the host's root read-only at /host, and was deleted
    const created = s.requests.filter((x) => x.method === "POST" && x.path.endsWith("/pods"));
    expect(created.length).toBe(4);
    expect(s.debugPods()).toEqual([]);
    // the bind mount stayed inside the exec's own mount namespace
    expect(readFileSync("/proc/self/mountinfo", "utf8").split("\n").filter((l) => l.split(" ")[4] === "/host")).toEqual([]);
  });

  it("the default netadmin profile on the same legacy node: iptables-save is missing, and the message says to use the kube-proxy pod or --profile sysadmin", async () => {
    const s = await cluster({ noShell: ["kube-proxy-k8s1"] });
    const file = join(s.dir, "k8s1-netadmin.bundle.json");
    const args = ["svc/kube-dns", "-n", "kube-system", "--kubeconfig", s.kubeconfig, "--node", "k8s1"];
    const c = await run(["capture", ...args, "-o", file]);
    expect(c.code).toBe(0);
    const node = decodeBundle(readFileSync(file, "utf8"), file).nodes.find((n) => n.name === "k8s1")!;
    expect(node.source).toMatchObject({ kind: "debug-pod" });
    expect(node.sections["iptables-backend"]!.stdout).toBe("legacy\n");
    expect(node.sections["iptables-save"]).toMatchObject({ command: "iptables-legacy-save", exitCode: 127 });
    const hint = "iptables-legacy-save: not found (the node uses the legacy iptables backend: use the kube-proxy pod, whose image has both backends, or --profile sysadmin to run the host binaries through chroot /host)";
    expect(node.sections["iptables-save"]!.stderr).toBe(`${hint}\n`);
    const live = await run(args);
    expect(live.stdout).toContain(hint);
    expect(live.stdout).not.toContain("balancing:");
    expect(s.debugPods()).toEqual([]);
  });

  it("an IPVS node whose kube-proxy image lacks ipvsadm: a debug pod runs ipvsadm, whose failure is a finding with its exit status", async () => {
    const s = await cluster({ kubeProxyBin });
    const io = captureIo({}, true);
    const file = join(s.dir, "k8s2.bundle.json");
    const code = await runLiveCli(["capture", "svc/kube-dns", "-n", "kube-system", "--kubeconfig", s.kubeconfig, "--node", "k8s2", "-o", file], io);
    expect(code).toBe(0);
    const err = io.err.join("");
    expect(err).toContain("node k8s2: exec into kube-proxy pod kube-system/kube-proxy-k8s2\n");
    expect(err).toContain("node k8s2: using a debug pod (its image lacks ipvsadm)\n");
    const execs = s.requests.filter((x) => x.kind === "exec").map((x) => x.path.split("/")[6]);
    expect(execs[0]).toBe("kube-proxy-k8s2");
    expect(execs[1]).toMatch(/^kubectl-netpath-k8s2-[a-z0-9]{5}$/);
    expect(s.debugPods()).toEqual([]);
    const node = decodeBundle(readFileSync(file, "utf8"), file).nodes.find((n) => n.name === "k8s2")!;
    expect(node.error).toBeUndefined();
    expect(node.source).toMatchObject({ kind: "debug-pod" });
    expect(node.sections["proxy-mode"]).toMatchObject({ stdout: "ipvs", exitCode: 0 });
    expect(node.sections.ipvsadm).toMatchObject({ command: "ipvsadm -Ln --exact", exitCode: 2 });
    expect(node.sections.ipvsadm!.stderr).toContain("Can't initialize ipvs: Protocol not available");

    const live = await run(["svc/kube-dns", "-n", "kube-system", "--kubeconfig", s.kubeconfig, "--node", "k8s2", "-o", "json"]);
    expect(live.stderr).not.toMatch(/error|warning: node/);
    const rep = JSON.parse(live.stdout) as ServiceReport;
    const k8s2 = rep.nodes.find((n) => n.node === "k8s2")!;
    expect(k8s2.proxyMode.mode).toBe("ipvs");
    expect(live.code).toBe(0);
    expect(k8s2.error).toBeUndefined();
    expect(k8s2.source).toMatch(new RegExp(`^debug-pod: .*; image ${IMG}; why not the kube-proxy pod: its image lacks ipvsadm$`));
  });
});
