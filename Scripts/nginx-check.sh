#!/usr/bin/env bash
# Runs docs/deploy/nginx-basket.conf for real: nginx terminates TLS (a self-signed certificate
# made here) in front of basket-server instances on 127.0.0.1, and curl checks what a client
# relies on: the certificate is checked, plain HTTP redirects, an account and a list can be
# made, a long-poll parked behind nginx is woken by a push, a long-poll that runs its whole
# wait is answered, not cut by the proxy, and the web client is served with its policy (and,
# when Scripts/web-test.sh has installed Playwright, works in Chromium through the proxy).
# With BASKET_TEST_POSTGRES set, two instances share a new database there (the documented
# deployment); otherwise one instance with its SQLite file.
#   Scripts/nginx-check.sh [path/to/basket-server]
set -euo pipefail
cd "$(dirname "$0")/.."
server=${1:-.build/debug/basket-server}

missing=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v openssl >/dev/null || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing ${missing[*]}…" >&2
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
        { DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
fi
nginx=$(command -v nginx || echo /usr/sbin/nginx)

dir=$(mktemp -d /tmp/basket-nginx.XXXXXX)
chmod 755 "$dir"
pids=()
database=""
cleanup() {
    [ -f "$dir/nginx.pid" ] && "$nginx" -c "$dir/nginx.conf" -s stop 2>/dev/null || true
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ -n "$database" ]; then psql -q "$BASKET_TEST_POSTGRES" -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" || true; fi
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "nginx-check: FAILED: $*" >&2
    echo "--- nginx error log" >&2
    cat "$dir/error.log" >&2 || true
    for log in "$dir"/server-*.log; do echo "--- $log" >&2; cat "$log" >&2; done
    exit 1
}
free_port() { Scripts/shell-helpers.py free-port; }

# The certificate, for "localhost".
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost" \
    -keyout "$dir/privkey.pem" -out "$dir/fullchain.pem" 2>/dev/null

# The instances.
arguments=()
instances=1
if [ -n "${BASKET_TEST_POSTGRES:-}" ]; then
    database="basket_nginx_check_$$"
    psql -q "$BASKET_TEST_POSTGRES" -c "CREATE DATABASE $database"
    arguments=(--store "${BASKET_TEST_POSTGRES%/*}/$database")
    instances=2
fi
ports=()
for i in $(seq 1 $instances); do
    port=$(free_port)
    "$server" --listen "127.0.0.1:$port" --data "$dir/data" "${arguments[@]}" --max-wait 5 --trust-proxy \
        --metrics-listen "127.0.0.1:0" >"$dir/server-$i.log" 2>&1 &
    pids+=($!)
    ports+=("$port")
done
for i in $(seq 1 $instances); do
    for _ in $(seq 1 200); do
        grep -q "listening on" "$dir/server-$i.log" && break
        sleep 0.05
    done
    grep -q "listening on" "$dir/server-$i.log" || fail "basket-server $i did not start"
done

# docs/deploy/nginx-basket.conf, with this run's ports, paths and server name.
http_port=$(free_port)
https_port=$(free_port)
Scripts/nginx-conf.py "$dir" "$http_port" "$https_port" "${ports[@]}"
grep -c "server 127.0.0.1" "$dir/basket.conf" | grep -qx "$instances" || fail "the upstream block was not rewritten"
user_line=""
if [ "$(id -u)" -eq 0 ]; then user_line="user root;"; fi
cat >"$dir/nginx.conf" <<CONF
$user_line
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 256; }
http {
    access_log $dir/access.log;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    include $dir/basket.conf;
}
CONF
"$nginx" -t -c "$dir/nginx.conf" >"$dir/nginx-t.log" 2>&1 || { cat "$dir/nginx-t.log" >&2; fail "nginx -t"; }
"$nginx" -c "$dir/nginx.conf" || fail "nginx did not start"

base="https://localhost:$https_port"
tls=(curl -sS --max-time 20 --cacert "$dir/fullchain.pem" --resolve "localhost:$https_port:127.0.0.1")
for _ in $(seq 1 100); do "${tls[@]}" -o /dev/null "$base/healthz" 2>/dev/null && break; sleep 0.05; done

# 1. TLS with the certificate checked; without trusting it, curl refuses.
"${tls[@]}" "$base/healthz" | grep -q '"ok"' || fail "GET /healthz over TLS"
if curl -sS --max-time 10 --resolve "localhost:$https_port:127.0.0.1" -o /dev/null "$base/healthz" 2>/dev/null; then
    fail "curl accepted the self-signed certificate without --cacert"
fi
echo "TLS: /healthz answers through nginx; the certificate is verified"

# 2. Plain HTTP redirects to HTTPS.
redirect=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code} %{redirect_url}' "http://127.0.0.1:$http_port/v1/lists")
[[ "$redirect" == "301 https://"*"/v1/lists" ]] || fail "plain HTTP answered '$redirect', not a redirect"
echo "HTTP: $redirect"

# 3. An account, a token and a list, over TLS.
json=(-H "Content-Type: application/json")
"${tls[@]}" "${json[@]}" -o /dev/null -w '%{http_code}' -d '{"name":"alice","password":"alice-password"}' \
    "$base/v1/accounts" | grep -qx 201 || fail "POST /v1/accounts"
token=$("${tls[@]}" "${json[@]}" -d '{"name":"alice","password":"alice-password"}' "$base/v1/tokens" |
    Scripts/shell-helpers.py json-field token)
auth=(-H "Authorization: Bearer $token")
list=$(openssl rand -hex 16)
"${tls[@]}" "${json[@]}" "${auth[@]}" -o /dev/null -w '%{http_code}' -d "{\"id\":\"$list\"}" "$base/v1/lists" |
    grep -qx 201 || fail "POST /v1/lists"

# 4. A long-poll parked behind nginx (on whichever instance) is woken by a push (to whichever).
"${tls[@]}" "${auth[@]}" "$base/v1/lists/$list/ops?after=0&wait=5" >"$dir/woken.json" &
poll=$!
sleep 1
stamp=$(printf '%012x0000' "$(date +%s%3N)")
item=$(openssl rand -hex 16)
ops=$(printf 'basket-ops 1\\nL %s\\n%s\\tname\\t%s\\t00000000000000aa\\t=Milk over TLS\\n' "$list" "$item" "$stamp")
started=$(date +%s%3N)
"${tls[@]}" "${json[@]}" "${auth[@]}" -d "{\"ops\":\"$ops\"}" "$base/v1/lists/$list/ops" | grep -q '"accepted":1' ||
    fail "the push was not accepted"
wait "$poll" || fail "the long-poll failed"
woke=$(($(date +%s%3N) - started))
grep -q 'Milk over TLS' "$dir/woken.json" || fail "the long-poll answered without the pushed item: $(cat "$dir/woken.json")"
echo "long-poll: woken by the push after ${woke} ms"

# 5. A long-poll that waits its whole time (5 s, the server's --max-wait here) is answered.
started=$(date +%s%3N)
answer=$("${tls[@]}" "${auth[@]}" "$base/v1/lists/$list/ops?after=1&wait=30")
waited=$(($(date +%s%3N) - started))
grep -q '"count":0' <<<"$answer" || fail "the idle long-poll answered '$answer'"
[ "$waited" -ge 4000 ] || fail "the idle long-poll returned after $waited ms, before its wait"
echo "long-poll: an idle wait was answered after ${waited} ms"
# 6. The web client through nginx: the page with its Content-Security-Policy, and its versioned
#    files cached for a year.
"${tls[@]}" -D "$dir/page.headers" -o "$dir/page.html" "$base/" || fail "GET / through nginx"
grep -qi "^content-security-policy: default-src 'none'; script-src 'self'" "$dir/page.headers" ||
    fail "the page came without its Content-Security-Policy: $(cat "$dir/page.headers")"
script=$(grep -o '/a/[0-9a-f]*/app.js' "$dir/page.html" | head -n 1)
[ -n "$script" ] || fail "the page names no app.js"
"${tls[@]}" -D "$dir/script.headers" -o /dev/null "$base$script" || fail "GET $script through nginx"
grep -qi "^cache-control: max-age=31536000, immutable" "$dir/script.headers" || fail "$script is not cached for a year"
echo "web client: / and $script through nginx, with the policy and the caching"
# 7. And in a browser (when the web tests' Playwright is installed): sign up, make a list, add an
#    item, and see it synced, all over TLS through nginx.
if [ -x .build/web-venv/bin/python ] && command -v chromium >/dev/null; then
    .build/web-venv/bin/python Tests/web/behind_proxy.py "$base" "$https_port" || fail "the web client in a browser through nginx"
fi
# 8. The public side's limits (last: they use up this address's sign-ins): /metrics is not
#    served through nginx, and sign-in attempts beyond
#    the burst are refused by nginx (limit_req) before they cost the server a password hash.
code=$("${tls[@]}" -o /dev/null -w '%{http_code}' "$base/metrics")
[ "$code" = 404 ] || fail "/metrics through nginx answered $code"
codes=""
for _ in $(seq 1 10); do
    codes+=$("${tls[@]}" "${json[@]}" -o /dev/null -w '%{http_code} ' -d '{"name":"alice","password":"wrong-password"}' \
        "$base/v1/tokens")
done
grep -q 429 <<<"$codes" || fail "ten sign-ins in a row were all let through: $codes"
grep -q 401 <<<"$codes" || fail "no sign-in reached the server: $codes"
echo "limits: /metrics is private; sign-ins through nginx: $codes"

echo "nginx TLS: passed ($instances instance(s))"
