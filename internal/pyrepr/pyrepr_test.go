package pyrepr

import "testing"

func TestString(t *testing.T) {
	cases := map[string]string{
		"abc":        `'abc'`,
		"it's":       `"it's"`,
		`a'b"c`:      `'a\'b"c'`,
		"tab\tnl\n":  `'tab\tnl\n'`,
		"\x01\x7f":   `'\x01\x7f'`,
		"café 技能":    `'café 技能'`,
		"\u00a0":     `'\xa0'`,
		"\u200b":     `'\u200b'`,
		"\U000e0041": `'\U000e0041'`,
		`back\slash`: `'back\\slash'`,
	}
	for in, want := range cases {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %s, want %s", in, got, want)
		}
	}
}
