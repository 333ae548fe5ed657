#!/usr/bin/env bash
# ui.sh: the web UI's figures (issue 10), from the Go benchmarks in
# webui/bench_test.go:
#   - BenchmarkPagesSkills10k: server time of the skills page over 10,000
#     skills, through the UI's handler, gzip included (target: < 50 ms/op)
#   - BenchmarkPagesSkill200Files: server time of each tab of the skill
#     page of a stored skill with 200 files and three versions
#   - BenchmarkPagesWeight: every page the crawl reaches loaded cold in
#     Chromium, bytes transferred per page (target: < 300 KB each, the
#     editor bundle included); needs Debian's chromium
#
#   bench/ui.sh          # all three
#   bench/ui.sh server   # the server-time benchmarks only
#   bench/ui.sh weight   # the page weights only
#   COUNT=5 bench/ui.sh server   # repeat them (for benchstat)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case "$what" in all|server|weight) ;; *) echo "usage: bench/ui.sh [all|server|weight]" >&2; exit 2 ;; esac
if [ "$what" != weight ]; then
  go test -run '^$' -bench 'Pages(Skills10k|Skill200Files)' -benchtime=2s -count="${COUNT:-1}" ./webui
fi
if [ "$what" != server ]; then
  # One crawl is one iteration; the per-page table is in the log.
  go test -v -run '^$' -bench 'PagesWeight' -benchtime=1x ./webui
fi
