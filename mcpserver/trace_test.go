package mcpserver

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/internal/obs"
)

func TestOpNamesAreBounded(t *testing.T) {
	for _, c := range []struct{ method, tool, want string }{
		{"tools/call", "load_skill", "tools/call load_skill"},
		{"tools/call", "read_skill_file", "tools/call read_skill_file"},
		{"tools/call", "rm -rf /", "tools/call _other"},
		{"tools/call", "", "tools/call _other"},
		{"tools/list", "", "tools/list"},
		{"skills/get", "", "skills/get"},
		{"evil/" + strings.Repeat("x", 1000), "", "_other"},
		{"", "", "_other"},
	} {
		if got := opName(c.method, c.tool); got != c.want {
			t.Errorf("opName(%q, %q) = %q, want %q", c.method, c.tool, got, c.want)
		}
	}
	// Every tool the server installs has its own name.
	for tool := range toolOps {
		if opName("tools/call", tool) != "tools/call "+tool {
			t.Errorf("tool %s has no name of its own", tool)
		}
	}
}

func TestMetaTrace(t *testing.T) {
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "load_skill", Meta: mcp.Meta{"traceparent": tp, "tracestate": "a=b"}}}
	if gotTP, gotTS := metaTrace(req); gotTP != tp || gotTS != "a=b" {
		t.Fatalf("metaTrace = %q, %q", gotTP, gotTS)
	}
	// No params (a nil pointer in the interface), no _meta, a traceparent
	// too long or not a string: nothing.
	for _, r := range []mcp.Request{
		&mcp.CallToolRequest{},
		&mcp.ListToolsRequest{Params: &mcp.ListToolsParams{}},
		&mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: mcp.Meta{"traceparent": strings.Repeat("a", 129)}}},
		&mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: mcp.Meta{"traceparent": 42}}},
	} {
		if gotTP, _ := metaTrace(r); gotTP != "" {
			t.Errorf("metaTrace(%#v) = %q, want none", r, gotTP)
		}
	}
}

// seen records the operations started, with the caller's trace context.
type seen struct {
	mu  sync.Mutex
	ops []string
}

func (s *seen) Start(ctx context.Context, kind obs.Kind, name string, _ []obs.Attr) (context.Context, func(error)) {
	r, _ := obs.RemoteFrom(ctx)
	s.mu.Lock()
	s.ops = append(s.ops, kind.String()+" "+name+" "+r.TraceParent)
	s.mu.Unlock()
	return ctx, func(error) {}
}

// TestStdioMetaTraceContext: without an HTTP request, a message's _meta
// carries the caller's trace context to its operation.
func TestStdioMetaTraceContext(t *testing.T) {
	f := newFixture(t)
	rec := &seen{}
	obs.Set(rec)
	defer obs.Set(nil)
	cs := connect(t, f.svc, Options{Agent: "coder"}, openPrincipal, nil)
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "load_skill", Arguments: map[string]any{"name": "beta"}, Meta: mcp.Meta{"traceparent": tp}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := map[string]bool{"mcp tools/call load_skill " + tp: false, "mcp tools/list ": false}
	for _, op := range rec.ops {
		if _, ok := want[op]; ok {
			want[op] = true
		}
	}
	for op, ok := range want {
		if !ok {
			t.Errorf("no operation %q in %q", op, rec.ops)
		}
	}
}
