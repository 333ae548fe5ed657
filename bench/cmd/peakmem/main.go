//go:build unix

// Command peakmem runs one cold discovery of a skills tree in a fresh
// process and prints its wall time, peak RSS and Go heap figures on one
// line (cpu is user+system time of the whole process during the scan,
// less sensitive than wall time to other work on the machine):
//
//	go run ./bench/cmd/peakmem [-n N] [-floor] DIR
//
//	discovery skills=10000 errors=0 warnings=0 wall=123ms cpu=200ms peak_rss=41.2MB base_rss=4.1MB heap_inuse=... retained=...
//
// peak_rss is getrusage's Maxrss for the whole process (Go runtime
// included; base_rss is the same figure taken just before the scan). Linux
// keeps Maxrss across execve, and a child started by a Go program (go run,
// os/exec) shares its parent's memory until exec, so there Maxrss starts at
// the parent's size: run the built binary from a shell, as discovery.sh
// does. hwm is /proc/self/status VmHWM (Linux only), which has no such
// inheritance; on a shell-started process the two agree.
// heap_inuse and heap_sys are read right after the scan, with the result
// still alive; retained is the live heap after a GC with the result still
// held: what keeping the catalog costs. With -floor it runs floor.Walk
// instead, for comparison; -typed scans as loadout check and list do
// (source.Options.TypedMeta). -memprofile writes the retained heap as a pprof
// profile (go tool pprof -sample_index=inuse_space). With -n it exits 1 unless exactly N skills were
// found with no error diagnostics.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/loadout/loadout/bench/floor"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// usage returns getrusage's Maxrss in MB and the CPU time (user+system)
// used so far.
func usage() (rssMB float64, cpu time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1, 0
	}
	mb := float64(ru.Maxrss) / 1024 // Linux and the BSDs: kilobytes
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		mb /= 1024 // bytes there
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return mb, cpu
}

// vmHWM is the peak RSS of this process image from /proc/self/status, in
// MB, or -1 where there is no such file.
func vmHWM() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%g kB", &kb); err == nil {
				return kb / 1024
			}
		}
	}
	return -1
}

func main() {
	useFloor := flag.Bool("floor", false, "run the serial floor walk instead of discovery")
	want := flag.Int("n", 0, "exit 1 unless exactly this many skills are found (0: no check)")
	typed := flag.Bool("typed", false, "scan with source.Options.TypedMeta, as loadout check and list do")
	memprofile := flag.String("memprofile", "", "write a heap profile here after the scan and a GC, with the result still held")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: peakmem [-n N] [-floor] [-typed] DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	dir := flag.Arg(0)

	base, cpu0 := usage()
	var (
		label            = "discovery"
		skills, errs, ws int
		res              *source.Result
		start            = time.Now()
	)
	if *useFloor {
		label = "floor"
		n, _, err := floor.Walk(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "peakmem:", err)
			errs = 1
		}
		skills = n
	} else {
		res = source.ScanFolder(context.Background(), dir, source.Options{TypedMeta: *typed})
		skills = len(res.Skills)
		for _, d := range res.Diagnostics {
			switch d.Severity {
			case skill.Error:
				errs++
				if errs <= 3 {
					fmt.Fprintln(os.Stderr, d.String())
				}
			case skill.Warning:
				ws++
			}
		}
	}
	wall := time.Since(start)
	peak, cpu1 := usage()
	hwm := vmHWM()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	inuse, sys, total, gcs := ms.HeapInuse, ms.HeapSys, ms.TotalAlloc, ms.NumGC
	runtime.GC()
	runtime.ReadMemStats(&ms)
	retained := ms.HeapAlloc
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "peakmem:", err)
			os.Exit(1)
		}
	}
	runtime.KeepAlive(res)

	mb := func(b uint64) string { return fmt.Sprintf("%.1fMB", float64(b)/(1<<20)) }
	fmt.Printf("%s skills=%d errors=%d warnings=%d wall=%s cpu=%s peak_rss=%.1fMB base_rss=%.1fMB hwm=%.1fMB heap_inuse=%s heap_sys=%s total_alloc=%s retained=%s gc=%d gomaxprocs=%d\n",
		label, skills, errs, ws, wall.Round(100*time.Microsecond), (cpu1 - cpu0).Round(time.Millisecond), peak, base, hwm,
		mb(inuse), mb(sys), mb(total), mb(retained), gcs, runtime.GOMAXPROCS(0))
	if *want > 0 && (skills != *want || errs > 0) {
		os.Exit(1)
	}
}
