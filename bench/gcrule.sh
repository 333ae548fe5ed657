#!/usr/bin/env bash
# gcrule.sh: the garbage collector's rule for `loadout serve`, measured. For
# each tree size it starts serve under each candidate rule in turn (rounds
# interleave the rules: A, B, C, A, B, C…) and drives it with
# bench/cmd/loadgen at 64 connections:
#   - GET /v1/agents/bench/skills/NAME        (HTTP cached load)
#   - read_skill_file over MCP streamable HTTP
# then reads the server's resident memory (VmRSS, VmHWM) after the load,
# and counts the collections during the load (GODEBUG=gctrace=1).
#
# Rules:
#   default  serve's own rule (cmd/loadout/memory.go)
#   old      the rule before: a soft limit of twice the live heap at start
#            (at least 80 MiB), given here as GOMEMLIMIT
#   plus128  a soft limit of twice the live heap at start plus 128 MiB
#   3x       a soft limit of three times the live heap at start (at
#            least 80 MiB)
#   4GiB     GOMEMLIMIT=4GiB (the issue's comparison)
#   gogc200  GOGC=200, no limit
#
#   bench/gcrule.sh                     # 100, 10,000 and 50,000 skills, 5 s per figure, 2 rounds
#   SIZES="10000" ROUNDS=3 DUR=10s bench/gcrule.sh
#   T50K=/tmp/t50k bench/gcrule.sh      # reuse a generated 50,000-skill tree
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${DUR:-5s}
CONNS=${CONNS:-64}
SIZES=${SIZES:-"100 10000 50000"}
ROUNDS=${ROUNDS:-2}
RULES=${RULES:-"default old 3x"}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

go build -o "$work/loadout" ./cmd/loadout
go build -o "$work/loadgen" ./bench/cmd/loadgen
go build -o "$work/gentree" ./bench/cmd/gentree

start() { # start TREE DB ENV... ; sets pid, port
  local tree=$1 db=$2; shift 2
  local cfg="$work/cfg.json"
  printf '{"agents":[{"agentId":"bench","skills":[{"root":"%s"}]}],"store":"%s"}\n' "$tree" "$db" > "$cfg"
  port=$((17000 + RANDOM % 2000))
  env "$@" "$work/loadout" serve --config "$cfg" --addr "127.0.0.1:$port" --no-watch >"$work/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 1200); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "serve did not start:"; cat "$work/serve.log"; exit 1
}

echo "load: $(uptime)"
for n in $SIZES; do
  if [ "$n" = 50000 ] && [ -n "${T50K:-}" ]; then tree=$T50K; else
    tree="$work/tree$n"; "$work/gentree" -n "$n" -out "$tree" >/dev/null; fi
  db="$work/bench$n.db"
  name=$(find "$tree" -name SKILL.md | sort | awk 'NR==1' | xargs dirname | xargs basename)
  # The old rule's limit: twice the live heap the default rule logs at start.
  start "$tree" "$db"
  live=$(grep -o 'live_heap_mb=[0-9]*' "$work/serve.log" | head -1 | cut -d= -f2)
  kill -INT "$pid"; wait "$pid" || true
  oldlimit=$(( live * 2 > 80 ? live * 2 : 80 ))MiB
  echo "== $n skills: live heap at start ${live} MB (old rule: GOMEMLIMIT=$oldlimit)"
  for r in $(seq 1 "$ROUNDS"); do
    for rule in $RULES; do
      case $rule in
        default) envs=(X=1) ;;
        old) envs=(GOMEMLIMIT=$oldlimit) ;;
        plus128) envs=(GOMEMLIMIT=$(( live * 2 + 128 ))MiB) ;;
        3x) envs=(GOMEMLIMIT=$(( live * 3 > 80 ? live * 3 : 80 ))MiB) ;;
        4GiB) envs=(GOMEMLIMIT=4GiB) ;;
        gogc200) envs=(GOGC=200) ;;
      esac
      start "$tree" "$db" GODEBUG=gctrace=1 "${envs[@]}"
      gc0=$(grep -c '^gc ' "$work/serve.log" || true)
      h=$("$work/loadgen" -label "http" -url "http://127.0.0.1:$port/v1/agents/bench/skills/$name" -c "$CONNS" -d "$DUR" | grep -o 'rps=[0-9]* p50=[^ ]* p99=[^ ]*')
      m=$("$work/loadgen" -label "mcp" -mcp "http://127.0.0.1:$port/agents/bench/mcp" -tool read_skill_file -args "{\"name\":\"$name\",\"path\":\"references/guide.md\"}" -c "$CONNS" -d "$DUR" | grep -o 'rps=[0-9]* p50=[^ ]* p99=[^ ]*')
      gcs=$(( $(grep -c '^gc ' "$work/serve.log" || true) - gc0 ))
      rss=$(awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$pid/status")
      hwm=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$pid/status")
      kill -INT "$pid"; wait "$pid" || true
      printf '%-6s round %s %-8s HTTP %-40s MCP read %-40s GCs %4s  RSS %4s MB peak %4s MB\n' "$n" "$r" "$rule" "$h" "$m" "$gcs" "$rss" "$hwm"
    done
  done
done
echo "load: $(uptime)"
