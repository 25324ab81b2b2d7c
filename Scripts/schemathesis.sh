#!/usr/bin/env bash
# Fuzzes a real basket-server against docs/openapi.yaml with schemathesis (from PyPI): every
# operation gets at least 100 generated requests; no answer may be a 5xx or fall outside the
# schema, and the server must still answer afterwards.
#   Scripts/schemathesis.sh [PATH-TO-basket-server]     (default: .build/debug/basket-server)
set -euo pipefail
cd "$(dirname "$0")/.."

server=${1:-.build/debug/basket-server}
python3 -m pip install --quiet --disable-pip-version-check 'schemathesis>=4,<5' 2>&1 | grep -vi "running pip as the 'root' user" || true
work=$(mktemp -d)
# Long-polls are cut to a second: the fuzzer asks for waits of up to 30 s on lists it made.
# Cheap password hashes: this checks answers against the schema, not the hashing's cost.
"$server" --listen 127.0.0.1:0 --data "$work/data" --max-wait 1 --password-iterations 10000 >"$work/log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do
    grep -q "listening on" "$work/log" && break
    sleep 0.1
done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/log" | head -n 1)
[ -n "$url" ] || { echo "schemathesis.sh: the server did not start" >&2; cat "$work/log" >&2; exit 1; }

account='{"name":"fuzzer","password":"fuzzer-password"}'
curl -sf -X POST -H 'Content-Type: application/json' -d "$account" "$url/v1/accounts" >/dev/null
token=$(curl -sf -X POST -H 'Content-Type: application/json' -d "$account" "$url/v1/tokens" |
    Scripts/shell-helpers.py json-field token)

# Revoking the token (the current one, all of them, or one by an id the fuzzer finds in GET /v1/tokens)
# would turn every later request into a 401: those routes are covered by the
# authorization tests instead.
status=0
# Run from the temporary folder: schemathesis keeps a .schemathesis cache where it runs, and a
# test run changes no file of the repository.
spec=$PWD/docs/openapi.yaml
(cd "$work" && schemathesis run "$spec" --url "$url" -H "Authorization: Bearer $token" \
    --checks not_a_server_error,response_schema_conformance --max-examples 100 --seed 1 \
    --generation-database none --exclude-name 'DELETE /v1/tokens/current' --exclude-name 'DELETE /v1/tokens' \
    --exclude-name 'DELETE /v1/tokens/{id}') || status=$?
if ! curl -sf "$url/healthz" >/dev/null; then
    echo "schemathesis.sh: the server stopped answering" >&2
    status=1
fi
exit "$status"
