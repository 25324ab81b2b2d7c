#!/usr/bin/env bash
# Installs the Debian packages Basket builds against, when they are missing.
# Needs root (or sudo) only when something is missing.
#   Scripts/install-deps.sh               what building and running need
#   Scripts/install-deps.sh --for-tests   and what only the tests use: groff-base (the man page
#                                         check), zsh and fish (the completion checks),
#                                         unicode-data (the item key tables' check),
#                                         chromium and python3-venv (the web client's tests)
set -euo pipefail

# python3: the tests' lying server (Tests/HostileServer) and the schemathesis and nginx checks.
packages=(libsqlite3-dev libssl-dev libmicrohttpd-dev libpq-dev zlib1g-dev libbrotli-dev libcurl4-openssl-dev pkg-config curl tmux python3)
if [ "${1:-}" = --for-tests ]; then packages+=(groff-base zsh fish unicode-data chromium fonts-noto-color-emoji python3-venv); fi
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "Installing ${missing[*]}…" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
