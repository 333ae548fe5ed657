package semrange

import (
	"testing"

	"github.com/loadout/loadout/catalog"
)

func TestHighest(t *testing.T) {
	tags := []string{"latest", "1.0.0", "1.2.0", "v1.4.1", "1.4.0", "2.0.0", "1.5.0-rc.1", "not-a-version", "1.10.0"}
	for _, c := range []struct {
		rng, want string
	}{
		{">=1.2 <2", "1.10.0"},
		{"^1.4", "1.10.0"},
		{"~1.4.0", "v1.4.1"},
		{"1.2.0", "1.2.0"},
		{">=2", "2.0.0"},
		{">=1.5.0-rc.0 <1.6", "1.5.0-rc.1"},
		{">=3", ""},
	} {
		r, err := Parse(c.rng)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.rng, err)
		}
		got, ok := r.Highest(tags)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%q: got %q %v, want %q", c.rng, got, ok, c.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, s := range []string{"", "  ", ">=1.2 <<2", "banana", string(make([]byte, MaxRangeLen+1))} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q): no error", s)
		}
	}
	long := ">=1.2"
	for len(long)+6 <= MaxRangeLen {
		long += " <9999"
	}
	if _, err := Parse(long); err != nil {
		t.Errorf("a range of %d characters (at the limit %d) is refused: %v", len(long), MaxRangeLen, err)
	}
}

// TestConfigCheckAgrees: every range the library parses passes the
// config's own check (catalog.CheckTagRange, made without the library),
// so the config never refuses a range the source would take.
func TestConfigCheckAgrees(t *testing.T) {
	for _, s := range []string{">=1.2 <2", "^1.4", "~1.2.3", "1.x", "1.2.*", "*", "1.2 - 1.4", ">=1.2, <2 || >=3", "=1.0.0", "!=1.1.0", "v1.2.0", ">=1.0.0-rc.1", "~>1.2", "=>1.0", "=<2", "1.2.3+build.7", ">= 1.2", "X"} {
		if _, err := Parse(s); err != nil {
			t.Errorf("the library refuses %q: %v", s, err)
			continue
		}
		if err := catalog.CheckTagRange(s); err != nil {
			t.Errorf("the library parses %q, but the config refuses it: %v", s, err)
		}
	}
}
