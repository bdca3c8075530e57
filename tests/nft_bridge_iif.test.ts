// kube-proxy v1.29–v1.34 in nftables mode with --detect-local-mode=BridgeInterface writes `iif != "cni0"` (ClusterIP
// masquerade) and `iif "cni0"` (external chains' "short-circuit pod traffic"): pkg/proxy/util/localdetector.go
// NewDetectLocalByBridgeInterface, `iifname` only since kubernetes#134024. Read as "not modelled", a pod of the node
// reaching an externalTrafficPolicy Local LoadBalancer IP was answered DROPPED and clients from outside the node
// "not masqueraded". The rulesets are real nft output (tests/fixtures/nftables/bridge-iif/README.md), in both forms a
// bundle can hold (nft -j, and nft list text).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/program.ts";

interface Client { client: string; outcome: string; endpoints?: { endpoint: string; masqueraded?: boolean }[] }
interface Report { nodes: { node: string; notes: string[]; ports: { entryPoints: { kind: string; clients: Client[] }[] }[] }[] }

const FIX = "tests/fixtures/nftables/bridge-iif/TestOverallNFTablesRules-iif";

/** nftables-lab with the iif ruleset, as nft -j (json) or nft list (text). */
function bundle(form: "json" | "text"): string {
  const dir = join(mkdtempSync(join(tmpdir(), "knp-iif-")), "b");
  cpSync("examples/nftables-lab", dir, { recursive: true });
  const node = join(dir, "nodes/test-node");
  if (form === "json") writeFileSync(join(node, "nft-json.txt"), readFileSync(`${FIX}.json`));
  else {
    rmSync(join(node, "nft-json.txt"));
    writeFileSync(join(node, "nft-text.txt"), readFileSync(`${FIX}.nft.txt`));
  }
  return dir;
}

async function report(argv: string[]): Promise<Report> {
  let out = "";
  let err = "";
  const io: CliIo = { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: process.cwd() };
  expect(await runCli([...argv, "-o", "json"], io), err).toBe(0);
  return JSON.parse(out) as Report;
}

const clientsOf = (r: Report, kind: string) => r.nodes[0]!.ports.flatMap((p) => p.entryPoints.filter((e) => e.kind === kind).flatMap((e) => e.clients));
const masq = (cs: Client[], who: string) => cs.find((c) => c.client === who)!.endpoints!.map((e) => e.masqueraded);

describe.each(["json", "text"] as const)("BridgeInterface detector written with iif (nft %s)", (form) => {
  const dir = bundle(form);

  it("the detector is read from the rules: pods of the node are traced arriving on cni0", async () => {
    const r = await report(["svc/svc1", "-n", "ns1", "--from", dir]);
    expect(r.nodes[0]!.notes.join("\n")).toMatch(/local traffic is detected by input interface \(cni0, from the rules/);
  });

  it("ClusterIP: a pod of the node is not masqueraded; a host-network process and a client from outside are", async () => {
    const cs = clientsOf(await report(["svc/svc1", "-n", "ns1", "--from", dir]), "ClusterIP");
    expect(masq(cs, "pod-same-node")).toEqual([false]);
    expect(masq(cs, "host-network")).toEqual([true]);
    expect(masq(cs, "external")).toEqual([true]);
  });

  it("externalTrafficPolicy Local LoadBalancer IP without a local endpoint: a pod of the node is short-circuited to the cluster chain, not dropped", async () => {
    const pod = clientsOf(await report(["svc/svc2", "-n", "ns2", "--from", dir]), "LoadBalancer").find((c) => c.client === "pod-same-node")!;
    expect(pod.outcome).toBe("forwarded");
    expect(pod.endpoints!.map((e) => e.endpoint)).toEqual(["10.180.0.2:80"]);
  });
});
