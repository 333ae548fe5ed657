package portable

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/loadout/loadout/skill"
)

// Uploads: the one reading of an uploaded file (a zip or portable JSON)
// that every way of importing shares, POST /v1/import, the UI's import
// page and loadout import, with one set of limits (ImportLimits), so the
// same archive is accepted or refused the same way, in the same words,
// whichever way it comes in.

// ImportLimits bound what an import reads. Zero fields take the defaults;
// LimitsFor fills them from a store's limits.
type ImportLimits struct {
	// Zip bounds one skill's archive: its entries, each file's and the
	// total uncompressed size, and the compression ratio.
	Zip ZipLimits
	// MaxArchiveEntries caps the entries of one zip before it is split
	// into its skills (one per top-level folder); each skill's part is
	// then held to Zip. Default DefaultMaxArchiveEntries.
	MaxArchiveEntries int
	// MaxUploadBytes caps one file as sent: a zip, or a JSON document or
	// array. Default DefaultMaxUploadBytes, or more when the store's total
	// size needs it (LimitsFor).
	MaxUploadBytes int64
	// MaxSkills caps the skills read from one file. Default
	// DefaultMaxSkills.
	MaxSkills int
}

// Default import limits.
const (
	DefaultMaxArchiveEntries = 10_000
	DefaultMaxUploadBytes    = 64 << 20
	DefaultMaxSkills         = 1000
)

// LimitsFor is the import limits of a store whose skills are held to l
// (the service's limits, the config's storeLimits): the per-file and
// total sizes are l's, so an archive is refused at the size the store
// would refuse it at, not at another.
func LimitsFor(l skill.Limits) ImportLimits {
	return ImportLimits{Zip: ZipLimits{MaxFileSize: l.MaxFileSize, MaxTotalSize: l.MaxTotalSize}}.WithDefaults()
}

// WithDefaults fills the zero fields.
func (l ImportLimits) WithDefaults() ImportLimits {
	l.Zip = l.Zip.withDefaults()
	if l.MaxArchiveEntries <= 0 {
		l.MaxArchiveEntries = DefaultMaxArchiveEntries
	}
	if l.MaxUploadBytes <= 0 {
		// A JSON document carries its files in base64 (4/3), plus room
		// for the document around them.
		l.MaxUploadBytes = max(DefaultMaxUploadBytes, l.Zip.MaxTotalSize/3*4+1<<20)
	}
	if l.MaxSkills <= 0 {
		l.MaxSkills = DefaultMaxSkills
	}
	return l
}

// Upload is one skill read from an uploaded file, or why it could not be.
type Upload struct {
	// From says where in the file it came from: the file's name, "NAME:
	// FOLDER/" for one skill of a zip of several, "NAME [i]" for one
	// document of a JSON array.
	From string
	// Name is a name to report a refusal under (the folder's or file's)
	// when the skill has none yet.
	Name   string
	Bundle *skill.Bundle
	Err    error
}

// Kind is what an uploaded file holds.
type Kind int

const (
	// KindAuto: decide by the bytes and the name (a zip's signature or
	// a .zip name; JSON's opening bracket or a .json name).
	KindAuto Kind = iota
	KindZip
	KindJSON
)

// CodeUploadTooLarge: a file over ImportLimits.MaxUploadBytes, or with
// more skills than MaxSkills.
const CodeUploadTooLarge = "upload-too-large"

// TooLargeError is the refusal of a file over lim.MaxUploadBytes, in the
// words every transport uses; size is the file's, or -1 when a reader
// stopped at the limit.
func TooLargeError(name string, size int64, lim ImportLimits) error {
	lim = lim.WithDefaults()
	is := "is"
	if size >= 0 {
		is = fmt.Sprintf("is %d bytes,", size)
	}
	return &Error{Source: name, Code: CodeUploadTooLarge, Msg: fmt.Sprintf("the file %s over the limit of %d bytes for one uploaded file: split it into smaller imports", is, lim.MaxUploadBytes)}
}

// ReadUpload reads the skills of one uploaded file, named name (as the
// sender named it: every refusal names it): a zip holding one skill (SKILL.md
// at its root, or one top-level folder) or several (one per top-level
// folder, each checked by ImportZip on its own), or a portable JSON
// document or array of them. The error is for the file as a whole (too
// large, too many skills, not JSON); a skill's refusal is its Upload's
// Err, and the others are still read.
func ReadUpload(name string, kind Kind, data []byte, lim ImportLimits) ([]Upload, error) {
	lim = lim.WithDefaults()
	if int64(len(data)) > lim.MaxUploadBytes {
		return nil, TooLargeError(name, int64(len(data)), lim)
	}
	if kind == KindAuto {
		kind = KindJSON
		if IsZip(name, data) {
			kind = KindZip
		}
	}
	var out []Upload
	if kind == KindZip {
		var err error
		if out, err = readZip(name, data, lim); err != nil {
			return nil, err
		}
	} else {
		// A byte-order mark (an editor's on Windows) is no part of JSON.
		bundles, errs, err := ImportJSONEach(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
		if err != nil {
			return nil, &Error{Source: name, Code: CodeJSONInvalid, Msg: "not a portable JSON document, nor an array of them: " + err.Error(), Err: err}
		}
		if len(bundles) > lim.MaxSkills {
			return nil, tooManySkills(name, len(bundles), lim)
		}
		out = make([]Upload, len(bundles))
		for i := range bundles {
			from := name
			if len(bundles) > 1 {
				from = fmt.Sprintf("%s [%d]", name, i)
			}
			err := errs[i]
			var pe *Error
			if errors.As(err, &pe) && pe.Source == "json" {
				pe.Source = name // name the file, as a zip's refusals do
			}
			out[i] = Upload{From: from, Name: from, Bundle: bundles[i], Err: err}
		}
	}
	return out, nil
}

func tooManySkills(name string, n int, lim ImportLimits) error {
	return &Error{Source: name, Code: CodeUploadTooLarge, Msg: fmt.Sprintf("the file holds %d skills, over the limit of %d for one import: split it into smaller imports", n, lim.MaxSkills)}
}

// IsZip says whether an uploaded file is a zip: its signature, or its
// name.
func IsZip(name string, data []byte) bool {
	return bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")) || strings.EqualFold(path.Ext(name), ".zip")
}

// IsJSON says whether an uploaded file is JSON: its name, or its bytes.
func IsJSON(name string, data []byte) bool {
	if strings.EqualFold(path.Ext(name), ".json") {
		return true
	}
	t := bytes.TrimLeft(data, " \t\r\n\xef\xbb\xbf")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t)
}

// readZip is a zip's skills: the zip itself when it holds one, else one
// zip per top-level folder, made by copying the entries as they are
// (still compressed, so every check of ImportZip applies to each part).
func readZip(name string, data []byte, lim ImportLimits) ([]Upload, error) {
	one := func(from string, d []byte) Upload {
		b, err := importZip(name, bytes.NewReader(d), int64(len(d)), lim.Zip)
		return Upload{From: from, Name: strings.TrimSuffix(path.Base(from), ".zip"), Bundle: b, Err: err}
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return []Upload{one(name, data)}, nil // refused by ImportZip, with its reason
	}
	if n := len(zr.File); n > lim.MaxArchiveEntries {
		return nil, &Error{Source: name, Code: CodeTooManyEntries, Msg: fmt.Sprintf("the archive has %d entries, over the limit of %d for one archive", n, lim.MaxArchiveEntries)}
	}
	groups := map[string][]*zip.File{}
	var order []string
	for _, f := range zr.File {
		n := f.Name
		if strings.HasPrefix(n, "__MACOSX/") || path.Base(n) == ".DS_Store" {
			continue
		}
		top, _, nested := strings.Cut(n, "/")
		if !nested {
			// A file at the root: the zip is one skill (or is refused as
			// one, with ImportZip's reason).
			return []Upload{one(name, data)}, nil
		}
		if _, ok := groups[top]; !ok {
			order = append(order, top)
		}
		groups[top] = append(groups[top], f)
	}
	if len(order) <= 1 {
		return []Upload{one(name, data)}, nil
	}
	if len(order) > lim.MaxSkills {
		return nil, tooManySkills(name, len(order), lim)
	}
	sort.Strings(order)
	out := make([]Upload, 0, len(order))
	for _, top := range order {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		var cerr error
		for _, f := range groups[top] {
			if cerr = zw.Copy(f); cerr != nil {
				break
			}
		}
		if cerr == nil {
			cerr = zw.Close()
		}
		from := name + ": " + top + "/"
		if cerr != nil {
			out = append(out, Upload{From: from, Name: top, Err: &Error{Source: name, Entry: top, Code: CodeZipInvalid, Msg: "cannot be read: " + cerr.Error(), Err: cerr}})
			continue
		}
		p := one(from, b.Bytes())
		p.Name = top
		out = append(out, p)
	}
	return out, nil
}
