package service

import (
	"crypto/sha256"
	"strings"
	"testing"
)

// The token cache's key is the secret's SHA-256 whatever its length: on
// the stack up to 128 bytes (at the limit), on the heap past it (one
// more), and never the key of another secret.
func TestSecretKey(t *testing.T) {
	for _, n := range []int{0, 1, 32, 33, 64, 127, 128, 129, 4096} {
		s := strings.Repeat("k", n)
		if got, want := secretKey(s), sha256.Sum256([]byte(s)); got != want {
			t.Errorf("secretKey of %d bytes is not its SHA-256", n)
		}
		if n > 0 && secretKey(s) == secretKey(s[:n-1]+"j") {
			t.Errorf("secretKey of %d bytes: two secrets share a key", n)
		}
	}
	// A token as 'loadout token create' makes it (longer than the 32
	// bytes a []byte conversion may put on the stack).
	tok := "lo_" + strings.Repeat("a1B2", 11)
	for _, c := range []struct {
		s    string
		want float64
	}{{tok, 0}, {strings.Repeat("x", 128), 0}, {strings.Repeat("x", 129), 1}} {
		if n := testing.AllocsPerRun(100, func() { secretKey(c.s) }); n != c.want {
			t.Errorf("secretKey of %d bytes allocates %.0f times, want %.0f", len(c.s), n, c.want)
		}
	}
}
