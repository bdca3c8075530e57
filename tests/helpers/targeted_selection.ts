/**
 * Helpers of the targeted-selection tests (tests/targeted_collection.test.ts, tests/targeted_kernel.test.ts,
 * tests/awk_portability.test.ts): the key words of a Service's question, the script's awk selection run on a whole
 * iptables-save text, a one-node bundle made from a real dump's own rule comments, and the real dumps with theirs.
 * @module
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Bundle, BundleObjects } from "../../src/bundle/bundle.ts";
import { emptyBundle } from "../../src/bundle/bundle.ts";
import { nodeTargetKeys, serviceTargetKeys } from "../../src/kube/target_keys.ts";
import { targetedCommand } from "../../src/kube/targeted_script.ts";
import { AWK_SELECT, KUBE_PROXY_ROOTS } from "../../src/kube/rule_select_awk.ts";
import type { Node, Service } from "../../src/model/k8s.ts";

/** The keys words of targetedCommand for one node (argv after `sh -s`). */
export function keyWords(objects: BundleObjects, ns: string, name: string, nodeName: string): string {
  const node = objects.nodes.find((n) => n.metadata.name === nodeName) ?? { apiVersion: "v1", kind: "Node", metadata: { name: nodeName } } as Node;
  return targetedCommand(nodeTargetKeys(serviceTargetKeys(objects, ns, name), node)).command.slice(2).join(" ");
}

/** Runs the script's awk selection on a whole iptables-save text (with `awk`: argv of another awk, e.g. `["busybox", "awk"]`). */
export function selectSave(text: string, keys: string, awk: readonly string[] = ["awk"]): string {
  const r = spawnSync(awk[0]!, [...awk.slice(1), AWK_SELECT], { input: text, env: { NP_MODE: "save", NP_ROOTS: KUBE_PROXY_ROOTS.join(" "), NP_KEYS: keys, PATH: process.env.PATH ?? "/usr/bin:/bin" }, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`awk failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** A one-node bundle whose Services are read from kube-proxy's rule comments. */
export function bundleFromDump(text: string, section: "iptables-save" | "ip6tables-save"): Bundle {
  const byName = new Map<string, Service>();
  const get = (ns: string, name: string): Service => {
    const key = `${ns}/${name}`;
    let s = byName.get(key);
    if (!s) {
      s = { apiVersion: "v1", kind: "Service", metadata: { namespace: ns, name }, spec: { type: "ClusterIP", ports: [] } };
      byName.set(key, s);
    }
    return s;
  };
  const port = (s: Service, portName: string, proto: string) => {
    const p = proto.toUpperCase() as "TCP" | "UDP" | "SCTP";
    let sp = s.spec.ports!.find((x) => (x.name ?? "") === portName && x.protocol === p);
    if (!sp) {
      sp = { port: 0, protocol: p, ...(portName ? { name: portName } : {}) };
      s.spec.ports!.push(sp);
    }
    return sp;
  };
  for (const line of text.split("\n")) {
    const m = /^-A KUBE-SERVICES -d (\S+?)\/(?:32|128) -p (\w+) -m comment --comment "?([^/ "]+)\/([^: "]+):?(\S*) (cluster IP|external IP|loadbalancer IP)"? -m \w+ --dport (\d+)/.exec(line);
    if (m) {
      const [, ip, proto, ns, name, portName, kind, dport] = m;
      const s = get(ns!, name!);
      const sp = port(s, portName!, proto!);
      sp.port = Number(dport);
      if (kind === "cluster IP") s.spec.clusterIP = ip;
      else if (kind === "external IP") s.spec.externalIPs = [...new Set([...(s.spec.externalIPs ?? []), ip!])];
      else s.status = { loadBalancer: { ingress: [{ ip: ip! }] } };
      continue;
    }
    const n = /^-A KUBE-NODEPORTS -p (\w+) -m comment --comment "?([^/ "]+)\/([^: "]+):?([^ "]*)"? -m \w+ --dport (\d+)/.exec(line);
    if (n) {
      const [, proto, ns, name, portName, dport] = n;
      const s = get(ns!, name!);
      port(s, portName!, proto!).nodePort = Number(dport);
      if (s.spec.type === "ClusterIP") s.spec.type = "NodePort";
    }
  }
  const services = [...byName.values()].filter((s) => s.spec.clusterIP !== undefined);
  const node: Node = { apiVersion: "v1", kind: "Node", metadata: { name: "node-1" }, status: { addresses: [{ type: "InternalIP", address: section === "ip6tables-save" ? "fd00::1" : "192.168.0.2" }], conditions: [{ type: "Ready", status: "True" }] } };
  const bundle = emptyBundle({ command: "tests/helpers/targeted_selection.ts" });
  bundle.objects.services = services;
  bundle.objects.nodes = [node];
  bundle.nodes = [{ name: "node-1", sections: { [section]: { stdout: text, exitCode: 0 }, "proxy-mode": { stdout: "iptables", exitCode: 0 } } }];
  return bundle;
}

/** The real kube-proxy dumps in node format (iptables-save of each backend and family). */
export const NODE_FORMAT = "tests/fixtures/node-format";

/** One real dump: its file name and path, its text, and the one-node bundle of {@link bundleFromDump}. */
export interface RealDump {
  file: string;
  path: string;
  text: string;
  bundle: Bundle;
}

/** Every real dump in {@link NODE_FORMAT} (`*tables-save`), read. */
export function realDumps(): RealDump[] {
  return readdirSync(NODE_FORMAT).filter((f) => f.endsWith("tables-save")).map((file) => {
    const path = join(NODE_FORMAT, file);
    const text = readFileSync(path, "utf8");
    return { file, path, text, bundle: bundleFromDump(text, file.includes("ip6tables") ? "ip6tables-save" : "iptables-save") };
  });
}
