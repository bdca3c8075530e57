// Issue 15 points 3, 4, 5, 6, 7: kube-proxy's configuration as real clusters hold it (kubeadm ConfigMap, EKS's
// kube-proxy-config, a DaemonSet with flags only), ipMode Proxy load balancers, Services kube-proxy ignores
// (service-proxy-name, headless, ExternalName), the IPVS deprecation note and nodePortAddresses. Each bundle is an
// example copied to a temporary directory with objects edited or added as such a cluster has them.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import type { Bundle } from "../src/bundle/bundle.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { effectiveMode, parseFlags, readKubeProxyConfig } from "../src/service/proxy_config.ts";

/** An example bundle copied to a temporary directory, with extra object files written next to its own. */
function exampleWith(example: string, extra: Record<string, unknown[]>, edit?: (dir: string) => void): Bundle {
  const dir = mkdtempSync(join(tmpdir(), `knp-${example}-`));
  cpSync(new URL(`../examples/${example}`, import.meta.url).pathname, dir, { recursive: true });
  for (const [file, objs] of Object.entries(extra)) writeFileSync(join(dir, file), objs.map((o) => stringify(o)).join("---\n"));
  edit?.(dir);
  return readBundle(dir);
}

/** Edits the YAML documents of one file of the copied example. */
function editYaml(dir: string, file: string, f: (text: string) => string): void {
  const p = join(dir, file);
  writeFileSync(p, f(readFileSync(p, "utf8")));
}

// kubeadm v1.29+ (kubeadm init): DaemonSet kube-system/kube-proxy runs `--config=/var/lib/kube-proxy/config.conf`
// from ConfigMap kube-proxy (keys config.conf and kubeconfig.conf).
const KUBEADM_DS = {
  apiVersion: "apps/v1",
  kind: "DaemonSet",
  metadata: { name: "kube-proxy", namespace: "kube-system", labels: { "k8s-app": "kube-proxy" } },
  spec: {
    template: {
      spec: {
        containers: [{
          name: "kube-proxy",
          command: ["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf", "--hostname-override=$(NODE_NAME)"],
          volumeMounts: [
            { name: "kube-proxy", mountPath: "/var/lib/kube-proxy" },
            { name: "xtables-lock", mountPath: "/run/xtables.lock" },
            { name: "lib-modules", mountPath: "/lib/modules" },
          ],
        }],
        volumes: [{ name: "kube-proxy", configMap: { name: "kube-proxy" } }, { name: "xtables-lock" }, { name: "lib-modules" }],
      },
    },
  },
};
const kubeadmConfigMap = (conf: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "kube-proxy", namespace: "kube-system", labels: { app: "kube-proxy" } },
  data: {
    "config.conf": conf,
    "kubeconfig.conf": "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://192.168.56.10:6443\n  name: default\n",
  },
});
// kubeadm's generated config.conf (v1.29), abridged to the fields that matter, with mode: "" as kubeadm writes it.
const KUBEADM_CONF = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
bindAddress: 0.0.0.0
clusterCIDR: 10.244.0.0/16
configSyncPeriod: 0s
detectLocalMode: ""
iptables:
  localhostNodePorts: null
  masqueradeAll: false
  masqueradeBit: null
  minSyncPeriod: 0s
  syncPeriod: 0s
ipvs:
  excludeCIDRs: null
  scheduler: ""
kind: KubeProxyConfiguration
metricsBindAddress: ""
mode: ""
nodePortAddresses: null
`;

// EKS (amazon-eks kube-proxy add-on): `kube-proxy --v=2 --config=/var/lib/kube-proxy-config/config
// --hostname-override=$(NODE_NAME)`; ConfigMap kube-proxy holds only a kubeconfig, kube-proxy-config the configuration.
const EKS_DS = {
  apiVersion: "apps/v1",
  kind: "DaemonSet",
  metadata: { name: "kube-proxy", namespace: "kube-system", labels: { "eks.amazonaws.com/component": "kube-proxy", "k8s-app": "kube-proxy" } },
  spec: {
    template: {
      spec: {
        containers: [{
          name: "kube-proxy",
          image: "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-proxy:v1.31.2-minimal-eksbuild.3",
          command: ["kube-proxy", "--v=2", "--config=/var/lib/kube-proxy-config/config", "--hostname-override=$(NODE_NAME)"],
          env: [{ name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } }],
          volumeMounts: [
            { mountPath: "/var/log", name: "varlog" },
            { mountPath: "/run/xtables.lock", name: "xtables-lock" },
            { mountPath: "/lib/modules", name: "lib-modules", readOnly: true },
            { mountPath: "/var/lib/kube-proxy/", name: "kubeconfig" },
            { mountPath: "/var/lib/kube-proxy-config/", name: "config" },
          ],
        }],
        volumes: [
          { name: "varlog", hostPath: { path: "/var/log" } },
          { name: "kubeconfig", configMap: { name: "kube-proxy" } },
          { name: "config", configMap: { name: "kube-proxy-config" } },
        ],
      },
    },
  },
};
const EKS_CONFIGMAPS = [
  {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "kube-proxy", namespace: "kube-system", labels: { "eks.amazonaws.com/component": "kube-proxy", "k8s-app": "kube-proxy" } },
    data: { kubeconfig: "kind: Config\napiVersion: v1\nclusters:\n- cluster:\n    certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt\n    server: https://ABCD.gr7.us-west-2.eks.amazonaws.com\n  name: default\n" },
  },
  {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "kube-proxy-config", namespace: "kube-system", labels: { "eks.amazonaws.com/component": "kube-proxy", "k8s-app": "kube-proxy" } },
    data: {
      config: `apiVersion: kubeproxy.config.k8s.io/v1alpha1
bindAddress: 0.0.0.0
clientConnection:
  acceptContentTypes: ""
  burst: 10
  contentType: application/vnd.kubernetes.protobuf
  kubeconfig: /var/lib/kube-proxy/kubeconfig
  qps: 5
clusterCIDR: ""
configSyncPeriod: 15m0s
conntrack:
  maxPerCore: 32768
  min: 131072
  tcpCloseWaitTimeout: 1h0m0s
  tcpEstablishedTimeout: 24h0m0s
enableProfiling: false
healthzBindAddress: 0.0.0.0:10256
hostnameOverride: ""
iptables:
  masqueradeAll: false
  masqueradeBit: 14
  minSyncPeriod: 0s
  syncPeriod: 30s
ipvs:
  excludeCIDRs: null
  minSyncPeriod: 0s
  scheduler: ""
  syncPeriod: 30s
kind: KubeProxyConfiguration
metricsBindAddress: 0.0.0.0:10249
mode: "iptables"
nodePortAddresses: null
oomScoreAdj: -998
portRange: ""
`,
    },
  },
];

// A DaemonSet that configures kube-proxy with flags only (no --config), as hand-rolled and older installers do.
const flagsDs = (args: string[]) => ({
  apiVersion: "apps/v1",
  kind: "DaemonSet",
  metadata: { name: "kube-proxy", namespace: "kube-system" },
  spec: { template: { spec: { containers: [{ name: "kube-proxy", command: ["/usr/local/bin/kube-proxy"], args }] } } },
});

describe("kube-proxy's configuration and where each setting comes from (point 6)", () => {
  it("kubeadm: --config names ConfigMap kube-proxy key config.conf; mode \"\" is iptables, the Linux default", () => {
    const b = exampleWith("iptables-lab", { "kube-proxy.yaml": [KUBEADM_DS, kubeadmConfigMap(KUBEADM_CONF)] });
    const cfg = readKubeProxyConfig(b.objects)!;
    expect(cfg.origin).toBe("ConfigMap kube-system/kube-proxy key config.conf (--config /var/lib/kube-proxy/config.conf of DaemonSet kube-system/kube-proxy)");
    expect(cfg.mode).toEqual({ value: "", source: "ConfigMap kube-system/kube-proxy key config.conf mode" });
    expect(effectiveMode(cfg).value).toBe("iptables");
    expect(effectiveMode(cfg).defaulted).toBe(true);
    expect(cfg.clusterCIDRs).toEqual({ value: ["10.244.0.0/16"], source: "ConfigMap kube-system/kube-proxy key config.conf clusterCIDR" });
    expect(cfg.masqueradeAll).toEqual({ value: false, source: "ConfigMap kube-system/kube-proxy key config.conf iptables.masqueradeAll" });
    expect(cfg.nodePortAddresses).toBeUndefined();
    expect(cfg.notes).toEqual([]);
    const n = explainService(b, "kube-system", "kube-dns").nodes[0]!;
    expect(n.proxyMode.mode).toBe("iptables");
    expect(n.proxyMode.evidence).toContainEqual({
      source: "kube-proxy ConfigMap",
      value: "iptables",
      detail: expect.stringMatching(/^ConfigMap kube-system\/kube-proxy key config\.conf mode unset: iptables, kube-proxy's default on Linux/),
    });
    expect(n.proxyMode.conflicts).toEqual([]);
  });

  it("EKS: --config reads kube-proxy-config key config (ConfigMap kube-proxy holds only a kubeconfig)", () => {
    const b = exampleWith("iptables-lab", { "kube-proxy.yaml": [EKS_DS, ...EKS_CONFIGMAPS] });
    const cfg = readKubeProxyConfig(b.objects)!;
    expect(cfg.origin).toBe("ConfigMap kube-system/kube-proxy-config key config (--config /var/lib/kube-proxy-config/config of DaemonSet kube-system/kube-proxy)");
    expect(cfg.mode).toEqual({ value: "iptables", source: "ConfigMap kube-system/kube-proxy-config key config mode" });
    expect(cfg.clusterCIDRs).toBeUndefined(); // clusterCIDR: "" on EKS (the VPC CNI gives pods VPC addresses)
    expect(cfg.masqueradeAll).toEqual({ value: false, source: "ConfigMap kube-system/kube-proxy-config key config iptables.masqueradeAll" });
  });

  it("EKS without the DaemonSet in the bundle: kube-proxy-config is found by its KubeProxyConfiguration", () => {
    const b = exampleWith("iptables-lab", { "kube-proxy.yaml": EKS_CONFIGMAPS });
    const cfg = readKubeProxyConfig(b.objects)!;
    expect(cfg.origin).toBe("ConfigMap kube-system/kube-proxy-config key config (the kube-proxy DaemonSet is not in the bundle: taken as its --config file)");
    expect(effectiveMode(cfg)).toEqual({ value: "iptables", source: "ConfigMap kube-system/kube-proxy-config key config mode", defaulted: false });
  });

  it("flags only: --proxy-mode, --cluster-cidr, --masquerade-all, --detect-local-mode, --nodeport-addresses, each named", () => {
    const b = exampleWith("ipvs-lab", {
      "kube-proxy.yaml": [flagsDs(["--proxy-mode=ipvs", "--cluster-cidr", "10.244.0.0/16", "--masquerade-all", "--detect-local-mode=BridgeInterface", "--pod-bridge-interface=cni0", "--nodeport-addresses=192.168.0.0/16,primary", "--v=2"])],
    });
    const cfg = readKubeProxyConfig(b.objects)!;
    const where = "DaemonSet kube-system/kube-proxy";
    expect(cfg.origin).toBe(`the command line of ${where} (no --config)`);
    expect(cfg.mode).toEqual({ value: "ipvs", source: `flag --proxy-mode of ${where}` });
    expect(cfg.clusterCIDRs).toEqual({ value: ["10.244.0.0/16"], source: `flag --cluster-cidr of ${where}` });
    expect(cfg.masqueradeAll).toEqual({ value: true, source: `flag --masquerade-all of ${where}` });
    expect(cfg.detectLocalMode).toEqual({ value: "BridgeInterface", source: `flag --detect-local-mode of ${where}` });
    expect(cfg.bridgeInterface).toEqual({ value: "cni0", source: `flag --pod-bridge-interface of ${where}` });
    expect(cfg.nodePortAddresses).toEqual({ value: ["192.168.0.0/16", "primary"], source: `flag --nodeport-addresses of ${where}` });
    const n = explainService(b, "kube-system", "kube-dns").nodes[0]!;
    expect(n.proxyMode.mode).toBe("ipvs");
    expect(n.proxyMode.evidence).toContainEqual({ source: "kube-proxy flags", value: "ipvs", detail: `flag --proxy-mode of ${where}` });
    expect(n.proxyMode.conflicts).toEqual([]);
  });

  it("flags given with --config are ignored, as kube-proxy ignores them (the file wins), and the report says so", () => {
    const ds = structuredClone(KUBEADM_DS);
    ds.spec.template.spec.containers[0]!.command.push("--proxy-mode=ipvs", "--masquerade-all");
    const b = exampleWith("iptables-lab", { "kube-proxy.yaml": [ds, kubeadmConfigMap(KUBEADM_CONF.replace('mode: ""', "mode: iptables"))] });
    const cfg = readKubeProxyConfig(b.objects)!;
    expect(cfg.mode.value).toBe("iptables");
    expect(cfg.masqueradeAll?.value).toBe(false);
    expect(cfg.notes).toEqual([
      "DaemonSet kube-system/kube-proxy passes --proxy-mode, --masquerade-all with --config: kube-proxy ignores them (with --config the file replaces the command line, cmd/kube-proxy/app/server.go Options.Complete)",
    ]);
  });

  it("a flags-only DaemonSet without --proxy-mode runs the default, iptables", () => {
    const b = exampleWith("iptables-lab", { "kube-proxy.yaml": [flagsDs(["--cluster-cidr=10.244.0.0/16"])] });
    const cfg = readKubeProxyConfig(b.objects)!;
    expect(effectiveMode(cfg).value).toBe("iptables");
    expect(effectiveMode(cfg).defaulted).toBe(true);
    expect(explainService(b, "kube-system", "kube-dns").nodes[0]!.proxyMode.evidence[0]).toMatchObject({ source: "kube-proxy flags", value: "iptables" });
  });

  it("/proxyMode of the running kube-proxy wins over the configuration (a conflict is reported)", () => {
    const b = exampleWith("iptables-lab", { "kube-proxy.yaml": [flagsDs(["--proxy-mode=ipvs"])] }, (dir) => writeFileSync(join(dir, "nodes/k8s1/proxy-mode.txt"), "iptables"));
    const n = explainService(b, "kube-system", "kube-dns").nodes[0]!;
    expect(n.proxyMode.mode).toBe("iptables");
    expect(n.proxyMode.conflicts[0]).toBe(
      'the configuration (flag --proxy-mode of DaemonSet kube-system/kube-proxy) says mode "ipvs" but kube-proxy on this node runs "iptables" (not restarted since the change, or a per-node flag)',
    );
  });

  it("pflag parsing: --name=value, --name value, a bool flag alone, the last one wins", () => {
    expect([...parseFlags(["kube-proxy", "--proxy-mode", "nftables", "--masquerade-all", "--cluster-cidr=10.0.0.0/8", "--proxy-mode=ipvs"])]).toEqual([
      ["proxy-mode", "ipvs"],
      ["masquerade-all", "true"],
      ["cluster-cidr", "10.0.0.0/8"],
    ]);
  });

  it("a sh -c wrapped command line is read (never run)", () => {
    const ds = flagsDs([]);
    ds.spec.template.spec.containers[0]!.command = ["/bin/sh", "-c", "exec kube-proxy --proxy-mode=nftables --cluster-cidr=10.42.0.0/16 $(touch /tmp/x)"];
    const b = exampleWith("iptables-lab", { "kube-proxy.yaml": [ds] });
    expect(readKubeProxyConfig(b.objects)!.mode.value).toBe("nftables");
  });

  it("the bundle keeps only the DaemonSet fields it reads (shape-checked on read)", () => {
    const bad = structuredClone(EKS_DS) as unknown as { spec: { template: { spec: { containers: { args: unknown }[] } } } };
    bad.spec.template.spec.containers[0]!.args = "--proxy-mode=ipvs";
    expect(() => exampleWith("iptables-lab", { "kube-proxy.yaml": [bad] })).toThrow(/spec\.template\.spec\.containers\[0\]\.args is the string "--proxy-mode=ipvs": want a list/);
  });
});
