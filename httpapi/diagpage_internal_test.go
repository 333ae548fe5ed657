package httpapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/skill"
)

// The pages of one report kept for GET /v1/diagnostics stay within
// MaxDiagPageBytes (each counted twice, for its gzip form): past it the
// page cache starts afresh, and a page kept is served again, not rebuilt.
func TestDiagPagesBounded(t *testing.T) {
	ds := make([]skill.Diagnostic, 40000)
	for i := range ds {
		ds[i] = skill.Diagnostic{Severity: skill.Warning, Code: "x", Skill: fmt.Sprintf("s%05d", i), Message: strings.Repeat("m", 400)}
	}
	e, err := newDiagEntry(catalog.NewReport(ds))
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for off := 0; off < len(ds); off += MaxDiagLimit {
		b, _, err := e.page(off, MaxDiagLimit)
		if err != nil {
			t.Fatal(err)
		}
		if again, _, _ := e.page(off, MaxDiagLimit); again != b {
			t.Fatalf("page at %d built twice", off)
		}
		if e.pageBytes > MaxDiagPageBytes {
			t.Fatalf("the pages kept count %d bytes, over MaxDiagPageBytes (%d)", e.pageBytes, MaxDiagPageBytes)
		}
		most = max(most, e.pageBytes)
	}
	// The bound was reached (so the test tests it): 40 pages of about
	// 450 KB, counted twice, are more than MaxDiagPageBytes.
	if most < MaxDiagPageBytes/2 {
		t.Fatalf("the pages kept reached only %d bytes", most)
	}
}
