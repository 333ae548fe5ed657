package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
)

// POST /v1/check validates a SKILL.md text without storing anything: the
// UI's editor calls it as the author types. It runs the same code as
// `loadout check` and a save do: skill.Parse (the lenient loader every
// source uses, with the skill's name standing in for its folder's, so a
// name that differs is the same name-mismatch warning) and the store's
// write gate skill.Bundle.Check (what a save would refuse), and adds the
// size warning for a SKILL.md over skill.DefaultWarnTextSize (or
// the server's --warn-text-size). Each diagnostic carries the line of the
// text it is about (0 when it is about the whole text).

// checkRequest is the JSON body of POST /v1/check (JSON only, like every
// route with a body, so a page elsewhere cannot send it without asking).
type checkRequest struct {
	Content string `json:"content"`
	// Name is the skill's name where it is stored (optional): a
	// frontmatter name that differs is a warning, as for a folder.
	Name string `json:"name,omitempty"`
}

// checkDiagnostic is one finding, located in the text.
type checkDiagnostic struct {
	Code     string         `json:"code"`
	Severity skill.Severity `json:"severity"`
	Line     int            `json:"line"`
	Field    string         `json:"field,omitempty"`
	Message  string         `json:"message"`
}

// checkResult is the answer of POST /v1/check.
type checkResult struct {
	// Valid is true when a save would be accepted (no errors).
	Valid       bool              `json:"valid"`
	Errors      int               `json:"errors"`
	Warnings    int               `json:"warnings"`
	Size        int               `json:"size"`
	Diagnostics []checkDiagnostic `json:"diagnostics"`
}

func (a *api) checkSkill(w http.ResponseWriter, r *http.Request) {
	// A SKILL.md is one file: the per-file cap, plus room for JSON escaping.
	data, e := readBody(w, r, a.lim.MaxFileSize*2+4096, "the SKILL.md text to check")
	if e != nil {
		writeErr(w, e)
		return
	}
	var req checkRequest
	if err := json.Unmarshal(data, &req); err != nil {
		writeErr(w, badRequest("", "the body is not a JSON object {\"content\": \"...\", \"name\": \"...\"}: %v", err))
		return
	}
	writeJSON(w, http.StatusOK, checkText(req.Content, req.Name, a.lim, a.svc.SafetyPolicy()))
}

// checkText is the diagnostics of one SKILL.md text: the loader's, the
// store's and the safety checks' (with policy p) as a save would see them.
func checkText(content, name string, lim skill.Limits, p *safety.Policy) checkResult {
	var out []checkDiagnostic
	seen := map[string]bool{}
	add := func(d skill.Diagnostic) {
		key := d.Code + "\x00" + d.Field + "\x00" + d.Message
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, checkDiagnostic{Code: d.Code, Severity: d.Severity, Field: d.Field, Message: d.Message, Line: diagLine(content, d)})
	}
	// The loader's view: what `loadout check` reports for this SKILL.md.
	_, diags, _ := skill.Parse([]byte(content), "SKILL.md", name)
	for _, d := range diags {
		add(d)
	}
	// The store's view: what a save would refuse.
	b := &skill.Bundle{Content: []byte(content)}
	doc, warns, err := b.Check(lim)
	for _, d := range warns {
		add(d)
	}
	if ce, ok := err.(*skill.CheckError); ok {
		for _, d := range ce.Problems {
			add(d)
		}
	} else if err != nil {
		add(skill.Diagnostic{Severity: skill.Error, Code: "invalid", Message: err.Error()})
	}
	// The safety checks, on the text alone (its files are not known here).
	in := safety.Input{Name: name, Content: []byte(content), FilesUnknown: true}
	if doc != nil {
		in.Name, in.Description = doc.Name, doc.Description
	}
	for _, d := range safety.Check(in, p) {
		add(d)
	}
	if doc != nil && name != "" && doc.Name != name {
		add(skill.Diagnostic{Severity: skill.Error, Code: skill.CodeNameMismatch, Field: "name",
			Message: fmt.Sprintf("the frontmatter names %q but this skill is %q: saving needs the same name (create a new skill to rename it)", doc.Name, name)})
	}
	warnAt := lim.WarnTextSize
	if warnAt <= 0 {
		warnAt = skill.DefaultWarnTextSize
	}
	if int64(len(content)) > warnAt {
		add(skill.Diagnostic{Severity: skill.Warning, Code: skill.CodeLargeText, Field: "content",
			Message: fmt.Sprintf("SKILL.md is %d bytes, over %d: agents load all of it at activation, so move detail into files of the skill that it links to", len(content), warnAt)})
	}
	res := checkResult{Valid: true, Size: len(content), Diagnostics: out}
	if res.Diagnostics == nil {
		res.Diagnostics = []checkDiagnostic{}
	}
	for _, d := range out {
		switch d.Severity {
		case skill.Error:
			res.Errors++
			res.Valid = false
		case skill.Warning:
			res.Warnings++
		}
	}
	return res
}

var lineInMessage = regexp.MustCompile(`\bline (\d+)\b`)

// diagLine finds the line of content a diagnostic is about: a line the
// message names, else the line of the frontmatter field it names, else
// line 1 for a frontmatter problem, else 0 (the whole text).
func diagLine(content string, d skill.Diagnostic) int {
	lines := strings.Split(content, "\n")
	if m := lineInMessage.FindStringSubmatch(d.Message); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n >= 1 && n <= len(lines) {
			return n
		}
	}
	field := d.Field
	if i := strings.IndexAny(field, ".["); i > 0 {
		field = field[:i]
	}
	if field != "" && field != "content" && len(lines) > 0 && strings.TrimRight(lines[0], " \t\r") == "---" {
		for i := 1; i < len(lines); i++ {
			l := strings.TrimRight(lines[i], "\r")
			if strings.TrimRight(l, " \t") == "---" {
				break
			}
			if k, _, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == field && !strings.HasPrefix(l, " ") {
				return i + 1
			}
		}
	}
	switch {
	case strings.HasPrefix(d.Code, "frontmatter-"), strings.HasPrefix(d.Code, "yaml-"), strings.HasPrefix(d.Code, "name-"),
		strings.HasPrefix(d.Code, "description-"), d.Code == skill.CodeBOM:
		return 1
	}
	return 0
}
