#!/usr/bin/env bash
# growth.sh: discovery and the one-shot catalog commands at 1,000, 10,000
# and 50,000 skills: wall time, CPU time, peak RSS and the cost per skill,
# beside the serial floor (bench/floor) at the same sizes.
#
#   bench/growth.sh                         # sizes 1000 10000 50000, 3 rounds
#   SIZES="1000 10000" COUNT=5 bench/growth.sh
#   TREE_50000=/tmp/t50k bench/growth.sh    # use a tree gentree already made
#
# For each size it makes a tree with bench/cmd/gentree (unless TREE_<N>
# names one), then runs COUNT rounds; each round runs, one after the other
# in fresh processes on the same tree:
#   - peakmem -floor: the serial floor (one walk reading every SKILL.md),
#   - peakmem: one cold discovery (source.ScanFolder), with the heap it
#     keeps (retained) read after a GC; and again with -typed, as check
#     and list scan (source.Options.TypedMeta),
#   - loadout check --safety=false, check (safety on), list, list --json,
#     each with its default memory limit (BatchMemoryLimit), and
#     check --safety=false with GOMEMLIMIT=off, for what the limit costs,
#   - loadout check of an empty root: the binary's own RSS (code pages,
#     runtime, package init), the part of every peak no skill makes.
# Interleaving the rounds means drift and other work hit all of them
# alike. Medians over the rounds are printed against the targets:
#   - cold discovery of 10,000 skills: wall time <= 1.0x the floor's;
#   - growth linear: CPU time and retained heap per skill at 50,000 within
#     1.25x and 1.1x of those at 10,000 (1,000 is dominated by start-up);
#   - check (both) and list (both) of 50,000 skills: peak RSS < 100 MB.
#
# Environment:
#   SIZES="1000 10000 50000"  tree sizes (the targets use 10000 and 50000)
#   COUNT=3      rounds per size
#   CPUS=2       GOMAXPROCS; with taskset and more cores than this, every
#                measured process is pinned to CPUS cores
#   TREE_<N>     an existing tree of N skills (made by gentree), used as is
#   KEEP=1       keep the temp folder (trees and raw outputs)
#   STRICT=1     exit 1 when a target is missed
#
# Needs GNU time (/usr/bin/time) for the commands' figures. Every figure
# is taken with the tree in the OS page cache: "cold" means no loadout
# cache, not a cold disk.
set -euo pipefail

SIZES=${SIZES:-1000 10000 50000}
COUNT=${COUNT:-3}
CPUS=${CPUS:-2}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
. bench/lib.sh # bench_work, load_note
bench_work growth
say() { printf '\n== %s\n' "$*" >&2; }

pin=()
if command -v taskset >/dev/null 2>&1 && [[ $(nproc 2>/dev/null || echo 1) -gt $CPUS ]]; then
	pin=(taskset -c "0-$((CPUS - 1))")
fi
export GOMAXPROCS=$CPUS
if [[ ! -x /usr/bin/time ]]; then
	echo "growth.sh needs GNU time at /usr/bin/time" >&2
	exit 2
fi

median() { # numbers on stdin, one a line
	sort -g | awk '{a[NR]=$1} END {
		if (NR == 0) { print "nan"; exit }
		if (NR % 2) m = a[(NR+1)/2]; else m = (a[NR/2] + a[NR/2+1]) / 2; printf "%.3f\n", m }'
}
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }  # NAME=value on each line, units dropped
dur() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" | ms; } # NAME=duration on each line, in ms
ms() { # a Go duration (1.2s, 340ms, 900µs) in ms
	awk '{ v = $1; if (v ~ /ms$/) { sub(/ms$/, "", v); print v } else if (v ~ /µs$/) { sub(/µs$/, "", v); print v / 1000 }
		else if (v ~ /s$/) { sub(/s$/, "", v); print v * 1000 } else print v }'
}
load_start=$(load_note start)
[[ -z $load_start ]] || echo "$load_start" >&2

say "building"
go build -o "$work/gentree" ./bench/cmd/gentree
go build -o "$work/peakmem" ./bench/cmd/peakmem
go build -o "$work/loadout" ./cmd/loadout
mkdir -p "$work/empty" # a root with no skill: what the binary holds before the first

# run NAME ENV... -- CMD...: one fresh process, its figures appended to
# $work/N-NAME.txt as "wall=S cpu=S rss=MB".
run() {
	local name=$1 out=$work/$n-$1.txt
	shift
	local envs=()
	while [[ $1 != -- ]]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "${pin[@]}" "$@" >/dev/null 2>"$work/stderr.txt" || {
		# check exits 1 when it finds errors; anything else is a failure
		[[ $? == 1 && $name == check* ]] || { cat "$work/stderr.txt" >&2; echo "$name failed" >&2; exit 1; }
	}
	awk '{ printf "%s wall=%.3f cpu=%.3f rss=%.1f\n", name, $1, $2 + $3, $4 / 1024 }' name="$name" "$work/time.txt" | tail -1 >>"$out"
}

verdict() { if awk "BEGIN { exit !($1) }"; then echo "ok"; else echo "MISSED"; fi; }
missed=0
declare -A cpu_per retained_per
report=()

for n in $SIZES; do
	var=TREE_$n
	tree=${!var:-}
	if [[ -z $tree ]]; then
		tree=$work/t$n
		say "generating $n skills"
		"$work/gentree" -n "$n" -out "$tree" >/dev/null
		sync
	fi
	for round in $(seq "$COUNT"); do
		say "$n skills, round $round of $COUNT"
		"${pin[@]}" "$work/peakmem" -n "$n" -floor "$tree" | tee -a "$work/$n-floor.txt" >&2
		"${pin[@]}" "$work/peakmem" -n "$n" "$tree" | tee -a "$work/$n-disc.txt" >&2
		"${pin[@]}" "$work/peakmem" -n "$n" -typed "$tree" | tee -a "$work/$n-typed.txt" >&2
		run check-empty GOMEMLIMIT= -- "$work/loadout" check --safety=false --root "$work/empty"
		run check-nosafety GOMEMLIMIT= -- "$work/loadout" check --safety=false --root "$tree"
		run check-nosafety-nolimit GOMEMLIMIT=off -- "$work/loadout" check --safety=false --root "$tree"
		run check GOMEMLIMIT= -- "$work/loadout" check --root "$tree"
		run list GOMEMLIMIT= -- "$work/loadout" list --root "$tree"
		run list-json GOMEMLIMIT= -- "$work/loadout" list --json --root "$tree"
	done
	fl_wall=$(dur wall <"$work/$n-floor.txt" | median)
	fl_cpu=$(dur cpu <"$work/$n-floor.txt" | median)
	fl_rss=$(field peak_rss <"$work/$n-floor.txt" | median)
	d_wall=$(dur wall <"$work/$n-disc.txt" | median)
	d_cpu=$(dur cpu <"$work/$n-disc.txt" | median)
	d_rss=$(field peak_rss <"$work/$n-disc.txt" | median)
	d_ret=$(field retained <"$work/$n-disc.txt" | median)
	cpu_per[$n]=$(awk -v c="$d_cpu" -v n="$n" 'BEGIN { printf "%.2f", c * 1000 / n }')
	retained_per[$n]=$(awk -v r="$d_ret" -v n="$n" 'BEGIN { printf "%.0f", r * 1048576 / n }')
	line() { # line LABEL WALLms CPUms RSSMB NOTE
		printf '  %-40s %9.1f ms %9.1f ms %8.1f MB %7.0f B/skill  %s\n' "$1" "$2" "$3" "$4" \
			"$(awk -v r="$4" -v n="$n" 'BEGIN { print r * 1048576 / n }')" "$5"
	}
	ratio=$(awk -v a="$d_wall" -v b="$fl_wall" 'BEGIN { printf "%.2f", a / b }')
	note="${ratio}x floor; ${cpu_per[$n]} µs CPU and ${retained_per[$n]} B retained per skill"
	if [[ $n == 10000 ]]; then
		v=$(verdict "$d_wall <= $fl_wall")
		note="$note (target <= 1.0x floor: $v)"
		[[ $v == ok ]] || missed=1
	fi
	report+=("" "$n skills (medians of $COUNT rounds)")
	report+=("$(printf '  %-40s %12s %12s %11s %15s' "" "wall" "cpu" "peak RSS" "RSS per skill")")
	report+=("$(line "floor (serial read, no parse)" "$fl_wall" "$fl_cpu" "$fl_rss" "")")
	report+=("$(line "cold discovery (peakmem)" "$d_wall" "$d_cpu" "$d_rss" "$note")")
	t_ret=$(field retained <"$work/$n-typed.txt" | median)
	report+=("$(line "cold discovery, TypedMeta (-typed)" "$(dur wall <"$work/$n-typed.txt" | median)" \
		"$(dur cpu <"$work/$n-typed.txt" | median)" "$(field peak_rss <"$work/$n-typed.txt" | median)" \
		"$(awk -v r="$t_ret" -v n="$n" 'BEGIN { printf "%.0f", r * 1048576 / n }') B retained per skill (what check and list keep)")")
	for c in check-empty check-nosafety check-nosafety-nolimit check list list-json; do
		w=$(field wall <"$work/$n-$c.txt" | median)
		cpu=$(field cpu <"$work/$n-$c.txt" | median)
		rss=$(field rss <"$work/$n-$c.txt" | median)
		label=${c/check-nosafety/check --safety=false}
		label=${label/-nolimit/ (GOMEMLIMIT=off)}
		label=${label/list-json/list --json}
		label=${label/check-empty/check of an empty root (base RSS)}
		note=""
		if [[ $n == 50000 && $c != *nolimit && $c != check-empty ]]; then
			v=$(verdict "$rss < 100")
			note="target < 100 MB: $v"
			[[ $v == ok ]] || missed=1
		fi
		report+=("$(line "$label" "$(awk -v w="$w" 'BEGIN { print w * 1000 }')" "$(awk -v c="$cpu" 'BEGIN { print c * 1000 }')" "$rss" "$note")")
	done
done

if [[ -n ${cpu_per[10000]:-} && -n ${cpu_per[50000]:-} ]]; then
	gc=$(awk -v a="${cpu_per[50000]}" -v b="${cpu_per[10000]}" 'BEGIN { printf "%.2f", a / b }')
	gr=$(awk -v a="${retained_per[50000]}" -v b="${retained_per[10000]}" 'BEGIN { printf "%.2f", a / b }')
	v1=$(verdict "$gc <= 1.25")
	v2=$(verdict "$gr <= 1.1")
	[[ "$v1 $v2" != *MISSED* ]] || missed=1
	report+=("" "growth 10,000 -> 50,000 skills: discovery CPU per skill ${gc}x (target <= 1.25x: $v1), retained per skill ${gr}x (target <= 1.1x: $v2)")
fi

load_end=$(load_note end)
{
	echo
	[[ -z $load_start ]] || echo "$load_start"
	[[ -z $load_end ]] || echo "$load_end"
	echo "scale: $CPUS cpus${pin:+ (pinned)}, $(go version | cut -d' ' -f3-), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
	printf '%s\n' "${report[@]}"
}
if [[ "${STRICT:-}" == 1 && $missed == 1 ]]; then
	exit 1
fi
