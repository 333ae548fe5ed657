package safety_test

import (
	"strings"
	"testing"

	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
)

// Keys written in pieces, and keys inside strings: where a chain of
// literals starts and ends, how long a piece may be, and which line the
// finding names.

const (
	awsA, awsB = "AKIA" + "Q3EG", "RK7WZP2NY5VD"
	ghA, ghB   = "ghp_" + "R8aKd93LmQx7", "ZpWc2VnB5tYe1HsJ4gFu6Ni0"
)

// fileFindings checks text as scripts/x.py and returns its findings by code.
func fileFindings(text string) map[string]*skill.Diagnostic {
	in := input("x", "See scripts/x.py.\n", skill.BundleFile{Path: "scripts/x.py", Data: []byte(text)})
	out := map[string]*skill.Diagnostic{}
	ds := safety.Check(in, nil)
	for i := range ds {
		if ds[i].Path == "scripts/x.py" {
			out[ds[i].Code] = &ds[i]
		}
	}
	return out
}

func TestSplitKeys(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		aws, gh    int // the line reported, 0 for none
	}{
		{"at the start of the file", `"` + awsA + `" + "` + awsB + `"`, 1, 0},
		{"after a list item", `K = ["x","` + awsA + `" + "` + awsB + `"]`, 1, 0},
		{"two chains one byte apart", `k = "` + awsA + `" + "` + awsB + `";"` + ghA + `" + "` + ghB + `"`, 1, 1},
		{"second chain on its own line", "a = \"abcdefgh\" + \"ijklmnopq\"\n\nk = (\"" + awsA + "\"\n     \"" + awsB + "\")\n", 3, 0},
		{"key at a chain's start, after another chain", "a = \"abcdefgh\" + \"ijklmnopq\"\nk = \"" + awsA + "\" .. \"" + awsB + "\"\n", 2, 0},
		{"three pieces", `k = "AKIA" & "Q3EGRK7W" & "ZP2NY5VD"`, 1, 0},
		{"unterminated literal at the end", `k = "` + awsA + `" + "` + awsB, 0, 0},
		{"line continuation", "k = \"" + awsA + "\" \\\n  \"" + awsB + "\"", 1, 0},
		{"single quotes, adjacent", `t = '` + ghA + `' '` + ghB + `'`, 0, 1},
		{"backquotes, tab", "t = `" + ghA + "`\t+\t`" + ghB + "`", 0, 1},
		{"crlf", "k = \"" + awsA + "\" +\r\n  \"" + awsB + "\"\r\n", 1, 0},
		{"an operator ending the file", `k = "` + awsA + `" + "` + awsB + `" +`, 1, 0},
		{"dots ending the file", `k = "` + awsA + `" .. "` + awsB + `" ..`, 1, 0},
		{"a comma is not a join", `["` + awsA + `", "` + awsB + `"]`, 0, 0},
		{"a space inside a piece", `k = "` + awsA + ` " + "` + awsB + `"`, 0, 0},
		{"one piece", `k = "` + awsA + `"`, 0, 0},
	} {
		fs := fileFindings(tc.text)
		for _, c := range []struct {
			code string
			line int
		}{{safety.CodeSecretAWS, tc.aws}, {safety.CodeSecretGitHub, tc.gh}} {
			d := fs[c.code]
			switch {
			case c.line == 0 && d != nil:
				t.Errorf("%s: %s reported: %s", tc.name, c.code, d.Message)
			case c.line != 0 && d == nil:
				t.Errorf("%s: %s not reported", tc.name, c.code)
			case d != nil && lineOf(d) != c.line:
				t.Errorf("%s: %s on line %d, want %d: %s", tc.name, c.code, lineOf(d), c.line, d.Message)
			}
		}
	}
}

// TestSplitKeyPieceBound: a piece of up to 510 bytes is a literal of a
// chain, one of 511 is not read as one.
func TestSplitKeyPieceBound(t *testing.T) {
	for _, tc := range []struct {
		size int
		want bool
	}{{510, true}, {511, false}} {
		piece := strings.Repeat("-", tc.size-len(awsA)) + awsA
		fs := fileFindings(`k = "` + piece + `" + "` + awsB + `"` + "\n")
		if got := fs[safety.CodeSecretAWS] != nil; got != tc.want {
			t.Errorf("piece of %d bytes: reported %v, want %v", tc.size, got, tc.want)
		}
	}
}

// TestKeyInString: a private key inside a JSON string is reported, named
// a service-account key when the file has a client_email, and a key of
// placeholder text is not.
func TestKeyInString(t *testing.T) {
	body := "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Zq3Lm9Xw4Pn7"
	key := `"-----BEGIN RSA PRIVATE KEY-----\n` + body + `\n-----END RSA PRIVATE KEY-----\n"`
	for _, tc := range []struct{ text, want string }{
		{`{"private_key": ` + key + `}`, "line 1: a RSA PRIVATE KEY in a string"},
		{"{\n\"private_key\": " + key + `, "client_email": "x@p.iam.gserviceaccount.com"}`, "line 2: a service-account key (private_key and client_email)"},
		{`{"private_key": "-----BEGIN PRIVATE KEY-----\r\n` + body + `"}`, "line 1: a PRIVATE KEY in a string"},
		{`{"private_key": "-----BEGIN PRIVATE KEY-----\n` + strings.Repeat("A", 64) + `"}`, ""},
		{`{"private_key": "-----BEGIN PRIVATE KEY-----\n` + strings.Repeat("A", 64) + `", "k2": "-----BEGIN PRIVATE KEY-----\n` + body + `"}`, "line 1: a PRIVATE KEY in a string"},
		{`{"private_key": "-----BEGIN PRIVATE KEY----- ` + body + `"}`, ""},
	} {
		d := fileFindings(tc.text)[safety.CodeSecretPrivateKey]
		switch {
		case tc.want == "" && d != nil:
			t.Errorf("%q: %s", tc.text, d.Message)
		case tc.want != "" && (d == nil || !strings.HasPrefix(d.Message, tc.want)):
			t.Errorf("%q: %v, want %q", tc.text, d, tc.want)
		}
	}
}

// TestGoogleKeyLength: the Google key rule's match ends one character
// past the key; the message counts the key's 39 characters only.
func TestGoogleKeyLength(t *testing.T) {
	key := "AI" + "za" + "SyB3kR9mQ2xW7pL4nV8cT1zD6fH0jK5sG-u"
	for _, after := range []string{".", "!", "\n", ""} {
		d := fileFindings("k = " + key + after)[safety.CodeSecretGoogle]
		if d == nil || !strings.Contains(d.Message, "(39 characters)") {
			t.Errorf("key then %q: %v", after, d)
		}
	}
}
