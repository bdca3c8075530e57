// A debug pod the run cannot delete (RBAC grants create but not delete, and the access review is unavailable), in a
// custom --debug-namespace: the run says how to remove it — `kubectl netpath cleanup -n NS`, since cleanup looks in
// kube-system without -n — and exits 1 though its answer is whole (it left state in the cluster). `cleanup` refused
// the delete does not suggest --no-exec (a flag of runs, meaningless there).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { type FakeNode, startFakeNode } from "./helpers/fake_nodes.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";
import { run } from "./helpers/live_cli.ts";
import { requireNetns } from "./helpers/netns.ts";

const web = readBundle("tests/fixtures/live/web");

describe.runIf(requireNetns(["nc", "curl", "ss"]))("a debug pod left behind in --debug-namespace", () => {
  let node: FakeNode;
  beforeAll(async () => {
    node = await startFakeNode("k8s-guide-worker", { rules: { text: kubeProxyRules(web.objects.services, web.objects.endpointSlices, "10.244.0.0/16"), backend: "nft" } });
  });
  afterAll(async () => {
    await node?.stop();
  });

  it("the run names cleanup -n NS, exits 1, and cleanup's own refusal does not suggest --no-exec", async () => {
    const s = await startFakeApiServer({
      objects: web.objects,
      kubeProxyPods: false,
      denials: [{ verb: "delete", resource: "pods", namespace: "netpath-debug" }],
      faults: [{ path: /selfsubjectaccessreviews$/, status: 500, message: "webhook authorizer unavailable" }],
      exec: { netnsFor: (n) => (n === "k8s-guide-worker" ? node.netns.name : undefined) },
    });
    try {
      const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker", "--debug-namespace", "netpath-debug"]);
      const left = s.debugPods().map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
      expect(left).toHaveLength(1);
      // the answer is whole: the node was analysed
      expect(r.stdout).toContain("Node k8s-guide-worker — kube-proxy mode iptables");
      expect(r.stdout).not.toContain("not analysed");
      const name = left[0]!.split("/")[1]!;
      expect(r.stderr).toContain(
        `warning: could not delete debug pod ${left[0]} (not allowed to delete pods "${name}" in namespace "netpath-debug" (403 Forbidden): RBAC must grant verb "delete" on "pods" in namespace "netpath-debug"); ` +
          "it stops on its own at its deadline (activeDeadlineSeconds) — then remove it with: kubectl netpath cleanup -n netpath-debug\n",
      );
      expect(r.stderr).toContain(`error: the run left debug pod ${left[0]} in the cluster (could not delete it: see the warning above)\n`);
      expect(r.code).toBe(1);

      const c = await run(["cleanup", "--kubeconfig", s.kubeconfig, "-n", "netpath-debug", "--force"]);
      expect(c.code).toBe(1);
      expect(c.stderr).toMatch(/^error: could not delete pod netpath-debug\/kubectl-netpath-k8s-guide-worker-[a-z0-9]{5} \(node k8s-guide-worker, Running\): not allowed to delete pods "[^"]+" in namespace "netpath-debug" \(403 Forbidden\): RBAC must grant verb "delete" on "pods" in namespace "netpath-debug"\n$/);
      expect(c.stderr).not.toContain("--no-exec");
    } finally {
      await s.close();
    }
  });
});
