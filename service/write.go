package service

import (
	"context"
	"fmt"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// Writes go to the store, need an admin token, and reload the catalog
// before they return, so the next read sees them. Folder and plugin skills
// are read-only: a write to a name whose skill lives there is refused with
// the reason, unless the store already holds a skill of that name.

func (s *Service) writable(ctx context.Context, p Principal, name string, creating bool) error {
	if err := s.requireAdmin(p); err != nil {
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
	case "git", "index":
		return &Error{Code: CodeReadOnly, Message: fmt.Sprintf("skill %q comes from the remote source %s and is read-only here: change it there and run `loadout sync` (or POST /v1/sources/{id}/sync), or copy it into the store with `loadout import remote:ID/%s`", sk.Name, sk.Origin.RemoteText(), sk.Name), Path: sk.Location}
	default:
		return &Error{Code: CodeReadOnly, Message: fmt.Sprintf("skill %q is a folder skill at %s and is read-only here: edit its files on disk (changes are picked up live)", sk.Name, sk.Dir), Path: sk.Location}
	}
}

// Get returns a stored skill's record, or a read-only description of a
// folder or plugin skill (admin only).
func (s *Service) Get(ctx context.Context, p Principal, name string) (*store.Record, error) {
	if err := s.requireAdmin(p); err != nil {
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
	if err := s.writable(ctx, p, doc.Name, ifVersion == 0); err != nil {
		return nil, err
	}
	rec, err := s.opt.Store.Put(s.draft(ctx, p), b, store.PutOptions{IfVersion: ifVersion, Source: source, Provenance: provenance, Limits: s.opt.Limits})
	return s.after(ctx, "put "+doc.Name, doc.Name, rec, err)
}

// PutFile adds or replaces one file of a stored skill.
func (s *Service) PutFile(ctx context.Context, p Principal, name, path string, data []byte, executable bool, ifVersion int) (*store.Record, error) {
	if err := s.writable(ctx, p, name, false); err != nil {
		return nil, err
	}
	rec, err := s.opt.Store.PutFile(s.draft(ctx, p), name, path, data, executable, ifVersion)
	return s.after(ctx, "put file "+name+"/"+path, name, rec, err)
}

// DeleteFile removes one file of a stored skill.
func (s *Service) DeleteFile(ctx context.Context, p Principal, name, path string, ifVersion int) (*store.Record, error) {
	if err := s.writable(ctx, p, name, false); err != nil {
		return nil, err
	}
	rec, err := s.opt.Store.DeleteFile(s.draft(ctx, p), name, path, ifVersion)
	return s.after(ctx, "delete file "+name+"/"+path, name, rec, err)
}

// Delete removes a stored skill and its versions.
func (s *Service) Delete(ctx context.Context, p Principal, name string, ifVersion int) error {
	if err := s.writable(ctx, p, name, false); err != nil {
		return err
	}
	err := s.opt.Store.Delete(ctx, name, ifVersion)
	_, err = s.after(ctx, "delete "+name, name, nil, err)
	return err
}

// Restore makes an earlier version current, as a new version.
func (s *Service) Restore(ctx context.Context, p Principal, name string, version, ifVersion int) (*store.Record, error) {
	if err := s.writable(ctx, p, name, false); err != nil {
		return nil, err
	}
	rec, err := s.opt.Store.Restore(s.draft(ctx, p), name, version, ifVersion)
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
func (s *Service) Import(ctx context.Context, p Principal, items []store.ImportItem, opt ImportOptions) ([]store.ImportResult, error) {
	if err := s.requireAdmin(p); err != nil {
		return nil, err
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
	s.Refresh(ctx, nil, "import")
	return res, nil
}

// Versions lists a stored skill's versions.
func (s *Service) Versions(ctx context.Context, p Principal, name string) ([]store.Version, error) {
	if err := s.requireAdmin(p); err != nil {
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
	if err := s.requireAdmin(p); err != nil {
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
