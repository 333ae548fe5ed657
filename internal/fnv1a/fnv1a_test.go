package fnv1a

import (
	"encoding/binary"
	"hash/fnv"
	"testing"
)

// The fold is FNV-1a as hash/fnv computes it, over the same bytes.
func TestMatchesHashFNV(t *testing.T) {
	ref := fnv.New64a()
	ref.Write([]byte("SKILL.md"))
	ref.Write([]byte{0xff})
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], 4096)
	ref.Write(b[:])
	got := Uint64(String(Offset, "SKILL.md"), 4096)
	if want := ref.Sum64(); got != want {
		t.Errorf("got %x, want %x", got, want)
	}
	if String(Offset, []byte("SKILL.md")) != String(Offset, "SKILL.md") {
		t.Error("bytes and string hash apart")
	}
	if String(String(Offset, "ab"), "c") == String(String(Offset, "a"), "bc") {
		t.Error(`("ab", "c") and ("a", "bc") hash alike`)
	}
}
