package httpapi

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/httpbody"
	"github.com/loadout/loadout/service"
)

// The page size of GET /v1/diagnostics, as the skill list's: the whole
// list was 5.8 MB at 10,000 skills with a finding each, and ran at 0.03x
// of the cached load; a page of 100 is about 30 KB. A larger limit than
// MaxDiagLimit is served as MaxDiagLimit (the answer's "limit" says so),
// as the skill list's.
const (
	DefaultDiagLimit = DefaultListLimit
	MaxDiagLimit     = MaxListLimit
)

// MaxDiagPageBytes bounds the encoded pages GET /v1/diagnostics keeps for
// one report (counted twice, for the gzip form each may add); past it the
// page cache starts afresh.
const MaxDiagPageBytes = 16 << 20

// diagCursorPrefix starts every diagnostics cursor (before base64): the
// report it was made from (a number this process gives each report) and
// the offset of the next diagnostic, "d1:SEQ:OFFSET".
const diagCursorPrefix = "d1:"

// diagSeq numbers the reports GET /v1/diagnostics serves, so that a
// cursor names the report it pages through.
var diagSeq atomic.Uint64

// diagEntry is GET /v1/diagnostics for one report of the catalog
// (service.Report: made once per catalog generation and safety policy,
// and the same the UI and check count): its pages, each encoded on first
// request with its ETag and gzip form. Encoding a page costs its rows
// only, so the first request of a report is as cheap as the tenth.
type diagEntry struct {
	rep    *catalog.Report
	seq    uint64
	counts []byte // the tally's JSON, on every page

	mu        sync.RWMutex
	pages     map[pageKey]*httpbody.Body
	pageBytes int
}

func newDiagEntry(rep *catalog.Report) (*diagEntry, error) {
	counts, err := marshal(tallyJSON(rep.Total))
	if err != nil {
		return nil, err
	}
	return &diagEntry{rep: rep, seq: diagSeq.Add(1), counts: bytes.TrimSuffix(counts, []byte("\n"))}, nil
}

// diagEntry is the entry of rep: the one kept, or a new one kept.
func (a *api) diagEntry(rep *catalog.Report) (*diagEntry, error) {
	e := a.diags.Load()
	if e != nil && e.rep == rep {
		return e, nil
	}
	ne, err := newDiagEntry(rep)
	if err != nil {
		return nil, err
	}
	if a.diags.CompareAndSwap(e, ne) {
		return ne, nil
	}
	if e = a.diags.Load(); e != nil && e.rep == rep {
		return e, nil // another request kept one meanwhile
	}
	return ne, nil
}

// diagCursor is the page cursor of the diagnostics from offset on.
func (e *diagEntry) cursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(diagCursorPrefix + strconv.FormatUint(e.seq, 10) + ":" + strconv.Itoa(offset)))
}

// page is the page of at most limit diagnostics from offset on, and the
// offset of the next page (0 when it is the last).
func (e *diagEntry) page(offset, limit int) (*httpbody.Body, int, error) {
	ds := e.rep.Diagnostics
	end := min(offset+limit, len(ds))
	next := 0
	if end < len(ds) {
		next = end
	}
	k := pageKey{offset, limit}
	e.mu.RLock()
	b := e.pages[k]
	e.mu.RUnlock()
	if b != nil {
		return b, next, nil
	}
	var buf bytes.Buffer
	buf.WriteString(`{"diagnostics":`)
	rows, err := marshal(orEmpty(ds[offset:end]))
	if err != nil {
		return nil, 0, err
	}
	buf.Write(bytes.TrimSuffix(rows, []byte("\n")))
	buf.WriteString(`,"counts":`)
	buf.Write(e.counts)
	buf.WriteString(`,"limit":`)
	buf.WriteString(strconv.Itoa(limit))
	if next > 0 {
		buf.WriteString(`,"hasMore":true,"nextPage":"`)
		buf.WriteString(e.cursor(next))
		buf.WriteString("\"}\n")
	} else {
		buf.WriteString(`,"hasMore":false}` + "\n")
	}
	body := httpbody.New(buf.Bytes(), ctJSON[0])
	e.mu.Lock()
	defer e.mu.Unlock()
	if b := e.pages[k]; b != nil { // another request built it meanwhile
		return b, next, nil
	}
	if e.pages == nil || e.pageBytes+2*buf.Len() > MaxDiagPageBytes {
		e.pages, e.pageBytes = map[pageKey]*httpbody.Body{}, 0
	}
	e.pages[k] = body
	e.pageBytes += 2 * buf.Len()
	return body, next, nil
}

// diagParams reads limit and page: 400 naming the parameter when either is
// not one this server could have made or accepts, 409 when the page's
// cursor is of a report the catalog has moved on from (read again from the
// first page: offsets into another report would skip or repeat).
func diagParams(w http.ResponseWriter, r *http.Request, e *diagEntry) (offset, limit int, ok bool) {
	limit = DefaultDiagLimit
	if r.URL.RawQuery == "" {
		return 0, limit, true
	}
	q := r.URL.Query()
	if s := q.Get("limit"); s != "" {
		n, ok := pageLimit(s, MaxDiagLimit)
		if !ok {
			writeErr(w, badRequest("limit", "limit=%q: give a number of diagnostics from 1 (default %d; a larger limit than %d is served as %d, the answer's limit)", s, DefaultDiagLimit, MaxDiagLimit, MaxDiagLimit))
			return 0, 0, false
		}
		limit = n
	}
	s, present := q["page"]
	if !present {
		return 0, limit, true
	}
	bad := func() (int, int, bool) {
		writeErr(w, badRequest("page", "page=%q is not a diagnostics cursor of this server: pass the nextPage value of the previous answer as it is, or leave page out for the first page", truncate(s[0], 80)))
		return 0, 0, false
	}
	if len(s[0]) > maxCursorLen {
		return bad()
	}
	raw, err := base64.RawURLEncoding.DecodeString(s[0])
	rest, found := strings.CutPrefix(string(raw), diagCursorPrefix)
	seqText, offText, two := strings.Cut(rest, ":")
	if err != nil || !found || !two {
		return bad()
	}
	seq, err1 := strconv.ParseUint(seqText, 10, 64)
	off, err2 := strconv.Atoi(offText)
	if err1 != nil || err2 != nil || seq == 0 || seq > diagSeq.Load() || off < 1 {
		return bad()
	}
	if seq != e.seq || off >= len(e.rep.Diagnostics) {
		writeErr(w, &service.Error{Code: service.CodeConflict, Field: "page",
			Message: "the diagnostics changed since that page was read (the catalog changed): read them again from the first page (leave page out)"})
		return 0, 0, false
	}
	return off, limit, true
}
