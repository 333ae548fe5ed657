package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// pngBytes is a small binary file (a PNG header and non-UTF-8 bytes).
var pngBytes = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0xff, 0x00, 0xfe}, 40)...)

// bigText is over the 256 KiB read cap of read_skill_file.
var bigText = strings.Repeat("0123456789abcdef\n", 20000) // 340,000 bytes

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeSkill(t testing.TB, root, name, desc, extra string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(root, name)
	md := "---\nname: " + name + "\ndescription: " + desc + "\n" + extra + "---\n\n# " + name + "\n\nFollow these steps.\n"
	writeFile(t, filepath.Join(dir, "SKILL.md"), []byte(md))
	for p, data := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(p)), []byte(data))
	}
}

type fixture struct {
	rootA, rootB string
	svc          *service.Service
}

// newFixture makes two roots: agent "coder" sees alpha, beta and gamma;
// agent "other" sees delta.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{rootA: t.TempDir(), rootB: t.TempDir()}
	writeSkill(t, f.rootA, "alpha", "Fill in PDF forms and check their fields.", "version: 1.0\nmetadata:\n  author: tester\n", map[string]string{
		"references/guide.md":     "# Guide\n\nRead this first.\n",
		"references/deep/more.md": "more\n",
		"assets/logo.png":         string(pngBytes),
		"scripts/run.sh":          "#!/bin/sh\necho hi\n",
		"data/big.txt":            bigText,
	})
	writeSkill(t, f.rootA, "beta", "Write release notes from commit logs.", "", nil)
	writeSkill(t, f.rootA, "gamma", "Review Go code for concurrency bugs.", "license: MIT\n", map[string]string{"notes.txt": "gamma notes\n"})
	writeSkill(t, f.rootB, "delta", "Only the other agent has this.", "", nil)
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "coder", Skills: []catalog.SourceSpec{{Root: f.rootA}}},
		{AgentID: "other", Skills: []catalog.SourceSpec{{Root: f.rootB}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = service.New(cat, service.Options{Logger: quiet})
	t.Cleanup(func() { f.svc.Close() })
	return f
}

// connect starts a server for opt over the in-memory transport, with the
// principal p, and returns a client session.
func connect(t testing.TB, svc *service.Service, opt Options, p service.Principal, copt *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if opt.Logger == nil {
		opt.Logger = quiet
	}
	s := newServer(ctx, svc, opt)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.mcp.Connect(service.WithPrincipal(ctx, p), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return clientOver(t, ct, copt)
}

func newClient(t testing.TB, copt *mcp.ClientOptions) *mcp.Client {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copt)
	for _, err := range []error{
		mcp.AddSendingCustomMethod[*ListSkillsParams, *ListSkillsResult](c, "skills/list"),
		mcp.AddSendingCustomMethod[*GetSkillParams, *GetSkillResult](c, "skills/get"),
		mcp.AddSendingCustomMethod[*ReadDirectoryParams, *ReadDirectoryResult](c, "resources/directory/read"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func clientOver(t testing.TB, tr mcp.Transport, copt *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := newClient(t, copt).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func rpcCode(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func listSkills(t testing.TB, cs *mcp.ClientSession, cursor string) *ListSkillsResult {
	t.Helper()
	res, err := mcp.CallCustomMethod[*ListSkillsParams, *ListSkillsResult](context.Background(), cs, "skills/list", &ListSkillsParams{Cursor: cursor})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// allSkills pages through skills/list.
func allSkills(t testing.TB, cs *mcp.ClientSession) (entries []*SkillEntry, pages int, omitted []any) {
	t.Helper()
	cursor := ""
	for {
		res := listSkills(t, cs, cursor)
		pages++
		entries = append(entries, res.Skills...)
		if o, ok := res.Meta[metaOmitted].([]any); ok {
			omitted = append(omitted, o...)
		}
		if res.NextCursor == "" {
			return entries, pages, omitted
		}
		cursor = res.NextCursor
		if pages > 100 {
			t.Fatal("skills/list does not end")
		}
	}
}

var openPrincipal = service.Principal{Open: true}
