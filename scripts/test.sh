#!/usr/bin/env bash
# Runs every test: formatting, vet, module tidiness, then the whole Go test
# suite with the race detector (fuzz seed corpora included). Run from
# anywhere; .ci/run calls it after installing what the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bench/pi/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
cp go.mod /tmp/loadout-go.mod.$$ && cp go.sum /tmp/loadout-go.sum.$$
go mod tidy
if ! cmp -s go.mod /tmp/loadout-go.mod.$$ || ! cmp -s go.sum /tmp/loadout-go.sum.$$; then
  echo "go mod tidy changed go.mod or go.sum: run it and commit the result" >&2
  cp /tmp/loadout-go.mod.$$ go.mod; cp /tmp/loadout-go.sum.$$ go.sum
  rm -f /tmp/loadout-go.mod.$$ /tmp/loadout-go.sum.$$
  exit 1
fi
rm -f /tmp/loadout-go.mod.$$ /tmp/loadout-go.sum.$$
go test -race -count=1 ./...
