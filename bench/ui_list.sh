#!/bin/sh
# ui_list.sh: the skills list at size: the real binary serving
# 400, 2,000 and 10,000 generated skills (bench/gen), loaded in Chromium
# at 1280×800 with the browser's cache off. Per size it prints the first
# page's server time (request to last byte, gzip), its DOMContentLoaded
# and its HTML once the safety checks the server starts with have ended,
# then the server time and DOMContentLoaded of the first page after the
# server starts (cold: the rows are built, during those checks).
# Targets at 10,000 skills: server under 50 ms, DOMContentLoaded under
# 1 s, HTML under 100 KB.
#
#   bench/ui_list.sh                                # 400, 2,000, 10,000
#   SIZES=10000 LOADS=5 bench/ui_list.sh            # one size, 5 loads
#   CORPUS=/path/to/skills bench/ui_list.sh         # and a real collection
#   STRICT=1 bench/ui_list.sh                       # exit 1 if a target is missed
#
# Needs Chromium (Debian's chromium package, or $CHROMIUM). It runs
# BenchmarkSkillsListScale (webui/bench_test.go). Figures are only
# meaningful on a quiet machine.
set -eu
cd "$(dirname "$0")/.."
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
awk -v l="$load" -v c="$(nproc)" 'BEGIN { exit !(l > c / 2) }' && echo "warning: load average $load on $(nproc) cores: the times are not comparable" >&2
out=$(LOADOUT_BENCH_SIZES="${SIZES:-400,2000,10000}" LOADOUT_BENCH_CORPUS="${CORPUS:-}" \
  go test ./webui -run '^$' -bench 'SkillsListScale' -benchtime "${LOADS:-10}x" -count 1 -timeout 60m) || { printf '%s\n' "$out"; exit 1; }
lines=$(printf '%s\n' "$out" | grep '^BenchmarkSkillsListScale/') || { printf '%s\n' "$out"; exit 1; }
printf '%s\n' "$lines" | awk -v strict="${STRICT:-}" '
function metric(name,   i) { for (i = 1; i < NF; i++) if ($(i+1) == name) return $i; return "?" }
BEGIN {
  printf "%-22s %10s %9s %8s   %12s %10s\n", "skills", "server ms", "DCL ms", "HTML KB", "cold server", "cold DCL"
  miss = 0
}
{
  name = $1; sub(/^BenchmarkSkillsListScale\//, "", name); sub(/-[0-9]+$/, "", name); sub(/^n=/, "", name)
  s = metric("ms-server"); d = metric("ms-dcl"); k = metric("KB-html")
  printf "%-22s %10.1f %9.0f %8.1f   %12.0f %10.0f\n", name, s, d, k, metric("ms-first-server"), metric("ms-first-dcl")
  if (s >= 50 || d >= 1000 || k >= 100) { miss++; printf "  ^ over a target (server < 50 ms, DCL < 1000 ms, HTML < 100 KB)\n" }
}
END {
  print "targets (every size): server < 50 ms, DOMContentLoaded < 1000 ms, HTML < 100 KB; cold = the first page after start"
  if (strict != "" && miss > 0) exit 1
}'
