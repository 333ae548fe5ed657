package jsonc

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestStrip(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{"{\"a\": 1} // c", "{\"a\": 1}     "},
		{"// c\n{}", "    \n{}"},
		{"{/* x */}", "{       }"},
		{"/* a\nb */{}", "    \n    {}"},
		{"/* a\r\nb */", "     \n    "},
		{"/**/", "    "},
		{"/***/", "     "},
		{"/* ** / */1", "          1"},
		{`"http://x"`, `"http://x"`},
		{`"/* no */"`, `"/* no */"`},
		{`"a\"//b" // c`, `"a\"//b"     `},
		{`"a\\" // c`, `"a\\"     `},
		{`"\\\"/*"/**/`, `"\\\"/*"    `},
		{`[1, 2,]`, `[1, 2 ]`},
		{`{"a": 1,}`, `{"a": 1 }`},
		{"[1, // c\n]", "[1      \n]"},
		{"[1, /* c */ ]", "[1          ]"},
		{`[",]"]`, `[",]"]`},
		{`["a",]`, `["a" ]`},
		{`[[],]`, `[[] ]`},
		{`[{},]`, `[{} ]`},
		{`[true,]`, `[true ]`},
		{`[,]`, `[,]`},
		{`{,}`, `{,}`},
		{`[1,,]`, `[1,,]`},
		{`{"a":,}`, `{"a":,}`},
		{`,]`, `,]`},
		{"\xef\xbb\xbf{}", "   {}"},
		{"1 / 2", "1 / 2"},
		{"/", "/"},
		{"/* open", "       "},
		{"\"open // x", "\"open // x"},
		{"// ü\n", "     \n"},
	}
	for _, tt := range tests {
		got, _ := strip([]byte(tt.in))
		if string(got) != tt.want {
			t.Errorf("strip(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
	if _, open := strip([]byte("{} /* x")); open != 3 {
		t.Errorf("open = %d, want 3", open)
	}
	if _, open := strip([]byte("{} /* x */")); open != -1 {
		t.Errorf("open = %d, want -1", open)
	}
}

// stringSpans returns the [start, end) byte ranges of the string literals
// in data, found by a scanner written independently of strip's: it walks the
// text once, skipping comments, and records each quoted run.
func stringSpans(data []byte) [][2]int {
	var spans [][2]int
	const (
		code = iota
		str
		line
		block
	)
	state, start := code, 0
	for i := 0; i < len(data); i++ {
		switch state {
		case code:
			switch {
			case data[i] == '"':
				state, start = str, i
			case bytes.HasPrefix(data[i:], []byte("//")):
				state = line
				i++
			case bytes.HasPrefix(data[i:], []byte("/*")):
				state = block
				i++
			}
		case str:
			switch data[i] {
			case '\\':
				i++
			case '"':
				spans = append(spans, [2]int{start, i + 1})
				state = code
			}
		case line:
			if data[i] == '\n' {
				state = code
			}
		case block:
			if bytes.HasPrefix(data[i:], []byte("*/")) {
				state = code
				i++
			}
		}
	}
	if state == str {
		spans = append(spans, [2]int{start, len(data)})
	}
	return spans
}

func FuzzStrip(f *testing.F) {
	for _, s := range []string{
		`{"a": "http://x", /* c */ "b": [1, 2,], // d` + "\n}",
		`"\\\"/*"/**/`, "/* open", `[,]`, "\xef\xbb\xbf{}", `{"a":{"b":[{},],},}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, _ := strip(in)
		if len(out) != len(in) {
			t.Fatalf("length changed: %d -> %d", len(in), len(out))
		}
		for i := range in {
			if out[i] != in[i] && (out[i] != ' ' || in[i] == '\n') {
				t.Fatalf("byte %d changed from %q to %q", i, in[i], out[i])
			}
		}
		for _, sp := range stringSpans(in) {
			if !bytes.Equal(in[sp[0]:sp[1]], out[sp[0]:sp[1]]) {
				t.Fatalf("string literal %q changed to %q", in[sp[0]:sp[1]], out[sp[0]:sp[1]])
			}
		}
		// Standard JSON has nothing to strip.
		if json.Valid(in) && !bytes.Equal(in, out) {
			t.Fatalf("valid JSON %q changed to %q", in, out)
		}
		// Stripping is idempotent.
		if again, _ := strip(out); !bytes.Equal(again, out) {
			t.Fatalf("strip not idempotent: %q -> %q", out, again)
		}
		// Decoding never panics.
		var v struct {
			A []struct {
				B map[string]int `json:"b"`
			} `json:"a"`
			C any `json:"c"`
		}
		_ = Decode(in, &v)
		var c config
		_ = Decode(in, &c)
	})
}
