// Package wellknown serves an agent's skills to HTTP skill installers such
// as `npx skills`, under the well-known paths they look for. Handler serves,
// relative to wherever it is mounted:
//
//	/.well-known/agent-skills/index.json      discovery index, schema 0.2.0
//	/.well-known/agent-skills/NAME.tar.gz     archive of a multi-file skill
//	/.well-known/agent-skills/NAME/PATH       any file of a skill (SKILL.md too)
//	/.well-known/skills/index.json            the older index (0.1.0)
//	/.well-known/skills/NAME/PATH             any file of a skill, raw
//
// # The 0.2.0 index
//
//	{"$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
//	 "skills": [
//	   {"name": "notes", "type": "skill-md", "description": "…",
//	    "url": "notes/SKILL.md", "digest": "sha256:<64 hex>"},
//	   {"name": "deploy", "type": "archive", "description": "…",
//	    "url": "deploy.tar.gz", "digest": "sha256:<64 hex>"}],
//	 "warnings": [{"skill": "…", "code": "…", "message": "…"}]}
//
// A skill with no file besides SKILL.md is a "skill-md" entry whose digest
// is the sha256 of the SKILL.md bytes. Any other skill is an "archive"
// entry: a gzip-compressed ustar archive with SKILL.md and every file at its
// root (no wrapper folder, as the discovery RFC requires), mode 0755 for
// executable files and 0644 for the rest, no folder entries, no links, a
// fixed modification time, so one skill always gives the same bytes. The
// digest is the sha256 of exactly the archive bytes served. tar.gz was
// chosen over zip because the RFC names it first and it carries Unix modes.
//
// URLs in the index are relative to the index (RFC 3986 resolution, which
// the RFC requires of clients). They are therefore right under any mount
// point (/ or /agents/ID/) and behind any proxy, without trusting
// X-Forwarded-Host or X-Forwarded-Proto, which this package never reads.
//
// # The 0.1.0 index
//
//	{"skills": [{"name": "deploy", "description": "…",
//	             "files": ["SKILL.md", "scripts/deploy.sh", …]}],
//	 "warnings": […]}
//
// Clients fetch BASE/.well-known/skills/NAME/FILE for each listed file. A
// skill whose entry file is skill.md is still listed and served as SKILL.md,
// since clients ask for that name.
//
// # What is left out, and how it is reported
//
// Installers enforce limits and reject entries they cannot read; a skill they
// would drop is left out here, and never silently: each is logged once per
// build with slog, listed in the index's "warnings" array (clients ignore
// unknown fields) and counted in the Loadout-Warnings response header.
//
//   - more than 1,000 files (SKILL.md included), or more than 50 MiB of file
//     bytes or of archive bytes: both indexes;
//   - a name that is not 1–64 of a-z, 0-9 and single inner hyphens (the
//     installers' check; one bad entry makes skills@1.3.9 refuse the whole
//     0.1.0 index): both indexes;
//   - a file that cannot be served: over limits.maxFileSize (16 MiB by
//     default; too-large), or a link out of the skill, a FIFO or other
//     special file, a skill folder swapped since the scan, a file whose
//     size changed since the scan (read-error): both indexes;
//   - a path a ustar header cannot hold (non-ASCII, or too long to split
//     into prefix and name): the 0.2.0 index;
//   - a path with "..", "?", "#", "%" or "\" in it, which installers refuse
//     or put into a URL unescaped: the 0.1.0 index.
//
// A description longer than 1,024 UTF-16 units (the installers' limit) is
// shortened in the 0.2.0 index, with a warning. The 0.1.0 index also warns
// about files that are not UTF-8 text, because skills@1.3.9 decodes every
// downloaded file as UTF-8 and so corrupts them. Both indexes warn
// (executable-dropped, the skill still listed) about a skill with
// executable files, naming them: every installer version writes files
// without their executable bit. ExecutableWarning gives the message with
// its advice to other callers (`loadout check`) and to the log; the indexes
// carry a short form (the files, not the advice), since it is there once
// per such skill.
//
// # Hidden skills
//
// Skills marked disable-model-invocation are listed. That flag keeps a skill
// out of the model's listing, but a person can still invoke it, and an
// installer installs skills for people; the flag travels inside SKILL.md, so
// the agent that receives the skill still honours it.
//
// # Access, caching, consistency
//
// The principal comes from the request context (service.PrincipalFrom); the
// loadout is svc.Loadout(principal, agentID), so scopes are checked on every
// request, and a refusal is a JSON error: {"error": {"code", "message"}}
// with 401, 403 or 404.
//
// Both indexes are built once per (service, agent, generation) and cached
// with the loadout value they describe; Handler itself is cheap, so calling
// it per request is fine. A build reads each file once, in pieces, through
// the skill (files are opened without blocking, so a FIFO is refused at
// once); it holds no lock while it reads, so requests for a newer
// generation never wait for an older build, and a request waiting for a
// build gives up when it is cancelled. Archives are cached by their digest
// (so a hit is always exactly the bytes an index advertised) in a
// least-recently-used cache of at most 256 MiB shared by every handler.
// Responses carry a strong ETag (If-None-Match gives 304, Range works for
// files and archives) and Cache-Control: private, no-cache. The indexes
// are encoded without indentation, and go out gzip-compressed to a client
// that accepts gzip, compressed once per built index (internal/httpbody;
// Vary: Accept-Encoding, the gzip form with its own ETag); the digests in
// them are always of the uncompressed files and archives. If an archive has to be rebuilt
// (evicted) or a skill-md entry's SKILL.md is read again and the bytes no
// longer match the digest in the index (files changed on disk before a
// reload), the request gets 409 and the cached index is dropped, so the
// next index request describes the new bytes. Raw files are streamed
// (hashed in pieces for the ETag, never held whole); one that cannot be
// served answers 403 (a link out of the skill or a special file), 409
// (changed since the scan) or 413 (over the size cap), with the refusal's
// code in error.problems. Raw files are served with
// Content-Security-Policy: sandbox and X-Content-Type-Options: nosniff, so
// a skill's HTML cannot run as a page of this server. Downloads here are
// not activations: no receipts are recorded.
//
// # What installers do with it
//
// TestSkillsInstallerE2E runs the real `skills` CLI (pinned in e2e/) against
// this handler on 127.0.0.1:
//
//   - skills@1.3.9 reads only /.well-known/skills/index.json, at the URL's
//     path and then at the host's root; it rejects the whole index if one
//     entry fails its checks. It fetches SKILL.md and each listed file,
//     decodes every response as UTF-8 text and writes it back, with the
//     default file mode: text arrives byte-identical, other bytes become
//     U+FFFD, a byte order mark is dropped and executable bits are lost.
//   - skills@1.5.26 and skills@1.7.4 (both need Node >= 22.20; the test
//     runs every installer on compat/'s pinned Node) read
//     /.well-known/agent-skills/index.json first, verify the digest and
//     unpack the archive (zip or tar.gz, files at the root, links refused,
//     50 MiB and 1,000 files at most): every file arrives byte-identical,
//     but their tar reader ignores modes, so executable bits are lost too.
//
// All three ignore the index's "warnings" array.
package wellknown
