// Package semrange picks tags by a semver range: the one package that
// imports github.com/Masterminds/semver/v3 (which the library packages
// may not: it brings database/sql/driver). cmd checks a config's ranges
// with Parse before it runs; an oci source picks the highest tag in its
// range with Highest. The config's own check is catalog.CheckTagRange.
package semrange

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// MaxRangeLen bounds a range's text.
const MaxRangeLen = 256

// Range is a parsed semver range, like ">=1.2 <2" or "^1.4" or "~1.2.3".
type Range struct {
	text string
	c    *semver.Constraints
}

// Parse reads a range in Masterminds/semver's syntax: comparisons
// (=, !=, >, <, >=, <=) separated by spaces or commas (and), "||" (or),
// "1.2 - 1.4", "~1.2", "^1.2", "1.x".
func Parse(s string) (*Range, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("is empty: give a semver range, like \">=1.2 <2\" or \"^1.4\"")
	}
	if len(s) > MaxRangeLen {
		return nil, fmt.Errorf("is %d characters, over the limit of %d", len(s), MaxRangeLen)
	}
	c, err := semver.NewConstraint(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a semver range (%v): give one like \">=1.2 <2\", \"^1.4\" or \"~1.2.3\"", s, err)
	}
	return &Range{text: s, c: c}, nil
}

func (r *Range) String() string { return r.text }

// Highest is the tag with the highest version in the range, and false if
// none is. Tags that are not versions ("latest", "main") are passed over;
// a leading "v" is allowed ("v1.2.0"). A prerelease ("1.3.0-rc.1") is in
// the range only when the range names a prerelease itself, as in npm and
// Cargo. Of two tags of one version ("1.2.0" and "v1.2.0") the first in
// tags wins.
func (r *Range) Highest(tags []string) (string, bool) {
	var best *semver.Version
	bestTag := ""
	for _, t := range tags {
		v, err := semver.NewVersion(t)
		if err != nil || !r.c.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestTag = v, t
		}
	}
	return bestTag, best != nil
}
