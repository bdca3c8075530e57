// Why a node's kube-proxy runs without a local-traffic detector. kube-proxy starts each IP family with a no-op
// detector and replaces it (cmd/kube-proxy/app/server_linux.go getLocalDetectors; pkg/proxy/util/localdetector.go
// from v1.33) only for detect-local-mode ClusterCIDR (the default) with a clusterCIDR of that family, NodeCIDR with a
// podCIDR of that family on the Node, and BridgeInterface / InterfaceNamePrefix; any other value logs "Defaulting to
// no-op detect-local". The report said "detect-local-mode ClusterCIDR with clusterCIDR unset" and advised setting
// --cluster-cidr whatever the configuration: wrong advice for a NodeCIDR node without a podCIDR.
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { noDetectorCause } from "../src/service/local_detector.ts";
import { readKubeProxyConfig } from "../src/service/proxy_config.ts";
import type { Node } from "../src/model/k8s.ts";
import { bundleOf, service, slice } from "./helpers/bundles.ts";
import { kubeProxyRules } from "./helpers/fake_node_rules.ts";
import { KUBEADM_DS, kubeadmConfigMap } from "./helpers/kube_proxy_config.ts";

// kubeadm's layout: DaemonSet kube-system/kube-proxy runs --config from ConfigMap kube-proxy (config.conf)
const configMap = (fields: string) => kubeadmConfigMap(`apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: iptables\n${fields}`);

const services = [service("ns1", "svc1", { type: "ClusterIP", clusterIP: "172.30.0.41", ports: [{ name: "p80", port: 80, protocol: "TCP" }] })];
const slices = [slice("ns1", "svc1", [{ ip: "10.180.0.1", node: "node-2" }, { ip: "10.180.2.1", node: "node-1" }], [{ name: "p80", port: 80 }])];
// kube-proxy's rules without a detector: its ClusterIP rule `… ! -s CIDR -j KUBE-MARK-MASQ` is not written
const dump = kubeProxyRules(services, slices, "10.0.0.0/8").split("\n").filter((l) => !/cluster IP" .*-j KUBE-MARK-MASQ$/.test(l)).join("\n");

function bundle(conf: string | undefined, podCIDRs?: string[]): Bundle {
  const b = bundleOf({ dump, nodeName: "node-1", nodeIP: "192.168.0.2", services, slices });
  if (conf !== undefined) {
    b.objects.daemonSets.push(KUBEADM_DS);
    b.objects.configMaps.push(configMap(conf));
  }
  if (podCIDRs) b.objects.nodes[0]!.spec = { ...b.objects.nodes[0]!.spec, podCIDRs };
  return b;
}
const answer = (b: Bundle) => {
  const r = explainService(b, "ns1", "svc1");
  const note = r.nodes[0]!.notes.find((n) => n.startsWith("no local-traffic detector in node-1's rules"));
  const external = r.nodes[0]!.ports[0]!.entryPoints[0]!.clients.find((c) => c.client === "external")!;
  return { note: note ?? "", reason: external.reason };
};

describe("the cause of a node without a local-traffic detector follows kube-proxy's configuration", () => {
  it("the premise: no rule marks ClusterIP traffic for masquerade", () => {
    expect(dump).not.toMatch(/-A KUBE-SVC-\S+ .*KUBE-MARK-MASQ/);
    expect(readKubeProxyConfig(bundle("detectLocalMode: NodeCIDR\n").objects)?.detectLocalMode?.value).toBe("NodeCIDR");
  });

  it("detect-local-mode NodeCIDR and a Node without a podCIDR: the Node's podCIDR is what is missing, not --cluster-cidr", () => {
    const a = answer(bundle("detectLocalMode: NodeCIDR\nclusterCIDR: 10.0.0.0/8\n"));
    expect(a.note).toContain("kube-proxy runs without one (detect-local-mode NodeCIDR (ConfigMap kube-system/kube-proxy");
    expect(a.note).toContain("and Node node-1 has no IPv4 podCIDR (no spec.podCIDRs): pkg/proxy/util/localdetector.go)");
    expect(a.note).toContain("; an IPv4 podCIDR on Node node-1 (assigned by kube-controller-manager's node IPAM, --allocate-node-cidrs) gives it one at kube-proxy's next start");
    expect(a.note).not.toContain("--cluster-cidr");
    expect(a.reason).toContain("the node's rules have no local-traffic detector (detect-local-mode NodeCIDR and Node node-1 has no IPv4 podCIDR)");
  });

  it("detect-local-mode ClusterCIDR (or unset) with clusterCIDR unset: --cluster-cidr gives it one", () => {
    for (const conf of ["detectLocalMode: ClusterCIDR\n", ""]) {
      const a = answer(bundle(conf, ["10.180.2.0/24"]));
      expect(a.note).toMatch(/kube-proxy runs without one \(detect-local-mode ClusterCIDR \((ConfigMap kube-system\/kube-proxy[^)]*|unset: the default)\) with clusterCIDR unset: pkg\/proxy\/util\/localdetector\.go\)/);
      expect(a.note).toContain("; setting kube-proxy's --cluster-cidr (clusterCIDR) to the pods' IPv4 range gives it one");
      expect(a.reason).toContain("(kube-proxy's clusterCIDR is unset)");
    }
  });

  it("clusterCIDR of the other family only (a dual-stack cluster configured with its IPv6 range)", () => {
    const a = answer(bundle("clusterCIDR: fd00:10:244::/56\n"));
    expect(a.note).toContain("with clusterCIDR fd00:10:244::/56 (ConfigMap kube-system/kube-proxy");
    expect(a.note).toContain("none of it IPv4: pkg/proxy/util/localdetector.go)");
    expect(a.reason).toContain("(kube-proxy's clusterCIDR has no IPv4 range)");
  });

  it("a configuration that would give a detector: the running kube-proxy started with another one", () => {
    const a = answer(bundle("detectLocalMode: ClusterCIDR\nclusterCIDR: 10.0.0.0/8\n"));
    expect(a.note).toContain("would give it one (pkg/proxy/util/localdetector.go): the configuration read is not the one this kube-proxy started with (it reads it at start)");
    expect(a.note).toContain("; restarting kube-proxy applies the configuration read");
    expect(a.reason).toContain("(kube-proxy runs with another configuration than the one read)");
  });

  it("no configuration in the bundle: both CIDR causes, unless the Node's podCIDR rules NodeCIDR out", () => {
    const none = answer(bundle(undefined));
    expect(none.note).toContain("(detect-local-mode ClusterCIDR (the default) with no IPv4 clusterCIDR, or NodeCIDR with no IPv4 podCIDR on Node node-1 (no spec.podCIDRs)");
    expect(none.note).toContain("; with ClusterCIDR, setting kube-proxy's --cluster-cidr (clusterCIDR) to the pods' IPv4 range gives it one; with NodeCIDR, an IPv4 podCIDR on Node node-1");
    const withPodCIDR = answer(bundle(undefined, ["10.180.2.0/24"]));
    expect(withPodCIDR.note).toContain("(detect-local-mode ClusterCIDR (the default) with no IPv4 clusterCIDR: pkg/proxy/util/localdetector.go; with NodeCIDR, Node node-1's spec.podCIDRs 10.180.2.0/24 would give it one");
    expect(withPodCIDR.reason).toContain("(kube-proxy's clusterCIDR has no IPv4 range, as far as the bundle tells: its configuration is not in it)");
  });

  it("unit: NodeCIDR with a podCIDR (kube-proxy started before it), an unknown mode, and the IPv6 family", () => {
    const node = (cidrs: string[]) => ({ metadata: { name: "n1" }, spec: { podCIDRs: cidrs } }) as Node;
    const cfg = (mode: string) => ({ mode: { value: "", source: "cm" }, detectLocalMode: { value: mode, source: "cm" }, origin: "cm", notes: [] });
    expect(noDetectorCause(cfg("NodeCIDR"), node(["10.180.2.0/24"]), "n1", 4).short).toBe("kube-proxy started before Node n1 had an IPv4 podCIDR");
    // the IPv6 rules of a Node with an IPv4 podCIDR only: NodeCIDR gives IPv6 no detector
    expect(noDetectorCause(cfg("NodeCIDR"), node(["10.180.2.0/24"]), "n1", 6).short).toBe("detect-local-mode NodeCIDR and Node n1 has no IPv6 podCIDR");
    expect(noDetectorCause(cfg("Bogus"), node([]), "n1", 4).why).toContain('is none of ClusterCIDR, NodeCIDR, BridgeInterface, InterfaceNamePrefix: kube-proxy falls back to no detector ("Defaulting to no-op detect-local"');
  });
});
