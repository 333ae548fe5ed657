package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
)

// ReadCap is the most read_skill_file returns in one call.
const ReadCap = catalog.DefaultReadCap

// installTools adds (or replaces) the four tools. The three that take a
// skill name get the view's enum, so replacing them after a reload both
// updates the enum and makes the SDK send tools/list_changed.
func (s *server) installTools(v *view) {
	nameProp := s.nameSchema(v)
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}

	load := &mcp.Tool{
		Name:        "load_skill",
		Description: "Activate a skill: returns its instructions (the body of SKILL.md), its folder, how its relative paths resolve, and its file manifest. Call it before following a skill.",
		InputSchema: objectSchema(map[string]any{"name": nameProp}, "name"),
		Annotations: ro,
	}
	s.mcp.AddTool(load, s.loadSkill)
	use := *load
	use.Name = "use_skill"
	use.Description = "The same as load_skill (kept for clients that know this name)."
	s.mcp.AddTool(&use, s.loadSkill)

	s.mcp.AddTool(&mcp.Tool{
		Name: "read_skill_file",
		Description: fmt.Sprintf("Read one file of a skill, by a path relative to the skill folder (as listed by load_skill). "+
			"Text comes back as text, binary files as an embedded resource with its MIME type. At most %d KiB per call: "+
			"use offset and length for larger files.", ReadCap>>10),
		InputSchema: objectSchema(map[string]any{
			"name":   nameProp,
			"path":   map[string]any{"type": "string", "description": "the file's path relative to the skill folder, e.g. references/guide.md"},
			"offset": map[string]any{"type": "integer", "minimum": 0, "description": "first byte to return (default 0)"},
			"length": map[string]any{"type": "integer", "minimum": 0, "description": fmt.Sprintf("bytes to return (default: to the end, at most %d)", ReadCap)},
		}, "name", "path"),
		Annotations: ro,
	}, s.readSkillFile)

	s.mcp.AddTool(&mcp.Tool{
		Name:        "search_skills",
		Description: "Search this agent's skills by words in their names, descriptions and tags. Returns short entries (name, description, score, source), never bodies; load one with load_skill.",
		InputSchema: objectSchema(map[string]any{
			"query": map[string]any{"type": "string", "description": "words to look for: at most 1024 bytes and 32 distinct words"},
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 50, "description": "most results (default 10)"},
		}, "query"),
		Annotations: ro,
	}, s.searchSkills)
}

// nameSchema is the schema of a name argument: an enum of the agent's
// skill names while they are few enough, else a plain string.
func (s *server) nameSchema(v *view) map[string]any {
	if len(v.enum) > 0 && len(v.enum) <= s.opt.EnumLimit {
		return map[string]any{"type": "string", "enum": v.enum, "description": "the skill's name"}
	}
	return map[string]any{"type": "string", "description": "the skill's name (search_skills finds names)"}
}

func objectSchema(props map[string]any, required ...string) json.RawMessage {
	b, err := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false})
	if err != nil {
		panic(err)
	}
	return b
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

func decodeArgs(req *mcp.CallToolRequest, into any) *mcp.CallToolResult {
	raw := req.Params.Arguments
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return toolError(fmt.Sprintf("invalid arguments for %s: %v", req.Params.Name, err))
	}
	return nil
}

type nameArgs struct {
	Name string `json:"name"`
}

func (s *server) loadSkill(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a nameArgs
	if bad := decodeArgs(req, &a); bad != nil {
		return bad, nil
	}
	if strings.TrimSpace(a.Name) == "" {
		return toolError("name is required: give the name of a skill (search_skills finds names)"), nil
	}
	if msg := s.toolRefusal(ctx, a.Name, "load", ""); msg != "" {
		return toolError(msg), nil
	}
	res, err := s.svc.Load(ctx, service.PrincipalFrom(ctx), s.agent, a.Name, callFrom(ctx).transport)
	if err != nil {
		return toolError(s.refusal(err).Message), nil
	}
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Text}}}
	out.IsError = res.Status != catalog.StatusOK
	return out, nil
}

// toolRefusal is why a model-facing tool must not serve the skill name
// (modelRefusal), or "" to let the service answer (which also refuses a
// caller that may not read this agent, and an unknown name). A refusal
// leaves a receipt, as the service's own refusals do.
func (s *server) toolRefusal(ctx context.Context, name, action, path string) string {
	l, v, err := s.loadout(ctx)
	if err != nil {
		return ""
	}
	code, msg := modelRefusal(l, v, name)
	if msg != "" {
		e, _ := l.Lookup(name)
		s.svc.RecordRefusal(service.PrincipalFrom(ctx), l, e.Skill, name, action, path, code, callFrom(ctx).transport)
	}
	return msg
}

type readArgs struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
}

func (s *server) readSkillFile(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a readArgs
	if bad := decodeArgs(req, &a); bad != nil {
		return bad, nil
	}
	if strings.TrimSpace(a.Name) == "" || a.Path == "" {
		return toolError("name and path are required: the skill's name and a path relative to its folder, as load_skill lists them"), nil
	}
	if msg := s.toolRefusal(ctx, a.Name, "read", a.Path); msg != "" {
		return toolError(msg), nil
	}
	opt := catalog.ReadOptions{Offset: a.Offset, Length: a.Length, Max: ReadCap}
	if opt.Length == 0 {
		// A large file comes back in pieces rather than being refused.
		opt.Length = ReadCap
	}
	res, err := s.svc.ReadFile(ctx, service.PrincipalFrom(ctx), s.agent, a.Name, a.Path, opt, callFrom(ctx).transport)
	if err != nil {
		return toolError(s.refusal(err).Message), nil
	}
	if res.Status != catalog.StatusOK {
		return toolError(res.Message), nil
	}
	out := &mcp.CallToolResult{}
	if res.Encoding == "base64" {
		out.Content = append(out.Content, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: fileURI(a.Name, res.Path), MIMEType: res.ContentType, Blob: res.Data}})
	} else {
		out.Content = append(out.Content, &mcp.TextContent{Text: res.Content})
	}
	if res.More {
		end := res.Offset + int64(len(res.Data))
		out.Content = append(out.Content, &mcp.TextContent{Text: fmt.Sprintf(
			"[more: this is bytes %d to %d of %d of %s; call read_skill_file again with offset %d for the rest]",
			res.Offset, end, res.Size, res.Path, end)})
	}
	return out, nil
}

type searchArgs struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

type searchResult struct {
	Skills []catalog.Hit `json:"skills"`
}

func (s *server) searchSkills(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a searchArgs
	if bad := decodeArgs(req, &a); bad != nil {
		return bad, nil
	}
	if strings.TrimSpace(a.Query) == "" {
		return toolError("query is required: give a few words describing the task"), nil
	}
	if err := catalog.CheckQuery(a.Query); err != nil {
		return toolError("query: " + err.Error()), nil
	}
	if a.Limit <= 0 {
		a.Limit = 10
	}
	a.Limit = min(a.Limit, 50)
	// Skills the tools refuse (hidden ones; invalid ones on a strict agent)
	// are not offered: ask for as many more as there are, then drop them.
	v := s.current()
	hits, err := s.svc.Search(ctx, service.PrincipalFrom(ctx), s.agent, a.Query, a.Limit+v.hidden)
	if err != nil {
		return toolError(s.refusal(err).Message), nil
	}
	if l, v, err := s.loadout(ctx); err == nil {
		kept := make([]catalog.Hit, 0, len(hits))
		for _, h := range hits {
			if _, msg := modelRefusal(l, v, h.Name); msg == "" {
				kept = append(kept, h)
			}
		}
		hits = kept[:min(len(kept), a.Limit)]
	}
	if hits == nil {
		hits = []catalog.Hit{}
	}
	r := searchResult{Skills: hits}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	// The structured content is the text's bytes: marshalled once, and
	// written out as json.Marshal would write r.
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
	if len(hits) == 0 {
		out.Content = append(out.Content, &mcp.TextContent{Text: fmt.Sprintf("No skill matches %q; try other words.", a.Query)})
	}
	return out, nil
}
