package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadout/loadout/internal/errstatus"
	"github.com/loadout/loadout/service"
)

// Auth authenticates every request but GET /healthz and the index (GET /,
// the route table, which holds nothing a binary of loadout does not): it reads
// "Authorization: Bearer TOKEN" (none is passed to the service as ""),
// asks svc.Authenticate, and on success puts the principal in the request
// context (service.WithPrincipal). A refusal is a 401 JSON error with
// a WWW-Authenticate bearer challenge saying how to get and send a token
// (errstatus.WriteUnauthorized).
//
// A request without an Authorization header but with the web UI's session
// cookie (service.SessionCookie) acts for the session's principal; when
// it changes something (not GET, HEAD or OPTIONS) it must carry the
// session's CSRF token in the X-CSRF-Token header, else it is a 403 with
// code "csrf" (service.SessionRequest decides both, for the UI's pages
// too). A cookie whose session has ended counts as none: the open
// loopback mode still answers, otherwise it is a 401 saying to sign in
// again. Bearer requests are unchanged and need no CSRF token (a page of
// another site cannot make a browser send an Authorization header).
//
// The paths of OAuth discovery (errstatus.IsOAuthDiscovery), which
// OAuth-aware MCP clients ask after a 401, get a JSON 404 saying this
// server takes static bearer tokens, without a token: a 401 there too
// would have the client report a failed OAuth flow instead.
func Auth(svc *service.Service, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || r.URL.Path == "/" {
			next.ServeHTTP(w, r)
			return
		}
		if errstatus.IsOAuthDiscovery(r.URL.Path) {
			errstatus.NoOAuth(w)
			return
		}
		bearer := ""
		if h := r.Header.Get("Authorization"); h != "" {
			scheme, tok, ok := strings.Cut(h, " ")
			tok = strings.TrimSpace(tok)
			if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
				errstatus.WriteUnauthorized(w, r, &service.Error{Code: service.CodeUnauthorized, Message: "the Authorization header must be \"Bearer TOKEN\""})
				return
			}
			bearer = tok
		}
		if bearer == "" {
			if c, err := r.Cookie(service.SessionCookie); err == nil && c.Value != "" {
				p, _, err := svc.SessionRequest(r.Context(), c.Value, r.Method, r.Header.Get(service.CSRFHeader))
				switch e := service.AsError(err); {
				case err == nil:
					r = withPrincipal(r, p)
					if st, ok := r.Context().(*reqState); ok {
						st.uiSession = true
					}
					next.ServeHTTP(w, r)
					return
				case e.Code == service.CodeCSRF:
					writeErr(w, e)
					return
				}
				// An ended session: as without the cookie, but a refusal
				// says to sign in again.
				if p, err := svc.Authenticate(r.Context(), ""); err == nil {
					next.ServeHTTP(w, withPrincipal(r, p))
					return
				}
				errstatus.WriteUnauthorized(w, r, service.AsError(err))
				return
			}
		}
		authn := svc.Authenticate
		if r.URL.Path == MetricsPath {
			// The one route a metrics token may call (and its own
			// check refuses every other token).
			authn = svc.AuthenticateMetrics
		}
		p, err := authn(r.Context(), bearer)
		if err != nil {
			e := service.AsError(err)
			if e.Code != service.CodeUnauthorized {
				// A token store failure: say so without details.
				if l := LoggerFrom(r.Context()); l != nil {
					l.Error("authentication failed", "err", e.Error())
				} else {
					slog.Error("authentication failed", "err", e.Error())
				}
				e = &service.Error{Code: service.CodeInternal, Message: "the token could not be checked"}
				writeErr(w, e)
				return
			}
			errstatus.WriteUnauthorized(w, r, e)
			return
		}
		next.ServeHTTP(w, withPrincipal(r, p))
	})
}

type loggerKey struct{}

// RequestIDFrom returns the request id RequestID stored, or "".
func RequestIDFrom(ctx context.Context) string {
	if s, ok := ctx.Value(stateKey{}).(*reqState); ok {
		return s.id
	}
	return ""
}

// WithLogger returns ctx carrying a logger; Log sets one per request (with
// the request id), and handlers log through it.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// LoggerFrom returns the logger in ctx (WithLogger's, else Log's with the
// request id), or nil.
func LoggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	if s, ok := ctx.Value(stateKey{}).(*reqState); ok && s.base != nil {
		return s.log()
	}
	return nil
}

var (
	idPrefix  = newIDPrefix()
	idCounter atomic.Uint64
)

func newIDPrefix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validID accepts an incoming X-Request-Id of up to 128 visible ASCII
// characters; anything else is replaced, so ids are safe to log.
func validID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// RequestID gives every request an id: the incoming X-Request-Id when it is
// sensible, else a new one (a per-process random prefix and a counter). It
// is echoed in the response's X-Request-Id and stored in the context
// (RequestIDFrom).
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, r := stateOf(r)
		id := r.Header.Get("X-Request-Id")
		if !validID(id) {
			// One allocation: the prefix, a dash and the counter in base 36.
			var buf [64]byte
			b := append(buf[:0], idPrefix...)
			b = append(b, '-')
			id = string(strconv.AppendUint(b, idCounter.Add(1), 36))
		}
		s.id = id
		s.idHdr[0] = id
		w.Header()["X-Request-Id"] = s.idHdr[:]
		next.ServeHTTP(w, r)
	})
}

// slowRequest is how long a request may take before its log line is a
// warning.
var slowRequest = time.Second

// Log logs one line per request (method, path, status, bytes, duration,
// request id) and puts logger, with the request id attached, in the
// request context for handlers. Put it inside RequestID.
func Log(logger *slog.Logger, next http.Handler) http.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s, r := stateOf(r)
		s.start = start // Measure's too: one clock read fewer a request
		id := s.id
		// The request's logger gets the request id only when it is used
		// (LoggerFrom): With allocates, and most requests never log.
		if _, ok := r.Context().Value(loggerKey{}).(*slog.Logger); ok || s.base != nil {
			// A logger set before (WithLogger, or a Log outside this one)
			// would win over the state's: set this one the old way.
			l := logger
			if id != "" && logger.Enabled(r.Context(), slog.LevelInfo) {
				l = logger.With("request_id", id)
			}
			r = r.WithContext(WithLogger(r.Context(), l))
		} else {
			s.base = logger
		}
		sw := &s.status
		if s.sw {
			sw = &statusWriter{}
		}
		s.sw = true
		*sw = statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		// Successful requests log at debug level: at tens of thousands of
		// requests a second a line each would cost more than the request.
		// Client errors are info, server errors errors, and slow requests
		// warnings; an event stream (MCP's GET stream, the UI's live
		// updates) is long by design, so it is never slow.
		level := slog.LevelDebug
		took := s.took // Measure's, when it runs inside: one clock read for both
		if took == 0 {
			took = time.Since(start)
		}
		switch {
		case sw.status == http.StatusServiceUnavailable && r.URL.Path == "/readyz":
			// Not ready yet: what a probe polls for while serve starts,
			// not a failure.
		case sw.status >= 500:
			level = slog.LevelError
		case took > slowRequest && !strings.HasPrefix(sw.Header().Get("Content-Type"), "text/event-stream"):
			level = slog.LevelWarn
		case sw.status >= 400:
			level = slog.LevelInfo
		}
		if !logger.Enabled(r.Context(), level) {
			return
		}
		// A link URL's path holds its token: log it redacted.
		logger.LogAttrs(r.Context(), level, "http request",
			slog.String("method", r.Method), slog.String("path", service.RedactLinkPath(r.URL.Path)),
			slog.Int("status", sw.status), slog.Int64("bytes", sw.bytes),
			slog.Duration("duration", time.Since(start)), slog.String("request_id", id))
	})
}

// statusWriter records the status and size of a response. It passes
// Flush through (streamed MCP responses need it) and unwraps for
// http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(p)
	s.bytes += int64(n)
	return n, err
}

// ReadFrom passes io.Copy into the response (http.ServeContent's files)
// on, so that it copies without a 32 KiB buffer of its own every request.
func (s *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := s.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = copyPooled(s.ResponseWriter, r)
	}
	s.bytes += n
	return n, err
}

// copyBufs are the buffers of copyPooled.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyPooled is io.Copy(w, r) through a pooled buffer and w's Write (not
// its ReadFrom, which may be the caller).
func copyPooled(w io.Writer, r io.Reader) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	return io.CopyBuffer(struct{ io.Writer }{w}, r, *bp)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
