package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
)

// Every skill of the agent is also a prompt: the way a person starts a
// skill from the host (Claude Code shows MCP prompts as slash commands).
// It is how a disable-model-invocation skill, which the model-facing tools
// refuse, is started at all when the host does not speak the skills
// extension. prompts/get activates the skill as load_skill does (with a
// receipt) and returns its instructions as one user message.
//
// Prompts are answered from the catalog page by page, like resources/list,
// not registered one by one with the SDK, so a catalog of any size costs
// nothing until it is listed.

// promptArg is the one optional argument of every skill prompt.
const promptArg = "task"

// placeholderPrompt is added and removed at once after a reload, which
// makes the SDK send one (debounced) prompts/list_changed.
const placeholderPrompt = "loadout.placeholder"

// notifyPromptsChanged tells every session that the prompts changed.
func (s *server) notifyPromptsChanged() {
	s.mcp.AddPrompt(&mcp.Prompt{Name: placeholderPrompt}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such prompt"}
	})
	s.mcp.RemovePrompts(placeholderPrompt)
}

// promptable reports whether a person may start the skill through a
// prompt: any skill but one the agent's invalidSkills "refuse" refuses.
func promptable(l *catalog.Loadout, v *view, e *catalog.Entry) bool {
	return !refuseInvalid(l) || v.validity(e.Skill).problem == ""
}

// listPrompts serves prompts/list: one prompt per skill, in name order,
// PageSize*10 to a page.
func (s *server) listPrompts(ctx context.Context, req *mcp.ListPromptsRequest) (*mcp.ListPromptsResult, error) {
	l, v, err := s.loadout(ctx)
	if err != nil {
		return nil, err
	}
	var cursor string
	if req.Params != nil {
		cursor = req.Params.Cursor
	}
	names := l.Names()
	i, err := nameAfter(names, cursor)
	if err != nil {
		return nil, err
	}
	page := s.opt.PageSize * 10
	res := &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{},
		Cacheable: mcp.Cacheable{TTLMs: listTTLMs, CacheScope: cacheScope(ctx)}}
	for ; i < len(names); i++ {
		e, ok := l.Lookup(names[i])
		if !ok || !promptable(l, v, e) {
			continue
		}
		if len(res.Prompts) == page {
			res.NextCursor = encodeCursor(names[i-1], 0)
			break
		}
		res.Prompts = append(res.Prompts, &mcp.Prompt{
			Name:        names[i],
			Description: e.Skill.Description,
			Arguments: []*mcp.PromptArgument{{Name: promptArg,
				Description: "what you want done with this skill (optional; added after its instructions)"}},
		})
	}
	return res, nil
}

// getPrompt serves prompts/get: the skill activated for a person.
func (s *server) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	l, v, err := s.loadout(ctx)
	if err != nil {
		return nil, err
	}
	if req.Params == nil || strings.TrimSpace(req.Params.Name) == "" {
		return nil, invalidParams("prompts/get needs params.name, a skill's name (prompts/list lists them)")
	}
	name := req.Params.Name
	if e, ok := l.Lookup(name); ok && !promptable(l, v, e) {
		_, msg := modelRefusal(l, v, name)
		s.svc.RecordRefusal(service.PrincipalFrom(ctx), l, e.Skill, name, "load", "", codeInvalidSkill, callFrom(ctx).transport)
		return nil, invalidParams("%s", msg)
	}
	for k := range req.Params.Arguments {
		if k != promptArg {
			return nil, invalidParams("prompt %q takes one argument, %q; %q is not one", name, promptArg, k)
		}
	}
	res, err := s.svc.Load(ctx, service.PrincipalFrom(ctx), s.agent, name, callFrom(ctx).transport)
	if err != nil {
		return nil, s.rpcError(err)
	}
	if res.Status != catalog.StatusOK {
		return nil, invalidParams("%s", res.Text)
	}
	text := res.Text
	if task := strings.TrimSpace(req.Params.Arguments[promptArg]); task != "" {
		text += fmt.Sprintf("\n\nThe task: %s", task)
	}
	desc := ""
	if e, ok := l.Lookup(name); ok {
		desc = e.Skill.Description
	}
	return &mcp.GetPromptResult{Description: desc, Messages: []*mcp.PromptMessage{
		{Role: "user", Content: &mcp.TextContent{Text: text}},
	}}, nil
}
