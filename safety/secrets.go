package safety

import (
	"fmt"
	"regexp"
	"strings"
)

// secretRule is one kind of credential, matched by its documented shape.
// Only shapes with a fixed, distinctive prefix are used, so that ordinary
// text (hashes, UUIDs, base64 data) does not match; generic
// "password = ..." assignments and JWTs are left out on purpose: they are
// too often examples.
type secretRule struct {
	code, what string
	re         *regexp.Regexp
	// prefix is the length of the fixed prefix; the rest (the random
	// part) is checked for placeholders.
	prefix int
	// keys: see rule.keys.
	keys []string
	spec *keySpec
}

var secretRules = []secretRule{
	{code: CodeSecretAWS, what: "an AWS access key id", prefix: 4,
		keys: []string{"akia", "asia", "abia", "acca"},
		re:   regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{code: CodeSecretGitHub, what: "a GitHub token", prefix: 4,
		keys: []string{"ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_"},
		re:   regexp.MustCompile(`\b(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{60,}\b`)},
	{code: CodeSecretSlack, what: "a Slack token", prefix: 5,
		keys: []string{"xox", "xapp-"},
		re:   regexp.MustCompile(`\bxox[abposre]-[0-9]{6,}-[A-Za-z0-9-]{10,}\b|\bxapp-[0-9]-[A-Z0-9]{8,}-[0-9]{8,}-[a-f0-9]{32,}\b`)},
	// A webhook URL is a credential: whoever has it posts to the channel.
	{code: CodeSecretSlack, what: "a Slack webhook URL", prefix: 26,
		keys: []string{"hooks.slack.com/"},
		re:   regexp.MustCompile(`\bhooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,}/[A-Z0-9]{6,}/[A-Za-z0-9]{16,}`)},
	{code: CodeSecretNPM, what: "an npm access token", prefix: 4,
		keys: []string{"npm_"},
		re:   regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{code: CodeSecretGitLab, what: "a GitLab token", prefix: 6,
		keys: []string{"glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-"},
		re:   regexp.MustCompile(`\b(?:glpat|gldt|glrt|glptt|glcbt|gloas)-[A-Za-z0-9_-]{20,}`)},
	{code: CodeSecretGoogle, what: "a Google API key", prefix: 4,
		keys: []string{"aiza"},
		re:   regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}(?:[^0-9A-Za-z_-]|$)`)},
	{code: CodeSecretStripe, what: "a Stripe live secret key", prefix: 8,
		keys: []string{"_live_"},
		re:   regexp.MustCompile(`\b(?:sk|rk)_live_[0-9A-Za-z]{24,}\b`)},
	{code: CodeSecretAnthropic, what: "an Anthropic API key", prefix: 14,
		keys: []string{"sk-ant-"},
		re:   regexp.MustCompile(`\bsk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,}`)},
	// OpenAI keys carry "T3BlbkFJ" (base64 of "OpenAI") in the middle, or
	// the project/service-account prefix and a long random part.
	{code: CodeSecretOpenAI, what: "an OpenAI API key", prefix: 8,
		keys: []string{"sk-"},
		re:   regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{10,}T3BlbkFJ[A-Za-z0-9_-]{10,}|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{80,}`)},
}

// pemRE finds a private key block with a body: a header alone, or a body
// of "...", is documentation.
var pemRE = regexp.MustCompile(`-----BEGIN ((?:RSA |DSA |EC |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----\s*?\r?\n((?:[^\n-][^\n]*\r?\n){1,200}?)-----END `)
var base64Line = regexp.MustCompile(`^[A-Za-z0-9+/=]{40,}\r?$`)

// pemEscapedRE finds a private key inside a JSON or YAML string, its line
// breaks written \n: a Google service-account key file is one.
var pemEscapedRE = regexp.MustCompile(`-----BEGIN ((?:RSA |DSA |EC |OPENSSH |ENCRYPTED )?PRIVATE KEY)-----(?:\\r)?\\n([A-Za-z0-9+/=]{40,})`)

// placeholderWords mark documentation keys: AWS's own
// AKIAIOSFODNN7EXAMPLE, "your_key_here", "xxxx".
var placeholderWords = []string{"EXAMPLE", "SAMPLE", "DUMMY", "FAKE", "PLACEHOLDER", "REDACTED", "YOUR", "TEST", "XXXX", "0000", "1234", "ABCD"}

// Placeholder reports whether a matched secret is a documentation value
// rather than a credential. A value is a placeholder when its random part
// (after the fixed prefix)
//   - contains a word such as EXAMPLE, SAMPLE, DUMMY, FAKE, PLACEHOLDER,
//     REDACTED, YOUR, TEST, or a run such as XXXX, 0000, 1234, ABCD
//     (case-insensitive), or
//   - repeats one character four times in a row, or
//   - uses fewer than 10 distinct characters (real keys are random: 16
//     random characters from 36 have about 13 distinct).
func Placeholder(secret string, prefix int) bool {
	if prefix > len(secret) {
		prefix = 0
	}
	body := secret[prefix:]
	up := strings.ToUpper(body)
	for _, w := range placeholderWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	run, distinct := 1, map[rune]bool{}
	var prev rune
	for i, r := range body {
		distinct[r] = true
		if i > 0 && r == prev && r != '_' && r != '-' {
			run++
			if run >= 4 {
				return true
			}
		} else {
			run = 1
		}
		prev = r
	}
	return len(distinct) < 10
}

// redact shows a secret as its first characters and its length.
func redact(s string, keep int) string {
	if keep > 6 {
		keep = 6
	}
	if keep > len(s)/3 {
		keep = len(s) / 3
	}
	return fmt.Sprintf("%s… (%d characters)", s[:keep], len(s))
}

// redactSecrets replaces every secret-shaped value in an excerpt, so that
// no message quotes one.
func redactSecrets(s string) string {
	for _, r := range secretRules {
		s = r.re.ReplaceAllStringFunc(s, func(m string) string { return redact(m, r.prefix) })
	}
	return s
}

// secrets reports the credentials in one text, each kind once with its
// line and count; placeholders are not reported.
func (c *checker) secrets(path string, t *text) {
	if m := firstPEM(t.s); m != nil {
		c.add(CodeSecretPrivateKey, path, fmt.Sprintf("%sa %s block: revoke the key if it was real, remove it and load it from the environment or a secret store at run time",
			t.lineAt(m[0]), t.s[m[2]:m[3]]))
	} else if m := firstEscapedPEM(t.s); m != nil {
		what := "a " + t.s[m[2]:m[3]] + " in a string"
		if strings.Contains(t.s, `"client_email"`) {
			what = "a service-account key (private_key and client_email)"
		}
		c.add(CodeSecretPrivateKey, path, fmt.Sprintf("%s%s: revoke the key if it was real, remove it and load it from the environment or a secret store at run time",
			t.lineAt(m[0]), what))
	}
	var joined *text
	var joinedOff []int
	for _, r := range secretRules {
		first, n := "", 0
		firstOff := 0
		src, ms := t, t.find(r.re, r.spec, 1, 300, 0, len(t.s))
		if len(ms) == 0 {
			// A key written in pieces ("AKIA" + "Q3EG…", 'ghp_' 'R8a…',
			// "xoxb-" . "…"): look again with the pieces
			// joined (built once per file, only when it has pieces).
			if joined == nil {
				j, offs := joinStrings(t.s)
				joined, joinedOff = &text{s: j}, offs
			}
			if joinedOff != nil {
				src, ms = joined, joined.find(r.re, r.spec, 1, 300, 0, len(joined.s))
			}
		}
		for _, m := range ms {
			v := strings.TrimRight(src.s[m[0]:m[1]], "\"' \t\r\n,;)}]>`")
			if r.code == CodeSecretGoogle && len(v) > 39 {
				v = v[:39]
			}
			if Placeholder(v, r.prefix) {
				continue
			}
			if n == 0 {
				first, firstOff = v, m[0]
				if src != t {
					// The chain's first literal.
					for k := 0; k < len(joinedOff); k += 2 {
						if joinedOff[k] <= m[0] {
							firstOff = joinedOff[k+1]
						}
					}
				}
			}
			n++
		}
		if n == 0 {
			continue
		}
		msg := fmt.Sprintf("%s%s (%s)", t.lineAt(firstOff), r.what, redact(first, r.prefix))
		if n > 1 {
			msg += fmt.Sprintf(", %d in this file", n)
		}
		c.add(r.code, path, msg+": revoke it if it was real, remove it and read it from the environment or a secret store at run time")
	}
}

// firstPEM returns the match indexes of the first private key block whose
// body looks like key material (a base64 line of 40 characters or more).
func firstPEM(s string) []int {
	if !strings.Contains(s, "PRIVATE KEY") {
		return nil
	}
	for _, m := range pemRE.FindAllStringSubmatchIndex(s, -1) {
		for _, line := range strings.Split(s[m[4]:m[5]], "\n") {
			if base64Line.MatchString(line) && !Placeholder(line, 0) {
				return m
			}
		}
	}
	return nil
}

// firstEscapedPEM returns the match indexes of the first private key
// written inside a string with \n escapes whose body looks like key
// material.
func firstEscapedPEM(s string) []int {
	if !strings.Contains(s, "PRIVATE KEY-----\\") {
		return nil
	}
	for _, m := range pemEscapedRE.FindAllStringSubmatchIndex(s, -1) {
		if !Placeholder(s[m[4]:m[5]], 0) {
			return m
		}
	}
	return nil
}

// joinStrings returns the chains of adjacent string literals in s, each
// joined and on a line of its own: a quoted literal, then space or line
// breaks, an optional concatenation operator (+ . & ..), then another
// literal, so "AKIA" + "Q3EG…" reads AKIAQ3EG…. Only chains that could
// hold a key are kept: no space inside the literals, 16 bytes or more in
// all. offs holds, for each chain, its offset in the result and the
// offset of its first literal in s (pairs); it is nil when there is no
// chain. (A list's commas are not joins: JSON is full of them.)
func joinStrings(s string) (string, []int) {
	var b []byte
	var offs []int
	// lit returns the end of the quoted literal opening at i (the index
	// after its closing quote), or -1.
	lit := func(i int) int {
		q := s[i]
		for j := i + 1; j < len(s) && j < i+512; j++ {
			switch s[j] {
			case q:
				return j + 1
			case '\n', ' ', '\t':
				return -1
			}
		}
		return -1
	}
	// join returns where the next literal of a chain opens after a
	// literal ending at i, or -1.
	join := func(i int) int {
		j := i
		skip := func() {
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r' || s[j] == '\\') {
				j++
			}
		}
		skip()
		if j < len(s) && (s[j] == '+' || s[j] == '.' || s[j] == '&') {
			j++
			for j < len(s) && s[j] == '.' {
				j++
			}
			skip()
		}
		if j < len(s) && (s[j] == '"' || s[j] == '\'' || s[j] == '`') {
			return j
		}
		return -1
	}
	// next[q] is where the next quote of each kind is at or after i
	// (len(s): none): three IndexByte scans, not a loop over every byte.
	quotes := [3]byte{'"', '\'', '`'}
	var next [3]int
	for q := range next {
		next[q] = -1
	}
	for i := 0; i < len(s); i++ {
		for q, c := range quotes {
			if next[q] < i {
				if k := strings.IndexByte(s[i:], c); k >= 0 {
					next[q] = i + k
				} else {
					next[q] = len(s)
				}
			}
		}
		if i = min(next[0], next[1], next[2]); i >= len(s) {
			break
		}
		end := lit(i)
		if end < 0 {
			continue
		}
		next := join(end)
		if next < 0 {
			i = end - 1
			continue
		}
		// A chain: collect its literals.
		start, first, n := len(b), i, 0
		var chain []byte
		for at := i; ; {
			e := lit(at)
			if e < 0 {
				break
			}
			chain = append(chain, s[at+1:e-1]...)
			n++
			i = e - 1
			if at = join(e); at < 0 {
				break
			}
		}
		if n >= 2 && len(chain) >= 16 {
			b = append(append(b, chain...), '\n')
			offs = append(offs, start, first)
		}
	}
	return string(b), offs
}
