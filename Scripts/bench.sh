#!/usr/bin/env bash
# Builds in release mode and runs the benchmarks; prints tables (see docs/performance.md).
#   Scripts/bench.sh                 every benchmark
#   Scripts/bench.sh backends        one of them (replica, server, http, devices, curves, search, quality,
#                                    interactive, shops, seal, backends, fleet, web), with its options
#   Scripts/bench.sh web [--encrypted]  the web client in Chromium, 2,000 items (encrypted end to end),
#                                    CPU 1× and 4× (Benchmarks/web)
#   Scripts/bench.sh web-shops       usuals and a shop's learned order in Chromium, 10,000 items, CPU 1× and 4×
# The full run also draws the curves (docs/images/curves.png) with matplotlib from PyPI.
# The backends, fleet and curves (its fleet curves) benchmarks need PostgreSQL: unless BASKET_BENCH_POSTGRES names one, a throwaway
# cluster is started (Scripts/postgres.sh, installing postgresql if missing) and stopped after.
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh
# fzf: the second baseline of the search-quality benchmark; wrk and nginx: the load and the
# baseline of the HTTP benchmark.
missing=()
command -v fzf >/dev/null || missing+=(fzf)
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
        { $sudo apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
fi
# Statically linked like a shipped CLI: process start drops from ~50 ms to a few ms.
swift build -c release --static-swift-stdlib --product basket
swift build -c release --static-swift-stdlib --product basket-server
swift build -c release --static-swift-stdlib --product basket-bench
if [ -z "${BASKET_BENCH_POSTGRES:-}" ] && { [ $# -eq 0 ] || [ "$1" = backends ] || [ "$1" = fleet ] || [ "$1" = curves ]; }; then
    BASKET_BENCH_POSTGRES=$(BASKET_PG_DIR=/tmp/basket-bench-postgres BASKET_PG_PORT=55433 Scripts/postgres.sh start)
    trap 'BASKET_PG_DIR=/tmp/basket-bench-postgres BASKET_PG_PORT=55433 Scripts/postgres.sh stop' EXIT
fi
export BASKET_BENCH_POSTGRES
web() {
    # Chromium, Playwright and pytest as the web tests install them (Scripts/web-test.sh).
    command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }
    venv=.build/web-venv
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import playwright" 2>/dev/null; then
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check 'playwright>=1.50,<2' 'pytest>=8,<10'
    fi
    "$venv/bin/python" Benchmarks/web/"${1:-bench_web.py}" "${@:2}"
}
if [ "${1:-}" = web ]; then
    web bench_web.py "${@:2}"
elif [ "${1:-}" = web-shops ]; then
    web bench_shops.py
elif [ $# -gt 0 ]; then
    .build/release/basket-bench "$@"
else
    .build/release/basket-bench replica
    .build/release/basket-bench server
    .build/release/basket-bench http
    .build/release/basket-bench devices
    .build/release/basket-bench curves --csv .build/curves.csv
    Scripts/plot-curves.sh .build/curves.csv docs/images/curves.png
    .build/release/basket-bench search
    .build/release/basket-bench quality
    .build/release/basket-bench interactive
    .build/release/basket-bench shops
    .build/release/basket-bench seal
    .build/release/basket-bench backends
    .build/release/basket-bench fleet
    web
fi
