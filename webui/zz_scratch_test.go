package webui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
)

// Scratch: screenshots of a running server (not committed).
func TestZZScratchShots(t *testing.T) {
	base := os.Getenv("SCRATCH_BASE")
	if base == "" {
		t.Skip()
	}
	out := "/tmp/def-shots"
	os.MkdirAll(out, 0o755)
	ctx := browsertest.Browser(t, 1280, 800)
	shot := func(name string) {
		buf := browsertest.Get(t, ctx, "shot", chromedp.CaptureScreenshot())
		os.WriteFile(filepath.Join(out, name+".png"), buf, 0o644)
	}
	for _, phone := range []bool{false, true} {
		w := map[bool]string{false: "1280", true: "375"}[phone]
		browsertest.Do(t, ctx, "size", asPhone(phone))
		for _, p := range strings.Split(os.Getenv("SCRATCH_PAGES"), ",") {
			name := strings.NewReplacer("/", "_", "?", "_", "=", "_").Replace(p)
			browsertest.Do(t, ctx, p, chromedp.Navigate(base+p), chromedp.WaitVisible(chromedp.CSS("main h1")))
			shot(name + "-" + w)
		}
		if os.Getenv("SCRATCH_FILES") != "" {
			browsertest.Do(t, ctx, "files", chromedp.Navigate(base+os.Getenv("SCRATCH_FILES")), chromedp.WaitVisible(chromedp.CSS("#file-tree")))
			js[bool](t, ctx, `(`+lastFileRow+`.scrollIntoView({block: "end"}), true)`)
			js[bool](t, ctx, `([...document.querySelectorAll("#file-tree .file-open")].filter(b => b.dataset.binary !== "true").pop().click(), true)`)
			waitJS(t, ctx, "editor", `document.querySelector("#fv-editor .cm-editor")`)
			shot("files-open-" + w)
		}
	}
}
