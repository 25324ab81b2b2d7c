#!/usr/bin/env bash
# A throwaway PostgreSQL for tests and benchmarks: Debian's postgresql package, a new cluster in
# a temporary directory, run as the postgres user, listening on 127.0.0.1 only (and a socket in
# that directory), trust authentication (loopback only; never for a real deployment).
#
#   Scripts/postgres.sh start   installs postgresql if missing, starts the cluster, prints its URL
#   Scripts/postgres.sh stop    stops it and removes the directory
#   Scripts/postgres.sh url     prints the URL of the running cluster
#
# BASKET_PG_DIR (default /tmp/basket-postgres) and BASKET_PG_PORT (default 55432) move it.
set -euo pipefail
dir="${BASKET_PG_DIR:-/tmp/basket-postgres}"
port="${BASKET_PG_PORT:-55432}"
url="postgresql://postgres@127.0.0.1:$port/postgres"

as_postgres() {
    if [ "$(id -un)" = postgres ]; then "$@"; elif [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi
}

bin() {
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    [ -n "$found" ] || { echo "postgres.sh: no PostgreSQL server binaries in /usr/lib/postgresql" >&2; exit 1; }
    echo "$found"
}

case "${1:-}" in
start)
    if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
        echo "Installing postgresql…" >&2
        sudo=""
        if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
        export DEBIAN_FRONTEND=noninteractive
        $sudo apt-get update -qq
        # The package's own cluster is not used; keep it from being created and started.
        $sudo mkdir -p /etc/postgresql-common/createcluster.d
        echo "create_main_cluster = false" | $sudo tee /etc/postgresql-common/createcluster.d/basket.conf >/dev/null
        $sudo apt-get install -y -qq --no-install-recommends postgresql >/dev/null
    fi
    b=$(bin)
    if [ -f "$dir/data/postmaster.pid" ] && as_postgres "$b/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
        echo "$url"
        exit 0
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    chown postgres: "$dir" 2>/dev/null || sudo chown postgres: "$dir"
    as_postgres "$b/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    # Many connections (each test database and instance has a pool), fsync on as in production.
    # A cluster stopped a moment ago may still hold the port: a few tries.
    for attempt in 1 2 3; do
        if as_postgres "$b/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=400 -c shared_buffers=256MB" \
            start >/dev/null; then
            break
        fi
        if [ "$attempt" = 3 ]; then
            cat "$dir/server.log" >&2
            exit 1
        fi
        sleep 3
    done
    echo "$url"
    ;;
stop)
    if [ -d "$dir/data" ]; then
        as_postgres "$(bin)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
url)
    echo "$url"
    ;;
*)
    echo "usage: Scripts/postgres.sh start|stop|url" >&2
    exit 64
    ;;
esac
