package gitfetch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/remote"
)

// BenchmarkHTTP1000 measures a repository of 1,000 skills (a SKILL.md of
// about 1 KiB and a reference file each, 2,000 files, 2.6 MB) served over
// HTTP on loopback by git http-backend: the first fetch of the tip
// (a shallow fetch and writing every file) and a re-Resolve (listing the
// refs, as a no-change sync does); also the same fetch from the bare
// repository on disk, and a fetch of an old pin after the branch moved.
// Run with
//
//	go test -run '^$' -bench HTTP1000 -benchtime 5x ./remote/gitfetch
//
// peak-heap-MB samples the live heap every millisecond during the op.
func BenchmarkHTTP1000(b *testing.B) {
	fx := newFixture(b)
	body := strings.Repeat("Use this skill when the task needs it. ", 25)
	for i := range 1000 {
		name := fmt.Sprintf("skill-%04d", i)
		dir := filepath.Join(fx.work, "skills", name)
		if err := os.MkdirAll(filepath.Join(dir, "references"), 0o755); err != nil {
			b.Fatal(err)
		}
		testutil.Write(b, filepath.Join(dir, "SKILL.md"), "---\nname: "+name+"\ndescription: skill number "+name+"\n---\n"+body+"\n")
		testutil.Write(b, filepath.Join(dir, "references", "guide.md"), name+"\n"+body+"\n")
	}
	rev := fx.commit("1000 skills")
	loc := fx.serve("", false)
	f := mustNew(b, remote.Spec{Git: loc, Ref: "main", Paths: []string{"skills"}})
	ctx := context.Background()

	b.Run("fetch", func(b *testing.B) {
		base := b.TempDir()
		b.ReportAllocs()
		peak := sampleHeap(b)
		for i := 0; b.Loop(); i++ {
			dir := filepath.Join(base, fmt.Sprint(i))
			if _, err := f.Fetch(ctx, rev, dir, remote.DefaultLimits); err != nil {
				b.Fatal(err)
			}
		}
		peak()
	})
	b.Run("fetch-local", func(b *testing.B) {
		local := mustNew(b, remote.Spec{Git: fx.bare, Ref: "main", Paths: []string{"skills"}})
		base := b.TempDir()
		b.ReportAllocs()
		peak := sampleHeap(b)
		for i := 0; b.Loop(); i++ {
			if _, err := local.Fetch(ctx, rev, filepath.Join(base, fmt.Sprint(i)), remote.DefaultLimits); err != nil {
				b.Fatal(err)
			}
		}
		peak()
	})
	b.Run("resolve", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			got, err := f.Resolve(ctx)
			if err != nil || got != rev {
				b.Fatal(got, err)
			}
		}
	})
	// The branch moves on: fetching the old pin fetches the whole branch
	// (two commits here) and checks the pin is on it.
	fx.write(map[string]string{"skills/skill-0000/SKILL.md": "---\nname: skill-0000\ndescription: changed\n---\n"})
	fx.commit("move")
	b.Run("fetch-old-pin", func(b *testing.B) {
		base := b.TempDir()
		b.ReportAllocs()
		peak := sampleHeap(b)
		for i := 0; b.Loop(); i++ {
			if _, err := f.Fetch(ctx, rev, filepath.Join(base, fmt.Sprint(i)), remote.DefaultLimits); err != nil {
				b.Fatal(err)
			}
		}
		peak()
	})
}

// sampleHeap samples the live heap until the returned func is called, which
// reports the peak as peak-heap-MB.
func sampleHeap(b *testing.B) func() {
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	}
}
