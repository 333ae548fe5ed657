package main

import "runtime"

// ScanProcs is the least GOMAXPROCS serve's (and mcp's) first discovery
// runs with, unless GOMAXPROCS is set; the value before is put back once
// the catalog is built. check and list do not raise it: their peak memory
// is their target, and more Ps means more scan workers (1-2 MB more at
// 50,000 skills).
//
// Discovery opens every skill's folder and SKILL.md and lists its
// subfolders. On a cold page cache (after a reboot, or when the kernel
// has dropped the tree's directory cache) each of those is a disk read,
// and on a virtual disk with one queue each read costs about 35 µs of
// kernel CPU. With two Ps a goroutine waiting in a read holds its P until
// the runtime's monitor takes it back, so one core was busy and reads
// did not overlap. Measured with bench/serve50k.sh (COLD=1, 2 cores;
// 253,700 reads at 50,000 skills, 52,000 at 10,000), GOMAXPROCS set in
// the environment for the rows above 4, interleaved:
//
//	GOMAXPROCS   cold first start, 50,000   10,000    warm first start, 50,000
//	2            11.6 s, queue depth 1.0              2.7-4.9 s
//	4            8.0-8.5 s, depth 2.0-2.5   1.52-1.77 s   2.49-2.64 s
//	8            6.2-6.8 s, depth 2.3-2.6   1.24-1.27 s   2.49-2.71 s
//	16           6.25 s, depth 3.0          1.16 s
//
// Past 8 it gains little: the whole start then takes 10-11 s of CPU, over
// 5 s on two cores, 6.3-7.1 s of it the kernel's reads. More Ps than
// cores cost nothing measurable on a warm cache, nor in peak memory
// (199-214 MB either way), and the serving that follows runs with the
// value before.
const ScanProcs = 8

// raiseProcsForScan raises GOMAXPROCS to ScanProcs unless the GOMAXPROCS
// environment variable is set, and returns what puts the value before back.
func raiseProcsForScan(e *env) func() {
	if e.getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(0)
	if prev >= ScanProcs {
		return func() {}
	}
	runtime.GOMAXPROCS(ScanProcs)
	return func() { runtime.GOMAXPROCS(prev) }
}
