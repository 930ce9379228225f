#!/usr/bin/env bash
# Throwaway PostgreSQL cluster for the state store tests.
#   source .ci/postgres.sh && pg_start   # exports EEPIPE_TEST_POSTGRES
#   pg_stop
# Installs Debian's postgresql package when initdb is missing (CI runs as
# root). The cluster lives in a temporary folder owned by the postgres user
# (postgres refuses to run as root) and listens on a Unix socket only.

pg_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

pg_start() {
  local bin
  if ! bin=$(pg_bin); then
    echo "== installing postgresql (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
    bin=$(pg_bin) || { echo "postgresql could not be installed" >&2; return 1; }
  fi
  PG_DIR=$(mktemp -d /tmp/eepipe-pg.XXXXXX)
  local run=()
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres "$PG_DIR"
    run=(runuser -u postgres --)
  fi
  PG_RUN=("${run[@]}")
  PG_BINDIR=$bin
  "${run[@]}" "$bin/initdb" -D "$PG_DIR/data" -U eepipe --auth=trust -E UTF8 >"$PG_DIR/initdb.log" 2>&1 ||
    { cat "$PG_DIR/initdb.log" >&2; return 1; }
  "${run[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w \
    -o "-k $PG_DIR -c listen_addresses='' -c fsync=off" start >/dev/null ||
    { cat "$PG_DIR/server.log" >&2; return 1; }
  export EEPIPE_TEST_POSTGRES="postgres://eepipe@/postgres?host=$PG_DIR&sslmode=disable"
  echo "== postgresql running in $PG_DIR (EEPIPE_TEST_POSTGRES=$EEPIPE_TEST_POSTGRES)"
}

pg_stop() {
  [ -n "${PG_DIR:-}" ] || return 0
  "${PG_RUN[@]}" "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
  PG_DIR=
}
