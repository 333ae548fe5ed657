package skill

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestBodyFileKeepsBodiesOutOfTheHeap(t *testing.T) {
	dir := t.TempDir()
	b, err := NewBodyFile(dir, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Unlinked at once: nothing is left behind however the process ends.
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the body file is still in %s: %v", dir, ents)
	}
	r1, err := b.KeepEntry([]byte("---\nname: a\ndescription: A.\n---\r\n# A\r\nbody of a\n"))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := b.Keep([]byte("second"))
	if err != nil {
		t.Fatal(err)
	}
	// The body is exactly what Parse puts in Document.Body (line ends
	// normalised).
	doc, _, _ := Parse([]byte("---\nname: a\ndescription: A.\n---\r\n# A\r\nbody of a\n"), "a/SKILL.md", "a")
	if got, err := r1.Read(); err != nil || got != doc.Body {
		t.Errorf("first body: %q %v, want %q", got, err, doc.Body)
	}
	if got, _ := r2.Read(); got != "second" {
		t.Errorf("second body: %q", got)
	}
	sk := &Skill{Entry: "SKILL.md"}
	sk.KeepBodyRef(r1)
	if !sk.HasBody() {
		t.Error("a skill with a kept body says it has none")
	}
	if got, _ := sk.Body(); got != doc.Body {
		t.Errorf("Skill.Body: %q", got)
	}
	// Past its maximum it refuses, so that the caller keeps the body in
	// memory instead.
	if _, err := b.Keep([]byte(strings.Repeat("x", 64))); !errors.Is(err, ErrBodyFileFull) {
		t.Errorf("over the maximum: %v", err)
	}
	if b.Size() != r1.Len()+r2.Len() {
		t.Errorf("size %d, want %d", b.Size(), r1.Len()+r2.Len())
	}
}
