// Package plugin loads the skills that plugins contribute.
//
// A plugin is a folder holding plugin.json (JSON with comments, decoded
// strictly: an unknown key is an error naming its key path, such as
// skills[1].sorce):
//
//	{
//	  "id": "acme-ops", "name": "Acme Ops", "version": "1.4.0",
//	  "trust": "self_host_guarded", // self_host_open | self_host_guarded | saas_locked
//	  "skills": [
//	    { "id": "deploy", "name": "deploy", "source": { "kind": "directory", "path": "skills/deploy" },
//	      "tags": ["ops"], "category": "ops", "requiresTools": ["bash"], "defaultEnabled": true },
//	    { "id": "notes", "name": "notes", "description": "Take notes.",
//	      "source": { "kind": "inline", "content": "# Notes\n…" },
//	      "files": [{ "path": "templates/note.md", "content": "…" }] },
//	    { "id": "review", "name": "review", "source": { "kind": "file", "path": "review/SKILL.md" } }
//	  ]
//	}
//
// Each entry of skills is a skill contribution (Contribution). Its source is one of:
//
//   - directory: a skill folder inside the plugin folder, read like any
//     folder skill (source.ScanFolder), so it gets the usual manifest of
//     supporting files. The folder must hold SKILL.md at its top.
//   - file: the path of a SKILL.md inside the plugin folder; the folder
//     holding it is the skill.
//   - inline: content is the SKILL.md text, held in memory with the
//     supporting files listed in files. When content has no frontmatter,
//     one is written from the contribution's name, description, tags,
//     category and requiresTools. The result goes through
//     skill.Bundle.Check, the write gate every stored skill passes.
//
// Paths of file and directory sources are relative to the plugin folder and
// must stay inside it: they pass skill.CleanPath and are resolved through
// os.Root, so "..", absolute paths and symlinks leading out of the plugin
// folder are refused.
//
// Every skill a plugin contributes carries the plugin's provenance in its
// Origin (Kind "plugin", the plugin id, its trust level and its folder), so
// listings, activation results and receipts can trace it back. The
// contribution's tags, category and requiresTools fill the skill's metadata
// where its frontmatter has none (the frontmatter wins). Plugin skills are
// read-only: this package offers no way to change them.
//
// # Diagnostics
//
// Problems are skill.Diagnostic values. Path is the plugin.json file (or the
// file inside a skill at fault) and Field the key path in plugin.json, such
// as "skills[2].source.path". Besides the codes below, diagnostics of the
// skill and source packages pass through with their own codes: path
// refusals (path-dotdot, path-absolute, …), symlink-escapes for a path that
// leaves the plugin folder through a link, SKILL.md parsing problems, and
// Bundle.Check refusals of inline skills (name-invalid, too-large, …).
//
//   - plugin-manifest (error): plugin.json is missing, unreadable, not
//     valid JSON (the message gives line:column), or has an unknown key or
//     a value of the wrong JSON type. If the problem is outside skills[i],
//     the plugin is not loaded; inside skills[i], only that contribution is
//     skipped.
//   - plugin-field (error): a field has a bad or missing value: id, name,
//     version or trust of the plugin (the plugin is not loaded), or a field
//     of skills[i] (that contribution is skipped, the others load).
//   - plugin-duplicate: two plugins with the same id (error; the first
//     loaded wins, Winner and Loser name the folders; info when the same
//     folder is simply listed twice), two contributions with the same id
//     (error; the second is skipped) or two contributions whose skills have
//     the same name (error; the second is skipped).
//   - plugin-skill (error): a contribution's source could not be made into
//     a skill: the folder or file does not exist, is not a skill, or its
//     SKILL.md could not be loaded (the diagnostics that say why come with
//     it). As a warning: a file source names skill.md but its folder also
//     holds SKILL.md, which is the one read.
//   - plugin-name-mismatch (warning): the contribution's name differs from
//     the name in the skill's frontmatter; the frontmatter's name is used.
package plugin

// Diagnostic codes of this package. They are stable: programs may switch
// on them.
const (
	CodeManifest     = "plugin-manifest"
	CodeField        = "plugin-field"
	CodeDuplicate    = "plugin-duplicate"
	CodeSkill        = "plugin-skill"
	CodeNameMismatch = "plugin-name-mismatch"
)

// Trust levels a plugin may declare (the plugin trust model of the design
// seed). A contributed skill carries its plugin's trust level.
const (
	TrustSelfHostOpen    = "self_host_open"
	TrustSelfHostGuarded = "self_host_guarded"
	TrustSaaSLocked      = "saas_locked"
)

// Source kinds of a contribution.
const (
	KindInline    = "inline"
	KindFile      = "file"
	KindDirectory = "directory"
)

// ManifestName is the name of the manifest file in a plugin folder.
const ManifestName = "plugin.json"
