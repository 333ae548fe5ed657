// Command stdiotest serves one folder of skills over MCP stdio with
// mcpserver.ServeStdio, for the package's end-to-end test with a real
// client. It polls the folder and reloads when anything in it changes, so
// the test can check list_changed notifications.
//
//	stdiotest -root DIR [-agent ID] [-poll 100ms]
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/mcpserver"
	"github.com/loadout/loadout/service"
)

func main() {
	root := flag.String("root", "", "folder of skills to serve")
	agent := flag.String("agent", "e2e", "agent id")
	poll := flag.Duration("poll", 100*time.Millisecond, "how often to look for changes")
	flag.Parse()
	if *root == "" {
		fmt.Fprintln(os.Stderr, "stdiotest: -root is required")
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	abs, err := filepath.Abs(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stdiotest:", err)
		os.Exit(1)
	}
	cat, err := catalog.New(ctx, []catalog.AgentSpec{{AgentID: *agent, Skills: []catalog.SourceSpec{{Root: abs}}}}, catalog.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "stdiotest:", err)
		os.Exit(1)
	}
	svc := service.New(cat, service.Options{Logger: log})
	defer svc.Close()
	go watch(ctx, svc, abs, *poll)
	if err := mcpserver.ServeStdio(ctx, svc, mcpserver.Options{Agent: *agent, Logger: log}); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "stdiotest:", err)
		os.Exit(1)
	}
}

// watch reloads the service when the folder's names, sizes or times change.
func watch(ctx context.Context, svc *service.Service, root string, every time.Duration) {
	last := fingerprint(root)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if fp := fingerprint(root); fp != last {
				last = fp
				svc.Reload(ctx, "stdiotest: folder changed")
			}
		}
	}
}

func fingerprint(root string) string {
	var b []byte
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		b = fmt.Appendf(b, "%s %d %d\n", p, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	return string(b)
}
