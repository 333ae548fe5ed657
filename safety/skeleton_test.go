package safety

import "testing"

// Skeleton returns a name that is its own skeleton without building it
// again; the result must be what building it gives.
func TestSkeletonFastPath(t *testing.T) {
	for _, name := range []string{"", "deploy", "code-review", "vendor-publish-26347", "pdf2text", "Deploy", "dep1oy",
		"modern", "savvy", "my_skill", "a|b", "Ιnfo", "dеploy", "ｄeploy", "x0", "pi-agent", "rn", "v", "ok-9"} {
		if got, want := Skeleton(name), skeletonOf(name); got != want {
			t.Errorf("Skeleton(%q) = %q, want %q", name, got, want)
		}
	}
	// The fast path is taken for plain names, and only for them.
	for name, plain := range map[string]bool{"deploy": true, "pdf-tools": true, "Deploy": false, "dep1oy": false, "turn": false, "my_skill": false, "dеploy": false} {
		if got := skeletonIsName(name); got != plain {
			t.Errorf("skeletonIsName(%q) = %v, want %v", name, got, plain)
		}
	}
}

func FuzzSkeleton(f *testing.F) {
	for _, s := range []string{"deploy", "Dep1oy", "modern", "ｄeploy", "a_b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := Skeleton(name), skeletonOf(name); got != want {
			t.Fatalf("Skeleton(%q) = %q, skeletonOf = %q", name, got, want)
		}
	})
}
