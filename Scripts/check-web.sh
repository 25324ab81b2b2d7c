#!/usr/bin/env bash
# Type-checks the web client's JavaScript against its JSDoc types with TypeScript's checker
# (Debian's node-typescript; no build step, nothing is emitted): the page's modules from app.js
# with the DOM's types, the service worker with a worker's. Strict, as the Swift is: no implicit
# any (every function's parameters typed), null checked, no unused import, variable or parameter.
set -euo pipefail
cd "$(dirname "$0")/../Client/web"
if ! command -v tsc >/dev/null; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends node-typescript >/dev/null
fi
common=(--noEmit --allowJs --checkJs --strict --noUnusedLocals --noUnusedParameters --target es2022 --module es2022)
tsc "${common[@]}" --lib es2022,dom,dom.iterable app.js seal.js
tsc "${common[@]}" --lib es2022,webworker sw.js
# No function over 80 lines (Scripts/web-function-lengths.js, with the checker's own parser).
typescript=$(dirname "$(dirname "$(readlink -f "$(command -v tsc)")")")
NODE_PATH=$(dirname "$typescript") node ../../Scripts/web-function-lengths.js --max 80 ./*.js >/dev/null
echo "check-web: the web client's modules type-check, no function over 80 lines"
