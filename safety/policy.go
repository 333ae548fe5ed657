package safety

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/loadout/loadout/skill"
)

// Default bounds. Each is a Policy field; zero takes the default.
const (
	// DefaultMaxScanBytes bounds the work per file: only the first MiB of
	// a text file is scanned (the store's own per-file limit is 1 MiB too).
	DefaultMaxScanBytes = 1 << 20
	// DefaultMaxSkillMDLines is the Agent Skills spec's advice: keep
	// SKILL.md under 500 lines and move detail to references.
	DefaultMaxSkillMDLines = 500
	// DefaultSimilarityThreshold is the cosine similarity of two
	// descriptions' word and word-pair counts at or above which Similar
	// reports the pair. 0.85 is where real collections' near-duplicates
	// (copied skills with a word changed) sit and distinct skills do not.
	DefaultSimilarityThreshold = 0.85
	// DefaultMaxSimilarSkills bounds Similar's pairwise work (n²/2 pairs):
	// one agent's loadout is far smaller than 2,000 skills.
	DefaultMaxSimilarSkills = 2000
)

// Policy sets what the checks report and what refuses a write. The zero
// value (and nil) is the default: hidden text and secrets are errors that
// refuse, the rest keep their default severity (see Codes).
//
// It is meant to be embedded in a config file, as JSON:
//
//	{"refuse": ["safety-script-*"], "warn": ["safety-zero-width"], "off": ["quality-no-when-to-use"],
//	 "allow": [{"skill": "pdf", "code": "safety-script-pipe-shell", "path": "scripts/install.sh",
//	            "reason": "installs poppler from the vendor's script, reviewed 2026-11"}]}
//
// A code in a list may end in "*" to name every code with that prefix
// ("safety-secret-*"); an exact code wins over a pattern, a longer pattern
// over a shorter one. A code may appear in one list only.
type Policy struct {
	// Refuse lists codes that are errors and refuse a write or import.
	// Nil means the default: the hidden-text and secret codes.
	Refuse []string `json:"refuse,omitempty"`
	// Warn lists codes reported as warnings (never refusing).
	Warn []string `json:"warn,omitempty"`
	// Info lists codes reported as info.
	Info []string `json:"info,omitempty"`
	// Off lists codes not checked at all.
	Off []string `json:"off,omitempty"`
	// Allow accepts findings for one skill: they are reported as Info
	// with "allowed (reason): " before the message, and never refuse.
	Allow []Allow `json:"allow,omitempty"`

	MaxScanBytes        int64   `json:"maxScanBytes,omitempty"`        // default DefaultMaxScanBytes
	MaxSkillMDLines     int     `json:"maxSkillMdLines,omitempty"`     // default DefaultMaxSkillMDLines
	SimilarityThreshold float64 `json:"similarityThreshold,omitempty"` // default DefaultSimilarityThreshold
	MaxSimilarSkills    int     `json:"maxSimilarSkills,omitempty"`    // default DefaultMaxSimilarSkills

	levels map[string]skill.Severity // exact codes and "prefix*" patterns → severity; "" severity is off
}

// Allow is one accepted finding.
type Allow struct {
	Skill string `json:"skill"` // the skill's name
	Code  string `json:"code"`  // a code or a "prefix*" pattern
	// Path limits the entry to one file ("scripts/install.sh",
	// "SKILL.md"); empty means any file of the skill.
	Path   string `json:"path,omitempty"`
	Reason string `json:"reason"` // required: why this is accepted
}

const off skill.Severity = ""

// ParsePolicy reads a policy from JSON, strictly: unknown fields, unknown
// codes, a code in two lists and an allow entry without a skill, code or
// reason are errors naming the field.
func ParsePolicy(data []byte) (*Policy, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Policy
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("safety policy: %v", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Validate checks the policy and prepares it; Check and Similar call it
// on a copy (and ignore a bad policy's bad entries) when the caller has
// not. Call it (or ParsePolicy) once before sharing a policy between
// goroutines; after that a policy is only read.
func (p *Policy) Validate() error {
	levels := map[string]skill.Severity{}
	where := map[string]string{}
	lists := []struct {
		name  string
		codes []string
		sev   skill.Severity
	}{{"refuse", p.Refuse, skill.Error}, {"warn", p.Warn, skill.Warning}, {"info", p.Info, skill.Info}, {"off", p.Off, off}}
	var errs []string
	for _, l := range lists {
		for i, c := range l.codes {
			if !knownCode(c) {
				errs = append(errs, fmt.Sprintf("%s[%d]: unknown code %q (see safety.Codes; a pattern ends in *)", l.name, i, c))
				continue
			}
			if w, dup := where[c]; dup {
				errs = append(errs, fmt.Sprintf("%s[%d]: code %q is already in %q; keep it in one list", l.name, i, c, w))
				continue
			}
			where[c] = l.name
			levels[c] = l.sev
		}
	}
	if p.Refuse == nil {
		// The default refusals, unless a list says otherwise.
		for c, s := range defaults {
			if _, set := levels[c]; !set && s == skill.Error {
				levels[c] = skill.Error
			}
		}
	}
	for i, a := range p.Allow {
		switch {
		case a.Skill == "":
			errs = append(errs, fmt.Sprintf("allow[%d].skill: missing: name the skill the finding is accepted for", i))
		case a.Code == "" || !knownCode(a.Code):
			errs = append(errs, fmt.Sprintf("allow[%d].code: unknown code %q", i, a.Code))
		case strings.TrimSpace(a.Reason) == "":
			errs = append(errs, fmt.Sprintf("allow[%d].reason: missing: say why %s is accepted for %s", i, a.Code, a.Skill))
		}
	}
	switch {
	case p.MaxScanBytes < 0:
		errs = append(errs, "maxScanBytes: must be positive (0 takes the default)")
	case p.MaxSkillMDLines < 0:
		errs = append(errs, "maxSkillMdLines: must be positive (0 takes the default)")
	case p.SimilarityThreshold < 0 || p.SimilarityThreshold > 1:
		errs = append(errs, "similarityThreshold: must be between 0 and 1 (0 takes the default)")
	case p.MaxSimilarSkills < 0:
		errs = append(errs, "maxSimilarSkills: must be positive (0 takes the default)")
	}
	p.levels = levels
	if len(errs) > 0 {
		return fmt.Errorf("safety policy: %s", strings.Join(errs, "; "))
	}
	return nil
}

// knownCode reports whether c is a code of this package or a pattern
// matching at least one.
func knownCode(c string) bool {
	if pre, ok := strings.CutSuffix(c, "*"); ok {
		for k := range defaults {
			if strings.HasPrefix(k, pre) {
				return true
			}
		}
		return false
	}
	_, ok := defaults[c]
	return ok
}

var defaultPolicy = func() *Policy { p := &Policy{}; _ = p.Validate(); return p }()

func (p *Policy) orDefault() *Policy {
	if p == nil {
		return defaultPolicy
	}
	if p.levels == nil {
		q := *p
		_ = q.Validate()
		return &q
	}
	return p
}

// Severity returns the severity the policy gives code, and false when the
// code is off.
func (p *Policy) Severity(code string) (skill.Severity, bool) {
	p = p.orDefault()
	if s, ok := p.levels[code]; ok {
		return s, s != off
	}
	best, bestLen := skill.Severity(""), -1
	for k, s := range p.levels {
		if pre, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(code, pre) && len(pre) > bestLen {
			best, bestLen = s, len(pre)
		}
	}
	if bestLen >= 0 {
		return best, best != off
	}
	s, ok := defaults[code]
	if !ok {
		return skill.Warning, true
	}
	if s == skill.Error {
		// A default error the refuse list leaves out is a warning.
		return skill.Warning, true
	}
	return s, true
}

// Refuses reports whether d must refuse a write or an import: its code is
// refused by the policy and it was not allowed (an allowed finding is
// Info). Diagnostics of other packages never refuse here.
func (p *Policy) Refuses(d skill.Diagnostic) bool {
	if d.Severity != skill.Error {
		return false
	}
	if _, ours := defaults[d.Code]; !ours {
		return false
	}
	s, on := p.Severity(d.Code)
	return on && s == skill.Error
}

// allowed returns the reason an allow entry gives for a finding, if any.
func (p *Policy) allowed(name string, f finding) (string, bool) {
	for _, a := range p.Allow {
		if a.Skill != name || strings.TrimSpace(a.Reason) == "" {
			continue
		}
		if a.Path != "" && a.Path != f.path {
			continue
		}
		if a.Code == f.code {
			return a.Reason, true
		}
		if pre, ok := strings.CutSuffix(a.Code, "*"); ok && strings.HasPrefix(f.code, pre) {
			return a.Reason, true
		}
	}
	return "", false
}

// apply turns findings into diagnostics under the policy.
func (p *Policy) apply(name string, fs []finding) []skill.Diagnostic {
	sortFindings(fs)
	out := make([]skill.Diagnostic, 0, len(fs))
	for _, f := range fs {
		sev, on := p.Severity(f.code)
		if !on {
			continue
		}
		msg := f.msg
		if why, ok := p.allowed(name, f); ok {
			sev, msg = skill.Info, "allowed ("+why+"): "+msg
		}
		out = append(out, skill.Diagnostic{Severity: sev, Code: f.code, Message: msg, Path: f.path, Skill: name, Field: f.field})
	}
	return out
}

func (p *Policy) maxScan() int64 { return positiveOr(p.MaxScanBytes, DefaultMaxScanBytes) }
func (p *Policy) maxLines() int  { return positiveOr(p.MaxSkillMDLines, DefaultMaxSkillMDLines) }
func (p *Policy) threshold() float64 {
	return positiveOr(p.SimilarityThreshold, DefaultSimilarityThreshold)
}
func (p *Policy) maxSimilar() int { return positiveOr(p.MaxSimilarSkills, DefaultMaxSimilarSkills) }

// positiveOr is v when it is set (positive), else d.
func positiveOr[T int | int64 | float64](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}

func itoa(n int) string { return strconv.Itoa(n) }
