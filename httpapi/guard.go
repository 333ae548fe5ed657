package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/loadout/loadout/service"
)

// Error codes of the guards, which answer before authentication.
const (
	// CodeHostNotAllowed (403): the Host header names a host this server
	// does not answer to. It is how a DNS rebinding page is refused: its
	// requests reach a loopback server under the attacker's name.
	CodeHostNotAllowed = "host_not_allowed"
	// CodeCrossOrigin (403): a browser page of another origin sent a
	// request that changes something (a CSRF attempt, or a page that is
	// not on the allowed list).
	CodeCrossOrigin = "cross_origin"
	// CodeUnsupportedMediaType (415): the body's Content-Type is not one
	// the route takes.
	CodeUnsupportedMediaType = "unsupported_media_type"
	// CodeRequestTimeout (408): the request body did not arrive within the
	// read timeout.
	CodeRequestTimeout = "request_timeout"
)

// GuardOptions say which Host headers and browser origins the server
// answers.
type GuardOptions struct {
	// Listen is the address the server listens on (like
	// "127.0.0.1:7777" or "[::]:7777"). A Host naming its host is
	// accepted; an unspecified address (0.0.0.0, ::) accepts the IP
	// address each connection arrived on.
	Listen string
	// AllowedHosts are further Host values: a proxy's public name, or a
	// DNS name of this machine. "name" allows any port, "name:port" only
	// that one. Names compare case-insensitively.
	AllowedHosts []string
	// AllowedOrigins are browser origins ("https://ui.example.com") whose
	// pages may send state-changing requests.
	AllowedOrigins []string
}

// Guard refuses, on every route and before authentication:
//
//   - a Host the server does not answer to: 403 host_not_allowed. It
//     answers to localhost, loopback addresses, the address each
//     connection arrived on, the host of Listen, and AllowedHosts. A
//     page that rebinds its own DNS name to 127.0.0.1 sends its name as
//     Host, so it is refused even though the connection is loopback.
//   - a browser request from another origin that is not GET, HEAD or
//     OPTIONS: 403 cross_origin. Browsers say where a request comes from
//     (Sec-Fetch-Site, else Origin); requests without either header are
//     not from a browser page and pass (net/http.CrossOriginProtection).
//
// Both matter most in the open loopback mode, where a request without a
// token acts as admin: without them, any web page the operator visits
// could write skills (CSRF) or read and delete everything (rebinding).
func Guard(opt GuardOptions, next http.Handler) (http.Handler, error) {
	g := &guard{next: next, names: map[string]bool{"localhost": true}, hostPorts: map[string]bool{}, ips: map[netip.Addr]bool{}}
	if opt.Listen != "" {
		h, _, err := net.SplitHostPort(opt.Listen)
		if err != nil {
			return nil, fmt.Errorf("listen address %q: %v", opt.Listen, err)
		}
		if ip, err := netip.ParseAddr(h); err == nil {
			ip = ip.Unmap()
			if ip.IsUnspecified() {
				g.anyLocal = true
			} else {
				g.ips[ip] = true
			}
		} else if h != "" {
			g.names[strings.ToLower(h)] = true
		}
	}
	for _, h := range opt.AllowedHosts {
		if err := checkAllowedHost(h); err != nil {
			return nil, err
		}
		h = strings.ToLower(strings.TrimSpace(h))
		if name, port, err := net.SplitHostPort(h); err == nil {
			g.hostPorts[trimHost(name)+":"+port] = true
			continue
		}
		name := trimHost(h)
		if ip, err := netip.ParseAddr(name); err == nil {
			g.ips[ip.Unmap()] = true
		} else {
			g.names[name] = true
		}
	}
	g.cop = http.NewCrossOriginProtection()
	for _, o := range opt.AllowedOrigins {
		if err := g.cop.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("allowed origin %q: %v: write scheme://host[:port], like https://ui.example.com", o, err)
		}
	}
	return g, nil
}

// checkAllowedHost refuses what cannot be a Host value.
func checkAllowedHost(h string) error {
	if strings.TrimSpace(h) == "" {
		return fmt.Errorf("allowed host is empty: give a host name, like skills.example.com, or host:port")
	}
	// A URL ("https://x") has a "/"; a path, query, fragment or user
	// cannot be in a Host either.
	if strings.ContainsAny(h, "/?#@ \t") {
		return fmt.Errorf("allowed host %q is not a host name: give a name or address, optionally with :port, like skills.example.com or 10.0.0.5:7777", h)
	}
	return nil
}

// trimHost lowercases a host name and drops IPv6 brackets and the dot of
// a fully qualified name ("localhost.").
func trimHost(h string) string {
	h = strings.ToLower(h)
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(h, ".")
}

type guard struct {
	next      http.Handler
	names     map[string]bool // any port
	hostPorts map[string]bool // name:port
	ips       map[netip.Addr]bool
	anyLocal  bool // listening on 0.0.0.0 or ::
	cop       *http.CrossOriginProtection
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r) {
		writeErr(w, &service.Error{Code: CodeHostNotAllowed, Field: "Host",
			Message: fmt.Sprintf("this server does not answer to Host %q (a page rebinding its DNS name to this server sends its own name): use localhost, a loopback address or the address it listens on, or start it with --allowed-host NAME (config: server.allowedHosts) if the name is yours, such as a proxy's", r.Host)})
		return
	}
	if err := g.cop.Check(r); err != nil {
		from := r.Header.Get("Origin")
		if from == "" {
			from = "Sec-Fetch-Site: " + r.Header.Get("Sec-Fetch-Site")
		}
		writeErr(w, &service.Error{Code: CodeCrossOrigin, Field: "Origin",
			Message: fmt.Sprintf("%s %s from a page of another origin (%s) is refused: pages may only read here. Send it from a non-browser client or a page of this server's origin, or start the server with --allowed-origin (config: server.allowedOrigins) for an origin you trust", r.Method, r.URL.Path, from)})
		return
	}
	g.next.ServeHTTP(w, r)
}

func (g *guard) hostAllowed(r *http.Request) bool {
	h := r.Host
	if h == "" {
		// HTTP/1.0 without Host: not a browser, so not a rebinding page.
		return true
	}
	name, port, err := net.SplitHostPort(h)
	if err != nil {
		name, port = h, ""
	}
	name = trimHost(name)
	if port != "" && g.hostPorts[name+":"+port] {
		return true
	}
	if g.names[name] {
		return true
	}
	ip, err := netip.ParseAddr(name)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	if ip.IsLoopback() || g.ips[ip] {
		return true
	}
	// Listening on every address: the address this connection arrived
	// on, which is what a client typing this machine's address sends. It
	// cannot be a rebinding page's Host, which is a name.
	if g.anyLocal {
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
			if ap, err := netip.ParseAddrPort(la.String()); err == nil && ap.Addr().Unmap().WithZone("") == ip.WithZone("") {
				return true
			}
		}
	}
	return false
}
