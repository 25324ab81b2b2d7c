#!/usr/bin/env bash
# Builds in release mode and runs the benchmarks; prints tables (see README "Performance").
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh
# Statically linked like a shipped CLI: process start drops from ~50 ms to a few ms.
swift build -c release --static-swift-stdlib --product basket
swift build -c release --static-swift-stdlib --product basket-server
swift build -c release --static-swift-stdlib --product basket-bench
if [ $# -gt 0 ]; then
    .build/release/basket-bench "$@"
else
    .build/release/basket-bench replica
    .build/release/basket-bench server
    .build/release/basket-bench search
fi
