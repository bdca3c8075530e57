/**
 * The shell pieces of the node collection script (src/kube/targeted_script.ts assembles the one script that runs on a
 * node, for one Service or with `scope:node` for the whole node), printing delimited sections in the format parsed by
 * src/bundle/collection_output.ts. Constants: nothing from the user's input is ever interpolated into them.
 * - {@link SCRIPT_MARKERS}: the section markers (`begin`/`end`, each section's exit status), `have`, `run`, `absent`
 *   (a missing tool is a finding with exit 127 and a hint, not a failure).
 * - {@link SCRIPT_SAVE_CMD}: `save_cmd BACKEND FAMILY` — sets `SV` to the save command of a backend: `iptables-<backend>-save`, or
 *   plain `iptables-save` when its `--version` names that backend, or (legacy only) the host's binary through
 *   `chroot /host` when the host filesystem is mounted there (`--profile sysadmin`); and `kubelet_chains`, which finds
 *   kubelet's `KUBE-IPTABLES-HINT` / `KUBE-KUBELET-CANARY` (kubernetes-sigs/iptables-wrappers detect.go DetectMode).
 * - {@link SCRIPT_NODE_FACTS}: `ip-addr` (`ip -o addr show`) and `ip-route-local` (`ip route show table local`), which
 *   decide `-m addrtype --dst-type LOCAL` — in an image without `ip` (kube-proxy's), `ip-route-local` holds the
 *   `local` routes of /proc/net/fib_trie (IPv4, `local ADDR[/LEN]`) and of /proc/net/ipv6_route (RTF_LOCAL, `local
 *   ADDR/LEN` with the address in full hexadecimal groups, matched as a prefix) —, and `sysctls` (bridge-nf-call-iptables, each bridge port's hairpin_mode,
 *   route_localnet, conntrack liberal mode, IPVS conntrack) from /proc/sys and /sys/class/net, with shell builtins
 *   only (`read`, parameter expansion; one subshell per bridge port for its bridge's name): a node with a hundred
 *   pods has a hundred bridge ports.
 *
 * POSIX sh (dash, busybox ash, bash): the kube-proxy image and netshoot both have one.
 *
 * Runtime-neutral: string constants.
 * @module
 */
import { COLLECTION_MARK } from "../bundle/collection_output.ts";

/**
 * Shell functions every collection script starts with: the markers, `have`, `run`, `absent`, and the per-section time
 * limit. `begin` notes when a section starts (from /proc/uptime, in centiseconds, without a fork); `end` prints its
 * exit status, `ms=` the time it took on the node, and `timeout=N` when it was stopped at its limit.
 * `NP_T` is that limit in seconds (0: none; set by the script from its `timeout:N` argument); `to CMD…` runs a
 * command under it with `timeout(1)` when the image has one (coreutils or busybox), and `over` tells a section's own
 * loop that its time is up, so the loop stops (the section is then marked timed out). A section that failed after
 * its limit is reported as timed out, whatever the exit status `timeout` chose (124 coreutils, 143 busybox).
 * `runq` runs a section's command without `timeout(1)` (a process less): for `ip`'s netlink dumps, which answer at
 * once (a wedged one is still bounded by the exec's own --timeout).
 */
export const SCRIPT_MARKERS = `# kubectl-netpath node collection script (read-only)
M='${COLLECTION_MARK}'
NP_T=0; T0=0; TMO=
both() { printf '%s\\n' "$1"; printf '%s\\n' "$1" >&2; }
now() { NOW=0; if read NP_U _ </proc/uptime 2>/dev/null; then NP_U=\${NP_U%.*}\${NP_U#*.}; NP_U=\${NP_U#"\${NP_U%%[!0]*}"}; NOW=\${NP_U:-0}; fi; }
begin() { now; T0=$NOW; TMO=; both "\${M}begin $1 cmd=$2"; }
over() { [ "$NP_T" -gt 0 ] && [ "$T0" -gt 0 ] && now && [ $((NOW - T0)) -ge $((NP_T * 100)) ]; }
end() { r=$2; [ -z "$TMO" ] && [ "$r" != 0 ] && over && TMO=1; now; NP_E=; [ "$T0" -gt 0 ] && NP_E=" ms=$(( (NOW - T0) * 10 ))"; [ -n "$TMO" ] && NP_E="$NP_E timeout=$NP_T"; printf '\\n'; printf '\\n' >&2; both "\${M}end $1 exit=$r$NP_E"; }
have() { command -v "$1" >/dev/null 2>&1; }
TOC=; have timeout && TOC=1
to() { if [ "$NP_T" -gt 0 ] && [ -n "$TOC" ]; then timeout "$NP_T" "$@"; else "$@"; fi; }
run() { n=$1; shift; begin "$n" "$*"; to "$@"; end "$n" $?; }
runq() { n=$1; shift; begin "$n" "$*"; "$@"; end "$n" $?; }
absent() { begin "$1" "$2"; printf '%s: not found%s\\n' "$2" "$3" >&2; end "$1" 127; }
`;

/**
 * `save_cmd BACKEND iptables|ip6tables`: sets `SV` (without a subshell) to the save command of that backend (`iptables-<backend>-save`, or plain
 * `iptables-save` when its `--version` names that backend, or for legacy the host's binary through `chroot /host`);
 * `kubelet_chains`: whether stdin (a save) declares kubelet's KUBE-IPTABLES-HINT or KUBE-KUBELET-CANARY (grep, else sh
 * builtins); `has_line LINE FILE`: whether FILE has that line (sh builtins: /proc/net/ip_tables_names without grep).
 */
export const SCRIPT_SAVE_CMD = `save_cmd() {
  SV=
  if have "$2-$1-save"; then SV="$2-$1-save"; return; fi
  if have "$2-save"; then
    case "$("$2-save" --version 2>/dev/null)" in
      *nf_tables*) if [ "$1" = nft ]; then SV="$2-save"; return; fi ;;
      *) if [ "$1" = legacy ]; then SV="$2-save"; return; fi ;;
    esac
  fi
  if [ "$1" = legacy ] && [ -d /host/usr ] && have chroot; then
    for d in /usr/sbin /sbin /usr/bin /bin; do
      if [ -x "/host$d/$2-legacy-save" ]; then SV="chroot /host $d/$2-legacy-save"; return; fi
    done
  fi
}
kubelet_chains() {
  if have grep; then grep -qE '^:(KUBE-IPTABLES-HINT|KUBE-KUBELET-CANARY)'; return; fi
  kr=1; while IFS= read -r l; do case $l in ":KUBE-IPTABLES-HINT "*|":KUBE-KUBELET-CANARY "*) kr=0 ;; esac; done; return $kr
}
has_line() { while IFS= read -r l; do [ "$l" = "$1" ] && return 0; done < "$2"; return 1; }
`;

/** The node facts both scripts end with: `ip-addr`, `ip-route-local`, `sysctls`. */
export const SCRIPT_NODE_FACTS = `ft() {
have cat || { echo "cat: not found" >&2; return 127; }
fo=$(cat /proc/net/fib_trie) || return 1
set -f; IFS='
'; set -- $fo; IFS=' 	
'; set +f
fa=; fs=" "
for fl do
case $fl in
*"|-- "*) fa=\${fl##*"|-- "} ;;
*" host LOCAL") fn=\${fl%% host LOCAL}; fn=\${fn##*/}; fr=$fa; [ "$fn" = 32 ] || fr=$fa/$fn
case $fs in *" $fr "*) ;; *) fs="$fs$fr "; printf 'local %s\\n' "$fr" ;; esac ;;
esac
done
[ -r /proc/net/ipv6_route ] || return 0
fo=$(cat /proc/net/ipv6_route) || return 0
set -f; IFS='
'; set -- $fo; IFS=' 	
'; set +f
for fl do
set -- $fl
case $9 in [89a-f]*) ;; *) continue ;; esac
fa=$1; fr=; while [ -n "$fa" ]; do fn=\${fa#????}; fr="$fr\${fr:+:}\${fa%"$fn"}"; fa=$fn; done
fr=$fr/$((0x$2))
case $fs in *" $fr "*) ;; *) fs="$fs$fr "; printf 'local %s\\n' "$fr" ;; esac
done
}
if have ip; then runq ip-addr ip -o addr show; runq ip-route-local ip route show table local
else absent ip-addr ip ' (the local addresses are read from /proc/net/fib_trie and /proc/net/ipv6_route instead)'; begin ip-route-local "read /proc/net/fib_trie and /proc/net/ipv6_route (no ip in this image)"; ft; end ip-route-local $?; fi
begin sysctls "read /proc/sys/net and /sys/class/net/*/brport"
rd() { V=; IFS= read -r V 2>/dev/null <"$1" || [ -n "$V" ]; }
for k in bridge.bridge-nf-call-iptables bridge.bridge-nf-call-ip6tables netfilter.nf_conntrack_tcp_be_liberal ipv4.vs.conntrack; do
  case $k in ipv4.vs.*) f=ipv4/vs/\${k#ipv4.vs.} ;; *) f=\${k%%.*}/\${k#*.} ;; esac
  if rd "/proc/sys/net/$f"; then printf 'net.%s=%s\\n' "$k" "$V"; fi
done
for f in /proc/sys/net/ipv4/conf/*/route_localnet; do
  d=\${f%/route_localnet}; if rd "$f"; then printf 'net.ipv4.conf.%s.route_localnet=%s\\n' "\${d##*/}" "$V"; fi
done
for f in /sys/class/net/*/brport/hairpin_mode; do
  p=\${f%/brport/hairpin_mode}; p=\${p##*/}
  if rd "$f"; then b=$(cd -P "/sys/class/net/$p/master" 2>/dev/null && pwd -P); printf 'brport.%s.%s.hairpin_mode=%s\\n' "\${b##*/}" "$p" "$V"; fi
done
end sysctls 0
`;
