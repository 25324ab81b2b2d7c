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
done < <(swift package describe --type json 2>/dev/null | python3 -c '
import json, sys
for t in json.load(sys.stdin)["targets"]:
    if t["type"] == "library" and not t["path"].startswith("Tests/"):
        print(t["name"], t["path"])
')
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
    python3 - "$graphs/$module/$module.symbols.json" <<'PY' || status=1
import json, os, sys
graph = json.load(open(sys.argv[1]))
inherited = {"description", "==(_:_:)", "<(_:_:)", "hash(into:)", "init(from:)", "encode(to:)", "next()",
             "~=(_:_:)", "fields", "check()", "hashValue", "id", "rawValue", "init(rawValue:)", "allCases",
             "stringValue", "intValue", "init(stringValue:)", "init(intValue:)"}
# A member that implements a documented requirement of a protocol its type conforms to (directly
# or through another protocol) is documented there, as DocC shows it.
symbols = {s["identifier"]["precise"]: s for s in graph["symbols"]}
conforms, parent, requirements = {}, {}, {}
for r in graph.get("relationships", []):
    if r["kind"] in ("conformsTo", "inheritsFrom"):
        conforms.setdefault(r["source"], set()).add(r["target"])
    elif r["kind"] == "memberOf":
        parent[r["source"]] = r["target"]
    elif r["kind"] in ("requirementOf", "optionalRequirementOf"):
        requirement = symbols.get(r["source"])
        if requirement and requirement.get("docComment"):
            requirements.setdefault(r["target"], set()).add(requirement["pathComponents"][-1])
def protocols(type_id, seen=None):
    seen = set() if seen is None else seen
    for p in conforms.get(type_id, ()):
        if p not in seen:
            seen.add(p)
            protocols(p, seen)
    return seen
def implements_documented(symbol):
    owner = parent.get(symbol["identifier"]["precise"])
    name = symbol["pathComponents"][-1]
    return owner is not None and any(name in requirements.get(p, ()) for p in protocols(owner))
missing = []
for symbol in graph["symbols"]:
    path = symbol["pathComponents"]
    if symbol.get("docComment") or "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
        continue
    if implements_documented(symbol):
        continue
    if path[-1] in inherited or (len(path) > 1 and path[-2] == "CodingKeys"):
        continue
    location = symbol.get("location", {})
    # The file relative to the checkout (the script runs from its root), wherever it is.
    where = os.path.relpath(location.get("uri", "").replace("file://", ""), os.getcwd())
    line = location.get("position", {}).get("line", -1) + 1
    missing.append(f"{where}:{line}: {'.'.join(path)}")
for entry in sorted(missing):
    print("docs: no doc comment:", entry, file=sys.stderr)
module = graph["module"]["name"]
print(f"docs: {module}: {len(graph['symbols'])} public symbols, {len(missing)} without a doc comment")
sys.exit(1 if missing else 0)
PY
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
