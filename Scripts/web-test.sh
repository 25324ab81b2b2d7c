#!/usr/bin/env bash
# The web client's tests (Tests/web): Debian's Chromium driven by Playwright from PyPI, against a
# real basket-server and real `basket` CLI devices from the debug build. Installs what is missing
# (chromium and an emoji font with apt-get, Playwright and pytest in .build/web-venv).
#   Scripts/web-test.sh [PYTEST ARGS]        e.g. -k offline
#   BASKET_SCREENSHOTS=docs/images Scripts/web-test.sh -k screenshots    refreshes the README's pictures
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v chromium >/dev/null || missing+=(chromium)
# The catalogue's icons are emoji: with a font for them the screenshots show what a phone shows.
dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || missing+=(fonts-noto-color-emoji)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -x .build/debug/basket-server ] || [ ! -x .build/debug/basket ] || [ ! -x .build/debug/basket-lab ]; then
    swift build --product basket-server
    swift build --product basket
    swift build --product basket-lab
fi
venv=.build/web-venv
if [ ! -x "$venv/bin/pytest" ] || ! "$venv/bin/python" -c "import playwright" 2>/dev/null; then
    python3 -m venv "$venv" 2>/dev/null || { apt-get install -y -qq python3-venv >/dev/null && python3 -m venv "$venv"; }
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'playwright>=1.50,<2' 'pytest>=8,<10'
fi
exec "$venv/bin/pytest" -q -p no:cacheprovider Tests/web "$@"
