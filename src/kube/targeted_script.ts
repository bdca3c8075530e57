/**
 * The collection script for a question about one Service (issue 12): the proxy mode first, then only the state that
 * mode programs, and of the iptables rules only those the Service's packets can traverse. On a node with 10,000
 * Services this reads a few dozen chains instead of whole tables: with the nft backend `iptables-nft-save` costs
 * about 30 s of CPU there, listing one chain (`iptables-nft -t nat -S CHAIN`) a few ms.
 *
 * It runs as `sh -s KEY…` with the script on stdin (the keys are positional parameters, never part of the script
 * text); a live run wraps that in {@link GZIP_WRAPPER} ({@link compressedCommand}), so stdout travels compressed where
 * the image has gzip. With the first argument `scope:node` ({@link nodeCommand}: `capture`, `--whole-node`) it lists whole tables
 * of what the mode programs instead (whole `iptables-<backend>-save`, never `nft list ruleset` in iptables or ipvs
 * mode), its stdout gzip-compressed.
 * The keys are the question's addresses and ports, `ip:ADDR` and `port:N` words validated by
 * {@link targetedCommand}; the awk programs of rule_select_awk.ts read them from the environment.
 *
 * An argument `walk:N` (after `timeout:N`, before the keys) sets that threshold (see {@link CHAIN_WALK_FROM}).
 * Arguments `gzip:N` and `gzipnft:M` (after `scope:node`, before `timeout:N`) make a run in an image without gzip stop
 * before large state: a whole-node run before the nft backend's save when nat `KUBE-SERVICES` holds at least N rules
 * (its `iptables-save` section is then {@link DEFERRED}, exit {@link DEFERRED_EXIT}); any run in nftables mode before
 * `nft list table` when `nft list map ip kube-proxy service-ips` prints at least M lines (`nft-text` deferred); for
 * the caller to collect where the tables travel compressed ({@link DeferUncompressed}).
 * An argument `timeout:N` (after `scope:node`, before the keys) limits each section to N seconds on the node
 * (collection_script.ts: `to`, `over`); every section's end marker says how long it took (`ms=`) and, when it was
 * stopped at its limit, `timeout=N`.
 *
 * What it prints, in order (the marker format of src/bundle/collection_output.ts):
 * - `proxy-mode`: kube-proxy's `/proxyMode` (127.0.0.1:10249), 2 s at most: bash's `/dev/tcp` with builtins, else curl,
 *   else wget (under timeout(1) when the image has it: busybox 1.35's wget crashes on `-T`).
 * - `collection-scope`: `scope=service`, `mode=` the mode followed and `mode-source=` how it was learnt (the
 *   `/proxyMode` answer; else table `ip kube-proxy` exists → nftables (probed by listing its set `cluster-ips`,
 *   pkg/proxy/nftables/proxier.go `clusterIPsSet`: 0.04 s on a 10,000-Service node, where listing the table takes ~9 s
 *   and ~1 GB of memory); else interface `kube-ipvs0` exists → ipvs (read
 *   in /sys/class/net: kube-proxy's image has no `ip`, nor bash, curl or wget to ask `/proxyMode`);
 *   else iptables), `keys=`, `section-timeout=N` (and whether the image has timeout(1) to enforce it), and one
 *   `skipped=SECTION: why` line per section left out.
 * - iptables and ipvs modes: `iptables-backend` (detected as iptables-wrappers does, by listing the kubelet chains
 *   `KUBE-IPTABLES-HINT` / `KUBE-KUBELET-CANARY` of table mangle — never `iptables-nft-save -t mangle`, which reads the
 *   whole ruleset — and, for legacy, only when /proc/net/ip_tables_names lists mangle, so no table is created),
 *   then `iptables-save` / `ip6tables-save` holding, in iptables-save format, the chains reachable from the builtin
 *   chains through the rules rule_select_awk.ts keeps. nft backend: it first lists nat `KUBE-SERVICES` (one rule per
 *   Service frontend; its rules are counted with shell builtins, or grep once the listing exceeds 64 KiB, where a
 *   loop of dash takes longer than the process) and, when that holds at least `walk:N` rules ({@link CHAIN_WALK_FROM} by default), goes chain
 *   by chain (`iptables-nft -t T -S C`: a few ms per chain on a 10,000-Service node, where `iptables-nft-save` takes
 *   ~30 s of CPU and `nft list tables` ~27 s, measured in tests/targeted_kernel.test.ts's netns; the listing of
 *   KUBE-SERVICES is reused); on a smaller ruleset, where a save costs less than the ~150 chain listings, it filters
 *   one `iptables-nft-save` with awk, as for legacy; the section's command says which and why, and its time includes
 *   the first listing. Legacy backend: always one `iptables-legacy-save` (the legacy kernel interface returns a whole
 *   table per call, whatever is listed: ~0.6 s there) filtered by awk. In an image without awk — kube-proxy's own
 *   (distroless-iptables: dash, grep, no awk, sed or gzip) — the chain walk filters each listing with sh builtins
 *   (rule_select_sh.ts, the same decisions), and the saves that awk would filter (the legacy backend's, and the nft
 *   backend's below `walk:N` rules) are walked with grep instead (`sg`, the same selection); only an image without
 *   awk and grep collects whole tables, which the report says.
 * - ipvs mode: `ipvsadm` (`ipvsadm -Ln --exact`) and `ipset` (the `KUBE-*` sets only; an `ipset list -n` that fails
 *   fails the section, which would otherwise list no set at exit 0).
 * - nftables mode: `nft-text`: `nft list table ip kube-proxy` and `… ip6 kube-proxy`, as nft prints them. Text, not
 *   `nft -j`: on a 10,000-Service node (nft 1.0.6, measured in a network namespace) both take ~9 s, but `nft -j` holds
 *   the whole JSON tree (951 MB peak RSS, beyond the debug pod's 512Mi limit: debug_pod.ts DEBUG_RESOURCES) and prints
 *   51.8 MB (4.3 MB with `gzip -1`), the text listing 426 MB and 15.5 MB (2.0 MB); the analysis reads both
 *   (src/service/nftables/datapath.ts). Listing only the Service's chains would not help there: every `nft list chain`
 *   costs ~2.9 s on such a node (nft fetches the elements of each of the 10,000 anonymous vmaps, one netlink request
 *   each), and nft 1.0.6 lists one chain per process.
 * - A listing killed by a signal (exit above 128; 137 is SIGKILL, in a pod the out-of-memory killer at its memory limit),
 *   or a chain's `-S` listing that fails otherwise than iptables' exit 1 for a chain that does not exist (2 a parameter
 *   problem, 4 a resource problem), ends its section with that status and a stderr line naming it, never skipped as a
 *   missing table or chain would be
 *   (a failed section is not analysed: src/bundle/bundle.ts failedSection); after a killed `nft list table`, the section
 *   also says how many lines `nft list map ip kube-proxy service-ips` prints, which sizes the next debug pod
 *   (debug_pod.ts retryMemoryMiB).
 * - `ip-addr`, `ip-route-local`, `sysctls` (as the whole-node script).
 *
 * Runtime-neutral: string constants and a pure argv builder.
 * @module
 */
import { COLLECTION_VERSION } from "../bundle/collection_output.ts";
import { isIPAddress } from "../model/ip.ts";
import { SCRIPT_MARKERS, SCRIPT_NODE_FACTS, SCRIPT_SAVE_CMD } from "./collection_script.ts";
import { AWK_SELECT, KUBE_PROXY_ROOTS } from "./rule_select_awk.ts";
import { SH_CHAIN_AWK, SH_CHAIN_FILTER, SH_SAVE_FILTER } from "./rule_select_sh.ts";

/**
 * On the nft backend, the number of rules in nat `KUBE-SERVICES` (about one per Service frontend) from which the
 * targeted script lists chain by chain (`iptables-nft -t T -S C`, a process per chain: ~0.3 s on any node, ~0.7 s at
 * 10,000 Services) instead of filtering one `iptables-nft-save` with awk (whose cost grows with the ruleset: 5 ms at
 * 1 Service, 78 ms at 300, 460 ms at 1,000, ~30 s at 10,000; measured in a network namespace on this project's
 * 2-core bench machine). The legacy backend always reads a save (its kernel interface returns whole tables).
 */
export const CHAIN_WALK_FROM = 500;

/**
 * The word an `iptables-save` (whole-node, nft backend) or `nft-text` (nftables mode) section starts its stderr with
 * when the script stopped before listing ({@link DeferUncompressed}): the image has no gzip and the tables are large,
 * so the caller may collect them where they can be compressed. The section's exit status is {@link DEFERRED_EXIT}.
 */
export const DEFERRED = "deferred";
/** The exit status of a deferred section (see {@link DEFERRED}); no command of the script exits with it. */
export const DEFERRED_EXIT = 125;

/**
 * Below {@link CHAIN_WALK_FROM}, the time (s) the nft backend's `iptables-nft-save` gets before the script lists chain
 * by chain after all (when the image has timeout(1)): few Services can still mean many endpoints, and the save's cost
 * follows the whole ruleset. Bounds the worst case at this plus the chain walk.
 */
export const SAVE_BUDGET_S = 1;

// It is put between single quotes in the script.
if (AWK_SELECT.includes("'")) throw new Error("AWK_SELECT must not contain a single quote");

/**
 * The targeted collection script (see the module comment), read by `sh -s` from the exec's stdin (it is too long for
 * the exec URL, where the whole-node script travels). It is one `{ … }` group, so the shell has read all of it
 * before the first command runs, and the group's first command points stdin at /dev/null: nothing it runs can read
 * the script, and over a v4 stream (no end-of-input signal) the shell exits at the group's `exit 0`.
 */
export const TARGETED_SCRIPT = compact(`{
exec </dev/null
` + SCRIPT_MARKERS + SCRIPT_SAVE_CMD + `both "\${M}collect version=${COLLECTION_VERSION}"
SC=service; T="the chains of the Service's packets"
case "$1" in scope:node) SC=node; T="whole tables"; shift ;; esac
NP_Z=0; NP_ZN=0
case "$1" in gzip:*) NP_Z=\${1#gzip:}; shift ;; esac
case $NP_Z in ""|*[!0-9]*) NP_Z=0 ;; esac
case "$1" in gzipnft:*) NP_ZN=\${1#gzipnft:}; shift ;; esac
case $NP_ZN in ""|*[!0-9]*) NP_ZN=0 ;; esac
case "$1" in timeout:*) NP_T=\${1#timeout:}; shift ;; esac
case $NP_T in ""|*[!0-9]*) NP_T=0 ;; esac
NP_W=${CHAIN_WALK_FROM}
case "$1" in walk:*) NP_W=\${1#walk:}; shift ;; esac
case $NP_W in ""|*[!0-9]*) NP_W=${CHAIN_WALK_FROM} ;; esac
NP_KEYS="$*"; KR='${KUBE_PROXY_ROOTS.join(" ")}'; NP_ROOTS=$KR; export NP_KEYS NP_ROOTS
set -f
A='${AWK_SELECT}'
` + SH_CHAIN_AWK + SH_CHAIN_FILTER + SH_SAVE_FILTER + `U=http://127.0.0.1:10249/proxyMode
PB='exec 3<>/dev/tcp/127.0.0.1/10249 || exit 7
printf "GET /proxyMode HTTP/1.0\\r\\nHost: 127.0.0.1:10249\\r\\n\\r\\n" >&3; printf -v CR "\\r"; h=0
while IFS= read -r -t 2 l <&3 || [ -n "$l" ]; do l=\${l%"$CR"}
if [ $h = 2 ]; then printf "%s\\n" "$l"; elif [ $h = 0 ]; then h=1; elif [ -z "$l" ]; then h=2; fi; l=; done
[ $h = 2 ] && exit 0; echo "GET /proxyMode: no whole answer within 2 s" >&2; exit 28'
pm() {
if have bash; then if [ -n "$TOC" ]; then exec timeout 2 bash -c "$PB"; else exec bash -c "$PB"; fi
elif have curl; then exec curl -sS -m 2 $U
elif have wget; then if [ -n "$TOC" ]; then exec timeout 2 wget -q -O - $U; else exec wget -q -T 2 -O - $U; fi
else echo "curl: not found (nor wget, nor bash)" >&2; return 127; fi
}
begin proxy-mode "GET $U"
# pm runs in the substitution's subshell only, which its exec replaces (a process less per node)
PM=$(pm); r=$?
printf %s "$PM"
end proxy-mode $r
W="(/proxyMode did not answer)"
case "$PM" in
iptables|ipvs|nftables) MO=$PM; MS=/proxyMode ;;
*) if have nft && { nft list set ip kube-proxy cluster-ips >/dev/null 2>&1 || nft list table ip kube-proxy >/dev/null 2>&1; }; then MO=nftables; MS="table ip kube-proxy exists $W"
elif [ -e /sys/class/net/kube-ipvs0 ]; then MO=ipvs; MS="interface kube-ipvs0 exists $W"
elif have nft; then MO=iptables; MS="no table ip kube-proxy, no interface kube-ipvs0 $W"
else MO=iptables; MS="no interface kube-ipvs0, and no nft in this image to look for table ip kube-proxy $W"; fi ;;
esac
sk() { echo "skipped=$1: kube-proxy runs in $MO mode$2"; }
begin collection-scope "$SC"
printf 'scope=%s\\nmode=%s\\nmode-source=%s\\nkeys=%s\\n' $SC $MO "$MS" "$NP_KEYS"
if [ "$NP_T" -gt 0 ]; then if [ -n "$TOC" ]; then echo "section-timeout=$NP_T"; else echo "section-timeout=$NP_T (no timeout command in this image: a single command that hangs is stopped by the node's --timeout only)"; fi; fi
if [ $MO = nftables ]; then sk iptables-save; sk ip6tables-save
else sk nft-text "; nft list ruleset would list the iptables-nft tables again"; fi
if [ $MO != ipvs ]; then sk ipvsadm; sk ipset; fi
V6=1
if [ $SC = service ] && [ $MO != nftables ]; then V6=''; for k in $NP_KEYS; do case $k in ip:*:*) V6=1 ;; esac; done
[ -z "$V6" ] && echo "skipped=ip6tables-save: the question has no IPv6 address (the packets of an IPv4 Service never meet ip6tables)"; fi
end collection-scope 0
ic() {
IC=
if have $1-nft; then IC=$1-nft
elif have $1; then case "$($1 --version 2>/dev/null)" in *nf_tables*) IC=$1 ;; esac; fi
}
nr() { if have grep; then grep -c '^-A '; else awk '/^-A /{n++}END{print n+0}'; fi; }
cn() { KN=0; if [ \${#KS} -ge 65536 ]; then KN=$(printf '%s\n' "$KS" | nr); return; fi
NP_IFS=$IFS; IFS='
'; for l in $KS; do case $l in "-A "*) KN=$((KN + 1)) ;; esac; done; IFS=$NP_IFS; }
hi() { $1 -t mangle -S KUBE-IPTABLES-HINT >/dev/null 2>&1 || $1 -t mangle -S KUBE-KUBELET-CANARY >/dev/null 2>&1; }
lh() { [ -n "$1" ] && has_line mangle $2 2>/dev/null && $1 -t mangle 2>/dev/null | kubelet_chains; }
sl() {
i=$1; NP_TABLE=$2; export NP_TABLE; shift 2
q="$*"; seen=" "; D=""; R=""
while [ -n "$q" ]; do
c=\${q%% *}
case "$q" in *" "*) q=\${q#* } ;; *) q="" ;; esac
case "$c$seen" in "$seen"|*" $c "*) continue ;; esac
seen="$seen$c "
if over; then TMO=1; return 124; fi
if [ $NP_TABLE$c = natKUBE-SERVICES ] && [ -n "$KS" ]; then o=$KS; else o=$($i -t $NP_TABLE -S "$c" 2>/dev/null); x=$?
if [ $x -gt 128 ]; then echo "$i -t $NP_TABLE -S $c: killed by signal $((x - 128))" >&2; return $x; fi
if [ $x -gt 1 ]; then echo "$i -t $NP_TABLE -S $c: exit $x" >&2; return $x; fi
[ $x = 0 ] || continue; fi
if [ -n "$AW" ]; then ca $NP_TABLE; else cf $NP_TABLE; fi
done
printf '*%s\\n%s%sCOMMIT\\n' $NP_TABLE "$D" "$R"
}
sn() {
pe=$($1 -t filter -S INPUT 2>&1 >/dev/null); r=$?
if [ $r != 0 ]; then printf '%s\\n' "$pe" >&2; return $r; fi
sl "$1" raw PREROUTING OUTPUT || return $?
sl "$1" mangle PREROUTING INPUT FORWARD OUTPUT POSTROUTING $KR || return $?
sl "$1" nat PREROUTING INPUT OUTPUT POSTROUTING $KR || return $?
sl "$1" filter INPUT FORWARD OUTPUT $KR
}
if [ $MO != nftables ]; then
ic iptables; N4=$IC; ic ip6tables; N6=$IC
save_cmd nft iptables; SN4=$SV; save_cmd nft ip6tables; SN6=$SV; save_cmd legacy iptables; SL4=$SV; save_cmd legacy ip6tables; SL6=$SV
begin iptables-backend "detect as iptables-wrappers (the kubelet chains of table mangle)"
if [ -n "$N4" ] && { hi "$N4" || { [ -n "$N6" ] && hi "$N6"; }; }; then B=nft; echo "kubelet chain found by $N4 -t mangle -S" >&2
elif [ -z "$N4" ] && [ -n "$SN4" ] && { to $SN4 -t mangle; [ -n "$SN6" ] && to $SN6 -t mangle; } 2>/dev/null | kubelet_chains; then B=nft; echo "kubelet chain found by $SN4 -t mangle" >&2
elif lh "$SL4" /proc/net/ip_tables_names || lh "$SL6" /proc/net/ip6_tables_names; then B=legacy; echo "kubelet chain found by $SL4 -t mangle" >&2
elif [ -z "$SL4" ] && { read -r l </proc/net/ip_tables_names; } 2>/dev/null && [ -n "$l" ]; then B=legacy; echo "no kubelet chain found by the nft backend; /proc/net/ip_tables_names lists legacy tables; iptables-legacy-save is not in this image" >&2
else B=nft; echo "no kubelet chain found by either backend: nft, the iptables-wrappers default" >&2
[ -z "$SL4" ] && echo "iptables-legacy-save is not in this image: the legacy backend was not checked" >&2
[ -z "$N4$SN4" ] && echo "iptables-nft is not in this image: the nft backend was not checked" >&2
fi
echo $B
end iptables-backend 0
H=''
[ $B = legacy ] && H=' (the node uses the legacy iptables backend: use the kube-proxy pod, whose image has both backends, or --profile sysadmin to run the host binaries through chroot /host)'
AW=1; { [ $SC = service ] && have awk; } || AW=''
for P in iptables ip6tables; do
S=$P-save
[ $P = ip6tables ] && [ -z "$V6" ] && continue
if [ $B = nft ]; then [ $P = iptables ] && C=$N4 && V=$SN4 || { C=$N6; V=$SN6; }; else C=''; [ $P = iptables ] && V=$SL4 || V=$SL6; fi
if [ $B = nft ] && [ -n "$C" ] && [ $SC = service ]; then now; T1=$NOW; KN=0
KS=$($C -t nat -S KUBE-SERVICES 2>/dev/null) || KS=
cn
X="nat KUBE-SERVICES holds $KN rules"
if [ "$KN" -ge "$NP_W" ]; then X="$X, at least $NP_W: a listing per chain costs less than a save"
elif [ -z "$V" ]; then X="$X; no $P-nft-save in this image"
elif [ -z "$AW" ]; then KS=; if have grep; then begin $S "$V | grep: $T ($X, fewer than $NP_W: one save costs less than listing chain by chain; no awk in this image)"; T0=$T1; sg "$V"; end $S $?; continue; fi; X=
else
if [ -n "$TOC" ]; then o=$(timeout ${SAVE_BUDGET_S} $V 2>/dev/null); else o=$($V 2>/dev/null); fi
if [ $? = 0 ]; then begin $S "$V | awk: $T ($X, fewer than $NP_W: one save costs less than listing chain by chain)"; T0=$T1
printf '%s\n' "$o" | NP_MODE=save awk "$A"; end $S $?; o=; continue; fi
o=; X="$X, fewer than $NP_W, but $V did not succeed within ${SAVE_BUDGET_S} s"
fi
if [ -n "$X" ]; then begin $S "$C -t TABLE -S CHAIN: $T ($X)"; T0=$T1; sn "$C"; end $S $?; KS=; continue; fi
fi
if [ $SC = node ] && [ $P = iptables ] && [ "$NP_Z" -gt 0 ] && [ -n "$C" ] && ! have gzip; then
KN=$($C -t nat -S KUBE-SERVICES 2>/dev/null | nr)
if [ "\${KN:-0}" -ge "$NP_Z" ]; then begin $S "$V: ${DEFERRED} (no gzip in this image)"
echo "${DEFERRED}: no gzip in this image, and nat KUBE-SERVICES holds $KN rules (at least $NP_Z): whole tables would cross the API server as text" >&2
end $S ${DEFERRED_EXIT}; both "\${M}done"; exit 0; fi
fi
if [ -z "$V" ]; then absent $S $P-$B-save "$H"
elif [ -n "$AW" ]; then begin $S "$V | awk: $T"; { r=$( { { to $V; echo $? >&3; } | NP_MODE=save awk "$A" >&4; } 3>&1 ); a=$?; } 4>&1
case "\${r:-1}:$a" in *:0) ;; 0:*|141:*) r=$a; echo "awk (the Service's rules from $V): exit $a" >&2 ;; esac; end $S \${r:-1}
elif [ $SC = service ] && have grep; then begin $S "$V | grep: $T (no awk in this image)"; sg "$V"; end $S $?
else run $S $V
fi
done
fi
if [ $MO = ipvs ]; then
if have ipvsadm; then run ipvsadm ipvsadm -Ln --exact; else absent ipvsadm ipvsadm ''; fi
if have ipset; then begin ipset "ipset list KUBE-*"; r=0
IN=$(to ipset list -n) || { r=$?; echo "ipset list -n: exit $r" >&2; }
for s in $IN; do case $s in KUBE-*) if over; then TMO=1; r=124; break; fi; to ipset list $s || r=$? ;; esac; done
end ipset $r
else absent ipset ipset ''; fi
fi
nt() {
r=1
for f in ip ip6; do to nft list table $f kube-proxy 2>/dev/null; x=$?
if [ $x = 0 ]; then r=0; elif over; then TMO=1; return 124; elif [ $x -gt 128 ]; then echo "nft list table $f kube-proxy: killed by signal $((x - 128))" >&2; return $x; fi; done
[ $r = 0 ] || to nft list table ip kube-proxy
}
if [ $MO = nftables ]; then
if have nft; then
if [ "$NP_ZN" -gt 0 ] && ! have gzip; then EL=$(nft list map ip kube-proxy service-ips 2>/dev/null | wc -l)
if [ "\${EL:-0}" -ge "$NP_ZN" ]; then begin nft-text "nft list table ip kube-proxy: ${DEFERRED} (no gzip in this image)"
echo "${DEFERRED}: no gzip in this image, and map service-ips lists about $EL elements (at least $NP_ZN): kube-proxy's whole nftables tables would cross the API server as text" >&2
end nft-text ${DEFERRED_EXIT}; both "\${M}done"; exit 0; fi; fi
begin nft-text "nft list table ip kube-proxy; nft list table ip6 kube-proxy"; nt; r=$?
[ $r = 137 ] && echo "map service-ips lists about $(nft list map ip kube-proxy service-ips 2>/dev/null | wc -l) elements" >&2
end nft-text $r
else absent nft-text nft ''; fi
fi
set +f
` + SCRIPT_NODE_FACTS + `both "\${M}done"
exit 0
}
`);

/**
 * Drops indentation (the script travels on the exec's stdin, the whole-node wrapper in its URL); no line of it
 * continues a quoted string with leading spaces, and its here-document lines start at column 0 anyway.
 */
function compact(script: string): string {
  return script.split("\n").map((l) => l.trimStart()).join("\n");
}

/** What a targeted collection keeps rules for: the Service's addresses and ports. */
export interface TargetKeys {
  /** IPv4/IPv6 addresses (ClusterIPs, externalIPs, load-balancer IPs, endpoint IPs, node addresses, the packet's). */
  addresses: Iterable<string>;
  /** Ports matched without an address (NodePorts, health-check NodePorts, the packet's port). */
  ports: Iterable<number>;
}

/**
 * When the image has no gzip, stop before node state that would cross the API server large as text (script words
 * `gzip:N` and `gzipnft:M`), leaving the section {@link DEFERRED} for the caller to collect where it travels
 * compressed: whole-node runs on the nft backend from `iptablesRules` nat `KUBE-SERVICES` rules; any run in nftables
 * mode (which lists kube-proxy's whole tables) from `nftElements` lines of `nft list map ip kube-proxy service-ips`.
 */
export interface DeferUncompressed {
  iptablesRules: number;
  nftElements: number;
}

/** The script words of {@link DeferUncompressed}. */
function deferWords(d: DeferUncompressed | undefined): string[] {
  if (!d) return [];
  const ok = (n: number) => Number.isInteger(n) && n > 0;
  return [...(ok(d.iptablesRules) ? [`gzip:${d.iptablesRules}`] : []), ...(ok(d.nftElements) ? [`gzipnft:${d.nftElements}`] : [])];
}

/** Options of {@link targetedCommand}. */
export interface TargetedOptions {
  /** {@link DeferUncompressed} (nftables mode only, for a one-Service run). */
  deferUncompressed?: DeferUncompressed;
  /**
   * nft backend: list chain by chain when nat `KUBE-SERVICES` holds at least this many rules, else filter one
   * `iptables-nft-save` (script word `walk:N`). 0 always lists chain by chain. @default {@link CHAIN_WALK_FROM}
   */
  chainWalkFrom?: number;
}

/** How to run the targeted collection: argv and the script for its stdin. */
export interface TargetedCommand {
  /** `["sh", "-s", "ip:…", "port:…", …]`: the keys are the script's positional parameters. */
  command: string[];
  /** {@link TARGETED_SCRIPT}. */
  stdin: string;
}

/**
 * The script's `timeout:N` argument: the per-section time limit in whole seconds (at least 1), or none for 0 or
 * less (no limit). @param sectionTimeoutMs the limit in ms.
 */
function timeoutWord(sectionTimeoutMs: number | undefined): string[] {
  if (sectionTimeoutMs === undefined || !(sectionTimeoutMs > 0)) return [];
  return [`timeout:${Math.max(1, Math.ceil(sectionTimeoutMs / 1000))}`];
}

/**
 * The exec of a targeted collection.
 * @param keys the addresses and ports of the question; anything that is not an IP address or a port 1–65535 is
 *   dropped (so no key can carry anything but those characters).
 * @param sectionTimeoutMs time allowed to each section on the node (ms, rounded up to whole seconds; 0 or undefined:
 *   none): a section past it is stopped and marked timed out (`timeout=N` on its end marker).
 * @param options `chainWalkFrom` (script word `walk:N`; default {@link CHAIN_WALK_FROM}).
 * @returns argv (`sh -s [timeout:N] [walk:N] KEY…`, keys sorted and unique) and the script for stdin.
 */
export function targetedCommand(keys: TargetKeys, sectionTimeoutMs?: number, options: TargetedOptions = {}): TargetedCommand {
  const words = new Set<string>();
  for (const a of keys.addresses) if (/^[0-9A-Fa-f:.]+$/.test(a) && isIPAddress(a)) words.add(`ip:${a.toLowerCase()}`);
  for (const p of keys.ports) if (Number.isInteger(p) && p >= 1 && p <= 65535) words.add(`port:${p}`);
  const w = options.chainWalkFrom;
  const walk = w !== undefined && Number.isInteger(w) && w >= 0 ? [`walk:${w}`] : [];
  return { command: ["sh", "-s", ...deferWords(options.deferUncompressed), ...timeoutWord(sectionTimeoutMs), ...walk, ...[...words].sort()], stdin: TARGETED_SCRIPT };
}

/**
 * The outer shell of a collection: runs the script read from stdin with the words it is given and, when the image has
 * gzip, compresses its stdout with `gzip -1` (a 10,000-Service node's iptables-save is ~27 MB, ~4.5 MB compressed;
 * a one-Service question in IPVS or nftables mode lists whole ipvsadm/ipset/nft tables); stderr stays plain. A
 * constant: the words are its positional parameters (validated by the builders of this module).
 */
export const GZIP_WRAPPER = `if command -v gzip >/dev/null 2>&1; then sh -s "$@" | gzip -1; else exec sh -s "$@"; fi`;

/**
 * A targeted command (`sh -s WORD…`) run under {@link GZIP_WRAPPER}: what the live collection execs, so that its
 * stdout travels compressed where the image has gzip (src/kube/exec.ts inflates it). Tests run the plain command.
 * @param cmd from {@link targetedCommand}.
 * @returns `sh -c GZIP_WRAPPER sh WORD…` and the same stdin.
 * @throws {Error} when `cmd` is not a `sh -s` command.
 */
export function compressedCommand(cmd: TargetedCommand): TargetedCommand {
  if (cmd.command[0] !== "sh" || cmd.command[1] !== "-s") throw new Error(`not a sh -s command: ${cmd.command.slice(0, 2).join(" ")}`);
  return { command: ["sh", "-c", GZIP_WRAPPER, "sh", ...cmd.command.slice(2)], stdin: cmd.stdin };
}

/**
 * The exec of a whole-node collection (`capture`, `--whole-node`): the same script as {@link targetedCommand} with
 * `scope:node` (the proxy mode first, then whole tables of only what that mode programs), its stdout gzip-compressed
 * when the image has gzip (src/kube/exec.ts inflates it).
 * @param sectionTimeoutMs time allowed to each section on the node, as in {@link targetedCommand}.
 * @param options `deferUncompressed` ({@link DeferUncompressed}): on the nft backend, when the image has no gzip
 *   (kube-proxy's own) and nat `KUBE-SERVICES` holds at least that many rules, the script lists nothing more and ends
 *   with the `iptables-save` section {@link DEFERRED} (one `iptables-nft -t nat -S KUBE-SERVICES`, ~0.1 s on a
 *   10,000-Service node); in nftables mode the same with `nft-text` after one `nft list map`; so the caller can
 *   collect where the tables travel compressed.
 * @returns argv and the script for stdin.
 */
export function nodeCommand(sectionTimeoutMs?: number, options: { deferUncompressed?: DeferUncompressed } = {}): TargetedCommand {
  return compressedCommand({ command: ["sh", "-s", "scope:node", ...deferWords(options.deferUncompressed), ...timeoutWord(sectionTimeoutMs)], stdin: TARGETED_SCRIPT });
}
