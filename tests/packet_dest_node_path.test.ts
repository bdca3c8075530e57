// `--dest` at another node's address (its NodePort): the packet is first handled on the source's node A, whose NodePort
// rules take only packets addressed to A itself (pkg/proxy/iptables/proxier.go syncProxyRules: the "kubernetes service
// nodeports" rule is `-m addrtype --dst-type LOCAL`; nftables: `fib daddr type local`), so A routes it out unchanged
// and node B's rules DNAT it. An offline `--from-pod` traced only the pod's node A, and A's answer told the user to run
// `--node B`; now B is traced too when the bundle holds its capture, A's caveat points to B's answer and B's says the
// packet arrives from A untranslated. Without B's capture, A's caveat stays as it was.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { encodeBundle } from "../src/bundle/decode.ts";
import type { CliIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/program.ts";
import type { Pod } from "../src/model/k8s.ts";
import type { PacketAnswer } from "../src/service/report.ts";
import { bundleOf, node, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";

const web = service("shop", "web", { type: "NodePort", clusterIP: "10.96.10.10", clusterIPs: ["10.96.10.10"], selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: 8080, nodePort: 31730, protocol: "TCP" }] } as never);
// the endpoint is on a third node: B's NodePort DNATs to it (and masquerades: the packet came from outside B)
const eps = slice("shop", "web", [{ ip: "10.244.3.10", node: "nc" }], [{ name: "http", port: 8080 }]);
const rules = kubeProxyRules([web], [eps], "10.244.0.0/16");
const client: Pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "client", namespace: "shop" },
  spec: { nodeName: "na", containers: [{ name: "c" }] },
  status: { phase: "Running", podIP: "10.244.1.5", podIPs: [{ ip: "10.244.1.5" }] },
} as never;

const T = mkdtempSync(join(tmpdir(), "netpath-dest-node-"));
afterAll(() => rmSync(T, { recursive: true, force: true }));

/** A bundle of nodes na (the client's) and nc (the endpoint's), with nb's capture when `withB` (cut short: `"cut"`). */
function bundleFile(withB: boolean | "cut"): string {
  const b = bundleOf({ dump: rules, nodeName: "na", nodeIP: "172.18.0.2", services: [web], slices: [eps], clusterCIDRs: ["10.244.0.0/16"] });
  b.objects.nodes.push(node("nb", "172.18.0.3"), node("nc", "172.18.0.4"));
  b.objects.pods.push(client);
  // "cut": nb's dump ends inside a table (a truncated collection): nb is in the report with its error, and no answer
  if (withB) b.nodes.push({ name: "nb", sections: { "iptables-save": { stdout: withB === "cut" ? rules.slice(0, rules.lastIndexOf("COMMIT")) : rules, exitCode: 0 } } });
  b.nodes.push({ name: "nc", sections: { "iptables-save": { stdout: rules, exitCode: 0 } } });
  const file = join(T, `bundle-${withB === "cut" ? "acut" : withB ? "ab" : "a"}.json`);
  writeFileSync(file, encodeBundle(b, "json"));
  return file;
}

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: process.cwd() };
  return { code: await runCli(args, io), out, err };
}

const ask = async (file: string, extra: string[] = []) => {
  const r = await run(["svc/web", "-n", "shop", "--from", file, "--from-pod", "client", "--dest", "172.18.0.3:31730/tcp", "-o", "json", ...extra]);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out) as { nodes: { node: string }[]; packet: PacketAnswer[] };
};

describe("--from-pod --dest at another node's NodePort, offline", () => {
  it("traces the packet on the pod's node and on the destination's node: routed out of A unchanged, DNATed by B", async () => {
    const r = await ask(bundleFile(true));
    expect(r.nodes.map((n) => n.node)).toEqual(["na", "nb"]);
    const [a, b] = r.packet;
    expect([a!.node, a!.outcome, a!.endpoints]).toEqual(["na", "not-handled", []]);
    expect(a!.caveats).toContain(
      "172.18.0.3 is an address of node nb (NodePort 31730/tcp of Service shop/web there): na's NodePort rules take only packets addressed to na itself, so the packet is routed to nb as this answer leaves it and handled there by its rules: see node nb's answer below",
    );
    expect([b!.node, b!.source, b!.outcome, b!.endpoints.map((e) => e.endpoint), b!.masquerade]).toEqual(["nb", "10.244.1.5", "forwarded", ["10.244.3.10:8080"], "always"]);
    expect(b!.paths!.map((p) => p.dnatTo)).toEqual(["10.244.3.10:8080"]);
    const from = b!.caveats.find((c) => c.startsWith("10.244.1.5 is pod client on node na"));
    expect(from).toBe(
      "10.244.1.5 is pod client on node na: na's kube-proxy rules leave its packet to 172.18.0.3, an address of nb and none of Service shop/web's, untranslated (they take a NodePort only at na's own addresses), so it reaches nb as traced here (node na's answer above traces it on na); rules outside kube-proxy's on na that masquerade pod traffic leaving the node (a CNI's, ip-masq-agent's) would make its source na's address instead",
    );
    expect([...a!.caveats, ...b!.caveats].join("\n")).not.toMatch(/use --node nb|as if it entered/);
  });

  it("a bundle without the destination's node: the pod's node alone; the caveat says nb's rules were not collected (--node nb on this bundle fails)", async () => {
    const r = await ask(bundleFile(false));
    expect(r.nodes.map((n) => n.node)).toEqual(["na"]);
    expect(r.packet[0]!.caveats).toContain(
      "172.18.0.3 is an address of node nb (NodePort 31730/tcp of Service shop/web there): na's NodePort rules take only packets addressed to na itself, so the packet is routed to nb as this answer leaves it and handled there by its rules (nb's rules were not collected: --node nb traces it there on a live run, or on a bundle that holds nb)",
    );
    // following it on this bundle: nb has no capture (exit 1), which is why the caveat does not send the user there
    const again = await run(["svc/web", "-n", "shop", "--from", bundleFile(false), "--from-pod", "client", "--dest", "172.18.0.3:31730/tcp", "--node", "nb"]);
    expect(again.code).toBe(1);
  });

  it("the destination's node in the report without an answer (its dump cut): A's caveat names --node, not an answer that is not there", async () => {
    const r = await run(["svc/web", "-n", "shop", "--from", bundleFile("cut"), "--from-pod", "client", "--dest", "172.18.0.3:31730/tcp", "-o", "json"]);
    const rep = JSON.parse(r.out) as { nodes: { node: string; error?: string }[]; packet: PacketAnswer[] };
    expect(rep.nodes.map((n) => [n.node, n.error !== undefined])).toEqual([["na", false], ["nb", true]]);
    expect(rep.packet.map((p) => p.node)).toEqual(["na"]);
    expect(rep.packet[0]!.caveats).toContain(
      "172.18.0.3 is an address of node nb (NodePort 31730/tcp of Service shop/web there): na's NodePort rules take only packets addressed to na itself, so the packet is routed to nb as this answer leaves it and handled there by its rules (use --node nb to trace it there)",
    );
    expect(rep.packet[0]!.caveats.join("\n")).not.toContain("nb's answer");
  });

  it("a packet to the ClusterIP from a pod of na, traced on every node: the other nodes' answers point to na's, where it starts", async () => {
    const r = await run(["svc/web", "-n", "shop", "--from", bundleFile(true), "--source", "10.244.1.5", "--dest", "10.96.10.10:80/tcp", "-o", "json"]);
    const rep = JSON.parse(r.out) as { packet: PacketAnswer[] };
    expect(rep.packet.map((p) => p.node)).toEqual(["na", "nb", "nc"]);
    for (const p of rep.packet.slice(1)) {
      expect(p.caveats).toContain(
        `10.244.1.5 is pod client on node na: its packets are first handled by na's rules, not ${p.node}'s; this answer is for the packet as if it entered ${p.node} (node na's answer above traces it where it starts)`,
      );
    }
    expect(rep.packet[0]!.caveats.join("\n")).not.toContain("as if it entered");
  });

  it("--node chosen explicitly: no node is added", async () => {
    const r = await ask(bundleFile(true), ["--node", "na"]);
    expect(r.nodes.map((n) => n.node)).toEqual(["na"]);
    expect(r.packet[0]!.caveats.join("\n")).toMatch(/\(use --node nb to trace it there\)/);
  });
});
