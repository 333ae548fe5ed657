package store

import (
	"context"

	"github.com/loadout/loadout/skill"
)

// Location returns the virtual location of a stored skill, "store://<name>".
func Location(name string) string { return "store://" + name }

// Skills turns the enabled stored skills into catalog skills. Each is a
// virtual skill at "store://<name>", with Origin{Kind: "store", Version,
// Provenance: "source: provenance"}, whose files are read through ReadFile
// at the record's version, so the bytes (and digests) a catalog snapshot
// serves never change under it, even after later updates. The body is held
// in memory. Diagnostics are the parser's warnings, named by skill.
func Skills(ctx context.Context, s Store) ([]*skill.Skill, []skill.Diagnostic, error) {
	recs, err := s.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	var out []*skill.Skill
	var diags []skill.Diagnostic
	for _, rec := range recs {
		if !rec.Enabled {
			continue
		}
		sk, ds := SkillOf(s, rec)
		diags = append(diags, ds...)
		if sk != nil {
			out = append(out, sk)
		}
	}
	return out, diags, nil
}

// SkillOf turns one record into a catalog skill, as Skills does. It returns
// nil (and an error diagnostic) when the content no longer parses, which
// Bundle.Check makes impossible for records written by a Store.
func SkillOf(s Store, rec *Record) (*skill.Skill, []skill.Diagnostic) {
	loc := Location(rec.Name)
	doc, ds, ok := skill.Parse(rec.Content, loc+"/SKILL.md", rec.Name)
	for i := range ds {
		ds[i].Skill = rec.Name
	}
	if !ok {
		return nil, ds
	}
	files := make([]skill.File, len(rec.Files))
	copy(files, rec.Files)
	origin := skill.Origin{Kind: "store", Version: rec.Version, Provenance: provenance(rec)}
	sk := skill.NewVirtual(doc, loc, files, origin, versionReader{s: s, name: rec.Name, version: rec.Version})
	sk.VersionDigest = rec.Digest
	sk.KeepBody(doc.Body)
	return sk, ds
}

// provenance is "source: provenance" ("import: deploy.zip"), or whichever
// of the two is set.
func provenance(rec *Record) string {
	switch {
	case rec.Provenance == "":
		return rec.Source
	case rec.Source == "":
		return rec.Provenance
	}
	return rec.Source + ": " + rec.Provenance
}

// versionReader reads one immutable version of a stored skill.
type versionReader struct {
	s       Store
	name    string
	version int
}

func (r versionReader) ReadFile(path string) ([]byte, error) {
	return r.s.ReadFile(context.Background(), r.name, r.version, path)
}
