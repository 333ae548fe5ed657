package render

import (
	"testing"
	"unsafe"
)

// A listing holds an Entry per skill: at 50,000 skills each 8 bytes is
// 0.4 MB of loadout prompt's peak. Origin is shared with the skill, not
// copied (a copy was 120 bytes an entry).
func TestEntrySize(t *testing.T) {
	const most = 112
	if n := unsafe.Sizeof(Entry{}); n > most {
		t.Fatalf("render.Entry is %d bytes, want at most %d: keep shared parts (Origin) as pointers", n, most)
	}
}
