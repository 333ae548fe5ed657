package webui

//go:generate go run ./internal/bundle

// The editing tabs of the skill page (SKILL.md in skill_edit_md.go,
// Files in skill_edit_files.go), the New skill page (new.go) and Copy to
// store. The pages' scripts (static/skill-edit.js, static/files.js) use
// the editor bundle static/editor.js (CodeMirror 6, built from
// webui/editor by the go:generate line above) and write through the JSON
// API (/v1/skills/...), so the server's own checks (If-Match, the one
// path check, read-only sources) decide every write.
