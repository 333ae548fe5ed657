#!/usr/bin/env bash
# serve50k.sh: how fast `loadout serve` becomes ready and how much memory it
# holds, at 10,000 and 50,000 folder skills. For each size:
#   first  no SQLite file yet; with COLD=1 (root only) the page cache is
#          dropped first (sync; echo 3 > /proc/sys/vm/drop_caches), as after
#          a reboot, and bench/cmd/coldfloor's time on the same cold cache
#          is printed first: the floor (the same reads, nothing else)
#   warm   the same again: the store exists, the tree is in the page cache
#   watch  warm, with the folder watcher on (no --no-watch)
# and prints the CPU time (user+system) the process used until GET
# /healthz answers, the headline figure, as it depends far less than wall
# time on what else the machine runs; the wall time to it; its peak
# resident memory (VmHWM); and the live heap it logs once the catalog is
# loaded. Each start is made ROUNDS times (default 3), the three modes
# interleaved round by round, and the medians are printed with their
# targets. With the watch, the CPU used until start-up has settled (the
# background work after ready: the safety pass, search and install
# index warm-up, the watch's set-up and its rescan) is printed too, from
# the log's "start-up settled" line. With the watch,
# the peak is read once the watch is up and the roots rescanned (the log's
# "start-up settled"), which happens in the background after ready, and
# two rounds of polling (the folders past the inotify budget) after that.
#
#   bench/serve50k.sh
#   T50K=/tmp/t50k bench/serve50k.sh    # reuse a generated 50,000-skill tree (gentree -findings 1)
#   SIZES=50000 ROUNDS=5 bench/serve50k.sh
#   FINDINGS=0 bench/serve50k.sh        # generated trees without findings
#   BIN=/tmp/old/loadout bench/serve50k.sh   # measure another build
#   COLD=1 STRICT=1 bench/serve50k.sh   # exit 1 if a target is missed
#
# Targets (2 cores): 50,000 skills ready in under 5 CPU-seconds with the
# watch on (and, wall, under 5 s first and warm) with VmHWM under 300 MB;
# 10,000 skills ready in under 1.5 s with VmHWM under 150 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"10000 50000"}
ROUNDS=${ROUNDS:-3}
declare -A fig # fig[n,mode,what] = space-separated values, one per round
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
if [ -n "${BIN:-}" ]; then cp "$BIN" "$work/loadout"; else go build -o "$work/loadout" ./cmd/loadout; fi
go build -o "$work/gentree" ./bench/cmd/gentree
go build -o "$work/coldfloor" ./bench/cmd/coldfloor

missed=0
check() { # check LABEL VALUE TARGET UNIT
  local ok=ok
  if awk -v v="$2" -v t="$3" 'BEGIN { exit !(v > t) }'; then ok=MISSED; missed=1; fi
  printf '    %-26s %8s %-3s (target < %s %s) %s\n' "$1" "$2" "$4" "$3" "$4" "$ok"
}

run() { # run N TREE DB MODE
  local n=$1 tree=$2 db=$3 mode=$4 args=(--no-watch)
  [ "$mode" = watch ] && args=()
  local cfg="$work/cfg.json" log="$work/serve.log"
  printf '{"agents":[{"agentId":"bench","skills":[{"root":"%s"}]}],"store":"%s"}\n' "$tree" "$db" > "$cfg"
  local port=$((17000 + RANDOM % 2000))
  local t0 t1 io0 io1
  io0=$(diskreads "$tree")
  t0=$(date +%s%N)
  "$work/loadout" serve --config "$cfg" --addr "127.0.0.1:$port" "${args[@]}" >"$log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 6000); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.01
  done
  t1=$(date +%s%N)
  io1=$(diskreads "$tree")
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null
  local cpu hwm live sys settled="" idle="" setcpu=""
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14+$15)/hz}' "/proc/$pid/stat")
  sys=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", $15/hz}' "/proc/$pid/stat")
  if [ "$mode" = watch ]; then
    # The watch is set up in the background once serving: it walks every
    # folder again, then rescans the roots once. The peak counts all of
    # it, so it is read once the log says start-up has settled.
    for _ in $(seq 1 12000); do
      grep -q 'start-up settled' "$log" && break
      sleep 0.01
    done
    settled=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b-a)/1e9 }')
    setcpu=$(grep 'start-up settled' "$log" | grep -o 'cpu_s=[0-9.]*' | head -1 | cut -d= -f2)
    # Past the inotify budget the rest is polled every 5 s: two rounds
    # of it count too, and the CPU they take idle is printed.
    local c0 c1
    c0=$(awk '{print $14+$15}' "/proc/$pid/stat")
    sleep 10
    c1=$(awk '{print $14+$15}' "/proc/$pid/stat")
    idle=$(awk -v a="$c0" -v b="$c1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.0f", (b-a)/hz/10*100 }')
  fi
  sleep 1
  hwm=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$pid/status")
  live=$(grep -o 'live_heap_mb=[0-9]*' "$log" | head -1 | cut -d= -f2)
  kill -INT "$pid"; wait "$pid" || true
  local ready
  ready=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b-a)/1e9 }')
  echo "  $n skills, $mode start: CPU to ready ${cpu} s (kernel ${sys} s), ready ${ready} s, peak ${hwm} MB, live heap ${live} MB${settled:+, watch up and roots rescanned after ${settled} s}${setcpu:+ (${setcpu} CPU-s in all)}${idle:+, then idle at ${idle}% of a core}"
  fig[$n,$mode,cpu]+="$cpu "; fig[$n,$mode,ready]+="$ready "; fig[$n,$mode,hwm]+="$hwm "
  [ -n "$setcpu" ] && fig[$n,$mode,settled]+="$setcpu "
  if [ "${COLD:-}" = 1 ] && [ "$mode" = first ] && [ -n "$io0" ] && [ -n "$io1" ]; then
    # On a cold cache: the reads the disk completed while the server started
    # (any process, but the server's dominate), the
    # time they took summed, so ms/s over the wall time is the queue depth,
    # and the server's kernel CPU per read.
    awk -v a="$io0" -v b="$io1" -v w="$ready" -v k="$sys" 'BEGIN { split(a, x, " "); split(b, y, " ");
      r = y[1]-x[1]; ms = y[2]-x[2]; if (r > 0) printf "    disk: %d reads, %.0f ms reading (queue depth %.1f), %.0f us of kernel CPU per read\n", r, ms, ms/1000/w, k*1e6/r }'
  fi
}

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR+1)/2)] }'; }

# summary N: the medians of the rounds, each with its target.
summary() {
  local n=$1 rt mt mode
  if [ "$n" -ge 50000 ]; then rt=5 mt=300; else rt=1.5 mt=150; fi
  echo "  $n skills, medians of $ROUNDS starts:"
  for mode in first warm watch; do
    echo "   $mode (CPU to ready: ${fig[$n,$mode,cpu]% }; ready: ${fig[$n,$mode,ready]% })"
    if [ "$mode" = watch ] && [ "$n" -ge 50000 ]; then
      check "CPU to ready, watch on" "$(echo "${fig[$n,$mode,cpu]}" | median)" 5 CPU-s
    else
      printf '    %-26s %8s %-3s\n' "CPU to ready" "$(echo "${fig[$n,$mode,cpu]}" | median)" CPU-s
    fi
    [ "$mode" != watch ] && check "ready (wall)" "$(echo "${fig[$n,$mode,ready]}" | median)" "$rt" s
    [ "$mode" = watch ] && printf '    %-26s %8s %-3s\n' "ready (wall)" "$(echo "${fig[$n,$mode,ready]}" | median)" s
    [ -n "${fig[$n,$mode,settled]:-}" ] && printf '    %-26s %8s %-3s (%s)\n' "CPU until settled" "$(echo "${fig[$n,$mode,settled]}" | median)" CPU-s "${fig[$n,$mode,settled]% }"
    check "peak (VmHWM)" "$(echo "${fig[$n,$mode,hwm]}" | median)" "$mt" MB
  done
}

# diskreads DIR: "reads ms-reading" of the disk that holds DIR, from
# /proc/diskstats (empty when it is not a plain block device).
diskreads() {
  local dev
  dev=$(df --output=source "$1" 2>/dev/null | tail -1); dev=${dev#/dev/}
  awk -v d="$dev" '$3 == d { print $4, $7 }' /proc/diskstats 2>/dev/null
}

echo "load: $(uptime)"
for n in $SIZES; do
  if [ "$n" = 50000 ] && [ -n "${T50K:-}" ]; then tree=$T50K; else
    tree="$work/tree$n"; "$work/gentree" -n "$n" -findings "${FINDINGS:-1}" -out "$tree" >/dev/null; fi
  db="$work/bench$n.db"
  for _ in $(seq 1 "$ROUNDS"); do
    rm -f "$db" "$db-wal" "$db-shm"
    if [ "${COLD:-}" = 1 ]; then
      sync
      if echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; then
        # The floor on the same cold cache: the same folders listed and
        # files read by as many goroutines as serve's scan, nothing else.
        echo "  $n skills, $("$work/coldfloor" "$tree")"
        sync; echo 3 > /proc/sys/vm/drop_caches
      else
        echo "  (cannot drop the page cache: the first start reads a tree already cached)"
      fi
    fi
    run "$n" "$tree" "$db" first
    run "$n" "$tree" "$db" warm
    run "$n" "$tree" "$db" watch
  done
  summary "$n"
done
echo "load: $(uptime)"
if [ "${STRICT:-}" = 1 ] && [ "$missed" = 1 ]; then
  echo "a target was missed"; exit 1
fi
