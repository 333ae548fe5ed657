package service

import (
	"context"
	"fmt"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// Writes go to the store, need the author role for the skill, and reload the catalog
// before they return, so the next read sees them. Folder and plugin skills
// are read-only: a write to a name whose skill lives there is refused with
// the reason, unless the store already holds a skill of that name.

// newTags are the tags of the document about to be written (nil when the
// write does not replace SKILL.md).
func (s *Service) writable(ctx context.Context, p Principal, name string, newTags []string, creating bool) error {
	if err := s.mayWrite(ctx, p, name, newTags, newTags != nil || creating); err != nil {
		return err
	}
	if s.opt.Store == nil {
		return errorf(CodeNoStore, "this server has no store: start it with --db or set \"store\" in the config")
	}
	if _, err := s.opt.Store.Get(ctx, name); err == nil {
		return nil
	}
	if e, ok := s.cat.Global().Lookup(name); ok && e.Skill.Origin.Kind != "store" && !creating {
		return readOnly(e.Skill)
	}
	return nil
}

func readOnly(sk *skill.Skill) *Error {
	switch sk.Origin.Kind {
	case "plugin":
		return &Error{Code: CodeReadOnly, Message: fmt.Sprintf("skill %q is contributed by plugin %s (%s) and is read-only: change the plugin, or disable it with 'loadout disable plugin:%s/%s'", sk.Name, sk.Origin.Plugin, sk.Origin.Trust, sk.Origin.Plugin, sk.Name)}
	case "git", "index", "oci":
		return &Error{Code: CodeReadOnly, Message: fmt.Sprintf("skill %q comes from the remote source %s and is read-only here: change it there and run `loadout sync` (or POST /v1/sources/{id}/sync), or copy it into the store with `loadout import remote:ID/%s`", sk.Name, sk.Origin.RemoteText(), sk.Name), Path: sk.Location}
	default:
		return &Error{Code: CodeReadOnly, Message: fmt.Sprintf("skill %q is a folder skill at %s and is read-only here: edit its files on disk (changes are picked up live)", sk.Name, sk.Dir), Path: sk.Location}
	}
}

// mayWrite checks that p is an author (or higher) of the skill called
// name: of its current tags when it exists, and of the new document's
// (hasNew) too, so a tag-limited author can neither take over a skill by
// tagging it nor create one outside the tag.
func (s *Service) mayWrite(ctx context.Context, p Principal, name string, newTags []string, hasNew bool) error {
	if p.Allows(RoleAuthor, name, nil) {
		return nil
	}
	if name == "" || !p.tagLimited(RoleAuthor) {
		return NeedsRole(p, RoleAuthor, name)
	}
	old, exists := s.skillTagsOK(context.WithoutCancel(ctx), name)
	switch {
	case exists && !p.Allows(RoleAuthor, name, old),
		hasNew && !p.Allows(RoleAuthor, name, newTags),
		!exists && !hasNew:
		return NeedsRole(p, RoleAuthor, name)
	}
	return nil
}

// Get returns a stored skill's record, or a read-only description of a
// folder or plugin skill (a viewer of the skill).
func (s *Service) Get(ctx context.Context, p Principal, name string) (*store.Record, error) {
	if err := s.RequireRole(ctx, p, RoleViewer, name); err != nil {
		return nil, err
	}
	if s.opt.Store == nil {
		return nil, errorf(CodeNotFound, "no stored skill %q (this server has no store)", name)
	}
	rec, err := s.opt.Store.Get(ctx, name)
	return rec, AsErrorOrNil(err)
}

// Put creates (ifVersion 0) or updates a stored skill.
func (s *Service) Put(ctx context.Context, p Principal, b *skill.Bundle, ifVersion int, source, provenance string) (*store.Record, error) {
	doc, _, err := b.Check(s.opt.Limits)
	if err != nil {
		return nil, AsError(err)
	}
	tags := doc.Tags
	if tags == nil {
		tags = []string{}
	}
	if err := s.writable(ctx, p, doc.Name, tags, ifVersion == 0); err != nil {
		return nil, err
	}
	actx, done := s.audited(s.draft(ctx, p), p, store.AuditRecord{Action: "skill.save", Target: skillTarget(doc.Name), Detail: provenance})
	rec, err := s.opt.Store.Put(actx, b, store.PutOptions{IfVersion: ifVersion, Source: source, Provenance: provenance, Limits: s.opt.Limits})
	done(err)
	return s.after(ctx, "put "+doc.Name, doc.Name, rec, err)
}

// PutFile adds or replaces one file of a stored skill.
func (s *Service) PutFile(ctx context.Context, p Principal, name, path string, data []byte, executable bool, ifVersion int) (*store.Record, error) {
	// A new SKILL.md brings new tags, which a tag-limited author's limit
	// must cover too (see mayWrite); a text that does not parse is
	// refused by the store anyway.
	var newTags []string
	if path == "SKILL.md" || path == "skill.md" {
		newTags = []string{}
		if doc, _, ok := skill.Parse(data, path, name); ok && doc != nil && doc.Tags != nil {
			newTags = doc.Tags
		}
	}
	if err := s.writable(ctx, p, name, newTags, false); err != nil {
		return nil, err
	}
	actx, done := s.audited(s.draft(ctx, p), p, store.AuditRecord{Action: "skill.file.put", Target: skillTarget(name), Detail: path})
	rec, err := s.opt.Store.PutFile(actx, name, path, data, executable, ifVersion)
	done(err)
	return s.after(ctx, "put file "+name+"/"+path, name, rec, err)
}

// DeleteFile removes one file of a stored skill.
func (s *Service) DeleteFile(ctx context.Context, p Principal, name, path string, ifVersion int) (*store.Record, error) {
	if err := s.writable(ctx, p, name, nil, false); err != nil {
		return nil, err
	}
	actx, done := s.audited(s.draft(ctx, p), p, store.AuditRecord{Action: "skill.file.delete", Target: skillTarget(name), Detail: path})
	rec, err := s.opt.Store.DeleteFile(actx, name, path, ifVersion)
	done(err)
	return s.after(ctx, "delete file "+name+"/"+path, name, rec, err)
}

// Delete removes a stored skill and its versions.
func (s *Service) Delete(ctx context.Context, p Principal, name string, ifVersion int) error {
	if err := s.writable(ctx, p, name, nil, false); err != nil {
		return err
	}
	actx, done := s.audited(ctx, p, store.AuditRecord{Action: "skill.delete", Target: skillTarget(name)})
	err := s.opt.Store.Delete(actx, name, ifVersion)
	done(err)
	_, err = s.after(ctx, "delete "+name, name, nil, err)
	return err
}

// Restore makes an earlier version current, as a new version.
func (s *Service) Restore(ctx context.Context, p Principal, name string, version, ifVersion int) (*store.Record, error) {
	if err := s.writable(ctx, p, name, nil, false); err != nil {
		return nil, err
	}
	actx, done := s.audited(s.draft(ctx, p), p, store.AuditRecord{Action: "skill.restore", Target: skillTarget(name), Detail: fmt.Sprintf("version %d", version)})
	rec, err := s.opt.Store.Restore(actx, name, version, ifVersion)
	done(err)
	return s.after(ctx, "restore "+name, name, rec, err)
}

// ImportOptions qualify an Import.
type ImportOptions struct {
	// Partial writes the accepted items even when others are refused. By
	// default an import is all or nothing: one refused item keeps every
	// item from being written (they are reported "skipped").
	Partial bool
}

// Import writes many skills in one transaction: all of them, or none when
// any is refused (unless opt.Partial).
//
// A limited author may import only skills within its limit: one item
// outside it refuses the whole import (403 naming the skill), before
// anything is written.
func (s *Service) Import(ctx context.Context, p Principal, items []store.ImportItem, opt ImportOptions) ([]store.ImportResult, error) {
	if !p.HoldsAnywhere(RoleAuthor) {
		return nil, NeedsRoleSome(p, RoleAuthor)
	}
	if !p.Allows(RoleAuthor, "", nil) {
		for _, it := range items {
			if it.Err != nil || it.Bundle == nil {
				continue // refused by the store anyway
			}
			doc, _, err := it.Bundle.Check(s.opt.Limits)
			if err != nil || doc == nil {
				continue
			}
			tags := doc.Tags
			if tags == nil {
				tags = []string{}
			}
			if err := s.mayWrite(ctx, p, doc.Name, tags, true); err != nil {
				return nil, err
			}
		}
	}
	if s.opt.Store == nil {
		return nil, errorf(CodeNoStore, "this server has no store")
	}
	for i := range items {
		if items[i].Limits == (skill.Limits{}) {
			items[i].Limits = s.opt.Limits
		}
	}
	var res []store.ImportResult
	var err error
	if opt.Partial {
		res, err = store.ImportPartial(s.draft(ctx, p), s.opt.Store, items)
	} else {
		res, err = s.opt.Store.Import(s.draft(ctx, p), items)
	}
	if err != nil {
		return nil, AsError(err)
	}
	// One record for the import, after it: a partial import is several
	// transactions. It names what was written.
	var wrote []string
	for _, r := range res {
		if r.Action == store.ActionCreated || r.Action == store.ActionUpdated {
			wrote = append(wrote, r.Name)
		}
	}
	if len(wrote) > 0 {
		s.audit(ctx, p, store.AuditRecord{Action: "import", Target: "store", Detail: fmt.Sprintf("%d %s: %s", len(wrote), plural(len(wrote), "skill", "skills"), listText(wrote))})
	}
	s.Refresh(ctx, nil, "import")
	return res, nil
}

// Versions lists a stored skill's versions.
func (s *Service) Versions(ctx context.Context, p Principal, name string) ([]store.Version, error) {
	if err := s.RequireRole(ctx, p, RoleViewer, name); err != nil {
		return nil, err
	}
	if s.opt.Store == nil {
		return nil, errorf(CodeNotFound, "no stored skill %q (this server has no store)", name)
	}
	vs, err := s.opt.Store.Versions(ctx, name)
	return vs, AsErrorOrNil(err)
}

// Bundle returns a stored skill's bytes at a version (0: current).
func (s *Service) Bundle(ctx context.Context, p Principal, name string, version int) (*skill.Bundle, *store.Record, error) {
	if err := s.RequireRole(ctx, p, RoleViewer, name); err != nil {
		return nil, nil, err
	}
	if s.opt.Store == nil {
		return nil, nil, errorf(CodeNotFound, "no stored skill %q", name)
	}
	b, rec, err := s.opt.Store.Bundle(ctx, name, version)
	return b, rec, AsErrorOrNil(err)
}

// after a write: the error as the service's, or the catalog brought up to
// date with the skill written (and only it), before the write returns.
func (s *Service) after(ctx context.Context, what, name string, rec *store.Record, err error) (*store.Record, error) {
	if err != nil {
		return nil, AsError(err)
	}
	names := []string{name}
	if rec != nil && rec.Name != name {
		names = append(names, rec.Name)
	}
	s.RefreshStored(ctx, what, names...)
	return rec, nil
}
