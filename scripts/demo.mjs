// `npm run demo`: the main job on the shipped example bundles (built from the seeds' real dumps).
import { spawnSync } from "node:child_process";

const runs = [
  ["# kube-dns on node k8s1 of seed 001 (iptables mode): balancing, masquerade per client, drift",
    ["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab"]],
  ["# One packet: a pod at 10.244.1.7 asking kube-dns over UDP",
    ["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab", "--source", "10.244.1.7", "--dest", "10.96.0.10:53/udp"]],
];
const extra = [
  ["examples/ipvs-lab", ["svc/kube-dns", "-n", "kube-system", "--from", "examples/ipvs-lab"], "# kube-dns on an IPVS node (seed 000): scheduler, real servers, ipsets, KUBE-LOOP-BACK hairpin"],
  ["examples/lb-legacy", ["svc/testsvc", "--from", "examples/lb-legacy"], "# A pre-1.24 LoadBalancer with 7 endpoints (seed 004): the probability cascade"],
  ["examples/nftables-lab", ["svc/svc4", "-n", "ns4", "--from", "examples/nftables-lab"], "# Service ns4/svc4 in kube-proxy nftables mode (TestOverallNFTablesRules): numgen shares, masquerade per client, hairpin"],
  ["examples/azure-zones", ["pod/busybox", "--why-pending", "--from", "examples/azure-zones"], "# Why is pod busybox Pending? (seed 000, Azure zones)"],
  ["examples/scheduling", ["pod/web-7d9f-3", "-n", "shop", "--why-pending", "--from", "examples/scheduling"], "# A replica Pending on topology spread and memory (hand-made bundle: PodTopologySpread, NodeResourcesFit)"],
];
import { existsSync } from "node:fs";
for (const [dir, args, title] of extra) if (existsSync(dir)) runs.push([title, args]);

let failed = 0;
for (const [title, args] of runs) {
  process.stdout.write(`\n${title}\n$ kubectl netpath ${args.join(" ")}\n\n`);
  const r = spawnSync(process.execPath, ["dist/kubectl-netpath.cjs", ...args], { stdio: "inherit" });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
