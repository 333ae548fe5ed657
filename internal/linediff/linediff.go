// Package linediff is a line diff (Myers' O(ND) algorithm) bounded in
// the lines it takes and the edits it looks for, so a diff of two large
// files costs a known, small amount of time and memory. The web UI's
// version and review diffs, and the API's and CLI's review diffs, all use
// it.
package linediff

import "strings"

// Bounds of a diff.
const (
	// MaxLines is the most lines a side may have (after the common start
	// and end are set aside); a longer file gets no line diff.
	MaxLines = 20_000
	// MaxEdits is the most inserted plus deleted lines searched for; past
	// it the files are too different for a line diff. The search keeps
	// one array per edit, so memory grows with its square (about 8 MB at
	// 1,000).
	MaxEdits = 1000
)

// Line is one line of a diff: Op is ' ' (in both), '-' (only the old) or
// '+' (only the new); Old and New are 1-based line numbers (0 when the
// line is not on that side).
type Line struct {
	Op       byte
	Old, New int
	Text     string
}

// Sign is the line's mark as a string, for templates.
func (d Line) Sign() string { return string(d.Op) }

// Class is the CSS class of the line.
func (d Line) Class() string {
	switch d.Op {
	case '-':
		return "del"
	case '+':
		return "add"
	}
	return "ctx"
}

// Label is the line's change in words, for screen readers.
func (d Line) Label() string {
	switch d.Op {
	case '-':
		return "removed"
	case '+':
		return "added"
	}
	return "unchanged"
}

// Hunk is a run of changes with their context.
type Hunk struct {
	Lines []Line
}

// Split splits text into lines without their line ends (a final line
// end, and a carriage return before each, are dropped).
func Split(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// Diff diffs a and b, whole: every line of both, marked. ok is false
// when the diff is past the bounds (MaxLines, MaxEdits).
func Diff(a, b []string) (lines []Line, ok bool) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma) > MaxLines || len(mb) > MaxLines {
		return nil, false
	}
	mid, ok := myers(ma, mb)
	if !ok {
		return nil, false
	}
	out := make([]Line, 0, pre+len(mid)+suf)
	for i := 0; i < pre; i++ {
		out = append(out, Line{Op: ' ', Old: i + 1, New: i + 1, Text: a[i]})
	}
	for _, l := range mid {
		if l.Old > 0 {
			l.Old += pre
		}
		if l.New > 0 {
			l.New += pre
		}
		out = append(out, l)
	}
	for i := 0; i < suf; i++ {
		ai, bi := len(a)-suf+i, len(b)-suf+i
		out = append(out, Line{Op: ' ', Old: ai + 1, New: bi + 1, Text: a[ai]})
	}
	return out, true
}

// myers finds a shortest edit script from a to b, with at most
// MaxEdits edits.
func myers(a, b []string) ([]Line, bool) {
	n, m := len(a), len(b)
	maxD := min(n+m, MaxEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: an insertion
			} else {
				x = v[off+k-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return nil, false
	}
	// Walk back through the trace, from (n, m).
	var rev []Line
	x, y := n, m
	for d := found; d > 0; d-- {
		vp := trace[d]
		k := x - y
		var pk int
		if k == -d || (k != d && vp[off+k-1] < vp[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := vp[off+pk]
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, Line{Op: ' ', Old: x + 1, New: y + 1, Text: a[x]})
		}
		if x == px {
			y--
			rev = append(rev, Line{Op: '+', New: y + 1, Text: b[y]})
		} else {
			x--
			rev = append(rev, Line{Op: '-', Old: x + 1, Text: a[x]})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, Line{Op: ' ', Old: x + 1, New: y + 1, Text: a[x]})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev, true
}

// Hunks groups a diff's changes with context lines around each.
func Hunks(lines []Line, context int) []Hunk {
	var out []Hunk
	var cur *Hunk
	lastChange := -1 << 30
	for i, l := range lines {
		if l.Op == ' ' {
			continue
		}
		start := max(0, i-context)
		if cur != nil && start <= lastChange+context+1 {
			// extend the current hunk up to this change
			for j := lastChange + 1; j <= i; j++ {
				cur.Lines = append(cur.Lines, lines[j])
			}
		} else {
			if cur != nil {
				end := min(len(lines), lastChange+1+context)
				cur.Lines = append(cur.Lines, lines[lastChange+1:end]...)
				out = append(out, *cur)
			}
			cur = &Hunk{Lines: append([]Line(nil), lines[start:i+1]...)}
		}
		lastChange = i
	}
	if cur != nil {
		end := min(len(lines), lastChange+1+context)
		cur.Lines = append(cur.Lines, lines[lastChange+1:end]...)
		out = append(out, *cur)
	}
	return out
}
