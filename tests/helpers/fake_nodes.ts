/**
 * Network namespaces that play the nodes of a fake cluster: each holds a node's iptables rules (loaded with
 * iptables-restore, plus kube-proxy's jumps from the builtin chains) and, optionally, a tiny HTTP server on
 * 127.0.0.1:10249 that answers `/proxyMode` as kube-proxy's metrics server does. The fake API server
 * (fake_apiserver.ts) runs every exec of a pod bound to a node inside that node's namespace, so the collection
 * script meets real kernel state.
 *
 * Test helper: spawns `ip netns exec` and `nc` (OpenBSD netcat) with argv arrays. Needs root (see netns.ts).
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Buffer } from "node:buffer";
import process from "node:process";
import { createNetns, findTool, installKubeProxyJumps, type IptablesBackend, loadIptables, type Netns } from "./netns.ts";

/** Rules to load into a node. */
export interface NodeRules {
  /** An iptables-restore buffer (kube-proxy's, or a node's full iptables-save). */
  text: string;
  backend: IptablesBackend;
  /** Add kube-proxy's jumps from builtin chains (idempotent). @default true */
  jumps?: boolean;
}

/** A node played by a network namespace. */
export interface FakeNode {
  name: string;
  netns: Netns;
  /** Stops the /proxyMode server and deletes the namespace. */
  stop(): Promise<void>;
}

/**
 * Turns `ipset list` output into `ipset restore` input (create with the listed type and header, add each member),
 * so a node can be given the sets a real one had.
 */
export function ipsetRestoreFromList(text: string): string {
  const out: string[] = [];
  for (const block of text.split(/\n(?=Name: )/)) {
    const name = /^Name: (\S+)/m.exec(block)?.[1];
    const type = /^Type: (\S+)/m.exec(block)?.[1];
    if (!name || !type) continue;
    const header = (/^Header: (.*)$/m.exec(block)?.[1] ?? "").replace(/\bbucketsize \d+|\binitval \S+/g, "").trim();
    out.push(`create ${name} ${type} ${header}`.trim());
    const members = block.split(/^Members:\n/m)[1] ?? "";
    for (const m of members.split("\n").map((l) => l.trim()).filter((l) => l !== "")) out.push(`add ${name} ${m}`);
  }
  return out.join("\n") + "\n";
}

/** Options of {@link startFakeNode}. */
export interface FakeNodeOptions {
  /** IP sets to create first (`ipset restore` input, see {@link ipsetRestoreFromList}); rules may match them. */
  ipsets?: string;
  rules?: NodeRules;
  /** Serve this text at http://127.0.0.1:10249/proxyMode inside the namespace (e.g. "iptables"). */
  proxyMode?: string;
}

/**
 * Creates a namespace for node `name`, loads its rules and starts its /proxyMode server.
 * @throws {IptablesRestoreError} when the rules do not load.
 */
export async function startFakeNode(name: string, o: FakeNodeOptions = {}): Promise<FakeNode> {
  const netns = await createNetns("node");
  let server: ChildProcess | undefined;
  try {
    if (o.ipsets) await netns.run(["ipset", "restore"], { input: o.ipsets });
    if (o.rules) {
      await loadIptables(netns, o.rules.text, { backend: o.rules.backend, family: 4 });
      if (o.rules.jumps ?? true) await installKubeProxyJumps(netns, o.rules.backend, 4);
    }
    if (o.proxyMode !== undefined) {
      const body = o.proxyMode;
      const response = `HTTP/1.0 200 OK\\r\\nContent-Type: text/plain; charset=utf-8\\r\\nContent-Length: ${Buffer.byteLength(body)}\\r\\n\\r\\n${body}`;
      server = spawn(findTool("ip") ?? "ip", [
        "netns",
        "exec",
        netns.name,
        "sh",
        "-c",
        `while :; do printf '${response}' | nc -l -N 127.0.0.1 10249 >/dev/null 2>&1 || sleep 0.2; done`,
      ], { detached: true, stdio: "ignore" });
      server.unref();
      await waitListening(netns);
    }
  } catch (e) {
    await netns.destroy();
    throw e;
  }
  return {
    name,
    netns,
    async stop() {
      if (server?.pid !== undefined) {
        try {
          process.kill(-server.pid, "SIGKILL");
        } catch { /* already gone */ }
      }
      await netns.destroy();
    },
  };
}

async function waitListening(netns: Netns): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const ss = await netns.exec(["ss", "-ltn"]);
    if (ss.stdout.includes("127.0.0.1:10249")) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
