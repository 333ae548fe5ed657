package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/internal/testutil"
)

type listPage struct {
	Skills []struct {
		Name, Mode string
		Shadowed   bool
	}
	Limit    int     `json:"limit"`
	HasMore  bool    `json:"hasMore"`
	NextPage *string `json:"nextPage"`
}

func getPage(t *testing.T, e *env, query string) (listPage, resp) {
	t.Helper()
	r := e.do(t, "GET", "/v1/skills"+query, e.admin, nil)
	want(t, r, 200)
	var p listPage
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("%s: %v", r.body, err)
	}
	if p.HasMore != (p.NextPage != nil) {
		t.Fatalf("hasMore %v with nextPage %v: %s", p.HasMore, p.NextPage, r.body)
	}
	return p, r
}

func names(p listPage) []string {
	var out []string
	for _, s := range p.Skills {
		out = append(out, s.Name)
	}
	return out
}

// walk reads every page at the given limit and returns the names in order.
func walk(t *testing.T, e *env, limit int) []string {
	t.Helper()
	var all []string
	q := fmt.Sprintf("?limit=%d", limit)
	for i := 0; ; i++ {
		p, r := getPage(t, e, q)
		if len(p.Skills) > limit && !strings.Contains(string(r.body), `"shadowed":true`) {
			t.Fatalf("page of %d rows at limit %d: %s", len(p.Skills), limit, r.body)
		}
		all = append(all, names(p)...)
		if !p.HasMore {
			return all
		}
		if i > 1000 {
			t.Fatal("no last page")
		}
		q = fmt.Sprintf("?limit=%d&page=%s", limit, url.QueryEscape(*p.NextPage))
	}
}

func postN(t *testing.T, e *env, prefix string, n int) {
	for i := 0; i < n; i++ {
		want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, fmt.Sprintf("%s%03d", prefix, i), "D.", "b")), 201)
	}
}

// GET /v1/skills comes a page at a time, in name order, every name once;
// the default page is DefaultListLimit rows. The old answer was the whole
// list, with neither hasMore nor nextPage.
func TestListSkillsPages(t *testing.T) {
	e := newEnv(t, baseFiles)
	postN(t, e, "s", httpapi.DefaultListLimit+5)
	all := walk(t, e, 7)
	if !slices.IsSorted(all) || len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Fatalf("not in name order, each once: %v", all)
	}
	if len(all) != httpapi.DefaultListLimit+5+3 { // alpha, beta, deploy
		t.Fatalf("%d names: %v", len(all), all)
	}
	p, _ := getPage(t, e, "")
	if len(p.Skills) != httpapi.DefaultListLimit || !p.HasMore {
		t.Fatalf("default page: %d rows, hasMore %v", len(p.Skills), p.HasMore)
	}
	if !slices.Equal(names(p), all[:httpapi.DefaultListLimit]) {
		t.Fatal("the default page is not the first names")
	}
	p, _ = getPage(t, e, fmt.Sprintf("?limit=%d", httpapi.MaxListLimit))
	if len(p.Skills) != min(len(all), httpapi.MaxListLimit) || p.HasMore != (len(all) > httpapi.MaxListLimit) {
		t.Fatalf("limit=max: %d rows, hasMore %v", len(p.Skills), p.HasMore)
	}
}

// A limit past MaxListLimit is served as MaxListLimit, and the answer
// says so: its "limit" is the limit served, and hasMore and nextPage go on
// from there, so nothing is cut silently. Exactly at the bound the page is
// that long; one past it (and any larger number) the same page. Before, a
// limit past the bound (then 1,000) was a 400, and a page of 1,000 ran at
// 0.15x of the cached load.
func TestListSkillsLimitClamped(t *testing.T) {
	e := newEnv(t, diagFiles(httpapi.MaxListLimit+5))
	all := walk(t, e, 7)
	if len(all) <= httpapi.MaxListLimit {
		t.Fatalf("%d skills: the test needs more than %d", len(all), httpapi.MaxListLimit)
	}
	at, r := getPage(t, e, fmt.Sprintf("?limit=%d", httpapi.MaxListLimit))
	if len(at.Skills) != httpapi.MaxListLimit || at.Limit != httpapi.MaxListLimit || !at.HasMore {
		t.Fatalf("limit=max: %d rows, limit %d, hasMore %v", len(at.Skills), at.Limit, at.HasMore)
	}
	for _, q := range []string{fmt.Sprint(httpapi.MaxListLimit + 1), "1000", "99999999999999999999999"} {
		p, r2 := getPage(t, e, "?limit="+q)
		if p.Limit != httpapi.MaxListLimit || !bytes.Equal(r2.body, r.body) {
			t.Errorf("limit=%s: limit %d, %d rows, want the page of limit=%d", q, p.Limit, len(p.Skills), httpapi.MaxListLimit)
		}
	}
	// The rest follows from the cursor, whatever limit was asked for.
	rest, _ := getPage(t, e, "?limit=1000&page="+url.QueryEscape(*at.NextPage))
	if got := append(names(at), names(rest)...); !slices.Equal(got, all) || rest.HasMore {
		t.Fatalf("limit=1000 in two pages: %d names, want %d", len(got), len(all))
	}
	// The default page says its limit too.
	if p, _ := getPage(t, e, ""); p.Limit != httpapi.DefaultListLimit {
		t.Errorf("default page: limit %d, want %d", p.Limit, httpapi.DefaultListLimit)
	}
}

// A cursor names the last name of its page: skills added or removed
// between pages neither repeat nor skip a name present all along.
func TestListSkillsCursorAcrossChanges(t *testing.T) {
	e := newEnv(t, baseFiles)
	postN(t, e, "m", 20)
	p1, _ := getPage(t, e, "?limit=8")
	first := names(p1) // alpha beta deploy m000..m004
	if first[len(first)-1] != "m004" || !p1.HasMore {
		t.Fatalf("first page: %v", first)
	}
	// Between the pages: remove a name already read and one not yet read,
	// add one before the cursor and two after it.
	for _, n := range []string{"m002", "m010"} {
		want(t, e.do(t, "DELETE", "/v1/skills/"+n, e.admin, nil, "If-Match", "*"), 204)
	}
	for _, n := range []string{"a-new", "m004a", "zz-new"} {
		want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, n, "D.", "b")), 201)
	}
	var rest []string
	q := "?limit=8&page=" + url.QueryEscape(*p1.NextPage)
	for {
		p, _ := getPage(t, e, q)
		rest = append(rest, names(p)...)
		if !p.HasMore {
			break
		}
		q = "?limit=8&page=" + url.QueryEscape(*p.NextPage)
	}
	var wantRest []string
	for i := 5; i < 20; i++ {
		if i != 10 {
			wantRest = append(wantRest, fmt.Sprintf("m%03d", i))
		}
	}
	wantRest = append([]string{"m004a"}, wantRest...)
	wantRest = append(wantRest, "zz-new")
	if !slices.Equal(rest, wantRest) {
		t.Fatalf("after the changes:\n got  %v\n want %v", rest, wantRest)
	}
}

// A page never splits a name: a stored skill shadowed by the folder skill
// of the same name is on the same page, even at limit=1.
func TestListSkillsNeverSplitsAName(t *testing.T) {
	e := newEnv(t, baseFiles)
	want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, "alpha", "Stored alpha.", "b")), 201)
	p, r := getPage(t, e, "?limit=1")
	if len(p.Skills) != 2 || p.Skills[0].Name != "alpha" || p.Skills[1].Name != "alpha" || !p.HasMore {
		t.Fatalf("limit=1: %s", r.body)
	}
	if all := walk(t, e, 1); !slices.Equal(all, []string{"alpha", "alpha", "beta", "deploy"}) {
		t.Fatalf("walk at limit=1: %v", all)
	}
	if all := walk(t, e, 2); !slices.Equal(all, []string{"alpha", "alpha", "beta", "deploy"}) {
		t.Fatalf("walk at limit=2: %v", all)
	}
}

// A bad limit or cursor is a 400 naming the parameter.
func TestListSkillsBadParams(t *testing.T) {
	e := newEnv(t, baseFiles)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for q, field := range map[string]string{
		"?limit=0": "limit", "?limit=-3": "limit", "?limit=x": "limit", "?limit=1.5": "limit",
		"?limit=99999999999999999999x": "limit",
		"?page=":                       "page", "?page=%21%21": "page", "?page=" + enc("alpha"): "page", "?page=" + enc("n1:"): "page",
		"?page=" + enc("n1:\xff"): "page", "?page=" + strings.Repeat("A", 600): "page",
	} {
		r := e.do(t, "GET", "/v1/skills"+q, e.admin, nil)
		wantErr(t, r, 400, "bad_request")
		m := r.json(t)["error"].(map[string]any)
		if m["field"] != field || !strings.Contains(m["message"].(string), field) {
			t.Errorf("%s: %s", q, r.body)
		}
	}
	// A cursor naming a name that sorts after every skill is a valid, empty last page.
	p, _ := getPage(t, e, "?page="+enc("n1:zzz"))
	if len(p.Skills) != 0 || p.HasMore {
		t.Errorf("past the end: %+v", p)
	}
}

// The bodies kept for many requests go out with a strong ETag (304 on
// If-None-Match), and gzip-compressed, with Vary: Accept-Encoding, to a
// client that accepts gzip; gzip;q=0 and identity get the bytes as built.
func TestCachedBodiesETagAndGzip(t *testing.T) {
	e := newEnv(t, baseFiles)
	postN(t, e, "g", 30) // enough rows for gzip to be worth it
	for _, path := range []string{"/v1/skills", "/v1/skills?limit=5", "/v1/agents/coder/prompt?budget=-1", "/v1/diagnostics", "/v1/openapi.json"} {
		plain := e.do(t, "GET", path, e.admin, nil, "Accept-Encoding", "identity")
		want(t, plain, 200)
		tag := plain.h.Get("ETag")
		if !strings.HasPrefix(tag, `"`) || plain.h.Get("Content-Encoding") != "" || !strings.Contains(plain.h.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s identity: ETag %q, Content-Encoding %q, Vary %q", path, tag, plain.h.Get("Content-Encoding"), plain.h.Get("Vary"))
		}
		r := e.do(t, "GET", path, e.admin, nil, "Accept-Encoding", "identity", "If-None-Match", tag)
		if r.code != 304 || len(r.body) != 0 {
			t.Errorf("%s If-None-Match %s: %d %q", path, tag, r.code, r.body)
		}
		if r := e.do(t, "GET", path, e.admin, nil, "Accept-Encoding", "identity", "If-None-Match", `"other"`); r.code != 200 {
			t.Errorf("%s If-None-Match other: %d", path, r.code)
		}
		for _, ae := range []string{"gzip", "br, gzip;q=0.5", "*"} {
			gz := e.do(t, "GET", path, e.admin, nil, "Accept-Encoding", ae)
			want(t, gz, 200)
			if gz.h.Get("Content-Encoding") != "gzip" || gz.h.Get("ETag") == tag || len(gz.body) >= len(plain.body) {
				t.Errorf("%s (%s): Content-Encoding %q, ETag %q (identity %q), %d bytes of %d", path, ae, gz.h.Get("Content-Encoding"), gz.h.Get("ETag"), tag, len(gz.body), len(plain.body))
				continue
			}
			if !bytes.Equal(testutil.Gunzip(t, gz.body), plain.body) {
				t.Errorf("%s (%s): the gzip form is not the same bytes", path, ae)
			}
			if r := e.do(t, "GET", path, e.admin, nil, "Accept-Encoding", ae, "If-None-Match", gz.h.Get("ETag")); r.code != 304 {
				t.Errorf("%s (%s) If-None-Match gzip ETag: %d", path, ae, r.code)
			}
		}
		for _, ae := range []string{"gzip;q=0", "identity", "br", "gzip; q=0.0, identity"} {
			r := e.do(t, "GET", path, e.admin, nil, "Accept-Encoding", ae)
			if r.h.Get("Content-Encoding") != "" || !bytes.Equal(r.body, plain.body) {
				t.Errorf("%s (%s): Content-Encoding %q", path, ae, r.h.Get("Content-Encoding"))
			}
		}
	}
	// A change makes a new list, with a new ETag.
	r := e.do(t, "GET", "/v1/skills", e.admin, nil, "Accept-Encoding", "identity")
	want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, "a-new", "D.", "b")), 201)
	r2 := e.do(t, "GET", "/v1/skills", e.admin, nil, "Accept-Encoding", "identity", "If-None-Match", r.h.Get("ETag"))
	if r2.code != 200 || r2.h.Get("ETag") == r.h.Get("ETag") {
		t.Errorf("after a write: %d, ETag %q then %q", r2.code, r.h.Get("ETag"), r2.h.Get("ETag"))
	}
}
