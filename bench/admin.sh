#!/usr/bin/env bash
# admin.sh: the admin routes against the cached load, end to end. For each
# engine (SQLite, and PostgreSQL when LOADOUT_TEST_POSTGRES is set, as
# scripts/pg.sh start exports it) it starts `loadout serve` on loopback
# over N generated folder skills and a store holding N other skills
# (imported, named s-…), and drives it with bench/cmd/loadgen at CONNS
# connections, the routes interleaved ROUNDS times:
#   - load:         GET /v1/agents/bench/skills/NAME   (the cached load, the reference)
#   - admin-stored: GET /v1/skills/s-NAME2             (a store read)
#   - admin-folder: GET /v1/skills/NAME                (store miss, then the catalog)
#   - admin-files:  GET /v1/skills/s-NAME2/files       (a store read)
# It prints req/s and p99 per route (the median of the rounds) and each
# admin route's req/s as a ratio of the load's. The target (issue 14):
# every route within 2x of the cached load, i.e. ratio >= 0.5.
#
#   bench/admin.sh
#   N=10000 DUR=5s ROUNDS=3 bench/admin.sh
#   ENGINES=sqlite bench/admin.sh
#
# The server runs open (no tokens) on loopback. Only meaningful on a quiet
# machine; the load generator shares the cores with the server.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-2000}
DUR=${DUR:-3s}
CONNS=${CONNS:-64}
ROUNDS=${ROUNDS:-3}
ENGINES=${ENGINES:-"sqlite${LOADOUT_TEST_POSTGRES:+ postgres}"}
work=$(mktemp -d)
schemas=()
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  for s in "${schemas[@]}"; do psql -q "$LOADOUT_TEST_POSTGRES" -c "DROP SCHEMA $s CASCADE" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/loadout" ./cmd/loadout
go build -o "$work/loadgen" ./bench/cmd/loadgen
go build -o "$work/gentree" ./bench/cmd/gentree

tree="$work/tree"
"$work/gentree" -n "$N" -out "$tree" >/dev/null
# The stored skills: another tree, every skill renamed s-NAME.
stored="$work/stored"
"$work/gentree" -n "$N" -seed 2 -out "$stored" >/dev/null
find "$stored" -name SKILL.md | while read -r f; do
  d=$(dirname "$f")
  sed -i 's/^name: /name: s-/' "$f"
  mv "$d" "$(dirname "$d")/s-$(basename "$d")"
done
name=$(find "$tree" -name SKILL.md | sort | awk 'NR==1' | xargs dirname | xargs basename)
sname=$(find "$stored" -name SKILL.md | sort | awk 'NR==1' | xargs dirname | xargs basename)

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

summary=()
for engine in $ENGINES; do
  case $engine in
    sqlite) db="$work/bench.db" ;;
    postgres)
      schema="loadout_admin_$$"
      psql -q "$LOADOUT_TEST_POSTGRES" -c "CREATE SCHEMA $schema" >/dev/null
      schemas+=("$schema")
      sep='?'; case $LOADOUT_TEST_POSTGRES in *\?*) sep='&' ;; esac
      db="${LOADOUT_TEST_POSTGRES}${sep}search_path=$schema" ;;
    *) echo "admin.sh: unknown engine $engine (sqlite or postgres)" >&2; exit 2 ;;
  esac
  "$work/loadout" import --db "$db" --partial "$stored" >/dev/null
  cfg="$work/cfg-$engine.json"
  printf '{"agents":[{"agentId":"bench","skills":[{"root":"%s"}]}],"store":"%s"}\n' "$tree" "$db" > "$cfg"
  port=$((17000 + RANDOM % 2000))
  "$work/loadout" serve --config "$cfg" --addr "127.0.0.1:$port" --no-watch >"$work/serve-$engine.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  base="http://127.0.0.1:$port"
  declare -A urls=(
    [load]="$base/v1/agents/bench/skills/$name"
    [admin-stored]="$base/v1/skills/$sname"
    [admin-folder]="$base/v1/skills/$name"
    [admin-files]="$base/v1/skills/$sname/files"
  )
  routes=(load admin-stored admin-folder admin-files)
  for r in "${routes[@]}"; do
    curl -fsS -o /dev/null "${urls[$r]}" || { echo "admin.sh: GET ${urls[$r]} failed" >&2; cat "$work/serve-$engine.log" >&2; exit 1; }
  done
  echo "== $engine, $N folder + $N stored skills, $CONNS connections, $ROUNDS rounds of $DUR (server pid $pid)"
  for round in $(seq 1 "$ROUNDS"); do
    for r in "${routes[@]}"; do
      out=$("$work/loadgen" -label "$engine-$r" -url "${urls[$r]}" -c "$CONNS" -d "$DUR")
      echo "$out"
      echo "$out" | grep -o 'rps=[0-9]*' | cut -d= -f2 >>"$work/$engine-$r.rps"
      echo "$out" | grep -o 'p99=[^ ]*' | cut -d= -f2 >>"$work/$engine-$r.p99"
    done
  done
  kill -INT "$pid"; wait "$pid" || true
  load=$(median <"$work/$engine-load.rps")
  for r in "${routes[@]}"; do
    rps=$(median <"$work/$engine-$r.rps")
    p99=$(sort -V "$work/$engine-$r.p99" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    summary+=("$(printf '%-9s %-13s %7s req/s  p99 %-9s  %s of load' "$engine" "$r" "$rps" "$p99" "$(awk -v a="$rps" -v b="$load" 'BEGIN {printf "%.2fx", a/b}')")")
  done
done
echo
echo "summary ($(nproc) cpus, $CONNS connections, median of $ROUNDS x $DUR):"
printf '  %s\n' "${summary[@]}"
