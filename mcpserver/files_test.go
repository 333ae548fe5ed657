package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/portable"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

// emptiesService serves one root with the skill "s": an empty
// scripts/__init__.py, an empty binary-typed file, an empty folder
// (empty/) and one nested inside a folder with files (docs/blank/).
func emptiesService(t testing.TB, more ...func(root string)) (*service.Service, string) {
	t.Helper()
	root := t.TempDir()
	for _, f := range more {
		f(root)
	}
	writeSkill(t, root, "s", "A skill with empty files and empty folders.", "", map[string]string{
		"scripts/__init__.py": "",
		"scripts/run.py":      "print('hi')\n",
		"assets/empty.png":    "",
		"docs/guide.md":       "# Guide\n",
	})
	for _, d := range []string{"empty", "docs/blank"} {
		if err := os.MkdirAll(filepath.Join(root, "s", filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "coder", Skills: []catalog.SourceSpec{{Root: root}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Logger: quiet})
	t.Cleanup(func() { svc.Close() })
	return svc, root
}

// TestEmptyFileReadCarriesContent checks the raw JSON of resources/read of
// an empty file: its content must carry "text" or "blob" (the SDK drops an
// empty "text", and a content with neither is invalid).
func TestEmptyFileReadCarriesContent(t *testing.T) {
	svc, _ := emptiesService(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServer(ctx, svc, Options{Agent: "coder", Logger: quiet})
	ctx = service.WithPrincipal(ctx, openPrincipal)
	for _, uri := range []string{"skill://s/scripts/__init__.py", "skill://s/assets/empty.png", "skill://s/scripts/run.py"} {
		res, err := s.readResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		raw, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var wire struct {
			Contents []map[string]json.RawMessage `json:"contents"`
		}
		if err := json.Unmarshal(raw, &wire); err != nil {
			t.Fatal(err)
		}
		if len(wire.Contents) != 1 {
			t.Fatalf("%s: %s", uri, raw)
		}
		_, hasText := wire.Contents[0]["text"]
		_, hasBlob := wire.Contents[0]["blob"]
		if hasText == hasBlob {
			t.Errorf("%s: want exactly one of text and blob: %s", uri, raw)
		}
		if strings.HasSuffix(uri, "run.py") && !hasText {
			t.Errorf("%s: a non-empty text file must come as text: %s", uri, raw)
		}
	}

	// read_skill_file of the empty files: a result with content.
	cs := connect(t, svc, Options{Agent: "coder"}, openPrincipal, nil)
	for _, p := range []string{"scripts/__init__.py", "assets/empty.png"} {
		res := callTool(t, cs, "read_skill_file", map[string]any{"name": "s", "path": p})
		if res.IsError || len(res.Content) == 0 {
			t.Errorf("read_skill_file %s: %+v", p, res)
			continue
		}
		raw, _ := json.Marshal(res.Content[0])
		if !strings.Contains(string(raw), `"text":""`) && !strings.Contains(string(raw), `"blob":""`) {
			t.Errorf("read_skill_file %s: content %s carries neither text nor blob", p, raw)
		}
	}
}

// compatServer serves svc's agent coder over streamable HTTP to the real
// clients, as an open server; stateless[0] makes it stateless.
func compatServer(t *testing.T, svc *service.Service, stateless ...bool) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", HTTPHandler(svc, Options{Agent: "coder", Logger: quiet, Stateless: len(stateless) > 0 && stateless[0]}))
	open := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(service.WithPrincipal(r.Context(), openPrincipal)))
	})
	srv := httptest.NewServer(open)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// inspector runs the pinned Inspector CLI against url and returns its
// output and exit code.
func inspector(t *testing.T, url string, args ...string) (string, int) {
	t.Helper()
	bin := testutil.CompatBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "node"), append([]string{filepath.Join(bin, "inspector"), "--cli", url}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("inspector %v: %v\n%s", args, err, out)
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

// TestInspectorReadsEmptyFiles reads empty files with the Inspector CLI,
// which refused a content with neither text nor blob ("contents.0:
// Invalid input").
func TestInspectorReadsEmptyFiles(t *testing.T) {
	svc, _ := emptiesService(t)
	url := compatServer(t, svc)
	for _, uri := range []string{"skill://s/scripts/__init__.py", "skill://s/assets/empty.png"} {
		out, code := inspector(t, url, "--method", "resources/read", "--uri", uri)
		if code != 0 {
			t.Fatalf("inspector resources/read %s: exit %d\n%s", uri, code, out)
		}
		var res struct {
			Contents []map[string]any `json:"contents"`
		}
		if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &res); err != nil {
			t.Fatalf("inspector output: %v\n%s", err, out)
		}
		if len(res.Contents) != 1 || (res.Contents[0]["text"] != "" && res.Contents[0]["blob"] != "") {
			t.Errorf("inspector resources/read %s: %s", uri, out)
		}
	}
}

// TestEmptyFoldersAreDirectories lists empty folders as inode/directory
// children, and answers an empty list for them (it was -32602), with the
// caching fields the 2026-07-28 envelope requires.
func TestEmptyFoldersAreDirectories(t *testing.T) {
	svc, _ := emptiesService(t)
	cs := connect(t, svc, Options{Agent: "coder"}, openPrincipal, nil)
	ctx := context.Background()
	dir := func(uri string) ([]string, *ReadDirectoryResult) {
		t.Helper()
		res, err := mcp.CallCustomMethod[*ReadDirectoryParams, *ReadDirectoryResult](ctx, cs, "resources/directory/read", &ReadDirectoryParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		out := []string{}
		for _, r := range res.Resources {
			out = append(out, r.Name+" "+r.MIMEType)
		}
		return out, res
	}
	got, res := dir("skill://s")
	want := []string{"SKILL.md text/markdown", "assets inode/directory", "docs inode/directory", "empty inode/directory", "scripts inode/directory"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("root: %q, want %q", got, want)
	}
	if res.TTLMs <= 0 || res.CacheScope == "" {
		t.Errorf("root: ttlMs %d, cacheScope %q", res.TTLMs, res.CacheScope)
	}
	if got, _ := dir("skill://s/docs"); strings.Join(got, ", ") != "blank inode/directory, guide.md text/markdown" {
		t.Errorf("docs: %q", got)
	}
	for _, uri := range []string{"skill://s/empty", "skill://s/docs/blank", "skill://s/empty/"} {
		if got, _ := dir(uri); len(got) != 0 {
			t.Errorf("%s: %q, want an empty list", uri, got)
		}
	}
	for _, uri := range []string{"skill://s/empty/nope", "skill://s/emp", "skill://s/docs/guide.md"} {
		_, err := mcp.CallCustomMethod[*ReadDirectoryParams, *ReadDirectoryResult](ctx, cs, "resources/directory/read", &ReadDirectoryParams{URI: uri})
		if rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: %v, want -32602", uri, err)
		}
	}
	// resources/read of an empty folder says to list it.
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://s/empty"}); rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "directory") {
		t.Errorf("resources/read of an empty folder: %v", err)
	}
}

// TestInspectorReadsEmptyFolder lists an empty folder with the Inspector
// CLI, which got -32602 for it.
func TestInspectorReadsEmptyFolder(t *testing.T) {
	svc, _ := emptiesService(t)
	url := compatServer(t, svc)
	out, code := inspector(t, url, "--method", "resources/directory/read", "--uri", "skill://s/empty")
	if code != 0 {
		t.Fatalf("inspector resources/directory/read: exit %d\n%s", code, out)
	}
	var res struct {
		Resources []any `json:"resources"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &res); err != nil || res.Resources == nil || len(res.Resources) != 0 {
		t.Errorf("inspector resources/directory/read skill://s/empty: %v\n%s", err, out)
	}
	out, code = inspector(t, url, "--method", "skills/list", "--verify")
	if code != 0 {
		t.Errorf("inspector skills/list --verify: exit %d\n%s", code, out)
	}
}

// TestNestedSkillMDServedAlikeFromFolderAndStore imports a folder skill
// with a nested SKILL.md (examples/inner/SKILL.md, a supporting file, as
// discovery lists it) into a real SQLite store: it was refused
// (path-second-skill-md). skills/list then lists the same files with the
// same digests from the folder and from the store.
func TestNestedSkillMDServedAlikeFromFolderAndStore(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "outer", "A skill that ships an example skill.", "", map[string]string{
		"examples/inner/SKILL.md": "---\nname: inner\ndescription: An example.\n---\n# Inner\n",
		"examples/inner/run.sh":   "#!/bin/sh\necho inner\n",
		"notes.md":                "notes\n",
	})
	b, err := portable.ImportDir(filepath.Join(root, "outer"))
	if err != nil {
		t.Fatalf("ImportDir: %v", err)
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if _, err := st.Put(ctx, b, store.PutOptions{IfVersion: -1}); err != nil {
		t.Fatalf("Put: %v", err)
	}
	cat, err := catalog.New(ctx, []catalog.AgentSpec{
		{AgentID: "folder", Skills: []catalog.SourceSpec{{Root: root}}},
		{AgentID: "stored", Skills: []catalog.SourceSpec{{Store: true}}},
	}, catalog.Options{Store: store.NewProvider(st)})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Logger: quiet})
	t.Cleanup(func() { svc.Close() })
	listing := func(agent string) []SkillResource {
		cs := connect(t, svc, Options{Agent: agent}, openPrincipal, nil)
		entries, _, omitted := allSkills(t, cs)
		if len(entries) != 1 || len(omitted) != 0 {
			t.Fatalf("%s: %d entries, omitted %v", agent, len(entries), omitted)
		}
		data, _ := readBytes(t, cs, "skill://outer/examples/inner/SKILL.md")
		if !strings.Contains(string(data), "name: inner") {
			t.Errorf("%s: examples/inner/SKILL.md reads %q", agent, data)
		}
		return entries[0].Resources
	}
	folder, stored := listing("folder"), listing("stored")
	if len(folder) != 4 {
		t.Errorf("folder listing: %+v", folder)
	}
	if diff := cmp.Diff(folder, stored); diff != "" {
		t.Errorf("the stored copy is listed differently (-folder +stored):\n%s", diff)
	}
}

// skillsClientScript lists every skill with the TypeScript SDK's
// SkillsClient (which throws on any invalid entry), reads and verifies
// every listed file (size and digest), and lists each folder named in
// argv[3...] with readDirectory. It prints one JSON object.
const skillsClientScript = `
import { Client, StreamableHTTPClientTransport } from %q;
import { SkillsClient } from %q;
const client = new Client({ name: "loadout-test", version: "1" });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
const skills = new SkillsClient(client);
const { skills: entries } = await skills.list();
const out = { version: client.getNegotiatedProtocolVersion(), skills: [], files: {}, dirs: {} };
for (const entry of entries) {
  out.skills.push(entry.uri);
  for (const r of entry.resources) {
    const file = await skills.read(entry, r.uri);
    out.files[r.uri] = { bytes: file.bytes.byteLength, verified: file.verified };
  }
}
for (const uri of process.argv.slice(3)) {
  const dir = await skills.readDirectory(uri);
  out.dirs[uri] = dir.resources.map((r) => r.name + " " + r.mimeType);
}
console.log(JSON.stringify(out));
await client.close();
`

// TestSkillsClientVerifiesEdgeCases runs the SkillsClient of the pinned
// @modelcontextprotocol/client over a skill with empty files and empty
// folders and one with a nested SKILL.md: every file reads and verifies
// (an empty file failed "contents.0: Invalid input"), and readDirectory
// lists an empty folder as an empty list (it got -32602), stateful and
// stateless. (The client negotiates 2025-11-25 with both; the 2026-07-28
// directory envelope's ttlMs and cacheScope are checked in Go by
// TestEmptyFoldersAreDirectories.)
func TestSkillsClientVerifiesEdgeCases(t *testing.T) {
	bin := testutil.CompatBin(t)
	svc, _ := emptiesService(t, func(root string) {
		writeSkill(t, root, "outer", "A skill that ships an example skill.", "", map[string]string{
			"examples/inner/SKILL.md": "---\nname: inner\ndescription: An example.\n---\n# Inner\n",
		})
	})
	pkg := filepath.Join(bin, "..", "@modelcontextprotocol", "client", "dist")
	script := filepath.Join(t.TempDir(), "skills.mjs")
	src := fmt.Sprintf(skillsClientScript, "file://"+filepath.ToSlash(filepath.Join(pkg, "index.mjs")), "file://"+filepath.ToSlash(filepath.Join(pkg, "ext", "skills", "index.mjs")))
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, stateless := range []bool{false, true} {
		url := compatServer(t, svc, stateless)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, filepath.Join(bin, "node"), script, url, "skill://s", "skill://s/empty", "skill://s/docs/blank", "skill://outer/examples/inner").CombinedOutput()
		if err != nil {
			t.Fatalf("SkillsClient (stateless %v): %v\n%s", stateless, err, out)
		}
		var got struct {
			Version string
			Skills  []string
			Files   map[string]struct {
				Bytes    int
				Verified bool
			}
			Dirs map[string][]string
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		t.Logf("stateless %v: protocol revision %s", stateless, got.Version)
		if strings.Join(got.Skills, " ") != "skill://outer/SKILL.md skill://s/SKILL.md" {
			t.Errorf("skills %v", got.Skills)
		}
		for _, uri := range []string{"skill://s/scripts/__init__.py", "skill://s/assets/empty.png", "skill://outer/examples/inner/SKILL.md"} {
			if f, ok := got.Files[uri]; !ok || !f.Verified {
				t.Errorf("%s: %+v, want read and verified", uri, f)
			}
		}
		want := map[string][]string{
			"skill://s":                    {"SKILL.md text/markdown", "assets inode/directory", "docs inode/directory", "empty inode/directory", "scripts inode/directory"},
			"skill://s/empty":              {},
			"skill://s/docs/blank":         {},
			"skill://outer/examples/inner": {"SKILL.md text/markdown"},
		}
		if diff := cmp.Diff(want, got.Dirs); diff != "" {
			t.Errorf("readDirectory (-want +got):\n%s", diff)
		}
	}
}
