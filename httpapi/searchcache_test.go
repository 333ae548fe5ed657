package httpapi_test

import (
	"encoding/json"
	"testing"
)

// A repeated search is answered from the answer kept for its loadout,
// generations, query and limit: the same bytes under the same ETag (304
// on If-None-Match), with a few allocations whatever the catalog's size.
// Before, every request searched the index again and encoded the hits
// (about 300 allocations for this query at 200 skills), and the answer had
// no ETag.
func TestSearchAnsweredFromCache(t *testing.T) {
	e := newEnv(t, benchFiles())
	const path = "/v1/agents/coder/search?q=thing+number+benchmark&limit=20"
	first := e.serveGet(path)
	if first.Code != 200 {
		t.Fatalf("status %d: %s", first.Code, first.Body)
	}
	var body struct{ Skills []struct{ Name string } }
	if err := json.Unmarshal(first.Body.Bytes(), &body); err != nil || len(body.Skills) != 20 {
		t.Fatalf("%v: %d hits: %s", err, len(body.Skills), first.Body)
	}
	tag := first.Header().Get("ETag")
	if tag == "" {
		t.Fatal("no ETag: the answer is not one kept")
	}
	allocs := testing.AllocsPerRun(50, func() { e.serveGet(path) })
	if allocs > 60 {
		t.Errorf("a repeated search allocates %.0f times, want at most 60: it is not served from its cache", allocs)
	}
	again := e.serveGet(path)
	if again.Body.String() != first.Body.String() || again.Header().Get("ETag") != tag {
		t.Errorf("the repeated search differs:\n%s\n%s", first.Body, again.Body)
	}
	// Another limit or query is another answer.
	if other := e.serveGet("/v1/agents/coder/search?q=thing+number+benchmark&limit=5"); other.Header().Get("ETag") == tag {
		t.Error("limit=5 got limit=20's answer")
	}
}

// A write makes the next search see it: the kept answers are of the
// catalog's generation before it. The "no" case of the cache: a stale
// answer after a write.
func TestSearchCacheSeesWrites(t *testing.T) {
	e := newEnv(t, baseFiles)
	const path = "/v1/agents/coder/search?q=zebra+stripes"
	names := func() []string {
		r := e.do(t, "GET", path, e.coder, nil)
		want(t, r, 200)
		var body struct{ Skills []struct{ Name string } }
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range body.Skills {
			out = append(out, h.Name)
		}
		return out
	}
	if got := names(); len(got) != 0 {
		t.Fatalf("before the write: %v", got)
	}
	names() // kept
	want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, "zebra", "Paints zebra stripes.", "b")), 201)
	if got := names(); len(got) != 1 || got[0] != "zebra" {
		t.Fatalf("after adding zebra: %v (a stale answer)", got)
	}
	want(t, e.do(t, "DELETE", "/v1/skills/zebra", e.admin, nil, "If-Match", "*"), 204)
	if got := names(); len(got) != 0 {
		t.Fatalf("after removing zebra: %v (a stale answer)", got)
	}
}
