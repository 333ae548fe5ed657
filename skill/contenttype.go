package skill

import (
	"bytes"
	"path"
	"strings"
)

// typeInfo is what an extension says about a file.
type typeInfo struct {
	mime   string
	binary bool
}

// extTypes is loadout's own table, so content types do not depend on the
// host's /etc/mime.types.
var extTypes = map[string]typeInfo{
	".md": {"text/markdown", false}, ".markdown": {"text/markdown", false},
	".txt": {"text/plain", false}, ".text": {"text/plain", false}, ".rst": {"text/x-rst", false},
	".sh": {"application/x-sh", false}, ".bash": {"application/x-sh", false}, ".zsh": {"application/x-sh", false},
	".ps1": {"text/x-powershell", false}, ".bat": {"text/plain", false}, ".cmd": {"text/plain", false},
	".py": {"text/x-python", false}, ".rb": {"text/x-ruby", false}, ".pl": {"text/x-perl", false},
	".js": {"text/javascript", false}, ".mjs": {"text/javascript", false}, ".cjs": {"text/javascript", false},
	".ts": {"text/x-typescript", false}, ".tsx": {"text/x-typescript", false}, ".jsx": {"text/javascript", false},
	".go": {"text/x-go", false}, ".java": {"text/x-java", false}, ".kt": {"text/x-kotlin", false},
	".c": {"text/x-c", false}, ".h": {"text/x-c", false}, ".cpp": {"text/x-c++", false}, ".hpp": {"text/x-c++", false},
	".cs": {"text/x-csharp", false}, ".rs": {"text/x-rust", false}, ".swift": {"text/x-swift", false},
	".php": {"text/x-php", false}, ".lua": {"text/x-lua", false}, ".r": {"text/x-r", false}, ".sql": {"application/sql", false},
	".json": {"application/json", false}, ".jsonl": {"application/jsonl", false}, ".yaml": {"application/yaml", false},
	".yml": {"application/yaml", false}, ".toml": {"application/toml", false}, ".xml": {"application/xml", false},
	".ini": {"text/plain", false}, ".cfg": {"text/plain", false}, ".conf": {"text/plain", false}, ".env": {"text/plain", false},
	".csv": {"text/csv", false}, ".tsv": {"text/tab-separated-values", false},
	".html": {"text/html", false}, ".htm": {"text/html", false}, ".css": {"text/css", false}, ".svg": {"image/svg+xml", false},
	".tex": {"application/x-tex", false}, ".diff": {"text/x-diff", false}, ".patch": {"text/x-diff", false},
	".dockerfile": {"text/plain", false}, ".mk": {"text/x-makefile", false}, ".j2": {"text/plain", false}, ".tmpl": {"text/plain", false},
	".png": {"image/png", true}, ".jpg": {"image/jpeg", true}, ".jpeg": {"image/jpeg", true}, ".gif": {"image/gif", true},
	".webp": {"image/webp", true}, ".ico": {"image/x-icon", true}, ".bmp": {"image/bmp", true},
	".pdf": {"application/pdf", true}, ".zip": {"application/zip", true}, ".gz": {"application/gzip", true},
	".tgz": {"application/gzip", true}, ".tar": {"application/x-tar", true}, ".xz": {"application/x-xz", true},
	".bz2": {"application/x-bzip2", true}, ".7z": {"application/x-7z-compressed", true}, ".jar": {"application/java-archive", true},
	".ttf": {"font/ttf", true}, ".otf": {"font/otf", true}, ".woff": {"font/woff", true}, ".woff2": {"font/woff2", true},
	".docx": {"application/vnd.openxmlformats-officedocument.wordprocessingml.document", true},
	".xlsx": {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", true},
	".pptx": {"application/vnd.openxmlformats-officedocument.presentationml.presentation", true},
	".wasm": {"application/wasm", true}, ".so": {"application/octet-stream", true}, ".bin": {"application/octet-stream", true},
	".mp3": {"audio/mpeg", true}, ".wav": {"audio/wav", true}, ".mp4": {"video/mp4", true}, ".sqlite": {"application/vnd.sqlite3", true},
	".db": {"application/octet-stream", true}, ".pyc": {"application/octet-stream", true}, ".class": {"application/java-vm", true},
}

var textNames = map[string]string{
	"Makefile": "text/x-makefile", "Dockerfile": "text/plain", "LICENSE": "text/plain",
	"README": "text/plain", "Gemfile": "text/x-ruby", "Rakefile": "text/x-ruby",
}

// TypeByName guesses a file's content type and whether it is binary from its
// name alone. known is false when the name says nothing; callers then sniff
// the first bytes with Sniff.
func TypeByName(name string) (mime string, binary, known bool) {
	base := path.Base(name)
	if t, ok := textNames[base]; ok {
		return t, false, true
	}
	if t, ok := extTypes[strings.ToLower(path.Ext(base))]; ok {
		return t.mime, t.binary, true
	}
	return "", false, false
}

// Sniff decides the content type of a file from its first bytes (up to
// 512): text if it is valid UTF-8 without NUL bytes, else whatever
// http.DetectContentType says, flagged binary.
func Sniff(head []byte) (mime string, binary bool) {
	if looksText(head) {
		return "text/plain", false
	}
	for _, sig := range signatures {
		if bytes.HasPrefix(head, sig.magic) {
			return sig.mime, true
		}
	}
	return "application/octet-stream", true
}

// signatures are the magic numbers of the binary formats skills carry.
var signatures = []struct {
	magic []byte
	mime  string
}{
	{[]byte("\x89PNG\r\n\x1a\n"), "image/png"},
	{[]byte("\xff\xd8\xff"), "image/jpeg"},
	{[]byte("GIF87a"), "image/gif"},
	{[]byte("GIF89a"), "image/gif"},
	{[]byte("%PDF-"), "application/pdf"},
	{[]byte("PK\x03\x04"), "application/zip"},
	{[]byte("\x1f\x8b"), "application/gzip"},
	{[]byte("\x00\x01\x00\x00"), "font/ttf"},
	{[]byte("OTTO"), "font/otf"},
	{[]byte("wOFF"), "font/woff"},
	{[]byte("wOF2"), "font/woff2"},
	{[]byte("\x7fELF"), "application/x-executable"},
	{[]byte("\x00asm"), "application/wasm"},
	{[]byte("SQLite format 3\x00"), "application/vnd.sqlite3"},
}

func looksText(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] == 0 {
			return false
		}
	}
	// Allow a multi-byte rune cut at the end of the sample.
	for cut := 0; cut < 4 && cut <= len(b); cut++ {
		if validUTF8(b[:len(b)-cut]) {
			return true
		}
	}
	return false
}

// IsScript reports whether a file is one the agent would run.
func IsScript(p string, executable bool) bool {
	if executable || strings.HasPrefix(p, "scripts/") {
		return true
	}
	switch strings.ToLower(path.Ext(p)) {
	case ".sh", ".bash", ".zsh", ".ps1":
		return true
	}
	return false
}
