package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/loadout/loadout/remote"
	"github.com/loadout/loadout/service"
)

// serve follows the lock file as it follows the config: when `loadout
// sync` (or another server) moves a pin, the snapshot it names is served,
// on the file's change, on SIGHUP and on POST /v1/reload.

// followLock brings the remote snapshots served to what the lock file
// pins now and, with refresh, reads them into the catalog when that
// changed anything (a reload rebuilds the catalog itself). A lock that
// does not read keeps what is served, with one log line.
func (rs *remoteState) followLock(ctx context.Context, svc *service.Service, logger *slog.Logger, why string, refresh bool) {
	rs.mu.Lock()
	m := rs.m
	rs.mu.Unlock()
	if m == nil {
		return
	}
	changed, err := m.Follow(ctx)
	if err != nil {
		logger.Warn("lock file not followed: the snapshots served are kept", "code", remote.CodeLock, "lock", m.LockPath(), "why", why, "err", err)
		return
	}
	if len(changed) == 0 {
		return
	}
	for _, id := range changed {
		rev, _, n := m.Snapshot(id)
		if e := m.LastError(id); e != "" {
			logger.Warn("lock file followed: a source is not served at its pin", "code", remote.CodeLock, "why", why, "source", id, "serving", rev, "err", e)
		} else {
			logger.Info("lock file followed", "why", why, "source", id, "revision", rev, "skills", n)
		}
	}
	if refresh {
		svc.Refresh(ctx, nil, "loadout.lock moved: "+strings.Join(changed, ", "))
	}
}

// watchLock follows the lock file when it changes, until ctx ends: its
// folder is watched, as the config's is, so that the rename that writes
// it is seen.
func (rs *remoteState) watchLock(ctx context.Context, svc *service.Service, logger *slog.Logger) {
	rs.mu.Lock()
	path := rs.m.LockPath()
	rs.mu.Unlock()
	last, _ := os.ReadFile(path)
	watchFile(ctx, path, nil, logger, "lock",
		"the lock file is not watched: a pin moved by `loadout sync` is served after SIGHUP or POST /v1/reload",
		func() {
			data, _ := os.ReadFile(path)
			if bytes.Equal(data, last) {
				return // a touch, or this server's own write seen already
			}
			last = data
			rs.followLock(ctx, svc, logger, "lock file changed", true)
		})
}
