#!/usr/bin/env bash
# The whole test suite: installs what is missing, checks formatting, runs every test.
#   Scripts/test.sh                    everything (about 7 minutes on 2 cores, after the build)
#   BASKET_CASES=100 Scripts/test.sh   fewer convergence cases
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh
Scripts/format-check.sh
swift build --build-tests
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
# A watchdog: a test that hangs fails the run after BASKET_TEST_TIMEOUT seconds (default 30 minutes)
# and the tests that started without finishing are named, instead of the run waiting forever.
timeout -s KILL "${BASKET_TEST_TIMEOUT:-1800}" swift test --skip-build 2>&1 | tee "$log" || status=$?
if [ "$status" = 137 ]; then
    echo "tests: killed after ${BASKET_TEST_TIMEOUT:-1800} s; started and not finished:" >&2
    grep -oE 'Test [^ ]+\(\) started' "$log" | sed -E 's/^Test (.*) started/\1/' | sort >"$log.started"
    grep -oE 'Test [^ ]+\(\) (passed|failed)' "$log" | sed -E 's/^Test (.*) (passed|failed)/\1/' | sort >"$log.ended"
    comm -23 "$log.started" "$log.ended" | sed 's/^/  /' >&2
    rm -f "$log.started" "$log.ended"
fi
# The API against its OpenAPI description, fuzzed by schemathesis on a real server.
schemathesis_status=0
Scripts/schemathesis.sh .build/debug/basket-server >"$log.api" 2>&1 || schemathesis_status=$?
if [ "$schemathesis_status" = 0 ]; then tail -n 20 "$log.api"; else cat "$log.api"; status=$schemathesis_status; fi
rm -f "$log.api"
# A plain closing line from Swift Testing's summary ("Test run with N tests … passed/failed … with K issues").
summary=$(grep -E '^. Test run with [0-9]+ tests?' "$log" | tail -n 1 || true)
total=$(sed -E 's/^. Test run with ([0-9]+) tests?.*/\1/' <<<"$summary")
failed=$(grep -cE '^. Test [^ ].* failed after' "$log" || true)
if [ -n "$total" ]; then
    echo "tests: $((total - failed)) passed, $failed failed"
fi
if [ "$schemathesis_status" = 0 ]; then echo "schemathesis: passed"; else echo "schemathesis: FAILED"; fi
exit "$status"
