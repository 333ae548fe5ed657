#!/usr/bin/env bash
# safety.sh: what the safety and quality checks add to `loadout check`.
# Generates a tree of N skills (default 10,000; each a SKILL.md and three
# supporting files), then runs the built binary ROUNDS times each, in turn:
#   loadout check --safety=false DIR          (discovery and the format checks)
#   LOADOUT_CACHE=off loadout check DIR       (plus the safety and quality checks, every skill read: a first run)
#   LOADOUT_CACHE=CACHE loadout check DIR     (the same, with the findings saved by an earlier run: the usual run)
# and prints the median wall and CPU (user+system) time and peak RSS of
# each, and the ratios to the first. The first round's files are cold when the machine's page cache was
# dropped first (COLD=1 tries `sync; echo 3 > /proc/sys/vm/drop_caches`,
# which needs root); the later rounds are warm.
#
#   bench/safety.sh
#   N=2000 ROUNDS=3 COLD=1 bench/safety.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-10000}
ROUNDS=${ROUNDS:-5}
COLD=${COLD:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/loadout" ./cmd/loadout
go run ./bench/cmd/gentree -n "$N" -out "$tmp/tree" >/dev/null
sleep 3 # files younger than skill.StampSettle (2 s) are not stamped, so never saved
LOADOUT_CACHE="$tmp/cache" "$tmp/loadout" check "$tmp/tree" >/dev/null 2>&1 || true # saves the findings
measure() { # prints "wall cpu rss" (seconds, seconds, MB) for one run of the command
	local start end
	start=$(date +%s.%N)
	/usr/bin/time -f "%U %S %M" -o "$tmp/time" "$@" >/dev/null 2>&1 || true
	end=$(date +%s.%N)
	awk -v s="$start" -v e="$end" -v t="$(tail -1 "$tmp/time")" 'BEGIN{split(t,a," "); printf "%.3f %.3f %.1f\n", e-s, a[1]+a[2], a[3]/1000}'
}
median() { sort -n | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
: >"$tmp/off" && : >"$tmp/on" && : >"$tmp/warm"
for r in $(seq "$ROUNDS"); do
	if [ -n "$COLD" ] && [ "$r" = 1 ]; then
		sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || echo "safety.sh: cannot drop the page cache (not root): round 1 is warm too" >&2
	fi
	measure "$tmp/loadout" check --safety=false "$tmp/tree" >>"$tmp/off"
	if [ -n "$COLD" ] && [ "$r" = 1 ]; then
		sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
	fi
	measure env LOADOUT_CACHE=off "$tmp/loadout" check "$tmp/tree" >>"$tmp/on"
	measure env LOADOUT_CACHE="$tmp/cache" "$tmp/loadout" check "$tmp/tree" >>"$tmp/warm"
done
off_wall=$(cut -d' ' -f1 "$tmp/off" | median); off_cpu=$(cut -d' ' -f2 "$tmp/off" | median); off_rss=$(cut -d' ' -f3 "$tmp/off" | median)
on_wall=$(cut -d' ' -f1 "$tmp/on" | median); on_cpu=$(cut -d' ' -f2 "$tmp/on" | median); on_rss=$(cut -d' ' -f3 "$tmp/on" | median)
warm_wall=$(cut -d' ' -f1 "$tmp/warm" | median); warm_cpu=$(cut -d' ' -f2 "$tmp/warm" | median); warm_rss=$(cut -d' ' -f3 "$tmp/warm" | median)
echo "# $N skills, $ROUNDS rounds (medians)"
printf "check --safety=false          wall %6.2fs  cpu %6.2fs  peak RSS %6.1f MB\n" "$off_wall" "$off_cpu" "$off_rss"
printf "check, nothing saved (first)  wall %6.2fs  cpu %6.2fs  peak RSS %6.1f MB\n" "$on_wall" "$on_cpu" "$on_rss"
printf "check, findings saved         wall %6.2fs  cpu %6.2fs  peak RSS %6.1f MB\n" "$warm_wall" "$warm_cpu" "$warm_rss"
awk -v a="$off_wall" -v b="$on_wall" -v c="$off_cpu" -v d="$on_cpu" -v e="$off_rss" -v f="$on_rss" 'BEGIN{printf "first run / --safety=false: wall %.2fx, cpu %.2fx, peak RSS %.2fx\n", b/a, d/c, f/e}'
awk -v a="$off_wall" -v b="$warm_wall" -v c="$off_cpu" -v d="$warm_cpu" -v e="$off_rss" -v f="$warm_rss" 'BEGIN{printf "saved run / --safety=false: wall %.2fx, cpu %.2fx, peak RSS %.2fx\n", b/a, d/c, f/e}'
if [ -n "$COLD" ]; then
	echo "# round 1 (cold): off $(head -1 "$tmp/off"), on $(head -1 "$tmp/on") (wall cpu)"
fi
