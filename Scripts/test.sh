#!/usr/bin/env bash
# The whole test suite: installs what is missing, checks formatting, runs every test.
#   Scripts/test.sh                    everything (about 2 minutes on 2 cores)
#   BASKET_CASES=100 Scripts/test.sh   fewer convergence cases
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh
Scripts/format-check.sh
swift build --build-tests
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
swift test --skip-build 2>&1 | tee "$log" || status=$?
# A plain closing line from Swift Testing's summary ("Test run with N tests … passed/failed … with K issues").
summary=$(grep -E '^. Test run with [0-9]+ tests?' "$log" | tail -n 1 || true)
total=$(sed -E 's/^. Test run with ([0-9]+) tests?.*/\1/' <<<"$summary")
failed=$(grep -cE '^. Test [^ ].* failed after' "$log" || true)
if [ -n "$total" ]; then
    echo "tests: $((total - failed)) passed, $failed failed"
fi
exit "$status"
