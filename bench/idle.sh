#!/usr/bin/env bash
# idle.sh: the CPU an idle `loadout serve` uses, with the live watch on
# (the default) and with --no-watch, side by side over the same window, at
# 50,000 folder skills (gentree -findings 1: about 200,000 folders, more
# than the inotify budget of most machines, so part of them is polled).
# Both servers start, answer /healthz, and the watch's set-up ends (its
# log's "start-up settled"); then, after SETTLE seconds more, the CPU time
# each uses over IDLE seconds is read from /proc and printed as a share of
# one core, with the folders the watch watches and polls.
#
#   bench/idle.sh                       # 50,000 skills, 180 s idle
#   T50K=/tmp/t50k bench/idle.sh        # reuse a generated tree
#   SIZE=10000 IDLE=60 bench/idle.sh
#   LOADOUT=/tmp/old/loadout bench/idle.sh   # another build
#
# Targets: the watch costs under 1% of a core idle (watch on
# less watch off), and an idle server with the watch on stays under 2%.
# With STRICT=1 the script exits 1 when one is missed.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # bench_work, wait_healthy, load_note
SIZE=${SIZE:-50000}
IDLE=${IDLE:-180}
SETTLE=${SETTLE:-10}
STRICT=${STRICT:-}
bench_work idle
if [ -n "${LOADOUT:-}" ]; then cp "$LOADOUT" "$work/loadout"; else go build -o "$work/loadout" ./cmd/loadout; fi
tree=${T50K:-}
if [ -z "$tree" ] || [ ! -d "$tree" ]; then
  go build -o "$work/gentree" ./bench/cmd/gentree
  tree=${T50K:-$work/tree}
  "$work/gentree" -n "$SIZE" -findings 1 -out "$tree" >/dev/null
fi
hz=$(getconf CLK_TCK)
load_note start
declare -A pid logf
for mode in watch no-watch; do
  cfg="$work/cfg-$mode.json"
  printf '{"agents":[{"agentId":"bench","skills":[{"root":"%s"}]}],"store":"%s"}\n' "$tree" "$work/$mode.db" >"$cfg"
  args=(); [ "$mode" = no-watch ] && args=(--no-watch)
  port=$((17000 + RANDOM % 2000))
  logf[$mode]="$work/$mode.log"
  "$work/loadout" serve --config "$cfg" --addr "127.0.0.1:$port" "${args[@]}" >"${logf[$mode]}" 2>&1 &
  pid[$mode]=$!
  wait_healthy "$port" || { echo "idle.sh: serve ($mode) did not answer" >&2; cat "${logf[$mode]}" >&2; exit 2; }
done
for _ in $(seq 1 3000); do
  grep -q 'start-up settled' "${logf[watch]}" && break
  sleep 0.1
done
grep -q 'start-up settled' "${logf[watch]}" || { echo "idle.sh: the watch was not set up within 300 s" >&2; exit 2; }
sleep "$SETTLE"
declare -A c0 c1
for m in watch no-watch; do c0[$m]=$(awk '{print $14+$15}' "/proc/${pid[$m]}/stat"); done
t0=$(date +%s%N)
sleep "$IDLE"
for m in watch no-watch; do c1[$m]=$(awk '{print $14+$15}' "/proc/${pid[$m]}/stat"); done
t1=$(date +%s%N)
wl=$(grep -o 'msg="watching skill folders".*' "${logf[watch]}" | head -1 | grep -o 'folders=[0-9]* polled=[0-9]* budget=[0-9]*' || true)
echo "idle serve, $SIZE skills ($(find "$tree" -type d | wc -l) folders), $(nproc) cpus, over $IDLE s (load average $(cut -d' ' -f1-3 /proc/loadavg)):"
declare -A pct
for m in watch no-watch; do
  pct[$m]=$(awk -v a="${c0[$m]}" -v b="${c1[$m]}" -v hz="$hz" -v t0="$t0" -v t1="$t1" 'BEGIN {printf "%.2f", (b-a)/hz/((t1-t0)/1e9)*100}')
  extra=""; [ "$m" = watch ] && extra=" ($wl)"
  printf '  %-9s %6s%% of a core, %.2f CPU-s%s\n' "$m" "${pct[$m]}" "$(awk -v a="${c0[$m]}" -v b="${c1[$m]}" -v hz="$hz" 'BEGIN {print (b-a)/hz}')" "$extra"
done
cost=$(awk -v a="${pct[watch]}" -v b="${pct[no-watch]}" 'BEGIN {printf "%.2f", a-b}')
missed=0
v1=ok; awk -v c="$cost" 'BEGIN {exit !(c < 1)}' || { v1=MISSED; missed=1; }
v2=ok; awk -v c="${pct[watch]}" 'BEGIN {exit !(c < 2)}' || { v2=MISSED; missed=1; }
echo "  the watch's cost: $cost% of a core (target < 1) $v1; with the watch on: ${pct[watch]}% (target < 2) $v2"
load_note end
if [ -n "$STRICT" ] && [ "$missed" = 1 ]; then exit 1; fi
