#!/usr/bin/env bash
# first.sh: nothing costly on a first request. It
# starts the real `loadout serve` (the defaults: the live watch on) over N
# generated skills with findings (gentree -findings 1, every skill one
# warning) and a SQLite store, waits until it is ready (GET /readyz
# answers 200: the server listens at once, /healthz answers, and it builds
# what first requests would build before it says ready), then sends one route's request ten times in a row and prints the first
# and the tenth request's latency. Each route gets its own fresh server,
# so its first request is the first the server sees after ready (what a
# user or an installer hitting a just-started server meets), and each is
# measured over STARTS starts: the medians are printed with first/tenth.
#
# The routes: search (GET /v1/agents/bench/search with a common query,
# and MCP search_skills over streamable HTTP, after the session's
# initialize), the agent's install index (the well-known index.json, with
# Accept-Encoding: gzip as installers send it), the diagnostics (GET
# /v1/diagnostics and the UI's /ui/diagnostics page) and the skill list
# (GET /v1/skills).
#
# Target: the first within 2x of the tenth (first/tenth <= 2). The server
# runs in the open loopback mode (no tokens): what a first request builds
# does not depend on the token, and the UI needs no sign-in then. With
# STRICT=1 the script exits 1 when a route misses.
#
#   bench/first.sh
#   N=2000 STARTS=1 ROUTES="search wellknown" bench/first.sh
#   BIN=/tmp/old/loadout bench/first.sh      # another build (a before)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # bench_work, wait_healthy, load_note
N=${N:-10000}
FINDINGS=${FINDINGS:-1}
STARTS=${STARTS:-3}
STRICT=${STRICT:-}
all_routes=(search mcp-search wellknown diagnostics ui-diagnostics listSkills)
ROUTES=${ROUTES:-"${all_routes[*]}"}
read -r -a routes <<<"$ROUTES"
bench_work first
pid=

# BIN: another loadout binary to measure (an older build, for a before
# and after); by default this tree's.
if [ -n "${BIN:-}" ]; then cp "$BIN" "$work/loadout"; else go build -o "$work/loadout" ./cmd/loadout; fi
go build -o "$work/gentree" ./bench/cmd/gentree
tree="$work/tree"
"$work/gentree" -n "$N" -findings "$FINDINGS" -out "$tree" >/dev/null
db="$work/bench.db"
cfg="$work/cfg.json"
printf '{"agents":[{"agentId":"bench","skills":[{"root":"%s"},{"store":true}]}],"store":"%s"}\n' "$tree" "$db" >"$cfg"
query="release notes for the api"
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# get URL [curl args]: one request; prints its latency in ms, fails on an
# HTTP error.
get() {
  local u=$1
  shift
  curl -fsS -o /dev/null -w '%{time_total}\n' "$@" "$u" | awk '{printf "%.2f\n", $1 * 1000}'
}

# mcp_init BASE: an MCP session on the agent's endpoint (initialize and
# initialized, not timed); prints the session id.
mcp_init() {
  local sid
  sid=$(curl -fsS -D - -o /dev/null -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    --data '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"first.sh","version":"1"}}}' \
    "$1/agents/bench/mcp" | awk -F': ' 'tolower($1) == "mcp-session-id" {gsub(/\r/, "", $2); print $2}')
  curl -fsS -o /dev/null -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $sid" \
    -H 'MCP-Protocol-Version: 2025-06-18' --data '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$1/agents/bench/mcp"
  echo "$sid"
}

# request ROUTE BASE [SID]: one request of the route; prints its latency.
request() {
  case $1 in
    search) get "$2/v1/agents/bench/search?q=${query// /+}" ;;
    mcp-search)
      get "$2/agents/bench/mcp" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
        -H "Mcp-Session-Id: $3" -H 'MCP-Protocol-Version: 2025-06-18' \
        --data "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"search_skills\",\"arguments\":{\"query\":\"$query\"}}}" ;;
    wellknown) get "$2/agents/bench/.well-known/agent-skills/index.json" -H 'Accept-Encoding: gzip' ;;
    diagnostics) get "$2/v1/diagnostics" ;;
    ui-diagnostics) get "$2/ui/diagnostics" ;;
    listSkills) get "$2/v1/skills" ;;
    *) echo "first.sh: unknown route $1 (known: ${all_routes[*]})" >&2; return 2 ;;
  esac
}

load_note start
echo "== $N skills (findings $FINDINGS) and a store, the watch on, $STARTS starts per route, a fresh server for each (load average $(cut -d' ' -f1-3 /proc/loadavg))"
declare -A first=() tenth=() ready=()
for s in $(seq 1 "$STARTS"); do
  for r in "${routes[@]}"; do
    port=$((21000 + RANDOM % 2000))
    t0=$(date +%s%N)
    "$work/loadout" serve --config "$cfg" --addr "127.0.0.1:$port" >"$work/serve-$r-$s.log" 2>&1 &
    pid=$!
    wait_healthy "$port" || { echo "first.sh: the server did not start" >&2; cat "$work/serve-$r-$s.log" >&2; exit 1; }
    tl=$(date +%s%N)
    # Ready: GET /readyz is 200 once what first requests would build is
    # built (503 before); a build without /readyz (404) is ready when it
    # listens.
    wait_ready "$port" || { echo "first.sh: the server was not ready within 300 s" >&2; exit 1; }
    t1=$(date +%s%N)
    cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14+$15)/hz}' "/proc/$pid/stat")
    base="http://127.0.0.1:$port"
    sid=
    [ "$r" = mcp-search ] && sid=$(mcp_init "$base")
    lat=()
    for i in $(seq 1 10); do
      lat+=("$(request "$r" "$base" "$sid")")
    done
    echo "start $s $r: listening in $(( (tl - t0) / 1000000 )) ms, ready in $(( (t1 - t0) / 1000000 )) ms ($cpu CPU-s); latencies (ms): ${lat[*]}"
    first[$r]+="${lat[0]} "
    tenth[$r]+="${lat[9]} "
    ready[$r]+="$(( (t1 - t0) / 1000000 )) "
    kill -INT "$pid"
    wait "$pid" || true
    pid=
  done
done
missed=0
echo
echo "summary ($(nproc) cpus, $N skills with findings, median of $STARTS starts, load average $(cut -d' ' -f1-3 /proc/loadavg)):"
for r in "${routes[@]}"; do
  f=$(tr ' ' '\n' <<<"${first[$r]}" | grep . | median)
  t=$(tr ' ' '\n' <<<"${tenth[$r]}" | grep . | median)
  rd=$(tr ' ' '\n' <<<"${ready[$r]}" | grep . | median)
  ratio=$(awk -v f="$f" -v t="$t" 'BEGIN {printf "%.2f", (t > 0 ? f / t : 0)}')
  verdict=ok
  if ! awk -v x="$ratio" 'BEGIN {exit !(x <= 2)}'; then verdict=MISSED; missed=1; fi
  printf '  %-15s first %9.2f ms  tenth %8.2f ms  first/tenth %6sx (target <= 2)  ready in %s ms  %s\n' "$r" "$f" "$t" "$ratio" "$rd" "$verdict"
done
load_note end
if [ -n "$STRICT" ] && [ "$missed" = 1 ]; then
  echo "first.sh: a route's first request missed its target (STRICT=1)" >&2
  exit 1
fi
