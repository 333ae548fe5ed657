package webui_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
	"github.com/loadout/loadout/internal/testutil"
)

// TestScreenshotsAtSize photographs every page of the UI over a catalog
// of real size, for the design review in docs/ui/README.md. It runs only
// when LOADOUT_SHOTS_DIR names the folder to write the PNGs to, and
// LOADOUT_SHOTS_CORPUS a folder of skill folders (scripts/ui-shots.sh
// extracts the awesome-copilot collection and sets both). The catalog:
// that folder, a git repository (a local bare one, synced), the SQLite
// store with the stored skills of newCatalogIn, and two agents.
//
// Shots are <page>-<light|dark>-<laptop|phone>.png, at 1280×800 and
// 375×800, at most shotMaxHeight px tall (the top of a long page is what
// a person sees first; a full 400-row list would be 18,000 px).
func TestScreenshotsAtSize(t *testing.T) {
	out, corpus := os.Getenv("LOADOUT_SHOTS_DIR"), os.Getenv("LOADOUT_SHOTS_CORPUS")
	if out == "" || corpus == "" {
		t.Skip("set LOADOUT_SHOTS_DIR and LOADOUT_SHOTS_CORPUS (scripts/ui-shots.sh does) to photograph the UI at size")
	}
	out, _ = filepath.Abs(out)
	corpus, _ = filepath.Abs(corpus)
	testutil.Must(t, os.MkdirAll(out, 0o755))
	ctx := browsertest.Browser(t, 1280, 800)

	// A folder with a short, stable name: the pages show its paths.
	dir := filepath.Join(os.TempDir(), "loadout-shots")
	testutil.Must(t, os.RemoveAll(dir))
	t.Cleanup(func() { testutil.Must(t, os.RemoveAll(dir)) })
	c := newCatalogIn(t, dir)

	// The git source: a bare repository with three skills, over file://.
	work, bare := filepath.Join(dir, "team-work"), filepath.Join(dir, "team.git")
	gitFiles := map[string]string{
		"skills/incident-review/SKILL.md": "---\nname: incident-review\ndescription: Write a blameless incident review from the timeline and the chat log. Use after an outage.\n---\n# Incident review\n\nStart from the timeline.\n",
		"skills/oncall-handoff/SKILL.md":  "---\nname: oncall-handoff\ndescription: Hand the pager over at the end of a shift. Use when an on-call shift ends.\n---\n# On-call handoff\n\nList open incidents.\n",
		"skills/runbook-check/SKILL.md":   "---\nname: runbook-check\ndescription: Check that a service's runbook still matches its alerts. Use when an alert fires without a runbook.\n---\n# Runbook check\n",
	}
	for rel, body := range gitFiles {
		p := filepath.Join(work, filepath.FromSlash(rel))
		testutil.Must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		testutil.Must(t, os.WriteFile(p, []byte(body), 0o644))
	}
	git := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=shots", "GIT_AUTHOR_EMAIL=shots@example.com", "GIT_COMMITTER_NAME=shots", "GIT_COMMITTER_EMAIL=shots@example.com")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	git(work, "init", "-q", "-b", "main")
	git(work, "add", ".")
	git(work, "commit", "-q", "-m", "on-call skills")
	git(dir, "clone", "-q", "--bare", work, bare)

	cfg := filepath.Join(dir, "loadout.json")
	conf := map[string]any{
		"agents": []any{
			map[string]any{"agentId": "coder", "displayName": "Coder", "description": "Writes and reviews code with the whole collection.",
				"skills": []any{
					map[string]any{"store": true},
					map[string]any{"root": corpus},
					map[string]any{"git": "file://" + bare, "ref": "main", "paths": []string{"skills"}, "id": "team"},
				}, "tools": []string{"bash", "read_file"}},
			map[string]any{"agentId": "oncall", "displayName": "On call", "description": "Answers pages with the team's runbooks.",
				"skills": []any{
					map[string]any{"git": "file://" + bare, "ref": "main", "paths": []string{"skills"}, "id": "team"},
					map[string]any{"root": corpus, "available": []string{"aspire", "azure-*"}},
				}, "format": "progressive", "budget": 4000},
		},
	}
	b, _ := json.MarshalIndent(conf, "", "  ")
	testutil.Must(t, os.WriteFile(cfg, b, 0o644))
	run := func(args ...string) {
		cmd := exec.Command(browsertest.Binary(t), args...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "LOADOUT_CONFIG=", "LOADOUT_DB=")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("loadout %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	run("sync", "--config", cfg, "--db", c.DB)
	srv := browsertest.Serve(t, []string{"HOME=" + dir}, "--config", cfg, "--db", c.DB, "--no-watch")
	// Some use, so the Usage tab and Last used have something to show.
	for i := 0; i < 5; i++ {
		for _, n := range []string{c.Stored, "aspire", "incident-review"} {
			if resp, err := http.Get(srv.URL + "/v1/agents/coder/skills/" + n); err == nil {
				resp.Body.Close()
			}
		}
	}

	pages := []shotPage{{"skills", "Skills", "/ui/"}}
	for _, tab := range []string{"skill-md", "files", "preview", "versions", "usage", "agents"} {
		pages = append(pages, shotPage{"skill-" + tab, "Skill (stored): " + tab, "/ui/skills/" + c.Stored + "?tab=" + tab})
	}
	pages = append(pages,
		shotPage{"skill-folder", "Skill from the collection (a safety finding)", "/ui/skills/aspire"},
		shotPage{"skill-folder-files", "Skill from the collection: files", "/ui/skills/phoenix-evals?tab=files"},
		shotPage{"skill-git", "Skill from git", "/ui/skills/incident-review"},
		shotPage{"agents", "Agents", "/ui/agents"},
		shotPage{"agent", "Agent", "/ui/agents/oncall"},
		shotPage{"import", "Import / Export", "/ui/import"},
		shotPage{"new", "New skill", "/ui/new"},
		shotPage{"diagnostics", "Diagnostics", "/ui/diagnostics"},
		shotPage{"tokens", "Tokens", "/ui/tokens"},
		shotPage{"receipts", "Receipts", "/ui/receipts"},
		shotPage{"error", "Error page", "/ui/skills/no-such-skill"},
	)
	shootSized(t, ctx, srv.URL, pages, out)

	// The sign-in page shows once a token exists.
	run("token", "create", "--scope", "admin", "--name", "screenshots", "--db", c.DB)
	locked := browsertest.Serve(t, []string{"HOME=" + dir}, "--config", cfg, "--db", c.DB, "--no-watch")
	shootSized(t, ctx, locked.URL, []shotPage{{"login", "Sign in", "/ui/login"}}, out)
}

// shotMaxHeight caps a screenshot's height, in CSS px.
const shotMaxHeight = 2000

// sizedWidths are the review's two widths (1280×800 and 375×800).
var sizedWidths = []shotWidth{
	{"laptop", 1280, 800, false},
	{"phone", 375, 800, true},
}

// shootSized photographs each page at each width in both schemes into
// out, at most shotMaxHeight tall.
func shootSized(t *testing.T, ctx context.Context, base string, pages []shotPage, out string) {
	t.Helper()
	for _, p := range pages {
		for _, w := range sizedWidths {
			openAt(t, ctx, base, p.Path, w)
			for _, scheme := range []string{"light", "dark"} {
				browsertest.Do(t, ctx, "colour scheme "+scheme, setScheme(scheme))
				h := browsertest.Get(t, ctx, "page height", chromedp.Evaluate[float64](`document.documentElement.scrollHeight`))
				h = min(max(h, float64(w.Height)), shotMaxHeight)
				buf := browsertest.Get(t, ctx, "screenshot "+p.Name, captureClip(float64(w.Width), h))
				name := fmt.Sprintf("%s-%s-%s.png", p.Name, scheme, w.Name)
				testutil.Must(t, os.WriteFile(filepath.Join(out, name), shrinkPNG(t, buf), 0o644))
			}
		}
	}
}

// captureClip is a PNG of the page's top w×h CSS px at scale 1, beyond
// the viewport when h is taller.
func captureClip(w, h float64) chromedp.Action[[]byte] {
	return func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		r, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format:                page.CaptureScreenshotFormatPng,
			CaptureBeyondViewport: ptrTo(true),
			FromSurface:           ptrTo(true),
			Clip:                  &page.Viewport{X: 0, Y: 0, Width: w, Height: h, Scale: 1},
		})
		if err != nil {
			return nil, err
		}
		return r.Data, nil
	}
}

func ptrTo[T any](v T) *T { return &v }

// shrinkPNG re-encodes a screenshot with a palette of its 256 commonest
// colours (each other colour, mostly anti-aliased text edges, becomes its
// nearest): a third of the size, so docs/ui stays small.
func shrinkPNG(t *testing.T, b []byte) []byte {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decoding a screenshot: %v", err)
	}
	r := img.Bounds()
	count := map[color.RGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			count[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	cols := make([]color.RGBA, 0, len(count))
	for c := range count {
		cols = append(cols, c)
	}
	slices.SortFunc(cols, func(a, b color.RGBA) int { return cmp.Compare(count[b], count[a]) })
	pal := make(color.Palette, 0, 256)
	for _, c := range cols[:min(256, len(cols))] {
		pal = append(pal, c)
	}
	idx := map[color.RGBA]uint8{}
	for _, c := range cols {
		idx[c] = uint8(pal.Index(c))
	}
	p := image.NewPaletted(r, pal)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p.SetColorIndex(x, y, idx[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)])
		}
	}
	var out bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&out, p); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
