// Package mcpserver serves one agent's loadout over the Model Context
// Protocol, on the go-sdk (github.com/modelcontextprotocol/go-sdk).
//
// A server has two faces, because many hosts never let the model read
// resources while others read nothing else:
//
//   - Four tools, whatever the number of skills: load_skill (and its alias
//     use_skill), read_skill_file and search_skills. The name argument is a
//     JSON-schema enum of the agent's skill names while there are at most
//     Options.EnumLimit of them. The agent's listing (its prompt section in
//     the progressive format, within its budget) goes into the server
//     instructions.
//   - The MCP Skills extension (SEP-2640, io.modelcontextprotocol/skills):
//     every file of every skill is a resource skill://<name>/<path>, and the
//     methods skills/list, skills/get and resources/directory/read.
//
// # Custom methods
//
// skills/list, skills/get and resources/directory/read are not MCP base
// methods. The go-sdk (v1.8) registers them with mcp.AddReceivingCustomMethod:
// the params are decoded into our own types, the handler runs through the
// same receiving middleware as tools/call, and a *jsonrpc.Error returned by
// the handler reaches the wire with its code (-32602 for an unknown skill or
// a URI that is not a directory). The streamable HTTP transport consults the
// same method table when it pre-checks a POST, so the methods work over
// stdio, HTTP and the in-memory transport alike.
//
// resources/list is answered by a receiving middleware rather than by the
// SDK's own list: the listing is built from the catalog page by page, so ten
// thousand skills never become ten thousand registered resources. Reads go
// through one resource template, skill://{name}/{+path}.
//
// # What the extension serves
//
// A skills/list or skills/get entry carries the frontmatter of the exact
// SKILL.md that resources/read serves and the digest covers, typed as the
// extension's verifying clients read it (skill.TypedFrontmatter: YAML 1.2
// core schema, so "version: 1.0" is the number 1), with no field added. A
// skill those clients would refuse (a name that is not 1 to 64 lowercase
// letters, digits and hyphens or differs from its URI, no name or
// description field, a description over 1,024 characters, compatibility
// over 500, metadata that is not strings, frontmatter they cannot read) is
// left out of skills/list like a skill over the 512-file or 16 MiB limits:
// the page's _meta "io.github.loadout/omitted" names it with a reason that
// starts with a stable code (invalid-name:, invalid-description:,
// invalid-compatibility:, invalid-metadata:, invalid-frontmatter:,
// invalid-encoding:, too-many-files:, too-large:, unreadable:), the log
// says it once, and skills/get answers -32602 with the reason. The tools
// still serve it unless the agent's invalidSkills is "refuse".
//
// A hidden skill (disable-model-invocation: true) is for a person to start:
// the tools leave it out of their enum and search results and refuse it by
// name (leaving a receipt), while skills/list, the resources and prompts
// serve it to the host.
//
// # Prompts
//
// Every skill is also a prompt, answered from the catalog by the receiving
// middleware like resources/list: prompts/get activates the skill as
// load_skill does and returns its instructions as one user message, with
// the optional "task" argument after them. It is how a person starts a
// skill from a host that shows prompts as commands.
//
// # Protocol revisions over HTTP
//
// The SDK's stateful streamable handler refuses revision 2026-07-28, which
// has no sessions. HTTPHandler therefore sends a request that carries that
// revision (its MCP-Protocol-Version header, or the revision in its _meta)
// to a stateless handler over the same server, and every other request to
// the stateful one, so one URL serves every revision. It also answers a
// call to a method the server does not handle with JSON-RPC -32601 before
// the SDK sees it, as stdio does (the SDK answered HTTP 400 text/plain).
//
// # The fast path for tool calls
//
// The SDK decodes each message several times with a JSON decoder that
// allocates 32 KiB per decode: about 230 KB of garbage per tool call over
// HTTP, which with the catalog's live heap to scan set the calls per second
// (3 to 4 times fewer than the server could give). Stateless, it also makes
// and closes a whole session for every request. The four tools' calls
// (read_skill_file, load_skill, use_skill, search_skills) are therefore
// answered by loadout itself (fast.go) when the SDK would serve them
// without a question: a single tools/call with only name and arguments,
// with headers the SDK accepts, on an initialized session the SDK holds,
// opened by the same token, or, on a stateless handler, with no session id
// (where the SDK would make an initialized session for the one request).
// The same handler runs with the same principal and transport, and the
// answer has the SDK's bytes (TestFastPathMatchesSDK,
// TestFastPathStatelessMatchesSDK). Everything else, refusals included,
// goes to the SDK. Over stdio the server reads the client's lines and
// passes the rest to the SDK's transport in order. bench/mcp.sh (stdio)
// and bench/mcphttp.sh (HTTP, every tool, stateful and stateless) measure
// it against a bare go-sdk server.
//
// # Who is calling
//
// Every request runs with a service.Principal in its context, put there by
// a receiving middleware. Over HTTP it comes from the request that carried
// the message (HTTPHandler bridges it through the SDK's per-request token
// info, so a long-lived session never runs with the principal of the request
// that opened it); over stdio and in-memory transports it is the principal
// in the context given to Server.Connect or Server.Run.
//
// # Changes
//
// The server subscribes to the service. After every reload it replaces its
// three name-taking tools (new enum) and its resource template, and adds and
// removes a placeholder prompt, which makes the SDK send
// notifications/tools/list_changed, notifications/resources/list_changed
// and notifications/prompts/list_changed to every session. SEP-2640 defines
// no notification of its own: a host re-lists skills when resources change.
//
// # Sessions over HTTP
//
// A streamable HTTP session holds memory until it is closed, and clients
// may open sessions and never come back. Sessions (Options.Sessions) bound
// them: a count shared by the handlers given the same Sessions and a count
// per token, past which the same token's session idle the longest is
// closed (never another token's: with none of its own idle, the new
// session is refused), and an idle timeout. A session with a request in
// flight, its GET stream included, is never closed for either. A revoked
// token's sessions are closed, and its streams end. The SDK's own idle timeout (StreamableHTTPOptions.SessionTimeout)
// is not used: it counts only POSTs, so it would close a session whose
// client is listening on its GET stream.
//
// The SDK refuses, on a loopback connection, any Host but localhost (a DNS
// rebinding defence). A caller that checks Host itself, with the names the
// operator allowed (a proxy's), sets Options.HostChecked to turn that off.
package mcpserver
