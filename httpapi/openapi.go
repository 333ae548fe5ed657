package httpapi

import (
	"sort"
	"strconv"
	"strings"
)

type obj = map[string]any

// openAPIPath turns a ServeMux pattern into an OpenAPI path:
// "{path...}" becomes "{path}".
// "/{$}" (the root only) is "/".
func openAPIPath(pattern string) string {
	return strings.ReplaceAll(strings.ReplaceAll(pattern, "{$}", ""), "...}", "}")
}

// pathParams lists the wildcards of a pattern.
func pathParams(pattern string) []string {
	var out []string
	for _, seg := range strings.Split(pattern, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") && seg != "{$}" {
			out = append(out, strings.TrimSuffix(strings.Trim(seg, "{}"), "..."))
		}
	}
	return out
}

var pathParamDesc = map[string]string{
	"name":  "the skill's name",
	"id":    "the agent's id",
	"v":     "a version number (1, 2, …)",
	"block": "a block's id, or a skill's name (every block of that skill)",
	"path":  "a file path relative to the skill folder, checked by skill.CleanPath (no .., no absolute paths, no backslashes or control characters)",
}

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func schemaFor(s string) obj {
	switch s {
	case "binary":
		return obj{"type": "string", "format": "binary"}
	case "string":
		return obj{"type": "string"}
	}
	return ref(s)
}

func content(c map[string]string) obj {
	out := obj{}
	for media, s := range c {
		out[media] = obj{"schema": schemaFor(s)}
	}
	return out
}

var errorDesc = map[int]string{
	400: "bad_request (malformed body, header or parameter) or refused (a path refused by the path check, or a folder skill's file that is a link out of the skill or not a regular file)",
	401: "unauthorized: no valid bearer token",
	403: "forbidden (outside the token's scope; the answer is the same whether or not the target exists), read_only (a folder or plugin skill), host_not_allowed (a Host this server does not answer to), cross_origin (a state-changing request from another origin's page) or csrf (a state-changing request with the web UI's session cookie but without its X-CSRF-Token header)",
	408: "request_timeout: the body did not arrive within the read timeout",
	404: "not_found",
	409: "conflict (a stale If-Match: currentVersion says the current one; the name exists; a folder skill's file or folder changed on disk since the scan; or a page cursor of diagnostics that changed since) or no_store",
	413: "too_large: over a size limit (a folder skill's file read whole over limits.maxFileSize)",
	415: "unsupported_media_type: a Content-Type the route does not take",
	422: "invalid: the skill document or bundle is refused (problems lists why)",
	428: "precondition_required: an update of a stored skill without If-Match",
	500: "internal",
}

var headerDesc = map[string]string{
	"ETag":                    `a stored skill's version, "vN" (for a file, its "sha256:<hex>" digest; for the skill list's pages, the prompt, the diagnostics and this document, a digest of the bytes sent, which differs for their gzip form)`,
	"Location":                "the new skill's URL",
	"Content-Disposition":     "attachment; filename=NAME.zip for zips; for a file's bytes, inline or attachment (an octet-stream) with the file's name",
	"Content-Security-Policy": "for a file's bytes: sandbox; default-src 'none'; frame-ancestors 'none', so nothing in it runs in this origin",
	"Content-Range":           "bytes FIRST-LAST/SIZE",
	"X-Skill-Size":            "the whole file's size in bytes",
	"Retry-After":             "seconds to wait before asking again",
	"Link":                    `the next page: <URL>; rel="next" (RFC 8288), when there is one`,
}

// openAPIDoc builds the OpenAPI 3.1 document from the route table.
func openAPIDoc() obj {
	paths := obj{}
	for _, rt := range routes {
		p := openAPIPath(rt.Pattern)
		item, _ := paths[p].(obj)
		if item == nil {
			item = obj{}
			paths[p] = item
		}
		item[strings.ToLower(rt.Method)] = operationDoc(rt)
	}
	return obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   "loadout",
			"version": "1",
			"description": "Agent Skills over HTTP: stored skills with versions and ETags, read-only folder and plugin skills, " +
				"and each agent's prompt, load_skill, read_skill_file and search_skills. Errors are " +
				`{"error": {"code", "message", "field", "path", "currentVersion", "problems"}}.`,
		},
		"servers":  []obj{{"url": "/"}},
		"security": []obj{{"bearer": []string{}}},
		"tags": []obj{{"name": "skills"}, {"name": "files"}, {"name": "versions"}, {"name": "portable"},
			{"name": "agents"}, {"name": "server"}},
		"paths": paths,
		"components": obj{
			"securitySchemes": obj{"bearer": obj{"type": "http", "scheme": "bearer",
				"description": "a token from 'loadout token create --role viewer|author|reviewer|admin' (or --scope agent:ID); optional on a loopback server that does not require tokens"}},
			"schemas": schemas(),
		},
	}
}

func operationDoc(rt route) obj {
	op := rt.op
	o := obj{"operationId": op.ID, "summary": op.Summary, "tags": []string{op.Tag}}
	switch op.Scope {
	case "none":
		o["security"] = []obj{}
	case "admin":
		o["description"] = "Needs an admin token (the admin role over every skill)."
	case "viewer", "author", "reviewer":
		switch {
		case strings.Contains(rt.Pattern, "{name}"):
			o["description"] = "Needs the " + op.Scope + " role (or a higher one) for the skill: unlimited, or limited to a glob or tag that covers it."
		case op.PerSkill:
			o["description"] = "Needs the " + op.Scope + " role (or a higher one); a limited role may write only the skills its limit covers (403 naming the first one outside it)."
		default:
			o["description"] = "Needs the " + op.Scope + " role (or a higher one) over every skill: a role limited to a glob or tag is refused."
		}
	case "agent":
		o["description"] = "Needs an admin token or one scoped to the agent (agent:ID)."
	case "metrics":
		o["description"] = "Needs a metrics token (scope metrics, its only scope: 'loadout token create --scope metrics'); every other token, admin included, is refused (403)."
	}
	var params []obj
	for _, name := range pathParams(rt.Pattern) {
		params = append(params, obj{"name": name, "in": "path", "required": true, "description": pathParamDesc[name], "schema": obj{"type": "string"}})
	}
	for _, q := range op.Query {
		params = append(params, paramDoc(q, "query"))
	}
	for _, h := range op.Headers {
		params = append(params, paramDoc(h, "header"))
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if op.Body != nil {
		o["requestBody"] = obj{"required": true, "description": op.Body.Desc, "content": content(op.Body.Content)}
	}
	resp := obj{}
	for _, r := range op.OK {
		d := obj{"description": r.Desc}
		if len(r.Content) > 0 {
			d["content"] = content(r.Content)
		}
		if len(r.Headers) > 0 {
			hs := obj{}
			for _, h := range r.Headers {
				hs[h] = obj{"description": headerDesc[h], "schema": obj{"type": "string"}}
			}
			d["headers"] = hs
		}
		resp[strconv.Itoa(r.Status)] = d
	}
	// Every route may answer the guards' 403; a route with a body 408 and
	// 415.
	errs := append([]int(nil), op.Errors...)
	errs = append(errs, 403)
	switch op.Scope {
	case "any", "agent", "viewer", "author", "reviewer", "admin", "metrics":
		errs = append(errs, 401)
	}
	if op.Body != nil {
		errs = append(errs, 408, 415)
	}
	errs = append(errs, 500)
	sort.Ints(errs)
	for _, s := range errs {
		k := strconv.Itoa(s)
		if _, ok := resp[k]; ok {
			continue
		}
		d := obj{"description": errorDesc[s], "content": obj{"application/json": obj{"schema": ref("Error")}}}
		if s == 401 {
			d["headers"] = obj{"WWW-Authenticate": obj{"schema": obj{"type": "string"}, "description": "Bearer realm=\"loadout\", with error=\"invalid_token\" when a token was sent, and an error_description saying how to create and send one"}}
		}
		resp[k] = d
	}
	o["responses"] = resp
	return o
}

func paramDoc(p param, in string) obj {
	s := obj{"type": p.Type}
	if len(p.Enum) > 0 {
		s["enum"] = p.Enum
	}
	return obj{"name": p.Name, "in": in, "required": p.Required, "description": p.Desc, "schema": s}
}

// Schema helpers.
func str() obj              { return obj{"type": "string"} }
func integer() obj          { return obj{"type": "integer"} }
func boolean() obj          { return obj{"type": "boolean"} }
func arrayOf(items obj) obj { return obj{"type": "array", "items": items} }
func object(props obj, required ...string) obj {
	o := obj{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func schemas() obj {
	diag := object(obj{"severity": obj{"type": "string", "enum": []string{"error", "warning", "info"}}, "code": str(), "message": str(),
		"path": str(), "skill": str(), "field": str(), "agent": str(), "winner": str(), "loser": str()}, "severity", "code", "message")
	origin := object(obj{"kind": obj{"type": "string", "enum": []string{"folder", "store", "plugin"}}, "root": str(), "plugin": str(),
		"trust": str(), "version": integer(), "provenance": str()}, "kind")
	file := object(obj{"path": str(), "size": integer(), "contentType": str(), "binary": boolean(), "executable": boolean(), "script": boolean()}, "path", "size", "contentType")
	portableDoc := object(obj{
		"schemaVersion": obj{"type": "integer", "enum": []int{1, 2}},
		"skill": object(obj{"name": str(), "slug": str(), "description": str(), "category": str(), "tags": arrayOf(str()),
			"version": str(), "content": obj{"type": "string", "description": "SKILL.md, frontmatter included"},
			"files": arrayOf(object(obj{"path": str(), "content": str(), "contentType": str(),
				"encoding": obj{"type": "string", "enum": []string{"base64"}}, "executable": boolean(),
				"sha256": obj{"type": "string", "description": "hex sha256 of the file's bytes"}}, "path", "content"))}, "content"),
		"metadata": object(obj{"exportedAt": obj{"type": "string", "format": "date-time"}, "exportedFrom": str(),
			"origin": ref("Origin"), "digest": str()}),
	}, "skill")
	return obj{
		"Object": obj{"type": "object"},
		"Error": object(obj{"error": object(obj{
			"code": obj{"type": "string", "enum": []string{"unauthorized", "forbidden", "not_found", "conflict", "invalid", "read_only",
				"refused", "too_large", "no_store", "internal", "bad_request", "precondition_required"}},
			"message": str(), "field": str(), "path": str(),
			"currentVersion": obj{"type": "integer", "description": "the skill's current version, for conflicts and 428"},
			"problems":       arrayOf(ref("Diagnostic"))}, "code", "message"),
			"suggestions": arrayOf(str())}, "error"),
		"Diagnostic": diag,
		"Origin":     origin,
		"File":       file,
		"Health":     object(obj{"status": str(), "skills": integer(), "generation": integer(), "ready": obj{"type": "boolean", "description": "what first requests would build is built (GET /readyz)"}}, "status", "skills", "generation"),
		"SkillSummary": object(obj{"name": str(), "description": str(), "source": ref("Origin"), "version": integer(), "digest": str(),
			"mode": obj{"type": "string", "enum": []string{"listed", "inline", "hidden", "disabled"}}, "shadowed": boolean(),
			"files": integer(), "enabled": boolean(), "readOnly": boolean()}, "name", "description", "source", "mode", "files", "enabled"),
		"SkillList": object(obj{"skills": arrayOf(ref("SkillSummary")), "hasMore": obj{"type": "boolean", "description": "true when there are skills after this page"},
			"limit":    obj{"type": "integer", "description": "the limit this page was served with: the one asked for, the default, or the largest (when a larger one was asked for)"},
			"nextPage": obj{"type": "string", "description": "pass as page= for the next page (only when hasMore is true)"}}, "skills", "limit", "hasMore"),
		"SkillDetail": object(obj{"name": str(), "description": str(), "source": ref("Origin"), "version": integer(), "digest": str(),
			"enabled": boolean(), "readOnly": boolean(), "reason": str(), "shadowedBy": ref("Origin"), "category": str(),
			"skillVersion": str(), "tags": arrayOf(str()), "requiresTools": arrayOf(str()), "frontmatter": obj{"type": "object"},
			"entry": str(), "files": arrayOf(ref("File")), "size": integer(), "content": str(),
			"createdAt": obj{"type": "string", "format": "date-time"}, "updatedAt": obj{"type": "string", "format": "date-time"},
			"warnings": arrayOf(ref("Diagnostic"))}, "name", "description", "source", "readOnly", "files", "content"),
		"Manifest":                object(obj{"name": str(), "version": integer(), "entry": str(), "files": arrayOf(ref("File"))}, "name", "entry", "files"),
		"PortableDocument":        portableDoc,
		"PortableDocumentOrArray": obj{"oneOf": []obj{ref("PortableDocument"), arrayOf(ref("PortableDocument"))}},
		"Version": object(obj{"version": integer(), "digest": str(), "size": integer(), "files": integer(), "note": str(),
			"source": str(), "provenance": str(), "createdAt": obj{"type": "string", "format": "date-time"}}, "version", "digest"),
		"VersionList": object(obj{"name": str(), "versions": arrayOf(ref("Version"))}, "name", "versions"),
		"ImportResults": object(obj{"results": arrayOf(object(obj{"name": str(),
			"action": obj{"type": "string", "enum": []string{"created", "updated", "unchanged", "refused", "skipped"},
				"description": "skipped: accepted, but not written because another skill of this all-or-nothing import was refused (error names it)"},
			"version": integer(), "error": str(), "problems": arrayOf(ref("Diagnostic"))}, "name", "action")),
			"message": obj{"type": "string", "description": "with a 422: what was and was not written"}}, "results"),
		"Agent": object(obj{"id": str(), "displayName": str(), "description": str(), "skills": integer(),
			"format": obj{"type": "string", "enum": []string{"pi", "catalog", "progressive"}},
			"budget": obj{"type": "integer", "description": "the budget the prompt is rendered with, in characters (the agent's, else the default); -1 for none"}}, "id", "skills", "format", "budget"),
		"Index": object(obj{"name": str(), "about": str(), "auth": str(), "links": object(obj{"openapi": str(), "health": str(), "agents": str(),
			"mcp": str(), "agentMcp": str(), "wellKnown": str(), "wellKnownV1": str()}),
			"endpoints": arrayOf(object(obj{"name": str(), "method": str(), "path": str(), "summary": str(),
				"auth": obj{"type": "string", "enum": []string{"none", "token", "agent", "viewer", "author", "reviewer", "admin"}}}, "name", "method", "path", "summary", "auth"))},
			"name", "links", "endpoints"),
		"AgentList": object(obj{"agents": arrayOf(ref("Agent"))}, "agents"),
		"PromptResult": object(obj{"prompt": str(), "report": object(obj{"format": str(), "budget": integer(),
			"budgetTokens": obj{"type": "integer", "description": "the token budget applied (0: none); tokens are counted as characters ÷ 4, rounded up"},
			"chars":        integer(), "tokens": integer(), "total": integer(), "listed": integer(), "inlined": integer(),
			"counts": obj{"type": "object", "description": "how many listing skills are in each tier",
				"properties": obj{"full": integer(), "shortened": integer(), "name": integer(), "grouped": integer(), "omitted": integer()},
				"required":   []string{"full", "shortened", "name", "grouped", "omitted"}},
			"detail":    obj{"type": "string", "enum": []string{"summary", "full"}, "description": "full (with ?report=full) adds tiers, shortened, nameOnly, grouped and omitted"},
			"tiers":     obj{"type": "object", "description": "with ?report=full: every listing skill's tier", "additionalProperties": obj{"type": "string", "enum": []string{"full", "shortened", "name", "grouped", "omitted"}}},
			"shortened": arrayOf(str()), "nameOnly": arrayOf(str()), "grouped": arrayOf(str()), "omitted": arrayOf(str())},
			"format", "budget", "budgetTokens", "chars", "tokens", "total", "listed", "inlined", "counts", "detail"),
			"diagnostics": arrayOf(ref("Diagnostic"))}, "prompt", "report", "diagnostics"),
		"LoadResult": object(obj{"status": obj{"type": "string", "enum": []string{"ok", "not_found", "error"}}, "name": str(),
			"text": obj{"type": "string", "description": "the <skill_context> envelope, or what went wrong"}, "suggestions": arrayOf(str())},
			"status", "name", "text"),
		"FileResult": object(obj{"status": obj{"type": "string", "enum": []string{"ok", "not_found", "refused", "too_large", "changed", "error"}},
			"skill": str(), "path": str(), "contentType": str(), "size": integer(), "offset": integer(),
			"encoding": obj{"type": "string", "enum": []string{"utf-8", "base64"}}, "content": str(), "more": boolean(),
			"message": str(), "code": str()}, "status", "skill", "path"),
		"SearchResult": object(obj{"query": str(), "skills": arrayOf(object(obj{"name": str(), "description": str(), "score": obj{"type": "number"},
			"source": str()}, "name", "description", "score", "source"))}, "query", "skills"),
		"DiagnosticList": object(obj{"diagnostics": arrayOf(ref("Diagnostic")),
			"counts": object(obj{"errors": integer(), "warnings": integer(), "infos": integer(),
				"problems": obj{"type": "integer", "description": "errors + warnings: the count of problems the UI's skills list, skill page and Diagnostics page show (info lines are advice, not problems)"}},
				"errors", "warnings", "infos", "problems"),
			"limit":    obj{"type": "integer", "description": "the limit this page was served with: the one asked for, the default, or the largest (when a larger one was asked for); not sent with ?skill="},
			"hasMore":  obj{"type": "boolean", "description": "true when there are diagnostics after this page (not sent with ?skill=)"},
			"nextPage": obj{"type": "string", "description": "the page cursor of the next page, when hasMore is true"}}, "diagnostics", "counts"),
		"ReloadResult": object(obj{"generation": integer(), "skills": integer(), "took": str()}, "generation", "skills"),
		"SourceList": object(obj{"sources": arrayOf(object(obj{"id": str(), "kind": obj{"type": "string", "enum": []string{"git", "index", "oci", "folder", "store", "plugin"}}, "url": str(), "ref": str(),
			"paths": arrayOf(str()), "every": str(), "revision": str(), "digest": str(), "skills": integer(), "synced": str(), "error": str(),
			"signer": object(obj{"kind": obj{"type": "string", "enum": []string{"ssh", "openpgp", "key", "keyless"}}, "key": str(), "identity": str(), "issuer": str()}, "kind"),
			"errors": integer(), "warnings": integer()}, "id", "kind", "skills", "errors", "warnings"))}, "sources"),
		"SourceSync": object(obj{"id": str(), "from": str(), "to": str(), "moved": boolean(), "added": arrayOf(str()), "removed": arrayOf(str()), "changed": arrayOf(str()),
			"digests": obj{"type": "object", "additionalProperties": str()}, "summary": str(), "error": str(), "code": str()}, "id", "moved", "summary"),
		"Receipt": object(obj{"id": integer(), "time": obj{"type": "string", "format": "date-time"}, "agent": str(), "skill": str(),
			"action": obj{"type": "string", "enum": []string{"load", "read"}}, "path": str(), "source": str(), "plugin": str(),
			"trust": str(), "digest": str(), "transport": str(), "outcome": str(), "token": str(), "code": str(), "origin": str(),
			"count": obj{"type": "integer", "minimum": 1, "description": "how many loads or reads the row stands for: identical receipts (all fields but time) recorded within one 50 ms flush are one row, with the first one's time"}},
			"time", "agent", "skill", "action", "count"),
		"ReceiptList": object(obj{"receipts": arrayOf(ref("Receipt"))}, "receipts"),
		"AuditRecord": object(obj{"seq": integer(), "hash": str(), "prevHash": str(), "time": obj{"type": "string", "format": "date-time"},
			"actorToken": str(), "actor": str(), "role": str(), "action": str(), "target": str(), "before": str(), "after": str(),
			"client": str(), "transport": str(), "detail": str()}, "seq", "hash", "prevHash", "time", "actor", "role", "action", "target", "transport"),
		"AuditList":   object(obj{"records": arrayOf(ref("AuditRecord")), "limit": integer(), "hasMore": boolean(), "nextPage": str()}, "records", "limit", "hasMore"),
		"AuditVerify": object(obj{"ok": boolean(), "records": integer(), "first": integer(), "last": integer(), "head": str(), "badSeq": integer(), "reason": str()}, "ok", "records"),
		"Block": object(obj{"id": str(), "skill": str(), "version": integer(), "digest": str(), "source": str(), "reason": str(), "actor": str(),
			"createdAt": obj{"type": "string", "format": "date-time"}}, "id", "reason", "createdAt"),
		"BlockList": object(obj{"blocks": arrayOf(ref("Block"))}, "blocks"),
	}
}
