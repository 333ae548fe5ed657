// Package ignore matches paths against the patterns of .gitignore-style files
// (.gitignore, .ignore, .fdignore) found while walking a directory tree.
//
// The semantics follow git's (see gitignore(5)); where the documentation is
// silent, the behaviour of git's own matcher is followed:
//
//   - blank lines and lines starting with "#" are skipped; "\#" and "\!"
//     escape a leading "#" or "!"; a UTF-8 BOM and a trailing "\r" are
//     dropped; trailing spaces are trimmed unless escaped with "\".
//   - "!" negates a pattern; the last matching pattern decides, patterns of a
//     deeper directory's files override shallower ones, and a path inside an
//     ignored directory stays ignored whatever later patterns say.
//   - a trailing "/" makes a pattern match directories only.
//   - a pattern with a "/" at the start or in the middle is anchored to the
//     directory of its ignore file; otherwise it matches the base name at any
//     depth below that directory.
//   - "*" and "?" never match "/"; "[...]" classes support "!" or "^"
//     negation, ranges, "\" escapes and POSIX classes such as "[:digit:]";
//     "**/" at the start, "/**" at the end and "/**/" in the middle match any
//     number of directories, and other runs of "*" act like one "*".
//
// Matching is byte-wise and case-sensitive, as git's is by default (so "?"
// matches one byte, not one multi-byte character).
package ignore

import (
	"bytes"
	"errors"
	"io/fs"
	"path"
	"strings"
)

// DefaultFiles are the names of the ignore files honoured in every directory,
// in the order their patterns are added (later files take precedence).
var DefaultFiles = []string{".gitignore", ".ignore", ".fdignore"}

// Rules is the set of ignore patterns in force in one directory: its
// parent's rules plus the patterns of the ignore files found in it.
//
// A Rules value is immutable once built, so one parent may be shared by many
// goroutines walking different subdirectories. The nil *Rules is valid and
// ignores nothing.
type Rules struct {
	parent *Rules
	dir    string // directory of the ignore file, "" for the walk root
	prefix string // dir + "/", or "" for the root
	file   string // name of the ignore file, if known
	pats   []pattern
}

// Match describes the pattern that decided whether a path is ignored.
type Match struct {
	Dir     string // directory of the ignore file ("" for the walk root)
	File    string // name of the ignore file, "" if added with Add
	Line    int    // 1-based line number of the pattern in its file
	Pattern string // the pattern as written, after trimming trailing spaces
	Negated bool   // the pattern starts with "!": the path is re-included
}

// Add returns the rules in force below dir: r's rules plus the patterns of
// one ignore file found in dir. The receiver is not modified; it may be nil.
//
// dir is a slash-separated path relative to the walk root ("" or "." for the
// root itself). Calls must follow the tree downward, as a walker's do: rules
// added later take precedence over rules added earlier, so the files of a
// deeper directory must be added after those of its parents, and of two files
// in the same directory the one added last wins.
//
// If data holds no patterns, Add returns r itself.
func (r *Rules) Add(dir string, data []byte) *Rules {
	return r.add(dir, "", data)
}

// AddFS adds the ignore files called names (DefaultFiles if none are given)
// found in directory dir of fsys, in that order. Missing files are skipped.
// dir is slash-separated and relative to the root of fsys, which must be the
// walk root; "" or "." is the root.
func (r *Rules) AddFS(fsys fs.FS, dir string, names ...string) (*Rules, error) {
	if len(names) == 0 {
		names = DefaultFiles
	}
	dir = cleanDir(dir)
	for _, name := range names {
		p := name
		if dir != "" {
			p = dir + "/" + name
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return r, err
		}
		r = r.add(dir, name, data)
	}
	return r, nil
}

func cleanDir(dir string) string {
	dir = strings.Trim(dir, "/")
	if dir == "." {
		return ""
	}
	if dir != "" {
		dir = path.Clean(dir)
	}
	return dir
}

func (r *Rules) add(dir, file string, data []byte) *Rules {
	dir = cleanDir(dir)
	pats := parse(data)
	if len(pats) == 0 {
		return r
	}
	n := &Rules{parent: r, dir: dir, file: file, pats: pats}
	if dir != "" {
		n.prefix = dir + "/"
	}
	return n
}

// Ignored reports whether the path rel is ignored. rel is slash-separated
// and relative to the walk root; isDir tells whether it names a directory (a
// trailing "/" on rel also means a directory). A path is ignored if it or any
// of its parent directories is matched by an ignore pattern that is not
// overridden by a later negated one.
func (r *Rules) Ignored(rel string, isDir bool) bool {
	if r == nil {
		return false
	}
	m := r.lookup(rel, isDir, true)
	return m != nil && !m.neg
}

// IgnoredEntry is Ignored for walkers that never descend into ignored
// directories: it assumes rel's parent directories are not ignored and
// consults the patterns for rel itself only, which is cheaper for deep paths.
func (r *Rules) IgnoredEntry(rel string, isDir bool) bool {
	if r == nil {
		return false
	}
	m := r.lookup(rel, isDir, false)
	return m != nil && !m.neg
}

// Explain returns the pattern that decides whether rel is ignored (matching
// rel itself or, as in Ignored, one of its parent directories), and false if
// no pattern matches. The path is ignored when a match is found and
// Match.Negated is false.
func (r *Rules) Explain(rel string, isDir bool) (Match, bool) {
	if r == nil {
		return Match{}, false
	}
	var owner *Rules
	m := r.lookupOwner(rel, isDir, true, &owner)
	if m == nil {
		return Match{}, false
	}
	return Match{Dir: owner.dir, File: owner.file, Line: m.line, Pattern: m.text, Negated: m.neg}, true
}

func (r *Rules) lookup(rel string, isDir, parents bool) *pattern {
	return r.lookupOwner(rel, isDir, parents, nil)
}

func (r *Rules) lookupOwner(rel string, isDir, parents bool, owner **Rules) *pattern {
	if strings.HasSuffix(rel, "/") {
		rel = strings.TrimRight(rel, "/")
		isDir = true
	}
	if rel == "" || rel == "." {
		return nil
	}
	if parents {
		// A path inside an excluded directory cannot be re-included: git
		// does not even look inside such a directory.
		for i := 1; i < len(rel); i++ {
			if rel[i] != '/' {
				continue
			}
			if m := r.decide(rel[:i], true, owner); m != nil && !m.neg {
				return m
			}
		}
	}
	return r.decide(rel, isDir, owner)
}

// decide returns the last pattern matching p, searching the deepest rules
// first and each file's patterns from the last line up.
func (r *Rules) decide(p string, isDir bool, owner **Rules) *pattern {
	base := p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		base = p[i+1:]
	}
	for n := r; n != nil; n = n.parent {
		// Patterns apply only strictly below their file's directory.
		name := p
		if n.prefix != "" {
			if len(p) <= len(n.prefix) || !strings.HasPrefix(p, n.prefix) {
				continue
			}
			name = p[len(n.prefix):]
		}
		for i := len(n.pats) - 1; i >= 0; i-- {
			pt := &n.pats[i]
			if pt.dirOnly && !isDir {
				continue
			}
			var ok bool
			if pt.anchored {
				ok = pt.match(name)
			} else {
				ok = pt.match(base)
			}
			if ok {
				if owner != nil {
					*owner = n
				}
				return pt
			}
		}
	}
	return nil
}

// parse reads the patterns of one ignore file.
func parse(data []byte) []pattern {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var pats []pattern
	line := 0
	for len(data) > 0 {
		line++
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		if len(l) == 0 || l[0] == '#' {
			continue
		}
		l = bytes.TrimSuffix(l, []byte("\r"))
		s := trimTrailingSpaces(string(l))
		if p, ok := compile(s); ok {
			p.line = line
			pats = append(pats, p)
		}
	}
	return pats
}

// trimTrailingSpaces removes trailing spaces that are not escaped with a
// backslash.
func trimTrailingSpaces(s string) string {
	end := len(s)
	spaceFrom := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if spaceFrom < 0 {
				spaceFrom = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			spaceFrom = -1
		default:
			spaceFrom = -1
		}
	}
	if spaceFrom >= 0 {
		end = spaceFrom
	}
	return s[:end]
}
