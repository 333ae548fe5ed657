// Package config reads loadout.json: the agents, their skill sources and
// the limits of discovery. JSON with comments and trailing commas is
// accepted; an unknown key is an error that names it.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/jsonc"
	"github.com/loadout/loadout/source"
)

// DefaultName is the config file looked for in the working folder.
const DefaultName = "loadout.json"

// File is the content of loadout.json.
type File struct {
	Schema string `json:"$schema,omitempty"`
	// Agents, in order. The seed's shape: agentId, displayName,
	// description, skills; plus preload, tools, budget and format.
	Agents []catalog.AgentSpec `json:"agents"`
	// Budget and Format are defaults for agents that set neither.
	Budget int    `json:"budget,omitempty"`
	Format string `json:"format,omitempty"`
	// Limits bound folder discovery.
	Limits Limits `json:"limits,omitempty"`
	// Store is where stored skills live: a file path means SQLite, a
	// postgres:// URL means PostgreSQL. Default: loadout.db next to this
	// file. --db and LOADOUT_DB override it.
	Store string `json:"store,omitempty"`
	// StoreLimits bound what may be stored.
	StoreLimits StoreLimits `json:"storeLimits,omitempty"`
	// Plugins are plugin folders (each holding plugin.json), in precedence
	// order.
	Plugins []string `json:"plugins,omitempty"`

	// Path is the absolute path the file was read from.
	Path string `json:"-"`
}

// Limits bound folder discovery; zero means the default.
type Limits struct {
	MaxDepth int `json:"maxDepth,omitempty"`
	MaxDirs  int `json:"maxDirs,omitempty"`
	MaxFiles int `json:"maxFiles,omitempty"`
	// MaxFileSize is the largest file of a folder skill read or served
	// whole (default source.DefaultMaxFileSize, 16 MiB); larger files are
	// served only in ranges (read_skill_file offset/length).
	MaxFileSize int64 `json:"maxFileSize,omitempty"`
}

// StoreLimits bound what the store accepts; zero means the default.
type StoreLimits struct {
	MaxFileSize  int64 `json:"maxFileSize,omitempty"`
	MaxTotalSize int64 `json:"maxTotalSize,omitempty"`
	MaxFiles     int   `json:"maxFiles,omitempty"`
	WarnTextSize int64 `json:"warnTextSize,omitempty"`
}

// DefaultStoreName is the SQLite file used when no store is configured.
const DefaultStoreName = "loadout.db"

// StoreDSN returns the store to open: a postgres:// URL as given, or an
// absolute SQLite path (relative paths resolve against the config's folder;
// empty means loadout.db beside the config).
func (f *File) StoreDSN() string {
	return ResolveStore(filepath.Dir(f.Path), f.Store)
}

// ResolveStore resolves a store setting against dir: URLs stay as they
// are, "" is dir/loadout.db, and a relative file path joins dir.
func ResolveStore(dir, dsn string) string {
	if IsPostgres(dsn) {
		return dsn
	}
	if dsn == "" {
		dsn = DefaultStoreName
	}
	return Resolve(dir, dsn)
}

// IsPostgres reports whether a store setting names PostgreSQL.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Error is a config problem, naming the file, and the field when there is one.
type Error struct {
	File  string
	Field string
	Line  int
	Col   int
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Load reads and checks a config file. Relative roots and preload paths
// resolve against the file's folder; a leading ~ is the home folder.
func Load(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{File: abs, Msg: "no such config file: create it, or pass --root DIR to use a skills folder without one"}
		}
		return nil, &Error{File: abs, Msg: err.Error()}
	}
	return Parse(data, abs)
}

// Parse checks config text read from path (used to name the file in errors
// and to resolve relative paths).
func Parse(data []byte, path string) (*File, error) {
	var f File
	if err := jsonc.Decode(data, &f); err != nil {
		var je *jsonc.Error
		if errors.As(err, &je) {
			return nil, &Error{File: path, Field: je.Path, Line: je.Line, Col: je.Col, Msg: je.Msg}
		}
		return nil, &Error{File: path, Msg: err.Error()}
	}
	f.Path = path
	dir := filepath.Dir(path)
	for i, p := range f.Plugins {
		f.Plugins[i] = Resolve(dir, p)
	}
	for i := range f.Agents {
		a := &f.Agents[i]
		for j := range a.Skills {
			a.Skills[j].Root = Resolve(dir, a.Skills[j].Root)
		}
		for j, p := range a.Preload {
			if strings.ContainsRune(p, '/') || strings.HasPrefix(p, "~") || strings.HasPrefix(p, ".") {
				a.Preload[j] = Resolve(dir, p)
			}
		}
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// Resolve makes p absolute: ~ is the home folder, and a relative path is
// relative to dir.
func Resolve(dir, p string) string {
	if p == "" {
		return p
	}
	p = source.ExpandHome(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// Validate checks what decoding cannot: required fields, unique ids,
// patterns, formats.
func (f *File) Validate() error {
	seen := map[string]int{}
	for i := range f.Agents {
		a := &f.Agents[i]
		if err := a.Validate(); err != nil {
			var se *catalog.SpecError
			if errors.As(err, &se) {
				return &Error{File: f.Path, Field: fmt.Sprintf("agents[%d].%s", i, se.Field), Msg: se.Msg}
			}
			return &Error{File: f.Path, Field: fmt.Sprintf("agents[%d]", i), Msg: err.Error()}
		}
		if j, dup := seen[a.AgentID]; dup {
			return &Error{File: f.Path, Field: fmt.Sprintf("agents[%d].agentId", i), Msg: fmt.Sprintf("%q is already the id of agents[%d]: agent ids must be unique", a.AgentID, j)}
		}
		seen[a.AgentID] = i
	}
	switch f.Format {
	case "", "pi", "catalog", "progressive":
	default:
		return &Error{File: f.Path, Field: "format", Msg: fmt.Sprintf("%q is not a prompt format: use pi, catalog or progressive", f.Format)}
	}
	if f.StoreLimits.MaxFileSize < 0 || f.StoreLimits.MaxTotalSize < 0 || f.StoreLimits.MaxFiles < 0 || f.StoreLimits.WarnTextSize < 0 {
		return &Error{File: f.Path, Field: "storeLimits", Msg: "limits must be positive numbers (0 or absent for the defaults)"}
	}
	for i, p := range f.Plugins {
		if strings.TrimSpace(p) == "" {
			return &Error{File: f.Path, Field: fmt.Sprintf("plugins[%d]", i), Msg: "is empty: give the folder holding plugin.json"}
		}
	}
	if f.Limits.MaxDepth < 0 || f.Limits.MaxDirs < 0 || f.Limits.MaxFiles < 0 || f.Limits.MaxFileSize < 0 {
		return &Error{File: f.Path, Field: "limits", Msg: "limits must be positive numbers (0 or absent for the defaults)"}
	}
	return nil
}

// CatalogOptions turns the file's defaults and limits into catalog options.
func (f *File) CatalogOptions() catalog.Options {
	return catalog.Options{
		Budget: f.Budget,
		Format: f.Format,
		Scan: source.Options{
			MaxDepth:    f.Limits.MaxDepth,
			MaxDirs:     f.Limits.MaxDirs,
			MaxFiles:    f.Limits.MaxFiles,
			MaxFileSize: f.Limits.MaxFileSize,
		},
	}
}
