#!/usr/bin/env bash
# skill-corpus.sh: fetch two large public skill collections, each at a
# pinned commit, into DIR (default .cache/skill-corpus), keeping only
# their SKILL.md files. bench/cmd/findability fills its catalogs with
# them (-filler-corpus), and bench/cmd/listing reads them with -corpus.
# Needs git and access to github.com; already fetched commits are kept.
# The small collections the requests are written from are fetched by
# scripts/safety-corpus.sh.
#
#   scripts/skill-corpus.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-${LOADOUT_FILLER_CORPUS_DIR:-.cache/skill-corpus}}
# SKILL_CORPUS_BASE: where the repositories are fetched from (OWNER/NAME
# under it), e.g. a folder of local mirrors.
base=${SKILL_CORPUS_BASE:-https://github.com}
mkdir -p "$dir"
while read -r name repo commit; do
	dest="$dir/$name"
	if [ -f "$dest/.commit" ] && [ "$(cat "$dest/.commit")" = "$commit" ]; then
		continue
	fi
	rm -rf "$dest" "$dest.git"
	git init -q --bare "$dest.git"
	git --git-dir="$dest.git" fetch -q --depth 1 "$base/$repo" "$commit"
	mkdir -p "$dest"
	# Only the SKILL.md files are kept: the rest is a few gigabytes.
	git --git-dir="$dest.git" archive "$commit" -- ':(glob)**/SKILL.md' | tar -x -C "$dest"
	rm -rf "$dest.git"
	echo "$commit" >"$dest/.commit"
	echo "skill corpus: $repo at $commit in $dest ($(find "$dest" -name SKILL.md | wc -l) SKILL.md)"
done <<'LIST'
gabrielmoreira+agent-skills-mirror gabrielmoreira/agent-skills-mirror 4e7649a87f4d537d80ff59a4fcf2857c2b28ff7e
tomevault-io+skills-registry tomevault-io/skills-registry afeda99b9b0a8d242cb03b4cb0edb4e84a86ba93
LIST
