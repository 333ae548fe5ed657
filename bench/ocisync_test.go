//go:build linux

package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/remote"
	"github.com/loadout/loadout/remote/ocifetch"
	"github.com/loadout/loadout/skill"
)

// BenchmarkOCISync syncs N oci sources (LOADOUT_BENCH_OCI_N, default
// 1,000), one skill each, from a real registry on loopback (Debian's
// docker-registry, plain HTTP), and prints, for each step, the wall time
// and the peak RSS of this process during it (VmHWM, reset before the
// step through /proc/self/clear_refs):
//
//   - first: the first sync of every source (resolve the tag, fetch the
//     manifest, config and layer, unpack, write the snapshot, scan and
//     digest it, write the lock);
//   - resync: a sync when nothing moved (one HEAD of a manifest each);
//   - open: a restart's open of every pin from the cache (no network);
//   - moved: a sync after one tag moved.
//
// The N artifacts are pushed once, before the timer starts:
//
//	go test ./bench -run '^$' -bench OCISync -benchtime 1x
//	bench/oci.sh   # the same, with N=1000
func BenchmarkOCISync(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("LOADOUT_BENCH_OCI_N")); err == nil && v > 0 {
		n = v
	}
	reg := registrytest.Start(b, registrytest.Options{})
	cli, err := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	pushOne := func(i int, body string) {
		name := fmt.Sprintf("skill-%04d", i)
		bd := &skill.Bundle{Content: []byte("---\nname: " + name + "\ndescription: Generated skill " + name + " for the sync benchmark. Use when " + name + " is asked for.\n---\n" + strings.Repeat(body+" line of guidance.\n", 80)),
			Files: []skill.BundleFile{{Path: "scripts/run.sh", Data: []byte("#!/bin/sh\necho " + name + "\n"), Executable: true}, {Path: "references/guide.md", Data: []byte(strings.Repeat("guide ", 300))}}}
		a, err := oci.Pack(bd, oci.Meta{Version: "1.0.0"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cli.Push(ctx, reg.Ref("bench/"+name)+":1.0.0", a, oci.PushOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	jobs := make(chan int)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				pushOne(i, "v1")
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	b.Logf("pushed %d artifacts in %s", n, time.Since(start).Round(time.Millisecond))
	specs := make([]remote.Spec, n)
	for i := range specs {
		specs[i] = remote.Spec{ID: fmt.Sprintf("s%04d", i), OCI: reg.Ref(fmt.Sprintf("bench/skill-%04d", i)), Tag: "1.0.0", Ref: "1.0.0", Insecure: true}
	}
	fetchers := map[string]func(remote.Spec) (remote.Fetcher, error){"oci": ocifetch.NewPool(ocifetch.Options{DockerConfig: filepath.Join(b.TempDir(), "none.json")}).New}
	for it := 0; it < b.N; it++ {
		dir := b.TempDir()
		mk := func() *remote.Manager {
			m, err := remote.NewManager(specs, remote.Options{Cache: filepath.Join(dir, "cache"), LockPath: filepath.Join(dir, remote.LockName), Fetchers: fetchers})
			if err != nil {
				b.Fatal(err)
			}
			return m
		}
		m := mk()
		step := func(what string, f func() error) {
			runtime.GC()
			resetHWM()
			t0 := time.Now()
			if err := f(); err != nil {
				b.Fatalf("%s: %v", what, err)
			}
			d := time.Since(t0)
			fmt.Printf("oci-sync n=%d %-7s %8.2fs  peak RSS %5.0f MB\n", n, what, d.Seconds(), hwmMB())
			b.ReportMetric(d.Seconds(), what+"-s")
		}
		syncAll := func(wantMoved int) func() error {
			return func() error {
				moved := 0
				for _, c := range m.Sync(ctx) {
					if c.Err != nil {
						return c.Err
					}
					if c.Moved {
						moved++
					}
				}
				if moved != wantMoved {
					return fmt.Errorf("%d pins moved, want %d", moved, wantMoved)
				}
				return nil
			}
		}
		step("first", syncAll(n))
		step("resync", syncAll(0))
		m.Close()
		m = mk()
		step("open", func() error {
			if d := m.Open(ctx, false); len(d) > 0 {
				return fmt.Errorf("open: %v", d[0])
			}
			return nil
		})
		pushOne(0, "v2")
		step("moved", syncAll(1))
		m.Close()
	}
	b.ReportMetric(0, "ns/op")
}

// resetHWM resets this process's peak RSS (Linux 4.0 and later).
func resetHWM() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// hwmMB is this process's peak RSS since the last resetHWM, in MB.
func hwmMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}
