// Why a node's kube-proxy runs without a local-traffic detector. kube-proxy starts each IP family with a no-op
// detector and replaces it (cmd/kube-proxy/app/server_linux.go getLocalDetectors; pkg/proxy/util/localdetector.go
// from v1.33) only for detect-local-mode ClusterCIDR (the default) with a clusterCIDR of that family, NodeCIDR with a
// podCIDR of that family on the Node, and BridgeInterface / InterfaceNamePrefix; any other value logs "Defaulting to
// no-op detect-local" — but such a value fails validation (validateDetectLocalMode), and with NodeCIDR kube-proxy
// writes no rule before the Node has a podCIDR (waitForPodCIDR) and restarts when it changes. The report said
// "detect-local-mode ClusterCIDR with clusterCIDR unset" and advised setting --cluster-cidr whatever the configuration:
// wrong advice for a NodeCIDR node without a podCIDR of the family.
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { readBundle } from "../src/io/read_bundle.ts";
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

  it("detect-local-mode NodeCIDR and a Node with an IPv6 podCIDR only: its IPv4 podCIDR is what is missing, not --cluster-cidr", () => {
    const a = answer(bundle("detectLocalMode: NodeCIDR\nclusterCIDR: 10.0.0.0/8\n", ["fd00:10:244:2::/64"]));
    expect(a.note).toContain("kube-proxy runs without one (detect-local-mode NodeCIDR (ConfigMap kube-system/kube-proxy");
    expect(a.note).toContain("and Node node-1 has no IPv4 podCIDR (spec.podCIDRs fd00:10:244:2::/64): pkg/proxy/util/localdetector.go)");
    expect(a.note).toContain("; an IPv4 podCIDR on Node node-1 gives it one (kube-proxy restarts when the Node's podCIDRs change)");
    expect(a.note).not.toContain("--cluster-cidr");
    expect(a.reason).toContain("the node's rules have no local-traffic detector (detect-local-mode NodeCIDR and Node node-1 has no IPv4 podCIDR)");
  });

  it("detect-local-mode NodeCIDR and a Node without any podCIDR: that kube-proxy would write no rule, so another configuration runs", () => {
    const a = answer(bundle("detectLocalMode: NodeCIDR\n"));
    expect(a.note).toContain("kube-proxy writes no rule before Node node-1 has a podCIDR (waitForPodCIDR), and it has none: the configuration read is not the one the running kube-proxy uses (it reads it at start)");
    expect(a.reason).toContain("(kube-proxy runs with another configuration than the one read)");
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
    expect(a.note).toContain("would give it one (pkg/proxy/util/localdetector.go): the configuration read is not the one the running kube-proxy uses (it reads it at start)");
    expect(a.note).toContain("; restarting kube-proxy applies the configuration read");
    expect(a.reason).toContain("(kube-proxy runs with another configuration than the one read)");
  });

  it("no configuration in the bundle: both CIDR causes where the Node allows NodeCIDR's, else ClusterCIDR's", () => {
    // a Node with a podCIDR of the other family only: NodeCIDR would leave IPv4 without a detector too
    const both = answer(bundle(undefined, ["fd00:10:244:2::/64"]));
    expect(both.note).toContain("(detect-local-mode ClusterCIDR (the default) with no IPv4 clusterCIDR, or NodeCIDR with no IPv4 podCIDR on Node node-1 (spec.podCIDRs fd00:10:244:2::/64)");
    expect(both.note).toContain("; with ClusterCIDR, setting kube-proxy's --cluster-cidr (clusterCIDR) to the pods' IPv4 range gives it one; with NodeCIDR, an IPv4 podCIDR on Node node-1");
    // no podCIDR at all: a NodeCIDR kube-proxy would not have written these rules
    const none = answer(bundle(undefined));
    expect(none.note).toContain("(detect-local-mode ClusterCIDR (the default) with no IPv4 clusterCIDR: pkg/proxy/util/localdetector.go; with NodeCIDR, kube-proxy writes no rule before Node node-1 has a podCIDR (it has none)");
    const withPodCIDR = answer(bundle(undefined, ["10.180.2.0/24"]));
    expect(withPodCIDR.note).toContain("(detect-local-mode ClusterCIDR (the default) with no IPv4 clusterCIDR: pkg/proxy/util/localdetector.go; with NodeCIDR, Node node-1's spec.podCIDRs 10.180.2.0/24 would give it one");
    expect(withPodCIDR.reason).toContain("(kube-proxy's clusterCIDR has no IPv4 range, as far as the bundle tells: its configuration is not in it)");
  });

  it("a configured interface detector the rules do not show: one note (no detector), no pod traced on that interface", () => {
    const r = explainService(bundle("detectLocalMode: BridgeInterface\ndetectLocal:\n  bridgeInterface: cni0\n"), "ns1", "svc1");
    const notes = r.nodes[0]!.notes.join("\n");
    expect(notes).toContain("kube-proxy runs without one (detect-local-mode BridgeInterface (ConfigMap kube-system/kube-proxy");
    expect(notes).toContain("always gives it one (pkg/proxy/util/localdetector.go): the configuration read is not the one the running kube-proxy uses");
    expect(notes).not.toContain("local traffic is detected by input interface");
  });

  it("dual-stack: the IPv6 rules without a detector get the IPv6 cause (getLocalDetectors decides per family)", () => {
    const ds = readBundle(new URL("./fixtures/dual-stack", import.meta.url).pathname);
    const sec = ds.nodes[0]!.sections["ip6tables-save"]!;
    // kube-proxy's IPv6 ClusterIP masquerade rule (its detector) removed: the IPv4 rules keep theirs
    sec.stdout = sec.stdout.split("\n").filter((l) => !/^-A KUBE-SVC-WEB6 ! -s /.test(l)).join("\n");
    const cfg = kubeadmConfigMap("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.244.0.0/16\n");
    ds.objects.daemonSets.push(KUBEADM_DS);
    ds.objects.configMaps.push(cfg);
    const notes = explainService(ds, "default", "web").nodes[0]!.notes.join("\n");
    expect(notes).toContain("with clusterCIDR 10.244.0.0/16 (ConfigMap kube-system/kube-proxy key config.conf clusterCIDR), none of it IPv6: pkg/proxy/util/localdetector.go)");
    expect(notes).toContain("setting kube-proxy's --cluster-cidr (clusterCIDR) to the pods' IPv6 range gives it one");
    expect(notes).not.toContain("IPv4 range");
  });

  it("unit: NodeCIDR with a podCIDR of the family, an invalid mode, and the IPv6 family", () => {
    const node = (cidrs: string[]) => ({ metadata: { name: "n1" }, spec: { podCIDRs: cidrs } }) as Node;
    const cfg = (mode: string) => ({ mode: { value: "", source: "cm" }, detectLocalMode: { value: mode, source: "cm" }, origin: "cm", notes: [] });
    expect(noDetectorCause(cfg("NodeCIDR"), node(["10.180.2.0/24"]), "n1", 4).short).toBe("kube-proxy runs with another configuration than the one read");
    // the IPv6 rules of a Node with an IPv4 podCIDR only: NodeCIDR gives IPv6 no detector
    expect(noDetectorCause(cfg("NodeCIDR"), node(["10.180.2.0/24"]), "n1", 6).short).toBe("detect-local-mode NodeCIDR and Node n1 has no IPv6 podCIDR");
    // validateDetectLocalMode refuses it: kube-proxy does not run with that configuration
    expect(noDetectorCause(cfg("Bogus"), node([]), "n1", 4).why).toBe(
      "detect-local-mode Bogus (cm) is none of ClusterCIDR, NodeCIDR, BridgeInterface, InterfaceNamePrefix: kube-proxy refuses it (validateDetectLocalMode): the configuration read is not the one the running kube-proxy uses (it reads it at start)",
    );
  });
});
