#!/usr/bin/env bash
# mcphttp.sh: MCP over streamable HTTP, loadout serve against a bare go-sdk
# server (bench/cmd/mcpfloor: tools that return fixed bytes and do nothing
# else), side by side in interleaved rounds, on one client and transport:
# read_skill_file, load_skill and search_skills, stateful and --stateless.
#
#   bench/mcphttp.sh                        # 10,000 skills, 3 rounds of 5s
#   DUR=3s ROUNDS=2 N=2000 bench/mcphttp.sh  # quicker
#   CLIENT=sdk bench/mcphttp.sh             # the go-sdk client instead of the raw one
#   TOOLS="read_skill_file" bench/mcphttp.sh
#   STRICT=1 bench/mcphttp.sh               # exit 1 if a target is missed
#
# As users run it: the tree has a finding in every skill (gentree
# -findings 1), serve runs with its defaults (the watch on) and a token,
# and the calls that take a skill name spread over every skill of the
# tree (each caller walks the names from its own offset); search_skills
# asks a common query ("release notes for the api"). The floor returns,
# for each tool, the bytes loadout answers for one such call (captured
# from loadout first), so both put the same sizes on the wire.
#
# Rows: floor-state / loadout-state (sessions) and floor-stateless /
# loadout-stateless (serve --stateless, the SDK's stateless handler for
# the floor), each tool one mcpload run of ROUNDS rounds of DUR per row.
# calls/s and the server's CPU per call (user+system from /proc) are the
# medians of the rounds; "x floor" is the median of the rounds' ratios.
#
# Before the rounds each target gets one call of every argument set (a
# skill's first read computes its digest for the receipt, once per
# catalog load); that pass's figures are printed, not counted.
#
# The client: CLIENT=raw (default) is mcpload's minimal JSON-RPC client,
# which sends the headers the go-sdk client sends and checks every
# answer; it leaves the server as the bottleneck. The go-sdk client
# (CLIENT=sdk) costs more CPU per call than loadout does, so on 2 cores it
# caps calls/s for both servers alike and the ratio shrinks toward 1; CPU
# per call is the figure that does not depend on the client.
#
# Target: loadout at least 1.5x the floor's calls/s for every
# tool, stateful and stateless.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-10000}
DUR=${DUR:-5s}
ROUNDS=${ROUNDS:-3}
C=${C:-64}
CLIENT=${CLIENT:-raw}
TOOLS=${TOOLS:-read_skill_file load_skill search_skills}
STRICT=${STRICT:-0}
QUERY=${QUERY:-release notes for the api}
. bench/lib.sh # bench_work
bench_work mcphttp

echo "# $(nproc) cpus, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
GOFLAGS=-mod=readonly GOPROXY=off go build -o "$work/bin/" ./cmd/loadout ./bench/cmd/gentree ./bench/cmd/mcpload ./bench/cmd/mcpfloor
bin=$work/bin
tree=$work/tree
"$bin/gentree" -n "$N" -findings 1 -out "$tree" >/dev/null
find "$tree" -name SKILL.md -printf '%h\n' | sort >"$work/dirs"
first=$(head -1 "$work/dirs")
name=$(basename "$first")
file=references/guide.md
[ -f "$first/$file" ] || { echo "mcphttp.sh: $first/$file missing: gentree changed?" >&2; exit 1; }
echo "# $N skills (every one with a finding) in $tree; $CLIENT client, $C callers, $ROUNDS rounds of $DUR"

port() { echo $((20000 + RANDOM % 20000)); }
db=$work/loadout.db
token=$("$bin/loadout" token create --scope admin --db "$db" 2>/dev/null | head -1)
[ -n "$token" ] || { echo "mcphttp.sh: no token created" >&2; exit 1; }

# Two servers over one store: sessions, and --stateless. Defaults (the
# watch on) otherwise.
lp_state=$(port); lp_less=$(port)
"$bin/loadout" serve --log-level warn --db "$db" --root "$tree" --addr "127.0.0.1:$lp_state" >"$work/state.log" 2>&1 &
pids+=($!); lpid_state=$!
"$bin/loadout" serve --stateless --log-level warn --db "$db" --root "$tree" --addr "127.0.0.1:$lp_less" >"$work/stateless.log" 2>&1 &
pids+=($!); lpid_less=$!

# rpc URL BODY [SID]: one POST with the token, the answer's body.
rpc() {
  curl -sS -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Authorization: Bearer $token" ${3:+-H "Mcp-Session-Id: $3"} ${3:+-H 'Mcp-Protocol-Version: 2025-06-18'} -d "$2" "$1"
}
url=http://127.0.0.1:$lp_state/mcp
for _ in $(seq 600); do
  curl -s -o /dev/null -H "Authorization: Bearer $token" "http://127.0.0.1:$lp_state/v1/agents" && curl -s -o /dev/null -H "Authorization: Bearer $token" "http://127.0.0.1:$lp_less/v1/agents" && break
  sleep 0.5
done
sid=$(curl -sS -D - -o /dev/null -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $token" \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcphttp.sh","version":"1"}}}' "$url" |
  awk -F': ' 'tolower($1)=="mcp-session-id"{print $2}' | tr -d '\r')
[ -n "$sid" ] || { echo "mcphttp.sh: loadout gave no session" >&2; cat "$work/state.log" >&2; exit 1; }
rpc "$url" '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$sid" >/dev/null
# The floor's answers: loadout's, for one call of each tool.
capture() { # tool args out [json]
  rpc "$url" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}" "$sid" >"$work/ans.json"
  "$bin/mcpload" -extract-text "$work/ans.json" >"$3"
}
capture read_skill_file "{\"name\":\"$name\",\"path\":\"$file\"}" "$work/floor-read.txt"
capture load_skill "{\"name\":\"$name\"}" "$work/floor-load.txt"
capture search_skills "{\"query\":\"$QUERY\"}" "$work/floor-search.json"
fp_state=$(port); fp_less=$(port)
floor_tools=(-tool "read_skill_file=$work/floor-read.txt" -tool "load_skill=$work/floor-load.txt" -tool "search_skills=$work/floor-search.json:json")
"$bin/mcpfloor" "${floor_tools[@]}" -addr "127.0.0.1:$fp_state" 2>"$work/floor-state.log" &
pids+=($!); fpid_state=$!
"$bin/mcpfloor" "${floor_tools[@]}" -stateless -addr "127.0.0.1:$fp_less" 2>"$work/floor-stateless.log" &
pids+=($!); fpid_less=$!

# The watch's set-up after ready (a second walk of the folders) would
# overlap the first rounds: wait until both loadout processes are idle
# (together under 10% of a core for 2 s; at most 3 minutes), so every round
# measures calls. bench/server.sh is the one that measures the set-up.
ticks() { awk '{sub(/.*\) /, ""); split($0, f, " "); s += f[12] + f[13]} END {print s}' "/proc/$lpid_state/stat" "/proc/$lpid_less/stat"; }
t_settle=$(date +%s)
for _ in $(seq 90); do
  a=$(ticks); sleep 2; b=$(ticks)
  [ $((b - a)) -le 20 ] && break
done
echo "# loadout idle after $(( $(date +%s) - t_settle )) s of waiting"

# Argument lists: names spread over every skill.
awk -v f="$file" -F/ '{printf "%s{\"name\":\"%s\",\"path\":\"%s\"}", (NR>1?",":""), $NF, f}' "$work/dirs" >"$work/args-read"
awk -F/ '{printf "%s{\"name\":\"%s\"}", (NR>1?",":""), $NF}' "$work/dirs" >"$work/args-load"
printf '{"query":"%s"}' "$QUERY" >"$work/args-search"
out=$work/out.txt
: >"$out"
for tool in $TOOLS; do
  case $tool in
    read_skill_file) a=read ;; load_skill) a=load ;; search_skills) a=search ;;
    *) echo "mcphttp.sh: unknown tool $tool" >&2; exit 2 ;;
  esac
  args=$(cat "$work/args-$a")
  cat >"$work/targets-$tool.json" <<EOF
[{"label":"floor-state","tool":"$tool","argsList":[$args],"url":"http://127.0.0.1:$fp_state/mcp","pid":$fpid_state},
 {"label":"loadout-state","tool":"$tool","argsList":[$args],"url":"http://127.0.0.1:$lp_state/mcp","pid":$lpid_state,"token":"$token"},
 {"label":"floor-stateless","tool":"$tool","argsList":[$args],"url":"http://127.0.0.1:$fp_less/mcp","pid":$fpid_less},
 {"label":"loadout-stateless","tool":"$tool","argsList":[$args],"url":"http://127.0.0.1:$lp_less/mcp","pid":$lpid_less,"token":"$token"}]
EOF
  echo "## $tool"
  "$bin/mcpload" -client "$CLIENT" -warm-pass -config "$work/targets-$tool.json" -c "$C" -d "$DUR" -rounds "$ROUNDS" | sed "s/^/$tool /" | tee -a "$out"
done

echo
echo "summary ($(nproc) cpus, $CLIENT client, $C callers, $ROUNDS rounds of $DUR, $N skills with findings, watch on, a token; load average now $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '%-16s %-10s %9s %9s %8s %9s %9s %8s\n' tool mode floor/s loadout/s "x floor" floor_us loadout_us "cpu less"
missed=0
for tool in $TOOLS; do
  for mode in state stateless; do
    # Per round: the ratio of calls/s, and each server's CPU per call.
    read -r fr lr ratio fc lc < <(awk -v t="$tool" -v m="$mode" '
      function med(a, n,   i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j+1] = a[j]; a[j+1] = x } return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
      $1 == t && $2 == "round" {
        split($5, r, "="); split($6, c, "=")
        if ($4 == "floor-" m) { nf++; f[nf] = r[2]; fc[nf] = c[2] }
        if ($4 == "loadout-" m) { nl++; l[nl] = r[2]; lc[nl] = c[2]; x[nl] = (f[nl] > 0 ? r[2] / f[nl] : 0) }
      }
      END { if (nf && nl) printf "%.0f %.0f %.2f %.1f %.1f\n", med(f, nf), med(l, nl), med(x, nl), med(fc, nf), med(lc, nl); else print "- - - - -" }' "$out")
    less=$(awk -v a="$fc" -v b="$lc" 'BEGIN{if (b > 0) printf "%.2fx", a/b; else print "-"}')
    ok=$(awk -v r="$ratio" 'BEGIN{print (r >= 1.5) ? "ok" : "MISSED"}')
    [ "$ok" = ok ] || missed=1
    printf '%-16s %-10s %9s %9s %7sx %9s %9s %8s  (target >= 1.5x: %s)\n' "$tool" "$mode" "$fr" "$lr" "$ratio" "$fc" "$lc" "$less" "$ok"
  done
done
echo "(x floor: median over rounds of loadout's calls/s over the floor's in the same round; *_us: server CPU per call, user+system from /proc)"
if [ "$missed" = 1 ] && [ "$STRICT" = 1 ]; then
  echo "a target was missed (STRICT=1)"
  exit 1
fi
