#!/usr/bin/env bash
# Runs every fuzz target of the module (every "func FuzzX(f *testing.F)" in
# a _test.go file of a package of ./...) for a fixed time, one target at a
# time, and fails if any target fails or has no committed seed corpus.
#
#   scripts/fuzz.sh                    # CI: FUZZTIME=5s per target
#   FUZZTIME=10m scripts/fuzz.sh       # a longer run, e.g. before a release
#   scripts/fuzz.sh ./skill/ ./portable/   # only these packages
#
# Environment:
#   FUZZTIME          time per target (default 5s); any -fuzztime value, such as 10m or 20000x
#   FUZZMINIMIZETIME  time to minimise a failing input (default 10s)
#   FUZZPARALLEL      fuzzing workers per target (default: the number of CPUs)
#
# Each target must have a seed corpus committed in its package:
# testdata/fuzz/FuzzX/ with at least one file. Plain "go test" runs those
# seeds (and the f.Add ones) as regression tests. When a target fails, Go
# writes the failing input to testdata/fuzz/FuzzX/<hash>: fix the bug, then
# commit that file, so the crasher stays a seed for ever.
set -euo pipefail

cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-5s}
minimize=${FUZZMINIMIZETIME:-10s}
parallel=${FUZZPARALLEL:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}

pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
  pkgs=(./...)
fi

# package directory and target name, one pair per line, in a stable order
targets=$(
  go list -f '{{.Dir}}' "${pkgs[@]}" | while read -r dir; do
    for f in "$dir"/*_test.go; do
      [ -e "$f" ] || continue
      sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F).*/\1/p' "$f" | while read -r name; do
        printf '%s %s\n' "$dir" "$name"
      done
    done
  done | sort
)

if [ -z "$targets" ]; then
  echo "fuzz.sh: no fuzz targets found in ${pkgs[*]}" >&2
  exit 1
fi

root=$(pwd)
count=$(printf '%s\n' "$targets" | wc -l)
echo "fuzz.sh: $count targets, $fuzztime each, $parallel workers"
failed=()
while read -r dir name; do
  rel=./${dir#"$root"/}
  [ "$dir" = "$root" ] && rel=.
  corpus="$dir/testdata/fuzz/$name"
  if [ ! -d "$corpus" ] || [ -z "$(ls -A "$corpus")" ]; then
    echo "FAIL $rel $name: no seed corpus: commit at least one input in ${corpus#"$root"/}/" >&2
    failed+=("$rel $name (no corpus)")
    continue
  fi
  echo "=== $rel $name"
  before=$(ls -A "$corpus" | sort)
  log="${TMPDIR:-/tmp}/fuzz.$$.log"
  fuzz() {
    go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" -fuzzminimizetime="$minimize" \
      -parallel="$parallel" "$rel" >"$log" 2>&1
  }
  ok=1
  if ! fuzz; then
    ok=0
    # Go's fuzzing engine sometimes fails a run at its own deadline with
    # "context deadline exceeded" and no failing input, when a worker is
    # slow to stop on a loaded machine. That is the engine, not the
    # target: run it once more, and fail if it fails again, or at all
    # otherwise.
    if [ "$(comm -13 <(echo "$before") <(ls -A "$corpus" | sort) || true)" = "" ] &&
        grep -q '^    context deadline exceeded$' "$log" && ! grep -q 'Failing input written' "$log"; then
      echo "fuzz.sh: $rel $name stopped with the fuzzing engine's 'context deadline exceeded' and no failing input; running it once more"
      fuzz && ok=1
    fi
  fi
  if [ "$ok" = 0 ]; then
    cat "$log"
    new=$(comm -13 <(echo "$before") <(ls -A "$corpus" | sort) || true)
    if [ -n "$new" ]; then
      echo "fuzz.sh: the failing input is ${corpus#"$root"/}/$new: fix the bug, then commit it as a seed" >&2
    fi
    failed+=("$rel $name")
  else
    tail -n 1 "$log"
  fi
done <<<"$targets"
rm -f "${TMPDIR:-/tmp}/fuzz.$$.log"

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: ${#failed[@]} of $count targets failed:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz.sh: all $count targets passed"
