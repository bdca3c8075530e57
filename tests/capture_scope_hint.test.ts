// Audit roundtrip finding 3: `capture --from-pod client` suggested `kubectl netpath svc/web -n shop --from FILE`,
// which asks another question (no packet answer) over nodes the bundle does not hold: the client's node only, while
// the endpoints sit on three nodes. The hint now repeats the capture's scope (--from-pod, --node, --all-nodes: the
// bundle's capture.command), and an offline run of such a bundle without --from-pod says which endpoints' nodes it
// lacks instead of reporting one node as if it were the live answer.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { decodeBundle, encodeBundle } from "../src/bundle/decode.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { bundleOf, node, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";
import { run } from "./helpers/live_cli.ts";

const T = mkdtempSync(join(tmpdir(), "netpath-capture-hint-"));
const servers: FakeApiServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(T, { recursive: true, force: true });
});

describe("capture's 'analyse it with' hint asks the question the bundle was captured for", () => {
  it.each([
    { flags: ["--from-pod", "client"], scope: "--from-pod client" },
    { flags: ["--node", "k8s-guide-worker", "--node", "k8s-guide-worker2"], scope: "--node k8s-guide-worker --node k8s-guide-worker2" },
    { flags: ["--all-nodes"], scope: "--all-nodes" },
    { flags: [], scope: "" },
  ])("capture svc/web $flags", async ({ flags, scope }) => {
    const s = await startFakeApiServer({ objects: readBundle("tests/fixtures/live/web").objects });
    servers.push(s);
    const out = join(T, `web${flags.join("")}.json`);
    const c = await run(["capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", ...flags, "-o", out]);
    expect(c.code).toBe(0);
    const hint = /^analyse it with: (.*)$/m.exec(c.stderr)?.[1];
    expect(hint).toBe(`kubectl netpath svc/web -n default${scope ? ` ${scope}` : ""} --from ${out}`);
    // the bundle's own record of the question, less the collection-only --no-exec
    const b = decodeBundle(readFileSync(out, "utf8"), out);
    expect(`${b.capture.command!.replace(" --no-exec", "")} --from ${out}`).toBe(hint);
  });
});

describe("an offline run without --from-pod of a bundle captured with --from-pod names the endpoints' nodes it lacks", () => {
  const web = service("shop", "web", { type: "NodePort", clusterIP: "10.96.10.10", clusterIPs: ["10.96.10.10"], ports: [{ name: "http", port: 80, targetPort: 8080, nodePort: 30080, protocol: "TCP" }] } as never);
  const eps = slice("shop", "web", [{ ip: "10.244.1.10", node: "na" }, { ip: "10.244.2.10", node: "nb" }, { ip: "10.244.3.10", node: "nc" }], [{ name: "http", port: 8080 }]);
  const rules = kubeProxyRules([web], [eps], "10.244.0.0/16");
  /** `capture svc/web` with --from-pod of a client on nb: the Nodes of the endpoints, the rules of nb alone. */
  function bundle(command: string, captured: string[]): string {
    const b: Bundle = bundleOf({ dump: rules, nodeName: "na", nodeIP: "192.168.50.11", services: [web], slices: [eps], clusterCIDRs: ["10.244.0.0/16"] });
    b.objects.nodes.push(node("nb", "192.168.50.12"), node("nc", "192.168.50.13"));
    b.nodes = ["na", "nb", "nc"].filter((n) => captured.includes(n)).map((name) => ({ name, sections: { "iptables-save": { stdout: rules, exitCode: 0 } } }));
    b.capture.command = command;
    const f = join(T, `${command.replace(/\W+/g, "-")}-${captured.join("")}.json`);
    writeFileSync(f, encodeBundle(b, "json"));
    return f;
  }

  it("captured with --from-pod client (nb only): a limit and a warning name na and nc and the flag to add", async () => {
    const f = bundle("kubectl netpath svc/web -n shop --from-pod client", ["nb"]);
    const r = await run(["svc/web", "-n", "shop", "--from", f, "-o", "json"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { nodes: { node: string }[]; limits: string[] };
    expect(report.nodes.map((n) => n.node)).toEqual(["nb"]);
    const why = "this bundle was captured with --from-pod client (capture.command: kubectl netpath svc/web -n shop --from-pod client), which collects that pod's node only: add --from-pod client for its packet's answer, or capture without it to check them";
    expect(report.limits).toContain(`the rules of nodes na, nc, which host endpoints: ${why}`);
    expect(r.stderr).toBe(`warning: nodes na, nc host endpoints but are not in the bundle, not analysed: ${why}\n`);
  });

  it("captured with --node nb: said with that flag", async () => {
    const f = bundle("kubectl netpath svc/web -n shop --node nb", ["nb"]);
    const r = await run(["svc/web", "-n", "shop", "--from", f]);
    expect(r.stderr).toBe("warning: nodes na, nc host endpoints but are not in the bundle, not analysed: this bundle was captured with --node (capture.command: kubectl netpath svc/web -n shop --node nb), which collects those nodes only: capture without --node to check them\n");
  });

  it("a hand-made bundle (no kubectl netpath capture.command) that lacks an endpoint's node says so too", async () => {
    // the README demo's bundle (examples/iptables-lab) holds k8s1's rules, and kube-dns has an endpoint on k8s2: the
    // report of k8s1 alone once came with no word of k8s2
    const why = "the bundle holds no dump of them (nodes/<node>/iptables-save.txt…, docs/bundle.md): add their dumps, or capture the Service with kubectl netpath capture, to check them";
    const r = await run(["svc/web", "-n", "shop", "--from", bundle("kubectl get services,endpointslices,nodes -o yaml; iptables-save", ["nb"]), "-o", "json"]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { limits: string[] }).limits).toContain(`the rules of nodes na, nc, which host endpoints: ${why}`);
    // the maker chose the nodes: a limit of the report, no warning on stderr
    expect(r.stderr).toBe("");
    const demo = await run(["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab", "-o", "json"]);
    expect(demo.code).toBe(0);
    expect((JSON.parse(demo.stdout) as { limits: string[] }).limits).toContain(
      "the rules of node k8s2, which hosts endpoints: the bundle holds no dump of it (nodes/<node>/iptables-save.txt…, docs/bundle.md): add its dump, or capture the Service with kubectl netpath capture, to check it",
    );
  });

  it("every endpoint's node in the bundle, or --node asked for: nothing added", async () => {
    const whole = await run(["svc/web", "-n", "shop", "--from", bundle("kubectl netpath svc/web -n shop", ["na", "nb", "nc"]), "-o", "json"]);
    expect([whole.code, whole.stderr]).toEqual([0, ""]);
    expect((JSON.parse(whole.stdout) as { limits: string[] }).limits.filter((l) => l.includes("which host endpoints"))).toEqual([]);
    const asked = await run(["svc/web", "-n", "shop", "--from", bundle("kubectl netpath svc/web -n shop --from-pod client", ["nb"]), "--node", "nb"]);
    expect(asked.stderr).toBe("");
  });
});
