package webui

import (
	"cmp"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
)

// The Usage tab: which agents loaded this skill and which of its files
// they read, over the last UsageDays days: a bar chart per day (inline
// SVG drawn here, coloured by app.css classes, so nothing is fetched and
// nothing inline runs), the agents' totals, the files read, and the most
// recent receipts.

// Bounds of the Usage tab.
const (
	// UsageDays is how many days the chart and the totals cover.
	UsageDays = 30
	// usageReceiptLimit is the most raw receipts read for the files table
	// and the recent list.
	usageReceiptLimit = 2000
	// recentShown is how many recent receipts the table lists.
	recentShown = 50
)

type usageData struct {
	Name    string
	Err     string
	Days    int
	Chart   template.HTML
	Agents  []agentUse
	Files   []fileUse
	Recent  []store.Receipt
	Total   int64
	RawNote string
}

type agentUse struct {
	Agent                  string
	Loads, Reads, Refusals int64
}

type fileUse struct {
	Agent, Path string
	Count       int
	Last        time.Time
}

// dayCount is one day's bar.
type dayCount struct {
	Day          time.Time
	Loads, Reads int64
}

func (u *ui) tabUsage(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	p := principal(r)
	d := &usageData{Name: sp.Name, Days: UsageDays}
	if !canRead(p) {
		d.Err = "Receipts are shown to viewers and up only: sign in with a role token (viewer, author, reviewer or admin) to see who loaded this skill."
		return u.tabFragment(w, r, "frag_usage.html", d)
	}
	now := time.Now().UTC()
	first := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -(UsageDays - 1))
	daily, err := u.svc.Usage(r.Context(), p, store.UsageQuery{Skill: sp.Name, Since: first, Daily: true, Limit: usageRowLimit})
	if err != nil {
		d.Err = service.AsError(err).Message
		return u.tabFragment(w, r, "frag_usage.html", d)
	}
	days := make([]dayCount, UsageDays)
	for i := range days {
		days[i].Day = first.AddDate(0, 0, i)
	}
	byAgent := map[string]*agentUse{}
	for _, x := range daily {
		a := byAgent[x.Agent]
		if a == nil {
			a = &agentUse{Agent: x.Agent}
			byAgent[x.Agent] = a
		}
		i := int(x.Day.Sub(first) / (24 * time.Hour))
		ok := x.Outcome == catalog.StatusOK
		switch {
		case !ok:
			a.Refusals += x.Count
		case x.Action == "load":
			a.Loads += x.Count
			if i >= 0 && i < len(days) {
				days[i].Loads += x.Count
			}
		default:
			a.Reads += x.Count
			if i >= 0 && i < len(days) {
				days[i].Reads += x.Count
			}
		}
		d.Total += x.Count
	}
	for _, a := range byAgent {
		d.Agents = append(d.Agents, *a)
	}
	slices.SortFunc(d.Agents, func(a, b agentUse) int {
		if c := cmp.Compare(b.Loads+b.Reads, a.Loads+a.Reads); c != 0 {
			return c
		}
		return strings.Compare(a.Agent, b.Agent)
	})
	d.Chart = usageChart(days)

	rcpts, err := u.svc.Receipts(r.Context(), p, store.ReceiptQuery{Skill: sp.Name, Since: first, Limit: usageReceiptLimit})
	if err != nil {
		d.Err = service.AsError(err).Message
		return u.tabFragment(w, r, "frag_usage.html", d)
	}
	files := map[[2]string]*fileUse{}
	for _, x := range rcpts { // newest first
		if x.Action != "read" || x.Outcome != catalog.StatusOK {
			continue
		}
		k := [2]string{x.Agent, x.Path}
		f := files[k]
		if f == nil {
			f = &fileUse{Agent: x.Agent, Path: x.Path, Last: x.Time}
			files[k] = f
		}
		f.Count += int(max(x.Count, 1))
	}
	for _, f := range files {
		d.Files = append(d.Files, *f)
	}
	slices.SortFunc(d.Files, func(a, b fileUse) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Agent+"\x00"+a.Path, b.Agent+"\x00"+b.Path)
	})
	d.Recent = rcpts[:min(len(rcpts), recentShown)]
	if len(rcpts) == usageReceiptLimit {
		d.RawNote = fmt.Sprintf("The files table counts the latest %d receipts only.", usageReceiptLimit)
	}
	return u.tabFragment(w, r, "frag_usage.html", d)
}

// Chart geometry. The chart is as wide as its box at any screen width:
// the bars are drawn in an inner SVG stretched to the full width (its
// units are slotW per day, preserveAspectRatio none), and the text sits in
// the outer SVG at percentages of its width, in CSS pixels, so labels keep
// their size and the last one ends at the right edge rather than past it.
const (
	chartH     = 170 // pixels: the whole chart
	chartPlotT = 14  // the plot's top (room for the top axis label)
	chartPlotH = 132 // the plot's height
	chartSlotW = 10  // inner units per day; a bar is 7 of them
)

// usageChart draws the days as stacked bars (loads, then reads) in an
// inline SVG with a title and a description, each bar with its own title.
// Colours come from app.css (classes), never from style attributes.
func usageChart(days []dayCount) template.HTML {
	var peak int64
	for _, d := range days {
		peak = max(peak, d.Loads+d.Reads)
	}
	scale := niceCeil(peak)
	n := len(days)
	plotH := float64(chartPlotH)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" width="100%%" height="%d" role="img" aria-labelledby="chart-title chart-desc">`, chartH)
	var total int64
	for _, d := range days {
		total += d.Loads + d.Reads
	}
	fmt.Fprintf(&b, `<title id="chart-title">Loads and file reads per day, last %d days</title>`, n)
	fmt.Fprintf(&b, `<desc id="chart-desc">%d in all; the busiest day had %d.</desc>`, total, peak)
	fmt.Fprintf(&b, `<svg class="plot" x="0" y="%d" width="100%%" height="%d" viewBox="0 0 %d %d" preserveAspectRatio="none">`, chartPlotT, chartPlotH, n*chartSlotW, chartPlotH)
	for _, f := range []float64{0, 0.5, 1} {
		y := plotH * (1 - f)
		fmt.Fprintf(&b, `<line class="grid" x1="0" x2="%d" y1="%.1f" y2="%.1f" vector-effect="non-scaling-stroke"/>`, n*chartSlotW, y, y)
	}
	const barW = chartSlotW * 0.7
	for i, d := range days {
		x := float64(i*chartSlotW) + (chartSlotW-barW)/2
		label := fmt.Sprintf("%s: %s, %s", d.Day.Format("Jan 2"), count(d.Loads, "load", "loads"), count(d.Reads, "file read", "file reads"))
		fmt.Fprintf(&b, `<g><title>%s</title>`, template.HTMLEscapeString(label))
		hl := plotH * float64(d.Loads) / float64(scale)
		hr := plotH * float64(d.Reads) / float64(scale)
		if d.Loads > 0 {
			fmt.Fprintf(&b, `<rect class="bar-load" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, x, plotH-hl, barW, hl)
		}
		if d.Reads > 0 {
			fmt.Fprintf(&b, `<rect class="bar-read" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, x, plotH-hl-hr, barW, hr)
		}
		if d.Loads+d.Reads == 0 {
			fmt.Fprintf(&b, `<rect class="bar-none" x="%.1f" y="%.1f" width="%.1f" height="1"/>`, x, plotH-1, barW)
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	// The axis' values above their grid lines, at the left (0 needs none).
	for _, f := range []float64{0.5, 1} {
		if v := float64(scale) * f; v == float64(int64(v)) { // whole numbers only
			fmt.Fprintf(&b, `<text class="axis axis-y" x="2" y="%.1f">%d</text>`, float64(chartPlotT)+plotH*(1-f)-3, int64(v))
		}
	}
	// Today, and every week back; the last label ends at the right edge
	// and one near the left edge starts at it, so none is cut off.
	for i, d := range days {
		if (n-1-i)%7 != 0 {
			continue
		}
		x, anchor := (float64(i)+0.5)*100/float64(n), "middle"
		switch {
		case i == n-1:
			x, anchor = 100, "end"
		case x < 8:
			x, anchor = float64(i)*100/float64(n), "start"
		}
		fmt.Fprintf(&b, `<text class="axis axis-x" x="%.2f%%" y="%d" text-anchor="%s">%s</text>`, x, chartH-4, anchor, d.Day.Format("Jan 2"))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// niceCeil is the axis' top: 1, 2 or 5 times a power of ten, at least n
// (and at least 1).
func niceCeil(n int64) int64 {
	if n <= 1 {
		return 1
	}
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
}
