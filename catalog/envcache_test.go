package catalog

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// Loads keep rendered envelopes only up to the catalog's bound, however
// many skills are loaded; a skill loaded again and again stays kept.
func TestEnvelopeCacheIsBounded(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	body := strings.Repeat("Instructions for the model. ", 40) // ~1.1 KB
	for i := range 300 {
		n := fmt.Sprintf("s%03d", i)
		files[n+"/SKILL.md"] = "---\nname: " + n + "\ndescription: A skill.\n---\n" + body
	}
	write(t, dir, files)
	bf, err := skill.NewBodyFile(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	const bound = 20 << 10
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}},
		Options{EnvelopeCache: bound, Scan: source.Options{KeepBodies: true, Bodies: bf}})
	if err != nil {
		t.Fatal(err)
	}
	l := agent(t, c, "a")
	hot := l.Load("s000").Text
	for round := range 3 {
		for i := range 300 {
			if r := l.Load(fmt.Sprintf("s%03d", i)); r.Status != StatusOK || !strings.Contains(r.Text, "Instructions for the model.") {
				t.Fatalf("load %d: %s %s", i, r.Status, r.Text)
			}
			if r := l.Load("s000"); r.Text != hot {
				t.Fatalf("round %d: the hot skill's envelope changed", round)
			}
		}
	}
	kept, bytes := 0, int64(0)
	for _, e := range l.Entries() {
		if p := e.env.Load(); p != nil {
			kept++
			bytes += int64(len(*p))
		}
	}
	if bytes > bound || kept == 0 || kept >= 300 {
		t.Errorf("%d envelopes kept, %d bytes: want some, under %d bytes", kept, bytes, bound)
	}
	if e, _ := l.Lookup("s000"); e.env.Load() == nil {
		t.Error("the skill loaded all the time was dropped")
	}
	c.envs.mu.Lock()
	defer c.envs.mu.Unlock()
	if c.envs.bytes > bound || len(c.envs.ring) != kept {
		t.Errorf("cache accounts %d bytes in %d slots; entries hold %d bytes in %d", c.envs.bytes, len(c.envs.ring), bytes, kept)
	}
}

// A catalog holds an Entry per skill per agent: what few entries need
// (inline bodies, diagnostics) is kept apart, so that an entry stays
// within a 48-byte allocation (it was 112).
func TestEntryIsSmall(t *testing.T) {
	if n := unsafe.Sizeof(Entry{}); n > 48 {
		t.Errorf("Entry is %d bytes, over 48", n)
	}
}
