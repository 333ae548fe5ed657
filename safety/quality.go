package safety

import (
	"bytes"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/loadout/loadout/skill"
)

// bodyStart returns the byte offset where the SKILL.md body starts: after
// the closing frontmatter fence, or 0 when there is no frontmatter.
func bodyStart(s string) int {
	s0 := strings.TrimPrefix(s, "\uFEFF")
	skip := len(s) - len(s0)
	first, rest, ok := strings.Cut(s0, "\n")
	if !ok || strings.TrimRight(first, " \t\r") != "---" {
		return 0
	}
	off := skip + len(first) + 1
	for len(rest) > 0 {
		line, more, _ := strings.Cut(rest, "\n")
		if strings.TrimRight(line, " \t\r") == "---" {
			return off + len(line) + min(1, len(rest)-len(line))
		}
		off += len(line) + 1
		rest = more
	}
	return 0
}

// htmlCommentRE finds HTML comments: a preview hides them, the model reads
// them.
var htmlCommentRE = regexp.MustCompile(`(?s)<!--(.*?)(?:-->|$)`)

// htmlComments reports the HTML comments in the SKILL.md body outside code
// (a comment inside a code block or `code` shows in a preview).
func (c *checker) htmlComments(p string, t *text) {
	start := bodyStart(t.s)
	body := t.s[start:]
	if !strings.Contains(body, "<!--") {
		return // what htmlCommentRE needs; the code ranges cost more
	}
	code := codeRanges(body)
	var first []int
	n := 0
	for _, m := range htmlCommentRE.FindAllStringSubmatchIndex(body, -1) {
		if inRanges(code, m[0]) {
			continue
		}
		if n == 0 {
			first = m
		}
		n++
	}
	if n == 0 {
		return
	}
	msg := fmt.Sprintf("%san HTML comment (%q)", t.lineAt(start+first[0]), clip(redactSecrets(strings.TrimSpace(body[first[2]:first[3]])), 60))
	if n > 1 {
		msg += fmt.Sprintf(", %d in the body", n)
	}
	c.add(CodeHTMLComment, p, msg+": it is invisible in a preview but the model reads it; make it visible text or remove it")
}

// codeRanges returns the fenced blocks and inline code spans of a
// Markdown text, whose contents are not links or comments.
func codeRanges(s string) [][2]int {
	r := fencedBlocks(s)
	for _, m := range inlineCode(s) {
		if !inRanges(r, m[0]) {
			r = append(r, m)
		}
	}
	return r
}

// inlineCode returns the matches of `[^`\n]+` in s, leftmost first as
// regexp.FindAllStringIndex finds them, without the expression (it ran
// over every SKILL.md body twice).
func inlineCode(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '`')
		if k < 0 {
			break
		}
		i += k
		e := strings.IndexAny(s[i+1:], "`\n")
		if e > 0 && s[i+1+e] == '`' {
			out = append(out, [2]int{i, i + e + 2})
			i += e + 2
			continue
		}
		i++
	}
	return out
}

func inRanges(r [][2]int, off int) bool {
	for _, x := range r {
		if off >= x[0] && off < x[1] {
			return true
		}
	}
	return false
}

var (
	// [text](target "title"), ![alt](target), <target> inside parens.
	linkRE = regexp.MustCompile(`!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+["'(][^)\n]*)?\)`)
	// [label]: target
	refDefRE = regexp.MustCompile(`(?m)^ {0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	// Relative paths the body names: scripts/x.py, references/y.md.
	pathRefRE = regexp.MustCompile(`(?:^|[\s"'(\x60\[=])(?:\./)?((?:scripts|references|reference|assets|templates|examples|resources|docs|bin|lib|data)/[A-Za-z0-9._/-]*[A-Za-z0-9_-]\.[A-Za-z0-9]{1,8})\b`)
	schemeRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// checkQuality runs the quality rules on SKILL.md and the description.
func (c *checker) checkQuality() {
	content := c.in.Content
	lines := bytes.Count(content, []byte("\n"))
	if len(content) > 0 && content[len(content)-1] != '\n' {
		lines++
	}
	if max := c.p.maxLines(); lines > max {
		c.add(CodeLongSkillMD, "SKILL.md", fmt.Sprintf("SKILL.md has %d lines, over the %d the Agent Skills spec advises: move detail into references/ files the body links to", lines, max))
	}
	if d := c.in.Description; d != "" && !whenRE.MatchString(d) {
		c.out = append(c.out, finding{code: CodeNoWhenToUse, path: "SKILL.md", field: "description",
			msg: `the description says what the skill does but not when to use it: add a clause such as "Use when …" so the model can choose it`})
	}
	if c.in.FilesUnknown {
		return
	}
	have := map[string]bool{"SKILL.md": true}
	dirs := map[string]bool{}
	for _, f := range c.in.Files {
		have[f.Path] = true
		for d := path.Dir(f.Path); d != "." && d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	t := c.md // SKILL.md as scanned (up to MaxScanBytes)
	if t == nil {
		t = newText(content)
	}
	s := t.s
	start := bodyStart(s)
	body := s[start:]
	code := codeRanges(body)
	reported := map[string]bool{}
	var broken []string
	firstBroken, nBroken := 0, 0
	check := func(off int, target string) {
		if inRanges(code, off) {
			return
		}
		rel, ok := localTarget(target)
		if !ok || have[rel] || dirs[strings.TrimSuffix(rel, "/")] {
			return
		}
		if !reported[rel] {
			reported[rel] = true
			if nBroken == 0 {
				firstBroken = start + off
			}
			broken = append(broken, rel)
		}
		nBroken++
	}
	for _, r := range []struct {
		re            *regexp.Regexp
		spec          *keySpec
		before, after int
	}{{linkRE, linkSpec, 300, 300}, {refDefRE, refDefSpec, 200, 300}} {
		for _, m := range t.find(r.re, r.spec, r.before, r.after, start, len(s)) {
			sm := r.re.FindStringSubmatchIndex(s[m[0]:m[1]])
			check(m[0]-start, s[m[0]+sm[2]:m[0]+sm[3]])
		}
	}
	if len(broken) > 0 {
		c.add(CodeBrokenLink, "SKILL.md", fmt.Sprintf("%slinks to %s, which the skill does not have%s: add the file or fix the link",
			t.lineAt(firstBroken), quoteList(broken, 5), more(len(broken), 5)))
	}
	var missing []string
	firstMissing := 0
	for _, h := range t.keyHits() {
		if int(h.off) < start || !slices.Contains(pathRefIDs, h.key) {
			continue
		}
		m, ok := pathRefAt(s, allKeys[h.key], int(h.off), start)
		if !ok {
			continue
		}
		m[0], m[1] = m[0]-start, m[1]-start
		rel := path.Clean(body[m[0]:m[1]])
		if have[rel] || dirs[rel] || reported[rel] || strings.ContainsAny(rel, "<>{}*$") {
			continue
		}
		reported[rel] = true
		if len(missing) == 0 {
			firstMissing = start + m[0]
		}
		missing = append(missing, rel)
	}
	if len(missing) > 0 {
		c.add(CodeMissingFile, "SKILL.md", fmt.Sprintf("%snames %s, which the skill does not have%s: add the file or remove the reference",
			t.lineAt(firstMissing), quoteList(missing, 5), more(len(missing), 5)))
	}
	c.unreferenced()
}

// pathRefKeys are the folders whose files the body names in passing
// ("run scripts/fill.py", "see `references/forms.md`").
var pathRefKeys = []string{"scripts/", "references/", "reference/", "assets/", "templates/", "examples/", "resources/", "docs/", "bin/", "lib/", "data/"}

var pathRefIDs = func() []int16 {
	registerKeys(pathRefKeys...)
	ids := make([]int16, len(pathRefKeys))
	for i, k := range pathRefKeys {
		ids[i] = keyID(k)
	}
	return ids
}()

// pathRefAt reads a relative file path starting with a pathRefKeys folder
// at s[off:] (the keyword pass folds case; the folder must match exactly
// here): after a space, quote, bracket, backtick, "=" or
// "./", made of letters, digits and ._/-, ending in a file extension of 1
// to 8 characters. It returns the path's byte range.
func pathRefAt(s, key string, off, min int) ([2]int, bool) {
	if !strings.HasPrefix(s[off:], key) {
		return [2]int{}, false
	}
	b := off
	if b-2 >= min && s[b-2:b] == "./" {
		b -= 2
	}
	if b > min && !strings.ContainsRune(" \t\n\r\"'(`[=", rune(s[b-1])) {
		return [2]int{}, false
	}
	e := off
	for e < len(s) && isPathByte(s[e]) {
		e++
	}
	for e > off && (s[e-1] == '.' || s[e-1] == '/') { // sentence punctuation
		e--
	}
	p := s[off:e]
	dot := strings.LastIndexByte(p, '.')
	if dot < 0 || dot < strings.LastIndexByte(p, '/') || len(p)-dot-1 < 1 || len(p)-dot-1 > 8 {
		return [2]int{}, false
	}
	return [2]int{off, e}, true
}

// localTarget turns a link target into a path inside the skill, or false
// for URLs, anchors, absolute paths and mail links.
func localTarget(target string) (string, bool) {
	if target == "" || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "/") || strings.HasPrefix(target, "//") || schemeRE.MatchString(target) {
		return "", false
	}
	if i := strings.IndexAny(target, "#?"); i >= 0 {
		target = target[:i]
	}
	if u, err := url.PathUnescape(target); err == nil {
		target = u
	}
	if target == "" || strings.ContainsAny(target, "<>{}*$") {
		return "", false
	}
	return path.Clean(target), true
}

// unreferenced reports supporting files that neither SKILL.md nor another
// text file mentions: by path, by file name, or by a folder above it
// ("see references/", "the `./canvas-fonts` folder").
func (c *checker) unreferenced() {
	max := int(c.p.maxScan())
	texts := [][]byte{c.in.Content[:min(len(c.in.Content), max)]}
	for _, f := range c.in.Files {
		if !isBinary(&f) {
			texts = append(texts, f.Data[:min(len(f.Data), max)])
		}
	}
	mentioned := func(self int, needle string) bool {
		for i, s := range texts {
			if i != self && bytes.Contains(s, []byte(needle)) {
				return true
			}
		}
		return false
	}
	var lone []string
	ti := 0
	for _, f := range c.in.Files {
		self := -1
		if !isBinary(&f) {
			ti++
			self = ti
		}
		base := path.Base(f.Path)
		if strings.HasPrefix(strings.ToUpper(base), "LICENSE") || strings.HasPrefix(base, ".") {
			continue
		}
		found := mentioned(self, f.Path) || mentioned(self, base)
		for d := path.Dir(f.Path); !found && d != "."; d = path.Dir(d) {
			for i, s := range texts {
				if i != self && (mentionsDir(s, []byte(d+"/")) || namesDir(s, []byte(d))) {
					found = true
					break
				}
			}
		}
		if !found {
			lone = append(lone, f.Path)
		}
	}
	for _, p := range lone {
		c.add(CodeUnreferencedFile, p, "nothing in SKILL.md or the other files mentions this file, so the model will not know to read it: link it from SKILL.md or remove it")
	}
}

// mentionsDir reports whether s names the folder dir ("references/") on
// its own, not as the start of a longer path ("references/a.md"), so
// that one linked file does not cover its siblings.
func mentionsDir(s, dir []byte) bool {
	for i := 0; ; {
		j := bytes.Index(s[i:], dir)
		if j < 0 {
			return false
		}
		end := i + j + len(dir)
		if end == len(s) || !isPathByte(s[end]) {
			return true
		}
		i = end
	}
}

// namesDir reports whether s names the folder dir as a path without its
// final slash: after "/", a quote, a backtick or a bracket ("./canvas-fonts",
// "`scripts`"), and not followed by more of a path. A bare word ("run the
// scripts") is prose, not a folder.
func namesDir(s, dir []byte) bool {
	for i := 0; ; {
		j := bytes.Index(s[i:], dir)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(dir)
		if start > 0 && bytes.IndexByte([]byte("/`'\"(["), s[start-1]) >= 0 && (end == len(s) || !isPathByte(s[end])) {
			return true
		}
		i = start + 1
	}
}

func isPathByte(b byte) bool {
	return b == '.' || b == '_' || b == '-' || b == '/' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// whenRE is the "when to use" heuristic: the description says when
// ("when", "whenever", "if the user"), invites use ("use this", "use
// for", "use to", "used by"), names a trigger ("trigger", "invoke"), or
// states purpose with "for …ing" ("for reviewing pull requests").
var whenRE = regexp.MustCompile(`(?i)\b(?:when|whenever|if\s+(?:the\s+)?(?:user|you|asked)|use(?:d|s)?\s+(?:this|it|for|to|on|in|with|by|as|after|before|during|only)|trigger(?:s|ed)?|invoke[sd]?|for\s+\w+ing)\b`)

func quoteList(xs []string, n int) string {
	var b strings.Builder
	for i, x := range xs {
		if i == n {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", x)
	}
	return b.String()
}

func more(n, shown int) string {
	if n > shown {
		return fmt.Sprintf(" (and %d more)", n-shown)
	}
	return ""
}

// isBinary says whether a file is skipped by the text rules: Binary set by
// the caller, or decided here from the name and first bytes.
func isBinary(f *skill.BundleFile) bool {
	if f.Binary {
		return true
	}
	if _, bin, known := skill.TypeByName(f.Path); known {
		return bin
	}
	_, bin := skill.Sniff(f.Data[:min(len(f.Data), 512)])
	return bin
}
