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
 * {@link SH_SAVE_FILTER} does what the awk program's `save` mode does, for the saves an image without awk cannot
 * filter otherwise (the legacy backend, whose kernel interface hands over a whole table per listing, and the nft
 * backend's small rulesets): `sg SAVE_COMMAND` keeps the save in memory and walks the chains level by level from the
 * roots (the builtin chains with a policy, `$KR`), one `grep -n -F` of the save per level for the rules of that
 * level's chains, each filtered by `cf`; then one more for their declarations. It prints, per table, `*TABLE`, the
 * declarations, the kept rules (each chain's together, in their order) and `COMMIT`. The save is fed to grep by a
 * here-document (dash's printf takes ~0.25 s per 26 MB, a here-document ~0.06 s): ~0.9 s for a 10,000-Service save.
 * Needs grep (kube-proxy's image has it) and `to` (collection_script.ts); variables start with `g`.
 *
 * Runtime-neutral: string constants.
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

/**
 * The shell functions `gb` (the table of save line `$1`: advances `rest`, a list of `LINE:TABLE` boundaries, and sets
 * `gt`), `gq` and `sg` (see the module comment); they call {@link SH_CHAIN_FILTER}'s `cf`, `cw`, `cx`.
 */
export const SH_SAVE_FILTER = `gb() {
while [ -n "$rest" ]; do ge=\${rest# }; ge=\${ge%% *}; [ "\${ge%%:*}" -le "$1" ] || break; gt=\${ge#*:}; rest=\${rest# }; rest=\${rest#"$ge"}; done
}
gq() {
gk=$1; gn=$2; set --
for gc in $gn; do if [ $gk = A ]; then set -- "$@" -e "-A $gc "; else set -- "$@" -e ":$gc "; fi; done
[ $# -gt 0 ] || return 0
grep -n -F "$@" <<NPEOF
$sv
NPEOF
}
sg() {
sv=$(to $1) || return $?
gi=$(grep -n -e '^\\*' -e '^COMMIT' -e '^:[^ ]* [^-]' <<NPEOF
$sv
NPEOF
)
tb=; gt=; fr=; ts=
set -f; IFS='
'; for gl in $gi; do IFS=' 	
'
gn=\${gl%%:*}; gl=\${gl#*:}
case $gl in
\\**) gt=\${gl#\\*}; tb="$tb $gn:$gt"; ts="$ts $gt"; for gc in $KR; do fr="$fr $gt:$gc"; done ;;
COMMIT*) tb="$tb $gn:" ;;
:*) gl=\${gl#:}; fr="$fr $gt:\${gl%% *}" ;;
esac
done; IFS=' 	
'
sel=" "; Rn=; Rf=; Rm=; Rr=; Rs=
while :; do
gw=" "; gm=
for gp in $fr; do case $sel in *" $gp "*) continue ;; esac; sel="$sel$gp "; gw="$gw$gp "; gm="$gm \${gp#*:}"; done
[ -n "$gm" ] || break
fr=
gr=$(gq A "$gm")
on=; of=; om=; orw=; osc=; gs=; rest=$tb; gt=
IFS='
'; for gl in $gr; do IFS=' 	
'
gn=\${gl%%:*}; gl=\${gl#*:}
gb "$gn"
[ -n "$gt" ] || continue
gc=\${gl#-A }; gc=\${gc%% *}
case $gl in "-A $gc "*) ;; *) continue ;; esac
case $gw in *" $gt:$gc "*) ;; *) continue ;; esac
if [ "$gt$gc" = natKUBE-SERVICES ] && [ -z "$gs" ]; then cw "$gl"; cx; case $xg in KUBE-SVC-*) gs=1 ;; esac
else case $gc in ${DISPATCH_CHAINS.join("|")})
case $gl in "-A $gc -d "*) xd=\${gl#"-A $gc -d "}; xd=\${xd%% *}
case $xd in */32|*/128) case " $NP_KEYS " in *" ip:\${xd%/*} "*) ;; *) continue ;; esac ;; esac ;;
esac ;;
esac; fi
case $gt in nat) on="$on$gl
" ;; filter) of="$of$gl
" ;; mangle) om="$om$gl
" ;; raw) orw="$orw$gl
" ;; security) osc="$osc$gl
" ;; esac
done; IFS=' 	
'
for gt in $ts; do
case $gt in nat) o=$on ;; filter) o=$of ;; mangle) o=$om ;; raw) o=$orw ;; security) o=$osc ;; *) continue ;; esac
[ -n "$o" ] || continue
D=; R=; q=; cf $gt
case $gt in nat) Rn="$Rn$R" ;; filter) Rf="$Rf$R" ;; mangle) Rm="$Rm$R" ;; raw) Rr="$Rr$R" ;; security) Rs="$Rs$R" ;; esac
for gc in $q; do fr="$fr $gt:$gc"; done
done
done
gm=; for gp in $sel; do gm="$gm \${gp#*:}"; done
gr=$(gq D "$gm")
dn=; df=; dm=; dr=; ds=; rest=$tb; gt=
IFS='
'; for gl in $gr; do IFS=' 	
'
gn=\${gl%%:*}; gl=\${gl#*:}
gb "$gn"
gc=\${gl#:}; gc=\${gc%% *}
case $gl in ":$gc "*) ;; *) continue ;; esac
case $sel in *" $gt:$gc "*) ;; *) continue ;; esac
case $gt in nat) dn="$dn$gl
" ;; filter) df="$df$gl
" ;; mangle) dm="$dm$gl
" ;; raw) dr="$dr$gl
" ;; security) ds="$ds$gl
" ;; esac
done; IFS=' 	
'
for gt in $ts; do
case $gt in nat) gd=$dn; R=$Rn ;; filter) gd=$df; R=$Rf ;; mangle) gd=$dm; R=$Rm ;; raw) gd=$dr; R=$Rr ;; security) gd=$ds; R=$Rs ;; *) continue ;; esac
[ -n "$gd" ] && printf '*%s\\n%s%sCOMMIT\\n' "$gt" "$gd" "$R"
done
sv=
}
`;

/**
 * `ca TABLE`: the same as {@link SH_CHAIN_FILTER}'s `cf`, with the awk program (rule_select_awk.ts, in `$A`): its
 * `chain` mode on the listing in `$o`, its `D`/`R`/`F` lines appended to `D`, `R` and `q`.
 */
export const SH_CHAIN_AWK = `ca() {
o=$(printf '%s\\n' "$o" | NP_MODE=chain NP_TABLE=$1 awk "$A")
while IFS= read -r xl; do
case $xl in
"D "*) D="$D\${xl#D }
" ;;
"R "*) R="$R\${xl#R }
" ;;
"F "*) q="$q \${xl#F }" ;;
esac
done <<NPEOF
$o
NPEOF
}
`;
