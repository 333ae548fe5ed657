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
// did not overlap. Measured with bench/serve50k.sh (COLD=1, 50,000
// skills, 2 cores; 255,000 reads):
//
//	GOMAXPROCS   cold first start           warm first start
//	2            11.6 s, queue depth 1.0    2.7-4.9 s
//	4             7.9 s, queue depth 1.8    2.5 s
//	8             7.7 s (loadout check)
//
// More Ps than cores cost nothing measurable on a warm cache (interleaved
// runs above), and the serving that follows runs with the value before.
const ScanProcs = 4

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
