package safety

import (
	"hash/maphash"
	"reflect"
	"testing"
)

// TestSimilarListedHashClash: when every skeleton hashes alike, the
// confusable names found are the same as with a real hash: a shared hash
// is never taken for a shared skeleton.
func TestSimilarListedHashClash(t *testing.T) {
	skills := []Listed{
		{Name: "deploy", Description: "Ships the app."},
		{Name: "dep1oy", Description: "Ships the app too."},
		{Name: "lint", Description: "Lints code."},
		{Name: "rollback", Description: "Rolls back."},
		{Name: "ro11back", Description: "Rolls back again."},
		{Name: "lint", Description: "The same name, another source."},
	}
	want := SimilarListed(skills, nil)
	if len(want) != 2 {
		t.Fatalf("with a real hash: %v, want the two look-alike pairs", want)
	}
	defer func(h func(maphash.Seed, string) uint64) { skeletonHash = h }(skeletonHash)
	skeletonHash = func(maphash.Seed, string) uint64 { return 7 }
	if got := SimilarListed(skills, nil); !reflect.DeepEqual(got, want) {
		t.Errorf("every hash alike:\n got %v\nwant %v", got, want)
	}
}
