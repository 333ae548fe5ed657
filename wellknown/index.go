package wellknown

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf16"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/httpbody"
	"github.com/loadout/loadout/skill"
)

const indexType = "application/json; charset=utf-8"

// SchemaV2 identifies the 0.2.0 discovery index; clients match it exactly.
const SchemaV2 = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

// Installer limits: a skill over them is left out of both indexes, with a
// warning. The file count includes SKILL.md; the byte limit applies to the
// files' bytes and to the archive's.
const (
	MaxFiles       = 1000
	MaxBytes       = 50 << 20
	MaxDescription = 1024 // UTF-16 code units, as JavaScript counts
)

// Warning codes, in the index's "warnings" array.
const (
	WarnTooManyFiles  = "too-many-files"
	WarnTooLarge      = "too-large"
	WarnName          = "name-unsupported"
	WarnReadError     = "read-error"
	WarnArchivePath   = "archive-path"
	WarnLegacyPath    = "legacy-path"
	WarnDescription   = "description-shortened"
	WarnLegacyNotText = "legacy-not-text"
	WarnLegacyBOM     = "legacy-bom"
	// WarnExecutable: the skill has executable files, and every installer
	// writes files without their executable bit (skills 1.3.9, 1.5.26 and
	// 1.7.4, checked by TestSkillsInstallerE2E). The skill is listed.
	WarnExecutable     = "executable-dropped"
	warningsHeaderName = "Loadout-Warnings"
)

// Warning is one skill left out of (or changed in) an index, and why.
type Warning struct {
	Skill   string `json:"skill"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

type entryV2 struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	URL         string `json:"url"`
	Digest      string `json:"digest"`
}

type indexV2 struct {
	Schema   string    `json:"$schema"`
	Skills   []entryV2 `json:"skills"`
	Warnings []Warning `json:"warnings,omitempty"`
}

type entryV1 struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Files       []string `json:"files"`
}

type indexV1 struct {
	Skills   []entryV1 `json:"skills"`
	Warnings []Warning `json:"warnings,omitempty"`
}

// doc is one built index: its bytes (with their ETag and gzip form) and
// its warning count.
type doc struct {
	body     *httpbody.Body
	warnings int
}

// item is what a snapshot knows of one skill in the 0.2.0 index.
type item struct {
	sk     *skill.Skill
	kind   string // "skill-md" or "archive"
	digest string
}

// snapshot is both indexes of one loadout at one generation.
type snapshot struct {
	gen   uint64
	l     *catalog.Loadout
	v2    doc
	v1    doc
	items map[string]item // by name: the 0.2.0 entries
}

// validName is the installers' name check (skills 1.7.4; 1.3.9 is looser,
// but rejects its whole index if an entry fails any check).
func validName(n string) bool {
	if len(n) < 1 || len(n) > 64 || n[0] == '-' || n[len(n)-1] == '-' || strings.Contains(n, "--") {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// legacyPathProblem says why a path cannot go into the 0.1.0 index: the
// installers refuse "..", a leading / or \ and NUL, and they put the path
// into the file's URL unescaped, so ?, # and % would fetch something else.
func legacyPathProblem(p string) string {
	switch {
	case strings.Contains(p, ".."):
		return `it contains ".." (installers refuse any path containing it)`
	case strings.ContainsAny(p, `?#%\`):
		return `it contains ?, #, % or \, which installers put into the URL unescaped`
	}
	return ""
}

// shorten cuts s to at most max UTF-16 code units, on a rune boundary.
func shorten(s string, max int) (string, bool) {
	n := 0
	for i, r := range s {
		n += len(utf16.Encode([]rune{r}))
		if n > max {
			return strings.TrimRight(s[:i], " \t\r\n"), true
		}
	}
	return s, false
}

func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // and no indentation: the index is read by installers, and grows with the catalog
	if err := enc.Encode(v); err != nil {
		panic(err) // plain structs of strings: cannot fail
	}
	return buf.Bytes()
}

// build reads every skill of the loadout and makes both indexes. Archives
// it builds are offered to the archive cache. Each file is read once, in
// pieces (see pack); a file that cannot be read (a FIFO, a link out of the
// skill, a swapped folder) leaves its skill out with a warning, at once.
func build(l *catalog.Loadout, gen uint64, agent string, log *slog.Logger, offer func(name string, data []byte)) *snapshot {
	s := &snapshot{gen: gen, l: l, items: map[string]item{}}
	v2 := indexV2{Schema: SchemaV2, Skills: []entryV2{}}
	v1 := indexV1{Skills: []entryV1{}}
	bl := &buildLog{log: log, agent: agent}
	defer bl.done()
	warn := func(list *[]Warning, index, name, code, format string, args ...any) {
		w := Warning{Skill: name, Code: code, Message: fmt.Sprintf(format, args...)}
		*list = append(*list, w)
		bl.warn(w.Message, index, name, code)
	}
	both := func(name, code, format string, args ...any) {
		warn(&v2.Warnings, "agent-skills", name, code, format, args...)
		warn(&v1.Warnings, "skills", name, code, format, args...)
	}
	names := l.Names()
	packs := packAll(l, names)
	for i, name := range names {
		e, ok := l.Lookup(name)
		if !ok {
			continue
		}
		sk := e.Skill
		if !validName(name) {
			both(name, WarnName, "skill %q is left out: installers accept only names of 1-64 characters a-z, 0-9 and single inner hyphens", name)
			continue
		}
		if n := len(sk.Files) + 1; n > MaxFiles {
			both(name, WarnTooManyFiles, "skill %q is left out: it has %d files (SKILL.md included), over the installers' limit of %d", name, n, MaxFiles)
			continue
		}
		var listed int64
		for _, f := range sk.Files {
			listed += f.Size
		}
		if listed > MaxBytes {
			both(name, WarnTooLarge, "skill %q is left out: its files are %d bytes, over the installers' limit of %d", name, listed, MaxBytes)
			continue
		}
		pk, err := packs[i].pk, packs[i].err
		switch {
		case errors.Is(err, errOverBytes):
			both(name, WarnTooLarge, "skill %q is left out: its files are over %d bytes, the installers' limit", name, MaxBytes)
			continue
		case err != nil:
			code := WarnReadError
			if se, ok := skill.AsServeError(err); ok && se.Code == skill.CodeTooLarge {
				code = WarnTooLarge
			}
			both(name, code, "skill %q is left out: it could not be read: %v", name, err)
			continue
		}

		// 0.2.0: one artifact with its digest.
		desc, cut := shorten(sk.Description, MaxDescription)
		it := item{sk: sk}
		var skipV2, execLogged bool
		if len(sk.Files) == 0 {
			it.kind, it.digest = "skill-md", pk.entryDigest
		} else {
			data := pk.archive
			switch {
			case pk.archiveErr != nil:
				warn(&v2.Warnings, "agent-skills", name, WarnArchivePath, "skill %q is left out: %v", name, pk.archiveErr)
				skipV2 = true
			case len(data) > MaxBytes:
				warn(&v2.Warnings, "agent-skills", name, WarnTooLarge, "skill %q is left out: its archive is %d bytes, over the installers' limit of %d", name, len(data), MaxBytes)
				skipV2 = true
			default:
				it.kind, it.digest = "archive", skill.DigestBytes(data)
				offer(name, data)
			}
		}
		if !skipV2 {
			if cut {
				warn(&v2.Warnings, "agent-skills", name, WarnDescription, "skill %q: its description is over %d characters, the installers' limit, and is shortened in this index", name, MaxDescription)
			}
			url := name + ".tar.gz"
			if it.kind == "skill-md" {
				url = name + "/SKILL.md"
			}
			v2.Skills = append(v2.Skills, entryV2{Name: name, Type: it.kind, Description: desc, URL: url, Digest: it.digest})
			s.items[name] = it
			if w, ok := ExecutableWarning(sk); ok {
				v2.Warnings = append(v2.Warnings, indexExecutableWarning(sk))
				bl.warn(w.Message, "agent-skills", name, w.Code)
				execLogged = true
			}
		}

		// 0.1.0: the file list.
		files := []string{"SKILL.md"}
		bad := ""
		for _, f := range sk.Files {
			if p := legacyPathProblem(f.Path); p != "" {
				bad = fmt.Sprintf("skill %q is left out: file %q cannot be listed: %s", name, f.Path, p)
				break
			}
			files = append(files, f.Path)
		}
		if bad != "" {
			warn(&v1.Warnings, "skills", name, WarnLegacyPath, "%s", bad)
			continue
		}
		if len(pk.notText) > 0 {
			warn(&v1.Warnings, "skills", name, WarnLegacyNotText, "skill %q: files that are not UTF-8 text (%s) are corrupted by installers that decode downloads as text (skills 1.3.x); install from /.well-known/agent-skills/ instead", name, quoteList(pk.notText))
		}
		if len(pk.bom) > 0 {
			warn(&v1.Warnings, "skills", name, WarnLegacyBOM, "skill %q: files starting with a byte order mark (%s) lose it with installers that decode downloads as text (skills 1.3.x)", name, quoteList(pk.bom))
		}
		v1.Skills = append(v1.Skills, entryV1{Name: name, Description: sk.Description, Files: files})
		if w, ok := ExecutableWarning(sk); ok {
			v1.Warnings = append(v1.Warnings, indexExecutableWarning(sk))
			if !execLogged { // logged once per skill, listed in both
				bl.warn(w.Message, "skills", name, w.Code)
			}
		}
	}
	s.v2 = doc{body: httpbody.New(marshal(v2), indexType), warnings: len(v2.Warnings)}
	s.v1 = doc{body: httpbody.New(marshal(v1), indexType), warnings: len(v1.Warnings)}
	return s
}

// packResult is pack's answer for one skill.
type packResult struct {
	pk  *packed
	err error
}

// packAll packs the skills of names that build will put in an index (the
// rest are left zero), on up to GOMAXPROCS goroutines: compressing the
// archives is most of a build (about 0.6 ms a skill), and a server's
// first install index waits for it. The results are in names' order, so
// the indexes are the same bytes as one goroutine's.
func packAll(l *catalog.Loadout, names []string) []packResult {
	out := make([]packResult, len(names))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), 4)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(names) {
					return
				}
				e, ok := l.Lookup(names[i])
				if !ok || !validName(names[i]) || len(e.Skill.Files)+1 > MaxFiles {
					continue
				}
				var listed int64
				for _, f := range e.Skill.Files {
					listed += f.Size
				}
				if listed > MaxBytes {
					continue
				}
				pk, err := pack(e.Skill, true)
				out[i] = packResult{pk, err}
			}
		}()
	}
	wg.Wait()
	return out
}

// ExecutableWarning says, when sk has executable files, that installers
// drop their executable bit; one message for both indexes, the log and
// `loadout check`. The skill is still listed: the files arrive, only the
// mode is lost.
func ExecutableWarning(sk *skill.Skill) (Warning, bool) {
	execs := executables(sk)
	if len(execs) == 0 {
		return Warning{}, false
	}
	return Warning{Skill: sk.Name, Code: WarnExecutable, Message: fmt.Sprintf(
		"skill %q: installers (npx skills, every version) drop executable bits, so %s will not be executable once installed: "+
			"have SKILL.md run such files through their interpreter (sh, python3, …) rather than directly, or chmod +x them after installing",
		sk.Name, quoteList(execs))}, true
}

func executables(sk *skill.Skill) []string {
	var execs []string
	for _, f := range sk.Files {
		if f.Executable {
			execs = append(execs, f.Path)
		}
	}
	return execs
}

// indexExecutableWarning is ExecutableWarning as the indexes carry it:
// the files, without the advice, which the log and `loadout check` give.
// It is in the index once per skill with executable files, so it is kept
// short (about 100 bytes instead of 330): the index grows with the
// catalog.
func indexExecutableWarning(sk *skill.Skill) Warning {
	return Warning{Skill: sk.Name, Code: WarnExecutable, Message: fmt.Sprintf(
		"skill %q: installers drop executable bits: %s will not be executable once installed (see loadout check)", sk.Name, quoteList(executables(sk)))}
}

func quoteList(ps []string) string {
	const max = 5
	q := make([]string, 0, max+1)
	for i, p := range ps {
		if i == max {
			q = append(q, fmt.Sprintf("and %d more", len(ps)-max))
			break
		}
		q = append(q, fmt.Sprintf("%q", p))
	}
	return strings.Join(q, ", ")
}

// maxLoggedWarnings is how many warnings one index build logs one by one.
const maxLoggedWarnings = 10

// buildLog logs an index build's warnings: the first maxLoggedWarnings one
// line each, then, when the build ends, one line counting the rest by
// code. None is lost: every warning is in the index's warnings array (and
// in `loadout check`), and a catalog of 10,000 skills with scripts would
// otherwise log 10,000 lines at every build.
type buildLog struct {
	log    *slog.Logger
	agent  string
	logged int
	more   map[string]int // code -> warnings not logged
	first  string         // the first skill not logged
}

func (b *buildLog) warn(msg, index, skill, code string) {
	if b.logged < maxLoggedWarnings {
		b.logged++
		b.log.Warn("well-known index: "+msg, "index", index, "agent", b.agent, "skill", skill, "code", code)
		return
	}
	if b.more == nil {
		b.more, b.first = map[string]int{}, skill
	}
	b.more[code]++
}

func (b *buildLog) done() {
	if len(b.more) == 0 {
		return
	}
	codes := make([]string, 0, len(b.more))
	n := 0
	for c, k := range b.more {
		codes = append(codes, fmt.Sprintf("%s=%d", c, k))
		n += k
	}
	slices.Sort(codes)
	b.log.Warn("well-known index: more warnings not logged; the index's warnings array and 'loadout check' list them all",
		"agent", b.agent, "logged", b.logged, "not_logged", n, "by_code", strings.Join(codes, ","), "first_not_logged", b.first)
}
