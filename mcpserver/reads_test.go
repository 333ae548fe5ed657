//go:build unix

package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/service"
)

// deadline is the context of a call that must not block on a file
// (testutil.Context: minutes, since the first read of a 1 GiB file hashes
// it, which took 15 to 30 s on a loaded machine under -race).
func deadline(t *testing.T) context.Context {
	return testutil.Context(t)
}

func readsFixture(t *testing.T, setup func(root string)) (*service.Service, *mcp.ClientSession, string) {
	t.Helper()
	root := t.TempDir()
	writeSkill(t, root, "alpha", "Fill in PDF forms.", "", map[string]string{"references/guide.md": "# Guide\n"})
	writeSkill(t, root, "huge", "Has a huge file.", "", nil)
	if setup != nil {
		setup(root)
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "coder", Skills: []catalog.SourceSpec{{Root: root}}}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Logger: quiet})
	t.Cleanup(func() { svc.Close() })
	return svc, connect(t, svc, Options{Agent: "coder"}, openPrincipal, nil), root
}

func callWithin(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(deadline(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v (blocked?)", name, err)
	}
	return res
}

// read_skill_file with offset and length reads only the range of a 1 GiB
// file; resources/read (a whole file) refuses it before reading.
func TestHugeFileReads(t *testing.T) {
	_, cs, _ := readsFixture(t, func(root string) {
		f, err := os.Create(filepath.Join(root, "huge", "data.bin"))
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(testutil.GiB)
		f.Close()
	})
	n := testutil.Allocated(func() {
		for _, off := range []int64{0, 1 << 20, 512 << 20, testutil.GiB - 100} {
			res := callWithin(t, cs, "read_skill_file", map[string]any{"name": "huge", "path": "data.bin", "offset": off, "length": 100})
			if res.IsError || len(res.Content) == 0 {
				t.Fatalf("offset %d: %s", off, text(res))
			}
			er, ok := res.Content[0].(*mcp.EmbeddedResource)
			if !ok || len(er.Resource.Blob) != 100 {
				t.Fatalf("offset %d: %#v", off, res.Content[0])
			}
		}
	})
	if n > 16<<20 {
		t.Errorf("four 100-byte reads of a 1 GiB file allocated %d bytes", n)
	}
	n = testutil.Allocated(func() {
		_, err := cs.ReadResource(deadline(t), &mcp.ReadResourceParams{URI: "skill://huge/data.bin"})
		if err == nil || !strings.Contains(err.Error(), "1073741824") || !strings.Contains(err.Error(), "data.bin") {
			t.Errorf("resources/read of 1 GiB: %v", err)
		}
	})
	if n > 16<<20 {
		t.Errorf("the refused resources/read allocated %d bytes", n)
	}
	entries, _, omitted := allSkills(t, cs)
	if len(entries) != 1 || len(omitted) != 1 {
		t.Errorf("skills/list: %d entries, omitted %v", len(entries), omitted)
	}
}

// A FIFO swapped in after the scan is refused at once by read_skill_file,
// resources/read and skills/list.
func TestFIFOSwappedInIsRefused(t *testing.T) {
	_, cs, root := readsFixture(t, nil)
	p := filepath.Join(root, "alpha", "references", "guide.md")
	testutil.Must(t, os.Remove(p))
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	for _, args := range []map[string]any{
		{"name": "alpha", "path": "references/guide.md"},
		{"name": "alpha", "path": "references/guide.md", "offset": 1, "length": 2},
	} {
		res := callWithin(t, cs, "read_skill_file", args)
		if !res.IsError || !strings.Contains(text(res), "named pipe") {
			t.Errorf("read_skill_file %v: %s", args, text(res))
		}
	}
	if _, err := cs.ReadResource(deadline(t), &mcp.ReadResourceParams{URI: "skill://alpha/references/guide.md"}); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("resources/read: %v", err)
	}
	res, err := mcp.CallCustomMethod[*ListSkillsParams, *ListSkillsResult](deadline(t), cs, "skills/list", &ListSkillsParams{})
	if err != nil {
		t.Fatalf("skills/list: %v (blocked?)", err)
	}
	if o := fmt.Sprint(res.Meta[metaOmitted]); !strings.Contains(o, "skill://alpha/SKILL.md") || !strings.Contains(o, "named pipe") {
		t.Errorf("skills/list omitted: %s", o)
	}
}

// A skill folder swapped for a link after the scan: read_skill_file,
// resources/read (skill://) and skills/get refuse, never the link's bytes.
func TestSwappedSkillFolderIsRefused(t *testing.T) {
	_, cs, root := readsFixture(t, nil)
	other := t.TempDir()
	writeSkill(t, other, "alpha", "Fill in PDF forms.", "", map[string]string{"references/guide.md": "#SECRET"})
	dir := filepath.Join(root, "alpha")
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "alpha"), dir); err != nil {
		t.Skip(err)
	}
	for _, p := range []string{"references/guide.md", "SKILL.md"} {
		res := callWithin(t, cs, "read_skill_file", map[string]any{"name": "alpha", "path": p})
		if !res.IsError || strings.Contains(text(res), "SECRET") || !strings.Contains(text(res), "no longer the folder") {
			t.Errorf("read_skill_file %s: %s", p, text(res))
		}
		r, err := cs.ReadResource(deadline(t), &mcp.ReadResourceParams{URI: "skill://alpha/" + p})
		if err == nil || !strings.Contains(err.Error(), "no longer the folder") {
			t.Errorf("resources/read %s: %v %v", p, err, r)
		}
	}
	_, err := mcp.CallCustomMethod[*GetSkillParams, *GetSkillResult](deadline(t), cs, "skills/get", &GetSkillParams{URI: "skill://alpha/SKILL.md"})
	if err == nil || !strings.Contains(err.Error(), "no longer the folder") {
		t.Errorf("skills/get: %v", err)
	}
}
