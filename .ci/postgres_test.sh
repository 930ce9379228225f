#!/usr/bin/env bash
# Tests of .ci/postgres.sh's paths that a machine with PostgreSQL never
# takes. Each runs in a throwaway bash; none changes the machine, except
# --install, which runs the install path for real (root, network to
# Debian's apt; the package is installed if it is not).
#   bash .ci/postgres_test.sh            # not root, no initdb: a clear skip
#   bash .ci/postgres_test.sh --install  # also: the apt-get install path
set -uo pipefail
cd "$(dirname "$0")/.."
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# The script under test, where any user can read it (tests 1 and 4 run as
# nobody when this runs as root).
tmp=$(mktemp -d /tmp/eepipe-pg-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp .ci/postgres.sh "$tmp/postgres.sh"
chmod 755 "$tmp" && chmod 644 "$tmp/postgres.sh"
as_user() { # runs bash -c "$1" as a user that is not root
  if [ "$(id -u)" = 0 ]; then
    (cd / && runuser -u nobody -- env -i PATH="$PATH" HOME=/tmp bash -c "$1" 2>&1)
  else
    env -u EEPIPE_TEST_POSTGRES -u EEPIPE_TEST_POSTGRES_SKIP bash -c "$1" 2>&1
  fi
}

# 1. Not root, no initdb, no sudo: pg_start says why, exports the reason
#    for the tests to skip with, and returns 0 (CI goes on).
script='
source '"$tmp"'/postgres.sh
pg_bin() { return 1; }       # no initdb anywhere
sudo() { return 1; }         # no password-less sudo
apt-get() { echo "apt-get must not run" >&2; return 1; }
pg_start; rc=$?
echo "rc=$rc"
echo "skip=${EEPIPE_TEST_POSTGRES_SKIP:-}"
echo "url=${EEPIPE_TEST_POSTGRES:-}"
'
out=$(as_user "$script")
if grep -q '^rc=0$' <<<"$out" && grep -q '^skip=initdb is not installed, and this user (.*) is not root' <<<"$out" &&
  grep -q '^url=$' <<<"$out" && grep -q 'PostgreSQL tests will be skipped' <<<"$out" && ! grep -q 'must not run' <<<"$out"; then
  ok "not root: clear message, the tests skip, pg_start returns 0"
else
  bad "not root:"; echo "$out"
fi

# 4 (here, while nobody may read the script). Not root, initdb installed:
#    the cluster runs as this user, and pg_stop removes it.
if real=$(source .ci/postgres.sh && pg_bin); then
  out=$(as_user '
source '"$tmp"'/postgres.sh
pg_start || exit
echo "url=$EEPIPE_TEST_POSTGRES"
"$PG_BINDIR/psql" "$EEPIPE_TEST_POSTGRES" -Atc "select 40+2" | sed "s/^/psql: /"
dir=$PG_DIR; pg_stop; [ -e "$dir" ] && echo "left $dir"
')
  if grep -q '^url=postgres://eepipe@/postgres?host=/tmp/eepipe-pg\.' <<<"$out" && grep -q '^psql: 42$' <<<"$out" && ! grep -q '^left ' <<<"$out"; then
    ok "not root, initdb installed: a cluster of this user answers, pg_stop removes it"
  else
    bad "not root, initdb installed:"; echo "$out"
  fi
else
  echo "skip: no initdb here ($real)"
fi

# 2. apt-get update fails (no network, missing lists): a clear skip.
if [ "$(id -u)" = 0 ]; then
  out=$(bash -c '
source .ci/postgres.sh
pg_bin() { return 1; }
apt-get() { [ "$1" = update ] && { echo "E: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease" >&2; return 100; }; echo "install must not run" >&2; return 1; }
export -f apt-get
pg_start; echo "rc=$?"; echo "skip=${EEPIPE_TEST_POSTGRES_SKIP:-}"' 2>&1)
  if grep -q '^rc=0$' <<<"$out" && grep -q '^skip=apt-get update failed (no network' <<<"$out" && ! grep -q 'must not run' <<<"$out"; then
    ok "apt-get update fails: clear message, the tests skip"
  else
    bad "apt-get update fails:"; echo "$out"
  fi
fi

# 3. --install: initdb is "missing" once, so the install path runs apt-get
#    for real, then finds the binaries and starts a cluster that answers.
if [ "${1:-}" = --install ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "skip --install: not root"
  else
    policy_before=$(cat /usr/sbin/policy-rc.d 2>/dev/null || echo none)
    out=$(bash -c '
source .ci/postgres.sh
eval "real_$(declare -f pg_bin)"
once=$(mktemp -u /tmp/eepipe-pg-once.XXXXXX)   # pg_bin runs in $(...): count in a file
pg_bin() { [ -e "$once" ] && { real_pg_bin; return; }; : >"$once"; return 1; }
pg_start || { echo "rc=$?"; exit; }
echo "rc=0"
echo "url=$EEPIPE_TEST_POSTGRES"
runuser -u postgres -- "$PG_BINDIR/psql" "$EEPIPE_TEST_POSTGRES" -Atc "select 40+2" 2>&1 | sed "s/^/psql: /"
pg_stop
rm -f "$once"
' 2>&1)
    policy_after=$(cat /usr/sbin/policy-rc.d 2>/dev/null || echo none)
    if grep -q '== installing postgresql (apt-get)' <<<"$out" && grep -q '^== installed: /usr/lib/postgresql/.*/bin$' <<<"$out" &&
      grep -q '^rc=0$' <<<"$out" && grep -q '^psql: 42$' <<<"$out" && [ "$policy_before" = "$policy_after" ]; then
      ok "install path: apt-get ran, the binaries were found, the cluster answers, policy-rc.d as before"
    else
      bad "install path:"; echo "$out"
    fi
  fi
fi
exit $fail
