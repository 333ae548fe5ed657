package source

import (
	"net/url"
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

// ValidRemoteID reports whether id can name a remote source: 1 to 64
// letters, digits, '.', '_', '-' or '@', not starting with '.'.
func ValidRemoteID(id string) bool {
	if id == "" || len(id) > 64 || id[0] == '.' {
		return false
	}
	return sanitizeID(id) == id
}
