/**
 * Userlands of the images the collection scripts run in, each a directory to use as the whole PATH, the network tools
 * taken from the host (iptables and its backends, `nft`, `ipset`, …) as an image ships them:
 * - {@link busyboxUserland}: Alpine images such as netshoot, the default debug image: `sh`, `awk`, `sed`, `tr`,
 *   `timeout`, `wget`, `cat`… are busybox applets, iproute2's `ip`; no bash, no curl. {@link netshootUserland}: the
 *   same without iptables-legacy, as netshoot ships.
 * - {@link kubeProxyImageUserland}: kube-proxy's image (registry.k8s.io/build-image/distroless-iptables, kubernetes/
 *   release images/build/distroless-iptables): dash as `sh`, `cat`, `chmod`, `grep`, `ln`, `rm`, `sleep`, `wc`, and
 *   iptables, ipset and nft; no awk, sed, tr, timeout, gzip, bash, curl or ip.
 * @module
 */
import { existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findTool } from "./netns.ts";

/** The host's iptables, ipset and nft (by the name a script calls). */
const NETFILTER_TOOLS = [
  "nft", "ipset",
  ...["iptables", "ip6tables"].flatMap((t) => [t, `${t}-save`, `${t}-restore`, `${t}-nft`, `${t}-nft-save`, `${t}-nft-restore`, `${t}-legacy`, `${t}-legacy-save`, `${t}-legacy-restore`]),
];

/** The host's network tools put on the busybox PATH. */
const NETWORK_TOOLS = ["ip", "ipvsadm", "conntrack", ...NETFILTER_TOOLS];

/**
 * Makes the busybox userland (removed by the returned `remove`).
 * @returns its path, or undefined when busybox is not installed.
 */
export function busyboxUserland(): { dir: string; remove: () => void } | undefined {
  return busyboxWith(NETWORK_TOOLS);
}

/**
 * Makes the userland of the default debug image, netshoot (removed by the returned `remove`): busybox's, without
 * iptables-legacy (netshoot ships the nft backend only).
 * @returns its path, or undefined when busybox is not installed.
 */
export function netshootUserland(): { dir: string; remove: () => void } | undefined {
  return busyboxWith(NETWORK_TOOLS.filter((t) => !t.includes("-legacy")));
}

/**
 * Makes a busybox userland with only these of the host's network tools (e.g. none: an image that cannot list rules).
 * @returns its path, or undefined when busybox is not installed.
 */
export function busyboxWith(tools: readonly string[]): { dir: string; remove: () => void } | undefined {
  const busybox = findTool("busybox");
  if (!busybox) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "netpath-busybox-"));
  const applets = spawnSync(busybox, ["--list"], { encoding: "utf8" }).stdout.split("\n").filter((a) => /^[\w.[-]+$/.test(a));
  for (const name of tools) {
    const host = findTool(name);
    // the multi-call binaries (xtables-*-multi) dispatch on the name they are called by: link under the same name
    if (host) symlinkSync(realpathSync(host), join(dir, name));
  }
  for (const a of applets) if (a !== "bash" && !existsSync(join(dir, a))) symlinkSync(busybox, join(dir, a));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Makes the kube-proxy image's userland (removed by the returned `remove`).
 * @returns its path, or undefined when dash or grep is not installed.
 */
export function kubeProxyImageUserland(): { dir: string; remove: () => void } | undefined {
  const tools: [string, string | undefined][] = [["sh", findTool("dash")], ...["cat", "chmod", "grep", "ln", "rm", "sleep", "wc"].map((t): [string, string | undefined] => [t, findTool(t)])];
  if (tools.some(([, p]) => p === undefined)) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "netpath-kube-proxy-image-"));
  for (const [name, p] of tools) symlinkSync(realpathSync(p!), join(dir, name));
  for (const name of NETFILTER_TOOLS) {
    const host = findTool(name);
    if (host) symlinkSync(realpathSync(host), join(dir, name));
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
