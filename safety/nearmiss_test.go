package safety_test

import (
	"strings"
	"testing"

	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
)

// Near misses of the policy, the placeholder test and the scan bound:
// each test sits at the edge a plausible bug would move.

// TestAllowScopedToOneFile: an allow entry with a path accepts the
// finding in that file only; the same code in another file keeps its
// severity.
func TestAllowScopedToOneFile(t *testing.T) {
	in := input("deploy", "See scripts/a.sh and scripts/b.sh.\n",
		skill.BundleFile{Path: "scripts/a.sh", Data: []byte("rm -rf ~\n")},
		skill.BundleFile{Path: "scripts/b.sh", Data: []byte("rm -rf ~\n")})
	p := &safety.Policy{Allow: []safety.Allow{{Skill: "deploy", Code: safety.CodeScriptRmRf, Path: "scripts/a.sh", Reason: "cleans the sandbox"}}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	got := map[string]skill.Severity{}
	for _, d := range safety.Check(in, p) {
		if d.Code == safety.CodeScriptRmRf {
			got[d.Path] = d.Severity
		}
	}
	if got["scripts/a.sh"] != skill.Info || got["scripts/b.sh"] != skill.Warning {
		t.Errorf("severities %v, want a.sh info (allowed) and b.sh warning", got)
	}
	// Another skill's entry accepts nothing here.
	q := &safety.Policy{Allow: []safety.Allow{{Skill: "other", Code: safety.CodeScriptRmRf, Reason: "x"}}}
	for _, d := range safety.Check(in, q) {
		if d.Code == safety.CodeScriptRmRf && d.Severity != skill.Warning {
			t.Errorf("another skill's entry applied: %v", d)
		}
	}
}

// TestLongestPatternWins: of two patterns matching a code, the longer
// decides, whichever list each is in.
func TestLongestPatternWins(t *testing.T) {
	for _, tc := range []struct {
		p    safety.Policy
		want skill.Severity
	}{
		{safety.Policy{Refuse: []string{"safety-script-*"}, Info: []string{"safety-*"}}, skill.Error},
		{safety.Policy{Refuse: []string{"safety-*"}, Info: []string{"safety-script-*"}}, skill.Info},
		{safety.Policy{Refuse: []string{"safety-s*"}, Warn: []string{"safety-script-r*"}, Info: []string{"safety-script-*"}}, skill.Warning},
		// An exact code beats any pattern.
		{safety.Policy{Refuse: []string{"safety-script-rm-rf"}, Info: []string{"safety-script-*"}}, skill.Error},
	} {
		p := tc.p
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		// Map order varies between runs: ask several times.
		for range 20 {
			if s, on := p.Severity(safety.CodeScriptRmRf); !on || s != tc.want {
				t.Fatalf("%+v: %s %v, want %s", tc.p, s, on, tc.want)
			}
		}
	}
}

// TestAllowWithoutReasonIgnored: a policy built in code (not parsed) with
// an allow entry that gives no reason does not accept the finding.
func TestAllowWithoutReasonIgnored(t *testing.T) {
	in := input("pdf", "a\u200Bb\n")
	for _, reason := range []string{"", "   "} {
		p := &safety.Policy{Allow: []safety.Allow{{Skill: "pdf", Code: safety.CodeZeroWidth, Reason: reason}}}
		d := find(safety.Check(in, p), safety.CodeZeroWidth)
		if d == nil || d.Severity != skill.Error || strings.HasPrefix(d.Message, "allowed") {
			t.Errorf("reason %q: %v", reason, d)
		}
	}
	p := &safety.Policy{Allow: []safety.Allow{{Skill: "pdf", Code: safety.CodeZeroWidth, Reason: "a Persian name"}}}
	if d := find(safety.Check(in, p), safety.CodeZeroWidth); d == nil || d.Severity != skill.Info {
		t.Errorf("with a reason: %v", d)
	}
}

// TestPlaceholderRuns: four equal characters in a row mark a placeholder,
// three do not (real keys have them by chance).
func TestPlaceholderRuns(t *testing.T) {
	three := "AKIA" + "Q3EGRK7WWWZP2NY5"
	four := "AKIA" + "Q3EGRK7WWWWP2NY5"
	if safety.Placeholder(three, 4) {
		t.Errorf("%s: three equal characters made a placeholder", three)
	}
	if !safety.Placeholder(four, 4) {
		t.Errorf("%s: four equal characters are not a placeholder", four)
	}
	if d := find(safety.Check(input("x", "key "+three+"\n"), nil), safety.CodeSecretAWS); d == nil {
		t.Errorf("key with a run of three not reported")
	}
	// Nine distinct characters is a placeholder, ten is not.
	if !safety.Placeholder("AKIA"+"ABCEFGHJKABCEFGH"[:9]+"ABCEFGH", 4) || safety.Placeholder("AKIA"+"QWERTYUPLMQWERTY", 4) {
		t.Errorf("distinct-character bound")
	}
}

// TestScanBoundExact: a file of exactly MaxScanBytes is scanned whole and
// not reported as cut; one byte more is.
func TestScanBoundExact(t *testing.T) {
	const max = 150
	for _, tc := range []struct {
		size int
		cut  bool
	}{{max - 1, false}, {max, false}, {max + 1, true}} {
		data := strings.Repeat("a", tc.size-3) + "\u200B" // U+200B is 3 bytes, at the very end
		in := input("x", "See references/f.md.\n", skill.BundleFile{Path: "references/f.md", Data: []byte(data)})
		ds := safety.Check(in, &safety.Policy{MaxScanBytes: max})
		if got := find(ds, safety.CodeScanTruncated) != nil; got != tc.cut {
			t.Errorf("%d bytes: truncated %v, want %v", tc.size, got, tc.cut)
		}
		if got := find(ds, safety.CodeZeroWidth) != nil; got == tc.cut {
			t.Errorf("%d bytes: last character scanned %v", tc.size, got)
		}
	}
}

// TestHiddenCodesUnderHiddenPattern: a policy written before the
// variation-selector and private-use codes existed, refusing
// "safety-hidden-*" as the README shows, refuses them too.
func TestHiddenCodesUnderHiddenPattern(t *testing.T) {
	p, err := safety.ParsePolicy([]byte(`{"refuse": ["safety-secret-*", "safety-hidden-*", "safety-bidi", "safety-zero-width"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{safety.CodeHiddenTag, safety.CodeVariationSelector, safety.CodePrivateUse} {
		if s, on := p.Severity(code); !on || s != skill.Error {
			t.Errorf("%s: %s %v under safety-hidden-*", code, s, on)
		}
	}
}
