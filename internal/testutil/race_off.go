//go:build !race

package testutil

// Race is true when the tests run under the race detector (-race), where
// sync.Pool drops about a quarter of what is put back, at random: a test
// that bounds what a pooled buffer saves allows for it.
const Race = false
