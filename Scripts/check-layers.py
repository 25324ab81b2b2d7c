#!/usr/bin/env python3
"""Checks the package graph against docs/architecture.md, from `swift package describe` (read
from standard input; Scripts/check-layers.sh runs it):
  - the client library modules (BasketCore, BasketSearch, BasketReplica) depend, transitively,
    on nothing but SQLite and its C module: no OpenSSL (CCrypto), nothing under Server/;
  - no module under Client/ depends on one under Server/, nor the other way round;
  - no source file imports a module its target does not list (SwiftPM would let a transitive
    one through), and each C module is imported by exactly one library module;
  - no target lists a module that none of its files imports (a test depends only on what it
    tests); an executable a test target lists is there to be built first, not imported;
  - BasketModel (the reference model of the merge rules) uses BasketCore's data types and none
    of its merge code;
  - docs/architecture.md's module table is the one drawn here from Package.swift
    (`Scripts/check-layers.sh --write` redraws it).
"""
import json, os, re, sys
targets = {t["name"]: t for t in json.load(sys.stdin)["targets"]}
def deps(name):
    return targets[name].get("target_dependencies", []) + targets[name].get("product_dependencies", [])
def closure(name, seen=None):
    seen = set() if seen is None else seen
    for dep in deps(name):
        if dep not in seen:
            seen.add(dep)
            closure(dep, seen)
    return seen
def area(name):
    return targets[name]["path"].split("/")[0]
problems = []
portable = {"SQLite", "CSQLite", "PrivateFiles", "BasketCore"}
for client in ["BasketCore", "BasketSearch", "BasketReplica"]:
    extra = closure(client) - portable - {"BasketCore", "BasketSearch", "BasketReplica"}
    if extra:
        problems.append(f"{client} depends on {sorted(extra)}: the client library must build on any Swift platform")
for name in targets:
    for dep in closure(name):
        if {area(name), area(dep)} == {"Client", "Server"}:
            problems.append(f"{name} ({area(name)}/) depends on {dep} ({area(dep)}/)")
c_importers = {}
for name, t in targets.items():
    if t["type"] == "system-target":
        continue
    allowed = set(deps(name))
    imported = set()
    for root, _, files in os.walk(t["path"]):
        for f in files:
            if not f.endswith(".swift"):
                continue
            for line in open(os.path.join(root, f), encoding="utf-8"):
                m = re.match(r"\s*(?:@\w+\s+)?(?:public |internal |package )?import (?:(?:struct|class|enum|func|var|protocol) )?(\w+)", line)
                if not m or m.group(1) not in targets:
                    continue
                module = m.group(1)
                imported.add(module)
                if module not in allowed:
                    problems.append(f"{os.path.join(root, f)} imports {module}, which {name} does not list")
                if targets[module]["type"] == "system-target" and t["type"] == "library":
                    c_importers.setdefault(module, set()).add(name)
    for dep in sorted(allowed - imported):
        if targets[dep]["type"] != "executable":
            problems.append(f"{name} lists {dep}, which none of its files imports")
# The reference model of the merge rules shares no merge code with what it checks.
if "BasketModel" in targets:
    if set(deps("BasketModel")) != {"BasketCore"}:
        model_deps = sorted(deps("BasketModel"))
        problems.append(f"BasketModel depends on {model_deps}: it may use the data types of BasketCore alone")
    for root, _, files in os.walk(targets["BasketModel"]["path"]):
        for f in files:
            code = [line for line in open(os.path.join(root, f), encoding="utf-8") if not line.strip().startswith("//")]
            text = "".join(code)
            for name in ["Register", "tieBreak", "isBeaten", "merging(", "Version.<", "version <", "version >"]:
                if name in text:
                    problems.append(f"{os.path.join(root, f)} uses {name}: the model must state the rules itself")
for module, importers in c_importers.items():
    if len(importers) > 1:
        problems.append(f"{module} is imported by {sorted(importers)}: one Swift module owns each C library")

# The module table of docs/architecture.md, drawn from the package description.
areas = [("Sources", "shared by client and server"), ("Client", "the client"), ("Server", "the server"),
         ("Simulation", "the simulation"), ("Benchmarks", "the benchmarks"), ("Tests", "the tests")]
users = {}
for name in targets:
    for dep in deps(name):
        users.setdefault(dep, []).append(name)
kinds = {"library": "library", "executable": "executable", "test": "tests", "system-target": "C library"}
rows = ["```", "module (folder)                       kind        imports"]
for folder, title in areas:
    names = sorted((n for n in targets if area(n) == folder), key=lambda n: (targets[n]["type"] == "test", targets[n]["path"]))
    if not names:
        continue
    rows.append(f"{folder}/: {title}")
    for n in names:
        t = targets[n]
        inner = t["path"].split("/", 1)[1]
        label = n if inner.rsplit("/", 1)[-1] == n else f"{n} ({inner})"
        imports = ", ".join(sorted(d for d in deps(n) if targets[d]["type"] != "executable")) or "-"
        kind = kinds.get(t["type"], t["type"])
        rows.append(f"  {label:<36}{kind:<12}{imports}")
rows.append("```")
table = "\n".join(rows)
begin, end = "<!-- module table: drawn by Scripts/check-layers.sh from Package.swift; do not edit -->", "<!-- end of module table -->"
doc_path = "docs/architecture.md"
doc = open(doc_path, encoding="utf-8").read()
if begin not in doc or end not in doc:
    problems.append(f"{doc_path} has no module table between {begin!r} and {end!r}")
else:
    head, rest = doc.split(begin, 1)
    old, tail = rest.split(end, 1)
    fresh = head + begin + "\n" + table + "\n" + end + tail
    if sys.argv[1:] == ["--write"]:
        open(doc_path, "w", encoding="utf-8").write(fresh)
    elif fresh != doc:
        problems.append(f"{doc_path}: the module table differs from Package.swift (Scripts/check-layers.sh --write redraws it)")
for p in problems:
    print("layers:", p, file=sys.stderr)
if problems:
    sys.exit(1)
print(f"layers: {len(targets)} targets, the client library builds on SQLite alone, imports follow the design")
