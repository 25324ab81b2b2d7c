#!/usr/bin/env bash
# The whole test suite: installs what is missing (Debian packages, PostgreSQL), checks
# formatting and the package graph (Scripts/check-layers.sh), builds the documentation and checks
# that every public declaration has a doc comment (Scripts/docs.sh), starts a throwaway
# PostgreSQL (Scripts/postgres.sh), and runs:
#   1. every test (store tests on SQLite and PostgreSQL, servers on SQLite), then the abuse tests
#      (signup floods, password guessing, limits) alone;
#   2. the server tests again on PostgreSQL (with the multi-instance tests), then the end-to-end
#      tests again with every server as two instances on one PostgreSQL database behind a
#      round-robin proxy (BASKET_TEST_STORE=postgres);
#   3. schemathesis against the OpenAPI description, and nginx TLS termination in front of a
#      real server (Scripts/nginx-check.sh).
# PostgreSQL is stopped at the end. About 8 minutes on 2 cores from a clean clone, build included.
#   BASKET_CASES=100 Scripts/test.sh   fewer convergence cases
#   BASKET_TEST_POSTGRES=URL           use a running PostgreSQL instead (its user may create databases)
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh
Scripts/format-check.sh
Scripts/check-layers.sh
swift build --build-tests
Scripts/docs.sh
log=$(mktemp)
started_postgres=0
cleanup() {
    rm -f "$log" "$log".*
    # Servers a crashed test process could not stop (they would keep their ports and databases).
    pkill -f "^$PWD/.build/[^ ]*/basket-server " 2>/dev/null || true
    if [ "$started_postgres" = 1 ]; then Scripts/postgres.sh stop; fi
}
trap cleanup EXIT
if [ -z "${BASKET_TEST_POSTGRES:-}" ]; then
    BASKET_TEST_POSTGRES=$(Scripts/postgres.sh start)
    started_postgres=1
fi
export BASKET_TEST_POSTGRES

status=0
summaries=()
# Runs `swift test` with the given arguments under a watchdog: a test that hangs fails the run
# after BASKET_TEST_TIMEOUT seconds (default 30 minutes) and the tests that started without
# finishing are named, instead of the run waiting forever.
run_tests() {
    local label=$1
    shift
    local pass_status=0
    timeout -s KILL "${BASKET_TEST_TIMEOUT:-1800}" swift test --skip-build "$@" 2>&1 | tee "$log" || pass_status=$?
    if [ "$pass_status" = 137 ]; then
        echo "tests: killed after ${BASKET_TEST_TIMEOUT:-1800} s; started and not finished:" >&2
        grep -oE 'Test [^ ]+\(\) started' "$log" | sed -E 's/^Test (.*) started/\1/' | sort >"$log.started"
        grep -oE 'Test [^ ]+\(\) (passed|failed)' "$log" | sed -E 's/^Test (.*) (passed|failed)/\1/' | sort >"$log.ended"
        comm -23 "$log.started" "$log.ended" | sed 's/^/  /' >&2
    fi
    # A plain line from Swift Testing's summary ("Test run with N tests … passed/failed …").
    local summary total failed
    summary=$(grep -E '^. Test run with [0-9]+ tests?' "$log" | tail -n 1 || true)
    total=$(sed -E 's/^. Test run with ([0-9]+) tests?.*/\1/' <<<"$summary")
    failed=$(grep -E '^. Test [^ ].* failed after' "$log" | grep -cv '^. Test run with' || true)
    summaries+=("tests ($label): $((${total:-0} - failed)) passed, $failed failed$([ "$pass_status" = 0 ] || echo ", exit $pass_status")")
    if [ "$pass_status" != 0 ]; then status=$pass_status; fi
}

run_tests "SQLite servers" --skip AbuseTests
# The abuse tests measure latency under a flood: alone, so they measure the server, not the kill and load tests.
run_tests "abuse tests, alone" --filter AbuseTests
export BASKET_TEST_STORE=postgres
run_tests "server tests on PostgreSQL" --filter BasketServerTests
# (Skipped there: tests of one process, of the SQLite files in --data, and of the store the
# signup-invite command writes to through --data.)
run_tests "end-to-end, two instances on PostgreSQL" --filter EndToEndTests --skip "ScenarioTests|AbuseTests|filesArePrivateAndPlainHTTPIsWarnedAbout|signupByInviteOnly"
unset BASKET_TEST_STORE

# The API against its OpenAPI description, fuzzed by schemathesis on a real server.
if Scripts/schemathesis.sh .build/debug/basket-server >"$log.api" 2>&1; then
    tail -n 20 "$log.api"
    summaries+=("schemathesis: passed")
else
    cat "$log.api"
    summaries+=("schemathesis: FAILED")
    status=1
fi
# TLS termination as docs/deploy.md configures it: nginx with a self-signed certificate, curl.
if Scripts/nginx-check.sh .build/debug/basket-server >"$log.nginx" 2>&1; then
    tail -n 5 "$log.nginx"
    summaries+=("nginx TLS: passed")
else
    cat "$log.nginx"
    summaries+=("nginx TLS: FAILED")
    status=1
fi
printf '%s\n' "${summaries[@]}"
exit "$status"
