package service

import (
	"context"
	"maps"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/store"
)

// ListingOptions tune the usage ranking of listings: which skills keep
// their descriptions, after the pinned ones, when a listing does not fit
// its budget. Zero fields take the defaults.
type ListingOptions struct {
	// UsageDays is the window of activations counted (default 30).
	UsageDays int
	// Refresh is how often the counts are read again (default 24h). They
	// are also read when the service starts and on every Rescan or
	// Reconfigure (a reload), never per request: between those times the
	// prompt of an unchanged catalog is byte-identical, which is what LLM
	// providers' prompt caches need.
	Refresh time.Duration
	// Replan is how long a listing's plan is kept (default 24h): until
	// then, skills added, edited or removed are written after its text
	// and new usage counts change nothing, so that prompt caches keep it
	// (see Service.Prompt). The first render after it plans afresh, with
	// the usage counts of the time.
	Replan time.Duration
}

// Listing defaults and bounds.
const (
	DefaultUsageDays      = 30
	DefaultListingRefresh = 24 * time.Hour
	DefaultListingReplan  = 24 * time.Hour
	// MaxUsageRows bounds the rows one recompute reads (one per agent,
	// skill and outcome over the window; the store's own cap on a Usage
	// query). Skills beyond it rank as unused.
	MaxUsageRows = 100_000
)

func (o ListingOptions) withDefaults() ListingOptions {
	if o.UsageDays <= 0 {
		o.UsageDays = DefaultUsageDays
	}
	if o.Refresh <= 0 {
		o.Refresh = DefaultListingRefresh
	}
	if o.Replan <= 0 {
		o.Replan = DefaultListingReplan
	}
	return o
}

// usageSnapshot is the activation counts the listings use until the next
// recompute. It is never modified once stored.
type usageSnapshot struct {
	byAgent map[string]map[string]int // agent -> skill -> successful loads
	all     map[string]int            // summed over agents (the global view)
	gen     uint64                    // bumped when the counts change
	at      time.Time
}

// UsageCounts returns, for each skill name, how many times the agent
// loaded it successfully over the usage window, as of the last recompute
// (the global view, catalog.GlobalID, sums every agent). The map is shared:
// do not modify it.
func (s *Service) UsageCounts(agent string) map[string]int {
	u := s.usage.Load()
	if u == nil {
		return nil
	}
	if agent == catalog.GlobalID || agent == "" {
		return u.all
	}
	return u.byAgent[agent]
}

// UsageGeneration changes whenever a recompute changed the counts, so
// a cache of rendered prompts keyed by it (and the loadout) stays correct.
func (s *Service) UsageGeneration() uint64 {
	if u := s.usage.Load(); u != nil {
		return u.gen
	}
	return 0
}

// PromptOptions returns opt with the agent's usage snapshot as its Usage
// (unless opt.Usage is set): what every transport (HTTP, MCP instructions)
// passes to Loadout.Prompt, so all of them rank the listing the same way.
func (s *Service) PromptOptions(agent string, opt catalog.PromptOptions) catalog.PromptOptions {
	if opt.Usage == nil {
		opt.Usage = s.UsageCounts(agent)
	}
	return opt
}

// SetListing changes the listing options (a reloaded config file) and
// recomputes the counts with them.
func (s *Service) SetListing(ctx context.Context, o ListingOptions) {
	s.listMu.Lock()
	s.opt.Listing = o
	s.listMu.Unlock()
	s.RefreshUsage(ctx)
}

// RefreshUsage reads the activation counts again (pending receipts are
// written first) and swaps them in. On an error the counts in use are
// kept and the error is logged and returned. The server calls it at
// start, on reloads and on the Refresh schedule; tests call it directly.
func (s *Service) RefreshUsage(ctx context.Context) error {
	s.listMu.Lock()
	defer s.listMu.Unlock()
	o := s.opt.Listing.withDefaults()
	now := time.Now().UTC()
	q := store.UsageQuery{Since: now.AddDate(0, 0, -(o.UsageDays - 1)), Limit: MaxUsageRows}
	var rows []store.Usage
	var err error
	s.rcpt.flush() // a failure is logged; the counts are what the store holds
	if s.opt.Server == nil {
		rows = s.rcpt.usage(q)
	} else {
		rows, err = s.opt.Server.Usage(ctx, q)
	}
	if err != nil {
		s.log.Warn("listing: could not read the usage counts; the ones in use are kept", "err", err)
		return AsError(err)
	}
	next := &usageSnapshot{at: now}
	next.byAgent, next.all = countLoads(rows)
	prev := s.usage.Load()
	if prev != nil {
		next.gen = prev.gen
		if maps.Equal(prev.all, next.all) && maps.EqualFunc(prev.byAgent, next.byAgent, func(a, b map[string]int) bool { return maps.Equal(a, b) }) {
			return nil // unchanged: keep the snapshot (and its generation)
		}
	}
	next.gen++
	s.usage.Store(next)
	s.log.Info("listing: usage counts recomputed", "days", o.UsageDays, "rows", len(rows), "agents", len(next.byAgent))
	return nil
}

// usageLoop recomputes the counts every Refresh until stop is closed.
func (s *Service) usageLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		s.listMu.Lock()
		every := s.opt.Listing.withDefaults().Refresh
		s.listMu.Unlock()
		t := time.NewTimer(every)
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
			s.RefreshUsage(context.Background())
		}
	}
}

// countLoads sums the successful loads in usage rows per agent and skill,
// and per skill over every agent.
func countLoads(rows []store.Usage) (byAgent map[string]map[string]int, all map[string]int) {
	byAgent, all = map[string]map[string]int{}, map[string]int{}
	for _, r := range rows {
		if r.Action != "load" || r.Outcome != "ok" || r.Skill == "" {
			continue
		}
		m := byAgent[r.Agent]
		if m == nil {
			m = map[string]int{}
			byAgent[r.Agent] = m
		}
		m[r.Skill] += int(r.Count)
		all[r.Skill] += int(r.Count)
	}
	return byAgent, all
}

// UsageOf is the counts UsageCounts gives for agent, from usage rows read
// once (`loadout prompt` has no running service).
func UsageOf(rows []store.Usage, agent string) map[string]int {
	byAgent, all := countLoads(rows)
	if agent == catalog.GlobalID || agent == "" {
		return all
	}
	return byAgent[agent]
}
