#!/usr/bin/env bash
# server.sh: the serving figures, measured with loadout run as a user runs
# it: `loadout serve` with the live watch on (the default) and an agent
# token, beside the same server with --no-watch and open (no token), and
# beside bench/cmd/bareserve, a bare net/http handler serving the very
# bytes the route returns (the floor, issue 14).
#
# The floor: for each tree size (default 10,000 skills, made by
# `gentree -findings 1`, so every skill has one warning), STARTS times
# (default 3) it starts every server afresh, side by side:
#   token,watch     serve with an agent:bench token, the watch on (default)
#   token,no-watch  the same with --no-watch
#   open,no-watch   no tokens (loopback), --no-watch
#   bare            bare net/http
# and runs ROUNDS (default 2) interleaved rounds of the cached load,
# GET /v1/agents/bench/skills/NAME, with bench/cmd/loadgen at 64
# connections, against each in turn. The rounds start as soon as the
# servers are ready (GET /readyz 200: what first requests would build is
# built) and warmed up (every loaded skill once, then 1 s), so the watch's
# set-up in the background (a paced walk) overlaps them, as it would a
# user's first requests. It prints per round and as medians over every round of every
# start: req/s, p99, and the server's CPU per request (from /proc: less
# sensitive to other load on the machine than req/s), and each server's
# ratio to bare. Targets: req/s >= 0.85x bare's for every variant and
# >= 0.9x for the default (token,watch); p99 <= 2x bare's. With STRICT=1
# the script exits 1 when one is missed.
#
# Loads are spread over every skill of the tree by default (SPREAD=all):
# each loadgen connection walks their URLs round-robin from its own
# offset. SPREAD=1 loads one hot skill (the best case for caches and for
# receipts, whose identical rows a flush merges); SPREAD="all 1" prints
# both. Bare net/http serves each path the same bytes as loadout does for
# it, fetched once from loadout (bareserve -from-list): spread over 10,000
# skills, its bodies are as many and as large as loadout's, so both meet
# the same cache misses. (Before, bare answered every path with the
# first skill's bytes: a floor held in the processor's caches.)
#
# HOG=1 runs one busy loop per core at nice 0 beside the benchmark (started
# by the script, killed on exit): a busy machine, reproducibly.
# HOG="0 1" runs the floor without, then with, the hog.
#
#   FLOOR_ONLY=1 bench/server.sh                  # the floor only
#   FLOOR_ONLY=1 HOG=1 bench/server.sh            # beside a CPU hog
#   FLOOR_ONLY=1 HOG="0 1" SPREAD="all 1" bench/server.sh
#   STARTS=1 ROUNDS=1 FLOOR_DUR=3s FLOOR_ONLY=1 bench/server.sh   # quick
#   VARIANTS="token,watch" bench/server.sh         # only the default
#   LOADOUT=/tmp/old/loadout bench/server.sh      # another build of loadout
#
# Then, unless FLOOR_ONLY, on the default server (token, watch on) of the
# last start: the cached load as fast as it goes and at a fixed 20,000
# req/s (latency from each request's scheduled time, so queueing counts),
# read_skill_file and search_skills over MCP streamable HTTP (search at 64
# connections and at 4), and the server's peak memory (VmHWM).
#   DUR=5s bench/server.sh
# Targets (2 cores): > 20,000 req/s and p99 < 10 ms for the cached load;
# > 3,000 tool calls/s over MCP HTTP; search_skills p99 < 20 ms at 10,000
# skills; server memory < 150 MB at 10,000 skills.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # wait_healthy
DUR=${DUR:-10s}
CONNS=${CONNS:-64}
SIZES=${SIZES:-10000}
VARIANTS=${VARIANTS:-"token,watch token,no-watch open,no-watch"}
STARTS=${STARTS:-3}
ROUNDS=${ROUNDS:-2}
FLOOR_DUR=${FLOOR_DUR:-5s}
FLOOR_ONLY=${FLOOR_ONLY:-}
STRICT=${STRICT:-}
SPREAD=${SPREAD:-all}
HOG=${HOG:-0}
FINDINGS=${FINDINGS:-1}
work=$(mktemp -d)
hogs=()
cleanup() {
  [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null
  kill $(jobs -p) 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap 'cleanup || true' EXIT

# LOADOUT=/path/to/loadout measures that binary (another build, for a
# before/after) instead of this tree's.
if [ -n "${LOADOUT:-}" ]; then cp "$LOADOUT" "$work/loadout"; else go build -o "$work/loadout" ./cmd/loadout; fi
go build -o "$work/loadgen" ./bench/cmd/loadgen
go build -o "$work/gentree" ./bench/cmd/gentree
go build -o "$work/bareserve" ./bench/cmd/bareserve

# cpu_ticks PID: the process's user+system CPU time in clock ticks.
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# ms DURATION: a loadgen duration (1.5ms, 900us, 2s) in milliseconds.
ms() { awk -v d="$1" 'BEGIN { if (d ~ /ms$/) {sub(/ms$/,"",d); print d} else if (d ~ /(us|µs)$/) {sub(/(us|µs)$/,"",d); print d/1000} else if (d ~ /s$/) {sub(/s$/,"",d); print d*1000} else print d }'; }
# hog_on / hog_off: one busy loop per core at nice 0.
hog_on() {
  for _ in $(seq 1 "$(nproc)"); do
    nice -n 0 bash -c 'while :; do :; done' &
    hogs+=($!)
  done
}
hog_off() {
  [ ${#hogs[@]} -gt 0 ] || return 0
  kill "${hogs[@]}" 2>/dev/null || true
  wait "${hogs[@]}" 2>/dev/null || true
  hogs=()
}
# floor_run LABEL PID TOKEN URL|@FILE: one loadgen run (over the URLs of
# FILE, one per line, with @FILE); prints "rps p99ms cpu_us_per_request".
floor_run() {
  local t0 t1 out rps p99 n tgt tk=()
  if [[ $4 == @* ]]; then tgt=(-urls "${4#@}"); else tgt=(-url "$4"); fi
  [ -n "$3" ] && tk=(-token "$3")
  t0=$(cpu_ticks "$2")
  out=$("$work/loadgen" "${tk[@]}" -label "$1" "${tgt[@]}" -c "$CONNS" -d "$FLOOR_DUR")
  t1=$(cpu_ticks "$2")
  echo "$out" >&2
  rps=$(echo "$out" | grep -o 'rps=[0-9]*' | cut -d= -f2)
  n=$(echo "$out" | grep -o 'requests=[0-9]*' | cut -d= -f2)
  p99=$(ms "$(echo "$out" | grep -o 'p99=[^ ]*' | cut -d= -f2)")
  echo "$rps $p99 $(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v n="$n" 'BEGIN {printf "%.1f", (b-a)/hz*1e6/n}')"
}
# start_loadout N VARIANT S: starts serve for a variant ("token,watch"...)
# over tree N with a fresh store; sets pid_V, port_V, tok_V (by the
# variant's index).
declare -A spid sport stok
start_loadout() {
  local n=$1 v=$2 s=$3 key=${2//,/-}
  local cfg="$work/cfg$n-$key-$s.json" db="$work/bench$n-$key-$s.db" args=()
  printf '{"agents":[{"agentId":"bench","skills":[{"root":"%s"}]}],"store":"%s"}\n' "$work/tree$n" "$db" > "$cfg"
  stok[$v]=""
  if [[ $v == token,* ]]; then
    stok[$v]=$("$work/loadout" token create --db "$db" --scope agent:bench --name bench 2>/dev/null)
  fi
  [[ $v == *,no-watch ]] && args=(--no-watch)
  sport[$v]=$((17000 + RANDOM % 2000))
  "$work/loadout" serve --config "$cfg" --addr "127.0.0.1:${sport[$v]}" "${args[@]}" >"$work/serve$n-$key-$s.log" 2>&1 &
  spid[$v]=$!
}
# stop_all stops the servers still running.
stop_all() {
  local v
  for v in "${!spid[@]}"; do
    kill -INT "${spid[$v]}" 2>/dev/null && wait "${spid[$v]}" 2>/dev/null || true
  done
  spid=()
}
missed=0
floors=()
summary=()
for n in $SIZES; do
  tree="$work/tree$n"
  "$work/gentree" -n "$n" -findings "$FINDINGS" -out "$tree" >/dev/null
  find "$tree" -name SKILL.md | sort | sed 's|/SKILL.md$||; s|.*/||' >"$work/names$n"
  total=$(wc -l <"$work/names$n")
  name=$(head -1 "$work/names$n")
  file="references/guide.md"
for hog in $HOG; do
  [ "$hog" = 1 ] && hog_on
for spread in $SPREAD; do
  [ "$spread" = all ] && spread=$total
  [ "$spread" -le "$total" ] || { echo "server.sh: SPREAD=$spread but the tree of $n has only $total skills" >&2; exit 2; }
  for v in $VARIANTS bare; do : >"$work/fl.${v//,/-}"; done
  for s in $(seq 1 "$STARTS"); do
    stop_all
    for v in $VARIANTS; do start_loadout "$n" "$v" "$s"; done
    for v in $VARIANTS; do wait_ready "${sport[$v]}" || { echo "server.sh: $v did not start" >&2; cat "$work/serve$n-${v//,/-}-$s.log" >&2; exit 2; }; done
    first=${VARIANTS%% *}
    # The floor serves the same bodies the loads ask for, each by its
    # path: fetched from the first variant, every skill loaded.
    awk -v n="$spread" 'NR <= n' "$work/names$n" | sed "s|^|http://127.0.0.1:${sport[$first]}/v1/agents/bench/skills/|" >"$work/bare-from"
    bport=$((19100 + RANDOM % 800))
    "$work/bareserve" ${stok[$first]:+-token "${stok[$first]}"} -from-list "$work/bare-from" -addr "127.0.0.1:$bport" >"$work/bare.log" 2>&1 &
    bpid=$!
    for _ in $(seq 1 1200); do
      grep -q '^bareserve: serving' "$work/bare.log" 2>/dev/null && break
      kill -0 "$bpid" 2>/dev/null || { echo "server.sh: bareserve failed:" >&2; cat "$work/bare.log" >&2; exit 2; }
      sleep 0.1
    done
    declare -A target
    for v in $VARIANTS bare; do
      p=${sport[$v]:-}; [ "$v" = bare ] && p=$bport
      awk -v n="$spread" 'NR <= n' "$work/names$n" | sed "s|^|http://127.0.0.1:$p/v1/agents/bench/skills/|" >"$work/urls.${v//,/-}"
      target[$v]="@$work/urls.${v//,/-}"
    done
    echo "== $n skills, start $s of $STARTS, hog $hog: the cached load of $spread skill(s), $ROUNDS rounds of $FLOOR_DUR interleaved over ${VARIANTS// /, } and bare ($(head -c 200 "$work/bare.log" | grep -o '[0-9]* bytes ([0-9]* bodies)') from bare; load average $(cut -d' ' -f1-3 /proc/loadavg))"
    # Warm up each: about one load of every skill loaded (a first load
    # does work a cached one does not: its digest), then 1 s more
    # (connections, the receipts table).
    for v in $VARIANTS; do
      "$work/loadgen" ${stok[$v]:+-token "${stok[$v]}"} -urls "${target[$v]#@}" -c "$CONNS" -n "$spread" -d 60s >/dev/null
      "$work/loadgen" ${stok[$v]:+-token "${stok[$v]}"} -urls "${target[$v]#@}" -c "$CONNS" -d 1s >/dev/null
    done
    "$work/loadgen" -urls "${target[bare]#@}" -c "$CONNS" -d 1s >/dev/null
    for round in $(seq 1 "$ROUNDS"); do
      for v in $VARIANTS; do
        floor_run "floor-$n-${v}-s$s-r$round" "${spid[$v]}" "${stok[$v]}" "${target[$v]}" >>"$work/fl.${v//,/-}"
      done
      floor_run "floor-$n-bare-s$s-r$round" "$bpid" "" "${target[bare]}" >>"$work/fl.bare"
    done
    for v in $VARIANTS; do
      if [[ $v == *,watch ]]; then
        # When the watch's set-up ended, against the rounds.
        grep -o 'msg="memory: start-up settled"' "$work/serve$n-${v//,/-}-$s.log" >/dev/null && echo "   ($v: the watch's set-up had ended by the last round)" || echo "   ($v: the watch's set-up was still running at the last round)"
      fi
    done
    kill "$bpid"; wait "$bpid" 2>/dev/null || true
    [ -n "$FLOOR_ONLY" ] && stop_all
  done
  br=$(awk '{print $1}' "$work/fl.bare" | median); bp=$(awk '{print $2}' "$work/fl.bare" | median); bc=$(awk '{print $3}' "$work/fl.bare" | median)
  runs=$(wc -l <"$work/fl.bare")
  head="$n skills, $spread loaded, hog $hog, median of $runs rounds ($STARTS starts x $ROUNDS) of $FLOOR_DUR, load average $(cut -d' ' -f1-3 /proc/loadavg):"
  floors+=("$head")
  floors+=("$(printf '  %-15s %6s req/s p99 %7.2fms %6.1fus CPU/req' bare "$br" "$bp" "$bc")")
  for v in $VARIANTS; do
    f="$work/fl.${v//,/-}"
    lr=$(awk '{print $1}' "$f" | median); lp=$(awk '{print $2}' "$f" | median); lc=$(awk '{print $3}' "$f" | median)
    rr=$(awk -v a="$lr" -v b="$br" 'BEGIN {printf "%.2f", a/b}')
    pr=$(awk -v a="$lp" -v b="$bp" 'BEGIN {printf "%.2f", a/b}')
    cr=$(awk -v a="$lc" -v b="$bc" 'BEGIN {printf "%.2f", a/b}')
    want=0.85; [ "$v" = token,watch ] && want=0.9
    verdict=ok
    awk -v r="$rr" -v w="$want" 'BEGIN {exit !(r >= w)}' || { verdict=MISSED; missed=1; }
    awk -v r="$pr" 'BEGIN {exit !(r <= 2.0)}' || { verdict=MISSED; missed=1; }
    floors+=("$(printf '  %-15s %6s req/s p99 %7.2fms %6.1fus CPU/req | req/s %sx bare (target >= %s) p99 %sx (target <= 2) CPU/req %sx  %s' \
      "$v" "$lr" "$lp" "$lc" "$rr" "$want" "$pr" "$cr" "$verdict")")
  done
  printf '%s\n' "${floors[@]: -$(( ${#floors[@]} > 0 ? 2 + $(wc -w <<<"$VARIANTS") : 0 ))}"
done
  hog_off
done
  [ -n "$FLOOR_ONLY" ] && continue
  # The other figures, on the default server of the last start.
  v=${VARIANTS%% *}
  pid=${spid[$v]}; port=${sport[$v]}
  tok=(); [ -n "${stok[$v]}" ] && tok=(-token "${stok[$v]}")
  url="http://127.0.0.1:$port/v1/agents/bench/skills/$name"
  echo "== $n skills, $v (server pid $pid, skill $name)"
  load=$("$work/loadgen" "${tok[@]}" -label "load-http-$n-$v" -url "$url" -c "$CONNS" -d "$DUR")
  echo "$load"
  # The same at a fixed 20,000 req/s: the latency the target is about,
  # without the queueing that saturation adds.
  load20=$("$work/loadgen" "${tok[@]}" -label "load-http-20k-$n-$v" -rate 20000 -url "$url" -c "$CONNS" -d "$DUR")
  echo "$load20"
  read=$("$work/loadgen" "${tok[@]}" -label "read-mcp-$n-$v" -mcp "http://127.0.0.1:$port/agents/bench/mcp" -tool read_skill_file -args "{\"name\":\"$name\",\"path\":\"$file\"}" -c "$CONNS" -d "$DUR")
  echo "$read"
  search=$("$work/loadgen" "${tok[@]}" -label "search-mcp-$n-$v" -mcp "http://127.0.0.1:$port/agents/bench/mcp" -tool search_skills -args '{"query":"release notes for the api","limit":10}' -c "$CONNS" -d "$DUR")
  echo "$search"
  search4=$("$work/loadgen" "${tok[@]}" -label "search-mcp-c4-$n-$v" -mcp "http://127.0.0.1:$port/agents/bench/mcp" -tool search_skills -args '{"query":"release notes for the api","limit":10}' -c 4 -d "$DUR")
  echo "$search4"
  hwm=$(awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$pid/status")
  rss=$(awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$pid/status")
  echo "server memory: peak ${hwm} MB, now ${rss} MB"
  stop_all
  summary+=("$n skills, $v: $(echo "$load" | grep -o 'rps=[0-9]* p50=[^ ]* p99=[^ ]*') (HTTP load, saturated) | $(echo "$load20" | grep -o 'rps=[0-9]* p50=[^ ]* p99=[^ ]*') (HTTP load at 20k/s) | $(echo "$read" | grep -o 'rps=[0-9]* p50=[^ ]* p99=[^ ]*') (MCP read_skill_file) | $(echo "$search" | grep -o 'rps=[0-9]* p50=[^ ]* p99=[^ ]*') (MCP search_skills, $CONNS conns) | $(echo "$search4" | grep -o 'rps=[0-9]* p50=[^ ]* p99=[^ ]*') (MCP search_skills, 4 conns) | peak RSS ${hwm} MB, after ${rss} MB")
done
echo
echo "floor: the cached load against bare net/http ($(nproc) cpus, $CONNS connections):"
printf '%s\n' "${floors[@]}"
if [ ${#summary[@]} -gt 0 ]; then
  echo "summary ($(nproc) cpus, $CONNS connections, $DUR each):"
  printf '  %s\n' "${summary[@]}"
fi
if [ -n "$STRICT" ] && [ "$missed" = 1 ]; then
  echo "server.sh: a floor target was missed (STRICT=1)" >&2
  exit 1
fi
