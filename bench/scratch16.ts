import { spawnSync } from "node:child_process";
import { startFakeApiServer } from "../tests/helpers/fake_apiserver.ts";
import { startFakeNode, type FakeNode } from "../tests/helpers/fake_nodes.ts";
import { kubeProxyRules } from "../tests/helpers/fake_node_rules.ts";
import { spread } from "../tests/helpers/spread_cluster.ts";
import { writeFileSync } from "node:fs";

const n = 16;
const { services: [svc], endpointSlices: [slice], pods, nodes } = spread(n);
const rules = kubeProxyRules([svc!], [slice!], "10.244.0.0/16");
const fake = new Map<string, FakeNode>();
for (const x of nodes) fake.set(x.metadata.name, await startFakeNode(x.metadata.name, { rules: { text: rules, backend: "nft" }, proxyMode: "iptables" }));
const api = await startFakeApiServer({ objects: { services: [svc!], endpointSlices: [slice!], nodes, pods }, exec: { netnsFor: (name) => fake.get(name)?.netns.name } });
writeFileSync("/tmp/h16/kubeconfig", api.kubeconfig);
console.log("ready", api.kubeconfig);
process.on("SIGTERM", async () => { await api.close(); for (const x of fake.values()) await x.stop(); process.exit(0); });
await new Promise(() => {});
