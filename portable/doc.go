// Package portable moves whole skills (skill.Bundle) in and out of the
// three portable forms: a JSON document, a zip archive and a folder on
// disk. Every importer returns a bundle that has passed skill.Bundle.Check,
// the one write-time gate, and every exporter checks (a copy of) the bundle
// first, so what is exported always imports again.
//
// # JSON (schema version 2)
//
// The document has this shape:
//
//	{
//	  "schemaVersion": 2,
//	  "skill": {
//	    "name": "pdf-tools", "slug": "pdf-tools", "description": "...",
//	    "category": "documents", "tags": ["pdf"], "version": "1.2.0",
//	    "content": "---\nname: pdf-tools\n...",
//	    "files": [
//	      {"path": "references/forms.md", "content": "# Forms\n...", "contentType": "text/markdown", "sha256": "..."},
//	      {"path": "assets/logo.png", "content": "iVBORw0K...", "contentType": "image/png", "encoding": "base64", "sha256": "..."},
//	      {"path": "scripts/fill.py", "content": "#!/usr/bin/env python3\n...", "contentType": "text/x-python", "executable": true, "sha256": "..."}
//	    ]
//	  },
//	  "metadata": {"exportedAt": "2026-02-20T12:00:00Z", "exportedFrom": "loadout", "origin": {"kind": "store", "version": 3}, "digest": "sha256:..."}
//	}
//
// SKILL.md ("content") is authoritative. ExportJSON fills name and slug with
// its frontmatter name (loadout has no separate display name), and
// description, category, tags and version with its frontmatter fields; all
// eight keys are always written. On import "name" and "description" are
// informational; a non-empty "slug" must equal the frontmatter name
// (slug-mismatch); a non-empty "category", "tags" or "version" is added to
// the frontmatter when the frontmatter lacks that field, and must equal it
// when it has it (field-mismatch), so none is dropped. Content without
// frontmatter (a database row keeping name and description beside the
// text) gets one built from slug (or name), description, category, tags
// and version.
//
// Additions to the original v1 format, all optional on import:
//
//   - "encoding": "base64" on a file: content is the standard base64 of the
//     bytes (padded). ExportJSON uses it for binary files and for any file
//     whose bytes are not valid UTF-8, since a JSON string can only carry
//     UTF-8. Without it, content is the file's text.
//   - "sha256": the lowercase hex SHA-256 of the file's bytes (a
//     "sha256:" prefix is accepted on import). ExportJSON writes it for every
//     file; ImportJSON refuses a mismatch (sha256-mismatch), naming the file.
//   - "executable": true for files with the executable bit. Without it a
//     round trip through JSON could not be byte-for-byte and mode-for-mode
//     identical.
//   - metadata "origin": the provenance of the exported skill
//     (skill.Origin: kind, root, plugin, trust, version). It is a claim the
//     document makes, not a trust decision.
//   - metadata "digest": skill.Bundle.Digest of the whole skill. ImportJSON
//     refuses a document whose files no longer match it (digest-mismatch).
//
// A file's "contentType" is kept on import when it parses as a media type,
// else Check derives one. Unknown keys are ignored, for documents written by
// other tools. Version 1 documents ({"schemaVersion": 1, "skill": {...}},
// or the same without schemaVersion) import with the same reader; so does a
// bare skill object with "content" (how a skill database row is often
// dumped). Any other schemaVersion is refused (schema-version).
//
// # Zip
//
// ExportZip writes the layout of Anthropic's and OpenAI's skill APIs: one
// top-level folder named after the skill, SKILL.md at its root, Unix modes
// 0644 and 0755 (the executable bit), a fixed modification time and a
// fixed entry order, so exports are byte-identical. ImportZip is written
// for hostile archives; see its documentation for what it refuses and the
// limits (ZipLimits). It skips folder entries and macOS junk: everything
// under a top-level __MACOSX/ folder, and files named .DS_Store.
//
// # Uploads
//
// ReadUpload is the one reading of an uploaded file that every way of
// importing shares (POST /v1/import, the web UI's import page, loadout
// import): a zip of one skill or of several (one per top-level folder,
// each held to ImportZip's checks), or a JSON document or array. Its
// limits, ImportLimits, come from one place, LimitsFor of the store's
// limits, so an archive is accepted or refused at the same size, with the
// same words naming the file, whichever way it comes in.
//
// # Folders
//
// ImportDir reads a skill folder through os.Root, skipping dot entries and
// node_modules as discovery does; ExportDir writes one through os.Root.
//
// # Round trips
//
// folder → JSON → bundle → zip → folder reproduces every file's bytes and
// executable bit; the bundle digest (skill.Bundle.Digest) is the same at
// every step. What does not survive: dot files and node_modules (ImportDir
// skips them), modes other than 0644/0755, modification times, and a
// lowercase skill.md entry file (exports write SKILL.md).
//
// # Errors
//
// Every refusal is an *Error naming the source, the entry (zip entry, file
// path or JSON field) and a stable code. Path refusals use skill's path
// codes (path-dotdot, path-absolute, ...), and Check's refusals its codes;
// the Code constants of this package list the rest.
package portable
