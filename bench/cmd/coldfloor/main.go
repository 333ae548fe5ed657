// Command coldfloor runs floor.WalkParallel over a skills tree and prints
// how long it took and the CPU it used, user and kernel: the floor that
// serve's first start on a cold page cache is compared with (drop the
// page cache first; bench/serve50k.sh does, with COLD=1).
//
//	coldfloor [-workers 32] [-procs 16] DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/loadout/loadout/bench/floor"
)

func main() {
	workers := flag.Int("workers", 32, "goroutines reading at once")
	procs := flag.Int("procs", 16, "GOMAXPROCS while walking (serve's first discovery uses 16: cmd/loadout's ScanProcs)")
	flag.Parse()
	runtime.GOMAXPROCS(*procs)
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: coldfloor [-workers N] DIR")
		os.Exit(2)
	}
	start := time.Now()
	files, bytes, err := floor.WalkParallel(flag.Arg(0), *workers)
	wall := time.Since(start)
	if err != nil {
		fmt.Fprintln(os.Stderr, "coldfloor:", err)
		os.Exit(1)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "coldfloor:", err)
		os.Exit(1)
	}
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	fmt.Printf("floor: %d SKILL.md files (%d bytes), %d workers, %d Ps: %.2f s, CPU %.1f s (kernel %.2f s)\n",
		files, bytes, *workers, *procs, wall.Seconds(), sec(ru.Utime)+sec(ru.Stime), sec(ru.Stime))
}
