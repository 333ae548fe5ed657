#!/usr/bin/env bash
# routes.sh: every read route of the HTTP API against the cached load, end
# to end, on SQLite and PostgreSQL (when LOADOUT_TEST_POSTGRES is set, as
# `eval "$(scripts/pg.sh start)"` exports it). For each engine it starts
# `loadout serve` on loopback over N generated folder skills (with findings:
# gentree -findings 1, every skill one warning) and a store holding N other
# skills (imported, named s-…), with the defaults a user runs (the live
# watch on; WATCH=0 adds --no-watch), tokens required and an admin token on
# every request (the production mode), and drives each route with
# bench/cmd/loadgen at CONNS connections, ROUNDS rounds, each route right
# after two runs of the cached load (GET /v1/agents/bench/skills/NAME):
# "load", spread over all 2N skills (each connection walking the names
# from its own offset), and "load-hot", one hot skill. It prints each
# route's req/s, p99 and server CPU per request (from /proc, less
# sensitive to other load than req/s; medians of the rounds) and its req/s
# as a ratio of each cached load run just before it (the median of the
# rounds' ratios), so that other load on the machine, which drifts, weighs
# on both alike.
#
# Target: every route within 2x of the cached load,
# spread and hot, i.e. both ratios >= 0.5. Routes whose answer grows with the catalog (the skill list's
# default page, the prompt, the well-known index, the diagnostics, the
# OpenAPI document) are held to the same target at the N given, and are
# also measured as real clients ask for them, each as its own row:
#   ROUTE+gz   with Accept-Encoding: gzip (the bytes on the wire are the
#              compressed ones: loadgen never asks for compression itself);
#   ROUTE+304  a poller: Accept-Encoding: gzip and If-None-Match with the
#              ETag it got (answered 304, no body).
# For each of those rows (and the plain one) bench/cmd/bareserve serves the
# same bytes, in the same encoding, from memory (304 for the poller): the
# floor. Its run comes right after the route's, and the route's req/s over
# it is printed next to the ratio to the load, with its own target (>=
# 0.85x of bare for the same bytes). Bytes per answer (as sent: compressed
# for +gz) are printed, since at large N these routes are bound by bytes,
# not by requests. With STRICT=1 the script exits 1 when a target is
# missed. FLOOR_ROUTES chooses the routes that get the extra rows.
#
#   bench/routes.sh
#   N=2000 DUR=3s ROUNDS=3 bench/routes.sh
#   ENGINES=sqlite ROUTES="search listSkills-max wellknown-index diagnostics" bench/routes.sh
#   ENGINES=sqlite ROUTES="load getSkill-stored" bench/routes.sh
#   ENGINES=sqlite ROUTES="listSkills listSkills+gz listSkills+304" bench/routes.sh
#
# Writes (POST, PUT, DELETE) are not measured here: each is a store
# transaction and a catalog refresh, measured by the store benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # wait_healthy
N=${N:-10000}
FINDINGS=${FINDINGS:-1}
WATCH=${WATCH:-1}
DUR=${DUR:-3s}
CONNS=${CONNS:-64}
ROUNDS=${ROUNDS:-3}
STRICT=${STRICT:-}
ENGINES=${ENGINES:-"sqlite${LOADOUT_TEST_POSTGRES:+ postgres}"}
work=$(mktemp -d)
schemas=()
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  for s in "${schemas[@]}"; do psql -q "$LOADOUT_TEST_POSTGRES" -c "DROP SCHEMA $s CASCADE" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# BIN: another loadout binary to measure (a before); by default this tree's.
if [ -n "${BIN:-}" ]; then cp "$BIN" "$work/loadout"; else go build -o "$work/loadout" ./cmd/loadout; fi
go build -o "$work/loadgen" ./bench/cmd/loadgen
go build -o "$work/gentree" ./bench/cmd/gentree
go build -o "$work/bareserve" ./bench/cmd/bareserve

tree="$work/tree"
"$work/gentree" -n "$N" -findings "$FINDINGS" -out "$tree" >/dev/null
# The stored skills: another tree, every skill renamed s-NAME.
stored="$work/stored"
"$work/gentree" -n "$N" -findings "$FINDINGS" -seed 2 -out "$stored" >/dev/null
# (One sed and one perl for all of them: a process per skill took minutes.)
find "$stored" -name SKILL.md -exec sed -i 's/^name: /name: s-/' {} +
find "$stored" -name SKILL.md -printf '%h\n' | perl -ne 'chomp; m{^(.*)/([^/]+)$} or die; rename($_, "$1/s-$2") or die "$_: $!"'

name=$(find "$tree" -name SKILL.md | sort | awk 'NR==1' | xargs dirname | xargs basename)
sname=$(find "$stored" -name SKILL.md | sort | awk 'NR==1' | xargs dirname | xargs basename)
ref=$(cd "$(find "$tree" -type d -name "$name")" && find references -type f | sort | head -1)
sref=$(cd "$(find "$stored" -type d -name "$sname")" && find references -type f | sort | head -1)

# cpu_ticks PID: the process's user+system CPU time in clock ticks.
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { awk -v d="$1" 'BEGIN { if (d ~ /ms$/) {sub(/ms$/,"",d); print d} else if (d ~ /(us|µs)$/) {sub(/(us|µs)$/,"",d); print d/1000} else if (d ~ /s$/) {sub(/s$/,"",d); print d*1000} else print d }'; }

# The routes, in the order they run in each round (load first: the reference).
all_routes=(load load-hot index healthz openapi listSkills listSkills-max getSkill-stored getSkill-folder listFiles-stored listFiles-folder
  getFile-stored getFile-folder listVersions getVersion export-stored export-folder listAgents prompt search
  readFile-agent wellknown-index wellknown-file diagnostics sources receipts)
# The routes whose answer grows with the catalog: each also gets +gz and
# +304 rows and a bare floor.
FLOOR_ROUTES=${FLOOR_ROUTES:-"listSkills listSkills-max prompt wellknown-index diagnostics openapi"}
for r in $FLOOR_ROUTES; do all_routes+=("$r+gz" "$r+304"); done
ROUTES=${ROUTES:-"${all_routes[*]}"}
read -r -a routes <<<"$ROUTES"
routes=(load load-hot $(printf '%s\n' "${routes[@]}" | grep -vx 'load\|load-hot' || true))

missed=0
summary=()
for engine in $ENGINES; do
  case $engine in
    sqlite) db="$work/bench.db" ;;
    postgres)
      schema="loadout_routes_$$"
      psql -q "$LOADOUT_TEST_POSTGRES" -c "CREATE SCHEMA $schema" >/dev/null
      schemas+=("$schema")
      sep='?'; case $LOADOUT_TEST_POSTGRES in *\?*) sep='&' ;; esac
      db="${LOADOUT_TEST_POSTGRES}${sep}search_path=$schema" ;;
    *) echo "routes.sh: unknown engine $engine (sqlite or postgres)" >&2; exit 2 ;;
  esac
  "$work/loadout" import --db "$db" --partial "$stored" >/dev/null
  tok=$("$work/loadout" token create --db "$db" --scope admin --name bench 2>/dev/null)
  cfg="$work/cfg-$engine.json"
  printf '{"agents":[{"agentId":"bench","skills":[{"root":"%s"},{"store":true}]}],"store":"%s"}\n' "$tree" "$db" > "$cfg"
  port=$((17000 + RANDOM % 2000))
  watchflag=(); [ "$WATCH" = 1 ] || watchflag=(--no-watch)
  "$work/loadout" serve --config "$cfg" --addr "127.0.0.1:$port" "${watchflag[@]}" >"$work/serve-$engine.log" 2>&1 &
  pid=$!
  wait_healthy "$port" || true
  # Then ready: serve builds the search and install indexes, the
  # diagnostics and the skill list after it listens (seconds at 10,000
  # skills), and GET /readyz is 200 once they are built; a build without
  # /readyz (404) is ready when it listens. Measuring before would count
  # that work against the first routes.
  wait_ready "$port" || { echo "routes.sh: the server was not ready within 300 s" >&2; exit 1; }
  base="http://127.0.0.1:$port"
  declare -A urls=(
    [load]="@$work/load-urls"
    [load-hot]="$base/v1/agents/bench/skills/$name"
    [index]="$base/"
    [healthz]="$base/healthz"
    [openapi]="$base/v1/openapi.json"
    [listSkills]="$base/v1/skills"
    [listSkills-max]="$base/v1/skills?limit=1000"
    [getSkill-stored]="$base/v1/skills/$sname"
    [getSkill-folder]="$base/v1/skills/$name"
    [listFiles-stored]="$base/v1/skills/$sname/files"
    [listFiles-folder]="$base/v1/skills/$name/files"
    [getFile-stored]="$base/v1/skills/$sname/files/$sref"
    [getFile-folder]="$base/v1/skills/$name/files/$ref"
    [listVersions]="$base/v1/skills/$sname/versions"
    [getVersion]="$base/v1/skills/$sname/versions/1"
    [export-stored]="$base/v1/skills/$sname/export"
    [export-folder]="$base/v1/skills/$name/export"
    [listAgents]="$base/v1/agents"
    [prompt]="$base/v1/agents/bench/prompt"
    [search]="$base/v1/agents/bench/search?q=release+notes+for+the+api"
    [readFile-agent]="$base/v1/agents/bench/skills/$name/files/$ref"
    [wellknown-index]="$base/agents/bench/.well-known/agent-skills/index.json"
    [wellknown-file]="$base/agents/bench/.well-known/agent-skills/$name/SKILL.md"
    [diagnostics]="$base/v1/diagnostics"
    [sources]="$base/v1/sources"
    [receipts]="$base/v1/receipts"
  )
  # The spread load: every skill of the agent, folder and stored.
  find "$tree" "$stored" -name SKILL.md | xargs -n 1000 dirname | xargs -n 1000 basename -a | sort |
    awk -v b="$base" '{print b "/v1/agents/bench/skills/" $1}' >"$work/load-urls"
  declare -A size=() ae=() inm=() bare=() bpid=()
  bpids=()
  for r in "${routes[@]}"; do
    b=${r%%+*}
    [ -n "${urls[$b]:-}" ] || { echo "routes.sh: unknown route $r (known: ${all_routes[*]})" >&2; exit 2; }
    case $r in *+gz | *+304) ae[$r]=gzip ;; esac
    curlh=(-H "Authorization: Bearer $tok")
    [ -n "${ae[$r]:-}" ] && curlh+=(-H "Accept-Encoding: ${ae[$r]}")
    # curl never decompresses here (no --compressed): the size is the bytes sent.
    u=${urls[$b]}; [[ $u == @* ]] && u=$(head -1 "${u#@}")
    size[$r]=$(curl -fsS "${curlh[@]}" -D "$work/headers" -o "$work/body" -w '%{size_download}' "$u") ||
      { echo "routes.sh: GET ${urls[$b]} failed" >&2; cat "$work/serve-$engine.log" >&2; exit 1; }
    if [ "$r" != "${r%+304}" ]; then
      inm[$r]=$(grep -i '^etag:' "$work/headers" | cut -d' ' -f2- | tr -d '\r')
      [ -n "${inm[$r]}" ] || { echo "routes.sh: $b sends no ETag" >&2; exit 1; }
      size[$r]=0
    fi
    : >"$work/$engine-$r.rps"; : >"$work/$engine-$r.p99"; : >"$work/$engine-$r.cpu"; : >"$work/$engine-$r.ratio"; : >"$work/$engine-$r.ratio-hot"; : >"$work/$engine-$r.bare"
    # The floor: bareserve with the same bytes in the same encoding.
    case " $FLOOR_ROUTES " in
      *" $b "*)
        bport=$((19500 + RANDOM % 2000))
        bh=(); [ -n "${ae[$r]:-}" ] && bh+=(-H "Accept-Encoding: ${ae[$r]}")
        "$work/bareserve" -from "${urls[$b]}" -token "$tok" "${bh[@]}" -addr "127.0.0.1:$bport" >"$work/bare-$engine-$r.log" 2>&1 &
        bpids+=($!); bpid[$r]=$!
        for _ in $(seq 1 100); do
          curl -fsS -o /dev/null "http://127.0.0.1:$bport/" 2>/dev/null && break
          sleep 0.05
        done
        bare[$r]="http://127.0.0.1:$bport/"
        ;;
    esac
  done
  echo "== $engine, $N folder + $N stored skills (findings $FINDINGS, watch $WATCH), $CONNS connections, $ROUNDS rounds of $DUR, admin token on every request (server pid $pid, load average $(cut -d' ' -f1-3 /proc/loadavg))"
  "$work/loadgen" -token "$tok" -urls "$work/load-urls" -c "$CONNS" -d 2s >/dev/null # warm up
  # run NAME URL|@FILE [ROUTE] [PID]: one loadgen run (over the URLs of
  # FILE with @FILE), with ROUTE's headers (NAME's by default); appends its
  # req/s, p99 (ms) and CPU per request of PID (µs; the server's by
  # default) to NAME's files.
  run() {
    local out hr=${3:-$1} cp=${4:-$pid} t0 t1 n tgt
    local h=()
    if [[ $2 == @* ]]; then tgt=(-urls "${2#@}"); else tgt=(-url "$2"); fi
    [ -n "${ae[$hr]:-}" ] && h+=(-H "Accept-Encoding: ${ae[$hr]}")
    [ -n "${inm[$hr]:-}" ] && h+=(-H "If-None-Match: ${inm[$hr]}")
    # A route so slow that requests time out still gets its figure
    # (loadgen exits 1 on errors), and the errors are counted in it.
    t0=$(cpu_ticks "$cp")
    out=$("$work/loadgen" -token "$tok" -label "$engine-$1" "${tgt[@]}" "${h[@]}" -c "$CONNS" -d "$DUR" 2>&1) || true
    t1=$(cpu_ticks "$cp")
    echo "$out"
    out=$(echo "$out" | grep ' rps=')
    echo "$out" | grep -o 'rps=[0-9]*' | cut -d= -f2 >>"$work/$engine-$1.rps"
    ms "$(echo "$out" | grep -o 'p99=[^ ]*' | cut -d= -f2)" >>"$work/$engine-$1.p99"
    n=$(echo "$out" | grep -o 'requests=[0-9]*' | cut -d= -f2)
    awk -v a="$t0" -v b="$t1" -v hz="$hz" -v n="${n:-0}" 'BEGIN {if (n > 0) printf "%.1f\n", (b-a)/hz*1e6/n; else print "inf"}' >>"$work/$engine-$1.cpu"
  }
  # Each route runs right after a run of the cached load, and its ratio is
  # to that run, so that the other load on the machine, which drifts, is
  # about the same for both.
  for round in $(seq 1 "$ROUNDS"); do
    for r in "${routes[@]}"; do
      [ "$r" = load ] || [ "$r" = load-hot ] && continue
      run load "${urls[load]}"
      l=$(tail -1 "$work/$engine-load.rps")
      run load-hot "${urls[load-hot]}"
      lh=$(tail -1 "$work/$engine-load-hot.rps")
      run "$r" "${urls[${r%%+*}]}"
      awk -v a="$(tail -1 "$work/$engine-$r.rps")" -v b="$l" 'BEGIN {printf "%.4f\n", a/b}' >>"$work/$engine-$r.ratio"
      awk -v a="$(tail -1 "$work/$engine-$r.rps")" -v b="$lh" 'BEGIN {printf "%.4f\n", a/b}' >>"$work/$engine-$r.ratio-hot"
      if [ -n "${bare[$r]:-}" ]; then
        run "bare-$r" "${bare[$r]}" "$r" "${bpid[$r]}"
        awk -v a="$(tail -1 "$work/$engine-$r.rps")" -v b="$(tail -1 "$work/$engine-bare-$r.rps")" 'BEGIN {printf "%.4f\n", a/b}' >>"$work/$engine-$r.bare"
      fi
    done
  done
  kill -INT "$pid"; wait "$pid" || true
  for bp in "${bpids[@]}"; do kill "$bp" 2>/dev/null || true; done
  load=$(median <"$work/$engine-load.rps")
  for r in "${routes[@]}"; do
    rps=$(median <"$work/$engine-$r.rps")
    p99=$(median <"$work/$engine-$r.p99")
    cpu=$(median <"$work/$engine-$r.cpu")
    verdict=ok
    case $r in
      load) ratio=1.00; rhot=$(awk -v a="$rps" -v b="$(median <"$work/$engine-load-hot.rps")" 'BEGIN {printf "%.2f", a/b}') ;;
      load-hot) ratio=$(awk -v a="$rps" -v b="$(median <"$work/$engine-load.rps")" 'BEGIN {printf "%.2f", a/b}'); rhot=1.00 ;;
      *)
        ratio=$(median <"$work/$engine-$r.ratio" | awk '{printf "%.2f", $1}')
        rhot=$(median <"$work/$engine-$r.ratio-hot" | awk '{printf "%.2f", $1}')
        if ! awk -v x="$ratio" -v y="$rhot" 'BEGIN {exit !(x >= 0.5 && y >= 0.5)}'; then verdict=MISSED; missed=1; fi ;;
    esac
    floor=""
    if [ -n "${bare[$r]:-}" ]; then
      bratio=$(median <"$work/$engine-$r.bare" | awk '{printf "%.2f", $1}')
      floor=$(printf '%5sx of bare %7s req/s (target >= 0.85)' "$bratio" "$(median <"$work/$engine-bare-$r.rps")")
      if ! awk -v x="$bratio" 'BEGIN {exit !(x >= 0.85)}'; then verdict=MISSED; missed=1; fi
    fi
    summary+=("$(printf '%-9s %-20s %7s req/s  p99 %8.2fms  %8s µs CPU/req  %9s B  %5sx of load, %5sx of load-hot (target >= 0.50)  %s  %s' "$engine" "$r" "$rps" "$p99" "$cpu" "${size[$r]}" "$ratio" "$rhot" "$floor" "$verdict")")
  done
done
echo
echo "summary ($(nproc) cpus, $CONNS connections, median of $ROUNDS x $DUR, load average $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '  %s\n' "${summary[@]}"
if [ -n "$STRICT" ] && [ "$missed" = 1 ]; then
  echo "routes.sh: a route missed its target (STRICT=1)" >&2
  exit 1
fi
