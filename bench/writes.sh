#!/usr/bin/env bash
# writes.sh: what a write costs end to end, as a user runs the server. It
# starts the real `loadout serve` (the defaults: the watch on, tokens
# required) over a store of N generated skills (imported with `loadout
# import`, every one with a finding: gentree -findings 1) and four agents,
# each with its MCP endpoint live besides the global /mcp:
#   all    every stored skill
#   am, nz the skills whose names start with a-m, n-z
#   small  20 skills, the written one among them (so its listing, the MCP
#          instructions, shows the written skill's description)
# Then bench/cmd/writeload makes WRITES sequential file PUTs to one stored
# skill (PUT /v1/skills/NAME/files/PATH, admin token, If-Match) in each
# of these cases, in this order, every start:
#   ref  sessions  a supporting file (references/guide.md) changes
#   body sessions  SKILL.md's body changes, its name and description not
#   desc sessions  SKILL.md's description changes
#   ref  none      as above with no MCP session open
#   desc none
# With "sessions", SESSIONS sessions are open on each of the five MCP
# endpoints, with their standalone streams (they get every list_changed
# notification). After each case a new session on /agents/small/mcp must
# get the description the last write left in its instructions (writeload
# -check), or the script stops.
#
# It prints, for each case, p50 and p99 latency of a PUT (as the client
# sees it) and the server's CPU per write (from /proc/PID/stat, up to
# 300 ms after the last write, so work left to the background counts),
# each the median over STARTS starts of the server, and the load average.
#
#   bench/writes.sh                     # N=10000 WRITES=200 STARTS=3
#   N=2000 WRITES=50 STARTS=1 bench/writes.sh
#   ENGINES=postgres bench/writes.sh    # with LOADOUT_TEST_POSTGRES set
#   NO_WATCH=1 bench/writes.sh          # serve --no-watch
#   CACHE=DIR bench/writes.sh           # keep the generated skills and the
#                                       # imported SQLite store in DIR, and
#                                       # reuse them on the next run
#   PROFILE=DIR PROFILE_SECS=5 WRITES=1000 bench/writes.sh
#                                       # a CPU profile of each case's first
#                                       # PROFILE_SECS s (serve's LOADOUT_PPROF)
#                                       # in DIR/ENGINE-CASE-START.pprof
#
# Target: p50 under 8 ms at 10,000 stored skills with the MCP
# endpoints live. STRICT=1 exits 1 when a case's p50 misses it.
# On PostgreSQL the store is imported once per run and the writes of
# every start add versions to the same skill; on SQLite each start gets a
# fresh copy of the imported database.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # wait_healthy, load_note
N=${N:-10000}
WRITES=${WRITES:-200}
WARM=${WARM:-20}
STARTS=${STARTS:-3}
SESSIONS=${SESSIONS:-1}
STRICT=${STRICT:-}
NO_WATCH=${NO_WATCH:-}
PROFILE=${PROFILE:-}
CACHE=${CACHE:-}
PROFILE_SECS=${PROFILE_SECS:-5}
CASES=${CASES:-"ref:sessions body:sessions desc:sessions ref:none desc:none"}
ENGINES=${ENGINES:-sqlite}
work=$(mktemp -d)
schemas=()
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  for s in "${schemas[@]}"; do psql -q "$LOADOUT_TEST_POSTGRES" -c "DROP SCHEMA $s CASCADE" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/loadout" ./cmd/loadout
go build -o "$work/gentree" ./bench/cmd/gentree
go build -o "$work/writeload" ./bench/cmd/writeload

stored="$work/stored"
if [ -n "$CACHE" ]; then
  mkdir -p "$CACHE"
  stored="$CACHE/stored-$N"
fi
[ -f "$stored/.done" ] || { rm -rf "$stored"; "$work/gentree" -n "$N" -findings 1 -out "$stored" >/dev/null; touch "$stored/.done"; }
find "$stored" -name SKILL.md -printf '%h\n' | awk -F/ '{print $NF}' | sort >"$work/names"
name=$(awk 'NR == 1' "$work/names")
small=$(awk 'NR <= 20 {printf "%s\"%s\"", (NR > 1 ? "," : ""), $1}' "$work/names")

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
flags=()
[ -n "$NO_WATCH" ] && flags+=(--no-watch)
summary=()
missed=0
for engine in $ENGINES; do
  case $engine in
    sqlite)
      db="$work/base.db"
      ;;
    postgres)
      [ -n "${LOADOUT_TEST_POSTGRES:-}" ] || { echo "writes.sh: postgres needs LOADOUT_TEST_POSTGRES" >&2; exit 2; }
      schema="loadout_writes_$$"
      psql -q "$LOADOUT_TEST_POSTGRES" -c "CREATE SCHEMA $schema" >/dev/null
      schemas+=("$schema")
      sep='?'; case $LOADOUT_TEST_POSTGRES in *\?*) sep='&' ;; esac
      db="${LOADOUT_TEST_POSTGRES}${sep}search_path=$schema" ;;
    *) echo "writes.sh: unknown engine $engine (sqlite or postgres)" >&2; exit 2 ;;
  esac
  t0=$(date +%s)
  if [ "$engine" = sqlite ] && [ -n "$CACHE" ] && [ -f "$CACHE/base-$N.db" ]; then
    cp "$CACHE/base-$N.db" "$db"
  else
    "$work/loadout" import --db "$db" --partial "$stored" >/dev/null
    if [ "$engine" = sqlite ] && [ -n "$CACHE" ]; then
      sqlite3 "$db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null 2>&1 || true
      cp "$db" "$CACHE/base-$N.db.tmp" && mv "$CACHE/base-$N.db.tmp" "$CACHE/base-$N.db"
    fi
  fi
  tok=$("$work/loadout" token create --db "$db" --scope admin --name bench 2>/dev/null)
  echo "== $engine: $N stored skills imported in $(( $(date +%s) - t0 )) s; writing $name"
  for start in $(seq 1 "$STARTS"); do
    rdb=$db
    if [ "$engine" = sqlite ]; then
      rm -f "$work"/run.db*
      for f in "$work"/base.db*; do cp "$f" "$work/run.db${f#"$work"/base.db}"; done
      rdb="$work/run.db"
    fi
    cfg="$work/cfg.json"
    printf '{"agents":[{"agentId":"all","skills":[{"store":true}]},{"agentId":"am","skills":[{"store":true,"available":["[a-m]*"]}]},{"agentId":"nz","skills":[{"store":true,"available":["[n-z]*"]}]},{"agentId":"small","budget":100000,"skills":[{"store":true,"available":[%s]}]}],"store":"%s"}\n' "$small" "$rdb" >"$cfg"
    port=$((17000 + RANDOM % 2000))
    pport=$((port + 2000))
    [ -n "$PROFILE" ] && { mkdir -p "$PROFILE"; export LOADOUT_PPROF="127.0.0.1:$pport"; }
    "$work/loadout" serve --config "$cfg" --addr "127.0.0.1:$port" "${flags[@]}" >"$work/serve.log" 2>&1 &
    pid=$!
    wait_ready "$port" || { echo "writes.sh: the server was not ready" >&2; cat "$work/serve.log" >&2; exit 1; }
    base="http://127.0.0.1:$port"
    eps="$base/mcp,$base/agents/all/mcp,$base/agents/am/mcp,$base/agents/nz/mcp,$base/agents/small/mcp"
    sleep 2 # let start-up's background work (the watch's set-up, search indexes) settle
    echo "start $start (server pid $pid, load average $(cut -d' ' -f1-3 /proc/loadavg))"
    for c in $CASES; do
      mode=${c%%:*} sess=${c#*:}
      m=()
      [ "$sess" = sessions ] && m=(-mcp "$eps" -sessions "$SESSIONS")
      ppid=
      if [ -n "$PROFILE" ]; then
        curl -fsS -o "$PROFILE/$engine-${c/:/-}-$start.pprof" "http://127.0.0.1:$pport/debug/pprof/profile?seconds=$PROFILE_SECS" &
        ppid=$!
      fi
      out=$("$work/writeload" -url "$base" -token "$tok" -skill "$name" -pid "$pid" -mode "$mode" \
        -n "$WRITES" -warm "$WARM" -check "$base/agents/small/mcp" "${m[@]}") ||
        { echo "writes.sh: $engine $c failed" >&2; tail -20 "$work/serve.log" >&2; exit 1; }
      [ -n "$ppid" ] && wait "$ppid"
      echo "  $c: $out"
      read -r _ _ _ p50 p99 _ cpu notes <<<"$out"
      echo "$p50" >>"$work/$engine-$c.p50"
      echo "$p99" >>"$work/$engine-$c.p99"
      echo "$cpu" >>"$work/$engine-$c.cpu"
      echo "$notes" >>"$work/$engine-$c.notes"
    done
    kill -INT "$pid"; wait "$pid" || true
  done
  for c in $CASES; do
    p50=$(median <"$work/$engine-$c.p50")
    verdict=ok
    if ! awk -v x="$p50" 'BEGIN {exit !(x < 8)}'; then verdict=MISSED; missed=1; fi
    summary+=("$(printf '%-9s %-14s p50 %6.2f ms  p99 %6.2f ms  server CPU %6.2f ms/write  notifications %5s  (target p50 < 8 ms) %s' \
      "$engine" "$c" "$p50" "$(median <"$work/$engine-$c.p99")" "$(median <"$work/$engine-$c.cpu")" "$(median <"$work/$engine-$c.notes")" "$verdict")")
  done
done
echo
echo "summary ($(nproc) cpus, $N stored skills, 4 agents + global MCP, $WRITES writes per case, median of $STARTS starts, watch ${NO_WATCH:+off}${NO_WATCH:-on}, load average $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '  %s\n' "${summary[@]}"
if [ -n "$STRICT" ] && [ "$missed" = 1 ]; then
  echo "writes.sh: a case missed its target (STRICT=1)" >&2
  exit 1
fi
