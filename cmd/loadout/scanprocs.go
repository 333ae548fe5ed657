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
// Past 8 it gained little while the collector ran often during the load
// (1.5 times the live heap): its idle mark workers ran on the Ps the
// reads left idle and took the CPU the kernel's reads needed. With the
// loading limit at 2.5 times (memory.go) the collector runs less than
// half as often (13 collections during the load, not 31), and 16 pays, interleaved on a cold cache at 50,000 skills:
//
//	GOMAXPROCS (headroom 2.5)   cold first start   CPU (user)
//	8                           6.0-6.1 s          9.3-9.6 s (2.7-2.9 s)
//	16                          5.1-5.4 s          8.5-9.3 s (2.8-3.1 s)
//	24                          5.1-5.5 s          9.1-9.7 s (3.2-3.5 s)
//	32                          5.3-5.5 s          9.5-10 s (3.2-3.6 s)
//
// The start is then bound by the kernel: 5.8-6.4 s of its CPU is the
// reads (24 µs each at a queue depth of 4). A bare parallel walk that
// lists the same folders and reads the same files, and nothing else,
// takes 4.0-4.6 s at 16-32 goroutines. More Ps than cores cost nothing
// measurable on a warm cache (ready in 1.9-2.1 s), and add 10 MB to the
// peak (217-229 MB); the serving that follows runs with the value
// before.
const ScanProcs = 16

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
