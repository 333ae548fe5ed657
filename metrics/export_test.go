package metrics

import (
	"strconv"
	"strings"
	"testing"
)

// ParseSamples reads a text exposition: each sample line's name and
// labels (as written: client_golang sorts the labels) to its value.
func ParseSamples(t testing.TB, text string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("exposition line without a value: %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("exposition line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// CountFamily counts the samples of the family name (its own name, not
// its _bucket, _sum or _count lines).
func CountFamily(s map[string]float64, name string) int {
	n := 0
	for k := range s {
		if k == name || strings.HasPrefix(k, name+"{") {
			n++
		}
	}
	return n
}
