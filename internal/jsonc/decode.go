// Package jsonc decodes JSON-with-comments configuration files strictly.
//
// The input may hold // line comments, /* block */ comments, trailing commas
// before a closing "}" or "]" and a leading UTF-8 BOM. Everything else must
// be standard JSON. Decoding is strict: a key that the target type does not
// have is an error, as is a value of the wrong JSON type, and every error
// names the path of the offending value (such as "agents[0].skills[1]") and,
// where known, its line and column.
package jsonc

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/loadout/loadout/internal/jsondepth"
	"github.com/loadout/loadout/internal/textdist"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a problem found while decoding, located by the path of the value
// concerned and, when known, its position in the original text.
type Error struct {
	Path string // e.g. "agents[0].skills[1].inline"; "" for the top-level value
	Line int    // 1-based; 0 if unknown
	Col  int    // 1-based, counted in characters; 0 if unknown
	Msg  string

	err error // an underlying error, if any
}

// Error formats the error as "line:col: path: msg", leaving out the parts
// that are unknown or empty, so that a caller can prefix a file name:
// "loadout.jsonc:3:7: agents[0]: unknown key ...".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		b.WriteString(strconv.Itoa(e.Line))
		if e.Col > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Col))
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying error, such as a *json.SyntaxError, if any.
func (e *Error) Unwrap() error { return e.err }

// Decode strips // and /* */ comments and trailing commas (outside strings)
// from data, then decodes it into v, which must be a non-nil pointer
// (usually to a struct), as encoding/json would, but strictly:
//
//   - a key that is not a field of the target struct (by its `json` tag or
//     field name, matched with exact case) is an error naming the full key
//     path, with a suggestion of a close known key if there is one;
//   - a value of the wrong JSON type is an error naming its path, as is a
//     non-integer or out-of-range number for an integer field;
//   - a key given twice in one object is an error;
//   - syntax errors give the line and column in the original text.
//
// Maps accept any key; values of type any, json.RawMessage or a type that
// implements json.Unmarshaler accept any JSON value, and null is accepted
// everywhere, as in encoding/json. If an error is returned from the checks,
// v is not modified. Errors are of type *Error.
func Decode(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &Error{Msg: fmt.Sprintf("jsonc: Decode needs a non-nil pointer, got %T", v)}
	}
	clean, open := strip(data)
	if open >= 0 {
		return errorAt(data, open, "", "unterminated /* comment")
	}
	if off := jsondepth.Over(clean, MaxDepth); off >= 0 {
		return errorAt(data, off, "", fmt.Sprintf("arrays and objects nest more than %d deep", MaxDepth))
	}
	if !json.Valid(clean) {
		var x any
		err := json.Unmarshal(clean, &x)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := int(se.Offset) - 1 // the scanner counts the bad byte
			msg := strings.TrimPrefix(se.Error(), "json: ")
			if strings.Contains(msg, "unexpected end of JSON input") {
				off = len(bytes.TrimRight(clean, " \t\r\n"))
			}
			e := errorAt(data, max(off, 0), "", "syntax error: "+msg)
			e.err = se
			return e
		}
		return &Error{Msg: "syntax error", err: err}
	}
	w := walker{data: clean, orig: data}
	if err := w.value(rv.Type().Elem(), ""); err != nil {
		return err
	}
	if err := json.Unmarshal(clean, v); err != nil {
		// The checks above should have caught type errors; what is left
		// comes mostly from custom UnmarshalJSON methods.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			e := errorAt(data, max(int(te.Offset)-1, 0), te.Field, "cannot decode "+te.Value+" into "+te.Type.String())
			e.err = err
			return e
		}
		return &Error{Msg: err.Error(), err: err}
	}
	return nil
}

// MaxDepth bounds how deeply arrays and objects nest. Configuration needs
// a handful of levels; the bound is checked in one pass before decoding,
// so no deeper text reaches the decoders.
const MaxDepth = 64

// errorAt makes an Error located at byte offset off of the original text.
func errorAt(orig []byte, off int, path, msg string) *Error {
	line, col := position(orig, off)
	return &Error{Path: path, Line: line, Col: col, Msg: msg}
}

// position converts a byte offset into a 1-based line and column (in
// characters; a leading BOM does not count).
func position(data []byte, off int) (line, col int) {
	off = min(off, len(data))
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	if start == 0 && bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) && off >= 3 {
		start = 3
	}
	return line, utf8.RuneCount(data[start:off]) + 1
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType          = reflect.TypeFor[json.Number]()
)

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(iface))
}

// walker checks a valid JSON text (comments already blanked) against a Go
// type.
type walker struct {
	data []byte // the stripped text
	orig []byte // the original text, for positions
	pos  int
}

func (w *walker) errorf(off int, path, format string, args ...any) *Error {
	return errorAt(w.orig, off, path, fmt.Sprintf(format, args...))
}

func (w *walker) ws() {
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

// value checks the value at w.pos against type t and moves past it.
func (w *walker) value(t reflect.Type, path string) *Error {
	w.ws()
	start := w.pos
	c := w.data[w.pos]
	if c == 'n' { // null is fine for anything
		w.pos += len("null")
		return nil
	}
	for t.Kind() == reflect.Pointer && !t.Implements(unmarshalerType) {
		t = t.Elem()
	}
	if implements(t, unmarshalerType) {
		w.skip()
		return w.tryMethod(start, path, t, func(x any) error {
			return x.(json.Unmarshaler).UnmarshalJSON(w.data[start:w.pos])
		})
	}
	if implements(t, textUnmarshalerType) {
		if c != '"' {
			return w.mismatch(start, path, "a string")
		}
		s := w.str()
		return w.tryMethod(start, path, t, func(x any) error {
			return x.(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
		})
	}
	switch t.Kind() {
	case reflect.Interface:
		w.skip()
		return nil
	case reflect.Struct:
		if c != '{' {
			return w.mismatch(start, path, "an object")
		}
		return w.object(path, t, structFields(t))
	case reflect.Map:
		if c != '{' {
			return w.mismatch(start, path, "an object")
		}
		return w.object(path, t, nil)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !implements(t.Elem(), unmarshalerType) && !implements(t.Elem(), textUnmarshalerType) {
			if c != '"' {
				return w.mismatch(start, path, "a base64 string")
			}
			s := w.str()
			if _, err := base64.StdEncoding.DecodeString(s); err != nil {
				return w.errorf(start, path, "bad base64: %v", err)
			}
			return nil
		}
		fallthrough
	case reflect.Array:
		if c != '[' {
			return w.mismatch(start, path, "an array")
		}
		return w.array(path, t.Elem())
	case reflect.String:
		if t == numberType {
			if c != '"' && !isNumberStart(c) {
				return w.mismatch(start, path, "a number")
			}
		} else if c != '"' {
			return w.mismatch(start, path, "a string")
		}
		w.skip()
		return nil
	case reflect.Bool:
		if c != 't' && c != 'f' {
			return w.mismatch(start, path, "true or false")
		}
		w.skip()
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		if !isNumberStart(c) {
			return w.mismatch(start, path, "a number")
		}
		w.skip()
		return checkNumber(w, start, path, t, string(w.data[start:w.pos]))
	}
	// Anything else (channels, functions, complex numbers) is left for
	// encoding/json to reject.
	w.skip()
	return nil
}

// tryMethod calls an UnmarshalJSON or UnmarshalText method on a new value of
// type t, so that its errors can be reported with the value's path and
// position. (encoding/json calls the method again on the real target.)
func (w *walker) tryMethod(start int, path string, t reflect.Type, call func(x any) error) (e *Error) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface {
		return nil
	}
	defer func() {
		if recover() != nil {
			e = nil // leave it to encoding/json
		}
	}()
	if err := call(reflect.New(t).Interface()); err != nil {
		e = w.errorf(start, path, "%v", err)
		e.err = err
	}
	return e
}

func isNumberStart(c byte) bool { return c == '-' || (c >= '0' && c <= '9') }

func checkNumber(w *walker, start int, path string, t reflect.Type, lit string) *Error {
	var err error
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(lit, 10, t.Bits())
		if errors.Is(err, strconv.ErrSyntax) {
			return w.errorf(start, path, "must be an integer, got %s", lit)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		_, err = strconv.ParseUint(lit, 10, t.Bits())
		if errors.Is(err, strconv.ErrSyntax) {
			return w.errorf(start, path, "must be a non-negative integer, got %s", lit)
		}
	case reflect.Float32, reflect.Float64:
		_, err = strconv.ParseFloat(lit, t.Bits())
	}
	if err != nil {
		return w.errorf(start, path, "%s is out of range for %s", lit, t.Kind())
	}
	return nil
}

// mismatch reports that the value at off is not of the wanted kind.
func (w *walker) mismatch(off int, path, want string) *Error {
	got := "number"
	switch w.data[off] {
	case '{':
		got = "object"
	case '[':
		got = "array"
	case '"':
		got = "string"
	case 't', 'f':
		got = "boolean"
	case 'n':
		got = "null"
	}
	return w.errorf(off, path, "must be %s, got %s", want, got)
}

// object checks an object against a struct (fields != nil) or a map type.
func (w *walker) object(path string, t reflect.Type, fields *structInfo) *Error {
	w.pos++ // '{'
	seen := map[string]bool{}
	for {
		w.ws()
		switch w.data[w.pos] {
		case '}':
			w.pos++
			return nil
		case ',':
			w.pos++
			w.ws()
		}
		keyStart := w.pos
		key := w.str()
		w.ws()
		w.pos++ // ':'
		if seen[key] {
			return w.errorf(keyStart, path, "duplicate key %q", key)
		}
		seen[key] = true
		var ft reflect.Type
		if fields == nil {
			ft = t.Elem()
			if err := w.checkMapKey(keyStart, path, t.Key(), key); err != nil {
				return err
			}
		} else {
			f, ok := fields.byName[key]
			if !ok {
				msg := fmt.Sprintf("unknown key %q", key)
				if s := suggest(key, fields.names); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				}
				return w.errorf(keyStart, path, "%s", msg)
			}
			if f.quoted {
				// `json:",string"`: the value is quoted.
				w.ws()
				if c := w.data[w.pos]; c != '"' && c != 'n' {
					return w.mismatch(w.pos, joinKey(path, key), "a string (the field has the \",string\" option)")
				}
				w.skip()
				continue
			}
			ft = f.typ
		}
		if err := w.value(ft, joinKey(path, key)); err != nil {
			return err
		}
	}
}

// checkMapKey checks that key suits a map with integer keys, which
// encoding/json parses from the key string.
func (w *walker) checkMapKey(off int, path string, kt reflect.Type, key string) *Error {
	if implements(kt, textUnmarshalerType) {
		return nil
	}
	var err error
	switch kt.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(key, 10, kt.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		_, err = strconv.ParseUint(key, 10, kt.Bits())
	}
	if err != nil {
		return w.errorf(off, path, "key %q must be an integer fitting %s", key, kt.Kind())
	}
	return nil
}

func (w *walker) array(path string, elem reflect.Type) *Error {
	w.pos++ // '['
	for i := 0; ; i++ {
		w.ws()
		switch w.data[w.pos] {
		case ']':
			w.pos++
			return nil
		case ',':
			w.pos++
		}
		if err := w.value(elem, path+"["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
}

// str reads the string at w.pos and returns its value.
func (w *walker) str() string {
	start := w.pos
	w.skip()
	raw := w.data[start:w.pos]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // the text is valid JSON
	return s
}

// skip moves past the value at w.pos.
func (w *walker) skip() {
	w.ws()
	depth := 0
	for w.pos < len(w.data) {
		switch c := w.data[w.pos]; c {
		case '"':
			w.pos++
			for w.pos < len(w.data) && w.data[w.pos] != '"' {
				if w.data[w.pos] == '\\' {
					w.pos++
				}
				w.pos++
			}
			w.pos++
		case '{', '[':
			depth++
			w.pos++
			continue
		case '}', ']':
			if depth == 0 { // the end of the enclosing value
				return
			}
			depth--
			w.pos++
		default:
			if depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
				return
			}
			w.pos++
			continue
		}
		if depth == 0 {
			return
		}
	}
}

// joinKey appends an object key to a path: "a.b", or a["odd key"] for keys
// that would be ambiguous after a dot.
func joinKey(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if r == '.' || r == '[' || r == ']' || r == '"' || r == ' ' || r < 0x20 {
			plain = false
			break
		}
	}
	if !plain {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// suggest returns the known name closest to key: one equal but for case, or
// else the nearest within an edit distance of 2 (less for short keys).
func suggest(key string, names []string) string {
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return n
		}
	}
	best, bestD := "", 3
	for _, n := range names {
		d := textdist.Levenshtein(key, n)
		if d < bestD && d*2 <= utf8.RuneCountInString(key)+1 {
			best, bestD = n, d
		}
	}
	return best
}
