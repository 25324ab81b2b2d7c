#!/usr/bin/env bash
# Checks the package graph against docs/architecture.md, from `swift package describe`:
#   - the client library modules (BasketCore, BasketSearch, BasketReplica) depend, transitively,
#     on nothing but SQLite and its C module: no OpenSSL (CCrypto), nothing under Server/;
#   - no module under Client/ depends on one under Server/, nor the other way round;
#   - no source file imports a module its target does not list (SwiftPM would let a transitive
#     one through), and each C module is imported by exactly one library module;
#   - no target lists a module that none of its files imports (a test depends only on what it
#     tests); an executable a test target lists is there to be built first, not imported;
#   - BasketModel (the reference model of the merge rules) uses BasketCore's data types and none
#     of its merge code;
#   - docs/architecture.md's module table is the one drawn here from Package.swift
#     (`Scripts/check-layers.sh --write` redraws it).
set -euo pipefail
cd "$(dirname "$0")/.."
swift package describe --type json 2>/dev/null | python3 Scripts/check-layers.py "$@"
