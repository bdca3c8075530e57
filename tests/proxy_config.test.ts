// Issue 15 points 3, 4, 5, 6, 7: kube-proxy's configuration as real clusters hold it (kubeadm ConfigMap, EKS's
// kube-proxy-config, a DaemonSet with flags only), ipMode Proxy load balancers, Services kube-proxy ignores
// (service-proxy-name, headless, ExternalName), the IPVS deprecation note and nodePortAddresses. Each bundle is an
// example copied to a temporary directory with objects edited or added as such a cluster has them.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { KUBEADM_DS, kubeadmConfigMap } from "./helpers/kube_proxy_config.ts";
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

/** Drops every iptables-save line of a Service (its KUBE-SERVICES jump, KUBE-SVC/KUBE-SEP rules and their chain lines). */
function withoutIptablesRules(dir: string, node: string, svcComment: string): void {
  editYaml(dir, `nodes/${node}/iptables-save.txt`, (t) => {
    const lines = t.split("\n");
    const chains = new Set(lines.filter((l) => l.includes(`"${svcComment}`)).map((l) => /^-A (\S+)/.exec(l)?.[1]).filter((c): c is string => !!c && /^KUBE-(SVC|SEP)-/.test(c)));
    return lines.filter((l) => !l.includes(`"${svcComment}`) && ![...chains].some((c) => l.startsWith(`:${c} `))).join("\n");
  });
}

describe("Services kube-proxy leaves alone: no rule is right, no drift (point 4)", () => {
  it("service.kubernetes.io/service-proxy-name: no rules on the node, no drift, the proxy named", () => {
    const edit = (dir: string) => withoutIptablesRules(dir, "k8s1", "default/my-nginx-svc");
    // Without the label, a node without the Service's rules is drift (kube-proxy should have programmed it).
    const plain = explainService(exampleWith("iptables-lab", {}, edit), "default", "my-nginx-svc");
    expect(plain.nodes[0]!.drift.map((d) => d.kind)).toEqual(["service-missing"]);
    const b = exampleWith("iptables-lab", {}, (dir) => {
      edit(dir);
      editYaml(dir, "services.yaml", (t) => t.replace("labels: {run: nginx}", "labels: {run: nginx, service.kubernetes.io/service-proxy-name: multus-proxy}"));
    });
    const r = explainService(b, "default", "my-nginx-svc");
    expect(r.nodes[0]!.drift).toEqual([]);
    expect(r.findings.filter((f) => f.code.startsWith("Drift/"))).toEqual([]);
    const f = r.findings.find((x) => x.code === "ServiceProxyName")!;
    expect(f.message).toMatch(/^label service\.kubernetes\.io\/service-proxy-name=multus-proxy: kube-proxy ignores this Service and its EndpointSlices .* the proxy "multus-proxy" serves it\. No kube-proxy rule is expected on any node/);
    // The trace still says what the node does with the packets: nothing.
    expect(r.nodes[0]!.ports[0]!.entryPoints[0]!.clients[0]!.outcome).toBe("not-handled");
  });

  it("a headless Service (clusterIP: None) and an ExternalName Service: no entry point, no drift, said why", () => {
    const headless = exampleWith("iptables-lab", {}, (dir) => {
      withoutIptablesRules(dir, "k8s1", "default/my-nginx-svc");
      editYaml(dir, "services.yaml", (t) => t.replace("clusterIP: 10.98.69.149\n    clusterIPs: [10.98.69.149]", "clusterIP: None\n    clusterIPs: [None]"));
    });
    const h = explainService(headless, "default", "my-nginx-svc");
    expect(h.nodes[0]!.drift).toEqual([]);
    expect(h.findings.map((f) => f.code)).toContain("Headless");
    const ext = exampleWith("iptables-lab", {}, (dir) => {
      withoutIptablesRules(dir, "k8s1", "default/my-nginx-svc");
      editYaml(dir, "services.yaml", (t) => t.replace(/type: ClusterIP\n {4}clusterIP: 10\.98\.69\.149\n {4}clusterIPs: \[10\.98\.69\.149\]/, "type: ExternalName\n    externalName: nginx.example.com"));
    });
    const e = explainService(ext, "default", "my-nginx-svc");
    expect(e.service.type).toBe("ExternalName");
    expect(e.nodes[0]!.drift).toEqual([]);
    expect(e.findings.map((f) => f.code)).toContain("ExternalName");
  });

  it("IPVS mode: a headless Service with an endpoint on the node gets no ipset drift (KUBE-LOOP-BACK is for ClusterIP Services)", () => {
    // kube-proxy programs nothing for a headless Service: no KUBE-LOOP-BACK entries for its endpoints either.
    const b = exampleWith("ipvs-lab", {}, (dir) => {
      editYaml(dir, "services.yaml", (t) => t.replace(/clusterIP: 10\.96\.0\.10\n/, "clusterIP: None\n").replace(/clusterIPs: \[10\.96\.0\.10\]/, "clusterIPs: [None]"));
      editYaml(dir, "nodes/k8s-01/ipset.txt", (t) => t.split("\n").filter((l) => !/^192\.168\.0\.1[78],(tcp|udp):53,/.test(l)).join("\n").replace("Number of entries: 4", "Number of entries: 0"));
    });
    const r = explainService(b, "kube-system", "kube-dns");
    expect(r.service.clusterIPs).toEqual([]);
    expect(r.nodes[0]!.proxyMode.mode).toBe("ipvs");
    expect(r.nodes[0]!.drift).toEqual([]);
  });
});

/** nftables-lab with svc5's LoadBalancer IP 5.6.7.8 gone from the ruleset, as kube-proxy leaves it for an ipMode Proxy IP. */
function nftWithoutLbIP(dir: string): void {
  editYaml(dir, "nodes/test-node/nft-json.txt", (t) => {
    const doc = JSON.parse(t) as { nftables: { map?: { name: string; elem?: unknown[] } }[] };
    for (const o of doc.nftables) {
      if (o.map?.elem) o.map.elem = o.map.elem.filter((e) => !JSON.stringify(e).includes('"5.6.7.8"'));
    }
    return JSON.stringify(doc);
  });
}

describe("status.loadBalancer.ingress[].ipMode: Proxy (point 3)", () => {
  const proxyMode = (dir: string) => editYaml(dir, "services.yaml", (t) => t.replace("ingress: [{ip: 5.6.7.8}]", "ingress: [{ip: 5.6.7.8, ipMode: Proxy}]"));

  it("kube-proxy programs no rule for it: no LoadBalancer entry point, no drift, and the finding says the load balancer proxies to the NodePort", () => {
    // Without ipMode Proxy, the same ruleset reads as a LoadBalancer IP kube-proxy does not handle.
    const vip = explainService(exampleWith("nftables-lab", {}, nftWithoutLbIP), "ns5", "svc5");
    const lbVip = vip.nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "LoadBalancer")!;
    expect(lbVip.clients.find((c) => c.client === "external")!.outcome).toBe("not-handled");

    const b = exampleWith("nftables-lab", {}, (dir) => {
      nftWithoutLbIP(dir);
      proxyMode(dir);
    });
    const r = explainService(b, "ns5", "svc5", { packet: { source: "203.0.113.10", destination: "5.6.7.8", port: 80, protocol: "tcp" } });
    expect(r.nodes[0]!.ports[0]!.entryPoints.map((e) => e.kind)).toEqual(["ClusterIP", "NodePort"]);
    expect(r.nodes[0]!.drift).toEqual([]);
    expect(r.findings.find((f) => f.code === "LoadBalancerIPModeProxy")!.message).toMatch(
      /^LoadBalancer ingress 5\.6\.7\.8 has ipMode Proxy: kube-proxy programs no rule for it .* its absence from the nodes is expected, not drift\. The load balancer terminates clients' connections and opens its own to the NodePort \(3002\/TCP\) on the nodes/,
    );
    const a = r.packet![0]!;
    expect(a.outcome).toBe("not-handled");
    expect(a.caveats).toContain(
      "5.6.7.8 is a LoadBalancer ingress IP with ipMode Proxy: kube-proxy programs no rule for it, so a packet to it is not handled by kube-proxy here (expected). Clients reach the Service through the load balancer, which connects to NodePort 3002 on the nodes or to the endpoints (ask: --dest NODE-IP:NODEPORT)",
    );
  });

  it("the node's rules still take the ipMode Proxy IP: stale-on-node drift, and the packet answer says stale, not 'not handled (expected)'", () => {
    // the ruleset as kube-proxy wrote it while the ingress IP was a VIP (5.6.7.8 still in its maps)
    const b = exampleWith("nftables-lab", {}, proxyMode);
    const r = explainService(b, "ns5", "svc5", { packet: { source: "203.0.113.10", destination: "5.6.7.8", port: 80, protocol: "tcp" } });
    const d = r.nodes[0]!.drift.filter((x) => x.kind === "stale-on-node");
    expect(d.map((x) => x.message)).toEqual([expect.stringMatching(/^ns5\/svc5:p80: test-node has rules for LoadBalancer ingress 5\.6\.7\.8:80\/tcp, which has ipMode Proxy: .* so these are stale$/)]);
    const a = r.packet![0]!;
    expect(a.outcome).not.toBe("not-handled");
    expect(a.caveats.join("\n")).toMatch(/5\.6\.7\.8 is a LoadBalancer ingress IP with ipMode Proxy, for which kube-proxy programs no rule, yet this node's rules take it \(above\): they are stale/);
    expect(a.caveats.join("\n")).not.toMatch(/\(expected\)/);
  });

  it("a v1.29 node (LoadBalancerIPMode alpha, off): kube-proxy still programs the IP, so it stays an entry point, with a note", () => {
    const b = exampleWith("nftables-lab", {}, (dir) => {
      proxyMode(dir);
      editYaml(dir, "nodes.yaml", (t) => t.replace("conditions: [{type: Ready", "nodeInfo: {kubeletVersion: v1.29.4, kubeProxyVersion: v1.29.4}\n    conditions: [{type: Ready"));
    });
    const n = explainService(b, "ns5", "svc5").nodes[0]!;
    expect(n.ports[0]!.entryPoints.map((e) => e.kind)).toContain("LoadBalancer");
    expect(n.notes).toContain(
      "ipMode Proxy of 5.6.7.8 is not honoured here (kube-proxy programs it as a VIP, pkg/proxy/util IsVIPMode): feature gate LoadBalancerIPMode is off by default in kube-proxy v1.29 (v1.29.4, the Node's kubeProxyVersion); kube-proxy's configuration is not in the bundle, so a featureGates setting there is not known",
    );
  });

  // pkg/proxy/util IsVIPMode honours ipMode only with feature gate LoadBalancerIPMode on: alpha (off) in v1.29, beta
  // (on) v1.30–v1.31, GA (locked on) v1.32 (pkg/features/kube_features.go); kube-proxy's configured gates decide where
  // the gate can be set. The ruleset is the one kube-proxy writes for an ipMode Proxy IP (5.6.7.8 gone from its maps).
  const v129 = (dir: string, version = "v1.29.4") => {
    nftWithoutLbIP(dir);
    proxyMode(dir);
    editYaml(dir, "nodes.yaml", (t) => t.replace("conditions: [{type: Ready", `nodeInfo: {kubeletVersion: ${version}, kubeProxyVersion: ${version}}\n    conditions: [{type: Ready`));
  };

  it("v1.29 with --feature-gates=LoadBalancerIPMode=true: honoured, so the missing rule is no drift and no note says otherwise", () => {
    const b = exampleWith("nftables-lab", { "kube-proxy.yaml": [flagsDs(["--proxy-mode=nftables", "--feature-gates=LoadBalancerIPMode=true"])] }, (dir) => v129(dir));
    const r = explainService(b, "ns5", "svc5");
    const n = r.nodes[0]!;
    expect(n.ports[0]!.entryPoints.map((e) => e.kind)).toEqual(["ClusterIP", "NodePort"]);
    expect(n.drift).toEqual([]);
    expect(n.notes.filter((x) => /ipMode/.test(x))).toEqual([]);
    expect(r.findings.find((f) => f.code === "LoadBalancerIPModeProxy")!.message).toMatch(/its absence from the nodes is expected, not drift/);
  });

  it("v1.29 without the gate: the IP is a VIP there, its missing rule is drift, and the finding does not call it expected", () => {
    const b = exampleWith("nftables-lab", {}, (dir) => v129(dir));
    const r = explainService(b, "ns5", "svc5");
    expect(r.nodes[0]!.drift.map((d) => d.message)).toEqual([expect.stringMatching(/^ns5\/svc5:p80: no kube-proxy rule for LoadBalancer IP 5\.6\.7\.8:80\/tcp on test-node/)]);
    const f = r.findings.find((x) => x.code === "LoadBalancerIPModeProxy")!.message;
    expect(f).not.toMatch(/expected, not drift/);
    expect(f).toMatch(
      /^LoadBalancer ingress 5\.6\.7\.8 has ipMode Proxy, which kube-proxy honours \(programs no rule for it\) only with feature gate LoadBalancerIPMode on .* It does not on test-node \(feature gate LoadBalancerIPMode is off by default in kube-proxy v1\.29 .*\): there kube-proxy programs the IP as a VIP, so a rule missing there is drift/,
    );
  });

  it("v1.31 with the gate set off: not honoured; v1.32 with it set off: GA, locked on, honoured", () => {
    const off = (version: string) => exampleWith("nftables-lab", { "kube-proxy.yaml": [flagsDs(["--proxy-mode=nftables", "--feature-gates=LoadBalancerIPMode=false"])] }, (dir) => v129(dir, version));
    const v131 = explainService(off("v1.31.2"), "ns5", "svc5");
    expect(v131.nodes[0]!.drift.map((d) => d.kind)).toEqual(["entry-missing"]);
    expect(v131.nodes[0]!.notes).toContainEqual(expect.stringMatching(/ipMode Proxy of 5\.6\.7\.8 is not honoured here .*feature gate LoadBalancerIPMode is off in flag --feature-gates of DaemonSet kube-system\/kube-proxy/));
    const v132 = explainService(off("v1.32.0"), "ns5", "svc5");
    expect(v132.nodes[0]!.drift).toEqual([]);
    expect(v132.findings.find((f) => f.code === "LoadBalancerIPModeProxy")!.message).toMatch(/expected, not drift/);
  });
});

describe("ipMode Proxy in IPVS mode: no KUBE-LOAD-BALANCER ipset entry is expected (point 3)", () => {
  // ipvs-kind's web as a LoadBalancer whose ingress IP the load balancer proxies; kube-proxy (IPVS mode) keeps the
  // KUBE-LOAD-BALANCER set, empty, as it always creates it.
  const lb = (ipMode: string) => (dir: string) => {
    editYaml(dir, "objects.yaml", (t) =>
      t.replace(
        "  type: ClusterIP\n  clusterIP: 10.96.119.228\n  selector: {app: web}\n  ports: [{port: 80, protocol: TCP, targetPort: 80}]\n",
        `  type: LoadBalancer\n  clusterIP: 10.96.119.228\n  selector: {app: web}\n  ports: [{port: 80, protocol: TCP, targetPort: 80, nodePort: 30080}]\nstatus:\n  loadBalancer:\n    ingress: [{ip: 203.0.113.80${ipMode}}]\n`,
      ));
    editYaml(dir, "nodes/k8s-guide-worker/ipset.txt", (t) =>
      t + "\nName: KUBE-LOAD-BALANCER\nType: hash:ip,port\nRevision: 5\nHeader: family inet hashsize 1024 maxelem 65536\nSize in memory: 200\nReferences: 1\nNumber of entries: 0\nMembers:\n");
  };
  it("VIP (no ipMode): the missing entry is drift; Proxy: it is not", () => {
    const vip = explainService(exampleWith("ipvs-kind", {}, lb("")), "default", "web");
    expect(vip.nodes[0]!.drift.filter((d) => d.kind === "ipset-missing").map((d) => d.message)).toEqual([
      "default/web: ipset KUBE-LOAD-BALANCER on k8s-guide-worker lacks 203.0.113.80,tcp:80: LoadBalancer traffic is not handled by kube-proxy's rules",
    ]);
    const proxy = explainService(exampleWith("ipvs-kind", {}, lb(", ipMode: Proxy")), "default", "web");
    expect(proxy.nodes[0]!.drift.filter((d) => d.kind === "ipset-missing")).toEqual([]);
    expect(proxy.findings.map((f) => f.code)).toContain("LoadBalancerIPModeProxy");
  });
});

describe("IPVS mode's deprecation (point 5)", () => {
  it("one note per report when a node runs IPVS, with the migration to nftables; none in iptables mode", () => {
    const r = explainService(readBundle(new URL("../examples/ipvs-lab", import.meta.url).pathname), "kube-system", "kube-dns");
    const notes = r.findings.filter((f) => f.code === "IPVSDeprecated");
    expect(notes.length).toBe(1);
    expect(notes[0]!.message).toMatch(/deprecated since Kubernetes v1\.35 \(KEP-5495.*migrate to nftables mode .*set mode: nftables in the kube-proxy configuration \(or --proxy-mode=nftables\)/);
    const ipt = explainService(readBundle(new URL("../examples/iptables-lab", import.meta.url).pathname), "kube-system", "kube-dns");
    expect(ipt.findings.filter((f) => f.code === "IPVSDeprecated")).toEqual([]);
  });
});

describe("nodePortAddresses (point 7)", () => {
  // test-node gains an ExternalIP, as a cloud node has: a local address NodePorts do not answer on in nftables mode.
  const withExternalIP = (dir: string) => editYaml(dir, "nodes.yaml", (t) => t.replace("{type: Hostname, address: test-node}", "{type: ExternalIP, address: 198.51.100.7}, {type: Hostname, address: test-node}"));

  it("nftables mode's default (primary): a NodePort asked on the node's ExternalIP is not served there, and the answer says why", () => {
    const b = exampleWith("nftables-lab", {}, withExternalIP);
    const r = explainService(b, "ns2", "svc2", { packet: { source: "203.0.113.10", destination: "198.51.100.7", port: 3001, protocol: "tcp" } });
    const a = r.packet![0]!;
    expect(a.outcome).toBe("not-handled"); // the nodeport-ips set holds 192.168.0.2 only
    // kube-proxy's configuration is not in the bundle: the node's set nodeport-ips says where NodePorts are served
    expect(a.caveats).toContain("NodePort 3001 is not served on 198.51.100.7: NodePorts answer only on 192.168.0.2 (set nodeport-ips of the node's kube-proxy table)");
    // On the primary IP, no such caveat.
    const ok = explainService(b, "ns2", "svc2", { packet: { source: "203.0.113.10", destination: "192.168.0.2", port: 3001, protocol: "tcp" } }).packet![0]!;
    expect(ok.caveats.filter((c) => c.startsWith("NodePort"))).toEqual([]);
  });

  it("configured (--nodeport-addresses on the DaemonSet): the NodePort entry point on an address outside it says it is not served there", () => {
    const b = exampleWith("nftables-lab", { "kube-proxy.yaml": [flagsDs(["--proxy-mode=nftables", "--nodeport-addresses=198.51.100.0/24"])] }, (dir) => {
      withExternalIP(dir);
      // kube-proxy with that flag lists only the ExternalIP in nodeport-ips.
      editYaml(dir, "nodes/test-node/nft-json.txt", (t) => t.replace('"name": "nodeport-ips", "table": "kube-proxy", "type": "ipv4_addr", "handle": 2, "comment": "IPs that accept NodePort traffic", "elem": ["192.168.0.2"]', '"name": "nodeport-ips", "table": "kube-proxy", "type": "ipv4_addr", "handle": 2, "comment": "IPs that accept NodePort traffic", "elem": ["198.51.100.7"]'));
    });
    const r = explainService(b, "ns2", "svc2");
    const n = r.nodes[0]!;
    expect(n.notes).toContain("nodePortAddresses [198.51.100.0/24] (flag --nodeport-addresses of DaemonSet kube-system/kube-proxy): NodePorts answer only on 198.51.100.7");
    const np = n.ports[0]!.entryPoints.find((e) => e.kind === "NodePort")!;
    expect(np.destination).toBe("192.168.0.2:3001/tcp");
    expect(np.clients.every((c) => c.caveats.includes(`NodePort 3001 is not served on 192.168.0.2: ${n.notes.at(-1)}`))).toBe(true);
    expect(np.clients.find((c) => c.client === "external")!.outcome).toBe("not-handled");
    expect(r.findings.find((f) => f.code === "KubeProxyConfiguration")!.message).toBe(
      "kube-proxy's configuration from the command line of DaemonSet kube-system/kube-proxy (no --config): mode nftables (flag --proxy-mode of DaemonSet kube-system/kube-proxy); nodePortAddresses 198.51.100.0/24 (flag --nodeport-addresses of DaemonSet kube-system/kube-proxy)",
    );
  });
});

describe("live: the kube-proxy DaemonSet and the ConfigMap of its --config are read, and only what is needed is kept", () => {
  it("EKS-style cluster: GET daemonset kube-proxy, then configmap kube-proxy-config (named by the --config volume); the bundle keeps no image or env", async () => {
    const { startFakeApiServer } = await import("./helpers/fake_apiserver.ts");
    const { run } = await import("./helpers/live_cli.ts");
    const web = readBundle("tests/fixtures/live/web");
    const s = await startFakeApiServer({
      objects: { ...web.objects, configMaps: EKS_CONFIGMAPS as unknown as Bundle["objects"]["configMaps"], daemonSets: [EKS_DS as unknown as Bundle["objects"]["daemonSets"][number]] },
    });
    try {
      const out = join(mkdtempSync(join(tmpdir(), "knp-eks-")), "web.bundle.json");
      const c = await run(["capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", out]);
      expect(c.code).toBe(0);
      const paths = s.requests.map((r) => r.path).filter((p) => p.includes("kube-system"));
      expect(paths).toEqual(["/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy", "/api/v1/namespaces/kube-system/configmaps/kube-proxy-config"]);
      const text = readFileSync(out, "utf8");
      expect(text).not.toContain("602401143452.dkr.ecr");
      expect(text).not.toContain("spec.nodeName"); // the env's fieldRef
      expect(text).not.toContain("/var/log"); // the hostPath volume and its mount
      const bundle = readBundle(out);
      expect(bundle.objects.daemonSets).toEqual([{
        apiVersion: "apps/v1",
        kind: "DaemonSet",
        metadata: { name: "kube-proxy", namespace: "kube-system" },
        spec: {
          template: {
            spec: {
              containers: [{ name: "kube-proxy", command: EKS_DS.spec.template.spec.containers[0]!.command, volumeMounts: [{ name: "kubeconfig", mountPath: "/var/lib/kube-proxy/" }, { name: "config", mountPath: "/var/lib/kube-proxy-config/" }] }],
              volumes: [{ name: "kubeconfig", configMap: { name: "kube-proxy" } }, { name: "config", configMap: { name: "kube-proxy-config" } }],
            },
          },
        },
      }]);
      expect(readKubeProxyConfig(bundle.objects)!.origin).toBe("ConfigMap kube-system/kube-proxy-config key config (--config /var/lib/kube-proxy-config/config of DaemonSet kube-system/kube-proxy)");
    } finally {
      await s.close();
    }
  });
});

describe("IPVS mode: an SCTP NodePort is in KUBE-NODE-PORT-SCTP-HASH (nodeIP,sctp:port), not a bitmap of ports", () => {
  // ipvs-kind's web as a NodePort of SCTP: kube-proxy (ipvs/ipset.go kubeNodePortSetSCTP) adds 192.168.224.4,sctp:30099
  // to the hash:ip,port set; releases before it used the bitmap:port KUBE-NODE-PORT-SCTP (read when no -HASH set is)
  const sctp = (sets: string) => (dir: string) => {
    editYaml(dir, "objects.yaml", (t) =>
      t.replace(
        "  type: ClusterIP\n  clusterIP: 10.96.119.228\n  selector: {app: web}\n  ports: [{port: 80, protocol: TCP, targetPort: 80}]\n",
        "  type: NodePort\n  clusterIP: 10.96.119.228\n  selector: {app: web}\n  ports: [{port: 80, protocol: SCTP, targetPort: 80, nodePort: 30099}]\n",
      ).replace("ports: [{name: \"\", port: 80, protocol: TCP}]", "ports: [{name: \"\", port: 80, protocol: SCTP}]"));
    editYaml(dir, "nodes/k8s-guide-worker/ipset.txt", (t) => t + sets);
  };
  const set = (name: string, type: string, members: string[]) =>
    `\nName: ${name}\nType: ${type}\nRevision: 5\nHeader: family inet hashsize 1024 maxelem 65536\nSize in memory: 200\nReferences: 1\nNumber of entries: ${members.length}\nMembers:\n${members.map((m) => m + "\n").join("")}`;
  const missing = (sets: string) =>
    explainService(exampleWith("ipvs-kind", {}, sctp(sets)), "default", "web").nodes[0]!.drift.filter((d) => d.kind === "ipset-missing" && d.message.includes("NODE-PORT")).map((d) => d.message);
  it("the -HASH set without the node's entry is drift; with it, none", () => {
    expect(missing(set("KUBE-NODE-PORT-SCTP-HASH", "hash:ip,port", []))).toEqual([
      "default/web: ipset KUBE-NODE-PORT-SCTP-HASH on k8s-guide-worker lacks 192.168.224.4,sctp:30099: NodePort traffic is not marked for masquerade",
    ]);
    expect(missing(set("KUBE-NODE-PORT-SCTP-HASH", "hash:ip,port", ["192.168.224.4,sctp:30099"]))).toEqual([]);
  });
  it("a legacy bitmap KUBE-NODE-PORT-SCTP is read only when there is no -HASH set", () => {
    expect(missing(set("KUBE-NODE-PORT-SCTP", "bitmap:port", []))).toEqual([
      "default/web: ipset KUBE-NODE-PORT-SCTP on k8s-guide-worker lacks 30099: NodePort traffic is not marked for masquerade",
    ]);
    // a leftover legacy set beside the current one is not kube-proxy's any more
    expect(missing(set("KUBE-NODE-PORT-SCTP", "bitmap:port", []) + set("KUBE-NODE-PORT-SCTP-HASH", "hash:ip,port", ["192.168.224.4,sctp:30099"]))).toEqual([]);
  });
});
