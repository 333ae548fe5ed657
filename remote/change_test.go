package remote

import (
	"errors"
	"slices"
	"testing"

	"github.com/loadout/loadout/skill"
)

// TestChangeSummary: the line a sync prints, and the diagnostic it keeps,
// for each outcome: a failure (said once, without the source twice), no
// move, a move with nothing changed, and a move that adds, removes,
// changes and leaves files unloaded.
func TestChangeSummary(t *testing.T) {
	const a, b = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	for _, tc := range []struct {
		name string
		ch   Change
		want string
		diag string // "" when the change makes no diagnostic
		sev  skill.Severity
		code string
	}{
		{"failed", Change{ID: "s", Err: Errorf("s", CodeNetwork, "offline")},
			"s: sync failed: source s: offline",
			"remote source s: offline; the last good snapshot is kept", skill.Error, CodeNetwork},
		{"failed, not an *Error", Change{ID: "s", Err: errors.New("disk full")},
			"s: sync failed: disk full",
			"remote source s: disk full; the last good snapshot is kept", skill.Error, CodeNetwork},
		{"unchanged", Change{ID: "s", From: a, To: a},
			"s: unchanged at aaaaaaaaaaaa", "", "", ""},
		{"first sync", Change{ID: "s", To: a, Moved: true, Added: []string{"pdf"}},
			"s: nothing → aaaaaaaaaaaa; 1 added (pdf)",
			"remote source s: nothing → aaaaaaaaaaaa; 1 added (pdf)", skill.Info, CodeSynced},
		{"moved, no skill changed", Change{ID: "s", From: a, To: b, Moved: true},
			"s: aaaaaaaaaaaa → bbbbbbbbbbbb; no skill changed",
			"remote source s: aaaaaaaaaaaa → bbbbbbbbbbbb; no skill changed", skill.Info, CodeSynced},
		{"moved, one of each", Change{ID: "s", From: a, To: b, Moved: true,
			Added: []string{"a1", "a2"}, Removed: []string{"r"}, Changed: []string{"c"}, Broken: []string{"x/SKILL.md: yaml-invalid: line 3"}},
			"s: aaaaaaaaaaaa → bbbbbbbbbbbb; 2 added (a1, a2); 1 removed (r); 1 changed (c); 1 not loaded: x/SKILL.md: yaml-invalid: line 3",
			"remote source s: aaaaaaaaaaaa → bbbbbbbbbbbb; 2 added (a1, a2); 1 removed (r); 1 changed (c); 1 not loaded: x/SKILL.md: yaml-invalid: line 3", skill.Info, CodeSynced},
		{"moved, only a file not loaded", Change{ID: "s", From: a, To: b, Moved: true, Broken: []string{"x/SKILL.md: e: m", "y/SKILL.md: e: m"}},
			"s: aaaaaaaaaaaa → bbbbbbbbbbbb; no skill changed; 2 not loaded: x/SKILL.md: e: m; y/SKILL.md: e: m",
			"remote source s: aaaaaaaaaaaa → bbbbbbbbbbbb; no skill changed; 2 not loaded: x/SKILL.md: e: m; y/SKILL.md: e: m", skill.Info, CodeSynced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.ch.Summary(); got != tc.want {
				t.Errorf("Summary:\n got %q\nwant %q", got, tc.want)
			}
			ds := tc.ch.Diagnostics()
			if tc.diag == "" {
				if len(ds) != 0 {
					t.Errorf("Diagnostics: %v, want none", ds)
				}
				return
			}
			if len(ds) != 1 || ds[0].Message != tc.diag || ds[0].Severity != tc.sev || ds[0].Code != tc.code {
				t.Errorf("Diagnostics: %+v\nwant one %v %s %q", ds, tc.sev, tc.code, tc.diag)
			}
		})
	}
}

// TestShortRev: a commit is shown by its first 12 digits, a digest with
// its algorithm; shorter ones whole.
func TestShortRev(t *testing.T) {
	for in, want := range map[string]string{
		"0123456789abcdef0123":        "0123456789ab",
		"0123456789ab":                "0123456789ab",
		"0123456789a":                 "0123456789a",
		"sha256:0123456789abcdef0123": "sha256:0123456789ab",
		"sha256:0123456789ab":         "sha256:0123456789ab",
	} {
		if got := shortRev(in); got != want {
			t.Errorf("shortRev(%q) = %q, want %q", in, got, want)
		}
	}
	// One lost skill is "it", more are "they" (the CodeBroken message).
	if got := []string{plural(1, "it", "they"), plural(2, "it", "they")}; !slices.Equal(got, []string{"it", "they"}) {
		t.Errorf("plural: %v", got)
	}
}
