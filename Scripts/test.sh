#!/usr/bin/env bash
# The whole test suite: installs what is missing, checks formatting, runs every test.
#   Scripts/test.sh                 everything (about 2 minutes on 2 cores)
#   BASKET_CASES=100 Scripts/test.sh   fewer convergence cases
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh
Scripts/format-check.sh
swift build --build-tests
swift test --skip-build
