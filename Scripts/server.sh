#!/usr/bin/env bash
# The main job: installs what is missing, builds basket-server in release mode and runs it.
# With no arguments it listens on 127.0.0.1:8080 with its data in ./basket-server-data.
#   Scripts/server.sh --listen 127.0.0.1:9000 --data /var/lib/basket
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh
swift build -c release --static-swift-stdlib --product basket-server >&2
exec .build/release/basket-server "$@"
