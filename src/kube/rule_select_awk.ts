/**
 * The awk programs that pick, on the node, the iptables rules one Service's packets can traverse (issue 12,
 * "targeted collection"). They run inside the collection script (targeted_script.ts) and read the keys of the
 * question — the Service's addresses and ports — from the environment variable `NP_KEYS` (words `ip:ADDR` and
 * `port:N`), never from their program text, so no value from the cluster or the user is ever code.
 *
 * Which rules a packet of the Service can meet: kube-proxy's dispatch chains (`KUBE-SERVICES` and `KUBE-NODEPORTS`
 * in nat and filter, `KUBE-EXTERNAL-SERVICES`, `KUBE-PROXY-FIREWALL`; pkg/proxy/iptables/proxier.go
 * `syncProxyRules`) hold one or two rules per Service frontend, each keyed by `-d IP/32` (ClusterIP, externalIPs,
 * load-balancer IPs) or, without `-d`, by `--dport` (NodePorts, health-check NodePorts). In those chains a rule is
 * kept when it has no `-d` and no `--dport` (the catch-alls, e.g. the jump to KUBE-NODEPORTS), when its `-d` is a
 * key address (or not a single address, or negated), or when it has no `-d` and its `--dport` is a key port (or a
 * port range/list). Every other chain is kept whole: the builtin chains, the shared kube-proxy chains
 * (KUBE-POSTROUTING, KUBE-MARK-MASQ, KUBE-FORWARD, KUBE-FIREWALL, …), the Service's own chains and whatever else
 * the kept rules jump to (CNI chains included), found by following `-j`/`-g` from the builtin chains.
 *
 * One more rule is kept in nat KUBE-SERVICES: the first jump to a `KUBE-SVC-` chain, so that the cluster CIDR can
 * be learnt from a Service's `! -s CIDR -j KUBE-MARK-MASQ` rule as it is from a whole dump
 * (src/service/cluster_cidr.ts) even when the asked Service has no such chain.
 *
 * Runtime-neutral: string constants.
 * @module
 */

/**
 * kube-proxy's top-level chains (iptables and ipvs modes, every version): selection starts from them as well as from
 * the builtin chains, so a dump without the builtin jumps (kube-proxy's own restore buffers) is read as kube-proxy
 * installs them.
 */
export const KUBE_PROXY_ROOTS: readonly string[] = [
  "KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING", "KUBE-MARK-MASQ", "KUBE-MARK-DROP", "KUBE-LOAD-BALANCER",
  "KUBE-FORWARD", "KUBE-EXTERNAL-SERVICES", "KUBE-FIREWALL", "KUBE-PROXY-FIREWALL", "KUBE-NODE-PORT",
  "KUBE-IPVS-FILTER", "KUBE-IPVS-OUT-FILTER", "KUBE-PROXY-CANARY", "KUBE-KUBELET-CANARY", "KUBE-IPTABLES-HINT",
];

/** The chains whose rules are filtered by the keys (all others are kept whole). */
export const DISPATCH_CHAINS: readonly string[] = ["KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-EXTERNAL-SERVICES", "KUBE-PROXY-FIREWALL"];

/**
 * Common iptables extension targets: in `chain` mode a jump to one of them is not listed as a chain (any other
 * name is listed; one that is not a chain fails in a few ms). In `save` mode only declared chains are followed.
 */
export const EXTENSION_TARGETS = "ACCEPT|DROP|RETURN|REJECT|DNAT|SNAT|MASQUERADE|MARK|CONNMARK|LOG|NFLOG|CT|NOTRACK|REDIRECT|TPROXY|NFQUEUE|TCPMSS|CHECKSUM";

/**
 * The awk program, one text for both uses (it is passed in the exec URL, so it is kept short), chosen by the
 * environment variable `NP_MODE`:
 * - `chain`: filters the output of `iptables -t TABLE -S CHAIN` (one chain; the table in `NP_TABLE`). Prints
 *   `D <save declaration>` for the chain (`:NAME POLICY [0:0]`, or `:NAME - [0:0]`), `R <rule>` for each kept rule
 *   and `F <chain>` for each chain a kept rule jumps to.
 * - `save`: selects, from a whole `iptables-save` (every table), the chains reachable from the builtin chains (and
 *   {@link KUBE_PROXY_ROOTS}) through kept rules, and prints them in iptables-save format (each table: `*TABLE`, the
 *   declarations in their original order, the kept rules in their original order, `COMMIT`). Tables with no
 *   selected chain are left out.
 * Functions: `k()` says whether a rule line of a chain is kept, `m()` whether it matches the keys, `g()` the target
 * of a rule's `-j`/`-g` ("" for none), `w()` splits a rule into words outside quotes. The keys come from `NP_KEYS`,
 * the roots of `save` mode from `NP_ROOTS` ({@link KUBE_PROXY_ROOTS}).
 *
 * In `save` mode the chains are numbered as declared (`DN`: number → name, `CI`: table and name → number) and each
 * run of rules is found by number: the next declared chains are compared first (iptables-save prints the rules in
 * declaration order), the name lookup is the fallback. Read as it arrives from the save — on the legacy backend only
 * after the kernel has handed over the whole table — the program is on the section's critical path: keyed by
 * numbers and without field splitting it read a 10,000-Service save written with per-endpoint comments (26.6 MB;
 * kube-proxy leaves them out at that size: 18.4 MB) in ~0.40 s of mawk instead of ~0.52 s.
 * POSIX awk only, and no name of gawk's own variables (`RT`, `FPAT`, `ERRNO`, …: gawk refuses a program that uses
 * one as an array): it runs under mawk, gawk and busybox awk alike (tests/awk_portability.test.ts).
 */
export const AWK_SELECT = minify(String.raw`
function k(t, c, l,   r) {
  r = m(t, c, l)
  if (r && t == "nat" && c == "KUBE-SERVICES" && g(l) ~ /^KUBE-SVC-/) S1 = 1
  return r
}
function m(t, c, l,   n, i, d, ng, p, a) {
  if (c !~ /^(${DISPATCH_CHAINS.join("|")})$/) return 1
  n = w(l); d = ""; ng = 0; p = ""
  for (i = 1; i <= n; i++) {
    if (W[i] == "-d") { d = W[i + 1]; if (W[i - 1] == "!") ng = 1 }
    else if (W[i] == "--dport") p = W[i + 1]
    else if (W[i] == "--dports") p = "*"
  }
  if (d != "") {
    if (ng) return 1
    if (d !~ /\/(32|128)$/) return (d ~ /\//) ? 1 : (("ip:" d) in K)
    a = d; sub(/\/[0-9]+$/, "", a)
    if (("ip:" a) in K) return 1
  } else if (p == "" || p == "*" || p ~ /:/ || ("port:" p) in K) return 1
  if (t == "nat" && c == "KUBE-SERVICES" && !S1 && g(l) ~ /^KUBE-SVC-/) return 1
  return 0
}
function cl() { if (p != "") RE[nr] = nl; p = "" }
function w(l,   s) { s = l; gsub(/"([^"\\]|\\.)*"/, "Q", s); return split(s, W, " ") }
function g(l,   n, i) {
  n = w(l)
  for (i = 1; i < n; i++) if (W[i] == "-j" || W[i] == "-g") return W[i + 1]
  return ""
}
BEGIN {
  n = split(ENVIRON["NP_KEYS"], a, " "); for (i = 1; i <= n; i++) K[a[i]] = 1
  nr0 = split(ENVIRON["NP_ROOTS"], RO, " ")
  M = ENVIRON["NP_MODE"]; T0 = ENVIRON["NP_TABLE"]; CM = M == "chain"; PP = "\n"
}
CM {
  if ($1 == "-P") print "D :" $2 " " $3 " [0:0]"
  else if ($1 == "-N") print "D :" $2 " - [0:0]"
  else if ($1 == "-A" && k(T0, $2, $0)) { print "R " $0; x = g($0); if (x != "" && x !~ /^(${EXTENSION_TARGETS})$/) print "F " x }
  next
}
/^-A / {
  if (substr($0, 1, PL) != PP) {
    c = substr($0, 4); i = index(c, " "); if (i) c = substr(c, 1, i - 1)
    PP = "-A " c " "; PL = length(PP)
    if (c != p || t != pt) {
      cl(); p = c; pt = t
      for (id = CU; id <= NC && id < CU + 8; id++) if (DN[id] == c) break
      if (id <= NC && id < CU + 8) CU = id + 1; else id = ((t, c) in CI) ? CI[t, c] : 0
      RB[++nr] = nl + 1; if (LR[id]) NX[LR[id]] = nr; else FR[id] = nr; LR[id] = nr
    }
  }
  L[++nl] = $0; next
}
/^:/ {
  i = index($0, " "); if (!i) i = length($0) + 1
  c = substr($0, 2, i - 2); DN[++NC] = c; CI[t, c] = NC
  r = substr($0, i + 1); if (r != "- [0:0]") DX[NC] = $0
  i = index(r, " "); if ((i ? substr(r, 1, i - 1) : r) != "-") BO[t, ++nb[t]] = c
  next
}
/^\*/ { cl(); PP = "\n"; t = substr($0, 2); TB[++nt] = t; CU = NC + 1; next }
END {
  if (CM) exit
  cl()
  for (ti = 1; ti <= nt; ti++) {
    t = TB[ti]; h = 0; q = 0
    for (i = 1; i <= nb[t]; i++) { id = CI[t, BO[t, i]]; if (!(id in SN)) { Q[++q] = id; SN[id] = 1 } }
    for (i = 1; i <= nr0; i++) { c = RO[i]; if ((t, c) in CI) { id = CI[t, c]; if (!(id in SN)) { Q[++q] = id; SN[id] = 1 } } }
    while (h < q) {
      id = Q[++h]; c = DN[id]
      for (r = FR[id]; r; r = NX[r]) for (j = RB[r]; j <= RE[r]; j++) {
        l = L[j]
        if (!k(t, c, l)) continue
        KP[j] = 1; x = g(l)
        if (x != "" && ((t, x) in CI) && !(CI[t, x] in SN)) { SN[CI[t, x]] = 1; Q[++q] = CI[t, x] }
      }
    }
    if (q == 0) continue
    for (i = 2; i <= q; i++) { id = Q[i]; for (j = i - 1; j >= 1 && Q[j] > id; j--) Q[j + 1] = Q[j]; Q[j + 1] = id }
    print "*" t
    for (i = 1; i <= q; i++) { id = Q[i]; print (id in DX) ? DX[id] : ":" DN[id] " - [0:0]" }
    for (i = 1; i <= q; i++) { id = Q[i]; for (r = FR[id]; r; r = NX[r]) for (j = RB[r]; j <= RE[r]; j++) if (j in KP) print L[j] }
    print "COMMIT"
  }
}
`);

/** Drops indentation and blank lines (the program travels in the exec request's URL). */
function minify(program: string): string {
  return program.split("\n").map((l) => l.trim()).filter((l) => l !== "").join("\n");
}
