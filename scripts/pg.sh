#!/usr/bin/env bash
# A throwaway PostgreSQL for the store tests, from Debian's packages
# (apt-get install postgresql): a fresh cluster in a temporary folder,
# listening on 127.0.0.1 only, on a free port, with a random password.
#
#   eval "$(scripts/pg.sh start)"    # exports LOADOUT_TEST_POSTGRES and LOADOUT_PG_DIR
#   go test ./postgres/
#   scripts/pg.sh stop               # stops it and removes the folder ($LOADOUT_PG_DIR)
#
# PostgreSQL refuses to run as root, so as root the server runs as the
# "postgres" user the package creates. Durability is switched off
# (fsync, synchronous_commit): the data is thrown away anyway.
set -euo pipefail

die() { echo "pg.sh: $*" >&2; exit 1; }

bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$d" ] && [ -x "$d/initdb" ]; then
    echo "$d"
  elif command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
  else
    die "no PostgreSQL server found: apt-get install -y postgresql"
  fi
}

# as USER CMD...: run CMD as the server's user (as is, unless we are root).
as() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  die "no free port found"
}

start() {
  local bin dir port pw
  bin=$(bindir)
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    die "running as root, but there is no postgres user to run the server as"
  fi
  dir=$(mktemp -d "${TMPDIR:-/tmp}/loadout-pg.XXXXXX")
  chmod 700 "$dir"
  [ "$(id -u)" = 0 ] && chown postgres: "$dir"
  cd "$dir"
  pw=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  (umask 077; echo "$pw" >"$dir/pwfile")
  [ "$(id -u)" = 0 ] && chown postgres: "$dir/pwfile"
  as "$bin/initdb" -D "$dir/data" -U loadout --pwfile="$dir/pwfile" -A scram-sha-256 \
    -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  rm -f "$dir/pwfile"
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    if as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o \
      "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
      start >/dev/null; then
      echo "export LOADOUT_TEST_POSTGRES='postgres://loadout:$pw@127.0.0.1:$port/postgres?sslmode=disable'"
      echo "export LOADOUT_PG_DIR='$dir'"
      return
    fi
    tail -n 5 "$dir/server.log" >&2 || true
  done
  die "could not start PostgreSQL (see $dir/server.log)"
}

stop() {
  local dir=${1:-${LOADOUT_PG_DIR:-}}
  [ -n "$dir" ] || die "stop: give the folder, or set LOADOUT_PG_DIR"
  [ -d "$dir/data" ] || die "stop: $dir holds no cluster"
  cd "$dir"
  as "$(bindir)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
  cd /
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  *) echo "usage: scripts/pg.sh start | stop [DIR]" >&2; exit 2 ;;
esac
