package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
)

func toolSchemas(t *testing.T, cs *mcp.ClientSession) map[string]map[string]any {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = m
	}
	return out
}

func nameEnum(schema map[string]any) []any {
	props, _ := schema["properties"].(map[string]any)
	name, _ := props["name"].(map[string]any)
	e, _ := name["enum"].([]any)
	return e
}

func TestToolsFixedAndEnumSwitch(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, f.svc, Options{Agent: "coder"}, openPrincipal, nil)
	tools := toolSchemas(t, cs)
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"load_skill", "read_skill_file", "search_skills", "use_skill"}, names); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	for _, n := range []string{"load_skill", "use_skill", "read_skill_file"} {
		if diff := cmp.Diff([]any{"alpha", "beta", "gamma"}, nameEnum(tools[n])); diff != "" {
			t.Errorf("%s name enum (-want +got):\n%s", n, diff)
		}
	}

	// At the limit the enum stays; one under it, the argument is a string.
	cs = connect(t, f.svc, Options{Agent: "coder", EnumLimit: 3}, openPrincipal, nil)
	if e := nameEnum(toolSchemas(t, cs)["load_skill"]); len(e) != 3 {
		t.Errorf("EnumLimit 3 with 3 skills: enum %v, want 3 names", e)
	}
	cs = connect(t, f.svc, Options{Agent: "coder", EnumLimit: 2}, openPrincipal, nil)
	tools = toolSchemas(t, cs)
	if len(tools) != 4 {
		t.Errorf("%d tools, want 4 whatever the skill count", len(tools))
	}
	if e := nameEnum(tools["load_skill"]); e != nil {
		t.Errorf("EnumLimit 2 with 3 skills: enum %v, want a plain string", e)
	}
}

func TestInstructionsCarryTheListing(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, f.svc, Options{Agent: "coder"}, openPrincipal, nil)
	ins := cs.InitializeResult().Instructions
	for _, want := range []string{"alpha", "Fill in PDF forms", "beta", "gamma", "search_skills"} {
		if !strings.Contains(ins, want) {
			t.Errorf("instructions lack %q:\n%s", want, ins)
		}
	}
	if strings.Contains(ins, "delta") {
		t.Errorf("instructions list another agent's skill:\n%s", ins)
	}
	ext, _ := cs.InitializeResult().Capabilities.Extensions[ExtensionID].(map[string]any)
	if ext["directoryRead"] != true || cs.InitializeResult().Capabilities.Resources == nil {
		t.Errorf("capabilities %+v lack the skills extension with directoryRead and resources", cs.InitializeResult().Capabilities)
	}
}

func TestLoadSkill(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, f.svc, Options{Agent: "coder"}, openPrincipal, nil)
	for _, tool := range []string{"load_skill", "use_skill"} {
		res := callTool(t, cs, tool, map[string]any{"name": "alpha"})
		if res.IsError || !strings.Contains(text(res), "Follow these steps.") || !strings.Contains(text(res), "references/guide.md") {
			t.Errorf("%s alpha: isError=%v\n%s", tool, res.IsError, text(res))
		}
	}
	res := callTool(t, cs, "load_skill", map[string]any{"name": "alpah"})
	if !res.IsError || !strings.Contains(text(res), "alpha") {
		t.Errorf("unknown name: isError=%v %q, want an error suggesting alpha", res.IsError, text(res))
	}
	if res := callTool(t, cs, "load_skill", map[string]any{"name": "delta"}); !res.IsError {
		t.Errorf("another agent's skill loaded: %s", text(res))
	}
	if res := callTool(t, cs, "load_skill", map[string]any{}); !res.IsError || !strings.Contains(text(res), "name is required") {
		t.Errorf("no name: %v %q", res.IsError, text(res))
	}
}

func TestReadSkillFile(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, f.svc, Options{Agent: "coder"}, openPrincipal, nil)

	res := callTool(t, cs, "read_skill_file", map[string]any{"name": "alpha", "path": "references/guide.md"})
	if res.IsError || text(res) != "# Guide\n\nRead this first.\n" {
		t.Errorf("text file: isError=%v %q", res.IsError, text(res))
	}

	res = callTool(t, cs, "read_skill_file", map[string]any{"name": "alpha", "path": "assets/logo.png"})
	er, ok := res.Content[0].(*mcp.EmbeddedResource)
	if res.IsError || !ok {
		t.Fatalf("binary file: isError=%v content %T, want an embedded resource", res.IsError, res.Content[0])
	}
	if !bytes.Equal(er.Resource.Blob, pngBytes) || er.Resource.MIMEType != "image/png" || er.Resource.URI != "skill://alpha/assets/logo.png" {
		t.Errorf("binary file: uri %s mime %s, %d bytes (want %d)", er.Resource.URI, er.Resource.MIMEType, len(er.Resource.Blob), len(pngBytes))
	}

	// Over the cap: the first 256 KiB, then the rest from the offset given.
	res = callTool(t, cs, "read_skill_file", map[string]any{"name": "alpha", "path": "data/big.txt"})
	first := res.Content[0].(*mcp.TextContent).Text
	if res.IsError || len(first) != ReadCap || len(res.Content) != 2 || !strings.Contains(text(res), fmt.Sprintf("offset %d", ReadCap)) {
		t.Fatalf("big file: isError=%v, %d bytes, note %q", res.IsError, len(first), text(res)[len(first):])
	}
	res = callTool(t, cs, "read_skill_file", map[string]any{"name": "alpha", "path": "data/big.txt", "offset": ReadCap})
	if rest := text(res); res.IsError || first+rest != bigText {
		t.Errorf("big file in two reads differs from the file (%d + %d bytes)", len(first), len(rest))
	}
	res = callTool(t, cs, "read_skill_file", map[string]any{"name": "alpha", "path": "data/big.txt", "offset": 10, "length": 5})
	if got := res.Content[0].(*mcp.TextContent).Text; got != bigText[10:15] || !strings.Contains(text(res), "offset 15") {
		t.Errorf("range: %q", text(res))
	}

	for _, c := range []struct{ name, path, want string }{
		{"alpha", "../beta/SKILL.md", ".."},
		{"alpha", "/etc/passwd", "absolute"},
		{"alpha", "references/missing.md", "no file"},
		{"alpah", "SKILL.md", "alpha"},
	} {
		res := callTool(t, cs, "read_skill_file", map[string]any{"name": c.name, "path": c.path})
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s %s: isError=%v %q, want an error mentioning %q", c.name, c.path, res.IsError, text(res), c.want)
		}
	}
}

func TestSearchSkills(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, f.svc, Options{Agent: "coder"}, openPrincipal, nil)
	res := callTool(t, cs, "search_skills", map[string]any{"query": "pdf forms"})
	var got searchResult
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(got.Skills) == 0 || got.Skills[0].Name != "alpha" || got.Skills[0].Source != "folder" {
		t.Fatalf("search: %+v", got)
	}
	if strings.Contains(text(res), "Follow these steps") {
		t.Error("search returned a body")
	}
	if res := callTool(t, cs, "search_skills", map[string]any{"query": ""}); !res.IsError {
		t.Error("empty query accepted")
	}
	// Past the query's cap, a tool error naming it (a
	// megabyte of one word cost 39 CPU-seconds).
	if res := callTool(t, cs, "search_skills", map[string]any{"query": strings.Repeat("pdf ", 1<<18)}); !res.IsError || !strings.Contains(text(res), "1024 bytes") {
		t.Errorf("a megabyte query: error %v, %s", res.IsError, text(res))
	}
	if res := callTool(t, cs, "search_skills", map[string]any{"query": strings.Repeat("pdf ", 256)}); res.IsError {
		t.Errorf("a query of 1024 bytes: %s", text(res))
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func readBytes(t *testing.T, cs *mcp.ClientSession, uri string) ([]byte, string) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	c := res.Contents[0]
	if c.Blob != nil {
		return c.Blob, c.MIMEType
	}
	return []byte(c.Text), c.MIMEType
}

func TestResources(t *testing.T) {
	f := newFixture(t)
	writeSkill(t, f.rootA, "zeta", "Pads the listing to two pages.", "", map[string]string{"a.md": "a", "b.md": "b", "c/d.md": "d"})
	f.svc.Reload(context.Background(), "test")
	cs := connect(t, f.svc, Options{Agent: "coder", PageSize: 1}, openPrincipal, nil)
	var uris []string
	for r, err := range cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 10 || res.NextCursor == "" {
		t.Errorf("first page: %d resources, cursor %q; want 10 and a cursor", len(res.Resources), res.NextCursor)
	}
	want := []string{"skill://alpha/SKILL.md", "skill://alpha/assets/logo.png", "skill://alpha/data/big.txt",
		"skill://alpha/references/deep/more.md", "skill://alpha/references/guide.md", "skill://alpha/scripts/run.sh",
		"skill://beta/SKILL.md", "skill://gamma/SKILL.md", "skill://gamma/notes.txt",
		"skill://zeta/SKILL.md", "skill://zeta/a.md", "skill://zeta/b.md", "skill://zeta/c/d.md"}
	if diff := cmp.Diff(want, uris); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}

	data, mime := readBytes(t, cs, "skill://alpha/SKILL.md")
	if mime != "text/markdown" || !bytes.HasPrefix(data, []byte("---\nname: alpha")) {
		t.Errorf("SKILL.md: %s %q", mime, data)
	}
	data, mime = readBytes(t, cs, "skill://alpha/assets/logo.png")
	if mime != "image/png" || !bytes.Equal(data, pngBytes) {
		t.Errorf("logo: %s, %d bytes", mime, len(data))
	}
	data, _ = readBytes(t, cs, "skill://alpha/data/big.txt")
	if string(data) != bigText {
		t.Errorf("a read returns the whole file: %d bytes, want %d", len(data), len(bigText))
	}
	for _, uri := range []string{"skill://alpha/nope.md", "skill://nope/SKILL.md", "skill://delta/SKILL.md", "skill://alpha/references", "skill://alpha/../beta/SKILL.md"} {
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("read %s: %v, want -32602", uri, err)
		}
	}
}

func TestSkillsListPaginationAndDigests(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, f.svc, Options{Agent: "coder", PageSize: 1}, openPrincipal, nil)
	first := listSkills(t, cs, "")
	if first.ResultType != "complete" || first.TTLMs <= 0 || first.CacheScope == "" || len(first.Skills) != 1 || first.NextCursor == "" {
		t.Fatalf("first page: %+v", first)
	}
	entries, pages, omitted := allSkills(t, cs)
	if pages != 3 || len(entries) != 3 || len(omitted) != 0 {
		t.Fatalf("%d pages, %d entries, omitted %v; want 3, 3, none", pages, len(entries), omitted)
	}
	alpha := entries[0]
	if alpha.URI != "skill://alpha/SKILL.md" {
		t.Fatalf("first entry %s", alpha.URI)
	}
	if want := `{"name":"alpha","description":"Fill in PDF forms and check their fields.","version":1,"metadata":{"author":"tester"}}`; string(alpha.Frontmatter) != want {
		t.Errorf("frontmatter\n got %s\nwant %s", alpha.Frontmatter, want)
	}
	if len(alpha.Resources) != 6 || alpha.Resources[0].URI != alpha.URI {
		t.Errorf("alpha resources %+v: want SKILL.md first and 6 files", alpha.Resources)
	}
	for _, e := range entries {
		for _, r := range e.Resources {
			data, _ := readBytes(t, cs, r.URI)
			if sha(data) != r.Digest || int64(len(data)) != r.Size {
				t.Errorf("%s: listed %s %d, served %s %d", r.URI, r.Digest, r.Size, sha(data), len(data))
			}
		}
	}
	if _, err := mcp.CallCustomMethod[*ListSkillsParams, *ListSkillsResult](context.Background(), cs, "skills/list", &ListSkillsParams{Cursor: "!!"}); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("bad cursor: %v", err)
	}
}

func TestSkillsGetAndDirectories(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, f.svc, Options{Agent: "coder"}, openPrincipal, nil)
	ctx := context.Background()
	got, err := mcp.CallCustomMethod[*GetSkillParams, *GetSkillResult](ctx, cs, "skills/get", &GetSkillParams{URI: "skill://gamma/SKILL.md"})
	if err != nil {
		t.Fatal(err)
	}
	if got.ResultType != "complete" || got.Skill.URI != "skill://gamma/SKILL.md" || len(got.Skill.Resources) != 2 || got.TTLMs <= 0 || got.CacheScope == "" {
		t.Errorf("skills/get gamma: %+v", got)
	}
	for _, uri := range []string{"skill://nope/SKILL.md", "skill://delta/SKILL.md", "skill://gamma/notes.txt", "skill://gamma", "file:///etc/passwd"} {
		_, err := mcp.CallCustomMethod[*GetSkillParams, *GetSkillResult](ctx, cs, "skills/get", &GetSkillParams{URI: uri})
		if rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("skills/get %s: %v, want -32602", uri, err)
		}
	}

	dir := func(uri string) ([]string, error) {
		res, err := mcp.CallCustomMethod[*ReadDirectoryParams, *ReadDirectoryResult](ctx, cs, "resources/directory/read", &ReadDirectoryParams{URI: uri})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, r := range res.Resources {
			out = append(out, r.Name+" "+r.MIMEType+" "+r.URI)
		}
		return out, nil
	}
	root, err := dir("skill://alpha")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"SKILL.md text/markdown skill://alpha/SKILL.md",
		"assets inode/directory skill://alpha/assets",
		"data inode/directory skill://alpha/data",
		"references inode/directory skill://alpha/references",
		"scripts inode/directory skill://alpha/scripts",
	}
	if diff := cmp.Diff(want, root); diff != "" {
		t.Errorf("root (-want +got):\n%s", diff)
	}
	refs, err := dir("skill://alpha/references")
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"deep inode/directory skill://alpha/references/deep", "guide.md text/markdown skill://alpha/references/guide.md"}
	if diff := cmp.Diff(want, refs); diff != "" {
		t.Errorf("references (-want +got):\n%s", diff)
	}
	for _, uri := range []string{"skill://alpha/SKILL.md", "skill://alpha/references/guide.md", "skill://alpha/nope", "skill://nope", "skill://delta"} {
		if _, err := dir(uri); rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("directory read %s: %v, want -32602", uri, err)
		}
	}
}

func TestSkillOverLimitIsLeftOutLoudly(t *testing.T) {
	f := newFixture(t)
	files := map[string]string{}
	for i := range MaxSkillFiles { // with SKILL.md: one over the limit
		files[fmt.Sprintf("refs/f%03d.md", i)] = "x\n"
	}
	writeSkill(t, f.rootA, "huge", "A skill with too many files.", "", files)
	f.svc.Reload(context.Background(), "test")
	cs := connect(t, f.svc, Options{Agent: "coder"}, openPrincipal, nil)
	entries, _, omitted := allSkills(t, cs)
	for _, e := range entries {
		if e.URI == "skill://huge/SKILL.md" {
			t.Fatal("the skill over the 512-file limit is listed")
		}
	}
	if len(omitted) != 1 || !strings.Contains(fmt.Sprint(omitted[0]), "513 files") {
		t.Errorf("_meta omitted %v, want the huge skill with its reason", omitted)
	}
	_, err := mcp.CallCustomMethod[*GetSkillParams, *GetSkillResult](context.Background(), cs, "skills/get", &GetSkillParams{URI: "skill://huge/SKILL.md"})
	if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "limit") {
		t.Errorf("skills/get huge: %v", err)
	}
	// The tools still serve it.
	if res := callTool(t, cs, "load_skill", map[string]any{"name": "huge"}); res.IsError {
		t.Errorf("load_skill huge: %s", text(res))
	}
}

func TestListChangedAfterReload(t *testing.T) {
	f := newFixture(t)
	tools, resources, prompts := make(chan struct{}, 10), make(chan struct{}, 10), make(chan struct{}, 10)
	cs := connect(t, f.svc, Options{Agent: "coder"}, openPrincipal, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { tools <- struct{}{} },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources <- struct{}{} },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { prompts <- struct{}{} },
	})
	writeSkill(t, f.rootA, "epsilon", "A skill added while serving.", "", nil)
	f.svc.Reload(context.Background(), "test")
	for name, ch := range map[string]chan struct{}{"tools": tools, "resources": resources, "prompts": prompts} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s list_changed notification after a reload", name)
		}
	}
	if diff := cmp.Diff([]any{"alpha", "beta", "epsilon", "gamma"}, nameEnum(toolSchemas(t, cs)["load_skill"])); diff != "" {
		t.Errorf("enum after reload (-want +got):\n%s", diff)
	}
	entries, _, _ := allSkills(t, cs)
	if len(entries) != 4 {
		t.Errorf("skills/list after reload: %d entries", len(entries))
	}
	if ins := cs.InitializeResult().Instructions; strings.Contains(ins, "epsilon") {
		t.Log("(instructions are fixed per session, as MCP defines them)")
	}
}

func TestReceiptsAndScopeOverStdioTransport(t *testing.T) {
	f := newFixture(t)
	// An agent-scoped principal on another agent's server can do nothing.
	p := service.Principal{TokenID: "t1", Scopes: []string{"agent:other"}}
	cs := connect(t, f.svc, Options{Agent: "coder"}, p, nil)
	if res := callTool(t, cs, "load_skill", map[string]any{"name": "alpha"}); !res.IsError || !strings.Contains(text(res), "may not") {
		t.Errorf("load_skill across agents: isError=%v %q", res.IsError, text(res))
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://alpha/SKILL.md"}); err == nil {
		t.Error("resources/read across agents succeeded")
	}
	if _, err := mcp.CallCustomMethod[*ListSkillsParams, *ListSkillsResult](context.Background(), cs, "skills/list", &ListSkillsParams{}); rpcCode(err) != codeForbidden {
		t.Errorf("skills/list across agents: %v", err)
	}

	cs = connect(t, f.svc, Options{Agent: "coder"}, openPrincipal, nil)
	callTool(t, cs, "load_skill", map[string]any{"name": "alpha"})
	readBytes(t, cs, "skill://alpha/references/guide.md")
	rs, err := f.svc.Receipts(context.Background(), openPrincipal, store.ReceiptQuery{Agent: "coder"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Action+" "+r.Skill+" "+r.Path+" "+r.Transport+" "+r.Outcome)
	}
	slices.Sort(got)
	want := []string{"load alpha  mcp-stdio ok", "read alpha references/guide.md mcp-stdio ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("receipts (-want +got):\n%s", diff)
	}
}

func TestURIRoundTrip(t *testing.T) {
	for _, p := range []string{"SKILL.md", "a b/c#d?.md", "ünï/cödé.txt", "x%2Fy"} {
		name, got, ok := parseURI(fileURI("s", p))
		if !ok || name != "s" || got != p {
			t.Errorf("%q: %q %q %v", p, name, got, ok)
		}
	}
}

// TestSkillsArePrompts: every skill is a prompt a person can start,
// hidden ones included (the tools refuse those); prompts/get activates the
// skill and appends the task; the list pages (ten prompts a page at
// PageSize 1) and carries the caching fields.
func TestSkillsArePrompts(t *testing.T) {
	f := newFixture(t)
	writeSkill(t, f.rootA, "secret", "Only when the user asks by name.", "disable-model-invocation: true\n", nil)
	want := []string{"alpha", "beta", "gamma"}
	for i := range 9 {
		name := fmt.Sprintf("more-%d", i)
		writeSkill(t, f.rootA, name, "One more skill.", "", nil)
		want = append(want, name)
	}
	want = append(want, "secret")
	f.svc.Reload(context.Background(), "test")
	cs := connect(t, f.svc, Options{Agent: "coder", PageSize: 1}, openPrincipal, nil)
	if cs.InitializeResult().Capabilities.Prompts == nil {
		t.Fatal("the server does not declare prompts")
	}
	ctx := context.Background()
	var names []string
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, p.Name)
		if len(p.Arguments) != 1 || p.Arguments[0].Name != "task" || p.Arguments[0].Required {
			t.Errorf("prompt %s arguments: %+v", p.Name, p.Arguments)
		}
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	first, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Prompts) != 10 || first.NextCursor == "" {
		t.Errorf("first page: %d prompts, next cursor %q; want 10 and a cursor", len(first.Prompts), first.NextCursor)
	}
	if first.TTLMs != listTTLMs || first.CacheScope != "public" {
		t.Errorf("caching fields: ttlMs=%d cacheScope=%q", first.TTLMs, first.CacheScope)
	}

	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "secret", Arguments: map[string]string{"task": "cut 2.1"}})
	if err != nil {
		t.Fatalf("prompts/get of a hidden skill: %v", err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("messages: %+v", res.Messages)
	}
	body := res.Messages[0].Content.(*mcp.TextContent).Text
	if !strings.Contains(body, "secret") || !strings.HasSuffix(body, "The task: cut 2.1") {
		t.Errorf("prompt text: %q", body)
	}
	if res.Description != "Only when the user asks by name." {
		t.Errorf("description: %q", res.Description)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha", Arguments: map[string]string{"other": "x"}}); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("an unknown argument: %v", err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "nope"}); err == nil {
		t.Error("prompts/get of an unknown skill succeeded")
	}
	if _, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: "%%%"}); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("a bad cursor: %v", err)
	}
}

// TestInstructionsRenderedWhenAsked: the instructions are rendered once at
// start (so start-up logs what the budget leaves out) and then only when a
// session asks for them: reloads and writes with no new session render
// nothing, and the next initialize gets the listing as it is now.
func TestInstructionsRenderedWhenAsked(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServer(ctx, f.svc, Options{Agent: "coder", Logger: quiet})
	if n := s.renders.Load(); n != 1 {
		t.Fatalf("%d renders at start, want 1", n)
	}
	for i := range 5 {
		writeSkill(t, f.rootA, fmt.Sprintf("added-%d", i), fmt.Sprintf("Added skill number %d for the test.", i), "", nil)
		f.svc.Reload(ctx, "test")
		s.current() // as follow does after each change
	}
	if n := s.renders.Load(); n != 1 {
		t.Errorf("%d renders after 5 changes and no session, want still 1", n)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.mcp.Connect(service.WithPrincipal(ctx, service.Principal{Open: true}), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().Instructions; !strings.Contains(got, "added-4") {
		t.Errorf("the instructions after the changes lack the last skill added:\n%s", got)
	}
	if n := s.renders.Load(); n != 2 {
		t.Errorf("%d renders after one initialize, want 2", n)
	}
}

// TestInstructionsWaitForStart: with Options.Start, nothing is rendered
// until it is closed, then the first instructions are (once); without it
// (the "no" case, above) they are rendered in New.
func TestInstructionsWaitForStart(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := make(chan struct{})
	s := newServer(ctx, f.svc, Options{Agent: "coder", Logger: quiet, Start: start})
	time.Sleep(50 * time.Millisecond)
	if n := s.renders.Load(); n != 0 {
		t.Fatalf("%d renders before Start is closed, want 0", n)
	}
	close(start)
	deadline := time.Now().Add(10 * time.Second)
	for s.renders.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if n := s.renders.Load(); n != 1 {
		t.Errorf("%d renders after Start is closed, want 1", n)
	}
}

// BenchmarkViewAfterChange is what each MCP endpoint does after every
// change to the catalog (a write, a reload) at 10,000 skills: make the new
// view, with no session asking for its instructions.
func BenchmarkViewAfterChange(b *testing.B) {
	root := b.TempDir()
	for i := range 10000 {
		writeSkill(b, root, fmt.Sprintf("skill-%05d", i), fmt.Sprintf("Does task %d for the user. Use when asked about topic %d or its neighbours.", i, i), "", nil)
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "coder", Skills: []catalog.SourceSpec{{Root: root}}}}, catalog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	svc := service.New(cat, service.Options{Logger: quiet})
	b.Cleanup(func() { svc.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	s := newServer(ctx, svc, Options{Agent: "coder", Logger: quiet})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.view.Store(nil) // as a change does: the loadout is new
		s.current()
	}
}
