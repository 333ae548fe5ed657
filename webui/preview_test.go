package webui

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/inert"
)

// evilSkill is a skill that tries to run script every way Markdown allows.
const evilSkill = `---
name: evil
description: A skill that tries script injection.
---
# Evil

<script>window.pwned = 1; alert(1)</script>

<img src="x.png" onerror="window.pwned = 2">

<div onmouseover="window.pwned = 3">raw block</div>

[js link](javascript:window.pwned=4) and [JS upper](JAVASCRIPT:alert(1)) and [data](data:text/html,<script>alert(1)</script>)

[vb](vbscript:msgbox) [file](file:///etc/passwd) [abs](/v1/tokens) [proto](//evil.example/x) [up](../other/SKILL.md)

![svg](pic.svg) ![far](https://evil.example/track.png) ![inline data](data:image/png;base64,iVBORw0KGgo=)

[reference](reference.md#part-two) [script](scripts/run.sh) [web](https://example.com/docs) [mail](mailto:ops@example.com) [here](#evil)

<https://example.com/auto> and www.example.org and javascript:alert(1)
`

const evilSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="window.top.pwned=5"><script>window.top.pwned = 6</script><rect width="10" height="10" fill="red"/></svg>`

func TestPreviewSanitises(t *testing.T) {
	out, err := renderMarkdown("evil", "SKILL.md", "127.0.0.1:7070", []byte(evilSkill[strings.Index(evilSkill, "# Evil"):]), 2)
	if err != nil {
		t.Fatal(err)
	}
	h := string(out)
	for _, bad := range []string{"<script", "onerror", "onmouseover", `href="javascript:`, "JAVASCRIPT:", "vbscript:", "file:", "data:", `href="/v1`, `//evil.example/x`, `src="https://`, "../other", "<div"} {
		if strings.Contains(h, bad) {
			t.Errorf("the preview holds %q:\n%s", bad, h)
		}
	}
	for _, good := range []string{
		`<img src="/ui/skills/evil/files/pic.svg" alt="svg">`,
		`<a href="https://evil.example/track.png" rel="noopener noreferrer nofollow">far</a>`,
		`<a href="/ui/skills/evil/view/reference.md#part-two">reference</a>`,
		`<a href="/ui/skills/evil/files/scripts/run.sh">script</a>`,
		`<a href="https://example.com/docs" rel="noopener noreferrer nofollow">web</a>`,
		`<a href="mailto:ops@example.com" rel="noopener noreferrer nofollow">mail</a>`,
		`<a href="#evil">here</a>`,
		`js link`,                 // the text of a refused link stays
		`<h3 id="evil">Evil</h3>`, // under the page's h1 and the tab's h2
	} {
		if !strings.Contains(h, good) {
			t.Errorf("the preview lacks %s:\n%s", good, h)
		}
	}
	// Links in a file in a subfolder resolve from its folder.
	out, _ = renderMarkdown("s", "docs/guide.md", "127.0.0.1:7070", []byte("[back](../SKILL.md) [img](img/a.png) [esc](../../x)"), 0)
	for _, good := range []string{`href="/ui/skills/s?tab=preview"`, `href="/ui/skills/s/files/docs/img/a.png"`} {
		if !strings.Contains(string(out), good) {
			t.Errorf("docs/guide.md lacks %s: %s", good, out)
		}
	}
	if strings.Contains(string(out), "../../x") || strings.Contains(string(out), `href="/ui/skills/s/files/x"`) {
		t.Errorf("a link out of the skill survived: %s", out)
	}
}

// TestSkillFileServing: files are served under internal/inert's headers:
// images inline, an SVG as an image only to an <img>, other text as
// text/plain (an HTML or SVG file too), bytes as attachments, always with
// nosniff and a sandboxed CSP; a path out of the skill is refused.
func TestSkillFileServing(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "evil", "name: evil\ndescription: files")
	d := filepath.Join(root, "evil")
	files := map[string]string{"pic.svg": evilSVG, "page.html": "<script>alert(1)</script>", "blob.bin": "\x00\x01\x02\xff", "reference.md": "# Part two\n\n[home](SKILL.md)\n<script>x</script>",
		"logo.png": "\x89PNG\r\n\x1a\n\x00\xff", "app.js": "fetch('/ui/tokens')", "page.XHTML": "<html/>"}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(d, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, h := newTestUI(t, root)
	for _, c := range []struct{ path, dest, ctype, disp string }{
		{"pic.svg", "image", "image/svg+xml", "inline"},
		{"pic.svg", "", "text/plain; charset=utf-8", "inline"},
		{"pic.svg", "document", "text/plain; charset=utf-8", "inline"},
		{"pic.svg", "iframe", "text/plain; charset=utf-8", "inline"},
		{"page.html", "document", "text/plain; charset=utf-8", "inline"},
		{"page.XHTML", "document", "text/plain; charset=utf-8", "inline"},
		{"app.js", "script", "text/plain; charset=utf-8", "inline"},
		{"logo.png", "document", "image/png", "inline"},
		{"blob.bin", "", "application/octet-stream", "attachment"},
	} {
		w := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/ui/skills/evil/files/"+c.path, nil)
		req.Header.Set("Sec-Fetch-Dest", c.dest)
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", c.path, w.Code, w.Body)
		}
		hd := w.Header()
		if hd.Get("Content-Type") != c.ctype || !strings.HasPrefix(hd.Get("Content-Disposition"), c.disp) || hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("Content-Security-Policy") != inert.CSP {
			t.Errorf("%s for %q: type %q, disposition %q, nosniff %q, csp %q", c.path, c.dest, hd.Get("Content-Type"), hd.Get("Content-Disposition"), hd.Get("X-Content-Type-Options"), hd.Get("Content-Security-Policy"))
		}
		if w.Body.String() != files[c.path] {
			t.Errorf("%s: body %q", c.path, w.Body)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/ui/skills/evil/files/..%2f..%2fetc%2fpasswd", nil))
	if w.Code == 200 {
		t.Errorf("a path out of the skill was served: %s", w.Body)
	}
	view := get(t, h, "/ui/skills/evil/view/reference.md")
	if !strings.Contains(view, `<h2 id="part-two">Part two</h2>`) || strings.Contains(view, "<script>x") || !strings.Contains(view, `href="/ui/skills/evil?tab=preview"`) {
		t.Errorf("the view of reference.md:\n%s", view)
	}
}

// TestPreviewTaskBoxesLabelled: GFM task-list boxes come out labelled, so
// a screen reader says what each is (the unlabelled input failed axe).
func TestPreviewTaskBoxesLabelled(t *testing.T) {
	h, err := renderMarkdown("s", "SKILL.md", "127.0.0.1:7070", []byte("- [x] cut the branch\n- [ ] tag it\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := string(h)
	if !strings.Contains(got, `<input type="checkbox" checked disabled aria-label="done">`) || !strings.Contains(got, `<input type="checkbox" disabled aria-label="to do">`) || strings.Count(got, "<input") != 2 {
		t.Errorf("task boxes: %s", got)
	}
}

// Links and images naming this server are not live in the preview: a
// click on one would run as the admin reading it (before, an absolute
// link to the API's file route was a live link, and an admin who clicked
// it ran the skill's page.html with their session). self is 127.0.0.1:7070.
func TestPreviewSelfLinksNotLive(t *testing.T) {
	const self = "127.0.0.1:7070"
	dead := []string{
		"http://127.0.0.1:7070/v1/skills/evil/files/page.html",
		"http://127.0.0.1:7070/agents/coder/.well-known/agent-skills/evil/page.html",
		"http://127.0.0.1:7070/i/lo_secret/.well-known/skills/evil/page.html",
		"http://127.0.0.1:7070/.well-known/skills/evil/page.html",
		"http://127.0.0.1:7070/ui/tokens",
		"http://127.0.0.1:7070/",
		"HTTP://127.0.0.1:7070/v1/x",
		"https://127.0.0.1:7070/v1/x",
		"http://127.0.0.1/v1/x",       // the same host at another port
		"http://127.0.0.1:8080/v1/x",  // and another
		"http://127.0.0.1:07070/v1/x", // a port with a leading zero
		"http://127.0.0.1.:7070/v1/x", // a trailing dot
		"http://localhost:7070/v1/x",  // another loopback name of the port
		"http://LocalHost.:7070/v1/x",
		"http://app.localhost:7070/v1/x",
		"http://127.0.0.2:7070/v1/x",
		"http://[::1]:7070/v1/x",
		"http://[::ffff:127.0.0.1]:7070/v1/x",
		"http://0.0.0.0:7070/v1/x",
		"http://2130706433:7070/v1/x", // 127.0.0.1 as one number
		"http://0x7f.1:7070/v1/x",     // in hex, with parts left out
		"http://0177.0.0.1:7070/v1/x", // in octal
		"http://127.1:7070/v1/x",
		"http://user:pw@127.0.0.1:7070/v1/x",
		"http://evil.example@127.0.0.1:7070/v1/x",
		"http://ｌｏｃａｌｈｏｓｔ:7070/v1/x", // full-width: IDNA makes it localhost
		"http://127。0。0。1:7070/v1/x",
		"http://local\u00adhost:7070/v1/x",
		"http://local\x80host:7070/v1/x", // the lowest byte that is not ASCII
	}
	live := []string{
		"https://example.com/docs",
		"http://localhost:3000/", // a loopback name at another port: not this server
		"http://127.0.0.1.example.com:7070/",
		"http://127.0.0.1@example.com:7070/",
		"http://2130706433.example:7070/",
		"http://10.0.0.1:7070/",
	}
	var src strings.Builder
	for i, u := range dead {
		fmt.Fprintf(&src, "[dead%d](%s) <%s> ![img%d](%s)\n\n", i, u, u, i, u)
	}
	for i, u := range live {
		fmt.Fprintf(&src, "[live%d](%s)\n\n", i, u)
	}
	out, err := renderMarkdown("evil", "SKILL.md", self, []byte(src.String()), 0)
	if err != nil {
		t.Fatal(err)
	}
	h := string(out)
	for i := range dead {
		if strings.Contains(h, fmt.Sprintf(">dead%d</a>", i)) || strings.Contains(h, fmt.Sprintf(`alt="img%d"`, i)) || !strings.Contains(h, fmt.Sprintf("dead%d (", i)) {
			t.Errorf("%s is live in the preview", dead[i])
		}
	}
	if n := strings.Count(h, "<a "); n != len(live) || strings.Contains(h, "<img") {
		t.Errorf("%d links (want %d, the live ones only):\n%s", n, len(live), h)
	}
	for i := range live {
		if !strings.Contains(h, fmt.Sprintf(">live%d</a>", i)) {
			t.Errorf("%s is not live", live[i])
		}
	}
	// The preview is rendered for the host it was asked at: another name
	// of the server (a proxy's) counts too.
	out, _ = renderMarkdown("evil", "SKILL.md", "skills.example.com:443", []byte("[a](https://Skills.Example.com/v1/x) [b](http://skills.example.com:8080/) [c](http://localhost/)"), 0)
	if h := string(out); strings.Count(h, "<a ") != 1 || !strings.Contains(h, `href="http://localhost/"`) {
		t.Errorf("for skills.example.com:\n%s", h)
	}
}

func TestSelfHost(t *testing.T) {
	for _, c := range []struct{ host, proto, want string }{
		{"127.0.0.1:7070", "", "127.0.0.1:7070"},
		{"skills.example.com", "", "skills.example.com:80"},
		{"skills.example.com", "https", "skills.example.com:443"},
		{"[::1]", "", "[::1]:80"},
	} {
		r := httptest.NewRequest("GET", "/ui/", nil)
		r.Host = c.host
		if c.proto != "" {
			r.Header.Set("X-Forwarded-Proto", c.proto)
		}
		if got := selfHost(r); got != c.want {
			t.Errorf("selfHost(%q, %q) = %q, want %q", c.host, c.proto, got, c.want)
		}
	}
}

func TestParseIPv4(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1": "127.0.0.1", "2130706433": "127.0.0.1", "0x7f000001": "127.0.0.1", "0x7f.1": "127.0.0.1",
		"0177.0.0.1": "127.0.0.1", "127.1": "127.0.0.1", "127.0.1": "127.0.0.1", "0x": "0.0.0.0", "0": "0.0.0.0",
		"255.255.255.255": "255.255.255.255", "4294967295": "255.255.255.255",
		"4294967296": "", "256.0.0.1": "", "1.2.3.4.5": "", "1.2.3.256": "", "1.2.65536": "", "example.com": "", "09": "", "0xg": "", "": "",
	} {
		ip, ok := parseIPv4(in)
		got := ""
		if ok {
			got = ip.String()
		}
		if got != want {
			t.Errorf("parseIPv4(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPortOf: a URL's port as a number, the scheme's own when it has
// none, and -1 (never a server's port) past 65535 or when it is not a
// number; 0 and 65535, the ends of the range, are ports.
func TestPortOf(t *testing.T) {
	for _, c := range []struct {
		port, scheme string
		want         int
	}{
		{"", "http", 80}, {"", "", 80}, {"", "HTTPS", 443},
		{"0", "", 0}, {"1", "", 1}, {"0080", "", 80}, {"65535", "", 65535},
		{"65536", "", -1}, {"99999", "", -1}, {"-1", "", -1}, {"x", "", -1},
	} {
		if got := portOf(c.port, c.scheme); got != c.want {
			t.Errorf("portOf(%q, %q) = %d, want %d", c.port, c.scheme, got, c.want)
		}
	}
}

// TestPreviewSelfLinksIPv6: an IPv6 server address compares in its
// canonical form, whatever case and zeros a link writes it with; another
// address is live.
func TestPreviewSelfLinksIPv6(t *testing.T) {
	out, err := renderMarkdown("evil", "SKILL.md", "[2001:db8::1]:443", []byte("[a](https://[2001:DB8:0:0::1]/v1/x) [b](https://[2001:db8::2]/docs)"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if h := string(out); strings.Count(h, "<a ") != 1 || !strings.Contains(h, ">b</a>") || strings.Contains(h, ">a</a>") {
		t.Errorf("for [2001:db8::1]:443, want only the link to [2001:db8::2] live:\n%s", h)
	}
}

// TestPreviewTab: the skill page's Preview tab renders SKILL.md's body
// (here over the test server, the way a browser asks for it) and says
// nothing failed.
func TestPreviewTab(t *testing.T) {
	e := newAuthEnv(t, false)
	res, body := send(t, e.client(t), "GET", e.srv.URL+"/ui/skills/deploy?tab=preview", nil)
	if res.StatusCode != 200 || !strings.Contains(body, "<p>Do it.</p>") || strings.Contains(body, "could not be") {
		t.Errorf("the preview tab: %d, want SKILL.md's body rendered:\n%s", res.StatusCode, body)
	}
}
