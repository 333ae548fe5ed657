package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// BenchmarkPromptFromCache100 renders a 100-skill agent's prompt from a
// built catalog: what a server does on every session start.
func BenchmarkPromptFromCache100(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < 100; i++ {
		n := fmt.Sprintf("skill-%03d", i)
		p := filepath.Join(dir, n, "SKILL.md")
		testutil.Must(b, os.MkdirAll(filepath.Dir(p), 0o755))
		desc := strings.Repeat("Helps with a task of kind "+n+". ", 1+i%6)
		testutil.Write(b, p, "---\nname: "+n+"\ndescription: "+desc+"\n---\nbody\n")
	}
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir, Inline: []string{"skill-00?"}, Available: []string{"*"}}}}}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	l, _ := c.Agent("a")
	if text, rep, _ := l.Prompt(PromptOptions{}); rep.Listed+rep.Inlined == 0 || text == "" {
		b.Fatalf("nothing rendered: %+v", rep)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.Prompt(PromptOptions{})
	}
}
