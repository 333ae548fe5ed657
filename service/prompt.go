package service

import (
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/skill"
)

// The bounds on the listing plans the service keeps: one per agent and
// prompt options (format, budgets, preface). Clients choose the options
// of the HTTP prompt route, so without a bound each budget they asked
// for would hold a plan (a plan of 50,000 skills with no budget holds
// 15 MB). Past a bound the least recently used plan goes, and its next
// render plans afresh; the per-agent bound keeps the clients of one
// agent from evicting the plans of the others.
const (
	MaxBases         = 1024
	MaxBasesPerAgent = 16
	MaxBasesBytes    = 64 << 20
)

// baseKey is what one kept listing plan is for.
type baseKey struct {
	agent, format        string
	budget, budgetTokens int
	preface              string
}

type base struct {
	basis   *render.Basis
	bytes   int // basis.Bytes()
	planned time.Time
	used    time.Time
}

// Prompt renders the agent's prompt section as every transport serves
// it: the agent's usage snapshot ranks it (PromptOptions), and the
// listing is kept on the plan of the last render with the same options
// (render.Basis), so that adding, editing or removing skills, or a usage
// refresh, only appends to the text a model's prompt cache holds. The
// plan is made afresh at most every Listing.Replan (default 24h), when
// the options change, or when the changes no longer fit its reserve
// (Report.Replan says why).
func (s *Service) Prompt(l *catalog.Loadout, opt catalog.PromptOptions) (string, render.Report, []skill.Diagnostic) {
	opt = s.PromptOptions(l.Spec.AgentID, opt)
	k := baseKey{agent: l.Spec.AgentID, format: opt.Format, budget: opt.Budget, budgetTokens: opt.BudgetTokens, preface: opt.Preface}
	now := time.Now()
	s.listMu.Lock()
	every := s.opt.Listing.withDefaults().Replan
	s.listMu.Unlock()
	expired := false
	s.basesMu.Lock()
	if b := s.bases[k]; b != nil && opt.Basis == nil {
		if expired = now.Sub(b.planned) >= every; !expired {
			opt.Basis = b.basis
			b.used = now
		}
	}
	s.basesMu.Unlock()
	text, rep, diags := l.Prompt(opt)
	if expired {
		rep.Replan = "the plan was older than listing.replan (" + every.String() + ")"
	}
	if rep.Basis != nil && rep.Basis != opt.Basis {
		s.basesMu.Lock()
		if s.bases == nil {
			s.bases = map[baseKey]*base{}
		}
		if old := s.bases[k]; old != nil {
			s.basesBytes -= old.bytes
			delete(s.bases, k)
		}
		agent := 0
		for key := range s.bases {
			if key.agent == k.agent {
				agent++
			}
		}
		size := rep.Basis.Bytes()
		for len(s.bases) > 0 && (len(s.bases) >= MaxBases || agent >= MaxBasesPerAgent || s.basesBytes+size > MaxBasesBytes) {
			// The least recently used: of this agent when it is at its
			// bound, else of all.
			var oldest baseKey
			var at time.Time
			found := false
			for key, b := range s.bases {
				if agent >= MaxBasesPerAgent && key.agent != k.agent {
					continue
				}
				if !found || b.used.Before(at) {
					oldest, at, found = key, b.used, true
				}
			}
			if oldest.agent == k.agent {
				agent--
			}
			s.basesBytes -= s.bases[oldest].bytes
			delete(s.bases, oldest)
		}
		s.basesBytes += size
		s.bases[k] = &base{basis: rep.Basis, bytes: size, planned: now, used: now}
		s.basesMu.Unlock()
	}
	return text, rep, diags
}

// basesKept counts the listing plans kept (for tests).
func (s *Service) basesKept() int {
	s.basesMu.Lock()
	defer s.basesMu.Unlock()
	return len(s.bases)
}
