// An endpoint on one of the node's own addresses (a host-network pod there: the apiserver behind `kubernetes` on a
// control-plane node, a host-network ingress controller). A packet from the network DNATed in PREROUTING to it is
// routed to INPUT and delivered: it never meets nat POSTROUTING, so the KUBE-MARK-MASQ / mark-for-masquerade mark it
// carries masquerades nothing and the endpoint sees the client's own address (checked in the kernel, iptables and
// nftables, by the audit that found it: conntrack showed the reply to the client's address). A host-network client of
// the node still passes POSTROUTING (locally generated packets do) and is masqueraded by the mark.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/program.ts";

interface Client { client: string; description: string; outcome: string; endpoints?: { endpoint: string; masqueraded?: boolean }[]; caveats?: string[]; reason?: string }
interface Report { nodes: { node: string; ports: { entryPoints: { kind: string; clients: Client[] }[] }[] }[] }

async function report(argv: string[]): Promise<Report> {
  let out = "";
  let err = "";
  const io: CliIo = { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: process.cwd() };
  const code = await runCli([...argv, "-o", "json"], io);
  expect(code, err).toBe(0);
  return JSON.parse(out) as Report;
}

/** A copy of an example bundle with every occurrence of `from` in the named files replaced by `to`. */
function moved(example: string, files: string[], from: string, to: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), "knp-local-ep-")), "b");
  cpSync(example, dir, { recursive: true });
  for (const f of files) {
    const text = readFileSync(join(dir, f), "utf8");
    expect(text, f).toContain(from);
    writeFileSync(join(dir, f), text.split(from).join(to));
  }
  return dir;
}

const clients = (r: Report, kind: string) => r.nodes[0]!.ports.flatMap((p) => p.entryPoints.filter((e) => e.kind === kind).flatMap((e) => e.clients));

describe("iptables mode: the kubernetes Service's endpoint on the node's own InternalIP", () => {
  // iptables-lab's apiserver endpoint 192.168.100.1 moved onto k8s1 (10.210.40.172), in the rules and the EndpointSlice
  const lab = moved("examples/iptables-lab", ["nodes/k8s1/iptables-save.txt", "endpointslices.yaml"], "192.168.100.1", "10.210.40.172");

  it("a client from outside the cluster CIDR is marked but not masqueraded, and the answer says why", async () => {
    const before = clients(await report(["svc/kubernetes", "-n", "default", "--from", "examples/iptables-lab", "--node", "k8s1"]), "ClusterIP");
    const after = clients(await report(["svc/kubernetes", "-n", "default", "--from", lab, "--node", "k8s1"]), "ClusterIP");
    const ext = (cs: Client[]) => cs.find((c) => c.client === "external")!;
    expect(ext(before).endpoints![0]!.masqueraded).toBe(true); // a remote endpoint: POSTROUTING masquerades
    expect(ext(after).endpoints).toEqual([expect.objectContaining({ endpoint: "10.210.40.172:6443", masqueraded: false })]);
    expect(JSON.stringify(ext(after))).toContain("never reaches nat POSTROUTING");
  });

  it("a host-network process of the node is still masqueraded (locally generated packets pass POSTROUTING)", async () => {
    const host = clients(await report(["svc/kubernetes", "-n", "default", "--from", lab, "--node", "k8s1"]), "ClusterIP").find((c) => c.client === "host-network")!;
    expect(host.outcome).toBe("forwarded");
    expect(host.endpoints![0]!.masqueraded).toBe(true);
  });
});

describe("nftables mode: svc3's endpoint on the node's own address", () => {
  // nftables-lab (kube-proxy's TestOverallNFTablesRules read back from real nft): svc3's endpoint 10.180.0.3 moved
  // onto test-node's address 192.168.0.2
  const lab = moved("examples/nftables-lab", ["nodes/test-node/nft-json.txt", "endpointslices.yaml"], "10.180.0.3", "192.168.0.2");

  it("NodePort from outside: delivered to the node, not masqueraded, and the answer says why", async () => {
    const before = clients(await report(["svc/svc3", "-n", "ns3", "--from", "examples/nftables-lab"]), "NodePort").find((c) => c.client === "external")!;
    const after = clients(await report(["svc/svc3", "-n", "ns3", "--from", lab]), "NodePort").find((c) => c.client === "external")!;
    expect(before.endpoints![0]!.masqueraded).toBe(true);
    expect(after.endpoints).toEqual([expect.objectContaining({ endpoint: "192.168.0.2:80", masqueraded: false })]);
    expect(JSON.stringify(after)).toContain("never reaches nat-postrouting");
  });
});
