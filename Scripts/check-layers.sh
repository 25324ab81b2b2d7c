#!/usr/bin/env bash
# Checks the package graph against docs/architecture.md, from `swift package describe`:
#   - the client library modules (BasketCore, BasketSearch, BasketReplica) depend, transitively,
#     on nothing but SQLite and its C module: no OpenSSL (CCrypto), nothing under Server/;
#   - no module under Client/ depends on one under Server/, nor the other way round;
#   - no source file imports a module its target does not list (SwiftPM would let a transitive
#     one through), and each C module is imported by exactly one library module.
set -euo pipefail
cd "$(dirname "$0")/.."
swift package describe --type json 2>/dev/null | python3 -c '
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
portable = {"SQLite", "CSQLite", "BasketCore"}
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
    for root, _, files in os.walk(t["path"]):
        for f in files:
            if not f.endswith(".swift"):
                continue
            for line in open(os.path.join(root, f), encoding="utf-8"):
                m = re.match(r"\s*(?:@\w+\s+)?(?:public |internal |package )?import (\w+)", line)
                if not m or m.group(1) not in targets:
                    continue
                module = m.group(1)
                if module not in allowed:
                    problems.append(f"{os.path.join(root, f)} imports {module}, which {name} does not list")
                if targets[module]["type"] == "system-target" and t["type"] == "library":
                    c_importers.setdefault(module, set()).add(name)
for module, importers in c_importers.items():
    if len(importers) > 1:
        problems.append(f"{module} is imported by {sorted(importers)}: one Swift module owns each C library")
for p in problems:
    print("layers:", p, file=sys.stderr)
if problems:
    sys.exit(1)
print(f"layers: {len(targets)} targets, the client library builds on SQLite alone, imports follow the design")
'
