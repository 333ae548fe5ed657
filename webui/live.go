package webui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
)

// Live updates: GET /ui/events is a server-sent-events stream that tells
// open pages the catalog changed (a folder edited on disk, a write through
// any instance, a reload), so they refresh or warn without a reload.
//
// One hub per UI holds one service subscription while any stream is open
// (none while none is), works out once per change which skills changed,
// and hands each stream the news. What a stream holds is bounded: one
// pending event, merged when the client reads slower than the catalog
// changes, whose names are capped at MaxLiveNames.

const (
	// DefaultMaxLiveStreams is Options.MaxLiveStreams's default.
	DefaultMaxLiveStreams = 256
	// DefaultMaxLiveStreamsPerToken is Options.MaxLiveStreamsPerToken's
	// default: more tabs than one person keeps open (a browser opens at
	// most 6 connections per host over HTTP/1.1 anyway).
	DefaultMaxLiveStreamsPerToken = 16
	// DefaultLiveHeartbeat is Options.LiveHeartbeat's default.
	DefaultLiveHeartbeat = 25 * time.Second
	// MaxLiveNames caps the skill names one event carries; past it the
	// event says truncated and the page treats everything as changed.
	MaxLiveNames = 100
	// liveRetryAfter is the Retry-After, in seconds, of a 503 for a
	// stream over the cap.
	liveRetryAfter = 10
)

// changeEvent is the data of an SSE "changed" event, and the detail of the
// page's loadout:changed event (documented in static/live.js).
type changeEvent struct {
	// Generation is the service's generation after the change.
	Generation uint64 `json:"generation"`
	// Changed are the skills (visible to this client) whose content
	// changed, appeared or went away, sorted; at most MaxLiveNames.
	Changed []string `json:"changed"`
	// Truncated: more skills changed than Changed holds, or which changed
	// is not known (the client missed events while disconnected).
	Truncated bool `json:"truncated"`
}

// merge folds a later event into e, keeping the names bounded.
func (e *changeEvent) merge(o changeEvent) {
	e.Generation = max(e.Generation, o.Generation)
	e.Truncated = e.Truncated || o.Truncated
	for _, n := range o.Changed {
		if _, found := slices.BinarySearch(e.Changed, n); found {
			continue
		}
		if len(e.Changed) >= MaxLiveNames {
			e.Truncated = true
			break
		}
		i, _ := slices.BinarySearch(e.Changed, n)
		e.Changed = slices.Insert(e.Changed, i, n)
	}
}

// liveClient is one open stream.
type liveClient struct {
	// agent is the agent whose skills the client may see, "" for all.
	agent string
	// token is the id of the token the client signed in with ("" in the
	// open mode).
	token string
	wake  chan struct{} // capacity 1: "pending has something"
	mu    sync.Mutex
	pend  *changeEvent
}

func (c *liveClient) post(e changeEvent) {
	c.mu.Lock()
	if c.pend == nil {
		c.pend = &changeEvent{Generation: e.Generation, Truncated: e.Truncated}
		c.pend.merge(changeEvent{Changed: e.Changed})
	} else {
		c.pend.merge(e)
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *liveClient) take() *changeEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.pend
	c.pend = nil
	return e
}

// join's refusals: over the cap, over the token's cap.
var (
	errTooManyStreams      = errors.New("too many live streams")
	errTooManyTokenStreams = errors.New("too many live streams of this token")
)

type liveHub struct {
	svc           *service.Service
	max, perToken int

	mu      sync.Mutex
	clients map[*liveClient]struct{}
	byToken map[string]int // streams per token id ("" not counted)
	stop    chan struct{}  // closed to end the running loop
}

func newLiveHub(svc *service.Service, max, perToken int) *liveHub {
	return &liveHub{svc: svc, max: max, perToken: min(perToken, max), clients: map[*liveClient]struct{}{}, byToken: map[string]int{}}
}

// join registers a client, starting the subscription for the first. Over
// either cap the new client is refused: an open stream is never closed
// for another (a page whose stream is closed reconnects, which would
// close the next one in turn).
func (h *liveHub) join(c *liveClient) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.token != "" && h.byToken[c.token] >= h.perToken {
		return errTooManyTokenStreams
	}
	if len(h.clients) >= h.max {
		return errTooManyStreams
	}
	h.clients[c] = struct{}{}
	if c.token != "" {
		h.byToken[c.token]++
	}
	if len(h.clients) == 1 {
		h.stop = make(chan struct{})
		// Subscribe before taking the snapshot the first diff starts
		// from, so no change falls between them.
		sub, unsub := h.svc.Subscribe()
		go h.loop(sub, unsub, h.stop, h.svc.Catalog().Global())
	}
	return nil
}

// leave unregisters a client, ending the subscription with the last.
func (h *liveHub) leave(c *liveClient) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.clients[c]; !ok {
		return
	}
	delete(h.clients, c)
	if c.token != "" {
		if h.byToken[c.token]--; h.byToken[c.token] <= 0 {
			delete(h.byToken, c.token)
		}
	}
	if len(h.clients) == 0 {
		close(h.stop)
	}
}

// streams is how many streams are open.
func (h *liveHub) streams() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

func (h *liveHub) loop(sub <-chan struct{}, unsub func(), stop chan struct{}, prev *catalog.Loadout) {
	defer unsub()
	for {
		select {
		case <-stop:
			return
		case <-sub:
		}
		gen := h.svc.Generation()
		cur := h.svc.Catalog().Global()
		names, truncated := changedSkills(prev, cur)
		prev = cur
		ev := changeEvent{Generation: gen, Changed: names, Truncated: truncated}
		h.mu.Lock()
		for c := range h.clients {
			c.post(h.visibleTo(c, ev))
		}
		h.mu.Unlock()
	}
}

// visibleTo narrows an event to the skills an agent client may see.
func (h *liveHub) visibleTo(c *liveClient, ev changeEvent) changeEvent {
	if c.agent == "" {
		return ev
	}
	l, ok := h.svc.Catalog().Agent(c.agent)
	out := changeEvent{Generation: ev.Generation, Truncated: ev.Truncated}
	if !ok {
		return out
	}
	for _, n := range ev.Changed {
		if _, ok := l.Lookup(n); ok {
			out.Changed = append(out.Changed, n)
		}
	}
	return out
}

// maxDigestChecks bounds the skills one change compares by content
// digest (each reads the skill's files, unless the store knows it); past
// it a skill read again counts as changed. A rescan that rebuilds every
// skill so costs at most this many digests, and reports "truncated".
const maxDigestChecks = 64

// changedSkills lists the names whose skill differs between two global
// catalogs (added, removed, or served from different content), sorted, at
// most MaxLiveNames of them (truncated says more changed). Unchanged
// skills usually keep their *skill.Skill across refreshes, so a pointer
// comparison settles most names; a skill read again is compared by its
// metadata and manifest, then by content digest.
func changedSkills(a, b *catalog.Loadout) ([]string, bool) {
	var out []string
	truncated := false
	add := func(n string) {
		if len(out) >= MaxLiveNames {
			truncated = true
			return
		}
		out = append(out, n)
	}
	digests := maxDigestChecks
	for _, n := range b.Names() {
		eb, _ := b.Lookup(n)
		ea, ok := a.Lookup(n)
		switch {
		case !ok:
			add(n)
		case ea.Skill == eb.Skill:
		case truncated:
		case !sameContent(ea.Skill, eb.Skill, &digests):
			add(n)
		}
	}
	for _, n := range a.Names() {
		if _, ok := b.Lookup(n); !ok {
			add(n)
		}
	}
	slices.Sort(out)
	return out, truncated
}

// sameContent reports whether two versions of a skill serve the same
// bytes: the store's digests when both have one; else the same metadata
// and manifest and, while budget lasts, the same content digest.
func sameContent(x, y *skill.Skill, budget *int) bool {
	if x.VersionDigest != "" && y.VersionDigest != "" {
		return x.VersionDigest == y.VersionDigest
	}
	if x.Description != y.Description || x.Location != y.Location || x.OriginValue() != y.OriginValue() ||
		!slices.Equal(x.Files, y.Files) || !slices.Equal(x.Dirs, y.Dirs) {
		return false
	}
	if *budget <= 0 {
		return false
	}
	*budget--
	dx, dy := x.ContentDigest(), y.ContentDigest()
	return dx != "" && dx == dy
}

// eventsHandler is GET /ui/events's handler, with this UI's hub.
func (u *ui) eventsHandler() http.Handler {
	max := u.opt.MaxLiveStreams
	if max <= 0 {
		max = DefaultMaxLiveStreams
	}
	beat := u.opt.LiveHeartbeat
	if beat <= 0 {
		beat = DefaultLiveHeartbeat
	}
	perToken := u.opt.MaxLiveStreamsPerToken
	if perToken <= 0 {
		perToken = DefaultMaxLiveStreamsPerToken
	}
	h := newLiveHub(u.svc, max, perToken)
	u.live.Store(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.serveEvents(w, r, h, beat)
	})
}

// serveEvents streams the hub's events to one client until it goes or the
// server shuts down (the request's context ends: serve's base context is
// cancelled on SIGTERM before Shutdown waits, so open streams never hold
// a graceful shutdown up).
func (u *ui) serveEvents(w http.ResponseWriter, r *http.Request, h *liveHub, beat time.Duration) {
	p := principal(r)
	c := &liveClient{token: p.TokenID, wake: make(chan struct{}, 1)}
	if !canRead(p) {
		l, err := u.visible(r)
		if err != nil {
			e := service.AsError(err)
			http.Error(w, e.Message, http.StatusForbidden)
			return
		}
		c.agent = l.Spec.AgentID
	}
	if err := h.join(c); err != nil {
		msg := fmt.Sprintf("too many live-update streams are open (the cap is %d): the page will try again in %d s", h.max, liveRetryAfter)
		if err == errTooManyTokenStreams {
			msg = fmt.Sprintf("this token has its most live-update streams open (%d; close other tabs of this UI): the page will try again in %d s", h.perToken, liveRetryAfter)
		}
		w.Header().Set("Retry-After", strconv.Itoa(liveRetryAfter))
		http.Error(w, msg, http.StatusServiceUnavailable)
		return
	}
	defer h.leave(c)
	// The stream was authenticated once, when it opened: it ends when
	// its token is revoked, as the token's next request would be refused.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer u.svc.WatchToken(p.TokenID, cancel)()
	rc := http.NewResponseController(w)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	gen := h.svc.Generation()
	// A client that reconnects says which generation it had seen (the
	// browser's Last-Event-ID, or ?since= from live.js): if the catalog
	// moved on meanwhile, it is told at once, without the names.
	since := r.Header.Get("Last-Event-ID")
	if s := r.URL.Query().Get("since"); s != "" {
		since = s
	}
	fmt.Fprintf(w, "retry: 2000\nid: %d\nevent: hello\ndata: {\"generation\":%d}\n\n", gen, gen)
	if n, err := strconv.ParseUint(since, 10, 64); err == nil && n != gen {
		writeEvent(w, changeEvent{Generation: gen, Changed: []string{}, Truncated: true})
	}
	if rc.Flush() != nil {
		return
	}
	t := time.NewTicker(beat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
		case <-c.wake:
			e := c.take()
			if e == nil {
				continue
			}
			if e.Changed == nil {
				e.Changed = []string{}
			}
			if writeEvent(w, *e) != nil {
				return
			}
		}
		if rc.Flush() != nil {
			return
		}
	}
}

func writeEvent(w http.ResponseWriter, e changeEvent) error {
	data, _ := json.Marshal(e)
	_, err := fmt.Fprintf(w, "id: %d\nevent: changed\ndata: %s\n\n", e.Generation, data)
	return err
}
