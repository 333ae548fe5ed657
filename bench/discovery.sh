#!/usr/bin/env bash
# discovery.sh: every discovery figure in one run.
#
#   bench/discovery.sh            # N=10000 skills, 5 rounds
#   N=2000 COUNT=3 bench/discovery.sh
#
# It generates a tree of N skills in a temp folder, then runs COUNT rounds;
# each round runs, one after the other on the same tree:
#   - the Go benchmarks Floor10k, ColdDiscovery10k, Rescan10k (one test
#     binary run, -benchtime BENCHTIME),
#   - peakmem -floor and peakmem (one cold scan per fresh process: peak RSS),
#   - Pi's loader, PI_RUNS loads in one fresh Node process.
# Interleaving the rounds means drift and other work on the machine hit all
# of them alike. It prints medians over the rounds (and the best round)
# against the targets: cold discovery <= 1.0x floor, >= 2.5x faster than Pi,
# peak RSS < 60 MB.
#
# Pi's time is the median of its warm loads (every load but the first in
# each process): the first load of a process also pays for V8 compiling the
# loader, so leaving it out is the comparison least kind to loadout. The
# first-load time is shown too. Pi's peak RSS is taken after its first load.
#
# Needs Go and Node 20 (npm ci fetches Pi's pinned package on first use).
# Environment:
#   N=10000       skills in the tree
#   COUNT=5       rounds
#   BENCHTIME=2s  go test -benchtime, per benchmark and round
#   PI_RUNS=3     Pi loads per round (one Node process per round)
#   CPUS=2        GOMAXPROCS and go test -cpu; with taskset and more cores
#                 than this, every measured process is pinned to CPUS cores
#   KEEP=1        keep the temp folder (tree and raw outputs)
#   STRICT=1      exit 1 when a target is missed
#
# Every figure is taken with the tree in the OS page cache (it was just
# written); "cold" means no loadout cache, not a cold disk.
set -euo pipefail

N=${N:-10000}
COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-2s}
PI_RUNS=${PI_RUNS:-3}
CPUS=${CPUS:-2}
if ((PI_RUNS < 2)); then
	echo "PI_RUNS must be at least 2 (the first load of each process is reported apart)" >&2
	exit 2
fi

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
. bench/lib.sh # bench_work, load_note
bench_work discovery
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
		if (NR % 2) m = a[(NR+1)/2]; else m = (a[NR/2] + a[NR/2+1]) / 2; printf "%.1f\n", m }'
}
least() { sort -g | head -1; }
field() { # field NAME: the value of NAME=... on each line of stdin, units dropped
	sed -n "s/.* $1=\([0-9.]*\).*/\1/p"
}
benchcol() { # benchcol NAME UNIT: that column of each result line of benchmark NAME
	awk -v name="$1" -v unit="$2" '$1 ~ "^Benchmark" name "(-[0-9]+)?$" {
		for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1) }' "$work/bench.txt"
}

# Figures are only as good as the machine is quiet.
load_start=$(load_note start)
[[ -z $load_start ]] || echo "$load_start" >&2

say "building"
go build -o "$work/gentree" ./bench/cmd/gentree
go build -o "$work/peakmem" ./bench/cmd/peakmem
go test -c -o "$work/bench.test" ./bench
if [[ ! -f bench/pi/node_modules/@mariozechner/pi-coding-agent/dist/core/skills.js ]]; then
	(cd bench/pi && npm ci --no-audit --no-fund --loglevel=error) >&2
fi

say "generating $N skills"
"$work/gentree" -n "$N" -out "$tree"
sync # or writeback of the new tree runs during the first measurements

: >"$work/bench.txt"
: >"$work/peak-floor.txt"
: >"$work/peak-disc.txt"
: >"$work/pi.txt"
for round in $(seq "$COUNT"); do
	say "round $round of $COUNT"
	LOADOUT_BENCH_TREE=$tree LOADOUT_BENCH_N=$N "${pin[@]}" "$work/bench.test" \
		-test.run '^$' -test.bench '^Benchmark(Floor10k|ColdDiscovery10k|Rescan10k)$' \
		-test.benchmem -test.benchtime "$BENCHTIME" -test.cpu "$CPUS" >"$work/bench-$round.txt" || {
		cat "$work/bench-$round.txt"
		echo "benchmarks failed" >&2
		exit 1
	}
	grep '^Benchmark' "$work/bench-$round.txt" | tee -a "$work/bench.txt"
	"${pin[@]}" "$work/peakmem" -n "$N" -floor "$tree" | tee -a "$work/peak-floor.txt"
	"${pin[@]}" "$work/peakmem" -n "$N" "$tree" | tee -a "$work/peak-disc.txt"
	"${pin[@]}" node --expose-gc bench/pi/pi-load.mjs "$tree" "$PI_RUNS" | tee "$work/pi-$round.txt"
	cat "$work/pi-$round.txt" >>"$work/pi.txt"
	pi_skills=$(grep '^pi summary' "$work/pi-$round.txt" | field skills)
	if [[ "$pi_skills" != "$N" ]]; then
		echo "Pi loaded $pi_skills skills, want $N" >&2
		exit 1
	fi
done

# Summary: "med" is the median over rounds, "best" the least.
ms() { awk '{ printf "%.1f\n", $1 / 1e6 }'; }
floor_all=$(benchcol Floor10k ns/op | ms)
cold_all=$(benchcol ColdDiscovery10k ns/op | ms)
rescan_all=$(benchcol Rescan10k ns/op | ms)
pi_warm_all=$(grep '^pi run=' "$work/pi.txt" | grep -v '^pi run=1 ' | field wall)
pi_first_all=$(grep '^pi run=1 ' "$work/pi.txt" | field wall)

floor_ms=$(median <<<"$floor_all") floor_best=$(least <<<"$floor_all")
cold_ms=$(median <<<"$cold_all") cold_best=$(least <<<"$cold_all")
rescan_ms=$(median <<<"$rescan_all") rescan_best=$(least <<<"$rescan_all")
pi_ms=$(median <<<"$pi_warm_all") pi_best=$(least <<<"$pi_warm_all")
pi_first=$(median <<<"$pi_first_all")
cold_mb_op=$(benchcol ColdDiscovery10k B/op | median | awk '{ printf "%.1f", $1 / 1048576 }')
cold_rss=$(field peak_rss <"$work/peak-disc.txt" | median)
floor_rss=$(field peak_rss <"$work/peak-floor.txt" | median)
retained=$(field retained <"$work/peak-disc.txt" | median)
pi_rss=$(grep '^pi summary' "$work/pi.txt" | field rss_one_load | median)
# CPU time of one scan (fresh process), less sensitive to a busy machine.
cpu_s() { awk '{ if ($1 ~ /ms$/) { sub(/ms$/, "", $1); print $1 } else if ($1 ~ /s$/) { sub(/s$/, "", $1); print $1 * 1000 } else print $1 }'; }
floor_cpu=$(sed -n 's/.* cpu=\([^ ]*\).*/\1/p' "$work/peak-floor.txt" | cpu_s | median)
cold_cpu=$(sed -n 's/.* cpu=\([^ ]*\).*/\1/p' "$work/peak-disc.txt" | cpu_s | median)
pi_cpu=$(grep '^pi run=' "$work/pi.txt" | grep -v '^pi run=1 ' | field cpu | median)

verdict() { # verdict CONDITION (an awk expression)
	if awk "BEGIN { exit !($1) }"; then echo "ok"; else echo "MISSED"; fi
}
v_floor=$(verdict "$cold_ms <= $floor_ms")
v_pi=$(verdict "$pi_ms / $cold_ms >= 2.5")
v_rss=$(verdict "$cold_rss < 60")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

load_end=$(load_note end)
{
	echo
	[[ -z $load_start ]] || echo "$load_start"
	[[ -z $load_end ]] || echo "$load_end"
	echo "discovery, $N skills (3 supporting files each), $CPUS cpus${pin:+ (pinned)}, $COUNT rounds"
	echo "  $(go version | cut -d' ' -f3-), node $(node --version), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
	printf '  %-30s %10s %10s   %s\n' "" "median" "best" ""
	printf '  %-30s %7s ms %7s ms   %s\n' "floor (serial read, no parse)" "$floor_ms" "$floor_best" ""
	printf '  %-30s %7s ms %7s ms   %s\n' "loadout cold discovery" "$cold_ms" "$cold_best" \
		"$(ratio "$cold_ms" "$floor_ms")x floor (target <= 1.0x: $v_floor); $cold_mb_op MB allocated"
	printf '  %-30s %7s ms %7s ms   %s\n' "loadout rescan (cache)" "$rescan_ms" "$rescan_best" \
		"$(ratio "$rescan_ms" "$floor_ms")x floor"
	printf '  %-30s %7s ms %7s ms   %s\n' "pi loadSkillsFromDir (warm)" "$pi_ms" "$pi_best" \
		"loadout $(ratio "$pi_ms" "$cold_ms")x faster (target >= 2.5x: $v_pi); pi first load $pi_first ms"
	printf '  %-30s %7s MB %10s   %s\n' "peak RSS loadout (1 scan)" "$cold_rss" "" \
		"target < 60 MB: $v_rss; retained heap $retained MB"
	printf '  %-30s %7s MB\n' "peak RSS floor" "$floor_rss"
	printf '  %-30s %7s MB %10s   %s\n' "peak RSS pi (1 load)" "$pi_rss" "" "Node's baseline included"
	printf '  %-30s %s\n' "cpu time per scan (median)" "floor $floor_cpu ms, loadout $cold_cpu ms, pi (warm) $pi_cpu ms"
}
if [[ "${STRICT:-}" == 1 && "$v_floor $v_pi $v_rss" == *MISSED* ]]; then
	exit 1
fi
