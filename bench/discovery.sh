#!/usr/bin/env bash
# discovery.sh: every discovery figure in one run.
#
#   bench/discovery.sh            # N=10000 skills, 5 counts
#   N=2000 COUNT=3 bench/discovery.sh
#
# It generates a tree of N skills in a temp folder, runs the Go benchmarks
# (floor, cold discovery, rescan), measures peak RSS of one cold discovery
# (and of the floor) in fresh processes, runs Pi's loader on the same tree,
# and prints a summary of medians against the targets:
#   cold discovery <= 1.0x floor, >= 2.5x faster than Pi, peak RSS < 60 MB.
#
# Needs Go and Node 20 (npm ci fetches Pi's pinned package on first use).
# Environment:
#   N=10000      skills in the tree
#   COUNT=5      rounds of the Go benchmarks; each round runs all three
#                once (interleaved, so drift hits them alike)
#   BENCHTIME=2s go test -benchtime per benchmark and round
#   PI_RUNS=5    loads of Pi's loader in one process (median wall time)
#   RSS_RUNS=3   fresh processes for each peak-RSS figure (median)
#   CPUS=2       GOMAXPROCS and go test -cpu; with taskset and more cores
#                than this, every measured process is pinned to CPUS cores
#   KEEP=1       keep the temp folder (tree and raw outputs)
#   STRICT=1     exit 1 when a target is missed
#
# Every figure is taken with the tree in the OS page cache (it was just
# written); "cold" means no loadout cache, not a cold disk.
set -euo pipefail

N=${N:-10000}
COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-2s}
PI_RUNS=${PI_RUNS:-5}
RSS_RUNS=${RSS_RUNS:-3}
CPUS=${CPUS:-2}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
work=$(mktemp -d "${TMPDIR:-/tmp}/loadout-discovery.XXXXXX")
if [[ "${KEEP:-}" == 1 ]]; then
	echo "keeping $work"
else
	trap 'rm -rf "$work"' EXIT
fi
tree=$work/skills

say() { printf '\n== %s\n' "$*" >&2; }

# Pin measured processes to CPUS cores when the machine has more.
pin=()
if command -v taskset >/dev/null 2>&1 && [[ $(nproc 2>/dev/null || echo 1) -gt $CPUS ]]; then
	pin=(taskset -c "0-$((CPUS - 1))")
fi
export GOMAXPROCS=$CPUS

median() { # numbers on stdin, one a line
	sort -g | awk '{a[NR]=$1} END {
		if (NR == 0) { print "nan"; exit }
		if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2 }'
}
field() { # field NAME: the value of NAME=... on each line of stdin, units dropped
	sed -n "s/.* $1=\([0-9.]*\).*/\1/p"
}

# Figures are only as good as the machine is quiet.
load_note() {
	local load cpus
	load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
	cpus=$(nproc 2>/dev/null || echo 1)
	if awk -v l="$load" -v c="$cpus" 'BEGIN { exit !(l > c / 2) }'; then
		echo "WARNING: load average $load on $cpus cpus at $1: other work is running, figures will be noisy"
	fi
}
load_start=$(load_note start)
[[ -z $load_start ]] || echo "$load_start" >&2

say "building"
have_source=0
if go build ./source/ 2>/dev/null; then
	have_source=1
else
	echo "package source does not build: discovery figures are skipped" >&2
fi
go build -o "$work/gentree" ./bench/cmd/gentree
tags=()
bench='^Benchmark(Floor10k)$'
if [[ $have_source == 1 ]]; then
	go build -o "$work/peakmem" ./bench/cmd/peakmem
	tags=(-tags loadout_source) # harmless once the tag is gone
	bench='^Benchmark(Floor10k|ColdDiscovery10k|Rescan10k)$'
fi
go test "${tags[@]}" -c -o "$work/bench.test" ./bench

say "generating $N skills"
"$work/gentree" -n "$N" -out "$tree"
sync # or writeback of the new tree runs during the first measurements

say "go benchmarks ($COUNT rounds, benchtime $BENCHTIME, cpu $CPUS)"
: >"$work/bench.txt"
for round in $(seq "$COUNT"); do
	LOADOUT_BENCH_TREE=$tree LOADOUT_BENCH_N=$N "${pin[@]}" "$work/bench.test" \
		-test.run '^$' -test.bench "$bench" -test.benchmem -test.benchtime "$BENCHTIME" \
		-test.cpu "$CPUS" >"$work/bench-$round.txt" || {
		cat "$work/bench-$round.txt"
		echo "benchmarks failed" >&2
		exit 1
	}
	grep '^Benchmark' "$work/bench-$round.txt" | tee -a "$work/bench.txt"
done

ns() { # median ns/op of benchmark $1
	awk -v name="$1" '$1 ~ "^Benchmark" name "(-[0-9]+)?$" {
		for (i = 2; i <= NF; i++) if ($i == "ns/op") print $(i-1) }' "$work/bench.txt" | median
}
bop() { # median B/op of benchmark $1
	awk -v name="$1" '$1 ~ "^Benchmark" name "(-[0-9]+)?$" {
		for (i = 2; i <= NF; i++) if ($i == "B/op") print $(i-1) }' "$work/bench.txt" | median
}

say "peak memory, $RSS_RUNS fresh processes each"
: >"$work/peak-floor.txt"
: >"$work/peak-disc.txt"
if [[ $have_source == 1 ]]; then
	for _ in $(seq "$RSS_RUNS"); do
		"${pin[@]}" "$work/peakmem" -n "$N" -floor "$tree" | tee -a "$work/peak-floor.txt"
		"${pin[@]}" "$work/peakmem" -n "$N" "$tree" | tee -a "$work/peak-disc.txt"
	done
fi

say "Pi's loader"
if [[ ! -f bench/pi/node_modules/@mariozechner/pi-coding-agent/dist/core/skills.js ]]; then
	(cd bench/pi && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
"${pin[@]}" node --expose-gc bench/pi/pi-load.mjs "$tree" "$PI_RUNS" | tee "$work/pi.txt"
: >"$work/pi-rss.txt"
for _ in $(seq "$RSS_RUNS"); do
	"${pin[@]}" node bench/pi/pi-load.mjs "$tree" 1 | grep '^pi summary' | tee -a "$work/pi-rss.txt"
done
pi_skills=$(grep '^pi summary' "$work/pi.txt" | field skills)
if [[ "$pi_skills" != "$N" ]]; then
	echo "Pi loaded $pi_skills skills, want $N" >&2
	exit 1
fi

# Summary.
floor_ms=$(awk -v x="$(ns Floor10k)" 'BEGIN { printf "%.1f", x / 1e6 }')
pi_ms=$(grep '^pi run=' "$work/pi.txt" | field wall | median)
pi_rss=$(field rss_one_load <"$work/pi-rss.txt" | median)
floor_rss=$(field peak_rss <"$work/peak-floor.txt" | median)
cold_ms=nan rescan_ms=nan cold_rss=nan cold_mb_op=nan retained=nan
if [[ $have_source == 1 ]]; then
	cold_ms=$(awk -v x="$(ns ColdDiscovery10k)" 'BEGIN { printf "%.1f", x / 1e6 }')
	rescan_ms=$(awk -v x="$(ns Rescan10k)" 'BEGIN { printf "%.1f", x / 1e6 }')
	cold_mb_op=$(awk -v x="$(bop ColdDiscovery10k)" 'BEGIN { printf "%.1f", x / 1048576 }')
	cold_rss=$(field peak_rss <"$work/peak-disc.txt" | median)
	retained=$(field retained <"$work/peak-disc.txt" | median)
fi

verdict() { # verdict OK-CONDITION (awk expression)
	if [[ $have_source != 1 ]]; then echo "n/a"; return; fi
	if awk "BEGIN { exit !($1) }"; then echo "ok"; else echo "MISSED"; fi
}
v_floor=$(verdict "$cold_ms <= $floor_ms")
v_pi=$(verdict "$pi_ms / $cold_ms >= 2.5")
v_rss=$(verdict "$cold_rss < 60")

load_end=$(load_note end)
{
	echo
	[[ -z $load_start ]] || echo "$load_start"
	[[ -z $load_end ]] || echo "$load_end"
	echo "discovery, $N skills (3 supporting files each), $CPUS cpus${pin:+ (pinned)}, medians"
	echo "  $(go version | cut -d' ' -f3-), node $(node --version), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || uname -m)"
	printf '  %-28s %10s   %s\n' "floor (serial read, no parse)" "$floor_ms ms" ""
	printf '  %-28s %10s   %s\n' "loadout cold discovery" "$cold_ms ms" \
		"$(awk -v c="$cold_ms" -v f="$floor_ms" 'BEGIN { if (c == "nan") print "-"; else printf "%.2fx floor", c / f }')  (target <= 1.0x: $v_floor)"
	printf '  %-28s %10s   %s\n' "loadout rescan (cache)" "$rescan_ms ms" "cold allocs $cold_mb_op MB/op"
	printf '  %-28s %10s   %s\n' "pi loadSkillsFromDir" "$pi_ms ms" \
		"$(awk -v c="$cold_ms" -v p="$pi_ms" 'BEGIN { if (c == "nan") print "-"; else printf "loadout %.2fx faster", p / c }')  (target >= 2.5x: $v_pi)"
	printf '  %-28s %10s   %s\n' "peak RSS loadout (1 scan)" "$cold_rss MB" "retained heap $retained MB  (target < 60 MB: $v_rss)"
	printf '  %-28s %10s   %s\n' "peak RSS floor" "$floor_rss MB" ""
	printf '  %-28s %10s   %s\n' "peak RSS pi (1 load)" "$pi_rss MB" "node baseline included"
}
if [[ "${STRICT:-}" == 1 && "$v_floor $v_pi $v_rss" == *MISSED* ]]; then
	exit 1
fi
