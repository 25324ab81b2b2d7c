#!/usr/bin/env bash
# Runs the whole test suite (Scripts/test.sh) N times in a row on a fresh clone of HEAD, and
# stops at the first failure: the check that the suite passes on a clean machine every time,
# not once. Prints one line per run and keeps each run's log.
#   Scripts/test-repeat.sh [N]          N defaults to 10 (about 2.5 hours on 2 cores)
#   BASKET_REPEAT_DIR=DIR               where the clone and the logs go (default: a new temp dir)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
case $runs in '' | *[!0-9]* | 0) echo "usage: Scripts/test-repeat.sh [N]  (N a positive count)" >&2; exit 64 ;; esac
dir=${BASKET_REPEAT_DIR:-$(mktemp -d /tmp/basket-repeat.XXXXXX)}
git clone -q . "$dir/clone"
commit=$(git -C "$dir/clone" rev-parse --short HEAD)
echo "test-repeat: $runs runs of Scripts/test.sh on a fresh clone of $commit in $dir"
for i in $(seq 1 "$runs"); do
    start=$(date +%s)
    if (cd "$dir/clone" && Scripts/test.sh) >"$dir/run-$i.log" 2>&1; then
        echo "run $i: passed in $(($(date +%s) - start)) s"
    else
        echo "run $i: FAILED after $(($(date +%s) - start)) s; its log: $dir/run-$i.log" >&2
        grep -E "^tests \(|FAILED|✘" "$dir/run-$i.log" | tail -n 20 >&2 || true
        exit 1
    fi
done
echo "test-repeat: $runs of $runs runs passed on $commit"
