#!/usr/bin/env bash
# listing.sh: how useful the skills listing is at every catalog size.
# For catalogs of 50, 200, 427, 2,000 and 10,000 skills, each format (pi,
# catalog, progressive) and budgets of 4,000, 8,000 and 16,000 characters,
# it prints loadout's figures beside two peers modelled as they are, on the
# same catalog and usage counts (bench/cmd/listing/peers.go cites both):
#   claude  Claude Code, from its documentation: every name always listed,
#           even past the budget (the row then says OVER BUDGET); each
#           description capped at 1,536 characters; whole descriptions of
#           the least-used skills dropped first until the listing fits
#   codex   Codex, from codex-rs/core-skills/src/render.rs: name order;
#           descriptions shared round robin only while every bare
#           "- name: (file: path)" line fits, else none at all and the
#           lines that do not fit left out; short r0/... paths when they
#           list more; its warning to the user printed under its row
# Columns:
#   named      skills whose name is in the listing (percent)
#   described  skills whose description is there with at least the floor
#              (FLOOR characters, or its first sentence when shorter)
#   used described  of the skills with a usage count (Zipf, about 178), how
#              many are described so; then the share of all uses that fall
#              on a described skill
#   chars      characters used of the budget (a peer's by its own rule)
#   render     mean time of one render (loadout: render.Prompt)
#   fixed      loadout rows: the format's fixed text (heading, rules,
#              closing). "loadout FORMAT" has budget B with that text
#              counted (loadout's rule); "loadout FORMAT +frame" has B plus
#              it, as the peers' budgets count only their skill lines.
# It renders with whatever the render package of this checkout does.
# Catalogs are the example skills plus, with CORPUS (comma-separated
# folders of real skill collections, read for every SKILL.md), a seeded
# sample of those real skills; without it, generated skills whose name and
# description lengths are fitted to real collections (see bench/cmd/listing).
# A size larger than the corpus is skipped, with a message.
#
#   bench/listing.sh                      # the full table, generated skills
#   CORPUS=/src/skills-a,/src/skills-b bench/listing.sh   # real skills
#   SIZES=200 BUDGETS=8000 bench/listing.sh
#   FLOOR=60 MINTIME=100ms bench/listing.sh
#   SUMMARY=16000 bench/listing.sh        # the closing table at 16,000
#   STRICT=1 bench/listing.sh             # exit 1 if a target is missed
#   PREFIX=1 bench/listing.sh             # also how much of the listing each change keeps
#                                         # as its byte prefix (prompt caching), kept and fresh
# After the tables, a Markdown summary per size at SUMMARY characters
# (default 8,000), then the targets missed: over the budget; fewer skills
# named or described than the better peer within its own budget (a peer
# over it never counts; compared on the +frame rows); not every skill
# named at 500 skills and 8,000 characters in catalog and progressive (on
# the "loadout FORMAT" rows, when SIZES has 500); a render of 10,000
# skills over 5 ms (meaningful on a quiet machine only).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-50,200,427,2000,10000}
BUDGETS=${BUDGETS:-4000,8000,16000}
FORMATS=${FORMATS:-pi,catalog,progressive}
FLOOR=${FLOOR:-60}
MINTIME=${MINTIME:-30ms}
STRICT=${STRICT:-}
PREFIX=${PREFIX:-}
CORPUS=${CORPUS:-}
SEED=${SEED:-1}
SUMMARY=${SUMMARY:-8000}
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
cores=$(nproc 2>/dev/null || echo 1)
if awk -v l="$load" -v c="$cores" 'BEGIN{exit !(l > c/2)}'; then
	echo "listing.sh: load average $load on $cores cores: render times are not meaningful" >&2
fi
go run ./bench/cmd/listing -sizes "$SIZES" -budgets "$BUDGETS" -formats "$FORMATS" -floor "$FLOOR" -mintime "$MINTIME" -seed "$SEED" -summary "$SUMMARY" ${CORPUS:+-corpus "$CORPUS"} ${STRICT:+-strict} ${PREFIX:+-prefix}
