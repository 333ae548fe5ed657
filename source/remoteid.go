package source

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// RemoteID names a remote source (a git repository or a skills index)
// from its location and ref: the last part of the URL (without .git) and
// the ref, like "skills@main", made of letters, digits, '.', '_', '-' and
// '@' so that it can stand in a URL path and a folder name. Two sources
// that would get the same ID need an explicit one.
func RemoteID(location, ref string) string {
	loc := location
	if u, err := url.Parse(loc); err == nil && u.Host != "" && strings.Trim(u.Path, "/") == "" {
		loc = u.Host
	} else if err == nil && strings.HasSuffix(u.Path, "/.well-known/agent-skills/index.json") {
		loc = u.Host
	}
	loc = strings.TrimRight(loc, "/")
	if i := strings.LastIndexAny(loc, "/\\:"); i >= 0 {
		loc = loc[i+1:]
	}
	id := strings.TrimSuffix(loc, ".git")
	if ref != "" {
		id += "@" + ref
	}
	id = sanitizeID(id)
	if len(id) > 64 {
		id = id[:64]
	}
	return strings.TrimLeft(id, ".")
}

func sanitizeID(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-', r == '@':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "remote"
	}
	return b.String()
}

// Origin checks s as a web origin written alone, "https://host" or
// "http://host:port", and returns it as OriginOf gives it. Anything more
// (a user, a path, even "/", a query, a fragment, a wildcard) is refused,
// so that an allowlist entry means exactly one origin.
func Origin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%q is not a URL: give an origin alone, like https://cdn.example.com", s)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%q: give an http:// or https:// origin, like https://cdn.example.com", s)
	}
	switch {
	case u.Opaque != "" || u.Host == "":
		return "", fmt.Errorf("%q has no host: give an origin alone, like https://cdn.example.com", s)
	case u.User != nil:
		return "", fmt.Errorf("%q holds a user name or password: give an origin alone, like https://cdn.example.com", s)
	case u.Path != "" || u.RawPath != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(s, "?#"):
		return "", fmt.Errorf("%q has more than an origin (a path, query or fragment, or a trailing /): give scheme and host alone, like https://cdn.example.com", s)
	}
	if err := checkHost(u.Hostname(), u.Port()); err != nil {
		return "", fmt.Errorf("%q: %v", s, err)
	}
	return OriginOf(u), nil
}

func checkHost(host, port string) error {
	if port != "" {
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return errors.New("its port is not a number from 1 to 65535")
		}
	}
	if strings.Contains(host, ":") {
		if a, err := netip.ParseAddr(host); err != nil || a.Zone() != "" {
			return errors.New("its host is not an IP address (without a zone) or a DNS name")
		}
		return nil
	}
	if host == "" || len(host) > 253 {
		return errors.New("its host is not a DNS name or an IP address")
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return errors.New("its host is not a DNS name or an IP address (a wildcard allows nothing: list each origin)")
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return errors.New("its host is not a DNS name or an IP address (a wildcard allows nothing: list each origin)")
			}
		}
	}
	return nil
}

// OriginOf is u's origin as compared: scheme://host[:port] in lower case,
// without the scheme's default port (https://x:443 is https://x).
func OriginOf(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	scheme := u.Scheme // url.Parse gives it in lower case
	if p := u.Port(); p != "" && !(scheme == "https" && p == "443" || scheme == "http" && p == "80") {
		host += ":" + p
	}
	return scheme + "://" + host
}

// ValidRemoteID reports whether id can name a remote source: 1 to 64
// letters, digits, '.', '_', '-' or '@', not starting with '.'.
func ValidRemoteID(id string) bool {
	if id == "" || len(id) > 64 || id[0] == '.' {
		return false
	}
	return sanitizeID(id) == id
}
