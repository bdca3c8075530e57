/**
 * A busybox userland for the collection scripts: a directory to use as the whole PATH, where `sh`, `awk`, `sed`,
 * `tr`, `timeout`, `wget`, `cat`… are busybox applets (as in Alpine images such as netshoot, the default debug
 * image) and only the network tools come from the host (iproute2's `ip`, iptables and its backends, `nft`, `ipset`,
 * `ipvsadm`, `conntrack`), as an image ships them. No bash, no curl: the scripts' fallbacks run.
 * @module
 */
import { existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findTool } from "./netns.ts";

/** The host's network tools put on the busybox PATH (by the name a script calls). */
const NETWORK_TOOLS = [
  "ip", "nft", "ipset", "ipvsadm", "conntrack",
  ...["iptables", "ip6tables"].flatMap((t) => [t, `${t}-save`, `${t}-restore`, `${t}-nft`, `${t}-nft-save`, `${t}-nft-restore`, `${t}-legacy`, `${t}-legacy-save`, `${t}-legacy-restore`]),
];

/**
 * Makes the directory (removed by the returned `remove`).
 * @returns its path, or undefined when busybox is not installed.
 */
export function busyboxUserland(): { dir: string; remove: () => void } | undefined {
  const busybox = findTool("busybox");
  if (!busybox) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "netpath-busybox-"));
  const applets = spawnSync(busybox, ["--list"], { encoding: "utf8" }).stdout.split("\n").filter((a) => /^[\w.[-]+$/.test(a));
  for (const name of NETWORK_TOOLS) {
    const host = findTool(name);
    // the multi-call binaries (xtables-*-multi) dispatch on the name they are called by: link under the same name
    if (host) symlinkSync(realpathSync(host), join(dir, name));
  }
  for (const a of applets) if (a !== "bash" && !existsSync(join(dir, a))) symlinkSync(busybox, join(dir, a));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
