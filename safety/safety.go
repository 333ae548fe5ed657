// Package safety checks Agent Skills for what a reviewer cannot see or would
// rather not miss: hidden Unicode (tag characters, bidirectional controls,
// zero-width characters), confusable names, prompt-injection sentences and
// HTML comments, dangerous shell in scripts and code blocks, committed
// secrets, and quality problems (broken links, missing or unreferenced
// files, an over-long SKILL.md, a description that never says when to use
// the skill, two descriptions too alike to choose between).
//
// Every finding is a skill.Diagnostic with a stable code (see the Code
// constants), the file it is in (Path, relative to the skill folder) and,
// since Diagnostic has no line field, the line and column at the start of
// its Message ("line 12, column 3: ..."). Check never executes anything and
// never prints a secret: a secret shows as a short prefix and its length.
//
// A Policy decides severities: by default hidden text and secrets are
// errors that refuse a write (Policy.Refuses), everything else warns or
// informs. An allow-list accepts a finding for one skill with a reason; an
// allowed finding is still returned, as Info, with "allowed (reason): " in
// front of its message, so a review can see what was accepted.
//
// The package reads bytes only: no network, no file system, no database.
package safety

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/loadout/loadout/skill"
)

// Input is one skill to check.
type Input struct {
	// Name and Description as loaded (from the frontmatter or a store).
	Name, Description string
	// Content is SKILL.md, frontmatter included.
	Content []byte
	// Files are the supporting files (paths relative to the skill folder,
	// with forward slashes). Binary files are skipped; Binary is also
	// decided here (by extension and by sniffing) when the caller has not
	// set it.
	Files []skill.BundleFile
	// FilesUnknown says the supporting files were not loaded (an index
	// listing, a SKILL.md alone). The checks that need the file list
	// (broken links, missing and unreferenced files) are then skipped.
	FilesUnknown bool
}

// Diagnostic codes. They are stable: programs and policies switch on them.
const (
	// Hidden text (default: error, refuses a write).
	CodeHiddenTag = "safety-hidden-tag" // Unicode tag characters U+E0000–U+E007F (invisible ASCII)
	CodeBidi      = "safety-bidi"       // bidirectional controls (reorder what a reviewer sees)
	CodeZeroWidth = "safety-zero-width" // zero-width and other default-ignorable or format characters
	// Variation selectors that vary nothing: more than one after a
	// character, or after one they cannot vary ("emoji smuggling").
	CodeVariationSelector = "safety-hidden-variation-selector"
	CodePrivateUse        = "safety-hidden-private-use" // private-use characters: no meaning a reviewer can see
	// Names (default: warning).
	CodeConfusableName  = "safety-confusable-name"   // looks like another skill's name
	CodeMixedScriptName = "safety-mixed-script-name" // letters from more than one script
	// Injection (default: warning).
	CodeInjection    = "safety-injection"    // text telling the model to ignore its instructions or hide from the user
	CodeExfiltration = "safety-exfiltration" // text or commands sending data or secrets to a URL
	CodeHTMLComment  = "safety-html-comment" // <!-- --> in the SKILL.md body: invisible in a preview
	// Dangerous scripts (default: warning). Reported, never executed.
	CodeScriptPipeShell   = "safety-script-pipe-shell"   // curl/wget … | sh
	CodeScriptDecodeExec  = "safety-script-decode-exec"  // base64 -d | sh, eval(atob(…)), exec(b64decode(…))
	CodeScriptRmRf        = "safety-script-rm-rf"        // rm -rf of /, ~, $HOME or an absolute path
	CodeScriptStartupFile = "safety-script-startup-file" // writes to ~/.bashrc, ~/.zshrc, ~/.profile, /etc/profile
	CodeScriptSSHKey      = "safety-script-ssh-key"      // writes authorized_keys or touches private keys
	CodeScriptCron        = "safety-script-cron"         // crontab edits, /etc/cron*
	CodeScriptChmod       = "safety-script-chmod"        // chmod 777 (or a+rwx) of an absolute path
	// Secrets (default: error, refuses a write).
	CodeSecretPrivateKey = "safety-secret-private-key" // PEM/OpenSSH private key block
	CodeSecretAWS        = "safety-secret-aws"         // AWS access key id
	CodeSecretGitHub     = "safety-secret-github"      // GitHub token
	CodeSecretSlack      = "safety-secret-slack"       // Slack token
	CodeSecretGoogle     = "safety-secret-google"      // Google API key
	CodeSecretStripe     = "safety-secret-stripe"      // Stripe live secret key
	CodeSecretOpenAI     = "safety-secret-openai"      // OpenAI API key
	CodeSecretAnthropic  = "safety-secret-anthropic"   // Anthropic API key
	CodeSecretNPM        = "safety-secret-npm"         // npm access token
	CodeSecretGitLab     = "safety-secret-gitlab"      // GitLab token
	// Bounds (default: info).
	CodeScanTruncated = "safety-scan-truncated" // a file over Policy.MaxScanBytes: only its start was checked
	// Quality.
	CodeBrokenLink       = "quality-broken-link"          // warning: a relative link or image to a file the skill does not have
	CodeMissingFile      = "quality-missing-file"         // warning: the body names scripts/x.py and there is none
	CodeUnreferencedFile = "quality-unreferenced-file"    // info: a supporting file nothing mentions
	CodeLongSkillMD      = "quality-long-skill-md"        // warning: SKILL.md over Policy.MaxSkillMDLines
	CodeNoWhenToUse      = "quality-no-when-to-use"       // info: the description never says when to use the skill
	CodeSimilar          = "quality-similar-descriptions" // warning: two descriptions a model cannot tell apart
	CodeSimilarLimit     = "quality-similar-limit"        // info: more skills than Policy.MaxSimilarSkills; the pairwise check was skipped
)

// defaults is every code with its default severity.
var defaults = map[string]skill.Severity{
	CodeHiddenTag: skill.Error, CodeBidi: skill.Error, CodeZeroWidth: skill.Error,
	CodeVariationSelector: skill.Error, CodePrivateUse: skill.Error,
	CodeConfusableName: skill.Warning, CodeMixedScriptName: skill.Warning,
	CodeInjection: skill.Warning, CodeExfiltration: skill.Warning, CodeHTMLComment: skill.Warning,
	CodeScriptPipeShell: skill.Warning, CodeScriptDecodeExec: skill.Warning, CodeScriptRmRf: skill.Warning,
	CodeScriptStartupFile: skill.Warning, CodeScriptSSHKey: skill.Warning, CodeScriptCron: skill.Warning,
	CodeScriptChmod:      skill.Warning,
	CodeSecretPrivateKey: skill.Error, CodeSecretAWS: skill.Error, CodeSecretGitHub: skill.Error,
	CodeSecretSlack: skill.Error, CodeSecretGoogle: skill.Error, CodeSecretStripe: skill.Error,
	CodeSecretOpenAI: skill.Error, CodeSecretAnthropic: skill.Error, CodeSecretNPM: skill.Error, CodeSecretGitLab: skill.Error,
	CodeScanTruncated: skill.Info,
	CodeBrokenLink:    skill.Warning, CodeMissingFile: skill.Warning, CodeUnreferencedFile: skill.Info,
	CodeLongSkillMD: skill.Warning, CodeNoWhenToUse: skill.Info, CodeSimilar: skill.Warning,
	CodeSimilarLimit: skill.Info,
}

// Codes returns every code this package reports with its default
// severity; a default error is also what the default policy refuses.
func Codes() map[string]skill.Severity {
	m := make(map[string]skill.Severity, len(defaults))
	for k, v := range defaults {
		m[k] = v
	}
	return m
}

// Check returns every finding in one skill, in a stable order (by file,
// then by the order the rules run). A nil policy is the default policy.
func Check(in Input, p *Policy) []skill.Diagnostic {
	return CheckCached(in, p, nil)
}

// CheckCached is Check with a cache of each file's findings by its
// content (see Cache): a file whose bytes were checked before, in this
// skill or another, is not scanned again. A nil cache is Check.
func CheckCached(in Input, p *Policy, cache *Cache) []skill.Diagnostic {
	p = p.orDefault()
	fs, shared := findings(in, p, cache)
	if shared {
		fs = slices.Clone(fs)
	}
	return p.apply(in.Name, fs)
}

// findings runs the checks of in, or takes their findings from cache;
// shared says they are the cache's (apply a clone).
func findings(in Input, p *Policy, cache *Cache) (fs []finding, shared bool) {
	c := &checker{in: in, p: p, cache: cache}
	if cache == nil {
		c.run()
		return c.out, false
	}
	// The whole skill seen before: its findings, without reading on.
	key := cache.skillKey(in, p.maxScan())
	if fs, ok := cache.get(key); ok {
		return fs, true
	}
	c.run()
	cache.put(key, c.out)
	return c.out, false
}

// finding is a diagnostic before the policy sets its severity.
type finding struct {
	code, path, field, msg string
}

type checker struct {
	in  Input
	p   *Policy
	out []finding
	md  *text // SKILL.md, shared by the text and the quality rules
	// pend holds the current file's rule matches until flush.
	pend  []pending
	cache *Cache
}

func (c *checker) add(code, path, msg string) {
	c.out = append(c.out, finding{code: code, path: path, msg: msg})
}

// run is Check's body: SKILL.md, the description when it is not in
// SKILL.md as written, then every text file.
func (c *checker) run() {
	content := c.in.Content
	if u, ok := fromUTF16(content); ok {
		content = u
	}
	c.scanText("SKILL.md", content, true)
	if d := c.in.Description; d != "" && !bytes.Contains(content, []byte(d)) {
		// A description from a store or an index, or a folded YAML block:
		// scan it too, unless SKILL.md already showed the same problem.
		seen := map[string]bool{}
		for _, f := range c.out {
			seen[f.code] = true
		}
		before := len(c.out)
		c.scanPlain("SKILL.md", []byte(d))
		kept := c.out[:before]
		for _, f := range c.out[before:] {
			if !seen[f.code] {
				f.field = "description"
				f.msg = "description: " + f.msg
				kept = append(kept, f)
			}
		}
		c.out = kept
	}
	c.checkName()
	c.checkQuality()
	for i := range c.in.Files {
		f := &c.in.Files[i]
		if u, ok := fromUTF16(f.Data); ok {
			// UTF-16 reads as binary (NUL bytes) or as noise to the rules,
			// but a model reads it as text: check what it says.
			c.scanText(f.Path, u, false)
			continue
		}
		if isBinary(f) {
			continue
		}
		c.scanText(f.Path, f.Data, false)
	}
}

// scanPlain runs the rules for prose (hidden text, injection, secrets) on
// text that is not a file of its own.
func (c *checker) scanPlain(path string, data []byte) {
	t := newText(data)
	c.hidden(path, t)
	c.injection(path, t, t.s)
	c.secrets(path, t)
}

// scanText runs every rule that applies to one text file. skillMD is true
// for SKILL.md, whose body gets the Markdown rules.
func (c *checker) scanText(path string, data []byte, skillMD bool) {
	if c.cache == nil {
		c.scanFile(path, data, skillMD)
		return
	}
	// What a file's findings depend on besides its bytes: how it is read
	// (SKILL.md, Markdown, shell, another script, plain text) and the
	// scan bound.
	kind := uint8(0)
	switch {
	case skillMD:
		kind = 1
	case isMarkdown(path):
		kind = 2
	case isScript(path, c.fileExecutable(path)):
		kind = 3
		if isShell(path, string(data[:min(len(data), 200)])) {
			kind = 4
		}
	}
	key := c.cache.key(data, kind, c.p.maxScan())
	if fs, ok := c.cache.get(key); ok {
		for _, f := range fs {
			f.path = path
			c.out = append(c.out, f)
		}
		if skillMD {
			c.md = newText(data[:min(int64(len(data)), c.p.maxScan())])
		}
		return
	}
	before := len(c.out)
	c.scanFile(path, data, skillMD)
	c.cache.put(key, c.out[before:])
}

// scanFile is scanText without the cache.
func (c *checker) scanFile(path string, data []byte, skillMD bool) {
	if max := c.p.maxScan(); int64(len(data)) > max {
		c.add(CodeScanTruncated, path, "file is "+itoa(len(data))+" bytes; only the first "+itoa(int(max))+" were checked (Policy.MaxScanBytes): review the rest by hand or raise the limit")
		data = data[:max]
	}
	t := newText(data)
	if skillMD {
		c.md = t
	}
	c.hidden(path, t)
	c.secrets(path, t)
	md := skillMD || isMarkdown(path)
	if md {
		c.injection(path, t, t.s)
	}
	if skillMD {
		c.htmlComments(path, t)
	}
	switch {
	case isScript(path, c.fileExecutable(path)):
		if isShell(path, t.s) {
			c.shellCode(path, t, 0, len(t.s))
		} else {
			c.ruleHits(t, scriptRules, 0, len(t.s))
		}
	case md:
		for _, b := range fencedCode(t.s) {
			if shellLangs[b.lang] {
				c.shellCode(path, t, b.from, b.to)
			} else {
				c.ruleHits(t, scriptRules, b.from, b.to)
			}
		}
	}
	c.flush(path, t, "")
}

func (c *checker) fileExecutable(path string) bool {
	for _, f := range c.in.Files {
		if f.Path == path {
			return f.Executable
		}
	}
	return false
}

// sortFindings orders findings by path (SKILL.md first) keeping the rule
// order within a file.
func sortFindings(fs []finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i].path, fs[j].path
		if a == b {
			return false
		}
		if a == "SKILL.md" || b == "SKILL.md" {
			return a == "SKILL.md"
		}
		return a < b
	})
}

// fromUTF16 decodes b when it is UTF-16 text: a byte order mark, or
// (without one) the shape of UTF-16 in its first 512 bytes.
func fromUTF16(b []byte) ([]byte, bool) {
	if len(b) < 4 {
		return nil, false
	}
	var order binary.ByteOrder
	switch {
	case b[0] == 0xFF && b[1] == 0xFE:
		order, b = binary.LittleEndian, b[2:]
	case b[0] == 0xFE && b[1] == 0xFF:
		order, b = binary.BigEndian, b[2:]
	case bytes.IndexByte(b[:min(len(b), 512)], 0) < 0:
		return nil, false // no NUL: not UTF-16 (the common case, one fast scan)
	default:
		// The high byte of each unit is NUL (ASCII) or a surrogate's
		// (D8–DF: a character past U+FFFF, such as a tag), the low byte
		// is almost never NUL.
		n := min(len(b), 512) &^ 1
		var zero, high [2]int
		for i := 0; i < n; i++ {
			if b[i] == 0 {
				zero[i&1]++
			}
			if b[i] == 0 || b[i] >= 0xD8 && b[i] <= 0xDF {
				high[i&1]++
			}
		}
		pairs := n / 2
		switch {
		case high[1]*10 >= pairs*9 && zero[1]*8 >= pairs && zero[0]*20 <= pairs:
			order = binary.LittleEndian
		case high[0]*10 >= pairs*9 && zero[0]*8 >= pairs && zero[1]*20 <= pairs:
			order = binary.BigEndian
		default:
			return nil, false
		}
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = order.Uint16(b[2*i:])
	}
	out := make([]byte, 0, len(b))
	for _, r := range utf16.Decode(u) {
		out = utf8.AppendRune(out, r)
	}
	return out, true
}
