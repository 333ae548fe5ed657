#!/usr/bin/env bash
# oci.sh: oci remote sources at size. Starts Debian's docker-registry on
# loopback (internal/registrytest), pushes N one-skill artifacts (default
# 1,000, one repository each), and prints the wall time and this process's
# peak RSS of the first sync of all N sources, a no-change re-sync, a
# restart's open from the cache and a sync after one tag moved
# (BenchmarkOCISync in bench/ocisync_test.go).
#
#   bench/oci.sh            # 1,000 sources
#   N=200 bench/oci.sh
set -euo pipefail
cd "$(dirname "$0")/.."
LOADOUT_BENCH_OCI_N=${N:-1000} go test ./bench -run '^$' -bench '^BenchmarkOCISync$' -benchtime 1x -timeout 30m 2>&1 | grep -E '^oci-sync|pushed|^ok|FAIL'
