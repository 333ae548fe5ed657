package webui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/sqlite"
)

// writeSkills writes n generated skills under dir: a SKILL.md each with
// tags and a category, and a supporting file in every tenth.
func writeSkills(tb testing.TB, dir string, n int) {
	tb.Helper()
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
		md := fmt.Sprintf("---\nname: %s\ndescription: Generated skill number %d for the list benchmark; handles topic %d.\nversion: 1.%d.0\ncategory: cat-%d\ntags: [tag-%d, tag-%d]\n---\n# %s\n\nDo the thing %d.\n",
			name, i, i%97, i%10, i%20, i%50, i%7, name, i)
		if err := os.WriteFile(filepath.Join(d, "SKILL.md"), []byte(md), 0o644); err != nil {
			tb.Fatal(err)
		}
		if i%10 == 0 {
			if err := os.WriteFile(filepath.Join(d, "notes.md"), []byte("notes\n"), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// newTestUI is the UI over a folder of skills, in the open mode, with
// receipts kept in memory.
func newTestUI(tb testing.TB, root string) (*service.Service, http.Handler) {
	tb.Helper()
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "all", Skills: []catalog.SourceSpec{{Root: root}}}}, catalog.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	svc := service.New(cat, service.Options{})
	tb.Cleanup(func() { svc.Close() })
	return svc, New(svc, Options{})
}

// BenchmarkSkillsPage is the server time of the skills page at 10,000
// skills (the target: under 50 ms), for the first page, a typed
// filter (the partial fragment), a sort by usage, and the first page
// right after a catalog change (cold: the rows are built again).
//
//	go test ./webui -run '^$' -bench SkillsPage -benchtime 20x
func BenchmarkSkillsPage(b *testing.B) {
	root := b.TempDir()
	writeSkills(b, root, 10_000)
	svc, h := newTestUI(b, root)
	for i := range 300 {
		if _, err := svc.Load(context.Background(), service.Principal{Open: true}, "all", fmt.Sprintf("skill-%05d", i*31%10_000), "http"); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct{ name, url string }{
		{"first-page", "/ui/"},
		{"filter-partial", "/ui/?q=topic+4&partial=1"},
		{"sort-usage-page-3", "/ui/?sort=usage&page=3"},
		{"tag-and-problems", "/ui/?tag=tag-3&source=folder"},
		{"cold-first-page", "/ui/"},
	} {
		cold := strings.HasPrefix(c.name, "cold")
		b.Run(c.name, func(b *testing.B) {
			get(b, h, c.url) // warm: the rows are built once per catalog generation
			b.ResetTimer()
			for b.Loop() {
				if cold {
					// as after a catalog change: the rows are built again
					uiOf(h).skills.reset()
				}
				get(b, h, c.url)
			}
		})
	}
}

// BenchmarkSkillsPageSQLite is the skills page at 10,000 skills with the
// receipts in a real SQLite store (3,000 loads): warm (usage cached for
// UsageTTL) and cold (rows and usage computed again, as after a catalog
// change with the usage expired).
//
//	go test ./webui -run '^$' -bench SkillsPageSQLite -benchtime 20x
func BenchmarkSkillsPageSQLite(b *testing.B) {
	root := b.TempDir()
	writeSkills(b, root, 10_000)
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "loadout.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "all", Skills: []catalog.SourceSpec{{Root: root}}}}, catalog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	svc := service.New(cat, service.Options{Server: st, Logger: slog.New(slog.DiscardHandler)})
	b.Cleanup(func() { svc.Close() })
	h := New(svc, Options{Logger: slog.New(slog.DiscardHandler)})
	for i := range 3000 {
		if _, err := svc.Load(context.Background(), service.Principal{Open: true}, "all", fmt.Sprintf("skill-%05d", i*31%10_000), "http"); err != nil {
			b.Fatal(err)
		}
	}
	for _, cold := range []bool{false, true} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			get(b, h, "/ui/?sort=usage")
			b.ResetTimer()
			for b.Loop() {
				if cold {
					uiOf(h).skills.reset()
				}
				get(b, h, "/ui/?sort=usage")
			}
		})
	}
}

func get(tb testing.TB, h http.Handler, url string) string {
	tb.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", url, nil))
	if w.Code != 200 {
		tb.Fatalf("GET %s: %d\n%s", url, w.Code, w.Body.String())
	}
	b, _ := io.ReadAll(w.Body)
	return string(b)
}
