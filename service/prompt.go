package service

import (
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/skill"
)

// MaxBases bounds the listing plans the service keeps (one per agent and
// prompt options: format, budgets, preface). Past it the least recently
// used goes, and its next render plans afresh. Clients choose the
// options of the HTTP prompt route, so without a bound each budget they
// asked for would hold a plan.
const MaxBases = 1024

// baseKey is what one kept listing plan is for.
type baseKey struct {
	agent, format        string
	budget, budgetTokens int
	preface              string
}

type base struct {
	basis   *render.Basis
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
		if _, ok := s.bases[k]; !ok && len(s.bases) >= MaxBases {
			var oldest baseKey
			var at time.Time
			for key, b := range s.bases {
				if at.IsZero() || b.used.Before(at) {
					oldest, at = key, b.used
				}
			}
			delete(s.bases, oldest)
		}
		s.bases[k] = &base{basis: rep.Basis, planned: now, used: now}
		s.basesMu.Unlock()
	}
	return text, rep, diags
}

// bases counts the listing plans kept (for tests).
func (s *Service) basesKept() int {
	s.basesMu.Lock()
	defer s.basesMu.Unlock()
	return len(s.bases)
}
