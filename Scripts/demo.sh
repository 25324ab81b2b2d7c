#!/usr/bin/env bash
# A two-device offline merge, driven through the real `basket` CLI and printed step by step.
# Each "device" is its own replica directory; they exchange export files instead of a network.
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh
swift build --product basket >/dev/null
basket=.build/debug/basket
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
alice() { echo "alice\$ basket $*"; "$basket" --db "$work/alice" "$@" | sed 's/^/    /'; }
bob() { echo "bob\$ basket $*"; "$basket" --db "$work/bob" "$@" | sed 's/^/    /'; }
step() { printf '\n== %s\n' "$1"; }

step "Alice starts a family list and hands it to Bob once (an export file stands in for the network)"
alice list new Family
alice add "Milk, Crème fraîche, Bread"
alice export "$work/family.ops"
bob import "$work/family.ops"

step "Both are offline on the train"
alice add "Eggs"
bob add "milk "
bob add "Oat milk"
alice check bread
sleep 0.01
bob uncheck bread
bob rm "creme fraiche"

step "Back online: they swap what each wrote"
alice export "$work/alice.ops"
bob export "$work/bob.ops"
alice import "$work/bob.ops"
bob import "$work/alice.ops"

step "Both now show the same list: one Milk (the key ignores case and spaces), Bread unchecked (Bob's later write won)"
alice ls
bob ls
step "Why Bread is unchecked"
alice history bread
if [ "$("$basket" --db "$work/alice" export -)" = "$("$basket" --db "$work/bob" export -)" ]; then
    printf '\nBoth replicas hold identical operation logs.\n'
else
    echo "The replicas differ!" >&2
    exit 1
fi
