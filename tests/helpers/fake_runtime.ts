/**
 * A container runtime's treatment of a container's `securityContext`, for the fake API server's exec (which runs
 * commands inside the network namespace of the pod's node): the command runs as uid 0 (as the debug pod does) in
 * a private mount namespace where
 * - `capabilities` set the bounding set (drop ALL + add → only those; otherwise the runtime's default set, as
 *   containerd's oci.WithDefaultCapabilities / Docker's default, plus add, minus drop); a uid-0 process's permitted
 *   and effective sets after exec are its bounding set, so this is what the command holds; inheritable and ambient
 *   sets are empty;
 * - `allowPrivilegeEscalation: false` sets no_new_privs (runc does);
 * - `readOnlyRootFilesystem: true` makes / and every other mount read-only except /proc, /sys, /dev (kernel and
 *   device file systems, as in a container), then mounts a fresh tmpfs at each emptyDir volume mount;
 * - `privileged: true` (or a pod without securityContext when `strict` is false) runs the command as is.
 * Not emulated: the seccomp profile (RuntimeDefault lets through the socket, netlink and getsockopt calls these
 * tools make; it blocks mount/unshare/ptrace-like calls, which they do not use), the user namespace, cgroups limits.
 *
 * Test helper: argv only, the command is never put into a shell string (the fixed wrapper script takes it as "$@").
 * @module
 */
import type { Pod } from "../../src/model/k8s.ts";

/** containerd's default capabilities (pkg/oci/spec_opts.go defaultUnixCaps... as in Docker's default set). */
export const RUNTIME_DEFAULT_CAPS = [
  "CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID", "SETUID", "SETFCAP", "SETPCAP", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE",
];

/** What the runtime applies to one container (see the module comment). */
export interface AppliedContext {
  /** Bounding (= permitted = effective for uid 0) capabilities, upper case without CAP_; undefined = all (privileged). */
  caps?: string[];
  noNewPrivs: boolean;
  readOnlyRoot: boolean;
  /** Mount paths of emptyDir volumes. */
  emptyDirs: string[];
}

interface SecurityContextLike {
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
}

/** The context a runtime applies to container `name` of `pod`. */
export function appliedContext(pod: Pod, name: string | undefined): AppliedContext {
  const c = (pod.spec?.containers ?? []).find((x) => x.name === name) ?? pod.spec?.containers?.[0];
  const sc = (c as { securityContext?: SecurityContextLike } | undefined)?.securityContext ?? {};
  const volumes = ((pod.spec as { volumes?: { name: string; emptyDir?: unknown }[] } | undefined)?.volumes ?? []);
  const mounts = ((c as { volumeMounts?: { name: string; mountPath: string }[] } | undefined)?.volumeMounts ?? []);
  const emptyDirs = mounts.filter((m) => volumes.some((v) => v.name === m.name && v.emptyDir !== undefined)).map((m) => m.mountPath);
  if (sc.privileged) return { noNewPrivs: false, readOnlyRoot: false, emptyDirs };
  const norm = (x: string) => x.toUpperCase().replace(/^CAP_/, "");
  const drop = (sc.capabilities?.drop ?? []).map(norm);
  const add = (sc.capabilities?.add ?? []).map(norm);
  const base = drop.includes("ALL") ? [] : RUNTIME_DEFAULT_CAPS.filter((x) => !drop.includes(x));
  const caps = [...new Set([...base, ...add])];
  return { caps, noNewPrivs: sc.allowPrivilegeEscalation === false, readOnlyRoot: sc.readOnlyRootFilesystem === true, emptyDirs };
}

// $1: 1 to make the file systems read-only; then emptyDir mount paths up to "--"; then the command.
const WRAPPER = `set -e
ro=$1; shift
if [ "$ro" = 1 ]; then
  awk '{print $2}' /proc/self/mounts | sort -u | while read -r m; do
    case "$m" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue ;; esac
    mount -o remount,bind,ro "$m" 2>/dev/null || true
  done
fi
while [ "$1" != "--" ]; do mount -t tmpfs -o size=1m,mode=0755 tmpfs "$1"; shift; done
shift
exec "$@"
`;

/**
 * The argv that runs `command` as the runtime would in container `name` of `pod` (to be run inside the node's
 * network namespace, e.g. after `ip netns exec NS`).
 */
export function containerArgv(pod: Pod, name: string | undefined, command: string[]): string[] {
  const a = appliedContext(pod, name);
  if (a.caps === undefined) return command;
  const setpriv = ["setpriv", "--inh-caps=-all", `--bounding-set=-all${a.caps.map((x) => `,+${x.toLowerCase()}`).join("")}`, ...(a.noNewPrivs ? ["--no-new-privs"] : []), "--"];
  return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", WRAPPER, "sh", a.readOnlyRoot ? "1" : "0", ...a.emptyDirs, "--", ...setpriv, ...command];
}
