#!/usr/bin/env bash
# remote.sh: remote git sources at size. Makes a repository of N generated
# skills (default 1,000), serves it over HTTP on loopback (git http-backend)
# and prints the time and peak RSS of the first sync, a no-change re-sync,
# a restart's open of the pinned snapshot from the cache, and a sync after
# one skill changed upstream. Needs the git binary (the benchmark makes the
# repository with it; loadout itself fetches with go-git).
#
#   bench/remote.sh                 # 1,000 skills over HTTP
#   N=5000 TRANSPORT=file bench/remote.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000}
TRANSPORT=${TRANSPORT:-http}
bin=$(mktemp -d)/remotesync
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./bench/cmd/remotesync
"$bin" -n "$N" -transport "$TRANSPORT"
