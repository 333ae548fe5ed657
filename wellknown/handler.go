package wellknown

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/errstatus"
	"github.com/loadout/loadout/internal/inert"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
)

const (
	pathV2 = ".well-known/agent-skills/"
	pathV1 = ".well-known/skills/"
	marker = "/.well-known/"

	cacheControl = "private, no-cache"
)

// Handler serves agentID's skills (catalog.GlobalID or "" for the global
// catalog) at the well-known paths described in the package documentation,
// relative to wherever it is mounted. It finds the "/.well-known/" part of
// the request path itself, so it works with or without http.StripPrefix.
// The caller puts the principal in the request context.
func Handler(svc *service.Service, agentID string) http.Handler {
	if agentID == "" {
		agentID = catalog.GlobalID
	}
	return &handler{svc: svc, agent: agentID, log: slog.Default()}
}

type handler struct {
	svc   *service.Service
	agent string
	log   *slog.Logger
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := strings.Index(r.URL.Path, marker)
	if i < 0 {
		writeError(w, http.StatusNotFound, service.CodeNotFound, "not found: skills are listed at .well-known/agent-skills/index.json and .well-known/skills/index.json")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "only GET and HEAD are served here")
		return
	}
	rest := r.URL.Path[i+1:]
	switch {
	case rest == pathV2+"index.json":
		h.serveIndex(w, r, true)
	case rest == pathV1+"index.json":
		h.serveIndex(w, r, false)
	case strings.HasPrefix(rest, pathV2):
		rest = strings.TrimPrefix(rest, pathV2)
		if name, ok := strings.CutSuffix(rest, ".tar.gz"); ok && !strings.Contains(name, "/") {
			h.serveArchive(w, r, name)
			return
		}
		h.serveFile(w, r, rest, true)
	case strings.HasPrefix(rest, pathV1):
		h.serveFile(w, r, strings.TrimPrefix(rest, pathV1), false)
	default:
		writeError(w, http.StatusNotFound, service.CodeNotFound, "not found: skills are listed at .well-known/agent-skills/index.json and .well-known/skills/index.json")
	}
}

// loadout checks the principal's access and returns the loadout with the
// generation read just before it.
func (h *handler) loadout(w http.ResponseWriter, r *http.Request) (*catalog.Loadout, uint64, bool) {
	gen := h.svc.Generation()
	l, err := h.svc.Loadout(service.PrincipalFrom(r.Context()), h.agent)
	if err != nil {
		writeServiceError(w, err)
		return nil, 0, false
	}
	return l, gen, true
}

// snapshot returns the cached indexes of the loadout, building them if the
// cache describes another generation or another loadout value. The build
// runs without holding the slot's lock: requests for the same loadout wait
// for it (or give up when their own request ends), and a request for a
// newer generation starts its own build, so one slow file can never hold
// every later index request, even across reloads.
func (h *handler) snapshot(w http.ResponseWriter, r *http.Request) (*snapshot, *slot, bool) {
	l, gen, ok := h.loadout(w, r)
	if !ok {
		return nil, nil, false
	}
	sl := slotFor(h.svc, h.agent)
	s, err := h.ensure(r.Context(), sl, l, gen)
	switch {
	case errors.Is(err, errBuildFailed):
		writeError(w, http.StatusInternalServerError, service.CodeInternal, "the index could not be built")
		return nil, nil, false
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the index is still being built: retry")
		return nil, nil, false
	}
	return s, sl, true
}

// errBuildFailed: the build a request waited for panicked.
var errBuildFailed = errors.New("the index could not be built")

// builds counts index builds, for the tests.
var builds atomic.Int64

// ensure returns the slot's indexes of l at gen: those cached, those of
// the build under way (waiting for it until ctx ends: ctx.Err()), or a
// new build's.
func (h *handler) ensure(ctx context.Context, sl *slot, l *catalog.Loadout, gen uint64) (*snapshot, error) {
	sl.mu.Lock()
	if s := sl.snap; s != nil && s.gen == gen && s.l == l {
		sl.mu.Unlock()
		return s, nil
	}
	if b := sl.building; b != nil && b.gen == gen && b.l == l {
		sl.mu.Unlock()
		select {
		case <-b.done:
			if b.snap == nil { // the build panicked
				return nil, errBuildFailed
			}
			return b.snap, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	b := &building{gen: gen, l: l, done: make(chan struct{})}
	sl.building = b
	sl.mu.Unlock()

	var s *snapshot
	defer func() {
		sl.mu.Lock()
		if sl.building == b {
			sl.building = nil
		}
		if s != nil && (sl.snap == nil || sl.snap.gen <= gen) {
			sl.snap = s
		}
		sl.mu.Unlock()
		b.snap = s
		close(b.done)
	}()
	start := time.Now()
	builds.Add(1)
	s = build(l, gen, h.agent, h.log, func(_ string, data []byte) { archives.put(skill.DigestBytes(data), data) })
	// The gzip forms too (installers ask for gzip): made on the first
	// request that asks otherwise, 9.4 MB at 10,000 skills.
	s.v2.body.Gzipped()
	s.v1.body.Gzipped()
	h.log.Debug("well-known indexes built", "agent", h.agent, "generation", gen, "skills", len(s.items), "took", time.Since(start))
	return s, nil
}

// WarmMaxSkills bounds the agents Warm builds: an index reads every file
// of every skill and compresses the archives, about 0.6 CPU-ms a skill
// (3.75 ms before the compressors were pooled), so 20,000 skills cost
// about 12 CPU-seconds in the background after ready. A larger agent's
// index is built on its first request, and concurrent requests wait for
// that one build. (It was 2,000: at 10,000 skills the first install
// index took seconds.)
const WarmMaxSkills = 20000

// warmMax is WarmMaxSkills; the tests lower it.
var warmMax = WarmMaxSkills

// Warm builds the install indexes of every agent of at most WarmMaxSkills
// skills, one agent after another, so that no client pays for a build: a
// 400-skill agent's index cost 1.5 CPU-seconds on its first request, and
// under load `npx skills add` gave up after 10 s on a fresh server. Run it in the background as the server starts: a request for an
// index being built waits for that build rather than starting its own.
// The global catalog's index (every skill; admin-only with tokens) is
// built on its first request. Warm logs one line when it is done, naming
// the agents it left to their first request, and returns then or when ctx
// ends.
func Warm(ctx context.Context, svc *service.Service, log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	start := time.Now()
	built := 0
	var left []string
	for _, id := range svc.Catalog().AgentIDs() {
		if ctx.Err() != nil {
			return
		}
		gen := svc.Generation() // read before the loadout, as requests do
		l, ok := svc.Catalog().Agent(id)
		if !ok {
			continue
		}
		if len(l.Entries()) > warmMax {
			left = append(left, id)
			continue
		}
		h := &handler{svc: svc, agent: id, log: log}
		h.ensure(ctx, slotFor(svc, id), l, gen)
		built++
	}
	attrs := []any{"agents", built, "took", time.Since(start).Round(time.Millisecond)}
	if len(left) > 0 {
		attrs = append(attrs, "built_on_first_request", strings.Join(left, ","), "over_skills", warmMax)
	}
	log.Info("well-known indexes built", attrs...)
}

func (h *handler) serveIndex(w http.ResponseWriter, r *http.Request, v2 bool) {
	s, _, ok := h.snapshot(w, r)
	if !ok {
		return
	}
	d := s.v1
	if v2 {
		d = s.v2
	}
	// Kept once per snapshot: a strong ETag (304 on If-None-Match) and
	// gzip for clients that accept it. The digests inside are of the
	// uncompressed files, whatever encoding the index itself travels in.
	hd := w.Header()
	hd.Set(warningsHeaderName, strconv.Itoa(d.warnings))
	hd.Set("Cache-Control", cacheControl)
	d.body.Serve(w, r)
}

func (h *handler) serveArchive(w http.ResponseWriter, r *http.Request, name string) {
	s, sl, ok := h.snapshot(w, r)
	if !ok {
		return
	}
	it, ok := s.items[name]
	if !ok {
		if b, blocked := s.l.BlockedName(name); blocked {
			writeError(w, http.StatusForbidden, service.CodeBlocked, service.BlockedError(name, b.Block).Message)
			return
		}
	}
	if !ok || it.kind != "archive" {
		writeError(w, http.StatusNotFound, service.CodeNotFound, "no archive for skill "+strconv.Quote(name)+" in this index: see .well-known/agent-skills/index.json")
		return
	}
	data, ok := archives.get(it.digest)
	if !ok {
		// Evicted: pack the skill again (its files read in pieces) and
		// serve it only if it is still the archive the index describes.
		pk, err := pack(it.sk, true)
		if err == nil {
			data, err = pk.archive, pk.archiveErr
		}
		if err != nil || skill.DigestBytes(data) != it.digest {
			sl.drop(s)
			h.log.Warn("well-known archive changed since its index was built; the index is rebuilt on next request", "agent", h.agent, "skill", name, "err", err)
			writeError(w, http.StatusConflict, "changed", "skill "+strconv.Quote(name)+" changed since the index was built: fetch the index again")
			return
		}
		archives.put(it.digest, data)
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/gzip")
	hd.Set("Content-Disposition", `attachment; filename="`+name+`.tar.gz"`)
	serveBytes(w, r, `"`+strings.TrimPrefix(it.digest, "sha256:")+`"`, data)
}

// serveFile serves NAME/PATH raw. SKILL.md always means the skill's entry
// file, whatever its case on disk.
func (h *handler) serveFile(w http.ResponseWriter, r *http.Request, rest string, v2 bool) {
	name, p, ok := strings.Cut(rest, "/")
	if !ok || name == "" || p == "" {
		writeError(w, http.StatusNotFound, service.CodeNotFound, "not found: file URLs are SKILL-NAME/PATH")
		return
	}
	l, gen, ok := h.loadout(w, r)
	if !ok {
		return
	}
	e, ok := l.Lookup(name)
	if !ok {
		if b, blocked := l.BlockedName(name); blocked {
			writeError(w, http.StatusForbidden, service.CodeBlocked, service.BlockedError(name, b.Block).Message)
			return
		}
		writeError(w, http.StatusNotFound, service.CodeNotFound, "no skill "+strconv.Quote(name)+" here")
		return
	}
	sk := e.Skill
	clean, err := skill.CleanPath(p)
	if err != nil {
		writeError(w, http.StatusBadRequest, service.CodeRefused, err.Error())
		return
	}
	isEntry := clean == "SKILL.md" || clean == sk.Entry
	if isEntry {
		clean = sk.Entry
	}
	// The file is opened through the skill (links out of it, special
	// files, a swapped skill folder, files changed since the scan and
	// files over the size cap are refused before a byte is read), hashed
	// in pieces for its ETag, and streamed.
	c, err := sk.OpenWhole(clean)
	if err != nil {
		h.fileError(w, name, clean, err)
		return
	}
	defer c.Close()
	// A file of up to maxBufferedFile bytes is read once, into a pooled
	// buffer, hashed and served from it; a larger one is hashed, then
	// streamed. (Reading it twice through io.Copy cost two 32 KiB
	// buffers a request, half of the route's time in the collector.)
	var body io.ReadSeeker
	var digest string
	if size := c.Size(); size <= maxBufferedFile {
		bp := fileBufs.Get().(*[]byte)
		defer fileBufs.Put(bp)
		if int64(cap(*bp)) < size {
			*bp = make([]byte, size)
		}
		buf := (*bp)[:size]
		n, err := c.ReadAt(buf, 0)
		if err != nil && err != io.EOF {
			h.fileError(w, name, clean, err)
			return
		}
		buf = buf[:n]
		digest = skill.DigestBytes(buf)
		body = bytes.NewReader(buf)
	} else {
		if digest, err = skill.DigestOf(c); err != nil {
			h.fileError(w, name, clean, err)
			return
		}
		body = io.NewSectionReader(c, 0, c.Size())
	}
	// A skill-md entry's digest is this file's: if a cached index says
	// otherwise, the file changed before a reload. Refuse rather than serve
	// bytes the index does not describe, and drop that index.
	if v2 && isEntry {
		sl := slotFor(h.svc, h.agent)
		sl.mu.Lock()
		s := sl.snap
		sl.mu.Unlock()
		if s != nil && s.gen == gen && s.l == l {
			if it, ok := s.items[name]; ok && it.kind == "skill-md" && it.digest != digest {
				sl.drop(s)
				writeError(w, http.StatusConflict, "changed", "skill "+strconv.Quote(name)+" changed since the index was built: fetch the index again")
				return
			}
		}
	}
	ct, text := "text/markdown", true
	f, _ := sk.File(clean)
	if !isEntry {
		ct, text = f.ContentType, !f.Binary
	}
	hd := w.Header()
	// Skill files are served for installers, never as pages, scripts or
	// styles of this server: internal/inert decides the headers.
	inert.Set(hd, r, clean, ct, text)
	if f.Executable {
		hd.Set("Loadout-Executable", "true")
	}
	serve(w, r, `"`+strings.TrimPrefix(digest, "sha256:")+`"`, body)
}

// maxBufferedFile is the largest file serveFile reads whole into a pooled
// buffer; fileBufs holds those buffers.
const maxBufferedFile = 256 << 10

var fileBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// fileError answers a file that is not served: 404 when it is not a file
// of the skill, 403 for a link out of the skill or a special file, 413
// over the size cap, 409 when it changed since the scan, else 500.
func (h *handler) fileError(w http.ResponseWriter, name, clean string, err error) {
	if se, ok := skill.AsServeError(err); ok {
		status, code := http.StatusForbidden, service.CodeRefused
		switch se.Code {
		case skill.CodeTooLarge:
			status, code = http.StatusRequestEntityTooLarge, service.CodeTooLarge
		case skill.CodeFolderChanged, skill.CodeFileChanged:
			status, code = http.StatusConflict, "changed"
		}
		writeJSONError(w, status, &service.Error{Code: code, Message: se.Error(), Path: clean,
			Problems: []skill.Diagnostic{{Severity: skill.Error, Code: se.Code, Message: se.Error(), Path: clean}}})
		return
	}
	if errors.Is(err, skill.ErrNotListed) || errors.Is(err, fs.ErrNotExist) {
		writeError(w, http.StatusNotFound, service.CodeNotFound, "skill "+strconv.Quote(name)+" has no file "+strconv.Quote(clean))
		return
	}
	writeError(w, http.StatusInternalServerError, service.CodeInternal, clean+" could not be read")
	h.log.Error("well-known: reading a skill file failed", "agent", h.agent, "skill", name, "path", clean, "err", err)
}

func serveBytes(w http.ResponseWriter, r *http.Request, etag string, body []byte) {
	serve(w, r, etag, bytes.NewReader(body))
}

func serve(w http.ResponseWriter, r *http.Request, etag string, body io.ReadSeeker) {
	hd := w.Header()
	hd.Set("ETag", etag)
	hd.Set("Cache-Control", cacheControl)
	hd.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", time.Time{}, body)
}

type errorBody struct {
	Error *service.Error `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSONError(w, status, &service.Error{Code: code, Message: msg})
}

func writeJSONError(w http.ResponseWriter, status int, e *service.Error) {
	hd := w.Header()
	hd.Set("Content-Type", "application/json; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorBody{Error: e})
}

// writeServiceError maps a service refusal to its status.
func writeServiceError(w http.ResponseWriter, err error) {
	e := service.AsError(err)
	status := errstatus.Of(e.Code)
	if status == http.StatusUnauthorized {
		w.Header().Set("Cache-Control", "no-store")
		errstatus.WriteUnauthorized(w, nil, e)
		return
	}
	writeJSONError(w, status, e)
}

// The index cache: one slot per (service, agent), shared by every handler
// of that pair, so a Handler made per request still hits it.

type slotKey struct {
	svc   *service.Service
	agent string
}

type slot struct {
	mu       sync.Mutex
	snap     *snapshot
	building *building // the build under way, if any
}

// building is an index build in progress; done is closed when snap is set.
type building struct {
	gen  uint64
	l    *catalog.Loadout
	done chan struct{}
	snap *snapshot
}

func (sl *slot) drop(s *snapshot) {
	sl.mu.Lock()
	if sl.snap == s {
		sl.snap = nil
	}
	sl.mu.Unlock()
}

const maxSlots = 4096

var (
	slotsMu sync.Mutex
	slots   = map[slotKey]*slot{}
)

func slotFor(svc *service.Service, agent string) *slot {
	slotsMu.Lock()
	defer slotsMu.Unlock()
	k := slotKey{svc, agent}
	if sl, ok := slots[k]; ok {
		return sl
	}
	if len(slots) >= maxSlots {
		clear(slots) // many services or agents: start again rather than grow
	}
	sl := &slot{}
	slots[k] = sl
	return sl
}

// The archive cache: archive bytes by their digest (content-addressed, so
// a hit is always exactly what an index advertised), least recently used
// dropped first once over archiveCacheBytes.

const archiveCacheBytes = 256 << 20

var archives = newByteCache(archiveCacheBytes)

type byteCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // front: most recent; values are *cached
	byKey map[string]*list.Element
}

type cached struct {
	key  string
	data []byte
}

func newByteCache(max int) *byteCache {
	return &byteCache{max: max, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *byteCache) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cached).data, true
}

func (c *byteCache) put(key string, data []byte) {
	if len(data) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&cached{key: key, data: data})
	c.size += len(data)
	for c.size > c.max {
		el := c.order.Back()
		v := el.Value.(*cached)
		c.order.Remove(el)
		delete(c.byKey, v.key)
		c.size -= len(v.data)
	}
}
