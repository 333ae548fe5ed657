#!/usr/bin/env bash
# scale.sh: the "toward a million skills" figures (docs/scale.md). For each
# store size it fills a PostgreSQL store through the store's own write path
# (bench/cmd/genstore: bench/gen's skills, ~3 KB SKILL.md and three files
# each), starts two `loadout serve` instances over it (same DSN, different
# ports; A first, then B) and measures:
#   - start-up: from exec until /healthz answers with every skill
#   - memory of each: VmHWM and VmRSS from /proc, the live heap after a
#     GC (runtime HeapAlloc through LOADOUT_PPROF's /debug/pprof/heap?gc=1)
#   - latency at CONNS connections for DUR each, on A: HTTP search
#     (GET /v1/agents/a/search), MCP search_skills, HTTP load
#     (GET /v1/agents/a/skills/NAME), MCP load_skill, and the admin
#     GET /v1/skills/NAME (a store read)
#   - change propagation: a PUT of SKILL.md through A until B serves it
#     (load) and finds it (search), bench/cmd/propagate, ROUNDS rounds
# and prints a table, each row with its target.
#
#   bench/scale.sh                         # 20,000, 50,000 and 200,000 skills
#   SIZES="20000" DUR=3s bench/scale.sh    # one size, shorter
#   PG_DSN=postgres://… bench/scale.sh     # an existing server: schemas sN are reused
#   KEEP_PG=1 bench/scale.sh               # leave the throwaway server running (reuse: PG_DSN)
#   STRICT=1 bench/scale.sh                # exit 1 when a target is missed
#   LOADOUT_BIN=/tmp/old/loadout bench/scale.sh   # measure another build
#
# Without PG_DSN it starts a throwaway PostgreSQL with scripts/pg.sh under
# SCALE_DIR (default /tmp/scale-bench), filled once per size (200,000
# skills is ~2.6 GB of tables and a few minutes), and stops it at the end.
# genstore is resumable, so a rerun on the same server writes nothing.
# Figures are noisy on a shared machine: the load average is printed.
set -euo pipefail -f
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"20000 50000 200000"}
DUR=${DUR:-5s}
CONNS=${CONNS:-4}
ROUNDS=${ROUNDS:-5}
PROP_TIMEOUT=${PROP_TIMEOUT:-60s}
STRICT=${STRICT:-0}
SCALE_DIR=${SCALE_DIR:-/tmp/scale-bench}

# Targets, per instance, at every size (see docs/scale.md).
T_READY=10        # s, ready on /healthz
T_HWM=1024        # MB, VmHWM
T_SEARCH_P99=50   # ms, HTTP and MCP search at CONNS connections
T_LOAD_P99=20     # ms, HTTP and MCP load, admin get
T_PROPAGATE=1000  # ms, a write through A served and found by B

mkdir -p "$SCALE_DIR"
work=$(mktemp -d "$SCALE_DIR/run.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "${own_pg:-}" ] && [ "${KEEP_PG:-0}" != 1 ]; then
    scripts/pg.sh stop "$own_pg" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${PG_DSN:-}" ]; then
  dsn=$PG_DSN
else
  eval "$(TMPDIR=$SCALE_DIR scripts/pg.sh start)"
  own_pg=$LOADOUT_PG_DIR
  dsn=$LOADOUT_TEST_POSTGRES
  if [ "${KEEP_PG:-0}" = 1 ]; then
    echo "PostgreSQL kept: PG_DSN='$dsn'; stop it with scripts/pg.sh stop $own_pg" >&2
  fi
fi

if [ -n "${LOADOUT_BIN:-}" ]; then
  cp "$LOADOUT_BIN" "$work/loadout"
else
  go build -o "$work/loadout" ./cmd/loadout
fi
go build -o "$work/loadgen" ./bench/cmd/loadgen
go build -o "$work/genstore" ./bench/cmd/genstore
go build -o "$work/propagate" ./bench/cmd/propagate

# ms DURATION: a Go duration (1.5ms, 850µs, 2.1s) in milliseconds.
ms() {
  case "$1" in '>'*) echo "$1" | tr -d 'ms'; return ;; '?') echo '?'; return ;; esac
  awk -v d="$1" 'BEGIN {
    if (d ~ /ms$/) { sub(/ms$/, "", d); v = d }
    else if (d ~ /µs$/ || d ~ /us$/) { sub(/(µs|us)$/, "", d); v = d / 1000 }
    else if (d ~ /ns$/) { sub(/ns$/, "", d); v = d / 1e6 }
    else if (d ~ /m[0-9.]+s$/) { split(d, p, "m"); sub(/s$/, "", p[2]); v = p[1] * 60000 + p[2] * 1000 }
    else if (d ~ /s$/) { sub(/s$/, "", d); v = d * 1000 }
    else v = d
    printf "%.1f", v }'
}
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
taken=" "
free_port() { # a port nothing listens on, and not handed out before
  local p
  while :; do
    p=$((20000 + RANDOM % 20000))
    case "$taken" in *" $p "*) continue ;; esac
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      taken="$taken$p "
      echo "$p"
      return
    fi
  done
}
now() { date +%s.%N; }
mem() { awk -v k="$2" '$1 == k":" {printf "%.0f", $2/1024}' "/proc/$1/status"; }
liveheap() { # after a forced GC, MB
  curl -fsS "http://127.0.0.1:$1/debug/pprof/heap?gc=1&debug=1" | awk '/^# HeapAlloc = / {printf "%.0f", $4/1048576}'
}

declare -A R
missed=()
# check NAME VALUE TARGET: records a miss when VALUE > TARGET.
check() {
  if awk -v v="$2" -v t="$3" 'BEGIN {exit !(v > t)}'; then
    missed+=("$1: $2 > $3")
  fi
}

start_serve() { # NAME CONFIG PORT PPROFPORT N -> sets spid, sready
  local name=$1 cfg=$2 port=$3 pport=$4 n=$5 t0 body
  t0=$(now)
  LOADOUT_PPROF=127.0.0.1:$pport "$work/loadout" serve --config "$cfg" --addr "127.0.0.1:$port" --no-watch \
    >"$work/serve-$name.log" 2>&1 &
  spid=$!
  pids+=("$spid")
  for _ in $(seq 1 3000); do
    if body=$(curl -fsS "http://127.0.0.1:$port/healthz" 2>/dev/null); then
      break
    fi
    kill -0 "$spid" 2>/dev/null || { cat "$work/serve-$name.log" >&2; echo "scale.sh: serve $name died" >&2; exit 1; }
    sleep 0.05
  done
  sready=$(awk -v a="$t0" -v b="$(now)" 'BEGIN {printf "%.2f", b - a}')
  case "$body" in
    *"\"skills\":$n,"*) ;;
    *) echo "scale.sh: serve $name is up but does not serve $n skills: $body" >&2; exit 1 ;;
  esac
}

echo "scale.sh: $(nproc) cpus; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $SIZES; do
  schema="s$n"
  echo "== $n skills (schema $schema)"
  out=$("$work/genstore" -dsn "$dsn" -schema "$schema" -n "$n")
  echo "$out" | head -n 1
  sdsn=$(echo "$out" | sed -n 's/^dsn=//p')
  R[$n,gen]=$(field "$(echo "$out" | head -n 1)" seconds)
  R[$n,bytes]=$(field "$(echo "$out" | head -n 1)" table_mb)
  cfg="$work/cfg$n.json"
  printf '{"agents":[{"agentId":"a","skills":[{"store":true}]}],"store":"%s"}\n' "$sdsn" >"$cfg"
  pa=$(free_port); taken="$taken$pa "; ppa=$(free_port); taken="$taken$ppa "
  pb=$(free_port); taken="$taken$pb "; ppb=$(free_port); taken="$taken$ppb "
  start_serve A "$cfg" "$pa" "$ppa" "$n"; a=$spid; R[$n,readyA]=$sready
  start_serve B "$cfg" "$pb" "$ppb" "$n"; b=$spid; R[$n,readyB]=$sready
  R[$n,hwmA]=$(mem "$a" VmHWM); R[$n,hwmB]=$(mem "$b" VmHWM)
  R[$n,heapA]=$(liveheap "$ppa"); R[$n,heapB]=$(liveheap "$ppb")
  echo "ready A ${R[$n,readyA]} s, B ${R[$n,readyB]} s; VmHWM A ${R[$n,hwmA]} MB, B ${R[$n,hwmB]} MB; live heap A ${R[$n,heapA]} MB, B ${R[$n,heapB]} MB"

  name=$(curl -fsS "http://127.0.0.1:$pa/v1/agents/a/search?q=pdf+extract&limit=1" | grep -o '"name":"[^"]*"' | head -n 1 | cut -d'"' -f4)
  other=$(curl -fsS "http://127.0.0.1:$pa/v1/agents/a/search?q=docker+deploy&limit=1" | grep -o '"name":"[^"]*"' | head -n 1 | cut -d'"' -f4)
  base="http://127.0.0.1:$pa"
  lg() { "$work/loadgen" -c "$CONNS" -d "$DUR" "$@"; }
  for spec in \
    "search_http|-url $base/v1/agents/a/search?q=release+notes+for+the+api&limit=10" \
    "search_mcp|-mcp $base/agents/a/mcp -tool search_skills -args {\"query\":\"release_notes_for_the_api\",\"limit\":10}" \
    "load_http|-url $base/v1/agents/a/skills/$name" \
    "load_mcp|-mcp $base/agents/a/mcp -tool load_skill -args {\"name\":\"$name\"}" \
    "get_admin|-url $base/v1/skills/$name"; do
    key=${spec%%|*}
    # shellcheck disable=SC2086
    line=$(lg -label "$key-$n" ${spec#*|})
    echo "$line"
    R[$n,$key]="$(ms "$(field "$line" p50)")/$(ms "$(field "$line" p99)")"
    R[$n,${key}_p99]=$(ms "$(field "$line" p99)")
    R[$n,${key}_rps]=$(field "$line" rps)
  done
  if ! prop=$("$work/propagate" -a "$base" -b "http://127.0.0.1:$pb" -agent a -skill "$other" -n "$ROUNDS" -timeout "$PROP_TIMEOUT" 2>&1); then
    # Not seen within PROP_TIMEOUT: recorded as the timeout, a miss.
    missed+=("$n propagation: not served and found by B within $PROP_TIMEOUT")
    t=$(ms "$PROP_TIMEOUT")
    prop="$prop
propagate rounds=0 put_p50=? put_max=? load_p50=>${t}ms load_max=>${t}ms search_p50=>${t}ms search_max=>${t}ms"
  fi
  echo "$prop"
  sum=$(echo "$prop" | tail -n 1)
  R[$n,put]="$(ms "$(field "$sum" put_p50)")/$(ms "$(field "$sum" put_max)")"
  R[$n,prop_load]="$(ms "$(field "$sum" load_p50)")/$(ms "$(field "$sum" load_max)")"
  R[$n,prop_search]="$(ms "$(field "$sum" search_p50)")/$(ms "$(field "$sum" search_max)")"
  R[$n,prop_max]=$(ms "$(field "$sum" search_max)")
  pmax=$(ms "$(field "$sum" load_max)")
  R[$n,prop_max]=$(awk -v a="${R[$n,prop_max]#>}" -v b="${pmax#>}" 'BEGIN {print (a > b ? a : b)}')
  # What each refresh of B's catalog took (the log's "catalog refreshed").
  R[$n,refreshB]=$({ grep 'catalog refreshed' "$work/serve-B.log" || true; } | { grep -o 'took=[^ ]*' || true; } | cut -d= -f2 |
    while read -r d; do ms "$d"; echo; done | sort -n | awk '{v[NR] = $1} END {if (NR) printf "%s/%s", v[int((NR + 1) / 2)], v[NR]}')
  R[$n,refreshA]=$({ grep 'catalog refreshed' "$work/serve-A.log" || true; } | { grep -o 'took=[^ ]*' || true; } | cut -d= -f2 |
    while read -r d; do ms "$d"; echo; done | sort -n | awk '{v[NR] = $1} END {if (NR) printf "%s/%s", v[int((NR + 1) / 2)], v[NR]}')
  echo "catalog refreshes: A (its own writes) p50/max ${R[$n,refreshA]} ms, B (A's writes) ${R[$n,refreshB]} ms"
  R[$n,hwmA2]=$(mem "$a" VmHWM); R[$n,hwmB2]=$(mem "$b" VmHWM)
  R[$n,heapA2]=$(liveheap "$ppa"); R[$n,heapB2]=$(liveheap "$ppb")
  R[$n,perskill]=$(awk -v h="${R[$n,heapA2]}" -v n="$n" 'BEGIN {printf "%.1f", h * 1024 / n}')
  kill -INT "$a" "$b"; wait "$a" || true; wait "$b" || true
  pids=()

  check "$n ready A (s)" "${R[$n,readyA]}" $T_READY
  check "$n ready B (s)" "${R[$n,readyB]}" $T_READY
  check "$n VmHWM A (MB)" "${R[$n,hwmA2]}" $T_HWM
  check "$n VmHWM B (MB)" "${R[$n,hwmB2]}" $T_HWM
  check "$n search HTTP p99 (ms)" "${R[$n,search_http_p99]}" $T_SEARCH_P99
  check "$n search MCP p99 (ms)" "${R[$n,search_mcp_p99]}" $T_SEARCH_P99
  check "$n load HTTP p99 (ms)" "${R[$n,load_http_p99]}" $T_LOAD_P99
  check "$n load MCP p99 (ms)" "${R[$n,load_mcp_p99]}" $T_LOAD_P99
  check "$n admin get p99 (ms)" "${R[$n,get_admin_p99]}" $T_LOAD_P99
  check "$n propagation (ms)" "${R[$n,prop_max]}" $T_PROPAGATE
done

echo
echo "summary ($(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg); latency at $CONNS connections, $DUR each; p50/p99 or p50/max in ms):"
row() { # LABEL TARGET KEY
  printf '| %s | %s |' "$1" "$2"
  for n in $SIZES; do printf ' %s |' "${R[$n,$3]:-}"; done
  echo
}
printf '| figure | target |'; for n in $SIZES; do printf ' %s skills |' "$n"; done; echo
printf '|---|---|'; for _ in $SIZES; do printf -- '---|'; done; echo
row "store filled (s, genstore)" "" gen
row "store tables (MB)" "" bytes
row "ready A (s)" "≤ $T_READY" readyA
row "ready B (s)" "≤ $T_READY" readyB
row "VmHWM A at start (MB)" "" hwmA
row "VmHWM B at start (MB)" "" hwmB
row "VmHWM A after the run (MB)" "≤ $T_HWM" hwmA2
row "VmHWM B after the run (MB)" "≤ $T_HWM" hwmB2
row "live heap A at start (MB)" "" heapA
row "live heap A after the run (MB)" "" heapA2
row "live heap B after the run (MB)" "" heapB2
row "live heap per skill (KB)" "" perskill
row "search HTTP p50/p99" "p99 ≤ $T_SEARCH_P99" search_http
row "search HTTP req/s" "" search_http_rps
row "search_skills MCP p50/p99" "p99 ≤ $T_SEARCH_P99" search_mcp
row "load HTTP p50/p99" "p99 ≤ $T_LOAD_P99" load_http
row "load_skill MCP p50/p99" "p99 ≤ $T_LOAD_P99" load_mcp
row "admin GET /v1/skills/NAME p50/p99" "p99 ≤ $T_LOAD_P99" get_admin
row "PUT through A p50/max" "" put
row "A→B served (load) p50/max" "max ≤ $T_PROPAGATE" prop_load
row "A→B found (search) p50/max" "max ≤ $T_PROPAGATE" prop_search
row "catalog refresh on A after its write p50/max" "" refreshA
row "catalog refresh on B after A's write p50/max" "" refreshB
if [ ${#missed[@]} -gt 0 ]; then
  echo
  echo "targets missed:"
  printf '  %s\n' "${missed[@]}"
  [ "$STRICT" = 1 ] && exit 1
fi
exit 0
