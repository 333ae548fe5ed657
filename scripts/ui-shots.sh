#!/bin/sh
# Photographs every page of the web UI over a catalog of real size (the
# awesome-copilot collection, 402 skills; a git source; the store; two
# agents), light and dark, at 1280x800 and 375x800, into OUT:
#
#   scripts/ui-shots.sh docs/ui/after [CORPUS]
#
# CORPUS is a folder of skill folders; by default the collection's skills/
# are extracted from the git dir $AWESOME_COPILOT_GIT (a clone of
# github/awesome-copilot). The PNGs are at
# scale 1 with a 256-colour palette, at most 2000 px tall (see
# webui/e2e_shots_size_test.go).
set -eu
out=${1:?usage: scripts/ui-shots.sh OUT [CORPUS]}
corpus=${2:-}
cd "$(dirname "$0")/.."
if [ -z "$corpus" ]; then
	src=${AWESOME_COPILOT_GIT:?set AWESOME_COPILOT_GIT to the git dir of a clone of github/awesome-copilot, or pass a folder of skills as CORPUS}
	# A stable folder: the pages show its path, and before/after shots
	# should differ only by the UI.
	tmp=${TMPDIR:-/tmp}/loadout-shots-corpus
	rm -rf "$tmp" && mkdir -p "$tmp"
	trap 'rm -rf "$tmp"' EXIT
	git --git-dir="$src" archive HEAD skills | tar -x -C "$tmp"
	corpus=$tmp/skills
fi
mkdir -p "$out"
rm -f "$out"/*-laptop.png "$out"/*-phone.png
LOADOUT_SHOTS_DIR=$(cd "$out" && pwd) LOADOUT_SHOTS_CORPUS=$corpus \
	go test -count=1 -timeout 20m -run '^TestScreenshotsAtSize$' ./webui/
ls "$out"/*.png | wc -l
du -sh "$out"
