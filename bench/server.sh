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
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${DUR:-10s}
CONNS=${CONNS:-64}
SIZES=${SIZES:-"100 10000"}
MODES=${MODES:-"token open"}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

go build -o "$work/loadout" ./cmd/loadout
go build -o "$work/loadgen" ./bench/cmd/loadgen
go build -o "$work/gentree" ./bench/cmd/gentree

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
  for _ in $(seq 1 600); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null
  name=$(find "$tree" -name SKILL.md | sort | awk 'NR==1' | xargs dirname | xargs basename)
  file="references/guide.md"
  echo "== $n skills, $mode (server pid $pid, skill $name)"
  load=$("$work/loadgen" "${tok[@]}" -label "load-http-$n-$mode" -url "http://127.0.0.1:$port/v1/agents/bench/skills/$name" -c "$CONNS" -d "$DUR")
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
echo "summary ($(nproc) cpus, $CONNS connections, $DUR each):"
printf '  %s\n' "${summary[@]}"
