#!/usr/bin/env bash
# Throwaway PostgreSQL cluster for the state store tests.
#   source .ci/postgres.sh && pg_start   # exports EEPIPE_TEST_POSTGRES
#   pg_stop
# When initdb is missing, Debian's postgresql package is installed with
# apt-get (as root, or through password-less sudo). The package's own
# cluster and service are not used (nor started while installing: a
# container has no init to start them); the cluster here lives in a
# temporary folder owned by the postgres user (postgres refuses to run as
# root), listens on a Unix socket only, and is removed by pg_stop.
# When PostgreSQL can be neither found nor installed (not root, no apt-get,
# no network to Debian's mirrors), pg_start says why, exports
# EEPIPE_TEST_POSTGRES_SKIP with the reason, and returns 0: the PostgreSQL
# tests then skip with that reason, also in CI, and every other test runs.

pg_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

# pg_skip NOTE: PostgreSQL is not available; the tests that need it skip.
pg_skip() {
  echo "== PostgreSQL not available: $1" >&2
  echo "== the state store's PostgreSQL tests will be skipped (every other test runs)" >&2
  export EEPIPE_TEST_POSTGRES_SKIP="$1"
  unset EEPIPE_TEST_POSTGRES
  return 0
}

# pg_install installs Debian's postgresql package, or says why it cannot
# (PG_INSTALL_FAILED) and returns 1. It sets no service going: while it
# installs, a policy-rc.d refuses service starts (unless one exists).
pg_install() {
  local as=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      as=(sudo -n env DEBIAN_FRONTEND=noninteractive)
    else
      PG_INSTALL_FAILED="initdb is not installed, and this user ($(id -un)) is not root and has no password-less sudo, so Debian's postgresql package cannot be installed: install it (sudo apt-get install postgresql), run as root, or set EEPIPE_TEST_POSTGRES to a server whose user may create databases"
      return 1
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    PG_INSTALL_FAILED="initdb is not installed and there is no apt-get to install it: install PostgreSQL, or set EEPIPE_TEST_POSTGRES to a server whose user may create databases"
    return 1
  fi
  echo "== installing postgresql (apt-get)"
  local -x DEBIAN_FRONTEND=noninteractive
  local policy=/usr/sbin/policy-rc.d added=
  if [ ! -e "$policy" ]; then
    # Exit 101: "action forbidden", so the package's postinst starts no
    # service (there may be no init to start it, and it is not needed).
    printf '#!/bin/sh\nexit 101\n' | "${as[@]}" tee "$policy" >/dev/null && "${as[@]}" chmod 755 "$policy" && added=1
  fi
  local ok=0 log
  log=$(mktemp /tmp/eepipe-pg-apt.XXXXXX)
  # The package lists may be missing (a fresh image has none): update first.
  if ! "${as[@]}" apt-get update -qq >"$log" 2>&1; then
    PG_INSTALL_FAILED="apt-get update failed (no network to Debian's mirrors?): $(tail -n 3 "$log" | tr '\n' ' ')"
    ok=1
  elif ! "${as[@]}" apt-get install -y -qq --no-install-recommends postgresql >"$log" 2>&1; then
    PG_INSTALL_FAILED="apt-get install postgresql failed: $(tail -n 3 "$log" | tr '\n' ' ')"
    ok=1
  fi
  rm -f "$log"
  [ -n "$added" ] && "${as[@]}" rm -f "$policy"
  return $ok
}

pg_start() {
  local bin
  if ! bin=$(pg_bin); then
    PG_INSTALL_FAILED=
    if ! pg_install; then
      pg_skip "$PG_INSTALL_FAILED"
      return 0
    fi
    bin=$(pg_bin) || { pg_skip "postgresql was installed but no initdb was found under /usr/lib/postgresql/*/bin nor on PATH"; return 0; }
    echo "== installed: $bin"
  fi
  unset EEPIPE_TEST_POSTGRES_SKIP
  PG_DIR=$(mktemp -d /tmp/eepipe-pg.XXXXXX)
  local run=()
  if [ "$(id -u)" = 0 ]; then
    # The package creates the postgres user; binaries from elsewhere may not.
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin postgres ||
      { echo "could not create the postgres user (postgres refuses to run as root)" >&2; return 1; }
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
