#!/usr/bin/env bash
# Draws basket-bench curves' CSV as a PNG, with matplotlib from PyPI in .build/plot-venv.
#   Scripts/plot-curves.sh CURVES.csv OUT.png
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/plot-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
    if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
        sudo=""
        if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-venv >/dev/null ||
            { $sudo apt-get update -qq &&
                DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-venv >/dev/null; }
    fi
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q matplotlib
fi
"$venv/bin/python" Scripts/plot-curves.py "$@"
