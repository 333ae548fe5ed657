package catalog

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
)

// CodeSafetyUnread: a skill's files could not be read for the safety
// checks (it changed or went away since the scan); it is checked again on
// the next call.
const CodeSafetyUnread = "safety-unread"

// safetyCache keeps each skill value's findings, so that a skill that did
// not change is not read again; it holds the current snapshot's skills
// only, and is dropped when the policy changes.
type safetyCache struct {
	mu     sync.Mutex
	policy *safety.Policy
	// checked holds every skill checked (8 bytes a slot), found the
	// findings of those that have some: at 50,000 skills one map of
	// findings for every skill was 2.6 MB of a check's 62 MiB live.
	checked map[*skill.Skill]struct{}
	found   map[*skill.Skill][]skill.Diagnostic
	// files keeps findings by file content: a file shared by several
	// skills, or a skill read again as a new value, is not scanned again.
	files *safety.Cache
	// saved, when set, keeps findings across runs (UseSavedFindings).
	saved *safety.Saved
}

// UseSavedFindings makes Safety take the findings of skills that did not
// change from s, and remember in s those it checks (see safety.Saved);
// the caller saves s when done. Nil stops it.
func (c *Catalog) UseSavedFindings(s *safety.Saved) {
	c.safety.mu.Lock()
	defer c.safety.mu.Unlock()
	c.safety.saved = s
}

// Safety runs the safety and quality checks (package safety) with policy p
// (nil: the default) over the current snapshot: every skill of every
// source once, and each agent's listed skills for descriptions too alike
// and names that look alike. Paths in the findings are the files' own
// (a folder skill's absolute path, store://NAME/PATH for a stored skill).
// Results are cached per skill value, so a reload reads only the skills
// that changed; ctx stops the reading.
func (c *Catalog) Safety(ctx context.Context, p *safety.Policy) []skill.Diagnostic {
	out, _ := c.safetyRun(ctx, p)
	return out
}

// safetyRun is Safety, also returning the findings by skill value of the
// skills that have some (shared with the cache: read only). The findings
// are returned after the heads (their elements first, in order, then the
// findings in their order), in one new slice.
func (c *Catalog) safetyRun(ctx context.Context, p *safety.Policy, heads ...[]skill.Diagnostic) ([]skill.Diagnostic, map[*skill.Skill][]skill.Diagnostic) {
	snap := c.snap.Load()
	c.safety.mu.Lock()
	defer c.safety.mu.Unlock()
	if c.safety.policy != p || c.safety.files == nil {
		c.safety.policy, c.safety.checked, c.safety.found = p, nil, nil
		c.safety.files = safety.NewCache()
	}
	// The first check of a catalog (all of a one-shot `loadout check`)
	// finds nothing in the cache, so it fills none: the cache serves the
	// re-checks of a long-lived catalog, whose new skill values are often
	// the same bytes.
	files := c.safety.files
	if c.safety.checked == nil {
		files = nil
	}
	// Each agent's listed names and descriptions first: what that pass
	// holds (a list of every listed skill, and a map of their names'
	// skeletons) is dropped before the per-skill checks make theirs, so a
	// check of 50,000 skills never holds both.
	var similar []skill.Diagnostic
	for _, l := range snap.order {
		ins := make([]safety.Listed, 0, len(l.entries))
		for _, e := range l.entries {
			if e.Listed && !e.Skill.Hidden() {
				ins = append(ins, safety.Listed{Name: e.Skill.Name, Description: e.Skill.Description})
			}
		}
		for _, d := range safety.SimilarListed(ins, p) {
			d.Agent = l.Spec.AgentID
			similar = append(similar, d)
		}
	}
	oldChecked, oldFound := c.safety.checked, c.safety.found
	n := 0
	for _, res := range snap.results {
		n += len(res.Skills)
	}
	checked := make(map[*skill.Skill]struct{}, n)
	found := map[*skill.Skill][]skill.Diagnostic{}
	todo := make([]*skill.Skill, 0, n)
	for _, res := range snap.results {
		for _, sk := range res.Skills {
			if _, seen := checked[sk]; seen {
				continue
			}
			checked[sk] = struct{}{}
			if _, ok := oldChecked[sk]; ok {
				if d := oldFound[sk]; d != nil {
					found[sk] = d
				}
				continue
			}
			todo = append(todo, sk)
		}
	}
	sctx, end := startScan(ctx, len(todo))
	checkAll(sctx, todo, p, files, c.safety.saved, func(i int, ds []skill.Diagnostic) { found[todo[i]] = ds })
	end(nil)
	var unread []skill.Diagnostic
	for _, sk := range todo {
		// A skill that could not be read, or (when ctx stopped the
		// checks) that may not have been, is read again next time; its
		// findings are reported this time.
		ds, has := found[sk]
		if has && ds[0].Code == CodeSafetyUnread || ctx.Err() != nil && !has {
			delete(checked, sk)
			delete(found, sk)
			unread = append(unread, ds...)
		}
	}
	if c.opt.Once {
		// Nothing is checked again: the set of skills checked (1.1 MB at
		// 50,000) is not kept for the next snapshot, which never comes.
		checked = nil
		if c.opt.ReleaseFiles {
			// The checks were the manifests' last reader (see
			// Options.ReleaseFiles), and their workers are done.
			for _, sk := range todo {
				sk.Files = nil
			}
		}
	}
	c.safety.checked, c.safety.found = checked, found
	// The heads and the findings in one slice of the final size: growing
	// it by appends, then copying it after the heads (Report), held up to
	// three copies of every finding at once (7 MB each at 50,000
	// findings), and a copy of the heads made to put before them was
	// 3.5 MB more at 50,000 diagnostics.
	total := len(unread) + len(similar)
	for _, ds := range found {
		total += len(ds)
	}
	for _, h := range heads {
		total += len(h)
	}
	out := make([]skill.Diagnostic, 0, total)
	for _, h := range heads {
		out = append(out, h...)
	}
	at := len(out)
	out = append(out, unread...)
	for _, ds := range found {
		out = append(out, ds...)
	}
	out = append(out, similar...)
	// One order, whatever the map's: by path, then code. Every field
	// breaks ties, so an unstable sort gives that one order (a stable one
	// moved 10,000 findings around for a third of the report's time).
	sorted := out[at:]
	slices.SortFunc(sorted, diagOrder)
	// A skill's findings are then held once, as a part of out, when they
	// are found there in their order, as they mostly are (they share the
	// skill folder's path): they were held twice, in out and in found
	// (3.4 MB at 50,000 findings, at the peak of loadout check). The part
	// is capped, so an append to it copies.
	for sk, ds := range found {
		k, _ := slices.BinarySearchFunc(sorted, ds[0], diagOrder)
		if k+len(ds) <= len(sorted) && slices.Equal(sorted[k:k+len(ds)], ds) {
			found[sk] = sorted[k : k+len(ds) : k+len(ds)]
		}
	}
	return out, found
}

// diagOrder is the order of the findings in a report: by agent, path,
// code, then every other field, so that it is one order.
func diagOrder(a, b skill.Diagnostic) int {
	return cmp.Or(strings.Compare(a.Agent, b.Agent), strings.Compare(a.Path, b.Path), strings.Compare(a.Code, b.Code), strings.Compare(a.Message, b.Message),
		strings.Compare(a.Skill, b.Skill), strings.Compare(a.Field, b.Field), cmp.Compare(a.Severity, b.Severity),
		strings.Compare(a.Winner, b.Winner), strings.Compare(a.Loser, b.Loser))
}

// checkAll is checkSkill of each skill, on every core (each is
// independent; twice the cores, as reading the files waits on the disk),
// calling found, one call at a time, with each skill's findings when it
// has some (most have none: a slice of every skill's was 1.2 MB of a
// check at 50,000). When ctx stops, the skills not yet begun are left
// unchecked.
func checkAll(ctx context.Context, sks []*skill.Skill, p *safety.Policy, files *safety.Cache, saved *safety.Saved, found func(i int, ds []skill.Diagnostic)) {
	var mu sync.Mutex
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(2*runtime.GOMAXPROCS(0), len(sks)) {
		wg.Go(func() {
			var buf []byte // the files of one skill at a time
			var kept texts
			for i := range work {
				var ds []skill.Diagnostic
				ds, buf = checkSkill(sks[i], p, files, saved, buf[:0], &kept)
				if len(ds) > 0 {
					mu.Lock()
					found(i, ds)
					mu.Unlock()
				}
				if cap(buf) > maxSafetyBuffer {
					buf = nil
				}
			}
		})
	}
	for i := range sks {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
}

// maxSafetyBuffer bounds the read buffer a safety worker keeps for the
// next skill: one skill of large files does not pin its size.
const maxSafetyBuffer = 4 << 20

// checkSkill is safety.Check of one skill, its paths made the files' own.
// The skill's files are read into buf, which is returned for the next;
// the diagnostics hold nothing of it.
func checkSkill(sk *skill.Skill, p *safety.Policy, files *safety.Cache, saved *safety.Saved, buf []byte, kept *texts) ([]skill.Diagnostic, []byte) {
	ds, buf, err := safety.CheckSkill(sk, p, files, saved, buf)
	if err != nil {
		return []skill.Diagnostic{{Severity: skill.Warning, Code: CodeSafetyUnread, Skill: sk.Name, Path: sk.Location,
			Message: fmt.Sprintf("skill %q could not be read for the safety checks (%v); they run again on the next check", sk.Name, err)}}, buf
	}
	for i := range ds {
		ds[i].Skill = sk.Name
		ds[i].Path = skillPath(sk, ds[i].Path)
		ds[i].Message, ds[i].Field = kept.clone(ds[i].Message), kept.clone(ds[i].Field)
	}
	return ds, buf
}

// skillPath is the path of a skill's file rel as people find it.
func skillPath(sk *skill.Skill, rel string) string {
	if rel == "" {
		rel = sk.Entry
	}
	virtual := strings.Contains(sk.Dir, "://")
	if rel == sk.Entry && isLocation(sk, virtual) {
		// The skill's own string: a new one per finding was 1.4 MB of a
		// check of 50,000 skills with a finding each.
		return sk.Location
	}
	if virtual {
		return sk.Dir + "/" + path.Clean(rel)
	}
	return filepath.Join(sk.Dir, filepath.FromSlash(rel))
}

// isLocation reports whether sk.Location is the path skillPath makes of
// sk.Entry: Dir, a separator ("/" when virtual) and Entry, Dir clean
// and not the root (Join("/", "SKILL.md") has one slash).
func isLocation(sk *skill.Skill, virtual bool) bool {
	sep := byte(filepath.Separator)
	if virtual {
		sep = '/'
	}
	l, d := sk.Location, sk.Dir
	return len(l) == len(d)+1+len(sk.Entry) && d != "" && d[len(d)-1] != sep && strings.HasPrefix(l, d) && l[len(d)] == sep && strings.HasSuffix(l, sk.Entry) &&
		sk.Entry == path.Clean(sk.Entry) && (virtual || filepath.Clean(d) == d)
}

// texts keeps one copy of each text it clones, for findings that many
// skills repeat word for word (a link to the same missing file, on the
// same line): at 50,000 skills with a finding each, a copy per finding
// was 3 MB. It keeps at most textsMax texts of at most textsLen bytes;
// others are copied. A nil *texts copies every text.
type texts map[string]string

const (
	textsMax = 4096
	textsLen = 256
)

// clone returns a copy of s that does not share its memory (s may be in
// a buffer that is reused).
func (t *texts) clone(s string) string {
	if t == nil || s == "" || len(s) > textsLen {
		return strings.Clone(s)
	}
	if v, ok := (*t)[s]; ok {
		return v
	}
	v := strings.Clone(s)
	if len(*t) < textsMax {
		if *t == nil {
			*t = texts{}
		}
		(*t)[v] = v
	}
	return v
}
