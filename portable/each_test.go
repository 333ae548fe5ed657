package portable

import (
	"testing"

	"github.com/loadout/loadout/skill"
)

// ImportJSONEach reads every document of an array on its own, so one bad
// document is reported without hiding the others.
func TestImportJSONEach(t *testing.T) {
	one := doc(`{"path":"a.md","content":"x"}`)
	bad := doc(`{"path":"../x","content":"x"}`)
	bs, errs, err := ImportJSONEach([]byte(`[` + one + `,` + bad + `,1,` + one + `]`))
	if err != nil || len(bs) != 4 || len(errs) != 4 {
		t.Fatalf("%d bundles, %d errors, %v", len(bs), len(errs), err)
	}
	if bs[0] == nil || errs[0] != nil || bs[3] == nil || errs[3] != nil {
		t.Errorf("good documents: %v %v", errs[0], errs[3])
	}
	if bs[1] != nil || bs[2] != nil {
		t.Error("a refused document also gave a bundle")
	}
	wantCode(t, errs[1], skill.CodePathDotDot)
	if e, ok := errs[1].(*Error); !ok || e.Entry != "[1].skill.files[0] (../x)" {
		t.Errorf("entry: %v", errs[1])
	}
	wantCode(t, errs[2], CodeJSONInvalid)
	if e, ok := errs[2].(*Error); !ok || e.Entry != "[2]" {
		t.Errorf("entry: %v", errs[2])
	}
	// One document.
	bs, errs, err = ImportJSONEach([]byte(one))
	if err != nil || len(bs) != 1 || bs[0] == nil || errs[0] != nil {
		t.Errorf("one document: %v %v %v", bs, errs, err)
	}
	bs, errs, err = ImportJSONEach([]byte(bad))
	if err != nil || len(bs) != 1 || bs[0] != nil {
		t.Errorf("one bad document: %v %v", bs, err)
	}
	wantCode(t, errs[0], skill.CodePathDotDot)
	// Not JSON at all: nothing read.
	bs, _, err = ImportJSONEach([]byte(`[1,`))
	if bs != nil {
		t.Error("bundles from broken JSON")
	}
	wantCode(t, err, CodeJSONInvalid)
}
