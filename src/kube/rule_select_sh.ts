/**
 * The targeted collection's chain filter in sh builtins alone, for images without awk — kube-proxy's own image among
 * them (registry.k8s.io/build-image/distroless-iptables: dash, cat, chmod, grep, ln, rm, sleep and wc beside iptables,
 * ipset and nft), the image collection prefers on a node. It decides what rule_select_awk.ts's `chain` mode decides,
 * rule by rule: which rules of one `iptables -t TABLE -S CHAIN` listing are kept and which chains they jump to.
 *
 * `cf TABLE` reads the listing from `$o` and appends to the caller's `D` (the chain's declaration, `:NAME POLICY
 * [0:0]`), `R` (each kept rule, a line each) and `q` (` TARGET` for each chain a kept rule jumps to, extension targets
 * left out); the keys come from `NP_KEYS` (`ip:ADDR`, `port:N`), as for the awk program. Helpers: `cw` (the words of a
 * rule outside double quotes, each quoted string made `Q`, as the awk program's `w()`), `cx` (its `-d`, `! -d`,
 * `--dport(s)` and first `-j`/`-g` target), `cm` (the awk program's `m()`). Their variables start with `x`.
 *
 * The listing is split into lines with one `set --` (dash's `read` takes a system call per byte: 0.5 s for the 10,000
 * rules of a 10,000-Service node's KUBE-SERVICES, against 0.1 s split), and a rule of a dispatch chain whose `-d` is
 * one address that is not a key is dropped without reading its words. Runs under `set -f` (the script's).
 * tests/awk_portability.test.ts compares it with the awk program under dash, bash and busybox sh.
 *
 * Runtime-neutral: a string constant.
 * @module
 */
import { DISPATCH_CHAINS, EXTENSION_TARGETS } from "./rule_select_awk.ts";

/** The shell functions `cw`, `cx`, `cm` and `cf` (see the module comment). */
export const SH_CHAIN_FILTER = `cw() {
xs=$1; xw=
while :; do
case $xs in *\\"*) ;; *) xw=$xw$xs; return ;; esac
xw=$xw\${xs%%\\"*}; xs=\${xs#*\\"}; xr=$xs
while :; do
xa=\${xr%%\\"*}; xb=\${xr%%\\\\*}
if [ \${#xb} -lt \${#xa} ]; then xr=\${xr#"$xb"}; case $xr in \\\\?*) xr=\${xr#??} ;; *) xw=$xw\\"$xs; return ;; esac
elif [ "$xa" != "$xr" ]; then xr=\${xr#"$xa"}; xr=\${xr#?}; break
else xw=$xw\\"$xs; return; fi
done
xw=\${xw}Q; xs=$xr
done
}
cx() {
xd=; xng=; xp=; xg=; xgd=; xnx=; xpv=
for xv in $xw; do
case $xnx in d) xd=$xv ;; p) xp=$xv ;; g) xg=$xv ;; esac
xnx=
case $xv in
-d) xd=; xnx=d; [ "$xpv" = "!" ] && xng=1 ;;
--dport) xp=; xnx=p ;;
--dports) xp='*' ;;
-j|-g) [ -z "$xgd" ] && xgd=1 && xnx=g ;;
esac
xpv=$xv
done
}
cm() {
if [ -n "$xd" ]; then
[ -n "$xng" ] && return 0
case $xd in
*/32|*/128) case " $NP_KEYS " in *" ip:\${xd%/*} "*) return 0 ;; esac ;;
*/*) return 0 ;;
*) case " $NP_KEYS " in *" ip:$xd "*) return 0 ;; esac; return 1 ;;
esac
else
case $xp in ""|"*"|*:*) return 0 ;; esac
case " $NP_KEYS " in *" port:$xp "*) return 0 ;; esac
fi
[ "$1$2" = natKUBE-SERVICES ] && [ -z "$xS1" ] && case $xg in KUBE-SVC-*) return 0 ;; esac
return 1
}
cf() {
xt=$1; xS1=
IFS='
'; set -- $o; IFS=' 	
'
for xl do
case $xl in
"-P "*) xr=\${xl#-P }; xn=\${xr%% *}; xr=\${xr#"$xn"}; xr=\${xr# }; D="$D:$xn \${xr%% *} [0:0]
"; continue ;;
"-N "*) xr=\${xl#-N }; D="$D:\${xr%% *} - [0:0]
"; continue ;;
"-A "*) ;;
*) continue ;;
esac
xc=\${xl#-A }; xc=\${xc%% *}
case $xc in ${DISPATCH_CHAINS.join("|")}) xdc=1 ;; *) xdc= ;; esac
if [ -n "$xdc" ] && { [ -n "$xS1" ] || [ "$xt$xc" != natKUBE-SERVICES ]; }; then
case $xl in "-A $xc -d "*) xd=\${xl#"-A $xc -d "}; xd=\${xd%% *}
case $xd in */32|*/128) case " $NP_KEYS " in *" ip:\${xd%/*} "*) ;; *) continue ;; esac ;; esac ;;
esac
fi
cw "$xl"; cx
if [ -n "$xdc" ]; then cm "$xt" "$xc" || continue; fi
R="$R$xl
"
[ "$xt$xc" = natKUBE-SERVICES ] && case $xg in KUBE-SVC-*) xS1=1 ;; esac
case $xg in ""|${EXTENSION_TARGETS}) ;; *) q="$q $xg" ;; esac
done
}
`;
