package catalog

import (
	"encoding/base64"
	"errors"
	"fmt"
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
	StatusRefused  = "refused"   // the path was refused by the path check
	StatusTooLarge = "too_large" // over the read cap without a range
	StatusError    = "error"     // the skill exists but could not be read
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
		msg, sugg := l.unknownName(name)
		if len(sugg) == 0 && len(l.names) > 0 {
			msg += " Call search_skills to find one."
		}
		return LoadResult{Status: StatusNotFound, Name: name, Text: msg, Suggestions: sugg}
	}
	sk := e.Skill
	if e.Inline || sk.HasBody() {
		e.envOnce.Do(func() {
			body := e.body
			if !e.Inline {
				body, _ = sk.Body()
			}
			e.env = envelope(sk, body)
		})
		return LoadResult{Status: StatusOK, Name: name, Skill: sk, Text: e.env}
	}
	body, err := sk.Body()
	if err != nil {
		return LoadResult{Status: StatusError, Name: name, Skill: sk, Err: err,
			Text: fmt.Sprintf("Skill %q exists but its SKILL.md could not be read (%v). Tell the user; do not guess its instructions.", name, readErrText(err))}
	}
	return LoadResult{Status: StatusOK, Name: name, Skill: sk, Text: envelope(sk, body)}
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
	// than Max is refused unless a range within the cap is given.
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
	// Code is the path check's refusal code, when Status is refused.
	Code  string       `json:"code,omitempty"`
	Entry *skill.Skill `json:"-"`
	Data  []byte       `json:"-"` // the bytes of the range, for transports
}

// ReadFile reads one file of a skill the agent has. The path is relative
// to the skill folder and goes through skill.CleanPath; folder skills are
// read through os.Root, so links leaving the skill are refused.
func (l *Loadout) ReadFile(name, p string, opt ReadOptions) FileResult {
	r := FileResult{Skill: name, Path: p}
	e, ok := l.byName[name]
	if !ok {
		r.Status = StatusNotFound
		r.Message, _ = l.unknownName(name)
		return r
	}
	sk := e.Skill
	r.Entry = sk
	clean, err := skill.CleanPath(p)
	if err != nil {
		var pe *skill.PathError
		errors.As(err, &pe)
		r.Status, r.Code = StatusRefused, pe.Code
		r.Message = err.Error()
		return r
	}
	r.Path = clean
	var size int64 = -1
	if clean == sk.Entry {
		r.ContentType = "text/markdown"
	} else {
		f, ok := sk.File(clean)
		if !ok {
			r.Status = StatusNotFound
			r.Message = fmt.Sprintf("Skill %q has no file %q.%s", name, clean, fileHint(sk, clean))
			return r
		}
		r.ContentType, size = f.ContentType, f.Size
	}
	if opt.Max <= 0 {
		opt.Max = DefaultReadCap
	}
	if opt.Offset < 0 || opt.Length < 0 {
		r.Status, r.Code = StatusRefused, "range-invalid"
		r.Message = "offset and length must not be negative"
		return r
	}
	if size > opt.Max && opt.Length == 0 && opt.Offset == 0 {
		r.Status, r.Size = StatusTooLarge, size
		r.Message = fmt.Sprintf("%s is %d bytes, over the %d-byte cap of one read: ask for a range with offset and length", clean, size, opt.Max)
		return r
	}
	data, err := sk.ReadFile(clean)
	if err != nil {
		r.Status, r.Message = StatusError, fmt.Sprintf("%s could not be read: %s", clean, readErrText(err))
		if errors.Is(err, fs.ErrNotExist) {
			r.Status = StatusNotFound
		}
		if isEscape(err) {
			r.Status, r.Code = StatusRefused, skill.CodeSymlinkEscapes
			r.Message = fmt.Sprintf("%s is a symlink that leaves the skill folder; it is never served", clean)
		}
		return r
	}
	r.Size = int64(len(data))
	if opt.Offset > r.Size {
		r.Status, r.Code = StatusRefused, "range-invalid"
		r.Message = fmt.Sprintf("offset %d is past the end of %s (%d bytes)", opt.Offset, clean, r.Size)
		return r
	}
	end := r.Size
	if opt.Length > 0 && opt.Offset+opt.Length < end {
		end = opt.Offset + opt.Length
	}
	if end-opt.Offset > opt.Max {
		end = opt.Offset + opt.Max
	}
	chunk := data[opt.Offset:end]
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

func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
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
