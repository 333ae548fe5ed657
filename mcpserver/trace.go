package mcpserver

import (
	"context"
	"errors"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/internal/obs"
)

// Each MCP request is one obs.KindMCP operation, for the observers the
// binary registered (traces, metrics): the SDK's path marks it in
// middleware (marked), the fast path in answer. Its name is the method, or
// "tools/call TOOL" for a call of one of loadout's tools; a method or tool
// the server does not have is "_other" or "tools/call _other", so names
// stay a set the code fixes whatever clients send.

// opOther names a method, or a tool, the server does not have.
const opOther = "_other"

// toolOps are the operation names of tools/call, by tool.
var toolOps = map[string]string{
	"load_skill":      "tools/call load_skill",
	"use_skill":       "tools/call use_skill",
	"read_skill_file": "tools/call read_skill_file",
	"search_skills":   "tools/call search_skills",
}

// opName is the operation name of a request for method calling tool (for
// tools/call).
func opName(method, tool string) string {
	if method == "tools/call" {
		if op, ok := toolOps[tool]; ok {
			return op
		}
		return "tools/call " + opOther
	}
	if knownMethods[method] {
		return method
	}
	return opOther
}

// errToolResult is what a tool call's operation ends with when its result
// is an error result (isError: a refusal, an unknown skill).
var errToolResult = errors.New("the tool's result is an error (isError)")

// requestCtxKey carries, through the SDK's per-request token info, the
// context of the HTTP request that carried a message (with that request's
// span), when an observer is registered: the SDK runs a session's
// messages in the context of the request that opened the session.
const requestCtxKey = "loadout.request.ctx"

// marked runs handle as one operation when an observer is registered.
func (s *server) marked(ctx context.Context, method string, req mcp.Request, handle func(context.Context) (mcp.Result, error)) (mcp.Result, error) {
	tool := ""
	if method == "tools/call" {
		if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
			tool = r.Params.Name
		}
	}
	if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
		if rc, ok := ex.TokenInfo.Extra[requestCtxKey].(context.Context); ok {
			ctx = obs.Carry(ctx, rc)
		}
	} else if tp, ts := metaTrace(req); tp != "" {
		// No HTTP request (stdio): the message's own _meta may carry the
		// caller's trace context.
		ctx = obs.WithRemote(ctx, tp, ts)
	}
	name := opName(method, tool)
	attrs := []obs.Attr{{Key: "rpc.system", Value: "jsonrpc"}, {Key: "rpc.method", Value: method}}
	if name == opOther {
		attrs[1].Value = opOther
	}
	if tool != "" {
		attrs = append(attrs, obs.Attr{Key: "gen_ai.tool.name", Value: toolOrOther(tool)})
	}
	ctx, end := obs.Start(ctx, obs.KindMCP, name, attrs...)
	res, err := handle(ctx)
	end(outcome(res, err))
	return res, err
}

func toolOrOther(tool string) string {
	if _, ok := toolOps[tool]; ok {
		return tool
	}
	return opOther
}

func outcome(res mcp.Result, err error) error {
	if err != nil {
		return err
	}
	if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
		return errToolResult
	}
	return nil
}

// metaTrace returns the traceparent and tracestate of a message's _meta
// (strings of at most obs.MaxTraceParent and obs.MaxTraceState bytes;
// anything else is ignored).
func metaTrace(req mcp.Request) (tp, ts string) {
	p := req.GetParams()
	if p == nil {
		return "", ""
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return "", ""
	}
	m := p.GetMeta()
	tp, _ = m["traceparent"].(string)
	ts, _ = m["tracestate"].(string)
	if len(tp) > obs.MaxTraceParent {
		return "", ""
	}
	return tp, ts
}
