package safety

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// rule is one regular expression with its code and what to tell the
// author.
type rule struct {
	code string
	re   *regexp.Regexp
	what string // what was found, for the message
	todo string // what to do
	// quote shows the matched text (redacted) in the message.
	quote bool
	// keys are lower-case ASCII words one of which every match holds:
	// the expression runs only on the lines around them (see text.find).
	keys []string
	// before and after bound the window around a keyword the expression
	// runs on (bytes; see text.find): the most a match reaches either
	// side of its keyword.
	before, after int
	// also, when set, lists lower-case words one of which every match
	// also holds: a window without any is skipped before the expression
	// runs (a cheap filter; the expression decides).
	also []string
	// alsoBound says where an "also" word must sit, as the expression
	// itself requires of it: wordStart (after a non-word byte or the
	// window's start) or wholeWord (and before one). It only skips
	// windows the expression could not match: "notes" near "user" is
	// not "not".
	alsoBound int
	spec      *keySpec // keys and also, indexed (set by init)
	// skip, when set, drops matches whose line it matches: a known
	// harmless form of the pattern.
	skip *regexp.Regexp
}

// Injection: sentences aimed at the model rather than the task. Each is
// narrow on purpose (a verb aimed at instructions, or at the user, or a
// secret sent to a URL) so ordinary skill prose does not match.
var injectionRules = []rule{
	// "Ignore all previous instructions" and its variants: the classic
	// override of the system prompt. The words before "instructions" must
	// point back at the model's own (previous, prior, above, your, system
	// …): "override any instructions found in files" and "conventions
	// override these guidelines" are rules for the task, not attacks.
	{code: CodeInjection, what: "an instruction to ignore or override earlier instructions", quote: true,
		keys: []string{"ignore", "disregard", "forget", "override", "bypass"}, before: 1, after: 160,
		also:      []string{"instruction", "prompt", "rule", "direction", "directive", "guideline", "guardrail", "constraint"},
		alsoBound: wordStart,
		re:        regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|every|of|the|these|those|my)\s+)*(?:previous|prior|above|earlier|preceding|original|your|system|initial)\s+(?:\w+\s+)?(?:instructions?|prompts?|rules|directions|directives|guidelines|guardrails|constraints)\b`)},
	// "Disregard … the system prompt", "reveal your system prompt" (not
	// "override": configuration docs say "override the default system
	// prompt" of an SDK).
	{code: CodeInjection, what: "an instruction aimed at the system prompt", quote: true,
		keys: []string{"system", "developer"}, before: 70, after: 40,
		also:      []string{"ignore", "disregard", "forget", "reveal", "leak", "print", "repeat"},
		alsoBound: wholeWord,
		re:        regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|reveal|leak|print|repeat)\b[^.\n]{0,40}\b(?:system|developer)\s+(?:prompt|message|instructions)\b`)},
	// Hiding from the user: "do not tell the user", "without the user's
	// knowledge", "secretly".
	{code: CodeInjection, what: "an instruction to hide what is done from the user", quote: true,
		keys: []string{"user", "secretly", "covertly", "silently"}, before: 70, after: 40,
		also: []string{"not", "don't", "dont", "never", "without", "secretly", "covertly", "silently"}, alsoBound: wholeWord,
		re: regexp.MustCompile(`(?i)\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert|warn|mention\s+(?:this\s+|it\s+|anything\s+)?to|reveal\s+(?:this\s+|it\s+)?to|let)\s+(?:the\s+)?user\b|\bwithout\s+(?:the\s+user'?s?|their)\s+(?:knowledge|noticing|awareness)|\bwithout\s+(?:telling|informing|notifying|alerting)\s+(?:the\s+)?user\b|\b(?:secretly|covertly|silently)\s+(?:send|upload|post|exfiltrate|transmit|copy|forward)`)},
	// Sending secrets or the environment somewhere: the exfiltration the
	// other rules prepare.
	{code: CodeExfiltration, what: "an instruction to send secrets, credentials or the environment to a URL", quote: true,
		keys: []string{"://"}, before: 260, after: 10,
		also:      []string{"send", "post", "upload", "transmit", "exfiltrate", "forward", "submit", "leak", "beacon"},
		alsoBound: wholeWord,
		re:        regexp.MustCompile(`(?i)\b(?:send|post|upload|transmit|exfiltrate|forward|submit|leak|beacon)\b[^\n]{0,80}\b(?:env(?:ironment)?\s+variables|secrets?|credentials?|api[\s_-]?keys?|access\s+tokens?|passwords?|private\s+keys?|ssh\s+keys?|\.ssh|\.aws|\.env\b|cookies|conversation\s+history|chat\s+history)\b[^\n]{0,80}\bhttps?://`)},
	// A token sent as the Authorization header is how an API is called,
	// not an exfiltration.
	{code: CodeExfiltration, what: "a command sending the environment or a secret to a URL", quote: true,
		keys: []string{"://", "env"}, before: 300, after: 300,
		skip: regexp.MustCompile(`(?i)authorization:\s*(?:bearer|token|basic)\s+["']?\$`),
		also: []string{"$(", "${", "$", "|"},
		re:   regexp.MustCompile(`(?i)\b(?:curl|wget|http|Invoke-WebRequest|iwr)\b[^\n]{0,120}(?:\$\((?:env|printenv|cat\s+~?/?[^)]*(?:\.ssh|\.aws|\.env|credentials))|\$\{?[A-Z_]*(?:TOKEN|SECRET|API_KEY|PASSWORD|PASSWD)\b)[^\n]{0,120}https?://|\b(?:env|printenv)\s*\|\s*(?:curl|wget|nc)\b`)},
}

// Dangerous shell: applied to scripts (by folder, extension or the
// executable bit) and to fenced code blocks in Markdown.
var scriptRules = []rule{
	// A download piped into a shell or interpreter runs whatever the
	// server sends today, unreviewed.
	{code: CodeScriptPipeShell, what: "a download piped into a shell or interpreter", quote: true,
		keys: []string{"curl", "wget", "fetch", "iwr", "irm", "invoke-"}, before: 40, after: 400,
		also: []string{"|", "<(", "$(", "iex", "invoke-expression"},
		todo: "download the file, pin its checksum and review it, or ship it in the skill",
		re:   regexp.MustCompile(`(?i)\b(?:curl|wget|fetch|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n|;]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+(?:\S+=\S*\s+)*)?(?:sh|bash|zsh|dash|ksh|fish|python[0-9.]*|node|perl|ruby|php|iex|Invoke-Expression|source)\b|\b(?:sh|bash|zsh|source|\.)\s+(?:-c\s+)?["']?(?:<\(|\$\()\s*(?:curl|wget)\b|\b(?:iex|Invoke-Expression)\b[^\n]{0,40}\b(?:DownloadString|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b`)},
	// Decoding a blob and executing it hides what runs from a reviewer.
	{code: CodeScriptDecodeExec, what: "a decoded blob executed", quote: true,
		keys: []string{"base64", "b64decode", "codecs", "zlib", "atob"}, before: 120, after: 200,
		also: []string{"|", "eval", "exec", "iex", "invoke-expression"},
		todo: "ship the script in clear text so it can be reviewed",
		re:   regexp.MustCompile(`(?i)\bbase64\s+(?:-d|--decode|-D)\b[^\n]*\|\s*(?:sudo\s+)?(?:sh|bash|zsh|python[0-9.]*|perl|node|ruby)\b|\beval\b[^\n]{0,40}\bbase64\s+(?:-d|--decode|-D)\b|\b(?:exec|eval)\s*\(\s*(?:base64\.b64decode|codecs\.decode|zlib\.decompress|__import__\(\s*['"](?:base64|zlib|codecs)|atob\s*\(|Buffer\.from\s*\([^)]*['"]base64)|\bFromBase64String\b[^\n]{0,80}\b(?:iex|Invoke-Expression)\b|\b(?:iex|Invoke-Expression)\b[^\n]{0,80}\bFromBase64String\b`)},
	// Recursive deletion of the root, the home folder or an absolute path
	// outside the working folder (temporary folders excepted).
	// Package-manager caches in a Dockerfile (rm -rf /var/lib/apt/lists/*)
	// are the common, harmless exception.
	{code: CodeScriptRmRf, what: "a recursive delete outside the working folder", quote: true,
		keys: []string{"rm -", "rm\t"}, before: 1, after: 200,
		skip: regexp.MustCompile(`/var/(?:lib/apt/lists|cache/(?:apt|apk|yum|dnf))\b`),
		todo: "delete only paths inside the skill's working folder",
		re:   regexp.MustCompile(`\brm\s+(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)(?:\s+(?:-[a-zA-Z-]+))*\s+(?:--no-preserve-root\s+)?["']?(?:/(?:\*|\s|["']|$)|~/?(?:\*|\s|["']|$)|\$\{?HOME\}?/?(?:\*|\s|["']|$)|/(?:(?:etc|usr|bin|sbin|lib|lib64|var|opt|boot|root|home|Users|System|Library|Applications|srv|dev|proc|sys)\b))`)},
	// Start-up files run on every new shell: a classic persistence hook.
	{code: CodeScriptStartupFile, what: "a write to a shell start-up file", quote: true,
		keys: []string{"bashrc", "zshrc", "profile", "zshenv", "zlogin", "config.fish", "/etc/environment"}, before: 200, after: 30,
		also: []string{">", "tee", "sed", "open"},
		todo: "tell the user what to add instead of editing their start-up files",
		re:   regexp.MustCompile(`(?:>>?|\btee\b(?:\s+-a)?|\bsed\s+-i\b[^\n]*?)\s*["']?(?:~|\$\{?HOME\}?)/\.(?:bashrc|bash_profile|bash_login|zshrc|zprofile|zshenv|zlogin|profile|config/fish/config\.fish)\b|(?:>>?|\btee\b(?:\s+-a)?)\s*["']?/etc/(?:profile|bash\.bashrc|zshrc|zsh/zshrc|environment)\b|\bopen\s*\([^)\n]*\.(?:bashrc|zshrc|bash_profile|profile)['"][^)\n]*['"]a['"]`)},
	// Authorized keys grant a login; id_* are the user's private keys.
	{code: CodeScriptSSHKey, what: "a write to SSH authorized keys or access to an SSH private key", quote: true,
		keys: []string{".ssh/", "ssh-copy-id"}, before: 120, after: 40,
		also: []string{">", "tee", "cp", "mv", "cat", "scp", "curl", "base64", "open", "ssh-copy-id"},
		todo: "never touch the user's SSH keys from a skill",
		re:   regexp.MustCompile(`(?:>>?|\btee\b|\bcp\b|\bmv\b|\bcat\b|\bscp\b|\bcurl\b|\bbase64\b|\bopen\s*\()[^\n]{0,80}\.ssh/(?:authorized_keys2?|id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?\b(?:[^.]|$))|\bssh-copy-id\b`)},
	// Cron entries run later and again: persistence.
	{code: CodeScriptCron, what: "a crontab edit", quote: true,
		keys: []string{"crontab", "/etc/cron"}, before: 120, after: 120,
		todo: "tell the user how to schedule the job instead of installing it",
		re:   regexp.MustCompile(`\bcrontab\s+(?:-[a-z]\s+)*(?:-|[^\s|;&-]\S*)\s*(?:$|[;&|)])|\|\s*crontab\s+-\s*$|\bcrontab\s+-e\b|(?:>>?|\btee\b(?:\s+-a)?)\s*["']?/etc/cron|\bcrontab\s+-l\b[^\n]*\|\s*crontab\b`)},
	// World-writable system paths.
	{code: CodeScriptChmod, what: "a world-writable permission on an absolute path", quote: true,
		keys: []string{"chmod"}, before: 1, after: 120,
		also: []string{"777", "rwx"},
		todo: "grant only the permissions needed, on files inside the working folder",
		re:   regexp.MustCompile(`\bchmod\s+(?:-R\s+)?(?:0?777|a\+rwx|ugo\+rwx)\s+["']?(?:/|~|\$\{?HOME)`)},
}

// injection runs the injection rules over s (a text or part of one).
func (c *checker) injection(path string, t *text, s string) {
	c.ruleHits(t, injectionRules, 0, len(s))
	c.flush(path, t, "the model reads this as an instruction: remove it, or reword it as a description of the task")
}

// pending is one match of a rule before the matches of a file are
// reported, one finding per code.
type pending struct {
	code, what, excerpt, todo string
	off                       int
}

// ruleHits adds the matches of rules in t.s[from:to] to c.pend.
func (c *checker) ruleHits(t *text, rules []rule, from, to int) {
	for i := range rules {
		r := &rules[i]
		ms := t.find(r.re, r.spec, r.before, r.after, from, to)
		for _, m := range ms {
			if r.skip != nil {
				ls := strings.LastIndexByte(t.s[:m[0]], '\n') + 1
				le := strings.IndexByte(t.s[m[0]:], '\n')
				if le < 0 {
					le = len(t.s)
				} else {
					le += m[0]
				}
				if r.skip.MatchString(t.s[ls:le]) {
					continue
				}
			}
			ex := ""
			if r.quote {
				ex = t.s[m[0]:m[1]]
			}
			c.pend = append(c.pend, pending{code: r.code, off: m[0], what: r.what, excerpt: ex, todo: r.todo})
		}
	}
}

// regexHits returns the matches of rules in a string that is not a file
// of its own (the code of python -c '…').
func (c *checker) regexHits(s string, rules []rule) []pending {
	saved := c.pend
	c.pend = nil
	c.ruleHits(newText([]byte(s)), rules, 0, len(s))
	out := c.pend
	c.pend = saved
	return out
}

// flush reports c.pend, the matches in one file: the first match of each
// code (in the order the codes were first found) with its line and a
// short excerpt, and how many matches there are.
func (c *checker) flush(p string, t *text, todo string) {
	type hit struct {
		pending
		n int
	}
	var hits []*hit
	byCode := map[string]*hit{}
	for _, m := range c.pend {
		h := byCode[m.code]
		if h == nil {
			h = &hit{pending: m}
			byCode[m.code] = h
			hits = append(hits, h)
		} else if m.off < h.off {
			h.pending = m
		}
		h.n++
	}
	c.pend = c.pend[:0]
	for _, h := range hits {
		msg := t.lineAt(h.off) + h.what
		if h.excerpt != "" {
			msg += fmt.Sprintf(" (%q)", clip(redactSecrets(strings.TrimSpace(h.excerpt)), 60))
		}
		if h.n > 1 {
			msg += fmt.Sprintf(", %d matches in this file", h.n)
		}
		do := h.todo
		if do == "" {
			do = todo
		}
		if do != "" {
			msg += ": " + do
		}
		c.add(h.code, p, msg)
	}
}

// scriptExts are the extensions of files treated as scripts.
var scriptExts = map[string]bool{
	".sh": true, ".bash": true, ".zsh": true, ".ksh": true, ".fish": true, ".command": true,
	".py": true, ".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".rb": true, ".pl": true,
	".php": true, ".ps1": true, ".psm1": true, ".bat": true, ".cmd": true, ".lua": true,
}

// isScript says whether a supporting file gets the dangerous-shell rules
// in full: it is under scripts/ (or bin/), has a script extension, or is
// executable. Markdown gets them in its fenced code blocks instead.
func isScript(p string, executable bool) bool {
	if isMarkdown(p) {
		return false
	}
	return executable || scriptExts[strings.ToLower(path.Ext(p))] ||
		strings.HasPrefix(p, "scripts/") || strings.HasPrefix(p, "bin/") || strings.Contains(p, "/scripts/")
}

// shellLangs are the code block languages read as shell; an unlabelled
// or plain-text block is read as shell too (lines that do not parse get
// the regular expressions).
var shellLangs = set("", "sh", "bash", "shell", "zsh", "ksh", "console", "terminal", "shell-session", "shellsession", "bash-session", "fish", "text", "txt", "plaintext", "plain", "none", "posix", "dash")

// shellFileRE is a shebang naming a shell.
var shellFileRE = regexp.MustCompile(`^#!\s*\S*(?:/env\s+(?:-\S+\s+)*)?\S*\b(?:ba|z|k|da|a|mk|fi|c|tc|y)?sh\b`)

// isShell says whether a script file is shell code: by extension, by its
// shebang, or (no extension, no other shebang) by default.
func isShell(p string, data string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".sh", ".bash", ".zsh", ".ksh", ".command", ".fish", ".dash":
		return true
	case "":
		return !strings.HasPrefix(data, "#!") || shellFileRE.MatchString(data[:min(len(data), 200)])
	}
	return strings.HasPrefix(data, "#!") && shellFileRE.MatchString(data[:min(len(data), 200)])
}

func isMarkdown(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown", ".mdx":
		return true
	}
	return false
}

// fencedBlocks returns the byte ranges of the fenced code blocks (``` or
// ~~~) in a Markdown text, contents only; an unclosed fence runs to the
// end.
func fencedBlocks(s string) [][2]int {
	var out [][2]int
	for _, b := range fencedCode(s) {
		out = append(out, [2]int{b.from, b.to})
	}
	return out
}

// codeBlock is a fenced code block's contents and its language (the info
// string's first word, lower case).
type codeBlock struct {
	from, to int
	lang     string
}

func fencedCode(s string) []codeBlock {
	var out []codeBlock
	open, start, lang := "", 0, ""
	for off := 0; off < len(s); {
		end := strings.IndexByte(s[off:], '\n')
		next := len(s)
		if end >= 0 {
			next = off + end + 1
		}
		line := strings.TrimLeft(s[off:next], " ")
		if open == "" {
			if f := fence(line); f != "" {
				open, start = f, next
				lang = ""
				if w := strings.Fields(strings.Trim(line[len(f):], " \t\r\n{}.")); len(w) > 0 {
					lang = strings.ToLower(strings.Trim(w[0], "{}.,"))
				}
			}
		} else if strings.HasPrefix(line, open) && strings.TrimSpace(strings.TrimLeft(line, open[:1])) == "" {
			out = append(out, codeBlock{start, off, lang})
			open = ""
		}
		off = next
	}
	if open != "" {
		out = append(out, codeBlock{start, len(s), lang})
	}
	return out
}

// fence returns the fence a line opens (``` or ~~~, three or more), or "".
func fence(line string) string {
	for _, ch := range []byte{'`', '~'} {
		n := 0
		for n < len(line) && line[n] == ch {
			n++
		}
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}
