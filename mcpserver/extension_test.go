package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
)

// typedFront is the frontmatter of the "typed" skill of edgeSkills, and
// typedJSON the entry skills/list must give for it.
const (
	typedFront = "name: typed\ndescription: Typed scalars of every kind.\nversion: 1.0\nflag: true\nnothing:\nnull-word: null\n" +
		"tags: [a, 1, true]\noctal: 014\nhex: 0x1F\nunderscored: 1_000\nquoted: \"1.0\"\nblock: |\n  two\n  lines\n" +
		"metadata:\n  author: tester\n  version: \"2\"\n"
	typedJSON = `{"name":"typed","description":"Typed scalars of every kind.","version":1,"flag":true,"nothing":null,"null-word":null,` +
		`"tags":["a",1,true],"octal":14,"hex":31,"underscored":"1_000","quoted":"1.0","block":"two\nlines\n",` +
		`"metadata":{"author":"tester","version":"2"}}`
)

// edgeInvalid are the skills of edgeSkills the extension's rules refuse,
// with the start of the reason each is left out of skills/list for.
var edgeInvalid = map[string]string{
	"nameless":    "invalid-name: SKILL.md has no name field",
	"Upper-Case":  `invalid-name: the name "Upper-Case" is not 1 to 64 lowercase letters`,
	"long-desc":   "invalid-description: the description is 1068 characters, over the limit of 1024",
	"long-compat": "invalid-compatibility: compatibility is 600 characters, over the limit of 500",
	"nested-meta": "invalid-metadata: metadata.deep is a mapping",
	"number-meta": "invalid-metadata: metadata.count is the number 3",
	"colon":       `invalid-frontmatter: SKILL.md's frontmatter is not what MCP skills clients can read (not valid YAML: line 3: mapping values are not allowed`,
	"infinite":    `invalid-frontmatter: SKILL.md's frontmatter is not what MCP skills clients can read (line 4: ".inf" is a number JSON cannot hold`,
	"null-meta":   "invalid-metadata: metadata is null, not a mapping",
	"42":          "invalid-name: the name field is the number 42, not a string",
}

// edgeSkills writes skills that loadout loads but whose frontmatter trips
// the MCP skills clients: typed scalars (served typed), a hidden skill, and
// every skill of edgeInvalid. Only "typed", "checklist" and "plain" meet
// the extension's rules.
func edgeSkills(t testing.TB, root string) {
	t.Helper()
	raw := func(dir, front string) {
		writeFile(t, filepath.Join(root, dir, "SKILL.md"), []byte("---\n"+front+"---\n\n# "+dir+"\n\nSteps.\n"))
	}
	raw("typed", typedFront)
	writeSkill(t, root, "checklist", "Run the release checklist; only when the user asks.", "disable-model-invocation: true\n", nil)
	writeSkill(t, root, "plain", "A skill every client accepts.", "license: MIT\n", map[string]string{"scripts/run.sh": "#!/bin/sh\necho hi\n"})
	raw("nameless", "description: A skill without a name field.\n")
	writeSkill(t, root, "Upper-Case", "A skill with an uppercase name.", "", nil)
	writeSkill(t, root, "long-desc", strings.Repeat("Long words. ", 89)[:1067]+"!", "", nil)
	writeSkill(t, root, "long-compat", "Compatibility over the limit.", "compatibility: "+strings.Repeat("c", 600)+"\n", nil)
	writeSkill(t, root, "nested-meta", "Nested metadata.", "metadata:\n  author: x\n  deep:\n    a: b\n", nil)
	writeSkill(t, root, "number-meta", "A number in metadata.", "metadata:\n  count: 3\n", nil)
	raw("colon", "name: colon\ndescription: Use when: the value holds a colon\n")
	writeSkill(t, root, "infinite", "A number JSON cannot hold.", "version: .inf\n", nil)
	writeSkill(t, root, "null-meta", "Metadata left empty.", "metadata:\n", nil)
	raw("numeric-name", "name: 42\ndescription: A name that YAML reads as a number.\n")
}

// edgeService serves edgeSkills to agent "lenient" (the default
// invalidSkills) and agent "strict" (invalidSkills: refuse).
func edgeService(t testing.TB) *service.Service {
	t.Helper()
	root := t.TempDir()
	edgeSkills(t, root)
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "lenient", Skills: []catalog.SourceSpec{{Root: root}}},
		{AgentID: "strict", Skills: []catalog.SourceSpec{{Root: root}}, InvalidSkills: catalog.InvalidRefuse},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Logger: quiet})
	t.Cleanup(func() { svc.Close() })
	for name := range edgeInvalid {
		if l, _ := cat.Agent("lenient"); l != nil {
			if _, ok := l.Lookup(name); !ok {
				t.Fatalf("loadout does not load the edge skill %q: the test needs it loaded", name)
			}
		}
	}
	return svc
}

// TestSkillsListTypedAndValid: skills/list serves each entry's frontmatter
// typed as the clients read SKILL.md (never scalars as text, never a field
// the file lacks), and leaves out every skill the extension's rules refuse,
// naming each in _meta with a coded reason; skills/get refuses those with
// the reason. The hidden skill is listed.
func TestSkillsListTypedAndValid(t *testing.T) {
	svc := edgeService(t)
	cs := connect(t, svc, Options{Agent: "lenient", PageSize: 3}, openPrincipal, nil)
	entries, _, omitted := allSkills(t, cs)
	var uris []string
	for _, e := range entries {
		uris = append(uris, e.URI)
		if e.URI == "skill://typed/SKILL.md" && string(e.Frontmatter) != typedJSON {
			t.Errorf("typed frontmatter\n got %s\nwant %s", e.Frontmatter, typedJSON)
		}
	}
	if want := []string{"skill://checklist/SKILL.md", "skill://plain/SKILL.md", "skill://typed/SKILL.md"}; !slices.Equal(uris, want) {
		t.Errorf("skills/list entries %v, want %v", uris, want)
	}
	reasons := map[string]string{}
	for _, o := range omitted {
		m, _ := o.(map[string]any)
		uri, _ := m["uri"].(string)
		reasons[uri], _ = m["reason"].(string)
	}
	for name, want := range edgeInvalid {
		uri := "skill://" + name + "/SKILL.md"
		if got := reasons[uri]; !strings.HasPrefix(got, want) {
			t.Errorf("_meta omitted reason for %s:\n got %q\nwant %q...", name, got, want)
		}
		_, err := mcp.CallCustomMethod[*GetSkillParams, *GetSkillResult](context.Background(), cs, "skills/get", &GetSkillParams{URI: uri})
		if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(fmt.Sprint(err), want) || !strings.Contains(fmt.Sprint(err), "load_skill and read_skill_file still serve it") {
			t.Errorf("skills/get %s: %v", uri, err)
		}
	}
	if len(reasons) != len(edgeInvalid) {
		t.Errorf("omitted %d skills, want %d: %v", len(reasons), len(edgeInvalid), reasons)
	}
	res, err := mcp.CallCustomMethod[*GetSkillParams, *GetSkillResult](context.Background(), cs, "skills/get", &GetSkillParams{URI: "skill://typed/SKILL.md"})
	if err != nil || string(res.Skill.Frontmatter) != typedJSON {
		t.Errorf("skills/get typed: %v %+v", err, res)
	}
	// Lenient serving: the tools still serve an invalid skill.
	for _, name := range []string{"Upper-Case", "long-desc", "colon"} {
		if r := callTool(t, cs, "load_skill", map[string]any{"name": name}); r.IsError {
			t.Errorf("load_skill %s on a lenient agent: %s", name, text(r))
		}
	}
	if r := callTool(t, cs, "read_skill_file", map[string]any{"name": "long-desc", "path": "SKILL.md"}); r.IsError {
		t.Errorf("read_skill_file on a lenient agent: %s", text(r))
	}
}

// TestInvalidSkillsRefuse: with invalidSkills "refuse", the tools,
// resources/read and resources/directory/read refuse a skill the
// extension's rules refuse, naming the rule, and the tools' enum,
// resources/list and prompts/list leave it out; valid skills are served.
func TestInvalidSkillsRefuse(t *testing.T) {
	svc := edgeService(t)
	cs := connect(t, svc, Options{Agent: "strict"}, openPrincipal, nil)
	for name, want := range edgeInvalid {
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"load_skill", map[string]any{"name": name}},
			{"read_skill_file", map[string]any{"name": name, "path": "SKILL.md"}},
		} {
			r := callTool(t, cs, call.tool, call.args)
			if !r.IsError || !strings.Contains(text(r), "(invalidSkills: refuse)") || !strings.Contains(text(r), want) {
				t.Errorf("%s %s on a strict agent: error %v: %s", call.tool, name, r.IsError, text(r))
			}
		}
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://" + name + "/SKILL.md"})
		if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("resources/read %s on a strict agent: %v", name, err)
		}
		_, err = mcp.CallCustomMethod[*GetSkillParams, *GetSkillResult](context.Background(), cs, "skills/get", &GetSkillParams{URI: "skill://" + name + "/SKILL.md"})
		if !strings.Contains(fmt.Sprint(err), `invalidSkills is "refuse"`) {
			t.Errorf("skills/get %s on a strict agent: %v", name, err)
		}
		_, err = mcp.CallCustomMethod[*ReadDirectoryParams, *ReadDirectoryResult](context.Background(), cs, "resources/directory/read", &ReadDirectoryParams{URI: "skill://" + name})
		if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("resources/directory/read %s on a strict agent: %v", name, err)
		}
	}
	// resources/list and prompts/list leave them out too.
	for r, err := range cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if name, _, _ := parseURI(r.URI); edgeInvalid[name] != "" {
			t.Errorf("resources/list on a strict agent lists %s", r.URI)
		}
	}
	for p, err := range cs.Prompts(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if edgeInvalid[p.Name] != "" {
			t.Errorf("prompts/list on a strict agent lists %s", p.Name)
		}
	}
	enum := nameEnum(toolSchemas(t, cs)["load_skill"])
	if want := []any{"plain", "typed"}; !slices.Equal(enum, want) {
		t.Errorf("strict enum %v, want %v", enum, want)
	}
	if r := callTool(t, cs, "load_skill", map[string]any{"name": "plain"}); r.IsError {
		t.Errorf("load_skill of a valid skill on a strict agent: %s", text(r))
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://plain/scripts/run.sh"}); err != nil {
		t.Errorf("resources/read of a valid skill on a strict agent: %v", err)
	}
}
