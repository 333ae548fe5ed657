#!/usr/bin/env bash
# cli50k.sh: peak resident memory (getrusage's maxrss, through GNU time)
# and CPU of the one-shot catalog commands at 50,000 folder skills, on a
# tree where every skill has one finding (half found at load, half by
# the safety pass: gentree -findings 1) and on one with none:
#   loadout prompt --root TREE          (target: under 100 MB)
#   loadout check --root TREE           (target: under 100 MB; LOADOUT_CACHE=off)
#   loadout list --root TREE            (no target; printed for comparison)
# Each figure is the median of ROUNDS runs (default 3), the commands
# interleaved round by round; the load average is printed before and
# after. MB here is 10^6 bytes.
#
#   bench/cli50k.sh
#   T50K=/tmp/t50k T50K0=/tmp/t50k0 bench/cli50k.sh   # reuse generated trees (findings, none)
#   BIN=/tmp/old/loadout bench/cli50k.sh              # measure another build
#   STRICT=1 bench/cli50k.sh                          # exit 1 if a target is missed
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
N=${N:-50000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${BIN:-}" ]; then cp "$BIN" "$work/loadout"; else go build -o "$work/loadout" ./cmd/loadout; fi
go build -o "$work/gentree" ./bench/cmd/gentree
tf=${T50K:-}
t0=${T50K0:-}
if [ -z "$tf" ]; then tf="$work/treef"; "$work/gentree" -n "$N" -findings 1 -out "$tf" >/dev/null; fi
if [ -z "$t0" ]; then t0="$work/tree0"; "$work/gentree" -n "$N" -out "$t0" >/dev/null; fi
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "cli50k.sh: needs GNU time at /usr/bin/time" >&2; exit 2; }

declare -A rss cpu
runs=()
for c in prompt check list; do for t in findings none; do runs+=("$c:$t"); done; done
echo "load: $(uptime)"
for r in $(seq 1 "$ROUNDS"); do
  for run in "${runs[@]}"; do
    c=${run%%:*} t=${run#*:}
    tree=$tf; [ "$t" = none ] && tree=$t0
    # Run from an empty folder, so no loadout.json is picked up.
    (cd "$work" && LOADOUT_CACHE=off LOADOUT_CONFIG= LOADOUT_DB= "$TIME" -f '%M %U %S' -o "$work/time" \
      "$work/loadout" "$c" --root "$tree" >/dev/null 2>"$work/stderr") || true
    read -r kb u s < "$work/time"
    rss[$run]+="$(awk -v k="$kb" 'BEGIN { printf "%.1f", k*1024/1e6 }') "
    cpu[$run]+="$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u+s }') "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR+1)/2)] }'; }
missed=0
printf '  %-8s %-9s %10s %9s   %s\n' command tree "peak MB" "CPU s" "(median of $ROUNDS; all peaks)"
for run in "${runs[@]}"; do
  c=${run%%:*} t=${run#*:}
  m=$(echo "${rss[$run]}" | median)
  cs=$(echo "${cpu[$run]}" | median)
  verdict=""
  if [ "$c" != list ]; then
    if awk -v v="$m" 'BEGIN { exit !(v >= 100) }'; then verdict="target < 100 MB MISSED"; missed=1; else verdict="target < 100 MB ok"; fi
  else
    verdict="no target"
  fi
  printf '  %-8s %-9s %10s %9s   %s (%s)\n' "$c" "$t" "$m" "$cs" "$verdict" "${rss[$run]% }"
done
echo "load: $(uptime)"
if [ "${STRICT:-}" = 1 ] && [ "$missed" = 1 ]; then echo "a target was missed"; exit 1; fi
