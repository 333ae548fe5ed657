package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/loadout/loadout/internal/safefile"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// Plugin is a loaded plugin and the skills it contributes.
type Plugin struct {
	// Manifest is the plugin.json; its Skills are the contributions that
	// passed validation.
	Manifest Manifest
	// Dir is the absolute, symlink-free path of the plugin folder.
	Dir string
	// Skills are the contributed skills that loaded, in manifest order.
	Skills []*Skill
}

// Skill is a skill contributed by a plugin. The embedded *skill.Skill is
// read-only, like every plugin skill; its Origin names the plugin.
type Skill struct {
	*skill.Skill
	// Contribution is the manifest entry the skill came from.
	Contribution Contribution
	// DefaultEnabled is the contribution's defaultEnabled (true if unset).
	DefaultEnabled bool
	// Key is "plugin:<plugin id>/<skill name>", the stable key for
	// per-skill enable and disable overrides.
	Key string
}

// Key returns the override key of a plugin skill: "plugin:<id>/<name>".
func Key(pluginID, skillName string) string { return "plugin:" + pluginID + "/" + skillName }

// LoadAll loads the plugins in dirs, in order. A plugin that cannot be
// loaded is reported and the others still load. When two plugins have the
// same id, the first wins and the second is reported (plugin-duplicate).
func LoadAll(dirs []string) ([]*Plugin, []skill.Diagnostic) {
	var out []*Plugin
	var diags []skill.Diagnostic
	byID := map[string]*Plugin{}
	for _, dir := range dirs {
		p, ds := Load(dir)
		diags = append(diags, ds...)
		if p == nil {
			continue
		}
		if first, dup := byID[p.Manifest.ID]; dup {
			d := skill.Diagnostic{Severity: skill.Error, Code: CodeDuplicate, Path: filepath.Join(p.Dir, ManifestName), Field: "id",
				Message: fmt.Sprintf("plugin id %q is already used by the plugin in %s; this plugin is not loaded: give one of them another id", p.Manifest.ID, first.Dir),
				Winner:  first.Dir, Loser: p.Dir}
			if first.Dir == p.Dir {
				d.Severity = skill.Info
				d.Message = fmt.Sprintf("the plugin folder %s is listed twice; it is loaded once", p.Dir)
			}
			diags = append(diags, d)
			continue
		}
		byID[p.Manifest.ID] = p
		out = append(out, p)
	}
	return out, diags
}

// readManifest reads plugin.json through the shared safe open, so a FIFO
// or device in its place is refused instead of blocking the load.
func readManifest(root *os.Root) ([]byte, error) {
	f, _, err := safefile.OpenIn(root, ManifestName)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Load reads the plugin in folder dir and the skills it contributes. It
// returns nil when plugin.json is missing or unusable; a bad contribution
// is reported and the others still load.
func Load(dir string) (*Plugin, []skill.Diagnostic) {
	fail := func(path, format string, args ...any) (*Plugin, []skill.Diagnostic) {
		return nil, []skill.Diagnostic{{Severity: skill.Error, Code: CodeManifest, Path: path, Message: fmt.Sprintf(format, args...)}}
	}
	abs, err := filepath.Abs(source.ExpandHome(dir))
	if err != nil {
		return fail(dir, "cannot resolve the plugin folder: %v", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail(abs, "plugin folder does not exist; plugin not loaded")
		}
		return fail(abs, "cannot read the plugin folder: %v; plugin not loaded", errText(err))
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return fail(abs, "not a folder: a plugin is a folder holding %s; plugin not loaded", ManifestName)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return fail(abs, "cannot open the plugin folder: %v; plugin not loaded", errText(err))
	}
	defer root.Close()
	file := filepath.Join(real, ManifestName)
	data, err := readManifest(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail(file, "no %s in the plugin folder; plugin not loaded", ManifestName)
		}
		return fail(file, "cannot read: %v; plugin not loaded", errText(err))
	}
	m, idx, diags := parseManifest(data, file)
	if m == nil {
		return nil, diags
	}
	l := &loader{
		root:   root,
		dir:    real,
		file:   file,
		m:      m,
		origin: &skill.Origin{Kind: "plugin", Root: real, Plugin: m.ID, Trust: m.Trust, Provenance: m.ID + " " + m.Version},
	}
	p := &Plugin{Manifest: *m, Dir: real}
	type named struct{ field, loc string }
	byName := map[string]named{}
	for k, c := range m.Skills {
		i := idx[k]
		base := fmt.Sprintf("skills[%d]", i)
		sk, ds := l.contribution(i, c)
		diags = append(diags, ds...)
		if sk == nil {
			continue
		}
		if first, dup := byName[sk.Name]; dup {
			diags = append(diags, skill.Diagnostic{Severity: skill.Error, Code: CodeDuplicate, Path: file, Field: base, Skill: sk.Name,
				Message: fmt.Sprintf("%s: %s already contributes a skill named %q; skill not loaded", base, first.field, sk.Name),
				Winner:  first.loc, Loser: sk.Location})
			continue
		}
		byName[sk.Name] = named{base, sk.Location}
		if c.Name != "" && strings.TrimSpace(c.Name) != sk.Name {
			diags = append(diags, skill.Diagnostic{Severity: skill.Warning, Code: CodeNameMismatch, Path: file, Field: base + ".name", Skill: sk.Name,
				Message: fmt.Sprintf("%s.name: the contribution says %q but the skill's frontmatter says %q; the frontmatter's name is used", base, c.Name, sk.Name)})
		}
		fillMeta(sk, c)
		enabled := true
		if c.DefaultEnabled != nil {
			enabled = *c.DefaultEnabled
		}
		p.Skills = append(p.Skills, &Skill{Skill: sk, Contribution: c, DefaultEnabled: enabled, Key: Key(m.ID, sk.Name)})
	}
	return p, diags
}

// fillMeta gives the skill the contribution's tags, category and required
// tools where its frontmatter has none. The frontmatter is copied, never
// changed in place.
func fillMeta(sk *skill.Skill, c Contribution) {
	if sk.Meta == nil {
		sk.Meta = &skill.Frontmatter{Name: sk.Name, Description: sk.Description}
	}
	fm := *sk.Meta
	changed := false
	if len(fm.Tags) == 0 && len(c.Tags) > 0 {
		fm.Tags, changed = append([]string(nil), c.Tags...), true
	}
	if fm.Category == "" && c.Category != "" {
		fm.Category, changed = c.Category, true
	}
	if len(fm.RequiresTools) == 0 && len(c.RequiresTools) > 0 {
		fm.RequiresTools, changed = append([]string(nil), c.RequiresTools...), true
	}
	if changed {
		sk.Meta = &fm
	}
}

type loader struct {
	root   *os.Root
	dir    string // the plugin folder, real
	file   string // its plugin.json
	m      *Manifest
	origin *skill.Origin // shared by the plugin's skills
}

// contribution makes the skill of contribution i.
func (l *loader) contribution(i int, c Contribution) (*skill.Skill, []skill.Diagnostic) {
	var sk *skill.Skill
	var diags []skill.Diagnostic
	switch c.Source.Kind {
	case KindInline:
		sk, diags = l.inline(i, c)
	case KindFile, KindDirectory:
		sk, diags = l.onDisk(i, c)
	}
	name := c.Name
	if sk != nil {
		name = sk.Name
	}
	for k := range diags {
		if diags[k].Skill == "" {
			diags[k].Skill = name
		}
	}
	return sk, diags
}

// inline builds an in-memory skill from the contribution's content and
// files, through Bundle.Check.
func (l *loader) inline(i int, c Contribution) (*skill.Skill, []skill.Diagnostic) {
	base := fmt.Sprintf("skills[%d]", i)
	content := c.Source.Content
	synth := !hasFrontmatter(content)
	if synth {
		front := synthFrontmatter(c)
		// The fields are written as frontmatter, so its bound is theirs:
		// say so against the fields the author wrote, not a frontmatter
		// the author never saw.
		if len(front) > skill.MaxFrontmatterBytes {
			return nil, []skill.Diagnostic{{Severity: skill.Error, Code: skill.CodeFrontmatterTooLarge, Path: l.file, Field: base,
				Message: fmt.Sprintf("%s: name, description, tags, category and requiresTools come to %d bytes as frontmatter, over the %d-byte limit; skill not loaded: shorten them (a description is at most %d characters) and move long text into source.content",
					base, len(front), skill.MaxFrontmatterBytes, skill.MaxDescriptionLen)}}
		}
		content = front + content
	}
	b := &skill.Bundle{Content: []byte(content)}
	for _, f := range c.Files {
		b.Files = append(b.Files, skill.BundleFile{Path: f.Path, Data: []byte(f.Content)})
	}
	// field maps a field named by Bundle.Check to the manifest field.
	field := func(f string) string {
		switch {
		case f == "files" || strings.HasPrefix(f, "files["):
			return base + "." + f
		case synth && f == "name", synth && f == "description", synth && f == "tags", synth && f == "category":
			return base + "." + f
		case synth && f == "requires-tools":
			return base + ".requiresTools"
		}
		return base + ".source.content"
	}
	var diags []skill.Diagnostic
	doc, warns, err := b.Check(skill.Limits{})
	for _, w := range warns {
		w.Field = field(w.Field)
		w.Message = w.Field + ": " + w.Message
		w.Path = l.file
		diags = append(diags, w)
	}
	if err != nil {
		var ce *skill.CheckError
		if !errors.As(err, &ce) {
			return nil, append(diags, skill.Diagnostic{Severity: skill.Error, Code: CodeSkill, Path: l.file, Field: base,
				Message: fmt.Sprintf("%s: %v; skill not loaded", base, err)})
		}
		for _, p := range ce.Problems {
			p.Field = field(p.Field)
			p.Message = p.Field + ": " + p.Message + "; skill not loaded"
			p.Path = l.file
			diags = append(diags, p)
		}
		return nil, diags
	}
	sk := skill.NewVirtual(doc, "plugin://"+l.m.ID+"/"+doc.Name, b.Manifest(), l.origin, b.Reader())
	sk.KeepBody(doc.Body)
	return sk, diags
}

// onDisk loads a file or directory source: a skill folder inside the
// plugin folder, read by source.ScanFolder.
func (l *loader) onDisk(i int, c Contribution) (*skill.Skill, []skill.Diagnostic) {
	field := fmt.Sprintf("skills[%d].source.path", i)
	var diags []skill.Diagnostic
	refuse := func(code, format string, args ...any) (*skill.Skill, []skill.Diagnostic) {
		return nil, append(diags, skill.Diagnostic{Severity: skill.Error, Code: code, Path: l.file, Field: field,
			Message: field + ": " + fmt.Sprintf(format, args...) + "; skill not loaded"})
	}
	clean, err := skill.CleanPath(c.Source.Path)
	if err != nil {
		code := CodeField
		var pe *skill.PathError
		if errors.As(err, &pe) {
			code = pe.Code
		}
		return refuse(code, "%v: give a path inside the plugin folder", err)
	}
	st, err := l.root.Stat(clean)
	if err != nil {
		full := filepath.Join(l.dir, filepath.FromSlash(clean))
		if real, e := filepath.EvalSymlinks(full); e == nil {
			if !within(real, l.dir) {
				return refuse(skill.CodeSymlinkEscapes, "%q leads out of the plugin folder through a symlink (to %s); refused", clean, real)
			}
			if !errors.Is(err, fs.ErrNotExist) {
				// os.Root follows only relative links that stay inside it.
				return refuse(skill.CodeSymlinkEscapes, "%q is reached through a symlink with an absolute target, which is refused even when it points inside the plugin folder: make the link relative", clean)
			}
		}
		if errors.Is(err, fs.ErrNotExist) {
			return refuse(CodeSkill, "%q does not exist in the plugin folder %s", clean, l.dir)
		}
		if _, e := os.Lstat(full); e == nil {
			// os.Root refuses a link that leaves it, even a broken one.
			return refuse(skill.CodeSymlinkEscapes, "%q cannot be reached inside the plugin folder: %v; refused", clean, errText(err))
		}
		return refuse(CodeSkill, "cannot read %q: %v", clean, errText(err))
	}
	dirRel := clean
	entry := ""
	switch c.Source.Kind {
	case KindDirectory:
		if !st.IsDir() {
			return refuse(CodeSkill, "%q is not a folder: a directory source names a skill folder (use kind \"file\" for a SKILL.md)", clean)
		}
		for _, name := range []string{"SKILL.md", "skill.md"} {
			if fst, err := l.root.Stat(clean + "/" + name); err == nil && fst.Mode().IsRegular() {
				entry = name
				break
			}
		}
		if entry == "" {
			return refuse(CodeSkill, "the folder %q holds no SKILL.md at its top: a directory source is one skill folder (list each skill of a folder of skills as its own contribution)", clean)
		}
	case KindFile:
		if !st.Mode().IsRegular() {
			return refuse(CodeSkill, "%q is not a file: a file source names a SKILL.md (use kind \"directory\" for a folder)", clean)
		}
		entry = path.Base(clean)
		if entry != "SKILL.md" && entry != "skill.md" {
			return refuse(CodeSkill, "%q is not a SKILL.md: a file source names a skill's SKILL.md, and the folder holding it is the skill (use kind \"inline\" for text of your own)", clean)
		}
		dirRel = path.Dir(clean)
	}
	skillDir := filepath.Join(l.dir, filepath.FromSlash(dirRel))
	real, err := filepath.EvalSymlinks(skillDir)
	if err != nil {
		return refuse(CodeSkill, "cannot resolve %q: %v", dirRel, errText(err))
	}
	if !within(real, l.dir) {
		return refuse(skill.CodeSymlinkEscapes, "%q leads out of the plugin folder through a symlink (to %s); refused", dirRel, real)
	}
	res := source.ScanFolder(context.Background(), real, source.Options{Origin: *l.origin})
	diags = append(diags, res.Diagnostics...)
	if len(res.Skills) != 1 || res.Skills[0].Dir != real {
		if len(res.Skills) == 0 {
			return refuse(CodeSkill, "the skill in %q could not be loaded (see the diagnostics above)", dirRel)
		}
		return refuse(CodeSkill, "expected one skill at the top of %q, found %d", dirRel, len(res.Skills))
	}
	sk := res.Skills[0]
	if c.Source.Kind == KindFile && sk.Entry != entry {
		diags = append(diags, skill.Diagnostic{Severity: skill.Warning, Code: CodeSkill, Path: l.file, Field: field,
			Message: fmt.Sprintf("%s: names %s, but the folder also holds %s, which is the entry file read", field, entry, sk.Entry)})
	}
	return sk, diags
}

func within(real, dir string) bool {
	if real == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(real, dir)
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
