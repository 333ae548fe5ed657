package httpapi_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/storetest"
)

// storeState is every stored skill's versions with their digests and
// bytes, to compare a store before and after a request.
func storeState(t *testing.T, st store.Store) map[string]string { return storetest.State(t, st) }

type importRow struct {
	Name, Action, Error string
	Version             int
}

func importRows(t *testing.T, r resp) ([]importRow, string) {
	t.Helper()
	var body struct {
		Results []importRow
		Message string
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	return body.Results, body.Message
}

// An import with a refused document writes nothing by default, and says
// of every document what happened and why; ?partial=1 writes the rest.
func TestImportAllOrNothing(t *testing.T) {
	e := newEnv(t, baseFiles)
	want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, "kept", "Kept.", "v1")), 201)
	mixed := []byte("[" + string(doc(t, "kept", "Kept.", "v2")) + "," + string(doc(t, "fresh-one", "Fresh.", "a")) + "," +
		`{"schemaVersion": 2, "skill": {"content": "---\nname: nodesc\n---\nno description\n"}},` +
		`{"schemaVersion": 2, "skill": {"content": 7}}]`)
	before := storeState(t, e.st)

	r := e.do(t, "POST", "/v1/import", e.admin, mixed)
	want(t, r, 422)
	rows, msg := importRows(t, r)
	if len(rows) != 4 {
		t.Fatalf("want a result for each of 4 documents: %s", r.body)
	}
	for i, w := range []importRow{{Name: "kept", Action: "skipped"}, {Name: "fresh-one", Action: "skipped"}, {Action: "refused"}, {Action: "refused"}} {
		if rows[i].Name != w.Name && w.Name != "" || rows[i].Action != w.Action || rows[i].Error == "" || rows[i].Version != 0 {
			t.Errorf("document %d: %+v, want %s with why", i, rows[i], w.Action)
		}
	}
	if !strings.Contains(rows[0].Error, `not written because item 2 (POST /v1/import [2]) and 1 other item of this import were refused`) ||
		!strings.Contains(rows[2].Error, "description") || !strings.Contains(rows[3].Error, "[3].skill.content") {
		t.Errorf("the reasons do not name what was refused: %s", r.body)
	}
	if !strings.Contains(msg, "nothing was written") || !strings.Contains(msg, "partial=1") {
		t.Errorf("message %q", msg)
	}
	if d := cmp.Diff(before, storeState(t, e.st)); d != "" {
		t.Errorf("a refused import changed the store (-before +after):\n%s", d)
	}
	want(t, e.do(t, "GET", "/v1/skills/fresh-one", e.admin, nil), 404)

	wantErr(t, e.do(t, "POST", "/v1/import?partial=maybe", e.admin, mixed), 400, "bad_request")
	if d := cmp.Diff(before, storeState(t, e.st)); d != "" {
		t.Errorf("a bad request changed the store:\n%s", d)
	}

	// partial=1: the accepted documents are written, the refused ones not.
	r = e.do(t, "POST", "/v1/import?partial=1", e.admin, mixed)
	want(t, r, 422)
	rows, msg = importRows(t, r)
	if len(rows) != 4 || rows[0] != (importRow{Name: "kept", Action: "updated", Version: 2}) || rows[1] != (importRow{Name: "fresh-one", Action: "created", Version: 1}) ||
		rows[2].Action != "refused" || rows[3].Action != "refused" || !strings.Contains(msg, "partial") {
		t.Errorf("partial import: %s", r.body)
	}
	after := storeState(t, e.st)
	wantKeys := []string{"fresh-one v1", "kept v1", "kept v2"}
	var keys []string
	for k := range after {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if d := cmp.Diff(wantKeys, keys); d != "" {
		t.Errorf("stored versions after the partial import (-want +got):\n%s", d)
	}
	if !strings.Contains(after["kept v2"], `"---\nname: kept\ndescription: Kept.\n---\nv2\n"`) || after["kept v1"] != strings.Replace(before["kept v1"], "current 1", "current 2", 1) {
		t.Errorf("kept: %v", after)
	}
	want(t, e.do(t, "GET", "/v1/skills/fresh-one", e.admin, nil), 200)

	// Nothing refused: 200 either way.
	ok := []byte("[" + string(doc(t, "beta-two", "B.", "b")) + "]")
	want(t, e.do(t, "POST", "/v1/import?partial=1", e.admin, ok), 200)
	want(t, e.do(t, "POST", "/v1/import?partial=0", e.admin, ok), 200)
}
