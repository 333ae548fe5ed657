#!/usr/bin/env bash
# Runs every test: formatting, vet, module tidiness, then the whole Go test
# suite with the race detector (fuzz seed corpora included), against a real
# PostgreSQL as well as SQLite. On a fresh Debian machine it installs what
# the tests need (the postgresql package) and starts a throwaway server on
# loopback; with LOADOUT_TEST_POSTGRES already set it uses that server.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bench/pi/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
tmp=$(mktemp -d)
cp go.mod go.sum "$tmp/"
go mod tidy
if ! cmp -s go.mod "$tmp/go.mod" || ! cmp -s go.sum "$tmp/go.sum"; then
  echo "go mod tidy changed go.mod or go.sum: run it and commit the result" >&2
  cp "$tmp/go.mod" "$tmp/go.sum" .
  rm -rf "$tmp"
  exit 1
fi
rm -rf "$tmp"

# A throwaway PostgreSQL for the store tests, unless one is given.
if [ -z "${LOADOUT_TEST_POSTGRES:-}" ]; then
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "installing postgresql (Debian package) for the store tests"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  fi
  eval "$(scripts/pg.sh start)"
  trap 'scripts/pg.sh stop "$LOADOUT_PG_DIR"' EXIT
  echo "PostgreSQL for the tests: ${LOADOUT_TEST_POSTGRES##*@}"
fi

# The attack suite (attack/) runs the real binary through whole attacks,
# a git bomb and Chromium among them: it gets more than the default 10 min.
go test -race -count=1 -timeout 20m ./...

# Every fuzz target for a short fixed time (FUZZTIME, 5s each by default),
# with its committed seed corpus; FUZZTIME=0 skips this step.
if [ "${FUZZTIME:-5s}" != "0" ]; then
  scripts/fuzz.sh
fi
