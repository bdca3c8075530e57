// kube-proxy's configuration as kubeadm deploys it, for tests that put it in a bundle (src/service/proxy_config.ts
// reads it): DaemonSet kube-system/kube-proxy running `--config` from ConfigMap kube-proxy.
import type { ConfigMap, DaemonSet } from "../../src/model/k8s.ts";

// kubeadm v1.29+ (kubeadm init): DaemonSet kube-system/kube-proxy runs `--config=/var/lib/kube-proxy/config.conf`
// from ConfigMap kube-proxy (keys config.conf and kubeconfig.conf).
export const KUBEADM_DS = {
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
} satisfies DaemonSet;
export const kubeadmConfigMap = (conf: string): ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "kube-proxy", namespace: "kube-system", labels: { app: "kube-proxy" } },
  data: {
    "config.conf": conf,
    "kubeconfig.conf": "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://192.168.56.10:6443\n  name: default\n",
  },
});
