// Package skill reads and checks Agent Skills: a folder holding SKILL.md
// (YAML frontmatter with at least name and description, then Markdown
// instructions) and any supporting files.
//
// Parsing is lenient by default (Parse, ParseHeader): a skill loads
// whenever it can be served, and everything questionable is a Diagnostic
// with a stable code (see diag.go), a severity and a message that says what
// to do. A skill is skipped only on an Error diagnostic. Strict mode
// (ParseStrict, ValidateFields, Validate) applies the open format's own
// rules, those of the reference validator skills-ref, for `loadout
// validate`.
//
// loadout's extension fields (version, category, tags, requires-tools,
// disable-model-invocation) are read at the top level of the frontmatter
// or, as strings, under metadata (MetadataFields); the metadata form keeps
// a skill valid under strict rules.
//
// A Skill is a loaded skill as served: its parsed frontmatter, manifest of
// files and a Reader that serves them, confined to the skill (ReadFile,
// Open, Body). A Bundle is a skill held in memory, as imported, stored
// and exported; Bundle.Check validates it and Bundle.Digest identifies
// it. Skill.ContentDigest is the same digest for any skill, whatever its
// source, and is the one digest receipts, listings and exports carry.
//
// Limits (sizes of files and frontmatter, counts of files) are named
// constants with defaults, see Limits.
package skill
