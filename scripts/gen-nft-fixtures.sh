#!/usr/bin/env bash
# Regenerates tests/fixtures/nftables/ from the kube-proxy nftables rulesets in
# ../shared/fixtures/real-dumps/nftables/ (knftables `add table/chain/rule/element` transactions copied from
# kubernetes/kubernetes pkg/proxy/nftables/proxier_test.go; see CONVENTIONS.md there).
#
# For each <name>.nft it writes, under tests/fixtures/nftables/:
#   <name>.nft         the original transaction, byte for byte;
#   <name>.json        what real `nft -j list ruleset` prints after loading it into a fresh network namespace;
#   <name>.nft.txt     what real `nft list ruleset` prints for the same state;
#   <name>.nft-a.txt   what real `nft -a list ruleset` prints (the same, with `# handle N` comments).
# It does the same for the hand-written inputs in tests/fixtures/nftables/synthetic/ (outputs next to them); there a
# <name>.iptables-save beside <name>.nft is loaded first with iptables-nft-restore (iptables rules left on a node
# that moved to nftables mode).
# Files that fail to load are listed, with nft's error, in LOAD-FAILURES.txt (absent when all load).
#
# Why the input is reordered before loading: the fixture lines are the test's expected dump, compared
# order-insensitively, so a rule may name a chain (`goto endpoint-…`) declared further down. `nft -f` resolves
# chain references while it parses, so it fails with "No such file or directory" on such lines. The loader
# therefore keeps every line but emits `add table`, then `add set`/`add map`/`add chain`, then `add rule` (in their
# original relative order, so each chain keeps its rule order), then `add element`: the same ruleset the test
# compares against, in an order nft accepts. The original file is kept unchanged next to the outputs.
#
# Needs root, iproute2 and nftables (apt-get install -y nftables). Every namespace it creates is deleted on exit.
# Usage: scripts/gen-nft-fixtures.sh [SOURCE_DIR] [OUT_DIR]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
src="${1:-$repo/../shared/fixtures/real-dumps/nftables}"
out="${2:-$repo/tests/fixtures/nftables}"

command -v nft >/dev/null || { echo "gen-nft-fixtures: nft not found (apt-get install -y nftables)" >&2; exit 1; }
command -v ip >/dev/null || { echo "gen-nft-fixtures: ip (iproute2) not found" >&2; exit 1; }
[ -d "$src" ] || { echo "gen-nft-fixtures: source directory $src not found" >&2; exit 1; }
mkdir -p "$out"

ns="netpath-nftgen-$$"
tmp="$(mktemp -d)"
cleanup() {
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

failures="$out/LOAD-FAILURES.txt"
: >"$tmp/failures"

# reorder FILE: print the transaction with declarations before rules and rules before elements.
reorder() {
  local f="$1"
  grep -E '^add table ' "$f" || true
  grep -E '^add (set|map|chain|counter) ' "$f" || true
  grep -E '^add rule ' "$f" || true
  grep -E '^add element ' "$f" || true
  # Anything else that is not a blank or a comment line would be silently lost: refuse instead.
  if grep -vE '^(add (table|set|map|chain|counter|rule|element) |#|[[:space:]]*$)' "$f" >&2; then
    echo "gen-nft-fixtures: $f has lines the loader does not know how to order (above)" >&2
    return 1
  fi
}

# load NAME SOURCE_FILE OUT_DIR: load one ruleset into a fresh namespace and write the three listings.
load() {
  local name="$1" f="$2" dir="$3"
  reorder "$f" >"$tmp/$name.load.nft"
  ip netns del "$ns" 2>/dev/null || true
  ip netns add "$ns"
  local ipt="${f%.nft}.iptables-save"
  if [ -f "$ipt" ] && ! ip netns exec "$ns" iptables-nft-restore <"$ipt" 2>"$tmp/err"; then
    { echo "## $name.iptables-save"; cat "$tmp/err"; echo; } >>"$tmp/failures"
    rm -f "$dir/$name.json" "$dir/$name.nft.txt" "$dir/$name.nft-a.txt"
    ip netns del "$ns"
    return 0
  fi
  if ! ip netns exec "$ns" nft -f "$tmp/$name.load.nft" 2>"$tmp/err"; then
    { echo "## $name.nft"; cat "$tmp/err"; echo; } >>"$tmp/failures"
    rm -f "$dir/$name.json" "$dir/$name.nft.txt" "$dir/$name.nft-a.txt"
    ip netns del "$ns"
    return 0
  fi
  # iptables-nft tables make nft print "# Warning: table ip nat is managed by iptables-nft" on stderr: not kept.
  ip netns exec "$ns" nft -j list ruleset 2>/dev/null >"$dir/$name.json"
  ip netns exec "$ns" nft list ruleset 2>/dev/null >"$dir/$name.nft.txt"
  ip netns exec "$ns" nft -a list ruleset 2>/dev/null >"$dir/$name.nft-a.txt"
  ip netns del "$ns"
  count=$((count + 1))
}

count=0
for f in "$src"/*.nft; do
  name="$(basename "$f" .nft)"
  cp "$f" "$out/$name.nft"
  load "$name" "$f" "$out"
done
if [ -d "$out/synthetic" ]; then
  for f in "$out"/synthetic/*.nft; do
    load "$(basename "$f" .nft)" "$f" "$out/synthetic"
  done
fi

if [ -s "$tmp/failures" ]; then
  { echo "# nft -f failures ($(nft --version))"; echo; cat "$tmp/failures"; } >"$failures"
  echo "gen-nft-fixtures: some files failed to load, see $failures" >&2
else
  rm -f "$failures"
fi
echo "gen-nft-fixtures: $count rulesets loaded with $(nft --version) into $out"
