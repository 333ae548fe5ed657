#!/usr/bin/env bash
# server.sh: the serving figures. For each tree size (100 and 10,000 skills)
# it starts `loadout serve` on loopback over a generated tree, then drives it
# with bench/cmd/loadgen at 64 connections:
#   - GET /v1/agents/bench/skills/NAME        (a cached load over HTTP), as
#     fast as it goes and at a fixed 20,000 req/s (latency from each
#     request's scheduled time, so queueing counts)
#   - read_skill_file over MCP streamable HTTP
#   - search_skills over MCP streamable HTTP (at 64 connections, and at 4
#     for latency without queueing)
# and reads the server's peak memory (VmHWM) from /proc.
#
#   bench/server.sh                 # 10 s per figure
#   DUR=5s CONNS=64 bench/server.sh
#   SIZES="100" bench/server.sh
#   MODES="token" bench/server.sh  # only with an agent token (production)
#
# Each size runs in two modes: "token" (an agent:bench bearer token on
# every request, as production runs) and "open" (loopback, no tokens).
#
# Targets (2 cores): > 20,000 req/s and p99 < 10 ms for the cached load;
# > 3,000 tool calls/s over MCP HTTP; search_skills p99 < 20 ms at 10,000
# skills; server memory < 150 MB at 10,000 skills.
#
# The floor (issue 14): before those figures, each size and mode runs the
# cached load against bench/cmd/bareserve, a bare net/http handler serving
# the very bytes the route returned (fetched once from the server), ROUNDS
# times interleaved (loadout, bare, loadout, bare, ...) with the same load
# generator, and prints per round and as medians: req/s, p99, and the
# server's CPU per request (from /proc, so less sensitive to other load on
# the machine than req/s). Targets: loadout's req/s >= 0.85x bare's and its
# p99 <= 2x bare's. With STRICT=1 the script exits 1 when one is missed.
#
#   ROUNDS=3 FLOOR_DUR=5s bench/server.sh
#   FLOOR_ONLY=1 SIZES=10000 bench/server.sh   # only the floor comparison
#
# SPREAD=N spreads the floor's cached loads over N different skills (the
# first N of the tree by path; N at most the tree's size): each loadgen
# connection walks their URLs round-robin from its own offset (loadgen
# -urls). The default, 1, loads one skill: the best case for receipts,
# whose identical rows a flush merges. Bare net/http answers every path
# with the first skill's bytes.
#   FLOOR_ONLY=1 SIZES=10000 SPREAD=10000 bench/server.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # wait_healthy
DUR=${DUR:-10s}
CONNS=${CONNS:-64}
SIZES=${SIZES:-"100 10000"}
MODES=${MODES:-"token open"}
ROUNDS=${ROUNDS:-3}
FLOOR_DUR=${FLOOR_DUR:-5s}
FLOOR_ONLY=${FLOOR_ONLY:-}
STRICT=${STRICT:-}
SPREAD=${SPREAD:-1}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

go build -o "$work/loadout" ./cmd/loadout
go build -o "$work/loadgen" ./bench/cmd/loadgen
go build -o "$work/gentree" ./bench/cmd/gentree
go build -o "$work/bareserve" ./bench/cmd/bareserve

# cpu_ticks PID: the process's user+system CPU time in clock ticks.
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# ms DURATION: a loadgen duration (1.5ms, 900us, 2s) in milliseconds.
ms() { awk -v d="$1" 'BEGIN { if (d ~ /ms$/) {sub(/ms$/,"",d); print d} else if (d ~ /(us|µs)$/) {sub(/(us|µs)$/,"",d); print d/1000} else if (d ~ /s$/) {sub(/s$/,"",d); print d*1000} else print d }'; }
# floor_run LABEL PID URL|@FILE: one loadgen run (over the URLs of FILE,
# one per line, with @FILE); prints "rps p99ms cpu_us_per_request".
floor_run() {
  local t0 t1 out rps p99 n tgt
  if [[ $3 == @* ]]; then tgt=(-urls "${3#@}"); else tgt=(-url "$3"); fi
  t0=$(cpu_ticks "$2")
  out=$("$work/loadgen" "${tok[@]}" -label "$1" "${tgt[@]}" -c "$CONNS" -d "$FLOOR_DUR")
  t1=$(cpu_ticks "$2")
  echo "$out" >&2
  rps=$(echo "$out" | grep -o 'rps=[0-9]*' | cut -d= -f2)
  n=$(echo "$out" | grep -o 'requests=[0-9]*' | cut -d= -f2)
  p99=$(ms "$(echo "$out" | grep -o 'p99=[^ ]*' | cut -d= -f2)")
  echo "$rps $p99 $(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v n="$n" 'BEGIN {printf "%.1f", (b-a)/hz*1e6/n}')"
}
missed=0
floors=()
summary=()
for n in $SIZES; do
  tree="$work/tree$n"
  "$work/gentree" -n "$n" -out "$tree" >/dev/null
for mode in $MODES; do
  cfg="$work/cfg$n-$mode.json"
  db="$work/bench$n-$mode.db"
  printf '{"agents":[{"agentId":"bench","skills":[{"root":"%s"}]}],"store":"%s"}\n' "$tree" "$db" > "$cfg"
  tok=()
  if [ "$mode" = token ]; then
    tok=(-token "$("$work/loadout" token create --db "$db" --scope agent:bench --name bench 2>/dev/null)")
  fi
  port=$((17000 + RANDOM % 2000))
  "$work/loadout" serve --config "$cfg" --addr "127.0.0.1:$port" --no-watch >"$work/serve$n-$mode.log" 2>&1 &
  pid=$!
  wait_healthy "$port" || true
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null
  name=$(find "$tree" -name SKILL.md | sort | awk 'NR==1' | xargs dirname | xargs basename)
  file="references/guide.md"
  echo "== $n skills, $mode (server pid $pid, skill $name)"
  url="http://127.0.0.1:$port/v1/agents/bench/skills/$name"
  bport=$((19100 + RANDOM % 800))
  "$work/bareserve" "${tok[@]}" -from "$url" -addr "127.0.0.1:$bport" >"$work/bare$n-$mode.log" 2>&1 &
  bpid=$!
  for _ in $(seq 1 100); do
    curl -fsS -o /dev/null "http://127.0.0.1:$bport/" 2>/dev/null && break
    sleep 0.1
  done
  ftarget=$url
  btarget="http://127.0.0.1:$bport/v1/agents/bench/skills/$name"
  if [ "$SPREAD" -gt 1 ]; then
    # awk, not head: head's early exit fails the pipe under pipefail.
    find "$tree" -name SKILL.md | sort | awk -v n="$SPREAD" 'NR <= n' | sed 's|/SKILL.md$||; s|.*/||' >"$work/spread.names"
    got=$(wc -l <"$work/spread.names")
    [ "$got" -eq "$SPREAD" ] || { echo "server.sh: SPREAD=$SPREAD but the tree of $n has only $got skills" >&2; exit 2; }
    sed "s|^|http://127.0.0.1:$port/v1/agents/bench/skills/|" "$work/spread.names" >"$work/spread.loadout"
    sed "s|^|http://127.0.0.1:$bport/v1/agents/bench/skills/|" "$work/spread.names" >"$work/spread.bare"
    ftarget="@$work/spread.loadout"
    btarget="@$work/spread.bare"
  fi
  echo "-- floor: the cached load of $SPREAD skill(s) against bare net/http serving the same $(head -c 200 "$work/bare$n-$mode.log" | grep -o '[0-9]* bytes'), $ROUNDS rounds of $FLOOR_DUR interleaved (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
  : >"$work/fl.loadout"; : >"$work/fl.bare"
  # Warm up both (caches, connections, the receipts table).
  if [ "$SPREAD" -gt 1 ]; then
    "$work/loadgen" "${tok[@]}" -urls "$work/spread.loadout" -c "$CONNS" -d 1s >/dev/null
  else
    "$work/loadgen" "${tok[@]}" -url "$url" -c "$CONNS" -d 1s >/dev/null
  fi
  "$work/loadgen" -url "http://127.0.0.1:$bport/" -c "$CONNS" -d 1s >/dev/null
  for round in $(seq 1 "$ROUNDS"); do
    floor_run "floor-loadout-$n-$mode" "$pid" "$ftarget" >>"$work/fl.loadout"
    floor_run "floor-bare-$n-$mode" "$bpid" "$btarget" >>"$work/fl.bare"
  done
  kill "$bpid"; wait "$bpid" 2>/dev/null || true
  lr=$(awk '{print $1}' "$work/fl.loadout" | median); br=$(awk '{print $1}' "$work/fl.bare" | median)
  lp=$(awk '{print $2}' "$work/fl.loadout" | median); bp=$(awk '{print $2}' "$work/fl.bare" | median)
  lc=$(awk '{print $3}' "$work/fl.loadout" | median); bc=$(awk '{print $3}' "$work/fl.bare" | median)
  rr=$(awk -v a="$lr" -v b="$br" 'BEGIN {printf "%.2f", a/b}')
  pr=$(awk -v a="$lp" -v b="$bp" 'BEGIN {printf "%.2f", a/b}')
  cr=$(awk -v a="$lc" -v b="$bc" 'BEGIN {printf "%.2f", a/b}')
  verdict=ok
  awk -v r="$rr" 'BEGIN {exit !(r >= 0.85)}' || { verdict=MISSED; missed=1; }
  awk -v r="$pr" 'BEGIN {exit !(r <= 2.0)}' || { verdict=MISSED; missed=1; }
  line=$(printf '%6s skills (%s loaded) %-5s loadout %6s req/s p99 %6.2fms %5.1fus CPU/req | bare %6s req/s p99 %6.2fms %5.1fus CPU/req | req/s %sx (target >= 0.85) p99 %sx (target <= 2) CPU/req %sx  %s' \
    "$n" "$SPREAD" "$mode" "$lr" "$lp" "$lc" "$br" "$bp" "$bc" "$rr" "$pr" "$cr" "$verdict")
  echo "$line"
  floors+=("$line")
  if [ -n "$FLOOR_ONLY" ]; then
    kill -INT "$pid"; wait "$pid" || true
    continue
  fi
  load=$("$work/loadgen" "${tok[@]}" -label "load-http-$n-$mode" -url "$url" -c "$CONNS" -d "$DUR")
  echo "$load"
  # The same at a fixed 20,000 req/s: the latency the target is about,
  # without the queueing that saturation adds.
  load20=$("$work/loadgen" "${tok[@]}" -label "load-http-20k-$n-$mode" -rate 20000 -url "http://127.0.0.1:$port/v1/agents/bench/skills/$name" -c "$CONNS" -d "$DUR")
  echo "$load20"
  read=$("$work/loadgen" "${tok[@]}" -label "read-mcp-$n-$mode" -mcp "http://127.0.0.1:$port/agents/bench/mcp" -tool read_skill_file -args "{\"name\":\"$name\",\"path\":\"$file\"}" -c "$CONNS" -d "$DUR")
  echo "$read"
  search=$("$work/loadgen" "${tok[@]}" -label "search-mcp-$n-$mode" -mcp "http://127.0.0.1:$port/agents/bench/mcp" -tool search_skills -args '{"query":"release notes for the api","limit":10}' -c "$CONNS" -d "$DUR")
  echo "$search"
  search4=$("$work/loadgen" "${tok[@]}" -label "search-mcp-c4-$n-$mode" -mcp "http://127.0.0.1:$port/agents/bench/mcp" -tool search_skills -args '{"query":"release notes for the api","limit":10}' -c 4 -d "$DUR")
  echo "$search4"
  hwm=$(awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$pid/status")
  rss=$(awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$pid/status")
  echo "server memory: peak ${hwm} MB, now ${rss} MB"
  kill -INT "$pid"; wait "$pid" || true
  summary+=("$n skills, $mode: $(echo "$load" | grep -o 'rps=[0-9]* p50=[^ ]* p99=[^ ]*') (HTTP load, saturated) | $(echo "$load20" | grep -o 'rps=[0-9]* p50=[^ ]* p99=[^ ]*') (HTTP load at 20k/s) | $(echo "$read" | grep -o 'rps=[0-9]* p50=[^ ]* p99=[^ ]*') (MCP read_skill_file) | $(echo "$search" | grep -o 'rps=[0-9]* p50=[^ ]* p99=[^ ]*') (MCP search_skills, $CONNS conns) | $(echo "$search4" | grep -o 'rps=[0-9]* p50=[^ ]* p99=[^ ]*') (MCP search_skills, 4 conns) | peak RSS ${hwm} MB, after ${rss} MB")
done
done
echo
echo "floor: the cached load against bare net/http, median of $ROUNDS interleaved rounds of $FLOOR_DUR ($(nproc) cpus, $CONNS connections, load average $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '  %s\n' "${floors[@]}"
if [ ${#summary[@]} -gt 0 ]; then
  echo "summary ($(nproc) cpus, $CONNS connections, $DUR each):"
  printf '  %s\n' "${summary[@]}"
fi
if [ -n "$STRICT" ] && [ "$missed" = 1 ]; then
  echo "server.sh: a floor target was missed (STRICT=1)" >&2
  exit 1
fi
