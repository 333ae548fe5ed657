package safety

import (
	"strings"
	"sync"
	"unsafe"
)

// gateBufs hold the folded copy of the code mayMatter reads.
var gateBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// mayMatter reports whether shell code could hold anything the shell rules
// report, so that code which cannot (most of a collection's helper scripts)
// is not parsed: parsing allocates the whole syntax tree, and that is most
// of what the rules cost. It errs towards yes. The code can matter when,
// with quotes and backslashes taken out and letters folded (c”url and
// \c\u\r\l are curl), a word names a command the rules look at or a path
// they look for; or when it writes characters by escapes ($'\x63',
// printf '\143'), builds a word from expansions ($a$b, ${a}rl, $a"rl"),
// names a shell by a variable ($SHELL, $0) or by a glob (/???/b?sh), or
// runs a file with the dot command.
func mayMatter(code string) bool {
	// Drop a shebang: #!/usr/bin/env bash names a shell but runs nothing.
	if strings.HasPrefix(code, "#!") {
		if i := strings.IndexByte(code, '\n'); i >= 0 {
			code = code[i:]
		} else {
			return false
		}
	}
	bp := gateBufs.Get().(*[]byte)
	defer gateBufs.Put(bp)
	b := (*bp)[:0]
	defer func() {
		if cap(b) <= 1<<20 {
			*bp = b[:0]
		}
	}()
	prev := byte(' ')
	var dq, sq, inVar bool // in "…", in '…', just after an unbraced $name or a ${…}
	// A command substitution inside "…" starts its own quoting: the
	// stack holds the "…" state outside each $( and the ( depth inside.
	type frame struct {
		dq    bool
		depth int
	}
	var stack []frame
	for i := 0; i < len(code); i++ {
		c := code[i]
		if !sq {
			switch {
			case c == '(' && i > 0 && code[i-1] == '$':
				stack = append(stack, frame{dq: dq})
				dq = false
			case c == '(' && len(stack) > 0 && !dq:
				stack[len(stack)-1].depth++
			case c == ')' && len(stack) > 0 && !dq:
				if f := &stack[len(stack)-1]; f.depth > 0 {
					f.depth--
				} else {
					dq = f.dq
					stack = stack[:len(stack)-1]
				}
			}
		}
		switch c {
		case '\\':
			if i+1 < len(code) {
				if n := code[i+1]; n == 'x' || n == 'u' || n == 'U' || n >= '0' && n <= '7' {
					return true // a character written as an escape
				}
			}
			continue
		case '"', '\'':
			opening := c == '"' && !dq && !sq || c == '\'' && !sq && !dq
			if opening && (prev == '$' || inVar) {
				return true // $'…', or an expansion joined to a quoted part
			}
			if c == '"' && !sq {
				dq = !dq
			} else if c == '\'' && !dq {
				sq = !sq
			}
			inVar = false
			continue
		case '$':
			if i+1 < len(code) && code[i+1] == '0' {
				return true // $0: the shell
			}
			if prev == '}' || inVar || isIdent(prev) {
				return true // an expansion joined to a word or another expansion
			}
		case '?':
			if prev != '$' {
				return true // a glob
			}
		case '*', '[':
			if prev == '/' {
				return true // a glob in a path
			}
		case '.':
			if (prev == ' ' || prev == '\n' || prev == ';' || prev == '&' || prev == '|' || prev == '(' || prev == '\t') &&
				i+1 < len(code) && (code[i+1] == ' ' || code[i+1] == '\t') {
				return true // the dot command
			}
		}
		switch {
		case c == '}':
			inVar = true
		case inVar && isIdent(c) && prev == '}':
			return true // ${a}rl
		case isIdent(c) && (prev == '$' || inVar && isIdent(prev)):
			inVar = prev == '$' || inVar
		default:
			inVar = false
		}
		b = append(b, lowerByte(c))
		prev = c
	}
	// Read in place: nothing outlives this call.
	s := unsafe.String(unsafe.SliceData(b), len(b))
	for _, k := range gateSubstrings {
		if strings.Contains(s, k) {
			return true
		}
	}
	for i := 0; i < len(s); {
		for i < len(s) && !isWordChar(s[i]) {
			i++
		}
		j := i
		for j < len(s) && isWordChar(s[j]) {
			j++
		}
		if j > i {
			// One look-up per word (most are neither): gateKinds.
			if k := gateKinds[s[i:j]]; k == gateWord || k == gateShell && runsSomething(s) {
				return true
			}
		}
		i = j
	}
	return false
}

// runsSomething reports the ways a shell or interpreter named in code can
// be given code the rules look at: a pipe, a substitution, a here-string,
// a -c or -e string. Without one, "bash scripts/run.sh" runs a file of the
// skill (a downloaded one needs a download, which the gate sees).
func runsSomething(s string) bool {
	return strings.Contains(s, "|") || strings.Contains(s, "$(") || strings.Contains(s, "<(") || strings.Contains(s, "`") ||
		strings.Contains(s, "<<<") || strings.Contains(s, " -c") || strings.Contains(s, " -e") || strings.Contains(s, " -s")
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isWordChar is a character of a command name or a path's last element.
func isWordChar(c byte) bool { return isIdent(c) || c == '-' || c >= 0x80 }

// gateWords are the command names the shell rules look at (wrappers and
// look-ups resolve to one of them) and the variables naming a shell;
// shells and interpreters count only with a way to feed them code
// (runsSomething).
var gateWords = func() map[string]bool {
	m := map[string]bool{}
	for _, set := range []map[string]bool{downloaders, senders} {
		for k := range set {
			m[k] = true
		}
	}
	for _, k := range []string{"eval", "source", "iex", "invoke-expression", "shell",
		"base64", "base32", "basenc", "xxd", "openssl", "uudecode", "gunzip", "zcat", "bzcat", "xzcat", "unxz", "lzcat",
		"zstdcat", "rev", "unzstd", "gzip", "bzip2", "xz", "zstd", "lzma", "tr",
		"rm", "chmod", "crontab", "ssh-copy-id", "env", "printenv", "declare", "export", "set"} {
		m[k] = true
	}
	delete(m, "set")    // set -e: only with a sender, which is a word here
	delete(m, "export") // likewise
	delete(m, "env")
	return m
}()

// gateSubstrings are the paths the rules look for.
var gateSubstrings = []string{
	".ssh", "authorized_keys", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "/etc/", "cron",
	".aws", "netrc", "credentials", "npmrc", "pypirc", "pgpass", ".docker", ".kube", "gcloud", "gnupg", ".azure",
	".env", "vault-token", "terraform.d", "_history", "environ", "service",
	"bashrc", "bash_profile", "bash_login", "bash_logout", "zshrc", "zprofile", "zshenv", "zlogin", "profile", "config.fish", "inputrc",
}

// gateKinds is gateWords (gateWord) and the shells and interpreters
// (gateShell) in one map, so a word is looked up once.
var gateKinds = func() map[string]uint8 {
	m := map[string]uint8{}
	for _, set := range []map[string]bool{shells, interps} {
		for k, v := range set {
			if v {
				m[k] = gateShell
			}
		}
	}
	for k, v := range gateWords {
		if v {
			m[k] = gateWord
		}
	}
	return m
}()

const (
	gateWord  = 1
	gateShell = 2
)
