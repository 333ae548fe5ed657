// Package fnv1a is 64-bit FNV-1a over strings, byte slices and integers,
// folded into a running hash without allocating (hash/fnv takes bytes
// through an interface). The scan cache's folder signatures (package
// source) and the watch's polled-folder signatures (package watch) use it.
// It is a change detector, not a defence: anyone who controls the input
// can make two inputs hash alike.
package fnv1a

// Offset is the hash of nothing: start from it.
const Offset uint64 = 14695981039346656037

const prime = 1099511628211

// String folds s into h, then a 0xff that no UTF-8 text holds, so that
// ("ab", "c") and ("a", "bc") hash apart.
func String[T string | []byte](h uint64, s T) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * prime
	}
	return (h ^ 0xff) * prime
}

// Uint64 folds v into h, low byte first.
func Uint64(h, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h = (h ^ v&0xff) * prime
		v >>= 8
	}
	return h
}
