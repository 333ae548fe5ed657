package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadout/loadout/service"
)

// WatchService registers the families read from svc at each scrape: the
// catalog's size and generation, the receipt backlog and write errors,
// the UI's sessions and the remote sources' pins. Nothing is counted on
// a request's path for them.
func (m *Metrics) WatchService(svc *service.Service) {
	m.reg.MustRegister(&serviceCollector{svc: svc, now: time.Now})
}

// WatchSessions registers the gauges of what the transports hold open:
// MCP sessions and the UI's live-update streams, read from the funcs at
// each scrape (nil: not registered).
func (m *Metrics) WatchSessions(mcpSessions, liveStreams func() int) {
	if mcpSessions != nil {
		m.GaugeFunc("loadout_mcp_sessions", "Open MCP sessions (streamable HTTP, every endpoint).", func() float64 { return float64(mcpSessions()) })
	}
	if liveStreams != nil {
		m.GaugeFunc("loadout_ui_live_streams", "Open /ui/events live-update streams.", func() float64 { return float64(liveStreams()) })
	}
}

var (
	descSkills       = prometheus.NewDesc("loadout_catalog_skills", "Skills in the global catalog.", nil, nil)
	descAgentSkills  = prometheus.NewDesc("loadout_catalog_agent_skills", "Skills in each agent's loadout.", []string{"agent"}, nil)
	descGeneration   = prometheus.NewDesc("loadout_catalog_generation", "The catalog's generation: it goes up by one at every change (a refresh, a sync that moved a pin, a write).", nil, nil)
	descPending      = prometheus.NewDesc("loadout_receipts_pending", "Receipts waiting to be written to the store (at most 65536; near it while the store fails).", nil, nil)
	descRecorded     = prometheus.NewDesc("loadout_receipts_recorded_total", "Receipts queued since the start.", nil, nil)
	descWriteErrors  = prometheus.NewDesc("loadout_receipt_write_errors_total", "Receipt writes to the store that failed (kept and retried, or rows refused and dropped).", nil, nil)
	descLost         = prometheus.NewDesc("loadout_receipts_lost_total", "Loads and reads whose receipts were dropped (refused by the store, past the pending bound while it failed, or left at exit).", nil, nil)
	descUISessions   = prometheus.NewDesc("loadout_ui_sessions", "Open web UI sessions.", nil, nil)
	descPinAge       = prometheus.NewDesc("loadout_source_pin_age_seconds", "Seconds since each remote source's pin last moved (loadout.lock's synced); absent before its first sync.", []string{"source", "kind"}, nil)
	descSyncFailing  = prometheus.NewDesc("loadout_source_sync_failing", "1 when a remote source's last sync failed (its last good snapshot is served), else 0.", []string{"source", "kind"}, nil)
	descSourceSkills = prometheus.NewDesc("loadout_source_skills", "Skills each remote source serves.", []string{"source", "kind"}, nil)
)

type serviceCollector struct {
	svc *service.Service
	now func() time.Time
}

func (c *serviceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSkills, descAgentSkills, descGeneration, descPending, descRecorded, descWriteErrors, descLost, descUISessions, descPinAge, descSyncFailing, descSourceSkills} {
		ch <- d
	}
}

func (c *serviceCollector) Collect(ch chan<- prometheus.Metric) {
	svc := c.svc
	cat := svc.Catalog()
	ch <- prometheus.MustNewConstMetric(descSkills, prometheus.GaugeValue, float64(len(cat.Global().Names())))
	// Agents are configured; MaxAgentValues guards the label all the same.
	for i, id := range cat.AgentIDs() {
		if i == MaxAgentValues {
			break
		}
		if l, ok := cat.Agent(id); ok {
			ch <- prometheus.MustNewConstMetric(descAgentSkills, prometheus.GaugeValue, float64(len(l.Names())), id)
		}
	}
	ch <- prometheus.MustNewConstMetric(descGeneration, prometheus.GaugeValue, float64(svc.Generation()))
	ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(svc.ReceiptsPending()))
	ch <- prometheus.MustNewConstMetric(descRecorded, prometheus.CounterValue, float64(svc.ReceiptsAdded()))
	ch <- prometheus.MustNewConstMetric(descWriteErrors, prometheus.CounterValue, float64(svc.ReceiptWriteErrors()))
	ch <- prometheus.MustNewConstMetric(descLost, prometheus.CounterValue, float64(svc.ReceiptsLost()))
	ch <- prometheus.MustNewConstMetric(descUISessions, prometheus.GaugeValue, float64(svc.UISessions()))
	now := c.now()
	// Remote sources are configured (their ids are the config's).
	for i, st := range svc.RemoteStatus(context.Background()) {
		if i == MaxAgentValues {
			break
		}
		failing := 0.0
		if st.Error != "" {
			failing = 1
		}
		ch <- prometheus.MustNewConstMetric(descSyncFailing, prometheus.GaugeValue, failing, st.ID, st.Kind)
		ch <- prometheus.MustNewConstMetric(descSourceSkills, prometheus.GaugeValue, float64(st.Skills), st.ID, st.Kind)
		if !st.Synced.IsZero() {
			ch <- prometheus.MustNewConstMetric(descPinAge, prometheus.GaugeValue, now.Sub(st.Synced).Seconds(), st.ID, st.Kind)
		}
	}
}
