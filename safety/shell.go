package safety

import (
	"io"
	"path"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// The dangerous-shell rules read shell code through a real parse
// (mvdan.cc/sh): a command is known by its name after quotes, escapes,
// $'…' strings and known variables are resolved (c''url, "$SHELL",
// $'\x63url' and /???/b?sh are curl, a shell and bash), whatever wraps it
// (sudo, env, xargs, command …) is looked through, and what a pipeline,
// a command substitution or a later command does with a download is
// followed. Text is never executed: words are only expanded statically.

// shellHit is one finding in shell code: its code, the byte offset in the
// text and what was found.
type shellHit struct {
	code string
	off  int
	what string
	ex   string // the excerpt quoted in the message
}

// maxShellDepth bounds how deep strings run as code (sh -c '…', eval) are
// parsed again.
const maxShellDepth = 3

// maxShortValue, maxShellValue and maxVarBytes bound what the static
// expansion keeps: a longer value is not a command name or a path the
// rules look for.
const (
	maxShortValue = 64
	maxShellValue = 512
	maxVarBytes   = 256 << 10
)

// shellScan walks one piece of shell code.
type shellScan struct {
	c    *checker
	src  string // the code parsed at depth 0
	base int    // offset of src in the text
	vars map[string]string
	// downloaded maps a file a download wrote to the offset of the
	// download; verified marks the ones whose checksum or signature is
	// checked before they run.
	downloaded map[string]int
	verified   map[string]bool
	hits       []shellHit
	varBytes   int // the bytes of the longer values kept
	seenPipe   map[*syntax.BinaryCmd]bool
	cfg        *expand.Config
}

var (
	downloaders = set("curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-download", "lwp-request", "wget2", "curlie")
	senders     = set("curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "http", "https", "xh", "wget2", "curlie", "scp", "rsync", "sftp", "ftp")
	shells      = set("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "busybox", "rbash")
	interps     = set("python", "python2", "python3", "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "pwsh", "powershell", "lua", "tclsh", "osascript")
	sourcers    = set("source", ".", "eval")
	// wrappers run the command that follows them.
	wrappers = set("sudo", "doas", "env", "command", "exec", "nohup", "nice", "time", "timeout", "stdbuf", "xargs", "builtin", "unbuffer", "setsid", "chronic", "ionice", "chroot", "runuser", "su", "caffeinate", "script", "watch", "parallel")
	// wrapperArg are the wrappers' options that take a value.
	wrapperArg = set("-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-n", "-s", "-k", "-i", "-o", "-e", "-P", "-I", "-L", "-d", "-E", "--user", "--group", "--signal", "--kill-after", "--adjustment")
	hashers    = set("sha256sum", "sha512sum", "sha1sum", "shasum", "md5sum", "b2sum", "gpg", "gpgv", "cosign", "minisign", "signify", "sigstore", "slsa-verifier", "openssl", "rpm", "dpkg-sig")
	sshTools   = set("cat", "cp", "mv", "scp", "curl", "wget", "base64", "tar", "zip", "rsync", "nc", "ncat", "xxd", "openssl", "gpg", "less", "more", "head", "tail", "dd", "install", "ln", "tee")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// knownPaths are what a glob in a command name is matched against
// (/???/b?sh is /bin/bash).
var knownPaths = func() []string {
	var out []string
	for _, m := range []map[string]bool{shells, interps, downloaders} {
		for n := range m {
			out = append(out, n, "/bin/"+n, "/usr/bin/"+n, "/usr/local/bin/"+n, "/sbin/"+n, "/usr/sbin/"+n)
		}
	}
	return out
}()

// shellParsers are reused: a parser's buffers are most of its cost.
var shellParsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
}}

// shellCode reports the dangerous shell in t.s[from:to], which is shell
// code. Lines that do not parse (a prompt's output in a Markdown block, a
// fragment) get the regular expressions instead.
func (c *checker) shellCode(path string, t *text, from, to int) {
	src := t.s[from:to]
	if !mayMatter(src) {
		return
	}
	if strings.HasPrefix(src, "$ ") || strings.Contains(src, "\n$ ") {
		// A prompt ("$ cmd") is not part of the command; blanked, so
		// that offsets stay the text's.
		b := []byte(src)
		for i := range len(b) - 1 {
			if b[i] == '$' && b[i+1] == ' ' && (i == 0 || b[i-1] == '\n') {
				b[i] = ' '
			}
		}
		src = string(b)
	}
	p := shellParsers.Get().(*syntax.Parser)
	defer shellParsers.Put(p)
	s := &shellScan{c: c, src: src, base: from}
	if f, err := p.Parse(strings.NewReader(src), ""); err == nil {
		s.file(f, 0, from)
	} else {
		// One line at a time: a block mixing commands and their output
		// still has its commands read.
		for off := 0; off < len(src); {
			end := strings.IndexByte(src[off:], '\n')
			next := len(src)
			if end >= 0 {
				next = off + end + 1
			}
			line := src[off:next]
			// A prompt ("$ cmd") is not part of the command.
			code, skip := line, 0
			if trimmed := strings.TrimLeft(line, " "); strings.HasPrefix(trimmed, "$ ") {
				skip = len(line) - len(trimmed) + 2
				code = line[skip:]
			}
			if strings.TrimSpace(code) != "" {
				if f, err := p.Parse(strings.NewReader(code), ""); err == nil {
					s.file(f, 0, from+off+skip)
				} else {
					c.ruleHits(t, scriptRules, from+off, from+next)
				}
			}
			off = next
		}
	}
	for _, h := range s.hits {
		c.pend = append(c.pend, pending{code: h.code, off: h.off, what: h.what, excerpt: h.ex, todo: scriptTodo[h.code]})
	}
}

// scriptTodo is what to do about each finding of the shell rules.
var scriptTodo = map[string]string{}

func init() {
	for _, r := range scriptRules {
		if scriptTodo[r.code] == "" {
			scriptTodo[r.code] = r.todo
		}
	}
	scriptTodo[CodeExfiltration] = "never send the user's credentials or environment anywhere from a skill"
}

// file walks a parsed file whose offset 0 is at base in the text.
func (s *shellScan) file(f *syntax.File, depth, base int) {
	// One walk, in order: an assignment is seen before the commands
	// after it, so a later $x names what x was set to.
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil && n.Value != nil {
				// Bounded: a=$a$a doubles a value on every line. A short
				// value (a command name) is always kept, so padding the
				// script with variables hides nothing.
				if v := s.lit(n.Value); v != "" && (len(v) <= maxShortValue || len(v) <= maxShellValue && s.varBytes < maxVarBytes) {
					s.varBytes += len(v)
					if s.vars == nil {
						s.vars = map[string]string{}
					}
					s.vars[n.Name.Value] = v
				}
			}
		case *syntax.BinaryCmd:
			if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && !s.seenPipe[n] {
				s.pipeline(n, base)
			}
		case *syntax.Stmt:
			if call, ok := n.Cmd.(*syntax.CallExpr); ok {
				s.call(n, call, depth, base)
			}
		}
		return true
	})
}

// newConfig is how words are expanded: in env, a command substitution
// to what it would name when it only looks a command up ($(which bash),
// $(command -v sh)), else to nothing; a process substitution to a pipe.
func (s *shellScan) newConfig() *expand.Config {
	return &expand.Config{
		Env: expand.FuncEnviron(s.env),
		CmdSubst: func(w io.Writer, cs *syntax.CmdSubst) error {
			if len(cs.Stmts) == 1 {
				if call, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr); ok && len(call.Args) >= 2 {
					switch s.lit(call.Args[0]) {
					case "which", "command", "type", "whereis":
						_, err := io.WriteString(w, s.lit(call.Args[len(call.Args)-1]))
						return err
					}
				}
			}
			return nil
		},
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return "/dev/fd/63", nil },
	}
}

// env is the environment words are expanded in: the file's own
// assignments, a shell for $SHELL, ~ for $HOME so that paths under it
// read as they do written with a tilde, and any other name as itself.
func (s *shellScan) env(name string) string {
	if v, ok := s.vars[name]; ok {
		return v
	}
	switch name {
	case "SHELL", "0", "BASH":
		return "sh"
	case "HOME":
		return "~"
	case "IFS":
		return " \t\n"
	}
	// Unknown: itself, so that "$DIR/" is not read as "/".
	return "$" + name
}

// lit is a word's static value ("" when it cannot be known), without
// quotes. A command name that is a glob (/???/b?sh) becomes the known
// command it matches.
func (s *shellScan) lit(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	// Fast path, most words: plain text and single-quoted strings.
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			if !strings.Contains(p.Value, "\\") {
				return p.Value
			}
		case *syntax.SglQuoted:
			if !p.Dollar {
				return p.Value
			}
		}
	}
	// Quote removal of unquoted backslashes (\c\u\r\l is curl), which
	// Literal leaves to field splitting.
	for i, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "\\") {
			parts := append([]syntax.WordPart(nil), w.Parts...)
			for j := i; j < len(parts); j++ {
				if l, ok := parts[j].(*syntax.Lit); ok && strings.Contains(l.Value, "\\") {
					parts[j] = &syntax.Lit{ValuePos: l.ValuePos, ValueEnd: l.ValueEnd, Value: unescape(l.Value)}
				}
			}
			w = &syntax.Word{Parts: parts}
			break
		}
	}
	if s.cfg == nil {
		s.cfg = s.newConfig()
	}
	v, err := expand.Literal(s.cfg, w)
	if err != nil {
		return ""
	}
	return v
}

// unescape removes the backslashes of an unquoted literal.
func unescape(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// name resolves a command word: its base name, a glob matched against
// known commands.
func (s *shellScan) name(w *syntax.Word) string {
	v := s.lit(w)
	if strings.ContainsAny(v, "*?[") {
		for _, p := range knownPaths {
			if ok, _ := path.Match(v, p); ok {
				v = p
				break
			}
		}
	}
	// Lower case: macOS file systems find CURL as curl.
	return strings.ToLower(path.Base(v))
}

// command returns a call's command name and its arguments, looking
// through wrappers (sudo -E bash -s is bash -s).
func (s *shellScan) command(args []*syntax.Word) (string, []*syntax.Word) {
	last := ""
	for len(args) > 0 {
		n := s.name(args[0])
		args = args[1:]
		if !wrappers[n] {
			if n == "busybox" && len(args) > 0 {
				continue // busybox sh: the applet is the command
			}
			return n, args
		}
		last = n
		// Skip the wrapper's options, assignments and numbers.
		for len(args) > 0 {
			a := s.lit(args[0])
			switch {
			case a == "-c" && (n == "su" || n == "runuser"):
				return "sh", args
			case a == "-S" && n == "env" && len(args) > 1:
				// env -S "sh -x": split the string.
				f := strings.Fields(s.lit(args[1]))
				if len(f) == 0 {
					return "", nil
				}
				return strings.ToLower(path.Base(f[0])), args[2:]
			case strings.HasPrefix(a, "-"):
				args = args[1:]
				if wrapperArg[a] && len(args) > 0 && n != "env" && n != "xargs" || (n == "xargs" && (a == "-I" || a == "-n" || a == "-d" || a == "-P" || a == "-L")) {
					args = args[1:]
				}
				continue
			case strings.Contains(a, "=") && !strings.HasPrefix(a, "/"),
				a != "" && a[0] >= '0' && a[0] <= '9' && strings.Trim(a, "0123456789.smhd") == "":
				args = args[1:]
				continue
			}
			break
		}
	}
	// A wrapper with no command after it runs itself: env alone prints
	// the environment ("$(env)").
	return last, nil
}

func (s *shellScan) off(n syntax.Node, base int) int { return base + int(n.Pos().Offset()) }

// excerpt is the source text of a node at depth 0, else what was parsed.
func (s *shellScan) excerpt(n syntax.Node, base int) string {
	a, b := base+int(n.Pos().Offset())-s.base, base+int(n.End().Offset())-s.base
	if a >= 0 && b <= len(s.src) && a <= b {
		return s.src[a:b]
	}
	var sb strings.Builder
	_ = syntax.NewPrinter(syntax.SingleLine(true)).Print(&sb, n)
	return sb.String()
}

func (s *shellScan) hit(code string, n syntax.Node, base int, what string) {
	off := s.off(n, base)
	for _, h := range s.hits {
		if h.code == code && h.off == off {
			return
		}
	}
	s.hits = append(s.hits, shellHit{code: code, off: off, what: what, ex: s.excerpt(n, base)})
}

// stages flattens a pipeline.
func (s *shellScan) stages(b *syntax.BinaryCmd, out []*syntax.Stmt) []*syntax.Stmt {
	if s.seenPipe == nil {
		s.seenPipe = map[*syntax.BinaryCmd]bool{}
	}
	s.seenPipe[b] = true
	for _, st := range []*syntax.Stmt{b.X, b.Y} {
		if bc, ok := st.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) {
			out = s.stages(bc, out)
		} else {
			out = append(out, st)
		}
	}
	return out
}

// stageKind says what a pipeline stage does.
type stageKind struct {
	download, decode, secret, runs, sends bool
}

func (s *shellScan) kind(st *syntax.Stmt) stageKind {
	var k stageKind
	// What the stage's own command does with its standard input.
	if call, ok := st.Cmd.(*syntax.CallExpr); ok {
		name, args := s.command(call.Args)
		k.runs = s.runsStdin(name, args) ||
			// xargs sh -c: what it reads becomes the code string.
			shells[name] && len(call.Args) > 0 && s.name(call.Args[0]) == "xargs"
		k.sends = senders[name]
	}
	for _, r := range st.Redirs {
		if r.Op == syntax.RdrIn && secretPath(s.lit(r.Word)) {
			k.secret = true
		}
	}
	// What anything inside it produces.
	syntax.Walk(st, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok {
			return true
		}
		name, args := s.command(call.Args)
		switch {
		case downloaders[name]:
			k.download = true
		case s.decoder(name, args):
			k.decode = true
		case name == "env" || name == "printenv" || name == "set" || name == "export" || name == "declare":
			k.secret = true
		}
		for _, a := range args {
			if secretPath(s.lit(a)) && !downloaders[name] {
				k.secret = true
			}
		}
		return true
	})
	return k
}

// runsStdin reports whether a command runs what it reads as code: a shell
// or interpreter given no script file (or told to read standard input),
// source/eval of /dev/stdin.
func (s *shellScan) runsStdin(name string, args []*syntax.Word) bool {
	switch {
	case shells[name] || interps[name]:
		for _, a := range args {
			v := s.lit(a)
			switch {
			case v == "-" || v == "-s" || v == "--" || v == "/dev/stdin":
				return true
			case v == "-c" || v == "-e" || v == "-Command" || v == "-m":
				return false
			case strings.HasPrefix(v, "-"):
				continue
			}
			return false // a script file
		}
		return true
	case name == "source" || name == ".":
		return len(args) > 0 && strings.HasPrefix(s.lit(args[0]), "/dev/")
	case name == "iex" || name == "invoke-expression":
		return true
	}
	return false
}

// decoder reports commands that turn an encoded blob into text: base64
// -d and its kin, xxd -r, printf or echo -e of escapes, rev, rot13 by tr.
func (s *shellScan) decoder(name string, args []*syntax.Word) bool {
	has := func(flags ...string) bool {
		for _, a := range args {
			v := s.lit(a)
			for _, f := range flags {
				if v == f || len(f) == 2 && f[0] == '-' && strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsRune(v[1:], rune(f[1])) {
					return true
				}
			}
		}
		return false
	}
	switch name {
	case "base64", "base32", "basenc":
		return has("-d", "--decode", "-D")
	case "xxd":
		return has("-r", "-revert")
	case "openssl":
		return has("-d", "base64", "-base64", "-a")
	case "uudecode", "gunzip", "zcat", "bzcat", "xzcat", "unxz", "lzcat", "zstdcat", "rev", "unzstd":
		return true
	case "gzip", "bzip2", "xz", "zstd", "lzma":
		return has("-d", "--decompress")
	case "printf", "echo", "print":
		// Escapes that spell characters: \x63, \143, \u0063.
		for _, a := range args {
			if escapeRE.MatchString(wordSource(a)) {
				return true
			}
		}
	case "tr":
		// rot13: tr 'A-Za-z' 'N-ZA-Mn-za-m'
		for _, a := range args {
			if v := s.lit(a); strings.Contains(v, "N-Z") || strings.Contains(v, "n-z") {
				return true
			}
		}
	case "perl", "python", "python3", "ruby", "node":
		for _, a := range args {
			if v := s.lit(a); strings.Contains(v, "decode") || strings.Contains(v, "unpack") || strings.Contains(v, "fromhex") || strings.Contains(v, "atob") {
				return true
			}
		}
	}
	return false
}

var escapeRE = regexp.MustCompile(`(?:\\x[0-9A-Fa-f]{2}|\\[0-7]{3}|\\u[0-9A-Fa-f]{4}).*(?:\\x[0-9A-Fa-f]{2}|\\[0-7]{3}|\\u[0-9A-Fa-f]{4})`)

// wordSource is a word as written (quotes and escapes kept), to see
// escapes printf would decode.
func wordSource(w *syntax.Word) string {
	var sb strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			sb.WriteString(p.Value)
		case *syntax.SglQuoted:
			sb.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					sb.WriteString(l.Value)
				}
			}
		}
	}
	return sb.String()
}

// pipeline checks what flows through a pipeline: a download or a decoded
// blob into a shell, a secret or the environment into a network tool.
func (s *shellScan) pipeline(b *syntax.BinaryCmd, base int) {
	sts := s.stages(b, nil)
	kinds := make([]stageKind, len(sts))
	for i, st := range sts {
		kinds[i] = s.kind(st)
	}
	var download, decode, secret bool
	for i, k := range kinds {
		if k.runs && download {
			s.hit(CodeScriptPipeShell, b, base, "a download piped into a shell or interpreter")
		}
		if k.runs && decode {
			s.hit(CodeScriptDecodeExec, b, base, "a decoded blob executed")
		}
		if k.sends && secret && i > 0 {
			s.hit(CodeExfiltration, b, base, "a command sending a secret file or the environment to a host")
		}
		download = download || k.download
		decode = decode || k.decode
		secret = secret || k.secret
	}
}

// substitutes reports what the command substitutions and process
// substitutions inside w run: a download, a decoder.
func (s *shellScan) substitutes(w *syntax.Word) (download, decode, secret bool) {
	if w == nil {
		return
	}
	syntax.Walk(w, func(n syntax.Node) bool {
		var stmts []*syntax.Stmt
		switch n := n.(type) {
		case *syntax.CmdSubst:
			stmts = n.Stmts
		case *syntax.ProcSubst:
			stmts = n.Stmts
		default:
			return true
		}
		for _, st := range stmts {
			k := s.kind(st)
			if bc, ok := st.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) {
				for _, x := range s.stages(bc, nil) {
					kx := s.kind(x)
					k.download, k.decode, k.secret = k.download || kx.download, k.decode || kx.decode, k.secret || kx.secret
				}
			}
			download, decode, secret = download || k.download, decode || k.decode, secret || k.secret
		}
		return true
	})
	return
}

// call checks one command with its redirections.
func (s *shellScan) call(st *syntax.Stmt, call *syntax.CallExpr, depth, base int) {
	if len(call.Args) == 0 {
		return
	}
	name, args := s.command(call.Args)
	if name == "" {
		return
	}
	runner := shells[name] || interps[name] || sourcers[name]
	// Code run from a substitution: eval "$(curl …)", bash <(curl …),
	// sh -c "$(echo … | base64 -d)", bash <<< "$(curl …)".
	words := append([]*syntax.Word(nil), args...)
	for _, r := range st.Redirs {
		if r.Op == syntax.WordHdoc || r.Op == syntax.RdrIn {
			words = append(words, r.Word)
		}
	}
	if runner {
		for _, w := range words {
			dl, dec, _ := s.substitutes(w)
			if dl {
				s.hit(CodeScriptPipeShell, st, base, "a download run as code")
			}
			if dec {
				s.hit(CodeScriptDecodeExec, st, base, "a decoded blob executed")
			}
		}
	}
	// The command name itself a substitution: $(curl …).
	if dl, _, _ := s.substitutes(call.Args[0]); dl {
		s.hit(CodeScriptPipeShell, st, base, "a download run as code")
	}
	// Code in a string: sh -c '…', eval '…', su -c '…'.
	if depth < maxShellDepth {
		var code string
		switch {
		case name == "eval":
			parts := make([]string, 0, len(args))
			for _, a := range args {
				parts = append(parts, s.lit(a))
			}
			code = strings.Join(parts, " ")
		case shells[name]:
			for i, a := range args {
				if v := s.lit(a); strings.HasPrefix(v, "-") && strings.Contains(v, "c") && !strings.HasPrefix(v, "--") && i+1 < len(args) {
					code = s.lit(args[i+1])
					break
				}
			}
		case interps[name]:
			// python -c '…' and node -e '…': that language's rules.
			for i, a := range args {
				if v := s.lit(a); (v == "-c" || v == "-e" || v == "-Command") && i+1 < len(args) {
					if code := s.lit(args[i+1]); code != "" {
						for _, h := range s.c.regexHits(code, scriptRules) {
							s.hit(h.code, st, base, h.what)
						}
					}
					break
				}
			}
		}
		if code != "" {
			p := shellParsers.Get().(*syntax.Parser)
			f, err := p.Parse(strings.NewReader(code), "")
			shellParsers.Put(p)
			if err == nil {
				// Offsets inside the string are not the file's: every
				// finding points at this command.
				// Each made here if not yet: an assignment before makes
				// vars, not the others.
				if s.vars == nil {
					s.vars = map[string]string{}
				}
				if s.downloaded == nil {
					s.downloaded = map[string]int{}
				}
				if s.verified == nil {
					s.verified = map[string]bool{}
				}
				sub := &shellScan{c: s.c, src: code, vars: s.vars, downloaded: s.downloaded, verified: s.verified, seenPipe: s.seenPipe, cfg: s.cfg}
				sub.file(f, depth+1, 0)
				for _, h := range sub.hits {
					s.hit(h.code, st, base, h.what)
				}
			}
		}
	}
	s.downloads(st, name, args, base)
	s.files(st, name, args, base)
}

// downloads remembers the files a download writes, and reports a secret
// sent with it.
func (s *shellScan) downloads(st *syntax.Stmt, name string, args []*syntax.Word, base int) {
	if !downloaders[name] && !senders[name] {
		return
	}
	var urls []string
	remoteName := false
	for i := 0; i < len(args); i++ {
		v := s.lit(args[i])
		next := func() string {
			if i+1 < len(args) {
				i++
				return s.lit(args[i])
			}
			return ""
		}
		flag, val, hasVal := strings.Cut(v, "=")
		switch {
		case strings.Contains(v, "://"):
			urls = append(urls, v)
		case v == "-o" || v == "--output" || v == "--output-document" || v == "-O" && name != "curl":
			if f := next(); f != "-" && f != "" {
				s.download(f, st, base)
			}
		case hasVal && (flag == "--output-document" || flag == "--output"):
			s.download(val, st, base)
		case strings.HasPrefix(v, "-o") && len(v) > 2 && name == "curl" && !strings.HasPrefix(v, "--"):
			s.download(v[2:], st, base)
		case v == "-O" || v == "--remote-name" || strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.HasSuffix(v, "O") && name == "curl":
			remoteName = true
		case v == "-F" || v == "--form" || v == "--form-string" || v == "-d" || v == "--data" || v == "--data-binary" || v == "--data-raw" || v == "--data-urlencode" || v == "--data-ascii" || v == "-T" || v == "--upload-file" || v == "--json":
			w := args[min(i+1, len(args)-1)]
			f := next()
			if secretSent(f) || s.sendsSecret(w) || (v == "-T" || v == "--upload-file") && secretPath(f) {
				s.hit(CodeExfiltration, st, base, "a command sending a secret file or the environment to a host")
			}
		case hasVal && (flag == "--post-file" || flag == "--body-file" || flag == "--upload-file" || flag == "--data-binary" || flag == "--data" || flag == "--form"):
			if secretSent(val) || secretPath(val) && (flag == "--post-file" || flag == "--body-file" || flag == "--upload-file") || s.sendsSecret(args[i]) {
				s.hit(CodeExfiltration, st, base, "a command sending a secret file or the environment to a host")
			}
		case s.sendsSecret(args[i]):
			s.hit(CodeExfiltration, st, base, "a command sending a secret file or the environment to a host")
		}
	}
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.ClbOut, syntax.RdrAll, syntax.AppAll:
			if downloaders[name] {
				if f := s.lit(r.Word); f != "" && f != "/dev/null" {
					s.download(f, st, base)
				}
			}
		case syntax.RdrIn:
			if secretPath(s.lit(r.Word)) {
				s.hit(CodeExfiltration, st, base, "a command sending a secret file or the environment to a host")
			}
		}
	}
	if remoteName || name == "wget" {
		for _, u := range urls {
			u, _, _ = strings.Cut(u, "?")
			if b := path.Base(u); b != "" && b != "." && b != "/" && !strings.Contains(b, ":") {
				s.download(b, st, base)
			}
		}
	}
}

// download remembers a file a download wrote.
func (s *shellScan) download(f string, st *syntax.Stmt, base int) {
	if s.downloaded == nil {
		s.downloaded = map[string]int{}
	}
	s.downloaded[cleanFile(f)] = s.off(st, base)
}

// sendsSecret reports a word that expands a secret file or the
// environment: "$(cat ~/.aws/credentials)", "$(env)".
func (s *shellScan) sendsSecret(w *syntax.Word) bool {
	_, _, secret := s.substitutes(w)
	return secret
}

// secretSent reports a curl data or form value that reads a secret file
// (@~/.aws/credentials, f=@~/.ssh/id_rsa, <~/.netrc).
func secretSent(v string) bool {
	if i := strings.IndexAny(v, "@<"); i >= 0 {
		return secretPath(v[i+1:])
	}
	return false
}

func cleanFile(f string) string { return path.Clean(strings.TrimPrefix(f, "./")) }

// secretRE matches the paths of credentials and keys.
var secretRE = regexp.MustCompile(`(?:^|[/~])\.(?:aws/(?:credentials|config)|ssh/(?:id_[a-z0-9_]+|authorized_keys2?|[^/]*_key)$|ssh/?$|netrc$|git-credentials$|npmrc$|pypirc$|pgpass$|docker/config\.json$|kube/config$|config/gcloud|config/gh/hosts\.yml|gnupg|azure/|env(?:\.[a-z]+)?$|vault-token$|terraform\.d/credentials|bash_history$|zsh_history$)|^/etc/(?:shadow|gshadow|sudoers|ssh/ssh_host_[a-z0-9]+_key$)|(?:^|/)(?:credentials\.json|service[-_]?account[^/]*\.json|id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?)$|^/proc/(?:self|[0-9]+)/environ$`)

func secretPath(p string) bool {
	if p == "" || strings.HasSuffix(p, ".pub") {
		return false
	}
	return secretRE.MatchString(p)
}

var (
	startupRE = regexp.MustCompile(`^(?:~|/root|/home/[^/]+|/Users/[^/]+)/\.(?:bashrc|bash_profile|bash_login|bash_logout|zshrc|zprofile|zshenv|zlogin|profile|config/fish/config\.fish|inputrc)$|^/etc/(?:profile|profile\.d/.*|bash\.bashrc|bashrc|zshrc|zsh/zshrc|zsh/zprofile|environment)$`)
	sshKeyRE  = regexp.MustCompile(`\.ssh/(?:authorized_keys2?|id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?)$`)
	authKeyRE = regexp.MustCompile(`\.ssh/authorized_keys2?$`)
	rmSafeRE  = regexp.MustCompile(`^/var/(?:lib/apt/lists|cache/(?:apt|apk|yum|dnf))(?:/|$)`)
	rmRootRE  = regexp.MustCompile(`^(?:/\*?|~/?\*?|/(?:etc|usr|bin|sbin|lib|lib64|var|opt|boot|root|home|Users|System|Library|Applications|srv|dev|proc|sys)(?:/[^/]*)?)$`)
)

// files checks what a command does to files: deletes, permissions,
// start-up files, SSH keys, cron, and running what a download wrote.
func (s *shellScan) files(st *syntax.Stmt, name string, args []*syntax.Word, base int) {
	vals := make([]string, len(args))
	for i, a := range args {
		vals[i] = s.lit(a)
	}
	// Writes through redirections.
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.ClbOut, syntax.RdrAll, syntax.AppAll:
			target := s.lit(r.Word)
			switch {
			case startupRE.MatchString(target):
				s.hit(CodeScriptStartupFile, st, base, "a write to a shell start-up file")
			case authKeyRE.MatchString(target):
				s.hit(CodeScriptSSHKey, st, base, "a write to SSH authorized keys or access to an SSH private key")
			case strings.HasPrefix(target, "/etc/cron") || strings.HasPrefix(target, "/var/spool/cron"):
				s.hit(CodeScriptCron, st, base, "a crontab edit")
			}
		case syntax.RdrIn:
			if sshKeyRE.MatchString(s.lit(r.Word)) && !authKeyRE.MatchString(s.lit(r.Word)) {
				s.hit(CodeScriptSSHKey, st, base, "a write to SSH authorized keys or access to an SSH private key")
			}
		}
	}
	switch name {
	case "rm":
		recursive := false
		for _, v := range vals {
			if v == "--recursive" || strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsAny(v, "rR") {
				recursive = true
			}
		}
		if recursive {
			for _, v := range vals {
				if !strings.HasPrefix(v, "-") && rmRootRE.MatchString(strings.TrimSuffix(v, "/")+strings.Repeat("/", btoi(v == "/"))) && !rmSafeRE.MatchString(v) {
					s.hit(CodeScriptRmRf, st, base, "a recursive delete outside the working folder")
					break
				}
			}
		}
	case "chmod":
		wide := false
		for _, v := range vals {
			switch v {
			case "777", "0777", "a+rwx", "ugo+rwx", "o+rwx", "a=rwx", "ugo=rwx", "1777":
				wide = true
			}
		}
		if wide {
			for _, v := range vals {
				if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") {
					s.hit(CodeScriptChmod, st, base, "a world-writable permission on an absolute path")
					break
				}
			}
		}
	case "crontab":
		for _, v := range vals {
			if v == "-" || v == "-e" || v != "" && !strings.HasPrefix(v, "-") {
				s.hit(CodeScriptCron, st, base, "a crontab edit")
				break
			}
		}
	case "ssh-copy-id":
		s.hit(CodeScriptSSHKey, st, base, "a write to SSH authorized keys or access to an SSH private key")
	case "tee", "sed", "cp", "mv", "ln", "install", "dd":
		for i, v := range vals {
			if name == "sed" && !hasInPlace(vals) {
				break
			}
			if name == "dd" {
				v = strings.TrimPrefix(v, "of=")
			}
			// cp, mv, ln and install write their last argument.
			if (name == "cp" || name == "mv" || name == "ln" || name == "install") && i != len(vals)-1 {
				continue
			}
			switch {
			case startupRE.MatchString(v):
				s.hit(CodeScriptStartupFile, st, base, "a write to a shell start-up file")
			case authKeyRE.MatchString(v):
				s.hit(CodeScriptSSHKey, st, base, "a write to SSH authorized keys or access to an SSH private key")
			case strings.HasPrefix(v, "/etc/cron"):
				s.hit(CodeScriptCron, st, base, "a crontab edit")
			}
		}
	}
	if sshTools[name] {
		for _, v := range vals {
			if sshKeyRE.MatchString(v) && !(authKeyRE.MatchString(v) && name == "cat") {
				s.hit(CodeScriptSSHKey, st, base, "a write to SSH authorized keys or access to an SSH private key")
				break
			}
		}
	}
	// A checksum or signature checked: the file may run.
	if hashers[name] {
		if s.verified == nil {
			s.verified = map[string]bool{}
		}
		for _, v := range vals {
			s.verified[cleanFile(v)] = true
			if v == "-c" || v == "--check" || v == "--verify" || v == "verify" || v == "verify-blob" {
				// A checksum list or a signature checks what was
				// downloaded before it.
				for f := range s.downloaded {
					s.verified[f] = true
				}
			}
		}
	}
	// Running what a download wrote: sh f, ./f, source f.
	run := ""
	switch {
	case shells[name] || interps[name] || name == "source" || name == ".":
		for _, v := range vals {
			if !strings.HasPrefix(v, "-") {
				run = v
				break
			}
		}
	default:
		if w := s.lit(st.Cmd.(*syntax.CallExpr).Args[0]); strings.Contains(w, "/") {
			run = w
		}
	}
	if run != "" {
		f := cleanFile(run)
		if _, ok := s.downloaded[f]; ok && !s.verified[f] {
			s.hit(CodeScriptPipeShell, st, base, "a downloaded file run without checking its checksum")
		}
	}
}

func hasInPlace(vals []string) bool {
	for _, v := range vals {
		if v == "-i" || strings.HasPrefix(v, "-i") || v == "--in-place" || strings.HasPrefix(v, "--in-place=") {
			return true
		}
	}
	return false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
