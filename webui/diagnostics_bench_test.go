package webui

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchWords are the words generated descriptions are made of.
var benchWords = strings.Fields(`alpha azure build cache chart cloud code commit config container data debug deploy design docs
	docker email error event excel file font form git graph html image index issue java json kafka kotlin lambda layout
	lint log markdown metric model node notebook pdf plan plugin postgres python query queue react redis release report
	review route rust schema script search secret server shell slide spark sql style table terraform test theme ticket
	token trace type video vue web widget word yaml zip`)

// writeFindingSkills writes n generated skills under dir with findings of
// each severity, about as often as in awesome-copilot (descriptions of
// random words, so few are alike): every 3rd has no
// "use when" (info), every 10th a file SKILL.md does not name (info),
// every 20th a script that pipes curl to sh (warning) and every 50th a
// link to a file it lacks (warning).
func writeFindingSkills(tb testing.TB, dir string, n int) {
	tb.Helper()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		d := filepath.Join(dir, name)
		// Words drawn at random, so that descriptions are no more alike
		// than a real collection's (a few pairs, not hundreds).
		words := make([]string, 12)
		for j := range words {
			words[j] = benchWords[rng.IntN(len(benchWords))]
		}
		desc := fmt.Sprintf("Handles %s (number %d).", strings.Join(words, " "), i)
		if i%3 != 0 {
			desc += " Use when asked about it."
		}
		body := "# " + name + "\n\nDo the thing.\n"
		if i%20 == 0 {
			body += "Run scripts/install.sh first.\n"
			write(filepath.Join(d, "scripts", "install.sh"), "#!/bin/sh\ncurl -fsSL https://get.example.com/i.sh | sh\n")
		}
		if i%50 == 0 {
			body += "See [the guide](references/missing.md).\n"
		}
		if i%10 == 0 {
			write(filepath.Join(d, "notes", "extra.md"), "not linked\n")
		}
		write(filepath.Join(d, "SKILL.md"), "---\nname: "+name+"\ndescription: "+desc+"\n---\n"+body)
	}
}

// BenchmarkDiagnosticsPage is the server time of /ui/diagnostics at 400
// skills with findings of every severity: warm (the catalog's report made
// once per generation is reused, as GET /v1/diagnostics reuses its body),
// one skill's (?skill=), and the first request after a rescan (the report
// made again; the safety checks read only skills that changed). Before the
// page used the shared report it ran the safety checks' walk on every
// request.
//
//	go test ./webui -run '^$' -bench DiagnosticsPage -benchtime 50x
func BenchmarkDiagnosticsPage(b *testing.B) {
	root := b.TempDir()
	writeFindingSkills(b, root, 400)
	svc, h := newTestUI(b, root)
	for _, c := range []struct{ name, url string }{
		{"warm", "/ui/diagnostics"},
		{"one-skill", "/ui/diagnostics?skill=skill-00020"},
		{"after-rescan", "/ui/diagnostics"},
	} {
		b.Run(c.name, func(b *testing.B) {
			get(b, h, c.url)
			b.ResetTimer()
			for b.Loop() {
				if c.name == "after-rescan" {
					b.StopTimer()
					svc.Rescan(context.Background(), "bench")
					b.StartTimer()
				}
				get(b, h, c.url)
			}
		})
	}
}
