package semrange

import "testing"

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
