//go:build !unix

package bench_test

func syncDisk() {}
