package httpapi

import "net/http"

// route is one row of the API: New builds the mux from this table and the
// OpenAPI document is generated from it, so the two cannot drift apart.
type route struct {
	Method, Pattern string
	handle          func(*api, http.ResponseWriter, *http.Request)
	op              operation
}

// operation is what the OpenAPI document says about a route.
type operation struct {
	ID, Summary, Tag string
	// Scope: "none" (no token needed), "any" (any valid token), "agent"
	// (admin or agent:ID), or the least role: "viewer", "author",
	// "reviewer", "admin". A role route with {name} checks the role for
	// that skill (a limited role whose limit covers it may call); one
	// with PerSkill takes its skills from the body and the service checks
	// each; any other role route needs the role over every skill.
	Scope string
	// PerSkill: the route's skills are in its body (a create, an import):
	// a role limited to some skills may call it, and the service refuses
	// a skill outside the limit.
	PerSkill bool
	Query    []param
	Headers  []param
	Body     *reqBody
	OK       []response
	// Errors are the error statuses the route answers with (401 and 403
	// are added from Scope, 500 always).
	Errors []int
}

type param struct {
	Name, Type, Desc string
	Required         bool
	Enum             []string
}

type reqBody struct {
	Desc    string
	Content map[string]string // media type -> schema name, or "binary"
}

type response struct {
	Status  int
	Desc    string
	Content map[string]string // media type -> schema name, or "binary"
	Headers []string          // response header names
}

var (
	jsonOf = func(schema string) map[string]string { return map[string]string{"application/json": schema} }
	// inm and notModified: the routes whose answer is a body kept for
	// many requests (internal/httpbody): a strong ETag, 304 on
	// If-None-Match, gzip when the client accepts it.
	inm         = param{Name: "If-None-Match", Type: "string", Desc: "the ETag of an answer you hold: 304 when it is still the answer"}
	notModified = response{304, "not modified: the ETag you sent is still the answer", nil, nil}
	ifm         = param{Name: "If-Match", Type: "string", Desc: `the version you read, "vN" (the skill's ETag), or * to skip the check`}
)

// routes is every route of the API.
var routes = []route{
	{"GET", "/{$}", (*api).index, operation{ID: "index", Summary: "This server's endpoints and links (OpenAPI, MCP, well-known)", Tag: "server", Scope: "none",
		OK: []response{{200, "the index", jsonOf("Index"), nil}}}},
	{"GET", "/healthz", (*api).healthz, operation{ID: "health", Summary: "Liveness, skill count and catalog generation", Tag: "server", Scope: "none",
		OK: []response{{200, "the server is up", jsonOf("Health"), nil}}}},
	{"GET", "/readyz", (*api).readyz, operation{ID: "ready", Summary: "Readiness: 200 once what first requests would build (search indexes, install indexes, diagnostics, the skill list) is built; 503 with Retry-After before (requests are answered meanwhile, each waiting for what it needs)", Tag: "server", Scope: "none",
		OK: []response{{200, "ready", jsonOf("Object"), nil}, {503, "not ready yet: retry", jsonOf("Object"), []string{"Retry-After"}}}}},
	{"GET", "/metrics", (*api).metrics, operation{ID: "metrics", Summary: "Prometheus metrics (text exposition format; docs/metrics.md): only to a metrics token ('loadout token create --scope metrics'), never to an admin token; 404 when the server has metrics off", Tag: "server", Scope: "metrics",
		OK: []response{{200, "the metrics", map[string]string{"text/plain": "string"}, nil}}, Errors: []int{404}}},
	{"GET", "/v1/openapi.json", (*api).openAPI, operation{ID: "openapi", Summary: "This document", Tag: "server", Scope: "any",
		Headers: []param{inm}, OK: []response{{200, "the OpenAPI 3.1 document", jsonOf("Object"), []string{"ETag"}}, notModified}}},

	{"GET", "/v1/skills", (*api).listSkills, operation{ID: "listSkills", Summary: "The skills of the global catalog and the disabled stored skills, by name, a page at a time", Tag: "skills", Scope: "viewer",
		Query: []param{{Name: "limit", Type: "integer", Desc: sprintf("most skills on the page (default %d, at most %d: a larger limit is served as %d, the answer's limit, and nextPage goes on); a page never splits a name, so a name with shadowed namesakes may take it over", DefaultListLimit, MaxListLimit, MaxListLimit)},
			{Name: "page", Type: "string", Desc: "the nextPage of the previous answer (opaque): the page after it, valid across changes to the catalog (no name skipped or repeated); leave out for the first page"}},
		Headers: []param{inm},
		OK:      []response{{200, "one page of skills; nextPage is there when hasMore is true", jsonOf("SkillList"), []string{"ETag"}}, notModified}, Errors: []int{400, 409}}},
	{"POST", "/v1/skills", (*api).createSkill, operation{ID: "createSkill", Summary: "Create a stored skill from a portable JSON document", Tag: "skills", Scope: "author", PerSkill: true,
		Body: &reqBody{"a portable JSON document (schema version 2, or 1)", jsonOf("PortableDocument")},
		OK:   []response{{201, "created", jsonOf("SkillDetail"), []string{"ETag", "Location"}}}, Errors: []int{400, 409, 413, 422}}},
	{"GET", "/v1/skills/{name}", (*api).getSkill, operation{ID: "getSkill", Summary: "A skill's record and manifest (folder and plugin skills read-only)", Tag: "skills", Scope: "viewer",
		OK: []response{{200, "the skill", jsonOf("SkillDetail"), []string{"ETag"}}}, Errors: []int{404}}},
	{"PUT", "/v1/skills/{name}", (*api).putSkill, operation{ID: "putSkill", Summary: "Replace a stored skill (If-Match required), or create it", Tag: "skills", Scope: "author",
		Headers: []param{ifm, {Name: "If-None-Match", Type: "string", Desc: "* to create only", Enum: []string{"*"}}},
		Body:    &reqBody{"a portable JSON document whose skill name equals {name}", jsonOf("PortableDocument")},
		OK:      []response{{200, "updated", jsonOf("SkillDetail"), []string{"ETag"}}, {201, "created", jsonOf("SkillDetail"), []string{"ETag", "Location"}}},
		Errors:  []int{400, 403, 404, 409, 413, 422, 428}}},
	{"DELETE", "/v1/skills/{name}", (*api).deleteSkill, operation{ID: "deleteSkill", Summary: "Delete a stored skill and its versions", Tag: "skills", Scope: "author",
		Headers: []param{ifm}, OK: []response{{204, "deleted", nil, nil}}, Errors: []int{400, 403, 404, 409}}},

	{"GET", "/v1/skills/{name}/files", (*api).listFiles, operation{ID: "listFiles", Summary: "A skill's file manifest", Tag: "files", Scope: "viewer",
		OK: []response{{200, "the manifest", jsonOf("Manifest"), []string{"ETag"}}}, Errors: []int{404}}},
	{"GET", "/v1/skills/{name}/files/{path...}", (*api).getFile, operation{ID: "getFile", Summary: "One file's bytes (SKILL.md included)", Tag: "files", Scope: "viewer",
		Headers: []param{{Name: "If-None-Match", Type: "string", Desc: "the file's ETag (its digest): 304 when unchanged"}},
		OK: []response{{200, "the bytes (streamed; Range is honoured), never as an active type: raster images, Markdown, plain text, CSV and JSON as themselves, other text as text/plain, anything else as an application/octet-stream attachment; always nosniff and a sandbox CSP (the manifest keeps the file's own type)", map[string]string{"*/*": "binary"}, []string{"ETag", "Content-Disposition", "Content-Security-Policy"}}, {206, "part of the file (a Range request)", map[string]string{"*/*": "binary"}, []string{"ETag", "Content-Range"}},
			{304, "not modified", nil, nil}},
		Errors: []int{400, 404, 409, 413}}},
	{"PUT", "/v1/skills/{name}/files/{path...}", (*api).putFile, operation{ID: "putFile", Summary: "Add or replace one file of a stored skill (the body is its bytes)", Tag: "files", Scope: "author",
		Headers: []param{ifm, {Name: "X-Executable", Type: "boolean", Desc: "true sets the executable bit"}},
		Body:    &reqBody{"the file's bytes, of any media type (SKILL.md replaces the content)", map[string]string{anyType: "binary"}},
		OK:      []response{{200, "the skill after the write", jsonOf("SkillDetail"), []string{"ETag"}}}, Errors: []int{400, 403, 404, 409, 413, 422, 428}}},
	{"DELETE", "/v1/skills/{name}/files/{path...}", (*api).deleteFile, operation{ID: "deleteFile", Summary: "Remove one file of a stored skill", Tag: "files", Scope: "author",
		Headers: []param{ifm}, OK: []response{{200, "the skill after the write", jsonOf("SkillDetail"), []string{"ETag"}}}, Errors: []int{400, 403, 404, 409, 422, 428}}},

	{"GET", "/v1/skills/{name}/versions", (*api).listVersions, operation{ID: "listVersions", Summary: "A stored skill's versions, newest first", Tag: "versions", Scope: "viewer",
		OK: []response{{200, "the versions", jsonOf("VersionList"), nil}}, Errors: []int{404}}},
	{"GET", "/v1/skills/{name}/versions/{v}", (*api).getVersion, operation{ID: "getVersion", Summary: "One version as a portable JSON document", Tag: "versions", Scope: "viewer",
		OK: []response{{200, "the version", jsonOf("PortableDocument"), []string{"ETag"}}}, Errors: []int{400, 404}}},
	{"POST", "/v1/skills/{name}/versions/{v}/restore", (*api).restoreVersion, operation{ID: "restoreVersion", Summary: "Make an earlier version current, as a new version", Tag: "versions", Scope: "author",
		Headers: []param{ifm}, OK: []response{{200, "the skill after the restore", jsonOf("SkillDetail"), []string{"ETag"}}}, Errors: []int{400, 403, 404, 409, 428}}},
	{"GET", "/v1/skills/{name}/export", (*api).exportSkill, operation{ID: "exportSkill", Summary: "Export any skill (stored at any version, folder or plugin) as JSON or zip", Tag: "portable", Scope: "viewer",
		Query:  []param{{Name: "format", Type: "string", Desc: "json (default) or zip", Enum: []string{"json", "zip"}}, {Name: "version", Type: "integer", Desc: "a stored version (default: the current one)"}},
		OK:     []response{{200, "the export; zips come with Content-Disposition", map[string]string{"application/json": "PortableDocument", "application/zip": "binary"}, []string{"Content-Disposition"}}},
		Errors: []int{400, 404, 409, 413}}},
	{"POST", "/v1/import", (*api).importSkills, operation{ID: "importSkills", Summary: "Import portable JSON documents or one zip, in one transaction: all or nothing unless partial=1", Tag: "portable", Scope: "author", PerSkill: true,
		Query: []param{{Name: "partial", Type: "boolean", Desc: "1: when some skills are refused, import the accepted ones anyway; 0 (default): all or nothing, one refusal and nothing is written"}},
		Body: &reqBody{"one portable JSON document, an array of them, or one zip: of one skill (SKILL.md at its root, or one top-level folder) or of several (one per top-level folder); send Content-Disposition with a filename to have refusals name the file", map[string]string{
			"application/json": "PortableDocumentOrArray", "application/zip": "binary", "application/x-zip-compressed": "binary"}},
		OK: []response{{200, "every skill imported (created, updated or unchanged)", jsonOf("ImportResults"), nil},
			{422, "something was refused (the same body, a result for every document): by default nothing was written and the accepted skills are \"skipped\"; with partial=1 they were imported", jsonOf("ImportResults"), nil}},
		Errors: []int{400, 409, 413, 415}}},

	{"GET", "/v1/agents", (*api).listAgents, operation{ID: "listAgents", Summary: "The agents this token may read", Tag: "agents", Scope: "any",
		OK: []response{{200, "the agents", jsonOf("AgentList"), nil}}}},
	{"GET", "/v1/agents/{id}/prompt", (*api).agentPrompt, operation{ID: "agentPrompt", Summary: "The agent's system-prompt section, within its budget", Tag: "agents", Scope: "agent",
		Headers: []param{inm},
		Query: []param{{Name: "format", Type: "string", Desc: "override the agent's format", Enum: []string{"pi", "catalog", "progressive"}}, {Name: "budget", Type: "integer", Desc: "override the budget in characters; -1 for none"}, {Name: "budgetTokens", Type: "integer", Desc: "a second budget in tokens (characters ÷ 4, rounded up); the smaller wins"},
			{Name: "report", Type: "string", Desc: "summary (default): how many skills of each tier; full: also every skill's tier by name (large at thousands of skills)", Enum: []string{"summary", "full"}}},
		OK:     []response{{200, "the prompt (text/plain when the Accept header asks for it)", map[string]string{"application/json": "PromptResult", "text/plain": "string"}, []string{"ETag"}}, notModified},
		Errors: []int{400, 404}}},
	{"GET", "/v1/agents/{id}/skills/{name}", (*api).agentLoad, operation{ID: "loadSkill", Summary: "load_skill: the skill's activation envelope (records a receipt)", Tag: "agents", Scope: "agent",
		OK: []response{{200, "the envelope", jsonOf("LoadResult"), nil}, {404, "no such skill for this agent (or no such agent): the closest names", jsonOf("LoadResult"), nil}}}},
	{"GET", "/v1/agents/{id}/skills/{name}/files/{path...}", (*api).agentReadFile, operation{ID: "readSkillFile", Summary: "read_skill_file: one file of the skill (records a receipt)", Tag: "agents", Scope: "agent",
		Query: []param{{Name: "raw", Type: "boolean", Desc: "1: the bytes themselves instead of JSON"}, {Name: "offset", Type: "integer", Desc: "first byte"}, {Name: "length", Type: "integer", Desc: "bytes to read (0: to the end)"}},
		OK: []response{{200, "the file: JSON (text or base64, with its contentType), or its bytes with raw=1, typed as getFile's (never an active type)", map[string]string{"application/json": "FileResult", "*/*": "binary"}, []string{"X-Skill-Size"}},
			{206, "part of the file (raw=1 with a range)", map[string]string{"*/*": "binary"}, []string{"Content-Range", "X-Skill-Size"}}},
		Errors: []int{400, 404, 409, 413}}},
	{"GET", "/v1/agents/{id}/search", (*api).agentSearch, operation{ID: "searchSkills", Summary: "search_skills: rank the agent's skills for a query", Tag: "agents", Scope: "agent",
		Query: []param{{Name: "q", Type: "string", Desc: "the query: at most 1024 bytes and 32 distinct words (a repeated word counts once); past either, 400", Required: true}, {Name: "limit", Type: "integer", Desc: "most hits (default 10, at most 1000)"}},
		OK:    []response{{200, "the hits, best first (the shape of MCP's search_skills, plus the query)", jsonOf("SearchResult"), nil}}, Errors: []int{400, 404}}},

	{"POST", "/v1/check", (*api).checkSkill, operation{ID: "checkSkill", Summary: "Validate a SKILL.md text as loadout check and a save would (nothing is stored): diagnostics with their lines", Tag: "skills", Scope: "any",
		Body: &reqBody{"{\"content\": the SKILL.md text, \"name\": the skill's name (optional: a frontmatter name that differs is reported)}", jsonOf("Object")},
		OK:   []response{{200, "the diagnostics (valid is false when a save would be refused)", jsonOf("Object"), nil}}, Errors: []int{400, 413}}},
	{"GET", "/v1/diagnostics", (*api).diagnostics, operation{ID: "diagnostics", Summary: "Every diagnostic of every source, counted by severity, a page at a time", Tag: "server", Scope: "viewer",
		Query: []param{{Name: "skill", Type: "string", Desc: "only the diagnostics about the skill of this name (all of them, one page), and their counts: the UI's count of its problems"},
			{Name: "limit", Type: "integer", Desc: sprintf("most diagnostics on the page (default %d, at most %d: a larger limit is served as %d, the answer's limit, and nextPage goes on)", DefaultDiagLimit, MaxDiagLimit, MaxDiagLimit)},
			{Name: "page", Type: "string", Desc: "the nextPage of the previous answer (opaque), also in its Link header (rel=\"next\"); leave out for the first page. 409 when the diagnostics changed since (the catalog changed): read again from the first page"}},
		Headers: []param{inm}, OK: []response{{200, "one page of diagnostics, with the counts of all of them; nextPage (and a Link rel=\"next\") when hasMore is true", jsonOf("DiagnosticList"), []string{"ETag", "Link"}}, notModified},
		Errors: []int{400, 409}}},
	{"POST", "/v1/reload", (*api).reload, operation{ID: "reload", Summary: "Read the config file again (when serving from one) and rescan every source now; 422 invalid, the running config kept, when the file does not load", Tag: "server", Scope: "admin",
		OK: []response{{200, "reloaded", jsonOf("ReloadResult"), nil}}, Errors: []int{422}}},
	{"GET", "/v1/sources", (*api).sources, operation{ID: "listSources", Summary: "Every source (folders, the store, plugins, git repositories and skill indexes) with its skills and its errors and warnings (the safety findings included); for a remote source, where it is, its pin in loadout.lock and how its last sync went", Tag: "server", Scope: "viewer",
		OK: []response{{200, "the sources", jsonOf("SourceList"), nil}}}},
	{"GET", "/v1/sources/reviews", (*api).sourceReviews, operation{ID: "sourceReviews", Summary: "Remote sources' changes awaiting review (review.required): for each, the pin it would move from and to, and every skill it adds, removes or changes with its files' line diffs and its safety findings; rejected changes are listed too, so the same snapshot is not queued again", Tag: "review", Scope: "reviewer",
		OK: []response{{200, "the changes", jsonOf("Object"), nil}}, Errors: []int{404}}},
	{"POST", "/v1/sources/{source}/approve", (*api).approveSource, operation{ID: "approveSource", Summary: "Move a remote source's pin to its change awaiting review and serve it; 409 when the pin moved since the change was recorded, or the content fetched again is not what was reviewed", Tag: "review", Scope: "reviewer",
		Body: &reqBody{"{\"revision\": \"what was reviewed (optional)\", \"comment\": \"...\"}", jsonOf("Object")},
		OK:   []response{{200, "what the approval did", jsonOf("Object"), nil}}, Errors: []int{400, 404, 409, 413}}},
	{"POST", "/v1/sources/{source}/reject", (*api).rejectSource, operation{ID: "rejectSource", Summary: "Reject a remote source's change awaiting review: the pin stays, and the same snapshot is not queued again", Tag: "review", Scope: "reviewer",
		Body: &reqBody{"{\"revision\": \"...\", \"comment\": \"...\"}", jsonOf("Object")},
		OK:   []response{{200, "the change, rejected", jsonOf("Object"), nil}}, Errors: []int{400, 404, 409, 413}}},
	{"POST", "/v1/sources/{source}/sync", (*api).syncSource, operation{ID: "syncSource", Summary: "Sync one remote source now (for a webhook): fetch what its ref points at, validate it beside the current snapshot, swap it in and move its pin; a failure keeps the last good snapshot (200 with the error in the result)", Tag: "server", Scope: "admin",
		OK: []response{{200, "what the sync did", jsonOf("SourceSync"), nil}}, Errors: []int{404}}},
	{"GET", "/v1/receipts", (*api).receipts, operation{ID: "receipts", Summary: "Recent activation and read receipts, newest first", Tag: "server", Scope: "viewer",
		Query: []param{{Name: "agent", Type: "string", Desc: "only this agent"}, {Name: "skill", Type: "string", Desc: "only this skill"},
			{Name: "since", Type: "string", Desc: "an RFC 3339 time, or a duration back from now (1h)"}, {Name: "limit", Type: "integer", Desc: "most receipts (default 100, at most 10000)"}},
		OK: []response{{200, "the receipts", jsonOf("ReceiptList"), nil}}, Errors: []int{400}}},
	// The audit trail (audit.go).
	{"GET", "/v1/audit", (*api).auditList, operation{ID: "audit", Summary: "The audit trail: one record per write, newest first, filtered and paged", Tag: "server", Scope: "admin",
		Query: []param{{Name: "actor", Type: "string", Desc: "only this actor (a token's name, or a signed-in subject)"}, {Name: "token", Type: "string", Desc: "only the records of this token id"}, {Name: "action", Type: "string", Desc: "only this action (skill.save, token.create…)"},
			{Name: "target", Type: "string", Desc: "only this target (skill:NAME, token:ID, source:ID…)"},
			{Name: "since", Type: "string", Desc: "an RFC 3339 time, or a duration back from now (1h)"},
			{Name: "limit", Type: "integer", Desc: sprintf("most records on the page (default %d, at most %d)", DefaultAuditLimit, MaxAuditLimit)},
			{Name: "page", Type: "string", Desc: "the nextPage of the previous answer, also in its Link header (rel=\"next\"); leave out for the first page"}},
		OK: []response{{200, "one page of records; nextPage (and a Link rel=\"next\") when hasMore is true", jsonOf("AuditList"), []string{"Link"}}}, Errors: []int{400}}},
	{"GET", "/v1/audit/verify", (*api).auditVerify, operation{ID: "auditVerify", Summary: "Walk the whole audit chain and report the first record that was edited, deleted or reordered (ok false, badSeq and reason)", Tag: "server", Scope: "admin",
		OK: []response{{200, "what the verification found", jsonOf("AuditVerify"), nil}}}},
	{"GET", "/v1/audit/export", (*api).auditExport, operation{ID: "auditExport", Summary: "Every audit record, oldest first, as JSON lines (streamed)", Tag: "server", Scope: "admin",
		OK: []response{{200, "one record per line", map[string]string{"application/jsonl": "AuditRecord"}, []string{"Content-Disposition"}}}}},

	// Drafts and review, pins, withdrawal, where used (review.go).
	{"GET", "/v1/reviews", (*api).listReviews, operation{ID: "listReviews", Summary: "Drafts awaiting review and past decisions, pending first, then newest first", Tag: "review", Scope: "reviewer", PerSkill: true,
		Query: []param{{Name: "state", Type: "string", Desc: "only reviews in this state", Enum: []string{"pending", "approved", "rejected", "withdrawn"}}, {Name: "skill", Type: "string", Desc: "only this skill's"}, {Name: "limit", Type: "integer", Desc: "most reviews (default 1000, at most 10000)"}},
		OK:    []response{{200, "the reviews", jsonOf("Object"), nil}}, Errors: []int{400, 422}}},
	{"GET", "/v1/reviews/{review}", (*api).getReview, operation{ID: "getReview", Summary: "One review: the draft's files against the published version (a line diff per changed text file) and the draft's safety findings", Tag: "review", Scope: "reviewer", PerSkill: true,
		OK: []response{{200, "the review", jsonOf("Object"), nil}}, Errors: []int{404}}},
	{"POST", "/v1/reviews/{review}/approve", (*api).approveReview, operation{ID: "approveReview", Summary: "Publish exactly the draft's version; refused by its own author (review.distinct) and when another version was published since the draft was made (409)", Tag: "review", Scope: "reviewer", PerSkill: true,
		Body: &reqBody{"{\"comment\": \"...\"} (optional)", jsonOf("Object")},
		OK:   []response{{200, "the review, approved", jsonOf("Object"), nil}}, Errors: []int{400, 404, 409, 413}}},
	{"POST", "/v1/reviews/{review}/reject", (*api).rejectReview, operation{ID: "rejectReview", Summary: "Close a draft's review without publishing it", Tag: "review", Scope: "reviewer", PerSkill: true,
		Body: &reqBody{"{\"comment\": \"...\"} (optional)", jsonOf("Object")},
		OK:   []response{{200, "the review, rejected", jsonOf("Object"), nil}}, Errors: []int{400, 404, 409, 413}}},
	{"PUT", "/v1/agents/{id}/pins/{name}", (*api).setPin, operation{ID: "setPin", Summary: "Pin the version of a stored skill an agent is served: a version number (kept through later publishes), \"published\" (the default) or \"latest\"", Tag: "review", Scope: "reviewer",
		Body: &reqBody{"{\"version\": N | \"published\" | \"latest\"}", jsonOf("Object")},
		OK:   []response{{200, "the pin", jsonOf("Object"), nil}}, Errors: []int{400, 404, 409, 413, 422}}},
	{"GET", "/v1/pins/pending", (*api).pendingPins, operation{ID: "pendingPins", Summary: "Update pending: the agents pinned to a version older than the published one", Tag: "review", Scope: "viewer",
		OK: []response{{200, "the lagging pins", jsonOf("Object"), nil}}}},
	{"POST", "/v1/pins/advance", (*api).advancePins, operation{ID: "advancePins", Summary: "Move lagging pins to the published version: of one agent and/or skill, or all of them", Tag: "review", Scope: "reviewer",
		Body: &reqBody{"{\"agent\": \"...\", \"skill\": \"...\"} (both optional)", jsonOf("Object")},
		OK:   []response{{200, "the pins moved", jsonOf("Object"), nil}}, Errors: []int{400, 404, 409, 413, 422}}},
	{"POST", "/v1/skills/{name}/withdraw", (*api).withdrawSkill, operation{ID: "withdrawSkill", Summary: "Withdraw a stored skill: it leaves every listing and takes no new pins; existing pins keep working until moved ({\"withdrawn\": false} restores it)", Tag: "review", Scope: "reviewer",
		Body: &reqBody{"{\"withdrawn\": true | false} (optional, default true)", jsonOf("Object")},
		OK:   []response{{200, "the skill's state", jsonOf("Object"), nil}}, Errors: []int{400, 404, 413}}},
	{"GET", "/v1/skills/{name}/usage", (*api).skillUsage, operation{ID: "skillUsage", Summary: "Where used: every agent that lists, pins or lately loaded each version of a stored skill", Tag: "review", Scope: "viewer",
		OK: []response{{200, "the uses, by agent then version", jsonOf("Object"), nil}}, Errors: []int{404}}},

	// The kill switch (blocks.go).
	{"GET", "/v1/blocks", (*api).listBlocks, operation{ID: "listBlocks", Summary: "The blocks of the kill switch: skills, versions and sources no instance lists or serves", Tag: "blocks", Scope: "admin",
		OK: []response{{200, "the blocks, oldest first", jsonOf("BlockList"), nil}}}},
	{"POST", "/v1/blocks", (*api).addBlock, operation{ID: "addBlock", Summary: "Block a skill (every version), one version of it (version or digest) or every skill of a source, on every instance within a second; reason required", Tag: "blocks", Scope: "admin",
		Body: &reqBody{"{\"skill\": NAME, \"version\": N | \"digest\": D, \"reason\": R} or {\"source\": ID, \"reason\": R}", jsonOf("Object")},
		OK:   []response{{201, "the block", jsonOf("Block"), nil}}, Errors: []int{400, 409, 413, 422}}},
	{"DELETE", "/v1/blocks/{block}", (*api).removeBlock, operation{ID: "removeBlock", Summary: "Remove a block by its id, or every block of a skill by the skill's name: what was there is served again", Tag: "blocks", Scope: "admin",
		OK: []response{{200, "the blocks removed (none when a skill name has none)", jsonOf("BlockList"), nil}}, Errors: []int{404, 409}}},
}
