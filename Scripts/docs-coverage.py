#!/usr/bin/env python3
"""What Scripts/docs.sh asks of the package and of each module's symbol graph:

    swift package describe --type json | Scripts/docs-coverage.py modules
        the library modules outside Tests/ (neither executables nor C libraries), with their paths
    Scripts/docs-coverage.py coverage MODULE.symbols.json
        fails, naming each, when a public declaration has no doc comment; run from the checkout
"""
import json
import os
import sys


def modules():
    for t in json.load(sys.stdin)["targets"]:
        if t["type"] == "library" and not t["path"].startswith("Tests/"):
            print(t["name"], t["path"])


def coverage(path):
    graph = json.load(open(path))
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


if __name__ == "__main__":
    if sys.argv[1:] == ["modules"]:
        modules()
    elif len(sys.argv) == 3 and sys.argv[1] == "coverage":
        coverage(sys.argv[2])
    else:
        sys.exit(__doc__)
