#!/usr/bin/env bash
# ci-setup.sh: install the system tools the real-kernel and shell tests need, on Debian, as root.
#
# Called by .ci/run before `npm test`; safe to run any number of times. It checks each tool with
# `command -v` first and only calls apt when something is missing, so a repeat run costs a few
# milliseconds and never touches the network.
#
#   tool        Debian package   used by
#   ip          iproute2         tests/helpers/netns.ts (network namespaces, veth pairs)
#   iptables    iptables         iptables-restore/-save, nft and legacy backends, IPv4 and IPv6
#   nft         nftables         nftables-mode fixtures
#   ipset       ipset            IPVS-mode ipset fixtures
#   conntrack   conntrack        tests/helpers/kernel_oracle.ts (reads the NAT verdicts)
#   nfacct      nfacct           creates the nfacct counters kube-proxy master dumps reference (-m nfacct)
#   ipvsadm     ipvsadm          IPVS-mode collection (the kernel may lack IP_VS; then only the binary is used)
#   nc          netcat-openbsd   sends one TCP SYN / UDP datagram from a namespace
#   curl        curl             the collection script's /proxyMode read, in the live test bed's node namespaces
#   openssl     openssl          the live test bed's self-signed CA and certificates
#   time        time             GNU time: peak memory of a node-side listing (tests/live_whole_node_size.test.ts)
#   bash zsh fish                completion tests (bash-completion: kubectl's own bash script needs it)
#   mawk gawk busybox            tests/awk_portability.test.ts: the targeted collection's awk program under the awks
#                                node images carry (Debian's mawk, gawk on RHEL-family hosts, busybox awk on Alpine).
#                                Installing gawk makes it Debian's `awk`; the alternative is set back to mawk, so
#                                the other tests keep running the distribution's default awk.
# kubectl itself is not installed here: the tests that dispatch through it use the kubectl on PATH (the machines
# of this project ship kubectl 1.27-1.33) and say so when it is missing.
#
# A package that cannot be installed is reported and skipped; the script then exits 0: the tests that
# need the tool decide (under CI=true, tests/helpers/netns.ts requireNetns() fails loudly).
# Exit status: 0 unless apt itself is broken in a way that leaves no tool installable (exit 1).
set -u

# command → package; order is the install order.
TOOLS=(
  "ip:iproute2"
  "iptables:iptables"
  "nft:nftables"
  "ipset:ipset"
  "conntrack:conntrack"
  "nfacct:nfacct"
  "ipvsadm:ipvsadm"
  "nc:netcat-openbsd"
  "curl:curl"
  "openssl:openssl"
  "/usr/bin/time:time"
  "bash:bash"
  "/usr/share/bash-completion/bash_completion:bash-completion"
  "zsh:zsh"
  "fish:fish"
  "mawk:mawk"
  "gawk:gawk"
  "busybox:busybox"
)

log() { printf 'ci-setup: %s\n' "$*" >&2; }

# gawk's package makes itself the `awk` alternative (priority 10 over mawk's 5): set it back to mawk.
keep_mawk() {
  if [ -x /usr/bin/mawk ] && command -v update-alternatives >/dev/null 2>&1 && [ "$(readlink -f /usr/bin/awk 2>/dev/null)" != /usr/bin/mawk ]; then
    update-alternatives --set awk /usr/bin/mawk >/dev/null 2>&1 && log "awk is mawk again (Debian's default)"
  fi
}

missing_pkgs=()
for entry in "${TOOLS[@]}"; do
  cmd=${entry%%:*}
  pkg=${entry#*:}
  # /usr/sbin is not always on a non-root PATH; look there too.
  # An entry naming a file (/usr/share/...) is present when the file is; a command when it is on PATH.
  if { [ "${cmd#/}" != "$cmd" ] && [ -f "$cmd" ]; } || command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || [ -x "/sbin/$cmd" ]; then
    continue
  fi
  missing_pkgs+=("$pkg")
done

if [ ${#missing_pkgs[@]} -eq 0 ]; then
  log "all tools present (ip iptables nft ipset conntrack nfacct ipvsadm nc curl openssl time bash zsh fish mawk gawk busybox)"
  exit 0
fi

log "missing packages: ${missing_pkgs[*]}"

if [ "$(id -u)" != "0" ]; then
  log "not root: cannot install ${missing_pkgs[*]}; run this script as root (tests needing them will say so)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  log "apt-get not found (not Debian?): install ${missing_pkgs[*]} by hand"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-get update -qq >/dev/null; then
  log "apt-get update failed; trying to install from the existing package lists"
fi

apt_install() {
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if apt_install "${missing_pkgs[@]}"; then
  log "installed: ${missing_pkgs[*]}"
  keep_mawk
  exit 0
fi

# The batch failed: one package is not installable here. Install the others one by one.
installed=0
for pkg in "${missing_pkgs[@]}"; do
  if apt_install "$pkg"; then
    log "installed: $pkg"
    installed=$((installed + 1))
  else
    log "skipped: $pkg is not installable here (apt-get install failed)"
  fi
done
if [ "$installed" -eq 0 ]; then
  log "no package could be installed; check apt sources"
  exit 1
fi
keep_mawk
exit 0
