#!/usr/bin/env bash
# Fails when `swift format` (from the toolchain, with .swift-format) would change a file.
#   Scripts/format-check.sh          check
#   Scripts/format-check.sh --fix    rewrite the files in place
set -euo pipefail
cd "$(dirname "$0")/.."

# Tracked and new (untracked, not ignored) files alike.
files=$(git ls-files --cached --others --exclude-standard '*.swift' 2>/dev/null || find . -name '*.swift' -not -path './.build/*')
if [ "${1:-}" = "--fix" ]; then
    swift format format --in-place --parallel $files
    exit 0
fi
if ! swift format lint --strict --parallel $files; then
    echo "Formatting differs from .swift-format: run Scripts/format-check.sh --fix" >&2
    exit 1
fi
