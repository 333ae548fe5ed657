package attack

// The stdio transport of `loadout mcp` as a script drives it: requests
// written at once, then the input closed, over and over.

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStdioClosedAtOnce: a client that writes its requests and closes
// stdin straight away gets an answer to every call (the SDK's and the
// fast path's), and the process then exits; 20 runs, as the loss was one
// run in four.
func TestStdioClosedAtOnce(t *testing.T) {
	dir := t.TempDir()
	WriteFiles(t, filepath.Join(dir, "skills"), DefaultSkills())
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	const calls = 30
	for i := range calls {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"deploy"}}}`+"\n", 100+i)
		case 1:
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_skill_file","arguments":{"name":"lint","path":"references/guide.md"}}}`+"\n", 100+i)
		default:
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"s%d","method":"tools/list"}`+"\n", i)
		}
	}
	for run := range 20 {
		cmd := exec.Command(Bin(t), "mcp", "--no-watch", filepath.Join(dir, "skills"))
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(in.String())
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, errb.String())
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("run %d: the process took %v to exit after its input ended", run, took)
		}
		got := out.String()
		if n := strings.Count(got, "\n"); n != calls+1 {
			t.Fatalf("run %d: %d answers for %d calls:\n%.800s", run, n, calls+1, got)
		}
		for i := range calls {
			id := fmt.Sprintf(`"id":%d,`, 100+i)
			if i%3 == 2 {
				id = fmt.Sprintf(`"id":"s%d",`, i)
			}
			if !strings.Contains(got, id) {
				t.Fatalf("run %d: no answer with %s", run, id)
			}
		}
	}
}
