#!/usr/bin/env bash
# Runs every test, in steps, and ends with a summary of each step (PASS,
# FAIL or SKIP, with its duration) naming every failing package and test.
# A failing step does not stop the others: the fuzz step runs whatever the
# tests did. The exit status is 1 if any step failed.
#
#   scripts/test.sh                 # every step: checks light heavy fuzz
#   scripts/test.sh light           # one step (or several: checks light)
#   scripts/test.sh heavy           # every heavy suite, one after another
#   scripts/test.sh webui docker    # only these heavy suites
#   scripts/test.sh list            # the steps, their packages and timeouts
#   scripts/test.sh light fuzz ./skill/ ./render/...   # light and fuzz on these packages only
#
# The steps (docs/testing.md tells more):
#   checks  gofmt, go vet, go mod tidy
#   light   every package with the race detector, two at a time, except the
#           heavy suites below
#   heavy   the suites that build the real binary and drive it from outside
#           (Chromium, Node clients, a static build), one at a time, each
#           with its own timeout
#   fuzz    every fuzz target for FUZZTIME (5s by default; scripts/fuzz.sh)
#
# The timeouts are sized for a 2-core machine under load: three to five
# times what each took on one running seven other builds and test runs
# (load average ~20; docs/testing.md has the figures), so that a slow
# machine passes and a hung test still ends, with Go's dump of what it was
# doing. TIMEOUT_SCALE=N multiplies them all, for a machine slower still.
#
# On a fresh Debian machine it installs what the store tests need (the
# postgresql package) and starts a throwaway server on loopback; with
# LOADOUT_TEST_POSTGRES already set it uses that server.
set -uo pipefail
cd "$(dirname "$0")/.."

module=$(go list -m)
scale=${TIMEOUT_SCALE:-1}

# The heavy suites: name, packages, -run pattern (empty: the whole
# package), timeout in minutes, why it is heavy, and whether the test
# binary runs with the race detector. Their tests are left out of the
# light step (whole packages, or -skip for a single test). attack and
# compat drive the real binary from outside, built without the race
# detector, so in them it would watch only the harness (and double its
# time on a 2-core machine); the code they reach runs with -race in the
# light step. webui's package also holds the UI's own handlers, in
# process; docker's test binary is the light step's, cached.
heavy=(
  "attack|./attack||30|the real binary through whole attacks (a git bomb, Chromium, limits of RSS and CPU)|"
  "compat|./compat||25|every pinned MCP and skills client (Node, compat/node_modules) against the real server|"
  "webui|./webui||25|the web UI in headless Chromium: every page, the editor, axe-core in light and dark|-race"
  "docker|./cmd/loadout|^TestDockerfileRecipe\$|20|the Dockerfile's static build (CGO_ENABLED=0, cold: nothing cached)|-race"
)
light_timeout=20 # minutes, per package: the slowest light packages (render, service, cmd/loadout) took 3 to 6 min at load ~20

field() { echo "$1" | cut -d'|' -f"$2"; }

heavy_names=()
for h in "${heavy[@]}"; do heavy_names+=("$(field "$h" 1)"); done

usage() {
  echo "usage: scripts/test.sh [checks] [light] [heavy | ${heavy_names[*]}] [fuzz] [list] [./PACKAGE...]" >&2
  exit 2
}

# Which steps to run, in the fixed order.
want_checks=0 want_light=0 want_fuzz=0 want_list=0
want_heavy=()
only=() # package patterns that narrow the light and fuzz steps
for a in "$@"; do
  case "$a" in ./*) only+=("$a") ;; esac
done
if [ $# -eq 0 ]; then
  want_checks=1 want_light=1 want_fuzz=1
  want_heavy=("${heavy_names[@]}")
elif [ $# -eq ${#only[@]} ]; then
  want_light=1 want_fuzz=1
fi
for a in "$@"; do
  case "$a" in
    checks) want_checks=1 ;;
    light) want_light=1 ;;
    heavy) want_heavy=("${heavy_names[@]}") ;;
    fuzz) want_fuzz=1 ;;
    list) want_list=1 ;;
    -h | --help) usage ;;
    ./*) ;;
    *)
      found=0
      for n in "${heavy_names[@]}"; do [ "$n" = "$a" ] && found=1; done
      [ $found = 1 ] || { echo "scripts/test.sh: no step named $a" >&2; usage; }
      want_heavy+=("$a")
      ;;
  esac
done

# The light step's packages: all but those a heavy suite takes whole; and
# the tests a heavy suite takes from a package, skipped there.
light_pkgs=()
light_skip=()
{
  whole=()
  for h in "${heavy[@]}"; do
    if [ -z "$(field "$h" 3)" ]; then
      whole+=("$module/$(field "$h" 2 | sed 's|^\./||')")
    else
      light_skip+=("$(field "$h" 3)")
    fi
  done
  while read -r p; do
    keep=1
    for w in "${whole[@]}"; do [ "$p" = "$w" ] && keep=0; done
    [ $keep = 1 ] && light_pkgs+=("$p")
  done < <(go list "${only[@]:-./...}")
}
skip_pattern=$(IFS='|'; echo "${light_skip[*]}")

if [ $want_list = 1 ]; then
  echo "checks   gofmt, go vet ./..., go mod tidy"
  echo "light    ${#light_pkgs[@]} packages, go test -race, -timeout $((light_timeout * scale))m each, skipping $skip_pattern"
  for h in "${heavy[@]}"; do
    run=$(field "$h" 3)
    printf '%-8s %s%s%s, -timeout %sm: %s\n' "$(field "$h" 1)" "$(field "$h" 2)" "${run:+ -run $run}" "$(field "$h" 6 | sed 's/^./ &/')" "$(($(field "$h" 4) * scale))" "$(field "$h" 5)"
  done
  echo "fuzz     scripts/fuzz.sh, FUZZTIME=${FUZZTIME:-5s} per target"
  exit 0
fi

logdir=$(mktemp -d "${TMPDIR:-/tmp}/loadout-test.XXXXXX")
results=() # "name|PASS/FAIL/SKIP|seconds|details"
started=$SECONDS

record() { results+=("$1|$2|$3|$4"); }

# failures LOG: the failing packages of a go test log, each with its
# failing tests (and the test that was running when the binary timed out).
failures() {
  awk '
    /^panic: test timed out after/ { timedout = 1; next }
    timedout && /^\t\t[^ ]+ \(/ { t = $1; tests = tests (tests ? ", " : "") t " (timed out)"; next }
    /^ *--- FAIL: / { t = $3; tests = tests (tests ? ", " : "") t; next }
    /^FAIL\t/ {
      pkg = $2; sub(/^github.com\/loadout\/loadout/, ".", pkg)
      extra = $3 == "[build" || $3 == "[setup" ? " " $3 " " $4 : ""
      print pkg extra (tests ? ": " tests : "")
      tests = ""; timedout = 0; next
    }
    /^ok  \t/ { tests = ""; timedout = 0 }
  ' "$1"
}

# step NAME CMD...: runs CMD, showing its output and keeping it in a log,
# and records the result.
step() {
  local name=$1 t0=$SECONDS rc
  shift
  echo
  # The command as typed, with the module's packages shortened (./x) and
  # a long list of them counted rather than spelled out.
  local shown=() pkgs=0 a
  for a in "$@"; do
    case "$a" in
      "$module" | "$module"/*) pkgs=$((pkgs + 1)); [ $pkgs -le 4 ] && shown+=(".${a#"$module"}") ;;
      *) shown+=("$a") ;;
    esac
  done
  [ $pkgs -gt 4 ] && shown+=("… $pkgs packages in all (scripts/test.sh list)")
  echo "=== $name: ${shown[*]}"
  "$@" 2>&1 | tee "$logdir/$name.log"
  rc=${PIPESTATUS[0]}
  if [ "$rc" = 0 ]; then
    record "$name" PASS $((SECONDS - t0)) ""
  else
    local why
    why=$(failures "$logdir/$name.log" | paste -sd ';' -)
    record "$name" FAIL $((SECONDS - t0)) "${why:-exit status $rc, see $logdir/$name.log}"
  fi
}

check_gofmt() {
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bench/pi/*'))
  if [ -n "$unformatted" ]; then
    echo "gofmt would change:"
    echo "$unformatted"
    return 1
  fi
}

check_tidy() {
  local tmp rc=0
  tmp=$(mktemp -d)
  cp go.mod go.sum "$tmp/"
  go mod tidy || rc=1
  if ! cmp -s go.mod "$tmp/go.mod" || ! cmp -s go.sum "$tmp/go.sum"; then
    echo "go mod tidy changed go.mod or go.sum: run it and commit the result"
    cp "$tmp/go.mod" "$tmp/go.sum" .
    rc=1
  fi
  rm -rf "$tmp"
  return $rc
}

# A throwaway PostgreSQL for the store tests, unless one is given.
postgres() {
  [ -n "${LOADOUT_TEST_POSTGRES:-}" ] && return 0
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "installing postgresql (Debian package) for the store tests"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null ||
      return 1
  fi
  local env
  env=$(scripts/pg.sh start) || return 1
  eval "$env"
  trap 'scripts/pg.sh stop "$LOADOUT_PG_DIR"' EXIT
  echo "PostgreSQL for the tests: ${LOADOUT_TEST_POSTGRES##*@}"
}

if [ $want_checks = 1 ]; then
  step gofmt check_gofmt
  step vet go vet ./...
  step tidy check_tidy
fi

if [ $want_light = 1 ] || [ ${#want_heavy[@]} -gt 0 ]; then
  t0=$SECONDS
  if ! postgres >"$logdir/postgres.log" 2>&1; then
    cat "$logdir/postgres.log"
    record postgres FAIL $((SECONDS - t0)) "no PostgreSQL for the store tests: see $logdir/postgres.log"
  fi
  cat "$logdir/postgres.log"
fi

if [ $want_light = 1 ] && [ ${#light_pkgs[@]} = 0 ]; then
  record light SKIP 0 "no light package in ${only[*]}"
elif [ $want_light = 1 ]; then
  step light go test -race -count=1 -timeout "$((light_timeout * scale))m" ${skip_pattern:+-skip "$skip_pattern"} "${light_pkgs[@]}"
fi

for n in "${want_heavy[@]}"; do
  for h in "${heavy[@]}"; do
    [ "$(field "$h" 1)" = "$n" ] || continue
    run=$(field "$h" 3)
    echo
    echo "--- $n: $(field "$h" 5)"
    # shellcheck disable=SC2046
    race=$(field "$h" 6)
    step "$n" go test ${race:+"$race"} -count=1 -timeout "$(($(field "$h" 4) * scale))m" ${run:+-run "$run"} $(field "$h" 2)
  done
done

# Every fuzz target for a short fixed time (FUZZTIME, 5s each by default),
# with its committed seed corpus; FUZZTIME=0 skips this step.
if [ $want_fuzz = 1 ]; then
  if [ "${FUZZTIME:-5s}" = "0" ]; then
    record fuzz SKIP 0 "FUZZTIME=0"
  else
    t0=$SECONDS
    scripts/fuzz.sh "${only[@]}" 2>&1 | tee "$logdir/fuzz.log"
    if [ "${PIPESTATUS[0]}" = 0 ]; then
      record fuzz PASS $((SECONDS - t0)) ""
    else
      why=$(awk 'f && /^  / { sub(/^  /, ""); print } /^fuzz.sh: [0-9]+ of [0-9]+ targets failed:/ { f = 1 }' "$logdir/fuzz.log" | paste -sd ';' -)
      record fuzz FAIL $((SECONDS - t0)) "${why:-see $logdir/fuzz.log}"
    fi
  fi
fi

# The summary: every step, then what failed, by name.
status=0
echo
echo "=== summary ($(( (SECONDS - started) / 60 ))m$(( (SECONDS - started) % 60 ))s; logs in $logdir)"
for r in "${results[@]}"; do
  IFS='|' read -r name res secs _ <<<"$r"
  printf '%-4s %-9s %dm%02ds\n' "$res" "$name" $((secs / 60)) $((secs % 60))
  [ "$res" = FAIL ] && status=1
done
for r in "${results[@]}"; do
  IFS='|' read -r name res _ details <<<"$r"
  [ "$res" = FAIL ] || continue
  echo "FAILED $name:"
  echo "$details" | tr ';' '\n' | sed 's/^/  /'
done
[ $status = 0 ] && echo "all steps passed"
exit $status
