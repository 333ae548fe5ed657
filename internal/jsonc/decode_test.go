package jsonc

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/loadout/loadout/internal/textdist"
	"reflect"
	"strings"
	"testing"
	"time"
)

type skillRef struct {
	Name   string  `json:"name"`
	Inline string  `json:"inline,omitempty"`
	Path   *string `json:"path,omitempty"`
}

type agent struct {
	Name    string            `json:"name"`
	Skills  []skillRef        `json:"skills"`
	Env     map[string]string `json:"env"`
	Extra   json.RawMessage   `json:"extra"`
	Any     any               `json:"any"`
	Max     int8              `json:"max"`
	Port    uint16            `json:"port"`
	Ratio   float32           `json:"ratio"`
	On      *bool             `json:"on"`
	Count   int               `json:"count,string"`
	Ignored string            `json:"-"`
	Dash    string            `json:"-,"`
	When    time.Time         `json:"when"`
	NoTag   string
	private string
}

type Base struct {
	Version int    `json:"version"`
	Owner   string `json:"owner"`
}

type Meta struct {
	Label string `json:"label"`
}

// upper accepts anything through UnmarshalJSON.
type upper string

func (u *upper) UnmarshalJSON(b []byte) error {
	*u = upper(strings.ToUpper(string(b)))
	return nil
}

// level is a TextUnmarshaler: it needs a string.
type level int

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return fmt.Errorf("bad level %q", b)
	}
	return nil
}

type config struct {
	Base
	*Meta
	Agents []agent               `json:"agents"`
	Fixed  [2]int                `json:"fixed"`
	Data   []byte                `json:"data"`
	Num    json.Number           `json:"num"`
	Custom upper                 `json:"custom"`
	Level  level                 `json:"level"`
	Nested map[string][]skillRef `json:"nested"`
	Ints   map[int]string        `json:"ints"`
	Deep   map[string]map[string]struct {
		On bool `json:"on"`
	} `json:"deep"`
}

func TestDecodeOK(t *testing.T) {
	src := "\xef\xbb\xbf" + `// loadout config
{
  /* block
     comment */ "version": 2, // trailing line comment
  "owner": "me",
  "label": "x",
  "agents": [
    {
      "name": "http://example.com/*not a comment*/", // url survives
      "skills": [
        {"name": "pdf", "inline": "// not a comment either",},
        {"name": "a\"b//c", "path": "/x/y"},
      ],
      "env": {"ANY": "key", "weird key.x": "ok",},
      "extra": {"whatever": [1, 2, {"a": null}]},
      "any": [true, "x"],
      "max": -128, "port": 65535, "ratio": 1.5e3,
      "on": false,
      "count": "42",
      "-": "dash",
      "when": "2024-01-02T03:04:05Z",
      "NoTag": "t",
    },
  ],
  "fixed": [1, 2,],
  "data": "aGVsbG8=",
  "num": 12345678901234567890,
  "custom": {"free": "form"},
  "level": "high",
  "nested": {"k": [{"name": "n"}]},
  "deep": {"a": {"b": {"on": true}}},
  "ints": {"2": "two"} /* last member, no comma */
}`

	var c config
	if err := Decode([]byte(src), &c); err != nil {
		t.Fatal(err)
	}
	a := c.Agents[0]
	path := "/x/y"
	on := false
	want := agent{
		Name: "http://example.com/*not a comment*/",
		Skills: []skillRef{
			{Name: "pdf", Inline: "// not a comment either"},
			{Name: `a"b//c`, Path: &path},
		},
		Env:   map[string]string{"ANY": "key", "weird key.x": "ok"},
		Extra: json.RawMessage(`{"whatever": [1, 2, {"a": null}]}`),
		Any:   []any{true, "x"},
		Max:   -128, Port: 65535, Ratio: 1500, On: &on, Count: 42, Dash: "dash",
		When:  time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		NoTag: "t",
	}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("agent = %+v\nwant    %+v", a, want)
	}
	if c.Version != 2 || c.Owner != "me" || c.Meta == nil || c.Label != "x" || c.Fixed != [2]int{1, 2} ||
		string(c.Data) != "hello" || c.Num != "12345678901234567890" || c.Custom != `{"FREE": "FORM"}` ||
		c.Level != 2 || c.Nested["k"][0].Name != "n" || c.Ints[2] != "two" || !c.Deep["a"]["b"].On {
		t.Errorf("config = %+v", c)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown top-level key", `{"versoin": 1}`,
			`1:2: unknown key "versoin" (did you mean "version"?)`},
		{"unknown key with suggestion", "{\"agents\": [\n  {\"skills\": [{}, {\"name\": \"x\",\n    \"inlin\": \"y\"}]}]}",
			`3:5: agents[0].skills[1]: unknown key "inlin" (did you mean "inline"?)`},
		{"unknown key case suggestion", `{"agents": [{"Name": "x"}]}`,
			`1:14: agents[0]: unknown key "Name" (did you mean "name"?)`},
		{"unknown key no suggestion", `{"agents": [{"zzzzzz": 1}]}`,
			`1:14: agents[0]: unknown key "zzzzzz"`},
		{"untagged field exact case", `{"agents": [{"notag": 1}]}`,
			`1:14: agents[0]: unknown key "notag" (did you mean "NoTag"?)`},
		{"dash tag is not a key", `{"agents": [{"Ignored": 1}]}`,
			`1:14: agents[0]: unknown key "Ignored"`},
		{"unexported is not a key", `{"agents": [{"private": 1}]}`,
			`1:14: agents[0]: unknown key "private"`},
		{"embedded struct name is not a key", `{"Base": {}}`,
			`1:2: unknown key "Base"`},
		{"unknown key inside map value", `{"nested": {"k": [{"nam": "x"}]}}`,
			`1:20: nested.k[0]: unknown key "nam" (did you mean "name"?)`},
		{"unknown key inside odd map key", `{"deep": {"a b": {"c": {"of": true}}}}`,
			`1:25: deep["a b"].c: unknown key "of" (did you mean "on"?)`},
		{"unknown key even when null", `{"agent": null}`,
			`1:2: unknown key "agent" (did you mean "agents"?)`},
		{"duplicate key", `{"owner": "a", "owner": "b"}`,
			`1:16: duplicate key "owner"`},
		{"duplicate map key", `{"agents": [{"env": {"A": "1", "A": "2"}}]}`,
			`1:32: agents[0].env: duplicate key "A"`},
		{"array expected", `{"agents": [{"skills": "pdf"}]}`,
			`1:24: agents[0].skills: must be an array, got string`},
		{"object expected", `{"agents": [{"skills": ["pdf"]}]}`,
			`1:25: agents[0].skills[0]: must be an object, got string`},
		{"top level object expected", `[1]`,
			`1:1: must be an object, got array`},
		{"string expected", `{"owner": 5}`,
			`1:11: owner: must be a string, got number`},
		{"bool expected", `{"agents": [{"on": "yes"}]}`,
			`1:20: agents[0].on: must be true or false, got string`},
		{"number expected", `{"version": "2"}`,
			`1:13: version: must be a number, got string`},
		{"integer expected", `{"version": 2.5}`,
			`1:13: version: must be an integer, got 2.5`},
		{"int8 range", `{"agents": [{"max": 128}]}`,
			`1:21: agents[0].max: 128 is out of range for int8`},
		{"uint negative", `{"agents": [{"port": -1}]}`,
			`1:22: agents[0].port: must be a non-negative integer, got -1`},
		{"uint16 range", `{"agents": [{"port": 65536}]}`,
			`1:22: agents[0].port: 65536 is out of range for uint16`},
		{"float32 range", `{"agents": [{"ratio": 1e39}]}`,
			`1:23: agents[0].ratio: 1e39 is out of range for float32`},
		{"string option", `{"agents": [{"count": 42}]}`,
			`1:23: agents[0].count: must be a string (the field has the ",string" option), got number`},
		{"map expected", `{"agents": [{"env": ["A"]}]}`,
			`1:21: agents[0].env: must be an object, got array`},
		{"map value type", `{"agents": [{"env": {"A": 1}}]}`,
			`1:27: agents[0].env.A: must be a string, got number`},
		{"integer map key", `{"ints": {"1": "a", "x": "b"}}`,
			`1:21: ints: key "x" must be an integer fitting int`},
		{"fixed array element", `{"fixed": [1, "2"]}`,
			`1:15: fixed[1]: must be a number, got string`},
		{"bytes need base64 string", `{"data": [1]}`,
			`1:10: data: must be a base64 string, got array`},
		{"text unmarshaler needs string", `{"level": 1}`,
			`1:11: level: must be a string, got number`},
		{"json number rejects bool", `{"num": true}`,
			`1:9: num: must be a number, got boolean`},
		{"text unmarshaler error", `{"level": "medium"}`,
			`1:11: level: bad level "medium"`},
		{"bad base64", `{"data": "!!"}`,
			`1:10: data: bad base64: illegal base64 data at input byte 0`},
		{"unmarshaler error", `{"agents": [{"when": "yesterday"}]}`,
			`1:22: agents[0].when: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		{"position after comments", "// c\n/* a\nb */ {\n\t\"x\": 1}",
			`4:2: unknown key "x"`},
		{"position counts characters", `{"owner": "ünï", "ü": 1}`,
			`1:18: unknown key "ü"`},
		{"position with bom", "\xef\xbb\xbf{\"x\": 1}",
			`1:2: unknown key "x"`},
		{"syntax missing colon", "{\n  \"owner\" \"x\"\n}",
			`2:11: syntax error: invalid character '"' after object key`},
		{"syntax bad literal", "{\"owner\": tru}",
			`1:14: syntax error: invalid character '}' in literal true (expecting 'e')`},
		{"syntax unexpected end", "{\"owner\": \"x\"  // done\n",
			`1:14: syntax error: unexpected end of JSON input`}, // just after the last token
		{"syntax empty", "",
			`1:1: syntax error: unexpected end of JSON input`},
		{"syntax only comments", "// nothing\n/* here */",
			`1:1: syntax error: unexpected end of JSON input`},
		{"syntax after comment on line 3", "{\n// c\n  \"owner\": 'x'}",
			`3:12: syntax error: invalid character '\'' looking for beginning of value`},
		{"syntax trailing data", `{} {}`,
			`1:4: syntax error: invalid character '{' after top-level value`},
		{"lonely comma in object", `{,}`,
			`1:2: syntax error: invalid character ',' looking for beginning of object key string`},
		{"lonely comma in array", `{"agents": [,]}`,
			`1:13: syntax error: invalid character ',' looking for beginning of value`},
		{"double trailing comma", `{"fixed": [1,,]}`,
			`1:14: syntax error: invalid character ',' looking for beginning of value`},
		{"unterminated block comment", "{\n  /* open",
			`2:3: unterminated /* comment`},
		{"single slash", `{"owner": "x" / "y"}`,
			`1:15: syntax error: invalid character '/' after object key:value pair`},
		{"unterminated string", `{"owner": "x}`,
			`1:14: syntax error: unexpected end of JSON input`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c config
			err := Decode([]byte(tt.src), &c)
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *Error: %v", err, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestDecodeLeavesTargetOnError(t *testing.T) {
	c := config{Base: Base{Owner: "before"}}
	if err := Decode([]byte(`{"owner": "after", "bogus": 1}`), &c); err == nil {
		t.Fatal("no error")
	}
	if c.Owner != "before" {
		t.Errorf("target modified: %q", c.Owner)
	}
}

func TestDecodeErrorFields(t *testing.T) {
	var c config
	err := Decode([]byte("{\"agents\": [{\"skills\": [\n {\"name\": 1}]}]}"), &c)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v", err)
	}
	if e.Path != "agents[0].skills[0].name" || e.Line != 2 || e.Col != 11 || e.Msg != "must be a string, got number" {
		t.Errorf("got %#v", e)
	}
	err = Decode([]byte(`{"a": }`), &c)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		t.Errorf("syntax error does not unwrap to *json.SyntaxError: %v", err)
	}
}

func TestDecodeNonPointer(t *testing.T) {
	var c config
	for _, v := range []any{c, nil, (*config)(nil)} {
		if err := Decode([]byte(`{}`), v); err == nil {
			t.Errorf("Decode(%T) succeeded", v)
		}
	}
}

func TestDecodeOtherTargets(t *testing.T) {
	var m map[string]any
	if err := Decode([]byte(`{"a": [1, 2,], /* x */ "b": {"c": null,},}`), &m); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, map[string]any{"a": []any{1.0, 2.0}, "b": map[string]any{"c": nil}}) {
		t.Errorf("got %v", m)
	}
	var s []skillRef
	err := Decode([]byte(`[{"name": "a"}, {"nme": "b"}]`), &s)
	if err == nil || err.Error() != `1:18: [1]: unknown key "nme" (did you mean "name"?)` {
		t.Errorf("got %v", err)
	}
	var p *config
	if err := Decode([]byte(`{"owner": "x"}`), &p); err != nil || p.Owner != "x" {
		t.Errorf("got %v, %+v", err, p)
	}
}

func TestEmbeddedConflicts(t *testing.T) {
	type A struct{ X, Y int }
	type B struct {
		X int
		Y int `json:"Y"`
	}
	type T struct {
		A
		B
		Z int `json:"z"`
	}
	si := structFields(reflect.TypeFor[T]())
	if _, ok := si.byName["X"]; ok {
		t.Error("ambiguous X kept")
	}
	if f, ok := si.byName["Y"]; !ok || !f.tagged {
		t.Error("tagged Y should win")
	}
	if _, ok := si.byName["z"]; !ok {
		t.Error("z missing")
	}
	// encoding/json agrees: X is dropped.
	var v T
	if err := json.Unmarshal([]byte(`{"X": 1, "Y": 2}`), &v); err != nil || v.A.X != 0 || v.B.X != 0 || v.B.Y != 2 {
		t.Errorf("encoding/json: %+v %v", v, err)
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"agents", "inline", "name", "path", "skills"}
	for key, want := range map[string]string{
		"inlin": "inline", "Inline": "inline", "INLINE": "inline", "nmae": "name", "skill": "skills",
		"agnets": "agents", "x": "", "completely": "", "ab": "", "pth": "path",
	} {
		if got := suggest(key, names); got != want {
			t.Errorf("suggest(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"inlin", "inline", 1}, {"ü", "u", 1}, {"ab", "ba", 2}} {
		if got := textdist.Levenshtein(tt.a, tt.b); got != tt.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
	}
}

func TestDecodeDepth(t *testing.T) {
	var v any
	deep := "{\"a\": " + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "}"
	err := Decode([]byte(deep), &v)
	var e *Error
	if !errors.As(err, &e) || e.Line != 1 || e.Col != 7+MaxDepth-1 || !strings.Contains(e.Msg, "nest more than 64 deep") {
		t.Errorf("too deep: %v", err)
	}
	ok := "// brackets in strings and comments do not count: [[[[\n{\"a\": " + strings.Repeat("[", MaxDepth-1) + "\"" + strings.Repeat("[{", 100) + "\"" + strings.Repeat("]", MaxDepth-1) + "}"
	if err := Decode([]byte(ok), &v); err != nil {
		t.Errorf("at the limit: %v", err)
	}
}
