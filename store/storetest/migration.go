package storetest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// OldSkill is a skill as a database of the schema before drafts and review
// (migrations 0001–0007) holds it.
type OldSkill struct {
	Name     string
	Versions []string // SKILL.md of each version, from 1
	File     string   // a supporting file of the last version, "" for none
	Enabled  bool
}

// OldSkills are the skills OldSchema writes.
var OldSkills = []OldSkill{
	{Name: "alpha", Versions: []string{"one", "two", "three"}, Enabled: true},
	{Name: "beta", Versions: []string{"only"}, File: "notes.md", Enabled: true},
	{Name: "gamma", Versions: []string{"first", "second"}, Enabled: false},
}

func oldContent(name, text string) []byte {
	return []byte(fmt.Sprintf("---\nname: %s\ndescription: Use when %s is needed.\n---\n%s\n", name, name, text))
}

// OldSchema makes in db the schema of migrations 0001 to 0007, read from
// dir (store/sqlstore/migrations/ENGINE), with the rows the store of that
// schema wrote for OldSkills: a database as today's code leaves it,
// which the code under test must then migrate.
func OldSchema(t *testing.T, db *sql.DB, dir string) {
	t.Helper()
	ctx := context.Background()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", strings.SplitN(q, "\n", 2)[0], err)
		}
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`)
	names, err := filepath.Glob(filepath.Join(dir, "000[1-7]_*.sql"))
	if err != nil || len(names) != 7 {
		t.Fatalf("migrations 0001-0007 in %s: %v %v", dir, names, err)
	}
	sort.Strings(names)
	for i, n := range names {
		text, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		exec(string(text))
		exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`, i+1, filepath.Base(n), time.Now().UnixMicro())
	}
	now := time.Now().UnixMicro()
	blobs := map[string]bool{}
	blob := func(data []byte) string {
		h := sha(data)
		if !blobs[h] {
			blobs[h] = true
			exec(`INSERT INTO blobs (sha256, data, size) VALUES ($1, $2, $3)`, h, data, int64(len(data)))
		}
		return h
	}
	for _, sk := range OldSkills {
		id := "id-" + sk.Name
		var b *skill.Bundle
		for i, text := range sk.Versions {
			v := i + 1
			b = &skill.Bundle{Content: oldContent(sk.Name, text)}
			if sk.File != "" && v == len(sk.Versions) {
				b.Files = []skill.BundleFile{{Path: sk.File, Data: []byte("notes of " + sk.Name), ContentType: "text/markdown; charset=utf-8"}}
			}
			size := int64(len(b.Content))
			for _, f := range b.Files {
				size += int64(len(f.Data))
			}
			if v == 1 {
				exec(`INSERT INTO skills (id, name, description, content, is_directory, frontmatter, requires_tools, tags, category, skill_version, enabled, source, provenance, digest, version, size, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
					id, sk.Name, "Use when "+sk.Name+" is needed.", b.Content, false, `{"name":"`+sk.Name+`"}`, `[]`, `[]`, "", "", true, "api", "", b.Digest(), 1, size, now, now)
			} else {
				exec(`UPDATE skills SET content = $1, digest = $2, version = $3, size = $4, is_directory = $5 WHERE id = $6`,
					b.Content, b.Digest(), v, size, len(b.Files) > 0, id)
			}
			exec(`INSERT INTO skill_versions (skill_id, version, content_sha256, digest, size, files, note, source, provenance, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, id, v, blob(b.Content), b.Digest(), size, len(b.Files), "", "api", "", now)
			for _, f := range b.Files {
				exec(`INSERT INTO skill_version_files (skill_id, version, relative_path, blob_sha256, content_type, size, is_binary, executable)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, id, v, f.Path, blob(f.Data), f.ContentType, int64(len(f.Data)), false, false)
				exec(`INSERT INTO skill_files (skill_id, relative_path, content, content_type, size, checksum, is_binary, executable, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, id, f.Path, f.Data, f.ContentType, int64(len(f.Data)), sha(f.Data), false, false, now, now)
			}
		}
		if !sk.Enabled {
			exec(`UPDATE skills SET enabled = $1 WHERE id = $2`, false, id)
		}
	}
}

// CheckMigrated checks a store opened by the code under test on a
// database OldSchema made: every skill's published version is its old
// current version, nothing else changed, no review is pending, and the
// Provider serves what it served before.
func CheckMigrated(t *testing.T, s store.Store) {
	t.Helper()
	recs, err := s.List(ctx)
	if err != nil || len(recs) != len(OldSkills) {
		t.Fatalf("List: %d records, %v", len(recs), err)
	}
	served, diags := store.NewProvider(s).Skills(ctx)
	if len(diags) != 0 {
		t.Errorf("Provider diagnostics: %v", diags)
	}
	byName := map[string]*skill.Skill{}
	for _, sk := range served {
		byName[sk.Name] = sk
	}
	for i, old := range OldSkills {
		rec := recs[i]
		last := len(old.Versions)
		want := oldContent(old.Name, old.Versions[last-1])
		if rec.Name != old.Name || rec.Version != last || rec.Published != last || rec.Withdrawn || rec.Enabled != old.Enabled ||
			string(rec.Content) != string(want) || rec.Digest == "" {
			t.Errorf("%s: version %d published %d withdrawn %v enabled %v content %q", old.Name, rec.Version, rec.Published, rec.Withdrawn, rec.Enabled, rec.Content)
		}
		vs, err := s.Versions(ctx, old.Name)
		if err != nil || len(vs) != last {
			t.Fatalf("%s: versions %v %v", old.Name, vs, err)
		}
		for _, v := range vs {
			data, err := s.ReadFile(ctx, old.Name, v.Version, "SKILL.md")
			if err != nil || string(data) != string(oldContent(old.Name, old.Versions[v.Version-1])) {
				t.Errorf("%s version %d: %q %v", old.Name, v.Version, data, err)
			}
		}
		if old.File != "" {
			if data, err := s.ReadFile(ctx, old.Name, 0, old.File); err != nil || string(data) != "notes of "+old.Name {
				t.Errorf("%s/%s: %q %v", old.Name, old.File, data, err)
			}
		}
		sk := byName[old.Name]
		switch {
		case !old.Enabled && sk != nil:
			t.Errorf("%s: disabled, but served", old.Name)
		case old.Enabled && (sk == nil || sk.OriginValue().Version != last || sk.VersionDigest != rec.Digest):
			t.Errorf("%s: served %v, want version %d", old.Name, sk, last)
		}
	}
	if d, ok := s.(store.Drafts); ok {
		if rs, err := d.Reviews(ctx, store.ReviewFilter{}); err != nil || len(rs) != 0 {
			t.Errorf("reviews after the migration: %v %v", rs, err)
		}
		if ps, err := d.Pins(ctx, ""); err != nil || len(ps) != 0 {
			t.Errorf("pins after the migration: %v %v", ps, err)
		}
	}
	// A save after the migration publishes, as before.
	rec, err := s.Put(ctx, &skill.Bundle{Content: oldContent("alpha", "four")}, store.PutOptions{IfVersion: 3})
	if err != nil || rec.Version != 4 || rec.Published != 4 {
		t.Errorf("a save after the migration: %+v %v", rec, err)
	}
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// MigrationCount is how many migrations (.sql files) dir holds, so that
// a test of the applied migrations need not be edited for each new one.
func MigrationCount(dir string) int {
	es, err := os.ReadDir(dir)
	if err != nil {
		panic(err)
	}
	n := 0
	for _, e := range es {
		if strings.HasSuffix(e.Name(), ".sql") {
			n++
		}
	}
	return n
}
