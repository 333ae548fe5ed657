package webui

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	out, err := renderMarkdown("evil", "SKILL.md", []byte(evilSkill[strings.Index(evilSkill, "# Evil"):]), 2)
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
	out, _ = renderMarkdown("s", "docs/guide.md", []byte("[back](../SKILL.md) [img](img/a.png) [esc](../../x)"), 0)
	for _, good := range []string{`href="/ui/skills/s?tab=preview"`, `href="/ui/skills/s/files/docs/img/a.png"`} {
		if !strings.Contains(string(out), good) {
			t.Errorf("docs/guide.md lacks %s: %s", good, out)
		}
	}
	if strings.Contains(string(out), "../../x") || strings.Contains(string(out), `href="/ui/skills/s/files/x"`) {
		t.Errorf("a link out of the skill survived: %s", out)
	}
}

// TestSkillFileServing: files are served as attachments unless images or
// text, text as text/plain (an HTML file too), always with nosniff and a
// sandboxed CSP; a path out of the skill is refused.
func TestSkillFileServing(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "evil", "name: evil\ndescription: files")
	d := filepath.Join(root, "evil")
	files := map[string]string{"pic.svg": evilSVG, "page.html": "<script>alert(1)</script>", "blob.bin": "\x00\x01\x02\xff", "reference.md": "# Part two\n\n[home](SKILL.md)\n<script>x</script>"}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(d, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, h := newTestUI(t, root)
	for _, c := range []struct{ path, ctype, disp string }{
		{"pic.svg", "image/svg+xml", "inline"},
		{"page.html", "text/plain; charset=utf-8", "inline"},
		{"blob.bin", "application/octet-stream", "attachment"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/ui/skills/evil/files/"+c.path, nil))
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", c.path, w.Code, w.Body)
		}
		hd := w.Header()
		if hd.Get("Content-Type") != c.ctype || !strings.HasPrefix(hd.Get("Content-Disposition"), c.disp) || hd.Get("X-Content-Type-Options") != "nosniff" || !strings.HasSuffix(hd.Get("Content-Security-Policy"), "; sandbox") {
			t.Errorf("%s: type %q, disposition %q, nosniff %q, csp %q", c.path, hd.Get("Content-Type"), hd.Get("Content-Disposition"), hd.Get("X-Content-Type-Options"), hd.Get("Content-Security-Policy"))
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
	h, err := renderMarkdown("s", "SKILL.md", []byte("- [x] cut the branch\n- [ ] tag it\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := string(h)
	if !strings.Contains(got, `<input type="checkbox" checked disabled aria-label="done">`) || !strings.Contains(got, `<input type="checkbox" disabled aria-label="to do">`) || strings.Count(got, "<input") != 2 {
		t.Errorf("task boxes: %s", got)
	}
}
