// Command storeload times what a server's start-up does with a store, in
// stages: the store's List (every record, content included), the stamps a
// server reads after another instance's change, and store.Provider's
// Skills (List, then each record parsed into a catalog skill), with the
// live heap each leaves:
//
//	go run ./bench/cmd/storeload -dsn 'postgres://…?search_path=s200k' [-cpuprofile F]
//
// It prints one line per stage.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/loadout/loadout/postgres"
	"github.com/loadout/loadout/store"
)

func main() {
	dsn := flag.String("dsn", os.Getenv("LOADOUT_TEST_POSTGRES"), "PostgreSQL URL")
	cpu := flag.String("cpuprofile", "", "write a CPU profile of the Provider stage here")
	flag.Parse()
	ctx := context.Background()
	st, err := postgres.Open(ctx, *dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "storeload:", err)
		os.Exit(1)
	}
	defer st.Close()
	stage := func(name string, fn func() (int, error)) {
		t0 := time.Now()
		n, err := fn()
		d := time.Since(t0)
		if err != nil {
			fmt.Fprintf(os.Stderr, "storeload: %s: %v\n", name, err)
			os.Exit(1)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Printf("%s items=%d seconds=%.2f live_heap_mb=%d\n", name, n, d.Seconds(), ms.HeapAlloc>>20)
	}
	stage("list", func() (int, error) {
		recs, err := st.List(ctx)
		return len(recs), err
	})
	stage("stamps", func() (int, error) {
		s, err := st.Stamps(ctx)
		return len(s), err
	})
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			fmt.Fprintln(os.Stderr, "storeload:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	p := store.NewProvider(st)
	var keep any
	stage("provider", func() (int, error) {
		sk, diags := p.Skills(ctx)
		keep = sk
		if len(diags) > 0 {
			return len(sk), fmt.Errorf("%d diagnostics, the first: %s", len(diags), diags[0].Message)
		}
		return len(sk), nil
	})
	stage("provider-again", func() (int, error) {
		sk, _ := p.Skills(ctx)
		return len(sk), nil
	})
	runtime.KeepAlive(keep)
}
