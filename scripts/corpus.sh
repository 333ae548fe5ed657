#!/usr/bin/env bash
# The public skill collections TestPublicCorpora (safety/corpus_test.go)
# reads, at the commits its figures were taken at, as the SKILL.md files
# only (one folder per repository, owner+name). Prints the folder, for
#
#   export LOADOUT_SAFETY_CORPUS="$(scripts/corpus.sh)"
#
# DIR defaults to $XDG_CACHE_HOME/loadout/corpus (~/.cache/...); a
# repository already there at its commit is not fetched again. Needs git
# and the network (github.com); nothing of it ships with loadout.
set -euo pipefail

die() { echo "corpus.sh: $*" >&2; exit 1; }
command -v git >/dev/null 2>&1 || die "git is needed (apt-get install git)"

dir="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/loadout/corpus}"
mkdir -p "$dir"

# owner/name commit: the figures in the README (18, 10 and 419 skills).
while read -r repo commit; do
  out="$dir/${repo/\//+}"
  if [ -f "$out/.commit" ] && [ "$(cat "$out/.commit")" = "$commit" ]; then
    continue
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  git -C "$tmp" init -q
  git -C "$tmp" fetch -q --depth 1 "https://github.com/$repo.git" "$commit" \
    || die "fetching $repo at $commit failed"
  rm -rf "$out.new"
  mkdir -p "$out.new"
  git -C "$tmp" ls-tree -r -z --name-only FETCH_HEAD | grep -z '\(^\|/\)SKILL\.md$' \
    | while IFS= read -r -d '' f; do
        mkdir -p "$out.new/$(dirname "$f")"
        git -C "$tmp" show "FETCH_HEAD:$f" >"$out.new/$f"
      done
  echo "$commit" >"$out.new/.commit"
  rm -rf "$out"
  mv "$out.new" "$out"
  rm -rf "$tmp"
  trap - EXIT
done <<'LIST'
anthropics/skills 9d2f1ae187231d8199c64b5b762e1bdf2244733d
openai/skills f6b8344b4e519f964d8884d6f60b57991f3f4993
github/awesome-copilot ab7544d03d4c49fdd07f5958e1888ad39c4118e2
LIST
echo "$dir"
