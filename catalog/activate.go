package catalog

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/skill"
)

// Status codes of activation results. They are stable: transports map them
// to HTTP statuses and MCP errors.
const (
	StatusOK       = "ok"
	StatusNotFound = "not_found" // no such skill, or no such file in it
	StatusRefused  = "refused"   // the path was refused by the path check, or the file is a link out of the skill or not a regular file
	StatusTooLarge = "too_large" // over the read cap without a range, or over the skill's MaxFileSize
	StatusChanged  = "changed"   // the file or the skill folder changed on disk since the scan; served again after a rescan
	StatusError    = "error"     // the skill exists but could not be read
	// StatusBlocked (blocks.go): the skill is blocked by the kill switch.
)

// LoadResult is what load_skill returns.
type LoadResult struct {
	Status string `json:"status"`
	Name   string `json:"name"`
	// Text is the <skill_context> envelope on success, else a message for
	// the model saying what went wrong and what to do.
	Text string `json:"text"`
	// Suggestions are the closest known names, for not_found.
	Suggestions []string     `json:"suggestions,omitempty"`
	Skill       *skill.Skill `json:"-"`
	Err         error        `json:"-"`
}

// Load activates a skill by name for this agent. It never panics: an
// unknown name gives a not_found result with the closest names, and a read
// failure an error result.
func (l *Loadout) Load(name string) LoadResult {
	e, ok := l.byName[name]
	if !ok {
		if b, ok := l.blocked[name]; ok {
			return LoadResult{Status: StatusBlocked, Name: name, Skill: b.Skill, Text: BlockedText(name, b.Block)}
		}
		msg, sugg := l.unknownName(name)
		if len(sugg) == 0 && len(l.names) > 0 {
			msg += " Call search_skills to find one."
		}
		return LoadResult{Status: StatusNotFound, Name: name, Text: msg, Suggestions: sugg}
	}
	sk := e.Skill
	if env, ok := envOf(e); ok {
		return LoadResult{Status: StatusOK, Name: name, Skill: sk, Text: env}
	}
	body := e.inlineBody()
	if !e.Inline {
		var err error
		if body, err = sk.Body(); err != nil {
			return LoadResult{Status: StatusError, Name: name, Skill: sk, Err: err,
				Text: fmt.Sprintf("Skill %q exists but its SKILL.md could not be read (%v). Tell the user; do not guess its instructions.", name, readErrText(err))}
		}
	}
	env := envelope(sk, body)
	if e.Inline || sk.HasBody() {
		// Nothing in it can change: keep it while there is room.
		l.envs.keep(e, env)
	}
	return LoadResult{Status: StatusOK, Name: name, Skill: sk, Text: env}
}

func envelope(sk *skill.Skill, body string) string {
	return render.Envelope(render.EnvelopeInput{
		Entry: render.Entry{Name: sk.Name, Description: sk.Description, Dir: sk.Dir, Location: sk.Location,
			Body: strings.TrimSpace(body), Virtual: sk.Virtual, Origin: sk.Origin},
		Files: sk.Files,
	})
}

// ReadOptions bound a file read.
type ReadOptions struct {
	// Offset and Length select a byte range; Length 0 means to the end.
	Offset, Length int64
	// Max caps the bytes returned (default DefaultReadCap). A file larger
	// than Max, or than the skill's MaxFileSize, is refused unless a range
	// is given; a range is read alone, whatever the file's size.
	Max int64
}

// DefaultReadCap is the most read_skill_file returns in one call.
const DefaultReadCap = 256 << 10

// FileResult is what read_skill_file returns.
type FileResult struct {
	Status      string `json:"status"`
	Skill       string `json:"skill"`
	Path        string `json:"path"`
	ContentType string `json:"contentType,omitempty"`
	Size        int64  `json:"size"`
	Offset      int64  `json:"offset"`
	// Encoding is "utf-8" for text and "base64" for binary content.
	Encoding string `json:"encoding,omitempty"`
	Content  string `json:"content,omitempty"`
	// More is true when bytes remain after this range.
	More bool `json:"more,omitempty"`
	// Message explains a refusal or error, for the model and for people.
	Message string `json:"message,omitempty"`
	// Code is the refusal's stable code: the path check's (path-*) or
	// range-invalid when Status is refused, symlink-escapes or not-regular
	// for a file that is never served, too-large, and folder-changed or
	// file-changed when Status is changed.
	Code  string       `json:"code,omitempty"`
	Entry *skill.Skill `json:"-"`
	Data  []byte       `json:"-"` // the bytes of the range, for transports
}

// ReadFile reads one file of a skill the agent has, or a range of it. The
// path is relative to the skill folder and goes through skill.CleanPath;
// folder skills are read through os.Root (internal/safefile), so links
// leaving the skill, special files and a swapped skill folder are refused.
// Only the range asked for is read, whatever the file's size; a read
// without a range is refused (too_large) over opt.Max or the skill's
// MaxFileSize.
func (l *Loadout) ReadFile(name, p string, opt ReadOptions) FileResult {
	r, sk, ok := l.resolve(name, p)
	if !ok {
		return r
	}
	clean := r.Path
	if opt.Max <= 0 {
		opt.Max = DefaultReadCap
	}
	if opt.Offset < 0 || opt.Length < 0 {
		r.Status, r.Code = StatusRefused, "range-invalid"
		r.Message = "offset and length must not be negative"
		return r
	}
	c, err := sk.Open(clean)
	if err != nil {
		return r.failed(err)
	}
	defer c.Close()
	r.Size = c.Size()
	if opt.Length == 0 && opt.Offset == 0 {
		if r.Size > opt.Max {
			r.Status, r.Code = StatusTooLarge, skill.CodeTooLarge
			r.Message = fmt.Sprintf("%s is %d bytes, over the %d-byte cap of one read: ask for a range with offset and length", clean, r.Size, opt.Max)
			return r
		}
		if sk.MaxFileSize > 0 && r.Size > sk.MaxFileSize {
			return r.failed(skill.TooLarge(clean, r.Size, sk.MaxFileSize))
		}
	}
	if opt.Offset > r.Size {
		r.Status, r.Code = StatusRefused, "range-invalid"
		r.Message = fmt.Sprintf("offset %d is past the end of %s (%d bytes)", opt.Offset, clean, r.Size)
		return r
	}
	end := r.Size
	if opt.Length > 0 && opt.Length < end-opt.Offset {
		end = opt.Offset + opt.Length
	}
	if end-opt.Offset > opt.Max {
		end = opt.Offset + opt.Max
	}
	chunk := make([]byte, end-opt.Offset)
	if n, err := c.ReadAt(chunk, opt.Offset); n < len(chunk) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF // the file shrank while it was read
		}
		return r.failed(err)
	}
	r.Offset, r.More, r.Data = opt.Offset, end < r.Size, chunk
	r.ContentType = contentType(sk, clean, r.ContentType)
	if f, ok := sk.File(clean); (ok && f.Binary) || !utf8.Valid(trimCut(chunk)) {
		r.Encoding, r.Content = "base64", base64.StdEncoding.EncodeToString(chunk)
	} else {
		r.Encoding, r.Content = "utf-8", string(chunk)
	}
	r.Status = StatusOK
	return r
}

// OpenFile opens one file of a skill the agent has to be served whole
// (streamed, never read into memory here): the same lookup, path check and
// refusals as ReadFile, and a file over max (when max > 0) or over the
// skill's MaxFileSize is refused as too_large before it is read. On
// StatusOK the result's Size and ContentType are set and c is the open
// file, which the caller closes; otherwise c is nil.
func (l *Loadout) OpenFile(name, p string, max int64) (FileResult, skill.Content) {
	r, sk, ok := l.resolve(name, p)
	if !ok {
		return r, nil
	}
	c, err := sk.OpenWhole(r.Path)
	if err != nil {
		return r.failed(err), nil
	}
	r.Size = c.Size()
	if max > 0 && r.Size > max {
		c.Close()
		return r.failed(skill.TooLarge(r.Path, r.Size, max)), nil
	}
	r.ContentType = contentType(sk, r.Path, r.ContentType)
	r.Status = StatusOK
	return r, c
}

// resolve finds the skill and checks the path: ok is false with a
// not_found or refused result. On success r.Path is the clean path, r.Entry
// the skill and r.ContentType the manifest's (text/markdown for the entry).
func (l *Loadout) resolve(name, p string) (FileResult, *skill.Skill, bool) {
	r := FileResult{Skill: name, Path: p}
	e, ok := l.byName[name]
	if !ok {
		if b, ok := l.blocked[name]; ok {
			r.Status, r.Code, r.Entry = StatusBlocked, CodeBlocked, b.Skill
			r.Message = BlockedText(name, b.Block)
			return r, nil, false
		}
		r.Status = StatusNotFound
		r.Message, _ = l.unknownName(name)
		return r, nil, false
	}
	sk := e.Skill
	r.Entry = sk
	clean, err := skill.CleanPath(p)
	if err != nil {
		var pe *skill.PathError
		errors.As(err, &pe)
		r.Status, r.Code = StatusRefused, pe.Code
		r.Message = err.Error()
		return r, nil, false
	}
	r.Path = clean
	if clean == sk.Entry {
		r.ContentType = "text/markdown"
	} else {
		f, ok := sk.File(clean)
		if !ok {
			r.Status = StatusNotFound
			r.Message = fmt.Sprintf("Skill %q has no file %q.%s", name, clean, fileHint(sk, clean))
			return r, nil, false
		}
		r.ContentType = f.ContentType
	}
	return r, sk, true
}

// failed turns a read error into the result's status, code and message.
func (r FileResult) failed(err error) FileResult {
	r.Data, r.Content, r.Encoding = nil, "", ""
	if se, ok := skill.AsServeError(err); ok {
		r.Code, r.Message = se.Code, se.Error()
		switch se.Code {
		case skill.CodeTooLarge:
			r.Status, r.Size = StatusTooLarge, se.Size
		case skill.CodeFolderChanged, skill.CodeFileChanged:
			r.Status = StatusChanged
		default:
			r.Status = StatusRefused
		}
		return r
	}
	r.Status, r.Message = StatusError, fmt.Sprintf("%s could not be read: %s", r.Path, readErrText(err))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, skill.ErrNotListed) {
		r.Status = StatusNotFound
	}
	return r
}

func contentType(sk *skill.Skill, p, ct string) string {
	if ct != "" {
		return ct
	}
	return "application/octet-stream"
}

// trimCut drops a rune cut at the end of a range so text ranges stay text.
func trimCut(b []byte) []byte {
	for i := 0; i < 3 && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

func readErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func fileHint(sk *skill.Skill, p string) string {
	var cands []string
	for _, f := range sk.Files {
		cands = append(cands, f.Path)
	}
	if s := closest(p, cands); len(s) > 0 {
		return " Did you mean " + strings.Join(s, ", ") + "?"
	}
	if len(sk.Files) == 0 {
		return " It has no supporting files."
	}
	return " Load the skill to see its file list."
}
