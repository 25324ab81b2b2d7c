#!/usr/bin/env bash
# Builds the documentation of every library module (the targets outside Tests/ that are neither
# executables nor C libraries: the client library, the server's modules, the small shared ones)
# with the toolchain's docc, from symbol graphs, into .build/docs/NAME.doccarchive; a module's
# NAME.docc catalog in its folder is used when it has one. Fails on any DocC warning (a broken
# symbol link, a parameter documented that does not exist, …) and on a public declaration of
# these modules without a doc comment. Run by Scripts/test.sh.
#   Scripts/docs.sh             check and build
#   Scripts/docs.sh --preview   then say how to look at them (docc preview)
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A catalogs=()
modules=()
while read -r name path; do
    modules+=("$name")
    [ -d "$path/$name.docc" ] && catalogs[$name]="$path/$name.docc"
done < <(swift package describe --type json 2>/dev/null | Scripts/docs-coverage.py modules)
out=.build/docs
graphs=$out/symbol-graphs
rm -rf "$out"
mkdir -p "$graphs"
# One build emits every module's symbol graph (public declarations only).
swift package dump-symbol-graph --minimum-access-level public >"$out/dump.log" 2>&1 || {
    cat "$out/dump.log" >&2
    exit 1
}
dumped=$(sed -n 's/^Files written to //p' "$out/dump.log" | tail -n 1)
[ -d "$dumped" ] || { echo "docs: no symbol graphs (see $out/dump.log)" >&2; exit 1; }

status=0
for module in "${modules[@]}"; do
    mkdir -p "$graphs/$module"
    cp "$dumped/$module.symbols.json" "$graphs/$module/"
    cp "$dumped/$module"@*.symbols.json "$graphs/$module/" 2>/dev/null || true
    # Every public declaration has a doc comment, except what documents itself: a protocol
    # requirement's implementation (description, ==, <, hash, Codable), a synthesized member,
    # the cases of a body's CodingKeys.
    Scripts/docs-coverage.py coverage "$graphs/$module/$module.symbols.json" || status=1
    catalog=()
    [ -n "${catalogs[$module]:-}" ] && catalog=("${catalogs[$module]}")
    docc convert "${catalog[@]}" --additional-symbol-graph-dir "$graphs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "basket.$module" \
        --output-path "$out/$module.doccarchive" --warnings-as-errors --analyze >"$out/$module.log" 2>&1 || {
        cat "$out/$module.log" >&2
        status=1
    }
    grep -E "warning|error" "$out/$module.log" >&2 || true
done
if [ "$status" = 0 ]; then
    echo "docs: built ${modules[*]} into $out/*.doccarchive without a warning"
    if [ "${1:-}" = --preview ]; then
        echo "to browse one: docc preview ${catalogs[BasketReplica]} --additional-symbol-graph-dir $graphs/BasketReplica"
    fi
fi
exit $status
