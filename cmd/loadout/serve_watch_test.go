package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/watch"
)

// The folder watch catches up on what changed between the catalog's scan
// and the watch reaching each folder by change time (since), not by
// reading the roots again: with since before the change, a skill added
// then is served once the watch is up; with since after it (the "no"
// case), it is not, as nothing reads the roots again.
func TestFolderWatchCatchesUpBySince(t *testing.T) {
	for _, tc := range []struct {
		name  string
		since func(time.Time) time.Time
		want  bool
	}{
		{"since the scan", func(scan time.Time) time.Time { return scan }, true},
		{"since after the change", func(time.Time) time.Time { return time.Now().Add(10 * time.Second) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeSkill := func(name string) {
				testutil.Must(t, os.MkdirAll(filepath.Join(root, name), 0o755))
				testutil.Write(t, filepath.Join(root, name, "SKILL.md"), "---\nname: "+name+"\ndescription: The "+name+" skill.\n---\nBody.\n")
			}
			writeSkill("alpha")
			time.Sleep(30 * time.Millisecond) // file times come from a coarse clock
			scan := time.Now()
			cat, err := catalog.New(t.Context(), []catalog.AgentSpec{{AgentID: "a", Skills: []catalog.SourceSpec{{Root: root}}}}, catalog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			svc := service.New(cat, service.Options{Logger: slog.New(slog.DiscardHandler)})
			defer svc.Close()
			time.Sleep(30 * time.Millisecond)
			writeSkill("beta") // after the scan, before the watch
			changes, stop := svc.Subscribe()
			defer stop()
			f := &folderWatch{svc: svc, logger: slog.New(slog.DiscardHandler), opt: watch.Options{Debounce: 20 * time.Millisecond}, since: tc.since(scan)}
			defer f.close()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan struct{})
			f.start(ctx, cat.Roots(), func() { close(done) })
			<-done
			select {
			case <-changes:
			case <-time.After(2 * time.Second):
			}
			if got := slices.Contains(cat.Global().Names(), "beta"); got != tc.want {
				t.Errorf("beta served: %v, want %v (names %v)", got, tc.want, cat.Global().Names())
			}
		})
	}
}
