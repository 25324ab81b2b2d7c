#!/usr/bin/env bash
# The whole test suite: installs what is missing (Debian packages, PostgreSQL), checks
# formatting, the package graph (Scripts/check-layers.sh), the web client's JSDoc types
# (Scripts/check-web.sh), and that the item key tables are what
# Scripts/make-itemkey.py makes from the Unicode data, builds the documentation and checks
# that every public declaration has a doc comment (Scripts/docs.sh), starts a throwaway
# PostgreSQL (Scripts/postgres.sh), and runs:
#   1. every test (store tests on SQLite and PostgreSQL, servers on SQLite) but the heavy suites,
#      then the heavy suites (abuse, load, kills, descriptors, timed wake-ups) one at a time;
#   2. the server tests again on PostgreSQL (with the multi-instance tests), then the end-to-end
#      tests again with every server as two instances on one PostgreSQL database behind a
#      round-robin proxy (BASKET_TEST_STORE=postgres), load and kills one at a time;
#   3. schemathesis against the OpenAPI description, the web client in Chromium with CLI devices
#      (Scripts/web-test.sh), and nginx TLS termination in front of a real server, the web client
#      through it too (Scripts/nginx-check.sh).
# A pass fails when a test it selects is skipped (a missing database or capability) or when it
# runs another number of tests than its filter selects; the run fails when a test is in no pass.
# PostgreSQL is stopped at the end. About 15 minutes on 2 cores from a clean clone, build included.
#   BASKET_CASES=100 Scripts/test.sh   fewer convergence cases
#   BASKET_TEST_POSTGRES=URL           use a running PostgreSQL instead (its user may create databases)
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh --for-tests
Scripts/format-check.sh
Scripts/check-layers.sh
Scripts/check-web.sh
Scripts/make-itemkey.py --check
Scripts/make-catalogue.py --check
Scripts/make-entry-words.py --check
Scripts/make-icons.py --check
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
# What git sees before the tests: a test run must change no tracked file (checked at the end).
tracked_before=$(git status --porcelain --untracked-files=no 2>/dev/null || true)
# Every test of the package, as `swift test` names them (Module.Suite/test()); each pass's
# --filter and --skip select from these names, so the tests a pass is meant to run are known.
swift test list --skip-build >"$log.all" 2>/dev/null
: >"$log.covered"
# Runs `swift test` with the given arguments under a watchdog: a test that hangs fails the run
# after BASKET_TEST_TIMEOUT seconds (default 30 minutes) and the tests that started without
# finishing are named, instead of the run waiting forever. The pass fails when a test it selects
# was skipped (a missing database or capability is an error with its reason, not a quiet green),
# or when it ran another number of tests than its filter selects.
run_tests() {
    local label=$1
    shift
    local filter=. skip='' arguments=("$@")
    while [ $# -gt 0 ]; do
        case $1 in
            --filter) filter=$2; shift ;;
            --skip) skip=$2; shift ;;
        esac
        shift
    done
    grep -E -- "$filter" "$log.all" | { if [ -n "$skip" ]; then grep -vE -- "$skip" || true; else cat; fi; } >"$log.expected"
    cat "$log.expected" >>"$log.covered"
    local expected
    expected=$(wc -l <"$log.expected")
    local pass_status=0
    timeout -s KILL "${BASKET_TEST_TIMEOUT:-1800}" swift test --skip-build "${arguments[@]}" 2>&1 | tee "$log" || pass_status=$?
    if [ "$pass_status" = 137 ]; then
        echo "tests: killed after ${BASKET_TEST_TIMEOUT:-1800} s; started and not finished:" >&2
        grep -oE 'Test [^ ]+\(\) started' "$log" | sed -E 's/^Test (.*) started/\1/' | sort >"$log.started"
        grep -oE 'Test [^ ]+\(\) (passed|failed)' "$log" | sed -E 's/^Test (.*) (passed|failed)/\1/' | sort >"$log.ended"
        comm -23 "$log.started" "$log.ended" | sed 's/^/  /' >&2
    fi
    # Swift Testing's summary line ("Test run with N tests … passed/failed …") counts skipped
    # tests too; each skipped test has its own line ("Test name() skipped: reason").
    local summary total failed skipped
    summary=$(grep -E '^. Test run with [0-9]+ tests?' "$log" | tail -n 1 || true)
    total=$(sed -E 's/^. Test run with ([0-9]+) tests?.*/\1/' <<<"$summary")
    total=${total:-0}
    failed=$(grep -E '^. Test [^ ].* failed after' "$log" | grep -cv '^. Test run with' || true)
    skipped=$(grep -cE '^. Test [^ ]+ skipped' "$log" || true)
    local problems=()
    if [ "$skipped" != 0 ]; then
        problems+=("$skipped skipped, which this pass must run")
        grep -E '^. Test [^ ]+ skipped' "$log" | sed 's/^. /  /' >&2
    fi
    if [ "$total" != "$expected" ]; then
        problems+=("$total tests run where the pass selects $expected")
    fi
    local line="tests ($label): $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
    [ "$pass_status" = 0 ] || line+=", exit $pass_status"
    if [ ${#problems[@]} -gt 0 ]; then
        line+=" — FAILED: $(IFS=';'; echo "${problems[*]}")"
        [ "$pass_status" != 0 ] || pass_status=1
    fi
    echo "$line" >&2
    summaries+=("$line")
    if [ "$pass_status" != 0 ]; then status=$pass_status; fi
}

# The heavy suites (a signup flood, 200 clients for a minute, 50 server kills) load the whole
# machine: they run in a pass of their own, one after the other, so each measures the server
# under its own load and no other test runs beside them. MultiInstanceTests need servers on
# PostgreSQL: they run in the PostgreSQL pass. DescriptorTests counts the process's open
# descriptors, which servers started beside it would move.
heavy="AbuseTests|LoadTests|KillTests|DescriptorTests|WakeUpTests"
run_tests "SQLite servers" --skip "$heavy|MultiInstanceTests"
run_tests "heavy suites, one at a time" --filter "$heavy" --no-parallel
export BASKET_TEST_STORE=postgres
run_tests "server tests on PostgreSQL" --filter BasketServerTests
# Not run there: tests of one process (scenarios, floods; the fleet benchmark and the wake-up tests start their own
# instances on PostgreSQL in the first pass), of the SQLite files in --data, of a
# full disk under the SQLite store, and of the store the signup-invite command writes to
# through --data.
run_tests "end-to-end, two instances on PostgreSQL" --filter EndToEndTests \
    --skip "ScenarioTests|FleetBenchmarkTests|WakeUpTests|$heavy|DiskFullTests|filesArePrivateAndPlainHTTPIsWarnedAbout|signupByInviteOnly"
run_tests "load and kills on PostgreSQL, one at a time" --filter "LoadTests|KillTests" --no-parallel
unset BASKET_TEST_STORE
# Every test of the package is selected by at least one pass.
if uncovered=$(sort -u "$log.covered" | comm -13 - <(sort -u "$log.all")) && [ -n "$uncovered" ]; then
    echo "tests: no pass runs these:" >&2
    sed 's/^/  /' <<<"$uncovered" >&2
    summaries+=("tests: $(wc -l <<<"$uncovered") tests no pass runs — FAILED")
    status=1
fi

# The API against its OpenAPI description, fuzzed by schemathesis on a real server.
if Scripts/schemathesis.sh .build/debug/basket-server >"$log.api" 2>&1; then
    tail -n 20 "$log.api"
    summaries+=("schemathesis: passed")
else
    cat "$log.api"
    summaries+=("schemathesis: FAILED")
    status=1
fi
# The web client in Chromium (Playwright) against a real server and CLI devices.
if Scripts/web-test.sh >"$log.web" 2>&1; then
    tail -n 3 "$log.web"
    summaries+=("web client in Chromium: $(grep -oE '[0-9]+ passed' "$log.web" | tail -n 1)")
else
    cat "$log.web"
    summaries+=("web client in Chromium: FAILED")
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
tracked_after=$(git status --porcelain --untracked-files=no 2>/dev/null || true)
if [ "$tracked_before" != "$tracked_after" ]; then
    diff <(echo "$tracked_before") <(echo "$tracked_after") >&2 || true
    summaries+=("tracked files: the test run changed them — FAILED")
    status=1
fi
printf '%s\n' "${summaries[@]}"
exit "$status"
