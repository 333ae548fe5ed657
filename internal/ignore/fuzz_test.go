package ignore

import "testing"

// FuzzIgnore checks that no ignore file and path make the matcher panic, and
// that the ways of asking agree with each other.
func FuzzIgnore(f *testing.F) {
	f.Add("*.log\n!keep.log\n", "sub", "!x\n", "sub/a/keep.log", false)
	f.Add("[a-", "", "", "[a-", true)
	f.Add("**/x/**\n", "a", "/**/\n", "a/b/x/c", false)
	f.Fuzz(func(t *testing.T, root, dir, sub, rel string, isDir bool) {
		r := (*Rules)(nil).Add("", []byte(root))
		r2 := r.Add(dir, []byte(sub))
		before := r.Ignored(rel, isDir)
		ignored := r2.Ignored(rel, isDir)
		r2.IgnoredEntry(rel, isDir)
		m, ok := r2.Explain(rel, isDir)
		if ignored != (ok && !m.Negated) {
			t.Fatalf("Ignored = %v but Explain = %+v, %v", ignored, m, ok)
		}
		if r.Ignored(rel, isDir) != before {
			t.Fatal("Add changed its receiver")
		}
		// The one-word automaton and the general one must agree.
		for _, p := range parse([]byte(root + "\n" + sub)) {
			if p.kind == kindGlob && !p.never && len(p.tokens) < 64 {
				if a, b := matchSmall(p.tokens, rel), matchTokens(p.tokens, rel); a != b {
					t.Fatalf("pattern %q on %q: matchSmall %v, matchTokens %v", p.text, rel, a, b)
				}
			}
		}
	})
}
