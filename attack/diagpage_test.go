package attack

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// diagPage is one answer of GET /v1/diagnostics.
type diagPage struct {
	Diagnostics []json.RawMessage `json:"diagnostics"`
	HasMore     bool              `json:"hasMore"`
	NextPage    string            `json:"nextPage"`
}

// TestAttackDiagnosticsCursors: GET /v1/diagnostics pages with cursors
// the server makes ("d1:REPORT:OFFSET" in base64). Forged ones (garbage,
// too long, another prefix, a report not made yet, offsets below 1 or
// past the end, a trailing field) are answered 400 naming page, never 500
// or another report's rows; limits 0, -1, +5 and words are 400 naming
// limit; 1 and 100 are served as asked, and more as 100, the answer's
// limit saying so. A cursor of a report
// the catalog moved on from is 409. An agent token reads none of it.
// Then 4,000 forged cursors at every offset and limits up to 100 (each page
// encoded and kept: the page cache is bounded at 16 MiB) leave the
// server's peak RSS under 100 MB (64 MB; without the bound, 159).
func TestAttackDiagnosticsCursors(t *testing.T) {
	skills := map[string]string{}
	const n = 250
	for i := range n {
		name := fmt.Sprintf("skill-%03d", i)
		skills[name+"/SKILL.md"] = "---\nname: " + name + "\ndescription: Use when you need " + name + ".\n---\nSee [the notes](references/missing.md) for " + strings.Repeat("detail ", 40) + "\n"
	}
	s := Start(t, Options{Tokens: true, Skills: skills})
	get := func(q string) (int, string) {
		code, _, body := s.Do(t, "GET", "/v1/diagnostics"+q, s.Admin, "")
		return code, body
	}
	code, body := get("")
	var first diagPage
	if err := json.Unmarshal([]byte(body), &first); code != http.StatusOK || err != nil {
		t.Fatalf("first page: %d %v %.300s", code, err, body)
	}
	if len(first.Diagnostics) != 100 || !first.HasMore || first.NextPage == "" {
		t.Fatalf("first page: %d diagnostics, hasMore %v, nextPage %q; want 100 of at least %d, and a cursor", len(first.Diagnostics), first.HasMore, first.NextPage, n)
	}
	raw, err := base64.RawURLEncoding.DecodeString(first.NextPage)
	if err != nil || !strings.HasPrefix(string(raw), "d1:") {
		t.Fatalf("the cursor %q is not d1:REPORT:OFFSET in base64 (%v): this test forges that form", first.NextPage, err)
	}
	report := strings.Split(string(raw), ":")[1]
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	forged := map[string]string{
		"garbage":          "!!!not-base64!!!",
		"empty decoded":    enc(""),
		"other prefix":     enc("d2:" + report + ":100"),
		"report not made":  enc("d1:999999:100"),
		"report zero":      enc("d1:0:100"),
		"offset zero":      enc("d1:" + report + ":0"),
		"offset negative":  enc("d1:" + report + ":-100"),
		"offset overflow":  enc("d1:" + report + ":99999999999999999999999"),
		"trailing field":   enc("d1:" + report + ":100:7"),
		"too long":         enc("d1:" + report + ":100" + strings.Repeat("0", 4000)),
		"cursor and space": first.NextPage + " ",
	}
	for what, c := range forged {
		code, body := get("?page=" + url.QueryEscape(c))
		if code != http.StatusBadRequest || !strings.Contains(body, `"page"`) {
			t.Errorf("a forged cursor (%s): %d %.300s, want 400 naming page", what, code, body)
		}
	}
	// Past the end of this report: 409 (offsets of another report), not rows.
	if code, body := get("?page=" + enc("d1:"+report+":100000")); code != http.StatusConflict || strings.Contains(body, `"diagnostics"`) {
		t.Errorf("a cursor past the end: %d %.300s, want 409 and no rows", code, body)
	}
	for _, l := range []string{"0", "-1", "+5", "many", "1e3", "-100000000000000000000000"} {
		if code, body := get("?limit=" + l); code != http.StatusBadRequest || !strings.Contains(body, `"limit"`) {
			t.Errorf("limit=%s: %d %.300s, want 400 naming limit", l, code, body)
		}
	}
	// 1 and the largest page (100) are served as asked; past it, the
	// largest page, and the answer's limit says so.
	for l, want := range map[string]int{"1": 1, "100": 100, "101": 100, "1000": 100, "100000000000000000000000": 100} {
		code, body := get("?limit=" + l)
		var p struct {
			diagPage
			Limit int `json:"limit"`
		}
		if err := json.Unmarshal([]byte(body), &p); code != http.StatusOK || err != nil || len(p.Diagnostics) != want || p.Limit != want || !p.HasMore {
			t.Errorf("limit=%s: %d, %d diagnostics, limit %d, hasMore %v (%v); want 200 with %d, limit %d and more to read", l, code, len(p.Diagnostics), p.Limit, p.HasMore, err, want, want)
		}
	}
	agent := s.Token(t, "agent:coder")
	if code, _, body := s.Do(t, "GET", "/v1/diagnostics", agent, ""); code != http.StatusForbidden || strings.Contains(body, "skill-0") {
		t.Errorf("an agent token's GET /v1/diagnostics: %d %.200s, want 403", code, body)
	}

	// Forged offsets, each page a new one to encode and keep.
	for i := range 4000 {
		c := enc(fmt.Sprintf("d1:%s:%d", report, 1+i%(n-1)))
		if code, body := get(fmt.Sprintf("?limit=%d&page=%s", 100-i/(n-1), c)); code != http.StatusOK {
			t.Fatalf("forged offset %d: %d %.300s", i, code, body)
		}
	}
	t.Logf("peak RSS %.0f MB after 4,000 distinct pages", s.PeakRSSMB(t))
	if rss := s.PeakRSSMB(t); rss > 100 {
		t.Errorf("peak RSS %.0f MB after 4,000 distinct pages, want under 100: the page cache is not bounded", rss)
	}

	// A change to the catalog: the old cursor is of a report gone by.
	WriteFiles(t, s.Dir+"/skills", map[string]string{"late/SKILL.md": "---\nname: late\ndescription: Use when late.\n---\nSee [x](references/gone.md).\n"})
	if code, _, body := s.Do(t, "POST", "/v1/reload", s.Admin, ""); code != http.StatusOK {
		t.Fatalf("reload: %d %.300s", code, body)
	}
	var stale int
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if stale, body = get("?page=" + url.QueryEscape(first.NextPage)); stale == http.StatusConflict {
			break
		}
	}
	if stale != http.StatusConflict || !strings.Contains(body, `"page"`) {
		t.Errorf("the cursor of a report the catalog moved on from: %d %.300s, want 409 naming page", stale, body)
	}
	s.Healthy(t)
}

// TestAttackReadyzSaysLittle: /readyz and /healthz need no token, so they
// say whether the server is up, ready or draining, how many skills, which
// generation and which of its fixed start-up jobs are built, and nothing
// else: no names, no paths, no configuration.
func TestAttackReadyzSaysLittle(t *testing.T) {
	s := Start(t, Options{Tokens: true})
	for _, path := range []string{"/readyz", "/healthz"} {
		var code int
		var body string
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if code, _, body = s.Do(t, "GET", path, "", ""); code == http.StatusOK {
				break
			}
		}
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("%s: %v %s", path, err, body)
		}
		for k := range m {
			switch k {
			case "ready", "skills", "generation", "status", "draining":
			case "built", "building":
				// The names of serve's own warm-up jobs, constants of
				// the code.
				jobs, _ := m[k].([]any)
				if k == "building" {
					jobs = []any{m[k]}
				}
				for _, j := range jobs {
					switch j {
					case "catalog", "search", "install_indexes", "diagnostics", "skill list":
					default:
						t.Errorf("%s names a job %v that is not one of serve's: %s", path, j, body)
					}
				}
			default:
				t.Errorf("%s says %q without a token: %s", path, k, body)
			}
		}
		for _, secret := range []string{"deploy", "lint", s.Dir, "coder"} {
			if strings.Contains(body, secret) {
				t.Errorf("%s names %q without a token: %s", path, secret, body)
			}
		}
	}
}
