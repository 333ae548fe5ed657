package webui

import (
	"github.com/loadout/loadout/internal/linediff"
)

// The Versions tab's and the review queue's line diffs: internal/linediff,
// with the bounds of a whole diff of two versions.

// Bounds of a line diff.
const (
	// MaxDiffLines is the most lines a side may have (after the common
	// start and end are set aside); a longer file is reported changed
	// without a line diff.
	MaxDiffLines = linediff.MaxLines
	// MaxDiffEdits is the most inserted plus deleted lines searched for;
	// past it the files are reported as too different for a line diff.
	// The search keeps one array per edit, so memory grows with its square
	// (about 8 MB at 1,000).
	MaxDiffEdits = linediff.MaxEdits
	// MaxDiffFileBytes is the largest file (either side) given a line
	// diff; a larger one is reported changed with its sizes.
	MaxDiffFileBytes = 1 << 20
	// MaxDiffTotalLines bounds the lines of all the files one diff of two
	// versions compares; the files past it are reported changed without a
	// line diff. With MaxDiffEdits it bounds a whole diff's time.
	MaxDiffTotalLines = 200_000
	// diffContext is how many unchanged lines surround each change.
	diffContext = 3
)

// diffLine and hunk are linediff's, whose methods (Sign, Class, Label)
// the templates call.
type (
	diffLine = linediff.Line
	hunk     = linediff.Hunk
)

func splitLines(s string) []string { return linediff.Split(s) }

// lineDiff diffs a and b. ok is false when the diff is past the bounds
// (MaxDiffLines, MaxDiffEdits).
func lineDiff(a, b []string) ([]diffLine, bool) { return linediff.Diff(a, b) }

// hunks groups a diff's changes with diffContext lines around each.
func hunks(lines []diffLine) []hunk { return linediff.Hunks(lines, diffContext) }
