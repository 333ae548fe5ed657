package service

import (
	"context"
	"sync"
	"time"
)

// Long-lived requests (the UI's live stream, an MCP session and its
// stream) authenticate once, when they start. WatchToken ends them when
// their token is revoked, as promptly as a revocation ends the token's
// next request.

// tokenWatches are the watches of WatchToken: one goroutine runs while
// any is registered.
type tokenWatches struct {
	mu      sync.Mutex
	m       map[string]map[*tokenWatch]struct{}
	running bool
	// kick asks the running loop to check at once: a token revoked
	// between a request's authentication and its watch is caught too.
	kick chan struct{}
}

type tokenWatch struct{ gone func() }

// WatchToken calls gone once, in its own goroutine, soon after the token
// id stops being live (revoked here or by another instance): at the next
// token change the service sees (RevokeToken here, the store's token feed
// for the others: PostgreSQL within milliseconds, SQLite within its
// 200 ms poll), and within SessionOptions.Recheck should a change go
// unseen. stop ends the watch. An empty id (the open mode) and a service
// without a token store are never revoked: gone is never called.
func (s *Service) WatchToken(tokenID string, gone func()) (stop func()) {
	if tokenID == "" || ExternalID(tokenID) || s.opt.Server == nil {
		return func() {}
	}
	w := &tokenWatch{gone: gone}
	tw := &s.watches
	tw.mu.Lock()
	if tw.m == nil {
		tw.m = map[string]map[*tokenWatch]struct{}{}
		tw.kick = make(chan struct{}, 1)
	}
	set := tw.m[tokenID]
	if set == nil {
		set = map[*tokenWatch]struct{}{}
		tw.m[tokenID] = set
	}
	set[w] = struct{}{}
	if !tw.running {
		tw.running = true
		go s.watchTokens()
	} else {
		select {
		case tw.kick <- struct{}{}:
		default:
		}
	}
	tw.mu.Unlock()
	return func() {
		tw.mu.Lock()
		defer tw.mu.Unlock()
		if set := tw.m[tokenID]; set != nil {
			delete(set, w)
			if len(set) == 0 {
				delete(tw.m, tokenID)
			}
		}
	}
}

// watchTokens checks the watched tokens at every token change and every
// Recheck, until no watch is left or the service closes.
func (s *Service) watchTokens() {
	tw := &s.watches
	recheck := s.sessions().opt.Recheck
	t := time.NewTimer(recheck)
	defer t.Stop()
	var changed <-chan struct{}
	for first := true; ; first = false {
		if !first {
			select {
			case <-changed:
			case <-tw.kick:
			case <-t.C:
			case <-s.usageStop:
				tw.mu.Lock()
				tw.running = false
				tw.mu.Unlock()
				return
			}
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
			t.Reset(recheck)
		}
		// Taken before the check: a change during it wakes the next wait.
		changed = s.auth.changes()
		tw.mu.Lock()
		if len(tw.m) == 0 {
			tw.running = false
			tw.mu.Unlock()
			return
		}
		ids := make([]string, 0, len(tw.m))
		for id := range tw.m {
			ids = append(ids, id)
		}
		tw.mu.Unlock()
		var dead []string
		for _, id := range ids {
			// One store query for all of them (the set of live ids).
			if live, known := s.tokenLive(context.Background(), id); known && !live {
				dead = append(dead, id)
			}
		}
		var gone []func()
		tw.mu.Lock()
		for _, id := range dead {
			for w := range tw.m[id] {
				gone = append(gone, w.gone)
			}
			delete(tw.m, id)
		}
		tw.mu.Unlock()
		for _, f := range gone {
			go f()
		}
	}
}
