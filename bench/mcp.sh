#!/usr/bin/env bash
# mcp.sh: MCP read_skill_file calls per second, loadout against a bare go-sdk
# server (the floor), mudler/skillserver and loadout as it was (BASE), all
# driven by one client (bench/cmd/mcpload, go-sdk's client) in interleaved
# rounds over the same generated tree.
#
#   bench/mcp.sh                                 # loadout, base and floor
#   SKILLSERVER=/path/to/skillserver bench/mcp.sh    # + skillserver (a binary,
#   SKILLSERVER=/path/to/skillserver-src bench/mcp.sh  # or its source: built here)
#   N=2000 DUR=3s ROUNDS=2 C=32 bench/mcp.sh     # smaller and quicker
#   GC=1 bench/mcp.sh                            # + loadout with GOMEMLIMIT=4GiB
#   BASE=none bench/mcp.sh                       # no "before" rows
#   STRICT=1 bench/mcp.sh                        # exit 1 if a target is missed
#   INIT_TIMEOUT=30m                             # how long a server may take to start
#
# Rows (each server started once; rounds of DUR per row, A B C A B C ...):
#   floor-*        bench/cmd/mcpfloor: one tool returning the file's bytes
#   skillserver-*  its read_skill_resource tool on the same file
#   loadout-*      read_skill_file of this checkout (loadout mcp / serve)
#   base-*         the same of loadout at BASE (default 660e1ac, the last
#                  commit before the MCP work of issue 14)
#   *-stdio        the client starts the server and shares its one session
#                  between C callers; *-http: C sessions over streamable HTTP
#                  (the server's own); *-bridge: C HTTP sessions through
#                  bench/cmd/mcpbridge to one stdio process (skillserver
#                  serves MCP only over stdio, so this is its HTTP)
#
# Targets: loadout at least 2x BASE (stdio and HTTP), and at least 1.5x
# skillserver over stdio and over HTTP (loadout's HTTP against skillserver
# through the bridge). loadout through the same bridge is printed too,
# without a target: one stdio session behind the bridge caps every server
# there (floor-bridge shows the cap).
#
# The calls spread over every skill (the same file path in each): each
# caller walks the names from its own offset, after one warm pass over
# every skill (printed, not counted: a skill's first read computes its
# digest for the receipt).
#
# srv_cpu_us is the server's own CPU time per call (from /proc, the median
# of the rounds; "-" through the bridge). Over stdio one go-sdk client
# process drives every server and takes most of the 2 cores, so calls/s
# there is bound by the client as well; CPU per call is what the server
# alone costs, and the summary compares it with BASE.
#
# The tree: bench/cmd/gentree's skills (one finding in each, as the
# issue-27 defaults have it) moved to one level (skillserver reads
# only DIR/<skill>/SKILL.md, and writes its search index into DIR/.index, so
# each skillserver gets its own copy). Nothing is downloaded unless
# SKILLSERVER names a source folder (its dependencies come from the Go
# module proxy); loadout, base and the bench tools build offline.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-10000}
DUR=${DUR:-5s}
ROUNDS=${ROUNDS:-3}
C=${C:-64}
BASE=${BASE:-660e1ac}
GC=${GC:-0}
STRICT=${STRICT:-0}
# skillserver indexes its whole tree before it answers initialize: about
# 95 s at 10,000 skills on a quiet 2-core machine, over 10 minutes on a
# busy one.
INIT_TIMEOUT=${INIT_TIMEOUT:-30m}
. bench/lib.sh # bench_work
bench_work mcp

echo "# $(nproc) cpus, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
offline=(env GOFLAGS=-mod=readonly GOPROXY=off)
"${offline[@]}" go build -o "$work/bin/" ./cmd/loadout ./bench/cmd/gentree ./bench/cmd/mcpload ./bench/cmd/mcpfloor ./bench/cmd/mcpbridge
bin=$work/bin
if [ "$BASE" != none ]; then
  mkdir -p "$work/base"
  git archive "$BASE" | tar -x -C "$work/base"
  (cd "$work/base" && "${offline[@]}" go build -o "$bin/loadout-base" ./cmd/loadout)
fi
ss=""
if [ -n "${SKILLSERVER:-}" ]; then
  if [ -d "$SKILLSERVER" ]; then
    # The source of github.com/mudler/skillserver, built in its own module
    # with its own go.sum; the proxy serves its dependencies.
    if [ ! -e "$SKILLSERVER/pkg/web/ui/images/logo.png" ]; then
      echo "# skillserver source has no pkg/web/ui/images/logo.png (go:embed needs it): building from a copy with an empty one"
      cp -r "$SKILLSERVER" "$work/skillserver-src"
      mkdir -p "$work/skillserver-src/pkg/web/ui/images" && : >"$work/skillserver-src/pkg/web/ui/images/logo.png"
      SKILLSERVER=$work/skillserver-src
    fi
    (cd "$SKILLSERVER" && GOFLAGS=-mod=mod go build -o "$bin/skillserver" ./cmd/skillserver)
    ss=$bin/skillserver
  else
    ss=$SKILLSERVER
  fi
else
  echo "# SKILLSERVER unset: no skillserver rows (set it to its binary or source folder)"
fi

tree=$work/tree
"$bin/gentree" -n "$N" -findings 1 -out "$work/nested" >/dev/null
mkdir -p "$tree"
find "$work/nested" -name SKILL.md -printf '%h\0' | xargs -0 mv -t "$tree/"
name=$(ls "$tree" | sort | awk "NR==1")
file=references/guide.md
echo "# $N skills (each with one finding) in $tree; the calls read $file of every skill in turn ($name's: $(wc -c <"$tree/$name/$file") bytes; the floor returns that one)"

port() { echo $((20000 + RANDOM % 20000)); }
targets=()
add() { targets+=("$1"); }
# The calls spread over every skill: each caller walks the names from its
# own offset (mcpload's argsList).
lo_args=$(ls "$tree" | sort | awk -v f="$file" '{printf "%s{\"name\":\"%s\",\"path\":\"%s\"}", (NR>1?",":""), $0, f}')
ss_args=$(ls "$tree" | sort | awk -v f="$file" '{printf "%s{\"skill_id\":\"%s\",\"resource_path\":\"%s\"}", (NR>1?",":""), $0, f}')

# The floor.
add "{\"label\":\"floor-stdio\",\"tool\":\"read_skill_file\",\"argsList\":[$lo_args],\"cmd\":[\"$bin/mcpfloor\",\"-file\",\"$tree/$name/$file\"]}"
p=$(port); "$bin/mcpfloor" -file "$tree/$name/$file" -addr "127.0.0.1:$p" 2>"$work/floor-http.log" & pids+=($!)
add "{\"label\":\"floor-http\",\"tool\":\"read_skill_file\",\"argsList\":[$lo_args],\"url\":\"http://127.0.0.1:$p/mcp\",\"pid\":$!}"
p=$(port); "$bin/mcpbridge" -addr "127.0.0.1:$p" -- "$bin/mcpfloor" -file "$tree/$name/$file" 2>"$work/floor-bridge.log" & pids+=($!)
add "{\"label\":\"floor-bridge\",\"tool\":\"read_skill_file\",\"argsList\":[$lo_args],\"url\":\"http://127.0.0.1:$p/mcp\"}"

# skillserver: two processes (stdio, bridge), each over its own copy.
if [ -n "$ss" ]; then
  cp -r "$tree" "$work/ss1"; cp -r "$tree" "$work/ss2"
  add "{\"label\":\"skillserver-stdio\",\"tool\":\"read_skill_resource\",\"argsList\":[$ss_args],\"cmd\":[\"$ss\",\"-dir\",\"$work/ss1\",\"-port\",\"$(port)\"]}"
  p=$(port); "$bin/mcpbridge" -addr "127.0.0.1:$p" -- "$ss" -dir "$work/ss2" -port "$(port)" 2>"$work/skillserver-bridge.log" & pids+=($!)
  add "{\"label\":\"skillserver-bridge\",\"tool\":\"read_skill_resource\",\"argsList\":[$ss_args],\"url\":\"http://127.0.0.1:$p/mcp\"}"
fi

# loadout (this checkout, and BASE): stdio, its own HTTP, and the bridge.
loadout_rows() { # label binary [env...]
  local label=$1 exe=$2; shift 2
  local envj="" e
  for e in "$@"; do envj+="${envj:+,}\"$e\""; done
  add "{\"label\":\"$label-stdio\",\"tool\":\"read_skill_file\",\"argsList\":[$lo_args],\"env\":[$envj],\"cmd\":[\"$exe\",\"mcp\",\"--no-watch\",\"--log-level\",\"warn\",\"--db\",\"$work/$label-stdio.db\",\"--root\",\"$tree\"]}"
  local p; p=$(port)
  env "$@" "$exe" serve --no-watch --log-level warn --db "$work/$label-http.db" --root "$tree" --addr "127.0.0.1:$p" >"$work/$label-http.log" 2>&1 & pids+=($!)
  add "{\"label\":\"$label-http\",\"tool\":\"read_skill_file\",\"argsList\":[$lo_args],\"url\":\"http://127.0.0.1:$p/mcp\",\"pid\":$!}"
}
loadout_rows loadout "$bin/loadout"
p=$(port); "$bin/mcpbridge" -addr "127.0.0.1:$p" -- "$bin/loadout" mcp --no-watch --log-level warn --db "$work/loadout-bridge.db" --root "$tree" 2>"$work/loadout-bridge.log" & pids+=($!)
add "{\"label\":\"loadout-bridge\",\"tool\":\"read_skill_file\",\"argsList\":[$lo_args],\"url\":\"http://127.0.0.1:$p/mcp\"}"
if [ "$GC" = 1 ]; then
  loadout_rows loadout4g "$bin/loadout" GOMEMLIMIT=4GiB
fi
if [ "$BASE" != none ]; then
  loadout_rows base "$bin/loadout-base"
fi

(IFS=,; echo "[${targets[*]}]") >"$work/targets.json"
"$bin/mcpload" -warm-pass -config "$work/targets.json" -c "$C" -d "$DUR" -rounds "$ROUNDS" -init-timeout "$INIT_TIMEOUT" | tee "$work/out.txt"

rate() { awk -v l="$1" '$1=="RESULT" && $2==l {print $3}' "$work/out.txt"; }
echo
echo "summary ($(nproc) cpus, $C callers, $ROUNDS rounds of $DUR, $N skills; load average now $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '%-20s %9s %9s %9s %9s %11s %s\n' row calls/s p50_us p99_us bytes srv_cpu_us "x floor (same transport)"
awk '$1=="RESULT"' "$work/out.txt" | while read -r _ label r p50 p99 bytes cpu; do
  tr=${label##*-}
  f=$(rate "floor-$tr")
  printf '%-20s %9s %9s %9s %9s %11s %s\n' "$label" "$r" "$p50" "$p99" "$bytes" "${cpu:--}" "$(awk -v a="$r" -v b="$f" 'BEGIN{if(b>0) printf "%.2fx", a/b}')"
done
echo
missed=0
check() { # label-a label-b min what
  local a b
  a=$(rate "$1"); b=$(rate "$2")
  if [ -z "$a" ] || [ -z "$b" ]; then echo "skip   $1 / $2 (not measured)"; return; fi
  local ratio ok
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f", a/b}')
  ok=$(awk -v r="$ratio" -v m="$3" 'BEGIN{print (r>=m)?"ok":"MISSED"}')
  [ "$ok" = ok ] || missed=1
  printf '%-6s %-16s / %-18s = %5sx  (target >= %sx: %s)\n' "$ok" "$1" "$2" "$ratio" "$3" "$4"
}
check loadout-stdio base-stdio 2 "2x today's calls/s over stdio"
check loadout-http base-http 2 "2x today's calls/s over HTTP"
check loadout-stdio skillserver-stdio 1.5 "1.5x skillserver over stdio"
check loadout-http skillserver-bridge 1.5 "1.5x skillserver over HTTP (its only HTTP is the bridge)"
b=$(rate loadout-bridge); s2=$(rate skillserver-bridge); f=$(rate floor-bridge)
# The server's CPU per call (srv_cpu_us): what a call costs the server
# alone. Over stdio the client (one go-sdk process for every server) takes
# most of the 2 cores, so calls/s there is bound by the client as much as
# by the server; CPU per call is not.
cpu() { awk -v l="$1" '$1=="RESULT" && $2==l {print $7}' "$work/out.txt"; }
for tr in stdio http; do
  a=$(cpu "loadout-$tr"); bb=$(cpu "base-$tr")
  { [ -n "$a" ] && [ -n "$bb" ]; } || continue
  case "$a$bb" in *-*) continue ;; esac
  echo "info   server CPU per call over $tr: loadout $a us, base $bb us ($(awk -v a="$a" -v b="$bb" 'BEGIN{if(a>0) printf "%.2fx", b/a}') less)"
done
# Over stdio the client is the bottleneck whenever the server costs less
# per call than the client: say so with the figures.
lc=$(cpu loadout-stdio)
for other in floor skillserver; do
  oc=$(cpu "$other-stdio"); orate=$(rate "$other-stdio"); lrate=$(rate loadout-stdio)
  { [ -n "$lc" ] && [ -n "$oc" ]; } || continue
  case "$lc$oc" in *-*) continue ;; esac
  echo "info   stdio: loadout $lrate calls/s at $lc us of server CPU a call; $other $orate calls/s at $oc us: calls/s $(awk -v a="$lrate" -v b="$orate" 'BEGIN{printf "%.2fx", a/b}'), CPU per call $(awk -v a="$lc" -v b="$oc" 'BEGIN{printf "%.2fx", b/a}') lower. One go-sdk client process drives each stdio server and takes most of the $(nproc) cores, so calls/s here is bound by the client: the CPU ratio is the server's own."
done
[ -n "$ss" ] || echo "info   no skillserver rows: SKILLSERVER unset (its binary or source folder)"
if [ -n "$b" ] && [ -n "$s2" ]; then
  echo "info   loadout-bridge / skillserver-bridge = $(awk -v a="$b" -v b="$s2" 'BEGIN{printf "%.2f", a/b}')x (no target: the bridge's one stdio session caps both; floor-bridge: $f calls/s)"
fi
if [ "$GC" = 1 ]; then
  for tr in stdio http; do
    echo "GOMEMLIMIT=4GiB vs default ($tr): $(awk -v a="$(rate loadout4g-$tr)" -v b="$(rate loadout-$tr)" 'BEGIN{printf "%.2fx", a/b}')"
  done
fi
if [ "$missed" = 1 ] && [ "$STRICT" = 1 ]; then
  echo "a target was missed (STRICT=1)"
  exit 1
fi
