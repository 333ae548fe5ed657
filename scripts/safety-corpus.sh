#!/usr/bin/env bash
# safety-corpus.sh: fetch the public skill collections the safety checks
# are tested against (safety/corpus_test.go: no error-severity finding on
# any of them), each at a pinned commit, into DIR (default
# .cache/safety-corpus, where the test looks; or set LOADOUT_SAFETY_CORPUS).
# Needs git and access to github.com. Already fetched commits are kept.
#
#   scripts/safety-corpus.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-${LOADOUT_SAFETY_CORPUS:-.cache/safety-corpus}}
mkdir -p "$dir"
while read -r name repo commit; do
	dest="$dir/$name"
	if [ -d "$dest/.git" ] && [ "$(git -C "$dest" rev-parse HEAD 2>/dev/null)" = "$commit" ]; then
		continue
	fi
	rm -rf "$dest"
	git init -q "$dest"
	git -C "$dest" fetch -q --depth 1 "https://github.com/$repo" "$commit"
	git -C "$dest" -c advice.detachedHead=false checkout -q FETCH_HEAD
	echo "safety corpus: $repo at $commit in $dest"
done <<'LIST'
anthropics+skills anthropics/skills 9d2f1ae187231d8199c64b5b762e1bdf2244733d
openai+skills openai/skills f6b8344b4e519f964d8884d6f60b57991f3f4993
github+awesome-copilot github/awesome-copilot ab7544d03d4c49fdd07f5958e1888ad39c4118e2
LIST
