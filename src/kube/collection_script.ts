/**
 * The one script that runs on a node (one exec per node, `sh -c SCRIPT`), read-only, printing delimited sections in
 * the format parsed by src/bundle/collection_output.ts. It is a constant: nothing from the user's input is ever
 * interpolated into it, and it takes no arguments.
 *
 * What it prints, in order:
 * - `iptables-backend`: `nft` or `legacy`, detected as kubernetes-sigs/iptables-wrappers does
 *   (pkg/xtables/detect.go DetectMode): kubelet's `KUBE-IPTABLES-HINT` / `KUBE-KUBELET-CANARY` chain in
 *   `iptables-nft-save -t mangle` (then ip6tables) → nft; else the same chains in the full `iptables-legacy-save`
 *   (never `-t mangle`, which would create the table) → legacy; else, when this image has no iptables-legacy-save
 *   (netshoot) and `iptables-nft-save` prints on stderr its own `# Warning: iptables-legacy tables present` (iptables
 *   v1.8+, iptables/xtables-save.c, from /proc/net/ip_tables_names) → legacy, so the missing binary is reported with
 *   its hint instead of an empty nft dump being analysed; else nft (the wrappers' default). stderr says why.
 * - `iptables-save`, `ip6tables-save`: the save command of that backend: `iptables-<backend>-save`, or plain
 *   `iptables-save` when its `--version` names that backend, or (legacy only) the host's binary through
 *   `chroot /host` when the host filesystem is mounted there (`--profile sysadmin`). The command used is in the
 *   section's `cmd=`. A missing binary gives exit 127 and a hint (netshoot ships no iptables-legacy).
 * - `ipvsadm` (`ipvsadm -Ln --exact`), `ipset` (`ipset list`), `nft-json` (`nft -j list ruleset`).
 * - `proxy-mode`: the body of `http://127.0.0.1:10249/proxyMode` (kube-proxy's metrics server, which binds to
 *   localhost by default) with curl, wget, or bash's /dev/tcp, whichever exists.
 * - `ip-addr` (`ip -o addr show`) and `ip-route-local` (`ip route show table local`): the node's local addresses,
 *   which decide `-m addrtype --dst-type LOCAL` and so the hook a packet reaches.
 * - `sysctls`: the settings that change verdicts (bridge-nf-call-iptables, each bridge port's hairpin_mode,
 *   route_localnet, conntrack liberal mode, IPVS conntrack), read from /proc/sys and /sys/class/net.
 * Every section records its own exit status, so a missing tool is a finding, not a failure; the script exits 0.
 *
 * POSIX sh (dash, busybox ash, bash): the kube-proxy image and netshoot both have one.
 *
 * Runtime-neutral: a string constant.
 * @module
 */
import { COLLECTION_MARK, COLLECTION_VERSION } from "../bundle/collection_output.ts";

/** Shell functions every collection script starts with: the markers, `have`, `run`, `absent`. */
export const SCRIPT_MARKERS = `# kubectl-netpath node collection script (read-only)
M='${COLLECTION_MARK}'
both() { printf '%s\\n' "$1"; printf '%s\\n' "$1" >&2; }
begin() { both "\${M}begin $1 cmd=$2"; }
end() { printf '\\n'; printf '\\n' >&2; both "\${M}end $1 exit=$2"; }
have() { command -v "$1" >/dev/null 2>&1; }
run() { n=$1; shift; begin "$n" "$*"; "$@"; end "$n" $?; }
absent() { begin "$1" "$2"; printf '%s: not found%s\\n' "$2" "$3" >&2; end "$1" 127; }
`;

/**
 * `save_cmd BACKEND iptables|ip6tables`: the save command of that backend (`iptables-<backend>-save`, or plain
 * `iptables-save` when its `--version` names that backend, or for legacy the host's binary through `chroot /host`);
 * `kubelet_chains`: whether stdin (a save) declares kubelet's KUBE-IPTABLES-HINT or KUBE-KUBELET-CANARY.
 */
export const SCRIPT_SAVE_CMD = `save_cmd() {
  if have "$2-$1-save"; then echo "$2-$1-save"; return; fi
  if have "$2-save"; then
    case "$("$2-save" --version 2>/dev/null)" in
      *nf_tables*) if [ "$1" = nft ]; then echo "$2-save"; return; fi ;;
      *) if [ "$1" = legacy ]; then echo "$2-save"; return; fi ;;
    esac
  fi
  if [ "$1" = legacy ] && [ -d /host/usr ] && have chroot; then
    for d in /usr/sbin /sbin /usr/bin /bin; do
      if [ -x "/host$d/$2-legacy-save" ]; then echo "chroot /host $d/$2-legacy-save"; return; fi
    done
  fi
}
kubelet_chains() { grep -qE '^:(KUBE-IPTABLES-HINT|KUBE-KUBELET-CANARY)'; }
`;

/** The whole-node script's prelude: the markers, then `save_cmd` and `kubelet_chains`. */
const SCRIPT_PRELUDE = SCRIPT_MARKERS + SCRIPT_SAVE_CMD;

/** The node facts both scripts end with: `ip-addr`, `ip-route-local`, `sysctls`. */
export const SCRIPT_NODE_FACTS = `if have ip; then run ip-addr ip -o addr show; run ip-route-local ip route show table local; else absent ip-addr ip ''; absent ip-route-local ip ''; fi
begin sysctls "read /proc/sys/net and /sys/class/net/*/brport"
for k in net/bridge/bridge-nf-call-iptables net/bridge/bridge-nf-call-ip6tables net/netfilter/nf_conntrack_tcp_be_liberal net/ipv4/vs/conntrack; do
  if [ -r "/proc/sys/$k" ]; then printf '%s=%s\\n' "$(printf '%s' "$k" | tr / .)" "$(cat "/proc/sys/$k")"; fi
done
for f in /proc/sys/net/ipv4/conf/*/route_localnet; do
  if [ -r "$f" ]; then printf 'net.ipv4.conf.%s.route_localnet=%s\\n' "$(basename "$(dirname "$f")")" "$(cat "$f")"; fi
done
for f in /sys/class/net/*/brport/hairpin_mode; do
  if [ -r "$f" ]; then p=$(basename "$(dirname "$(dirname "$f")")"); printf 'brport.%s.%s.hairpin_mode=%s\\n' "$(basename "$(readlink "/sys/class/net/$p/master")")" "$p" "$(cat "$f")"; fi
done
end sysctls 0
`;

/** The collection script (see the module comment). */
export const COLLECTION_SCRIPT = SCRIPT_PRELUDE + `both "\${M}collect version=${COLLECTION_VERSION}"
N4=$(save_cmd nft iptables); N6=$(save_cmd nft ip6tables)
L4=$(save_cmd legacy iptables); L6=$(save_cmd legacy ip6tables)
begin iptables-backend "detect as iptables-wrappers"
if [ -n "$N4" ] && { $N4 -t mangle; if [ -n "$N6" ]; then $N6 -t mangle; fi; } 2>/dev/null | kubelet_chains; then
  B=nft; echo "kubelet chain KUBE-IPTABLES-HINT or KUBE-KUBELET-CANARY found by $N4 -t mangle" >&2
elif [ -n "$L4" ] && { $L4; if [ -n "$L6" ]; then $L6; fi; } 2>/dev/null | kubelet_chains; then
  B=legacy; echo "kubelet chain KUBE-IPTABLES-HINT or KUBE-KUBELET-CANARY found by $L4" >&2
elif [ -z "$L4" ] && [ -n "$N4" ] && $N4 2>&1 >/dev/null | grep -q '^# Warning: iptables-legacy tables present'; then
  B=legacy; echo "no kubelet chain found by $N4, which warns that iptables-legacy tables are present; iptables-legacy-save is not in this image" >&2
else
  B=nft; echo "no kubelet chain found by either backend: nft, the iptables-wrappers default" >&2
  if [ -z "$L4" ]; then echo "iptables-legacy-save is not in this image: the legacy backend was not checked" >&2; fi
  if [ -z "$N4" ]; then echo "iptables-nft-save is not in this image: the nft backend was not checked" >&2; fi
fi
echo "$B"
end iptables-backend 0
if [ "$B" = nft ]; then S4=$N4; S6=$N6; else S4=$L4; S6=$L6; fi
H=''
if [ "$B" = legacy ]; then H=' (the node uses the legacy iptables backend: use the kube-proxy pod, whose image has both backends, or --profile sysadmin to run the host binaries through chroot /host)'; fi
if [ -n "$S4" ]; then run iptables-save $S4; else absent iptables-save "iptables-$B-save" "$H"; fi
if [ -n "$S6" ]; then run ip6tables-save $S6; else absent ip6tables-save "ip6tables-$B-save" "$H"; fi
if have ipvsadm; then run ipvsadm ipvsadm -Ln --exact; else absent ipvsadm ipvsadm ''; fi
if have ipset; then run ipset ipset list; else absent ipset ipset ''; fi
if have nft; then run nft-json nft -j list ruleset; else absent nft-json nft ''; fi
U=http://127.0.0.1:10249/proxyMode
if have curl; then run proxy-mode curl -sS -m 5 "$U"
elif have wget; then run proxy-mode wget -q -T 5 -O - "$U"
elif have bash; then run proxy-mode bash -c 'exec 3<>/dev/tcp/127.0.0.1/10249 && printf "GET /proxyMode HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n" >&3 && tr -d "\\r" <&3 | sed "1,/^$/d"'
else absent proxy-mode curl ' (nor wget, nor bash)'; fi
` + SCRIPT_NODE_FACTS + `both "\${M}done"
exit 0
`;

/** The exec command: `sh -c SCRIPT` (argv, never a composed shell string). */
export const COLLECTION_COMMAND: readonly string[] = ["sh", "-c", COLLECTION_SCRIPT];
